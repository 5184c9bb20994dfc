/* Scoring a profile against ground truth (DESIGN.md §4): the error of measured
 * shares against true ones, set beside what binomial sampling alone predicts; the
 * systematic floor under which more samples stop buying accuracy; and how many
 * samples a share needs before it is told apart from noise. The standard error and
 * the detectability bar themselves are stats.h's. */
#ifndef KESTREL_ACCURACY_H
#define KESTREL_ACCURACY_H
#include <stddef.h>
#include <stdint.h>

/* E|X| of a normal X with standard deviation σ is σ·sqrt(2/π): the mean absolute
 * error an unbiased estimator is expected to show, relative to its σ. */
#define ACCURACY_MAE_PER_SIGMA 0.7978845608028654

/* Mean of |measured_i - truth_i| over k functions. */
double accuracy_mae(const double *truth, const double *measured, unsigned k);

/* The binomial prediction for n samples: the mean over the k functions of
 * sqrt(p_i(1-p_i)/n), p_i the true shares. */
double accuracy_binomial(const double *truth, unsigned k, double n);

/* One row of the error table: the error of shares measured from n samples. One run
 * of N samples holds floor(N/n) disjoint windows of n consecutive samples, each an
 * independent measurement; their mean error is what the row reports, so a row at
 * small n rests on many measurements and only the largest counts on one or two. */
struct accuracy_point {
    uint64_t samples;  /* n, per window */
    unsigned windows;  /* disjoint windows averaged */
    double mae;        /* mean over the windows of the mean absolute error at n */
    double mae_var;    /* the variance of that mean: across the windows, or for a single
                          window the one unbiased sampling predicts */
    double binomial;   /* accuracy_binomial at n */
    double ratio;      /* mae / binomial */
};

/* The row for windows of n samples of a run: leaf[i] is the function (0..k-1) that
 * the run's i-th on-CPU sample in time order has as its leaf, -1 for none; truth[]
 * the k true shares. n must be at least 1 and at most len. */
void accuracy_windows(const int *leaf, size_t len, const double *truth, unsigned k, uint64_t n,
                      struct accuracy_point *out);

/* The goal for a row: the error is within this multiple of the prediction. */
#define ACCURACY_GOAL_RATIO 1.2

/* The systematic floor of an error series.
 *
 * Model: a share's error is binomial noise of σ_n plus a bias b that does not shrink
 * with n, so E[MAE]² ≈ (c·σ_n)² + b² with c = ACCURACY_MAE_PER_SIGMA. Each row
 * estimates b² as mae² - mae_var - (c·σ_n)² (mae_var: a measured mean's square
 * overstates its expectation's square by its variance); the floor is the square root
 * of their mean weighted by the samples behind each row (n·windows), taken as 0 when
 * that mean is negative — an estimate of zero bias scatters both ways, so single rows
 * are not clipped. `from_samples` is where c·σ_n falls
 * under the floor: from there on more samples stop buying accuracy. The floor is
 * `seen` when that happens inside the measured range and the error at the largest n
 * exceeds ACCURACY_GOAL_RATIO times its prediction: the error has stopped falling
 * as sampling alone would make it fall. */
struct accuracy_floor {
    double floor;        /* estimated bias b, a share (0.003 = 0.3 points) */
    int seen;            /* 1 when the error has stopped falling in the series */
    double from_samples; /* n where the floor overtakes the binomial noise */
};

/* Fills out from rows sorted by samples ascending. Returns -1 for fewer than two
 * rows, else 0. */
int accuracy_floor(const struct accuracy_point *rows, unsigned n, struct accuracy_floor *out);

/* Samples a share p needs to clear two standard errors, rounded up to a whole sample
 * (4(1-p)/p exactly when that is whole: the bar is an equality at the boundary). */
uint64_t accuracy_samples_to_detect(double p);

/* A measured share against its truth, in standard errors of the measurement. */
double accuracy_z(double truth, double measured, double n);

#endif
