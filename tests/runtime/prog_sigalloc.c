/* Allocation inside signal handlers, as real programs do it: a SIGALRM handler
 * (setitimer, every 200 µs) and a SIGUSR1 handler (SA_SIGINFO; a child process sends
 * SIGUSR1 in a loop) each malloc and free small blocks (of sizes glibc serves from its
 * per-thread cache: anything else corrupts its heap even unprofiled) in a tight loop
 * while the main
 * thread allocates and frees blocks of 16 B to 300 KB for argv[1] seconds. Then a
 * SIGSEGV handler that mallocs leaves by siglongjmp, 200 times, and the main thread's
 * small blocks must still be ordinary ones: of 100 blocks of 24 bytes, the smallest
 * usable size and how many have 100 bytes or more (a block the heap profiler samples
 * lives in its region, whose usable sizes are a page or more: a few may be; one served
 * by the region because the profiler still thinks it runs in the handler, all are).
 * Prints "allocations N alarms N usr1 N segv N usable N large N", and "handler kept" when
 * sigaction reports the program's own handlers. Exit 0. */
#include <malloc.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long alarms, usr1s, segvs;
static sigjmp_buf jump;
static volatile int *volatile nowhere;

static void churn(void)
{
    for (int i = 0; i < 64; i++) {
        unsigned char *p = malloc(24 + (size_t)(i % 4) * 8);
        if (p) p[0] = (unsigned char)i;
        free(p);
    }
}

static void on_alarm(int sig)
{
    (void)sig;
    churn();
    alarms++;
}

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)si, (void)uc;
    churn();
    usr1s++;
}

static void on_segv(int sig)
{
    (void)sig;
    void *p = malloc(100);
    free(p);
    segvs++;
    siglongjmp(jump, 1);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 2;
    struct sigaction sa, cur;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    sa.sa_sigaction = on_usr1;
    sa.sa_flags = SA_RESTART | SA_SIGINFO;
    sigaction(SIGUSR1, &sa, NULL);
    int kept = sigaction(SIGALRM, NULL, &cur) == 0 && cur.sa_handler == on_alarm &&
               sigaction(SIGUSR1, NULL, &cur) == 0 && cur.sa_sigaction == on_usr1;

    pid_t parent = getpid(), child = fork();
    if (child == 0) {
        struct timespec gap = {0, 300000};
        while (kill(parent, SIGUSR1) == 0)
            nanosleep(&gap, NULL);
        _exit(0);
    }
    struct itimerval it = {{0, 200}, {0, 200}};
    setitimer(ITIMER_REAL, &it, NULL);
    void *keep[256] = {0};
    unsigned long n = 0;
    double end = now() + secs;
    while (now() < end) {
        for (int k = 0; k < 1000; k++, n++) {
            int j = (int)(n % 256);
            free(keep[j]);
            keep[j] = malloc(16 + (n * 7919) % 300000);
        }
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    for (int j = 0; j < 256; j++)
        free(keep[j]);

    signal(SIGSEGV, on_segv);
    for (int i = 0; i < 200; i++)
        if (!sigsetjmp(jump, 1)) *nowhere = 1;
    size_t usable = 0;
    int large = 0;
    for (int i = 0; i < 100; i++) {
        void *p = malloc(24);
        size_t u = malloc_usable_size(p);
        if (u < usable || !usable) usable = u;
        large += u >= 100;
        free(p);
    }
    printf("allocations %lu alarms %lu usr1 %lu segv %lu usable %zu large %d\n", n, alarms,
           usr1s, segvs, usable, large);
    if (kept) printf("handler kept\n");
    return 0;
}
