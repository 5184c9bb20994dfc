/* Output writers: one per export format (FORMATS.md §3), each in its own file
 * (write_speedscope.c, write_folded.c, ...), all reading the same profile model and
 * the aggregation already computed for it (a writer never re-derives a share).
 *
 * A writer declares itself as
 *     const struct writer writer_folded = {"folded", ".folded", write_folded, 0};
 * and writers.c lists it in the one table that `kestrel export` and `kestrel record`
 * iterate. */
#ifndef KESTREL_WRITERS_H
#define KESTREL_WRITERS_H
#include <stdio.h>

struct profile;
struct summary;

struct writer {
    const char *format; /* the name `export --format` takes: "speedscope", "folded"... */
    const char *suffix; /* appended to a stem: ".speedscope.json", ".folded"... */
    /* Writes the whole output to out. Returns 0, or a negative errno (-EINVAL when
     * the profile cannot be expressed in this format). Prints nothing; the caller
     * reports failures and removes the partial file. */
    int (*write)(const struct profile *p, const struct summary *s, FILE *out);
    /* 1: the format holds every sample with its state (pprof's `state` label, the
     * viewer's own state selector) and is given the summary of every state. 0 (the
     * flame-graph formats and profile.json): the samples of the state asked for,
     * on-CPU by default. */
    int every_state;
};

/* 1 for a format written by `kestrel export` alone, not among `kestrel record`'s files
 * (otlp: a request for a receiver, not a file a user opens). */
int writer_export_only(const struct writer *w);

/* Every writer, in FORMATS.md §3 order; n gets the count. */
const struct writer *const *writers_all(size_t *n);

/* The writer for a format name, or NULL. */
const struct writer *writers_find(const char *format);

/* Writes through w into path, never leaving a partial output. A regular file (or a
 * new path) is written into a temporary file in the same directory, renamed over
 * path only when the writer and every write and close succeeded (a symlink to a
 * regular file keeps the symlink; its target is replaced); on any failure the
 * temporary file is removed, so path is either the complete new output or untouched.
 * A character device or a FIFO is written in place, never replaced, once the whole
 * output is made in memory; a directory, block device or socket is refused. path
 * "-" writes to stdout the same way. Returns 0, or a negative errno; prints
 * `kestrel: <path>: <why>` to stderr on failure (the failing call's own reason, e.g.
 * "No space left on device", or the missing directory), except for -EINVAL (the
 * format cannot hold this profile, e.g. a heap profile as a V8 CPU profile), which
 * the caller reports or skips as it sees fit. */
int writer_write_file(const struct writer *w, const struct profile *p, const struct summary *s,
                      const char *path);

/* The general form: any function that writes a FILE, atomically into path. */
int atomic_write(const char *path, int (*fn)(void *ctx, FILE *out), void *ctx);
#endif
