/* Every interposed function keeps its contract, on sampled blocks above all: at a
 * 64 KiB interval an allocation of 1 MiB or more is sampled with probability at
 * least 1 - e^-16, and the profile confirms each site was. Alignment, errno (kept on
 * success, ENOMEM on failure), NULL, size 0, calloc and reallocarray overflow,
 * realloc of a sampled block (content kept, moved, shrunk, to 0 bytes as the next
 * allocator does it), malloc_usable_size of a sampled block. Run as is (glibc next)
 * and by test_heap_next_allocator.sh with jemalloc, then tcmalloc,
 * preloaded behind the profiler. */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "heap/heap_test.h"

#define BIG ((size_t)2 << 20)

NOINLINE void *site_big(size_t n)
{
    return SITE(malloc(n));
}
NOINLINE void *site_calloc(size_t n)
{
    return SITE(calloc(1, n));
}
NOINLINE void *site_realloc(void *p, size_t n)
{
    return SITE(realloc(p, n));
}
NOINLINE void *site_memalign(size_t a, size_t n)
{
    return SITE(memalign(a, n));
}
NOINLINE void *site_aligned_alloc(size_t a, size_t n)
{
    return SITE(aligned_alloc(a, n));
}
NOINLINE void *site_valloc(size_t n)
{
    return SITE(valloc(n));
}
NOINLINE void *site_pvalloc(size_t n)
{
    return SITE(pvalloc(n));
}
NOINLINE int site_posix_memalign(void **p, size_t a, size_t n)
{
    int rc = posix_memalign(p, a, n);
    __asm__ volatile("" ::: "memory");
    return rc;
}

static int aligned(const void *p, size_t a)
{
    return ((uintptr_t)p & (a - 1)) == 0;
}

static int filled(const unsigned char *p, size_t n, unsigned char v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v) return 0;
    return 1;
}

int main(void)
{
    heap_check_next_allocator();
    CHECK(kestrel_heap_start(65536) == 0);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);

    /* failures: errno ENOMEM, NULL (sizes through a volatile: the compiler refuses them) */
    volatile size_t huge = SIZE_MAX, half = SIZE_MAX / 2;
    errno = 0;
    CHECK(calloc(half, 4) == NULL && errno == ENOMEM);
    errno = 0;
    CHECK(reallocarray(NULL, half, 4) == NULL && errno == ENOMEM);
    errno = 0;
    CHECK(malloc(huge) == NULL && errno == ENOMEM);
    void *q = NULL;
    CHECK(posix_memalign(&q, 3, 100) == EINVAL);
    CHECK(posix_memalign(&q, 4, 100) == EINVAL); /* not a multiple of sizeof(void *) */

    /* success keeps errno; sampled blocks are usable, zeroed, aligned */
    errno = 1234;
    unsigned char *big = site_big(BIG);
    CHECK(big && errno == 1234);
    CHECK(malloc_usable_size(big) >= BIG);
    memset(big, 0xab, BIG);
    unsigned char *z = site_calloc(BIG);
    CHECK(z && filled(z, BIG, 0) && malloc_usable_size(z) >= BIG);
    void *pm = NULL, *pm_huge = NULL;
    CHECK(site_posix_memalign(&pm, 4096, BIG) == 0 && aligned(pm, 4096));
    CHECK(site_posix_memalign(&pm_huge, (size_t)2 << 20, BIG) == 0 &&
          aligned(pm_huge, (size_t)2 << 20));
    void *ma = site_memalign(8192, BIG), *aa = site_aligned_alloc(65536, BIG);
    CHECK(ma && aligned(ma, 8192) && aa && aligned(aa, 65536));
    void *va = site_valloc(BIG), *pva = site_pvalloc(BIG + 1);
    CHECK(va && aligned(va, page) && pva && aligned(pva, page));
    CHECK(malloc_usable_size(pva) >= ((BIG + 1 + page - 1) & ~(page - 1)));
    CHECK(errno == 1234);

    /* each of them was sampled */
    struct profile *p = heap_snapshot(0);
    CHECK(p != NULL);
    static const char *const sites[] = {
        "site_big",           "site_calloc", "site_posix_memalign", "site_memalign",
        "site_aligned_alloc", "site_valloc", "site_pvalloc"};
    static const double objects[] = {1, 1, 2, 1, 1, 1, 1};
    for (size_t i = 0; p && i < sizeof sites / sizeof *sites; i++)
        CHECKF(heap_sum(p, INUSE_OBJECTS, sites[i], NULL) >= objects[i], "%s not sampled",
               sites[i]);
    profile_free(p);

    /* realloc of a sampled block: grown, shrunk, content kept, then to 0 bytes as the
     * next allocator does it for an ordinary block */
    unsigned char *r = site_realloc(big, 2 * BIG);
    CHECK(r && filled(r, BIG, 0xab) && malloc_usable_size(r) >= 2 * BIG);
    r = site_realloc(r, 16);
    CHECK(r && filled(r, 16, 0xab));
    unsigned char *r2 = site_realloc(NULL, BIG); /* realloc(NULL) is malloc */
    CHECK(r2 != NULL);
    void *small = malloc(16);
    errno = 0;
    void *small0 = realloc(small, 0);
    int next_frees = small0 == NULL;
    free(small0);
    void *r20 = realloc(r2, 0);
    CHECKF((r20 == NULL) == next_frees, "realloc(sampled, 0) = %p, next allocator: %s", r20,
           next_frees ? "frees" : "allocates");
    free(r20);

    /* size 0, NULL */
    void *m0 = malloc(0);
    free(m0);
    free(NULL);
    CHECK(malloc_usable_size(NULL) == 0);

    free(r);
    free(z);
    free(pm);
    free(pm_huge);
    free(ma);
    free(aa);
    free(va);
    free(pva);
    p = heap_snapshot(1);
    CHECK(p != NULL);
    for (size_t i = 0; p && i < sizeof sites / sizeof *sites; i++)
        CHECKF(heap_sum(p, INUSE_SPACE, sites[i], NULL) == 0, "%s still in use", sites[i]);
    CHECK(p && heap_sum(p, INUSE_SPACE, "site_realloc", NULL) == 0);
    profile_free(p);
    return check_exit();
}
