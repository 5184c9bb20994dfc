/* What is kept stays in use and what is freed does not, per site and within the
 * sampling's tolerance (heap_test.h), for malloc, calloc, posix_memalign,
 * aligned_alloc and realloc-grown buffers; the totals add up to what was allocated;
 * every block keeps its function's contract (zeroed, aligned, usable size, content
 * through realloc) whether it was sampled or not. */
#include <malloc.h>
#include <stdint.h>

#include "heap/heap_test.h"

#define INTERVAL 65536.0
#define SZ 4096
#define N_KEEP 16384   /* 64 MiB kept */
#define N_CALLOC 8192  /* 32 MiB */
#define N_ALIGNED 4096 /* 16 MiB each */
#define N_GROW 2048    /* buffers grown by realloc from 64 B to 4 KiB: 8 MiB kept */

static void *keep[N_KEEP], *zeroed[N_CALLOC], *al64[N_ALIGNED], *al256[N_ALIGNED], *grown[N_GROW];

NOINLINE void *site_keep(void)
{
    return SITE(malloc(SZ));
}
NOINLINE void *site_drop(void)
{
    return SITE(malloc(SZ));
}
NOINLINE void *site_calloc(void)
{
    return SITE(calloc(1, SZ));
}
NOINLINE void *site_posix_memalign(void)
{
    void *p = NULL;
    return SITE(posix_memalign(&p, 64, SZ) ? NULL : p);
}
NOINLINE void *site_aligned_alloc(void)
{
    return SITE(aligned_alloc(256, SZ));
}
NOINLINE void *site_realloc(void *p, size_t n)
{
    return SITE(realloc(p, n));
}

int main(void)
{
    heap_check_next_allocator();
    CHECK(kestrel_heap_start((size_t)INTERVAL) == 0);
    double grow_total = 0;
    int bad_content = 0, bad_zero = 0, bad_align = 0, bad_usable = 0;
    for (int i = 0; i < N_KEEP; i++) {
        keep[i] = site_keep();
        free(site_drop());
        if (i < N_CALLOC) zeroed[i] = site_calloc();
        if (i < N_ALIGNED) {
            al64[i] = site_posix_memalign();
            al256[i] = site_aligned_alloc();
        }
        if (i < N_GROW) {
            unsigned char *b = NULL;
            for (size_t n = 64; n <= SZ; n += 64) {
                b = site_realloc(b, n);
                grow_total += (double)n;
                if (n > 64) bad_content += b[n - 65] != (unsigned char)(n - 64);
                b[n - 1] = (unsigned char)n;
            }
            grown[i] = b;
        }
    }
    for (int i = 0; i < N_KEEP; i++) {
        bad_usable += malloc_usable_size(keep[i]) < SZ;
        if (i < N_CALLOC)
            for (int k = 0; k < SZ; k++)
                bad_zero += ((unsigned char *)zeroed[i])[k] != 0;
        if (i < N_ALIGNED)
            bad_align += ((uintptr_t)al64[i] & 63) != 0 || ((uintptr_t)al256[i] & 255) != 0;
    }
    CHECK(bad_content == 0);
    CHECK(bad_zero == 0);
    CHECK(bad_align == 0);
    CHECK(bad_usable == 0);

    struct profile *p = heap_snapshot(0);
    CHECK(p != NULL);
    if (!p) return check_exit();
    CHECK(p->n_sample_types == 4);
    if (p->n_sample_types == 4) {
        CHECK(!strcmp(p->sample_types[ALLOC_OBJECTS].type, "alloc_objects"));
        CHECK(!strcmp(p->sample_types[ALLOC_SPACE].type, "alloc_space"));
        CHECK(!strcmp(p->sample_types[INUSE_OBJECTS].type, "inuse_objects"));
        CHECK(!strcmp(p->sample_types[INUSE_SPACE].type, "inuse_space"));
        CHECK(!strcmp(p->sample_types[INUSE_SPACE].unit, "bytes"));
        CHECK(p->default_type == INUSE_SPACE);
    }
    CHECK(p->period == (int64_t)INTERVAL);
    CHECK(p->period_type.type && !strcmp(p->period_type.type, "space"));

    double kept = N_KEEP * (double)SZ;
    double tol = heap_tolerance(kept, INTERVAL, SZ);
    CHECK_NEAR(heap_sum(p, INUSE_SPACE, "site_keep", NULL), kept, tol);
    CHECK(heap_sum(p, ALLOC_SPACE, "site_keep", NULL) ==
          heap_sum(p, INUSE_SPACE, "site_keep", NULL));
    CHECK_NEAR(heap_sum(p, INUSE_OBJECTS, "site_keep", NULL), N_KEEP, tol / SZ + 1);
    CHECK(heap_sum(p, INUSE_SPACE, "site_drop", NULL) == 0);
    CHECK(heap_sum(p, INUSE_OBJECTS, "site_drop", NULL) == 0);
    CHECK_NEAR(heap_sum(p, ALLOC_SPACE, "site_drop", NULL), kept, tol);
    double cal = N_CALLOC * (double)SZ, al = N_ALIGNED * (double)SZ, gr = N_GROW * (double)SZ;
    CHECK_NEAR(heap_sum(p, INUSE_SPACE, "site_calloc", NULL), cal,
               heap_tolerance(cal, INTERVAL, SZ));
    CHECK_NEAR(heap_sum(p, INUSE_SPACE, "site_posix_memalign", NULL), al,
               heap_tolerance(al, INTERVAL, SZ));
    CHECK_NEAR(heap_sum(p, INUSE_SPACE, "site_aligned_alloc", NULL), al,
               heap_tolerance(al, INTERVAL, SZ));
    /* A realloc-grown buffer's last size is among smaller ones of the same thread; an
     * allocation reads its size on average whatever its size (heap.c, heap_slow). */
    CHECK_NEAR(heap_sum(p, INUSE_SPACE, "site_realloc", NULL), gr,
               heap_tolerance(gr, INTERVAL, SZ));
    CHECK_NEAR(heap_sum(p, ALLOC_SPACE, "site_realloc", NULL), grow_total,
               heap_tolerance(grow_total, INTERVAL, SZ));

    /* The weights add up to every byte requested before this thread's last sample
     * point (its tail after it: at most 16 m), plus the one draw by which its first
     * point's gap reaches back past the start (at most 16 m), plus the test's own few
     * small allocations. */
    double all = 2 * kept + cal + 2 * al + grow_total;
    double got = heap_sum(p, ALLOC_SPACE, NULL, NULL);
    CHECKF(got <= all + 16 * INTERVAL + 65536 && got >= all - 16 * INTERVAL,
           "alloc_space %.0f of %.0f", got, all);

    /* Every sample is labelled with this thread and its leaf lies in a mapping. */
    for (size_t i = 0; i < p->n_samples; i++) {
        CHECKF(!strcmp(heap_thread(p, i), "test_heap_inuse"), "thread %s", heap_thread(p, i));
        const struct profile_stack *st = &p->stacks[p->samples[i].stack];
        CHECK(st->depth > 0 && p->frames[st->frames[0]].image >= 0);
    }
    profile_free(p);

    for (int i = 0; i < N_KEEP; i++) {
        free(keep[i]);
        if (i < N_CALLOC) free(zeroed[i]);
        if (i < N_ALIGNED) {
            free(al64[i]);
            free(al256[i]);
        }
        if (i < N_GROW) free(grown[i]);
    }
    p = heap_snapshot(1);
    CHECK(p != NULL);
    if (p) {
        CHECK(heap_sum(p, INUSE_SPACE, NULL, NULL) == 0);
        CHECK(heap_sum(p, INUSE_OBJECTS, NULL, NULL) == 0);
        CHECK(heap_sum(p, ALLOC_SPACE, NULL, NULL) >= all - 16 * INTERVAL);
        profile_free(p);
    }
    CHECK(!kestrel_heap_is_running());
    return check_exit();
}
