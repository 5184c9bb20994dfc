/* kestrel: the command-line front end. Dispatches to one command per file. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"

static const struct command commands[] = {
    {"record", "run a program under the profiler, then report and export", cmd_record},
    {"run", "compile one C file for profiling, then record it", cmd_run},
    {"report", "print the report of a raw CPU profile or a pprof file", cmd_report},
    {"export", "write a profile as speedscope, cpuprofile, folded, pprof, ...", cmd_export},
    {"view", "write the flame-graph viewer (one HTML file) of a profile", cmd_view},
    {"diff", "what changed between two profiles, and whether it is real", cmd_diff},
    {"calibrate", "how far this host lets a profile be trusted", cmd_calibrate},
    {NULL, NULL, NULL},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: kestrel <command> [options]\n\n"
                 "kestrel is a sampling CPU and heap profiler for native Linux programs.\n\n"
                 "commands:\n");
    for (const struct command *c = commands; c->name; c++)
        fprintf(out, "  %-10s %s\n", c->name, c->summary);
    fprintf(out, "\n`kestrel <command> --help` describes a command; `kestrel --version` says\n"
                 "the version and the build. The manual: man kestrel.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) return cmd_version();
    for (const struct command *c = commands; c->name; c++)
        if (!strcmp(argv[1], c->name)) return c->run(argc - 1, argv + 1);
    fprintf(stderr, "kestrel: %s: unknown command (see kestrel --help)\n", argv[1]);
    return 2;
}
