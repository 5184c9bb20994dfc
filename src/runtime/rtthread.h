/* rtthread — the runtime's own threads (the CPU engines' sampler or drain thread, the
 * exit watcher). Not in a signal handler; not inside malloc. */
#ifndef KESTREL_RTTHREAD_H
#define KESTREL_RTTHREAD_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Starts fn(arg) on a thread of the runtime's own: made through libc's real
 * pthread_create (so never registered or sampled), with every signal blocked, named
 * `name`, with a stack of `stack_size` bytes, detached when RT_DETACHED is in `flags`.
 * The thread runs inside the heap profiler's ignore state for its whole life: nothing
 * it allocates is the program's. 0, or a positive error number from pthread_create.
 *
 * RT_OWN_FDS: the thread starts with a descriptor table of its own, empty
 * (close_range(0, ~0U, CLOSE_RANGE_UNSHARE), Linux 5.9): what it opens lands there,
 * and the runtime's descriptors of the program's table it uses are imported (rtfd.h).
 * A process whose descriptor table is shared by two threads pays on every system call
 * that takes a descriptor (the kernel then counts references to the file): a
 * single-threaded program reading /dev/zero into /dev/null in 4 KiB blocks ran 25%
 * slower beside one idle thread of the runtime's, and 3% slower once that thread had a
 * table of its own. The empty table holds none of the program's files, so a pipe the
 * program closes still ends, and none of the thread's opens can land on a number the
 * program is about to take. Where the kernel refuses, the thread shares the program's
 * table, as before. */
#define RT_DETACHED 1
#define RT_OWN_FDS 2
int rt_thread_spawn(pthread_t *out, const char *name, size_t stack_size, int flags,
                    void *(*fn)(void *), void *arg);

/* The descriptor table the calling thread uses: 0 for the program's, else the thread
 * id of the runtime thread that has one of its own (RT_OWN_FDS). Neither the
 * program's descriptors nor the runtime's kept in the program's table are there
 * (rtfd.h imports the latter where such a thread uses them). Found by pthread_self()
 * among the runtime's threads, not kept in a thread-local: a program's thread carries
 * the runtime's static TLS on its stack, and a program of 16 KiB threads ran out of
 * stack for 16 bytes more. Signal handlers: yes. */
pid_t rt_thread_table(void);

/* On such a thread, RT_IMPORTS bits of its own, one per descriptor number, that rtfd.c
 * sets where the number holds a copy of one of the program's table; NULL elsewhere. */
#define RT_IMPORTS 1024
uint64_t *rt_thread_imports(void);

/* The threads of the program's own (the process's less the runtime's alive): 1 in a
 * program that made none. 0 where /proc cannot tell. */
int rt_thread_program_threads(void);

/* A copy of the program's descriptor `fd` in this thread's own table (pidfd_getfd on
 * the process: the table of its first thread), for a thread with RT_OWN_FDS; -1
 * where the kernel refuses or that thread has ended. */
int rt_thread_program_fd(int fd);
#endif
