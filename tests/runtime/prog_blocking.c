/* Blocking calls in loops while a busy thread keeps the sampler working: nanosleep,
 * clock_nanosleep, usleep, sleep, poll, select, epoll_wait, sem_timedwait, ppoll,
 * pselect, sigtimedwait, and accept on a socket with a 2 ms receive timeout (all timing
 * out after 2 ms, sleep after 1 s), a pipe read/write pair (one byte every 2 ms, and
 * 1 MiB writes drained slowly, which a signal would cut short) and the same over a
 * socket pair with send/recv (MSG_WAITALL). Every call must
 * return what it returns unprofiled, never fail with EINTR, and never come back
 * before its time. Prints one line per call kind: "<kind> calls=N bad=M" and the first
 * anomaly seen. Exits 0. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "burn.h"

#define ROUNDS 400
#define TIMEOUT_NS 2000000ll

volatile int done;

static int64_t now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

struct result {
    const char *kind;
    int calls, bad;
    char first[160];
};

static void note(struct result *r, int ok, const char *fmt, long a, long b)
{
    r->calls++;
    if (!ok && r->bad++ == 0) snprintf(r->first, sizeof(r->first), fmt, a, b);
}

/* Each timed call: expected return value 0, no error, at least TIMEOUT_NS elapsed. */
#define TIMED(r, call, min_ns)                                                                     \
    do {                                                                                           \
        int64_t t0 = now();                                                                        \
        errno = 0;                                                                                 \
        long rv = (long)(call);                                                                    \
        int e = errno;                                                                             \
        int64_t el = now() - t0;                                                                   \
        note(r, rv == 0 && el >= (min_ns), "returned %ld after %ld ns", rv, (long)el);             \
        if (rv != 0 && e == EINTR)                                                                 \
            snprintf((r)->first, sizeof((r)->first), "EINTR after %ld ns", (long)el);              \
    } while (0)

static struct result res[] = {{.kind = "nanosleep"},  {.kind = "clock_nanosleep"},
                              {.kind = "usleep"},     {.kind = "sleep"},
                              {.kind = "poll"},       {.kind = "select"},
                              {.kind = "epoll_wait"}, {.kind = "sem_timedwait"},
                              {.kind = "pipe_read"},  {.kind = "pipe_write"},
                              {.kind = "ppoll"},      {.kind = "pselect"},
                              {.kind = "sigtimedwait"}, {.kind = "accept"},
                              {.kind = "sock_recv"},  {.kind = "sock_send"}};
#define NTIMED 8 /* res[0..7] */
#define NTIMED2 4 /* res[10..13] */

static void *timed_calls(void *arg)
{
    int which = (int)(intptr_t)arg;
    struct result *r = &res[which];
    int ep = epoll_create1(0);
    int pfd[2];
    if (pipe(pfd) != 0) return NULL;
    sem_t sem;
    sem_init(&sem, 0, 0);
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct timeval rcv = {0, TIMEOUT_NS / 1000};
    if (bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(lfd, 1) != 0 ||
        setsockopt(lfd, SOL_SOCKET, SO_RCVTIMEO, &rcv, sizeof rcv) != 0)
        return NULL;
    int rounds = which == 3 ? 2 : ROUNDS;
    for (int i = 0; i < rounds; i++) {
        burn_cpu_us(700); /* enough CPU that the sampler signals this thread */
        struct timespec ts = {0, TIMEOUT_NS};
        switch (which) {
        case 0:
            TIMED(r, nanosleep(&ts, NULL), TIMEOUT_NS);
            break;
        case 1:
            TIMED(r, clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL), TIMEOUT_NS);
            break;
        case 2:
            TIMED(r, usleep(TIMEOUT_NS / 1000), TIMEOUT_NS);
            break;
        case 3:
            TIMED(r, sleep(1), 1000000000ll);
            break;
        case 4: {
            struct pollfd p = {pfd[0], POLLIN, 0};
            TIMED(r, poll(&p, 1, TIMEOUT_NS / 1000000), TIMEOUT_NS);
            break;
        }
        case 5: {
            fd_set s;
            FD_ZERO(&s);
            FD_SET(pfd[0], &s);
            struct timeval tv = {0, TIMEOUT_NS / 1000};
            TIMED(r, select(pfd[0] + 1, &s, NULL, NULL, &tv), TIMEOUT_NS);
            break;
        }
        case 6: {
            struct epoll_event ev;
            TIMED(r, epoll_wait(ep, &ev, 1, TIMEOUT_NS / 1000000), TIMEOUT_NS);
            break;
        }
        case 7: {
            /* The clock is read before the deadline is made from it, so that a
             * preemption between the two cannot make a full wait look short. */
            int64_t t0 = now();
            struct timespec abs;
            clock_gettime(CLOCK_REALTIME, &abs);
            abs.tv_nsec += TIMEOUT_NS;
            if (abs.tv_nsec >= 1000000000) {
                abs.tv_sec++;
                abs.tv_nsec -= 1000000000;
            }
            int rv = sem_timedwait(&sem, &abs);
            int e = errno;
            int64_t el = now() - t0;
            note(r, rv == -1 && e == ETIMEDOUT && el >= TIMEOUT_NS - 100000,
                 "returned %ld, errno %ld", rv, e);
            break;
        }
        case 10: {
            struct pollfd p = {pfd[0], POLLIN, 0};
            TIMED(r, ppoll(&p, 1, &ts, NULL), TIMEOUT_NS);
            break;
        }
        case 11: {
            fd_set s;
            FD_ZERO(&s);
            FD_SET(pfd[0], &s);
            TIMED(r, pselect(pfd[0] + 1, &s, NULL, NULL, &ts, NULL), TIMEOUT_NS);
            break;
        }
        case 12: { /* SIGUSR2, blocked in this thread, never sent: a timeout */
            sigset_t set;
            sigemptyset(&set);
            sigaddset(&set, SIGUSR2);
            pthread_sigmask(SIG_BLOCK, &set, NULL);
            int64_t t0 = now();
            int rv = sigtimedwait(&set, NULL, &ts);
            int e = errno;
            int64_t el = now() - t0;
            note(r, rv == -1 && e == EAGAIN && el >= TIMEOUT_NS, "returned %ld, errno %ld", rv, e);
            break;
        }
        case 13: { /* a receive timeout: EAGAIN after it, never EINTR */
            int64_t t0 = now();
            int rv = accept(lfd, NULL, NULL);
            int e = errno;
            int64_t el = now() - t0;
            note(r, rv == -1 && (e == EAGAIN || e == EWOULDBLOCK) && el >= TIMEOUT_NS,
                 "returned %ld, errno %ld", rv, e);
            break;
        }
        }
    }
    return NULL;
}

/* The pipe: the writer sends one byte every 2 ms, then 1 MiB at once; the reader
 * blocks in read() for each byte and then drains the big write slowly in 64 KiB
 * reads. A read returns exactly 1 byte; the big write returns its full length. */
static int bigpipe[2];
static void *pipe_writer(void *arg)
{
    (void)arg;
    static char big[1 << 20];
    for (int i = 0; i < ROUNDS; i++) {
        struct timespec ts = {0, TIMEOUT_NS};
        nanosleep(&ts, NULL);
        burn_cpu_us(700);
        errno = 0;
        ssize_t w = write(bigpipe[1], "x", 1);
        note(&res[9], w == 1, "small write returned %ld (errno %ld)", (long)w, errno);
    }
    for (int k = 0; k < 8; k++) {
        errno = 0;
        ssize_t w = write(bigpipe[1], big, sizeof(big));
        note(&res[9], w == (ssize_t)sizeof(big), "1 MiB write returned %ld (errno %ld)", (long)w,
             errno);
    }
    close(bigpipe[1]); /* the reader drains up to end of file */
    return NULL;
}

static void *pipe_reader(void *arg)
{
    (void)arg;
    char c;
    for (int i = 0; i < ROUNDS; i++) {
        burn_cpu_us(300);
        errno = 0;
        ssize_t n = read(bigpipe[0], &c, 1);
        note(&res[8], n == 1, "read returned %ld (errno %ld)", (long)n, errno);
    }
    static char buf[1 << 16];
    for (;;) {
        burn_cpu_us(700);
        errno = 0;
        ssize_t n = read(bigpipe[0], buf, sizeof(buf));
        if (n == 0) break;
        note(&res[8], n > 0, "drain read returned %ld (errno %ld)", (long)n, errno);
        if (n < 0 && errno != EINTR) break;
    }
    return NULL;
}

/* The same over a stream socket pair: send/recv, 1-byte messages read with
 * MSG_WAITALL into a 1-byte buffer, then 1 MiB sends received with MSG_WAITALL in
 * 64 KiB pieces: each returns exactly its length. */
static int sockp[2];
static void *sock_sender(void *arg)
{
    (void)arg;
    static char big[1 << 20];
    for (int i = 0; i < ROUNDS; i++) {
        struct timespec ts = {0, TIMEOUT_NS};
        nanosleep(&ts, NULL);
        burn_cpu_us(700);
        errno = 0;
        ssize_t w = send(sockp[1], "x", 1, 0);
        note(&res[15], w == 1, "small send returned %ld (errno %ld)", (long)w, errno);
    }
    for (int k = 0; k < 8; k++) {
        errno = 0;
        ssize_t w = send(sockp[1], big, sizeof(big), 0);
        note(&res[15], w == (ssize_t)sizeof(big), "1 MiB send returned %ld (errno %ld)", (long)w,
             errno);
    }
    shutdown(sockp[1], SHUT_WR);
    return NULL;
}

static void *sock_receiver(void *arg)
{
    (void)arg;
    char c;
    for (int i = 0; i < ROUNDS; i++) {
        burn_cpu_us(300);
        errno = 0;
        ssize_t n = recv(sockp[0], &c, 1, 0);
        note(&res[14], n == 1, "recv returned %ld (errno %ld)", (long)n, errno);
    }
    static char buf[1 << 16];
    for (int k = 0; k < 8 * 16; k++) {
        burn_cpu_us(700);
        errno = 0;
        ssize_t n = recv(sockp[0], buf, sizeof(buf), MSG_WAITALL);
        note(&res[14], n == (ssize_t)sizeof(buf), "MSG_WAITALL recv returned %ld (errno %ld)",
             (long)n, errno);
        if (n <= 0) break;
    }
    return NULL;
}

static void *busy(void *arg)
{
    (void)arg;
    unsigned long x = 0;
    while (!done)
        for (int i = 0; i < 100000; i++)
            x += (unsigned long)i ^ (x >> 3);
    prog_sink = x;
    return NULL;
}

int main(void)
{
    if (pipe(bigpipe) != 0) return 2;
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sockp) != 0) return 2;
    pthread_t b, t[NTIMED + NTIMED2], w, r, sw, sr;
    pthread_create(&b, NULL, busy, NULL);
    for (int i = 0; i < NTIMED + NTIMED2; i++)
        pthread_create(&t[i], NULL, timed_calls,
                       (void *)(intptr_t)(i < NTIMED ? i : 10 + (i - NTIMED)));
    pthread_create(&w, NULL, pipe_writer, NULL);
    pthread_create(&r, NULL, pipe_reader, NULL);
    pthread_create(&sw, NULL, sock_sender, NULL);
    pthread_create(&sr, NULL, sock_receiver, NULL);
    for (int i = 0; i < NTIMED + NTIMED2; i++)
        pthread_join(t[i], NULL);
    pthread_join(w, NULL);
    pthread_join(r, NULL);
    pthread_join(sw, NULL);
    pthread_join(sr, NULL);
    done = 1;
    pthread_join(b, NULL);
    for (size_t i = 0; i < sizeof(res) / sizeof(res[0]); i++)
        printf("%s calls=%d bad=%d %s\n", res[i].kind, res[i].calls, res[i].bad,
               res[i].bad ? res[i].first : "");
    return 0;
}
