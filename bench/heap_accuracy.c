/* How right the heap profile's in-use bytes are, per site: RUNS sessions of the same
 * allocations at one interval, each estimate against the truth. Reported per site:
 * the mean of estimate/truth (bias), its observed standard deviation, and the one the
 * sampling model predicts, sqrt(2 B m)/B (tests/heap/heap_test.h explains it). Beside
 * them, the same allocations through the sampling rule alone (model()): the bias the
 * estimator itself has, apart from any allocator or implementation detail.
 *
 *   malloc       64 MiB kept in 4 KiB blocks, interleaved with 64 MiB freed
 *   calloc       32 MiB kept, 4 KiB blocks
 *   aligned      16 MiB kept, posix_memalign(64), 4 KiB blocks
 *   realloc 4K   2,048 buffers grown by realloc in 64 B steps to 4 KiB (8 MiB kept)
 *   realloc 64K  256 buffers grown by doubling from 64 B to 64 KiB (16 MiB kept)
 *   block 32M    one block of 32 MiB (certain to be sampled: it must read exactly 1)
 *   grow 8M      one buffer grown by realloc in 4 KiB steps to 8 MiB (exactly 1 too)
 *
 * and, over all sites, the bytes allocated (alloc_space) against those requested.
 *
 * Usage: heap_accuracy [RUNS] [INTERVAL] */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model/profile.h"
#include "analysis/readers/readers.h"
#include "kestrel.h"

#define NOINLINE __attribute__((noinline))
#define SITE(call)                                                                                 \
    ({                                                                                             \
        void *site_p_ = (call);                                                                    \
        __asm__ volatile("" ::: "memory");                                                         \
        site_p_;                                                                                   \
    })
#define SZ 4096

NOINLINE void *acc_malloc(void)
{
    return SITE(malloc(SZ));
}
NOINLINE void *acc_drop(void)
{
    return SITE(malloc(SZ));
}
NOINLINE void *acc_calloc(void)
{
    return SITE(calloc(1, SZ));
}
NOINLINE void *acc_aligned(void)
{
    void *p = NULL;
    return SITE(posix_memalign(&p, 64, SZ) ? NULL : p);
}
NOINLINE void *acc_realloc4k(void *p, size_t n)
{
    return SITE(realloc(p, n));
}
NOINLINE void *acc_realloc64k(void *p, size_t n)
{
    return SITE(realloc(p, n));
}
NOINLINE void *acc_block32m(void)
{
    return SITE(malloc(32 << 20));
}
NOINLINE void *acc_grow8m(void *p, size_t n)
{
    return SITE(realloc(p, n));
}

enum { N_KEEP = 16384, N_CAL = 8192, N_AL = 4096, N_G4 = 2048, N_G64 = 256, SITES = 7 };
static const char *const names[SITES] = {"acc_malloc",     "acc_calloc",   "acc_aligned",
                                         "acc_realloc4k",  "acc_realloc64k", "acc_block32m",
                                         "acc_grow8m"};
static const char *const labels[SITES] = {"malloc",      "calloc",    "aligned", "realloc 4K",
                                          "realloc 64K", "block 32M", "grow 8M"};
static const double truth[SITES] = {N_KEEP * (double)SZ, N_CAL *(double)SZ, N_AL *(double)SZ,
                                    N_G4 * 4096.0,       N_G64 * 65536.0,   32.0 * 1048576,
                                    8.0 * 1048576};
static const int certain[SITES] = {0, 0, 0, 0, 0, 1, 1}; /* blocks of 4.6 intervals and more */
static double requested; /* bytes asked for in one session, every call counted */
static void *keep[N_KEEP], *cal[N_CAL], *al[N_AL], *g4[N_G4], *g64[N_G64], *b32, *g8;

/* The runtime's sampling rule without the runtime (heap.c: heap_slow, heap_draw):
 * an exponential countdown of mean m capped at 4.6 m; a block of 4.6 m or more
 * weighs its size and leaves the countdown alone; the allocation in which it runs
 * out weighs the gaps of every sample point inside it (the first gap of a session
 * reaching back past its start by one more draw), and the next countdown runs from
 * the last point; realloc counts its new size. */
struct model {
    double m;
    int64_t left, drawn;
    uint64_t rng;
};

static int64_t model_draw(struct model *s)
{
    s->rng ^= s->rng << 13;
    s->rng ^= s->rng >> 7;
    s->rng ^= s->rng << 17;
    double d = -log(((double)(s->rng >> 11) + 1) * 0x1p-53) * s->m;
    if (d > 4.6 * s->m) d = 4.6 * s->m;
    return d < 1 ? 1 : (int64_t)d;
}

/* The weight of a sample on an allocation of n bytes, or 0. */
static int64_t model_alloc(struct model *s, int64_t n)
{
    if ((double)n >= 4.6 * s->m) return n; /* sampled for sure, outside the count */
    s->left -= n;
    if (s->left > 0) return 0;
    int64_t w = 0;
    do {
        w += s->drawn;
        s->drawn = model_draw(s);
        s->left += s->drawn;
    } while (s->left <= 0);
    return w;
}

/* One session of run()'s allocations through the rule: what each site would read. */
static void model(struct model *s, double est[SITES])
{
    s->left = model_draw(s);
    s->drawn = s->left + model_draw(s); /* the first gap reaches back past the start */
    memset(est, 0, SITES * sizeof *est);
    for (int i = 0; i < N_KEEP; i++) {
        est[0] += (double)model_alloc(s, SZ);
        model_alloc(s, SZ);
        if (i < N_CAL) est[1] += (double)model_alloc(s, SZ);
        if (i < N_AL) est[2] += (double)model_alloc(s, SZ);
        int64_t w = 0;
        for (int64_t n = 64; i < N_G4 && n <= 4096; n += 64)
            w = model_alloc(s, n); /* only the last step's sample stays in use */
        est[3] += (double)w;
        w = 0;
        for (int64_t n = 64; i < N_G64 && n <= 65536; n *= 2)
            w = model_alloc(s, n);
        est[4] += (double)w;
    }
    est[5] = (double)model_alloc(s, 32 << 20);
    int64_t w = 0;
    for (int64_t n = 4096; n <= 8 << 20; n += 4096)
        w = model_alloc(s, n);
    est[6] = (double)w;
}

static int run(size_t interval, double est[SITES])
{
    if (kestrel_heap_start(interval)) return -1;
    for (int i = 0; i < N_KEEP; i++) {
        keep[i] = acc_malloc();
        free(acc_drop());
        if (i < N_CAL) cal[i] = acc_calloc();
        if (i < N_AL) al[i] = acc_aligned();
        if (i < N_G4) {
            g4[i] = NULL;
            for (size_t n = 64; n <= 4096; n += 64)
                g4[i] = acc_realloc4k(g4[i], n);
        }
        if (i < N_G64) {
            g64[i] = NULL;
            for (size_t n = 64; n <= 65536; n *= 2)
                g64[i] = acc_realloc64k(g64[i], n);
        }
    }
    b32 = acc_block32m();
    g8 = NULL;
    for (size_t n = 4096; n <= 8 << 20; n += 4096)
        g8 = acc_grow8m(g8, n);
    void *data;
    size_t len;
    if (kestrel_heap_stop(&data, &len)) return -1;
    char why[256];
    struct profile *p = read_pprof(data, len, why, sizeof why);
    free(data);
    if (!p) {
        fprintf(stderr, "heap_accuracy: %s\n", why);
        return -1;
    }
    int inuse = profile_find_sample_type(p, "inuse_space");
    int alloc = profile_find_sample_type(p, "alloc_space");
    memset(est, 0, (SITES + 1) * sizeof *est);
    for (size_t i = 0; i < p->n_samples; i++)
        est[SITES] += (double)p->values[i * p->n_sample_types + (size_t)alloc];
    for (size_t i = 0; i < p->n_samples; i++) {
        const struct profile_stack *st = &p->stacks[p->samples[i].stack];
        Dl_info info;
        if (!st->depth || !dladdr((void *)(uintptr_t)p->frames[st->frames[0]].address, &info) ||
            !info.dli_sname)
            continue;
        for (int k = 0; k < SITES; k++)
            if (!strcmp(info.dli_sname, names[k]))
                est[k] += (double)p->values[i * p->n_sample_types + (size_t)inuse];
    }
    profile_free(p);
    for (int i = 0; i < N_KEEP; i++) {
        free(keep[i]);
        if (i < N_CAL) free(cal[i]);
        if (i < N_AL) free(al[i]);
        if (i < N_G4) free(g4[i]);
        if (i < N_G64) free(g64[i]);
    }
    free(b32);
    free(g8);
    return 0;
}

/* The bytes one session asks for, every call counted (realloc's new size). */
static double session_bytes(void)
{
    double b = N_KEEP * 2.0 * SZ + N_CAL * (double)SZ + N_AL * (double)SZ;
    for (size_t n = 64; n <= 4096; n += 64)
        b += N_G4 * (double)n;
    for (size_t n = 64; n <= 65536; n *= 2)
        b += N_G64 * (double)n;
    b += 32.0 * 1048576;
    for (size_t n = 4096; n <= 8 << 20; n += 4096)
        b += (double)n;
    return b;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 30;
    size_t interval = argc > 2 ? (size_t)atol(argv[2]) : 524288;
    double sum[SITES] = {0}, sq[SITES] = {0}, msum[SITES] = {0}, msq[SITES] = {0}, est[SITES + 1];
    double tsum = 0, tsq = 0;
    int exact[SITES] = {0};
    requested = session_bytes();
    for (int r = 0; r < runs; r++) {
        if (run(interval, est)) return 1;
        double tr = est[SITES] / requested;
        tsum += tr;
        tsq += tr * tr;
        for (int k = 0; k < SITES; k++)
            exact[k] += est[k] == truth[k];
        for (int k = 0; k < SITES; k++) {
            double ratio = est[k] / truth[k];
            sum[k] += ratio;
            sq[k] += ratio * ratio;
        }
    }
    int mruns = 10 * runs; /* the rule alone is cheap: ten times the sessions */
    struct model md = {.m = (double)interval, .rng = 0x9e3779b97f4a7c15ull};
    for (int r = 0; r < mruns; r++) {
        model(&md, est);
        for (int k = 0; k < SITES; k++) {
            msum[k] += est[k] / truth[k];
            msq[k] += est[k] / truth[k] * est[k] / truth[k];
        }
    }
    printf("| site | in use | mean estimate / truth | observed SD | predicted SE | bias in SEs of "
           "the mean | the rule alone: mean / truth (± SE of the mean) |\n");
    printf("|---|---|---|---|---|---|---|\n");
    for (int k = 0; k < SITES; k++) {
        double mean = sum[k] / runs,
               sd = sqrt(fmax(0, sq[k] / runs - mean * mean) * runs / (runs - 1));
        double se = certain[k] ? 0 : sqrt(2.0 * truth[k] * (double)interval) / truth[k];
        double mmean = msum[k] / mruns,
               msd = sqrt(fmax(0, msq[k] / mruns - mmean * mmean) * mruns / (mruns - 1));
        char bias[48];
        if (sd > 0)
            snprintf(bias, sizeof bias, "%+.1f", (mean - 1) / (sd / sqrt(runs)));
        else
            snprintf(bias, sizeof bias, "exact in %d of %d", exact[k], runs);
        printf("| %s | %.0f MiB | %.4f | %.4f | %.4f | %s | %.4f (± %.4f) |\n", labels[k],
               truth[k] / 1048576, mean, sd, se, bias, mmean, msd / sqrt(mruns));
    }
    double tmean = tsum / runs, tsd = sqrt(fmax(0, tsq / runs - tmean * tmean) * runs / (runs - 1));
    printf("\nallocated bytes (alloc_space, every site) / requested: mean %.5f, SD %.5f, %+.1f "
           "standard errors of the mean from 1 (%.0f MiB requested a session)\n",
           tmean, tsd, (tmean - 1) / (tsd / sqrt(runs)), requested / 1048576);
    printf("\n%d sessions at %zu bytes; the rule alone over %d\n", runs, interval, mruns);
    return 0;
}
