/* Protocol-buffer wire format (see pbwire.h). No function here may run in a signal
 * handler; all of them may run inside malloc (they never call it). */
#include "common/pbwire.h"

#include <string.h>
#include <sys/mman.h>

/* ===== encoder ===== */

static int pb_grow(struct pb_buf *b, size_t need)
{
    if (b->failed) return 0;
    if (b->len + need <= b->cap) return 1;
    size_t cap = b->cap ? b->cap : 65536;
    while (cap < b->len + need) {
        if (cap > SIZE_MAX / 2) goto fail;
        cap *= 2;
    }
    void *p = b->data ? mremap(b->data, b->cap, cap, MREMAP_MAYMOVE)
                      : mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) goto fail;
    b->data = p;
    b->cap = cap;
    return 1;
fail:
    b->failed = 1;
    return 0;
}

void pb_buf_free(struct pb_buf *b)
{
    if (b->data) munmap(b->data, b->cap);
    memset(b, 0, sizeof *b);
}

void pb_put_raw(struct pb_buf *b, const void *p, size_t n)
{
    if (!pb_grow(b, n)) return;
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
}

void pb_put_varint(struct pb_buf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        tmp[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) tmp[n] |= 0x80;
        n++;
    } while (v);
    pb_put_raw(b, tmp, n);
}

void pb_put_tag(struct pb_buf *b, uint32_t field, enum pb_wire wire)
{
    pb_put_varint(b, ((uint64_t)field << 3) | (uint64_t)wire);
}

void pb_put_uint(struct pb_buf *b, uint32_t field, uint64_t v)
{
    if (!v) return;
    pb_put_tag(b, field, PB_VARINT);
    pb_put_varint(b, v);
}

void pb_put_int(struct pb_buf *b, uint32_t field, int64_t v)
{
    pb_put_uint(b, field, (uint64_t)v);
}

void pb_put_bytes(struct pb_buf *b, uint32_t field, const void *p, size_t n)
{
    pb_put_tag(b, field, PB_LEN);
    pb_put_varint(b, n);
    pb_put_raw(b, p, n);
}

void pb_put_string(struct pb_buf *b, uint32_t field, const char *s)
{
    pb_put_bytes(b, field, s, strlen(s));
}

void pb_put_packed(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n)
{
    if (!n) return;
    size_t mark = pb_begin(b, field);
    for (size_t i = 0; i < n; i++) pb_put_varint(b, v[i]);
    pb_end(b, mark);
}

/* A nested message's length is not known until it ends: reserve the widest varint
 * for it (5 bytes covers 4 GiB) and pad with continuation bytes, which is valid
 * protobuf (a non-minimal varint) and saves moving the body. */
#define PB_LEN_RESERVE 5

size_t pb_begin(struct pb_buf *b, uint32_t field)
{
    pb_put_tag(b, field, PB_LEN);
    static const uint8_t zero[PB_LEN_RESERVE];
    pb_put_raw(b, zero, PB_LEN_RESERVE);
    return b->len;
}

void pb_end(struct pb_buf *b, size_t mark)
{
    if (b->failed) return;
    uint64_t n = b->len - mark;
    if (n >> 32) {
        b->failed = 1;
        return;
    }
    uint8_t *p = b->data + mark - PB_LEN_RESERVE;
    for (int i = 0; i < PB_LEN_RESERVE; i++) {
        p[i] = (uint8_t)(n & 0x7f) | (i < PB_LEN_RESERVE - 1 ? 0x80 : 0);
        n >>= 7;
    }
}

/* ===== decoder ===== */

void pb_reader_init(struct pb_reader *r, const void *p, size_t n)
{
    r->p = p;
    r->end = r->p + n;
    r->err = 0;
}

static uint64_t pb_read_varint(struct pb_reader *r)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end) break;
        uint8_t byte = *r->p++;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) return v;
    }
    r->err = 1;
    return 0;
}

static uint64_t pb_read_fixed(struct pb_reader *r, size_t n)
{
    if ((size_t)(r->end - r->p) < n) {
        r->err = 1;
        return 0;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) v |= (uint64_t)r->p[i] << (8 * i);
    r->p += n;
    return v;
}

int pb_next(struct pb_reader *r, struct pb_field *f)
{
    if (r->err || r->p >= r->end) return 0;
    uint64_t key = pb_read_varint(r);
    if (r->err) return 0;
    memset(f, 0, sizeof *f);
    f->number = (uint32_t)(key >> 3);
    f->wire = (enum pb_wire)(key & 7);
    if (f->number == 0 || (key >> 3) > 0x1fffffff) goto bad;
    switch (f->wire) {
    case PB_VARINT: f->value = pb_read_varint(r); break;
    case PB_FIXED64: f->value = pb_read_fixed(r, 8); break;
    case PB_FIXED32: f->value = pb_read_fixed(r, 4); break;
    case PB_LEN: {
        uint64_t n = pb_read_varint(r);
        if (r->err || n > (uint64_t)(r->end - r->p)) goto bad;
        f->ptr = r->p;
        f->len = (size_t)n;
        r->p += n;
        break;
    }
    default: goto bad;
    }
    return !r->err;
bad:
    r->err = 1;
    return 0;
}

int pb_next_packed(struct pb_reader *r, uint64_t *v)
{
    if (r->err || r->p >= r->end) return 0;
    *v = pb_read_varint(r);
    return !r->err;
}
