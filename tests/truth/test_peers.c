/* The accuracy benchmark reads its peers' outputs into the profile model: `perf
 * script` text (threads, times, leaf-first frames, names with spaces) and gperftools'
 * collapsed stacks (root first, addresses in angle brackets, counts). Hand-written
 * inputs in the exact shape the tools print. */
#include <string.h>

#include "truth/measure.h"
#include "check.h"
#include "truth/peers.h"

static void test_perf_script(void)
{
    char text[] = "kestrel 4242   100.000100: \n"
                  "\t            19b4 share40\n"
                  "\t            1f6e workload_run\n"
                  "\t           2724a __libc_start_call_main\n"
                  "\n"
                  "busy 1 4243   100.001100: \n"
                  "\t          16e0ba __memset_avx512_unaligned_erms\n"
                  "\t            1f78 workload_run\n"
                  "\n"
                  "kestrel 4242   100.000600: \n"
                  "\t            19b4 share40\n"
                  "\t            1f6e [unknown]\n";
    char why[128] = "";
    struct profile *p = peer_parse_perf_script(text, why, sizeof why);
    CHECKF(p != NULL, "%s", why);
    if (!p) return;
    CHECK(p->n_samples == 3 && p->n_threads == 2);
    CHECK(!strcmp(p->threads[1].name, "busy 1") && p->threads[1].tid == 4243);
    CHECK(p->threads[0].tid == 4242);
    /* Times are relative to the first sample, in ns: 0, 1000000, 500000. */
    CHECK(p->samples[0].time_ns == 0 && p->samples[1].time_ns == 1000000 &&
          p->samples[2].time_ns == 500000);
    struct measure_fn f[] = {{"share40", 0, 0, 0}, {"workload_run", 0, 0, 0}};
    struct measure_counts c;
    CHECK(measure_functions(p, -1, 0, f, 2, &c) == 0);
    CHECK(c.running == 3 && f[0].self == 2 && f[1].self == 0 && f[1].total == 2);
    /* The first two samples in time are both share40. */
    CHECK(measure_functions(p, -1, 2, f, 2, &c) == 0 && f[0].self == 2);
    const struct profile_stack *st = &p->stacks[p->samples[1].stack];
    CHECK(st->depth == 2 &&
          !strcmp(p->frames[st->frames[0]].name, "__memset_avx512_unaligned_erms"));
    profile_free(p);
}

static void test_collapsed(void)
{
    char text[] = "main<0000000000001000>;run<0000000000001100>;share40<00000000000013c0> 87\n"
                  "share02<00000000000015a0> 10\n";
    char why[128] = "";
    struct profile *p = peer_parse_collapsed(text, why, sizeof why);
    CHECKF(p != NULL, "%s", why);
    if (!p) return;
    CHECK(p->n_samples == 97 && p->n_threads == 1 && p->samples[0].time_ns == -1);
    struct measure_fn f[] = {{"share40", 0, 0, 0}, {"share02", 0, 0, 0}, {"main", 0, 0, 0}};
    struct measure_counts c;
    CHECK(measure_functions(p, -1, 0, f, 3, &c) == 0);
    CHECK(f[0].self == 87 && f[1].self == 10 && f[2].self == 0 && f[2].total == 87);
    profile_free(p);
}

int main(void)
{
    test_perf_script();
    test_collapsed();
    return check_exit();
}
