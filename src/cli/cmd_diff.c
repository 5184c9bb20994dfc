/* kestrel diff: what changed between two profiles, function by function, and
 * whether each change is larger than sampling noise (aggregate/diff.h). Thin over
 * the analysis library: two loads, one comparison, one writer. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/aggregate/diff.h"
#include "analysis/readers/readers.h"
#include "analysis/symbols/symbolize.h"
#include "analysis/writers/report.h"
#include "analysis/writers/report_diff.h"
#include "analysis/writers/write_diff_folded.h"
#include "analysis/writers/write_diff_json.h"
#include "analysis/writers/write_html.h"
#include "analysis/writers/writers.h"
#include "cli/cli.h"
#include "cli/commands.h"

static const char usage[] =
    "usage: kestrel diff [options] BASE NEW\n"
    "\n"
    "Compares NEW against BASE (raw CPU profiles or pprof files, CPU or heap, any mix\n"
    "the readers take) function by function: each function's share of BASE and of NEW\n"
    "with its standard error, the change in points, its z and a verdict, `real` when\n"
    "the change clears a two-sided test at 5% family-wise error after Holm's\n"
    "correction for the number of functions compared, else `noise`. Shares are\n"
    "compared as shares, so the two runs may be of different lengths. Two tables, self\n"
    "and total, sorted by |z|.\n"
    "\n"
    "  --state STATE       CPU profiles: running (default), waiting or all samples\n"
    "  --sample-type TYPE  the type compared (default: NEW's default type)\n"
    "  --absolute          compare CPU time (the value) per function, not shares: for\n"
    "                      two runs of the same work; Poisson error on the counts\n"
    "  --sort z|delta      order of the tables (default z)\n"
    "  -n, --top N         rows per table (default 10)\n"
    "  --alpha A           the family-wise error rate (default 0.05)\n"
    "  --format F          instead of the tables: folded (`stack BASE NEW` lines, as\n"
    "                      difffolded.pl writes) or pprof (NEW with BASE subtracted, as\n"
    "                      pprof -diff_base shows it; read by go tool pprof) or html\n"
    "                      (NEW's flame graph, frames red where their total share grew\n"
    "                      and blue where it shrank, when real; grey within noise) or\n"
    "                      json (every function's comparison, for editors and scripts)\n"
    "  -o, --output OUT    where --format writes (default stdout)\n"
    "  -h, --help          this text\n";

struct diff_input {
    struct profile *p;
    struct summary *s;
};

/* Reads, symbolizes and aggregates one side over `state`'s samples. */
static int load(const char *path, const char *type_name, int state, int absolute,
                struct diff_input *in)
{
    char why[512];
    in->p = read_profile(path, why, sizeof why);
    if (!in->p) {
        fprintf(stderr, "kestrel: %s: %s\n", path, why);
        return -1;
    }
    size_t type = in->p->default_type;
    /* CPU time, not sample counts, is what --absolute compares when the profile has it. */
    if (!type_name && absolute && profile_find_sample_type(in->p, "cpu") >= 0) type_name = "cpu";
    if (type_name) {
        int k = profile_find_sample_type(in->p, type_name);
        if (k < 0) {
            fprintf(stderr, "kestrel: %s: no sample type \"%s\"\n", path, type_name);
            return -1;
        }
        type = (size_t)k;
    }
    struct symbolize_options so = {0};
    if (symbolize_profile(in->p, &so)) {
        fprintf(stderr, "kestrel: %s: out of memory while symbolizing\n", path);
        return -1;
    }
    const char *err;
    int only = in->p->kind == PROFILE_CPU ? state : SUMMARY_ALL_STATES;
    if (!(in->s = summary_build_state(in->p, type, only, &err))) {
        fprintf(stderr, "kestrel: %s: %s\n", path, err);
        return -1;
    }
    return 0;
}

struct diff_out {
    struct diff_input *in;
    struct diff *d;
};

static int out_folded(void *ctx, FILE *out)
{
    struct diff_out *c = ctx;
    return write_diff_folded(c->in[0].s, c->in[1].s, out);
}

static int out_json(void *ctx, FILE *out)
{
    int rc = write_diff_json(((struct diff_out *)ctx)->d, out);
    return rc ? rc : fputc('\n', out) == EOF ? -EIO : 0;
}

static int out_html(void *ctx, FILE *out)
{
    return write_html_diff(((struct diff_out *)ctx)->d, out);
}

/* --format: folded and html through atomic output, pprof as the pprof writer writes
 * any profile. Each failure is reported where it happens. */
static int write_format(const char *format, const char *out_path, struct diff_input in[2],
                        struct diff *d)
{
    struct diff_out c = {in, d};
    if (!strcmp(format, "folded")) return atomic_write(out_path, out_folded, &c) ? 1 : 0;
    if (!strcmp(format, "html")) return atomic_write(out_path, out_html, &c) ? 1 : 0;
    if (!strcmp(format, "json")) return atomic_write(out_path, out_json, &c) ? 1 : 0;
    const char *why;
    struct profile *m = diff_profile(in[0].s, in[1].s, &why);
    if (!m) {
        fprintf(stderr, "kestrel: diff: %s\n", why);
        return 1;
    }
    struct summary *s = summary_build(m, m->default_type, &why);
    int rc = 1;
    if (!s)
        fprintf(stderr, "kestrel: diff: %s\n", why);
    else
        rc = writer_write_file(writers_find("pprof"), m, s, out_path) ? 1 : 0;
    summary_free(s);
    profile_free(m);
    return rc;
}

int cmd_diff(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"state", required_argument, 0, 's'}, {"sample-type", required_argument, 0, 't'},
        {"absolute", no_argument, 0, 'a'},    {"sort", required_argument, 0, 'S'},
        {"top", required_argument, 0, 'n'},   {"alpha", required_argument, 0, 'A'},
        {"format", required_argument, 0, 'f'}, {"output", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},        {0, 0, 0, 0}};
    const char *type = NULL, *format = NULL, *out = "-";
    int state = PROFILE_RUNNING, absolute = 0, by_delta = 0;
    long top = 10;
    double alpha = 0.05;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+hn:o:", longopts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'h': return fputs(usage, stdout), 0;
        case 's':
            if (cli_parse_state(optarg, &state))
                return cli_usage_error("diff", "--state takes running, waiting or all");
            break;
        case 't': type = optarg; break;
        case 'a': absolute = 1; break;
        case 'S':
            if (strcmp(optarg, "z") && strcmp(optarg, "delta"))
                return cli_usage_error("diff", "--sort takes z or delta");
            by_delta = !strcmp(optarg, "delta");
            break;
        case 'n':
            top = strtol(optarg, &end, 10);
            if (*end || top < 1) return cli_usage_error("diff", "--top takes a positive number");
            break;
        case 'A':
            alpha = strtod(optarg, &end);
            if (*end || !(alpha > 0 && alpha < 1))
                return cli_usage_error("diff", "--alpha takes a number between 0 and 1");
            break;
        case 'f':
            if (strcmp(optarg, "folded") && strcmp(optarg, "pprof") && strcmp(optarg, "html") &&
                strcmp(optarg, "json"))
                return cli_usage_error("diff", "--format takes folded, pprof, html or json");
            format = optarg;
            break;
        case 'o': out = optarg; break;
        default:
            return cli_usage_error("diff", "unknown option or missing value: %s", argv[optind - 1]);
        }
    }
    if (optind != argc - 2) return cli_usage_error("diff", "two profiles expected, BASE and NEW");
    struct diff_input in[2] = {{0}};
    int rc = 1;
    if (load(argv[optind], type, state, absolute, &in[0])) goto out;
    if (load(argv[optind + 1], type, state, absolute, &in[1])) goto out;
    if (in[0].p->kind != in[1].p->kind) {
        fprintf(stderr, "kestrel: diff: %s is a %s profile and %s a %s one: they cannot be "
                        "compared\n",
                argv[optind], in[0].p->kind == PROFILE_CPU ? "CPU" : "heap", argv[optind + 1],
                in[1].p->kind == PROFILE_CPU ? "CPU" : "heap");
        goto out;
    }
    const char *ta = in[0].p->sample_types[in[0].s->type].type;
    const char *tb = in[1].p->sample_types[in[1].s->type].type;
    if (strcmp(ta, tb)) {
        fprintf(stderr, "kestrel: diff: BASE's sample type is %s and NEW's %s: choose one with "
                        "--sample-type\n",
                ta, tb);
        goto out;
    }
    if (!in[0].s->n_samples || !in[1].s->n_samples) {
        fprintf(stderr, "kestrel: diff: %s has no samples to compare%s\n",
                in[0].s->n_samples ? argv[optind + 1] : argv[optind],
                in[0].p->kind == PROFILE_CPU && state == PROFILE_RUNNING
                    ? " (on-CPU; --state all counts waiting ones too)"
                    : "");
        goto out;
    }
    struct diff *d = diff_build(in[0].s, in[1].s, absolute, alpha);
    if (!d) {
        fprintf(stderr, "kestrel: diff: out of memory\n");
        goto out;
    }
    if (format) {
        rc = write_format(format, out, in, d);
    } else {
        struct report_diff_options o = {(size_t)top, by_delta, report_wants_colour(stdout)};
        rc = report_diff_write(d, &o, stdout) ? 1 : 0;
        if (rc) fprintf(stderr, "kestrel: stdout: write error\n");
    }
    diff_free(d);
out:
    for (int i = 0; i < 2; i++) {
        summary_free(in[i].s);
        profile_free(in[i].p);
    }
    return rc;
}
