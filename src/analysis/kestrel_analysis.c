/* The profile API of include/kestrel_analysis.h, over the analysis model: a reader,
 * the symbolizer, the aggregation (summary.h) of the on-CPU samples, and the folded
 * writer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/model/profile.h"
#include "analysis/readers/readers.h"
#include "analysis/aggregate/stats.h"
#include "analysis/aggregate/summary.h"
#include "analysis/symbols/symbolize.h"
#include "analysis/writers/writers.h"
#include "kestrel.h"
#include "kestrel_analysis.h"

struct kestrel_analysis {
    struct profile *p;      /* the whole profile, waiting samples included */
    struct profile running; /* a view of p with the on-CPU samples only */
    struct summary *s;      /* aggregation of `running` */
};

/* The region API lives in libkestrel; referenced weakly so that this library links
 * into programs (and the CLI) that do not carry the runtime. */
extern int kestrel_profile_stop(const char *path) __attribute__((weak));

extern const struct writer writer_folded;

void kestrel_analysis_free(kestrel_analysis *a)
{
    if (!a) return;
    summary_free(a->s);
    free(a->running.samples);
    free(a->running.values);
    profile_free(a->p);
    free(a);
}

/* The view shares every table of p but its samples: summary.h reads, never writes. */
static int keep_running(kestrel_analysis *a)
{
    const struct profile *p = a->p;
    a->running = *p;
    size_t nt = p->n_sample_types, n = 0;
    a->running.samples = malloc((p->n_samples ? p->n_samples : 1) * sizeof *p->samples);
    a->running.values = malloc((p->n_samples ? p->n_samples : 1) * (nt ? nt : 1) * sizeof(int64_t));
    if (!a->running.samples || !a->running.values) return -1;
    for (size_t i = 0; i < p->n_samples; i++) {
        if (p->samples[i].state != PROFILE_RUNNING) continue;
        a->running.samples[n] = p->samples[i];
        memcpy(a->running.values + n * nt, profile_values(p, i), nt * sizeof(int64_t));
        n++;
    }
    a->running.n_samples = n;
    a->running.cap_samples = n;
    a->running.hash = NULL;
    return 0;
}

kestrel_analysis *kestrel_analysis_load(const char *path, char *why, size_t why_size)
{
    kestrel_analysis *a = calloc(1, sizeof *a);
    if (!a) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    char rwhy[256] = "";
    if (!(a->p = read_profile(path, rwhy, sizeof rwhy))) {
        /* The readers name the file in some messages, not in all. */
        if (!strncmp(rwhy, path, strlen(path)))
            snprintf(why, why_size, "%s", rwhy);
        else
            snprintf(why, why_size, "%s: %s", path, rwhy);
        free(a);
        return NULL;
    }
    struct symbolize_options so = {.quiet = 1};
    int type = profile_find_sample_type(a->p, "samples");
    const char *swhy = NULL;
    if (symbolize_profile(a->p, &so) < 0 || keep_running(a) < 0 ||
        !(a->s =
              summary_build(&a->running, type >= 0 ? (size_t)type : a->p->default_type, &swhy))) {
        snprintf(why, why_size, "%s: %s", path, swhy ? swhy : "out of memory");
        kestrel_analysis_free(a);
        return NULL;
    }
    return a;
}

kestrel_analysis *kestrel_analysis_stop(char *why, size_t why_size)
{
    if (!kestrel_profile_stop) {
        snprintf(why, why_size, "the runtime is not linked in (link with -lkestrel)");
        return NULL;
    }
    char path[] = "/tmp/kestrel-region-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        snprintf(why, why_size, "%s: %s", path, strerror(errno));
        return NULL;
    }
    close(fd);
    int rc = kestrel_profile_stop(path);
    if (rc < 0) {
        snprintf(why, why_size, "kestrel_profile_stop: %s", strerror(-rc));
        unlink(path);
        return NULL;
    }
    kestrel_analysis *a = kestrel_analysis_load(path, why, why_size);
    unlink(path);
    return a;
}

uint64_t kestrel_analysis_samples(const kestrel_analysis *a)
{
    return a->s->n_samples;
}

/* Every function of that name, summed: the same name in two files is one answer. */
static void by_name(const kestrel_analysis *a, const char *name, struct kestrel_share *out)
{
    memset(out, 0, sizeof *out);
    out->name = name;
    for (size_t i = 0; i < a->s->n_functions; i++) {
        const struct summary_function *f = &a->s->functions[i];
        if (strcmp(f->name, name)) continue;
        out->self_samples += f->self.n;
        out->total_samples += f->total.n;
    }
    double n = (double)a->s->n_samples;
    if (n <= 0) return;
    out->self = (double)out->self_samples / n;
    out->total = (double)out->total_samples / n;
    out->self_se = stats_se(out->self, n);
    out->total_se = stats_se(out->total, n);
}

size_t kestrel_analysis_top(const kestrel_analysis *a, struct kestrel_share *out, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < a->s->n_functions && k < n; i++) {
        const struct summary_function *f = &a->s->functions[i];
        out[k++] = (struct kestrel_share){f->name,     f->self.share, f->self.se, f->total.share,
                                          f->total.se, f->self.n,     f->total.n};
    }
    return k;
}

double kestrel_analysis_share(const kestrel_analysis *a, const char *name)
{
    struct kestrel_share s;
    by_name(a, name, &s);
    return s.self;
}

double kestrel_analysis_cum_share(const kestrel_analysis *a, const char *name)
{
    struct kestrel_share s;
    by_name(a, name, &s);
    return s.total;
}

double kestrel_analysis_stderr_of(const kestrel_analysis *a, const char *name)
{
    struct kestrel_share s;
    by_name(a, name, &s);
    return s.self_se;
}

char *kestrel_analysis_folded(const kestrel_analysis *a)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    /* Named directly, not looked up in the writer table, so that a program linking
     * this library statically pulls the folded writer in with it. */
    int rc = mem ? writer_folded.write(&a->running, a->s, mem) : -1;
    if (mem && fclose(mem) != 0) rc = -1;
    if (rc < 0) {
        free(buf);
        return NULL;
    }
    return buf;
}
