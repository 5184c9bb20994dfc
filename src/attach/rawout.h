/* rawout — writes one target's raw CPU profile (FORMATS.md §1 with kestrel's fields,
 * docs/raw-format.md), the same format the runtime writes, so that the CLI's readers,
 * symbolizer and writers take it unchanged. Written to a temporary file renamed into
 * place. */
#ifndef KESTREL_ATTACH_RAWOUT_H
#define KESTREL_ATTACH_RAWOUT_H
#include "attach/target.h"

struct rawout_meta {
    unsigned rate_hz, requested_hz;
    const char *unwind;                  /* the walk's mode's name */
    uint64_t start_unix_ns, end_unix_ns;
    const char *const *stat_names;       /* engine_stats */
    const uint64_t *stat_values;
    size_t n_stats;
    const char *const *notes;            /* engine_notes */
    size_t n_notes;
    uint64_t dropped;
};

/* Writes t's profile to path. 0, or -errno with nothing left at path. */
int rawout_write(const char *path, const struct target *t, const struct rawout_meta *m);
#endif
