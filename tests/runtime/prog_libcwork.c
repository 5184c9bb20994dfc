/* Work in the program's own code and in libc, for the stack-completeness tests: built
 * twice (tests/runtime/rules.mk), with frame pointers (prog_libcwork) and with
 * -fomit-frame-pointer (prog_libcwork_nofp). Its calls into libc are to functions that
 * keep the caller's frame pointer (memcpy, memset, strlen: leaves that never touch
 * rbp), so that with frame pointers every walk reaches main's root; without them, none
 * can. It allocates as it goes (64 KiB blocks, below malloc's mmap threshold so that
 * malloc itself takes little time; one in 8 kept, up to 512, the rest freed at once),
 * for the heap profiler.
 *
 * usage: prog_libcwork [ms of CPU time] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The thread's CPU time: the work is as long on a busy machine as on an idle one. */
static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define BLOCK (2u << 20)

__attribute__((noinline, noclone)) static size_t copy_round(char *a, char *b, int r)
{
    memset(a, 'a' + r % 26, BLOCK - 1);
    a[BLOCK - 1] = 0;
    memcpy(b, a, BLOCK);
    return strlen(b);
}

__attribute__((noinline, noclone)) static uint64_t mix_round(const char *b, uint64_t h)
{
    for (size_t i = 0; i < BLOCK; i += 64)
        h = (h ^ (unsigned char)b[i]) * 0x100000001b3ull;
    for (volatile int k = 0; k < 20000; k++)
        h += (uint64_t)k * 7 % 13;
    return h;
}

__attribute__((noinline, noclone)) static char *alloc_round(void)
{
    char *p = malloc(64u << 10);
    if (p) p[0] = 1;
    return p;
}

static char *kept[512];

__attribute__((noinline, noclone)) static uint64_t work(long ms)
{
    char *a = malloc(BLOCK), *b = malloc(BLOCK);
    uint64_t h = 0, end = now_ns() + (uint64_t)ms * 1000000ull;
    for (int r = 0; now_ns() < end; r++) {
        h += copy_round(a, b, r);
        h = mix_round(b, h);
        char *p = alloc_round();
        if (r % 8 == 0 && r / 8 < 512)
            kept[r / 8] = p;
        else
            free(p);
    }
    free(a);
    free(b);
    return h + (kept[0] != NULL);
}

int main(int argc, char **argv)
{
    long ms = argc > 1 ? atol(argv[1]) : 1000;
    printf("%d\n", (int)(work(ms) & 1));
    return 0;
}
