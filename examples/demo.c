/* kestrel's demo program: a main thread and three workers with clear hot spots, so a
 * profile has something to say.
 *   main      crunch_matrix (heavy), then waits for the workers (waiting time)
 *   worker 1  hash_strings (hot) calling mix_bytes (its own hot loop)
 *   worker 2  fib (recursive: total counted once per sample)
 *   worker 3  mostly sleeps (waiting), with a little sort_numbers
 * Usage: demo [SCALE]   (default 1; the work grows linearly with SCALE). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile uint64_t sink; /* keeps results alive so nothing is optimised away */
static int scale = 1;

__attribute__((noinline)) static uint64_t mix_bytes(const unsigned char *p, size_t n, uint64_t h)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

__attribute__((noinline)) static uint64_t hash_strings(int rounds)
{
    char buf[256];
    uint64_t h = 1469598103934665603ull;
    for (int r = 0; r < rounds; r++) {
        int n = snprintf(buf, sizeof buf, "kestrel-%d-%llu", r, (unsigned long long)h);
        h = mix_bytes((const unsigned char *)buf, (size_t)n, h);
        for (int k = 0; k < 40; k++)
            h = mix_bytes((const unsigned char *)buf, (size_t)n, h + k);
    }
    return h;
}

__attribute__((noinline)) static uint64_t fib(int n)
{
    return n < 2 ? (uint64_t)n : fib(n - 1) + fib(n - 2);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

__attribute__((noinline)) static void sort_numbers(int n)
{
    uint32_t *v = malloc((size_t)n * sizeof *v);
    if (!v) return;
    uint32_t x = 2463534242u;
    for (int i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        v[i] = x;
    }
    qsort(v, (size_t)n, sizeof *v, cmp_u32);
    sink += v[n / 2];
    free(v);
}

__attribute__((noinline)) static double crunch_matrix(int n, int reps)
{
    double *a = malloc((size_t)n * n * sizeof *a), *b = malloc((size_t)n * n * sizeof *b),
           *c = calloc((size_t)n * n, sizeof *c);
    double sum = 0;
    if (a && b && c) {
        for (int i = 0; i < n * n; i++)
            a[i] = (i % 7) * 0.5, b[i] = (i % 5) * 0.25;
        for (int r = 0; r < reps; r++)
            for (int i = 0; i < n; i++)
                for (int k = 0; k < n; k++)
                    for (int j = 0; j < n; j++)
                        c[i * n + j] += a[i * n + k] * b[k * n + j];
        for (int i = 0; i < n * n; i++)
            sum += c[i];
    }
    free(a);
    free(b);
    free(c);
    return sum;
}

static void *worker_hash(void *arg)
{
    (void)arg;
    sink += hash_strings(600000 * scale);
    return NULL;
}

static void *worker_fib(void *arg)
{
    (void)arg;
    for (int i = 0; i < 12 * scale; i++)
        sink += fib(32);
    return NULL;
}

static void *worker_sleepy(void *arg)
{
    (void)arg;
    for (int i = 0; i < 16 * scale; i++) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
        sort_numbers(20000);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1) scale = atoi(argv[1]) > 0 ? atoi(argv[1]) : 1;
    pthread_t t[3];
    void *(*fn[3])(void *) = {worker_hash, worker_fib, worker_sleepy};
    for (int i = 0; i < 3; i++)
        if (pthread_create(&t[i], NULL, fn[i], NULL)) return 1;
    double m = crunch_matrix(200, 40 * scale);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    printf("demo: done (checksum %.0f %llu)\n", m, (unsigned long long)(sink & 0xffff));
    return 0;
}
