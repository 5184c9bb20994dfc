/* Helpers of the heap profiler's tests: read a profile with kestrel's own pprof
 * reader (strict: it checks every index), name a sample's allocation site from its
 * leaf address (dladdr over the test's dynamic symbols: built with -rdynamic), and
 * the tolerance of the sampling.
 *
 * The sampling model, for the tolerances. Sample points fall on the byte stream of a
 * thread as a Poisson process of rate 1/m (m = the interval; exponential gaps), and
 * a sample's weight is the bytes since the previous point. The estimate of the bytes
 * B of one site is then a compound Poisson sum: about B/m samples land on it, each
 * weighing an exponential gap of mean m (capped at 4.6 m), so its variance is
 * (B/m) E[w^2] <= (B/m) 2 m^2 = 2 B m, and its standard error sqrt(2 B m). An
 * allocation of s bytes adds at most s to a weight: sqrt(2 B (m + s)) bounds it.
 * Every tolerance below is 4.5 of those standard errors, plus 16 m: a thread's bytes
 * after its last sample point are not counted, and its first point's gap reaches back
 * past the start by one more draw (heap.c, heap_slow); each is at most 4.6 m (the draws'
 * cap), and they pull opposite ways. A block of 4.6 m or more is counted at its size. */
#ifndef KESTREL_TESTS_HEAP_TEST_H
#define KESTREL_TESTS_HEAP_TEST_H
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model/profile.h"
#include "analysis/readers/readers.h"
#include "check.h"
#include "kestrel.h"

#define NOINLINE __attribute__((noinline))
#define MiB (1024.0 * 1024.0)

enum { ALLOC_OBJECTS, ALLOC_SPACE, INUSE_OBJECTS, INUSE_SPACE };

/* An allocation whose caller keeps its frame: the barrier after the call stops the
 * compiler from turning it into a tail call, which would leave the site's frame out. */
#define SITE(call)                                                                                 \
    ({                                                                                             \
        void *site_p_ = (call);                                                                    \
        __asm__ volatile("" ::: "memory");                                                         \
        site_p_;                                                                                   \
    })

static inline double heap_tolerance(double bytes, double interval, double size)
{
    return 4.5 * sqrt(2.0 * bytes * (interval + size)) + 16.0 * interval;
}

static inline struct profile *heap_parse(const void *data, size_t len)
{
    char why[256] = "";
    struct profile *p = read_pprof(data, len, why, sizeof why);
    if (!p) fprintf(stderr, "read_pprof: %s\n", why);
    return p;
}

/* The profile so far (or the final one), parsed. */
static inline struct profile *heap_snapshot(int stop)
{
    void *data = NULL;
    size_t len = 0;
    int rc = stop ? kestrel_heap_stop(&data, &len) : kestrel_heap_profile(&data, &len);
    CHECKF(rc == 0, "kestrel_heap_%s: %d", stop ? "stop" : "profile", rc);
    if (rc) return NULL;
    struct profile *p = heap_parse(data, len);
    free(data);
    return p;
}

/* The function that made sample i's allocation: the symbol of its leaf address. */
__attribute__((noinline)) static const char *heap_site(const struct profile *p, size_t i)
{
    const struct profile_stack *st = &p->stacks[p->samples[i].stack];
    if (!st->depth) return "";
    const struct profile_frame *f = &p->frames[st->frames[0]];
    if (!strcmp(f->name, "(other stacks)")) return f->name;
    Dl_info info;
    if (!dladdr((void *)(uintptr_t)f->address, &info) || !info.dli_sname) return "?";
    return info.dli_sname;
}

static inline const char *heap_thread(const struct profile *p, size_t i)
{
    return p->threads[p->samples[i].thread].label;
}

/* Sum of one sample type over the samples whose site (and thread, unless NULL)
 * match; site NULL matches all. */
static inline double heap_sum(const struct profile *p, int type, const char *site,
                              const char *thread)
{
    double s = 0;
    for (size_t i = 0; i < p->n_samples; i++) {
        if (site && strcmp(heap_site(p, i), site)) continue;
        if (thread && strcmp(heap_thread(p, i), thread)) continue;
        s += (double)p->values[i * p->n_sample_types + (size_t)type];
    }
    return s;
}

/* Run by test_heap_next_allocator.sh (KESTREL_TEST_NEXT names the allocator preloaded
 * behind the profiler): that allocator is the one the profiler passes allocations on
 * to. Before any session, so nothing is sampled. */
static inline void heap_check_next_allocator(void)
{
    const char *next = getenv("KESTREL_TEST_NEXT");
    if (!next) return;
    CHECKF(!kestrel_heap_is_running(), "a session runs already");
    if (!strcmp(next, "jemalloc")) {
        /* jemalloc's own size query answers for an ordinary block */
        size_t (*sallocx)(const void *, int) =
            (size_t(*)(const void *, int))dlsym(RTLD_DEFAULT, "sallocx");
        CHECKF(sallocx != NULL, "jemalloc is not loaded");
        void *p = malloc(100);
        CHECKF(sallocx && p && sallocx(p, 0) >= 100, "malloc's block is not jemalloc's");
        free(p);
    } else if (!strcmp(next, "tcmalloc")) {
        /* MallocExtension_GetOwnership: 1 owned, 2 not owned, 0 unknown */
        int (*owns)(const void *) =
            (int (*)(const void *))dlsym(RTLD_DEFAULT, "MallocExtension_GetOwnership");
        CHECKF(owns != NULL, "tcmalloc is not loaded");
        void *p = malloc(100), *a = aligned_alloc(64, 100), *c = calloc(1, 100);
        CHECKF(owns && owns(p) == 1 && owns(a) == 1 && owns(c) == 1,
               "malloc's block is not tcmalloc's");
        free(p);
        free(a);
        free(c);
    } else {
        CHECKF(0, "KESTREL_TEST_NEXT=%s: jemalloc or tcmalloc", next);
    }
}

/* Checks a figure against its expectation and logs it either way (the test log then
 * shows how far each figure was from the truth, in standard errors of the model). */
#define CHECK_NEAR(got, want, tol)                                                                 \
    do {                                                                                           \
        double g_ = (double)(got), w_ = (double)(want), t_ = (double)(tol);                        \
        fprintf(stderr, "%s = %.0f, want %.0f +- %.0f\n", #got, g_, w_, t_);                       \
        CHECKF(fabs(g_ - w_) <= t_, "%s = %.0f, want %.0f +- %.0f", #got, g_, w_, t_);             \
    } while (0)
#endif
