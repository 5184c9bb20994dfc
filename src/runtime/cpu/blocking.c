/* blocking.c — the blocking calls a signal would cut short even with SA_RESTART (sleeps,
 * poll, select, epoll_wait, pause, sigsuspend, sigwait, semaphores) or shorten once
 * partly done (writes and sends, MSG_WAITALL receives), and the calls that end with
 * EINTR under a socket timeout (reads, receives, accept, connect).
 *
 * The signal engine's signal is let in: it interrupts the call where the thread is, so
 * its sample has the call's stack, and the wrapper resumes the call itself, as if the
 * signal had never come. The engine's handler counts its signals per thread
 * (blocking_interrupted), the program's own handlers are counted by sigwrap; a call
 * that failed with EINTR, or transferred part of its bytes, while the first count moved
 * and the second did not was interrupted by the engine alone and goes on: a timeout for
 * what is left of it (from a clock read before the call, or the kernel's own `rem` and
 * select's timeval), a transfer for the bytes not yet moved (only on a descriptor that
 * blocks: a non-blocking one is short for its own reasons). When the program's handler
 * ran the call returns what it returned, EINTR and short counts included, as without
 * kestrel. The common path is inline: a few initial-exec thread-local reads, errno and
 * the depth published in the registry slot (and a clock read for a call with a
 * timeout); no system call is added. It is hot: dd-like programs call it 10^6 times a
 * second (bench/syscall_cost).
 *
 * What it cannot see: a handler the program installed before the profile started or
 * with a raw rt_sigaction (not behind sigwrap's trampoline) that runs during the same
 * call as an engine signal; that call resumes instead of failing with EINTR.
 *
 * Signal handlers: the wrappers are as async-signal-safe as the calls they wrap;
 * blocking_interrupted() reads and writes thread-locals and, inside a wrapped call,
 * the two bytes of code around the interrupted PC.
 * Inside malloc: nothing. */
#include "runtime/cpu/blocking.h"
#include "runtime/arch/arch.h"
#include "runtime/interpose.h"
#include "runtime/cpu/registry.h"
#include "runtime/cpu/sigown.h"
#include "runtime/sigwrap.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <ucontext.h>

/* blk_hits: the engine's signals this thread handled. blk_in: inside a wrapped call. */
static __thread volatile unsigned blk_hits;
static __thread volatile int blk_in;

enum blocking_where blocking_interrupted(const void *ucv)
{
    blk_hits++;
    if (!blk_in) return BLOCKING_OUTSIDE;
    /* Inside a wrapped call the PC is in libc's, the vDSO's or the program's text,
     * readable. The kernel, restarting a system call for the handler, set the PC back
     * onto its system call instruction; one it ended with EINTR leaves the PC after
     * it. Either way the thread was asleep in the call. One that ended on its own may
     * have been running (its CPU time in the kernel) or waking up: the engine tells
     * which from how late the signal came (engine_signal.c, sig_late). */
    return arch_at_syscall((const ucontext_t *)ucv, EINTR) ? BLOCKING_ASLEEP : BLOCKING_IN_CALL;
}

/* One wrapped call: the counts and errno at its start, and the thread's registry slot,
 * where the depth is published for the engine's sampler (a thread inside a call is asked
 * whether it sleeps there before it is signalled). */
struct blk {
    unsigned hits, prog;
    int err;
    struct reg_slot *slot;
};

static inline __attribute__((always_inline)) void blk_publish(struct reg_slot *s)
{
    if (s && registry_self() == s) atomic_store_explicit(&s->in_call, (uint32_t)blk_in, memory_order_relaxed);
}

static inline __attribute__((always_inline)) void blk_begin(struct blk *b)
{
    b->hits = blk_hits;
    b->prog = sigwrap_handled();
    b->err = errno;
    blk_in++;
    b->slot = registry_self();
    blk_publish(b->slot);
}

static inline __attribute__((always_inline)) void blk_end(struct blk *b)
{
    blk_in--;
    blk_publish(b->slot);
}

/* The value the call returns, on its way out. */
#define BLK_END(b, v) (blk_end(&(b)), (v))

/* Whether the engine's signal came since the last look and no handler of the
 * program's since the call began: then the call is resumed (errno as it was). */
static int blk_ours(struct blk *b)
{
    unsigned h = blk_hits;
    if (h == b->hits || sigwrap_handled() != b->prog) return 0;
    b->hits = h;
    errno = b->err;
    return 1;
}

static int64_t blk_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static int64_t blk_ts_ns(const struct timespec *ts)
{
    return (int64_t)ts->tv_sec * 1000000000ll + ts->tv_nsec;
}

/* What is left of a timeout of `ms` milliseconds begun at t0, rounded up: never back
 * before its time. */
static int blk_left_ms(int64_t t0, int ms)
{
    int64_t left = (int64_t)ms * 1000000 - (blk_now() - t0);
    return left <= 0 ? 0 : (int)((left + 999999) / 1000000);
}

static struct timespec blk_left_ts(int64_t t0, int64_t total_ns)
{
    int64_t left = total_ns - (blk_now() - t0);
    if (left < 0) left = 0;
    return (struct timespec){.tv_sec = left / 1000000000ll, .tv_nsec = left % 1000000000ll};
}

/* A descriptor that blocks: a short transfer on it came from a signal. */
static int blk_blocking_fd(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl >= 0 && !(fl & O_NONBLOCK);
}

/* ================================ sleeps ================================ */

static int blk_nanosleep(struct blk *b, const struct timespec *req, struct timespec *rem)
{
    struct timespec want = *req, left;
    for (;;) {
        int r = REAL(nanosleep)(&want, &left);
        if (r == 0 || errno != EINTR) return r;
        if (!blk_ours(b)) {
            if (rem) *rem = left;
            return r;
        }
        want = left;
    }
}

KESTREL_INTERPOSE int nanosleep(const struct timespec *req, struct timespec *rem)
{
    struct blk b;
    blk_begin(&b);
    return BLK_END(b, blk_nanosleep(&b, req, rem));
}

KESTREL_INTERPOSE int clock_nanosleep(clockid_t c, int flags, const struct timespec *req,
                                      struct timespec *rem)
{
    struct blk b;
    blk_begin(&b);
    struct timespec want = *req, left;
    for (;;) {
        int r = REAL(clock_nanosleep)(c, flags, &want, &left); /* an error number */
        if (r != EINTR) return BLK_END(b, r);
        if (!blk_ours(&b)) {
            if (rem && !(flags & TIMER_ABSTIME)) *rem = left;
            return BLK_END(b, r);
        }
        if (!(flags & TIMER_ABSTIME)) want = left;
    }
}

/* glibc's usleep and sleep call nanosleep inside libc, out of reach: the same through
 * the resuming one (sleep returns the whole seconds left, as glibc's). */
KESTREL_INTERPOSE int usleep(useconds_t us)
{
    struct blk b;
    blk_begin(&b);
    struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000};
    return BLK_END(b, blk_nanosleep(&b, &ts, NULL));
}

KESTREL_INTERPOSE unsigned int sleep(unsigned int s)
{
    struct blk b;
    blk_begin(&b);
    struct timespec ts = {.tv_sec = s, .tv_nsec = 0};
    if (blk_nanosleep(&b, &ts, &ts) < 0) return BLK_END(b, (unsigned)ts.tv_sec);
    errno = b.err;
    return BLK_END(b, 0u);
}

/* ============================ waits with a timeout ============================ */

KESTREL_INTERPOSE int poll(struct pollfd *fds, nfds_t n, int timeout)
{
    struct blk b;
    blk_begin(&b);
    int64_t t0 = timeout > 0 ? blk_now() : 0;
    int t = timeout;
    for (;;) {
        int r = REAL(poll)(fds, n, t);
        if (r >= 0 || errno != EINTR || !blk_ours(&b)) return BLK_END(b, r);
        if (timeout > 0) t = blk_left_ms(t0, timeout);
    }
}

KESTREL_INTERPOSE int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
                            const sigset_t *mask)
{
    struct blk b;
    blk_begin(&b);
    int64_t t0 = ts ? blk_now() : 0;
    struct timespec left = ts ? *ts : (struct timespec){0, 0};
    for (;;) {
        int r = REAL(ppoll)(fds, n, ts ? &left : NULL, mask);
        if (r >= 0 || errno != EINTR || !blk_ours(&b)) return BLK_END(b, r);
        if (ts) left = blk_left_ts(t0, blk_ts_ns(ts));
    }
}

/* select: the kernel leaves the sets alone on EINTR and counts the timeval down. */
KESTREL_INTERPOSE int select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
    struct blk b;
    blk_begin(&b);
    for (;;) {
        int rv = REAL(select)(n, r, w, e, tv);
        if (rv >= 0 || errno != EINTR || !blk_ours(&b)) return BLK_END(b, rv);
    }
}

KESTREL_INTERPOSE int pselect(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *ts,
                              const sigset_t *mask)
{
    struct blk b;
    blk_begin(&b);
    int64_t t0 = ts ? blk_now() : 0;
    struct timespec left = ts ? *ts : (struct timespec){0, 0};
    for (;;) {
        int rv = REAL(pselect)(n, r, w, e, ts ? &left : NULL, mask);
        if (rv >= 0 || errno != EINTR || !blk_ours(&b)) return BLK_END(b, rv);
        if (ts) left = blk_left_ts(t0, blk_ts_ns(ts));
    }
}

KESTREL_INTERPOSE int epoll_wait(int ep, struct epoll_event *ev, int max, int timeout)
{
    struct blk b;
    blk_begin(&b);
    int64_t t0 = timeout > 0 ? blk_now() : 0;
    int t = timeout;
    for (;;) {
        int r = REAL(epoll_wait)(ep, ev, max, t);
        if (r >= 0 || errno != EINTR || !blk_ours(&b)) return BLK_END(b, r);
        if (timeout > 0) t = blk_left_ms(t0, timeout);
    }
}

KESTREL_INTERPOSE int epoll_pwait(int ep, struct epoll_event *ev, int max, int timeout,
                                  const sigset_t *mask)
{
    struct blk b;
    blk_begin(&b);
    int64_t t0 = timeout > 0 ? blk_now() : 0;
    int t = timeout;
    for (;;) {
        int r = REAL(epoll_pwait)(ep, ev, max, t, mask);
        if (r >= 0 || errno != EINTR || !blk_ours(&b)) return BLK_END(b, r);
        if (timeout > 0) t = blk_left_ms(t0, timeout);
    }
}

/* ============================ waits for a signal ============================ */

KESTREL_INTERPOSE int pause(void)
{
    struct blk b;
    blk_begin(&b);
    for (;;) {
        int r = REAL(pause)();
        if (errno != EINTR || !blk_ours(&b)) return BLK_END(b, r);
    }
}

KESTREL_INTERPOSE int sigsuspend(const sigset_t *mask)
{
    struct blk b;
    blk_begin(&b);
    for (;;) {
        int r = REAL(sigsuspend)(mask);
        if (errno != EINTR || !blk_ours(&b)) return BLK_END(b, r);
    }
}

/* (sigown_wait: a signal of the engine's that the wait took is not the program's.) */
KESTREL_INTERPOSE int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *ts)
{
    struct blk b;
    blk_begin(&b);
    int64_t t0 = ts ? blk_now() : 0;
    struct timespec left = ts ? *ts : (struct timespec){0, 0};
    for (;;) {
        int r = sigown_wait(set, info, ts ? &left : NULL);
        if (r >= 0 || errno != EINTR || !blk_ours(&b)) return BLK_END(b, r);
        if (ts) left = blk_left_ts(t0, blk_ts_ns(ts));
    }
}

KESTREL_INTERPOSE int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
    struct blk b;
    blk_begin(&b);
    for (;;) {
        int r = sigown_wait(set, info, NULL);
        if (r >= 0 || errno != EINTR || !blk_ours(&b)) return BLK_END(b, r);
    }
}

KESTREL_INTERPOSE int sem_wait(sem_t *sem)
{
    struct blk b;
    blk_begin(&b);
    for (;;) {
        int r = REAL(sem_wait)(sem);
        if (r == 0 || errno != EINTR || !blk_ours(&b)) return BLK_END(b, r);
    }
}

KESTREL_INTERPOSE int sem_timedwait(sem_t *sem, const struct timespec *ts) /* absolute */
{
    struct blk b;
    blk_begin(&b);
    for (;;) {
        int r = REAL(sem_timedwait)(sem, ts);
        if (r == 0 || errno != EINTR || !blk_ours(&b)) return BLK_END(b, r);
    }
}

/* ============== data transfer: EINTR (socket timeouts) and short counts ============== */

/* A call that moves no data once interrupted: tried again. */
#define BLK_RETRY(type, call)                                                                      \
    ({                                                                                             \
        struct blk b_;                                                                             \
        blk_begin(&b_);                                                                            \
        type r_;                                                                                   \
        while ((r_ = (call)) < 0 && errno == EINTR && blk_ours(&b_)) {                             \
        }                                                                                          \
        BLK_END(b_, r_);                                                                           \
    })

KESTREL_INTERPOSE ssize_t read(int fd, void *buf, size_t n)
{
    return BLK_RETRY(ssize_t, REAL(read)(fd, buf, n));
}

KESTREL_INTERPOSE ssize_t readv(int fd, const struct iovec *iov, int n)
{
    return BLK_RETRY(ssize_t, REAL(readv)(fd, iov, n));
}

KESTREL_INTERPOSE ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *addr,
                                   socklen_t *len)
{
    return BLK_RETRY(ssize_t, REAL(recvfrom)(fd, buf, n, flags, addr, len));
}

KESTREL_INTERPOSE ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
    return BLK_RETRY(ssize_t, REAL(recvmsg)(fd, msg, flags));
}

KESTREL_INTERPOSE int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
    return BLK_RETRY(int, REAL(accept)(fd, addr, len));
}

/* recv: a MSG_WAITALL receive cut short by the engine's signal gets the rest. */
KESTREL_INTERPOSE ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    struct blk b;
    blk_begin(&b);
    size_t done = 0;
    for (;;) {
        ssize_t r = REAL(recv)(fd, (char *)buf + done, n - done, flags);
        if (r < 0) {
            if (errno == EINTR && blk_ours(&b)) continue;
            return BLK_END(b, done ? (ssize_t)done : r);
        }
        done += (size_t)r;
        if (r == 0 || done == n || !(flags & MSG_WAITALL) || !blk_ours(&b))
            return BLK_END(b, (ssize_t)done);
    }
}

/* The rest of a write cut short: continued while the engine's signal alone cut it and
 * the descriptor blocks. `step` moves bytes [done, n) and returns what a write would. */
#define BLK_TRANSFER(b, n, fd, nonblock_flag, step)                                                \
    ({                                                                                             \
        size_t done_ = 0;                                                                          \
        ssize_t out_;                                                                              \
        for (;;) {                                                                                 \
            ssize_t r_ = (step);                                                                   \
            if (r_ < 0) {                                                                          \
                if (errno == EINTR && blk_ours(&(b))) continue;                                    \
                out_ = done_ ? (ssize_t)done_ : r_;                                                \
                break;                                                                             \
            }                                                                                      \
            done_ += (size_t)r_;                                                                   \
            if (done_ >= (n) || r_ == 0 || (nonblock_flag) || !blk_ours(&(b)) ||                   \
                !blk_blocking_fd(fd)) {                                                            \
                out_ = (ssize_t)done_;                                                             \
                break;                                                                             \
            }                                                                                      \
        }                                                                                          \
        out_;                                                                                      \
    })

KESTREL_INTERPOSE ssize_t write(int fd, const void *buf, size_t n)
{
    struct blk b;
    blk_begin(&b);
    ssize_t r = BLK_TRANSFER(b, n, fd, 0, REAL(write)(fd, (const char *)buf + done_, n - done_));
    return BLK_END(b, r);
}

KESTREL_INTERPOSE ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    struct blk b;
    blk_begin(&b);
    ssize_t r = BLK_TRANSFER(b, n, fd, flags & MSG_DONTWAIT,
                             REAL(send)(fd, (const char *)buf + done_, n - done_, flags));
    return BLK_END(b, r);
}

KESTREL_INTERPOSE ssize_t sendto(int fd, const void *buf, size_t n, int flags,
                                 const struct sockaddr *addr, socklen_t len)
{
    struct blk b;
    blk_begin(&b);
    ssize_t r = BLK_TRANSFER(b, n, fd, flags & MSG_DONTWAIT,
                             REAL(sendto)(fd, (const char *)buf + done_, n - done_, flags, addr,
                                          len));
    return BLK_END(b, r);
}

static size_t blk_iov_len(const struct iovec *iov, int n)
{
    size_t t = 0;
    for (int i = 0; i < n; i++)
        t += iov[i].iov_len;
    return t;
}

/* The iovecs past the first `skip` bytes, at most BLK_IOV of them, into `out`. */
#define BLK_IOV 64
static int blk_iov_rest(const struct iovec *iov, int n, size_t skip, struct iovec *out)
{
    int i = 0, k = 0;
    for (; i < n && skip >= iov[i].iov_len; i++)
        skip -= iov[i].iov_len;
    for (; i < n && k < BLK_IOV; i++, k++) {
        out[k].iov_base = (char *)iov[i].iov_base + skip;
        out[k].iov_len = iov[i].iov_len - skip;
        skip = 0;
    }
    return k;
}

static ssize_t blk_writev_step(int fd, const struct iovec *iov, int n, size_t done)
{
    if (!done) return REAL(writev)(fd, iov, n);
    struct iovec rest[BLK_IOV];
    return REAL(writev)(fd, rest, blk_iov_rest(iov, n, done, rest));
}

KESTREL_INTERPOSE ssize_t writev(int fd, const struct iovec *iov, int n)
{
    struct blk b;
    blk_begin(&b);
    size_t total = n > 0 ? blk_iov_len(iov, n) : 0;
    ssize_t r = BLK_TRANSFER(b, total, fd, 0, blk_writev_step(fd, iov, n, done_));
    return BLK_END(b, r);
}

/* The rest of a message goes without its control data (already sent with the first
 * part) and without its address (a stream socket's). */
static ssize_t blk_sendmsg_step(int fd, const struct msghdr *msg, int flags, size_t done)
{
    if (!done) return REAL(sendmsg)(fd, msg, flags);
    struct iovec rest[BLK_IOV];
    struct msghdr m;
    memset(&m, 0, sizeof m);
    m.msg_iov = rest;
    m.msg_iovlen = (size_t)blk_iov_rest(msg->msg_iov, (int)msg->msg_iovlen, done, rest);
    return REAL(sendmsg)(fd, &m, flags);
}

KESTREL_INTERPOSE ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    struct blk b;
    blk_begin(&b);
    size_t total = blk_iov_len(msg->msg_iov, (int)msg->msg_iovlen);
    ssize_t r = BLK_TRANSFER(b, total, fd, flags & MSG_DONTWAIT,
                             blk_sendmsg_step(fd, msg, flags, done_));
    return BLK_END(b, r);
}

/* connect ended with EINTR (a socket send timeout) by the engine's signal: the
 * connection goes on in the kernel; waiting for it gives the call's own result. */
KESTREL_INTERPOSE int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    struct blk b;
    blk_begin(&b);
    int r = REAL(connect)(fd, addr, len);
    if (r == 0 || errno != EINTR || !blk_ours(&b)) return BLK_END(b, r);
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    while ((r = REAL(poll)(&p, 1, -1)) < 0 && errno == EINTR && blk_ours(&b)) {
    }
    if (r < 0) return BLK_END(b, r);
    int err = 0;
    socklen_t el = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0) return BLK_END(b, -1);
    if (err) {
        errno = err;
        return BLK_END(b, -1);
    }
    errno = b.err;
    return BLK_END(b, 0);
}
