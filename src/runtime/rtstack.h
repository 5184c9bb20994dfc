/* rtstack — stacks of the runtime's own, for work that must not take room on a program
 * thread's stack: the signal engine's handler (an alternate signal stack) and the heap
 * profiler's sampling inside malloc (arch_on_stack). A pool is a fixed number of
 * stacks, each mapped at its first claim with a PROT_NONE guard page below it (an
 * overflow faults instead of writing into a neighbouring mapping) and kept for the
 * next claimer: a pool's memory is bounded by its size, and only the pages its users
 * touched are backed.
 *
 * A claim is a compare-and-swap (and, the first time a stack is used, an mmap), a
 * release a store. Signal handlers: rtstack_top() and rtstack_holds(). Inside malloc:
 * everything. */
#ifndef KESTREL_RTSTACK_H
#define KESTREL_RTSTACK_H
#include <stdatomic.h>
#include <stddef.h>

struct rtstack {
    _Atomic int holder; /* 0 free; else who claimed it (a thread id, or any nonzero) */
    char *lo;           /* its lowest usable byte, above the guard page; NULL until mapped */
};

struct rtstack_pool {
    size_t size;            /* usable bytes of each stack, a multiple of the page size */
    unsigned n;             /* stacks */
    struct rtstack *s;      /* n of them */
    _Atomic unsigned limit; /* 1 + the highest index ever mapped */
};

/* A pool of `count` stacks of `bytes` each, none mapped yet. */
#define RTSTACK_POOL(name, count, bytes)                                                           \
    static struct rtstack name##_stacks[count];                                                    \
    static struct rtstack_pool name = {(bytes), (count), name##_stacks, 0}

/* Claims a stack for `holder` (nonzero), looking first at stack `hint` % n (callers
 * spread over the pool by starting apart). Returns its index, or -1 when every stack
 * is claimed or the one found cannot be mapped. */
int rtstack_claim(struct rtstack_pool *p, unsigned hint, int holder);
void rtstack_release(struct rtstack_pool *p, int i);
/* The stack `holder` claimed, or -1 (the first, if it claimed several). */
int rtstack_held_by(struct rtstack_pool *p, int holder);

/* The end of a claimed stack, 16-byte aligned: where its stack pointer starts. */
static inline char *rtstack_top(const struct rtstack_pool *p, int i)
{
    return p->s[i].lo + p->size;
}

/* The stack whose lowest usable byte is lo, or -1. */
int rtstack_index(struct rtstack_pool *p, const void *lo);

/* Whether address a lies in claimed stack i, its top included (a stack pointer there
 * is on the stack, which holds nothing yet). */
static inline int rtstack_holds(const struct rtstack_pool *p, int i, unsigned long a)
{
    return i >= 0 && a - (unsigned long)p->s[i].lo <= p->size;
}

/* In a fork child, where only the forking thread exists: every stack released but
 * `keep` (the one that thread still holds, or -1), which `holder` holds from now on. */
void rtstack_after_fork_child(struct rtstack_pool *p, int keep, int holder);
#endif
