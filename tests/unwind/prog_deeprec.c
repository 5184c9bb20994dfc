/* Recursion deeper than any walk goes: `depth` (argv[1], default 1000) frames of a
 * function with a 64-byte local array, built without frame pointers, computing at
 * the bottom for about argv[2] seconds (default 1.5). Every on-CPU sample's stack is
 * deeper than the walker's 128 frames, and (about 100 KiB) than the perf engine's
 * stack copy. */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static double seconds = 1.5;
static volatile uint64_t sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void bottom(void)
{
    double end = now() + seconds;
    uint64_t h = 1;
    while (now() < end)
        for (int i = 0; i < 100000; i++)
            h = h * 6364136223846793005ull + (uint64_t)i;
    sink = h;
}

__attribute__((noinline)) static uint64_t deep_recurse(int depth)
{
    volatile uint8_t pad[64];
    for (int i = 0; i < 64; i++)
        pad[i] = (uint8_t)(depth + i);
    if (depth == 0) bottom();
    else sink += deep_recurse(depth - 1);
    return pad[depth & 63];
}

int main(int argc, char **argv)
{
    int depth = argc > 1 ? atoi(argv[1]) : 1000;
    if (argc > 2) seconds = atof(argv[2]);
    deep_recurse(depth);
    return 0;
}
