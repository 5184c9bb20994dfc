/* Aggregation against hand-computed numbers: self and total with recursion counted
 * once, lines, threads, states, standard errors and the detectability bar. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "analysis/aggregate/stats.h"
#include "analysis/aggregate/summary.h"
#include "check.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

static const struct summary_function *fn(const struct summary *s, const char *name)
{
    for (size_t i = 0; i < s->n_functions; i++)
        if (!strcmp(s->functions[i].name, name)) return &s->functions[i];
    return NULL;
}

static const struct summary_line *line(const struct summary *s, const char *name, int l)
{
    for (size_t i = 0; i < s->n_lines; i++)
        if (!strcmp(s->functions[s->lines[i].function].name, name) && s->lines[i].line == l)
            return &s->lines[i];
    return NULL;
}

static void test_stats(void)
{
    CHECK(NEAR(stats_se(0.5, 100), 0.05));
    CHECK(NEAR(stats_se(0.1, 900), 0.01));
    CHECK(stats_se(0, 100) == 0 && stats_se(0.5, 0) == 0);
    CHECK(NEAR(stats_samples_needed(0.01), 396));
    CHECK(NEAR(stats_samples_needed(0.2), 16));
    CHECK(stats_detectable(0.01, 396) && !stats_detectable(0.01, 395));
    CHECK(!stats_detectable(0, 1e9));
    /* At the bar the share is exactly two standard errors. */
    CHECK(NEAR(2 * stats_se(0.2, 16), 0.2));
}

/* main -> fib(line 4) -> fib(line 3) -> leaf, and a recursive fib stack. */
static struct profile *build(void)
{
    struct profile *p = profile_new(PROFILE_CPU);
    profile_add_sample_type(p, "samples", "count");
    profile_add_sample_type(p, "cpu", "nanoseconds");
    profile_add_thread(p, "main", 0, 1, NULL);
    profile_add_thread(p, "worker", 1, 2, NULL);
    struct profile_frame f = {.name = "main", .file = "a.c", .line = 10, .image = -1};
    uint32_t main10 = (uint32_t)profile_intern_frame(p, &f);
    f.name = "fib", f.line = 3;
    uint32_t fib3 = (uint32_t)profile_intern_frame(p, &f);
    f.line = 4;
    uint32_t fib4 = (uint32_t)profile_intern_frame(p, &f);
    f.name = "leaf", f.file = "b.c", f.line = 7;
    uint32_t leaf7 = (uint32_t)profile_intern_frame(p, &f);
    uint32_t s0[] = {leaf7, fib3, fib4, main10}, s1[] = {fib3, fib3, fib4, main10}, s2[] = {main10};
    uint32_t st0 = (uint32_t)profile_intern_stack(p, s0, 4);
    uint32_t st1 = (uint32_t)profile_intern_stack(p, s1, 4);
    uint32_t st2 = (uint32_t)profile_intern_stack(p, s2, 1);
    int64_t v0[] = {1, 10}, v1[] = {1, 20}, v2[] = {1, 100};
    for (int i = 0; i < 5; i++)
        profile_add_sample(p, 0, st0, PROFILE_RUNNING, i, v0);
    for (int i = 0; i < 3; i++)
        profile_add_sample(p, 0, st1, PROFILE_RUNNING, i, v1);
    for (int i = 0; i < 2; i++)
        profile_add_sample(p, 1, st2, PROFILE_WAITING, i, v2);
    return p;
}

static void test_counts(void)
{
    struct profile *p = build();
    const char *why;
    struct summary *s = summary_build(p, 0, &why);
    CHECK(s != NULL);
    if (!s) return;
    CHECK(s->total == 10 && s->n_samples == 10);
    CHECK(s->n_functions == 3);
    /* Hottest self first. */
    CHECK(!strcmp(s->functions[0].name, "leaf") && !strcmp(s->functions[1].name, "fib") &&
          !strcmp(s->functions[2].name, "main"));
    const struct summary_function *leaf = fn(s, "leaf"), *fib = fn(s, "fib"), *m = fn(s, "main");
    CHECK(leaf->self.value == 5 && leaf->total.value == 5);
    CHECK(fib->self.value == 3);
    CHECK(fib->total.value == 8); /* recursion counted once: not 3*2 + 5 */
    CHECK(m->self.value == 2 && m->total.value == 10);
    CHECK(NEAR(leaf->self.share, 0.5) && NEAR(leaf->self.se, sqrt(0.25 / 10)));
    CHECK(NEAR(fib->total.share, 0.8) && NEAR(fib->total.se, sqrt(0.8 * 0.2 / 10)));
    CHECK(leaf->self.significant); /* needs 4 samples, has 10 */
    CHECK(!m->self.significant);   /* 0.2 needs 16 */
    CHECK(m->total.se == 0 && m->total.significant);
    /* Location: the line with most self value. */
    CHECK(fib->line == 3 && m->line == 10 && !strcmp(fib->file, "a.c"));
    /* Lines: fib:3 is on S0 once and on S1 twice, counted once each. */
    const struct summary_line *l3 = line(s, "fib", 3), *l4 = line(s, "fib", 4);
    CHECK(l3 && l3->self.value == 3 && l3->total.value == 8);
    CHECK(l4 && l4->self.value == 0 && l4->total.value == 8);
    CHECK(s->lines[0].self.value == 5); /* leaf:7 first */
    /* Frames map to their function. */
    for (size_t i = 0; i < p->n_frames; i++)
        CHECK(!strcmp(s->functions[s->function_of_frame[i]].name, p->frames[i].name));
    /* States and threads. */
    CHECK(s->state[PROFILE_RUNNING].value == 8 && s->state[PROFILE_WAITING].value == 2);
    CHECK(NEAR(s->state[PROFILE_WAITING].se, sqrt(0.2 * 0.8 / 10)));
    CHECK(s->threads[0].value[PROFILE_RUNNING] == 8 && s->threads[0].value[PROFILE_WAITING] == 0);
    CHECK(s->threads[1].n[PROFILE_WAITING] == 2 && NEAR(s->threads[1].share.share, 0.2));
    summary_free(s);

    /* The cpu type weighs each sample by its nanoseconds: 50 + 60 + 200. */
    s = summary_build(p, 1, &why);
    CHECK(s && s->total == 310 && s->n_samples == 10);
    if (s) {
        CHECK(!strcmp(s->functions[0].name, "main") && s->functions[0].self.value == 200);
        CHECK(NEAR(fn(s, "fib")->total.share, 110.0 / 310));
        CHECK(NEAR(fn(s, "fib")->total.se, sqrt(110.0 / 310 * 200.0 / 310 / 10)));
    }
    summary_free(s);
    CHECK(summary_build(p, 2, &why) == NULL && strstr(why, "sample type"));
    profile_free(p);
}

static void test_overflow(void)
{
    struct profile *p = profile_new(PROFILE_HEAP);
    profile_add_sample_type(p, "inuse_space", "bytes");
    profile_add_thread(p, "main", 0, -1, NULL);
    uint32_t f = (uint32_t)profile_intern_address(p, 0x1234);
    uint32_t st = (uint32_t)profile_intern_stack(p, &f, 1);
    int64_t big = INT64_MAX;
    profile_add_sample(p, 0, st, 0, -1, &big);
    profile_add_sample(p, 0, st, 0, -1, &big);
    const char *why = NULL;
    CHECK(summary_build(p, 0, &why) == NULL && why && strstr(why, "64 bits"));
    profile_free(p);
}

/* A heap profile's standard errors count sampled allocations, not merged pprof
 * samples: 64 MiB in use at a 512 KiB period is about 128 events, whether they
 * arrive as one merged sample per stack or not. */
static void test_heap_events(void)
{
    struct profile *p = profile_new(PROFILE_HEAP);
    profile_add_sample_type(p, "alloc_objects", "count");
    profile_add_sample_type(p, "alloc_space", "bytes");
    profile_add_sample_type(p, "inuse_objects", "count");
    profile_add_sample_type(p, "inuse_space", "bytes");
    p->period_type.type = strdup("space");
    p->period_type.unit = strdup("bytes");
    p->period = 512 * 1024;
    profile_add_thread(p, "main", 0, -1, NULL);
    uint32_t a = (uint32_t)profile_intern_address(p, 0x1000);
    uint32_t b = (uint32_t)profile_intern_address(p, 0x2000);
    uint32_t sa = (uint32_t)profile_intern_stack(p, &a, 1);
    uint32_t sb = (uint32_t)profile_intern_stack(p, &b, 1);
    int64_t va[] = {4096, 96LL << 20, 3072, 48LL << 20}; /* kept: 48 MiB in use */
    int64_t vb[] = {1024, 32LL << 20, 1024, 16LL << 20};
    profile_add_sample(p, 0, sa, 0, -1, va);
    profile_add_sample(p, 0, sb, 0, -1, vb);
    const char *why = NULL;
    struct summary *s = summary_build(p, 3, &why); /* inuse_space: 64 MiB */
    CHECK(s && s->n_samples == 2);
    CHECKF(s && s->n_events > 127.9 && s->n_events < 128.1, "%f", s ? s->n_events : -1);
    const struct summary_function *fa = s ? &s->functions[0] : NULL;
    /* share 0.75 over 128 events: SE sqrt(.75*.25/128) = 0.03827 */
    CHECKF(fa && fa->self.share == 0.75 && fa->self.se > 0.0382 && fa->self.se < 0.0383, "%f",
           fa ? fa->self.se : -1);
    summary_free(s);
    s = summary_build(p, 2, &why); /* inuse_objects: the events of inuse_space */
    CHECKF(s && s->n_events > 127.9 && s->n_events < 128.1, "%f", s ? s->n_events : -1);
    summary_free(s);
    s = summary_build(p, 0, &why); /* alloc_objects: 128 MiB allocated -> 256 events */
    CHECKF(s && s->n_events > 255.9 && s->n_events < 256.1, "%f", s ? s->n_events : -1);
    summary_free(s);
    profile_free(p);
}

/* --state: the tables count one state's samples, with shares and errors over those;
 * the running/waiting split stays over every sample. */
static void test_states(void)
{
    struct profile *p = build();
    const char *why;
    struct summary *s = summary_build_state(p, 0, PROFILE_RUNNING, &why);
    CHECK(s != NULL);
    if (s) {
        CHECK(s->only_state == PROFILE_RUNNING);
        CHECK(s->total == 8 && s->n_samples == 8 && s->n_samples_all == 10 && s->n_events == 8);
        const struct summary_function *leaf = fn(s, "leaf"), *m = fn(s, "main");
        CHECK(leaf && leaf->self.value == 5 && NEAR(leaf->self.share, 5.0 / 8));
        CHECK(leaf && NEAR(leaf->self.se, sqrt(5.0 / 8 * 3.0 / 8 / 8)));
        /* main's own samples are the waiting ones: no self here, total of all 8. */
        CHECK(m && m->self.value == 0 && m->total.value == 8 && NEAR(m->total.share, 1));
        CHECK(!strcmp(s->functions[0].name, "leaf"));
        CHECK(s->state[PROFILE_RUNNING].value == 8 && s->state[PROFILE_WAITING].value == 2);
        CHECK(NEAR(s->state[PROFILE_WAITING].share, 0.2) &&
              NEAR(s->state[PROFILE_WAITING].se, sqrt(0.2 * 0.8 / 10)));
        CHECK(s->threads[1].share.value == 0 && s->threads[0].share.value == 8);
    }
    summary_free(s);
    s = summary_build_state(p, 0, PROFILE_WAITING, &why);
    CHECK(s && s->total == 2 && s->n_samples == 2 && s->n_functions == 3);
    if (s) {
        CHECK(!strcmp(s->functions[0].name, "main") && NEAR(s->functions[0].self.share, 1));
        CHECK(fn(s, "leaf")->total.value == 0 && fn(s, "fib")->total.value == 0);
        CHECK(NEAR(s->state[PROFILE_RUNNING].share, 0.8));
    }
    summary_free(s);
    /* All states is summary_build. */
    s = summary_build_state(p, 1, SUMMARY_ALL_STATES, &why);
    CHECK(s && s->total == 310 && s->n_samples == 10 && s->n_samples_all == 10);
    summary_free(s);
    CHECK(summary_build_state(p, 0, 2, &why) == NULL && strstr(why, "state"));
    profile_free(p);
}

int main(void)
{
    test_stats();
    test_counts();
    test_states();
    test_overflow();
    test_heap_events();
    return check_exit();
}
