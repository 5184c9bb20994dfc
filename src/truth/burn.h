/* burn(n): the ground truth's one primitive, a CPU loop whose cost is linear in n.
 *
 * A workload function that must hold a known share of the CPU time is defined with
 * BURN_DEFINE, so that the loop runs in that function's own frame: its self time is
 * the loop's time, and the symbolizer sees no inlined frame between the two. Every
 * instance is the same loop, so n_i units cost the same wherever they run; whether
 * that holds on this host is measured (calibration, and timing each function alone),
 * not assumed. */
#ifndef KESTREL_BURN_H
#define KESTREL_BURN_H
#include <stdint.h>

/* Dependent multiply-adds per unit: one unit is about a microsecond here. */
#define BURN_STEPS_PER_UNIT 1000u

/* The loop cannot be optimised away (the asm makes every step observable) nor
 * folded into a closed form, and its result leaves through a volatile store. Taking
 * the frame address makes the compiler keep a frame pointer even in this leaf, so a
 * frame-pointer walk from inside the loop still finds the caller. */
#define BURN_DEFINE(name)                                                                          \
    __attribute__((noinline, noclone)) void name(uint64_t units)                                   \
    {                                                                                              \
        __asm__ volatile("" : : "r"(__builtin_frame_address(0)));                                  \
        uint64_t x = units | 1;                                                                    \
        for (uint64_t i = 0; i < units * BURN_STEPS_PER_UNIT; i++) {                               \
            x = x * 6364136223846793005ull + 1442695040888963407ull;                               \
            __asm__ volatile("" : "+r"(x));                                                        \
        }                                                                                          \
        burn_sink = x;                                                                             \
    }

extern volatile uint64_t burn_sink;

/* The reference instance: what calibration measures. */
void burn(uint64_t units);

/* The calling thread's CPU time in ns: the clock the truth of a workload is timed on. */
uint64_t burn_thread_cpu_ns(void);

#endif
