/* Process life: the moments at which the profilers (CPU and heap) must write their
 * files, shared so that each moment is intercepted once.
 *
 *  - normal exit (exit(), return from main);
 *  - before exec (every exec function, interposed), so the new image does not
 *    discard the profile;
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
 * Signal handlers: lifecycle's own handler for the fatal signals (it only wakes the
 * flushing thread and waits, bounded, for it). Inside malloc: nothing. */
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
     * handler. For LIFECYCLE_SIGNAL the thread that got the signal may be stopped
     * anywhere, inside malloc included: a client must not wait forever for a lock
     * that thread could hold (try, then give up and count what was lost). */
    void (*flush)(enum lifecycle_event ev);
    /* Runs in the child right after fork, before fork returns there. Only the
     * calling thread exists: reset state, do not wait on locks other threads held. */
    void (*after_fork_child)(void);
};

/* Registers a client (at most 4). Returns 0 or -errno. The first registration arms
 * the fatal signals, installs the fork handler and starts one small thread of the
 * runtime's own (all signals blocked) that runs the flushes for LIFECYCLE_SIGNAL. */
int lifecycle_register(const struct lifecycle_client *client);

/* How many exec()s of profiled images led to this process image (0 for the first).
 * Exec passes it on in the environment (KESTREL_IMAGE_GEN) so that a profiler can
 * name the file of each image of one pid apart. */
unsigned lifecycle_image_generation(void);

/* The pid this process image runs as (getpid(), refreshed in a fork child). */
int lifecycle_pid(void);
#endif
