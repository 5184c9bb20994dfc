/* Absurd and large requests under the heap profiler.
 *
 * Every allocation path costs the same whatever its size: malloc(2^44),
 * malloc(SIZE_MAX/2), malloc(2^63) and the other functions with sizes no allocator
 * serves return NULL with ENOMEM at once, as the next allocator does (a countdown that
 * looped size/interval times took 10.6 s for 2^44 and never returned for SIZE_MAX/2; an
 * alarm ends the test if one hangs), count nothing, and leave the sampling as it was:
 * the small allocations after them still read their truth.
 *
 * A block certain to be sampled (at least 4.6 intervals long) is reported at exactly
 * its size with one object: single blocks of 3, 8 and 32 MiB and a buffer grown by
 * realloc in 4 KiB steps to 8 MiB, in use at the session's end, in each of 20 sessions
 * at 512 KiB and at 64 KiB; what was freed of them is not in use. */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <unistd.h>

#include "heap/heap_test.h"

#define MiB_ ((size_t)1 << 20)

NOINLINE void *site_huge(size_t n)
{
    return SITE(malloc(n));
}
NOINLINE void *site_small(void)
{
    return SITE(malloc(4096));
}
NOINLINE void *site_block3(void)
{
    return SITE(malloc(3 * MiB_));
}
NOINLINE void *site_block8(void)
{
    return SITE(calloc(1, 8 * MiB_));
}
NOINLINE void *site_block32(void)
{
    return SITE(malloc(32 * MiB_));
}
NOINLINE void *site_freed(void)
{
    return SITE(malloc(16 * MiB_));
}
NOINLINE void *site_grow(void *p, size_t n)
{
    return SITE(realloc(p, n));
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "test_heap_large: an allocation hung (alarm after 20 s)\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(2);
}

/* Each request beyond every allocator's limit: NULL, ENOMEM. */
static void absurd(void)
{
    static const size_t sizes[] = {(size_t)1 << 44, SIZE_MAX / 2, (size_t)1 << 63, SIZE_MAX - 4095,
                                   SIZE_MAX};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        volatile size_t n = sizes[i];
        errno = 0;
        CHECKF(site_huge(n) == NULL && errno == ENOMEM, "malloc(%zu)", (size_t)n);
        errno = 0;
        CHECKF(calloc(1, n) == NULL && errno == ENOMEM, "calloc(1, %zu)", (size_t)n);
        void *p = malloc(16), *volatile r;
        errno = 0;
        r = realloc(p, n); /* fails: p stays the caller's */
        CHECKF(r == NULL && errno == ENOMEM, "realloc(p, %zu)", (size_t)n);
        free(r ? r : p);
        void *q = NULL;
        CHECKF(posix_memalign(&q, 64, n) == ENOMEM && q == NULL, "posix_memalign(%zu)", (size_t)n);
        errno = 0;
        CHECKF(aligned_alloc(4096, n) == NULL && errno == ENOMEM, "aligned_alloc(%zu)", (size_t)n);
        errno = 0;
        CHECKF(memalign(64, n) == NULL && errno == ENOMEM, "memalign(%zu)", (size_t)n);
        errno = 0;
        CHECKF(valloc(n) == NULL && errno == ENOMEM, "valloc(%zu)", (size_t)n);
        errno = 0;
        CHECKF(pvalloc(n) == NULL && errno == ENOMEM, "pvalloc(%zu)", (size_t)n);
    }
}

static void *kept[4096];

int main(void)
{
    heap_check_next_allocator();
    signal(SIGALRM, on_alarm);
    alarm(20);

    /* absurd requests, then small ones that must still read their truth */
    CHECK(kestrel_heap_start(65536) == 0);
    for (int round = 0; round < 3; round++)
        absurd();
    for (int i = 0; i < 4096; i++)
        kept[i] = site_small();
    struct profile *p = heap_snapshot(1);
    CHECK(p != NULL);
    if (p) {
        double truth = 4096.0 * 4096.0;
        CHECK_NEAR(heap_sum(p, INUSE_SPACE, "site_small", NULL), truth,
                   heap_tolerance(truth, 65536, 4096));
        CHECK(heap_sum(p, ALLOC_SPACE, "site_huge", NULL) == 0);
        for (size_t i = 0; i < p->meta.n_comments; i++)
            if (strstr(p->meta.comments[i], "lost_bytes="))
                CHECKF(strstr(p->meta.comments[i], "lost_bytes=0"), "%s", p->meta.comments[i]);
        profile_free(p);
    }
    for (int i = 0; i < 4096; i++)
        free(kept[i]);
    alarm(0);

    /* blocks certain to be sampled: exact, in every session */
    static const size_t intervals[] = {524288, 65536};
    int inexact = 0;
    for (size_t k = 0; k < 2; k++) {
        for (int run = 0; run < 20; run++) {
            CHECK(kestrel_heap_start(intervals[k]) == 0);
            void *b3 = site_block3(), *b8 = site_block8(), *b32 = site_block32();
            free(site_freed());
            unsigned char *g = NULL;
            for (size_t n = 4096; n <= 8 * MiB_; n += 4096) {
                g = site_grow(g, n);
                g[n - 1] = 1;
            }
            p = heap_snapshot(1);
            CHECK(p != NULL);
            if (!p) continue;
            static const struct {
                const char *site;
                double bytes;
            } want[] = {{"site_block3", 3.0 * MiB}, {"site_block8", 8.0 * MiB},
                        {"site_block32", 32.0 * MiB}, {"site_grow", 8.0 * MiB},
                        {"site_freed", 0}};
            for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
                double got = heap_sum(p, INUSE_SPACE, want[i].site, NULL);
                double objs = heap_sum(p, INUSE_OBJECTS, want[i].site, NULL);
                if (got != want[i].bytes || objs != (want[i].bytes ? 1 : 0)) {
                    inexact++;
                    fprintf(stderr, "interval %zu run %d: %s in use %.0f B in %.0f objects, want %.0f\n",
                            intervals[k], run, want[i].site, got, objs, want[i].bytes);
                }
            }
            CHECK(heap_sum(p, ALLOC_SPACE, "site_freed", NULL) == 16.0 * MiB);
            profile_free(p);
            free(b3);
            free(b8);
            free(b32);
            free(g);
        }
    }
    CHECKF(inexact == 0, "%d figures of certain blocks were not their sizes", inexact);
    return check_exit();
}
