/* The side stacks a heap sample runs on: the walk of the allocating thread's stack,
 * its return addresses and the bucket's lookup take 1 to 3 KiB of stack, more than
 * glibc's malloc itself writes below its caller (1 KiB on aarch64), and a thread's
 * stack may have no more to spare (PTHREAD_STACK_MIN). On a side stack the sample
 * writes no more of the thread's stack than the frames that call it.
 *
 * A pool of HEAP_SIDE_STACKS stacks, each claimed by one sample at a time (rtstack.h):
 * samples overlap on that many threads at most before one runs on its own thread's
 * stack as it did before. A thread takes no sample inside a sample (its allocations
 * pass through while it ignores them: heap_guard.h), so it holds one stack at most.
 *
 * While a sample runs there, a signal is taken on the side stack (unless its handler
 * runs on an alternate stack): the CPU engines leave a sample taken there out of the
 * program's profile as kestrel's own (rtown.h), and a handler of the program runs on the
 * thread's own stack below the sample's frames (heap_side_below, sigwrap.c), where it
 * would have run without the side stack, with the room it would have had. The side
 * stack is sized for the runtime's own worst case on it: a fatal signal deferred to
 * the sample's release of its lock, whose flush (single-threaded) writes the file there.
 *
 * The runtime's other work on a program's thread (a session's start and its file at
 * the end) runs there too, so that a CPU sample taken there is known for kestrel's own
 * (heap_side_holds_any, rtown.h) and left out of the program's profile.
 *
 * heap_side_run runs inside malloc; heap_side_holds_any and
 * heap_side_below in signal handlers (loads). */
#include "runtime/arch/arch.h"
#include "runtime/heap/heap.h"
#include "runtime/rtstack.h"

#define HEAP_SIDE_STACKS 64
#define HEAP_SIDE_SIZE (64 * 1024)
/* Below the sampling's last frame record on the thread's stack: what a handler moved
 * there leaves alone. */
#define HEAP_SIDE_GAP 64

RTSTACK_POOL(heap_sides, HEAP_SIDE_STACKS, HEAP_SIDE_SIZE);

int heap_side_run(struct heap_tls *t, void (*fn)(void *), void *arg)
{
    struct heap_side s = {.stack = rtstack_claim(&heap_sides, (unsigned)t->slot, 1)};
    if (s.stack < 0) return -1;
    /* This frame stays while fn runs: a walk of the thread's stack starts here. */
    ARCH_HERE(s.regs.pc, s.regs.sp);
    s.regs.fp = (uint64_t)(uintptr_t)__builtin_frame_address(0);
    s.regs.lr = 0;
    t->side = &s;
    __atomic_signal_fence(__ATOMIC_SEQ_CST); /* published before the switch */
    arch_on_stack(fn, arg, rtstack_top(&heap_sides, s.stack));
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->side = NULL;
    rtstack_release(&heap_sides, s.stack);
    return 0;
}

/* The sample this thread runs on a side stack that holds sp, or NULL. */
static const struct heap_side *heap_side_at(uint64_t sp)
{
    const struct heap_side *s = heap_tls.side;
    return s && rtstack_holds(&heap_sides, s->stack, sp) ? s : NULL;
}

int heap_side_holds_any(uint64_t sp)
{
    unsigned limit = atomic_load_explicit(&heap_sides.limit, memory_order_acquire);
    for (unsigned i = 0; i < limit; i++)
        if (rtstack_holds(&heap_sides, (int)i, sp)) return 1;
    return 0;
}

uintptr_t heap_side_below(uintptr_t sp)
{
    const struct heap_side *s = heap_side_at(sp);
    return s ? (uintptr_t)((s->regs.sp - HEAP_SIDE_GAP) & ~(uint64_t)15) : 0;
}

void heap_side_after_fork_child(void)
{
    const struct heap_side *s = heap_tls.side;
    rtstack_after_fork_child(&heap_sides, s ? s->stack : -1, 1);
}
