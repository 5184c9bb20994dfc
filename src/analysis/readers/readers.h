/* Readers: each turns one input format into the profile model (profile.h).
 *   read_raw.c    raw CPU profile JSON v1 (FORMATS.md §1), with jansson
 *   read_pprof.c  pprof protobuf, gzip-compressed or not (ours or any tool's)
 * read_profile() picks one by content, not by file name.
 *
 * Every reader checks everything it is given (types, indices, sizes, UTF-8) and on
 * bad input returns NULL with a one-line reason in why; it never crashes and never
 * returns a half-filled profile. */
#ifndef KESTREL_READERS_H
#define KESTREL_READERS_H
#include <stddef.h>

#include "analysis/model/profile.h"

struct profile *read_profile(const char *path, char *why, size_t why_size);

struct profile *read_raw_json(const char *buf, size_t len, char *why, size_t why_size);
/* buf may be gzip-compressed. */
struct profile *read_pprof(const void *buf, size_t len, char *why, size_t why_size);
#endif
