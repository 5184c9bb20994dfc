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

char *export_process_root(const struct profile *p, size_t thread, int *oom)
{
    int32_t pr = p->threads[thread].process;
    *oom = 0;
    if (p->n_processes < 2 || pr < 0) return NULL;
    char buf[512];
    char *s = strdup(profile_process_label(p, pr, buf, sizeof buf));
    *oom = !s;
    return s;
}

char *export_thread_title(const struct profile *p, size_t thread)
{
    int oom;
    char *proc = export_process_root(p, thread, &oom), *t = export_thread_root(p, thread), *s;
    if (oom || !t || !proc) {
        free(proc);
        return oom ? (free(t), NULL) : t;
    }
    if (asprintf(&s, "%s %s", proc, t) < 0) s = NULL;
    free(proc), free(t);
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

int export_sort_by_time(const struct profile *p, size_t *order, size_t n)
{
    uint64_t *key = malloc((n + 1) * sizeof *key), *key2 = malloc((n + 1) * sizeof *key2);
    size_t *order2 = malloc((n + 1) * sizeof *order2);
    if (!key || !key2 || !order2) {
        free(key), free(key2), free(order2);
        return -ENOMEM;
    }
    /* Times as unsigned keys; a sample without one (-1: a long run's counts past its
     * row table, or a pprof input's) after every timed one. */
    for (size_t i = 0; i < n; i++) {
        int64_t t = p->samples[order[i]].time_ns;
        key[i] = t < 0 ? UINT64_MAX : (uint64_t)t;
    }
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
