/* rawjson — writes the raw CPU profile, JSON v1 with kestrel's optional fields
 * (FORMATS.md §1; docs/raw-format.md lists every field written), from the registry's
 * thread records, the sink and the image table: either whole at the end, to a
 * temporary file renamed into place (rawjson_write), or streamed as the program runs,
 * a sequence of self-contained chunks appended to the file (rawjson_stream_*), so that a
 * process that ends without a word (SIGKILL, a raw exit_group) leaves all but its last
 * chunk.
 *
 * Signal handlers: nothing. Inside malloc: nothing (an mmap'd buffer, write(2)). */
#ifndef KESTREL_RAWJSON_H
#define KESTREL_RAWJSON_H
#include "runtime/cpu/engine.h"
#include "runtime/rtfd.h"

#include <stdint.h>

struct rawjson_meta {
    const char *engine;          /* "signal" or "perf" */
    const char *engine_fallback; /* why `auto` did not pick perf, or NULL */
    const char *engine_choice;   /* what `auto` chose and why, or NULL */
    const struct engine_stat *engine_stats; /* the engine's own counts */
    size_t n_engine_stats;
    const char *const *engine_notes; /* the engine's sentences about what is missing */
    size_t n_engine_notes;
    unsigned rate_hz;            /* the rate sampled at (clamped) */
    unsigned requested_hz;       /* the rate asked for */
    int pid;
    int ppid;                    /* the parent's pid when the image started */
    unsigned exec_gen;           /* execs of profiled images that led to this one */
    const char *invoked;         /* argv[0] as the image started (a program may rewrite
                                  * it later: servers write their status there), or NULL */
    uint64_t start_unix_ns, end_unix_ns;
};

/* Writes the file at `path`. 0 or -errno; on error no file is left at `path` or at
 * its temporary name. */
int rawjson_write(const char *path, const struct rawjson_meta *m);

/* A streamed file: what its chunks wrote so far. Only the engine thread touches it. */
struct rawjson_stream {
    int on;             /* streaming (a regular file, or nothing yet, at path) */
    int created;        /* the first chunk created the file */
    char path[4200];
    struct rtfd id;     /* the file's identity; fd open only while a chunk is written */
    uint64_t size;      /* bytes of whole chunks in the file */
    unsigned chunks;    /* chunks written */
    size_t images, maps, threads, stacks, rows; /* table entries written */
    void *buf;          /* the chunks' write buffer, mapped once for the session
                           rather than once a chunk (fewer changes to the mappings an
                           unregistered fiber's stack is known by) */
};

/* Sets up a stream to `path` (nothing is opened yet). -ENOTSUP when what is at path is
 * not a regular file: then the profile is written whole at the end. */
int rawjson_stream_begin(struct rawjson_stream *s, const char *path);
/* Appends one chunk: what the tables gained since the last one; `closing`, the last,
 * with what only the end knows. The file is opened and closed around it. 0, or -errno
 * with the file as it was before (the entries go in the next chunk). */
int rawjson_stream_chunk(struct rawjson_stream *s, const struct rawjson_meta *m, int closing);
#endif
