/* What one sample costs the signal engine at stack depth 32.
 *
 *   handler_cost OUT_DIR ROUNDS
 *
 * (1) The walk alone: unwind_fp() over a live chain of 32 frames, timed in a loop
 *     (the handler's main work; it also reads a clock and writes its ring).
 * (2) End to end: a thread 32 frames deep runs fixed work unprofiled, then profiled
 *     at 10 kHz with kestrel_profile_start/stop (signal engine), alternately, ROUNDS
 *     times. Prints each pair's thread CPU ns and the raw file of the profiled run,
 *     so that the caller can divide the extra CPU by the samples taken: signal
 *     delivery, handler and return, everything the program pays per sample. */
#include "kestrel.h"
#include "runtime/unwind/unwind.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define DEPTH 32
#define WALKS 2000000
#define ITERS 400000000ull

static uint64_t now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static volatile uint64_t sink;
static double walk_ns;

__attribute__((noinline)) static void spin(void)
{
    uint64_t x = 1;
    for (uint64_t i = 0; i < ITERS; i++) {
        x = x * 6364136223846793005ull + i;
        __asm__ volatile("" : "+r"(x));
    }
    sink += x;
}

__attribute__((noinline)) static void time_walk(void)
{
    uint64_t out[UNWIND_MAX_DEPTH], fp = (uint64_t)(uintptr_t)__builtin_frame_address(0);
    uint64_t lo = fp - 4096, hi = fp + 64 * 1024;
    enum unwind_stop st;
    size_t n = 0;
    uint64_t t0 = now(CLOCK_THREAD_CPUTIME_ID);
    for (int i = 0; i < WALKS; i++) {
        n += unwind_fp(0x1000, fp, lo, hi, 0, out, UNWIND_MAX_DEPTH, &st);
        __asm__ volatile("" ::: "memory");
    }
    walk_ns = (double)(now(CLOCK_THREAD_CPUTIME_ID) - t0) / WALKS;
    sink += n;
}

/* Recurses to DEPTH frames, then runs `leaf`. */
__attribute__((noinline)) static void deep(int d, void (*leaf)(void))
{
    if (d > 1)
        deep(d - 1, leaf);
    else
        leaf();
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: handler_cost OUT_DIR ROUNDS\n");
        return 2;
    }
    int rounds = atoi(argv[2]);
    deep(DEPTH - 2, time_walk); /* main and deep() x30 below time_walk: 32 frames */
    printf("walk_ns %.1f\n", walk_ns);
    for (int r = 0; r < rounds; r++) {
        uint64_t c0 = now(CLOCK_THREAD_CPUTIME_ID);
        deep(DEPTH - 2, spin);
        uint64_t base = now(CLOCK_THREAD_CPUTIME_ID) - c0;
        char path[512];
        snprintf(path, sizeof(path), "%s/cost.%d.json", argv[1], r);
        if (kestrel_profile_start(10000) != 0)
            return 1;
        c0 = now(CLOCK_THREAD_CPUTIME_ID);
        deep(DEPTH - 2, spin);
        uint64_t prof = now(CLOCK_THREAD_CPUTIME_ID) - c0;
        if (kestrel_profile_stop(path) != 0)
            return 1;
        printf("round %d base_ns %llu profiled_ns %llu file %s\n", r, (unsigned long long)base,
               (unsigned long long)prof, path);
    }
    return 0;
}
