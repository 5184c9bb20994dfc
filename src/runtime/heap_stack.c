/* The allocating thread's stack, by its frame-pointer chain: the first record is the
 * interposed function's own frame, so frame 0 is the return address into the code
 * that allocated. Every frame pointer is checked before it is read: 8-byte aligned,
 * strictly increasing, inside [the walker's own frame, the top of the thread's stack),
 * a frame at most 1 MiB, at most `max` frames. Any failed check ends the walk.
 *
 * The top of the stack is asked once per thread (pthread_getattr_np, which may
 * allocate: the caller ignores its own allocations while it walks). Runs inside
 * malloc, never in a signal handler. */
#include "runtime/heap.h"

#define FRAME_MAX (1u << 20)

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

size_t heap_stack_walk(uintptr_t fp, uintptr_t *pcs, size_t max)
{
    struct heap_tls *t = &heap_tls;
    if (!t->stack_hi) t->stack_hi = heap_stack_top();
    uintptr_t lo = (uintptr_t)__builtin_frame_address(0);
    /* Without a known top only the interposed function's own record is trusted. */
    uintptr_t hi = t->stack_hi > 1 ? (uintptr_t)t->stack_hi : fp + 16;
    size_t n = 0;
    while (n < max) {
        if ((fp & 7) || fp < lo || fp > hi - 16) break;
        uintptr_t next = ((const uintptr_t *)fp)[0], ret = ((const uintptr_t *)fp)[1];
        if (!ret) break;
        pcs[n++] = ret;
        if (next <= fp || next - fp > FRAME_MAX) break;
        fp = next;
    }
    return n;
}
