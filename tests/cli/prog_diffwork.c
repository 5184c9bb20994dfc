/* The comparison's workload: three functions doing known amounts of CPU work,
 * interleaved in slices of 1 ms per 10 so that the time order carries no share.
 * usage: prog_diffwork A_MS B_MS C_MS */
#include <stdlib.h>

#include "../runtime/burn.h"

/* Not tail calls: each keeps its frame, so a stack names it. */
__attribute__((noinline)) void work_a(long us) { burn_cpu_us(us); prog_sink++; }
__attribute__((noinline)) void work_b(long us) { burn_cpu_us(us); prog_sink++; }
__attribute__((noinline)) void work_c(long us) { burn_cpu_us(us); prog_sink++; }

int main(int argc, char **argv)
{
    if (argc != 4) return 2;
    long a = atol(argv[1]) * 100, b = atol(argv[2]) * 100, c = atol(argv[3]) * 100;
    for (int slice = 0; slice < 10; slice++) { /* each slice a tenth of each function */
        work_a(a);
        work_b(b);
        work_c(c);
    }
    return 0;
}
