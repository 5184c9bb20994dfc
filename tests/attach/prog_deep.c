/* A recursion deeper than the walker's depth limit and than a 16 KiB stack copy (200
 * frames of about 400 bytes, no frame pointers), spinning at its bottom for the
 * seconds given (default 2), then asleep there 0.3 s: its samples' walks must end at
 * the depth limit, not at the end of the copy. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
static double seconds = 2;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void spin(void)
{
    double end = now() + seconds;
    while (now() < end)
        for (int i = 0; i < 100000; i++) sink += (unsigned long)i;
    /* Off the CPU at the bottom a while: the last samples' stacks are still there when
     * kestrel reads on past their copies (a program that returned at once would have
     * changed them, and those walks would be cut at the copy's end). */
    struct timespec ts = {0, 300000000};
    nanosleep(&ts, NULL);
}

__attribute__((noinline)) static unsigned long deep(int n)
{
    volatile char pad[384]; /* a frame of its own, kept */
    pad[n % 384] = (char)n;
    if (n == 0)
        spin();
    else
        sink += deep(n - 1); /* not a tail call */
    return pad[n % 384];
}

int main(int argc, char **argv)
{
    if (argc > 1) seconds = atof(argv[1]);
    unsigned long r = deep(200);
    printf("%lu\n", r);
    return 0;
}
