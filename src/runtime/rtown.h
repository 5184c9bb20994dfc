/* rtown — kestrel's own work on a program's threads, kept out of the program's CPU
 * profile. The runtime works on the program's threads at times: a heap sample inside
 * malloc, a heap session's start (the unwind tables of every image) and its file at the
 * end. All of it runs on a side stack of the runtime's (heap_side.c), so a CPU sample
 * whose stack pointer lies there is kestrel's: the engines drop it and count it here,
 * and the raw file's engine_stats.runtime_samples says how many there were.
 *
 * Signal handlers: everything here (atomics and loads). */
#ifndef KESTREL_RTOWN_H
#define KESTREL_RTOWN_H
#include <stdint.h>

/* 1 when a CPU sample taken at stack pointer sp is kestrel's own work: it is counted,
 * and the caller leaves it out of the profile. */
int rtown_sample(uint64_t sp);
/* Own samples counted since the last rtown_reset() (a CPU session's start). */
/* The same for a perf sample's user registers (arch_perf_regs' order); NULL: not own. */
int rtown_sample_regs(const uint64_t *perf_regs);
/* n more samples' worth of kestrel's own work (a wait inside it, in periods). */
void rtown_add(uint64_t n);
uint64_t rtown_samples(void);
void rtown_reset(void);
#endif
