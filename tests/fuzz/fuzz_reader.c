/* libFuzzer target for one reader, chosen at compile time (-DFUZZ_READER=read_raw_json
 * or read_pprof). Whatever the input, the reader must return a sound profile or NULL
 * with a reason, never crash, hang or leak; a profile it accepts must then aggregate
 * and go through every export writer without a fault. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/readers/readers.h"
#include "analysis/aggregate/summary.h"
#include "analysis/writers/writers.h"

extern const struct writer writer_speedscope, writer_cpuprofile, writer_folded, writer_summary,
    writer_pprof;

static const struct writer *const all[] = {&writer_speedscope, &writer_cpuprofile, &writer_folded,
                                           &writer_summary, &writer_pprof};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[256] = "";
    struct profile *p = FUZZ_READER((const char *)data, size, why, sizeof why);
    if (!p) {
        if (!why[0]) abort(); /* a refusal must say why */
        return 0;
    }
    if (profile_check(p, why, sizeof why)) {
        fprintf(stderr, "reader returned an unsound profile: %s\n", why);
        abort();
    }
    for (size_t t = 0; t < p->n_sample_types; t++) {
        const char *reason = NULL;
        struct summary *s = summary_build(p, t, &reason);
        if (!s) continue; /* e.g. a total past 64 bits: refused with a reason */
        for (size_t w = 0; w < sizeof all / sizeof all[0]; w++) {
            char *buf = NULL;
            size_t len = 0;
            FILE *out = open_memstream(&buf, &len);
            if (!out) abort();
            all[w]->write(p, s, out);
            fclose(out);
            free(buf);
        }
        summary_free(s);
    }
    profile_free(p);
    return 0;
}
