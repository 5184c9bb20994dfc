/* sigwrap.c — the program's signal handlers behind a trampoline (sigwrap.h).
 *
 * Signal handlers: sw_trampoline (and sigwrap_handled), which calls the heap profiler's
 * heap_handler_enter/leave (a few thread-local stores) around the program's handler,
 * and heap_side_below and arch_on_stack (registers) when it interrupted a heap sample
 * on its side stack. Inside malloc: nothing.
 *
 * Rules: sw_prog[sig] is the program's disposition whenever sw_on[sig] is 1, and the
 * kernel then has the trampoline with the program's flags and mask (SA_SIGINFO added).
 * The entry is written before the kernel's disposition changes, so a signal that
 * arrives meanwhile finds the new handler or the old one, never half of either. */
#include "runtime/sigwrap.h"
#include "runtime/arch/arch.h"
#include "runtime/heap/heap_guard.h"
#include "runtime/interpose.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

static struct sigaction sw_prog[NSIG];
static _Atomic int sw_on[NSIG];

/* Handlers of the program's run on this thread: blocking.c returns EINTR when one ran
 * during a call, as without the runtime. */
__thread volatile unsigned sigwrap_handled_n;

struct sw_call {
    int sig;
    siginfo_t *si;
    void *uc;
};

/* The program's handler, on the stack it runs on: the heap profiler takes this frame
 * for the handler's outermost. */
static void sw_run(void *arg)
{
    struct sw_call *c = arg;
    struct sigaction a = sw_prog[c->sig];
    heap_handler_enter((uintptr_t)__builtin_frame_address(0));
    if (a.sa_flags & SA_SIGINFO) {
        if (a.sa_sigaction) a.sa_sigaction(c->sig, c->si, c->uc);
    } else if (a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN) {
        a.sa_handler(c->sig);
    }
    heap_handler_leave();
}

static void sw_trampoline(int sig, siginfo_t *si, void *uc)
{
    struct sw_call c = {sig, si, uc};
    sigwrap_handled_n++;
    /* A heap sample it interrupted runs on a side stack of the runtime's (heap_side.c):
     * the handler runs on the thread's own stack instead, below the sample's frames,
     * with the room it has without the profiler. */
    uintptr_t below = heap_side_below((uintptr_t)__builtin_frame_address(0));
    if (below)
        arch_on_stack(sw_run, &c, (void *)below);
    else
        sw_run(&c);
}

/* 1 for a handler of the program: not SIG_DFL/SIG_IGN, not a function of this
 * library (the runtime's own handlers run as they are). */
static int sw_programs(const struct sigaction *act)
{
    void *fn = act->sa_flags & SA_SIGINFO ? (void *)act->sa_sigaction : (void *)act->sa_handler;
    if (fn == (void *)SIG_DFL || fn == (void *)SIG_IGN || fn == (void *)sw_trampoline) return 0;
    Dl_info mine, theirs;
    if (!dladdr((void *)sw_trampoline, &mine) || !dladdr(fn, &theirs)) return 1;
    return mine.dli_fbase != theirs.dli_fbase;
}

int sigwrap_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (sig <= 0 || sig >= NSIG) return REAL(sigaction)(sig, act, old);
    struct sigaction prev_prog = sw_prog[sig];
    int was_on = atomic_load(&sw_on[sig]);
    int r;
    if (act && sw_programs(act)) {
        struct sigaction wrapped = *act;
        wrapped.sa_flags |= SA_SIGINFO;
        wrapped.sa_sigaction = sw_trampoline;
        sw_prog[sig] = *act;
        atomic_store(&sw_on[sig], 1);
        r = REAL(sigaction)(sig, &wrapped, old);
        if (r != 0) {
            sw_prog[sig] = prev_prog;
            atomic_store(&sw_on[sig], was_on);
            return r;
        }
    } else {
        r = REAL(sigaction)(sig, act, old);
        if (r != 0) return r;
        if (act) atomic_store(&sw_on[sig], 0);
    }
    if (old && was_on && (old->sa_flags & SA_SIGINFO) && old->sa_sigaction == sw_trampoline)
        *old = prev_prog;
    return 0;
}
