/* A program whose frame-pointer register holds data while it runs, as code built
 * without frame pointers leaves it: junk_loop points rbp at a fake frame record on the
 * stack whose "return addresses" are a large value (0xff69..., past 2^63) and a small
 * one, neither in any executable mapping, and spins there. Both walkers (the signal
 * handler's, the kernel's callchain for the perf engine) follow rbp into it. The main
 * thread and one more thread do this for argv[1] ms each, then a plain loop runs. A
 * third thread blocks in read(2) with rbp the same, from its own system call
 * instruction in junk_wait, until main writes to the pipe: the waiting stacks (the
 * perf engine's switch callchains, the signal engine's copy of the stack) see it.
 *
 * usage: prog_junkfp [ms] */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Spins `iters` times with rbp = rec (the caller's frame keeps rec above our SP). */
__attribute__((noinline, noclone)) static void junk_loop(uint64_t *rec, long iters)
{
#if defined(__x86_64__)
    __asm__ volatile("push %%rbp\n\t"
                     "mov %1, %%rbp\n\t"
                     "1: dec %0\n\t"
                     "jnz 1b\n\t"
                     "pop %%rbp"
                     : "+r"(iters)
                     : "r"(rec)
                     : "memory", "cc");
#else
    (void)rec;
    for (volatile long i = 0; i < iters; i++) {
    }
#endif
}

__attribute__((noinline)) static void junk_for(long ms)
{
    /* [rec] = the next record (rec + 2), [rec+8] = a "return address" of data;
     * [rec+16] = 0 (the chain's end), [rec+24] = another one. */
    uint64_t rec[4] __attribute__((aligned(16))) = {0, 0xff69aabbccddee07ull, 0, 0x1234};
    rec[0] = (uint64_t)(uintptr_t)&rec[2];
    uint64_t end = now_ns() + (uint64_t)ms * 1000000ull;
    while (now_ns() < end)
        junk_loop(rec, 1000000);
}

__attribute__((noinline, noclone)) static long plain_for(long ms)
{
    volatile long s = 0;
    uint64_t end = now_ns() + (uint64_t)ms * 1000000ull;
    while (now_ns() < end)
        for (int i = 0; i < 100000; i++)
            s += i % 7;
    return s;
}

static int wait_pipe[2];

/* read(wait_pipe[0], &c, 1) with rbp = rec, the system call made right here. */
__attribute__((noinline, noclone)) static long junk_wait(uint64_t *rec)
{
    char c;
    long r;
#if defined(__x86_64__)
    __asm__ volatile("push %%rbp\n\t"
                     "mov %[rec], %%rbp\n\t"
                     "syscall\n\t"
                     "pop %%rbp"
                     : "=a"(r)
                     : "a"((long)SYS_read), "D"((long)wait_pipe[0]), "S"(&c), "d"(1L),
                       [rec] "r"(rec)
                     : "rcx", "r11", "memory");
#else
    (void)rec;
    r = read(wait_pipe[0], &c, 1);
#endif
    return r;
}

static void *waiter(void *arg)
{
    (void)arg;
    uint64_t rec[4] __attribute__((aligned(16))) = {0, 0xff69aabbccddee07ull, 0, 0x1234};
    rec[0] = (uint64_t)(uintptr_t)&rec[2];
    junk_wait(rec);
    return NULL;
}

static void *worker(void *arg)
{
    junk_for((long)(intptr_t)arg);
    return NULL;
}

int main(int argc, char **argv)
{
    long ms = argc > 1 ? atol(argv[1]) : 300;
    pthread_t t, w;
    if (pipe(wait_pipe)) return 1;
    pthread_create(&w, NULL, waiter, NULL);
    pthread_create(&t, NULL, worker, (void *)(intptr_t)ms);
    junk_for(ms);
    pthread_join(t, NULL);
    if (write(wait_pipe[1], "x", 1) != 1) return 1;
    pthread_join(w, NULL);
    printf("%ld\n", plain_for(ms / 2) > 0 ? 1L : 0L);
    return 0;
}
