/* Times kestrel's export pipeline on one raw profile, phase by phase, in one process:
 * read, symbolize, aggregate, then every export writer of the CLI's table (each to a
 * file, atomically, as `kestrel record` writes them, the HTML viewer included) and
 * the terminal report. Prints one line per phase, `NAME WALL_S CPU_S`, and the peak
 * RSS. CPU time is given beside wall time because the benchmark machine is
 * shared: a single-threaded phase's CPU time is what its wall time would be alone.
 *
 *   export_bench all RAW.json OUTDIR      the whole pipeline and every export
 *   export_bench symbolize RAW.json [DUMP]  read, then symbolize only; DUMP gets each
 *       sample's frames, innermost first, one `name<TAB>file:line` a line and a blank
 *       line after each sample (llvm-symbolizer's layout, to compare the two) */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "analysis/readers/readers.h"
#include "analysis/writers/report.h"
#include "analysis/aggregate/summary.h"
#include "analysis/symbols/symbolize.h"
#include "analysis/writers/writers.h"

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
    if (!strcmp(argv[1], "symbolize") && argc > 3) {
        FILE *dump = fopen(argv[3], "w");
        if (!dump) return perror(argv[3]), 1;
        for (size_t i = 0; i < p->n_samples; i++) {
            const struct profile_stack *st = &p->stacks[p->samples[i].stack];
            for (uint32_t k = 0; k < st->depth; k++) {
                const struct profile_frame *f = &p->frames[st->frames[k]];
                fprintf(dump, "%s\t%s:%d\n", f->name, f->file ? f->file : "??", f->line);
            }
            fputc('\n', dump);
        }
        if (fclose(dump)) return perror(argv[3]), 1;
    }
    if (!strcmp(argv[1], "all")) {
        const char *reason = NULL;
        t = now();
        struct summary *s = summary_build(p, p->default_type, &reason);
        if (!s) return fprintf(stderr, "export_bench: %s\n", reason), 1;
        phase("aggregate", t, " functions=%zu", s->n_functions);
        size_t n;
        const struct writer *const *ws = writers_all(&n);
        char path[4096];
        for (size_t i = 0; i < n; i++) {
            snprintf(path, sizeof path, "%s/bench%s", argv[3], ws[i]->suffix);
            t = now();
            if (writer_write_file(ws[i], p, s, path)) return 1;
            phase(ws[i]->format, t, "%s", "");
        }
        /* `record` prints the report to its stdout; here it goes to a file. */
        snprintf(path, sizeof path, "%s/bench.report.txt", argv[3]);
        FILE *report = fopen(path, "w");
        t = now();
        if (!report || report_write(p, s, report, 0) || fclose(report))
            return fprintf(stderr, "export_bench: %s: cannot write\n", path), 1;
        phase("report", t, " writers=%zu", n);
        summary_free(s);
    }
    profile_free(p);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    phase("total", t0, "%s", "");
    printf("peak_rss_mib %.1f\n", ru.ru_maxrss / 1024.0);
    return 0;
}
