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

/* Bounded input, bounded memory (docs/cli.md, "Input limits"): a profile file is read
 * whole, at most READ_MAX_FILE bytes; gzip content inflates to at most
 * READ_GZIP_RATIO times the compressed size plus READ_MEMORY_BASE, and never past
 * READ_MAX_INFLATED; reading the content then takes at most read_memory_budget() of
 * the content's size besides the content itself, else the reader stops and says so
 * (read_over_budget). A hostile file of a few KB cannot take gigabytes. */
#define READ_MAX_FILE (1ull << 30)
#define READ_MAX_INFLATED (1ull << 30)
#define READ_GZIP_RATIO 64
#define READ_MEMORY_BASE (64ull << 20)
#define READ_MEMORY_PER_BYTE 16
#define READ_MEMORY_MAX (4ull << 30)

/* The memory a reader may take for content of n bytes: READ_MEMORY_BASE plus
 * READ_MEMORY_PER_BYTE per byte, at most READ_MEMORY_MAX. */
size_t read_memory_budget(size_t n);
/* Says in why that reading n bytes of content needs more than budget; returns -1. */
int read_over_budget(char *why, size_t why_size, size_t budget, size_t n);

struct profile *read_profile(const char *path, char *why, size_t why_size);

struct profile *read_raw_json(const char *buf, size_t len, char *why, size_t why_size);
/* buf may be gzip-compressed. */
struct profile *read_pprof(const void *buf, size_t len, char *why, size_t why_size);
#endif
