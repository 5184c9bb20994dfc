/* prog_leaf SECONDS — the two states of a return address on aarch64, each for half
 * the time: main -> outer, which spins before its only call (its return address is in
 * lr and in its frame record at once), then outer -> leaf, which spins without a
 * frame record of its own (its return address is in lr alone). A walk that takes lr
 * shows leaf's caller; one that does not drop it where the record holds it too
 * shows main twice. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void leaf(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++) sink += i ^ (sink >> 3);
}

__attribute__((noinline)) void outer(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++) sink += i ^ (sink >> 5);
    leaf(n);
    __asm__ volatile("" ::: "memory"); /* no tail call: outer stays leaf's caller */
}

int main(int argc, char **argv)
{
    double end = now() + (argc > 1 ? atof(argv[1]) : 1.0);
    while (now() < end) outer(2000000);
    return 0;
}
