/* The runtime's own threads (rtthread.h). The one place outside heap/ that enters the
 * heap profiler's ignore state. Nothing here runs in a signal handler or inside
 * malloc. */
#include "runtime/rtthread.h"

#include <errno.h>
#include <linux/close_range.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/heap/heap_guard.h"
#include "runtime/interpose.h"
#include "runtime/rtmem.h"

struct rt_start {
    void *(*fn)(void *);
    void *arg;
    int own_fds;
};

/* The runtime's threads with a table of their own (a handful at once). */
#define RT_OWN_MAX 8
static struct {
    _Atomic unsigned long self; /* pthread_self(), 0: free */
    pid_t tid;
    uint64_t imports[RT_IMPORTS / 64];
} rt_own[RT_OWN_MAX];
static _Atomic int rt_alive; /* the runtime's threads running (a fork child has none) */
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;

static void rt_after_fork_child(void)
{
    atomic_store(&rt_alive, 0);
    for (int i = 0; i < RT_OWN_MAX; i++) /* none of them came along */
        atomic_store(&rt_own[i].self, 0);
}

/* This thread's entry, or -1. */
static int rt_own_index(void)
{
    unsigned long me = (unsigned long)pthread_self();
    for (int i = 0; i < RT_OWN_MAX; i++)
        if (atomic_load_explicit(&rt_own[i].self, memory_order_acquire) == me) return i;
    return -1;
}

pid_t rt_thread_table(void)
{
    int i = rt_own_index();
    return i < 0 ? 0 : rt_own[i].tid;
}

uint64_t *rt_thread_imports(void)
{
    int i = rt_own_index();
    return i < 0 ? NULL : rt_own[i].imports;
}

/* A table of its own for the calling thread, where an entry is free and the kernel
 * allows it (close_range with CLOSE_RANGE_UNSHARE, Linux 5.9); -1 otherwise. */
static int rt_own_begin(void)
{
    for (int i = 0; i < RT_OWN_MAX; i++) {
        unsigned long free_ = 0;
        if (!atomic_compare_exchange_strong(&rt_own[i].self, &free_, ~0ul)) continue;
        if (syscall(SYS_close_range, 0u, ~0u, CLOSE_RANGE_UNSHARE) != 0) {
            atomic_store(&rt_own[i].self, 0);
            return -1;
        }
        rt_own[i].tid = (pid_t)syscall(SYS_gettid);
        memset(rt_own[i].imports, 0, sizeof rt_own[i].imports);
        atomic_store_explicit(&rt_own[i].self, (unsigned long)pthread_self(), memory_order_release);
        return i;
    }
    return -1;
}

static void rt_init(void)
{
    pthread_atfork(NULL, NULL, rt_after_fork_child);
}

/* The start block is a page of the runtime's own (rtmem), never malloc's: the first
 * free() on a new thread makes glibc give it an arena of its own, 64 MiB of address
 * space (128 MiB reserved to align it), which a program under RLIMIT_AS then lacks. */
static void *rt_thread_main(void *p)
{
    struct rt_start start = *(struct rt_start *)p;
    heap_ignore_enter(); /* for life: what this thread allocates is not the program's */
    rtmem_free(p, sizeof start);
    int own = start.own_fds ? rt_own_begin() : -1;
    void *r = start.fn(start.arg);
    if (own >= 0) atomic_store(&rt_own[own].self, 0);
    atomic_fetch_sub(&rt_alive, 1);
    return r;
}

int rt_thread_spawn(pthread_t *out, const char *name, size_t stack_size, int flags,
                    void *(*fn)(void *), void *arg)
{
    pthread_once(&rt_once, rt_init);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the thread inherits "everything blocked" */
    heap_ignore_enter(); /* glibc allocates inside pthread_create: not the program's */
    int rc = ENOMEM;
    struct rt_start *start = rtmem_alloc(sizeof *start);
    if (start) {
        *start = (struct rt_start){fn, arg, (flags & RT_OWN_FDS) != 0};
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setstacksize(&at, stack_size);
        if (flags & RT_DETACHED) pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        /* A new thread starts with its creator's name: named so for the moment of its
         * creation, it has its own name from its first instruction. Naming it
         * afterwards (pthread_setname_np) goes through /proc, whose entries every exit
         * of the process must then walk: 60-100 µs more per fork child here
         * (bench/fork). */
        char mine[17] = "";
        prctl(PR_GET_NAME, mine);
        prctl(PR_SET_NAME, name);
        atomic_fetch_add(&rt_alive, 1);
        rc = REAL(pthread_create)(out, &at, rt_thread_main, start);
        if (rc != 0) atomic_fetch_sub(&rt_alive, 1);
        prctl(PR_SET_NAME, mine);
        pthread_attr_destroy(&at);
        if (rc != 0) rtmem_free(start, sizeof *start);
    }
    heap_ignore_leave();
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

int rt_thread_program_fd(int fd)
{
    int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
    if (pidfd < 0) return -1;
    int mine = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
    close(pidfd);
    return mine;
}

int rt_thread_program_threads(void)
{
    struct stat st; /* a task folder's links: 2 and one per thread */
    if (stat("/proc/self/task", &st) != 0 || st.st_nlink < 3) return 0;
    int n = (int)st.st_nlink - 2 - atomic_load(&rt_alive);
    return n > 0 ? n : 0;
}
