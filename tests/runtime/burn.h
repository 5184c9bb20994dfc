/* CPU work for the runtime's test programs: burn_cpu_us(us) computes until this
 * thread's CPU clock has advanced by `us` microseconds, so a sampler that follows CPU
 * time sees the same work whatever the machine's load. Never inlined: profiles name
 * it, and tests look for it by name. */
#ifndef KESTREL_TESTS_RUNTIME_BURN_H
#define KESTREL_TESTS_RUNTIME_BURN_H
#include <stdint.h>
#include <time.h>

/* Where the work goes, so the compiler cannot drop it. */
volatile unsigned long prog_sink;

static inline uint64_t burn_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline, unused)) static void burn_cpu_us(long us)
{
    uint64_t end = burn_thread_cpu_ns() + (uint64_t)us * 1000u;
    unsigned long x = 0;
    do {
        for (int i = 0; i < 1000; i++)
            x += (unsigned long)i ^ (x >> 3);
    } while (burn_thread_cpu_ns() < end);
    prog_sink += x;
}

#endif
