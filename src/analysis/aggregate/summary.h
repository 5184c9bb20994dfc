/* Aggregation of a profile for one sample type: self and total per function and per
 * source line, per thread, per state, each share with its standard error. Every
 * writer and the terminal report read these numbers instead of deriving their own.
 *
 * Definitions (DESIGN.md §2):
 * - A sample's value is its value of the chosen type (1 per sample for "samples",
 *   nanoseconds for "cpu", bytes for "inuse_space"...).
 * - self(f): the value of samples whose leaf frame is f (after inline expansion the
 *   leaf is the innermost inlined function). total(f): the value of samples with f
 *   anywhere on the stack, counted once per sample however often f recurses.
 * - Functions are told apart by (name, file, image); lines by (function, line).
 * - share = value / summary.total; its standard error is stats_se(share, n) with n
 *   the number of sampling events behind the total (summary.n_events), and
 *   `significant` says it clears two standard errors (stats_detectable).
 * - A CPU sample is one event. A heap pprof sample merges every allocation sampled
 *   at one stack, each standing for about `period` bytes (byte-interval sampling),
 *   so a heap type's events are its matching *_space total over the period; an
 *   *_objects type has the events of its *_space twin. Counting merged samples
 *   instead would call 100 MiB from one stack "one sample". */
#ifndef KESTREL_SUMMARY_H
#define KESTREL_SUMMARY_H
#include <stddef.h>
#include <stdint.h>

#include "analysis/model/profile.h"

struct summary_share {
    int64_t value;   /* in the sample type's unit */
    uint64_t n;      /* samples that contributed */
    double share;    /* value / summary.total; 0 when total is 0 */
    double se;       /* its standard error over summary.n_events */
    int significant; /* 1 when it clears two standard errors */
};

struct summary_function {
    const char *name; /* the profile's string; never NULL */
    const char *file; /* NULL when unknown */
    int32_t line;     /* the line holding most of its self (else total) value; 0 unknown */
    int32_t image;    /* index into profile.images, -1 when none */
    struct summary_share self, total;
};

struct summary_line {
    uint32_t function; /* index into summary.functions */
    const char *file;  /* NULL when unknown */
    int32_t line;      /* 0 when unknown */
    struct summary_share self, total;
};

struct summary_thread {
    int64_t value[PROFILE_NSTATES]; /* per state */
    uint64_t n[PROFILE_NSTATES];
    struct summary_share share; /* this thread's part of the whole */
};

/* How whole the counted samples' stacks are. A stack whose walk was cut short sits
 * under PROFILE_INCOMPLETE_FRAME (its outermost frame); the image its walk ended in is
 * that of the frame right before it. Shares of the total, as every share here. */
#define SUMMARY_WALK_ENDS 4
struct summary_walk_end {
    int32_t image;              /* index into profile.images; -1: no image (hex) */
    struct summary_share share; /* samples whose walk ended there, cut */
};
struct summary_walks {
    int known;                /* the profile says how its walks ended (meta.ends_known) */
    struct summary_share cut; /* samples with an incomplete stack */
    struct summary_share guessed; /* samples given a guessed stack (PROFILE_GUESSED_FRAME) */
    struct summary_walk_end ends[SUMMARY_WALK_ENDS]; /* most first */
    size_t n_ends;
};

/* Which samples the tables count: every one, or one state's (`kestrel report
 * --state`). */
#define SUMMARY_ALL_STATES (-1)

struct summary {
    const struct profile *profile;
    size_t type;        /* the sample type aggregated */
    int only_state;     /* SUMMARY_ALL_STATES or the enum profile_state counted */
    int64_t total;      /* sum of the counted samples' values */
    uint64_t n_samples; /* counted samples with a nonzero value */
    double n_events;    /* sampling events behind the total: the n of every SE */
    /* The running/waiting split of every sample, whatever only_state is: shares of
     * all samples' total, SEs over all samples' events. */
    struct summary_share state[PROFILE_NSTATES];
    uint64_t n_samples_all; /* samples of any state with a nonzero value */

    struct summary_function *functions; /* by self descending, then total, then name */
    size_t n_functions;
    uint32_t *function_of_frame; /* profile frame index -> functions index */
    struct summary_line *lines;  /* by self descending, then total */
    size_t n_lines;
    struct summary_thread *threads; /* one per profile thread, same order */
    struct summary_walks walks;
};

/* Aggregates p for sample type `type`. NULL when memory runs out or a total would
 * overflow 64 bits (bad input): *why says which. */
struct summary *summary_build(const struct profile *p, size_t type, const char **why);
/* The same over the samples of one state only (or SUMMARY_ALL_STATES): functions,
 * lines, threads, the total and the standard errors are of those samples. */
struct summary *summary_build_state(const struct profile *p, size_t type, int state,
                                    const char **why);
void summary_free(struct summary *s);
#endif
