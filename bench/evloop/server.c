/* An event-loop server of the kind the signal engine must serve well (issue 18):
 * THREADS threads, each with its own epoll set and its own SO_REUSEPORT listening
 * socket on 127.0.0.1:PORT; connections are non-blocking and kept alive; each request
 * (a line of 32 bytes) is answered with 256 bytes after handle_request() has computed
 * for about WORK_US microseconds (calibrated at start). Every I/O call goes through libc
 * (epoll_wait, accept4, read, write), as real servers do.
 *
 * After SECONDS it stops and prints one line per thread:
 *   thread K cpu_ns=N wall_ns=N requests=N tid=N work_ns=N
 * (its CPU clock and the wall time of its loop, its kernel thread id, and the CPU time
 * it spent in handle_request: its requests times the mean CPU time of one call in 64,
 * read on the thread's CPU clock around that call, less what two reads of that clock
 * cost. Clock reads around every call would add system calls to a profile's samples;
 * the calibration's CPU time per round drifted by up to 4 points of share as the
 * shared machine's speed changed in a run, and the wall time around each call counts
 * the times the thread was preempted inside it),
 * then "main cpu_ns=N" (the main thread's CPU: the calibration, the set-up) and
 * "requests N". handle_request's share of the threads' CPU time is what a profile's
 * share of it is compared with.
 *
 *   server PORT THREADS WORK_US SECONDS */
#include <errno.h>
#include <stdatomic.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define REQ 32
#define RESP 256
#define MAXT 16

static int port, nthreads;

/* EVLOOP_CPUTIMER_HZ=N (a measurement for the signal engine's design, no profiler):
 * each worker arms a timer on its own CPU clock (timer_create CLOCK_THREAD_CPUTIME_ID,
 * SIGEV_THREAD_ID) every 1/N s of its CPU time, and the handler counts where the signal
 * found the thread: in user code, leaving a system call that ended on its own, or
 * inside one it interrupted (PC on the syscall instruction: restarted; or after it with
 * EINTR), and how many found it in handle_request. Printed at the end as
 * "cputimer user=N exit=N interrupted=N in_handle_request=N". */
static int probe_hz;
static _Atomic long probe_user, probe_exit, probe_intr, probe_work;
/* handle_request's code, in a section of its own: a signal found the thread there. */
extern const char __start_evloop_work[], __stop_evloop_work[];

static void probe_handler(int sig, siginfo_t *si, void *ucv)
{
    (void)sig;
    (void)si;
    const ucontext_t *uc = ucv;
    const unsigned char *pc = (const unsigned char *)uc->uc_mcontext.gregs[REG_RIP];
    if (pc[0] == 0x0f && pc[1] == 0x05)
        probe_intr++;
    else if (((uintptr_t)pc & 4095) >= 2 && pc[-2] == 0x0f && pc[-1] == 0x05)
        uc->uc_mcontext.gregs[REG_RAX] == -EINTR ? probe_intr++ : probe_exit++;
    else
        probe_user++;
    if ((const char *)pc >= __start_evloop_work && (const char *)pc < __stop_evloop_work)
        probe_work++;
}

static void probe_arm(void)
{
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGRTMIN + 1;
    ev._sigev_un._tid = (int)syscall(SYS_gettid);
    timer_t t;
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &t) != 0) {
        perror("server: timer_create");
        exit(1);
    }
    long ns = 1000000000L / probe_hz;
    struct itimerspec its = {{ns / 1000000000L, ns % 1000000000L},
                             {ns / 1000000000L, ns % 1000000000L}};
    timer_settime(t, 0, &its, NULL);
}
static long work_us;
static int64_t deadline_ns;

struct worker {
    pthread_t t;
    int64_t cpu_ns, wall_ns, work_ns;
    int64_t timed_ns, timed; /* CPU time of the calls timed, and how many */
    long requests;
    int tid;
};
static struct worker workers[MAXT];
volatile unsigned long evloop_sink;

static int64_t clock_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* The request's work: WORK_US of computation, as many rounds of an LCG as took that
 * long in a calibration at start (measured on the thread's CPU clock), and no system
 * call inside: its samples are its own, not the clock's. */
static long rounds_per_us;

static inline __attribute__((always_inline)) unsigned long lcg_rounds(unsigned long x, long n)
{
    for (long i = 0; i < n; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

static void calibrate(void)
{
    long n = 1000;
    for (;;) {
        int64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        evloop_sink += lcg_rounds(n, n);
        int64_t el = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
        if (el > 50000000) {
            rounds_per_us = (long)((double)n * 1000.0 / (double)el);
            return;
        }
        n *= 2;
    }
}

__attribute__((noinline, section("evloop_work"))) static void handle_request(const char *req, char *resp)
{
    unsigned long x = (unsigned char)req[0];
    for (long i = 0; i < work_us; i++)
        x = lcg_rounds(x, rounds_per_us);
    evloop_sink += x;
    memset(resp, 'a' + (int)(x % 26), RESP);
    resp[RESP - 1] = '\n';
}

static int listener(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 512) != 0) {
        perror("server: bind/listen");
        exit(1);
    }
    return fd;
}

/* A connection's partial request: bytes of the current line read so far. */
struct conn {
    int fd, have;
    char buf[REQ];
};

static void *loop(void *arg)
{
    struct worker *w = arg;
    w->tid = (int)syscall(SYS_gettid);
    int lfd = listener();
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
    if (probe_hz) probe_arm();
    int64_t t0 = clock_ns(CLOCK_MONOTONIC);
    char resp[RESP];
    struct epoll_event evs[64];
    while (clock_ns(CLOCK_MONOTONIC) < deadline_ns) {
        int n = epoll_wait(ep, evs, 64, 20);
        if (n < 0 && errno == EINTR && probe_hz) continue;
        if (n < 0) {
            fprintf(stderr, "server: epoll_wait: %s\n", strerror(errno));
            exit(1);
        }
        for (int i = 0; i < n; i++) {
            struct conn *c = evs[i].data.ptr;
            if (!c) {
                int fd;
                while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
                    int one = 1;
                    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    struct conn *nc = calloc(1, sizeof *nc);
                    nc->fd = fd;
                    struct epoll_event cev = {.events = EPOLLIN, .data.ptr = nc};
                    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &cev);
                }
                continue;
            }
            for (;;) {
                ssize_t r = read(c->fd, c->buf + c->have, (size_t)(REQ - c->have));
                if (r < 0 && errno == EAGAIN) break;
                if (r < 0 && errno == EINTR && probe_hz) continue;
                if (r < 0 && errno == EINTR) {
                    fprintf(stderr, "server: read: EINTR\n");
                    exit(1);
                }
                if (r <= 0) {
                    close(c->fd);
                    free(c);
                    break;
                }
                c->have += (int)r;
                if (c->have < REQ) continue;
                c->have = 0;
                if (w->requests % 64 == 0) {
                    int64_t h0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
                    handle_request(c->buf, resp);
                    int64_t h1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
                    int64_t e1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
                    w->timed_ns += (h1 - h0) - (e1 - h1);
                    w->timed++;
                } else {
                    handle_request(c->buf, resp);
                }
                w->requests++;
                ssize_t s = write(c->fd, resp, RESP); /* 256 B into an empty socket buffer */
                if (s != RESP) {
                    fprintf(stderr, "server: write returned %zd: %s\n", s, strerror(errno));
                    exit(1);
                }
            }
        }
    }
    w->wall_ns = clock_ns(CLOCK_MONOTONIC) - t0;
    w->work_ns = w->timed ? (int64_t)((double)w->requests * (double)w->timed_ns / (double)w->timed) : 0;
    w->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: server PORT THREADS WORK_US SECONDS\n");
        return 2;
    }
    port = atoi(argv[1]);
    nthreads = atoi(argv[2]);
    work_us = atol(argv[3]);
    if (nthreads < 1 || nthreads > MAXT) return 2;
    calibrate();
    const char *ph = getenv("EVLOOP_CPUTIMER_HZ");
    probe_hz = ph ? atoi(ph) : 0;
    if (probe_hz) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = probe_handler;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGRTMIN + 1, &sa, NULL);
    }
    deadline_ns = clock_ns(CLOCK_MONOTONIC) + (int64_t)(atof(argv[4]) * 1e9);
    for (int i = 0; i < nthreads; i++)
        pthread_create(&workers[i].t, NULL, loop, &workers[i]);
    long total = 0;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(workers[i].t, NULL);
        printf("thread %d cpu_ns=%lld wall_ns=%lld requests=%ld tid=%d work_ns=%lld\n", i,
               (long long)workers[i].cpu_ns, (long long)workers[i].wall_ns, workers[i].requests,
               workers[i].tid, (long long)workers[i].work_ns);
        total += workers[i].requests;
    }
    if (probe_hz)
        printf("cputimer user=%ld exit=%ld interrupted=%ld in_handle_request=%ld\n",
               (long)probe_user, (long)probe_exit, (long)probe_intr, (long)probe_work);
    printf("main cpu_ns=%lld\n", (long long)clock_ns(CLOCK_THREAD_CPUTIME_ID));
    printf("requests %ld\n", total);
    return 0;
}
