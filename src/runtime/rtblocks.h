/* rtblocks — a table of fixed-size entries mapped a block at a time as its entries come
 * into use, so that what a program pays for a table sized for 16,384 threads is the
 * blocks its threads reached: the thread registry's slots and records, and the
 * engines' per-slot state (a signal engine's rings of a program of four threads take
 * one block of 64 slots, 280 KB, where the whole table took 71 MB of address space).
 *
 * A block is mapped (rtmem_alloc) by whoever first needs one of its entries and
 * published with a compare-and-swap; it is never unmapped while a signal handler may
 * read it (rtblocks_free is for tables no handler reads). Readers find an entry with
 * one load and no lock.
 *
 * Signal handlers: rtblocks_at(). Inside malloc: nothing. */
#ifndef KESTREL_RTBLOCKS_H
#define KESTREL_RTBLOCKS_H
#include <stdatomic.h>
#include <stddef.h>

struct rtblocks {
    size_t size;            /* bytes of one entry */
    size_t per;             /* entries a block */
    size_t n;               /* blocks */
    _Atomic(char *) *block; /* n of them, NULL until mapped */
};

/* A table of `entries` entries of `type`, `per` a block (entries a multiple of per),
 * none mapped yet. */
#define RTBLOCKS(name, type, entries, per)                                                         \
    static _Atomic(char *) name##_block[(entries) / (per)];                                        \
    static struct rtblocks name = {sizeof(type), (per), (entries) / (per), name##_block}

/* Entry i, or NULL while its block is not mapped. Async-signal-safe. */
static inline void *rtblocks_at(struct rtblocks *t, size_t i)
{
    if (i >= t->per * t->n) return NULL;
    char *b = atomic_load_explicit(&t->block[i / t->per], memory_order_acquire);
    return b ? b + (i % t->per) * t->size : NULL;
}

/* Maps the block of entry i (zeroed) if it is not yet: 0, or -ENOMEM (-EINVAL past
 * the table's end). Any thread but in a signal handler. */
int rtblocks_ensure(struct rtblocks *t, size_t i);
/* Every mapped entry below hi back to zero. */
void rtblocks_clear(struct rtblocks *t, size_t hi);
/* Unmaps every block: only for a table that no other thread and no handler reads. */
void rtblocks_free(struct rtblocks *t);
/* Bytes of address space mapped now. */
size_t rtblocks_mapped(const struct rtblocks *t);
#endif
