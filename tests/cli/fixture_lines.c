/* A program whose line tables have what the line-table reader must get right: code
 * from a header (a second file), inlined calls, a cold part (.text.unlikely) and main
 * (.text.startup), so sequences are not in address order, and functions nothing calls
 * (with -ffunction-sections -Wl,--gc-sections their sequences start at 0 and overlap).
 * Built several ways by tests/cli/rules.mk for tests/cli/test_linetab.c. */
#include <stdio.h>
#include <stdlib.h>

#include "fixture_lines.h"

__attribute__((noinline)) static unsigned long unused_a(unsigned long x)
{
    for (int i = 0; i < 7; i++)
        x = x * 31 + (unsigned long)i;
    return x;
}

__attribute__((noinline)) unsigned long unused_b(unsigned long x)
{
    return unused_a(x) ^ (x >> 3);
}

__attribute__((noinline, cold)) static void complain(const char *what)
{
    fprintf(stderr, "fixture_lines: %s\n", what);
    exit(2);
}

__attribute__((noinline)) unsigned long work(unsigned long x, int n)
{
    if (n < 0) complain("negative");
    for (int i = 0; i < n; i++) {
        x = mix_step(x, i);
        if (x == 42) complain("unlucky");
    }
    return twice(x);
}

int main(int argc, char **argv)
{
    unsigned long x = argc > 1 ? strtoul(argv[1], NULL, 0) : 3;
    printf("%lu\n", work(x, argc + 5));
    return 0;
}
