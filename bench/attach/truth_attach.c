/* The ground truth (src/truth) sampled from outside: the seven-share workload run by
 * `kestrel record --attach` (perf events opened on it from the CLI, its stacks walked by
 * the runtime's walker compiled into the CLI), scored as the accuracy benchmark scores
 * every profiler: the mean absolute error of the seven shares against the truth timed
 * in the run, over windows of n samples, beside the binomial prediction. Also the share
 * of on-CPU stacks whose walk reached the thread's root. Run on the workloads of a
 * kestrel built with frame pointers and of one built without (--exe).
 *
 *   build/bench/attach/truth_attach [--exe KESTREL_WITH_WORKLOADS]... [--hz N] [--full] */
#include <glob.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/readers/readers.h"
#include "analysis/symbols/symbolize.h"
#include "truth/accuracy.h"
#include "truth/calib.h"
#include "truth/truth.h"

struct whole {
    unsigned long cpu, rooted; /* on-CPU samples, those whose walk ended at a root */
};

/* Counts the on-CPU samples of raw file path whose stack_ends code is a root's (end,
 * top, cfi_end: docs/raw-format.md). */
static void count_whole(const char *path, struct whole *w)
{
    json_t *j = json_load_file(path, 0, NULL);
    json_t *ends = json_object_get(j, "stack_ends"), *rows = json_object_get(j, "samples");
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        if (json_integer_value(json_array_get(row, 3)) != 0) continue;
        json_int_t st = json_integer_value(json_array_get(row, 2));
        json_int_t end = json_integer_value(json_array_get(ends, (size_t)st));
        w->cpu++;
        w->rooted += end == 0 || end == 1 || end == 8;
    }
    json_decref(j);
}

static struct profile *run_attached(const struct truth_profiler *self, char *const argv[],
                                    unsigned hz, const char *dir, struct truth_child *child,
                                    char *why, size_t why_size)
{
    static unsigned seq;
    struct whole *w = self->ctx;
    char stem[4096], f[32], pattern[4200];
    snprintf(stem, sizeof stem, "%s/attached-%u", dir, seq++);
    snprintf(f, sizeof f, "%u", hz);
    char *cmd[32] = {"build/bin/kestrel", "record", "--attach", "-F", f, "-o", stem,
                     "--report=/dev/null"};
    int n = 8;
    cmd[n++] = "--";
    for (int i = 0; argv[i] && n < 31; i++) cmd[n++] = argv[i];
    cmd[n] = NULL;
    if (truth_spawn(cmd, NULL, child, why, why_size) < 0) return NULL;
    snprintf(pattern, sizeof pattern, "%s.raw/*.raw.json", stem);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) || g.gl_pathc != 1) {
        snprintf(why, why_size, "%s: no raw profile", stem);
        return NULL;
    }
    struct profile *p = read_profile(g.gl_pathv[0], why, why_size);
    if (p) count_whole(g.gl_pathv[0], w);
    char rm[4300];
    snprintf(rm, sizeof rm, "rm -rf '%s'.*", stem);
    if (system(rm)) {
    }
    globfree(&g);
    if (!p) return NULL;
    struct symbolize_options so = {.quiet = 1};
    if (symbolize_profile(p, &so) < 0) {
        snprintf(why, why_size, "out of memory symbolizing");
        profile_free(p);
        return NULL;
    }
    return p;
}

int main(int argc, char **argv)
{
    const char *exes[4];
    int n_exe = 0;
    unsigned hz = 997;
    int full = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--full"))
            full = 1;
        else if (!strcmp(argv[i], "--exe") && i + 1 < argc && n_exe < 4)
            exes[n_exe++] = argv[++i];
        else if (!strcmp(argv[i], "--hz") && i + 1 < argc)
            hz = (unsigned)atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--exe KESTREL]... [--hz N] [--full]\n", argv[0]);
            return 2;
        }
    }
    if (!n_exe) exes[n_exe++] = "build/bin/kestrel";
    struct calib_env env;
    calib_env_host(&env);
    struct calib_opts co = {8, 1000, 10000, 15};
    struct calib_result calib;
    if (calib_run(&env, &co, &calib) < 0) return 1;
    fprintf(stderr, "calibration: %.1f ns/unit, R² %.6f, %s: %s\n", calib.ns_per_unit, calib.r2,
            calib.fit ? "fit" : "UNFIT", calib.reason);
    char dir[] = "/tmp/kestrel-truth-attach-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    double load[1] = {0};
    for (int e = 0; e < n_exe; e++) {
        struct whole w = {0, 0};
        struct truth_profiler prof = {"kestrel --attach", run_attached, 1, 1, 1, &w};
        struct truth_opts o;
        truth_opts_default(&o, full);
        o.dir = dir;
        o.exe = exes[e];
        o.error_hz = hz;
        struct truth_report r;
        memset(&r, 0, sizeof r);
        truth_run_errors(&prof, &o, calib.ns_per_unit, &r, stderr);
        getloadavg(load, 1);
        printf("### workloads of %s, sampled by `kestrel record --attach` at %u Hz\n\n", exes[e],
               hz);
        if (r.error_note[0]) printf("error run: %s\n\n", r.error_note);
        printf("| samples n | windows | MAE (points) | binomial MAE | MAE/binomial | MAE/σ |\n"
               "|---|---|---|---|---|---|\n");
        for (unsigned k = 0; k < r.n_rows; k++) {
            const struct accuracy_point *a = &r.rows[k];
            printf("| %llu | %u | %.3f | %.3f | %.2f | %.2f |\n", (unsigned long long)a->samples,
                   a->windows, 100 * a->mae, 100 * a->binomial, a->ratio,
                   a->ratio * ACCURACY_MAE_PER_SIGMA);
        }
        printf("\nOn-CPU stacks whose walk reached the thread's root: %lu of %lu (%.2f%%). "
               "Calibration %.1f ns/unit (%s); load average %.1f.\n\n",
               w.rooted, w.cpu, w.cpu ? 100.0 * w.rooted / w.cpu : 0, calib.ns_per_unit,
               calib.fit ? "fit" : "UNFIT", load[0]);
        fflush(stdout);
    }
    rmdir(dir);
    return 0;
}
