/* rtmem — the runtime's own memory: anonymous mappings, never malloc (the heap profiler
 * interposes malloc, and a signal handler must not allocate).
 * Signal handlers: nothing here. Inside malloc: everything. */
#ifndef KESTREL_RTMEM_H
#define KESTREL_RTMEM_H
#include <stddef.h>
#include <sys/mman.h>

/* Zeroed, page-granular memory; pages are only backed once touched. NULL on failure. */
static inline void *rtmem_alloc(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* The same, left out of a fork child (MADV_DONTFORK): fork copies none of its page
 * tables, and the child forgets it without unmapping it (the range is not its own). */
static inline void *rtmem_alloc_nofork(size_t size)
{
    void *p = rtmem_alloc(size);
    if (p) madvise(p, size, MADV_DONTFORK);
    return p;
}

static inline void rtmem_free(void *p, size_t size)
{
    if (p) munmap(p, size);
}
#endif
