/* A program that uses signals as its own, for the signal engine to stay out of its way:
 *
 *   prog_signals dfl     SIGPROF set to SIG_DFL (signal and sigaction), then works 300 ms
 *   prog_signals itimer  its own SIGPROF handler and setitimer(ITIMER_PROF, 5 ms), works
 *                        500 ms of CPU; prints "got N strays M cpu_ms C": M counts signals
 *                        that did not come from its timer (si_code other than SI_KERNEL)
 *   prog_signals rt      works 200 ms, then installs a handler for SIGRTMAX-4 (the signal
 *                        engine's by default), sends it to itself 50 times with sigqueue
 *                        (value 7) and works 600 ms; prints "got N strays M"
 *   prog_signals mask    a thread that blocks every signal works 1200 ms of CPU, then
 *                        prints "pending N" (signals pending for it, sigpending)
 *   prog_signals wait    a thread that blocks every signal works 500 ms in 1 ms steps,
 *                        asking after each whether a signal came: sigtimedwait(every
 *                        signal, no wait) and a non-blocking signalfd for every signal;
 *                        prints "waited N signalfd M" (signals it got each way)
 * Each exits 0 unprofiled. */
#include "burn.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/time.h>
#include <unistd.h>

static _Atomic int got, strays;

static void on_prof(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    if (si->si_code == SI_KERNEL)
        got++;
    else
        strays++;
}

static void on_rt(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    if (si->si_code == SI_QUEUE && si->si_value.sival_int == 7 && si->si_pid == getpid())
        got++;
    else
        strays++;
}

__attribute__((noinline)) static void work_ms(int ms)
{
    for (int i = 0; i < ms; i++)
        burn_cpu_us(1000);
}

static void *masked(void *arg)
{
    (void)arg;
    sigset_t all, pend;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    work_ms(1200);
    sigpending(&pend);
    int n = 0;
    for (int s = 1; s < NSIG; s++)
        n += sigismember(&pend, s) == 1;
    printf("pending %d\n", n);
    return NULL;
}

static void *waiter(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    int fd = signalfd(-1, &all, SFD_NONBLOCK | SFD_CLOEXEC);
    int waited = 0, viafd = 0;
    struct timespec zero = {0, 0};
    for (int i = 0; i < 500; i++) {
        work_ms(1);
        siginfo_t si;
        if (sigtimedwait(&all, &si, &zero) > 0) waited++;
        struct signalfd_siginfo fi;
        if (fd >= 0 && read(fd, &fi, sizeof fi) == (ssize_t)sizeof fi) viafd++;
    }
    printf("waited %d signalfd %d\n", waited, fd < 0 ? -1 : viafd);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    if (strcmp(argv[1], "dfl") == 0) {
        signal(SIGPROF, SIG_DFL);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = SIG_DFL;
        sigaction(SIGPROF, &sa, NULL);
        work_ms(300);
        return 0;
    }
    if (strcmp(argv[1], "itimer") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_prof;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigaction(SIGPROF, &sa, NULL);
        struct itimerval it = {{0, 5000}, {0, 5000}};
        setitimer(ITIMER_PROF, &it, NULL);
        uint64_t t0 = burn_thread_cpu_ns();
        work_ms(500);
        struct itimerval off = {{0, 0}, {0, 0}};
        setitimer(ITIMER_PROF, &off, NULL);
        printf("got %d strays %d cpu_ms %d\n", got, strays,
               (int)((burn_thread_cpu_ns() - t0) / 1000000));
        return 0;
    }
    if (strcmp(argv[1], "rt") == 0) {
        work_ms(200);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_rt;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigaction(SIGRTMAX - 4, &sa, NULL);
        union sigval v = {.sival_int = 7};
        for (int i = 0; i < 50; i++)
            sigqueue(getpid(), SIGRTMAX - 4, v);
        work_ms(600);
        printf("got %d strays %d\n", got, strays);
        return 0;
    }
    if (strcmp(argv[1], "mask") == 0 || strcmp(argv[1], "wait") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, argv[1][0] == 'm' ? masked : waiter, NULL);
        pthread_join(t, NULL);
        return 0;
    }
    return 2;
}
