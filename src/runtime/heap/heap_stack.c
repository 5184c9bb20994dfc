/* The allocating thread's stack, by the runtime's one walker (uw_walk: the images'
 * CFI, or frame pointers, per KESTREL_PROFILE_UNWIND; every load checked against the
 * thread's stack). The walk starts at the interposed function's own frame record
 * (built with frame pointers), so frame 0 is the return address into the code that
 * allocated, and the caller's sp and rbp are known exactly.
 *
 * The top of the stack is asked once per thread (pthread_getattr_np, which may
 * allocate: the caller ignores its own allocations while it walks). Runs inside
 * malloc, never in a signal handler. */
#include "runtime/heap/heap.h"
#include "runtime/unwind/unwind.h"
#include "runtime/unwind/step.h"

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
    if (own[1]) {
        struct uw_stack m = {lo, hi, 0};
        struct uw_regs r = {own[1], lo, own[0], 0};
        n = uw_walk(uw_mode_current(), r, &m, (uint64_t *)pcs, max, &stop);
    }
    *stop_out = (uint8_t)stop;
    return n;
}
