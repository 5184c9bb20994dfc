/* kestrel_analysis.h — reading a CPU profile kestrel recorded: the functions that
 * hold the time, each share with its standard error, and the folded stacks.
 *
 * A share without its standard error is an opinion: share p of n samples is a
 * binomial proportion with standard error sqrt(p(1-p)/n), and it is told apart from
 * noise (two standard errors) once n >= 4(1-p)/p.
 *
 *     kestrel_profile_start(997);              // kestrel.h: the region starts
 *     work();
 *     kestrel_analysis *a = kestrel_analysis_stop(err, sizeof err);
 *     struct kestrel_share top[10];
 *     size_t n = kestrel_analysis_top(a, top, 10);
 *     printf("%s %.1f%% ± %.1f\n", top[0].name, 100 * top[0].self, 100 * top[0].self_se);
 *     kestrel_analysis_free(a);
 *
 * Link with -lkestrel-analysis -lkestrel (pkg-config kestrel-analysis); it needs
 * elfutils' libdw to name functions. Not thread-safe per object; objects are
 * independent. */
#ifndef KESTREL_ANALYSIS_H
#define KESTREL_ANALYSIS_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kestrel_analysis kestrel_analysis;

/* One function's part of the on-CPU samples. */
struct kestrel_share {
    const char *name;      /* valid until kestrel_analysis_free */
    double self;           /* samples with it as the leaf / all on-CPU samples */
    double self_se;        /* standard error of self */
    double total;          /* samples with it anywhere on the stack (recursion once) */
    double total_se;       /* standard error of total */
    uint64_t self_samples; /* the counts behind the shares */
    uint64_t total_samples;
};

/* Reads a profile file (kestrel's raw JSON or a pprof) and resolves its function
 * names. NULL on failure, with a one-line reason in why. */
kestrel_analysis *kestrel_analysis_load(const char *path, char *why, size_t why_size);

/* Ends the region started by kestrel_profile_start() (kestrel.h) and returns its
 * profile. NULL on failure (no region running, the runtime not linked), with why. */
kestrel_analysis *kestrel_analysis_stop(char *why, size_t why_size);

void kestrel_analysis_free(kestrel_analysis *a);

/* On-CPU samples in the profile: the n of every standard error. */
uint64_t kestrel_analysis_samples(const kestrel_analysis *a);

/* The n functions with the most self time, most first; returns how many were
 * written (fewer when the profile has fewer functions). */
size_t kestrel_analysis_top(const kestrel_analysis *a, struct kestrel_share *out, size_t n);

/* Self share, total (cumulative) share, and the standard error of the self share of
 * the function called `name` (every function of that name counted together); 0 when
 * the profile never saw it. */
double kestrel_analysis_share(const kestrel_analysis *a, const char *name);
double kestrel_analysis_cum_share(const kestrel_analysis *a, const char *name);
double kestrel_analysis_stderr_of(const kestrel_analysis *a, const char *name);

/* The folded stacks of the on-CPU samples (`thread;root;...;leaf COUNT` lines), as
 * kestrel export --format folded writes them: the counts add up to
 * kestrel_analysis_samples(). malloc'd; the caller frees. NULL when memory runs out. */
char *kestrel_analysis_folded(const kestrel_analysis *a);

#ifdef __cplusplus
}
#endif
#endif
