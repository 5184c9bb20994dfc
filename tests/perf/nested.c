/* Threads made by threads, and one the runtime never hears of: main creates a thread,
 * which creates one, which creates one (each burns CPU, then joins its child); and a
 * raw clone() thread, which no pthread_create wrapper sees, burns CPU alongside.
 *
 *   nested MS OUT.json
 *
 * Each pthread burns MS ms of CPU; OUT.json lists their tids, CPU ns and context
 * switches, and the raw thread's tid and CPU ns. */
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../runtime/burn.h"

#define DEPTH 3

static long ms;
static pid_t tids[DEPTH];
static uint64_t cpu[DEPTH];
static long switches[DEPTH];

static void *level(void *arg)
{
    long i = (long)arg;
    tids[i] = (pid_t)syscall(SYS_gettid);
    pthread_t child;
    if (i + 1 < DEPTH && pthread_create(&child, NULL, level, (void *)(i + 1)) != 0) exit(2);
    burn_cpu_us(ms * 1000);
    cpu[i] = burn_thread_cpu_ns();
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    switches[i] = ru.ru_nvcsw + ru.ru_nivcsw;
    if (i + 1 < DEPTH) pthread_join(child, NULL);
    return NULL;
}

/* The raw thread shares this process's TLS pointer: it calls nothing that writes
 * thread-local state, and leaves through the exit system call. */
static volatile pid_t raw_tid;
static volatile uint64_t raw_cpu;
static volatile int raw_done; /* cleared by the kernel at the raw thread's exit */

static int raw_main(void *arg)
{
    (void)arg;
    raw_tid = (pid_t)syscall(SYS_gettid);
    struct timespec ts;
    uint64_t end = 0, now;
    do {
        for (volatile int k = 0; k < 100000; k++)
            ;
        syscall(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &ts);
        now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
        if (!end) end = now + (uint64_t)ms * 1000000ull;
    } while (now < end);
    raw_cpu = now;
    syscall(SYS_exit, 0);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: nested MS OUT.json\n");
        return 2;
    }
    ms = atol(argv[1]);
    static char stack[1 << 16] __attribute__((aligned(16)));
    raw_done = 1;
    int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
                CLONE_CHILD_CLEARTID;
    if (clone(raw_main, stack + sizeof stack, flags, NULL, NULL, NULL, (pid_t *)&raw_done) < 0)
        return 2;
    pthread_t first;
    if (pthread_create(&first, NULL, level, (void *)0) != 0) return 2;
    pthread_join(first, NULL);
    while (raw_done)
        syscall(SYS_futex, &raw_done, FUTEX_WAIT, 1, NULL, NULL, 0);
    FILE *f = fopen(argv[2], "w");
    if (!f) return 2;
    fprintf(f, "{\"threads\": [");
    for (int i = 0; i < DEPTH; i++)
        fprintf(f, "%s{\"tid\": %d, \"cpu_ns\": %llu, \"switches\": %ld}", i ? ", " : "", tids[i],
                (unsigned long long)cpu[i], switches[i]);
    fprintf(f, "], \"raw\": {\"tid\": %d, \"cpu_ns\": %llu}}\n", raw_tid,
            (unsigned long long)raw_cpu);
    return fclose(f) == 0 ? 0 : 2;
}
