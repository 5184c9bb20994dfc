/* Differences between two aggregated profiles, function by function, each with a
 * test of whether it is larger than sampling noise (`kestrel diff`).
 *
 * Shares are compared as shares (the two runs may be of different lengths): for a
 * function whose share is p1 of n1 events in BASE and p2 of n2 in NEW, under "no
 * change" both estimate one p, so z = (p2 - p1) / sqrt(p(1-p)(1/n1 + 1/n2)) with p
 * the pooled share (the two-proportion z-test; pooling keeps z defined for a function
 * seen in one profile only). With `absolute`, the values themselves (CPU time) are
 * compared, each a Poisson count of samples times the mean weight of a sample:
 * z = (v2 - v1) / sqrt(w1^2 n1 + w2^2 n2).
 *
 * Many functions are tested at once, so a per-test 5% would call several of them
 * changed in two runs of the same program. The verdict `real` uses Holm's step-down
 * correction of the two-sided p-values for the family-wise error rate `alpha`
 * (default 0.05): it holds whatever the dependence between the tests (shares of one
 * profile are not independent: they sum to one), and it never calls less real than
 * Bonferroni does. Self and total are tested as one family: "no function real" is a
 * promise about the whole comparison. */
#ifndef KESTREL_DIFF_H
#define KESTREL_DIFF_H
#include <stddef.h>

#include "analysis/aggregate/summary.h"

enum diff_presence { DIFF_BOTH = 0, DIFF_NEW_ONLY = 1, DIFF_GONE = 2 };

struct diff_side {
    double base, base_se; /* share (or value, absolute) in BASE and its standard error */
    double now, now_se;   /* the same in NEW */
    double delta;         /* now - base */
    double z;             /* the test statistic; 0 when both sides are empty */
    double p;             /* its two-sided p-value */
    int real;             /* 1: the change clears the corrected threshold */
};

struct diff_row {
    const char *name; /* the function's name (owned by one of the profiles) */
    const char *file; /* NULL when unknown */
    enum diff_presence presence;
    struct diff_side self, total;
};

struct diff {
    const struct summary *base, *now;
    int absolute;
    double alpha;
    struct diff_row *rows; /* every function of either profile, in no particular order */
    size_t n_rows;
    size_t n_tests; /* the family's size: every self and total with something to test */
    size_t n_real_self, n_real_total;
};

/* Compares `now` against `base` (the same sample type). NULL when memory runs out. */
struct diff *diff_build(const struct summary *base, const struct summary *now, int absolute,
                        double alpha);
/* Sorts rows by |z| of self (by_total 0) or total (1), descending; by |delta| when
 * by_delta. */
void diff_sort(struct diff *d, int by_total, int by_delta);
void diff_free(struct diff *d);

/* NEW minus BASE as one profile, as `pprof -diff_base` shows it: NEW's samples as
 * they are and BASE's with every value negated (on threads of their own), only the
 * samples each summary counted (its state). Both profiles must have the same sample
 * types. NULL when memory runs out or the types differ (*why says which). */
struct profile *diff_profile(const struct summary *base, const struct summary *now,
                             const char **why);

#endif
