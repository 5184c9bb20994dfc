/* A program that would notice any signal: it counts every catchable signal it could be
 * sent by a profiler (handlers installed without SA_RESTART, so a signal would also
 * surface as EINTR), and checks that its sleeps, polls and reads are never cut short.
 * One thread burns CPU, one blocks in nanosleep, poll and read.
 *
 *   quiet SECONDS OUT.json      exit 0 when nothing was noticed
 *
 * OUT.json: signals counted, EINTRs, short waits, the two threads' tids and the
 * address ranges of the burning and the blocking code (each in its own section). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t signals_seen;
static int eintr, short_waits;
static volatile int stop;
static pid_t burn_tid, wait_tid;
static uint64_t burn_cpu_ns, wait_start_ns, wait_end_ns;
static long burn_switches;       /* the burning thread's context switches */
static int pipefd[2], silent[2]; /* silent: never written, poll times out */

static void count_signal(int sig)
{
    (void)sig;
    signals_seen++;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline, section("quiet_burn"))) static void *burner(void *p)
{
    (void)p;
    burn_tid = (pid_t)syscall(SYS_gettid);
    uint64_t x = 1;
    while (!stop) {
        for (int i = 0; i < 100000; i++) {
            x = x * 6364136223846793005ull + (uint64_t)i;
            __asm__ volatile("" : "+r"(x));
        }
    }
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    burn_cpu_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    burn_switches = ru.ru_nvcsw + ru.ru_nivcsw;
    return (void *)(uintptr_t)(x & 1);
}
extern const char __start_quiet_burn[], __stop_quiet_burn[];

/* The blocking calls, one call below the function whose range the test checks: a
 * frame-pointer walk from a system call sees the caller of the function that called
 * libc, not that function itself. */
__attribute__((noinline)) static void block_once(int round)
{
    uint64_t t0 = now_ns();
    if (round % 3 == 0) {
        struct timespec ts = {0, 5000000};
        if (nanosleep(&ts, NULL) != 0 && errno == EINTR) eintr++;
        if (now_ns() - t0 < 5000000) short_waits++;
    } else if (round % 3 == 1) {
        struct pollfd pfd = {silent[0], POLLIN, 0};
        int r = poll(&pfd, 1, 4);
        if (r < 0 && errno == EINTR) eintr++;
        if (r == 0 && now_ns() - t0 < 4000000) short_waits++;
    } else {
        char c;
        ssize_t n = read(pipefd[0], &c, 1); /* the main thread writes one byte every 3 ms */
        if (n < 0 && errno == EINTR)
            eintr++;
        else if (n != 1)
            short_waits++;
    }
    __asm__ volatile("" ::: "memory"); /* keep the call from becoming a tail call */
}

__attribute__((noinline, section("quiet_wait"))) static void *waiter(void *p)
{
    (void)p;
    wait_tid = (pid_t)syscall(SYS_gettid);
    wait_start_ns = now_ns();
    for (int round = 0; !stop; round++)
        block_once(round);
    wait_end_ns = now_ns();
    __asm__ volatile("" ::: "memory");
    return NULL;
}
extern const char __start_quiet_wait[], __stop_quiet_wait[];

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: quiet SECONDS OUT.json\n");
        return 2;
    }
    double secs = atof(argv[1]);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = count_signal; /* no SA_RESTART: a signal would show as EINTR */
    const int sigs[] = {SIGPROF, SIGVTALRM, SIGALRM, SIGIO, SIGURG, SIGUSR1, SIGUSR2, SIGTRAP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
    for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
        sigaction(s, &sa, NULL);
    if (pipe(pipefd) != 0 || pipe(silent) != 0) return 1;
    pthread_t a, b;
    pthread_create(&a, NULL, burner, NULL);
    pthread_create(&b, NULL, waiter, NULL);
    uint64_t end = now_ns() + (uint64_t)(secs * 1e9);
    while (now_ns() < end) {
        struct timespec ts = {0, 3000000};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            eintr++;
        if (write(pipefd[1], "x", 1) != 1) return 1;
    }
    stop = 1;
    if (write(pipefd[1], "x", 1) != 1) /* wake a last read */
        return 1;
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    FILE *f = fopen(argv[2], "w");
    if (!f) return 1;
    fprintf(f,
            "{\"signals\":%d,\"eintr\":%d,\"short_waits\":%d,\"burn_tid\":%d,\"wait_tid\":%d,"
            "\"burn_cpu_ns\":%llu,\"burn_switches\":%ld,\"wait_ns\":%llu,"
            "\"burn\":[%llu,%llu],\"wait\":[%llu,%llu]}\n",
            (int)signals_seen, eintr, short_waits, (int)burn_tid, (int)wait_tid,
            (unsigned long long)burn_cpu_ns, burn_switches,
            (unsigned long long)(wait_end_ns - wait_start_ns),
            (unsigned long long)(uintptr_t)__start_quiet_burn,
            (unsigned long long)(uintptr_t)__stop_quiet_burn,
            (unsigned long long)(uintptr_t)__start_quiet_wait,
            (unsigned long long)(uintptr_t)__stop_quiet_wait);
    fclose(f);
    return signals_seen || eintr || short_waits;
}
