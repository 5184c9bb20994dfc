/* rtstack.c — pools of the runtime's own stacks (rtstack.h).
 *
 * Signal handlers: nothing here. Inside malloc: everything (mmap and mprotect, once per
 * stack). A stack's `lo` is written by its claimer alone, the first time, before the
 * stack is used; it is never unmapped, so a later claimer that finds it set reads the
 * claimer's store through the compare-and-swap that made the claim. */
#include "runtime/rtstack.h"
#include "runtime/rtmem.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

/* The stack and, below it, its guard page. getpagesize is a load, where sysconf's
 * frame took 100 bytes more of the claiming thread's stack. */
static char *rtstack_map(size_t size)
{
    size_t page = (size_t)getpagesize();
    int saved = errno;
    char *m = rtmem_alloc(size + page);
    if (m && mprotect(m, page, PROT_NONE) != 0) {
        rtmem_free(m, size + page);
        m = NULL;
    }
    errno = saved; /* inside malloc: the caller's errno is the program's */
    return m ? m + page : NULL;
}

int rtstack_claim(struct rtstack_pool *p, unsigned hint, int holder)
{
    for (unsigned k = 0; k < p->n; k++) {
        struct rtstack *s = &p->s[(hint + k) % p->n];
        int idle = 0;
        if (atomic_load_explicit(&s->holder, memory_order_relaxed) ||
            !atomic_compare_exchange_strong_explicit(&s->holder, &idle, holder,
                                                     memory_order_acquire, memory_order_relaxed))
            continue;
        if (!s->lo && !(s->lo = rtstack_map(p->size))) {
            atomic_store_explicit(&s->holder, 0, memory_order_release);
            return -1;
        }
        unsigned i = (unsigned)(s - p->s), limit = atomic_load(&p->limit);
        while (limit <= i && !atomic_compare_exchange_weak(&p->limit, &limit, i + 1))
            ;
        return (int)i;
    }
    return -1;
}

int rtstack_index(struct rtstack_pool *p, const void *lo)
{
    unsigned limit = atomic_load(&p->limit);
    for (unsigned i = 0; lo && i < limit; i++)
        if (p->s[i].lo == lo) return (int)i;
    return -1;
}

int rtstack_held_by(struct rtstack_pool *p, int holder)
{
    unsigned limit = atomic_load(&p->limit);
    for (unsigned i = 0; i < limit; i++)
        if (atomic_load_explicit(&p->s[i].holder, memory_order_relaxed) == holder) return (int)i;
    return -1;
}

void rtstack_release(struct rtstack_pool *p, int i)
{
    if (i >= 0 && (unsigned)i < p->n)
        atomic_store_explicit(&p->s[i].holder, 0, memory_order_release);
}

void rtstack_after_fork_child(struct rtstack_pool *p, int keep, int holder)
{
    for (unsigned i = 0; i < p->n; i++)
        atomic_store_explicit(&p->s[i].holder, (int)i == keep ? holder : 0, memory_order_relaxed);
}
