/* rtown.c — kestrel's own work on a program's threads (rtown.h).
 *
 * Signal handlers: every function here. Inside malloc: every function here. */
#include "runtime/rtown.h"
#include "runtime/arch/arch.h"
#include "runtime/heap/heap_guard.h"

#include <stddef.h>

static uint64_t rtown_count;

int rtown_sample(uint64_t sp)
{
    if (!heap_side_holds_any(sp)) return 0;
    __atomic_fetch_add(&rtown_count, 1, __ATOMIC_RELAXED);
    return 1;
}

int rtown_sample_regs(const uint64_t *perf_regs)
{
    if (!perf_regs) return 0;
    struct arch_regs r;
    arch_perf_regs(perf_regs, &r);
    return rtown_sample(r.sp);
}

void rtown_add(uint64_t n)
{
    __atomic_fetch_add(&rtown_count, n, __ATOMIC_RELAXED);
}

uint64_t rtown_samples(void)
{
    return __atomic_load_n(&rtown_count, __ATOMIC_RELAXED);
}

void rtown_reset(void)
{
    __atomic_store_n(&rtown_count, 0, __ATOMIC_RELAXED);
}
