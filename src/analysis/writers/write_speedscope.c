/* The speedscope export (FORMATS.md §3, speedscope's file-format schema): one shared
 * frame table, one `sampled` profile per thread, stacks root first, weights in the
 * unit of the summary's sample type.
 *
 * A speedscope frame is a function of the summary (name, file, its hottest line), so
 * a flame graph merges a function's addresses and lines as the report does. Samples
 * keep their recorded order, for the Time Order view; consecutive samples of one
 * thread with the same stack are written once with their summed weight. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model/escape.h"
#include "analysis/writers/export.h"
#include "analysis/writers/writers.h"

#define SPEEDSCOPE_SCHEMA "https://www.speedscope.app/file-format-schema.json"

/* speedscope's units (its schema's ValueUnit); anything else is shown as a plain
 * number. */
static const char *speedscope_unit(const char *unit)
{
    static const char *const known[] = {"bytes", "microseconds", "milliseconds", "nanoseconds",
                                        "seconds"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (unit && !strcmp(unit, known[i])) return known[i];
    return "none";
}

/* The stack as a JSON array of function indices, root first. */
static char *stack_json(const struct summary *s, uint32_t stack)
{
    const struct profile_stack *st = &s->profile->stacks[stack];
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) return NULL;
    putc('[', m);
    for (uint32_t d = st->depth; d-- > 0;) {
        if (d + 1 != st->depth) putc(',', m);
        export_put_int(m, export_function(s, st->frames[d]));
    }
    putc(']', m);
    if (fclose(m)) {
        free(buf);
        return NULL;
    }
    return buf;
}

static void write_frames(const struct summary *s, FILE *out)
{
    fputs("\"shared\":{\"frames\":[", out);
    for (size_t i = 0; i < s->n_functions; i++) {
        const struct summary_function *f = &s->functions[i];
        fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
        escape_json(out, f->name);
        if (f->file) fputs(",\"file\":", out), escape_json(out, f->file);
        if (f->line > 0) fprintf(out, ",\"line\":%" PRId32, f->line);
        putc('}', out);
    }
    fputs("]}", out);
}

/* Sample i in the profile of `part`: -1 every sample the summary counts; with every
 * state exported, 0 its running and 1 its waiting samples, each a profile of its own. */
static int64_t part_value(const struct summary *s, size_t i, int part)
{
    if (part >= 0 && export_waiting(s, i) != part) return 0;
    return export_value(s, i);
}

/* One thread's profile over its samples (indices into the profile, in order). */
static int write_thread(const struct summary *s, size_t t, const size_t *idx, size_t n,
                        char **stacks, FILE *out, int first, int part)
{
    const struct profile *p = s->profile;
    int64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += part_value(s, idx[i], part);
    char *name = export_thread_title(p, t);
    if (!name) return -ENOMEM;
    fputs(first ? "\n{\"type\":\"sampled\",\"name\":" : ",\n{\"type\":\"sampled\",\"name\":", out);
    if (part == 1) {
        char *w = NULL;
        if (asprintf(&w, "%s " EXPORT_WAITING_FRAME, name) < 0) w = NULL;
        free(name);
        if (!(name = w)) return -ENOMEM;
    }
    size_t untimed = 0;
    for (size_t i = 0; i < n; i++)
        untimed += p->samples[idx[i]].time_ns < 0 && export_value(s, idx[i]);
    if (untimed && p->meta.untimed_samples) { /* the name is what speedscope shows */
        char *named = NULL;
        if (asprintf(&named, "%s (time order until %.3f s; the rest counted per stack)", name,
                     (double)p->meta.timed_end_ns / 1e9) < 0)
            named = NULL;
        escape_json(out, named ? named : name);
        free(named);
    } else {
        escape_json(out, name);
    }
    free(name);
    fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRId64 ",\"samples\":[",
            speedscope_unit(p->sample_types[s->type].unit), total);

    /* Runs of one stack, written once: samples then weights. */
    int64_t *weights = malloc((n + 1) * sizeof *weights);
    if (!weights) return -ENOMEM;
    size_t runs = 0;
    uint32_t last = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        int64_t v = part_value(s, idx[i], part);
        uint32_t st = p->samples[idx[i]].stack;
        if (!v) continue;
        if (runs && st == last) {
            weights[runs - 1] += v;
            continue;
        }
        if (!stacks[st] && !(stacks[st] = stack_json(s, st))) {
            free(weights);
            return -ENOMEM;
        }
        fputs(runs ? "," : "", out);
        fputs(stacks[st], out);
        weights[runs++] = v, last = st;
    }
    fputs("],\"weights\":[", out);
    for (size_t r = 0; r < runs; r++) {
        if (r) putc_unlocked(',', out);
        export_put_int(out, weights[r]);
    }
    fputs("]}", out);
    free(weights);
    return 0;
}

static int write_speedscope(const struct profile *p, const struct summary *s, FILE *out)
{
    int rc = -ENOMEM;
    /* Sample indices grouped by thread, each group in recorded order. */
    size_t *start = calloc(p->n_threads + 1, sizeof *start);
    size_t *fill = calloc(p->n_threads + 1, sizeof *fill);
    size_t *idx = malloc((p->n_samples + 1) * sizeof *idx);
    char **stacks = calloc(p->n_stacks + 1, sizeof *stacks);
    if (!start || !fill || !idx || !stacks) goto out;
    for (size_t i = 0; i < p->n_samples; i++)
        start[p->samples[i].thread + 1]++;
    for (size_t t = 0; t < p->n_threads; t++)
        start[t + 1] += start[t];
    for (size_t i = 0; i < p->n_samples; i++) {
        uint32_t t = p->samples[i].thread;
        idx[start[t] + fill[t]++] = i;
    }

    const char *src = p->source ? strrchr(p->source, '/') : NULL;
    fprintf(out, "{\"$schema\":\"%s\",\"exporter\":\"kestrel\",\"name\":", SPEEDSCOPE_SCHEMA);
    escape_json(out, src ? src + 1 : p->source ? p->source : "kestrel profile");
    fputs(",\"activeProfileIndex\":0,", out);
    write_frames(s, out);
    fputs(",\"profiles\":[", out);
    int written = 0;
    /* With every state: a thread's running samples, then its waiting ones apart. */
    int parts = export_marks_waiting(s) ? 2 : 1;
    for (size_t t = 0; t < p->n_threads; t++)
        for (int part = 0; part < parts; part++) {
            int any = 0, as = parts == 2 ? part : -1;
            for (size_t i = start[t]; i < start[t + 1] && !any; i++)
                any = part_value(s, idx[i], as) != 0;
            /* A thread with nothing to show is left out, unless no thread has anything. */
            if (!any && (written || t + 1 < p->n_threads || part + 1 < parts)) continue;
            if ((rc = write_thread(s, t, idx + start[t], start[t + 1] - start[t], stacks, out,
                                   !written, as)))
                goto out;
            written++;
        }
    fputs("]}\n", out);
    rc = ferror(out) ? -EIO : 0;
out:
    for (size_t i = 0; stacks && i < p->n_stacks; i++)
        free(stacks[i]);
    free(stacks), free(idx), free(fill), free(start);
    return rc;
}

const struct writer writer_speedscope = {"speedscope", ".speedscope.json", write_speedscope, 0};
