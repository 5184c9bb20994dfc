/* The ground-truth suite (DESIGN.md §4): runs the workloads of workloads.h in child
 * processes under a profiler, reads back what the profiler says, and sets it beside
 * the truth. `kestrel calibrate` runs it with kestrel; the accuracy benchmark runs the
 * same suite with the peers (perf, gperftools) through the same interface.
 *
 * Truth comes two ways: by construction (a function doing n_i units holds
 * n_i / Σn) and by timing each function alone in this process (truth_timed_*); the
 * suite reports their disagreement and scores against the timed truth. */
#ifndef KESTREL_TRUTH_H
#define KESTREL_TRUTH_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "truth/accuracy.h"
#include "truth/calib.h"
#include "analysis/model/profile.h"
#include "truth/workloads.h"

/* What one workload process cost and said about itself. */
struct truth_child {
    double cpu_s;   /* user + system CPU of the child and everything it waited for */
    double wall_s;  /* from start to exit */
    int status;     /* wait status */
    char line[512]; /* the workload's report line ("workload NAME key=value...") */
};

/* Runs argv with `env` (NULL-terminated "K=V" strings) added to the environment;
 * collects what truth_child describes. Returns 0 when it exited with status 0, else
 * -1 with a reason in why. */
int truth_spawn(char *const argv[], char *const env[], struct truth_child *out, char *why,
                size_t why_size);

/* The argv that runs workload `name` for `units` units: `EXE calibrate --workload
 * NAME --units N`, EXE the kestrel binary (NULL: this process's own). Points into
 * `buf` and `exe`. */
void truth_workload_argv(const char *exe, const char *name, uint64_t units, char *argv_out[8],
                         char buf[256]);

/* A profiler the suite can score. */
struct truth_profiler {
    const char *name; /* as shown in the tables: "kestrel", "perf -g", ... */
    /* Runs the workload command argv under this profiler at `hz`, with scratch files
     * under `dir`, and returns the profile in the model with function names
     * resolved, or NULL with why. Fills `child`. */
    struct profile *(*run)(const struct truth_profiler *self, char *const argv[], unsigned hz,
                           const char *dir, struct truth_child *child, char *why, size_t why_size);
    int has_threads; /* 1 when the profile tells threads apart */
    int has_states;  /* 1 when it has waiting samples */
    int has_times;   /* 1 when samples carry times (prefixes are possible) */
    void *ctx;
};

/* kestrel itself: LD_PRELOAD of the runtime next to the binary, raw JSON, libdw. */
extern const struct truth_profiler truth_kestrel;

/* --- options and results -------------------------------------------------------- */

#define TRUTH_MAX_RATES 8
#define TRUTH_MAX_ROWS 8

struct truth_opts {
    int full;                        /* 0: quick (under 20 s), 1: full */
    const char *dir;                 /* scratch directory for profiles */
    const char *exe;                 /* the kestrel binary that runs workloads; NULL: this one */
    unsigned default_hz;             /* the rate of the blind spots: 997 */
    unsigned rates[TRUTH_MAX_RATES]; /* the rate table's requested rates, 0-terminated */
    double rate_cpu_s;               /* CPU seconds of work per rate */
    uint64_t max_samples;            /* the error table's largest sample count */
    double error_cpu_max_s;          /* cap on the error run's CPU seconds */
    double blind_cpu_s;              /* CPU seconds of each blind-spot workload */
    unsigned error_hz;               /* the error run's rate; 0: the highest working rate */
};

void truth_opts_default(struct truth_opts *o, int full);

struct truth_rate {
    unsigned requested;
    double achieved; /* on-CPU samples per CPU second of the workload */
    double ratio;    /* achieved / requested */
    double overhead; /* CPU of the profiled run / CPU unprofiled - 1 */
    uint64_t samples;
    int ok; /* 0: the run failed (why in note) */
    char note[256];
};

struct truth_fn {
    const char *name;
    double constructed; /* n_i / Σn; <0 when not constructed (memset) */
    double timed;       /* t_i / Σt from timing it alone */
    double in_run;      /* t_i / Σt timed in the sampled run itself; <0 when unknown */
    double truth;       /* what the measurement is scored against: in_run, else timed */
    double measured;    /* its share in the profile */
    double se;          /* standard error of the measurement, from the truth */
    double z;           /* (measured - truth) / se */
    int clears;         /* the measured share clears two standard errors */
};

struct truth_blind {
    const char *what;     /* "worker thread", ... */
    const char *quantity; /* what is compared, e.g. "share of worker_half" */
    double truth, measured, se, z;
    int within; /* |z| <= 2 */
    uint64_t samples;
    char detail[256];    /* truth beside measurement beyond the one number */
    const char *explain; /* why it comes out as it does */
    int ok;              /* 0: not measured (why in detail) */
};

#define TRUTH_NBLIND 5

struct truth_report {
    const char *profiler;
    struct calib_result calib;
    unsigned n_rates;
    struct truth_rate rates[TRUTH_MAX_RATES];
    double baseline_cpu_s; /* unprofiled CPU of the rate workload */
    unsigned error_hz;     /* rate the error run asked for */
    double error_achieved;
    unsigned n_rows;
    struct accuracy_point rows[TRUTH_MAX_ROWS];
    struct accuracy_floor floor;
    int floor_ok;
    struct truth_fn fns[WORKLOAD_SHARES_N];
    uint64_t verify_samples; /* samples of the verification (the whole error run) */
    double disagreement;     /* max |constructed - timed| over the seven */
    double disagreement_run; /* max |in_run - timed|; <0 when in_run is unknown */
    double detect_rate;      /* achieved rate the detectability table uses */
    struct truth_blind blind[TRUTH_NBLIND];
    double seconds;       /* wall time of the whole suite */
    char error_note[300]; /* why the error run is missing, if it is */
};

/* Runs everything with profiler `prof`. `calib` is this host's calibration (taken
 * before). Progress lines go to `progress` when not NULL. Returns 0, or -1 when
 * nothing could be measured (why). Parts that failed say so in their notes. */
int truth_run_all(const struct truth_profiler *prof, const struct truth_opts *o,
                  const struct calib_result *calib, struct truth_report *r, FILE *progress);

/* The error table and the seven functions alone, at o->error_hz (0: the highest
 * rate of r's rate table that delivers 80% of what it asks). */
void truth_run_errors(const struct truth_profiler *prof, const struct truth_opts *o,
                      double ns_per_unit, struct truth_report *r, FILE *progress);

/* The libc case alone: the share of fill_buffers, whose time is mostly inside libc's
 * memset (no frame pointer), profiled by prof at hz, against mtruth, its timed share
 * (truth_memset_timed: each half alone, min over repeats). */
double truth_memset_timed(unsigned repeats);
void truth_blind_memset(const struct truth_profiler *prof, const struct truth_opts *o,
                        double ns_per_unit, unsigned hz, double mtruth, struct truth_blind *b);

/* The truth by timing: the seven functions of `shares` alone, min over repeats. */
void truth_timed_shares(double ns_per_unit, int full, double timed[WORKLOAD_SHARES_N]);

#endif
