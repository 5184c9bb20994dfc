/* The shared-library half of prog_chain: each function calls into libc (qsort with a
 * callback from the executable, memset) and makes no tail call, so the expected
 * caller chains are fixed. */
#include <stdlib.h>
#include <string.h>

#define KEEP() __asm__ volatile("" ::: "memory")

__attribute__((noinline)) void lib_sort(int *v, size_t n, int (*cmp)(const void *, const void *))
{
    qsort(v, n, sizeof(int), cmp);
    KEEP();
}

__attribute__((noinline)) void lib_fill(unsigned char *buf, size_t n, int c)
{
    for (int i = 0; i < 48; i++) {
        memset(buf, c + i, n);
        KEEP();
    }
    KEEP();
}

/* Allocates through libc (strdup calls malloc), for the heap profiler's stacks:
 * malloc <- strdup <- lib_keep <- do_work <- main. */
__attribute__((noinline)) void lib_keep(const char *s, int n)
{
    for (int i = 0; i < n; i++) {
        char *p = strdup(s);
        KEEP();
        free(p);
    }
    KEEP();
}
