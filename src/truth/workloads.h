/* The ground-truth workloads: programs whose true CPU shares are known, built from
 * burn() (burn.h). Each runs in a process of its own, profiled by kestrel or by a
 * peer (`kestrel calibrate --workload NAME`), and each function named here is a real
 * symbol of that process, so every profiler can name it.
 *
 *  shares   seven functions doing 40, 22, 15, 10, 6, 5 and 2 parts of the work,
 *           interleaved in shuffled rounds of about a millisecond, so that any stretch
 *           of the run holds the same proportions (the error table reads prefixes).
 *  worker   the main thread and one worker thread ("worker") each doing half the work
 *           at the same time: truth 50% each.
 *  memset   fill_buffers spends its time inside libc's memset (no frame pointer) and
 *           compute_rows in burn(): truth by timing each alone.
 *  oversub  2 x cores threads ("busy-N", at most 8), equal work each, thread N in
 *           its own function oversubN: truth 1/threads each, on half as many cores.
 *  sleeper  busy_half burns; napper burns as much and then sleeps as long as its
 *           burning took: CPU share 50%, wall share (about 2/3) measured by the
 *           workload itself. */
#ifndef KESTREL_WORKLOADS_H
#define KESTREL_WORKLOADS_H
#include <stdint.h>
#include <stdio.h>

#define WORKLOAD_SHARES_N 7

struct workload_fn {
    const char *name; /* the function's symbol */
    void (*fn)(uint64_t units);
    unsigned weight; /* its part of the work, out of 100 */
};

/* The seven functions of `shares`, 40% down to 2%. */
extern const struct workload_fn workload_shares[WORKLOAD_SHARES_N];

/* Units of work one round of `shares` does (its weights sum to 100: x10). */
#define WORKLOAD_ROUND_UNITS 1000u
#define WORKLOAD_TIMED_EVERY 16 /* shares: one round in this many is timed call by call */

/* The functions of the other workloads, for truth by timing them alone. */
void main_half(uint64_t units);
void worker_half(uint64_t units);
void compute_rows(uint64_t units);
void busy_half(uint64_t units);
void napper_burn(uint64_t units);
void napper(uint64_t units);
void fill_buffers(uint64_t calls);

/* memset: units of compute_rows and calls of fill_buffers per round. */
#define WORKLOAD_MEMSET_COMPUTE 60u
#define WORKLOAD_MEMSET_FILLS 100u
#define WORKLOAD_FILL_BYTES (64u * 1024u)

#define WORKLOAD_OVERSUB_MAX 8
extern void (*const workload_oversub[WORKLOAD_OVERSUB_MAX])(uint64_t units);
/* Threads of `oversub` on this machine: twice the cores, at most 8 (with more cores
 * than 4 the machine is then not oversubscribed, and the report says so). */
unsigned workload_oversub_threads(void);


/* Runs workload `name` for about `units` units of burn() in total (the sleeper
 * sleeps on top). Writes one line of what it measured about itself to `out`:
 * "workload NAME key=value...". Returns 0, or -EINVAL for an unknown name. */
int workload_run(const char *name, uint64_t units, FILE *out);

#endif
