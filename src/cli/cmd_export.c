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
    fputs("usage: kestrel export --format FORMAT [-o OUT] [--sample-type TYPE] [--binary PATH]\n"
          "                      INPUT\n"
          "\n"
          "Writes INPUT (a raw CPU profile or a pprof file) in another format, to OUT or,\n"
          "without -o, to stdout. A failed export leaves no partial file.\n"
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
          "  --binary PATH       the profiled program's file, when it moved since the run\n"
          "  -h, --help          this text\n",
          out);
}

int cli_write_export(const struct writer *w, const char *input, const struct cli_load_options *o,
                     const char *out)
{
    struct profile *p;
    struct summary *s;
    if (cli_load(input, o, &p, &s)) return 1;
    int rc = writer_write_file(w, p, s, out);
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
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    struct cli_load_options o = {0};
    const char *format = NULL, *out = "-";
    int c;
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
        else
            return cli_usage_error("export", "unknown option or missing value: %s",
                                   argv[optind - 1]);
    }
    if (!format) return cli_usage_error("export", "--format is required");
    const struct writer *w = writers_find(format);
    if (!w) return cli_usage_error("export", "unknown format \"%s\"", format);
    if (optind != argc - 1) return cli_usage_error("export", "one INPUT file expected");
    return cli_write_export(w, argv[optind], &o, out);
}
