/* The ground-truth suite: rate table, error table, detectability check and blind
 * spots of one profiler against workloads of known shares (truth.h). */
#include "truth/truth.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "truth/burn.h"
#include "truth/measure.h"
#include "analysis/aggregate/stats.h"

extern char **environ;

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --- child processes ------------------------------------------------------------- */

int truth_spawn(char *const argv[], char *const env[], struct truth_child *out, char *why,
                size_t why_size)
{
    memset(out, 0, sizeof *out);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) {
        snprintf(why, why_size, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    double t0 = mono_s();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, why_size, "fork: %s", strerror(errno));
        close(fds[0]), close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        for (size_t i = 0; env && env[i]; i++)
            putenv(env[i]);
        execvp(argv[0], argv);
        fprintf(stderr, "kestrel: %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    /* Keep the workload's report line; let anything else the child prints go. */
    char buf[4096];
    size_t have = 0;
    ssize_t n;
    while ((n = read(fds[0], buf + have, sizeof buf - 1 - have)) > 0 || (n < 0 && errno == EINTR)) {
        if (n < 0) continue;
        have += (size_t)n;
        buf[have] = 0;
        char *line = strstr(buf, "workload ");
        if (line && strchr(line, '\n') && !out->line[0]) {
            size_t len = (size_t)(strchr(line, '\n') - line);
            if (len >= sizeof out->line) len = sizeof out->line - 1;
            memcpy(out->line, line, len);
            out->line[len] = 0;
        }
        if (have == sizeof buf - 1) have = 0;
    }
    close(fds[0]);
    struct rusage ru;
    int status;
    while (wait4(pid, &status, 0, &ru) < 0)
        if (errno != EINTR) {
            snprintf(why, why_size, "wait: %s", strerror(errno));
            return -1;
        }
    out->wall_s = mono_s() - t0;
    out->status = status;
    out->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    if (WIFSIGNALED(status)) {
        snprintf(why, why_size, "%s ended by signal %d", argv[0], WTERMSIG(status));
        return -1;
    }
    if (WEXITSTATUS(status)) {
        snprintf(why, why_size, "%s exited with status %d", argv[0], WEXITSTATUS(status));
        return -1;
    }
    return 0;
}

void truth_workload_argv(const char *exe, const char *name, uint64_t units, char *argv[8],
                         char buf[256])
{
    ssize_t n = exe ? 0 : readlink("/proc/self/exe", buf, 200);
    if (n < 0) n = 0;
    buf[n] = 0;
    char *units_s = buf + n + 1;
    snprintf(units_s, 256 - (size_t)n - 1, "%llu", (unsigned long long)units);
    argv[0] = exe ? (char *)exe : buf;
    argv[1] = "calibrate";
    argv[2] = "--workload";
    argv[3] = (char *)name;
    argv[4] = "--units";
    argv[5] = units_s;
    argv[6] = NULL;
}

/* --- truth by timing --------------------------------------------------------------- */

/* The fastest of `repeats` runs of fn(arg), in ns of this thread's CPU time: the truth
 * is CPU time, which other processes taking the core do not stretch, and what noise
 * is left (caches, interrupts) only ever adds time. */
static double time_min(void (*fn)(uint64_t), uint64_t arg, unsigned repeats)
{
    double best = INFINITY;
    for (unsigned r = 0; r < repeats; r++) {
        uint64_t a = burn_thread_cpu_ns();
        fn(arg);
        double t = (double)(burn_thread_cpu_ns() - a);
        if (t < best) best = t;
    }
    return best;
}

void truth_timed_shares(double ns_per_unit, int full, double timed[WORKLOAD_SHARES_N])
{
    (void)ns_per_unit;
    /* Each function at its part of a round, ten rounds' worth: about 10 ms a time. */
    unsigned repeats = full ? 40 : 12;
    double t[WORKLOAD_SHARES_N], sum = 0;
    for (unsigned i = 0; i < WORKLOAD_SHARES_N; i++) {
        const struct workload_fn *f = &workload_shares[i];
        t[i] = time_min(f->fn, (uint64_t)f->weight * (WORKLOAD_ROUND_UNITS / 10), repeats);
        sum += t[i];
    }
    for (unsigned i = 0; i < WORKLOAD_SHARES_N; i++)
        timed[i] = t[i] / sum;
}

/* The timed share of a against b, each run alone with its argument. */
static double timed_pair(void (*a)(uint64_t), uint64_t arg_a, void (*b)(uint64_t), uint64_t arg_b,
                         unsigned repeats)
{
    double ta = time_min(a, arg_a, repeats), tb = time_min(b, arg_b, repeats);
    return ta / (ta + tb);
}

/* --- options ---------------------------------------------------------------------- */

void truth_opts_default(struct truth_opts *o, int full)
{
    static const unsigned rates[] = {100, 250, 500, 1000, 2000, 5000, 10000, 0};
    memset(o, 0, sizeof *o);
    o->full = full;
    o->dir = "/tmp";
    o->default_hz = 997;
    memcpy(o->rates, rates, sizeof rates);
    o->rate_cpu_s = full ? 1.0 : 0.3;
    o->max_samples = 20000;
    o->error_cpu_max_s = full ? 25 : 3;
    o->blind_cpu_s = full ? 3.0 : 0.8;
}

static uint64_t units_for(double cpu_s, double ns_per_unit)
{
    double u = cpu_s * 1e9 / (ns_per_unit > 0 ? ns_per_unit : 1000);
    return u < WORKLOAD_ROUND_UNITS ? WORKLOAD_ROUND_UNITS : (uint64_t)u;
}

static struct profile *run_workload(const struct truth_profiler *prof, const struct truth_opts *o,
                                    const char *name, uint64_t units, unsigned hz,
                                    struct truth_child *child, char *why, size_t why_size)
{
    char *argv[8], buf[256];
    truth_workload_argv(o->exe, name, units, argv, buf);
    return prof->run(prof, argv, hz, o->dir, child, why, why_size);
}

/* --- the rate table ----------------------------------------------------------------- */

static void run_rates(const struct truth_profiler *prof, const struct truth_opts *o, uint64_t units,
                      struct truth_report *r, FILE *progress)
{
    char *argv[8], buf[256], why[256];
    truth_workload_argv(o->exe, "shares", units, argv, buf);
    /* The unprofiled cost, before and after: the smaller is the workload's own. */
    struct truth_child c;
    double base = INFINITY;
    for (int i = 0; i < 2; i++) {
        if (truth_spawn(argv, NULL, &c, why, sizeof why) == 0 && c.cpu_s < base) base = c.cpu_s;
        if (i == 0)
            for (unsigned k = 0; k < TRUTH_MAX_RATES && o->rates[k]; k++) {
                struct truth_rate *t = &r->rates[r->n_rates++];
                t->requested = o->rates[k];
                if (progress)
                    fprintf(progress, "kestrel: calibrate: %s at %u Hz\n", prof->name,
                            t->requested);
                struct profile *p =
                    prof->run(prof, argv, t->requested, o->dir, &c, why, sizeof why);
                if (!p) {
                    snprintf(t->note, sizeof t->note, "%s", why);
                    continue;
                }
                struct measure_counts mc;
                measure_thread_counts(p, -1, &mc);
                t->samples = mc.running;
                t->overhead = c.cpu_s; /* divided by the baseline below */
                t->ok = 1;
                profile_free(p);
            }
    }
    r->baseline_cpu_s = base;
    for (unsigned k = 0; k < r->n_rates; k++) {
        struct truth_rate *t = &r->rates[k];
        if (!t->ok || !isfinite(base) || base <= 0) {
            t->ok = 0;
            continue;
        }
        t->achieved = (double)t->samples / base;
        t->ratio = t->achieved / t->requested;
        t->overhead = t->overhead / base - 1;
    }
}

/* The highest requested rate that delivers at least 80% of what it asks. */
static unsigned working_rate(const struct truth_report *r, double *achieved)
{
    unsigned best = 0;
    for (unsigned k = 0; k < r->n_rates; k++)
        if (r->rates[k].ok && r->rates[k].ratio >= 0.8 && r->rates[k].requested > best) {
            best = r->rates[k].requested;
            *achieved = r->rates[k].achieved;
        }
    return best;
}

/* --- the error table and the seven functions ------------------------------------------ */

static void shares_of(const struct profile *p, double *self, uint64_t *n)
{
    struct measure_fn fns[WORKLOAD_SHARES_N];
    for (unsigned i = 0; i < WORKLOAD_SHARES_N; i++)
        fns[i].name = workload_shares[i].name;
    struct measure_counts c;
    if (measure_functions(p, -1, 0, fns, WORKLOAD_SHARES_N, &c) < 0) c.running = 0;
    for (unsigned i = 0; i < WORKLOAD_SHARES_N; i++)
        self[i] = c.running ? (double)fns[i].self / (double)c.running : 0;
    *n = c.running;
}

/* The seven functions' shares of the CPU time they had in the run, from the
 * workload's report line (run_ns=a,b,...). 0, or -1 when the line has none. */
static int in_run_shares(const char *line, double shares[WORKLOAD_SHARES_N])
{
    const char *p = strstr(line, " run_ns=");
    if (!p) return -1;
    p += strlen(" run_ns=");
    double sum = 0;
    for (unsigned i = 0; i < WORKLOAD_SHARES_N; i++) {
        char *end;
        shares[i] = strtod(p, &end);
        if (end == p || !(shares[i] > 0) || (i + 1 < WORKLOAD_SHARES_N && *end != ',')) return -1;
        sum += shares[i];
        p = end + 1;
    }
    for (unsigned i = 0; i < WORKLOAD_SHARES_N; i++)
        shares[i] /= sum;
    return 0;
}

/* The error table: for each count n, the run's on-CPU samples in time order cut into
 * disjoint windows of n, each window's shares against the truth. A profiler whose
 * samples carry no times gets one row, the whole run. */
static void add_rows(struct truth_report *r, const struct truth_profiler *prof,
                     const struct profile *p, const double *truth, uint64_t max_samples)
{
    static const uint64_t counts[] = {500, 1000, 2000, 5000, 10000, 20000, 50000, 100000};
    struct measure_fn fns[WORKLOAD_SHARES_N];
    for (unsigned i = 0; i < WORKLOAD_SHARES_N; i++)
        fns[i].name = workload_shares[i].name;
    int *leaf;
    long len = measure_leaf_series(p, -1, fns, WORKLOAD_SHARES_N, &leaf);
    if (len < 0) return;
    for (unsigned k = 0; prof->has_times && k < sizeof counts / sizeof *counts; k++) {
        if (counts[k] > max_samples || counts[k] > (uint64_t)len || r->n_rows >= TRUTH_MAX_ROWS)
            break;
        accuracy_windows(leaf, (size_t)len, truth, WORKLOAD_SHARES_N, counts[k],
                         &r->rows[r->n_rows++]);
    }
    if (len > 0 && (r->n_rows == 0 || (!prof->has_times && r->n_rows < TRUTH_MAX_ROWS)))
        accuracy_windows(leaf, (size_t)len, truth, WORKLOAD_SHARES_N, (uint64_t)len,
                         &r->rows[r->n_rows++]);
    free(leaf);
}

void truth_run_errors(const struct truth_profiler *prof, const struct truth_opts *o,
                      double ns_per_unit, struct truth_report *r, FILE *progress)
{
    double timed[WORKLOAD_SHARES_N];
    r->n_rows = 0;
    r->floor_ok = 0;
    r->verify_samples = 0;
    r->error_note[0] = 0;
    truth_timed_shares(ns_per_unit, o->full, timed);
    r->disagreement = 0;
    r->disagreement_run = -1;
    for (unsigned i = 0; i < WORKLOAD_SHARES_N; i++) {
        struct truth_fn *f = &r->fns[i];
        f->name = workload_shares[i].name;
        f->constructed = workload_shares[i].weight / 100.0;
        f->timed = f->truth = timed[i];
        f->in_run = -1;
        double d = fabs(f->constructed - f->timed);
        if (d > r->disagreement) r->disagreement = d;
    }

    double achieved = 0;
    unsigned hz = o->error_hz ? o->error_hz : working_rate(r, &achieved);
    if (!hz) hz = o->default_hz;
    if (!(achieved > 0)) achieved = hz;
    r->error_hz = hz;
    double cpu_s = 1.15 * (double)o->max_samples / achieved;
    if (cpu_s > o->error_cpu_max_s) cpu_s = o->error_cpu_max_s;
    if (progress)
        fprintf(progress, "kestrel: calibrate: %s error run, %.1f s at %u Hz\n", prof->name, cpu_s,
                hz);
    struct truth_child c;
    char why[256];
    struct profile *p =
        run_workload(prof, o, "shares", units_for(cpu_s, ns_per_unit), hz, &c, why, sizeof why);
    if (!p) {
        snprintf(r->error_note, sizeof r->error_note, "error run failed: %s", why);
        return;
    }
    double self[WORKLOAD_SHARES_N], in_run[WORKLOAD_SHARES_N], truth[WORKLOAD_SHARES_N];
    int have_run = in_run_shares(c.line, in_run) == 0;
    uint64_t n;
    shares_of(p, self, &n);
    r->verify_samples = n;
    r->error_achieved = (double)n / (c.cpu_s > 0 ? c.cpu_s : 1);
    r->disagreement_run = have_run ? 0 : -1;
    for (unsigned i = 0; i < WORKLOAD_SHARES_N; i++) {
        struct truth_fn *f = &r->fns[i];
        f->in_run = have_run ? in_run[i] : -1;
        f->truth = truth[i] = have_run ? in_run[i] : timed[i];
        if (have_run && fabs(in_run[i] - timed[i]) > r->disagreement_run)
            r->disagreement_run = fabs(in_run[i] - timed[i]);
        f->measured = self[i];
        f->se = stats_se(f->truth, (double)n);
        f->z = accuracy_z(f->truth, self[i], (double)n);
        f->clears = stats_detectable(self[i], (double)n);
    }
    add_rows(r, prof, p, truth, o->max_samples);
    r->floor_ok = accuracy_floor(r->rows, r->n_rows, &r->floor) == 0;
    profile_free(p);
}

/* --- blind spots ------------------------------------------------------------------------ */

static void blind_set(struct truth_blind *b, double truth, uint64_t hits, uint64_t n)
{
    b->truth = truth;
    b->samples = n;
    b->measured = n ? (double)hits / (double)n : 0;
    b->se = stats_se(truth, (double)n);
    b->z = accuracy_z(truth, b->measured, (double)n);
    b->within = fabs(b->z) <= 2;
    b->ok = n > 0;
}

/* The caller most of the samples whose leaf is a memset were charged to. */
static const char *memset_caller(const struct profile *p, uint64_t *leaf_samples)
{
    uint64_t *votes = calloc(p->n_frames ? p->n_frames : 1, sizeof *votes);
    *leaf_samples = 0;
    if (!votes) return "?";
    for (size_t i = 0; i < p->n_samples; i++) {
        const struct profile_stack *st = &p->stacks[p->samples[i].stack];
        if (p->samples[i].state != PROFILE_RUNNING || !st->depth) continue;
        if (!strstr(p->frames[st->frames[0]].name, "memset")) continue;
        (*leaf_samples)++;
        if (st->depth > 1) votes[st->frames[1]]++;
    }
    size_t best = 0;
    for (size_t f = 1; f < p->n_frames; f++)
        if (votes[f] > votes[best]) best = f;
    const char *name = votes[best] ? p->frames[best].name : "(none)";
    free(votes);
    return name;
}

double truth_memset_timed(unsigned repeats)
{
    return timed_pair(fill_buffers, WORKLOAD_MEMSET_FILLS, compute_rows, WORKLOAD_MEMSET_COMPUTE,
                      repeats);
}

void truth_blind_memset(const struct truth_profiler *prof, const struct truth_opts *o,
                        double ns_per_unit, unsigned hz, double mtruth, struct truth_blind *b)
{
    struct truth_child c;
    struct measure_counts mc;
    char why[256];
    b->what = "time inside memset";
    b->quantity = "total share of fill_buffers (its callee memset included)";
    b->explain = "libc's memset keeps no frame pointer: a frame-pointer walk from inside it "
                 "skips its caller, so fill_buffers' time is charged to whoever called "
                 "fill_buffers; a DWARF unwinder recovers it";
    struct profile *p = run_workload(prof, o, "memset",
                                     units_for(o->blind_cpu_s * (1 - mtruth), ns_per_unit), hz, &c,
                                     why, sizeof why);
    if (!p) {
        snprintf(b->detail, sizeof b->detail, "%s", why);
        return;
    }
    struct measure_fn f[] = {{"fill_buffers", 0, 0, 0}, {"compute_rows", 0, 0, 0}};
    measure_functions(p, -1, 0, f, 2, &mc);
    blind_set(b, mtruth, f[0].total, mc.running);
    uint64_t leaf;
    const char *caller = memset_caller(p, &leaf);
    snprintf(b->detail, sizeof b->detail,
             "memset is the leaf of %.1f%% of samples, charged to %s; compute_rows %.1f%% "
             "(timed truth %.1f%%)",
             100.0 * (double)leaf / (double)(mc.running ? mc.running : 1), caller,
             100.0 * (double)f[1].total / (double)(mc.running ? mc.running : 1),
             100 * (1 - mtruth));
    profile_free(p);
}

static void run_blind(const struct truth_profiler *prof, const struct truth_opts *o,
                      double ns_per_unit, struct truth_report *r, FILE *progress)
{
    unsigned hz = o->default_hz, reps = o->full ? 40 : 12;
    uint64_t units = units_for(o->blind_cpu_s, ns_per_unit);
    struct truth_child c;
    char why[256];
    struct measure_counts mc;

    /* A worker thread doing half the work. */
    struct truth_blind *b = &r->blind[0];
    b->what = "worker thread";
    b->quantity = "total share of worker_half";
    b->explain = "the runtime samples every registered thread on its own CPU clock; a "
                 "profiler that signals only the process, or only registered threads, "
                 "misses or skews it";
    if (progress)
        fprintf(progress, "kestrel: calibrate: %s blind spots at %u Hz\n", prof->name, hz);
    double wtruth =
        timed_pair(worker_half, WORKLOAD_ROUND_UNITS, main_half, WORKLOAD_ROUND_UNITS, reps);
    struct profile *p = run_workload(prof, o, "worker", units, hz, &c, why, sizeof why);
    if (p) {
        struct measure_fn f[] = {{"worker_half", 0, 0, 0}, {"main_half", 0, 0, 0}};
        measure_functions(p, -1, 0, f, 2, &mc);
        /* Scored against the construction (the same loop, the same units: 50%); the
         * timed split is shown beside it. */
        blind_set(b, 0.5, f[0].total, mc.running);
        int t = measure_thread(p, "worker");
        struct measure_counts tc = {0, 0};
        if (t >= 0) measure_thread_counts(p, t, &tc);
        snprintf(b->detail, sizeof b->detail,
                 "main_half %.1f%%, worker_half %.1f%% (timed truth %.1f%%); thread \"worker\" %s",
                 100.0 * (double)f[1].total / (double)(mc.running ? mc.running : 1),
                 100 * b->measured, 100 * wtruth,
                 !prof->has_threads ? "not told apart by this profiler"
                 : t < 0            ? "absent from the profile"
                                    : "present");
        profile_free(p);
    } else
        snprintf(b->detail, sizeof b->detail, "%s", why);

    /* Time inside libc's memset, which has no frame pointer. */
    truth_blind_memset(prof, o, ns_per_unit, hz, truth_memset_timed(reps * 4), &r->blind[1]);

    /* More busy threads than cores. */
    b = &r->blind[2];
    b->what = "more threads than cores";
    b->quantity = "share of each thread (the worst one shown)";
    b->explain = "each thread is sampled on its own CPU time, so waiting for a core costs it "
                 "no samples; a wall-clock sampler would charge it the time it waited";
    unsigned nthr = workload_oversub_threads();
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    p = run_workload(prof, o, "oversub", units, hz, &c, why, sizeof why);
    if (p) {
        struct measure_fn f[WORKLOAD_OVERSUB_MAX];
        static const char *names[] = {"oversub0", "oversub1", "oversub2", "oversub3",
                                      "oversub4", "oversub5", "oversub6", "oversub7"};
        for (unsigned i = 0; i < nthr; i++)
            f[i].name = names[i];
        measure_functions(p, -1, 0, f, nthr, &mc);
        unsigned worst = 0, within = 0;
        double worst_z = -1;
        for (unsigned i = 0; i < nthr; i++) {
            double z = fabs(accuracy_z(1.0 / nthr,
                                       (double)f[i].self / (double)(mc.running ? mc.running : 1),
                                       (double)mc.running));
            if (z <= 2) within++;
            if (z > worst_z) worst_z = z, worst = i;
        }
        blind_set(b, 1.0 / nthr, f[worst].self, mc.running);
        b->within = within == nthr;
        snprintf(b->detail, sizeof b->detail,
                 "%u threads on %ld cores; %u of %u within 2 SE of %.1f%%; worst %s %.1f%%", nthr,
                 cores, within, nthr, 100.0 / nthr, names[worst], 100 * b->measured);
        profile_free(p);
    } else
        snprintf(b->detail, sizeof b->detail, "%s", why);

    /* A function that sleeps half its wall time: CPU share, then wall share. */
    struct truth_blind *bc = &r->blind[3], *bw = &r->blind[4];
    bc->what = "sleeping function, CPU";
    bc->quantity = "on-CPU share of napper";
    bc->explain = "on-CPU samples follow CPU time: napper burns as much as busy_half, so "
                  "half, whatever it sleeps";
    bw->what = "sleeping function, wall";
    bw->quantity = "share of napper in all samples, waiting included";
    bw->explain = "a waiting thread gets waiting samples with its blocked stack at the wall "
                  "rate; a CPU-time profiler has none and cannot show where it waited";
    double ctruth = timed_pair(napper_burn, 2 * WORKLOAD_ROUND_UNITS, busy_half,
                               2 * WORKLOAD_ROUND_UNITS, reps);
    p = run_workload(prof, o, "sleeper", units, hz, &c, why, sizeof why);
    if (p) {
        struct measure_fn f[] = {{"napper", 0, 0, 0}, {"busy_half", 0, 0, 0}};
        measure_functions(p, -1, 0, f, 2, &mc);
        blind_set(bc, 0.5, f[0].total, mc.running);
        snprintf(bc->detail, sizeof bc->detail,
                 "busy_half %.1f%%; timed alone, napper's burning is %.1f%% of the CPU",
                 100.0 * (double)f[1].total / (double)(mc.running ? mc.running : 1), 100 * ctruth);
        const char *nw = strstr(c.line, "napper_wall_ns="), *w = strstr(c.line, " wall_ns=");
        double wtruth_s = nw && w ? strtod(nw + 15, NULL) / strtod(w + 9, NULL) : NAN;
        blind_set(bw, wtruth_s, f[0].total + f[0].waiting, mc.running + mc.waiting);
        if (!prof->has_states || mc.waiting == 0) {
            bw->ok = prof->has_states ? 1 : 0;
            snprintf(bw->detail, sizeof bw->detail,
                     "no waiting samples: the time asleep is invisible");
        } else
            snprintf(bw->detail, sizeof bw->detail,
                     "%llu waiting samples, %.1f%% of them inside napper (the rest: "
                     "other threads' waits); napper's wall share by its own clock %.1f%%",
                     (unsigned long long)mc.waiting,
                     100.0 * (double)f[0].waiting / (double)mc.waiting, 100 * wtruth_s);
        profile_free(p);
    } else {
        snprintf(bc->detail, sizeof bc->detail, "%s", why);
        snprintf(bw->detail, sizeof bw->detail, "%s", why);
    }
}

int truth_run_all(const struct truth_profiler *prof, const struct truth_opts *o,
                  const struct calib_result *calib, struct truth_report *r, FILE *progress)
{
    double t0 = mono_s();
    memset(r, 0, sizeof *r);
    r->profiler = prof->name;
    r->calib = *calib;
    double npu = calib->ns_per_unit > 0 ? calib->ns_per_unit : 1000;
    run_rates(prof, o, units_for(o->rate_cpu_s, npu), r, progress);
    double a1000 = 0;
    for (unsigned k = 0; k < r->n_rates; k++)
        if (r->rates[k].ok && r->rates[k].requested == 1000) a1000 = r->rates[k].achieved;
    r->detect_rate = a1000;
    truth_run_errors(prof, o, npu, r, progress);
    run_blind(prof, o, npu, r, progress);
    r->seconds = mono_s() - t0;
    return 0;
}
