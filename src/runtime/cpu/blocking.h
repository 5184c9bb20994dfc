/* blocking.h — what the blocking-call wrappers (blocking.c) tell the signal engine. */
#ifndef KESTREL_BLOCKING_H
#define KESTREL_BLOCKING_H

/* Nonzero when the calling thread is inside a wrapped blocking call (its sampling
 * signal blocked) or leaving one: a sampling signal handled now was held back while
 * the thread slept, and the stack it would record is where the thread woke up, not
 * where it spent the CPU time the sample stands for. Async-signal-safe. */
int blocking_deferred(void);
#endif
