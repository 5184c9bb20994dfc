/* Reader of the raw CPU profile, JSON v1 (FORMATS.md §1). The seed's fields alone
 * make a complete profile; kestrel's optional fields are read when present. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model/intmap.h"
#include "analysis/readers/raw_chunks.h"
#include "analysis/readers/raw_scan.h"
#include "analysis/readers/readers.h"
#include "runtime/unwind/unwind.h"

struct raw {
    struct profile *p;
    char *why;
    size_t why_size;
    uint32_t *stack_of; /* input stack index -> model stack index */
    size_t other_stack; /* the runtime's "(other stacks)" bucket; SIZE_MAX when none */
    size_t n_stacks_in;
    struct intmap frame_of; /* address + 1 -> its frame */
    uint32_t *frames;           /* one stack's frames (PROFILE_MAX_DEPTH) */
    uint64_t *row;              /* one stack's addresses (PROFILE_MAX_DEPTH) */
    size_t content_len;         /* the document's bytes */
    size_t budget, used;        /* memory this read may take (readers.h), and has charged */
    const uint64_t *bigs;       /* jansson path: integers past INT64_MAX, sorted (big_*) */
    size_t n_bigs;
    uint8_t *ends;              /* input stack -> how its walk ended; NULL when not given */
    size_t n_ends;
    int64_t incomplete;         /* the PROFILE_INCOMPLETE_FRAME frame, -1 until needed */
    const json_t *guessed_in;   /* "stacks_guessed", NULL when not given */
    uint8_t *guessed;           /* input stack -> 1 when a guess; NULL when none is */
    int64_t guessed_frame;      /* the PROFILE_GUESSED_FRAME frame, -1 until needed */
};

static int big_was(const struct raw *r, int64_t x);
static struct profile *read_raw_doc(const char *buf, size_t len, char *why, size_t why_size,
                                    const struct raw_chunks *ch);

static int fail(struct raw *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, r->why_size, fmt, ap);
    va_end(ap);
    return -1;
}

/* Counts n bytes against the read's memory budget (an upper bound of what the model
 * will hold for what is about to be added); -1 with the reason once past it. */
static int charge(struct raw *r, size_t n)
{
    r->used += n;
    return r->used > r->budget ? read_over_budget(r->why, r->why_size, r->budget, r->content_len)
                               : 0;
}

/* An optional integer field; -1 when it is present with the wrong type. */
static int opt_int(struct raw *r, const json_t *obj, const char *key, json_int_t *out,
                   const char *where)
{
    const json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) return 0;
    if (!json_is_integer(v)) return fail(r, "%s: \"%s\" is not an integer", where, key);
    *out = json_integer_value(v);
    return 0;
}

static int opt_uint(struct raw *r, const json_t *obj, const char *key, uint64_t *out,
                    const char *where)
{
    json_int_t v = 0;
    if (opt_int(r, obj, key, &v, where)) return -1;
    if (v < 0) return fail(r, "%s: \"%s\" is negative", where, key);
    if (json_object_get(obj, key)) *out = (uint64_t)v;
    return 0;
}

static int opt_number(struct raw *r, const json_t *obj, const char *key, double *out)
{
    const json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) return 0;
    if (!json_is_number(v)) return fail(r, "\"%s\" is not a number", key);
    *out = json_number_value(v);
    if (!(*out >= 0 && *out < 1e9)) return fail(r, "\"%s\" is out of range", key);
    return 0;
}

/* A string the runtime wrote as bytes ("<key>_bytes": true beside it; docs/raw-format.md):
 * each code point U+0080..U+00FF stands for the byte of that value. Decoded in place,
 * in the parsed value's own buffer: the bytes are never more than their UTF-8. */
static void raw_bytes_decode(char *s)
{
    unsigned char *in = (unsigned char *)s, *out = in;
    while (*in) {
        if ((in[0] == 0xc2 || in[0] == 0xc3) && (in[1] & 0xc0) == 0x80) {
            *out++ = (unsigned char)(((in[0] & 0x03) << 6) | (in[1] & 0x3f));
            in += 2;
        } else {
            *out++ = *in++;
        }
    }
    *out = 0;
}

/* An optional string field: NULL when absent. */
static int opt_str(struct raw *r, const json_t *obj, const char *key, const char **out,
                   const char *where)
{
    const json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v || json_is_null(v)) return 0;
    if (!json_is_string(v)) return fail(r, "%s: \"%s\" is not a string", where, key);
    *out = json_string_value(v);
    char flag[64];
    snprintf(flag, sizeof flag, "%s_bytes", key);
    if (json_is_true(json_object_get(obj, flag))) raw_bytes_decode((char *)*out);
    return 0;
}

static const json_t *need_array(struct raw *r, const json_t *root, const char *key)
{
    const json_t *v = json_object_get(root, key);
    if (!v) {
        fail(r, "no \"%s\" array: not a kestrel raw profile", key);
        return NULL;
    }
    if (!json_is_array(v)) {
        fail(r, "\"%s\" is not an array", key);
        return NULL;
    }
    return v;
}

static int valid_build_id(const char *s)
{
    size_t n = strlen(s);
    if (n % 2 || n > 128) return 0;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f'))) return 0;
    return 1;
}

/* ------------------------------------------------------------------ sections */

static int read_meta(struct raw *r, const json_t *root)
{
    struct profile_meta *m = &r->p->meta;
    const json_t *v = json_object_get(root, "version");
    if (!v) return fail(r, "no \"version\": not a kestrel raw profile");
    if (!json_is_integer(v) || json_integer_value(v) != 1)
        return fail(r, "unsupported raw profile version (kestrel reads version 1)");
    const char *exe, *platform, *engine, *fallback, *choice, *perf_map;
    json_int_t pid = -1, start = 0, end = 0;
    if (opt_str(r, root, "exe", &exe, "profile") ||
        opt_str(r, root, "platform", &platform, "profile") ||
        opt_str(r, root, "engine", &engine, "profile") ||
        opt_str(r, root, "engine_fallback", &fallback, "profile") ||
        opt_str(r, root, "engine_choice", &choice, "profile") ||
        opt_str(r, root, "perf_map", &perf_map, "profile") ||
        opt_int(r, root, "pid", &pid, "profile") ||
        opt_int(r, root, "start_unix_ns", &start, "profile") ||
        opt_int(r, root, "end_unix_ns", &end, "profile") ||
        opt_number(r, root, "rate_hz", &m->rate_hz) ||
        opt_number(r, root, "requested_hz", &m->requested_hz) ||
        opt_uint(r, root, "dropped", &m->dropped, "profile"))
        return -1;
    /* kestrel's own work on the program's threads, left out of the samples. */
    const json_t *es = json_object_get(root, "engine_stats");
    if (json_is_object(es) &&
        opt_uint(r, es, "runtime_samples", &m->runtime_samples, "engine_stats"))
        return -1;
    /* The count of walks cut short (the runtime writes walks_cut_short). */
    static const char *const truncated_keys[] = {"walks_cut_short", "truncated_walks"};
    for (size_t i = 0; i < sizeof truncated_keys / sizeof *truncated_keys; i++)
        if (opt_uint(r, root, truncated_keys[i], &m->truncated, "profile")) return -1;
    json_int_t ppid = -1, gen = 0;
    if (opt_int(r, root, "ppid", &ppid, "profile") ||
        opt_int(r, root, "exec_gen", &gen, "profile"))
        return -1;
    m->pid = pid;
    m->ppid = ppid;
    m->exec_gen = gen;
    m->start_unix_ns = start;
    m->end_unix_ns = end;
    if ((exe && !(m->exe = strdup(exe))) || (platform && !(m->platform = strdup(platform))) ||
        (engine && !(m->engine = strdup(engine))) ||
        (perf_map && *perf_map && !(m->perf_map = strdup(perf_map))))
        return fail(r, "out of memory");
    /* What auto chose and why; it says the fallback's reason too. */
    if (choice || fallback) {
        char note[512];
        snprintf(note, sizeof note, "engine: %s", choice ? choice : fallback);
        if (profile_add_comment(r->p, note)) return fail(r, "out of memory");
    }
    /* What the engine says the profile lacks (docs/raw-format.md: engine_notes). */
    const json_t *notes = json_object_get(root, "engine_notes");
    if (notes && !json_is_null(notes)) {
        if (!json_is_array(notes)) return fail(r, "\"engine_notes\" is not an array");
        size_t i;
        const json_t *n;
        json_array_foreach(notes, i, n)
        {
            if (!json_is_string(n)) return fail(r, "engine_notes: entry %zu is not a string", i);
            char note[512];
            snprintf(note, sizeof note, "engine: %s", json_string_value(n));
            if (profile_add_comment(r->p, note)) return fail(r, "out of memory");
        }
    }
    return 0;
}

/* The one process a raw profile is of, named as it was invoked (the base name of
 * "invoked"; the exe's when there is none); every thread is its. */
static int read_process(struct raw *r, const json_t *root)
{
    const struct profile_meta *m = &r->p->meta;
    const json_t *cmd = json_object_get(root, "cmdline");
    if (cmd && !json_is_null(cmd) && !json_is_array(cmd))
        return fail(r, "\"cmdline\" is not an array");
    size_t len = 1, i;
    const json_t *a;
    json_array_foreach(cmd, i, a)
    {
        if (!json_is_string(a)) return fail(r, "cmdline: argument %zu is not a string", i);
        len += json_string_length(a) + 1;
    }
    char *line = json_array_size(cmd) ? malloc(len) : NULL;
    if (json_array_size(cmd) && !line) return fail(r, "out of memory");
    size_t o = 0;
    json_array_foreach(cmd, i, a)
    {
        /* Arguments hold no NUL (they came from a NUL-separated list). */
        o += (size_t)snprintf(line + o, len - o, "%s%s", i ? " " : "", json_string_value(a));
    }
    /* Named as the image was invoked ("invoked": argv[0] before main, a symlink's name
     * rather than its target's), else by its executable: never by the command line as
     * the process ended, where servers write their status in argv[0]. */
    const char *invoked;
    if (opt_str(r, root, "invoked", &invoked, "profile")) {
        free(line);
        return -1;
    }
    const char *named = invoked && *invoked ? invoked : m->exe && *m->exe ? m->exe : "?";
    const char *slash = strrchr(named, '/');
    struct profile_process pr = {.pid = m->pid,
                                 .ppid = m->ppid,
                                 .name = (char *)(slash && slash[1] ? slash + 1 : named),
                                 .exe = m->exe,
                                 .cmdline = line,
                                 .start_unix_ns = m->start_unix_ns,
                                 .end_unix_ns = m->end_unix_ns};
    int64_t k = profile_add_process(r->p, &pr);
    free(line);
    if (k < 0) return fail(r, "out of memory");
    for (size_t t = 0; t < r->p->n_threads; t++)
        r->p->threads[t].process = (int32_t)k;
    return 0;
}

/* Table fills, as the runtime writes them: "tables": {"stacks": [used, limit], ...}
 * ({"used", "limit", "past"} objects are read too), and "past_limits": {name: count}
 * for what went past a table's limit. */
static int read_table(struct raw *r, const char *name, const json_t *t)
{
    uint64_t used = 0, limit = 0, past = 0;
    if (json_is_array(t) && json_array_size(t) == 2 && json_is_integer(json_array_get(t, 0)) &&
        json_is_integer(json_array_get(t, 1)) && json_integer_value(json_array_get(t, 0)) >= 0 &&
        json_integer_value(json_array_get(t, 1)) >= 0) {
        used = (uint64_t)json_integer_value(json_array_get(t, 0));
        limit = (uint64_t)json_integer_value(json_array_get(t, 1));
    } else if (!json_is_object(t)) {
        return fail(r, "tables: \"%s\" is not [used, limit]", name);
    } else if (opt_uint(r, t, "used", &used, "tables") ||
               opt_uint(r, t, "limit", &limit, "tables") ||
               opt_uint(r, t, "past", &past, "tables")) {
        return -1;
    }
    return profile_add_table(r->p, name, used, limit, past) ? fail(r, "out of memory") : 0;
}

static int read_past_limits(struct raw *r, const json_t *root)
{
    const json_t *past = json_object_get(root, "past_limits");
    if (!past || json_is_null(past)) return 0;
    if (!json_is_object(past)) return fail(r, "\"past_limits\" is not an object");
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)past, key, v)
    {
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return fail(r, "past_limits: \"%s\" is not a count", key);
        uint64_t n = (uint64_t)json_integer_value(v);
        struct profile_table *t = NULL;
        for (size_t i = 0; i < r->p->meta.n_tables; i++)
            if (!strcmp(r->p->meta.tables[i].name, key)) t = &r->p->meta.tables[i];
        if (t) {
            t->past = n;
        } else if (n) {
            char note[256];
            snprintf(note, sizeof note, "past the limits: %s=%llu", key, (unsigned long long)n);
            if (profile_add_comment(r->p, note)) return fail(r, "out of memory");
        }
    }
    return 0;
}

static int read_tables(struct raw *r, const json_t *root)
{
    const json_t *tables = json_object_get(root, "tables");
    if (!tables || json_is_null(tables)) return read_past_limits(r, root);
    if (!json_is_object(tables)) return fail(r, "\"tables\" is not an object");
    const char *key;
    const json_t *t;
    json_object_foreach((json_t *)tables, key, t) if (read_table(r, key, t)) return -1;
    return read_past_limits(r, root);
}

static int read_images(struct raw *r, const json_t *root)
{
    const json_t *images = json_object_get(root, "images");
    if (!images) return 0; /* nothing to symbolize against: every frame stays hex */
    if (!json_is_array(images)) return fail(r, "\"images\" is not an array");
    size_t i;
    const json_t *o;
    json_array_foreach(images, i, o)
    {
        char where[32];
        snprintf(where, sizeof where, "image %zu", i);
        if (!json_is_object(o)) return fail(r, "%s is not an object", where);
        struct profile_image im = {.slide_known = 1};
        const char *path, *arch, *build_id, *elf;
        if (opt_str(r, o, "path", &path, where) || opt_str(r, o, "arch", &arch, where) ||
            opt_str(r, o, "build_id", &build_id, where) || opt_str(r, o, "elf", &elf, where) ||
            opt_uint(r, o, "offset", &im.text_offset, where) ||
            opt_uint(r, o, "base", &im.base, where) || opt_uint(r, o, "slide", &im.slide, where) ||
            opt_uint(r, o, "text", &im.text, where) ||
            opt_uint(r, o, "text_size", &im.text_size, where))
            return -1;
        if (build_id && *build_id && !valid_build_id(build_id))
            return fail(r, "%s: build_id is not lowercase hex", where);
        if (im.text_size && im.text + im.text_size < im.text)
            return fail(r, "%s: text range wraps around", where);
        im.path = (char *)(path ? path : "");
        im.arch = (char *)(arch && *arch ? arch : NULL);
        im.build_id = (char *)(build_id && *build_id ? build_id : NULL);
        im.elf = (char *)(elf && *elf ? elf : NULL);
        /* An image found in /proc/self/maps has a file offset, and its slide is
         * derived from the file, as for a pprof mapping. */
        im.slide_known = !json_object_get(o, "offset");
        im.is_main = r->p->meta.exe && path && !strcmp(path, r->p->meta.exe);
        if (charge(r, sizeof im + (path ? strlen(path) : 0) + (arch ? strlen(arch) : 0) +
                          (build_id ? strlen(build_id) : 0) + 96))
            return -1;
        if (profile_add_image(r->p, &im) < 0) return fail(r, "out of memory");
    }
    /* Without an exe field, the first image is the program (the runtime lists it
     * first). */
    int any_main = 0;
    for (size_t k = 0; k < r->p->n_images; k++)
        any_main |= r->p->images[k].is_main;
    if (!any_main && r->p->n_images) r->p->images[0].is_main = 1;
    return 0;
}

/* "stack_ends": how each stack's walk ended, one code per stack (docs/raw-format.md);
 * a code this reader does not know counts as not classified. */
static int read_stack_ends(struct raw *r, const json_t *root)
{
    const json_t *ends = json_object_get(root, "stack_ends");
    if (!ends || json_is_null(ends)) return 0;
    if (!json_is_array(ends)) return fail(r, "\"stack_ends\" is not an array");
    r->n_ends = json_array_size(ends);
    if (!(r->ends = malloc(r->n_ends + 1))) return fail(r, "out of memory");
    size_t i;
    const json_t *v;
    json_array_foreach(ends, i, v)
    {
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 255)
            return fail(r, "stack_ends: entry %zu is not a walk-end code", i);
        r->ends[i] = (uint8_t)json_integer_value(v);
    }
    r->p->meta.ends_known = 1;
    const json_t *g = json_object_get(root, "stacks_guessed");
    if (g && !json_is_null(g) && !json_is_array(g))
        return fail(r, "\"stacks_guessed\" is not an array");
    r->guessed_in = json_is_array(g) && json_array_size(g) ? g : NULL;
    return 0;
}

/* "stacks_guessed": the indices of the stacks the runtime gave samples it did not walk
 * (docs/raw-format.md), for n input stacks. */
static int guessed_begin(struct raw *r, size_t n)
{
    if (!r->guessed_in) return 0;
    if (!(r->guessed = calloc(n + 1, 1))) return fail(r, "out of memory");
    size_t i;
    const json_t *v;
    json_array_foreach(r->guessed_in, i, v)
    {
        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
            (uint64_t)json_integer_value(v) >= n)
            return fail(r, "stacks_guessed: entry %zu is not the index of a stack", i);
        r->guessed[json_integer_value(v)] = 1;
    }
    return 0;
}

/* The frame of a root-side mark (image -1, symbolized), interned once into *f. */
static int mark_frame(struct raw *r, int64_t *f, const char *name)
{
    if (*f >= 0) return 0;
    struct profile_frame mark = {.name = (char *)name, .image = -1, .symbolized = 1};
    return (*f = profile_intern_frame(r->p, &mark)) < 0 ? fail(r, "out of memory") : 0;
}

static int read_threads(struct raw *r, const json_t *root)
{
    const json_t *threads = need_array(r, root, "threads");
    if (!threads) return -1;
    size_t i;
    const json_t *o;
    json_array_foreach(threads, i, o)
    {
        char where[32];
        snprintf(where, sizeof where, "thread %zu", i);
        if (!json_is_object(o)) return fail(r, "%s is not an object", where);
        const char *label, *name;
        json_int_t fiber = 0, tid = -1;
        if (opt_str(r, o, "label", &label, where) || opt_str(r, o, "name", &name, where) ||
            opt_int(r, o, "fiber", &fiber, where) || opt_int(r, o, "tid", &tid, where))
            return -1;
        if (charge(r, sizeof(struct profile_thread) + (label ? strlen(label) : 0) +
                          (name ? strlen(name) : 0) + 64))
            return -1;
        if (profile_add_thread(r->p, label ? label : "thread", fiber, tid, name) < 0)
            return fail(r, "out of memory");
    }
    return 0;
}

/* An address's frame, interned once: stacks repeat the same few thousand addresses
 * hundreds of thousands of times. */
static int64_t address_frame(struct raw *r, uint64_t address)
{
    int added;
    if (address == UINT64_MAX) { /* its key would be the map's empty one: the model's own
                                  * interning finds it instead */
        if (charge(r, sizeof(struct profile_frame) + 20 + 32)) return -2;
        return profile_intern_address(r->p, address);
    }
    uint32_t *slot = intmap_slot(&r->frame_of, address + 1, &added); /* key 0 is empty */
    if (!slot) return -1;
    if (added) {
        /* The frame, its "0x..." name, the model's and this map's hash entries. */
        if (charge(r, sizeof(struct profile_frame) + 20 + 32 + 16)) return -2;
        int64_t f = profile_intern_address(r->p, address);
        if (f < 0) return -1;
        *slot = (uint32_t)f;
    }
    return *slot;
}

/* Input stack i: its n addresses in v (v is not read when n is past the depth limit).
 * Any u64 is a frame: what is an address is the symbolizer's to find. */
static int add_stack(struct raw *r, size_t i, const uint64_t *v, size_t n)
{
    size_t depth = n;
    if (!n) {
        /* The runtime's bucket for samples past its stack table's limit has no
         * frames: it becomes one frame that says so. */
        struct profile_frame other = {
            .name = (char *)(i == r->other_stack ? "(other stacks)" : "(no frames)"),
            .image = -1,
            .symbolized = 1};
        int64_t f = profile_intern_frame(r->p, &other);
        if (f < 0) return fail(r, "out of memory");
        r->frames[0] = (uint32_t)f;
        depth = 1;
    }
    if (depth > PROFILE_MAX_DEPTH)
        return fail(r, "stack %zu is %zu frames deep (at most %d)", i, depth, PROFILE_MAX_DEPTH);
    for (size_t k = 0; k < n; k++) {
        int64_t f = address_frame(r, v[k]);
        if (f == -2) return -1;
        if (f < 0) return fail(r, "out of memory");
        r->frames[k] = (uint32_t)f;
    }
    /* A guess sits under the frame that says so, and a walk cut short under the one
     * that says that, outermost (at the depth limit they go without; the sample is
     * counted as cut or guessed all the same). */
    if (r->guessed && r->guessed[i] && depth < PROFILE_MAX_DEPTH) {
        if (mark_frame(r, &r->guessed_frame, PROFILE_GUESSED_FRAME)) return -1;
        r->frames[depth++] = (uint32_t)r->guessed_frame;
    }
    if (n && r->ends && unwind_cut_short((enum unwind_stop)r->ends[i]) &&
        depth < PROFILE_MAX_DEPTH) {
        if (mark_frame(r, &r->incomplete, PROFILE_INCOMPLETE_FRAME)) return -1;
        r->frames[depth++] = (uint32_t)r->incomplete;
    }
    if (charge(r, sizeof(struct profile_stack) + depth * sizeof *r->frames + 32)) return -1;
    int64_t st = profile_intern_stack(r->p, r->frames, (uint32_t)depth);
    if (st < 0) return fail(r, "out of memory");
    r->stack_of[i] = (uint32_t)st;
    return 0;
}

/* The tables add_stack needs, for n input stacks. */
static int stacks_begin(struct raw *r, size_t n)
{
    r->n_stacks_in = n;
    if (r->ends && r->n_ends != n)
        return fail(r, "\"stack_ends\" has %zu entries for %zu stacks", r->n_ends, n);
    if (guessed_begin(r, n)) return -1;
    if (charge(r, (n + 1) * sizeof *r->stack_of)) return -1;
    r->frames = malloc(PROFILE_MAX_DEPTH * sizeof *r->frames);
    r->stack_of = malloc((n + 1) * sizeof *r->stack_of);
    r->row = malloc(PROFILE_MAX_DEPTH * sizeof *r->row);
    return r->frames && r->stack_of && r->row ? 0 : fail(r, "out of memory");
}

static int read_stacks(struct raw *r, const json_t *root)
{
    const json_t *stacks = need_array(r, root, "stacks");
    if (!stacks || stacks_begin(r, json_array_size(stacks))) return -1;
    size_t i;
    const json_t *s;
    json_array_foreach(stacks, i, s)
    {
        if (!json_is_array(s)) return fail(r, "stack %zu is not an array", i);
        size_t n = json_array_size(s);
        for (size_t k = 0; n <= PROFILE_MAX_DEPTH && k < n; k++) {
            const json_t *a = json_array_get(s, k);
            json_int_t x = json_is_integer(a) ? json_integer_value(a) : -1;
            if (x < 0 && !(json_is_integer(a) && big_was(r, x)))
                return fail(r, "stack %zu: frame %zu is not an address", i, k);
            r->row[k] = (uint64_t)x;
        }
        if (add_stack(r, i, r->row, n)) return -1;
    }
    return 0;
}

/* A 5th column anywhere (CPU ns since the thread's previous sample) adds the cpu
 * sample type; the types are fixed before the first sample. */
static int samples_begin(struct raw *r, int has_cpu)
{
    if (profile_add_sample_type(r->p, "samples", "count") < 0 ||
        (has_cpu && profile_add_sample_type(r->p, "cpu", "nanoseconds") < 0))
        return fail(r, "out of memory");
    return 0;
}

/* Input sample i: its n columns in c. */
static int add_sample(struct raw *r, size_t i, const int64_t *c, size_t n)
{
    if (n != 4 && n != 5) return fail(r, "sample %zu is not a row of 4 or 5 integers", i);
    int64_t cpu = n == 5 ? c[4] : 0;
    if (c[1] < 0 || (size_t)c[1] >= r->p->n_threads)
        return fail(r, "sample %zu: thread %lld out of range (%zu threads)", i, (long long)c[1],
                    r->p->n_threads);
    if (c[2] < 0 || (size_t)c[2] >= r->n_stacks_in)
        return fail(r, "sample %zu: stack %lld out of range (%zu stacks)", i, (long long)c[2],
                    r->n_stacks_in);
    if (c[3] != PROFILE_RUNNING && c[3] != PROFILE_WAITING)
        return fail(r, "sample %zu: unknown state %lld", i, (long long)c[3]);
    if (cpu < 0) return fail(r, "sample %zu: negative CPU time", i);
    int64_t values[2] = {1, cpu};
    if (charge(r, sizeof(struct profile_sample) + r->p->n_sample_types * sizeof *values))
        return -1;
    if (r->ends) {
        unsigned e = r->ends[c[2]];
        if (e < PROFILE_STACK_ENDS) r->p->meta.end_samples[e]++;
        if (e < PROFILE_STACK_ENDS && c[3] == PROFILE_RUNNING) r->p->meta.end_running[e]++;
    }
    if (profile_add_sample(r->p, (uint32_t)c[1], r->stack_of[c[2]], (int)c[3], c[0], values))
        return fail(r, "out of memory");
    return 0;
}

static int read_samples(struct raw *r, const json_t *root)
{
    const json_t *samples = need_array(r, root, "samples");
    if (!samples) return -1;
    int has_cpu = 0;
    size_t i;
    const json_t *row;
    json_array_foreach(samples, i, row) has_cpu |= json_is_array(row) && json_array_size(row) >= 5;
    if (samples_begin(r, has_cpu)) return -1;
    json_array_foreach(samples, i, row)
    {
        size_t n = json_is_array(row) ? json_array_size(row) : 0;
        if (n != 4 && n != 5) return fail(r, "sample %zu is not a row of 4 or 5 integers", i);
        int64_t c[5];
        for (size_t k = 0; k < n; k++) {
            const json_t *v = json_array_get(row, k);
            if (!json_is_integer(v))
                return fail(r, "sample %zu: column %zu is not an integer", i, k);
            c[k] = json_integer_value(v);
            if (c[k] < 0 && big_was(r, c[k]))
                return fail(r, "sample %zu: column %zu is past 2^63", i, k);
        }
        if (add_sample(r, i, c, n)) return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ big integers */

/* jansson reads integers as int64 and refuses a larger one ("too big integer"), but a
 * frame is any u64. When it refused one, the document is read again with every
 * integer past INT64_MAX inside a row (an array in an array that is a value of the
 * top-level object: the stacks and the samples) written as the negative integer of
 * the same 64 bits; the rows' readers take such a value back when it is one of those
 * written (r->bigs). A document that also holds, as a negative frame, the very value
 * one of them became reads that frame as the big one. */
struct bigs {
    uint64_t *v;
    size_t n, cap;
};

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int big_was(const struct raw *r, int64_t x)
{
    uint64_t key = (uint64_t)x;
    return r->n_bigs && bsearch(&key, r->bigs, r->n_bigs, sizeof key, u64_cmp);
}

/* The value of a run of decimal digits when it lies in (INT64_MAX, UINT64_MAX]. */
static int big_value(const char *s, size_t n, uint64_t *out)
{
    if (n < 19 || n > 20 || s[0] == '0') return 0;
    uint64_t u = 0;
    for (size_t k = 0; k < n; k++) {
        unsigned d = (unsigned)(s[k] - '0');
        if (u > (UINT64_MAX - d) / 10) return 0;
        u = u * 10 + d;
    }
    *out = u;
    return u > (uint64_t)INT64_MAX;
}

/* buf rewritten as said above, malloc'd, its length in *out_len; NULL when memory runs
 * out or nothing needed rewriting. */
static char *bigs_rewrite(const char *buf, size_t len, struct bigs *b, size_t *out_len)
{
    size_t cap = len + len / 19 + 2, o = 0, depth = 0;
    char *out = malloc(cap), ctx[3] = {0};
    if (!out) return NULL;
    int in_str = 0;
    for (size_t i = 0; i < len;) {
        char c = buf[i];
        if (in_str) {
            out[o++] = buf[i++];
            if (c == '\\' && i < len)
                out[o++] = buf[i++];
            else if (c == '"')
                in_str = 0;
            continue;
        }
        if (c != '-' && (c < '0' || c > '9')) {
            if (c == '"') in_str = 1;
            if (c == '{' || c == '[') {
                if (depth < 3) ctx[depth] = c;
                depth++;
            }
            if ((c == '}' || c == ']') && depth) depth--;
            out[o++] = buf[i++];
            continue;
        }
        size_t e = i, digits = 1;
        while (e < len && (buf[e] == '-' || buf[e] == '+' || buf[e] == '.' || buf[e] == 'e' ||
                           buf[e] == 'E' || (buf[e] >= '0' && buf[e] <= '9'))) {
            digits &= buf[e] >= '0' && buf[e] <= '9';
            e++;
        }
        uint64_t u;
        if (digits && depth == 3 && ctx[0] == '{' && ctx[1] == '[' && ctx[2] == '[' &&
            big_value(buf + i, e - i, &u)) {
            if (b->n == b->cap) {
                size_t nc = b->cap ? 2 * b->cap : 64;
                uint64_t *nv = realloc(b->v, nc * sizeof *nv);
                if (!nv) {
                    free(out);
                    return NULL;
                }
                b->v = nv, b->cap = nc;
            }
            b->v[b->n++] = u;
            o += (size_t)sprintf(out + o, "%" PRId64, (int64_t)u);
        } else {
            memcpy(out + o, buf + i, e - i);
            o += e - i;
        }
        i = e;
    }
    if (!b->n) {
        free(out);
        return NULL;
    }
    qsort(b->v, b->n, sizeof *b->v, u64_cmp);
    size_t u = 0;
    for (size_t k = 0; k < b->n; k++)
        if (!u || b->v[u - 1] != b->v[k]) b->v[u++] = b->v[k];
    b->n = u;
    out[o] = 0;
    *out_len = o;
    return out;
}

/* "untimed": [[thread, stack, state, count, cpu_ns], ...], the samples a long run
 * counted past its row table, and "timed_end_ns", where the rows end. Each row is one
 * model sample of `count` samples, with no time. */
static int read_untimed(struct raw *r, const json_t *root)
{
    const json_t *u = json_object_get(root, "untimed");
    json_int_t end = -1;
    if (opt_int(r, root, "timed_end_ns", &end, "profile")) return -1;
    if (!u || json_is_null(u)) return 0;
    if (!json_is_array(u)) return fail(r, "\"untimed\" is not an array");
    if (end < 0) return fail(r, "\"untimed\" without \"timed_end_ns\"");
    int has_cpu = r->p->n_sample_types > 1;
    size_t i;
    const json_t *row;
    json_array_foreach(u, i, row)
    {
        int64_t c[5];
        if (!json_is_array(row) || json_array_size(row) != 5)
            return fail(r, "untimed %zu is not a row of 5 integers", i);
        for (size_t k = 0; k < 5; k++) {
            const json_t *v = json_array_get(row, k);
            if (!json_is_integer(v))
                return fail(r, "untimed %zu: column %zu is not an integer", i, k);
            c[k] = json_integer_value(v);
        }
        if (c[0] < 0 || (size_t)c[0] >= r->p->n_threads)
            return fail(r, "untimed %zu: thread %lld out of range", i, (long long)c[0]);
        if (c[1] < 0 || (size_t)c[1] >= r->n_stacks_in)
            return fail(r, "untimed %zu: stack %lld out of range", i, (long long)c[1]);
        if (c[2] != PROFILE_RUNNING && c[2] != PROFILE_WAITING)
            return fail(r, "untimed %zu: unknown state %lld", i, (long long)c[2]);
        if (c[3] <= 0 || c[4] < 0) return fail(r, "untimed %zu: bad count or CPU time", i);
        int64_t values[2] = {c[3], has_cpu ? c[4] : 0};
        if (profile_add_sample(r->p, (uint32_t)c[0], r->stack_of[c[1]], (int)c[2], -1, values))
            return fail(r, "out of memory");
        r->p->meta.untimed_samples += (uint64_t)c[3];
    }
    r->p->meta.timed_end_ns = end;
    if (r->p->meta.untimed_samples) {
        char note[256];
        snprintf(note, sizeof note,
                 "time order ends at %.3f s: the %llu samples after it (the runtime's row table "
                 "was full) are counted per stack, thread and state, with no time",
                 (double)end / 1e9, (unsigned long long)r->p->meta.untimed_samples);
        if (profile_add_comment(r->p, note)) return fail(r, "out of memory");
    }
    return 0;
}

/* ------------------------------------------------------------------ fast path */

/* Where the two big arrays are, once raw_scan has checked they are arrays of integer
 * arrays that jansson would read the same way (raw_scan.h). */
struct fast {
    struct raw_span stacks, samples;
    size_t n_stacks;
    int has_cpu;
};

static int note_cpu(void *ctx, size_t i, const int64_t *v, size_t n)
{
    (void)i, (void)v;
    *(int *)ctx |= n >= 5;
    return 0;
}

/* The document without its two big arrays, for jansson; NULL when the fast path does
 * not apply (then jansson reads the whole document, and judges it). */
static char *fast_begin(const char *buf, size_t len, struct fast *f, size_t *rest_len)
{
    int64_t v[5];
    size_t n_samples;
    if (raw_scan_locate(buf, len, &f->stacks, &f->samples) ||
        raw_scan_addr_rows(f->stacks, NULL, 0, NULL, NULL, &f->n_stacks) ||
        raw_scan_rows(f->samples, v, 5, note_cpu, &f->has_cpu, &n_samples))
        return NULL;
    return raw_scan_rest(buf, len, f->stacks, f->samples, rest_len);
}

static int stack_row(void *ctx, size_t i, const uint64_t *v, size_t n)
{
    return add_stack(ctx, i, v, n);
}

static int sample_row(void *ctx, size_t i, const int64_t *v, size_t n)
{
    return add_sample(ctx, i, v, n);
}

static int read_fast(struct raw *r, const struct fast *f)
{
    int64_t c[5];
    size_t n;
    if (stacks_begin(r, f->n_stacks) ||
        raw_scan_addr_rows(f->stacks, r->row, PROFILE_MAX_DEPTH, stack_row, r, &n) ||
        samples_begin(r, f->has_cpu) || raw_scan_rows(f->samples, c, 5, sample_row, r, &n))
        return -1;
    return 0;
}

/* ------------------------------------------------------------------ arena */

/* jansson allocates every number of the document separately; a profile of a million
 * samples is five million small blocks, and malloc and free of them were half of the
 * reading time. While one document is parsed, jansson allocates from this arena
 * instead, which is dropped whole afterwards. jansson's allocator is process-wide,
 * so this assumes one reader at a time (the CLI is single-threaded). */
#define ARENA_CHUNK (4u << 20)
/* Chunks grow from this size to ARENA_CHUNK: a small document does not pay for
 * zeroing 4 MiB (under ASan, every fuzzed input did). */
#define ARENA_FIRST (64u << 10)

struct arena_chunk {
    struct arena_chunk *next;
    size_t used, size;
    _Alignas(16) unsigned char data[];
};

static struct arena_chunk *arena;
static size_t arena_next = ARENA_FIRST; /* the size of the next chunk */
/* The read's memory budget bounds jansson's document too: past it, allocation fails
 * and jansson stops. */
static size_t arena_budget, arena_total;
static int arena_over;

static void *arena_malloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!arena || arena->size - arena->used < n) {
        size_t size = n > arena_next ? n : arena_next;
        if (arena_total + size > arena_budget) {
            arena_over = 1;
            return NULL;
        }
        arena_total += size;
        if (arena_next < ARENA_CHUNK) arena_next *= 2;
        struct arena_chunk *c = malloc(sizeof *c + size);
        if (!c) return NULL;
        *c = (struct arena_chunk){arena, 0, size};
        arena = c;
    }
    void *p = arena->data + arena->used;
    arena->used += n;
    return p;
}

static void arena_free(void *p)
{
    (void)p; /* everything goes at once, in arena_drop */
}

static void arena_drop(void)
{
    arena_next = ARENA_FIRST;
    while (arena) {
        struct arena_chunk *next = arena->next;
        free(arena);
        arena = next;
    }
}

/* ------------------------------------------------------------------ entry */

/* A streamed file without its closing chunk: what it holds, as a note of the profile. */
static int note_stream(struct raw *r, const struct raw_chunks *ch)
{
    if (ch->closed) return 0;
    char note[512];
    const struct profile_meta *m = &r->p->meta;
    double secs = m->end_unix_ns > m->start_unix_ns
                      ? (double)(m->end_unix_ns - m->start_unix_ns) / 1e9
                      : 0.0;
    int n = snprintf(note, sizeof note,
                     "pid %lld ended without writing the end of its profile (killed, or ended "
                     "by a raw exit_group): its first %u chunk%s are read, %.1f s of its run",
                     (long long)m->pid, ch->chunks, ch->chunks == 1 ? "" : "s", secs);
    if (ch->cut_bytes && n > 0 && (size_t)n < sizeof note)
        snprintf(note + n, sizeof note - (size_t)n,
                 "; the last %zu bytes, a chunk cut short as it was written, are not", ch->cut_bytes);
    return profile_add_comment(r->p, note) ? fail(r, "out of memory") : 0;
}

struct profile *read_raw_json(const char *buf, size_t len, char *why, size_t why_size)
{
    /* A streamed file: its chunks joined into one document first (raw_chunks.h). */
    struct raw_chunks ch = {0};
    int streamed = raw_chunks_is_stream(buf, len);
    char *joined = NULL;
    if (streamed) {
        size_t joined_len;
        if (!(joined = raw_chunks_join(buf, len, &joined_len, &ch, why, why_size))) return NULL;
        buf = joined, len = joined_len;
    }
    struct profile *p = read_raw_doc(buf, len, why, why_size, streamed ? &ch : NULL);
    free(joined);
    return p;
}

static struct profile *read_raw_doc(const char *buf, size_t len, char *why, size_t why_size,
                                    const struct raw_chunks *ch)
{
    json_error_t err;
    json_malloc_t old_malloc;
    json_free_t old_free;
    json_get_alloc_funcs(&old_malloc, &old_free);
    json_set_alloc_funcs(arena_malloc, arena_free);
    size_t budget = read_memory_budget(len);
    arena_budget = budget, arena_total = 0, arena_over = 0;
    struct fast f = {0};
    size_t rest_len = 0;
    char *rest = fast_begin(buf, len, &f, &rest_len);
    json_t *root = rest ? json_loadb(rest, rest_len, JSON_REJECT_DUPLICATES, &err) : NULL;
    int fast = root != NULL;
    free(rest);
    if (!root && !arena_over) {
        /* The whole document, for jansson to judge: a budget of its own. */
        arena_drop();
        arena_total = 0;
        root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &err);
    }
    struct bigs bigs = {0};
    if (!root && !arena_over && strstr(err.text, "too big integer")) {
        /* Again, with the frames past INT64_MAX rewritten (big_*). */
        size_t big_len;
        char *big = bigs_rewrite(buf, len, &bigs, &big_len);
        arena_drop();
        arena_total = 0;
        if (big) root = json_loadb(big, big_len, JSON_REJECT_DUPLICATES, &err);
        free(big);
    }
    if (!root) {
        free(bigs.v);
        json_set_alloc_funcs(old_malloc, old_free);
        arena_drop();
        if (arena_over)
            read_over_budget(why, why_size, budget, len);
        else
            snprintf(why, why_size, "not valid JSON: line %d column %d: %s", err.line,
                     err.column, err.text);
        return NULL;
    }
    struct raw r = {.p = profile_new(PROFILE_CPU),
                    .why = why,
                    .why_size = why_size,
                    .other_stack = SIZE_MAX,
                    .content_len = len,
                    .budget = budget,
                    .used = arena_total,
                    .bigs = bigs.v,
                    .n_bigs = bigs.n,
                    .incomplete = -1,
                    .guessed_frame = -1};
    int rc = r.p ? 0 : fail(&r, "out of memory");
    if (!rc && !json_is_object(root)) rc = fail(&r, "not a kestrel raw profile (not an object)");
    if (!rc) rc = read_meta(&r, root);
    json_int_t other = -1;
    if (!rc) rc = opt_int(&r, root, "other_stack", &other, "profile");
    if (other >= 0) r.other_stack = (size_t)other;
    if (!rc) rc = read_tables(&r, root);
    if (!rc) rc = read_images(&r, root);
    if (!rc) rc = read_threads(&r, root);
    if (!rc) rc = read_stack_ends(&r, root);
    if (!rc) rc = read_process(&r, root);
    if (!rc && fast) rc = read_fast(&r, &f);
    if (!rc && !fast) rc = read_stacks(&r, root);
    if (!rc && !fast) rc = read_samples(&r, root);
    if (!rc) rc = read_untimed(&r, root);
    if (!rc && ch) rc = note_stream(&r, ch);
    /* The document lives in the arena: dropped whole, not freed node by node. */
    json_set_alloc_funcs(old_malloc, old_free);
    arena_drop();
    free(r.stack_of);
    free(r.frames);
    free(r.row);
    free(bigs.v);
    free(r.ends);
    free(r.guessed);
    intmap_free(&r.frame_of);
    if (!rc) {
        r.p->default_type = 0;
        if (r.p->meta.rate_hz > 0) r.p->period = (int64_t)(1e9 / r.p->meta.rate_hz);
        if (!(r.p->period_type.type = strdup("cpu")) ||
            !(r.p->period_type.unit = strdup("nanoseconds")))
            rc = fail(&r, "out of memory");
    }
    if (!rc) rc = profile_check(r.p, why, why_size);
    if (rc) {
        profile_free(r.p);
        return NULL;
    }
    return r.p;
}
