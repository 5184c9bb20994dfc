/* One thread that computes for 50 ms and sleeps for 50 ms, over and over, for the
 * given number of seconds. Prints that thread's wall and CPU nanoseconds over the
 * whole loop, so the test knows the true share of time it spent off the CPU. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "burn.h"

static double seconds = 4;
static uint64_t wall_ns, cpu_ns;

static uint64_t now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *half(void *arg)
{
    (void)arg;
    uint64_t w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);
    uint64_t end = w0 + (uint64_t)(seconds * 1e9);
    while (now(CLOCK_MONOTONIC) < end) {
        burn_cpu_us(50000);
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
    }
    wall_ns = now(CLOCK_MONOTONIC) - w0;
    cpu_ns = now(CLOCK_THREAD_CPUTIME_ID) - c0;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1) seconds = atof(argv[1]);
    pthread_t t;
    pthread_create(&t, NULL, half, NULL);
    pthread_join(t, NULL);
    printf("wall_ns=%llu cpu_ns=%llu\n", (unsigned long long)wall_ns, (unsigned long long)cpu_ns);
    return 0;
}
