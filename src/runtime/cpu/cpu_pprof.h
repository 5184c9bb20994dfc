/* cpu_pprof — a CPU window (sink.h) as a gzip'd pprof, unsymbolized, the way Go's
 * /debug/pprof/profile serves one: sample types samples/count and cpu/nanoseconds, the
 * period of the rate, `thread` and `state` labels (and a numeric `tid`), locations as
 * addresses in mappings with path, offsets and build id.
 *
 * Runs on the HTTP thread, in mmap'd scratch. Signal handlers: nothing. Inside malloc:
 * nothing. */
#ifndef KESTREL_CPU_PPROF_H
#define KESTREL_CPU_PPROF_H
#include "common/pbwire.h"
#include "runtime/cpu/sink.h"

/* Encodes `w` into `out` (gzip'd). With `waiting`, the window's waiting samples too
 * (state label "waiting"); else its running samples alone, as a CPU profile counts
 * them. 0 or -errno. */
int cpu_pprof_write(const struct sink_window *w, int waiting, struct pb_buf *out);
#endif
