/* The ground truth's statistics against cases worked out by hand: mean absolute
 * error, its binomial prediction, the samples needed to detect a share (an equality
 * at the boundary), and the systematic floor of an error series. */
#include <math.h>

#include "truth/accuracy.h"
#include "analysis/aggregate/stats.h"
#include "check.h"

#define NEAR(a, b, eps) (fabs((a) - (b)) <= (eps))

static void test_mae_and_binomial(void)
{
    /* |.52-.5| + |.27-.3| + |.21-.2| = .06 over 3 functions */
    double truth[] = {0.5, 0.3, 0.2}, measured[] = {0.52, 0.27, 0.21};
    CHECK(NEAR(accuracy_mae(truth, measured, 3), 0.02, 1e-12));
    CHECK(accuracy_mae(truth, truth, 3) == 0);
    /* sqrt(.5*.5/100) = .05 and sqrt(.1*.9/100) = .03: mean .04 */
    double t2[] = {0.5, 0.1};
    CHECK(NEAR(accuracy_binomial(t2, 2, 100), 0.04, 1e-12));
    /* Four times the samples halve it. */
    CHECK(NEAR(accuracy_binomial(t2, 2, 400), 0.02, 1e-12));
}

static void test_detectability(void)
{
    /* 4(1-p)/p: 36, 129.33 -> 130, 396, 3996, the table of the report. */
    CHECK(accuracy_samples_to_detect(0.10) == 36);
    CHECK(accuracy_samples_to_detect(0.03) == 130);
    CHECK(accuracy_samples_to_detect(0.01) == 396);
    CHECK(accuracy_samples_to_detect(0.001) == 3996);
    CHECK(accuracy_samples_to_detect(0.40) == 6);
    CHECK(accuracy_samples_to_detect(0.02) == 196);
    CHECK(accuracy_samples_to_detect(0) == UINT64_MAX);
    /* At the boundary the share is exactly two standard errors: 2*sqrt(.1*.9/36) = .1,
     * and that n is enough; one sample fewer is not. */
    CHECK(NEAR(2 * stats_se(0.10, 36), 0.10, 1e-15));
    CHECK(stats_detectable(0.10, 36) && !stats_detectable(0.10, 35));
    CHECK(stats_detectable(0.01, 396) && !stats_detectable(0.01, 395));
    /* z of a measurement: (0.12 - 0.10) / sqrt(.1*.9/900) = .02/.01 = 2 */
    CHECK(NEAR(accuracy_z(0.10, 0.12, 900), 2.0, 1e-12));
    CHECK(NEAR(accuracy_z(0.10, 0.07, 900), -3.0, 1e-12));
}

static void test_floor_absent(void)
{
    /* Pure sampling noise: each row's error is exactly what an unbiased estimator
     * shows (c·σ), so nothing is left for a floor. */
    struct accuracy_point rows[4];
    uint64_t n[] = {500, 2000, 8000, 20000};
    double p[] = {0.4, 0.3, 0.2, 0.1};
    for (int i = 0; i < 4; i++) {
        rows[i].samples = n[i];
        rows[i].windows = 1;
        rows[i].mae_var = 0;
        rows[i].binomial = accuracy_binomial(p, 4, (double)n[i]);
        rows[i].mae = ACCURACY_MAE_PER_SIGMA * rows[i].binomial;
        rows[i].ratio = rows[i].mae / rows[i].binomial;
    }
    struct accuracy_floor f;
    CHECK(accuracy_floor(rows, 4, &f) == 0);
    CHECK(f.floor < 1e-12 && !f.seen && isinf(f.from_samples));
    CHECK(accuracy_floor(rows, 1, &f) == -1);
}

static void test_floor_present(void)
{
    /* A bias of 0.003 on top of the noise: mae = sqrt((cσ)² + 0.003²) on every row, so
     * every row gives b² = 0.003² and the floor is 0.003. At n = 20000 with σ = .0022,
     * cσ = .0017554, mae = .0034758 = 1.58σ > 1.2σ, and the floor overtakes the noise
     * at 20000·(.0017554/.003)² = 6848 samples, inside the series: seen. */
    struct accuracy_point rows[3];
    uint64_t n[] = {5000, 10000, 20000};
    for (int i = 0; i < 3; i++) {
        double sigma = 0.0022 * sqrt(20000.0 / n[i]), c = ACCURACY_MAE_PER_SIGMA * sigma;
        rows[i] = (struct accuracy_point){n[i], 1, sqrt(c * c + 0.003 * 0.003), 0, sigma, 0};
    }
    struct accuracy_floor f;
    CHECK(accuracy_floor(rows, 3, &f) == 0);
    CHECKF(NEAR(f.floor, 0.003, 1e-12), "floor %g", f.floor);
    CHECK(f.seen);
    CHECKF(NEAR(f.from_samples, 6848, 2), "from %g", f.from_samples);

    /* The figures of a published run (507, 1669, 6833, 18214 samples, one window each,
     * no variance given): by hand, mae² - (c·σ)² = -7.8311e-5, 6.0987e-6, -5.3606e-6,
     * 4.7588e-6; weighted by n: (-0.039704 + 0.010179 - 0.036629 + 0.086677) / 27223
     * = 7.5385e-7, floor .00086825. The first row's shortfall is noise and offsets the
     * others' excess; clipping each row at 0 would have made a bias of .0019 of it. The
     * floor would outgrow c·σ = .0017554 only at 18214·(.0017554/.00086825)² = 74451
     * samples: not seen. */
    struct accuracy_point pub[] = {
        {507, 1, 0.0060, 0, 0.0134, 0},
        {1669, 1, 0.0064, 0, 0.0074, 0},
        {6833, 1, 0.0017, 0, 0.0036, 0},
        {18214, 1, 0.0028, 0, 0.0022, 0},
    };
    CHECK(accuracy_floor(pub, 4, &f) == 0);
    CHECKF(NEAR(f.floor, 0.00086825, 2e-7) && !f.seen, "floor %g", f.floor);
    CHECKF(NEAR(f.from_samples, 74451, 100), "from %g", f.from_samples);
    /* The last two rows alone: (-0.036629 + 0.086677) / 25047 = 1.9981e-6, floor
     * .0014136; a variance of 1e-6 given for the last row takes .018214 off the sum:
     * (-0.036629 + 0.086677 - 0.018214) / 25047 = 1.2709e-6 -> .0011274. */
    CHECK(accuracy_floor(pub + 2, 2, &f) == 0);
    CHECKF(NEAR(f.floor, 0.0014136, 1e-6), "floor %g", f.floor);
    pub[3].mae_var = 1e-6;
    CHECK(accuracy_floor(pub + 2, 2, &f) == 0);
    CHECKF(NEAR(f.floor, 0.0011274, 1e-6), "floor %g", f.floor);
}

static void test_windows(void)
{
    /* Two functions of true shares .5 and .25 (the rest: no function), 8 samples in
     * windows of 4: window 1 leaves 0,0,1,-1 -> .5,.25: error 0; window 2 leaves
     * 1,1,1,0 -> .25,.75: |.25-.5| + |.75-.25| = .75 over 2 = .375. Mean .1875; the
     * variance across the two windows (0 and .375) is .0703125, of the mean half of it. */
    int leaf[] = {0, 0, 1, -1, 1, 1, 1, 0, 0};
    double truth[] = {0.5, 0.25};
    struct accuracy_point r;
    accuracy_windows(leaf, 9, truth, 2, 4, &r);
    CHECK(r.samples == 4 && r.windows == 2);
    CHECKF(NEAR(r.mae, 0.1875, 1e-12), "mae %g", r.mae);
    CHECKF(NEAR(r.mae_var, 0.03515625, 1e-12), "var %g", r.mae_var);
    CHECK(NEAR(r.binomial, accuracy_binomial(truth, 2, 4), 1e-15));
    CHECK(NEAR(r.ratio, r.mae / r.binomial, 1e-12));
    /* One window of all 8 (the ninth sample is left over): .5 -> |3/8-.5| = .125,
     * .25 -> |4/8-.25| = .25; mean .1875. Its variance is the predicted one:
     * (1 - 2/π)(.5·.5/8 + .25·.75/8)/4 = .36338·.0546875/4 = .0049681. */
    accuracy_windows(leaf, 9, truth, 2, 8, &r);
    CHECK(r.windows == 1);
    CHECKF(NEAR(r.mae, 0.1875, 1e-12), "mae %g", r.mae);
    CHECKF(NEAR(r.mae_var, 0.0049681, 1e-6), "var %g", r.mae_var);
}

int main(void)
{
    test_mae_and_binomial();
    test_detectability();
    test_floor_absent();
    test_floor_present();
    test_windows();
    return check_exit();
}
