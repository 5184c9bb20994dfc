/* A long run made short: four threads each alternate share_a() (1 ms of CPU) and
 * share_b() (3 ms of CPU) until each has used `ms` milliseconds of CPU (argv[1],
 * default 1500), so running samples fall 1:3 between them. Prints the four threads'
 * CPU nanoseconds in all, measured by each thread's own clock. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "burn.h"

#define THREADS 4

static long budget_us = 1500000;
static uint64_t used_ns[THREADS];

__attribute__((noinline)) void share_a(void)
{
    burn_cpu_us(1000);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void share_b(void)
{
    burn_cpu_us(3000);
    __asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
    long i = (long)arg;
    uint64_t start = burn_thread_cpu_ns();
    while (burn_thread_cpu_ns() - start < (uint64_t)budget_us * 1000u) {
        share_a();
        share_b();
    }
    used_ns[i] = burn_thread_cpu_ns();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1) budget_us = atol(argv[1]) * 1000;
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    uint64_t total = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        total += used_ns[i];
    }
    printf("%llu\n", (unsigned long long)total);
    return 0;
}
