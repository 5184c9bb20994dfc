/* gzip for the heap profile, without zlib (the runtime depends on libc alone): one
 * deflate block with the fixed Huffman codes of RFC 1951 and greedy LZ77 matching
 * through a hash of the next three bytes (one candidate per hash, a 32 KiB window).
 * A pprof repeats itself a lot (location and sample messages), which this catches;
 * it is not zlib's ratio, but a fraction of the stored size.
 *
 * Works in mmap'd memory (the output buffer of pbwire, its own hash table). May run
 * inside malloc; not in a signal handler. */
#include "runtime/heap/heap.h"

#include <string.h>
#include <sys/mman.h>

#define GZ_HASH_BITS 15
#define GZ_WINDOW 32768
#define GZ_MIN_MATCH 3
#define GZ_MAX_MATCH 258

static const uint16_t gz_len_base[29] = {3,  4,  5,  6,   7,   8,   9,   10,  11, 13,
                                         15, 17, 19, 23,  27,  31,  35,  43,  51, 59,
                                         67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t gz_len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                         2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t gz_dist_base[30] = {
    1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
    193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t gz_dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                          6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

/* ===== bits, least significant first ===== */

struct gz_bits {
    struct pb_buf *out;
    uint64_t acc; /* bits not yet written */
    unsigned n;   /* how many */
};

static void gz_put(struct gz_bits *w, uint32_t v, unsigned n)
{
    w->acc |= (uint64_t)v << w->n;
    w->n += n;
    if (w->n >= 32) {
        uint8_t b[4] = {(uint8_t)w->acc, (uint8_t)(w->acc >> 8), (uint8_t)(w->acc >> 16),
                        (uint8_t)(w->acc >> 24)};
        pb_put_raw(w->out, b, 4);
        w->acc >>= 32;
        w->n -= 32;
    }
}

static void gz_flush(struct gz_bits *w)
{
    while (w->n > 0) {
        uint8_t b = (uint8_t)w->acc;
        pb_put_raw(w->out, &b, 1);
        w->acc >>= 8;
        w->n = w->n > 8 ? w->n - 8 : 0;
    }
}

/* A Huffman code goes out most significant bit first. */
static void gz_code(struct gz_bits *w, uint32_t code, unsigned len)
{
    uint32_t r = 0;
    for (unsigned i = 0; i < len; i++)
        r |= ((code >> i) & 1) << (len - 1 - i);
    gz_put(w, r, len);
}

/* A literal/length symbol in the fixed code. */
static void gz_symbol(struct gz_bits *w, unsigned sym)
{
    if (sym < 144)
        gz_code(w, 0x30 + sym, 8);
    else if (sym < 256)
        gz_code(w, 0x190 + sym - 144, 9);
    else if (sym < 280)
        gz_code(w, sym - 256, 7);
    else
        gz_code(w, 0xc0 + sym - 280, 8);
}

static void gz_match(struct gz_bits *w, unsigned len, unsigned dist)
{
    unsigned i = 28;
    while (gz_len_base[i] > len)
        i--;
    gz_symbol(w, 257 + i);
    gz_put(w, len - gz_len_base[i], gz_len_extra[i]);
    unsigned d = 29;
    while (gz_dist_base[d] > dist)
        d--;
    gz_code(w, d, 5);
    gz_put(w, dist - gz_dist_base[d], gz_dist_extra[d]);
}

static uint32_t gz_hash(const uint8_t *p)
{
    uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
    return (v * 2654435761u) >> (32 - GZ_HASH_BITS);
}

/* ===== deflate and the gzip wrapper ===== */

static void gz_deflate(const uint8_t *p, size_t n, struct gz_bits *w, int32_t *head)
{
    gz_put(w, 1, 1); /* the final block */
    gz_put(w, 1, 2); /* fixed codes */
    size_t i = 0;
    while (i < n) {
        unsigned best = 0;
        size_t cand = 0;
        if (i + GZ_MIN_MATCH <= n) {
            uint32_t h = gz_hash(p + i);
            int32_t c = head[h] - 1; /* positions are kept + 1: 0, a fresh page, is none */
            head[h] = (int32_t)i + 1;
            if (c >= 0 && i - (size_t)c <= GZ_WINDOW) {
                size_t max = n - i < GZ_MAX_MATCH ? n - i : GZ_MAX_MATCH;
                unsigned len = 0;
                while (len < max && p[(size_t)c + len] == p[i + len])
                    len++;
                if (len >= GZ_MIN_MATCH) best = len, cand = (size_t)c;
            }
        }
        if (!best) {
            gz_symbol(w, p[i++]);
            continue;
        }
        gz_match(w, best, (unsigned)(i - cand));
        for (size_t k = i + 1; k < i + best && k + GZ_MIN_MATCH <= n; k++)
            head[gz_hash(p + k)] = (int32_t)k + 1;
        i += best;
    }
    gz_symbol(w, 256);
    gz_flush(w);
}

static uint32_t gz_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
    static uint32_t table[256];
    if (!table[1]) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
    }
    crc = ~crc;
    while (n--)
        crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

int heap_gzip(const uint8_t *p, size_t n, struct pb_buf *out)
{
    if (n >= INT32_MAX) return -1; /* positions + 1 are int32 in the hash */
    size_t hsize = ((size_t)1 << GZ_HASH_BITS) * sizeof(int32_t);
    int32_t *head = mmap(NULL, hsize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (head == MAP_FAILED) return -1;
    static const uint8_t magic[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    pb_put_raw(out, magic, sizeof magic);
    struct gz_bits w = {out, 0, 0};
    gz_deflate(p, n, &w, head);
    munmap(head, hsize);
    uint32_t crc = gz_crc32(0, p, n), size = (uint32_t)n;
    uint8_t tail[8] = {(uint8_t)crc,          (uint8_t)(crc >> 8),  (uint8_t)(crc >> 16),
                       (uint8_t)(crc >> 24),  (uint8_t)size,        (uint8_t)(size >> 8),
                       (uint8_t)(size >> 16), (uint8_t)(size >> 24)};
    pb_put_raw(out, tail, sizeof tail);
    return out->failed ? -1 : 0;
}
