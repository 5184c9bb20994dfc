/* 2,000 threads created and joined eight at a time; every 50th burns 50 ms of CPU,
 * the others return at once. Prints the tids of the long threads ("long <tid>"), and
 * the open file descriptors and VmSize (KiB) before and after ("fds a b", "vm a b"). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "burn.h"
#include "procself.h"

#define THREADS 2000
static pid_t long_tids[THREADS / 50 + 1];

static void *run(void *arg)
{
    intptr_t i = (intptr_t)arg;
    if (i % 50 == 0) {
        long_tids[i / 50] = (pid_t)syscall(SYS_gettid);
        burn_cpu_us(50000);
    }
    return NULL;
}

/* Open descriptors, the fewest of five counts 2 ms apart: the runtime's own thread
 * opens a /proc file for a moment now and then (a waiting thread's system call, the
 * mappings), which a single count can catch; a leaked descriptor is in every count. */
static int fds_settled(void)
{
    int fewest = proc_entries("/proc/self/fd");
    for (int i = 0; i < 4; i++) {
        struct timespec gap = {0, 2000000};
        nanosleep(&gap, NULL);
        int n = proc_entries("/proc/self/fd");
        fewest = n < fewest ? n : fewest;
    }
    return fewest;
}

int main(void)
{
    /* Warm up: glibc's stack cache and stdio settle before the first measurement. */
    pthread_t t[8];
    for (int k = 0; k < 8; k++)
        pthread_create(&t[k], NULL, run, (void *)(intptr_t)1);
    for (int k = 0; k < 8; k++)
        pthread_join(t[k], NULL);
    struct timespec settle = {0, 200000000};
    nanosleep(&settle, NULL);
    int fd0 = fds_settled();
    long vm0 = proc_vmsize_kb();
    for (int i = 0; i < THREADS; i += 8) {
        for (int k = 0; k < 8; k++)
            pthread_create(&t[k], NULL, run, (void *)(intptr_t)(i + k));
        for (int k = 0; k < 8; k++)
            pthread_join(t[k], NULL);
    }
    /* An engine may release what a thread held a little after it exited (the perf
     * engine closes its events when it drains, every 20 ms): wait for that, here and
     * before the first measurement. */
    nanosleep(&settle, NULL);
    for (int i = 0; i < THREADS / 50; i++)
        printf("long %d\n", (int)long_tids[i]);
    printf("fds %d %d\nvm %ld %ld\n", fd0, fds_settled(), vm0, proc_vmsize_kb());
    return 0;
}
