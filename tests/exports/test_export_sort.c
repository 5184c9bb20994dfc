/* export_sort_by_time, the cpuprofile writer's order of samples: by time, a negative
 * time (no time: a long run's samples past the runtime's row table) after every
 * time, equal times (and all the untimed) in index order, against a plain insertion
 * sort. */
#include <stdlib.h>

#include "analysis/writers/export.h"
#include "check.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return rng_state;
}

/* The order's key: no time (negative) after every time. */
static uint64_t key(const struct profile *p, size_t i)
{
    int64_t t = p->samples[i].time_ns;
    return t < 0 ? UINT64_MAX : (uint64_t)t;
}

static void check_sorted(struct profile *p, size_t n, const char *what)
{
    size_t *order = malloc(n * sizeof *order), *want = malloc(n * sizeof *want);
    for (size_t i = 0; i < n; i++)
        order[i] = want[i] = i;
    /* Stable insertion sort: the reference. */
    for (size_t i = 1; i < n; i++)
        for (size_t k = i; k > 0 && key(p, want[k - 1]) > key(p, want[k]); k--) {
            size_t t = want[k];
            want[k] = want[k - 1], want[k - 1] = t;
        }
    CHECKF(export_sort_by_time(p, order, n) == 0, "%s", what);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += order[i] != want[i];
    CHECKF(bad == 0, "%s: %zu of %zu positions differ", what, bad, n);
    free(order), free(want);
}

int main(void)
{
    struct profile *p = profile_new(PROFILE_CPU);
    profile_add_sample_type(p, "samples", "count");
    profile_add_thread(p, "main", 0, 1, NULL);
    uint32_t frame = (uint32_t)profile_intern_address(p, 0x1000);
    uint32_t stack = (uint32_t)profile_intern_stack(p, &frame, 1);
    int64_t one = 1;
    /* Wide times, negatives, many ties (every fourth draw repeats a small value). */
    for (size_t i = 0; i < 3000; i++) {
        uint64_t r = rng();
        int64_t t = i % 4 == 0 ? (int64_t)(r % 8) : (int64_t)r;
        if (i % 7 == 0) t = -1;
        profile_add_sample(p, 0, stack, 0, t, &one);
    }
    check_sorted(p, p->n_samples, "random times");
    check_sorted(p, 1, "one sample");
    check_sorted(p, 0, "no samples");
    profile_free(p);

    /* Times that differ only in their highest byte, and all equal. */
    p = profile_new(PROFILE_CPU);
    profile_add_sample_type(p, "samples", "count");
    profile_add_thread(p, "main", 0, 1, NULL);
    frame = (uint32_t)profile_intern_address(p, 0x1000);
    stack = (uint32_t)profile_intern_stack(p, &frame, 1);
    for (size_t i = 0; i < 200; i++)
        profile_add_sample(p, 0, stack, 0, (int64_t)((199 - i) % 3) << 56, &one);
    check_sorted(p, p->n_samples, "high byte only");
    for (size_t i = 0; i < p->n_samples; i++)
        p->samples[i].time_ns = 5;
    check_sorted(p, p->n_samples, "all equal");
    profile_free(p);
    return check_exit();
}
