/* The raw profile reader's fast path (read_raw.c): a scanner for the two arrays that
 * make up almost all of a raw profile, "stacks" and "samples" — millions of small
 * integers in arrays of arrays. jansson builds a node for every one of them, which was
 * most of reading's time and nearly all of its peak memory at a million samples
 * (BENCHMARKS.md `## CLI`). The reader finds the two arrays with raw_scan_locate,
 * reads them row by row with raw_scan_rows, and gives jansson the rest of the
 * document (raw_scan_rest). The scanner accepts only what jansson would read as the
 * same integers; on anything else it says so, and the reader hands the whole document
 * to jansson, so every error message and every accepted document stay jansson's. */
#ifndef KESTREL_RAW_SCAN_H
#define KESTREL_RAW_SCAN_H
#include <stddef.h>
#include <stdint.h>

/* A value's bytes in the document: [b, e). */
struct raw_span {
    const char *b, *e;
};

/* Finds the values of the top-level keys "stacks" and "samples" of the JSON object
 * in buf, skipping every other value without validating it (jansson does, in the
 * rest). 0 when the document is one object holding each key once, no top-level key
 * has an escape (jansson would compare it unescaped), and nothing but whitespace
 * follows it; -1 otherwise. */
int raw_scan_locate(const char *buf, size_t len, struct raw_span *stacks, struct raw_span *samples);

/* Called for row i of an array of integer arrays: n is the row's length, v holds its
 * first min(n, max) integers. A nonzero result stops the scan and is returned. */
typedef int (*raw_row_fn)(void *ctx, size_t i, const int64_t *v, size_t n);

/* Reads span as an array of arrays of JSON integers (each within int64), calling fn
 * (when not NULL) for every row with v as its buffer of max entries; *rows gets the
 * number of rows. Returns 0; -1 when span holds anything else (a real number, a
 * string, a nested value, a syntax error: jansson's to judge); or fn's result. */
int raw_scan_rows(struct raw_span span, int64_t *v, size_t max, raw_row_fn fn, void *ctx,
                  size_t *rows);

/* raw_scan_rows for arrays of addresses: each integer within [0, 2^64-1] (the raw
 * format's frames are any u64; what is an address is profile_check's and the
 * symbolizer's to say), so a negative one is jansson's to judge. */
typedef int (*raw_addr_row_fn)(void *ctx, size_t i, const uint64_t *v, size_t n);
int raw_scan_addr_rows(struct raw_span span, uint64_t *v, size_t max, raw_addr_row_fn fn,
                       void *ctx, size_t *rows);

/* buf with the values at spans a and b (disjoint) each replaced by `[]`, malloc'd;
 * *out_len gets its length. NULL when memory runs out. */
char *raw_scan_rest(const char *buf, size_t len, struct raw_span a, struct raw_span b,
                    size_t *out_len);

/* The object at [b, e) (after whitespace), member by member: fn gets each key (no
 * escapes) and its value's span, unvalidated; a nonzero result stops the scan. 0 with
 * *end just past the object, or -1 when it is not one, or does not end before e. */
typedef int (*raw_member_fn)(void *ctx, const char *key, size_t key_len, struct raw_span v);
int raw_scan_object(const char *b, const char *e, raw_member_fn fn, void *ctx, const char **end);
/* The array at span, element by element (each value's span, unvalidated). 0, or -1 when
 * it is not an array or fn said stop. */
int raw_scan_elements(struct raw_span span, int (*fn)(void *ctx, struct raw_span v), void *ctx);
#endif
