/* rawjson — writes the raw CPU profile, JSON v1 with kestrel's optional fields
 * (FORMATS.md §1; docs/raw-format.md lists every field written), from the registry's
 * thread records, the sink and the image table, to a temporary file renamed into
 * place, so that a reader never sees half a file.
 *
 * Signal handlers: nothing. Inside malloc: nothing (an mmap'd buffer, write(2)). */
#ifndef KESTREL_RAWJSON_H
#define KESTREL_RAWJSON_H
#include "runtime/cpu/engine.h"

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
    uint64_t start_unix_ns, end_unix_ns;
};

/* Writes the file at `path`. 0 or -errno; on error no file is left at `path` or at
 * its temporary name. */
int rawjson_write(const char *path, const struct rawjson_meta *m);
#endif
