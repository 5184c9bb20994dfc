/* Many short threads: TOTAL threads, at most ALIVE at once, each working US
 * microseconds of CPU and returning. Prints "thread_cpu_ms N": the CPU time the threads
 * measured on their own clocks, added up.
 *
 *   prog_manythreads TOTAL US ALIVE */
#include "burn.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static long us;
static _Atomic uint64_t total_ns;

static void *run(void *arg)
{
    (void)arg;
    uint64_t t0 = burn_thread_cpu_ns();
    burn_cpu_us(us);
    atomic_fetch_add(&total_ns, burn_thread_cpu_ns() - t0);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) return 2;
    int total = atoi(argv[1]), alive = atoi(argv[3]);
    us = atol(argv[2]);
    pthread_t *t = calloc((size_t)alive, sizeof *t);
    burn_cpu_us(10); /* binds the clock's PLT entry before the first thread */
    for (int done = 0; done < total;) {
        int n = total - done < alive ? total - done : alive;
        for (int i = 0; i < n; i++)
            if (pthread_create(&t[i], NULL, run, NULL) != 0) return 3;
        for (int i = 0; i < n; i++)
            pthread_join(t[i], NULL);
        done += n;
    }
    printf("thread_cpu_ms %.1f\n", (double)atomic_load(&total_ns) / 1e6);
    return 0;
}
