/* The accuracy benchmark: the ground-truth suite (truth.h) run with kestrel and its
 * peers side by side in one run — perf record -g (frame pointers), perf record
 * --call-graph dwarf, gperftools' libprofiler — at 997 Hz and at each one's highest
 * working rate, with the goals table. Writes the `## Ground truth` section of
 * BENCHMARKS.md (or prints it with --stdout).
 *
 *   build/bench/truth [--quick] [--stdout] [--only NAME]  */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "truth/calib.h"
#include "truth/truth.h"
#include "truth/peers.h"

#define NPROF 5

struct entry {
    const struct truth_profiler *prof;
    struct truth_report r;   /* rates, error run at 997 Hz, blind spots */
    struct truth_report top; /* error run at the highest working rate */
    int skipped;
};

static struct entry entries[NPROF];

static void cell_share(FILE *o, const struct truth_blind *b)
{
    if (!b->ok) {
        fprintf(o, " n/a |");
        return;
    }
    fprintf(o, " %.1f%% ± %.1f (%+.1f SE)%s |", 100 * b->measured, 100 * b->se, b->z,
            b->within        ? ""
            : fabs(b->z) > 4 ? " **wrong**"
                             : " off");
}

static double max_ratio(const struct truth_report *r)
{
    double m = 0;
    for (unsigned k = 0; k < r->n_rows; k++)
        if (r->rows[k].ratio > m) m = r->rows[k].ratio;
    return m;
}

static void write_section(FILE *o, const struct calib_result *c, const char *cmd, int full)
{
    /* The first profiler that ran gives the rows (rates, blind spots) every column shares. */
    const struct truth_report *ref = NULL;
    for (int i = NPROF - 1; i >= 0; i--)
        if (!entries[i].skipped) ref = &entries[i].r;
    if (!ref) return;
    double load[3] = {0};
    if (getloadavg(load, 3) < 0) load[0] = NAN;
    fprintf(o, "## Ground truth\n\n");
    fprintf(o,
            "`%s` (%s; %ld cores; load average %.2f at the end of the run). One run, "
            "every profiler on the same workloads in turn; figures move from run to run "
            "by their standard errors.\n\n",
            cmd, full ? "full" : "quick", sysconf(_SC_NPROCESSORS_ONLN), load[0]);
    fprintf(o,
            "Calibration: burn() %.1f ns per unit, R² %.6f, worst residual %.2f%%, other "
            "processes %.2f cores; verdict %s (%s).\n\n",
            c->ns_per_unit, c->r2, 100 * c->worst_residual, c->others_cores,
            c->fit ? "fit" : "UNFIT", c->reason);

    fprintf(o,
            "### Rate: achieved Hz (ratio, CPU overhead)\n\nAchieved: on-CPU samples per "
            "CPU second of the unprofiled workload (%.2f s). Overhead: CPU of the profiled "
            "run, the profiler's own process included (perf record's start-up and writing), "
            "over the unprofiled run's.\n\n| requested |",
            ref->baseline_cpu_s);
    for (int i = 0; i < NPROF; i++)
        if (!entries[i].skipped) fprintf(o, " %s |", entries[i].prof->name);
    fprintf(o, "\n|---|");
    for (int i = 0; i < NPROF; i++)
        if (!entries[i].skipped) fprintf(o, "---|");
    fputc('\n', o);
    for (unsigned k = 0; k < ref->n_rates; k++) {
        fprintf(o, "| %u Hz |", ref->rates[k].requested);
        for (int i = 0; i < NPROF; i++) {
            if (entries[i].skipped) continue;
            const struct truth_rate *t = &entries[i].r.rates[k];
            if (t->ok)
                fprintf(o, " %.0f (%.2f, %+.1f%%) |", t->achieved, t->ratio, 100 * t->overhead);
            else
                fprintf(o, " failed |");
        }
        fputc('\n', o);
    }

    fprintf(o, "\n### Error of the seven shares against the truth timed in the run (MAE / binomial)\n\n");
    for (int i = 0; i < NPROF; i++) {
        if (entries[i].skipped) continue;
        for (int t = 0; t < 2; t++) {
            const struct truth_report *r = t ? &entries[i].top : &entries[i].r;
            if (t && r->error_hz == entries[i].r.error_hz) continue;
            fprintf(o, "- **%s** at %u Hz (%.0f Hz achieved):", entries[i].prof->name, r->error_hz,
                    r->error_achieved);
            if (r->error_note[0]) {
                fprintf(o, " %s\n", r->error_note);
                continue;
            }
            for (unsigned k = 0; k < r->n_rows; k++)
                fprintf(o, " %llu (x%u): %.4f / %.4f = %.2fx;",
                        (unsigned long long)r->rows[k].samples, r->rows[k].windows,
                        r->rows[k].mae, r->rows[k].binomial, r->rows[k].ratio);
            if (r->floor_ok)
                fprintf(o, " floor %.4f%s\n", r->floor.floor, r->floor.seen ? " (seen)" : "");
            else
                fputc('\n', o);
        }
    }

    fprintf(o, "\n### Blind spots at 997 Hz: truth beside measurement\n\n| | truth |");
    for (int i = 0; i < NPROF; i++)
        if (!entries[i].skipped) fprintf(o, " %s |", entries[i].prof->name);
    fprintf(o, "\n|---|---|");
    for (int i = 0; i < NPROF; i++)
        if (!entries[i].skipped) fprintf(o, "---|");
    fputc('\n', o);
    for (unsigned b = 0; b < TRUTH_NBLIND; b++) {
        /* Truth is measured in every profiler's run (timing, the sleeper's own clock):
         * the first run that measured it gives the column. */
        const struct truth_blind *kb = &ref->blind[b];
        for (int i = NPROF - 1; i >= 0; i--)
            if (!entries[i].skipped && entries[i].r.blind[b].ok) kb = &entries[i].r.blind[b];
        fprintf(o, "| %s: %s | %.1f%% |", kb->what, kb->quantity, 100 * kb->truth);
        for (int i = 0; i < NPROF; i++)
            if (!entries[i].skipped) cell_share(o, &entries[i].r.blind[b]);
        fputc('\n', o);
    }
    fprintf(o, "\n\"wrong\": more than 4 standard errors from the truth; \"off\": between 2 "
               "and 4.\n");

    fprintf(o, "\n### Goals (issue 5)\n\n| goal |");
    for (int i = 0; i < NPROF; i++)
        if (!entries[i].skipped) fprintf(o, " %s |", entries[i].prof->name);
    fprintf(o, "\n|---|");
    for (int i = 0; i < NPROF; i++)
        if (!entries[i].skipped) fprintf(o, "---|");
    fprintf(o, "\n| MAE within 1.2x binomial at every count (997 Hz / top rate) |");
    for (int i = 0; i < NPROF; i++)
        if (!entries[i].skipped)
            fprintf(o, !entries[i].r.n_rows ? " not measured |" : " %.2fx / %.2fx |",
                    max_ratio(&entries[i].r), max_ratio(&entries[i].top));
    fprintf(o, "\n| floor below 0.001 (997 Hz) |");
    for (int i = 0; i < NPROF; i++)
        if (entries[i].skipped)
            continue;
        else if (!entries[i].r.n_rows || !entries[i].r.floor_ok)
            fprintf(o, " not measured |");
        else
            fprintf(o, " %.4f%s |", entries[i].r.floor.floor,
                    entries[i].r.floor.floor < 0.001 ? " yes" : " no");
    static const char *goal[] = {"worker thread within 2 SE of 50%", "memset caller's total share",
                                 "oversubscribed: every thread within 2 SE",
                                 "sleeping function's CPU share",
                                 "its waiting samples (wall share)"};
    for (unsigned b = 0; b < TRUTH_NBLIND; b++) {
        fprintf(o, "\n| %s |", goal[b]);
        for (int i = 0; i < NPROF; i++)
            if (!entries[i].skipped) {
                const struct truth_blind *x = &entries[i].r.blind[b];
                fprintf(o, " %s |", !x->ok ? "not measured" : x->within ? "yes" : "no");
            }
    }
    fprintf(o, "\n\nWhy each blind spot comes out as it does:\n\n");
    for (unsigned b = 0; b < TRUTH_NBLIND; b++)
        fprintf(o, "- %s: %s.\n", ref->blind[b].what, ref->blind[b].explain);
    fputc('\n', o);
}

/* Replaces (or appends) the `## Ground truth` section of BENCHMARKS.md. */
static int update_benchmarks(const char *section)
{
    const char *path = "BENCHMARKS.md";
    FILE *f = fopen(path, "r");
    char *old = NULL;
    size_t len = 0;
    if (f) {
        fseek(f, 0, SEEK_END);
        len = (size_t)ftell(f);
        fseek(f, 0, SEEK_SET);
        old = calloc(1, len + 1);
        if (!old || fread(old, 1, len, f) != len) len = 0;
        fclose(f);
    }
    FILE *out = fopen("BENCHMARKS.md.tmp", "w");
    if (!out) return -1;
    char *start = old ? strstr(old, "## Ground truth\n") : NULL;
    if (!old || !len)
        fprintf(out, "# Benchmarks\n\n%s", section);
    else if (!start)
        fprintf(out, "%s%s%s", old, old[len - 1] == '\n' ? "\n" : "\n\n", section);
    else {
        char *end = strstr(start + 1, "\n## ");
        fprintf(out, "%.*s%s%s", (int)(start - old), old, section, end ? end + 1 : "");
    }
    free(old);
    if (fclose(out) != 0) return -1;
    return rename("BENCHMARKS.md.tmp", path);
}

int main(int argc, char **argv)
{
    int full = 1, to_stdout = 0;
    const char *only = NULL;
    char cmd[256] = "make bench (build/bench/truth";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            full = 0;
        else if (!strcmp(argv[i], "--stdout"))
            to_stdout = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--quick] [--stdout] [--only NAME]\n", argv[0]);
            return 2;
        }
        /* Quoted when it holds a space ("perf -g"), so the command can be pasted. */
        int quote = strchr(argv[i], ' ') != NULL;
        strncat(cmd, quote ? " '" : " ", sizeof cmd - strlen(cmd) - 1);
        strncat(cmd, argv[i], sizeof cmd - strlen(cmd) - 1);
        if (quote) strncat(cmd, "'", sizeof cmd - strlen(cmd) - 1);
    }
    strncat(cmd, ")", sizeof cmd - strlen(cmd) - 1);

    struct calib_env env;
    calib_env_host(&env);
    struct calib_opts co = {8, 1000, 10000, full ? 50 : 15};
    struct calib_result calib;
    if (calib_run(&env, &co, &calib) < 0) return 1;
    fprintf(stderr, "truth: calibration: %.1f ns/unit, R² %.6f, %s: %s\n", calib.ns_per_unit,
            calib.r2, calib.fit ? "fit" : "UNFIT", calib.reason);

    const struct truth_profiler *profs[NPROF] = {&truth_kestrel, &peer_perf_fp, &peer_perf_dwarf,
                                                 &peer_gperftools, &peer_gperftools_pt};
    char dir[] = "/tmp/kestrel-truth-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    struct truth_opts o;
    truth_opts_default(&o, full);
    o.dir = dir;
    o.exe = "build/bin/kestrel";
    for (int i = 0; i < NPROF; i++) {
        struct entry *e = &entries[i];
        e->prof = profs[i];
        if (only && strcmp(only, profs[i]->name)) {
            e->skipped = 1;
            continue;
        }
        o.error_hz = 997;
        truth_run_all(e->prof, &o, &calib, &e->r, stderr);
        e->top = e->r;
        o.error_hz = 0;
        truth_run_errors(e->prof, &o, calib.ns_per_unit, &e->top, stderr);
    }
    rmdir(dir);

    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    write_section(mem, &calib, cmd, full);
    fclose(mem);
    if (to_stdout)
        fputs(buf, stdout);
    else if (update_benchmarks(buf) < 0) {
        perror("BENCHMARKS.md");
        return 1;
    } else
        fputs(buf, stdout);
    free(buf);
    return 0;
}
