/* kestrel calibrate: how far this host lets a profile be trusted (DESIGN.md §4).
 * Thin over src/analysis: calib.h (the host), truth.h (the suite), truth_report.h. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "truth/calib.h"
#include "truth/truth.h"
#include "truth/truth_report.h"
#include "truth/workloads.h"
#include "cli/commands.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: kestrel calibrate [--quick | --full] [--json] [--anyway]\n"
            "       kestrel calibrate --workload NAME [--units N]\n\n"
            "Measures how far this host lets a profile be trusted: calibrates burn(), a loop\n"
            "whose cost is linear in its argument, and says whether the host is fit for\n"
            "ground truth now; then profiles workloads of known shares with kestrel and\n"
            "prints the sampling rate table, the error against truth as samples grow, the\n"
            "samples needed to detect a share, and the blind spots, truth beside measurement.\n\n"
            "  --quick       the short run, under 20 seconds (default)\n"
            "  --full        more repeats and more samples (about two minutes)\n"
            "  --json        the report as JSON on stdout\n"
            "  --anyway      measure even when the host is judged unfit (figures then carry\n"
            "                the machine's noise; the verdict still says so)\n"
            "  --workload NAME   run one workload (%s) and exit,\n"
            "                for profiling it with any profiler; --units N sets its work\n",
            "shares, worker, memset, oversub, sleeper");
}

static int run_workload(const char *name, const char *units_s)
{
    char *end;
    errno = 0;
    unsigned long long units = units_s ? strtoull(units_s, &end, 10) : 1000000;
    if (units_s && (errno || *end || !units)) {
        fprintf(stderr, "kestrel: calibrate: --units %s: not a positive whole number\n", units_s);
        return 2;
    }
    if (workload_run(name, units, stdout) < 0) {
        fprintf(stderr, "kestrel: calibrate: --workload %s: no such workload (see --help)\n", name);
        return 2;
    }
    return 0;
}

int cmd_calibrate(int argc, char **argv)
{
    int full = 0, json = 0, anyway = 0;
    const char *workload = NULL, *units = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--quick"))
            full = 0;
        else if (!strcmp(a, "--full"))
            full = 1;
        else if (!strcmp(a, "--json"))
            json = 1;
        else if (!strcmp(a, "--anyway"))
            anyway = 1;
        else if ((!strcmp(a, "--workload") || !strcmp(a, "--units")) && i + 1 < argc)
            *(a[2] == 'w' ? &workload : &units) = argv[++i];
        else {
            fprintf(stderr, "kestrel: calibrate: %s: unknown option (see --help)\n", a);
            return 2;
        }
    }
    if (workload) return run_workload(workload, units);
    if (units) {
        fprintf(stderr, "kestrel: calibrate: --units goes with --workload\n");
        return 2;
    }

    struct calib_env env;
    calib_env_host(&env);
    struct calib_opts co = {8, 1000, 10000, full ? 50 : 15};
    static struct truth_report r;
    if (calib_run(&env, &co, &r.calib) < 0) {
        fprintf(stderr, "kestrel: calibrate: could not time burn()\n");
        return 1;
    }
    int measured = r.calib.fit || anyway;
    if (measured) {
        char dir[] = "/tmp/kestrel-calibrate-XXXXXX";
        if (!mkdtemp(dir)) {
            fprintf(stderr, "kestrel: calibrate: %s: %s\n", dir, strerror(errno));
            return 1;
        }
        struct truth_opts o;
        truth_opts_default(&o, full);
        o.dir = dir;
        struct calib_result c = r.calib;
        truth_run_all(&truth_kestrel, &o, &c, &r, isatty(2) || !json ? stderr : NULL);
        rmdir(dir);
    }
    if (json) {
        json_t *j = truth_report_json(&r, full);
        json_dumpf(j, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
        json_decref(j);
    } else {
        truth_print_text(stdout, &r, full);
        if (!measured)
            printf("No shares measured: this host cannot support ground truth now (--anyway "
                   "measures regardless).\n");
    }
    return measured ? 0 : 3;
}
