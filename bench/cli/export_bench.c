/* Times kestrel's export pipeline on one raw profile, phase by phase, in one process:
 * read, symbolize, aggregate, then every export writer (each to a file, atomically, as
 * `kestrel record` writes them). Prints one line per phase, `NAME WALL_S CPU_S`, and
 * the peak RSS. CPU time is given beside wall time because the benchmark machine is
 * shared: a single-threaded phase's CPU time is what its wall time would be alone.
 *
 *   export_bench all RAW.json OUTDIR      the whole pipeline and every export
 *   export_bench symbolize RAW.json       read, then symbolize only */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "analysis/readers.h"
#include "analysis/summary.h"
#include "analysis/symbolize.h"
#include "analysis/writers.h"

extern const struct writer writer_speedscope, writer_cpuprofile, writer_folded, writer_summary,
    writer_pprof;

struct stamp {
    double wall, cpu;
};

static struct stamp now(void)
{
    struct timespec w, c;
    clock_gettime(CLOCK_MONOTONIC, &w);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
    return (struct stamp){w.tv_sec + w.tv_nsec / 1e9, c.tv_sec + c.tv_nsec / 1e9};
}

/* Prints "name wall cpu" since `from`, then the rest of the line. */
static void phase(const char *name, struct stamp from, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void phase(const char *name, struct stamp from, const char *fmt, ...)
{
    struct stamp to = now();
    printf("%s %.3f %.3f", name, to.wall - from.wall, to.cpu - from.cpu);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "all") && strcmp(argv[1], "symbolize")) ||
        (!strcmp(argv[1], "all") && argc < 4)) {
        fprintf(stderr, "usage: export_bench all RAW.json OUTDIR | symbolize RAW.json\n");
        return 2;
    }
    struct stamp t0 = now(), t;
    char why[256];
    struct profile *p = read_profile(argv[2], why, sizeof why);
    if (!p) {
        fprintf(stderr, "export_bench: %s: %s\n", argv[2], why);
        return 1;
    }
    phase("read", t0, " samples=%zu stacks=%zu", p->n_samples, p->n_stacks);
    struct symbolize_options o = {.quiet = 1};
    struct stamp ts = now();
    if (symbolize_profile(p, &o)) return 1;
    size_t unresolved = 0;
    for (size_t f = 0; f < p->n_frames; f++)
        unresolved += !p->frames[f].symbolized;
    phase("symbolize", ts, " frames=%zu unresolved=%zu", p->n_frames, unresolved);
    if (!strcmp(argv[1], "all")) {
        const char *reason = NULL;
        t = now();
        struct summary *s = summary_build(p, p->default_type, &reason);
        if (!s) return fprintf(stderr, "export_bench: %s\n", reason), 1;
        phase("aggregate", t, " functions=%zu", s->n_functions);
        const struct writer *ws[] = {&writer_speedscope, &writer_cpuprofile, &writer_folded,
                                     &writer_summary, &writer_pprof};
        for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/bench%s", argv[3], ws[i]->suffix);
            t = now();
            if (writer_write_file(ws[i], p, s, path)) return 1;
            phase(ws[i]->format, t, "%s", "");
        }
        summary_free(s);
    }
    profile_free(p);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    phase("total", t0, "%s", "");
    printf("peak_rss_mib %.1f\n", ru.ru_maxrss / 1024.0);
    return 0;
}
