/* Calibration of this host for ground truth (DESIGN.md §4): how much one unit of
 * burn() costs, whether the cost is linear in the units, and whether the machine is
 * quiet enough right now for shares measured against that truth to mean anything.
 *
 * Timing noise is one-sided (a run is only ever slowed down), so each size is timed
 * many times and its minimum kept; the line is fitted to the minima. The clock, the
 * work and the reading of other processes' CPU use are injected, so the verdict can
 * be tested on a fake noisy timer. */
#ifndef KESTREL_CALIB_H
#define KESTREL_CALIB_H
#include <stdint.h>

#define CALIB_MAX_SIZES 16

struct calib_env {
    uint64_t (*now_ns)(void *ctx);           /* a monotonic clock */
    void (*work)(uint64_t units, void *ctx); /* burn(units) */
    /* CPU nanoseconds spent so far by everything on the machine except this process
     * (steal time included); negative when it cannot be read. May be NULL. */
    int64_t (*others_busy_ns)(void *ctx);
    int ncpu;  /* cores online */
    void *ctx; /* passed to the three functions */
};

struct calib_opts {
    unsigned nsizes;    /* sizes timed, at most CALIB_MAX_SIZES, evenly spaced */
    uint64_t min_units; /* the smallest size */
    uint64_t max_units; /* the largest size */
    unsigned repeats;   /* timings of each size; its minimum is kept */
};

/* The thresholds of the verdict. An idle machine fits a line with R² above 0.9999
 * and a worst residual of a few percent; a contended one does not, or it shows other
 * processes taking CPU time while we measure. */
#define CALIB_MIN_R2 0.999
#define CALIB_MAX_RESIDUAL 0.05
#define CALIB_MAX_OTHERS_CORES 0.25

struct calib_result {
    unsigned nsizes;
    uint64_t units[CALIB_MAX_SIZES]; /* the sizes timed */
    double min_ns[CALIB_MAX_SIZES];  /* fastest timing of each size */
    double med_ns[CALIB_MAX_SIZES];  /* median timing of each size, for the spread */
    double ns_per_unit;              /* slope of the line through the minima */
    double intercept_ns;             /* its intercept: the fixed cost of a call */
    double r2;                       /* coefficient of determination of that line */
    double worst_residual;           /* max |min - fit| / fit over the sizes */
    uint64_t worst_units;            /* the size where that residual is */
    double spread;                   /* median over sizes of median/min - 1 */
    double others_cores; /* other processes' CPU use while timing, in cores; <0 unknown */
    double seconds;      /* wall time the calibration took */
    int fit;             /* 1: this host can support ground truth now */
    char reason[256];    /* why (or why not), one sentence */
};

/* Fits y = a + b·x by least squares over n points: b, a, R² and the worst relative
 * residual |y - fit| / fit (and its index). Returns -EINVAL for fewer than 3 points or
 * all x equal. */
int calib_fit(const double *x, const double *y, unsigned n, double *slope, double *intercept,
              double *r2, double *worst_residual, unsigned *worst_index);

/* Times the sizes, fits the line and gives the verdict. Returns 0 or -EINVAL. */
int calib_run(const struct calib_env *env, const struct calib_opts *opts, struct calib_result *out);


/* The real environment: CLOCK_MONOTONIC, burn(), /proc/stat and /proc/self/stat. */
void calib_env_host(struct calib_env *env);

#endif
