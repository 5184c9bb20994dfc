/* A clock_gettime loop: nearly all its time is in the vdso, which no file holds. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 6000000, sum = 0;
    struct timespec ts;
    for (long i = 0; i < n; i++) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        sum += ts.tv_nsec & 1;
    }
    printf("%ld\n", sum >= 0 ? 1L : 0L);
    return 0;
}
