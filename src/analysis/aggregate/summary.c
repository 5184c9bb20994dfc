/* Aggregation (summary.h). Samples are first summed per stack, so the stack walk
 * that spreads values over functions and lines runs once per distinct stack, not
 * once per sample. */
#include "analysis/aggregate/summary.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/aggregate/stats.h"

/* ------------------------------------------------------------------ keys */

/* An open-addressing set of uint32 ids, keyed by a hash the caller computes and
 * compared by a caller's function. */
struct idset {
    uint32_t *slots; /* id + 1; 0 = empty */
    uint64_t *hashes;
    size_t mask;
};

static int idset_init(struct idset *s, size_t expect)
{
    size_t cap = 64;
    while (cap < expect * 2)
        cap *= 2;
    s->slots = calloc(cap, sizeof *s->slots);
    s->hashes = calloc(cap, sizeof *s->hashes);
    s->mask = cap - 1;
    return s->slots && s->hashes ? 0 : -1;
}

static void idset_free(struct idset *s)
{
    free(s->slots);
    free(s->hashes);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

static uint64_t hash_str(uint64_t h, const char *s)
{
    uint64_t x = s ? 1469598103934665603ull : 7;
    for (; s && *s; s++)
        x = (x ^ (unsigned char)*s) * 1099511628211ull;
    return mix(h, x);
}

static int str_eq(const char *a, const char *b)
{
    return a && b ? !strcmp(a, b) : a == b;
}

/* ------------------------------------------------------------------ building */

struct build {
    const struct profile *p;
    struct summary *s;
    int64_t *stack_value;
    uint64_t *stack_n;
    uint32_t *line_of_frame;
    size_t cap_functions, cap_lines;
};

static int add_share(struct summary_share *sh, int64_t v, uint64_t n)
{
    sh->n += n;
    return __builtin_add_overflow(sh->value, v, &sh->value);
}

static int64_t function_for(struct build *b, struct idset *set, const struct profile_frame *f)
{
    struct summary *s = b->s;
    uint64_t h = mix(hash_str(hash_str(0, f->name), f->file), (uint64_t)(uint32_t)f->image);
    size_t j = h & set->mask;
    for (; set->slots[j]; j = (j + 1) & set->mask) {
        const struct summary_function *fn = &s->functions[set->slots[j] - 1];
        if (set->hashes[j] == h && fn->image == f->image && str_eq(fn->name, f->name) &&
            str_eq(fn->file, f->file))
            return set->slots[j] - 1;
    }
    if (s->n_functions == b->cap_functions) {
        size_t cap = b->cap_functions ? 2 * b->cap_functions : 256;
        void *q = realloc(s->functions, cap * sizeof *s->functions);
        if (!q) return -1;
        s->functions = q;
        b->cap_functions = cap;
    }
    s->functions[s->n_functions] =
        (struct summary_function){.name = f->name, .file = f->file, .image = f->image};
    set->slots[j] = (uint32_t)++s->n_functions;
    set->hashes[j] = h;
    return (int64_t)s->n_functions - 1;
}

static int64_t line_for(struct build *b, struct idset *set, uint32_t fn,
                        const struct profile_frame *f)
{
    struct summary *s = b->s;
    uint64_t h = mix(mix(fn, (uint64_t)(uint32_t)f->line), 1);
    size_t j = h & set->mask;
    for (; set->slots[j]; j = (j + 1) & set->mask) {
        const struct summary_line *ln = &s->lines[set->slots[j] - 1];
        if (set->hashes[j] == h && ln->function == fn && ln->line == f->line)
            return set->slots[j] - 1;
    }
    if (s->n_lines == b->cap_lines) {
        size_t cap = b->cap_lines ? 2 * b->cap_lines : 256;
        void *q = realloc(s->lines, cap * sizeof *s->lines);
        if (!q) return -1;
        s->lines = q;
        b->cap_lines = cap;
    }
    s->lines[s->n_lines] = (struct summary_line){.function = fn, .file = f->file, .line = f->line};
    set->slots[j] = (uint32_t)++s->n_lines;
    set->hashes[j] = h;
    return (int64_t)s->n_lines - 1;
}

/* Interns every frame's function and line. */
static int key_frames(struct build *b)
{
    const struct profile *p = b->p;
    struct idset fset = {0}, lset = {0};
    int rc = -1;
    b->s->function_of_frame = malloc((p->n_frames + 1) * sizeof(uint32_t));
    b->line_of_frame = malloc((p->n_frames + 1) * sizeof(uint32_t));
    if (!b->s->function_of_frame || !b->line_of_frame) return -1;
    if (idset_init(&fset, p->n_frames) || idset_init(&lset, p->n_frames)) goto out;
    for (size_t i = 0; i < p->n_frames; i++) {
        int64_t fn = function_for(b, &fset, &p->frames[i]);
        if (fn < 0) goto out;
        int64_t ln = line_for(b, &lset, (uint32_t)fn, &p->frames[i]);
        if (ln < 0) goto out;
        b->s->function_of_frame[i] = (uint32_t)fn;
        b->line_of_frame[i] = (uint32_t)ln;
    }
    rc = 0;
out:
    idset_free(&fset);
    idset_free(&lset);
    return rc;
}

/* Sums sample values per stack, per state and per thread: the state split over
 * every sample, the rest over the counted ones. */
static int sum_samples(struct build *b, int64_t *all_total)
{
    const struct profile *p = b->p;
    struct summary *s = b->s;
    b->stack_value = calloc(p->n_stacks + 1, sizeof *b->stack_value);
    b->stack_n = calloc(p->n_stacks + 1, sizeof *b->stack_n);
    s->threads = calloc(p->n_threads + 1, sizeof *s->threads);
    if (!b->stack_value || !b->stack_n || !s->threads) return -1;
    /* A CPU sample that stands for several (a pprof sample of samples/count N, the
     * counts a long run keeps past its row table) counts N times in every n. */
    int count = p->kind == PROFILE_CPU ? profile_find_sample_type(p, "samples") : -1;
    if (count >= 0 && (!p->sample_types[count].unit || strcmp(p->sample_types[count].unit, "count")))
        count = -1;
    for (size_t i = 0; i < p->n_samples; i++) {
        const struct profile_sample *smp = &p->samples[i];
        int64_t v = profile_values(p, i)[s->type];
        if (!v) continue;
        int64_t c = count >= 0 ? profile_values(p, i)[count] : 1;
        uint64_t w = c > 0 ? (uint64_t)c : 1;
        s->n_samples_all += w;
        if (__builtin_add_overflow(*all_total, v, all_total) ||
            add_share(&s->state[smp->state], v, w))
            return -2;
        if (s->only_state != SUMMARY_ALL_STATES && smp->state != s->only_state) continue;
        struct summary_thread *t = &s->threads[smp->thread];
        t->n[smp->state] += w;
        s->n_samples += w;
        b->stack_n[smp->stack] += w;
        if (__builtin_add_overflow(b->stack_value[smp->stack], v, &b->stack_value[smp->stack]) ||
            __builtin_add_overflow(t->value[smp->state], v, &t->value[smp->state]) ||
            __builtin_add_overflow(s->total, v, &s->total))
            return -2;
    }
    return 0;
}

/* Spreads each stack's value over its functions and lines: self to the leaf, total
 * once to every distinct function and line on the stack. */
static int spread(struct build *b)
{
    const struct profile *p = b->p;
    struct summary *s = b->s;
    uint32_t *fn_seen = calloc(s->n_functions + 1, sizeof *fn_seen);
    uint32_t *ln_seen = calloc(s->n_lines + 1, sizeof *ln_seen);
    int rc = fn_seen && ln_seen ? 0 : -1;
    for (size_t i = 0; !rc && i < p->n_stacks; i++) {
        const struct profile_stack *st = &p->stacks[i];
        int64_t v = b->stack_value[i];
        uint64_t n = b->stack_n[i];
        if (!n || !st->depth) continue;
        uint32_t stamp = (uint32_t)i + 1;
        uint32_t leaf = st->frames[0];
        if (add_share(&s->functions[s->function_of_frame[leaf]].self, v, n) ||
            add_share(&s->lines[b->line_of_frame[leaf]].self, v, n))
            rc = -2;
        for (uint32_t k = 0; !rc && k < st->depth; k++) {
            uint32_t fn = s->function_of_frame[st->frames[k]];
            uint32_t ln = b->line_of_frame[st->frames[k]];
            if (fn_seen[fn] != stamp) {
                fn_seen[fn] = stamp;
                if (add_share(&s->functions[fn].total, v, n)) rc = -2;
            }
            if (ln_seen[ln] != stamp) {
                ln_seen[ln] = stamp;
                if (add_share(&s->lines[ln].total, v, n)) rc = -2;
            }
        }
    }
    free(fn_seen);
    free(ln_seen);
    return rc;
}

/* The cut stacks' share, and the images their walks ended in (summary_walks). */
static int count_walks(struct build *b)
{
    const struct profile *p = b->p;
    struct summary_walks *w = &b->s->walks;
    w->known = p->meta.ends_known;
    struct summary_share *by_image = calloc(p->n_images + 1, sizeof *by_image);
    if (!by_image) return -1;
    for (size_t i = 0; i < p->n_stacks; i++) {
        const struct profile_stack *st = &p->stacks[i];
        if (!b->stack_n[i] || !st->depth) continue;
        int cut;
        uint32_t last;
        if (profile_stack_marks(p, st, &cut, &last) &&
            add_share(&w->guessed, b->stack_value[i], b->stack_n[i])) {
            free(by_image);
            return -2;
        }
        if (!cut) continue;
        int32_t img = last ? p->frames[st->frames[last - 1]].image : -1;
        if (add_share(&w->cut, b->stack_value[i], b->stack_n[i]) ||
            add_share(&by_image[img < 0 ? p->n_images : (size_t)img], b->stack_value[i],
                      b->stack_n[i])) {
            free(by_image);
            return -2;
        }
    }
    /* The few images with most (insertion into the short list, most first). */
    for (size_t k = 0; k <= p->n_images; k++) {
        if (!by_image[k].value) continue;
        struct summary_walk_end e = {k == p->n_images ? -1 : (int32_t)k, by_image[k]};
        size_t at = w->n_ends;
        while (at > 0 && w->ends[at - 1].share.value < e.share.value)
            at--;
        if (at >= SUMMARY_WALK_ENDS) continue;
        size_t last = w->n_ends < SUMMARY_WALK_ENDS ? w->n_ends : SUMMARY_WALK_ENDS - 1;
        memmove(&w->ends[at + 1], &w->ends[at], (last - at) * sizeof *w->ends);
        w->ends[at] = e;
        if (w->n_ends < SUMMARY_WALK_ENDS) w->n_ends++;
    }
    free(by_image);
    return 0;
}

static void finish_share_of(int64_t total, double n_events, struct summary_share *sh)
{
    sh->share = total ? (double)sh->value / (double)total : 0;
    sh->se = stats_se(sh->share, n_events);
    sh->significant = stats_detectable(sh->share, n_events);
}

static void finish_share(const struct summary *s, struct summary_share *sh)
{
    finish_share_of(s->total, s->n_events, sh);
}

/* The sampling events behind the total (see summary.h): samples for a CPU profile;
 * for a byte-sampled heap profile (whose samples are all of one state), the matching
 * *_space total over the period. */
static double count_events(const struct summary *s, uint64_t n_samples)
{
    const struct profile *p = s->profile;
    const char *type = p->sample_types[s->type].type;
    const char *unit = p->period_type.unit;
    if (p->kind != PROFILE_HEAP || p->period <= 0 || !unit || strcmp(unit, "bytes") || !type)
        return (double)n_samples;
    const char *us = strchr(type, '_');
    size_t prefix = us ? (size_t)(us - type) : strlen(type);
    for (size_t k = 0; k < p->n_sample_types; k++) {
        const char *t = p->sample_types[k].type;
        if (!t || strncmp(t, type, prefix) || strcmp(t + prefix, "_space")) continue;
        double bytes = 0;
        for (size_t i = 0; i < p->n_samples; i++)
            bytes += (double)profile_values(p, i)[k];
        double events = bytes / (double)p->period;
        /* Never fewer events than distinct samples that hold a value. */
        return events > (double)n_samples ? events : (double)n_samples;
    }
    return (double)n_samples;
}

static int by_self(const struct summary_share *as, const struct summary_share *at,
                   const struct summary_share *bs, const struct summary_share *bt)
{
    if (as->value != bs->value) return as->value > bs->value ? -1 : 1;
    if (at->value != bt->value) return at->value > bt->value ? -1 : 1;
    return 0;
}

static int cmp_function(const void *a, const void *b)
{
    const struct summary_function *x = a, *y = b;
    int c = by_self(&x->self, &x->total, &y->self, &y->total);
    if (c) return c;
    c = strcmp(x->name, y->name);
    if (c) return c;
    return x->image - y->image;
}

/* Orders functions and lines hottest first and renumbers what refers to them. */
static int sort_tables(struct build *b)
{
    struct summary *s = b->s;
    size_t nf = s->n_functions;
    /* Sort a copy tagged with its old index (kept in `line` during the sort). */
    int32_t *old_line = malloc((nf + 1) * sizeof *old_line);
    uint32_t *new_of_old = malloc((nf + 1) * sizeof *new_of_old);
    if (!old_line || !new_of_old) {
        free(old_line);
        free(new_of_old);
        return -1;
    }
    for (size_t i = 0; i < nf; i++) {
        old_line[i] = s->functions[i].line;
        s->functions[i].line = (int32_t)i;
    }
    if (nf) qsort(s->functions, nf, sizeof *s->functions, cmp_function); /* NULL when empty */
    for (size_t i = 0; i < nf; i++) {
        uint32_t old = (uint32_t)s->functions[i].line;
        new_of_old[old] = (uint32_t)i;
        s->functions[i].line = old_line[old];
    }
    for (size_t i = 0; i < b->p->n_frames; i++)
        s->function_of_frame[i] = new_of_old[s->function_of_frame[i]];
    for (size_t i = 0; i < s->n_lines; i++)
        s->lines[i].function = new_of_old[s->lines[i].function];
    free(old_line);
    free(new_of_old);
    return 0;
}

static int cmp_line(const void *a, const void *b)
{
    const struct summary_line *x = a, *y = b;
    int c = by_self(&x->self, &x->total, &y->self, &y->total);
    if (c) return c;
    if (x->function != y->function) return x->function < y->function ? -1 : 1;
    return x->line - y->line;
}

/* Each function's location is its hottest known line: most self value, then most
 * total value. */
static int locate_functions(struct summary *s)
{
    const struct summary_line **best = calloc(s->n_functions + 1, sizeof *best);
    if (!best) return -1;
    for (size_t i = 0; i < s->n_lines; i++) {
        const struct summary_line *ln = &s->lines[i], *cur = best[ln->function];
        if (ln->line && (!cur || by_self(&ln->self, &ln->total, &cur->self, &cur->total) < 0))
            best[ln->function] = ln;
    }
    for (size_t i = 0; i < s->n_functions; i++)
        if (best[i]) s->functions[i].line = best[i]->line;
    free(best);
    return 0;
}

struct summary *summary_build(const struct profile *p, size_t type, const char **why)
{
    return summary_build_state(p, type, SUMMARY_ALL_STATES, why);
}

struct summary *summary_build_state(const struct profile *p, size_t type, int state,
                                    const char **why)
{
    static const char *const nomem = "out of memory", *const overflow =
                                                          "sample values add up past 64 bits";
    *why = nomem;
    if (type >= p->n_sample_types) {
        *why = "no such sample type";
        return NULL;
    }
    if (state != SUMMARY_ALL_STATES && (state < 0 || state >= PROFILE_NSTATES)) {
        *why = "no such state";
        return NULL;
    }
    struct summary *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->profile = p;
    s->type = type;
    s->only_state = state;
    struct build b = {.p = p, .s = s};
    int64_t all_total = 0;
    int rc = key_frames(&b);
    if (!rc) rc = sum_samples(&b, &all_total);
    if (!rc) rc = spread(&b);
    if (!rc) rc = count_walks(&b);
    if (!rc) rc = locate_functions(s);
    if (!rc) {
        s->n_events = count_events(s, s->n_samples);
        for (size_t i = 0; i < s->n_functions; i++) {
            finish_share(s, &s->functions[i].self);
            finish_share(s, &s->functions[i].total);
        }
        for (size_t i = 0; i < s->n_lines; i++) {
            finish_share(s, &s->lines[i].self);
            finish_share(s, &s->lines[i].total);
        }
        finish_share(s, &s->walks.cut);
        finish_share(s, &s->walks.guessed);
        for (size_t i = 0; i < s->walks.n_ends; i++)
            finish_share(s, &s->walks.ends[i].share);
        double all_events = count_events(s, s->n_samples_all);
        for (int k = 0; k < PROFILE_NSTATES; k++)
            finish_share_of(all_total, all_events, &s->state[k]);
        for (size_t i = 0; i < p->n_threads; i++) {
            struct summary_thread *t = &s->threads[i];
            int64_t v;
            if (__builtin_add_overflow(t->value[0], t->value[1], &v)) rc = -2;
            t->share = (struct summary_share){.value = v, .n = t->n[0] + t->n[1]};
            finish_share(s, &t->share);
        }
        rc = rc ? rc : sort_tables(&b);
        if (!rc && s->n_lines) qsort(s->lines, s->n_lines, sizeof *s->lines, cmp_line);
    }
    free(b.stack_value);
    free(b.stack_n);
    free(b.line_of_frame);
    if (rc) {
        *why = rc == -2 ? overflow : nomem;
        summary_free(s);
        return NULL;
    }
    return s;
}

void summary_free(struct summary *s)
{
    if (!s) return;
    free(s->functions);
    free(s->function_of_frame);
    free(s->lines);
    free(s->threads);
    free(s);
}
