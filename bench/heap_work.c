/* The heap benchmark's workloads, one process per run (bench/heap_bench.c runs them
 * under each configuration):
 *
 *   loop   allocation only: OPS malloc/free pairs of 16..2048 bytes through a ring of
 *          4096 live blocks (each step frees the oldest and allocates anew).
 *   mixed  a request-handling shape: each request formats and parses a few strings,
 *          replaces a record in a table of 5,000 customers (freeing the old one),
 *          appends to a realloc-grown log, and does some arithmetic over a 4 KiB
 *          buffer; allocation is a small part of its time.
 *   stacks N allocations of 1 MiB (each sampled at any interval up to 64 KiB with
 *          probability 1 - e^-16, and freed at once) from N distinct stacks: a binary
 *          recursion 24 deep whose path is the bits of the index. It fills the
 *          profiler's tables, for their memory at the limits.
 *
 * Deterministic (a fixed xorshift seed); prints a checksum so no work is dropped. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint64_t loop(long ops)
{
    enum { RING = 4096 };
    static void *ring[RING];
    uint64_t sum = 0;
    for (long i = 0; i < ops; i++) {
        size_t slot = (size_t)i & (RING - 1);
        free(ring[slot]);
        size_t n = 16 + next() % 2033;
        unsigned char *p = malloc(n);
        p[0] = (unsigned char)i;
        sum += p[0];
        ring[slot] = p;
    }
    for (int i = 0; i < RING; i++)
        free(ring[i]);
    return sum;
}

struct customer {
    char *name;
    char *email;
    int *orders;
    int n_orders;
};

static uint64_t mixed(long requests)
{
    enum { CUSTOMERS = 5000 };
    static struct customer *table[CUSTOMERS];
    static unsigned char work[4096];
    char *log = NULL;
    size_t log_len = 0, log_cap = 0;
    uint64_t sum = 0;
    for (long r = 0; r < requests; r++) {
        uint64_t id = next() % CUSTOMERS;
        char line[256];
        int n = snprintf(line, sizeof line,
                         "customer=%llu;name=user%llu;email=u%llu@example.org;items=%d",
                         (unsigned long long)id, (unsigned long long)(next() % 100000),
                         (unsigned long long)id, (int)(next() % 24) + 1);
        char *copy = strdup(line);
        struct customer *c = calloc(1, sizeof *c);
        for (char *tok = strtok(copy, ";"); tok; tok = strtok(NULL, ";")) {
            char *eq = strchr(tok, '=');
            if (!eq) continue;
            if (!strncmp(tok, "name", 4))
                c->name = strdup(eq + 1);
            else if (!strncmp(tok, "email", 5))
                c->email = strdup(eq + 1);
            else if (!strncmp(tok, "items", 5))
                c->n_orders = atoi(eq + 1);
        }
        c->orders = malloc((size_t)c->n_orders * sizeof(int));
        for (int i = 0; i < c->n_orders; i++)
            c->orders[i] = (int)(next() % 1000);
        free(copy);
        struct customer *old = table[id];
        if (old) {
            free(old->name);
            free(old->email);
            free(old->orders);
            free(old);
        }
        table[id] = c;
        if (log_len + (size_t)n + 1 > log_cap) {
            log_cap = log_cap ? log_cap * 2 : 4096;
            if (log_cap > (1u << 20)) { /* rotate: keep the log bounded */
                log_len = 0;
                log_cap = 4096;
                free(log);
                log = NULL;
            }
            log = realloc(log, log_cap);
        }
        memcpy(log + log_len, line, (size_t)n + 1);
        log_len += (size_t)n + 1;
        /* the request's computation */
        for (int k = 0; k < 4; k++)
            for (size_t i = 0; i < sizeof work; i++) {
                work[i] = (unsigned char)(work[i] * 31 + i + (unsigned)c->n_orders);
                sum += work[i];
            }
    }
    for (int i = 0; i < CUSTOMERS; i++)
        if (table[i]) {
            free(table[i]->name);
            free(table[i]->email);
            free(table[i]->orders);
            free(table[i]);
        }
    free(log);
    return sum;
}

/* Two call sites per level: each index takes its own path down. */
__attribute__((noinline)) static uint64_t branch(uint32_t path, int depth);

__attribute__((noinline)) static uint64_t left(uint32_t path, int depth)
{
    uint64_t r = branch(path, depth - 1);
    __asm__ volatile("" ::: "memory");
    return r;
}

__attribute__((noinline)) static uint64_t right(uint32_t path, int depth)
{
    uint64_t r = branch(path, depth - 1);
    __asm__ volatile("" ::: "memory");
    return r + 2; /* not the same code as left(), which the compiler would fold into one */
}

__attribute__((noinline)) static uint64_t branch(uint32_t path, int depth)
{
    if (depth == 0) {
        unsigned char *p = malloc(1 << 20);
        __asm__ volatile("" : : "r"(p) : "memory"); /* the allocation is not elided */
        uint64_t r = p != NULL;
        free(p);
        return r;
    }
    return (path >> (depth - 1)) & 1 ? right(path, depth) : left(path, depth);
}

static uint64_t stacks(long n)
{
    uint64_t sum = 0;
    for (long i = 0; i < n; i++)
        sum += branch((uint32_t)i, 24);
    return sum;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: heap_work loop|mixed|stacks COUNT\n");
        return 2;
    }
    long count = atol(argv[2]);
    uint64_t sum = !strcmp(argv[1], "loop")     ? loop(count)
                   : !strcmp(argv[1], "stacks") ? stacks(count)
                                                : mixed(count);
    printf("%llu\n", (unsigned long long)sum);
    return 0;
}
