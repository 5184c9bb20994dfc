/* The heap profiler's reentrancy guard, for every part of the runtime: between
 * heap_ignore_enter() and heap_ignore_leave() the calling thread's allocations go
 * straight to the next allocator, never counted or sampled. The runtime brackets the
 * creation of its own threads with it (glibc allocates inside pthread_create), and
 * each of its threads enters it once for its whole life. Nestable; a no-op cost when
 * no heap profile runs. May run inside malloc; not in a signal handler. */
#ifndef KESTREL_HEAP_GUARD_H
#define KESTREL_HEAP_GUARD_H
void heap_ignore_enter(void);
void heap_ignore_leave(void);
#endif
