/* One thread that computes for 50 ms and sleeps for 50 ms, over and over, for the
 * given number of seconds. Prints that thread's wall and CPU nanoseconds over the
 * whole loop, so the test knows the true share of time it spent off the CPU. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double seconds = 4;
static uint64_t wall_ns, cpu_ns;
volatile unsigned long prog_sink;

static uint64_t now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void compute_for(uint64_t ns)
{
    uint64_t end = now(CLOCK_THREAD_CPUTIME_ID) + ns;
    unsigned long x = 0;
    while (now(CLOCK_THREAD_CPUTIME_ID) < end)
        for (int i = 0; i < 1000; i++)
            x += (unsigned long)i ^ (x >> 3);
    prog_sink += x;
}

static void *half(void *arg)
{
    (void)arg;
    uint64_t w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);
    uint64_t end = w0 + (uint64_t)(seconds * 1e9);
    while (now(CLOCK_MONOTONIC) < end) {
        compute_for(50000000);
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
