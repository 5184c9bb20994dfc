/* pprof_enc.c — the runtime's shared pprof encoding (pprof_enc.h).
 * Inside malloc: everything (mmap'd scratch only). Signal handlers: nothing. */
#include "runtime/pprof_enc.h"
#include "common/utf8.h"
#include "runtime/heap/heap.h"
#include "runtime/images.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

/* ===== scratch: a string table and an address -> location map ===== */

/* ===== scratch: a string table and an address -> location map ===== */

static uint32_t pp_pow2(uint64_t n)
{
    uint32_t m = 16;
    while (m < 2 * n)
        m *= 2;
    return m;
}

/* The location map at twice `n` slots; what it held is rehashed into it. */
static int pp_loc_grow(struct pp_scratch *s, uint32_t n)
{
    uint32_t mask = pp_pow2(n) - 1;
    struct pp_loc *m = mmap(NULL, (mask + 1) * sizeof *m, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return -ENOMEM;
    for (uint32_t i = 0; s->loc && i <= s->loc_mask; i++) {
        if (!s->loc[i].id) continue;
        uint32_t k = (uint32_t)((s->loc[i].addr * 0x9e3779b97f4a7c15ull) >> 32) & mask;
        while (m[k].id)
            k = (k + 1) & mask;
        m[k] = s->loc[i];
    }
    if (s->loc) munmap(s->loc, (s->loc_mask + 1) * sizeof *s->loc);
    s->loc = m;
    s->loc_mask = mask;
    return 0;
}

int pp_scratch_init(struct pp_scratch *s, uint32_t max_str)
{
    memset(s, 0, sizeof *s);
    s->max_str = max_str;
    s->str_mask = pp_pow2(max_str) - 1;
    s->text_cap = 64 * 1024 + (size_t)IMAGES_MAX * (2 * IMAGE_BUILD_ID_MAX + 1) +
                  (pp_names_here ? PP_NAMES_TEXT : 0);
    size_t sz = max_str * (sizeof(char *) + sizeof(uint32_t)) +
                (s->str_mask + 1) * sizeof(uint32_t) + IMAGES_MAX * sizeof(uint32_t) + s->text_cap +
                64;
    sz = (sz + 4095) & ~(size_t)4095;
    char *m = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return -ENOMEM;
    s->map = m;
    s->map_size = sz;
    s->str = (const char **)m;
    m += max_str * sizeof(char *);
    s->str_len = (uint32_t *)m;
    m += max_str * sizeof(uint32_t);
    s->str_index = (uint32_t *)m;
    m += (s->str_mask + 1) * sizeof(uint32_t);
    s->image_mapping = (uint32_t *)m;
    m += IMAGES_MAX * sizeof(uint32_t);
    s->text = m;
    return pp_loc_grow(s, 1024);
}

void pp_scratch_free(struct pp_scratch *s)
{
    if (s->loc) munmap(s->loc, (s->loc_mask + 1) * sizeof *s->loc);
    munmap(s->map, s->map_size);
}

/* The id of a string in the profile's string table (0 is ""). */
int64_t pp_str(struct pp_scratch *s, const char *p, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)p[i]) * 0x100000001b3ull;
    uint32_t i = (uint32_t)h & s->str_mask;
    for (;; i = (i + 1) & s->str_mask) {
        uint32_t e = s->str_index[i];
        if (!e) break;
        if (s->str_len[e - 1] == len && !memcmp(s->str[e - 1], p, len)) return e - 1;
    }
    if (s->nstr >= s->max_str) return 0; /* sized so that this cannot happen */
    s->str[s->nstr] = p;
    s->str_len[s->nstr] = (uint32_t)len;
    s->str_index[i] = ++s->nstr;
    return s->nstr - 1;
}

int64_t pp_cstr(struct pp_scratch *s, const char *p)
{
    return pp_str(s, p, strlen(p));
}

/* Formatted text kept in the scratch (its string stays valid for the encoding). */
int64_t pp_strf(struct pp_scratch *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = s->text + s->text_used;
    size_t room = s->text_cap - s->text_used;
    int n = vsnprintf(p, room, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= room) return 0;
    s->text_used += (size_t)n + 1;
    return pp_str(s, p, (size_t)n);
}

/* ===== messages ===== */

void pp_value_type(struct pb_buf *b, uint32_t field, int64_t type, int64_t unit)
{
    size_t m = pb_begin(b, field);
    pb_put_int(b, VALUE_TYPE_TYPE, type);
    pb_put_int(b, VALUE_TYPE_UNIT, unit);
    pb_end(b, m);
}

static const struct image *pp_image_of(uintptr_t addr, size_t *index)
{
    size_t n = images_count();
    for (size_t i = 0; i < n; i++) {
        const struct image *im = images_get(i);
        if (im->text_size && addr >= im->text && addr - im->text < im->text_size) {
            *index = i;
            return im;
        }
    }
    return NULL;
}

__thread int pp_names_here;
const char *(*pp_name_of)(uint64_t addr);

/* The location id of a frame's address, written the first time it is seen. */
uint64_t pp_location(struct pp_scratch *s, struct pb_buf *b, uintptr_t addr)
{
    uint32_t i = (uint32_t)((addr * 0x9e3779b97f4a7c15ull) >> 32) & s->loc_mask;
    for (;; i = (i + 1) & s->loc_mask) {
        if (!s->loc[i].id) break;
        if (s->loc[i].addr == addr) return s->loc[i].id;
    }
    if (2 * (s->nloc + 1) > s->loc_mask + 1) { /* keep it at most half full */
        if (pp_loc_grow(s, s->loc_mask + 1)) {
            b->failed = 1;
            return 0;
        }
        return pp_location(s, b, addr);
    }
    uint32_t id = ++s->nloc;
    s->loc[i].addr = addr;
    s->loc[i].id = id;
    size_t index = 0;
    const struct image *im = pp_image_of(addr, &index);
    uint32_t mapping = 0;
    if (im) {
        if (!s->image_mapping[index]) s->image_mapping[index] = index + 1;
        mapping = s->image_mapping[index];
    }
    int64_t name = 0;
    if (pp_names_here && pp_name_of && im) {
        const char *fn = pp_name_of(addr);
        name = fn ? pp_strf(s, "%s", fn) : 0; /* copied: the symbol tables may be dropped */
    }
    uint32_t fid = name > 0 ? ++s->nfunc : 0; /* one function per named location */
    size_t m = pb_begin(b, PROFILE_LOCATION);
    pb_put_uint(b, LOCATION_ID, id);
    pb_put_uint(b, LOCATION_MAPPING_ID, mapping);
    pb_put_uint(b, LOCATION_ADDRESS, addr);
    if (fid) {
        size_t l = pb_begin(b, LOCATION_LINE);
        pb_put_uint(b, LINE_FUNCTION_ID, fid);
        pb_end(b, l);
    }
    pb_end(b, m);
    if (fid) {
        size_t f = pb_begin(b, PROFILE_FUNCTION);
        pb_put_uint(b, FUNCTION_ID, fid);
        pb_put_int(b, FUNCTION_NAME, name);
        pb_put_int(b, FUNCTION_SYSTEM_NAME, name);
        pb_end(b, f);
    }
    return id;
}

void pp_mappings(struct pp_scratch *s, struct pb_buf *b)
{
    const uint64_t page = 4096;
    /* Every image, used or not: mapping ids are then 1..n in order, which readers such
     * as Parca require ("mapping id is not sequential"). */
    for (size_t i = 0; i < images_count(); i++) {
        const struct image *im = images_get(i);
        uint64_t start = im->text & ~(page - 1);
        uint64_t limit = (im->text + im->text_size + page - 1) & ~(page - 1);
        char *hex = s->text + s->text_used;
        images_build_id_hex(im, hex, s->text_cap - s->text_used);
        s->text_used += strlen(hex) + 1;
        size_t m = pb_begin(b, PROFILE_MAPPING);
        pb_put_uint(b, MAPPING_ID, i + 1); /* = image_mapping[i] where a location uses it */
        pb_put_uint(b, MAPPING_START, start);
        pb_put_uint(b, MAPPING_LIMIT, limit);
        pb_put_uint(b, MAPPING_OFFSET, im->text_offset - (im->text - start));
        pb_put_int(b, MAPPING_FILENAME, pp_cstr(s, im->path));
        pb_put_int(b, MAPPING_BUILD_ID, pp_cstr(s, hex));
        pb_put_uint(b, MAPPING_HAS_FUNCTIONS, pp_names_here && pp_name_of);
        pb_end(b, m);
    }
}


/* A string that is not UTF-8, each byte of 0x80 or more as U+0080..U+00FF. */
static void pp_put_as_bytes(struct pb_buf *b, const char *p, size_t n)
{
    size_t high = 0;
    for (size_t i = 0; i < n; i++)
        high += (unsigned char)p[i] >= 0x80;
    pb_put_tag(b, PROFILE_STRING_TABLE, PB_LEN);
    pb_put_varint(b, n + high);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        unsigned char two[2] = {(unsigned char)(0xc0 | c >> 6), (unsigned char)(0x80 | (c & 0x3f))};
        if (c < 0x80)
            pb_put_raw(b, &c, 1);
        else
            pb_put_raw(b, two, 2);
    }
}

/* The comment PPROF_BYTES_COMMENT " 9 12" naming the strings written as bytes, when
 * there are any (kept in the scratch's text; one that does not fit is still written
 * as bytes, only not named). */
static void pp_bytes_comment(struct pp_scratch *s, struct pb_buf *b)
{
    char *p = s->text + s->text_used;
    size_t room = s->text_cap - s->text_used, n = 0, named = 0;
    for (uint32_t i = 0; i < s->nstr; i++) {
        if (utf8_valid(s->str[i], s->str_len[i])) continue;
        if (!n) n = (size_t)snprintf(p, room, "%s", PPROF_BYTES_COMMENT);
        int k = snprintf(p + n, room > n ? room - n : 0, " %u", i);
        if (k < 0 || n + (size_t)k >= room) break;
        n += (size_t)k;
        named++;
    }
    if (!named || s->nstr >= s->max_str) return;
    s->text_used += n + 1;
    pb_put_int(b, PROFILE_COMMENT, pp_str(s, p, n));
}

void pp_string_table(struct pp_scratch *s, struct pb_buf *b)
{
    pp_bytes_comment(s, b);
    for (uint32_t i = 0; i < s->nstr; i++) {
        if (utf8_valid(s->str[i], s->str_len[i]))
            pb_put_bytes(b, PROFILE_STRING_TABLE, s->str[i], s->str_len[i]);
        else
            pp_put_as_bytes(b, s->str[i], s->str_len[i]);
    }
}

int pp_finish(struct pp_scratch *s, struct pb_buf *b, struct pb_buf *out)
{
    pp_string_table(s, b);
    int rc = b->failed ? -ENOMEM : 0;
    if (!rc && heap_gzip(b->data, b->len, out)) rc = -ENOMEM;
    if (!rc && out->failed) rc = -ENOMEM;
    pb_buf_free(b);
    pp_scratch_free(s);
    return rc;
}
