/* Function-by-function differences of two aggregated profiles (diff.h). */
#include "analysis/aggregate/diff.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/aggregate/stats.h"
#include "analysis/model/intmap.h"

/* Two-sided p-value of a standard normal statistic. */
static double diff_p_value(double z)
{
    return erfc(fabs(z) / sqrt(2.0));
}

/* Mean value of one sampling event of s: a CPU sample's nanoseconds, a heap event's
 * bytes. */
static double event_weight(const struct summary *s)
{
    return s->n_events > 0 ? (double)s->total / s->n_events : 0;
}

static void side_share(struct diff_side *d, const struct summary_share *b,
                       const struct summary *sb, const struct summary_share *n,
                       const struct summary *sn)
{
    d->base = b ? b->share : 0;
    d->base_se = b ? b->se : 0;
    d->now = n ? n->share : 0;
    d->now_se = n ? n->se : 0;
    d->delta = d->now - d->base;
    double n1 = sb->n_events, n2 = sn->n_events;
    d->z = 0;
    if (n1 > 0 && n2 > 0) {
        double pooled = (d->base * n1 + d->now * n2) / (n1 + n2);
        double se = sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2));
        if (se > 0) d->z = d->delta / se;
    }
    d->p = diff_p_value(d->z);
}

static void side_absolute(struct diff_side *d, const struct summary_share *b,
                          const struct summary *sb, const struct summary_share *n,
                          const struct summary *sn)
{
    double w1 = event_weight(sb), w2 = event_weight(sn);
    double v1 = b ? (double)b->value : 0, v2 = n ? (double)n->value : 0;
    double e1 = w1 > 0 ? v1 / w1 : 0, e2 = w2 > 0 ? v2 / w2 : 0; /* events behind each */
    d->base = v1;
    d->base_se = w1 * sqrt(e1);
    d->now = v2;
    d->now_se = w2 * sqrt(e2);
    d->delta = v2 - v1;
    double se = sqrt(w1 * w1 * e1 + w2 * w2 * e2);
    d->z = se > 0 ? d->delta / se : 0;
    d->p = diff_p_value(d->z);
}

/* The key functions are matched by across profiles: name and file, as the summary
 * tells them apart within one profile (image indices differ between profiles). A
 * frame left as a raw address ("0x7f...") differs in every run of a program with
 * ASLR, so its key is its image and its offset in it instead. malloc'd; NULL when
 * memory runs out. */
static char *function_key(const struct summary *s, const struct summary_function *fn)
{
    const struct profile *p = s->profile;
    char *k = NULL;
    unsigned long long addr;
    char end;
    if (fn->image >= 0 && sscanf(fn->name, "0x%llx%c", &addr, &end) == 1) {
        const struct profile_image *im = &p->images[fn->image];
        const char *base = strrchr(im->path, '/');
        if (asprintf(&k, "%s+0x%llx", base ? base + 1 : im->path,
                     addr - (unsigned long long)im->base) < 0)
            k = NULL;
    } else if (asprintf(&k, "%s\t%s", fn->name, fn->file ? fn->file : "") < 0) {
        k = NULL;
    }
    return k;
}

static uint64_t key_hash(const char *k)
{
    uint64_t h = 1469598103934665603ull;
    for (; *k; k++)
        h = (h ^ (unsigned char)*k) * 1099511628211ull;
    return h | 1; /* the map's keys are nonzero */
}

struct by_p {
    double p;
    size_t row;
};

static int by_p_cmp(const void *a, const void *b)
{
    double x = ((const struct by_p *)a)->p, y = ((const struct by_p *)b)->p;
    return x < y ? -1 : x > y;
}

/* Holm's step-down over every test of the comparison, self and total together (one
 * family: the promise is about the whole table): the k-th smallest p-value (from 0)
 * of m is rejected when it and every smaller one satisfy p <= alpha / (m - k). */
static void holm(struct diff *d, struct by_p *scratch)
{
    size_t m = 0;
    for (size_t i = 0; i < 2 * d->n_rows; i++) {
        struct diff_side *s = i % 2 ? &d->rows[i / 2].total : &d->rows[i / 2].self;
        s->real = 0;
        if (s->z != 0) scratch[m++] = (struct by_p){s->p, i};
    }
    qsort(scratch, m, sizeof *scratch, by_p_cmp);
    d->n_tests = m;
    for (size_t k = 0; k < m && scratch[k].p <= d->alpha / (double)(m - k); k++) {
        size_t i = scratch[k].row;
        if (i % 2)
            d->rows[i / 2].total.real = 1, d->n_real_total++;
        else
            d->rows[i / 2].self.real = 1, d->n_real_self++;
    }
}

struct diff *diff_build(const struct summary *base, const struct summary *now, int absolute,
                        double alpha)
{
    struct diff *d = calloc(1, sizeof *d);
    size_t cap = base->n_functions + now->n_functions;
    if (!d || !(d->rows = calloc(cap ? cap : 1, sizeof *d->rows))) return free(d), NULL;
    d->base = base, d->now = now, d->absolute = absolute, d->alpha = alpha;
    char *matched = calloc(base->n_functions + 1, 1);
    char **bkeys = calloc(base->n_functions + 1, sizeof *bkeys);
    struct by_p *scratch = malloc((2 * cap + 1) * sizeof *scratch);
    struct intmap first = {0}; /* key hash -> BASE function (the first with it) */
    int ok = matched && bkeys && scratch;
    for (size_t i = 0; ok && i < base->n_functions; i++)
        ok = (bkeys[i] = function_key(base, &base->functions[i])) &&
             intmap_intern(&first, key_hash(bkeys[i]), (uint32_t)i) >= 0;
    void (*side)(struct diff_side *, const struct summary_share *, const struct summary *,
                 const struct summary_share *, const struct summary *) =
        absolute ? side_absolute : side_share;
    for (size_t j = 0; ok && j < now->n_functions; j++) {
        const struct summary_function *fn = &now->functions[j], *fb = NULL;
        char *key = function_key(now, fn);
        if (!(ok = key != NULL)) break;
        int added;
        uint32_t *at = intmap_slot(&first, key_hash(key), &added);
        if (!(ok = at != NULL)) break;
        if (added) { /* no BASE function has this key's hash */
            *at = UINT32_MAX;
        } else if (*at != UINT32_MAX && !matched[*at] && !strcmp(bkeys[*at], key)) {
            fb = &base->functions[*at];
        } else { /* a hash collision or a key twice: look further */
            for (size_t i = 0; i < base->n_functions && !fb; i++)
                if (!matched[i] && !strcmp(bkeys[i], key)) fb = &base->functions[i];
        }
        free(key);
        if (fb) matched[fb - base->functions] = 1;
        struct diff_row *r = &d->rows[d->n_rows++];
        r->name = fn->name, r->file = fn->file;
        r->presence = fb ? DIFF_BOTH : DIFF_NEW_ONLY;
        side(&r->self, fb ? &fb->self : NULL, base, &fn->self, now);
        side(&r->total, fb ? &fb->total : NULL, base, &fn->total, now);
    }
    for (size_t i = 0; ok && i < base->n_functions; i++) {
        if (matched[i]) continue;
        const struct summary_function *fb = &base->functions[i];
        struct diff_row *r = &d->rows[d->n_rows++];
        r->name = fb->name, r->file = fb->file, r->presence = DIFF_GONE;
        side(&r->self, &fb->self, base, NULL, now);
        side(&r->total, &fb->total, base, NULL, now);
    }
    for (size_t i = 0; bkeys && i < base->n_functions; i++)
        free(bkeys[i]);
    free(bkeys), free(matched);
    intmap_free(&first);
    if (!ok) {
        free(scratch), diff_free(d);
        return NULL;
    }
    holm(d, scratch);
    free(scratch);
    return d;
}

static int sort_total, sort_delta; /* diff_sort's key; qsort has no context argument */

static int row_cmp(const void *a, const void *b)
{
    const struct diff_row *x = a, *y = b;
    const struct diff_side *sx = sort_total ? &x->total : &x->self;
    const struct diff_side *sy = sort_total ? &y->total : &y->self;
    double kx = fabs(sort_delta ? sx->delta : sx->z), ky = fabs(sort_delta ? sy->delta : sy->z);
    if (kx != ky) return kx > ky ? -1 : 1;
    if (fabs(sx->delta) != fabs(sy->delta)) return fabs(sx->delta) > fabs(sy->delta) ? -1 : 1;
    return strcmp(x->name, y->name);
}

void diff_sort(struct diff *d, int by_total, int by_delta)
{
    sort_total = by_total, sort_delta = by_delta;
    qsort(d->rows, d->n_rows, sizeof *d->rows, row_cmp);
}

void diff_free(struct diff *d)
{
    if (!d) return;
    free(d->rows);
    free(d);
}

/* ------------------------------------------------------------------ NEW - BASE */

static int counted(const struct summary *s, size_t i)
{
    const struct profile *p = s->profile;
    return s->only_state == SUMMARY_ALL_STATES || p->samples[i].state == s->only_state;
}

/* Appends the counted samples of s to m, values times `sign`, with their threads,
 * images, frames and stacks. 0 or -1. */
static int diff_append(struct profile *m, const struct summary *s, int sign)
{
    const struct profile *p = s->profile;
    size_t image0 = m->n_images, thread0 = m->n_threads;
    int rc = -1;
    int64_t *frame_of = malloc((p->n_frames + 1) * sizeof *frame_of);
    int64_t *stack_of = malloc((p->n_stacks + 1) * sizeof *stack_of);
    uint32_t *frames = malloc(PROFILE_MAX_DEPTH * sizeof *frames);
    if (!frame_of || !stack_of || !frames) goto out;
    for (size_t i = 0; i < p->n_images; i++)
        if (profile_add_image(m, &p->images[i]) < 0) goto out;
    for (size_t i = 0; i < p->n_threads; i++) {
        const struct profile_thread *t = &p->threads[i];
        if (profile_add_thread(m, t->label, t->fiber, t->tid, t->name) < 0) goto out;
    }
    for (size_t i = 0; i < p->n_frames; i++) {
        struct profile_frame f = p->frames[i];
        if (f.image >= 0) f.image += (int32_t)image0;
        if ((frame_of[i] = profile_intern_frame(m, &f)) < 0) goto out;
    }
    for (size_t i = 0; i < p->n_stacks; i++) {
        const struct profile_stack *st = &p->stacks[i];
        for (uint32_t d = 0; d < st->depth; d++)
            frames[d] = (uint32_t)frame_of[st->frames[d]];
        if ((stack_of[i] = profile_intern_stack(m, frames, st->depth)) < 0) goto out;
    }
    int64_t vals[PROFILE_MAX_SAMPLE_TYPES];
    for (size_t i = 0; i < p->n_samples; i++) {
        if (!counted(s, i)) continue;
        const struct profile_sample *sm = &p->samples[i];
        for (size_t t = 0; t < p->n_sample_types; t++)
            vals[t] = sign * profile_values(p, i)[t];
        if (profile_add_sample(m, (uint32_t)(thread0 + sm->thread), (uint32_t)stack_of[sm->stack],
                               sm->state, sm->time_ns, vals))
            goto out;
    }
    rc = 0;
out:
    free(frame_of), free(stack_of), free(frames);
    return rc;
}

struct profile *diff_profile(const struct summary *base, const struct summary *now,
                             const char **why)
{
    const struct profile *a = base->profile, *b = now->profile;
    *why = "out of memory";
    if (a->kind != b->kind || a->n_sample_types != b->n_sample_types) {
        *why = "the two profiles have different sample types";
        return NULL;
    }
    for (size_t t = 0; t < a->n_sample_types; t++)
        if (strcmp(a->sample_types[t].type, b->sample_types[t].type)) {
            *why = "the two profiles have different sample types";
            return NULL;
        }
    struct profile *m = profile_new(b->kind);
    if (!m) return NULL;
    for (size_t t = 0; t < b->n_sample_types; t++)
        if (profile_add_sample_type(m, b->sample_types[t].type, b->sample_types[t].unit) < 0)
            goto fail;
    m->default_type = now->type;
    m->period = b->period;
    if (b->period_type.type) {
        m->period_type.type = strdup(b->period_type.type);
        m->period_type.unit = strdup(b->period_type.unit ? b->period_type.unit : "");
        if (!m->period_type.type || !m->period_type.unit) goto fail;
    }
    if (diff_append(m, now, 1) || diff_append(m, base, -1)) goto fail;
    return m;
fail:
    profile_free(m);
    return NULL;
}
