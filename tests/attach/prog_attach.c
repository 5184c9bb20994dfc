/* A program to sample from outside (tests/attach/test_attach.py): two "worker"
 * threads each call alpha (3 units of work) and beta (1 unit) in turn for SECONDS;
 * at 0.8 s main makes a "late" thread that runs gamma for 1 s. Each thread times its
 * functions on its own CPU clock, and the program prints the totals at its end, the
 * truth the samples are held to: "alpha_ns beta_ns gamma_ns". */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;
static double secs = 4;
static uint64_t alpha_ns, beta_ns, gamma_ns;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static uint64_t ns(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

__attribute__((noinline)) static void burn(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++) sink += i * 7;
}
/* Not tail calls: each keeps its frame while burn runs. */
__attribute__((noinline)) void alpha(void) { burn(300000); sink++; }
__attribute__((noinline)) void beta(void) { burn(100000); sink++; }
__attribute__((noinline)) void gamma_(void) { burn(100000); sink++; }

static void *worker(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "worker");
    uint64_t a = 0, b = 0, end = ns(CLOCK_MONOTONIC) + (uint64_t)(secs * 1e9);
    while (ns(CLOCK_MONOTONIC) < end) {
        uint64_t t0 = ns(CLOCK_THREAD_CPUTIME_ID);
        alpha();
        uint64_t t1 = ns(CLOCK_THREAD_CPUTIME_ID);
        beta();
        uint64_t t2 = ns(CLOCK_THREAD_CPUTIME_ID);
        a += t1 - t0, b += t2 - t1;
    }
    pthread_mutex_lock(&mu);
    alpha_ns += a, beta_ns += b;
    pthread_mutex_unlock(&mu);
    return NULL;
}

static void *late(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "late");
    uint64_t g = 0, end = ns(CLOCK_MONOTONIC) + 1000000000ull;
    while (ns(CLOCK_MONOTONIC) < end) {
        uint64_t t0 = ns(CLOCK_THREAD_CPUTIME_ID);
        gamma_();
        g += ns(CLOCK_THREAD_CPUTIME_ID) - t0;
    }
    pthread_mutex_lock(&mu);
    gamma_ns += g;
    pthread_mutex_unlock(&mu);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1) secs = atof(argv[1]);
    pthread_t w[2], l;
    for (int i = 0; i < 2; i++) pthread_create(&w[i], NULL, worker, NULL);
    usleep(800000);
    pthread_create(&l, NULL, late, NULL);
    pthread_join(l, NULL);
    for (int i = 0; i < 2; i++) pthread_join(w[i], NULL);
    printf("%llu %llu %llu\n", (unsigned long long)alpha_ns, (unsigned long long)beta_ns,
           (unsigned long long)gamma_ns);
    return 0;
}
