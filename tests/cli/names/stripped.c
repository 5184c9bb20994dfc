/* A C program to be stripped: two hot static functions and main, whose frames kestrel
 * must name by image and function start, the same in every run. */
#include <stdio.h>
#include <stdlib.h>
static volatile unsigned long sink;
__attribute__((noinline)) static unsigned long mix(unsigned long x, int n)
{ for (int i = 0; i < n; i++) x = x * 6364136223846793005ul + (x >> 7) + i; return x; }
__attribute__((noinline)) static unsigned long scan(unsigned long x, int n)
{ for (int i = 0; i < n; i++) x ^= (x << 3) + (x >> 11) + (unsigned long)i * 977; return x; }
int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    unsigned long x = 1;
    for (int r = 0; r < rounds; r++) { x = mix(x, 3000000); x = scan(x, 1000000); }
    sink = x;
    printf("%lu\n", x);
    return 0;
}
