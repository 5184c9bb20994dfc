/* Fixed work for bench/attach/run.py: THREADS threads (default 2), each UNITS calls of
 * a burn loop, as a running program a profiler attaches to. Its threads exist from the
 * start and wait START_DELAY_MS (so that a profiler attached meanwhile finds them all,
 * as perf record -p needs), then work; it prints its own CPU
 * time (user + system, every thread: the kernel's sampling work is charged to it) and
 * the wall time of the work: "cpu_ns wall_ns". */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;
static long units = 400;

__attribute__((noinline)) static void burn(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++) sink += i * 7;
}
__attribute__((noinline)) void work_a(void) { burn(1000000); sink++; }
__attribute__((noinline)) void work_b(void) { burn(2000000); sink++; }

static useconds_t delay_us = 300000;

static void *worker(void *arg)
{
    (void)arg;
    usleep(delay_us);
    for (long i = 0; i < units; i++) {
        work_a();
        work_b();
    }
    return NULL;
}

static uint64_t ns(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    if (argc > 2) units = atol(argv[2]);
    if (argc > 3) delay_us = (useconds_t)atoi(argv[3]) * 1000;
    struct rusage r0, r1;
    pthread_t t[64];
    for (int i = 0; i < threads && i < 64; i++) pthread_create(&t[i], NULL, worker, NULL);
    usleep(delay_us);
    getrusage(RUSAGE_SELF, &r0);
    uint64_t t0 = ns(CLOCK_MONOTONIC);
    for (int i = 0; i < threads && i < 64; i++) pthread_join(t[i], NULL);
    uint64_t t1 = ns(CLOCK_MONOTONIC);
    getrusage(RUSAGE_SELF, &r1);
#define TV(x) ((uint64_t)(x).tv_sec * 1000000000ull + (uint64_t)(x).tv_usec * 1000ull)
    uint64_t cpu = TV(r1.ru_utime) + TV(r1.ru_stime) - TV(r0.ru_utime) - TV(r0.ru_stime);
    printf("%llu %llu\n", (unsigned long long)cpu, (unsigned long long)(t1 - t0));
    return 0;
}
