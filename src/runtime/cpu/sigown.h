/* sigown — the signal engine's signal and the program's claim on it.
 *
 * The signal engine needs one signal to interrupt a running thread. The program may want
 * that signal too: its own handler, its own timer (setitimer, alarm), or just SIG_DFL.
 * So the engine uses a real-time signal a program is unlikely to own (SIGRTMAX-4 by
 * default, KESTREL_PROFILE_SIGNAL to choose), marks each signal it sends (sent with
 * rt_tgsigqueueinfo, si_code SI_QUEUE and a per-process cookie in si_value, so its
 * handler tells them from any the program sends), and watches the program: sigaction()
 * and signal() (interposed in lifecycle.c) and setitimer()/alarm() (here). While the
 * engine holds the signal, the program sees the disposition it set itself.
 *
 * When the program takes the signal (installs a handler, arms a timer that raises it,
 * or changes it behind the runtime's back with a raw system call, seen at the next
 * tick), the engine steps aside: it stops sending, waits for the sends in flight,
 * disarms its timers (the engine's quiet hook), sets
 * SIG_IGN for a moment (which discards every instance still pending in any thread, so
 * none reaches the program's handler later), then installs what the program asked for.
 * The sampler then moves to a spare real-time signal that the program never touched and
 * that is still at SIG_DFL, and the profile says so (a note in the raw file); with no
 * spare left, on-CPU sampling stops and the note says that.
 *
 * A thread that blocks the signal (sigprocmask, a thread that blocks every signal) is
 * told by the sampler (its signal stays pending while its CPU clock runs);
 * sigown_discard() then takes the pending instance back, by the same SIG_IGN moment.
 * Until then the program does not see it: sigpending() leaves it out, a sigwait-style
 * call that took one waits on (sigown_wait), and signalfd() leaves it out of a mask
 * that takes every signal (a mask that names the engine's signal without the spares
 * is the program taking it).
 *
 * Signal handlers: sigown_is_ours(), sigown_foreign() (the engine's handler), and the
 * hooks sigown_sigaction()/sigown_timer() (a program may call sigaction() from its own
 * handler): atomics, sigaction and tgkill system calls, sched_yield. Inside malloc:
 * nothing. */
#ifndef KESTREL_SIGOWN_H
#define KESTREL_SIGOWN_H
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* KESTREL_PROFILE_SIGNAL: a number, or a name (PROF, SIGPROF, USR1, ALRM, VTALRM,
 * RTMIN+N, SIGRTMAX-N). 0 and *sig set, or -1 with *why (a static string). */
int sigown_parse(const char *v, int *sig, const char **why);
int sigown_default(void); /* SIGRTMAX-4 */

/* The engine thread's side. claim: the engine's handler on `want`, or on a spare if the
 * program already has `want` (not at SIG_DFL); returns the signal or -errno. poll: once
 * a tick, before any send; returns 1 when the signal changed since the last call (every
 * send in flight was discarded). discard: takes back the instances pending in every
 * thread (blocked ones). The current signal, 0 for none (on-CPU sampling stopped). */
int sigown_claim(int want, void (*handler)(int, siginfo_t *, void *), void (*quiet)(void),
                 uint64_t start_ns);
int sigown_poll(void);
void sigown_discard(void);
int sigown_current(void);

/* Sends the engine's signal to thread `tid`; 0, or -1 (gone, or no signal now). */
int sigown_send(int pid, int tid);

/* Creates and arms a timer on `clock` (a thread's CPU clock) that raises the engine's
 * signal in thread `tid` each time `interval_ns` of that clock passed, marked as the
 * engine's (SI_TIMER, the cookie in si_value). 0 with *id and *sig set, or -errno
 * (-ESRCH: no signal now). A step aside waits for a call in progress and then runs the
 * engine's `quiet` hook (given to sigown_claim), which disarms every such timer before
 * the program's disposition is installed: no timer of the engine's raises a signal the
 * program took. */
int sigown_timer_arm(clockid_t clock, int tid, uint64_t interval_ns, timer_t *id, int *sig);

/* In the engine's handler: the signal is one the engine sent. A signal that is not is
 * the program's: sigown_foreign() gives it the disposition the program set. */
int sigown_is_ours(const siginfo_t *si);
void sigown_foreign(int sig, siginfo_t *si, void *uc);

/* The interposed sigaction()'s hook: 1 when `sig` is the engine's (handled: *ret is
 * sigaction's result), 0 to let the call through. */
int sigown_sigaction(int sig, const struct sigaction *act, struct sigaction *old, int *ret);

/* sigtimedwait() for the program (blocking.c's wrappers call it; sigwait is interposed
 * here): a signal of the engine's that the wait took is not the program's, and the wait
 * goes on for the rest of its time. */
int sigown_wait(const sigset_t *set, siginfo_t *info, const struct timespec *ts);

/* What the raw file says: lines (static buffers) and counts. */
size_t sigown_notes(const char **out, size_t max);
uint64_t sigown_taken(void);
#endif
