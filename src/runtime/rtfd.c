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

static void rtfd_after_fork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    rtfd_mu = fresh;
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
    int locked = 0;
    for (int tries = 0; tries < 1000 && !(locked = pthread_mutex_trylock(&rtfd_mu) == 0); tries++)
        sched_yield();
    int high = locked ? rtfd_above(fd) : -1;
    if (locked) pthread_mutex_unlock(&rtfd_mu);
    if (high < 0) high = fcntl(fd, F_DUPFD_CLOEXEC, rtfd_base());
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
    r->fd = fd;
    return fd;
}

int rtfd_ok(struct rtfd *r)
{
    if (r->fd < 0) return 0;
    struct stat st;
    uint64_t id = 0;
    int same = fstat(r->fd, &st) == 0 && st.st_dev == r->dev && st.st_ino == r->ino &&
               (st.st_mode & S_IFMT) == r->type &&
               (!r->perf_id || (rtfd_perf_id(r->fd, &id) == 0 && id == r->perf_id));
    /* On a runtime thread with a table of its own (rtthread.h), the descriptors kept
     * in the program's table are not there: not this thread's to use, not lost. */
    if (!same && !rt_thread_own_fds) {
        r->fd = -1;
        atomic_fetch_add(&rtfd_lost_n, 1);
    }
    return same;
}

void rtfd_close(struct rtfd *r)
{
    if (rtfd_ok(r)) close(r->fd);
    r->fd = -1;
}

uint64_t rtfd_lost(void)
{
    return atomic_load(&rtfd_lost_n);
}

void rtfd_lost_reset(void)
{
    atomic_store(&rtfd_lost_n, 0);
}
