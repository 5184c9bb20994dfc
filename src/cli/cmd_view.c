/* kestrel view: writes the self-contained HTML viewer (DESIGN.md §3) of a raw CPU
 * profile or a pprof file. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/writers/writers.h"
#include "cli/cli.h"
#include "cli/fetch.h"
#include "cli/commands.h"

static const char usage[] =
    "usage: kestrel view [-o OUT] [--sample-type TYPE] [--process PID|NAME] [--binary PATH]\n"
    "                    INPUT\n"
    "\n"
    "Writes the flame-graph viewer of INPUT (a raw CPU profile, a STEM.raw folder of a\n"
    "process tree, or a pprof file): one\n"
    "HTML file with the profile and the source of its hottest files inside, opened\n"
    "by double-click, no network. Without -o it goes beside INPUT, as INPUT's name\n"
    "without .raw.json, .json, .pb.gz or .pb, plus .html.\n"
    "\n"
    "  -o, --output OUT    the file to write (\"-\": stdout)\n"
    "  --sample-type TYPE  the type shown first (default: the profile's default)\n"
    "  --process PID|NAME  that process of a tree alone (the page filters by process too)\n"
    "  --binary PATH       the profiled program's file, when it moved since the run\n"
    "  -h, --help          this text\n";

/* INPUT without its profile suffix, plus ".html"; malloc'd, NULL when out of memory. */
static char *view_default_output(const char *input)
{
    if (fetch_is_url(input)) { /* http://.../debug/pprof/profile?... -> profile.html */
        char name[256];
        fetch_url_name(input, name, sizeof name);
        char *out = malloc(strlen(name) + sizeof ".html");
        if (out) sprintf(out, "%s.html", name);
        return out;
    }
    static const char *const suffixes[] = {".raw.json", ".json", ".pb.gz", ".pb"};
    size_t len = strlen(input);
    while (len > 1 && input[len - 1] == '/') /* a STEM.raw/ folder: STEM.raw.html */
        len--;
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        size_t n = strlen(suffixes[i]);
        if (len > n && !strncmp(input + len - n, suffixes[i], n) && input[len - n - 1] != '/') {
            len -= n;
            break;
        }
    }
    char *out = malloc(len + sizeof ".html");
    if (out) snprintf(out, len + sizeof ".html", "%.*s.html", (int)len, input);
    return out;
}

int cmd_view(int argc, char **argv)
{
    static const struct option longopts[] = {{"output", required_argument, 0, 'o'},
                                             {"sample-type", required_argument, 0, 't'},
                                             {"binary", required_argument, 0, 'b'},
                                             {"process", required_argument, 0, 'P'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    struct cli_load_options o = {0};
    const char *out = NULL;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+ho:", longopts, NULL)) != -1) {
        if (c == 'h') return fputs(usage, stdout), 0;
        if (c == 'o')
            out = optarg;
        else if (c == 't')
            o.sample_type = optarg;
        else if (c == 'b')
            o.binary = optarg;
        else if (c == 'P')
            o.process = optarg;
        else
            return cli_usage_error("view", "unknown option or missing value: %s",
                                   argv[optind - 1]);
    }
    if (optind != argc - 1) return cli_usage_error("view", "one INPUT file expected");
    const struct writer *w = writers_find("html");
    if (!w) {
        fprintf(stderr, "kestrel: view: this build has no HTML viewer\n");
        return 1;
    }
    char *path = out ? strdup(out) : view_default_output(argv[optind]);
    if (!path) {
        fprintf(stderr, "kestrel: view: out of memory\n");
        return 1;
    }
    o.state = SUMMARY_ALL_STATES;
    int rc = cli_write_export(w, argv[optind], &o, SUMMARY_ALL_STATES, path);
    if (!rc && strcmp(path, "-")) fprintf(stderr, "kestrel: wrote %s\n", path);
    free(path);
    return rc;
}
