/* The region that sampled blocks live in: one reservation of address space that the
 * runtime owns, so `free` tells a sampled block from any other by one subtract and
 * compare and finds its header (struct heap_block) right in front of it, with no
 * lookup.
 *
 * The reservation is PROT_NONE (no memory, no commit charge), away from the program's
 * own mappings (region_hint). Chunks of 2^k pages are carved from a frontier that is
 * made readable and writable 1 MiB at a time, kept on one free list per size class
 * when released, and chunks of 256 KiB and more give their pages back (MADV_DONTNEED)
 * first. The region is never unmapped: a block can outlive the session that sampled
 * it. It is made at the first session start, or earlier if an allocation has to be
 * served before dlsym has found the next allocator.
 *
 * Every function here may run inside malloc; none in a signal handler. errno is
 * left as it was (saved only around the rare system calls). */
#include "runtime/heap/heap.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#define REGION_CLASSES 48
#define REGION_GIVE_BACK (256 * 1024)
#define REGION_RW_STEP (1024 * 1024)

uintptr_t heap_region_lo = HEAP_REGION_NOWHERE;
uintptr_t heap_region_span;
static uintptr_t region_brk;                /* first byte never carved */
static uintptr_t region_rw;                 /* [lo, rw) is readable and writable */
static size_t region_page;                  /* the system's page size */
static void *region_free[REGION_CLASSES];   /* free chunks of 2^k pages, linked by first word */
static heap_mutex_t region_lock = HEAP_MUTEX_INIT;

/* Where to ask for the reservation: away from the program's own mappings. Placed by
 * the kernel, top-down in the mmap area, it would move every later mapping of the
 * program 64 GiB lower, and that alone made jemalloc's allocation loop 45% slower here
 * (bench/heap_bench.sh; a bare 64 GiB PROT_NONE mapping does the same, 8 GiB does not).
 * A hint, not MAP_FIXED: if the range is taken the kernel places it as before. It is
 * one of 256 slots of 64 GiB from 32 TiB, picked from the library's own (randomised)
 * load address. */
static void *region_hint(void)
{
#if UINTPTR_MAX > 0xffffffffu
    uintptr_t r = ((uintptr_t)&region_lock >> 12) * 0x9e3779b97f4a7c15ull;
    return (void *)(((uintptr_t)1 << 45) + ((r >> 56) << 36));
#else
    return NULL;
#endif
}

size_t heap_as_share(void)
{
    struct rlimit r;
    int saved = errno;
    int rc = getrlimit(RLIMIT_AS, &r);
    errno = saved;
    return rc == 0 && r.rlim_cur != RLIM_INFINITY ? (size_t)r.rlim_cur / 64 : 0;
}

int heap_region_init(void)
{
    if (__atomic_load_n(&heap_region_span, __ATOMIC_ACQUIRE)) return 0;
    int saved = errno, rc = -ENOMEM;
    heap_mutex_lock(&region_lock);
    if (heap_region_span) rc = 0;
    /* 64 GiB down to 1 GiB; under an address-space limit (RLIMIT_AS counts a PROT_NONE
     * reservation as any other mapping) a 64th of it, at least 1 MiB: what the program
     * could have mapped itself. A sampled block that finds no room is served by the
     * program's allocator and counted as lost. */
    int top = 36, bottom = 30;
    size_t share = heap_as_share();
    if (share) {
        for (top = 20; top < 36 && ((size_t)2 << top) <= share; top++)
            ;
        bottom = top;
    }
    for (int shift = top; rc && shift >= bottom; shift -= 2) {
        size_t span = (size_t)1 << shift;
        void *p = mmap(region_hint(), span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                       -1, 0);
        if (p == MAP_FAILED) continue;
        region_page = (size_t)sysconf(_SC_PAGESIZE);
        region_brk = region_rw = (uintptr_t)p;
        __atomic_store_n(&heap_region_lo, (uintptr_t)p, __ATOMIC_RELAXED);
        __atomic_store_n(&heap_region_span, span, __ATOMIC_RELEASE); /* see heap_region_has */
        rc = 0;
    }
    heap_mutex_unlock(&region_lock);
    errno = saved;
    return rc;
}

static unsigned region_class(size_t pages)
{
    unsigned k = 0;
    while (((size_t)1 << k) < pages)
        k++;
    return k;
}

/* Makes [brk, brk + bytes) writable, 1 MiB at a time at least: one mprotect for many
 * small chunks (a page is only memory once touched). Under region_lock. */
static int region_grow(size_t bytes)
{
    if (region_brk + bytes <= region_rw) return 1;
    uintptr_t end = heap_region_lo + heap_region_span;
    size_t step = bytes > REGION_RW_STEP ? bytes : REGION_RW_STEP;
    if (step > end - region_rw) step = end - region_rw;
    if (region_brk + bytes > region_rw + step) return 0;
    int saved = errno, rc = mprotect((void *)region_rw, step, PROT_READ | PROT_WRITE);
    errno = saved;
    if (rc) return 0;
    region_rw += step;
    return 1;
}

void *heap_region_alloc(size_t size, size_t align)
{
    if (!__atomic_load_n(&heap_region_span, __ATOMIC_ACQUIRE) && heap_region_init()) return NULL;
    size_t hdr = sizeof(struct heap_block), page = region_page;
    if (align < 16) align = 16;
    /* Chunks are page-aligned: a smaller alignment fixes the offset now, a larger one
     * needs up to `align` bytes of room in front of the block. */
    size_t front = align <= page ? (hdr + align - 1) & ~(align - 1) : align;
    if (size > heap_region_span / 4 || front > heap_region_span / 4) return NULL;
    size_t pages = (front + size + page - 1) / page;
    unsigned cls = region_class(pages);
    size_t bytes = page << cls;
    uintptr_t chunk = 0;
    heap_mutex_lock(&region_lock);
    if (region_free[cls]) {
        chunk = (uintptr_t)region_free[cls];
        region_free[cls] = *(void **)chunk;
    } else if (region_brk + bytes <= heap_region_lo + heap_region_span && region_grow(bytes)) {
        chunk = region_brk;
        region_brk += bytes;
    }
    heap_mutex_unlock(&region_lock);
    if (!chunk) return NULL;
    uintptr_t user = align <= page ? chunk + front : (chunk + hdr + align - 1) & ~(align - 1);
    struct heap_block *b = heap_block_of((void *)user);
    b->gen = 0;
    b->bucket = 0;
    b->weight = 0;
    b->size = size;
    b->chunk_off = (uint32_t)(user - chunk);
    b->cls = cls;
    return (void *)user;
}

void heap_region_release(void *p)
{
    struct heap_block *b = heap_block_of(p);
    uintptr_t chunk = (uintptr_t)p - b->chunk_off;
    size_t bytes = region_page << b->cls;
    unsigned cls = b->cls;
    if (bytes >= REGION_GIVE_BACK) {
        int saved = errno;
        madvise((void *)chunk, bytes, MADV_DONTNEED);
        errno = saved;
    }
    heap_mutex_lock(&region_lock);
    *(void **)chunk = region_free[cls];
    region_free[cls] = (void *)chunk;
    heap_mutex_unlock(&region_lock);
}

size_t heap_region_usable(void *p)
{
    struct heap_block *b = heap_block_of(p);
    return (region_page << b->cls) - b->chunk_off;
}

void heap_region_fork(int phase)
{
    if (phase == 0)
        heap_mutex_lock(&region_lock);
    else if (phase == 1)
        heap_mutex_unlock(&region_lock);
    else
        region_lock = (heap_mutex_t)HEAP_MUTEX_INIT;
}
