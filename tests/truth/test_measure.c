/* Counting a profile against named functions: self and total (recursion once),
 * waiting samples apart, prefixes and leaf series by time whatever the order of the
 * samples, and per-thread counts. The profile is built by hand through the model's API. */
#include <stdlib.h>
#include <string.h>

#include "truth/measure.h"
#include "analysis/model/profile.h"
#include "check.h"

static uint32_t frame(struct profile *p, const char *name)
{
    struct profile_frame f = {0};
    f.name = (char *)name;
    f.image = -1;
    f.symbolized = 1;
    return (uint32_t)profile_intern_frame(p, &f);
}

int main(void)
{
    struct profile *p = profile_new(PROFILE_CPU);
    CHECK(p && profile_add_sample_type(p, "samples", "count") == 0);
    int64_t main_t = profile_add_thread(p, "main", 0, 1, "main");
    int64_t work_t = profile_add_thread(p, "thread-1", 0, 2, "worker");
    uint32_t a = frame(p, "alpha"), b = frame(p, "beta"), m = frame(p, "main"),
             s = frame(p, "nanosleep");
    uint32_t st_a[] = {a, m}, st_ba[] = {b, a, m}, st_aba[] = {a, b, a, m}, st_sa[] = {s, a, m};
    uint32_t k_a = (uint32_t)profile_intern_stack(p, st_a, 2);
    uint32_t k_ba = (uint32_t)profile_intern_stack(p, st_ba, 3);
    uint32_t k_aba = (uint32_t)profile_intern_stack(p, st_aba, 4);
    uint32_t k_sa = (uint32_t)profile_intern_stack(p, st_sa, 3);
    int64_t one = 1;
    /* Out of time order on purpose: t=40, 10, 30, 20, 50 (waiting), 60 (other thread). */
    CHECK(profile_add_sample(p, (uint32_t)main_t, k_ba, PROFILE_RUNNING, 40, &one) == 0);
    CHECK(profile_add_sample(p, (uint32_t)main_t, k_a, PROFILE_RUNNING, 10, &one) == 0);
    CHECK(profile_add_sample(p, (uint32_t)main_t, k_aba, PROFILE_RUNNING, 30, &one) == 0);
    CHECK(profile_add_sample(p, (uint32_t)main_t, k_a, PROFILE_RUNNING, 20, &one) == 0);
    CHECK(profile_add_sample(p, (uint32_t)main_t, k_sa, PROFILE_WAITING, 50, &one) == 0);
    CHECK(profile_add_sample(p, (uint32_t)work_t, k_ba, PROFILE_RUNNING, 60, &one) == 0);

    struct measure_fn fns[] = {{"alpha", 0, 0, 0}, {"beta", 0, 0, 0}, {"gamma", 0, 0, 0}};
    struct measure_counts c;
    CHECK(measure_functions(p, -1, 0, fns, 3, &c) == 0);
    CHECK(c.running == 5 && c.waiting == 1);
    /* alpha: leaf of samples t=10, 20, 30 (the recursive one counts once) */
    CHECK(fns[0].self == 3 && fns[0].total == 5 && fns[0].waiting == 1);
    CHECK(fns[1].self == 2 && fns[1].total == 3 && fns[1].waiting == 0);
    CHECK(fns[2].self == 0 && fns[2].total == 0);

    /* The first two on-CPU samples in time are t=10 and t=20 (both alpha), not the
     * first two in the file (beta at 40, alpha at 10). */
    CHECK(measure_functions(p, -1, 2, fns, 3, &c) == 0);
    CHECK(c.running == 2 && fns[0].self == 2 && fns[1].total == 0);

    /* The leaf series: on-CPU samples only, in time order t=10, 20, 30, 40, 60 ->
     * alpha, alpha, alpha, beta, beta; the waiting one (t=50) is not in it. */
    int *leaf = NULL;
    CHECK(measure_leaf_series(p, -1, fns, 3, &leaf) == 5);
    CHECK(leaf && leaf[0] == 0 && leaf[1] == 0 && leaf[2] == 0 && leaf[3] == 1 && leaf[4] == 1);
    free(leaf);
    /* A function list without the leaves: every entry -1. */
    struct measure_fn other[] = {{"main", 0, 0, 0}};
    CHECK(measure_leaf_series(p, (int)main_t, other, 1, &leaf) == 4);
    CHECK(leaf && leaf[0] == -1 && leaf[1] == -1 && leaf[2] == -1 && leaf[3] == -1);
    free(leaf);

    int w = measure_thread(p, "worker");
    CHECK(w == (int)work_t && measure_thread(p, "main") == (int)main_t);
    CHECK(measure_thread(p, "nobody") == -1);
    CHECK(measure_functions(p, w, 0, fns, 3, &c) == 0);
    CHECK(c.running == 1 && fns[1].self == 1 && fns[0].self == 0 && fns[0].total == 1);
    measure_thread_counts(p, (int)main_t, &c);
    CHECK(c.running == 4 && c.waiting == 1);
    measure_thread_counts(p, -1, &c);
    CHECK(c.running == 5 && c.waiting == 1);
    profile_free(p);
    return check_exit();
}
