/* The profile of a process tree (merge.h): the symbolized raw profiles of every
 * process `kestrel record` ran, merged into one model.
 *
 * - One process per pid. The images one pid ran one after another (an exec chain,
 *   ordered by exec_gen) are one process whose program changed: its threads are
 *   matched by (label, fiber, tid), so the main thread stays one thread across exec.
 * - Processes are ordered by when they started; the first is the tree's root.
 * - Sample times are moved from each profile's own start to the tree's start.
 * - Images are kept per process (addresses mean something only in their own
 *   process), but a frame of a file mapped once in its process names the first such
 *   image of the same file and build id (its canonical image), its address moved
 *   there: the same function in eight cc1plus processes is one frame of the tree,
 *   symbolized once, and a function without a name (`git+0x148eb0`) one row. A file
 *   mapped twice in one process (V8's builtins) keeps its own images. Anonymous memory
 *   (JIT code) stays in its process. */
#include "analysis/model/merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct part {
    const struct profile *p;
    size_t index; /* in the caller's order, for a stable sort */
};

static int64_t part_start(const struct profile *p)
{
    return p->meta.start_unix_ns > 0 ? p->meta.start_unix_ns : 0;
}

/* By pid, then by exec generation, then by start. */
static int by_pid_gen(const void *a, const void *b)
{
    const struct part *x = a, *y = b;
    if (x->p->meta.pid != y->p->meta.pid) return x->p->meta.pid < y->p->meta.pid ? -1 : 1;
    if (x->p->meta.exec_gen != y->p->meta.exec_gen)
        return x->p->meta.exec_gen < y->p->meta.exec_gen ? -1 : 1;
    if (part_start(x->p) != part_start(y->p)) return part_start(x->p) < part_start(y->p) ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

struct group {
    size_t first, n;  /* parts[first .. first+n) */
    int64_t start;    /* of its first image */
    size_t index;
};

static int by_start(const void *a, const void *b)
{
    const struct group *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int same_str(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* Adds b's sample types that into lacks (a process that took no sample on CPU has no
 * "cpu" column); -1 when a type of the same name has another unit, or for too many. */
static int union_types(struct profile *into, const struct profile *b)
{
    for (size_t k = 0; k < b->n_sample_types; k++) {
        int j = profile_find_sample_type(into, b->sample_types[k].type);
        if (j >= 0 && strcmp(into->sample_types[j].unit, b->sample_types[k].unit)) return -1;
        if (j < 0 && profile_add_sample_type(into, b->sample_types[k].type,
                                             b->sample_types[k].unit) < 0)
            return -1;
    }
    return 0;
}

/* The process of one pid: named by its last program, the chain of every program. */
static int add_process(struct profile *into, struct part *parts, const struct group *g)
{
    const struct profile *first = parts[g->first].p, *last = parts[g->first + g->n - 1].p;
    const struct profile_process *fp = first->n_processes ? &first->processes[0] : NULL;
    const struct profile_process *lp = last->n_processes ? &last->processes[0] : NULL;
    char *chain = NULL;
    if (g->n > 1) {
        size_t len = 1;
        for (size_t i = 0; i < g->n; i++) {
            const struct profile *p = parts[g->first + i].p;
            len += (p->n_processes ? strlen(p->processes[0].name) : 1) + 5;
        }
        if (!(chain = malloc(len))) return -1;
        size_t o = 0;
        for (size_t i = 0; i < g->n; i++) {
            const struct profile *p = parts[g->first + i].p;
            o += (size_t)snprintf(chain + o, len - o, "%s%s", i ? " → " : "",
                                  p->n_processes ? p->processes[0].name : "?");
        }
    }
    struct profile_process pr = {
        .pid = first->meta.pid,
        .ppid = fp ? fp->ppid : first->meta.ppid,
        .name = lp ? lp->name : "?",
        .exe = lp ? lp->exe : last->meta.exe,
        .chain = chain,
        .cmdline = lp ? lp->cmdline : NULL,
        .start_unix_ns = first->meta.start_unix_ns,
        .end_unix_ns = last->meta.end_unix_ns,
    };
    int64_t k = profile_add_process(into, &pr);
    free(chain);
    return k < 0 ? -1 : (int)k;
}

/* The canonical images of the tree, by file and build id: open addressing over
 * indices into `into`'s images. */
struct canon_table {
    int64_t *slot; /* image index, or -1 */
    size_t mask, n;
};

static uint64_t image_hash(const struct profile_image *im)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *c = im->path; *c; c++)
        h = (h ^ (uint8_t)*c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
    for (const char *c = im->build_id ? im->build_id : ""; *c; c++)
        h = (h ^ (uint8_t)*c) * 1099511628211ull;
    return h;
}

static int same_file(const struct profile_image *a, const struct profile_image *b)
{
    return !strcmp(a->path, b->path) && same_str(a->build_id, b->build_id);
}

/* The slot of im's file: its canonical image, or an empty slot (-1). */
static int64_t *canon_slot(struct canon_table *t, const struct profile *into,
                           const struct profile_image *im)
{
    for (size_t j = image_hash(im) & t->mask;; j = (j + 1) & t->mask)
        if (t->slot[j] < 0 || same_file(&into->images[t->slot[j]], im)) return &t->slot[j];
}

static int canon_grow(struct canon_table *t, const struct profile *into)
{
    if (t->slot && 2 * (t->n + 1) <= t->mask + 1) return 0;
    size_t cap = t->slot ? 2 * (t->mask + 1) : 256;
    struct canon_table g = {malloc(cap * sizeof *g.slot), cap - 1, t->n};
    if (!g.slot) return -1;
    for (size_t j = 0; j < cap; j++)
        g.slot[j] = -1;
    for (size_t j = 0; t->slot && j <= t->mask; j++)
        if (t->slot[j] >= 0) *canon_slot(&g, into, &into->images[t->slot[j]]) = t->slot[j];
    free(t->slot);
    *t = g;
    return 0;
}

/* Whether addresses of image i of p can move to another process's image of the same
 * file: a file on disk, mapped once in p, whose place is known. */
static int movable(const struct profile *p, size_t i)
{
    const struct profile_image *im = &p->images[i];
    if (im->path[0] != '/' || im->elf || (!im->slide_known && !im->text)) return 0;
    for (size_t j = 0; j < p->n_images; j++)
        if (j != i && !strcmp(p->images[j].path, im->path)) return 0;
    return 1;
}

/* What to add to an address of `from` to have it in `to` (both of one file). */
static int image_shift(const struct profile_image *from, const struct profile_image *to,
                       uint64_t *shift)
{
    if (from->slide_known && to->slide_known) {
        *shift = to->slide - from->slide;
        return 0;
    }
    if (!from->slide_known && !to->slide_known && from->text && to->text &&
        from->text_offset == to->text_offset) {
        *shift = to->text - from->text;
        return 0;
    }
    return -1;
}

static int add_part(struct profile *into, const struct profile *p, int32_t process,
                    size_t first_thread, int64_t tree_start, struct canon_table *canons, int many)
{
    int64_t *image_of = malloc((p->n_images + 1) * sizeof *image_of);
    int64_t *canon = malloc((p->n_images + 1) * sizeof *canon);
    int64_t *named = malloc((p->n_images + 1) * sizeof *named);
    uint64_t *shift = malloc((p->n_images + 1) * sizeof *shift);
    uint32_t *frame_of = malloc((p->n_frames + 1) * sizeof *frame_of);
    uint32_t *stack_of = malloc((p->n_stacks + 1) * sizeof *stack_of);
    uint32_t *thread_of = malloc((p->n_threads + 1) * sizeof *thread_of);
    uint32_t *row = malloc((PROFILE_MAX_DEPTH + 1) * sizeof *row);
    int rc =
        image_of && canon && named && shift && frame_of && stack_of && thread_of && row ? 0 : -1;
    for (size_t i = 0; !rc && i < p->n_images; i++) {
        const struct profile_image *im = &p->images[i];
        if ((image_of[i] = profile_add_image(into, im)) < 0 || canon_grow(canons, into)) {
            rc = -1;
            break;
        }
        named[i] = canon[i] = image_of[i], shift[i] = 0;
        if (im->path[0] != '/') continue;
        int64_t *slot = canon_slot(canons, into, im);
        int move = movable(p, i);
        if (*slot < 0 && move)
            *slot = image_of[i], canons->n++;
        else if (*slot >= 0)
            named[i] = *slot;
        if (move && *slot != image_of[i] && !image_shift(im, &into->images[*slot], &shift[i]))
            canon[i] = *slot;
    }
    for (size_t i = 0; !rc && i < p->n_frames; i++) {
        struct profile_frame f = p->frames[i];
        if (f.image >= 0) {
            /* A symbolized frame's address is only where it was seen; an unsymbolized
             * one is moved with its image. */
            if (!f.symbolized) f.address += shift[f.image];
            f.image = (int32_t)(f.symbolized ? named[f.image] : canon[f.image]);
        }
        int64_t k = profile_intern_frame(into, &f);
        if (k < 0) rc = -1;
        else frame_of[i] = (uint32_t)k;
    }
    for (size_t i = 0; !rc && i < p->n_stacks; i++) {
        const struct profile_stack *s = &p->stacks[i];
        for (uint32_t d = 0; d < s->depth; d++)
            row[d] = frame_of[s->frames[d]];
        int64_t k = profile_intern_stack(into, row, s->depth);
        if (k < 0) rc = -1;
        else stack_of[i] = (uint32_t)k;
    }
    for (size_t i = 0; !rc && i < p->n_threads; i++) {
        const struct profile_thread *t = &p->threads[i];
        int64_t k = -1;
        for (size_t j = first_thread; j < into->n_threads && k < 0; j++) {
            const struct profile_thread *u = &into->threads[j];
            if (u->process == process && u->fiber == t->fiber && u->tid == t->tid &&
                !strcmp(u->label, t->label))
                k = (int64_t)j;
        }
        if (k >= 0 && t->name) { /* the name it had last: the later image's */
            char *name = strdup(t->name);
            if (!name) rc = -1;
            else free(into->threads[k].name), into->threads[k].name = name;
        }
        if (k < 0 && (k = profile_add_thread(into, t->label, t->fiber, t->tid, t->name)) < 0)
            rc = -1;
        if (!rc) {
            into->threads[k].process = process;
            thread_of[i] = (uint32_t)k;
        }
    }
    int64_t time_shift = part_start(p) && tree_start ? part_start(p) - tree_start : 0;
    int type_of[PROFILE_MAX_SAMPLE_TYPES];
    for (size_t k = 0; k < p->n_sample_types; k++)
        type_of[k] = profile_find_sample_type(into, p->sample_types[k].type);
    int64_t v[PROFILE_MAX_SAMPLE_TYPES];
    for (size_t i = 0; !rc && i < p->n_samples; i++) {
        const struct profile_sample *s = &p->samples[i];
        int64_t t = s->time_ns >= 0 ? s->time_ns + time_shift : -1;
        memset(v, 0, sizeof v);
        for (size_t k = 0; k < p->n_sample_types; k++)
            v[type_of[k]] = profile_values(p, i)[k];
        rc = profile_add_sample(into, thread_of[s->thread], stack_of[s->stack], s->state, t, v);
    }
    /* What each run said about itself, for the tree. */
    into->meta.dropped += p->meta.dropped;
    into->meta.runtime_samples += p->meta.runtime_samples;
    into->meta.truncated += p->meta.truncated;
    for (size_t k = 0; k < PROFILE_STACK_ENDS; k++)
        into->meta.end_samples[k] += p->meta.end_samples[k];
    for (size_t k = 0; k < PROFILE_STACK_ENDS; k++)
        into->meta.end_running[k] += p->meta.end_running[k];
    for (size_t i = 0; !rc && i < p->meta.n_tables; i++) {
        const struct profile_table *t = &p->meta.tables[i];
        struct profile_table *u = NULL;
        for (size_t j = 0; j < into->meta.n_tables && !u; j++)
            if (!strcmp(into->meta.tables[j].name, t->name)) u = &into->meta.tables[j];
        if (!u) {
            rc = profile_add_table(into, t->name, t->used, t->limit, t->past);
        } else { /* the fullest process's fill, everything that went past */
            if (t->used > u->used) u->used = t->used, u->limit = t->limit;
            u->past += t->past;
        }
    }
    /* Notes once for the tree: of the notes that start alike ("kestrel heap profile:
     * 3 samples", each process's own count), the first is kept, saying whose it is;
     * each process's file has its own. */
    for (size_t i = 0; !rc && i < p->meta.n_comments; i++) {
        const char *c = p->meta.comments[i];
        size_t head = strcspn(c, ":=");
        int named = c[head] != 0; /* a name before ':' or '=' */
        head += named;
        int seen = 0;
        for (size_t j = 0; j < into->meta.n_comments && !seen; j++)
            seen = !strncmp(into->meta.comments[j], c, head) &&
                   (named || !into->meta.comments[j][head]);
        if (seen) continue;
        char *own = NULL;
        if (many && named && asprintf(&own, "%s (process %lld's; each process's file has its own)",
                                      c, (long long)p->meta.pid) < 0)
            own = NULL, rc = -1;
        if (!rc) rc = profile_add_comment(into, own ? own : c);
        free(own);
    }
    free(image_of), free(canon), free(named), free(shift);
    free(frame_of), free(stack_of), free(thread_of), free(row);
    return rc;
}

static char *dup_opt(const char *s)
{
    return s ? strdup(s) : NULL;
}

struct profile *profile_merge_tree(const struct profile *const *in, size_t n, char *why,
                                   size_t why_size)
{
    if (!n) {
        snprintf(why, why_size, "no profile to merge");
        return NULL;
    }
    for (size_t i = 1; i < n; i++)
        if (in[i]->kind != in[0]->kind) {
            snprintf(why, why_size, "%s and %s are not both CPU profiles",
                     in[0]->source ? in[0]->source : "a profile",
                     in[i]->source ? in[i]->source : "another");
            return NULL;
        }
    struct part *parts = malloc(n * sizeof *parts);
    struct group *groups = malloc(n * sizeof *groups);
    struct profile *into = profile_new(in[0]->kind);
    if (!parts || !groups || !into) goto oom;
    for (size_t i = 0; i < n; i++)
        parts[i] = (struct part){in[i], i};
    qsort(parts, n, sizeof *parts, by_pid_gen);
    size_t n_groups = 0;
    int64_t tree_start = 0, tree_end = 0;
    for (size_t i = 0; i < n; i++) {
        const struct profile *p = parts[i].p;
        if (part_start(p) && (!tree_start || part_start(p) < tree_start)) tree_start = part_start(p);
        if (p->meta.end_unix_ns > tree_end) tree_end = p->meta.end_unix_ns;
        if (i && p->meta.pid >= 0 && p->meta.pid == parts[i - 1].p->meta.pid) {
            groups[n_groups - 1].n++;
            continue;
        }
        groups[n_groups] = (struct group){i, 1, part_start(p), n_groups};
        n_groups++;
    }
    qsort(groups, n_groups, sizeof *groups, by_start);
    const struct profile *root = parts[groups[0].first].p;
    if (union_types(into, root)) goto oom;
    for (size_t i = 0; i < n; i++)
        if (union_types(into, in[i])) {
            free(parts);
            free(groups);
            profile_free(into);
            snprintf(why, why_size, "%s: its sample types do not go with the others'",
                     in[i]->source ? in[i]->source : "a profile");
            return NULL;
        }
    into->default_type = root->default_type;
    into->period = root->period;
    if ((root->period_type.type && !(into->period_type.type = strdup(root->period_type.type))) ||
        (root->period_type.unit && !(into->period_type.unit = strdup(root->period_type.unit))))
        goto oom;
    struct profile_meta *m = &into->meta;
    m->pid = root->meta.pid;
    m->ppid = root->meta.ppid;
    m->rate_hz = root->meta.rate_hz;
    m->requested_hz = root->meta.requested_hz;
    m->start_unix_ns = tree_start;
    m->end_unix_ns = tree_end;
    /* How walks ended is known for the tree when it is for every process. */
    m->ends_known = 1;
    for (size_t i = 0; i < n; i++)
        m->ends_known &= in[i]->meta.ends_known;
    const struct profile *last_of_root = parts[groups[0].first + groups[0].n - 1].p;
    if ((last_of_root->meta.exe && !(m->exe = dup_opt(last_of_root->meta.exe))) ||
        (root->meta.platform && !(m->platform = dup_opt(root->meta.platform))) ||
        (root->meta.engine && !(m->engine = dup_opt(root->meta.engine))) ||
        (root->source && !(into->source = dup_opt(root->source))))
        goto oom;
    struct canon_table canons = {0};
    for (size_t g = 0; g < n_groups; g++) {
        int process = add_process(into, parts, &groups[g]);
        size_t first_thread = into->n_threads;
        for (size_t i = 0; process >= 0 && i < groups[g].n; i++)
            if (add_part(into, parts[groups[g].first + i].p, process, first_thread, tree_start,
                         &canons, n_groups > 1))
                process = -1;
        if (process < 0) {
            free(canons.slot);
            goto oom;
        }
    }
    free(canons.slot);
    free(parts);
    free(groups);
    if (profile_check(into, why, why_size)) {
        profile_free(into);
        return NULL;
    }
    return into;
oom:
    free(parts);
    free(groups);
    profile_free(into);
    snprintf(why, why_size, "out of memory");
    return NULL;
}
