/* blocking.h — what the blocking-call wrappers (blocking.c) and the signal engine's
 * handler tell each other. */
#ifndef KESTREL_BLOCKING_H
#define KESTREL_BLOCKING_H

/* Called by the signal engine's handler for each of its signals, with the handler's
 * ucontext: counts the signal for this thread (a wrapped call it interrupted resumes),
 * and returns nonzero when the signal found the thread asleep in a wrapped call (it
 * interrupted the call's system call: a waiting sample, with the call's stack).
 * Async-signal-safe. */
int blocking_interrupted(const void *uc);
#endif
