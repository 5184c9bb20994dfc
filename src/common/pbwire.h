/* Protocol-buffer wire format: an encoder into a growable buffer and a bounds-checked
 * decoder. Shared by the runtime (heap pprof) and the CLI (pprof reader and writer).
 *
 * libc only and malloc-free: the encoder's buffer is grown with mmap/mremap, so the
 * heap profiler can encode while malloc is interposed. Not async-signal-safe. */
#ifndef KESTREL_PBWIRE_H
#define KESTREL_PBWIRE_H
#include <stddef.h>
#include <stdint.h>

enum pb_wire { PB_VARINT = 0, PB_FIXED64 = 1, PB_LEN = 2, PB_FIXED32 = 5 };

/* An encoder. A failed allocation sets `failed`; every later call is a no-op, so a
 * caller checks once at the end. */
struct pb_buf {
    uint8_t *data; /* mmap'd bytes, NULL until the first write */
    size_t len;    /* bytes written */
    size_t cap;    /* bytes mapped */
    int failed;    /* nonzero once a grow failed: the contents are incomplete */
};

void pb_buf_free(struct pb_buf *b);
void pb_put_raw(struct pb_buf *b, const void *p, size_t n);
void pb_put_varint(struct pb_buf *b, uint64_t v);
void pb_put_tag(struct pb_buf *b, uint32_t field, enum pb_wire wire);
void pb_put_uint(struct pb_buf *b, uint32_t field, uint64_t v);   /* skipped when 0 */
void pb_put_int(struct pb_buf *b, uint32_t field, int64_t v);     /* int64, skipped when 0 */
void pb_put_bytes(struct pb_buf *b, uint32_t field, const void *p, size_t n); /* always */
void pb_put_string(struct pb_buf *b, uint32_t field, const char *s); /* always */
/* A packed repeated uint64 field (skipped when n == 0). */
void pb_put_packed(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n);
/* Nested messages: begin returns a mark, end patches the length in front of it. */
size_t pb_begin(struct pb_buf *b, uint32_t field);
void pb_end(struct pb_buf *b, size_t mark);

/* A decoder over [p, end). Every read checks bounds; a malformed input sets `err`
 * and makes every later read return 0. */
struct pb_reader {
    const uint8_t *p;
    const uint8_t *end;
    int err; /* nonzero after truncated or malformed input */
};

struct pb_field {
    uint32_t number;
    enum pb_wire wire;
    uint64_t value;     /* PB_VARINT, PB_FIXED64, PB_FIXED32 */
    const uint8_t *ptr; /* PB_LEN: the bytes */
    size_t len;         /* PB_LEN: their length */
};

void pb_reader_init(struct pb_reader *r, const void *p, size_t n);
/* Reads the next field; returns 1 if one was read, 0 at the end or on error (check
 * r->err to tell them apart). Unknown wire types (groups) are errors. */
int pb_next(struct pb_reader *r, struct pb_field *f);
/* Iterates a packed (or single unpacked) repeated varint field's values. */
int pb_next_packed(struct pb_reader *r, uint64_t *v);
#endif
