/* rtthread — the runtime's own threads (the CPU engines' sampler or drain thread, the
 * exit watcher). Not in a signal handler; not inside malloc. */
#ifndef KESTREL_RTTHREAD_H
#define KESTREL_RTTHREAD_H
#include <pthread.h>
#include <stddef.h>

/* Starts fn(arg) on a thread of the runtime's own: made through libc's real
 * pthread_create (so never registered or sampled), with every signal blocked, named
 * `name`, with a stack of `stack_size` bytes, detached when `detached`. The thread
 * runs inside the heap profiler's ignore state for its whole life: nothing it
 * allocates is the program's. 0, or a positive error number from pthread_create. */
int rt_thread_spawn(pthread_t *out, const char *name, size_t stack_size, int detached,
                    void *(*fn)(void *), void *arg);
#endif
