/* lifecycle.c — process life for the profilers (lifecycle.h): normal exit, exec,
 * default-action fatal signals, fork.
 *
 * The interposed sigaction()/signal() also hand every handler of the program to
 * sigwrap (sigwrap.h) while a profiler runs.
 *
 * Signal handlers: lc_on_signal() and what it calls (futex and clock syscalls,
 * sigaction/sigprocmask/tgkill), and in a single-threaded process the flushes of the
 * clients that allow it (flush_in_handler). The interposed sigaction()/signal() may be
 * called by a program from its own handlers and stay async-signal-safe once resolved.
 * Inside malloc: lifecycle_hold/lifecycle_release and lifecycle_run_deferred.
 *
 * A fatal signal is handled in two halves when the process has threads: the handler
 * (on whatever thread got the signal) only publishes the signal number and waits, at
 * most LC_SIGNAL_WAIT_NS, for the flushing thread; that thread runs the clients'
 * flushes, where taking locks and writing files is allowed. A single-threaded process
 * has no such thread (lifecycle.h says why): its handler runs the flushes itself.
 * Either way a thread that holds a lock of the runtime defers the signal to its
 * release. Then the default action is restored and the signal raised again, so the
 * process ends exactly as it would have. */
#include "runtime/lifecycle.h"
#include "runtime/rtthread.h"
#include "runtime/interpose.h"
#include "runtime/rtclock.h"
#include "runtime/rtmem.h"
#include "runtime/cpu/sigown.h"
#include "runtime/sigwrap.h"
#include "runtime/unentered.h"
#include "runtime/heap/heap_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define LC_MAX_CLIENTS 4
#define LC_SIGNAL_WAIT_NS (5ull * 1000000000ull)
#define LC_GEN_VAR "KESTREL_IMAGE_GEN"

/* The signals whose default action ends the process and that a program meets in
 * ordinary use: asked to stop (INT, TERM, HUP, QUIT), a pipe's reader gone (PIPE), its
 * CPU limit reached (XCPU), and crashes (ABRT, SEGV, BUS, FPE, ILL): a profile of a
 * program that crashed shows what it did until then. */
static const int lc_fatal[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT, SIGPIPE, SIGXCPU,
                               SIGABRT, SIGSEGV, SIGBUS,  SIGFPE,  SIGILL};

/* A fault: the kernel raised the signal for the instruction the thread was running,
 * which runs again if the handler returns. Such a signal cannot wait for a release. */
static int lc_fault(int sig, const siginfo_t *si)
{
    return si && si->si_code > 0 &&
           (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL);
}

/* Rules: lc_clients only grows (under lc_mu); lc_flushed goes 0->1 once per image,
 * and lc_done 0->1 when that flush finished; lc_req is the futex word of the first
 * signal episode. lc_watcher_up goes 0->1 (under lc_mu) once the flushing thread
 * exists; 0 again in a fork child. A watched signal is `armed` while our handler is
 * installed in the kernel; `prog` is then what the program believes is installed
 * (SIG_DFL until it says otherwise). lifecycle_deferred is a signal that arrived
 * while its thread held a lock of the runtime (lifecycle_held > 0). */
static const struct lifecycle_client *lc_clients[LC_MAX_CLIENTS];
static _Atomic int lc_nclients;   /* published after the entry is stored */
static _Atomic int lc_flushed;    /* 1 once this image's files are written */
static _Atomic int lc_req;        /* futex: signal number to flush for, 0 idle */
static _Atomic int lc_done;       /* futex: 1 when this image's flush finished */
static _Atomic int lc_watcher_up; /* the flushing thread was started */
int lifecycle_deferred;           /* signal number waiting for a release, 0 none */
__thread int lifecycle_held;      /* locks of the runtime this thread holds */
static _Atomic int lc_pid_cached; /* getpid() of this image / fork child */
static pthread_mutex_t lc_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    _Atomic int armed;     /* our handler is installed for it */
    struct sigaction prog; /* the disposition the program sees */
} lc_sig[NSIG];

static void lc_on_signal(int sig, siginfo_t *si, void *uc);

/* =========================== small helpers =========================== */

static long lc_futex(_Atomic int *w, int op, int val, const struct timespec *ts)
{
    return syscall(SYS_futex, (int *)w, op | FUTEX_PRIVATE_FLAG, val, ts, NULL, 0);
}

static int lc_sys_getpid(void)
{
    return (int)syscall(SYS_getpid);
}

static int lc_watched(int sig)
{
    for (size_t i = 0; i < sizeof(lc_fatal) / sizeof(lc_fatal[0]); i++)
        if (lc_fatal[i] == sig) return 1;
    return 0;
}

int lifecycle_pid(void)
{
    int p = atomic_load(&lc_pid_cached);
    return p ? p : lc_sys_getpid();
}

unsigned lifecycle_image_generation(void)
{
    static int cached = -1;
    if (cached < 0) {
        const char *v = getenv(LC_GEN_VAR);
        cached = v ? (int)strtoul(v, NULL, 10) : 0;
    }
    return (unsigned)cached;
}

#define LC_OWNER_VAR "KESTREL_PROFILE_OWNER"
static int lc_owner_pid; /* the owner's pid, as read at start; 0 not read, -1 none */

void lifecycle_claim_owner(void)
{
    if (lc_owner_pid) return;
    const char *v = getenv(LC_OWNER_VAR);
    lc_owner_pid = v ? (int)strtol(v, NULL, 10) : 0;
    if (lc_owner_pid > 0) return;
    char pid[24];
    snprintf(pid, sizeof pid, "%d", lc_sys_getpid());
    lc_owner_pid = setenv(LC_OWNER_VAR, pid, 1) == 0 ? lc_sys_getpid() : -1;
}

int lifecycle_owner(void)
{
    return lc_owner_pid <= 0 || lc_owner_pid == lifecycle_pid();
}

/* Runs every client's flush once per process image (inside a handler, those that
 * allow it), then wakes whoever waits for it. A fatal signal on this thread meanwhile
 * waits for the end (lifecycle_hold), so the file is whole before the process ends. */
static void lc_flush_all(enum lifecycle_event ev, int in_handler)
{
    if (atomic_exchange(&lc_flushed, 1)) return;
    lifecycle_hold();
    int n = atomic_load(&lc_nclients);
    for (int i = 0; i < n; i++)
        if (lc_clients[i]->flush && (!in_handler || lc_clients[i]->flush_in_handler))
            lc_clients[i]->flush(ev);
    atomic_store(&lc_done, 1);
    lc_futex(&lc_done, FUTEX_WAKE, 1 << 30, NULL);
    lifecycle_release();
}

/* ======================== fatal signals ======================== */

static void lc_install_ours(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = lc_on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(lc_fatal) / sizeof(lc_fatal[0]); i++)
        sigaddset(&sa.sa_mask, lc_fatal[i]);
    if (REAL(sigaction)(sig, &sa, NULL) == 0) atomic_store(&lc_sig[sig].armed, 1);
}

/* Arms each watched signal whose disposition is the default one. */
static void lc_arm_signals(void)
{
    for (size_t i = 0; i < sizeof(lc_fatal) / sizeof(lc_fatal[0]); i++) {
        int sig = lc_fatal[i];
        struct sigaction cur;
        if (atomic_load(&lc_sig[sig].armed) || REAL(sigaction)(sig, NULL, &cur) != 0) continue;
        if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL) {
            lc_sig[sig].prog = cur;
            lc_install_ours(sig);
        }
    }
}

/* The flush for a fatal signal, by the flushing thread or (none yet) right here; then
 * wait for it, bounded: a stuck flush must not keep a dying process alive. */
static void lc_flush_for_signal(int sig)
{
    int idle = 0;
    if (atomic_compare_exchange_strong(&lc_req, &idle, sig)) {
        if (atomic_load(&lc_watcher_up))
            lc_futex(&lc_req, FUTEX_WAKE, 1, NULL);
        else
            lc_flush_all(LIFECYCLE_SIGNAL, 1);
    }
    uint64_t start = rt_clock_ns(CLOCK_MONOTONIC);
    while (!atomic_load(&lc_done)) {
        struct timespec slice = {0, 50 * 1000000};
        lc_futex(&lc_done, FUTEX_WAIT, 0, &slice);
        if (rt_clock_ns(CLOCK_MONOTONIC) - start > LC_SIGNAL_WAIT_NS) break;
    }
}

/* End the way the default action would have ended us. */
static void lc_die(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    atomic_store(&lc_sig[sig].armed, 0);
    REAL(sigaction)(sig, &dfl, NULL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    syscall(SYS_tgkill, lifecycle_pid(), (int)syscall(SYS_gettid), sig);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
}

static void lc_on_signal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    int saved_errno = errno;
    if (lifecycle_held && lc_fault(sig, si)) {
        /* A fault inside the runtime's own locked code (its flush included): nothing
         * can be written safely, and returning would fault again. */
        lc_die(sig);
        return;
    }
    if (lifecycle_held) { /* this thread holds a lock the flush needs: at its release */
        int none = 0;
        __atomic_compare_exchange_n(&lifecycle_deferred, &none, sig, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_RELAXED);
        errno = saved_errno;
        return;
    }
    lc_flush_for_signal(sig);
    lc_die(sig);
    errno = saved_errno; /* only reached if the signal did not end the process */
}

/* A fatal signal deferred by lc_on_signal, at the release of the last lock: handled as
 * the handler would have, with the fatal signals blocked as they were there. */
void lifecycle_run_deferred(void)
{
    int saved_errno = errno;
    sigset_t fatal, old;
    sigemptyset(&fatal);
    for (size_t i = 0; i < sizeof(lc_fatal) / sizeof(lc_fatal[0]); i++)
        sigaddset(&fatal, lc_fatal[i]);
    pthread_sigmask(SIG_BLOCK, &fatal, &old);
    int sig = __atomic_exchange_n(&lifecycle_deferred, 0, __ATOMIC_SEQ_CST);
    if (sig) {
        lc_flush_for_signal(sig);
        lc_die(sig);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = saved_errno;
}

/* The runtime's flushing thread: sleeps on lc_req until a fatal signal arrives. */
static void *lc_watcher(void *arg)
{
    (void)arg;
    while (atomic_load(&lc_req) == 0)
        lc_futex(&lc_req, FUTEX_WAIT, 0, NULL);
    lc_flush_all(LIFECYCLE_SIGNAL, 0);
    return NULL;
}

/* Under lc_mu. */
static void lc_start_watcher(void)
{
    if (atomic_load(&lc_watcher_up)) return;
    pthread_t t;
    /* A table of its own: the clients' flushes open what they write, and the runtime's
     * descriptors they use are imported from the program's table (rtfd.h). */
    if (rt_thread_spawn(&t, "kestrel-exit", 64 * 1024, RT_DETACHED | RT_OWN_FDS, lc_watcher,
                        NULL) == 0)
        atomic_store(&lc_watcher_up, 1); /* the thread blocks every signal */
}

/* ============================== fork ============================== */

static void lc_after_fork_child(void)
{
    if (atomic_load(&lc_nclients) == 0) return;
    atomic_store(&lc_pid_cached, lc_sys_getpid());
    atomic_store(&lc_flushed, 0);
    atomic_store(&lc_req, 0);
    atomic_store(&lc_done, 0);
    atomic_store(&lc_watcher_up, 0); /* the parent's did not come along */
    __atomic_store_n(&lifecycle_deferred, 0, __ATOMIC_RELAXED); /* the parent's */
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    lc_mu = fresh;
    int n = atomic_load(&lc_nclients), in_handler = 1;
    for (int i = 0; i < n; i++) {
        if (lc_clients[i]->after_fork_child) lc_clients[i]->after_fork_child();
        in_handler &= lc_clients[i]->flush_in_handler;
    }
    if (!in_handler) lc_start_watcher();
}

void lifecycle_threads_coming(void)
{
    if (!atomic_load(&lc_nclients) || atomic_load(&lc_watcher_up)) return;
    pthread_mutex_lock(&lc_mu);
    lc_start_watcher();
    pthread_mutex_unlock(&lc_mu);
}

/* ============================ registration ============================ */

int lifecycle_register(const struct lifecycle_client *client)
{
    if (!client) return -EINVAL;
    pthread_mutex_lock(&lc_mu);
    int n = atomic_load(&lc_nclients);
    if (n >= LC_MAX_CLIENTS) {
        pthread_mutex_unlock(&lc_mu);
        return -ENOSPC;
    }
    lc_clients[n] = client;
    atomic_store(&lc_nclients, n + 1);
    if (n == 0) {
        atomic_store(&lc_pid_cached, lc_sys_getpid());
        (void)REAL(sigaction); /* resolved here, never first inside a handler */
        pthread_atfork(NULL, NULL, lc_after_fork_child);
        lc_arm_signals();
    }
    if (!client->flush_in_handler || !__libc_single_threaded) lc_start_watcher();
    pthread_mutex_unlock(&lc_mu);
    return 0;
}

/* Normal exit: exit() and return from main run the destructors. */
__attribute__((destructor)) static void lc_at_exit(void)
{
    if (atomic_load(&lc_nclients) && lifecycle_pid() == lc_sys_getpid())
        lc_flush_all(LIFECYCLE_EXIT, 0);
}

/* ================= sigaction/signal: the program's own handlers ================= */

KESTREL_INTERPOSE int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    /* One owner of the program's dispositions: the signal engine's signal goes to
     * sigown (which steps aside for a program that takes it, through sigwrap), every
     * other one to sigwrap and the fatal-signal watch below. */
    int taken;
    if (sigown_sigaction(sig, act, old, &taken)) return taken;
    if (atomic_load(&lc_nclients) == 0) return REAL(sigaction)(sig, act, old);
    if (sig <= 0 || sig >= NSIG || !lc_watched(sig)) return sigwrap_sigaction(sig, act, old);
    if (!atomic_load(&lc_sig[sig].armed)) {
        int r = sigwrap_sigaction(sig, act, old);
        if (r == 0 && act && !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL) {
            lc_sig[sig].prog = *act; /* back to the default: watch it again */
            lc_install_ours(sig);
        }
        return r;
    }
    if (old) *old = lc_sig[sig].prog;
    if (act) {
        if ((act->sa_flags & SA_SIGINFO) || act->sa_handler != SIG_DFL) {
            int r = sigwrap_sigaction(sig, act, NULL); /* the program's handler or SIG_IGN */
            if (r != 0) return r;
            atomic_store(&lc_sig[sig].armed, 0);
        }
        lc_sig[sig].prog = *act;
    }
    return 0;
}

KESTREL_INTERPOSE sighandler_t signal(int sig, sighandler_t handler)
{
    if (sig <= 0 || sig >= NSIG || (atomic_load(&lc_nclients) == 0 && sig != sigown_current()))
        return REAL(signal)(sig, handler);
    struct sigaction act, old;
    memset(&act, 0, sizeof(act));
    act.sa_handler = handler;
    act.sa_flags = SA_RESTART; /* BSD semantics, as glibc's signal() */
    sigemptyset(&act.sa_mask);
    sigaddset(&act.sa_mask, sig);
    if (sigaction(sig, &act, &old) != 0) return SIG_ERR;
    return old.sa_handler;
}

/* ============ _exit, _Exit, quick_exit, exit_group: no destructors run ============ */

/* The process ends without exit()'s destructors: the files are written first. From a
 * handler of the program (_exit is async-signal-safe, and handlers call it) the
 * interrupted code may hold any lock, so the flush goes to the flushing thread as for
 * a fatal signal, bounded; on a thread that holds a lock of the runtime (a handler
 * the runtime could not see interrupted it) nothing is written. A vfork child (which
 * shares the parent's memory) writes nothing either. */
static void lc_before_quick_end(void)
{
    if (atomic_load(&lc_nclients) == 0 || lifecycle_pid() != lc_sys_getpid()) return;
    if (lifecycle_held) return;
    if (heap_handler_depth() > 0)
        lc_flush_for_signal(-1);
    else
        lc_flush_all(LIFECYCLE_EXIT, 0);
}

KESTREL_INTERPOSE void _exit(int status)
{
    lc_before_quick_end();
    REAL(_exit)(status);
    for (;;)
        ;
}

KESTREL_INTERPOSE void _Exit(int status)
{
    lc_before_quick_end();
    REAL(_Exit)(status);
    for (;;)
        ;
}

KESTREL_INTERPOSE void quick_exit(int status)
{
    lc_before_quick_end();
    REAL(quick_exit)(status);
    for (;;)
        ;
}

/* syscall(SYS_exit_group, status), as programs end themselves without libc's exit.
 * Every other call passes through with its six argument words, as glibc's syscall()
 * reads them. An exit_group made with the syscall instruction itself cannot be seen:
 * the kernel ends every thread at once. */
static long (*lc_real_syscall)(long, ...);

KESTREL_INTERPOSE long syscall(long n, ...)
{
    va_list ap;
    va_start(ap, n);
    long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long);
    long d = va_arg(ap, long), e = va_arg(ap, long), f = va_arg(ap, long);
    va_end(ap);
    if (n == SYS_exit_group) lc_before_quick_end();
    if (!lc_real_syscall) lc_real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
    return lc_real_syscall(n, a, b, c, d, e, f);
}

/* Resolved before anything else runs: syscall() is called inside malloc and in
 * signal handlers, where dlsym must not be. */
__attribute__((constructor(101))) static void lc_resolve_early(void)
{
    lc_real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
    (void)REAL(_exit);
    (void)REAL(_Exit);
    (void)REAL(quick_exit);
}

/* ======================= exec: write before the image goes ======================= */

/* A copy of envp with KESTREL_IMAGE_GEN set to the next generation, in pages of our
 * own (exec discards them; a failed exec frees them). */
struct lc_env {
    char **env;
    size_t bytes;
    int flushed; /* the clients wrote their files for this exec */
    char var[48];
};

static char **lc_env_next(char *const envp[], struct lc_env *e)
{
    size_t n = 0;
    while (envp && envp[n])
        n++;
    e->bytes = (n + 2) * sizeof(char *);
    e->env = rtmem_alloc(e->bytes);
    if (!e->env) return (char **)envp;
    snprintf(e->var, sizeof(e->var), LC_GEN_VAR "=%u", lifecycle_image_generation() + 1);
    size_t o = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(envp[i], LC_GEN_VAR "=", sizeof(LC_GEN_VAR)) != 0) e->env[o++] = envp[i];
    e->env[o++] = e->var;
    e->env[o] = NULL;
    return e->env;
}

/* 1 when an exec of `file` cannot succeed: no executable file at that path (or, with
 * `search`, in any directory of PATH, as execvp looks). Then nothing is flushed and
 * the profile simply goes on. errno is kept. */
static int lc_exec_doomed(int dirfd, const char *file, int search)
{
    if (!file || !*file) return 0; /* let the real call say what is wrong */
    int saved = errno, doomed = 1;
    if (!search || strchr(file, '/')) {
        doomed = faccessat(dirfd, file, X_OK, 0) != 0;
    } else {
        const char *path = getenv("PATH");
        if (!path) path = "/bin:/usr/bin";
        char cand[4096];
        for (const char *p = path; doomed;) {
            const char *end = strchr(p, ':');
            size_t len = end ? (size_t)(end - p) : strlen(p);
            int n = snprintf(cand, sizeof cand, "%.*s%s%s", (int)len, p, len ? "/" : "", file);
            if (n > 0 && (size_t)n < sizeof cand && access(cand, X_OK) == 0) doomed = 0;
            if (!end) break;
            p = end + 1;
        }
    }
    errno = saved;
    return doomed;
}

/* What is exec'd, for the clients' note on a program the runtime cannot enter. */
struct lc_target {
    int dirfd;
    const char *file; /* NULL: not known (fexecve) */
    int search;       /* looked up in PATH */
};

/* Called before every exec: flushes (unless this is a vfork child, which shares
 * our memory, or the exec is doomed) and returns the environment the new image gets.
 * A target the runtime cannot enter is told to the clients first. */
static char **lc_before_exec(char *const envp[], struct lc_env *e, int doomed,
                             const struct lc_target *t)
{
    e->env = NULL;
    e->flushed = 0;
    if (atomic_load(&lc_nclients) == 0 || lifecycle_pid() != lc_sys_getpid() || doomed)
        return (char **)envp;
    char path[4096];
    const char *why = t->file ? unentered_why(t->dirfd, t->file, t->search, path, sizeof path)
                              : NULL;
    int n = atomic_load(&lc_nclients);
    for (int i = 0; why && i < n; i++)
        if (lc_clients[i]->exec_unentered) lc_clients[i]->exec_unentered(path, why);
    lc_flush_all(LIFECYCLE_EXEC, 0);
    e->flushed = 1;
    return lc_env_next(envp, e);
}

/* The exec failed: the image goes on, and so do the profiles. */
static int lc_after_failed_exec(struct lc_env *e)
{
    int saved = errno;
    rtmem_free(e->env, e->bytes);
    if (e->flushed) {
        atomic_store(&lc_done, 0);
        atomic_store(&lc_flushed, 0);
        int n = atomic_load(&lc_nclients);
        for (int i = 0; i < n; i++)
            if (lc_clients[i]->exec_failed) lc_clients[i]->exec_failed();
    }
    errno = saved;
    return -1;
}

extern char **environ;

KESTREL_INTERPOSE int execve(const char *path, char *const argv[], char *const envp[])
{
    struct lc_env e;
    struct lc_target t = {AT_FDCWD, path, 0};
    char **env = lc_before_exec(envp, &e, lc_exec_doomed(AT_FDCWD, path, 0), &t);
    REAL(execve)(path, argv, env);
    return lc_after_failed_exec(&e);
}

KESTREL_INTERPOSE int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

KESTREL_INTERPOSE int execvpe(const char *file, char *const argv[], char *const envp[])
{
    struct lc_env e;
    struct lc_target t = {AT_FDCWD, file, 1};
    char **env = lc_before_exec(envp, &e, lc_exec_doomed(AT_FDCWD, file, 1), &t);
    REAL(execvpe)(file, argv, env);
    return lc_after_failed_exec(&e);
}

KESTREL_INTERPOSE int execvp(const char *file, char *const argv[])
{
    return execvpe(file, argv, environ);
}

KESTREL_INTERPOSE int fexecve(int fd, char *const argv[], char *const envp[])
{
    struct lc_env e;
    struct lc_target t = {AT_FDCWD, NULL, 0};
    char **env = lc_before_exec(envp, &e, 0, &t);
    REAL(fexecve)(fd, argv, env);
    return lc_after_failed_exec(&e);
}

KESTREL_INTERPOSE int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                               int flags)
{
    struct lc_env e;
    struct lc_target t = {dirfd, flags & AT_EMPTY_PATH ? NULL : path, 0};
    char **env =
        lc_before_exec(envp, &e, !(flags & AT_EMPTY_PATH) && lc_exec_doomed(dirfd, path, 0), &t);
    REAL(execveat)(dirfd, path, argv, env, flags);
    return lc_after_failed_exec(&e);
}

/* The list forms: collect the arguments into an argv of our own pages. With `envp`
 * set, the argument after the terminating NULL is the environment (execle). */
static char **lc_collect_args(const char *arg0, va_list ap, char ***envp, size_t *bytes)
{
    va_list cp;
    va_copy(cp, ap);
    size_t n = 1;
    while (va_arg(cp, const char *))
        n++;
    va_end(cp);
    *bytes = (n + 1) * sizeof(char *);
    char **argv = rtmem_alloc(*bytes);
    if (!argv) return NULL;
    argv[0] = (char *)arg0;
    for (size_t i = 1; i <= n; i++)
        argv[i] = va_arg(ap, char *); /* the last one read is the NULL */
    if (envp) *envp = va_arg(ap, char **);
    return argv;
}

/* The list forms end alike: the vector form of the same call (which writes the
 * profiles), then the argv pages given back with the failed exec's errno kept. */
static int lc_exec_list(const char *file, const char *arg, va_list ap, int search, int has_env)
{
    size_t bytes;
    char **envp = environ;
    char **argv = lc_collect_args(arg, ap, has_env ? &envp : NULL, &bytes);
    if (!argv) return errno = ENOMEM, -1;
    if (search)
        execvpe(file, argv, envp);
    else
        execve(file, argv, envp);
    int saved = errno;
    rtmem_free(argv, bytes);
    return errno = saved, -1;
}

KESTREL_INTERPOSE int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int rc = lc_exec_list(path, arg, ap, 0, 0);
    va_end(ap);
    return rc;
}

KESTREL_INTERPOSE int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int rc = lc_exec_list(file, arg, ap, 1, 0);
    va_end(ap);
    return rc;
}

KESTREL_INTERPOSE int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int rc = lc_exec_list(path, arg, ap, 0, 1);
    va_end(ap);
    return rc;
}
