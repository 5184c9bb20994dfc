/* Stack a sampled thread can spare: a thread with a stack of STACK bytes (16384 is
 * PTHREAD_STACK_MIN here) recurses DEPTH frames of 512 bytes, paints the unused part of
 * its stack below the deepest frame, works 300 ms of CPU there, and prints how many bytes
 * below that frame were written meanwhile ("used_below N"): its own calls'
 * (burn_cpu_us, the clock), plus, when profiled, whatever a sampling signal takes on the
 * thread's own stack.
 *
 * With "alloc", the work is malloc and free of blocks of 4 to 68 KiB instead, 20,000
 * times: what the heap profiler's sampling (inside malloc) takes of the thread's stack.
 *
 *   prog_smallstack DEPTH STACK [alloc] */
#include "burn.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAINT 0xa5

static int depth, allocate;
static uintptr_t lo;
static long used_below = -1;

__attribute__((noinline)) static void bottom(void)
{
    volatile char here = 0;
    uintptr_t top = (uintptr_t)&here - 256; /* this frame and the calls it makes now */
    for (volatile unsigned char *p = (unsigned char *)lo + 64; (uintptr_t)p < top; p++)
        *p = PAINT;
    if (allocate) /* blocks the heap profiler samples often at a 64 KiB interval */
        for (int i = 0; i < 20000; i++) {
            volatile char *b = malloc(4096 + (size_t)(i % 64) * 1024);
            if (b) b[0] = (char)i;
            free((void *)b);
        }
    else
        for (int i = 0; i < 30; i++)
            burn_cpu_us(10000);
    const unsigned char *p = (const unsigned char *)lo + 64;
    while ((uintptr_t)p < top && *p == PAINT)
        p++;
    used_below = (uintptr_t)p >= top ? 0 : (long)((uintptr_t)&here - (uintptr_t)p);
    (void)here;
}

__attribute__((noinline)) static void frame(int n)
{
    volatile char buf[512];
    buf[0] = (char)n;
    if (n > 1)
        frame(n - 1);
    else
        bottom();
    buf[511] = buf[0];
}

static void *run(void *arg)
{
    (void)arg;
    pthread_attr_t a;
    void *addr;
    size_t size;
    pthread_getattr_np(pthread_self(), &a);
    pthread_attr_getstack(&a, &addr, &size);
    pthread_attr_destroy(&a);
    lo = (uintptr_t)addr;
    frame(depth);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3 && !(argc == 4 && strcmp(argv[3], "alloc") == 0)) return 2;
    depth = atoi(argv[1]);
    allocate = argc == 4;
    burn_cpu_us(100); /* binds the clock's PLT entry now: lazy binding saves the vector
                         registers on the stack, 3 KB here, in whichever thread calls first */
    pthread_attr_t a;
    pthread_attr_init(&a);
    if (pthread_attr_setstacksize(&a, (size_t)atol(argv[2])) != 0) return 3;
    pthread_t t;
    if (pthread_create(&t, &a, run, NULL) != 0) return 4;
    pthread_join(t, NULL);
    printf("used_below %ld\n", used_below);
    return used_below >= 0 ? 0 : 5;
}
