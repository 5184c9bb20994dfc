/* rtthread — the runtime's own threads (the CPU engines' sampler or drain thread, the
 * exit watcher). Not in a signal handler; not inside malloc. */
#ifndef KESTREL_RTTHREAD_H
#define KESTREL_RTTHREAD_H
#include <pthread.h>
#include <stddef.h>

/* Starts fn(arg) on a thread of the runtime's own: made through libc's real
 * pthread_create (so never registered or sampled), with every signal blocked, named
 * `name`, with a stack of `stack_size` bytes, detached when RT_DETACHED is in `flags`.
 * The thread runs inside the heap profiler's ignore state for its whole life: nothing
 * it allocates is the program's. 0, or a positive error number from pthread_create.
 *
 * RT_OWN_FDS: the thread starts with a descriptor table of its own, empty
 * (close_range(0, ~0U, CLOSE_RANGE_UNSHARE), Linux 5.9), for a thread that keeps no
 * descriptor across its work (it opens what it reads or writes, and closes it). A
 * process whose descriptor table is shared by two threads pays on every system call
 * that takes a descriptor (the kernel then counts references to the file): a
 * single-threaded program reading /dev/zero into /dev/null in 4 KiB blocks ran 25%
 * slower beside one idle thread of the runtime's, and as fast as unprofiled once that
 * thread had a table of its own. The empty table holds none of the program's files,
 * so a pipe the program closes still ends. Where the kernel refuses, the thread shares
 * the program's table, as before. */
#define RT_DETACHED 1
#define RT_OWN_FDS 2
int rt_thread_spawn(pthread_t *out, const char *name, size_t stack_size, int flags,
                    void *(*fn)(void *), void *arg);

/* Nonzero on a runtime thread that has a descriptor table of its own (RT_OWN_FDS): the
 * program's descriptors are not there, and the runtime's kept ones (rtfd) neither. */
extern __thread int rt_thread_own_fds;

/* A copy of the program's descriptor `fd` in this thread's own table (pidfd_getfd on
 * the process), for a thread with RT_OWN_FDS; -1 where the kernel refuses. */
int rt_thread_program_fd(int fd);
#endif
