/* Signals that land in the heap profiler's sampling, which runs on a side stack of the
 * runtime's: the main thread allocates blocks of 16 to 80 KiB for SECONDS (at a 64 KiB
 * interval most are sampled, so a good share of its time is spent sampling) while,
 * with "handler", a SIGALRM handler runs every 250 µs and uses 192 KiB of stack. The
 * handler counts its runs, those that interrupted code whose stack pointer was not on
 * the main thread's stack (the sampling's side stack), and those that ran off that
 * stack themselves. Prints "alarms N interrupted_off N ran_off N". Exit 0.
 *
 *   prog_sigsample SECONDS [handler] */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>

#define HANDLER_STACK (192 * 1024)
#define MAIN_STACK_SPAN (8u << 20) /* the main thread's stack lies within this of main's frame */

static volatile unsigned long alarms, interrupted_off, ran_off;
static uintptr_t main_frame;

static int on_main_stack(uintptr_t a)
{
    return a < main_frame + 4096 && main_frame - a < MAIN_STACK_SPAN;
}

static uintptr_t interrupted_sp(const ucontext_t *uc)
{
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
    return (uintptr_t)uc->uc_mcontext.sp;
#else
#error "x86_64 or aarch64"
#endif
}

static void on_alarm(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)si;
    volatile char room[HANDLER_STACK]; /* what a handler may use on an 8 MiB stack */
    for (size_t i = 0; i < sizeof room; i += 512)
        room[i] = (char)i;
    alarms++;
    interrupted_off += !on_main_stack(interrupted_sp(uc));
    ran_off +=
        !on_main_stack((uintptr_t)&room[0]) || !on_main_stack((uintptr_t)&room[sizeof room - 1]);
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1;
    volatile char here = 0;
    main_frame = (uintptr_t)&here;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_alarm;
    sa.sa_flags = SA_RESTART | SA_SIGINFO;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 250}, {0, 250}};
    if (argc > 2 && strcmp(argv[2], "handler") == 0) setitimer(ITIMER_REAL, &it, NULL);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unsigned long n = 0;
    do {
        for (int i = 0; i < 1000; i++, n++) {
            volatile char *b = malloc((16 + n % 65) * 1024);
            if (b) b[0] = (char)n;
            free((void *)b);
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("alarms %lu interrupted_off %lu ran_off %lu\n", alarms, interrupted_off, ran_off);
    return 0;
}
