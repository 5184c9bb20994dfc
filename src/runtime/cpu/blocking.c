/* blocking.c — the blocking calls that a signal would cut short even with SA_RESTART
 * (sleeps, poll, select, epoll_wait, pause, sigsuspend, sigwait, semaphores) or
 * shorten once partly done (read, write and the socket calls): while a thread of a
 * signal-engine session is in one, the engine's signal is blocked, so a sample that was already on
 * its way waits until the call returns instead of ending it early with EINTR. The sampler never
 * signals a thread it sees blocked (waitstack.c reads its stack instead); this closes the window
 * between its CPU-clock check and the thread entering the call. Calls that take a signal mask
 * (ppoll, pselect, epoll_pwait) get the engine's signal added to it. Two extra system calls per
 * blocking call, only while sampling.
 *
 * Signal handlers: the wrappers are as async-signal-safe as the calls they wrap;
 * blocking_deferred() reads a thread-local.
 * Inside malloc: nothing. */
#include "runtime/cpu/blocking.h"
#include "runtime/interpose.h"
#include "runtime/cpu/profile_state.h"
#include "runtime/cpu/sigown.h"
#include "runtime/cpu/registry.h"

#include <errno.h>
#include <poll.h>
#include <semaphore.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

/* Nonzero while this thread is inside a wrapped call with the engine's signal
 * blocked, including the moment the mask is restored: a signal delivered then was
 * sent for a tick the thread spent partly asleep, and its stack is the wake-up's. */
static __thread int blk_depth;

int blocking_deferred(void)
{
    return blk_depth;
}

/* Blocks the engine's signal for a registered thread; returns whether it did. */
static int blk_enter(sigset_t *old)
{
    int sig = profile_signal();
    if (!sig || !registry_self()) return 0;
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    if (pthread_sigmask(SIG_BLOCK, &one, old) != 0)
        return 0;
    blk_depth++;
    return 1;
}

static void blk_leave(int on, const sigset_t *old)
{
    if (!on) return;
    int e = errno;
    pthread_sigmask(SIG_SETMASK, old, NULL);
    blk_depth--;
    errno = e;
}

/* The caller's mask for the duration of the call, with the engine's signal added. */
static const sigset_t *blk_mask(const sigset_t *m, sigset_t *copy)
{
    int sig = profile_signal();
    if (!m || !sig || !registry_self()) return m;
    *copy = *m;
    sigaddset(copy, sig);
    return copy;
}

#define BLK_WRAP(call)                                                                             \
    ({                                                                                             \
        sigset_t blk_old;                                                                          \
        int blk_on = blk_enter(&blk_old);                                                          \
        __typeof__(call) blk_r = (call);                                                           \
        blk_leave(blk_on, &blk_old);                                                               \
        blk_r;                                                                                     \
    })

KESTREL_INTERPOSE int nanosleep(const struct timespec *req, struct timespec *rem)
{
    return BLK_WRAP(REAL(nanosleep)(req, rem));
}

KESTREL_INTERPOSE int clock_nanosleep(clockid_t c, int flags, const struct timespec *req,
                                      struct timespec *rem)
{
    return BLK_WRAP(REAL(clock_nanosleep)(c, flags, req, rem));
}

KESTREL_INTERPOSE unsigned int sleep(unsigned int s)
{
    return BLK_WRAP(REAL(sleep)(s));
}

KESTREL_INTERPOSE int usleep(useconds_t us)
{
    return BLK_WRAP(REAL(usleep)(us));
}

KESTREL_INTERPOSE int poll(struct pollfd *fds, nfds_t n, int timeout)
{
    return BLK_WRAP(REAL(poll)(fds, n, timeout));
}

KESTREL_INTERPOSE int select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
    return BLK_WRAP(REAL(select)(n, r, w, e, tv));
}

KESTREL_INTERPOSE int epoll_wait(int ep, struct epoll_event *ev, int max, int timeout)
{
    return BLK_WRAP(REAL(epoll_wait)(ep, ev, max, timeout));
}

KESTREL_INTERPOSE int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
                            const sigset_t *mask)
{
    sigset_t copy;
    return BLK_WRAP(REAL(ppoll)(fds, n, ts, blk_mask(mask, &copy)));
}

KESTREL_INTERPOSE int pselect(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *ts,
                              const sigset_t *mask)
{
    sigset_t copy;
    return BLK_WRAP(REAL(pselect)(n, r, w, e, ts, blk_mask(mask, &copy)));
}

KESTREL_INTERPOSE int epoll_pwait(int ep, struct epoll_event *ev, int max, int timeout,
                                  const sigset_t *mask)
{
    sigset_t copy;
    return BLK_WRAP(REAL(epoll_pwait)(ep, ev, max, timeout, blk_mask(mask, &copy)));
}

KESTREL_INTERPOSE int pause(void)
{
    return BLK_WRAP(REAL(pause)());
}

KESTREL_INTERPOSE int sigsuspend(const sigset_t *mask)
{
    sigset_t copy;
    return BLK_WRAP(REAL(sigsuspend)(blk_mask(mask, &copy)));
}

/* (sigown_wait: a signal of the engine's that the wait took is not the program's.) */
KESTREL_INTERPOSE int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *ts)
{
    return BLK_WRAP(sigown_wait(set, info, ts));
}

KESTREL_INTERPOSE int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
    return BLK_WRAP(sigown_wait(set, info, NULL));
}

KESTREL_INTERPOSE int sem_wait(sem_t *sem)
{
    return BLK_WRAP(REAL(sem_wait)(sem));
}

KESTREL_INTERPOSE int sem_timedwait(sem_t *sem, const struct timespec *ts)
{
    return BLK_WRAP(REAL(sem_timedwait)(sem, ts));
}

/* ---- data transfer: a signal after part of the transfer returns a short count ---- */

KESTREL_INTERPOSE ssize_t read(int fd, void *buf, size_t n)
{
    return BLK_WRAP(REAL(read)(fd, buf, n));
}

KESTREL_INTERPOSE ssize_t write(int fd, const void *buf, size_t n)
{
    return BLK_WRAP(REAL(write)(fd, buf, n));
}

KESTREL_INTERPOSE ssize_t readv(int fd, const struct iovec *iov, int n)
{
    return BLK_WRAP(REAL(readv)(fd, iov, n));
}

KESTREL_INTERPOSE ssize_t writev(int fd, const struct iovec *iov, int n)
{
    return BLK_WRAP(REAL(writev)(fd, iov, n));
}

KESTREL_INTERPOSE ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    return BLK_WRAP(REAL(recv)(fd, buf, n, flags));
}

KESTREL_INTERPOSE ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *addr,
                                   socklen_t *len)
{
    return BLK_WRAP(REAL(recvfrom)(fd, buf, n, flags, addr, len));
}

KESTREL_INTERPOSE ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
    return BLK_WRAP(REAL(recvmsg)(fd, msg, flags));
}

KESTREL_INTERPOSE ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    return BLK_WRAP(REAL(send)(fd, buf, n, flags));
}

KESTREL_INTERPOSE ssize_t sendto(int fd, const void *buf, size_t n, int flags,
                                 const struct sockaddr *addr, socklen_t len)
{
    return BLK_WRAP(REAL(sendto)(fd, buf, n, flags, addr, len));
}

KESTREL_INTERPOSE ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    return BLK_WRAP(REAL(sendmsg)(fd, msg, flags));
}

KESTREL_INTERPOSE int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
    return BLK_WRAP(REAL(accept)(fd, addr, len));
}

KESTREL_INTERPOSE int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    return BLK_WRAP(REAL(connect)(fd, addr, len));
}
