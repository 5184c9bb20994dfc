/* Host calibration: the line fit against a case worked out by hand, and the verdict
 * on fake timers: exact, noisy only now and then (the minimum removes it), noisy on
 * every run (unfit: unstable), flat (unfit), and a machine where other processes take
 * a core while we time (unfit: contended). */
#include <math.h>
#include <string.h>

#include "truth/calib.h"
#include "check.h"

#define NEAR(a, b, eps) (fabs((a) - (b)) <= (eps))

static void test_fit(void)
{
    double x[] = {1, 2, 3, 4}, y[] = {3, 5, 7, 9}, b, a, r2, worst;
    unsigned wi;
    CHECK(calib_fit(x, y, 4, &b, &a, &r2, &worst, &wi) == 0);
    CHECK(NEAR(b, 2, 1e-12) && NEAR(a, 1, 1e-12) && NEAR(r2, 1, 1e-12) && worst < 1e-12);
    /* y = 3,5,7,10: sxx 5, sxy 11.5 -> b 2.3, a 0.5; residuals .2 -.1 -.4 .3,
     * ss_res .30 over syy 26.75 -> R² 0.9887850; worst .2/2.8 = .0714286 at x=1. */
    double y2[] = {3, 5, 7, 10};
    CHECK(calib_fit(x, y2, 4, &b, &a, &r2, &worst, &wi) == 0);
    CHECK(NEAR(b, 2.3, 1e-12) && NEAR(a, 0.5, 1e-12));
    CHECKF(NEAR(r2, 1 - 0.30 / 26.75, 1e-12), "r2 %.9f", r2);
    CHECKF(NEAR(worst, 0.2 / 2.8, 1e-12) && wi == 0, "worst %g at %u", worst, wi);
    double x1[] = {2, 2, 2};
    CHECK(calib_fit(x1, y, 3, &b, &a, &r2, &worst, &wi) < 0);
    CHECK(calib_fit(x, y, 2, &b, &a, &r2, &worst, &wi) < 0);
}

/* A fake machine: work(units) advances a fake clock by 1000 ns per unit plus a fixed
 * 5 µs, plus noise drawn from a seeded generator; other processes burn `others` cores
 * of the fake clock's time. */
struct fake {
    uint64_t now;
    uint64_t rng;
    double noisy_fraction; /* share of runs that are slowed */
    double max_slowdown;   /* a slowed run takes up to (1 + this) times as long */
    double ns_per_unit;
    double others; /* cores busy with other processes */
};

static double fake_uniform(struct fake *f)
{
    f->rng ^= f->rng << 13, f->rng ^= f->rng >> 7, f->rng ^= f->rng << 17;
    return (double)(f->rng >> 11) / 9007199254740992.0;
}

static uint64_t fake_now(void *ctx)
{
    return ((struct fake *)ctx)->now;
}

static void fake_work(uint64_t units, void *ctx)
{
    struct fake *f = ctx;
    double t = (double)units * f->ns_per_unit + 5000;
    if (fake_uniform(f) < f->noisy_fraction) t *= 1 + f->max_slowdown * fake_uniform(f);
    f->now += (uint64_t)t;
}

static int64_t fake_others(void *ctx)
{
    struct fake *f = ctx;
    return (int64_t)(f->others * (double)f->now);
}

static struct calib_result run_fake(struct fake *f, unsigned repeats)
{
    struct calib_env env = {fake_now, fake_work, fake_others, 2, f};
    struct calib_opts o = {8, 1000, 10000, repeats};
    struct calib_result r;
    int rc = calib_run(&env, &o, &r);
    CHECK(rc == 0);
    return r;
}

static void test_verdicts(void)
{
    struct fake exact = {0, 88172645463325252ull, 0, 0, 1000, 0};
    struct calib_result r = run_fake(&exact, 5);
    CHECKF(r.fit, "exact timer judged unfit: %s", r.reason);
    CHECK(NEAR(r.ns_per_unit, 1000, 1e-6) && NEAR(r.intercept_ns, 5000, 1e-3));
    CHECK(NEAR(r.r2, 1, 1e-12) && r.worst_residual < 1e-9 && r.others_cores == 0);
    CHECK(r.units[0] == 1000 && r.units[7] == 10000 && r.nsizes == 8);

    /* A third of the runs slowed by up to 60%: 30 repeats leave at least one clean
     * run of every size, so the minima lie on the line. */
    struct fake sometimes = {0, 88172645463325252ull, 0.3, 0.6, 1000, 0};
    r = run_fake(&sometimes, 30);
    CHECKF(r.fit, "occasional noise not removed: %s", r.reason);
    CHECK(NEAR(r.ns_per_unit, 1000, 1e-6));

    /* Every run slowed by up to 100%: the minimum of 3 is still noisy. */
    struct fake always = {0, 88172645463325252ull, 1.0, 1.0, 1000, 0};
    r = run_fake(&always, 3);
    CHECKF(!r.fit, "noisy timer judged fit: %s", r.reason);
    CHECKF(strstr(r.reason, "unstable") || strstr(r.reason, "not linear"), "%s", r.reason);
    CHECKF(r.worst_residual > CALIB_MAX_RESIDUAL && r.spread > 0.1, "worst %g spread %g",
           r.worst_residual, r.spread);

    /* The work costs nothing per unit: the clock or the work is broken. */
    struct fake flat = {0, 88172645463325252ull, 0, 0, 0, 0};
    r = run_fake(&flat, 5);
    CHECK(!r.fit && strstr(r.reason, "did not get slower"));

    /* Clean timings, but other processes take a whole core meanwhile. */
    struct fake contended = {0, 88172645463325252ull, 0, 0, 1000, 1.0};
    r = run_fake(&contended, 5);
    CHECKF(!r.fit && strstr(r.reason, "contended"), "%s", r.reason);
    CHECK(NEAR(r.others_cores, 1.0, 1e-6));

    /* Bad options are refused before anything runs. */
    struct calib_env env = {fake_now, fake_work, NULL, 2, &exact};
    struct calib_opts bad = {2, 1000, 10000, 5};
    CHECK(calib_run(&env, &bad, &r) < 0);
    bad = (struct calib_opts){8, 1000, 1000, 5};
    CHECK(calib_run(&env, &bad, &r) < 0);
    /* Without a load reader the load is unknown and said to be. */
    struct calib_opts ok = {8, 1000, 10000, 5};
    CHECK(calib_run(&env, &ok, &r) == 0 && r.others_cores < 0 && r.fit);
    CHECK(strstr(r.reason, "unknown") != NULL);
}

int main(void)
{
    test_fit();
    test_verdicts();
    return check_exit();
}
