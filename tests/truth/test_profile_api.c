/* The profile API (include/kestrel_analysis.h) on a real region: the runtime linked
 * in, kestrel_profile_start() at 997 Hz around a workload of known shares, then
 * kestrel_analysis_stop(): top functions in order, shares within four standard
 * errors of the truth, cum_share against share, stderr_of equal to sqrt(p(1-p)/n),
 * and folded stacks that add up to the samples. Also a recorded file loaded from
 * disk, and the errors a user can make. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "truth/workloads.h"
#include "check.h"
#include "kestrel.h"
#include "kestrel_analysis.h"

static void check_shares(kestrel_analysis *a)
{
    uint64_t n = kestrel_analysis_samples(a);
    CHECKF(n >= 1000, "%llu samples", (unsigned long long)n);
    struct kestrel_share top[3];
    CHECK(kestrel_analysis_top(a, top, 3) == 3);
    CHECKF(!strcmp(top[0].name, "share40") && !strcmp(top[1].name, "share22") &&
               !strcmp(top[2].name, "share15"),
           "top: %s %s %s", top[0].name, top[1].name, top[2].name);
    for (unsigned i = 0; i < WORKLOAD_SHARES_N; i++) {
        const char *name = workload_shares[i].name;
        double truth = workload_shares[i].weight / 100.0;
        double p = kestrel_analysis_share(a, name), se = kestrel_analysis_stderr_of(a, name);
        double truth_se = sqrt(truth * (1 - truth) / (double)n);
        fprintf(stderr, "%s %.2f%% ± %.2f (truth %.0f%%)\n", name, 100 * p, 100 * se, 100 * truth);
        CHECKF(fabs(p - truth) <= 4 * truth_se, "%s: %.4f against %.2f", name, p, truth);
        CHECK(fabs(se - sqrt(p * (1 - p) / (double)n)) < 1e-12);
        /* A leaf function: everything it holds is its own. */
        CHECK(fabs(kestrel_analysis_cum_share(a, name) - p) < 1e-12);
    }
    /* The caller of them all holds (nearly) everything, itself nothing. */
    CHECK(kestrel_analysis_share(a, "workload_run") == 0);
    CHECKF(kestrel_analysis_cum_share(a, "workload_run") > 0.99, "%g",
           kestrel_analysis_cum_share(a, "workload_run"));
    CHECK(kestrel_analysis_share(a, "no_such_function") == 0 &&
          kestrel_analysis_stderr_of(a, "no_such_function") == 0);

    char *folded = kestrel_analysis_folded(a);
    CHECK(folded != NULL);
    if (!folded) return;
    unsigned long long sum = 0, share40 = 0;
    for (char *line = strtok(folded, "\n"); line; line = strtok(NULL, "\n")) {
        char *sp = strrchr(line, ' ');
        CHECK(sp && strncmp(line, "main-0;", 7) == 0);
        if (!sp) continue;
        unsigned long long c = strtoull(sp + 1, NULL, 10);
        sum += c;
        if (sp - line > 8 && !strncmp(sp - 8, ";share40", 8)) share40 += c;
    }
    CHECKF(sum == n, "folded counts %llu, samples %llu", sum, (unsigned long long)n);
    CHECK(share40 == (unsigned long long)llround(kestrel_analysis_share(a, "share40") * (double)n));
    free(folded);
}

int main(void)
{
    char why[256] = "";
    CHECK(kestrel_analysis_stop(why, sizeof why) == NULL);
    CHECKF(strstr(why, "kestrel_profile_stop") != NULL, "%s", why);

    CHECK(kestrel_profile_start(997) == 0);
    FILE *devnull = fopen("/dev/null", "w");
    workload_run("shares", 2500000, devnull);
    kestrel_analysis *a = kestrel_analysis_stop(why, sizeof why);
    CHECKF(a != NULL, "%s", why);
    if (a) {
        check_shares(a);
        kestrel_analysis_free(a);
    }

    /* The same through a file the region wrote. */
    char path[] = "/tmp/kestrel-api-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    CHECK(kestrel_profile_start(997) == 0);
    workload_run("shares", 2500000, devnull);
    CHECK(kestrel_profile_stop(path) == 0);
    a = kestrel_analysis_load(path, why, sizeof why);
    CHECKF(a != NULL, "%s", why);
    if (a) {
        check_shares(a);
        kestrel_analysis_free(a);
    }
    unlink(path);
    fclose(devnull);

    CHECK(kestrel_analysis_load("/nonexistent/profile.json", why, sizeof why) == NULL);
    CHECKF(strstr(why, "/nonexistent/profile.json") != NULL, "%s", why);
    return check_exit();
}
