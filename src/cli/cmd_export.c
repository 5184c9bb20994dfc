/* kestrel export: one export format of a raw CPU profile or a pprof file. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "analysis/writers/writers.h"
#include "cli/cli.h"
#include "cli/commands.h"

static void print_usage(FILE *out)
{
    fputs("usage: kestrel export --format FORMAT [-o OUT] [--sample-type TYPE] [--state STATE]\n"
          "                      [--process PID|NAME] [--binary PATH] INPUT\n"
          "\n"
          "Writes INPUT (a raw CPU profile, a STEM.raw folder of a process tree, or a\n"
          "pprof file) in another format, to OUT or, without -o, to stdout. A failed\n"
          "export leaves no partial file.\n"
          "\n"
          "  --format FORMAT     one of:",
          out);
    size_t n;
    const struct writer *const *w = writers_all(&n);
    for (size_t i = 0; i < n; i++)
        fprintf(out, " %s", w[i]->format);
    fputs("\n"
          "  -o, --output OUT    the file to write (\"-\": stdout)\n"
          "  --sample-type TYPE  the value exported (default: the profile's default)\n"
          "  --state STATE       the samples of a CPU profile that folded, speedscope,\n"
          "                      cpuprofile and summary hold: running (on-CPU, the\n"
          "                      default), waiting, or all with each waiting one marked;\n"
          "                      pprof and html hold every sample with its state\n"
          "  --process PID|NAME  that process of a tree alone\n"
          "  --binary PATH       the profiled program's file, when it moved since the run\n"
          "  -h, --help          this text\n",
          out);
}

int cli_write_export(const struct writer *w, const char *input, const struct cli_load_options *o,
                     int state, const char *out)
{
    struct profile *p;
    struct summary *s;
    if (cli_load(input, o, &p, &s)) return 1;
    int failed = 0;
    struct summary *only = w->every_state ? NULL : cli_state_summary(p, s, state, &failed);
    int rc = failed ? -1 : writer_write_file(w, p, only ? only : s, out);
    summary_free(only);
    if (rc == -EINVAL)
        fprintf(stderr, "kestrel: %s: a %s file cannot hold this %s profile\n", input, w->format,
                p->kind == PROFILE_HEAP ? "heap" : "CPU");
    summary_free(s);
    profile_free(p);
    return rc ? 1 : 0;
}

int cmd_export(int argc, char **argv)
{
    static const struct option longopts[] = {{"format", required_argument, 0, 'f'},
                                             {"output", required_argument, 0, 'o'},
                                             {"sample-type", required_argument, 0, 't'},
                                             {"binary", required_argument, 0, 'b'},
                                             {"state", required_argument, 0, 's'},
                                             {"process", required_argument, 0, 'P'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    struct cli_load_options o = {0};
    const char *format = NULL, *out = "-";
    int c, state = PROFILE_RUNNING;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+ho:f:", longopts, NULL)) != -1) {
        if (c == 'h') return print_usage(stdout), 0;
        if (c == 'f')
            format = optarg;
        else if (c == 'o')
            out = optarg;
        else if (c == 't')
            o.sample_type = optarg;
        else if (c == 'b')
            o.binary = optarg;
        else if (c == 'P')
            o.process = optarg;
        else if (c == 's') {
            if (cli_parse_state(optarg, &state))
                return cli_usage_error("export", "--state is running, waiting or all, not \"%s\"",
                                       optarg);
        } else
            return cli_usage_error("export", "unknown option or missing value: %s",
                                   argv[optind - 1]);
    }
    if (!format) return cli_usage_error("export", "--format is required");
    const struct writer *w = writers_find(format);
    if (!w) return cli_usage_error("export", "unknown format \"%s\"", format);
    if (optind != argc - 1) return cli_usage_error("export", "one INPUT file expected");
    o.state = w->every_state ? SUMMARY_ALL_STATES : state;
    return cli_write_export(w, argv[optind], &o, state, out);
}
