/* A streamed raw profile (docs/raw-format.md, "Streamed"): the runtime appends
 * self-contained chunks as the program runs, each a JSON object — chunk 0 with the
 * header, every chunk with what the tables gained since the one before and the counts
 * so far, the closing one with what only the end knows. Here the chunks are joined into
 * the one document read_raw_json reads: top-level values from the last chunk that gave
 * them, the tables' entries in order ("images_from"/"threads_from" say where a chunk's
 * entries start, replacing what was there). A file cut inside a chunk (the process was
 * killed as it wrote) is read to its last whole chunk, and the cut is said. */
#ifndef KESTREL_RAW_CHUNKS_H
#define KESTREL_RAW_CHUNKS_H
#include "analysis/readers/raw_scan.h"

#include <stddef.h>

struct raw_chunks {
    unsigned chunks;  /* whole chunks read */
    int closed;       /* the closing chunk was among them */
    size_t cut_bytes; /* bytes after the last whole chunk, not read */
};

/* 1 when buf starts as a streamed file does (its first key is "chunk"). */
int raw_chunks_is_stream(const char *buf, size_t len);

/* The joined document, malloc'd (*out_len its length), and what was read in *info; NULL
 * with the reason in why (no whole chunk, chunks out of order, out of memory). */
char *raw_chunks_join(const char *buf, size_t len, size_t *out_len, struct raw_chunks *info,
                      char *why, size_t why_size);
#endif
