/* The V8 CPU profile export (FORMATS.md §3), read by Chrome DevTools, VS Code and
 * speedscope: a tree of call nodes under "(root)", with each thread as a synthetic
 * node `<label>-<fiber>` below the root, `samples` naming the leaf node of each sample
 * in time order, `timeDeltas` in microseconds and 0-based line numbers.
 *
 * In V8's format a sample lasts until the next one starts, so sample k's duration is
 * timeDeltas[k+1]. kestrel writes each sample's own value there (its CPU time, or the
 * sampling period when the type counts samples), not the wall-clock gap, which would
 * charge one thread for another's time; a final "(idle)" sample closes the last one.
 * The timeline is therefore CPU time in recorded order. Heap profiles have no time
 * and are refused (-EINVAL). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model/escape.h"
#include "analysis/writers/export.h"
#include "analysis/writers/writers.h"

struct cpuprofile_node {
    uint32_t parent; /* node index; the root is its own parent */
    uint32_t fn;     /* summary function, or n_functions + thread root, or UINT32_MAX */
    uint64_t hits;
};

struct cpuprofile {
    const struct summary *s;
    struct cpuprofile_node *nodes;
    size_t n_nodes, cap_nodes;
    struct intmap children; /* (parent, fn) -> node */
    int64_t ns_per_unit;        /* a sample value times this is nanoseconds */
};

static int64_t child(struct cpuprofile *c, uint32_t parent, uint32_t fn)
{
    uint64_t key = ((uint64_t)parent << 32 | fn) + 1;
    int64_t id = intmap_intern(&c->children, key, (uint32_t)c->n_nodes);
    if (id < 0 || (size_t)id < c->n_nodes) return id;
    if (array_reserve((void **)&c->nodes, &c->cap_nodes, c->n_nodes + 1, sizeof *c->nodes))
        return -1;
    c->nodes[c->n_nodes++] = (struct cpuprofile_node){parent, fn, 0};
    return id;
}

/* Microseconds with nanosecond precision, so weights read back exactly. */
static void put_us(FILE *out, int64_t ns)
{
    export_put_int(out, ns / 1000);
    if (ns % 1000) {
        int64_t r = ns % 1000;
        char frac[4] = {'.', (char)('0' + r / 100), (char)('0' + r / 10 % 10),
                        (char)('0' + r % 10)};
        fwrite_unlocked(frac, 1, 4, out);
    }
}

static int sorted_by_time(const struct profile *p, const size_t *order, size_t n)
{
    for (size_t k = 1; k < n; k++) {
        uint64_t a = (uint64_t)p->samples[order[k - 1]].time_ns, b = (uint64_t)p->samples[order[k]].time_ns;
        if (b < a) return 0; /* as unsigned: -1 (no time) after every time */
    }
    return 1;
}

static void write_node(const struct cpuprofile *c, size_t id, const uint32_t *kids,
                       const size_t *first, FILE *out)
{
    const struct summary *s = c->s;
    const struct cpuprofile_node *n = &c->nodes[id];
    const char *name = "(root)", *file = NULL;
    int32_t line = 0;
    char *root = NULL;
    if (n->fn == UINT32_MAX - 1) {
        name = "(idle)";
    } else if (n->fn < s->n_functions) {
        name = s->functions[n->fn].name;
        file = s->functions[n->fn].file;
        line = s->functions[n->fn].line;
    } else if (n->fn != UINT32_MAX) {
        name = root = export_thread_title(s->profile, n->fn - s->n_functions);
        if (!root) name = "thread";
    }
    fprintf(out, "%s\n{\"id\":%zu,\"callFrame\":{\"functionName\":", id ? "," : "", id + 1);
    escape_json(out, name);
    free(root);
    fputs(",\"scriptId\":\"0\",\"url\":", out);
    escape_json(out, file ? file : "");
    fprintf(out, ",\"lineNumber\":%" PRId32 ",\"columnNumber\":-1},\"hitCount\":%" PRIu64,
            line > 0 ? line - 1 : -1, n->hits);
    if (first[id] != first[id + 1]) {
        fputs(",\"children\":[", out);
        for (size_t k = first[id]; k < first[id + 1]; k++) {
            if (k != first[id]) putc_unlocked(',', out);
            export_put_int(out, kids[k] + 1);
        }
        putc(']', out);
    }
    putc('}', out);
}

static int write_cpuprofile(const struct profile *p, const struct summary *s, FILE *out)
{
    const char *unit = p->sample_types[s->type].unit;
    struct cpuprofile c = {.s = s};
    if (unit && !strcmp(unit, "nanoseconds"))
        c.ns_per_unit = 1;
    else if (unit && !strcmp(unit, "count") && p->kind == PROFILE_CPU && p->period > 0)
        c.ns_per_unit = p->period;
    else
        return -EINVAL;

    int rc = -ENOMEM;
    size_t n_order = 0;
    size_t *order = malloc((p->n_samples + 1) * sizeof *order);
    uint32_t *leaf = malloc((p->n_samples + 1) * sizeof *leaf);
    struct intmap leaf_of = {0}; /* (thread root, stack) -> node */
    uint32_t *kids = NULL;
    size_t *first = NULL;
    if (!order || !leaf || child(&c, 0, UINT32_MAX) < 0) goto out;
    /* DevTools' own mark for time a thread did not run: with every state exported,
     * waiting samples are "(idle)" (their stacks are in speedscope and folded). */
    int64_t idle = child(&c, 0, UINT32_MAX - 1);
    if (idle < 0) goto out;
    for (size_t i = 0; i < p->n_samples; i++)
        if (export_value(s, i)) order[n_order++] = i;
    if (!sorted_by_time(p, order, n_order) && export_sort_by_time(p, order, n_order)) goto out;

    for (size_t k = 0; k < n_order; k++) {
        const struct profile_sample *sm = &p->samples[order[k]];
        if (export_waiting(s, order[k])) {
            leaf[k] = (uint32_t)idle;
            c.nodes[idle].hits++;
            continue;
        }
        int added;
        uint32_t *slot =
            intmap_slot(&leaf_of, ((uint64_t)sm->thread << 32 | sm->stack) + 1, &added);
        if (!slot) goto out;
        if (added) {
            int64_t node = child(&c, 0, (uint32_t)(s->n_functions + sm->thread));
            const struct profile_stack *st = &p->stacks[sm->stack];
            for (uint32_t d = st->depth; d-- > 0 && node >= 0;)
                node = child(&c, (uint32_t)node, export_function(s, st->frames[d]));
            if (node < 0) goto out;
            *slot = (uint32_t)node; /* child() inserts into another map: slot is valid */
        }
        uint32_t node = *slot;
        leaf[k] = (uint32_t)node;
        c.nodes[node].hits++;
    }
    c.nodes[idle].hits++; /* the closing sample */

    /* Children lists, in creation order. */
    kids = malloc(c.n_nodes * sizeof *kids);
    first = calloc(c.n_nodes + 1, sizeof *first);
    if (!kids || !first) goto out;
    for (size_t i = 1; i < c.n_nodes; i++)
        first[c.nodes[i].parent + 1]++;
    for (size_t i = 0; i < c.n_nodes; i++)
        first[i + 1] += first[i];
    size_t *fill = calloc(c.n_nodes + 1, sizeof *fill);
    if (!fill) goto out;
    for (size_t i = 1; i < c.n_nodes; i++) {
        uint32_t par = c.nodes[i].parent;
        kids[first[par] + fill[par]++] = (uint32_t)i;
    }
    free(fill);

    int64_t start_us = p->meta.start_unix_ns > 0 ? p->meta.start_unix_ns / 1000 : 0;
    int64_t total_ns = 0;
    for (size_t k = 0; k < n_order; k++)
        total_ns += export_value(s, order[k]) * c.ns_per_unit;
    fputs("{\"nodes\":[", out);
    for (size_t i = 0; i < c.n_nodes; i++)
        write_node(&c, i, kids, first, out);
    fprintf(out, "],\n\"startTime\":%" PRId64 ",\"endTime\":", start_us);
    put_us(out, start_us * 1000 + total_ns);
    if (p->meta.untimed_samples) { /* where this timeline stops being the run's time order */
        int64_t timed_ns = 0;
        for (size_t k = 0; k < n_order && p->samples[order[k]].time_ns >= 0; k++)
            timed_ns += export_value(s, order[k]) * c.ns_per_unit;
        fputs(",\"timedEndTime\":", out);
        put_us(out, start_us * 1000 + timed_ns);
        fprintf(out, ",\"untimedSamples\":%" PRIu64, p->meta.untimed_samples);
    }
    fputs(",\n\"samples\":[", out);
    for (size_t k = 0; k < n_order; k++) {
        export_put_int(out, leaf[k] + 1);
        putc_unlocked(',', out);
    }
    fprintf(out, "%" PRId64 "],\n\"timeDeltas\":[0", idle + 1);
    for (size_t k = 0; k < n_order; k++) {
        putc_unlocked(',', out);
        put_us(out, export_value(s, order[k]) * c.ns_per_unit);
    }
    fputs("]}\n", out);
    rc = ferror(out) ? -EIO : 0;
out:
    intmap_free(&leaf_of);
    intmap_free(&c.children);
    free(c.nodes), free(kids), free(first), free(leaf), free(order);
    return rc;
}

const struct writer writer_cpuprofile = {"cpuprofile", ".cpuprofile", write_cpuprofile, 0};
