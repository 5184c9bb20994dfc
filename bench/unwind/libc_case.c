/* libc_case [ROUNDS] — the libc case of issue 15, side by side in one run: the share
 * of fill_buffers, a function whose time is mostly inside libc's memset (Debian's libc
 * keeps no frame pointer), as kestrel gives it (perf and signal engines, fp and cfi
 * unwinding) beside perf record -g, perf record --call-graph dwarf and gperftools, at
 * 997 and 4999 Hz, against the share timed with each half alone. A round runs every
 * profiler once at each rate, in an order rotated from round to round; the figures are
 * medians over the rounds. Prints a Markdown section (the `### The libc case` part of
 * BENCHMARKS.md's `## Stack unwinding`).
 *
 * Run from the repository root (the workload is `build/bin/kestrel calibrate
 * --workload memset`). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "truth/calib.h"
#include "truth/peers.h"
#include "truth/truth.h"

#define MAX_ROUNDS 15
#define NRATES 2

static const unsigned rates[NRATES] = {997, 4999};

struct config {
    const char *name;
    const struct truth_profiler *prof;
    const char *engine, *unwind; /* kestrel's KESTREL_PROFILE_ENGINE / _UNWIND */
    double share[NRATES][MAX_ROUNDS], z[NRATES][MAX_ROUNDS];
    unsigned long samples[NRATES][MAX_ROUNDS];
    int n[NRATES], within[NRATES];
    char detail[NRATES][256];
};

static struct config configs[] = {
    {.name = "kestrel perf engine, cfi", .prof = &truth_kestrel, .engine = "perf", .unwind = "cfi"},
    {.name = "kestrel perf engine, fp", .prof = &truth_kestrel, .engine = "perf", .unwind = "fp"},
    {.name = "kestrel signal engine, cfi", .prof = &truth_kestrel, .engine = "signal",
     .unwind = "cfi"},
    {.name = "kestrel signal engine, fp", .prof = &truth_kestrel, .engine = "signal",
     .unwind = "fp"},
    {.name = "perf record -g", .prof = &peer_perf_fp},
    {.name = "perf record --call-graph dwarf", .prof = &peer_perf_dwarf},
    {.name = "gperftools (libunwind)", .prof = &peer_gperftools},
};
#define NCONF (sizeof configs / sizeof configs[0])

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
    double s[MAX_ROUNDS];
    memcpy(s, v, (size_t)n * sizeof *v);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n ? (n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2) : NAN;
}

static void run_one(struct config *c, unsigned r, const struct truth_opts *o, double ns_per_unit,
                    double truth, int round)
{
    if (c->engine) {
        setenv("KESTREL_PROFILE_ENGINE", c->engine, 1);
        setenv("KESTREL_PROFILE_UNWIND", c->unwind, 1);
    }
    struct truth_blind b = {0};
    truth_blind_memset(c->prof, o, ns_per_unit, rates[r], truth, &b);
    unsetenv("KESTREL_PROFILE_ENGINE");
    unsetenv("KESTREL_PROFILE_UNWIND");
    fprintf(stderr, "libc_case: round %d, %s at %u Hz: %s\n", round + 1, c->name, rates[r],
            b.ok ? b.detail : b.detail[0] ? b.detail : "no profile");
    if (!b.ok) return;
    int k = c->n[r]++;
    c->share[r][k] = b.measured;
    c->z[r][k] = b.z;
    c->samples[r][k] = (unsigned long)b.samples;
    c->within[r] += fabs(b.z) <= 2;
    snprintf(c->detail[r], sizeof c->detail[r], "%s", b.detail);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    if (rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "usage: %s [ROUNDS (1..%d)]\n", argv[0], MAX_ROUNDS);
        return 2;
    }
    struct calib_env env;
    calib_env_host(&env);
    struct calib_opts co = {8, 1000, 10000, 15};
    struct calib_result calib;
    if (calib_run(&env, &co, &calib) < 0) return 1;
    char dir[] = "/tmp/kestrel-libc-case-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    struct truth_opts o;
    truth_opts_default(&o, 1);
    o.dir = dir;
    o.exe = "build/bin/kestrel";
    char t0[32], t1[32];
    time_t now = time(NULL);
    strftime(t0, sizeof t0, "%Y-%m-%d %H:%M", gmtime(&now));
    double truths[MAX_ROUNDS];
    for (int round = 0; round < rounds; round++) {
        /* The truth is timed again each round, so that it sees the machine's state of
         * the moment as the runs beside it do. */
        double truth = truths[round] = truth_memset_timed(40);
        for (size_t i = 0; i < NCONF; i++) {
            struct config *c = &configs[(i + (size_t)round) % NCONF];
            for (unsigned r = 0; r < NRATES; r++) run_one(c, r, &o, calib.ns_per_unit, truth, round);
        }
    }
    rmdir(dir);
    now = time(NULL);
    strftime(t1, sizeof t1, "%H:%M", gmtime(&now));
    double tmin = truths[0], tmax = truths[0];
    for (int k = 1; k < rounds; k++) {
        tmin = fmin(tmin, truths[k]);
        tmax = fmax(tmax, truths[k]);
    }
    double load[3] = {NAN, NAN, NAN};
    if (getloadavg(load, 3) < 0) load[0] = NAN;
    printf("### The libc case\n\n");
    printf("`build/bench/unwind/libc_case %d`: fill_buffers, whose time is mostly inside "
           "libc's memset (no frame pointer), under each profiler at 997 and 4999 Hz; %d "
           "round%s, every profiler once a round at each rate in a rotated order; medians over "
           "the rounds. Truth: the share timed with each half alone, median %.1f%% "
           "(min..max %.1f..%.1f%%). %s–%s UTC, load average at the end %.2f (1-minute), %ld "
           "CPUs.\n\n",
           rounds, rounds, rounds == 1 ? "" : "s", 100 * median(truths, rounds), 100 * tmin, 100 * tmax,
           t0, t1, load[0], sysconf(_SC_NPROCESSORS_ONLN));
    printf("| profiler | share at 997 Hz | SE from truth | rounds within 2 SE | share at 4999 Hz "
           "| SE from truth | rounds within 2 SE |\n|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < NCONF; i++) {
        struct config *c = &configs[i];
        printf("| %s |", c->name);
        for (unsigned r = 0; r < NRATES; r++) {
            if (!c->n[r]) {
                printf(" n/a | | |");
                continue;
            }
            printf(" %.1f%% | %+.1f | %d of %d |", 100 * median(c->share[r], c->n[r]),
                   median(c->z[r], c->n[r]), c->within[r], c->n[r]);
        }
        printf("\n");
    }
    printf("\nLast run's details at 997 Hz:\n\n");
    for (size_t i = 0; i < NCONF; i++)
        if (configs[i].n[0]) printf("- %s: %s\n", configs[i].name, configs[i].detail[0]);
    return 0;
}
