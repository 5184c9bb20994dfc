/* rtblocks.c — tables mapped a block at a time (rtblocks.h).
 *
 * Signal handlers: nothing here (rtblocks_at is inline in the header). Inside malloc:
 * nothing. */
#include "runtime/rtblocks.h"
#include "runtime/rtmem.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

static size_t rtblocks_bytes(const struct rtblocks *t)
{
    size_t page = (size_t)getpagesize();
    return (t->size * t->per + page - 1) & ~(page - 1);
}

int rtblocks_ensure(struct rtblocks *t, size_t i)
{
    if (i >= t->per * t->n) return -EINVAL;
    _Atomic(char *) *slot = &t->block[i / t->per];
    if (atomic_load_explicit(slot, memory_order_acquire)) return 0;
    size_t bytes = rtblocks_bytes(t);
    char *m = rtmem_alloc(bytes), *none = NULL;
    if (!m) return -ENOMEM;
    /* Two threads may map the same block at once: the first to publish wins. */
    if (!atomic_compare_exchange_strong_explicit(slot, &none, m, memory_order_acq_rel,
                                                 memory_order_acquire))
        rtmem_free(m, bytes);
    return 0;
}

void rtblocks_clear(struct rtblocks *t, size_t hi)
{
    for (size_t b = 0; b < t->n && b * t->per < hi; b++) {
        char *m = atomic_load_explicit(&t->block[b], memory_order_acquire);
        size_t n = hi - b * t->per < t->per ? hi - b * t->per : t->per;
        if (m) memset(m, 0, n * t->size);
    }
}

void rtblocks_free(struct rtblocks *t)
{
    size_t bytes = rtblocks_bytes(t);
    for (size_t b = 0; b < t->n; b++)
        rtmem_free(atomic_exchange(&t->block[b], NULL), bytes);
}

size_t rtblocks_mapped(const struct rtblocks *t)
{
    size_t k = 0;
    for (size_t b = 0; b < t->n; b++)
        k += atomic_load_explicit(&t->block[b], memory_order_relaxed) != NULL;
    return k * rtblocks_bytes(t);
}
