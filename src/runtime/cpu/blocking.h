/* blocking.h — what the blocking-call wrappers (blocking.c) and the signal engine's
 * handler tell each other. */
#ifndef KESTREL_BLOCKING_H
#define KESTREL_BLOCKING_H

/* Called by the signal engine's handler for each of its signals: counts the signal for
 * this thread (a wrapped call it interrupted resumes), and returns nonzero when the
 * thread is inside a wrapped call: asleep in it, or leaving it (where a thread
 * preempted at the call's end resumes; the CPU time the sample stands for ran before
 * the call). Async-signal-safe. */
int blocking_interrupted(void);
#endif
