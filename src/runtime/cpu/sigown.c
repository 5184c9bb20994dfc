/* sigown.c — the signal engine's signal and the program's claim on it (sigown.h).
 *
 * Signal handlers: sigown_is_ours(), sigown_foreign(), sigown_sigaction(), sigown_timer()
 * and the interposed setitimer()/alarm(): atomics, sigaction/tgkill/rt_sigprocmask
 * system calls, clock_gettime, sched_yield. Inside malloc: nothing.
 *
 * Rules: so_sig is the signal the engine sends now (0: none). A signal's bit is in
 * so_claimed exactly while the engine's handler is installed on it, and so_view[sig]
 * is then the disposition the program believes it has (SIG_DFL or SIG_IGN: a handler
 * of the program's makes the engine step aside). so_touched only grows: signals the
 * program gave a handler or a timer, never taken as spares. so_sending counts sends
 * in progress: whoever clears so_sig waits for it to be 0 before it discards what is
 * pending. so_busy serialises the kernel-disposition changes (claims, step-asides,
 * discards) between the engine thread and the program's threads. */
#include "runtime/cpu/sigown.h"
#include "runtime/interpose.h"
#include "runtime/sigwrap.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define SO_MAXSIG 64
#define SO_SPARES 8  /* SIGRTMAX-4 and the 7 below it */
#define SO_EVENTS 8  /* what the profile's notes can tell */
#define SO_NOTE 200

enum so_why { SO_AT_START, SO_HANDLER, SO_TIMER, SO_RAW, SO_SIGNALFD };

struct so_event {
    uint64_t t_ns;  /* CLOCK_MONOTONIC */
    int sig;        /* the engine's signal the program took */
    int why;        /* enum so_why */
    _Atomic int to; /* the signal the engine went on with, 0 none, -1 not yet known */
};

static _Atomic int so_sig;
static _Atomic uint64_t so_claimed, so_touched;
static _Atomic int so_sending, so_busy, so_changed;
static struct sigaction so_view[SO_MAXSIG + 1];
static void (*so_handler)(int, siginfo_t *, void *);
static void (*so_quiet)(void); /* the engine's: disarms its timers */
static void *so_cookie;
static int so_pid, so_uid;
static uint64_t so_start_ns;
static struct so_event so_ev[SO_EVENTS];
static _Atomic unsigned so_nev;
static _Atomic uint64_t so_taken_n;
static char so_notes_buf[SO_EVENTS][SO_NOTE];

static uint64_t so_bit(int sig)
{
    return sig >= 1 && sig <= SO_MAXSIG ? 1ull << (sig - 1) : 0;
}

static uint64_t so_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int so_is_handler(const struct sigaction *a)
{
    return (a->sa_flags & SA_SIGINFO) || (a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN);
}

/* Bounded: a nested call from a signal handler of a thread that holds it goes on. */
static void so_lock(void)
{
    for (int i = 0; i < 100000 && atomic_exchange(&so_busy, 1); i++)
        sched_yield();
}

static void so_unlock(void)
{
    atomic_store(&so_busy, 0);
}

/* ============================ the signal's name ============================ */

int sigown_default(void)
{
    return SIGRTMAX - 4;
}

int sigown_parse(const char *v, int *sig, const char **why)
{
    static const struct {
        const char *name;
        int sig;
    } named[] = {{"PROF", SIGPROF}, {"VTALRM", SIGVTALRM}, {"ALRM", SIGALRM},
                 {"USR1", SIGUSR1}, {"USR2", SIGUSR2}};
    const char *p = strncmp(v, "SIG", 3) == 0 ? v + 3 : v;
    char *end;
    long n = -1;
    if (*p >= '0' && *p <= '9') {
        n = strtol(p, &end, 10);
        if (*end) n = -1;
    } else if (strncmp(p, "RTMIN", 5) == 0 || strncmp(p, "RTMAX", 5) == 0) {
        long off = 0;
        if (p[5] == '+' || p[5] == '-') {
            off = strtol(p + 6, &end, 10);
            if (*end || end == p + 6) off = -1000;
            if (p[5] == '-') off = -off;
        } else if (p[5]) {
            off = -1000;
        }
        n = (p[3] == 'I' ? SIGRTMIN : SIGRTMAX) + off;
    } else {
        for (size_t i = 0; i < sizeof named / sizeof *named; i++)
            if (strcmp(p, named[i].name) == 0) n = named[i].sig;
    }
    /* A signal whose default action ends the process and that nothing else in the
     * runtime or glibc uses: SIGPROF-like ones, the user signals, the real-time range. */
    int ok = n == SIGPROF || n == SIGVTALRM || n == SIGALRM || n == SIGUSR1 || n == SIGUSR2 ||
             (n >= SIGRTMIN && n <= SIGRTMAX);
    if (!ok) {
        *why = "not a signal the engine can use (PROF, VTALRM, ALRM, USR1, USR2, "
               "RTMIN+N..RTMAX, or a number)";
        return -1;
    }
    *sig = (int)n;
    return 0;
}

/* ============================ claiming and moving ============================ */

/* The engine's handler on `sig`, when the program has not touched it and it is at
 * SIG_DFL. With so_busy held. */
static int so_try(int sig)
{
    uint64_t b = so_bit(sig);
    if (!b || (atomic_load(&so_touched) & b)) return 0;
    struct sigaction cur, sa, prev;
    if (REAL(sigaction)(sig, NULL, &cur) != 0 || so_is_handler(&cur) || cur.sa_handler != SIG_DFL)
        return 0;
    so_view[sig] = cur;
    atomic_fetch_or(&so_claimed, b);
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = so_handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (REAL(sigaction)(sig, &sa, &prev) != 0 || so_is_handler(&prev) ||
        prev.sa_handler != SIG_DFL) { /* the program got there in between */
        REAL(sigaction)(sig, &prev, NULL);
        atomic_fetch_and(&so_claimed, ~b);
        return 0;
    }
    return 1;
}

static int so_spare(int avoid)
{
    for (int k = 0; k < SO_SPARES; k++) {
        int s = SIGRTMAX - 4 - k;
        if (s != avoid && s >= SIGRTMIN && so_try(s)) return s;
    }
    return 0;
}

static void so_event(int sig, int why, int to)
{
    unsigned i = atomic_fetch_add(&so_nev, 1);
    if (i >= SO_EVENTS) return;
    so_ev[i].t_ns = so_now();
    so_ev[i].sig = sig;
    so_ev[i].why = why;
    atomic_store(&so_ev[i].to, to);
}

int sigown_claim(int want, void (*handler)(int, siginfo_t *, void *), void (*quiet)(void),
                 uint64_t start_ns)
{
    so_quiet = quiet;
    int cur = atomic_load(&so_sig);
    so_start_ns = start_ns;
    so_pid = (int)syscall(SYS_getpid); /* a fork child's own */
    so_uid = (int)getuid();
    atomic_store(&so_nev, 0);
    if (cur) return cur; /* an earlier session's, still installed */
    so_handler = handler;
    so_cookie = (void *)((uintptr_t)&so_sig ^ (uintptr_t)start_ns ^ 0x6b657374u);
    so_lock();
    int sig = so_try(want) ? want : so_spare(want);
    so_unlock();
    if (!sig) return -EBUSY;
    if (sig != want) so_event(want, SO_AT_START, sig);
    atomic_store(&so_sig, sig);
    return sig;
}

int sigown_current(void)
{
    return atomic_load_explicit(&so_sig, memory_order_relaxed);
}

/* The program takes `sig`: no send from now on, the ones in flight discarded, then
 * `install` (the program's disposition; NULL: the one it believes it has). */
static int so_step_aside(int sig, int why, const struct sigaction *install)
{
    so_lock();
    uint64_t b = so_bit(sig);
    int held = (atomic_load(&so_claimed) & b) != 0;
    int expect = sig;
    if (atomic_compare_exchange_strong(&so_sig, &expect, 0))
        for (int i = 0; i < 1000000 && atomic_load(&so_sending); i++)
            sched_yield();
    int r = 0;
    if (held && so_quiet) so_quiet();
    if (held) {
        struct sigaction ign;
        memset(&ign, 0, sizeof ign);
        ign.sa_handler = SIG_IGN;
        sigemptyset(&ign.sa_mask);
        REAL(sigaction)(sig, &ign, NULL); /* discards every pending instance */
        /* The program's handler behind sigwrap's trampoline, as any other of its own. */
        r = sigwrap_sigaction(sig, install ? install : &so_view[sig], NULL);
        atomic_fetch_and(&so_claimed, ~b);
        atomic_fetch_add(&so_taken_n, 1);
        so_event(sig, why, -1);
        atomic_store(&so_changed, 1);
    } else if (install) {
        r = sigwrap_sigaction(sig, install, NULL);
    }
    so_unlock();
    return r;
}

int sigown_poll(void)
{
    int sig = atomic_load(&so_sig);
    if (sig) { /* changed behind our back (a raw rt_sigaction): give it up at once */
        struct sigaction cur;
        if (REAL(sigaction)(sig, NULL, &cur) == 0 &&
            (!(cur.sa_flags & SA_SIGINFO) || cur.sa_sigaction != so_handler)) {
            atomic_fetch_or(&so_touched, so_bit(sig));
            so_step_aside(sig, SO_RAW, &cur);
        }
    }
    if (!atomic_exchange(&so_changed, 0)) return 0;
    so_lock();
    int to = so_spare(0);
    so_unlock();
    unsigned n = atomic_load(&so_nev);
    for (unsigned i = 0; i < n && i < SO_EVENTS; i++) {
        int unknown = -1;
        atomic_compare_exchange_strong(&so_ev[i].to, &unknown, to);
    }
    atomic_store(&so_sig, to);
    return 1;
}

void sigown_discard(void)
{
    so_lock();
    int sig = atomic_load(&so_sig);
    if (sig && (atomic_load(&so_claimed) & so_bit(sig))) {
        struct sigaction ign, ours;
        memset(&ign, 0, sizeof ign);
        ign.sa_handler = SIG_IGN;
        sigemptyset(&ign.sa_mask);
        if (REAL(sigaction)(sig, &ign, &ours) == 0) REAL(sigaction)(sig, &ours, NULL);
    }
    so_unlock();
}

/* ============================ sending and receiving ============================ */

int sigown_send(int pid, int tid)
{
    atomic_fetch_add(&so_sending, 1);
    int sig = atomic_load(&so_sig), r = -1;
    if (sig) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        si.si_signo = sig;
        si.si_code = SI_QUEUE;
        si.si_pid = so_pid;
        si.si_uid = (uid_t)so_uid;
        si.si_value.sival_ptr = so_cookie;
        r = (int)syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, &si);
    }
    atomic_fetch_sub(&so_sending, 1);
    return r == 0 ? 0 : -1;
}

int sigown_timer_arm(clockid_t clock, int tid, uint64_t interval_ns, timer_t *id, int *sig)
{
    atomic_fetch_add(&so_sending, 1);
    int s = atomic_load(&so_sig), r = -ESRCH;
    if (s) {
        struct sigevent ev;
        memset(&ev, 0, sizeof ev);
        ev.sigev_notify = SIGEV_THREAD_ID;
        ev.sigev_signo = s;
        ev.sigev_value.sival_ptr = so_cookie;
        ev._sigev_un._tid = tid;
        struct itimerspec its = {{(time_t)(interval_ns / 1000000000u), (long)(interval_ns % 1000000000u)},
                                 {(time_t)(interval_ns / 1000000000u), (long)(interval_ns % 1000000000u)}};
        r = 0;
        if (timer_create(clock, &ev, id) != 0) {
            r = -errno;
        } else if (timer_settime(*id, 0, &its, NULL) != 0) {
            r = -errno;
            timer_delete(*id);
        }
        *sig = s;
    }
    atomic_fetch_sub(&so_sending, 1);
    return r;
}

int sigown_is_ours(const siginfo_t *si)
{
    if (si->si_code == SI_TIMER) return si->si_value.sival_ptr == so_cookie;
    return si->si_code == SI_QUEUE && si->si_pid == so_pid && si->si_value.sival_ptr == so_cookie;
}

void sigown_foreign(int sig, siginfo_t *si, void *uc)
{
    (void)si;
    (void)uc;
    if (sig < 1 || sig > SO_MAXSIG) return;
    struct sigaction v = so_view[sig];
    if (!(v.sa_flags & SA_SIGINFO) && v.sa_handler == SIG_IGN) return;
    /* The program's SIG_DFL: the default action, as without the runtime (every signal
     * the engine may use ends the process by default). */
    struct sigaction dfl, ours;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    REAL(sigaction)(sig, &dfl, &ours);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    syscall(SYS_tgkill, so_pid, (int)syscall(SYS_gettid), sig);
    syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &one, NULL, sizeof(uint64_t));
    REAL(sigaction)(sig, &ours, NULL); /* not reached */
}

/* ============================ the program's side ============================ */

int sigown_sigaction(int sig, const struct sigaction *act, struct sigaction *old, int *ret)
{
    uint64_t b = so_bit(sig);
    if (!b) return 0;
    if (act && so_is_handler(act)) atomic_fetch_or(&so_touched, b);
    if (!(atomic_load(&so_claimed) & b)) return 0;
    struct sigaction view = so_view[sig];
    if (act && so_is_handler(act)) {
        *ret = so_step_aside(sig, SO_HANDLER, act);
    } else {
        if (act) so_view[sig] = *act; /* SIG_DFL or SIG_IGN: the engine keeps it */
        *ret = 0;
    }
    if (*ret == 0 && old) *old = view;
    return 1;
}

/* A timer of the program's will raise `sig`. */
static void sigown_timer(int sig)
{
    uint64_t b = so_bit(sig);
    atomic_fetch_or(&so_touched, b);
    if (atomic_load(&so_claimed) & b) so_step_aside(sig, SO_TIMER, NULL);
}

KESTREL_INTERPOSE int setitimer(__itimer_which_t which, const struct itimerval *nv,
                                struct itimerval *ov)
{
    int sig = which == ITIMER_REAL      ? SIGALRM
              : which == ITIMER_VIRTUAL ? SIGVTALRM
              : which == ITIMER_PROF    ? SIGPROF
                                        : 0;
    if (sig && nv && (nv->it_value.tv_sec || nv->it_value.tv_usec)) sigown_timer(sig);
    return REAL(setitimer)(which, nv, ov);
}

KESTREL_INTERPOSE unsigned alarm(unsigned seconds)
{
    if (seconds) sigown_timer(SIGALRM);
    return REAL(alarm)(seconds);
}

/* The engine's signal while it holds it, else 0. */
static int so_held(void)
{
    int sig = atomic_load(&so_sig);
    return sig && (atomic_load(&so_claimed) & so_bit(sig)) ? sig : 0;
}

int sigown_wait(const sigset_t *set, siginfo_t *info, const struct timespec *ts)
{
    siginfo_t own;
    siginfo_t *si = info ? info : &own;
    uint64_t deadline = ts ? so_now() + (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec
                           : 0;
    for (;;) {
        struct timespec left;
        if (ts) {
            uint64_t now = so_now(), rem = deadline > now ? deadline - now : 0;
            left.tv_sec = (time_t)(rem / 1000000000ull);
            left.tv_nsec = (long)(rem % 1000000000ull);
        }
        int r = REAL(sigtimedwait)(set, si, ts ? &left : NULL);
        if (r <= 0 || !sigown_is_ours(si)) return r;
    }
}

KESTREL_INTERPOSE int sigwait(const sigset_t *set, int *sig)
{
    siginfo_t si;
    int r;
    while ((r = sigown_wait(set, &si, NULL)) < 0 && errno == EINTR) {
    } /* as glibc's: sigwait never fails with EINTR */
    if (r < 0) return errno;
    *sig = r;
    return 0;
}

KESTREL_INTERPOSE int sigpending(sigset_t *set)
{
    int r = REAL(sigpending)(set);
    int sig = so_held();
    if (r == 0 && sig) sigdelset(set, sig);
    return r;
}

KESTREL_INTERPOSE int signalfd(int fd, const sigset_t *mask, int flags)
{
    int sig = so_held();
    sigset_t copy;
    if (sig && sigismember(mask, sig) == 1) {
        if (sigismember(mask, SIGRTMAX - 5) == 1 && sigismember(mask, SIGUSR1) == 1) {
            copy = *mask; /* every signal: the engine's is not meant */
            sigdelset(&copy, sig);
            mask = &copy;
        } else {
            atomic_fetch_or(&so_touched, so_bit(sig));
            so_step_aside(sig, SO_SIGNALFD, NULL);
        }
    }
    return REAL(signalfd)(fd, mask, flags);
}

/* ============================ what the profile says ============================ */

size_t sigown_notes(const char **out, size_t max)
{
    static const char *const how[] = {
        [SO_AT_START] = "was the program's at the start (not at SIG_DFL)",
        [SO_HANDLER] = "was taken by the program (its own handler)",
        [SO_TIMER] = "was taken by the program (a timer of its own raises it)",
        [SO_RAW] = "was taken by the program (its handler, set without sigaction())",
        [SO_SIGNALFD] = "was taken by the program (a signalfd for it)",
    };
    unsigned n = atomic_load(&so_nev);
    size_t k = 0;
    for (unsigned i = 0; i < n && i < SO_EVENTS && k < max; i++) {
        const struct so_event *e = &so_ev[i];
        int to = atomic_load(&e->to);
        char at[48] = "";
        if (e->why != SO_AT_START)
            snprintf(at, sizeof at, " at +%.3f s",
                     e->t_ns > so_start_ns ? (double)(e->t_ns - so_start_ns) / 1e9 : 0.0);
        if (to > 0)
            snprintf(so_notes_buf[k], SO_NOTE,
                     "signal %d, the signal engine's, %s%s: sampling went on with signal %d",
                     e->sig, how[e->why], at, to);
        else if (to < 0)
            snprintf(so_notes_buf[k], SO_NOTE,
                     "signal %d, the signal engine's, %s%s: the profile ended before "
                     "sampling moved to another signal",
                     e->sig, how[e->why], at);
        else
            snprintf(so_notes_buf[k], SO_NOTE,
                     "signal %d, the signal engine's, %s%s: no spare signal was left, "
                     "on-CPU sampling stopped there",
                     e->sig, how[e->why], at);
        out[k] = so_notes_buf[k];
        k++;
    }
    return k;
}

uint64_t sigown_taken(void)
{
    return atomic_load(&so_taken_n);
}
