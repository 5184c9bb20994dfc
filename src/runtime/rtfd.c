/* rtfd.c — the runtime's own file descriptors (rtfd.h).
 * Signal handlers: nothing. Inside malloc: nothing. */
#include "runtime/rtfd.h"
#include "runtime/rtthread.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <linux/perf_event.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define RTFD_TOP 1024   /* the base stays below this even under a huge soft limit: the
                           kernel sizes a process's descriptor table to its highest number */
#define RTFD_ROOM 224   /* numbers kept free for the runtime below the top */
#define RTFD_ABOVE_MAX 16384 /* soft limits up to this: the runtime's numbers go above it
                                where the hard limit leaves room (rtfd_above) */

/* One adoption at a time: the soft limit is raised and put back around each (two at
 * once would put back the other's raised limit). Taken by trying, a bounded number of
 * times: a fork child whose parent had it taken (by a thread the child does not have)
 * may adopt before the fork handler below frees it, and then places its descriptor
 * the other way. */
static pthread_mutex_t rtfd_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t rtfd_once = PTHREAD_ONCE_INIT;

static pthread_mutex_t rtfd_defer_mu = PTHREAD_MUTEX_INITIALIZER;

static void rtfd_after_fork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    rtfd_mu = fresh;
    rtfd_defer_mu = fresh; /* its list: the parent's copies, this child's too */
}

static void rtfd_init(void)
{
    pthread_atfork(NULL, NULL, rtfd_after_fork_child);
}

static _Atomic uint64_t rtfd_lost_n;

int rtfd_base(void)
{
    struct rlimit rl;
    long top = RTFD_TOP;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (long)rl.rlim_cur < top)
        top = (long)rl.rlim_cur;
    long base = top > 2 * RTFD_ROOM ? top - RTFD_ROOM : top / 2;
    return base > 3 ? (int)base : 3;
}

int rtfd_can_go_above(void)
{
    struct rlimit rl;
    return getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
           rl.rlim_cur <= RTFD_ABOVE_MAX && rl.rlim_max > rl.rlim_cur + RTFD_ROOM / 4;
}

/* `fd` moved to a number at or above the soft RLIMIT_NOFILE, out of the program's
 * reach: the kernel checks the limit only when it hands a number out, so the soft
 * limit is raised (within the hard one) for the one F_DUPFD and put back at once. A
 * thread of the program that opens a file in between while it holds every number
 * below its limit would get one above it, and a setrlimit of its own in between is
 * undone. -1 where the limits leave no room. */
static int rtfd_above(int fd)
{
    struct rlimit rl, up;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
        rl.rlim_cur > RTFD_ABOVE_MAX || rl.rlim_max <= rl.rlim_cur + RTFD_ROOM / 4)
        return -1;
    up = rl;
    up.rlim_cur = rl.rlim_max - rl.rlim_cur > RTFD_ROOM ? rl.rlim_cur + RTFD_ROOM : rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &up) != 0) return -1;
    int high = fcntl(fd, F_DUPFD_CLOEXEC, (int)rl.rlim_cur);
    int e = errno;
    setrlimit(RLIMIT_NOFILE, &rl);
    errno = e;
    return high;
}

static int rtfd_perf_id(int fd, uint64_t *id)
{
    return ioctl(fd, PERF_EVENT_IOC_ID, id);
}

int rtfd_adopt(struct rtfd *r, int fd, int perf)
{
    r->fd = -1;
    if (fd < 0) return errno ? -errno : -EBADF; /* the failed open's errno */
    int saved = errno;
    pthread_once(&rtfd_once, rtfd_init);
    int locked = 0, high = -1;
    pid_t mine = rt_thread_table();
    /* A runtime thread's own table holds none of the program's numbers: nothing to
     * move out of the way, and its low numbers stay clear of the imports (above). */
    for (int tries = 0; !mine && tries < 1000 &&
                        !(locked = pthread_mutex_trylock(&rtfd_mu) == 0);
         tries++)
        sched_yield();
    if (locked) {
        high = rtfd_above(fd);
        pthread_mutex_unlock(&rtfd_mu);
    }
    if (high < 0 && !mine) high = fcntl(fd, F_DUPFD_CLOEXEC, rtfd_base());
    errno = saved;
    if (high >= 0) {
        close(fd);
        fd = high;
    }
    struct stat st;
    uint64_t id = 0;
    if (fstat(fd, &st) != 0 || (perf && rtfd_perf_id(fd, &id) != 0)) {
        int e = errno;
        close(fd);
        return -e;
    }
    r->dev = st.st_dev;
    r->ino = st.st_ino;
    r->type = st.st_mode & S_IFMT;
    r->perf_id = id;
    r->table = mine;
    r->fd = fd;
    return fd;
}

int rtfd_open_once(struct rtfd *r, const char *path)
{
    r->fd = -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    r->dev = st.st_dev;
    r->ino = st.st_ino;
    r->type = st.st_mode & S_IFMT;
    r->perf_id = 0;
    r->table = rt_thread_table();
    r->fd = fd;
    return fd;
}

/* Whether descriptor fd of the calling thread's table is r's file. */
static int rtfd_is(const struct rtfd *r, int fd)
{
    struct stat st;
    uint64_t id = 0;
    return fstat(fd, &st) == 0 && st.st_dev == r->dev && st.st_ino == r->ino &&
           (st.st_mode & S_IFMT) == r->type &&
           (!r->perf_id || (rtfd_perf_id(fd, &id) == 0 && id == r->perf_id));
}

static int rtfd_same(const struct rtfd *r)
{
    return rtfd_is(r, r->fd);
}

static void rtfd_forget(struct rtfd *r)
{
    r->fd = -1;
    atomic_fetch_add(&rtfd_lost_n, 1);
}

/* Marks number fd of this thread's own table as holding an import (rtthread.h): only
 * those are replaced by a later import, never one the thread opened itself. */
static void rtfd_mark(int fd, int on)
{
    uint64_t *bits = rt_thread_imports();
    if (fd < 0 || fd >= RT_IMPORTS || !bits) return;
    uint64_t bit = 1ull << (fd % 64), *w = &bits[fd / 64];
    *w = on ? *w | bit : *w & ~bit;
}

static int rtfd_marked(int fd)
{
    uint64_t *bits = rt_thread_imports();
    return fd >= 0 && fd < RT_IMPORTS && bits && (bits[fd / 64] >> (fd % 64) & 1);
}

/* dup3(fd, n): where n is at or above the soft RLIMIT_NOFILE (the runtime's numbers in
 * the program's table are placed there, rtfd_above), the soft limit is raised for the
 * one call and put back, as rtfd_above does. */
static int rtfd_dup_at(int fd, int n)
{
    int d = dup3(fd, n, O_CLOEXEC);
    if (d >= 0 || errno != EBADF) return d;
    struct rlimit rl, up;
    if (pthread_mutex_lock(&rtfd_mu) != 0) return -1;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (rlim_t)n >= rl.rlim_cur && (rlim_t)n < rl.rlim_max) {
        up = rl;
        up.rlim_cur = (rlim_t)n + 1;
        if (setrlimit(RLIMIT_NOFILE, &up) == 0) {
            d = dup3(fd, n, O_CLOEXEC);
            int e = errno;
            setrlimit(RLIMIT_NOFILE, &rl);
            errno = e;
        }
    }
    pthread_mutex_unlock(&rtfd_mu);
    return d;
}

/* On a runtime thread with a table of its own: the program's descriptor r->fd copied
 * there, at the same number. 1 when the copy is the runtime's file; 0 where it cannot be
 * made (the number is one of this thread's own, or the kernel refuses) or where the
 * program's number no longer holds the runtime's file (closed there, or the program's
 * own file now: then forgotten and counted, and a copy of the program's file closed at
 * once). */
static int rtfd_import(struct rtfd *r)
{
    int n = r->fd;
    int taken = fcntl(n, F_GETFD) >= 0;
    if (taken && !rtfd_marked(n)) return 0;
    int fd = rt_thread_program_fd(n);
    if (fd < 0) {
        if (errno == EBADF) rtfd_forget(r); /* the program closed it */
        return 0;
    }
    if (fd != n) {
        int d = rtfd_dup_at(fd, n);
        close(fd);
        if (d < 0) return 0;
    }
    rtfd_mark(n, 1);
    if (rtfd_same(r)) return 1;
    close(n);
    rtfd_mark(n, 0);
    rtfd_forget(r);
    return 0;
}

int rtfd_ok(struct rtfd *r)
{
    if (r->fd < 0) return 0;
    if (r->table != rt_thread_table()) {
        if (r->table != 0) return 0; /* another runtime thread's own table */
        return rtfd_same(r) || rtfd_import(r);
    }
    int same = rtfd_same(r);
    if (!same) rtfd_forget(r);
    return same;
}

int rtfd_held(struct rtfd *r)
{
    if (r->fd < 0) return 0;
    pid_t mine = rt_thread_table();
    if (r->table != 0 || !mine) return r->table == mine ? rtfd_ok(r) : 1;
    int copy = rt_thread_program_fd(r->fd);
    if (copy < 0) {
        if (errno != EBADF) return 1; /* cannot be told from here */
        rtfd_forget(r);
        return 0;
    }
    int same = rtfd_is(r, copy);
    close(copy);
    if (!same) rtfd_forget(r);
    return same;
}

/* The program's copies of descriptors closed on a runtime thread's own table. */
#define RTFD_DEFER 16
static struct rtfd rtfd_deferred[RTFD_DEFER];
static int rtfd_ndeferred;

void rtfd_close(struct rtfd *r)
{
    if (r->fd >= 0 && r->table == 0 && rt_thread_table()) {
        if (rtfd_same(r)) { /* this thread's import */
            close(r->fd);
            rtfd_mark(r->fd, 0);
        }
        pthread_mutex_lock(&rtfd_defer_mu);
        if (rtfd_ndeferred < RTFD_DEFER) rtfd_deferred[rtfd_ndeferred++] = *r;
        pthread_mutex_unlock(&rtfd_defer_mu);
    } else if (rtfd_ok(r)) {
        close(r->fd);
    }
    r->fd = -1;
}

void rtfd_close_deferred(void)
{
    if (!__atomic_load_n(&rtfd_ndeferred, __ATOMIC_RELAXED) || rt_thread_table()) return;
    pthread_mutex_lock(&rtfd_defer_mu);
    while (rtfd_ndeferred > 0) {
        struct rtfd *r = &rtfd_deferred[--rtfd_ndeferred];
        if (rtfd_same(r)) close(r->fd);
    }
    pthread_mutex_unlock(&rtfd_defer_mu);
}

uint64_t rtfd_lost(void)
{
    return atomic_load(&rtfd_lost_n);
}

void rtfd_lost_reset(void)
{
    atomic_store(&rtfd_lost_n, 0);
}
