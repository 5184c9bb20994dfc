/* The allocating thread's stack, by the runtime's one walker (uw_walk: the images'
 * CFI, or frame pointers, per KESTREL_PROFILE_UNWIND; every load checked against the
 * thread's stack). The walk starts at the interposed function's own frame record
 * (built with frame pointers), so frame 0 is the return address into the code that
 * allocated, and the caller's sp and fp are known exactly where the record sits just
 * below the caller's sp (ARCH_RECORD_IS_CFA, x86-64). Elsewhere (aarch64, whose
 * records sit anywhere in their frame) a CFI walk starts here, from this function's
 * own pc and sp, and its frames up to that return address are dropped.
 *
 * The top of the stack is asked once per thread (pthread_getattr_np, which may
 * allocate: the caller ignores its own allocations while it walks). Runs inside
 * malloc, never in a signal handler. */
#include "runtime/arch/arch.h"
#include "runtime/heap/heap.h"
#include "runtime/unwind/unwind.h"
#include "runtime/unwind/step.h"
#include "runtime/unwind/table.h"

#include <string.h>

static uint64_t heap_stack_top(void)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr)) return 1;
    int rc = pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
    return rc ? 1 : (uint64_t)(uintptr_t)addr + size;
}

/* The walk from here, its frames before `ra` (this function's, the interposed
 * one's) dropped; 0 when ra is not among them (no CFI for the runtime itself). */
static __attribute__((noinline)) size_t heap_walk_here(uint64_t ra, uint64_t hi, uint64_t *pcs,
                                                       size_t max, enum unwind_stop *stop)
{
    uint64_t pc, sp;
    ARCH_HERE(pc, sp);
    struct uw_stack m = {sp, hi, 0, UW_DIRECT_LIVE, NULL};
    struct uw_regs r = {.pc = pc, .sp = sp, .fp = (uint64_t)(uintptr_t)__builtin_frame_address(0),
                        .interrupted = 1};
    size_t n = uw_walk(uw_mode_current(), r, &m, pcs, max, stop);
    for (size_t k = 1; k < n; k++)
        if (pcs[k] == ra) {
            memmove(pcs, &pcs[k], (n - k) * sizeof *pcs);
            return n - k;
        }
    return 0;
}

size_t heap_stack_walk(uintptr_t fp, uintptr_t *pcs, size_t max, uint8_t *stop_out)
{
    struct heap_tls *t = &heap_tls;
    if (!t->stack_hi) t->stack_hi = heap_stack_top();
    const uint64_t *own = (const uint64_t *)fp; /* this call's own record: always valid */
    uint64_t lo = (uint64_t)fp + 16;
    /* Without a known top only that record is trusted. */
    uint64_t hi = t->stack_hi > 1 ? t->stack_hi : lo;
    enum unwind_stop stop = UNWIND_CUT_RANGE;
    size_t n = 0;
    if (own[1] && !ARCH_RECORD_IS_CFA && uw_mode_current() != UW_MODE_FP && hi > lo)
        n = heap_walk_here(arch_strip_ra(own[1]), hi, (uint64_t *)pcs, max, &stop);
    if (own[1] && n == 0) {
        struct uw_stack m = {lo, hi, 0, UW_DIRECT_LIVE, NULL};
        struct uw_regs r = {.pc = own[1], .sp = lo, .fp = own[0]};
        n = uw_walk(uw_mode_current(), r, &m, (uint64_t *)pcs, max, &stop);
    }
    *stop_out = (uint8_t)stop;
    return n;
}
