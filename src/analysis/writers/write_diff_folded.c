/* The folded form of a comparison (`kestrel diff --format folded`): one line per
 * stack of either profile, `root;...;leaf BASE NEW`, the two values of the compared
 * sample type over the samples each summary counted, as FlameGraph's difffolded.pl
 * writes them for flamegraph.pl --negate and friends. Stacks carry no thread root, so
 * that the same code path of two runs is one line. Names as in the folded export
 * (`;`, control characters and invalid UTF-8 written as U+FFFD); lines sorted. */
#include "analysis/writers/write_diff_folded.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model/escape.h"

struct dline {
    char *text;
    int64_t v[2]; /* BASE, NEW */
};

static int cmp_dline(const void *a, const void *b)
{
    return strcmp(((const struct dline *)a)->text, ((const struct dline *)b)->text);
}

/* Appends one line per distinct stack of s's counted samples, its value in v[side]. */
static int collect(const struct summary *s, int side, struct dline **lines, size_t *n,
                   size_t *cap)
{
    const struct profile *p = s->profile;
    int rc = -ENOMEM;
    int64_t *sum = calloc(p->n_stacks + 1, sizeof *sum);
    char **names = calloc(p->n_frames + 1, sizeof *names);
    if (!sum || !names) goto out;
    for (size_t i = 0; i < p->n_samples; i++)
        if (s->only_state == SUMMARY_ALL_STATES || p->samples[i].state == s->only_state)
            sum[p->samples[i].stack] += profile_values(p, i)[s->type];
    for (size_t f = 0; f < p->n_frames; f++)
        if (!(names[f] = escape_utf8_dup(p->frames[f].name, ";"))) goto out;
    for (size_t k = 0; k < p->n_stacks; k++) {
        if (!sum[k]) continue;
        const struct profile_stack *st = &p->stacks[k];
        size_t len = 1;
        for (uint32_t d = 0; d < st->depth; d++)
            len += strlen(names[st->frames[d]]) + 1;
        char *t = malloc(len), *o = t;
        if (!t) goto out;
        *o = 0;
        for (uint32_t d = st->depth; d-- > 0;)
            o = stpcpy(o, names[st->frames[d]]), *o++ = d ? ';' : 0;
        if (*n == *cap) {
            size_t c = *cap ? *cap * 2 : 256;
            struct dline *q = realloc(*lines, c * sizeof *q);
            if (!q) {
                free(t);
                goto out;
            }
            *lines = q, *cap = c;
        }
        (*lines)[(*n)++] = (struct dline){t, {side ? 0 : sum[k], side ? sum[k] : 0}};
    }
    rc = 0;
out:
    for (size_t f = 0; names && f < p->n_frames; f++)
        free(names[f]);
    free(names), free(sum);
    return rc;
}

int write_diff_folded(const struct summary *base, const struct summary *now, FILE *out)
{
    struct dline *lines = NULL;
    size_t n = 0, cap = 0;
    int rc = collect(base, 0, &lines, &n, &cap);
    if (!rc) rc = collect(now, 1, &lines, &n, &cap);
    if (!rc) {
        qsort(lines, n, sizeof *lines, cmp_dline);
        for (size_t i = 0; i < n;) {
            int64_t v[2] = {0, 0};
            size_t j = i;
            for (; j < n && !strcmp(lines[j].text, lines[i].text); j++)
                v[0] += lines[j].v[0], v[1] += lines[j].v[1];
            fprintf(out, "%s %" PRId64 " %" PRId64 "\n", lines[i].text, v[0], v[1]);
            i = j;
        }
        if (ferror(out)) rc = -EIO;
    }
    for (size_t i = 0; i < n; i++)
        free(lines[i].text);
    free(lines);
    return rc;
}
