/* A long-running program for the scrape endpoints' tests: two worker threads run
 * phase_one() for a fixed amount of work, the main thread prints "phase two", then the
 * workers run phase_two() (which also allocates and frees, in churn()) until stdin
 * closes. retain_blocks() keeps 8 MiB in use for the whole run. What it prints depends
 * on its work alone, never on its timing, so a profiled run prints exactly what an
 * unprofiled one does. */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WORKERS 2
#define PHASE_ONE_CHUNKS 300

static _Atomic int stop, in_phase_two;
static void *retained[128];

static inline __attribute__((always_inline)) uint64_t mix(uint64_t x, int n)
{
    for (int i = 0; i < n; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull, x ^= x >> 29;
    return x;
}

__attribute__((noinline)) uint64_t phase_one(uint64_t seed)
{
    uint64_t r = mix(seed, 200000);
    __asm__ volatile("" ::: "memory"); /* no tail call: the caller stays on the stack */
    return r;
}

__attribute__((noinline)) uint64_t churn(uint64_t x)
{
    unsigned char *p = malloc(64 * 1024);
    if (!p) abort();
    memset(p, (int)(x & 0xff), 64 * 1024);
    x += p[x % (64 * 1024)];
    free(p);
    return x;
}

__attribute__((noinline)) uint64_t phase_two(uint64_t seed)
{
    uint64_t r = churn(mix(seed, 200000));
    __asm__ volatile("" ::: "memory");
    return r;
}

__attribute__((noinline)) void retain_blocks(void)
{
    for (int i = 0; i < 128; i++) {
        retained[i] = malloc(64 * 1024);
        memset(retained[i], i, 64 * 1024);
    }
}

struct result {
    uint64_t one, two;
    int two_same; /* every phase_two chunk gave the first one's value */
};

static void *worker(void *arg)
{
    struct result *r = arg;
    for (int i = 0; i < PHASE_ONE_CHUNKS; i++)
        r->one ^= phase_one((uint64_t)i);
    atomic_fetch_add(&in_phase_two, 1);
    r->two = phase_two(7);
    r->two_same = 1;
    while (!atomic_load(&stop))
        if (phase_two(7) != r->two) r->two_same = 0;
    return NULL;
}

/* With "fork": a child made once phase two starts, that waits to be killed; its pid
 * goes to stderr, so the test can look at its descriptors. */
int main(int argc, char **argv)
{
    retain_blocks();
    pthread_t t[WORKERS];
    struct result res[WORKERS];
    memset(res, 0, sizeof(res));
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&t[i], NULL, worker, &res[i]);
    while (atomic_load(&in_phase_two) < WORKERS)
        usleep(1000);
    printf("phase two\n");
    fflush(stdout);
    pid_t child = 0;
    if (argc > 1 && !strcmp(argv[1], "fork")) {
        child = fork();
        if (child == 0) {
            for (;;)
                pause();
        }
        fprintf(stderr, "child %d\n", (int)child);
    }
    char buf[256];
    while (fgets(buf, sizeof(buf), stdin)) /* runs until stdin closes */
        ;
    atomic_store(&stop, 1);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < WORKERS; i++)
        printf("worker %d: one=%016llx two=%016llx same=%d\n", i, (unsigned long long)res[i].one,
               (unsigned long long)res[i].two, res[i].two_same);
    for (int i = 0; i < 128; i++)
        free(retained[i]);
    if (child > 0) {
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
    }
    return 0;
}
