/* Helpers shared by the export writers (export.h). */
#include "analysis/writers/export.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *export_thread_root(const struct profile *p, size_t thread)
{
    const struct profile_thread *t = &p->threads[thread];
    char *s = NULL;
    if (asprintf(&s, "%s-%" PRId64, t->label, t->fiber) < 0) return NULL;
    return s;
}

void export_put_int(FILE *out, int64_t v)
{
    char buf[24], *e = buf + sizeof buf, *s = e;
    uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
    do
        *--s = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0) *--s = '-';
    fwrite_unlocked(s, 1, (size_t)(e - s), out);
}

static uint64_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return k;
}

static int grow(struct export_map *m)
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

uint32_t *export_map_slot(struct export_map *m, uint64_t key, int *added)
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

int64_t export_map_intern(struct export_map *m, uint64_t key, uint32_t fresh)
{
    int added;
    uint32_t *v = export_map_slot(m, key, &added);
    if (!v) return -1;
    if (added) *v = fresh;
    return *v;
}

void export_map_free(struct export_map *m)
{
    free(m->keys), free(m->vals);
    *m = (struct export_map){0};
}

int export_reserve(void **v, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *n = realloc(*v, c * size);
    if (!n) return -ENOMEM;
    *v = n, *cap = c;
    return 0;
}

int export_sort_by_time(const struct profile *p, size_t *order, size_t n)
{
    uint64_t *key = malloc((n + 1) * sizeof *key), *key2 = malloc((n + 1) * sizeof *key2);
    size_t *order2 = malloc((n + 1) * sizeof *order2);
    if (!key || !key2 || !order2) {
        free(key), free(key2), free(order2);
        return -ENOMEM;
    }
    /* Signed times ordered as unsigned keys. */
    for (size_t i = 0; i < n; i++)
        key[i] = (uint64_t)p->samples[order[i]].time_ns ^ (1ull << 63);
    for (int shift = 0; shift < 64; shift += 8) {
        size_t count[257] = {0};
        for (size_t i = 0; i < n; i++)
            count[(key[i] >> shift & 0xff) + 1]++;
        if (n && count[(key[0] >> shift & 0xff) + 1] == n) continue; /* one value: no-op */
        for (int b = 0; b < 256; b++)
            count[b + 1] += count[b];
        for (size_t i = 0; i < n; i++) {
            size_t at = count[key[i] >> shift & 0xff]++;
            key2[at] = key[i], order2[at] = order[i];
        }
        uint64_t *tk = key;
        key = key2, key2 = tk;
        memcpy(order, order2, n * sizeof *order);
    }
    free(key), free(key2), free(order2);
    return 0;
}
