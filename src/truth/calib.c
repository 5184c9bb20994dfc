/* Calibration of this host for ground truth: times burn() at several sizes, keeps
 * the minimum of each, fits a line and decides whether the host is fit (calib.h). */
#include "truth/calib.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "truth/burn.h"

int calib_fit(const double *x, const double *y, unsigned n, double *slope, double *intercept,
              double *r2, double *worst_residual, unsigned *worst_index)
{
    if (n < 3) return -EINVAL;
    double mx = 0, my = 0;
    for (unsigned i = 0; i < n; i++) {
        mx += x[i];
        my += y[i];
    }
    mx /= n;
    my /= n;
    double sxx = 0, sxy = 0, syy = 0;
    for (unsigned i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
        syy += (y[i] - my) * (y[i] - my);
    }
    if (sxx <= 0) return -EINVAL;
    double b = sxy / sxx, a = my - b * mx;
    double ss_res = 0, worst = 0;
    unsigned wi = 0;
    for (unsigned i = 0; i < n; i++) {
        double fit = a + b * x[i], d = y[i] - fit;
        ss_res += d * d;
        double rel = fit > 0 ? fabs(d) / fit : INFINITY;
        if (rel > worst) {
            worst = rel;
            wi = i;
        }
    }
    *slope = b;
    *intercept = a;
    /* A perfectly flat y has nothing to explain: R² is 1 only if the fit is exact. */
    *r2 = syy > 0 ? 1.0 - ss_res / syy : (ss_res == 0 ? 1.0 : 0.0);
    *worst_residual = worst;
    *worst_index = wi;
    return 0;
}

/* Sets r->fit and r->reason from the fitted figures. */
static void calib_verdict(struct calib_result *r)
{
    char *s = r->reason;
    size_t n = sizeof r->reason;
    if (r->others_cores > CALIB_MAX_OTHERS_CORES)
        snprintf(s, n,
                 "contended: other processes used %.2f cores while burn() was timed (limit %.2f); "
                 "shares measured now would carry their noise",
                 r->others_cores, CALIB_MAX_OTHERS_CORES);
    else if (!(r->ns_per_unit > 0))
        snprintf(s, n, "burn() did not get slower with more units: the clock or the work is wrong");
    else if (r->r2 < CALIB_MIN_R2)
        snprintf(s, n, "burn() is not linear here: R² %.5f below %.3f (noisy or throttled timer)",
                 r->r2, CALIB_MIN_R2);
    else if (r->worst_residual > CALIB_MAX_RESIDUAL)
        snprintf(s, n,
                 "timing is unstable: the fastest of the repeats still strays %.1f%% from the "
                 "line at %llu units (limit %.0f%%)",
                 100 * r->worst_residual, (unsigned long long)r->worst_units,
                 100 * CALIB_MAX_RESIDUAL);
    else {
        r->fit = 1;
        snprintf(s, n, "linear within %.1f%% (R² %.6f)%s", 100 * r->worst_residual, r->r2,
                 r->others_cores < 0 ? "; other processes' load unknown" : ", machine quiet");
        return;
    }
    r->fit = 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int calib_run(const struct calib_env *env, const struct calib_opts *o, struct calib_result *r)
{
    if (!o->nsizes || o->nsizes > CALIB_MAX_SIZES || o->nsizes < 3 || !o->repeats ||
        o->max_units <= o->min_units)
        return -EINVAL;
    memset(r, 0, sizeof *r);
    r->nsizes = o->nsizes;
    for (unsigned k = 0; k < o->nsizes; k++)
        r->units[k] = o->min_units + (o->max_units - o->min_units) * k / (o->nsizes - 1);

    double *t = calloc((size_t)o->nsizes * o->repeats, sizeof *t);
    if (!t) return -ENOMEM;
    int64_t busy0 = env->others_busy_ns ? env->others_busy_ns(env->ctx) : -1;
    uint64_t w0 = env->now_ns(env->ctx);
    /* Sizes are interleaved (and the starting size rotates) so a slow spell of the
     * machine spreads over all sizes rather than bending the line at one of them. */
    for (unsigned rep = 0; rep < o->repeats; rep++)
        for (unsigned j = 0; j < o->nsizes; j++) {
            unsigned k = (j + rep) % o->nsizes;
            uint64_t a = env->now_ns(env->ctx);
            env->work(r->units[k], env->ctx);
            uint64_t b = env->now_ns(env->ctx);
            t[(size_t)k * o->repeats + rep] = (double)(b - a);
        }
    uint64_t w1 = env->now_ns(env->ctx);
    int64_t busy1 = env->others_busy_ns ? env->others_busy_ns(env->ctx) : -1;
    r->seconds = (double)(w1 - w0) / 1e9;
    r->others_cores = -1;
    if (busy0 >= 0 && busy1 >= 0 && w1 > w0)
        r->others_cores = busy1 > busy0 ? (double)(busy1 - busy0) / (double)(w1 - w0) : 0;

    double x[CALIB_MAX_SIZES], spreads[CALIB_MAX_SIZES];
    for (unsigned k = 0; k < o->nsizes; k++) {
        double *row = t + (size_t)k * o->repeats;
        qsort(row, o->repeats, sizeof *row, cmp_double);
        r->min_ns[k] = row[0];
        r->med_ns[k] = row[o->repeats / 2];
        spreads[k] = row[0] > 0 ? row[o->repeats / 2] / row[0] - 1 : 0;
        x[k] = (double)r->units[k];
    }
    free(t);
    qsort(spreads, o->nsizes, sizeof *spreads, cmp_double);
    r->spread = spreads[o->nsizes / 2];
    unsigned wi = 0;
    if (calib_fit(x, r->min_ns, o->nsizes, &r->ns_per_unit, &r->intercept_ns, &r->r2,
                  &r->worst_residual, &wi) < 0)
        return -EINVAL;
    r->worst_units = r->units[wi];
    calib_verdict(r);
    return 0;
}

/* --- the host ------------------------------------------------------------------ */

static uint64_t host_now(void *ctx)
{
    (void)ctx;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void host_work(uint64_t units, void *ctx)
{
    (void)ctx;
    burn(units);
}

/* Busy time of the whole machine from /proc/stat (user, nice, system, irq, softirq,
 * steal) minus this process's own and its reaped children's (utime, stime, cutime,
 * cstime of /proc/self/stat), in ns. Both
 * are in clock ticks, so the figure is good to a tick per core over the window. */
static int64_t host_others_busy(void *ctx)
{
    (void)ctx;
    long hz = sysconf(_SC_CLK_TCK);
    if (hz <= 0) return -1;
    unsigned long long v[8] = {0};
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return -1;
    int got = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                     &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    if (got != 8) return -1;
    unsigned long long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];

    unsigned long long ut = 0, st = 0, cut = 0, cst = 0;
    char buf[1024];
    f = fopen("/proc/self/stat", "r");
    if (!f) return -1;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = 0;
    /* The command name may hold spaces and parentheses: fields resume after the last ')'. */
    char *p = strrchr(buf, ')');
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu", &ut,
                     &st, &cut, &cst) != 4)
        return -1;
    /* Children this process has waited for are its own work too (a profiled workload). */
    long long others = (long long)busy - (long long)(ut + st + cut + cst);
    if (others < 0) others = 0;
    return (int64_t)(others * (1000000000ll / hz));
}

void calib_env_host(struct calib_env *env)
{
    memset(env, 0, sizeof *env);
    env->now_ns = host_now;
    env->work = host_work;
    env->others_busy_ns = host_others_busy;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    env->ncpu = n > 0 ? (int)n : 1;
}
