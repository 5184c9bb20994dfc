/* Binomial standard errors and the detectability bar (stats.h). */
#include "analysis/aggregate/stats.h"

#include <math.h>

double stats_se(double p, double n)
{
    if (n <= 0 || p <= 0 || p >= 1) return 0;
    return sqrt(p * (1 - p) / n);
}

double stats_samples_needed(double p)
{
    if (p <= 0) return INFINITY;
    if (p >= 1) return 0;
    return 4 * (1 - p) / p;
}

int stats_detectable(double p, double n)
{
    return p > 0 && n >= stats_samples_needed(p);
}
