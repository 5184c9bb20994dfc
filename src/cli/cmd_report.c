/* kestrel report: the terminal report of a raw CPU profile or a pprof file. */
#include <getopt.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/commands.h"

static const char usage[] =
    "usage: kestrel report [--sample-type TYPE] [--state STATE] [--process PID|NAME]\n"
    "                      [--wide] [--binary PATH] [--heap] INPUT\n"
    "\n"
    "Prints the terminal report of INPUT: a raw CPU profile (JSON, as the runtime\n"
    "writes it), a STEM.raw folder (every process `kestrel record` profiled), or a\n"
    "pprof file (gzip or not; kestrel's or another tool's).\n"
    "\n"
    "  --sample-type TYPE  the value to rank by (e.g. cpu, samples, inuse_space,\n"
    "                      alloc_space); default: samples for CPU, inuse_space for heap\n"
    "  --state STATE       which samples of a CPU profile the table counts: running\n"
    "                      (on-CPU, the default), waiting (off-CPU) or all; the\n"
    "                      running/waiting split above it is always of every sample\n"
    "  --wide              function names whole, however wide (else shortened to fit\n"
    "                      the terminal: parameters, then template arguments, first)\n"
    "  --process PID|NAME  that process of a tree alone (a pid, or the name a program\n"
    "                      was invoked by)\n"
    "  --heap              of a STEM.raw folder: the heap profiles of its processes\n"
    "                      (<pid>.heap.pb.gz, kestrel record --heap), summed as one tree\n"
    "  --binary PATH       the profiled program's file, when it moved since the run\n"
    "                      (used only if its build id matches the recorded one)\n"
    "  -h, --help          this text\n";

int cmd_report(int argc, char **argv)
{
    static const struct option longopts[] = {{"sample-type", required_argument, 0, 't'},
                                             {"binary", required_argument, 0, 'b'},
                                             {"state", required_argument, 0, 's'},
                                             {"wide", no_argument, 0, 'w'},
                                             {"process", required_argument, 0, 'P'},
                                             {"heap", no_argument, 0, 'H'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    struct cli_load_options o = {0};
    int c, state = PROFILE_RUNNING, wide = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        if (c == 'h') return fputs(usage, stdout), 0;
        if (c == 't')
            o.sample_type = optarg;
        else if (c == 'w')
            wide = 1;
        else if (c == 'b')
            o.binary = optarg;
        else if (c == 'P')
            o.process = optarg;
        else if (c == 'H')
            o.heap = 1;
        else if (c == 's') {
            if (cli_parse_state(optarg, &state))
                return cli_usage_error("report", "--state is running, waiting or all, not \"%s\"",
                                       optarg);
        } else
            return cli_usage_error("report", "unknown option %s", argv[optind - 1]);
    }
    if (optind != argc - 1) return cli_usage_error("report", "one INPUT file expected");
    o.state = state;
    struct profile *p;
    struct summary *s;
    if (cli_load(argv[optind], &o, &p, &s)) return 1;
    int rc = cli_report(p, s, state, wide, stdout, "stdout") ? 1 : 0;
    summary_free(s);
    profile_free(p);
    return rc;
}
