/* intmap — an open-addressing map from nonzero 64-bit keys to 32-bit values, the
 * interning table of readers and writers (frames by address, stacks by root, nodes by
 * parent); and array_reserve, the one growable-array step of the analysis code. */
#ifndef KESTREL_INTMAP_H
#define KESTREL_INTMAP_H
#include <stddef.h>
#include <stdint.h>

struct intmap {
    uint64_t *keys; /* 0 = empty slot */
    uint32_t *vals;
    size_t cap; /* a power of two */
    size_t n;
};

/* The value slot for key (nonzero), valid until the next insertion; *added says it
 * was absent (the caller fills it). NULL when memory runs out. */
uint32_t *intmap_slot(struct intmap *m, uint64_t key, int *added);
/* The value for key; when absent, stores `fresh` and returns it. -1 when memory runs
 * out. */
int64_t intmap_intern(struct intmap *m, uint64_t key, uint32_t fresh);
void intmap_free(struct intmap *m);

/* Grows *v (elements of `size` bytes, capacity *cap) to hold `need`, doubling;
 * 0 or -ENOMEM. */
int array_reserve(void **v, size_t *cap, size_t need, size_t size);
#endif
