/* Error against ground truth, its binomial prediction and its floor (accuracy.h). */
#include "analysis/accuracy.h"

#include <math.h>

#include "analysis/stats.h"

double accuracy_mae(const double *truth, const double *measured, unsigned k)
{
    if (!k) return 0;
    double s = 0;
    for (unsigned i = 0; i < k; i++)
        s += fabs(measured[i] - truth[i]);
    return s / k;
}

double accuracy_binomial(const double *truth, unsigned k, double n)
{
    if (!k) return 0;
    double s = 0;
    for (unsigned i = 0; i < k; i++)
        s += stats_se(truth[i], n);
    return s / k;
}

int accuracy_floor(const struct accuracy_point *rows, unsigned n, struct accuracy_floor *out)
{
    if (n < 2) return -1;
    double wsum = 0, b2 = 0;
    for (unsigned i = 0; i < n; i++) {
        double noise = ACCURACY_MAE_PER_SIGMA * rows[i].binomial;
        double excess = rows[i].mae * rows[i].mae - noise * noise;
        double w = (double)rows[i].samples;
        b2 += w * (excess > 0 ? excess : 0);
        wsum += w;
    }
    out->floor = wsum > 0 ? sqrt(b2 / wsum) : 0;
    const struct accuracy_point *last = &rows[n - 1];
    /* σ_n = σ_N·sqrt(N/n): the n where c·σ_n equals the floor. */
    double noise_last = ACCURACY_MAE_PER_SIGMA * last->binomial;
    out->from_samples = out->floor > 0 ? (double)last->samples * (noise_last / out->floor) *
                                             (noise_last / out->floor)
                                       : INFINITY;
    out->seen = out->from_samples <= (double)last->samples &&
                last->mae > ACCURACY_GOAL_RATIO * last->binomial;
    return 0;
}

uint64_t accuracy_samples_to_detect(double p)
{
    double n = stats_samples_needed(p);
    if (!isfinite(n)) return UINT64_MAX;
    /* 4(1-p)/p computed in floating point can land a hair above a whole number
     * (e.g. 36.000000000000007): that hair is rounding, not a sample. */
    return (uint64_t)ceil(n - 1e-9 * n);
}

double accuracy_z(double truth, double measured, double n)
{
    /* The standard error is the truth's: a measured 0 would otherwise have none. */
    double se = stats_se(truth, n);
    return se > 0 ? (measured - truth) / se : (measured == truth ? 0 : INFINITY);
}
