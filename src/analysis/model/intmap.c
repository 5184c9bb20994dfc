/* The interning map and the growable-array step (intmap.h). */
#include "analysis/model/intmap.h"

#include <errno.h>
#include <stdlib.h>

static uint64_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return k;
}

static int grow(struct intmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 1024;
    uint64_t *keys = calloc(cap, sizeof *keys);
    uint32_t *vals = malloc(cap * sizeof *vals);
    if (!keys || !vals) {
        free(keys), free(vals);
        return -ENOMEM;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i]) continue;
        size_t j = mix(m->keys[i]) & (cap - 1);
        while (keys[j])
            j = (j + 1) & (cap - 1);
        keys[j] = m->keys[i], vals[j] = m->vals[i];
    }
    free(m->keys), free(m->vals);
    m->keys = keys, m->vals = vals, m->cap = cap;
    return 0;
}

uint32_t *intmap_slot(struct intmap *m, uint64_t key, int *added)
{
    if ((m->n + 1) * 2 > m->cap && grow(m)) return NULL;
    size_t j = mix(key) & (m->cap - 1);
    *added = 0;
    while (m->keys[j]) {
        if (m->keys[j] == key) return &m->vals[j];
        j = (j + 1) & (m->cap - 1);
    }
    m->keys[j] = key, m->n++, *added = 1;
    return &m->vals[j];
}

int64_t intmap_intern(struct intmap *m, uint64_t key, uint32_t fresh)
{
    int added;
    uint32_t *v = intmap_slot(m, key, &added);
    if (!v) return -1;
    if (added) *v = fresh;
    return *v;
}

void intmap_free(struct intmap *m)
{
    free(m->keys), free(m->vals);
    *m = (struct intmap){0};
}

int array_reserve(void **v, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *n = realloc(*v, c * size);
    if (!n) return -ENOMEM;
    *v = n, *cap = c;
    return 0;
}
