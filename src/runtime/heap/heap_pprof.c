/* The heap profile as pprof (profile.proto, FORMATS.md §2), unsymbolized and
 * gzip-wrapped: four sample types, period, a `thread` label, locations with addresses
 * in page-aligned mappings that carry build ids, and comments that say how full each
 * table is and what went past it.
 *
 * A sample is one bucket, and buckets are distinct by (stack, thread name), so two
 * samples never say the same thing. Addresses are call sites: the return address
 * minus one, which is inside the call instruction for any symbolizer. A stack whose
 * walk was cut short ends, on its root side, in a location whose function is
 * "[incomplete stack]" (as the CLI's raw reader marks CPU stacks), and a comment
 * counts the sampled allocations by how their walk ended.
 *
 * Works in mmap'd scratch (pbwire's buffers and its own maps), never malloc: it runs
 * while malloc is interposed. Not for a signal handler. */
#include "runtime/heap/heap.h"
#include "runtime/images.h"
#include "runtime/unwind/unwind.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

/* profile.proto field numbers */
enum {
    P_SAMPLE_TYPE = 1,
    P_SAMPLE = 2,
    P_MAPPING = 3,
    P_LOCATION = 4,
    P_FUNCTION = 5,
    P_STRING_TABLE = 6,
    P_TIME_NANOS = 9,
    P_DURATION_NANOS = 10,
    P_PERIOD_TYPE = 11,
    P_PERIOD = 12,
    P_COMMENT = 13,
    P_DEFAULT_SAMPLE_TYPE = 14,
};

/* ===== scratch: a string table and an address -> location map ===== */

struct pp_loc {
    uint64_t addr;
    uint64_t id; /* 0 = empty */
};

struct pp_scratch {
    const char **str; /* string i */
    uint32_t *str_len;
    uint32_t nstr, max_str;
    uint32_t *str_index, str_mask; /* id + 1 */
    struct pp_loc *loc;            /* open addressing, its own mapping, grown by doubling */
    uint32_t loc_mask;
    uint32_t nloc;
    uint32_t *image_mapping; /* image -> mapping id, 0 = not used */
    uint64_t incomplete;     /* the "[incomplete stack]" location, 0 until written */
    char *text;              /* room for comments and hex build ids */
    size_t text_used, text_cap;
    void *map;
    size_t map_size;
};

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

static int pp_scratch_init(struct pp_scratch *s, uint32_t max_str)
{
    memset(s, 0, sizeof *s);
    s->max_str = max_str;
    s->str_mask = pp_pow2(max_str) - 1;
    s->text_cap = 64 * 1024 + (size_t)IMAGES_MAX * (2 * IMAGE_BUILD_ID_MAX + 1);
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

static void pp_scratch_free(struct pp_scratch *s)
{
    if (s->loc) munmap(s->loc, (s->loc_mask + 1) * sizeof *s->loc);
    munmap(s->map, s->map_size);
}

/* The id of a string in the profile's string table (0 is ""). */
static int64_t pp_str(struct pp_scratch *s, const char *p, size_t len)
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

static int64_t pp_cstr(struct pp_scratch *s, const char *p)
{
    return pp_str(s, p, strlen(p));
}

/* Formatted text kept in the scratch (its string stays valid for the encoding). */
static int64_t pp_strf(struct pp_scratch *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int64_t pp_strf(struct pp_scratch *s, const char *fmt, ...)
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

static void pp_value_type(struct pb_buf *b, uint32_t field, int64_t type, int64_t unit)
{
    size_t m = pb_begin(b, field);
    pb_put_int(b, 1, type);
    pb_put_int(b, 2, unit);
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

/* The location id of a frame's address, written the first time it is seen. */
static uint64_t pp_location(struct pp_scratch *s, struct pb_buf *b, uintptr_t addr)
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
    size_t m = pb_begin(b, P_LOCATION);
    pb_put_uint(b, 1, id);
    pb_put_uint(b, 2, mapping);
    pb_put_uint(b, 3, addr);
    pb_end(b, m);
    return id;
}

static void pp_mappings(struct pp_scratch *s, struct pb_buf *b)
{
    const uint64_t page = 4096;
    for (size_t i = 0; i < images_count(); i++) {
        if (!s->image_mapping[i]) continue;
        const struct image *im = images_get(i);
        uint64_t start = im->text & ~(page - 1);
        uint64_t limit = (im->text + im->text_size + page - 1) & ~(page - 1);
        char *hex = s->text + s->text_used;
        images_build_id_hex(im, hex, s->text_cap - s->text_used);
        s->text_used += strlen(hex) + 1;
        size_t m = pb_begin(b, P_MAPPING);
        pb_put_uint(b, 1, s->image_mapping[i]);
        pb_put_uint(b, 2, start);
        pb_put_uint(b, 3, limit);
        pb_put_uint(b, 4, im->text_offset - (im->text - start));
        pb_put_int(b, 5, pp_cstr(s, im->path));
        pb_put_int(b, 6, pp_cstr(s, hex));
        pb_end(b, m);
    }
}

static void pp_sample(struct pp_scratch *s, struct pb_buf *b, const uint64_t *locs, size_t n,
                      const struct heap_bucket *bk, int64_t thread_key, int64_t thread)
{
    uint64_t v[4] = {(uint64_t)bk->alloc_objects, (uint64_t)bk->alloc_bytes,
                     (uint64_t)bk->inuse_objects, (uint64_t)bk->inuse_bytes};
    size_t m = pb_begin(b, P_SAMPLE);
    pb_put_packed(b, 1, locs, n);
    pb_put_packed(b, 2, v, 4);
    if (thread >= 0) {
        size_t l = pb_begin(b, 3);
        pb_put_int(b, 1, thread_key);
        pb_put_int(b, 2, thread);
        pb_end(b, l);
    }
    pb_end(b, m);
    (void)s;
}

/* The (other stacks) sample: one location whose line names a function of that name. */
static void pp_other_stacks(struct pp_scratch *s, struct pb_buf *b, const struct heap_bucket *bk)
{
    int64_t name = pp_cstr(s, "(other stacks)");
    size_t m = pb_begin(b, P_FUNCTION);
    pb_put_uint(b, 1, 1);
    pb_put_int(b, 2, name);
    pb_put_int(b, 3, name);
    pb_end(b, m);
    uint64_t id = ++s->nloc;
    m = pb_begin(b, P_LOCATION);
    pb_put_uint(b, 1, id);
    size_t line = pb_begin(b, 4);
    pb_put_uint(b, 1, 1);
    pb_end(b, line);
    pb_end(b, m);
    pp_sample(s, b, &id, 1, bk, 0, -1);
}

/* The root-side location of a cut stack: function 2, "[incomplete stack]". */
static uint64_t pp_incomplete(struct pp_scratch *s, struct pb_buf *b)
{
    if (s->incomplete) return s->incomplete;
    int64_t name = pp_cstr(s, "[incomplete stack]");
    size_t m = pb_begin(b, P_FUNCTION);
    pb_put_uint(b, 1, 2);
    pb_put_int(b, 2, name);
    pb_put_int(b, 3, name);
    pb_end(b, m);
    s->incomplete = ++s->nloc;
    m = pb_begin(b, P_LOCATION);
    pb_put_uint(b, 1, s->incomplete);
    size_t line = pb_begin(b, 4);
    pb_put_uint(b, 1, 2);
    pb_end(b, line);
    pb_end(b, m);
    return s->incomplete;
}

static void pp_comments(struct pp_scratch *s, struct pb_buf *b, const struct heap_table *tb,
                        const struct heap_pprof_info *info)
{
    const struct heap_bucket *o = &tb->buckets[0];
    int64_t c[3];
    c[0] = pp_strf(s, "kestrel heap profile: %llu samples, interval %lld bytes",
                   (unsigned long long)info->samples, (long long)info->interval);
    c[1] = pp_strf(s, "stacks=%u/%u stack_words=%u/%u strings=%u/%u string_bytes=%u/%u",
                   tb->nbuckets - 1, tb->max.stacks, tb->nwords, tb->max.words, tb->nstrings,
                   tb->max.strings, tb->nbytes, tb->max.string_bytes);
    c[2] = pp_strf(s,
                   "past the limits: other_stacks_objects=%lld other_stacks_bytes=%lld "
                   "truncated_strings=%llu lost_objects=%llu lost_bytes=%llu",
                   (long long)o->alloc_objects, (long long)o->alloc_bytes,
                   (unsigned long long)tb->truncated_strings,
                   (unsigned long long)info->lost_objects, (unsigned long long)info->lost_bytes);
    for (int i = 0; i < 3; i++)
        pb_put_int(b, P_COMMENT, c[i]);
    /* "stack walks: N of M sampled allocations cut short (name=count ...)": the CLI
     * reads the prefix as "this profile says how its walks ended". */
    static const char *const names[UNWIND_STOPS] = UNWIND_STOP_NAMES;
    char by[512];
    size_t bo = 0;
    uint64_t cut = 0, all = 0;
    for (int k = 0; k < UNWIND_STOPS; k++) {
        all += info->stops[k];
        if (unwind_cut_short((enum unwind_stop)k)) cut += info->stops[k];
        if (info->stops[k] && bo < sizeof by)
            bo += (size_t)snprintf(by + bo, sizeof by - bo, " %s=%llu", names[k],
                                   (unsigned long long)info->stops[k]);
    }
    by[bo < sizeof by ? bo : sizeof by - 1] = 0;
    pb_put_int(b, P_COMMENT,
               pp_strf(s, "stack walks: %llu of %llu sampled allocations cut short (by how they "
                          "ended:%s)",
                       (unsigned long long)cut, (unsigned long long)all, bo ? by : " none"));
}

/* ===== the profile ===== */

int heap_pprof_write(const struct heap_table *tb, const struct heap_pprof_info *info,
                     struct pb_buf *out)
{
    struct pp_scratch s;
    if (images_refresh() < 0) return -EIO;
    uint32_t max_str = tb->nstrings + 2 * (uint32_t)images_count() + 64;
    int rc = pp_scratch_init(&s, max_str);
    if (rc) return rc;
    struct pb_buf b = {0};
    pp_str(&s, "", 0);
    int64_t space = pp_cstr(&s, "space"), bytes = pp_cstr(&s, "bytes");
    int64_t count = pp_cstr(&s, "count");
    pp_value_type(&b, P_SAMPLE_TYPE, pp_cstr(&s, "alloc_objects"), count);
    pp_value_type(&b, P_SAMPLE_TYPE, pp_cstr(&s, "alloc_space"), bytes);
    pp_value_type(&b, P_SAMPLE_TYPE, pp_cstr(&s, "inuse_objects"), count);
    pp_value_type(&b, P_SAMPLE_TYPE, pp_cstr(&s, "inuse_space"), bytes);
    pp_value_type(&b, P_PERIOD_TYPE, space, bytes);
    pb_put_int(&b, P_PERIOD, info->interval);
    pb_put_int(&b, P_DEFAULT_SAMPLE_TYPE, pp_cstr(&s, "inuse_space"));
    pb_put_int(&b, P_TIME_NANOS, (int64_t)info->start_ns);
    pb_put_int(&b, P_DURATION_NANOS, (int64_t)(info->end_ns - info->start_ns));

    int64_t thread_key = pp_cstr(&s, "thread");
    uint64_t locs[HEAP_STACK_MAX + 1];
    for (uint32_t i = 1; i < tb->nbuckets; i++) {
        const struct heap_bucket *bk = &tb->buckets[i];
        if (!bk->alloc_objects) continue;
        uint32_t depth = bk->depth < HEAP_STACK_MAX ? bk->depth : HEAP_STACK_MAX;
        for (uint32_t k = 0; k < depth; k++)
            locs[k] = pp_location(&s, &b, tb->words[bk->words + k] - 1);
        if (unwind_cut_short((enum unwind_stop)bk->stop)) locs[depth++] = pp_incomplete(&s, &b);
        int64_t thread = -1;
        if (bk->thread != HEAP_NO_STRING) {
            size_t len;
            const char *name = heap_table_str(tb, bk->thread, &len);
            thread = pp_str(&s, name, len);
        }
        pp_sample(&s, &b, locs, depth, bk, thread_key, thread);
    }
    if (tb->buckets[0].alloc_objects) pp_other_stacks(&s, &b, &tb->buckets[0]);
    pp_mappings(&s, &b);
    pp_comments(&s, &b, tb, info);
    for (uint32_t i = 0; i < s.nstr; i++)
        pb_put_bytes(&b, P_STRING_TABLE, s.str[i], s.str_len[i]);

    rc = b.failed ? -ENOMEM : 0;
    if (!rc && heap_gzip(b.data, b.len, out)) rc = -ENOMEM;
    if (!rc && out->failed) rc = -ENOMEM;
    pb_buf_free(&b);
    pp_scratch_free(&s);
    return rc;
}
