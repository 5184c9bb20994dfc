/* Two fibers on stacks of their own (makecontext/swapcontext), each computing in a
 * three-deep call chain before it switches back to main: fiber A's stack is malloc'd
 * and registered through kestrel_fiber_register (found with dlsym, so the program
 * runs whether or not libkestrel is preloaded), fiber B's is mmap'd and not
 * registered. Built with frame pointers. Runs about `seconds` (argv[1], default 1.5). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>

#define STACK (256 * 1024)

static ucontext_t main_ctx, a_ctx, b_ctx;
static volatile uint64_t sink;
static double seconds = 1.5;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Each chain its own constants, so that no two functions are folded into one. */
#define CHAIN(x, K)                                                                                \
    __attribute__((noinline)) static uint64_t x##_leaf(uint64_t n)                                 \
    {                                                                                              \
        uint64_t h = n;                                                                            \
        for (uint64_t i = 0; i < 200000; i++)                                                      \
            h = h * K + i;                                                                         \
        return h;                                                                                  \
    }                                                                                              \
    __attribute__((noinline)) static uint64_t x##_mid(uint64_t n) { return x##_leaf(n) + K % 7; } \
    __attribute__((noinline)) static uint64_t x##_outer(uint64_t n) { return x##_mid(n) + K % 5; }

CHAIN(fiber_a, 6364136223846793005ull)
CHAIN(fiber_b, 2862933555777941757ull)

__attribute__((noinline)) static void fiber_a_main(void)
{
    for (uint64_t k = 0;; k++) {
        sink += fiber_a_outer(k);
        swapcontext(&a_ctx, &main_ctx);
    }
}

__attribute__((noinline)) static void fiber_b_main(void)
{
    for (uint64_t k = 0;; k++) {
        sink += fiber_b_outer(k);
        swapcontext(&b_ctx, &main_ctx);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1) seconds = atof(argv[1]);
    int (*reg)(const void *, size_t, int64_t, const char *) =
        (int (*)(const void *, size_t, int64_t, const char *))dlsym(RTLD_DEFAULT,
                                                                    "kestrel_fiber_register");
    void *a_stack = malloc(STACK);
    void *b_stack = mmap(NULL, STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (!a_stack || b_stack == MAP_FAILED) return 1;
    if (reg && reg(a_stack, STACK, 7, "worker") != 0) return 2;
    getcontext(&a_ctx);
    a_ctx.uc_stack.ss_sp = a_stack;
    a_ctx.uc_stack.ss_size = STACK;
    a_ctx.uc_link = &main_ctx;
    makecontext(&a_ctx, fiber_a_main, 0);
    getcontext(&b_ctx);
    b_ctx.uc_stack.ss_sp = b_stack;
    b_ctx.uc_stack.ss_size = STACK;
    b_ctx.uc_link = &main_ctx;
    makecontext(&b_ctx, fiber_b_main, 0);
    double end = now() + seconds;
    while (now() < end) {
        swapcontext(&main_ctx, &a_ctx);
        swapcontext(&main_ctx, &b_ctx);
    }
    printf("%llu\n", (unsigned long long)sink);
    return 0;
}
