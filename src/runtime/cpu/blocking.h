/* blocking.h — what the blocking-call wrappers (blocking.c) and the signal engine's
 * handler tell each other. */
#ifndef KESTREL_BLOCKING_H
#define KESTREL_BLOCKING_H

/* Where the engine's signal found the thread. */
enum blocking_where {
    BLOCKING_OUTSIDE = 0, /* in no wrapped call */
    BLOCKING_IN_CALL,     /* in a wrapped call, its system call not cut short: the
                             signal came as the call ended, or in the wrapper's code */
    BLOCKING_ASLEEP,      /* asleep in a wrapped call: it interrupted the call's system
                             call (a waiting sample, with the call's stack) */
};

/* Called by the signal engine's handler for each of its signals, with the handler's
 * ucontext: counts the signal for this thread (a wrapped call it interrupted resumes)
 * and says where it found the thread. Async-signal-safe. */
enum blocking_where blocking_interrupted(const void *uc);
#endif
