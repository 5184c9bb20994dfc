/* The program's own signals interrupt its calls as without a profiler: a worker thread
 * computes (so the sampler signals it too), then blocks in one call for up to 1 s
 * while a second thread sends it SIGUSR1 (pthread_kill) 3 ms later and every 5 ms
 * until the call returned, or, for SIGALRM, a timer of the process (setitimer
 * ITIMER_REAL, every other thread blocks SIGALRM) fires 3 ms later and every 5 ms. The handlers are installed without SA_RESTART, except
 * for the "restart" kinds (SA_RESTART: a read is restarted, a sleep is not). Prints
 * one line per kind: "<kind> eintr=N ok=N early=N" where eintr counts -1/EINTR (or
 * sleep's unslept seconds, nanosleep's rem), ok a full wait, early a return before
 * the signal. The test compares the lines with an unprofiled run's.
 *
 *   prog_ownsig ROUNDS */
#include "burn.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

enum { K_NANOSLEEP, K_POLL, K_EPOLL, K_SELECT, K_READ, K_SEMWAIT, K_PAUSE, K_READ_RESTART,
       K_NANOSLEEP_RESTART, K_ALRM_NANOSLEEP, K_ALRM_READ, NKIND };
static const char *kind_name[NKIND] = {"usr1_nanosleep", "usr1_poll",    "usr1_epoll_wait",
                                       "usr1_select",    "usr1_read",    "usr1_sem_wait",
                                       "usr1_pause",     "usr1_read_sa_restart",
                                       "usr1_nanosleep_sa_restart",      "alrm_nanosleep",
                                       "alrm_read"};
static int eintr[NKIND], ok[NKIND], early[NKIND];
static volatile sig_atomic_t got;
static pthread_t worker_t;
static int pfd[2];

static void on_sig(int sig)
{
    (void)sig;
    got++;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void handler(int sig, int restart)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sig;
    sa.sa_flags = restart ? SA_RESTART : 0;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

/* One blocking call of `kind`; 1 when it came back interrupted. */
static int call(int kind, int ep, sem_t *sem)
{
    char c;
    struct timespec ts = {1, 0}, rem = {0, 0};
    switch (kind) {
    case K_NANOSLEEP:
    case K_NANOSLEEP_RESTART:
    case K_ALRM_NANOSLEEP:
        return nanosleep(&ts, &rem) == -1 && errno == EINTR && rem.tv_sec + rem.tv_nsec > 0;
    case K_POLL: {
        struct pollfd p = {pfd[0], POLLIN, 0};
        return poll(&p, 1, 1000) == -1 && errno == EINTR;
    }
    case K_EPOLL: {
        struct epoll_event ev;
        return epoll_wait(ep, &ev, 1, 1000) == -1 && errno == EINTR;
    }
    case K_SELECT: {
        fd_set s;
        FD_ZERO(&s);
        FD_SET(pfd[0], &s);
        struct timeval tv = {1, 0};
        return select(pfd[0] + 1, &s, NULL, NULL, &tv) == -1 && errno == EINTR;
    }
    case K_READ:
    case K_ALRM_READ:
        return read(pfd[0], &c, 1) == -1 && errno == EINTR;
    case K_READ_RESTART: { /* restarted: the byte the helper writes after 30 ms arrives */
        ssize_t n = read(pfd[0], &c, 1);
        return n == 1 ? 0 : -1;
    }
    case K_SEMWAIT: {
        struct timespec abs;
        clock_gettime(CLOCK_REALTIME, &abs);
        abs.tv_sec += 1;
        return sem_timedwait(sem, &abs) == -1 && errno == EINTR;
    }
    case K_PAUSE:
        return pause() == -1 && errno == EINTR;
    }
    return -1;
}

static volatile int cur_kind = -1, round_go, round_done, round_id, round_acked;

/* Sends SIGUSR1 to the worker 3 ms into each round and every 5 ms after that until the
 * round's call returned (a signal that came before the call cannot end it); for the
 * SA_RESTART read also writes the byte that ends it 30 ms in. */
static void *sender(void *arg)
{
    (void)arg;
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alrm, NULL);
    for (;;) {
        while (!round_go)
            usleep(100);
        round_go = 0;
        int k = cur_kind, id = round_id;
        if (k < 0) return NULL;
        struct timespec d = {0, 3000000};
        nanosleep(&d, NULL);
        int64_t t0 = now_ns();
        int wrote = 0;
        while (!round_done) {
            if (k != K_ALRM_NANOSLEEP && k != K_ALRM_READ) /* the timer sends those */
                pthread_kill(worker_t, SIGUSR1);
            if (k == K_READ_RESTART && !wrote && now_ns() - t0 > 27000000) {
                if (write(pfd[1], "x", 1) != 1) abort();
                wrote = 1;
            }
            struct timespec d2 = {0, 5000000};
            nanosleep(&d2, NULL);
        }
        round_acked = id;
    }
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 10;
    if (pipe(pfd) != 0) return 2;
    worker_t = pthread_self();
    pthread_t s;
    pthread_create(&s, NULL, sender, NULL); /* blocks SIGALRM itself */
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN};
    epoll_ctl(ep, EPOLL_CTL_ADD, pfd[0], &ev);
    sem_t sem;
    sem_init(&sem, 0, 0);
    for (int k = 0; k < NKIND; k++) {
        int restart = k == K_READ_RESTART || k == K_NANOSLEEP_RESTART;
        handler(SIGUSR1, restart);
        handler(SIGALRM, 0);
        for (int i = 0; i < rounds; i++) {
            burn_cpu_us(3000);
            got = 0;
            cur_kind = k;
            if (k == K_ALRM_NANOSLEEP || k == K_ALRM_READ) {
                struct itimerval it = {{0, 5000}, {0, 3000}};
                setitimer(ITIMER_REAL, &it, NULL);
            }
            round_done = 0;
            round_id++;
            round_go = 1;
            int64_t t0 = now_ns();
            int r = call(k, ep, &sem);
            int64_t el = now_ns() - t0;
            struct itimerval off = {{0, 0}, {0, 0}};
            setitimer(ITIMER_REAL, &off, NULL);
            round_done = 1;
            while (round_acked != round_id) /* the sender is done with this round */
                usleep(100);
            if (el < 2000000 || !got)
                early[k]++;
            else if (r == 1)
                eintr[k]++;
            else if (r == 0)
                ok[k]++;
        }
    }
    cur_kind = -1;
    round_go = 1;
    pthread_join(s, NULL);
    for (int k = 0; k < NKIND; k++)
        printf("%s eintr=%d ok=%d early=%d\n", kind_name[k], eintr[k], ok[k], early[k]);
    return 0;
}
