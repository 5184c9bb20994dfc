/* Error against ground truth, its binomial prediction and its floor (accuracy.h). */
#include "truth/accuracy.h"

#include <math.h>

#include "analysis/aggregate/stats.h"

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

void accuracy_windows(const int *leaf, size_t len, const double *truth, unsigned k, uint64_t n,
                      struct accuracy_point *out)
{
    size_t windows = n ? len / n : 0;
    double sum = 0, sum2 = 0, measured[k ? k : 1];
    uint64_t count[k ? k : 1];
    for (size_t w = 0; w < windows; w++) {
        for (unsigned j = 0; j < k; j++)
            count[j] = 0;
        for (size_t i = w * n; i < (w + 1) * n; i++)
            if (leaf[i] >= 0 && (unsigned)leaf[i] < k) count[leaf[i]]++;
        for (unsigned j = 0; j < k; j++)
            measured[j] = (double)count[j] / (double)n;
        double e = accuracy_mae(truth, measured, k);
        sum += e;
        sum2 += e * e;
    }
    out->samples = n;
    out->windows = (unsigned)windows;
    out->binomial = accuracy_binomial(truth, k, (double)n);
    out->mae = windows ? sum / (double)windows : 0;
    if (windows >= 2) {
        double var = (sum2 - sum * sum / (double)windows) / (double)(windows - 1);
        out->mae_var = (var > 0 ? var : 0) / (double)windows;
    } else {
        /* One window: |X| of X ~ N(0, σ²) has variance σ²(1 - 2/π); the mean of k of
         * them, independent, has the sum of those over k². */
        double v = 0;
        for (unsigned j = 0; j < k; j++) {
            double se = stats_se(truth[j], (double)n);
            v += se * se * (1 - ACCURACY_MAE_PER_SIGMA * ACCURACY_MAE_PER_SIGMA);
        }
        out->mae_var = k ? v / ((double)k * k) : 0;
    }
    out->ratio = out->binomial > 0 ? out->mae / out->binomial : 0;
}

int accuracy_floor(const struct accuracy_point *rows, unsigned n, struct accuracy_floor *out)
{
    if (n < 2) return -1;
    double wsum = 0, b2 = 0;
    for (unsigned i = 0; i < n; i++) {
        double noise = ACCURACY_MAE_PER_SIGMA * rows[i].binomial;
        double excess = rows[i].mae * rows[i].mae - rows[i].mae_var - noise * noise;
        double w = (double)rows[i].samples * (rows[i].windows ? rows[i].windows : 1);
        b2 += w * excess;
        wsum += w;
    }
    out->floor = wsum > 0 && b2 > 0 ? sqrt(b2 / wsum) : 0;
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
