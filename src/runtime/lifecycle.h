/* Process life: the moments at which the profilers (CPU and heap) must write their
 * files, shared so that each moment is intercepted once.
 *
 *  - normal exit (exit(), return from main);
 *  - before exec (every exec function, interposed), so the new image does not
 *    discard the profile; an exec that cannot succeed (no such executable file) is
 *    foreseen and flushes nothing, and one that fails anyway lets the clients resume;
 *  - before SIGINT, SIGTERM, SIGHUP or SIGABRT ends the process by its default action;
 *    the process then ends exactly as it would have (same signal, same status). A
 *    signal the program handles itself is left alone, including when it installs
 *    its handler after start (sigaction/signal are watched);
 *  - fork: the child forgets the parent's sessions and starts over.
 *
 * A profiler registers one client. lifecycle_register() runs on a normal thread, never
 * inside malloc (it starts a thread). An exec from a vfork child flushes nothing: the
 * child shares the parent's memory and the parent's profile goes on.
 *
 * Signal handlers: lifecycle's own handler for the fatal signals (it wakes the
 * flushing thread and waits, bounded, for it, or runs the flushes itself in a
 * single-threaded process). Inside malloc: lifecycle_hold, lifecycle_release. */
#ifndef KESTREL_LIFECYCLE_H
#define KESTREL_LIFECYCLE_H

enum lifecycle_event {
    LIFECYCLE_EXIT,   /* normal exit */
    LIFECYCLE_EXEC,   /* before an exec function replaces the image */
    LIFECYCLE_SIGNAL, /* before a default-action fatal signal ends the process */
};

struct lifecycle_client {
    const char *name;
    /* Writes this client's file; called at most once per process image. It runs on
     * a thread that may call malloc and take locks that no signal handler holds (the
     * runtime's own thread, or the thread calling exit/exec), never inside a signal
     * handler unless flush_in_handler says it may. For LIFECYCLE_SIGNAL the thread
     * that got the signal may be stopped anywhere, inside malloc included: a client
     * must not wait forever for a lock that thread could hold (try, then give up and
     * count what was lost). */
    void (*flush)(enum lifecycle_event ev);
    /* Runs in the child right after fork, before fork returns there. Only the
     * calling thread exists: reset state, do not wait on locks other threads held. */
    void (*after_fork_child)(void);
    /* Optional: an exec after which flush(LIFECYCLE_EXEC) ran has failed, and this
     * image goes on (called on the thread that called exec). The client resumes; its
     * flush will be called again at the image's end. */
    void (*exec_failed)(void);
    /* Optional: the exec about to happen starts a program the runtime cannot enter
     * (unentered.h): `path` is its file, `why` the reason. Called on the thread that
     * calls exec, before flush(LIFECYCLE_EXEC), so that the client can leave a note
     * in place of the profile the new image will not write. */
    void (*exec_unentered)(const char *path, const char *why);
    /* 1 when flush(LIFECYCLE_SIGNAL) may also run inside the fatal signal's
     * handler, on the signalled thread of a single-threaded process (see
     * lifecycle_threads_coming): it then calls nothing that allocates with malloc,
     * uses no stdio stream and waits for no lock but the runtime's own, taken under
     * lifecycle_hold. A client without it makes the runtime start its flushing
     * thread when it registers. */
    int flush_in_handler;
};

/* Registers a client (at most 4). Returns 0 or -errno. The first registration arms
 * the fatal signals and installs the fork handler. */
int lifecycle_register(const struct lifecycle_client *client);

/* Where a fatal signal's flush runs. A process with more than one thread gets one
 * small thread of the runtime's own (all signals blocked) that runs the flushes for
 * LIFECYCLE_SIGNAL while the signalled thread waits. A single-threaded process does
 * not: a second thread would make glibc's malloc take its arena locks on every call
 * from then on (measured: +3.6% instructions on an allocation-only loop), so there the
 * signalled thread runs the flushes itself, in the handler. That is safe because the
 * flushes call no malloc and take only the runtime's locks, which no thread holds
 * inside a handler: a thread that gets the signal while it holds one (between
 * lifecycle_hold and lifecycle_release) defers it to its release.
 *
 * The flushing thread is started at registration when the process already has
 * threads, and otherwise by lifecycle_threads_coming(), which everything that creates
 * a thread calls first (the interposed pthread_create, the CPU engines). A thread that
 * appears behind the runtime's back (glibc's own helpers) leaves the in-handler flush
 * in charge, with the same rules. Not in a signal handler; not inside malloc. */
void lifecycle_threads_coming(void);

/* A thread of the runtime holds one of its locks: a fatal signal that arrives on this
 * thread meanwhile is handled at the outermost release (flush, then the default action
 * as usual), never while the lock is held. Nestable; may run inside malloc; a few
 * instructions, so only the slow paths use it. */
extern __thread int lifecycle_held;
extern int lifecycle_deferred; /* the signal waiting for a release, 0 none */
void lifecycle_run_deferred(void);
static inline void lifecycle_hold(void)
{
    lifecycle_held++;
    __atomic_signal_fence(__ATOMIC_SEQ_CST); /* counted before the lock is taken */
}
static inline void lifecycle_release(void)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST); /* the lock dropped before it is uncounted */
    if (--lifecycle_held == 0 && __atomic_load_n(&lifecycle_deferred, __ATOMIC_RELAXED))
        lifecycle_run_deferred();
}
/* In a fork child, for n locks held across fork that the child makes anew instead of
 * releasing: their holds end without a release (a signal deferred in the parent is
 * the parent's). */
static inline void lifecycle_forget_holds(int n)
{
    lifecycle_held -= n;
}

/* How many exec()s of profiled images led to this process image (0 for the first).
 * Exec passes it on in the environment (KESTREL_IMAGE_GEN) so that a profiler can
 * name the file of each image of one pid apart. */
unsigned lifecycle_image_generation(void);

/* Two processes never write one file: a profile path without %p belongs to the process
 * that started profiling its process tree (the owner), and every other process of
 * that tree — a fork child, what a fork child execs, anything spawned — writes
 * <path>.<pid> instead. The owner is named in the environment (KESTREL_PROFILE_OWNER,
 * its pid), which every descendant inherits however it is started; an exec of the owner
 * keeps its pid and stays the owner. lifecycle_claim_owner() is called at start by a
 * profiler whose path has no %p (not in a handler, not inside malloc): it reads the
 * variable, and sets it when absent. lifecycle_owner(): 1 when this process is the
 * owner. */
void lifecycle_claim_owner(void);
int lifecycle_owner(void);

/* The pid this process image runs as (getpid(), refreshed in a fork child). */
int lifecycle_pid(void);
#endif
