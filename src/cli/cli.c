/* The analysis pipeline as the commands use it (cli.h). */
#include "cli/cli.h"
#include "cli/fetch.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/readers/readers.h"
#include "analysis/writers/report.h"
#include "analysis/symbols/symbolize.h"
#include "analysis/writers/writers.h"

int cli_load(const char *path, const struct cli_load_options *o, struct profile **pp,
             struct summary **sp)
{
    char why[512];
    struct profile *p;
    if (fetch_is_url(path)) { /* a scrape endpoint: fetched, then read as a file */
        char tmp[4096];
        if (fetch_url(path, tmp, sizeof tmp, why, sizeof why) != 0) {
            fprintf(stderr, "kestrel: %s: %s\n", path, why);
            return -1;
        }
        p = read_profile(tmp, why, sizeof why);
        unlink(tmp);
        char *url = p ? strdup(path) : NULL; /* messages name the URL, not the file */
        if (url) {
            free(p->source);
            p->source = url;
        }
    } else {
        p = read_profile(path, why, sizeof why);
    }
    if (!p) {
        fprintf(stderr, "kestrel: %s: %s\n", path, why);
        return -1;
    }
    size_t type = p->default_type;
    if (o->sample_type) {
        int k = profile_find_sample_type(p, o->sample_type);
        if (k < 0) {
            fprintf(stderr, "kestrel: %s: no sample type \"%s\" (it has:", path, o->sample_type);
            for (size_t i = 0; i < p->n_sample_types; i++)
                fprintf(stderr, " %s", p->sample_types[i].type);
            fprintf(stderr, ")\n");
            profile_free(p);
            return -1;
        }
        type = (size_t)k;
    }
    struct symbolize_options so = {.binary = o->binary};
    if (symbolize_profile(p, &so)) {
        fprintf(stderr, "kestrel: %s: out of memory while symbolizing\n", path);
        profile_free(p);
        return -1;
    }
    const char *err;
    struct summary *s = summary_build(p, type, &err);
    if (!s) {
        fprintf(stderr, "kestrel: %s: %s\n", path, err);
        profile_free(p);
        return -1;
    }
    *pp = p;
    *sp = s;
    return 0;
}

int cli_export_all(const struct profile *p, const struct summary *s, const char *stem)
{
    size_t n;
    const struct writer *const *w = writers_all(&n);
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(stem) + strlen(w[i]->suffix) + 1;
        char *path = malloc(len);
        if (!path) return failed + (int)(n - i);
        snprintf(path, len, "%s%s", stem, w[i]->suffix);
        /* A format that cannot hold this kind of profile is skipped, not an error. */
        int rc = writer_write_file(w[i], p, s, path);
        if (rc && rc != -EINVAL) failed++;
        free(path);
    }
    return failed;
}

int cli_parse_state(const char *word, int *state)
{
    if (!word || !strcmp(word, "all"))
        *state = SUMMARY_ALL_STATES;
    else if (!strcmp(word, "running"))
        *state = PROFILE_RUNNING;
    else if (!strcmp(word, "waiting"))
        *state = PROFILE_WAITING;
    else
        return -1;
    return 0;
}

int cli_report(const struct profile *p, const struct summary *s, int state, int wide,
               FILE *out, const char *out_name)
{
    struct summary *only = NULL;
    if (state != SUMMARY_ALL_STATES && p->kind == PROFILE_CPU) {
        const char *why;
        if (!(only = summary_build_state(p, s->type, state, &why))) {
            fprintf(stderr, "kestrel: %s: %s\n", p->source ? p->source : "profile", why);
            return -1;
        }
    }
    int rc = report_write(p, only ? only : s, out,
                          report_wants_colour(out) | (wide ? REPORT_WIDE : 0));
    summary_free(only);
    if (rc) {
        fprintf(stderr, "kestrel: %s: write error\n", out_name);
        return -1;
    }
    return 0;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "kestrel %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see kestrel %s --help)\n", cmd);
    return 2;
}
