/* The folded-stacks export (FORMATS.md §3): one line per distinct stack,
 * `root;...;leaf VALUE`, with the thread as a synthetic root frame `<label>-<fiber>`
 * (below a root frame for its process, `gzip [1234]`, when the profile holds several),
 * read by flamegraph.pl, inferno and speedscope. Exported with every state (--state
 * all), a waiting sample's stack ends in a `[waiting]` leaf frame. VALUE is the sample value of the
 * summary's type, the same quantity every other export shows.
 *
 * The format has no escaping: a `;` or a line break inside a name would split it into
 * frames or lines, so those (and every other control character and invalid UTF-8)
 * are written as U+FFFD. Lines are sorted, so the output is deterministic. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model/escape.h"
#include "analysis/writers/export.h"
#include "analysis/writers/writers.h"

struct folded_line {
    char *text; /* "root;...;leaf" */
    int64_t value;
};

/* A distinct (root, stack) with its summed value, before names are rendered. */
struct folded_key {
    uint32_t root, stack;
    int waiting; /* marked with a [waiting] leaf */
    int64_t value;
};

static int cmp_line(const void *a, const void *b)
{
    return strcmp(((const struct folded_line *)a)->text, ((const struct folded_line *)b)->text);
}

/* Renders "root;f1;...;leaf" for a root name and a leaf-first stack, with a
 * "[waiting]" leaf for a waiting sample's. */
static char *render(const struct profile *p, char **names, const char *root, uint32_t stack,
                    int waiting)
{
    const struct profile_stack *st = &p->stacks[stack];
    size_t len = strlen(root) + 1 + (waiting ? sizeof EXPORT_WAITING_FRAME : 0);
    for (uint32_t d = 0; d < st->depth; d++)
        len += strlen(names[st->frames[d]]) + 1;
    char *t = malloc(len), *o = t;
    if (!t) return NULL;
    o = stpcpy(o, root);
    for (uint32_t d = st->depth; d-- > 0;)
        *o++ = ';', o = stpcpy(o, names[st->frames[d]]);
    if (waiting) *o++ = ';', o = stpcpy(o, EXPORT_WAITING_FRAME);
    return t;
}

static int write_folded(const struct profile *p, const struct summary *s, FILE *out)
{
    int rc = -ENOMEM;
    size_t n_keys = 0, n_lines = 0;
    char **names = calloc(p->n_frames + 1, sizeof *names);
    char **roots = calloc(p->n_threads + 1, sizeof *roots);
    uint32_t *root_of = calloc(p->n_threads + 1, sizeof *root_of);
    struct folded_key *keys = malloc((p->n_samples + 1) * sizeof *keys);
    struct folded_line *lines = NULL;
    struct intmap seen = {0}; /* (root, stack) -> keys index */
    if (!names || !roots || !root_of || !keys) goto out;
    for (size_t f = 0; f < p->n_frames; f++)
        if (!(names[f] = escape_utf8_dup(p->frames[f].name, ";"))) goto out;
    /* Threads with the same root name share one root. */
    for (size_t t = 0; t < p->n_threads; t++) {
        int oom;
        char *raw = export_thread_root(p, t), *proc = export_process_root(p, t, &oom);
        char *thr = raw ? escape_utf8_dup(raw, ";") : NULL;
        char *pr = proc ? escape_utf8_dup(proc, ";") : NULL;
        /* A process tree: the process is the root, its threads below it. */
        if (pr && thr && asprintf(&roots[t], "%s;%s", pr, thr) < 0) roots[t] = NULL;
        else if (!proc && !oom) roots[t] = thr, thr = NULL;
        free(raw), free(proc), free(thr), free(pr);
        if (!roots[t]) goto out;
        root_of[t] = (uint32_t)t;
        for (size_t u = 0; u < t; u++)
            if (!strcmp(roots[u], roots[t])) {
                root_of[t] = (uint32_t)u;
                break;
            }
    }

    for (size_t i = 0; i < p->n_samples; i++) {
        int64_t v = export_value(s, i);
        if (!v) continue;
        uint32_t root = root_of[p->samples[i].thread], stack = p->samples[i].stack;
        int added, waiting = export_waiting(s, i);
        uint64_t key = ((uint64_t)root << 33 | (uint64_t)stack << 1 | (uint64_t)waiting) + 1;
        uint32_t *slot = intmap_slot(&seen, key, &added);
        if (!slot) goto out;
        if (added)
            *slot = (uint32_t)n_keys, keys[n_keys++] = (struct folded_key){root, stack, waiting, 0};
        keys[*slot].value += v;
    }
    lines = malloc((n_keys + 1) * sizeof *lines);
    if (!lines) goto out;
    for (size_t i = 0; i < n_keys; i++) {
        char *text = render(p, names, roots[keys[i].root], keys[i].stack, keys[i].waiting);
        if (!text) goto out;
        lines[n_lines++] = (struct folded_line){text, keys[i].value};
    }
    /* Different stacks can print alike (one function at two addresses): merge them. */
    qsort(lines, n_lines, sizeof *lines, cmp_line);
    for (size_t i = 0; i < n_lines;) {
        size_t j = i + 1;
        int64_t v = lines[i].value;
        for (; j < n_lines && !strcmp(lines[i].text, lines[j].text); j++)
            v += lines[j].value;
        fputs(lines[i].text, out);
        putc_unlocked(' ', out);
        export_put_int(out, v);
        putc_unlocked('\n', out);
        i = j;
    }
    rc = ferror(out) ? -EIO : 0;
out:
    intmap_free(&seen);
    for (size_t i = 0; lines && i < n_lines; i++)
        free(lines[i].text);
    for (size_t f = 0; names && f < p->n_frames; f++)
        free(names[f]);
    for (size_t t = 0; roots && t < p->n_threads; t++)
        free(roots[t]);
    free(lines), free(keys), free(root_of), free(roots), free(names);
    return rc;
}

const struct writer writer_folded = {"folded", ".folded", write_folded, 0};
