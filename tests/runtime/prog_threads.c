/* A multi-threaded program with fixed work: N worker threads and the main thread
 * each spin in their own call chain (work -> descend (recursive) -> spin). Prints
 * nothing; exits 0. Usage: prog_threads [threads] [units] */
#include <pthread.h>
#include <stdlib.h>

volatile unsigned long prog_sink;

__attribute__((noinline)) void spin(unsigned long n)
{
    unsigned long x = 0;
    for (unsigned long i = 0; i < n; i++)
        x += i ^ (x >> 3);
    prog_sink += x;
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void descend(int depth, unsigned long n)
{
    if (depth > 0)
        descend(depth - 1, n);
    else
        spin(n);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void work(unsigned long units)
{
    for (unsigned long u = 0; u < units; u++)
        descend(4, 1000000);
    __asm__ volatile("" ::: "memory");
}

static unsigned long units = 100;

static void *worker(void *arg)
{
    (void)arg;
    work(units);
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 3;
    if (argc > 2) units = strtoul(argv[2], NULL, 10);
    pthread_t t[64];
    if (n > 64) n = 64;
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    work(units);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    return 0;
}
