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
 * A profiler registers one client. lifecycle_register() runs on a normal thread. */
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

/* Registers a client (at most 4). Returns 0 or -errno. */
int lifecycle_register(const struct lifecycle_client *client);
#endif
