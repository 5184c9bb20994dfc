/* prog_sigframe SECONDS — most of its CPU time is spent inside its own SIGALRM
 * handler, which interrupts spin_outside(); a walk through the signal frame
 * (__restore_rt) must show in_handler <- on_alarm <- (signal frame) <- spin_outside
 * <- main. Built without frame pointers. */
#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

#define KEEP() __asm__ volatile("" ::: "memory")

static volatile unsigned long sink;
static volatile int stop;

__attribute__((noinline)) static void in_handler(void)
{
    for (int i = 0; i < 600000; i++) sink += (unsigned long)i * 7; /* a tenth of the period */
    KEEP();
}

static void on_alarm(int sig)
{
    (void)sig;
    in_handler();
    KEEP();
}

__attribute__((noinline)) static void spin_outside(double seconds)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        for (int i = 0; i < 1000; i++) sink += (unsigned long)i;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
    KEEP();
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    /* Every 2.137 ms of wall time; the handler takes a part of it. Not a multiple of the
     * kernel's tick: the signal engine's timers are read at the tick, and would find
     * the handler at one phase of a period that is (docs/DESIGN.md, "Sampler"). */
    struct itimerval it = {{0, 2137}, {0, 2137}};
    setitimer(ITIMER_REAL, &it, NULL);
    spin_outside(secs);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    KEEP();
    return 0;
}
