/* Recursion deeper than any walk's bound: recurse(DEPTH) burns CPU at the bottom for
 * MS milliseconds of CPU time. Built without frame pointers as well
 * (prog_deeprec_nofp), so that a report could blame them.
 *
 *   prog_deeprec DEPTH MS */
#include "burn.h"

#include <stdlib.h>

static long ms;

__attribute__((noinline)) static int recurse(int n)
{
    if (n == 0) {
        burn_cpu_us(ms * 1000);
        return 0;
    }
    int r = recurse(n - 1);
    __asm__ volatile("" : "+r"(r)); /* keeps the call from becoming a loop */
    return r + 1;
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    ms = atol(argv[2]);
    return recurse(atoi(argv[1])) == atoi(argv[1]) ? 0 : 1;
}
