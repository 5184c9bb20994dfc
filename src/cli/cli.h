/* What kestrel's commands share: loading a profile through the whole analysis
 * pipeline (read, symbolize, aggregate) and writing every export of FORMATS.md §3. */
#ifndef KESTREL_CLI_H
#define KESTREL_CLI_H
#include <stdio.h>

#include "analysis/model/profile.h"
#include "analysis/aggregate/summary.h"

struct cli_load_options {
    const char *binary;      /* --binary, or NULL */
    const char *sample_type; /* --sample-type, or NULL for the profile's default */
    const char *process;     /* --process PID|NAME: that process of a tree alone; NULL all */
    int heap;                /* a STEM.raw folder: its heap profiles (<pid>.heap.pb.gz) */
    int state;               /* the samples the table counts (cli_parse_state), so that
                                warnings' shares are on its base; 0: running */
};

/* Reads path (raw JSON or pprof, or a STEM.raw/ folder: the tree of processes
 * `kestrel record` ran, merged), symbolizes it and aggregates it. On failure prints
 * `kestrel: <path>: <why>` and returns -1. */
int cli_load(const char *path, const struct cli_load_options *o, struct profile **p,
             struct summary **s);

struct writer;
/* Loads input and writes it with w to out ("-": stdout), leaving no partial file; what
 * `export` and `view` do: the samples of `state` for a flame-graph format, every
 * sample for one that holds every state. Returns 0, or 1 after saying why on stderr. */
int cli_write_export(const struct writer *w, const char *input, const struct cli_load_options *o,
                     int state, const char *out);

/* Writes <stem><suffix> for every writer in the table: the flame-graph formats of
 * the samples of `state` (cli_parse_state), pprof and the viewer of every sample
 * (s aggregates them all). Returns the number that failed (each already reported). */
int cli_export_all(const struct profile *p, const struct summary *s, int state,
                   const char *stem);

/* The summary of one state's samples for a CPU profile (NULL: s itself serves: a heap
 * profile, or every state). *failed is set, after a message, when it cannot be built. */
struct summary *cli_state_summary(const struct profile *p, const struct summary *s, int state,
                                  int *failed);

/* `--state running|waiting|all`: the samples the report's table and the flame-graph
 * exports count. NULL means running: CPU questions are answered with on-CPU samples
 * (DESIGN.md §2). Returns 0, or -1 for any other word. */
int cli_parse_state(const char *word, int *state);

/* Prints the terminal report to out (named `out_name` in messages), its table over
 * the samples of `state` (a CPU profile's; a heap profile has no states and is
 * reported whole), with whole function names when `wide`. s aggregates every sample,
 * as the exports use it. Returns 0 or -1. */
int cli_report(const struct profile *p, const struct summary *s, int state, int wide,
               FILE *out, const char *out_name);

/* Usage errors: `kestrel <cmd>: <message>` and a pointer to --help; returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* 1 when the program execvp would run for name is a statically linked ELF file (no
 * PT_INTERP): LD_PRELOAD cannot load the runtime into it. 0 otherwise or unknown. */
int cli_static_program(const char *name);
/* Whether a program is set-user-ID or set-group-ID and kestrel runs it as someone
 * whose ids it would change: the loader then ignores LD_PRELOAD. */
int cli_setid_program(const char *name);

/* Ends kestrel by signal `sig`, as that signal's default action would have without
 * kestrel's handler or mask (output flushed first). Returns only for a signal whose
 * default is to be ignored. */
void cli_raise_default(int sig);

/* `kestrel record`'s settings; `kestrel run` fills the same ones. */
struct record_options {
    const char *hz;            /* -F; NULL: the runtime's default */
    const char *engine;        /* --engine auto|perf|signal; NULL: auto */
    const char *unwind;        /* --unwind auto|cfi|fp; NULL: auto */
    int heap;                  /* --heap given */
    const char *heap_path;     /* --heap=PATH; NULL: <stem>.heap.<pid>.raw.pb.gz */
    const char *heap_interval; /* --heap-interval=BYTES; NULL: the runtime's default */
    const char *stem;          /* -o; NULL: the program's base name */
    const char *binary;        /* --binary */
    const char *state;         /* --state for the report and exports; NULL: running */
    const char *http;          /* --http=ADDR: KESTREL_HTTP for the program; NULL: none */
    int wide;                  /* --wide: the report's names whole */
    const char *report;        /* --report=PATH; NULL: the terminal, else stderr */
    const char *process;       /* --process PID|NAME; NULL: every process */
    /* The attached mode (src/attach): record only. */
    const char *pids;          /* -p PID[,PID...]; NULL: none */
    int all;                   /* -a: every process */
    int attach;                /* --attach: start PROGRAM and sample it from outside */
    int children;              /* --children: the targets' fork children too */
    const char *duration;      /* --duration SECONDS; NULL: until the targets end or ^C */
};

/* Parses record's options from argv[1..]; returns the index of PROGRAM, or -1 after
 * printing a usage error (or 0 after --help, printed to stdout). */
int record_parse(int argc, char **argv, const char *cmd, struct record_options *o);

/* Runs argv[0..] under the runtime, then writes every export and prints the report.
 * Returns the program's exit status (re-raising the signal that ended it). */
int record_run(const struct record_options *o, char **argv);

/* record_run in two steps, for a caller with something to undo before kestrel ends as
 * the program did: record_program runs and reports, sets *status to the program's wait
 * status (-1 when it did not run: the result is then kestrel's exit status) and returns
 * 1 when the profile could not be read or written; record_exit(status, failed) then
 * returns record_run's result, or raises the signal that ended the program. */
int record_program(const struct record_options *o, char **argv, int *status);
int record_exit(int status, int failed);
#endif
