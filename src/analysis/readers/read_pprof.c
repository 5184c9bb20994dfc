/* Reader of pprof profiles (profile.proto), gzip-compressed or not: kestrel's own
 * heap and CPU profiles and any other tool's (Go's, gperftools' converted, ...).
 * Symbolized locations (with lines) become symbolized frames, one per line entry
 * (pprof lists inlined calls innermost first, like our leaf-first stacks); bare
 * locations become address frames for the symbolizer, tied to their mapping. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "analysis/model/escape.h"
#include "analysis/readers/readers.h"
#include "common/pbwire.h"
#include "common/pprof_fields.h"


struct bytes {
    const uint8_t *ptr;
    size_t len;
};

struct pp_mapping {
    uint64_t id;
    uint32_t image;
};

struct pp_function {
    uint64_t id;
    uint64_t name, file; /* string indices */
};

struct pp_location {
    uint64_t id;
    uint32_t first, n; /* frames[first .. first+n): leaf-first frame indices */
};

struct pprof {
    struct profile *p;
    char *why;
    size_t why_size;
    const char **strings;
    size_t n_strings;
    struct bytes *msgs[16]; /* raw sub-messages per Profile field number */
    size_t n_msgs[16];
    struct pp_mapping *mappings;
    size_t n_mappings;
    struct pp_function *functions;
    size_t n_functions;
    struct pp_location *locations;
    size_t n_locations;
    uint32_t *loc_frames; /* the frames of every location, concatenated */
    size_t n_loc_frames;
    int64_t default_type; /* string index */
    char *string_pool;    /* NUL-terminated copies of the string table */
    size_t content_len;   /* bytes of protobuf (decompressed) */
    size_t budget, used;  /* memory this read may take (readers.h), and has charged */
    uint32_t *thread_slots; /* thread index + 1 by hash of its label; 0 = empty */
    size_t thread_mask;
};

static int fail(struct pprof *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, r->why_size, fmt, ap);
    va_end(ap);
    return -1;
}

/* Counts n bytes against the read's memory budget: what the reader and the model
 * will hold for what it is about to add (an upper bound; interned strings and frames
 * are counted as if each were new). -1 with the reason once past the budget. */
static int charge(struct pprof *r, size_t n)
{
    r->used += n;
    return r->used > r->budget ? read_over_budget(r->why, r->why_size, r->budget, r->content_len)
                               : 0;
}

/* ------------------------------------------------------------------ gzip */

static int inflate_all(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len, char *why,
                       size_t why_size)
{
    z_stream z = {0};
    if (inflateInit2(&z, 15 + 32) != Z_OK) return snprintf(why, why_size, "zlib failed"), -1;
    /* A gzip bomb stops at the limit, never at the memory's end (readers.h). */
    uint64_t limit = READ_MEMORY_BASE + (uint64_t)len * READ_GZIP_RATIO;
    if (limit > READ_MAX_INFLATED) limit = READ_MAX_INFLATED;
    size_t cap = len * 4 + 4096, n = 0;
    if (cap > limit + 1) cap = (size_t)limit + 1;
    uint8_t *buf = malloc(cap);
    int rc = buf ? Z_OK : Z_MEM_ERROR;
    z.next_in = (uint8_t *)in;
    while (rc == Z_OK) {
        if (n == cap) {
            if (cap > limit) {
                rc = Z_BUF_ERROR;
                snprintf(why, why_size,
                         "decompresses to more than %llu MiB (kestrel's limit for %zu bytes of "
                         "gzip: %d times as much + %llu MiB, at most %llu GiB)",
                         (unsigned long long)(limit >> 20), len, READ_GZIP_RATIO,
                         READ_MEMORY_BASE >> 20, READ_MAX_INFLATED >> 30);
                break;
            }
            cap = cap * 2 < limit + 1 ? cap * 2 : (size_t)limit + 1;
            uint8_t *q = realloc(buf, cap);
            if (!q) {
                rc = Z_MEM_ERROR;
                break;
            }
            buf = q;
        }
        /* zlib counts in uInt: feed at most 1 GiB per call. */
        size_t in_left = len - (size_t)(z.next_in - in);
        z.avail_in = (uInt)(in_left < (1u << 30) ? in_left : (1u << 30));
        z.next_out = buf + n;
        z.avail_out = (uInt)(cap - n < (1u << 30) ? cap - n : (1u << 30));
        size_t before = z.avail_out;
        rc = inflate(&z, Z_NO_FLUSH);
        n += before - z.avail_out;
        if (rc == Z_BUF_ERROR && z.avail_in == 0 && (size_t)(z.next_in - in) == len) break;
        if (rc == Z_BUF_ERROR && z.avail_out == 0) rc = Z_OK;
    }
    inflateEnd(&z);
    if (rc != Z_STREAM_END) {
        if (rc == Z_MEM_ERROR)
            snprintf(why, why_size, "out of memory");
        else if (rc != Z_BUF_ERROR || !why[0])
            snprintf(why, why_size, "gzip data is truncated or corrupt");
        free(buf);
        return -1;
    }
    *out = buf;
    *out_len = n;
    return 0;
}

/* ------------------------------------------------------------------ helpers */

static int valid_utf8(const uint8_t *s, size_t n)
{
    for (size_t i = 0, k; i < n; i += k)
        if (!(k = escape_utf8_seq(s + i, n - i))) return 0;
    return 1;
}

static const char *str(struct pprof *r, uint64_t i, int *bad)
{
    if (i >= r->n_strings) {
        *bad = 1;
        return "";
    }
    return r->strings[i];
}

static int cmp_id(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Binary search in an array of structs that begin with their uint64 id. */
static const void *by_id(const void *arr, size_t n, size_t size, uint64_t id)
{
    return bsearch(&id, arr, n, size, cmp_id);
}

static int check_unique(const void *arr, size_t n, size_t size)
{
    for (size_t i = 1; i < n; i++)
        if (*(const uint64_t *)((const char *)arr + i * size) ==
            *(const uint64_t *)((const char *)arr + (i - 1) * size))
            return 0;
    return 1;
}

/* ------------------------------------------------------------------ passes */

/* A string the runtime wrote as bytes (PPROF_BYTES_COMMENT): U+0080..U+00FF back to
 * the bytes of the same value, in place (never longer than its UTF-8). */
static void bytes_decode(char *p)
{
    unsigned char *s = (unsigned char *)p, *o = s;
    while (*s) {
        if ((s[0] == 0xc2 || s[0] == 0xc3) && (s[1] & 0xc0) == 0x80) {
            *o++ = (unsigned char)((s[0] & 0x03) << 6 | (s[1] & 0x3f));
            s += 2;
        } else {
            *o++ = *s++;
        }
    }
    *o = 0;
}

/* A comment of the profile's, or the runtime's list of strings written as bytes,
 * which are decoded (a path must name the file it is, to be opened) and not kept. */
static int add_comment(struct pprof *r, const char *c)
{
    size_t k = strlen(PPROF_BYTES_COMMENT);
    if (strncmp(c, PPROF_BYTES_COMMENT, k)) return profile_add_comment(r->p, c);
    char *end;
    for (const char *p = c + k; *p; p = end) {
        unsigned long long i = strtoull(p, &end, 10);
        if (end == p) break;
        if (i > 0 && i < r->n_strings) bytes_decode((char *)r->strings[i]);
    }
    return 0;
}

/* Splits the Profile message into its fields; strings are copied (NUL-terminated). */
static int split(struct pprof *r, const uint8_t *buf, size_t len)
{
    struct pb_reader rd;
    struct pb_field f;
    size_t string_bytes = 0;
    pb_reader_init(&rd, buf, len);
    while (pb_next(&rd, &f)) {
        if (f.number < 16 && f.wire == PB_LEN) r->n_msgs[f.number]++;
        if (f.number == PROFILE_STRING_TABLE && f.wire == PB_LEN) string_bytes += f.len + 1;
    }
    if (rd.err) return fail(r, "not a pprof profile (malformed protobuf)");
    /* Strings are kept once, in the pool (and once more when the model interns them);
     * every other field's messages are kept as spans of buf. */
    size_t spans = 0;
    for (int k = 0; k < 16; k++)
        spans += k == PROFILE_STRING_TABLE ? 0 : r->n_msgs[k];
    if (charge(r, spans * sizeof(struct bytes) + (r->n_msgs[PROFILE_STRING_TABLE] + 1) * sizeof *r->strings +
                      2 * string_bytes + 1))
        return -1;
    for (int k = 0; k < 16; k++)
        if (k != PROFILE_STRING_TABLE && r->n_msgs[k] &&
            !(r->msgs[k] = calloc(r->n_msgs[k], sizeof(struct bytes))))
            return fail(r, "out of memory");
    r->strings = calloc(r->n_msgs[PROFILE_STRING_TABLE] + 1, sizeof *r->strings);
    r->string_pool = malloc(string_bytes + 1);
    if (!r->strings || !r->string_pool) return fail(r, "out of memory");
    size_t seen[16] = {0}, pool = 0;
    pb_reader_init(&rd, buf, len);
    while (pb_next(&rd, &f)) {
        if (f.number < 16 && f.number != PROFILE_STRING_TABLE && f.wire == PB_LEN)
            r->msgs[f.number][seen[f.number]++] = (struct bytes){f.ptr, f.len};
        if (f.number == PROFILE_STRING_TABLE && f.wire == PB_LEN) {
            if (!valid_utf8(f.ptr, f.len) || memchr(f.ptr, 0, f.len))
                return fail(r, "string %zu is not valid UTF-8 text", r->n_strings);
            memcpy(r->string_pool + pool, f.ptr, f.len);
            r->string_pool[pool + f.len] = 0;
            r->strings[r->n_strings++] = r->string_pool + pool;
            pool += f.len + 1;
        } else if (f.wire == PB_VARINT) {
            if (f.number == PROFILE_TIME_NANOS) r->p->meta.start_unix_ns = (int64_t)f.value;
            if (f.number == PROFILE_DURATION_NANOS) r->p->meta.end_unix_ns = (int64_t)f.value;
            if (f.number == PROFILE_PERIOD) r->p->period = (int64_t)f.value;
            if (f.number == PROFILE_DEFAULT_SAMPLE_TYPE) r->default_type = (int64_t)f.value;
        }
    }
    if (r->n_strings == 0 || r->strings[0][0])
        return fail(r, "not a pprof profile (its string table must start with \"\")");
    /* Comments may come before the string table: read them now, unpacked ones
     * from a last pass. */
    pb_reader_init(&rd, buf, len);
    while (pb_next(&rd, &f)) {
        int bad = 0;
        if (f.number != PROFILE_COMMENT || f.wire != PB_VARINT) continue;
        const char *c = str(r, f.value, &bad);
        if (!bad && charge(r, strlen(c) + 48)) return -1;
        if (bad || add_comment(r, c)) return fail(r, "comment out of range");
    }
    for (size_t i = 0; i < r->n_msgs[PROFILE_COMMENT]; i++) {
        struct pb_reader pr;
        uint64_t v;
        pb_reader_init(&pr, r->msgs[PROFILE_COMMENT][i].ptr, r->msgs[PROFILE_COMMENT][i].len);
        while (pb_next_packed(&pr, &v)) {
            int bad = 0;
            const char *c = str(r, v, &bad);
            if (!bad && charge(r, strlen(c) + 48)) return -1;
            if (bad || add_comment(r, c)) return fail(r, "comment out of range");
        }
        if (pr.err) return fail(r, "malformed comment list");
    }
    /* duration is relative; end = start + duration. */
    if (r->p->meta.end_unix_ns &&
        __builtin_add_overflow(r->p->meta.end_unix_ns, r->p->meta.start_unix_ns,
                               &r->p->meta.end_unix_ns))
        return fail(r, "time and duration overflow 64 bits");
    return 0;
}

static int read_value_type(struct pprof *r, struct bytes b, const char **type, const char **unit)
{
    struct pb_reader rd;
    struct pb_field f;
    int bad = 0;
    *type = *unit = "";
    pb_reader_init(&rd, b.ptr, b.len);
    while (pb_next(&rd, &f)) {
        if (f.number == VALUE_TYPE_TYPE && f.wire == PB_VARINT) *type = str(r, f.value, &bad);
        if (f.number == VALUE_TYPE_UNIT && f.wire == PB_VARINT) *unit = str(r, f.value, &bad);
    }
    return rd.err || bad ? fail(r, "malformed sample type") : 0;
}

static int read_types(struct pprof *r)
{
    struct profile *p = r->p;
    if (!r->n_msgs[PROFILE_SAMPLE_TYPE]) return fail(r, "no sample types");
    if (r->n_msgs[PROFILE_SAMPLE_TYPE] > PROFILE_MAX_SAMPLE_TYPES)
        return fail(r, "%zu sample types (at most %d)", r->n_msgs[PROFILE_SAMPLE_TYPE],
                    PROFILE_MAX_SAMPLE_TYPES);
    for (size_t i = 0; i < r->n_msgs[PROFILE_SAMPLE_TYPE]; i++) {
        const char *type, *unit;
        if (read_value_type(r, r->msgs[PROFILE_SAMPLE_TYPE][i], &type, &unit)) return -1;
        if (profile_add_sample_type(p, type, unit) < 0) return fail(r, "out of memory");
    }
    if (r->n_msgs[PROFILE_PERIOD_TYPE]) {
        const char *type, *unit;
        if (read_value_type(r, r->msgs[PROFILE_PERIOD_TYPE][0], &type, &unit)) return -1;
        if (!(p->period_type.type = strdup(type)) || !(p->period_type.unit = strdup(unit)))
            return fail(r, "out of memory");
    }
    int heap = profile_find_sample_type(p, "inuse_space") >= 0 ||
               profile_find_sample_type(p, "alloc_space") >= 0;
    p->kind = heap ? PROFILE_HEAP : PROFILE_CPU;
    /* The default: what the file names; else inuse_space for heap (FORMATS.md §2);
     * else pprof's own convention, the last type. */
    int d = -1, bad = 0;
    if (r->default_type) d = profile_find_sample_type(p, str(r, (uint64_t)r->default_type, &bad));
    if (d < 0 && heap) d = profile_find_sample_type(p, "inuse_space");
    if (d < 0) d = (int)p->n_sample_types - 1;
    p->default_type = (size_t)d;
    return 0;
}

static int read_mappings(struct pprof *r)
{
    size_t n = r->n_msgs[PROFILE_MAPPING];
    r->mappings = calloc(n + 1, sizeof *r->mappings);
    if (!r->mappings) return fail(r, "out of memory");
    for (size_t i = 0; i < n; i++) {
        struct pb_reader rd;
        struct pb_field f;
        uint64_t id = 0, start = 0, limit = 0, offset = 0;
        const char *file = "", *build_id = "";
        int bad = 0;
        pb_reader_init(&rd, r->msgs[PROFILE_MAPPING][i].ptr, r->msgs[PROFILE_MAPPING][i].len);
        while (pb_next(&rd, &f)) {
            if (f.wire != PB_VARINT) continue;
            if (f.number == MAPPING_ID) id = f.value;
            if (f.number == MAPPING_START) start = f.value;
            if (f.number == MAPPING_LIMIT) limit = f.value;
            if (f.number == MAPPING_OFFSET) offset = f.value;
            if (f.number == MAPPING_FILENAME) file = str(r, f.value, &bad);
            if (f.number == MAPPING_BUILD_ID) build_id = str(r, f.value, &bad);
        }
        if (rd.err || bad) return fail(r, "mapping %zu is malformed", i);
        if (charge(r, sizeof *r->mappings + sizeof(struct profile_image) + strlen(file) +
                          strlen(build_id) + 64))
            return -1;
        if (limit < start) return fail(r, "mapping %zu ends before it starts", i);
        /* Build ids are compared as lowercase hex; anything else cannot be checked. */
        int hex = *build_id && strlen(build_id) % 2 == 0 &&
                  strspn(build_id, "0123456789abcdef") == strlen(build_id);
        struct profile_image im = {.path = (char *)file,
                                   .build_id = hex ? (char *)build_id : NULL,
                                   .text = start,
                                   .text_size = limit - start,
                                   .text_offset = offset,
                                   .is_main = i == 0};
        int64_t idx = profile_add_image(r->p, &im);
        if (idx < 0) return fail(r, "out of memory");
        r->mappings[i] = (struct pp_mapping){id, (uint32_t)idx};
    }
    qsort(r->mappings, n, sizeof *r->mappings, cmp_id);
    r->n_mappings = n;
    if (!check_unique(r->mappings, n, sizeof *r->mappings))
        return fail(r, "two mappings share an id");
    return 0;
}

static int read_functions(struct pprof *r)
{
    size_t n = r->n_msgs[PROFILE_FUNCTION];
    if (charge(r, (n + 1) * sizeof *r->functions)) return -1;
    r->functions = calloc(n + 1, sizeof *r->functions);
    if (!r->functions) return fail(r, "out of memory");
    for (size_t i = 0; i < n; i++) {
        struct pb_reader rd;
        struct pb_field f;
        struct pp_function *fn = &r->functions[i];
        pb_reader_init(&rd, r->msgs[PROFILE_FUNCTION][i].ptr, r->msgs[PROFILE_FUNCTION][i].len);
        while (pb_next(&rd, &f)) {
            if (f.wire != PB_VARINT) continue;
            if (f.number == FUNCTION_ID) fn->id = f.value;
            if (f.number == FUNCTION_NAME) fn->name = f.value;
            if (f.number == FUNCTION_FILENAME) fn->file = f.value;
        }
        if (rd.err || fn->name >= r->n_strings || fn->file >= r->n_strings)
            return fail(r, "function %zu is malformed", i);
    }
    qsort(r->functions, n, sizeof *r->functions, cmp_id);
    r->n_functions = n;
    if (!check_unique(r->functions, n, sizeof *r->functions))
        return fail(r, "two functions share an id");
    return 0;
}

static int add_loc_frame(struct pprof *r, const struct profile_frame *fr, size_t *cap)
{
    /* The frame, its share of the model's hash table, its index here. */
    if (charge(r, sizeof *fr + 32 + sizeof *r->loc_frames)) return -1;
    int64_t idx = profile_intern_frame(r->p, fr);
    if (idx < 0) return fail(r, "out of memory");
    if (r->n_loc_frames == *cap) {
        *cap = *cap ? *cap * 2 : 1024;
        uint32_t *q = realloc(r->loc_frames, *cap * sizeof *q);
        if (!q) return fail(r, "out of memory");
        r->loc_frames = q;
    }
    r->loc_frames[r->n_loc_frames++] = (uint32_t)idx;
    return 0;
}

/* One location: its lines as frames (innermost first), or its bare address. */
static int read_location(struct pprof *r, size_t i, size_t *cap)
{
    struct pb_reader rd;
    struct pb_field f;
    struct pp_location *loc = &r->locations[i];
    uint64_t mapping = 0, address = 0;
    size_t n_lines = 0;
    pb_reader_init(&rd, r->msgs[PROFILE_LOCATION][i].ptr, r->msgs[PROFILE_LOCATION][i].len);
    while (pb_next(&rd, &f)) {
        if (f.number == LOCATION_ID && f.wire == PB_VARINT) loc->id = f.value;
        if (f.number == LOCATION_MAPPING_ID && f.wire == PB_VARINT) mapping = f.value;
        if (f.number == LOCATION_ADDRESS && f.wire == PB_VARINT) address = f.value;
        if (f.number == LOCATION_LINE && f.wire == PB_LEN) n_lines++;
    }
    if (rd.err) return fail(r, "location %zu is malformed", i);
    int32_t image = -1;
    if (mapping) {
        const struct pp_mapping *m = by_id(r->mappings, r->n_mappings, sizeof *m, mapping);
        if (!m)
            return fail(r, "location %zu: mapping %llu does not exist", i,
                        (unsigned long long)mapping);
        image = (int32_t)m->image;
    } else {
        image = profile_image_of(r->p, address);
    }
    loc->first = (uint32_t)r->n_loc_frames;
    if (n_lines > PROFILE_MAX_DEPTH) return fail(r, "location %zu has %zu lines", i, n_lines);
    size_t k = 0;
    pb_reader_init(&rd, r->msgs[PROFILE_LOCATION][i].ptr, r->msgs[PROFILE_LOCATION][i].len);
    while (pb_next(&rd, &f)) {
        if (f.number != LOCATION_LINE || f.wire != PB_LEN) continue;
        struct pb_reader lr;
        struct pb_field lf;
        uint64_t fid = 0;
        int64_t line = 0, column = 0;
        pb_reader_init(&lr, f.ptr, f.len);
        while (pb_next(&lr, &lf)) {
            if (lf.wire != PB_VARINT) continue;
            if (lf.number == LINE_FUNCTION_ID) fid = lf.value;
            if (lf.number == LINE_LINE) line = (int64_t)lf.value;
            if (lf.number == LINE_COLUMN) column = (int64_t)lf.value;
        }
        const struct pp_function *fn = by_id(r->functions, r->n_functions, sizeof *fn, fid);
        if (lr.err || !fn) return fail(r, "location %zu: line %zu names no function", i, k);
        int bad = 0;
        struct profile_frame fr = {.name = (char *)str(r, fn->name, &bad),
                                   .file = *str(r, fn->file, &bad) ? (char *)str(r, fn->file, &bad)
                                                                   : NULL,
                                   .line = line > 0 && line < INT32_MAX ? (int32_t)line : 0,
                                   .column = column > 0 && column < INT32_MAX ? (int32_t)column : 0,
                                   .image = image,
                                   .address = address,
                                   .inlined = k + 1 < n_lines,
                                   .symbolized = 1};
        char hex[24];
        if (!*fr.name) { /* a function without a name still needs one */
            snprintf(hex, sizeof hex, "0x%llx", (unsigned long long)address);
            fr.name = hex;
        }
        if (add_loc_frame(r, &fr, cap)) return -1;
        k++;
    }
    if (!n_lines) {
        char hex[24];
        snprintf(hex, sizeof hex, "0x%llx", (unsigned long long)address);
        struct profile_frame fr = {.name = hex, .image = image, .address = address};
        if (add_loc_frame(r, &fr, cap)) return -1;
    }
    loc->n = (uint32_t)(r->n_loc_frames - loc->first);
    return 0;
}

static int read_locations(struct pprof *r)
{
    size_t n = r->n_msgs[PROFILE_LOCATION], cap = 0;
    if (charge(r, (n + 1) * sizeof *r->locations)) return -1;
    r->locations = calloc(n + 1, sizeof *r->locations);
    if (!r->locations) return fail(r, "out of memory");
    for (size_t i = 0; i < n; i++)
        if (read_location(r, i, &cap)) return -1;
    qsort(r->locations, n, sizeof *r->locations, cmp_id);
    r->n_locations = n;
    if (!check_unique(r->locations, n, sizeof *r->locations))
        return fail(r, "two locations share an id");
    return 0;
}

static uint64_t hash_label(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The thread a sample's labels name (label "thread"), created on first sight; found
 * through a hash of the labels (a scan of every thread per sample made a profile of
 * 100,000 thread names take minutes). -1 when memory runs out, -2 past the budget. */
static int64_t thread_of(struct pprof *r, const char *name)
{
    struct profile *p = r->p;
    uint64_t h = hash_label(name);
    for (size_t j = h & r->thread_mask; r->thread_slots && r->thread_slots[j];
         j = (j + 1) & r->thread_mask)
        if (!strcmp(p->threads[r->thread_slots[j] - 1].label, name))
            return (int64_t)r->thread_slots[j] - 1;
    if (charge(r, sizeof *p->threads + 2 * strlen(name) + 64 + 2 * sizeof *r->thread_slots))
        return -2;
    if (2 * (p->n_threads + 1) > (r->thread_slots ? r->thread_mask + 1 : 0)) {
        size_t cap = r->thread_slots ? 2 * (r->thread_mask + 1) : 64;
        uint32_t *slots = calloc(cap, sizeof *slots);
        if (!slots) return -1;
        for (size_t i = 0; i < p->n_threads; i++) {
            size_t j = hash_label(p->threads[i].label) & (cap - 1);
            while (slots[j])
                j = (j + 1) & (cap - 1);
            slots[j] = (uint32_t)i + 1;
        }
        free(r->thread_slots);
        r->thread_slots = slots;
        r->thread_mask = cap - 1;
    }
    int64_t t = profile_add_thread(p, name, 0, -1, *name ? name : NULL);
    if (t < 0) return -1;
    size_t j = h & r->thread_mask;
    while (r->thread_slots[j])
        j = (j + 1) & r->thread_mask;
    r->thread_slots[j] = (uint32_t)t + 1;
    return t;
}

/* Appends a repeated varint field's values (packed or one unpacked) to out[*n],
 * at most max in all. Returns 0, -1 when malformed, -2 when there are too many. */
static int collect(const struct pb_field *f, uint64_t *out, size_t *n, size_t max)
{
    if (f->wire == PB_VARINT) {
        if (*n >= max) return -2;
        out[(*n)++] = f->value;
        return 0;
    }
    if (f->wire != PB_LEN) return -1;
    struct pb_reader pr;
    uint64_t v;
    pb_reader_init(&pr, f->ptr, f->len);
    while (pb_next_packed(&pr, &v)) {
        if (*n >= max) return -2;
        out[(*n)++] = v;
    }
    return pr.err ? -1 : 0;
}

/* A sample's labels: "thread" (its thread's name) and "state" ("waiting"). */
static int read_label(struct pprof *r, const struct pb_field *f, const char **thread, int *state)
{
    struct pb_reader lr;
    struct pb_field lf;
    const char *key = "", *val = "";
    int bad = 0;
    pb_reader_init(&lr, f->ptr, f->len);
    while (pb_next(&lr, &lf)) {
        if (lf.number == LABEL_KEY && lf.wire == PB_VARINT) key = str(r, lf.value, &bad);
        if (lf.number == LABEL_STR && lf.wire == PB_VARINT) val = str(r, lf.value, &bad);
    }
    if (lr.err || bad) return -1;
    if (!strcmp(key, "thread")) *thread = val;
    if (!strcmp(key, "state")) *state = !strcmp(val, "waiting") ? PROFILE_WAITING : PROFILE_RUNNING;
    return 0;
}

static int read_sample(struct pprof *r, size_t i, uint64_t *ids, uint32_t *frames)
{
    struct profile *p = r->p;
    struct pb_reader rd;
    struct pb_field f;
    uint64_t values[PROFILE_MAX_SAMPLE_TYPES];
    size_t n_ids = 0, n_values = 0, depth = 0;
    const char *thread = "process";
    int state = PROFILE_RUNNING;
    pb_reader_init(&rd, r->msgs[PROFILE_SAMPLE][i].ptr, r->msgs[PROFILE_SAMPLE][i].len);
    while (pb_next(&rd, &f)) {
        int rc = 0;
        if (f.number == SAMPLE_LOCATION_ID) rc = collect(&f, ids, &n_ids, PROFILE_MAX_DEPTH);
        if (f.number == SAMPLE_VALUE) rc = collect(&f, values, &n_values, PROFILE_MAX_SAMPLE_TYPES);
        if (f.number == SAMPLE_LABEL && (f.wire != PB_LEN || read_label(r, &f, &thread, &state))) rc = -1;
        if (rc == -2 && f.number == SAMPLE_LOCATION_ID)
            return fail(r, "sample %zu: stack deeper than %d frames", i, PROFILE_MAX_DEPTH);
        if (rc) return fail(r, "sample %zu is malformed", i);
    }
    if (rd.err) return fail(r, "sample %zu is malformed", i);
    if (n_values != p->n_sample_types)
        return fail(r, "sample %zu has %zu values for %zu sample types", i, n_values,
                    p->n_sample_types);
    for (size_t k = 0; k < n_ids; k++) {
        const struct pp_location *loc = by_id(r->locations, r->n_locations, sizeof *loc, ids[k]);
        if (!loc)
            return fail(r, "sample %zu: location %llu does not exist", i,
                        (unsigned long long)ids[k]);
        if (depth + loc->n > PROFILE_MAX_DEPTH)
            return fail(r, "sample %zu: stack deeper than %d frames", i, PROFILE_MAX_DEPTH);
        memcpy(frames + depth, r->loc_frames + loc->first, loc->n * sizeof *frames);
        depth += loc->n;
    }
    if (!depth) return 0; /* nothing to attribute it to */
    if (charge(r, sizeof(struct profile_sample) + p->n_sample_types * sizeof(int64_t) +
                      sizeof(struct profile_stack) + depth * sizeof *frames + 32))
        return -1;
    int64_t t = thread_of(r, thread);
    if (t == -2) return -1;
    int64_t st = t < 0 ? -1 : profile_intern_stack(p, frames, (uint32_t)depth);
    if (st < 0 || profile_add_sample(p, (uint32_t)t, (uint32_t)st, state, -1, (int64_t *)values))
        return fail(r, "out of memory");
    return 0;
}

static int read_samples(struct pprof *r)
{
    uint32_t *frames = malloc(PROFILE_MAX_DEPTH * sizeof *frames);
    uint64_t *ids = malloc(PROFILE_MAX_DEPTH * sizeof *ids);
    int rc = frames && ids ? 0 : fail(r, "out of memory");
    for (size_t i = 0; !rc && i < r->n_msgs[PROFILE_SAMPLE]; i++)
        rc = read_sample(r, i, ids, frames);
    free(frames);
    free(ids);
    if (!rc && !r->p->n_threads && profile_add_thread(r->p, "process", 0, -1, NULL) < 0)
        rc = fail(r, "out of memory");
    return rc;
}

/* "stacks=108/65536 strings=14/32768": how full each runtime table was; "stack
 * walks: ...": the profile says how its stacks' walks ended (the cut ones end in
 * PROFILE_INCOMPLETE_FRAME). */
static int read_table_comments(struct pprof *r)
{
    for (size_t i = 0; i < r->p->meta.n_comments; i++) {
        const char *c = r->p->meta.comments[i];
        if (!strncmp(c, PROFILE_WALKS_COMMENT, strlen(PROFILE_WALKS_COMMENT)))
            r->p->meta.ends_known = 1;
        if (!strncmp(c, "past the limits:", 16)) continue;
        char name[64];
        unsigned long long used, limit;
        int len;
        while (sscanf(c, " %63[a-z_]=%llu/%llu%n", name, &used, &limit, &len) == 3) {
            if (profile_add_table(r->p, name, used, limit, 0)) return fail(r, "out of memory");
            c += len;
        }
    }
    return 0;
}

struct profile *read_pprof(const void *data, size_t len, char *why, size_t why_size)
{
    const uint8_t *buf = data;
    uint8_t *inflated = NULL;
    why[0] = 0;
    if (len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b) {
        if (inflate_all(buf, len, &inflated, &len, why, why_size)) return NULL;
        buf = inflated;
    }
    struct pprof r = {.p = profile_new(PROFILE_CPU),
                      .why = why,
                      .why_size = why_size,
                      .content_len = len,
                      .budget = read_memory_budget(len)};
    int rc = r.p ? 0 : fail(&r, "out of memory");
    if (!rc) rc = split(&r, buf, len);
    if (!rc) rc = read_types(&r);
    if (!rc) rc = read_mappings(&r);
    if (!rc) rc = read_functions(&r);
    if (!rc) rc = read_locations(&r);
    if (!rc) rc = read_samples(&r);
    if (!rc) rc = read_table_comments(&r);
    if (!rc) rc = profile_check(r.p, why, why_size);
    for (int k = 0; k < 16; k++)
        free(r.msgs[k]);
    free(r.strings);
    free(r.string_pool);
    free(r.mappings);
    free(r.functions);
    free(r.locations);
    free(r.loc_frames);
    free(r.thread_slots);
    free(inflated);
    if (rc) {
        profile_free(r.p);
        return NULL;
    }
    return r.p;
}
