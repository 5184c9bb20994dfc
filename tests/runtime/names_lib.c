/* The library prog_names loads from a directory whose name is not UTF-8. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long names_sink;

__attribute__((noinline)) void names_burn(unsigned us)
{
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    do {
        for (int i = 0; i < 10000; i++)
            names_sink += (unsigned long)i * 7;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    } while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < (long)us);
}

static void *volatile names_kept[64];

/* 64 blocks of 64 KiB, kept: the heap profile's samples in this library. */
__attribute__((noinline)) void names_alloc(void)
{
    for (int i = 0; i < 64; i++)
        names_kept[i] = malloc(65536);
}
