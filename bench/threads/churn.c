/* Thread start and end under a profiler: creates N threads one after another, each
 * working `us` microseconds of CPU, and joins each before the next. Prints
 * "us_per_thread X": the wall time of one create + run + join, less the work.
 *
 *   churn N US */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long us;

static uint64_t clock_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *run(void *arg)
{
    (void)arg;
    uint64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + (uint64_t)us * 1000;
    while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
        ;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    int n = atoi(argv[1]);
    us = atol(argv[2]);
    uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, run, NULL) != 0) return 3;
        pthread_join(t, NULL);
    }
    double per = (double)(clock_ns(CLOCK_MONOTONIC) - t0) / 1e3 / n - (double)us;
    printf("us_per_thread %.2f\n", per);
    return 0;
}
