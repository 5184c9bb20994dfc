/* prog_chain SECONDS [ITERATIONS] — spends its time in two known chains, on the main thread and on
 * one more thread:
 *   main|thread_main -> do_work -> lib_sort -> qsort -> ... -> cmp_ints
 *   main|thread_main -> do_work -> lib_fill -> memset
 * and allocates through libc: do_work -> lib_keep -> strdup -> malloc. With
 * ITERATIONS, each thread does that many rounds instead (fixed work, for bench/).
 * Built three ways by rules.mk (frame pointers; none; the library without them), so
 * that a walk that cannot see through code without frame pointers loses callers. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#define KEEP() __asm__ volatile("" ::: "memory")

void lib_sort(int *v, size_t n, int (*cmp)(const void *, const void *));
void lib_fill(unsigned char *buf, size_t n, int c);
void lib_keep(const char *s, int n);

static volatile int sink;
static long iters; /* rounds a thread does; 0: run for `seconds` */

__attribute__((noinline)) static int cmp_ints(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    for (int i = 0; i < 20; i++) sink += i; /* time spent in the callback itself */
    return (x > y) - (x < y);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void do_work(double seconds)
{
    enum { N = 20000, B = 1 << 20 };
    int *v = malloc(N * sizeof(int));
    unsigned char *buf = malloc(B);
    char *str = malloc(16384);
    for (int i = 0; i < 16383; i++) str[i] = 'a' + i % 26;
    str[16383] = 0;
    unsigned seed = 1;
    double end = now() + seconds;
    for (long k = 0; iters ? k < iters : now() < end; k++) {
        for (int i = 0; i < N; i++) v[i] = (int)(seed = seed * 1103515245u + 12345u);
        lib_sort(v, N, cmp_ints);
        KEEP();
        lib_fill(buf, B, (int)seed);
        KEEP();
        lib_keep(str, 64);
        KEEP();
    }
    free(v);
    free(buf);
    free(str);
    KEEP();
}

static double secs;

__attribute__((noinline)) static void *thread_main(void *arg)
{
    (void)arg;
    do_work(secs);
    KEEP();
    return NULL;
}

int main(int argc, char **argv)
{
    secs = argc > 1 ? atof(argv[1]) : 1.0;
    iters = argc > 2 ? atol(argv[2]) : 0;
    pthread_t t;
    if (pthread_create(&t, NULL, thread_main, NULL)) return 1;
    do_work(secs);
    KEEP();
    pthread_join(t, NULL);
    if (getenv("PROG_CHAIN_CPU")) { /* for bench/unwind: the program's own CPU time */
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        fprintf(stderr, "cpu_s %.6f\n", ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
                                            ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
    }
    return 0;
}
