/* sigwrap — the program's own signal handlers, run through a trampoline of the
 * runtime so that the heap profiler knows when a thread is inside one: an allocation
 * made there is served from the runtime's region, never from the next allocator, whose
 * lock the interrupted code may hold (glibc takes its arena locks once the runtime's
 * thread exists, where the program alone would have none). The program sees its own
 * handler in every sigaction() answer.
 *
 * Only while a profiler runs (a lifecycle client exists) and only for handlers that are
 * not the runtime's own. Signal handlers: sigwrap_trampoline (and what it calls). */
#ifndef KESTREL_SIGWRAP_H
#define KESTREL_SIGWRAP_H
#include <signal.h>

/* sigaction() as the kernel's, with a handler of the program wrapped and the program's
 * handler reported in *old where the trampoline is installed. */
int sigwrap_sigaction(int sig, const struct sigaction *act, struct sigaction *old);

/* How many handlers of the program's this thread has run through the trampoline (it
 * grows; compare two readings). Async-signal-safe. Inline, an initial-exec TLS read:
 * blocking.c reads it around every wrapped read() and write(). */
extern __thread volatile unsigned sigwrap_handled_n;
static inline unsigned sigwrap_handled(void)
{
    return sigwrap_handled_n;
}
#endif
