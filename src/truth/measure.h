/* What a profile says about the ground-truth workloads: counts of samples per named
 * function (self and total), per thread and per state, over the whole run or over
 * its first n on-CPU samples in time order, or as the series of their leaves in
 * time order (the error table cuts one run into windows). Works on any profile in the model, so kestrel's own profiles and the
 * peers' outputs converted to the model are scored by the same code. */
#ifndef KESTREL_MEASURE_H
#define KESTREL_MEASURE_H
#include <stddef.h>
#include <stdint.h>

#include "analysis/model/profile.h"

struct measure_fn {
    const char *name; /* in: the function's name */
    uint64_t self;    /* out: on-CPU samples with it as the leaf */
    uint64_t total;   /* out: on-CPU samples with it anywhere on the stack */
    uint64_t waiting; /* out: waiting samples with it anywhere on the stack */
};

struct measure_counts {
    uint64_t running; /* on-CPU samples counted */
    uint64_t waiting; /* waiting samples counted (not limited by first_n) */
};

/* Counts the k functions over the on-CPU samples of thread `thread` (an index into
 * p->threads, or -1 for all threads) — only the first `first_n` of them in time order
 * when first_n is nonzero — and over all its waiting samples. Returns 0 or -ENOMEM. */
int measure_functions(const struct profile *p, int thread, uint64_t first_n, struct measure_fn *fns,
                      unsigned k, struct measure_counts *out);

/* The on-CPU samples of thread `thread` (-1: all) in time order, each as the index
 * of the one of the k functions that is its leaf, -1 for none: *out (malloc'd, the
 * caller frees it) gets one entry per sample. Returns the count or -ENOMEM. */
long measure_leaf_series(const struct profile *p, int thread, const struct measure_fn *fns,
                         unsigned k, int **out);

/* The thread whose name (else label) is `name`; -1 when none. */
int measure_thread(const struct profile *p, const char *name);

/* On-CPU and waiting samples of thread t. */
void measure_thread_counts(const struct profile *p, int t, struct measure_counts *out);

#endif
