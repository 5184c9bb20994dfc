/* Many threads alive at once: N threads, each working US microseconds of CPU and then
 * waiting until all N exist and have worked, so that every one of them is alive at the
 * same moment. Prints "thread_cpu_ms X" (the threads' CPU time on their own clocks,
 * added up) and "alive N" (how many were alive at once).
 *
 *   prog_livethreads N US */
#include "burn.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static long us;
static _Atomic uint64_t total_ns;
static _Atomic int alive;
static pthread_barrier_t all;

static void *run(void *arg)
{
    (void)arg;
    uint64_t t0 = burn_thread_cpu_ns();
    burn_cpu_us(us);
    atomic_fetch_add(&total_ns, burn_thread_cpu_ns() - t0);
    atomic_fetch_add(&alive, 1);
    pthread_barrier_wait(&all); /* every thread is alive here */
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    int n = atoi(argv[1]);
    us = atol(argv[2]);
    pthread_t *t = calloc((size_t)n, sizeof *t);
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 128 * 1024);
    pthread_barrier_init(&all, NULL, (unsigned)n + 1);
    burn_cpu_us(10); /* binds the clock's PLT entry before the first thread */
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], &a, run, NULL) != 0) {
            fprintf(stderr, "pthread_create failed at %d\n", i);
            return 3;
        }
    pthread_barrier_wait(&all);
    int seen = atomic_load(&alive);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    printf("thread_cpu_ms %.1f\nalive %d\n", (double)atomic_load(&total_ns) / 1e6, seen);
    return 0;
}
