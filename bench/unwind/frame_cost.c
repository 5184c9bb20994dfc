/* frame_cost [ROUNDS] — what one unwound frame costs, kestrel's CFI walker beside
 * libunwind's unw_backtrace and libgcc's _Unwind_Backtrace, on the same stacks: a
 * chain of DEPTH frames of this file, built without frame pointers, with libc's qsort
 * in the middle (its callback continues the chain), so that each walk crosses the
 * executable, libc and back. At the leaf each unwinder walks the whole stack WALKS
 * times; a round times each of them once, in a rotating order, and the figures are
 * medians over the rounds (ns per frame = time / walks / frames). Every unwinder must
 * find the same number of frames, or the run fails.
 *
 * kestrel's walk is the one the signal handler makes: uw_walk over the live stack
 * from (rip, rsp, rbp), with tables built once before (uw_tables_build); libunwind
 * and libgcc cache what they decode as they go, so all three are timed warm. */
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "runtime/unwind/step.h"
#include "runtime/unwind/table.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEPTH 24
#define WALKS 20000
#define MAXF 128

typedef int (*gcc_trace_fn)(int (*)(void *, void *), void *);
typedef uintptr_t (*gcc_ip_fn)(void *);
static gcc_trace_fn gcc_backtrace;
static gcc_ip_fn gcc_getip;

static int rounds = 11;
static double results[3][64];
static int frames_seen[3];
static uint64_t stack_hi;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

struct gcc_state {
    int n;
};
static int gcc_cb(void *ctx, void *arg)
{
    struct gcc_state *s = arg;
    (void)gcc_getip(ctx);
    s->n++;
    return s->n >= MAXF ? 5 /* _URC_END_OF_STACK */ : 0;
}

__attribute__((noinline)) static int walk_kestrel(void)
{
    uint64_t rip, rsp, rbp, out[MAXF];
    __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
                     : "=r"(rip), "=r"(rsp), "=r"(rbp));
    struct uw_stack m = {rsp, stack_hi, 0, UW_DIRECT_LIVE, NULL};
    struct uw_regs r = {.pc = rip, .sp = rsp, .fp = rbp, .interrupted = 1};
    enum unwind_stop st;
    return (int)uw_walk(UW_MODE_CFI, r, &m, out, MAXF, &st);
}

__attribute__((noinline)) static int walk_libunwind(void)
{
    void *buf[MAXF];
    return unw_backtrace(buf, MAXF);
}

__attribute__((noinline)) static int walk_libgcc(void)
{
    struct gcc_state s = {0};
    gcc_backtrace(gcc_cb, &s);
    return s.n;
}

static int (*const walkers[3])(void) = {walk_kestrel, walk_libunwind, walk_libgcc};
static const char *const names[3] = {"kestrel uw_walk (CFI tables)", "libunwind unw_backtrace",
                                     "libgcc _Unwind_Backtrace"};

__attribute__((noinline)) static void at_leaf(void)
{
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < 3; k++) {
            int w = (r + k) % 3;
            int n = 0;
            double t0 = now_ns();
            for (int i = 0; i < WALKS; i++) n = walkers[w]();
            results[w][r] = (now_ns() - t0) / WALKS;
            frames_seen[w] = n;
        }
}

static volatile int sink;
static int leaf_done;
__attribute__((noinline)) static void chain(int d);

static int cmp(const void *a, const void *b)
{
    if (!leaf_done) {
        leaf_done = 1;
        chain(DEPTH / 2);
    }
    return *(const int *)a - *(const int *)b;
}

__attribute__((noinline)) static void chain(int d)
{
    if (d == DEPTH / 2 && !leaf_done) { /* libc in the middle of the chain */
        int v[4] = {3, 1, 2, 0};
        qsort(v, 4, sizeof(int), cmp);
    } else if (d == 0) {
        at_leaf();
    } else {
        chain(d - 1);
    }
    sink += d; /* no tail call */
}

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc > 1) rounds = atoi(argv[1]);
    if (rounds < 3 || rounds > 64) rounds = 11;
    void *g = dlopen("libgcc_s.so.1", RTLD_NOW);
    gcc_backtrace = g ? (gcc_trace_fn)dlsym(g, "_Unwind_Backtrace") : NULL;
    gcc_getip = g ? (gcc_ip_fn)dlsym(g, "_Unwind_GetIP") : NULL;
    if (!gcc_backtrace || !gcc_getip) {
        fprintf(stderr, "frame_cost: libgcc_s.so.1: %s\n", dlerror());
        return 1;
    }
    pthread_attr_t a;
    void *addr;
    size_t size;
    pthread_getattr_np(pthread_self(), &a);
    pthread_attr_getstack(&a, &addr, &size);
    stack_hi = (uint64_t)(uintptr_t)addr + size;
    uw_tables_refresh();
    uw_tables_build(1);
    chain(DEPTH);
    printf("| unwinder | frames | ns per walk | ns per frame | vs kestrel |\n|---|---|---|---|---|\n");
    double med[3];
    for (int w = 0; w < 3; w++) {
        qsort(results[w], (size_t)rounds, sizeof(double), dcmp);
        med[w] = results[w][rounds / 2];
    }
    int bad = 0;
    for (int w = 0; w < 3; w++) {
        printf("| %s | %d | %.0f | %.1f | %.1fx |\n", names[w], frames_seen[w], med[w],
               med[w] / frames_seen[w], (med[w] / frames_seen[w]) / (med[0] / frames_seen[0]));
        /* libgcc counts the frame of _Unwind_Backtrace's caller as kestrel counts its pc */
        if (abs(frames_seen[w] - frames_seen[0]) > 2) bad = 1;
    }
    if (bad) {
        fprintf(stderr, "frame_cost: the unwinders found different stacks\n");
        return 1;
    }
    return 0;
}
