/* The accuracy benchmark's peers as ground-truth profilers (truth_peers.c). */
#ifndef KESTREL_BENCH_TRUTH_PEERS_H
#define KESTREL_BENCH_TRUTH_PEERS_H
#include <stddef.h>

#include "truth/truth.h"

#define PEER_LIBPROFILER "/usr/lib/x86_64-linux-gnu/libprofiler.so.0"

extern const struct truth_profiler peer_perf_fp, peer_perf_dwarf, peer_gperftools,
    peer_gperftools_pt;

/* The peers' outputs in the profile model; `text` is modified. NULL with why. */
struct profile *peer_parse_perf_script(char *text, char *why, size_t why_size);
struct profile *peer_parse_collapsed(char *text, char *why, size_t why_size);
#endif
