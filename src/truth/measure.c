/* Counting a profile's samples against the ground-truth functions (measure.h). */
#include "truth/measure.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct by_time {
    int64_t t;
    size_t i;
};

static int cmp_time(const void *a, const void *b)
{
    const struct by_time *x = a, *y = b;
    if (x->t != y->t) return (x->t > y->t) - (x->t < y->t);
    return (x->i > y->i) - (x->i < y->i);
}

/* Which of the k names each frame carries (-1: none), so that a sample costs one
 * lookup per frame instead of k string compares. */
static int *frame_targets(const struct profile *p, const struct measure_fn *fns, unsigned k)
{
    int *t = malloc((p->n_frames ? p->n_frames : 1) * sizeof *t);
    if (!t) return NULL;
    for (size_t f = 0; f < p->n_frames; f++) {
        t[f] = -1;
        for (unsigned j = 0; j < k; j++)
            if (!strcmp(p->frames[f].name, fns[j].name)) {
                t[f] = (int)j;
                break;
            }
    }
    return t;
}

/* The samples of thread `thread` (-1: all) in time order into order[]; their count.
 * With running_only, the on-CPU ones alone. */
static size_t in_time_order(const struct profile *p, int thread, int running_only,
                            struct by_time *order)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n_samples; i++)
        if ((thread < 0 || p->samples[i].thread == (uint32_t)thread) &&
            (!running_only || p->samples[i].state == PROFILE_RUNNING))
            order[n++] = (struct by_time){p->samples[i].time_ns, i};
    qsort(order, n, sizeof *order, cmp_time);
    return n;
}

int measure_functions(const struct profile *p, int thread, uint64_t first_n, struct measure_fn *fns,
                      unsigned k, struct measure_counts *out)
{
    memset(out, 0, sizeof *out);
    for (unsigned j = 0; j < k; j++)
        fns[j].self = fns[j].total = fns[j].waiting = 0;
    int *target = frame_targets(p, fns, k);
    struct by_time *order = malloc((p->n_samples ? p->n_samples : 1) * sizeof *order);
    unsigned char *seen = calloc(k ? k : 1, 1);
    if (!target || !order || !seen) {
        free(target), free(order), free(seen);
        return -ENOMEM;
    }
    size_t n = in_time_order(p, thread, 0, order);

    for (size_t o = 0; o < n; o++) {
        const struct profile_sample *s = &p->samples[order[o].i];
        int running = s->state == PROFILE_RUNNING;
        if (running && first_n && out->running >= first_n) continue;
        const struct profile_stack *st = &p->stacks[s->stack];
        memset(seen, 0, k);
        /* Recursion counts once: a function is on the stack or it is not. */
        for (uint32_t d = 0; d < st->depth; d++) {
            int j = target[st->frames[d]];
            if (j < 0 || seen[j]) continue;
            seen[j] = 1;
            if (running) {
                fns[j].total++;
                if (d == 0) fns[j].self++;
            } else {
                fns[j].waiting++;
            }
        }
        if (running)
            out->running++;
        else
            out->waiting++;
    }
    free(target), free(order), free(seen);
    return 0;
}

long measure_leaf_series(const struct profile *p, int thread, const struct measure_fn *fns,
                         unsigned k, int **out)
{
    int *target = frame_targets(p, fns, k);
    struct by_time *order = malloc((p->n_samples ? p->n_samples : 1) * sizeof *order);
    int *leaf = malloc((p->n_samples ? p->n_samples : 1) * sizeof *leaf);
    if (!target || !order || !leaf) {
        free(target), free(order), free(leaf);
        return -ENOMEM;
    }
    size_t n = in_time_order(p, thread, 1, order);
    for (size_t o = 0; o < n; o++) {
        const struct profile_stack *st = &p->stacks[p->samples[order[o].i].stack];
        leaf[o] = st->depth ? target[st->frames[0]] : -1;
    }
    free(target), free(order);
    *out = leaf;
    return (long)n;
}

int measure_thread(const struct profile *p, const char *name)
{
    for (size_t t = 0; t < p->n_threads; t++) {
        const struct profile_thread *th = &p->threads[t];
        if (!strcmp(th->name ? th->name : th->label, name)) return (int)t;
    }
    return -1;
}

void measure_thread_counts(const struct profile *p, int t, struct measure_counts *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < p->n_samples; i++) {
        if (t >= 0 && p->samples[i].thread != (uint32_t)t) continue;
        if (p->samples[i].state == PROFILE_RUNNING)
            out->running++;
        else
            out->waiting++;
    }
}
