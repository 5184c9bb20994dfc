/* The terminal report of a comparison (report_diff.h). */
#include "analysis/writers/report_diff.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model/escape.h"

#define RED "\033[1;31m"
#define BLUE "\033[1;34m"
#define RESET "\033[0m"

static const char *main_build_id(const struct profile *p)
{
    for (size_t i = 0; i < p->n_images; i++)
        if (p->images[i].is_main) return p->images[i].build_id;
    return NULL;
}

static double duration_s(const struct profile *p)
{
    if (p->meta.start_unix_ns > 0 && p->meta.end_unix_ns > p->meta.start_unix_ns)
        return (double)(p->meta.end_unix_ns - p->meta.start_unix_ns) / 1e9;
    return 0;
}

/* The warnings of a comparison (different binaries, sample types, one profile with
 * under a tenth of the other's samples), one line each into out, "warning: ..." */
static void report_diff_warnings(const struct diff *d, FILE *out)
{
    const struct profile *a = d->base->profile, *b = d->now->profile;
    const char *ida = main_build_id(a), *idb = main_build_id(b);
    if (ida && idb && strcmp(ida, idb))
        fprintf(out, "warning: the profiled programs differ (build ids %.12s and %.12s): "
                     "functions are matched by name and file\n",
                ida, idb);
    const char *ta = a->sample_types[d->base->type].type, *tb = b->sample_types[d->now->type].type;
    if (strcmp(ta, tb))
        fprintf(out, "warning: different sample types (%s and %s)\n", ta, tb);
    double na = d->base->n_events, nb = d->now->n_events;
    if (na > 0 && nb > 0 && (na * 10 < nb || nb * 10 < na))
        fprintf(out, "warning: one profile has under a tenth of the other's samples (%.0f and "
                     "%.0f): small changes cannot be told from noise in it\n",
                na, nb);
}

static void describe(FILE *out, const char *label, const struct summary *s)
{
    const struct profile *p = s->profile;
    char *src = escape_utf8_dup(p->source ? p->source : "profile", "");
    fprintf(out, "%s %s: %" PRIu64 " samples", label, src ? src : "?", s->n_samples);
    free(src);
    if (p->meta.rate_hz > 0) fprintf(out, ", %.0f Hz", p->meta.rate_hz);
    double secs = duration_s(p);
    if (secs > 0) fprintf(out, ", %.2f s", secs);
    fputc('\n', out);
}

/* A share as a percentage, or a value in the sample type's unit (--absolute). */
static void put_amount(FILE *out, double v, int absolute, const char *unit)
{
    if (!absolute)
        fprintf(out, "%6.1f%%", v * 100);
    else if (!strcmp(unit, "nanoseconds"))
        fprintf(out, "%5.0fms", v / 1e6);
    else if (!strcmp(unit, "bytes"))
        fprintf(out, "%4.0fMiB", v / (1 << 20));
    else
        fprintf(out, "%7.0f", v);
}

static void put_delta(FILE *out, double v, int absolute, const char *unit)
{
    if (!absolute)
        fprintf(out, "%+7.1f", v * 100);
    else if (!strcmp(unit, "nanoseconds"))
        fprintf(out, "%+5.0fms", v / 1e6);
    else if (!strcmp(unit, "bytes"))
        fprintf(out, "%+4.0fMiB", v / (1 << 20));
    else
        fprintf(out, "%+7.0f", v);
}

static void table(struct diff *d, const struct report_diff_options *o, FILE *out, int total)
{
    diff_sort(d, total, o->by_delta);
    const char *unit = d->now->profile->sample_types[d->now->type].unit;
    fprintf(out, "\n%-6s %7s %7s %7s %7s %7s %6s  %-7s  FUNCTION\n", total ? "TOTAL" : "SELF",
            "BASE", "±SE", "NEW", "±SE", d->absolute ? "Δ" : "Δ pts", "z", "verdict");
    size_t shown = 0;
    for (size_t i = 0; i < d->n_rows && shown < o->top; i++) {
        const struct diff_row *r = &d->rows[i];
        const struct diff_side *s = total ? &r->total : &r->self;
        if (s->base == 0 && s->now == 0) continue;
        shown++;
        fputs("       ", out);
        put_amount(out, s->base, d->absolute, unit);
        fputc(' ', out);
        put_amount(out, s->base_se, d->absolute, unit);
        fputc(' ', out);
        put_amount(out, s->now, d->absolute, unit);
        fputc(' ', out);
        put_amount(out, s->now_se, d->absolute, unit);
        fputc(' ', out);
        put_delta(out, s->delta, d->absolute, unit);
        const char *verdict = s->real ? "real" : "noise";
        const char *on = o->colour && s->real ? (s->delta > 0 ? RED : BLUE) : "";
        fprintf(out, " %6.1f  %s%-7s%s  ", s->z, on, verdict, *on ? RESET : "");
        char *name = escape_utf8_dup(r->name, "");
        fputs(name ? name : "?", out);
        free(name);
        if (r->presence == DIFF_NEW_ONLY) fputs("  [new]", out);
        if (r->presence == DIFF_GONE) fputs("  [gone]", out);
        fputc('\n', out);
    }
    if (!shown) fputs("       (no samples)\n", out);
}

int report_diff_write(struct diff *d, const struct report_diff_options *o, FILE *out)
{
    describe(out, "BASE", d->base);
    describe(out, "NEW ", d->now);
    report_diff_warnings(d, out);
    fprintf(out,
            "%s compared; a change is real when it clears Holm's correction for %zu tests "
            "(self and total) at %.0f%% family-wise error: %zu self, %zu total\n",
            d->absolute ? "value per function (Poisson counts)" : "shares of each profile",
            d->n_tests, d->alpha * 100, d->n_real_self, d->n_real_total);
    table(d, o, out, 0);
    table(d, o, out, 1);
    return ferror(out) ? -EIO : 0;
}
