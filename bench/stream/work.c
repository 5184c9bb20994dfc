/* A fixed amount of CPU work (argv[1] hundred-million iterations), so that CPU time
 * measures the program and its profiler, whatever else the machine runs. */
#include <stdlib.h>
static volatile double sink;
__attribute__((noinline)) static void work(long n)
{
    for (long i = 0; i < n; i++)
        sink += (double)i * 0.5;
}
int main(int argc, char **argv)
{
    work((argc > 1 ? atol(argv[1]) : 10) * 100000000L);
    return 0;
}
