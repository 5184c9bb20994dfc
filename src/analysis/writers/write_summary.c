/* The profile.json export (FORMATS.md §3): the summary an editor plugin or a script
 * reads instead of the whole profile. Every number comes from the aggregation
 * (summary.h) as it is; nothing is recomputed here.
 *
 *   {"format": "kestrel-summary", "version": 1, "source", "kind": "cpu"|"heap",
 *    "counts": "running"|"waiting"|"all" (CPU: the samples counted below),
 *    "sample_type": {"type", "unit"},
 *    "totals": {"value", "samples", "wall_ns", "rate_hz", "requested_hz", "period",
 *               "threads", "dropped", "truncated", "engine"},
 *    "states": {"running": SHARE, "waiting": SHARE},
 *    "threads": [{"label", "fiber", "tid", "name", "share": SHARE,
 *                 "running": {"value", "samples"}, "waiting": {"value", "samples"}}],
 *    "stacks": {"known", "incomplete": SHARE, "guessed": SHARE,
 *               "ends": [{"image", "path", "share": SHARE,
 *               "frame_pointers": {"functions": FRACTION, "without": BOOL} | null}],
 *               "by_end": {NAME: samples}},
 *    "functions": [{"name", "file", "line", "self": SHARE, "total": SHARE}],
 *    "lines": [{"function", "file", "line", "self": SHARE, "total": SHARE}]}
 *
 * SHARE is {"value", "samples", "share", "se", "significant"}: the value in the
 * sample type's unit, the samples it came from, its fraction of the total, that
 * fraction's standard error and whether it clears two standard errors. Functions and
 * lines are the hot ones, in the summary's order (self descending, then total); those
 * with no value at all are left out. Unknown strings are null, unknown numbers 0.
 * "stacks" says how whole the stacks are (summary_walks): whether the profile records
 * it at all ("known"), the share of samples with an incomplete stack and with a
 * guessed one (under PROFILE_GUESSED_FRAME), the images
 * their walks ended in with what their CFI says of frame pointers (the share of
 * functions that set one up, and whether that is a build without them; null when
 * not read), and, for a raw profile, the samples by how their walk ended (the names
 * of docs/raw-format.md). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model/escape.h"
#include "analysis/writers/export.h"
#include "analysis/writers/writers.h"
#include "analysis/symbols/fpcheck.h"
#include "runtime/unwind/unwind.h"

static void put_double(FILE *out, double v)
{
    if (isfinite(v))
        fprintf(out, "%.9g", v);
    else
        fputs("0", out);
}

static void put_str(FILE *out, const char *key, const char *v)
{
    fprintf(out, "\"%s\":", key);
    if (v)
        escape_json(out, v);
    else
        fputs("null", out);
}

static void put_share(FILE *out, const char *key, const struct summary_share *sh)
{
    fprintf(out, "\"%s\":{\"value\":%" PRId64 ",\"samples\":%" PRIu64 ",\"share\":", key, sh->value,
            sh->n);
    put_double(out, sh->share);
    fputs(",\"se\":", out);
    put_double(out, sh->se);
    fprintf(out, ",\"significant\":%s}", sh->significant ? "true" : "false");
}

static void put_totals(FILE *out, const struct profile *p, const struct summary *s)
{
    fprintf(out,
            "\"totals\":{\"value\":%" PRId64 ",\"samples\":%" PRIu64 ",\"wall_ns\":%" PRId64
            ",\"rate_hz\":",
            s->total, s->n_samples, profile_wall_ns(p));
    put_double(out, p->meta.rate_hz);
    fputs(",\"requested_hz\":", out);
    put_double(out, p->meta.requested_hz);
    fprintf(out,
            ",\"period\":%" PRId64 ",\"threads\":%zu,\"dropped\":%" PRIu64 ",\"truncated\":%" PRIu64
            ",",
            p->period, p->n_threads, p->meta.dropped, p->meta.truncated);
    put_str(out, "engine", p->meta.engine);
    if (p->meta.untimed_samples) /* a long run: the time order ends there */
        fprintf(out, ",\"timed_end_ns\":%" PRId64 ",\"untimed_samples\":%" PRIu64,
                p->meta.timed_end_ns, p->meta.untimed_samples);
    fputs("},\n", out);
}

static void put_threads(FILE *out, const struct profile *p, const struct summary *s)
{
    static const char *const state_names[PROFILE_NSTATES] = {"running", "waiting"};
    fputs("\"threads\":[", out);
    for (size_t t = 0; t < p->n_threads; t++) {
        const struct profile_thread *th = &p->threads[t];
        const struct summary_thread *st = &s->threads[t];
        fputs(t ? ",\n{" : "\n{", out);
        put_str(out, "label", th->label);
        fprintf(out, ",\"fiber\":%" PRId64 ",\"tid\":%" PRId64 ",", th->fiber, th->tid);
        put_str(out, "name", th->name);
        putc(',', out);
        put_share(out, "share", &st->share);
        for (int k = 0; k < PROFILE_NSTATES; k++)
            fprintf(out, ",\"%s\":{\"value\":%" PRId64 ",\"samples\":%" PRIu64 "}", state_names[k],
                    st->value[k], st->n[k]);
        putc('}', out);
    }
    fputs("],\n", out);
}

/* One hot function or line: {NAME_KEY: name, "file", "line", "self", "total"}. */
static void put_hot(FILE *out, int *first, const char *name_key, const char *name, const char *file,
                    int32_t line, const struct summary_share *self,
                    const struct summary_share *total)
{
    if (!self->value && !total->value) return;
    fputs(*first ? "\n{" : ",\n{", out);
    *first = 0;
    put_str(out, name_key, name);
    putc(',', out);
    put_str(out, "file", file);
    fprintf(out, ",\"line\":%" PRId32 ",", line);
    put_share(out, "self", self);
    putc(',', out);
    put_share(out, "total", total);
    putc('}', out);
}

static void put_stacks(FILE *out, const struct profile *p, const struct summary *s)
{
    const struct summary_walks *w = &s->walks;
    fprintf(out, "\"stacks\":{\"known\":%s,", w->known ? "true" : "false");
    put_share(out, "incomplete", &w->cut);
    putc(',', out);
    put_share(out, "guessed", &w->guessed);
    fputs(",\"ends\":[", out);
    for (size_t i = 0; i < w->n_ends; i++) {
        const struct profile_image *im = w->ends[i].image >= 0 ? &p->images[w->ends[i].image] : NULL;
        const char *slash = im ? strrchr(im->path, '/') : NULL;
        fputs(i ? ",{" : "{", out);
        put_str(out, "image", im ? (slash ? slash + 1 : im->path) : NULL);
        putc(',', out);
        put_str(out, "path", im ? im->path : NULL);
        putc(',', out);
        put_share(out, "share", &w->ends[i].share);
        fputs(",\"frame_pointers\":", out);
        if (im && im->fp_checked && im->fp_permille >= 0) {
            fputs("{\"functions\":", out);
            put_double(out, im->fp_permille / 1000.0);
            fprintf(out, ",\"without\":%s}",
                    im->fp_permille < FPCHECK_WITHOUT_PERMILLE ? "true" : "false");
        } else {
            fputs("null", out);
        }
        putc('}', out);
    }
    fputs("],\"by_end\":{", out);
    static const char *const names[UNWIND_STOPS] = UNWIND_STOP_NAMES;
    int first = 1;
    for (size_t k = 0; p->meta.ends_known && k < PROFILE_STACK_ENDS; k++) {
        if (!p->meta.end_samples[k]) continue;
        if (k < UNWIND_STOPS)
            fprintf(out, "%s\"%s\":%" PRIu64, first ? "" : ",", names[k], p->meta.end_samples[k]);
        else
            fprintf(out, "%s\"%zu\":%" PRIu64, first ? "" : ",", k, p->meta.end_samples[k]);
        first = 0;
    }
    fputs("}},\n", out);
}

static void put_functions(FILE *out, const struct summary *s)
{
    int first = 1;
    fputs("\"functions\":[", out);
    for (size_t i = 0; i < s->n_functions; i++) {
        const struct summary_function *f = &s->functions[i];
        put_hot(out, &first, "name", f->name, f->file, f->line, &f->self, &f->total);
    }
    fputs("],\n", out);
}

static void put_lines(FILE *out, const struct summary *s)
{
    int first = 1;
    fputs("\"lines\":[", out);
    for (size_t i = 0; i < s->n_lines; i++) {
        const struct summary_line *l = &s->lines[i];
        put_hot(out, &first, "function", s->functions[l->function].name, l->file, l->line, &l->self,
                &l->total);
    }
    fputs("]", out);
}

static int write_summary(const struct profile *p, const struct summary *s, FILE *out)
{
    const struct profile_sample_type *ty = &p->sample_types[s->type];
    fputs("{\"format\":\"kestrel-summary\",\"version\":1,", out);
    put_str(out, "source", p->source);
    fprintf(out, ",\"kind\":\"%s\",", p->kind == PROFILE_HEAP ? "heap" : "cpu");
    /* Which samples the totals, functions and lines count (a CPU profile's). */
    if (p->kind == PROFILE_CPU)
        fprintf(out, "\"counts\":\"%s\",",
                s->only_state == PROFILE_RUNNING   ? "running"
                : s->only_state == PROFILE_WAITING ? "waiting"
                                                   : "all");
    fputs("\n\"sample_type\":{", out);
    put_str(out, "type", ty->type);
    putc(',', out);
    put_str(out, "unit", ty->unit);
    fputs("},\n", out);
    put_totals(out, p, s);
    fputs("\"states\":{", out);
    put_share(out, "running", &s->state[PROFILE_RUNNING]);
    putc(',', out);
    put_share(out, "waiting", &s->state[PROFILE_WAITING]);
    fputs("},\n", out);
    put_threads(out, p, s);
    put_stacks(out, p, s);
    put_functions(out, s);
    put_lines(out, s);
    fputs("}\n", out);
    return ferror(out) ? -EIO : 0;
}

const struct writer writer_summary = {"summary", ".profile.json", write_summary, 0};
