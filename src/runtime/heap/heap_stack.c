/* The allocating thread's stack, by the runtime's one walker (uw_walk: the images'
 * CFI, or frame pointers, per KESTREL_PROFILE_UNWIND; every load checked against the
 * thread's stack). The walk starts at the interposed function's own frame record
 * (built with frame pointers), so frame 0 is the return address into the code that
 * allocated, and the caller's sp and fp are known exactly where the record sits just
 * below the caller's sp (ARCH_RECORD_IS_CFA, x86-64). Elsewhere (aarch64, whose
 * records sit anywhere in their frame) a CFI walk starts from a frame of the runtime's
 * own that is live on the thread's stack (the side stack's caller when the sample runs
 * on one, heap_side.c; else this walk's own), and its frames up to that return address
 * are dropped.
 *
 * The top of the stack is found once per thread, without a call that takes a lock
 * or allocates: a malloc may run under any lock of the program's or of glibc's
 * (pthread_getattr_np allocates while it holds the thread's own lock: asking it
 * again from inside that allocation waited for ever). Runs inside malloc, on the
 * thread's stack or on a side stack, never in a signal handler. */
#include "runtime/arch/arch.h"
#include "runtime/cpu/registry.h"
#include "runtime/heap/heap.h"
#include "runtime/unwind/unwind.h"
#include "runtime/unwind/step.h"
#include "runtime/unwind/table.h"

#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

extern void *__libc_stack_end __attribute__((weak)); /* the loader's: the main stack's top */

#define HEAP_THREAD_STACK_MAX (1ull << 30) /* a descriptor further above SP is not its */

/* The registry's bounds when the CPU profiler registered the thread; else for the main
 * thread the loader's __libc_stack_end, and for another glibc thread its descriptor
 * (pthread_self()), which sits right above its stack; 1 when none fits. sp is an
 * address on the thread's stack (this code may run on a side stack). */
static uint64_t heap_stack_top(uint64_t sp)
{
    struct reg_slot *s = registry_self();
    if (s && sp >= s->stack_lo && sp < s->stack_hi) return s->stack_hi;
    uint64_t top = 1;
    if (getpid() == (pid_t)syscall(SYS_gettid))
        top = &__libc_stack_end && __libc_stack_end ? (uint64_t)(uintptr_t)__libc_stack_end : 1;
    else
        top = (uint64_t)(uintptr_t)pthread_self();
    return top > sp && top - sp <= HEAP_THREAD_STACK_MAX ? top : 1;
}

/* The walk from `from` (a frame of the runtime's live on the thread's stack; NULL:
 * this one, which runs there), its frames before `ra` (the runtime's, the interposed
 * function's) dropped; 0 when ra is not among them (no CFI for the runtime itself). */
static __attribute__((noinline)) size_t heap_walk_from(const struct arch_regs *from, uint64_t ra,
                                                       uint64_t hi, uint64_t *pcs, size_t max,
                                                       enum unwind_stop *stop)
{
    struct arch_regs here;
    if (!from) {
        ARCH_HERE(here.pc, here.sp);
        here.fp = (uint64_t)(uintptr_t)__builtin_frame_address(0);
        from = &here;
    }
    struct uw_stack m = {from->sp, hi, 0, UW_DIRECT_LIVE, NULL};
    struct uw_regs r = {.pc = from->pc, .sp = from->sp, .fp = from->fp, .interrupted = 1};
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
    if (!t->stack_hi) t->stack_hi = heap_stack_top((uint64_t)fp);
    const uint64_t *own = (const uint64_t *)fp; /* this call's own record: always valid */
    uint64_t lo = (uint64_t)fp + 16;
    /* Without a known top only that record is trusted. */
    uint64_t hi = t->stack_hi > 1 ? t->stack_hi : lo;
    enum unwind_stop stop = UNWIND_CUT_RANGE;
    size_t n = 0;
    if (own[1] && !ARCH_RECORD_IS_CFA && uw_mode_current() != UW_MODE_FP && hi > lo)
        n = heap_walk_from(t->side ? &t->side->regs : NULL, arch_strip_ra(own[1]), hi,
                           (uint64_t *)pcs, max, &stop);
    if (own[1] && n == 0) {
        struct uw_stack m = {lo, hi, 0, UW_DIRECT_LIVE, NULL};
        struct uw_regs r = {.pc = own[1], .sp = lo, .fp = own[0]};
        n = uw_walk(uw_mode_current(), r, &m, (uint64_t *)pcs, max, &stop);
    }
    *stop_out = (uint8_t)stop;
    return n;
}
