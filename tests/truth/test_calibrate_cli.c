/* `kestrel calibrate` as a user meets it: its verdict on a contended machine (two
 * processes per core spinning while it times burn() must make it say so and measure
 * nothing), its workloads run on their own, and bad options refused with a clear
 * message and a non-zero status. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#define KESTREL "build/bin/kestrel"

/* Runs a shell command; its stdout and stderr together into out. Returns the exit
 * status, or -1. */
static int run(const char *cmd, char *out, size_t size)
{
    char full[512];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *f = popen(full, "r");
    if (!f) return -1;
    size_t n = fread(out, 1, size - 1, f);
    out[n] = 0;
    int st = pclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_contended(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1) cores = 1;
    pid_t spinners[64];
    int n = 0;
    for (long i = 0; i < 2 * cores && n < 64; i++) {
        pid_t p = fork();
        if (p == 0) {
            /* Spin until killed, or for 60 s at most should the test die first. */
            time_t end = time(NULL) + 60;
            while (time(NULL) < end) {
            }
            _exit(0);
        }
        if (p > 0) spinners[n++] = p;
    }
    usleep(200 * 1000);
    static char out[65536];
    int rc = run(KESTREL " calibrate --quick", out, sizeof out);
    for (int i = 0; i < n; i++)
        kill(spinners[i], SIGKILL);
    for (int i = 0; i < n; i++)
        waitpid(spinners[i], NULL, 0);
    CHECKF(rc == 3, "exit %d, output:\n%s", rc, out);
    CHECKF(strstr(out, "UNFIT: contended") != NULL, "no contention verdict:\n%s", out);
    CHECKF(strstr(out, "No shares measured") != NULL, "%s", out);
    /* Nothing was measured, so no table of shares follows the verdict. */
    CHECK(strstr(out, "Sampling rate") == NULL && strstr(out, "Blind spots") == NULL);
}

static void test_workloads_and_errors(void)
{
    static char out[8192];
    CHECK(run(KESTREL " calibrate --workload sleeper --units 20000", out, sizeof out) == 0);
    CHECKF(strstr(out, "workload sleeper units=20000 napper_wall_ns=") != NULL, "%s", out);
    /* shares times its own calls: each function's CPU in the run, in table order,
     * within a point of its constructed share (40 22 15 10 6 5 2). It times one round
     * in 16, and a hypervisor's stolen milliseconds land on whichever call is running:
     * over 0.6 s the largest function read up to 0.9 points off here, over 2.3 s (these
     * units) within 0.25. */
    CHECK(run(KESTREL " calibrate --workload shares --units 1600000", out, sizeof out) == 0);
    const char *r = strstr(out, " run_ns=");
    CHECKF(r != NULL, "%s", out);
    if (r) {
        static const double want[] = {40, 22, 15, 10, 6, 5, 2};
        double ns[7], sum = 0;
        const char *p = r + strlen(" run_ns=");
        int got = 0;
        for (char *end; got < 7; got++, p = end + 1) {
            ns[got] = strtod(p, &end);
            if (end == p || !(ns[got] > 0)) break;
            sum += ns[got];
        }
        CHECKF(got == 7, "%s", out);
        for (int i = 0; i < got && got == 7; i++)
            CHECKF(fabs(100 * ns[i] / sum - want[i]) < 1, "function %d: %.2f%% of the run, built "
                   "for %.0f%%: %s", i, 100 * ns[i] / sum, want[i], out);
    }
    CHECK(run(KESTREL " calibrate --workload nosuch", out, sizeof out) == 2);
    CHECKF(!strcmp(out, "kestrel: calibrate: --workload nosuch: no such workload (see --help)\n"),
           "%s", out);
    CHECK(run(KESTREL " calibrate --workload shares --units 12x", out, sizeof out) == 2);
    CHECKF(strstr(out, "kestrel: calibrate: --units 12x: not a positive whole number") == out, "%s",
           out);
    CHECK(run(KESTREL " calibrate --units 5", out, sizeof out) == 2);
    CHECK(strstr(out, "--units goes with --workload") != NULL);
    CHECK(run(KESTREL " calibrate --bogus", out, sizeof out) == 2);
    CHECK(!strcmp(out, "kestrel: calibrate: --bogus: unknown option (see --help)\n"));
    CHECK(run(KESTREL " calibrate --help", out, sizeof out) == 0);
    CHECK(strstr(out, "usage: kestrel calibrate") == out && strstr(out, "--workload NAME"));
}

int main(void)
{
    test_workloads_and_errors();
    test_contended();
    return check_exit();
}
