/* The pprof export (FORMATS.md §2 and §3): profile.proto, gzip-compressed, symbolized:
 * read by `go tool pprof`, speedscope, Pyroscope, Parca.
 *
 * Mapping of the model onto profile.proto:
 * - sample types, period type and period, default sample type as the profile has
 *   them (CPU: samples/count and cpu/nanoseconds; heap: its four types). A CPU
 *   profile that counted samples without their CPU time gets cpu/nanoseconds as
 *   count x period, the convention of Go's CPU profiles.
 * - a mapping per image (executable span, page-aligned; file offset; build id).
 * - a location per address: its run of frames from the innermost inlined call to the
 *   frame that is not inlined becomes the location's lines, innermost first, as
 *   profile.proto orders them; an unresolved frame is a location with no line.
 * - a function per (name, file).
 * - samples that say the same (stack, thread, state) are one, values summed; labels
 *   `thread` (the thread's name, else its label) and, for CPU, `state`; `stack` =
 *   `guessed` on samples whose stack sits under PROFILE_GUESSED_FRAME.
 * Strings are valid UTF-8 (invalid bytes become U+FFFD); protobuf needs no other
 * escaping. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "analysis/model/escape.h"
#include "analysis/writers/export.h"
#include "analysis/writers/writers.h"
#include "common/pbwire.h"
#include "common/pprof_fields.h"

#define PAGE 4096ULL

/* ------------------------------------------------------------------ strings */

struct strtab {
    char **strs; /* valid UTF-8 copies; strs[0] = "" */
    size_t n, cap;
    uint32_t *slots; /* id + 1, by hash; 0 = empty */
    size_t mask;
};

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static int strtab_grow(struct strtab *t)
{
    size_t cap = t->mask ? (t->mask + 1) * 2 : 1024;
    uint32_t *slots = calloc(cap, sizeof *slots);
    if (!slots) return -1;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = str_hash(t->strs[i]) & (cap - 1);
        while (slots[j])
            j = (j + 1) & (cap - 1);
        slots[j] = (uint32_t)i + 1;
    }
    free(t->slots);
    t->slots = slots, t->mask = cap - 1;
    return 0;
}

/* The string table index of s (NULL is ""), or -1 when memory runs out. */
static int64_t strtab_id(struct strtab *t, const char *raw)
{
    char *s = escape_utf8_dup(raw, NULL);
    if (!s) return -1;
    if ((t->n + 1) * 2 > t->mask + 1 && strtab_grow(t)) goto fail;
    size_t j = str_hash(s) & t->mask;
    for (; t->slots[j]; j = (j + 1) & t->mask)
        if (!strcmp(t->strs[t->slots[j] - 1], s)) {
            free(s);
            return t->slots[j] - 1;
        }
    if (array_reserve((void **)&t->strs, &t->cap, t->n + 1, sizeof *t->strs)) goto fail;
    t->strs[t->n] = s;
    t->slots[j] = (uint32_t)++t->n;
    return (int64_t)t->n - 1;
fail:
    free(s);
    return -1;
}

static void strtab_free(struct strtab *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->strs[i]);
    free(t->strs), free(t->slots);
}

/* ------------------------------------------------------------------ encoding */

struct pprof {
    const struct profile *p;
    const struct summary *s;
    struct pb_buf b;
    struct strtab str;
    struct intmap functions; /* (name id, file id) -> function id */
    struct intmap locations; /* (innermost frame, outermost frame) -> location id */
    uint32_t n_functions, n_locations;
    uint8_t *image_symbolized; /* per image: 1 when any of its frames has a name */
    int cpu_from_samples;      /* a CPU profile without cpu/nanoseconds: the samples type,
                                  whose count times the period gives it; else -1 */
    int oom;
};

static uint64_t sid(struct pprof *w, const char *s)
{
    int64_t id = strtab_id(&w->str, s);
    if (id < 0) w->oom = 1;
    return id < 0 ? 0 : (uint64_t)id;
}

static void put_value_type(struct pprof *w, uint32_t field, const char *type, const char *unit)
{
    size_t m = pb_begin(&w->b, field);
    pb_put_uint(&w->b, VALUE_TYPE_TYPE, sid(w, type));
    pb_put_uint(&w->b, VALUE_TYPE_UNIT, sid(w, unit));
    pb_end(&w->b, m);
}

static uint64_t function_id(struct pprof *w, const struct profile_frame *f)
{
    uint64_t name = sid(w, f->name), file = sid(w, f->file);
    int added;
    uint32_t *slot = intmap_slot(&w->functions, (name << 32 | file) + 1, &added);
    if (!slot) return w->oom = 1, 0;
    if (!added) return *slot;
    *slot = ++w->n_functions;
    size_t m = pb_begin(&w->b, PROFILE_FUNCTION);
    pb_put_uint(&w->b, FUNCTION_ID, *slot);
    pb_put_uint(&w->b, FUNCTION_NAME, name);
    /* The symbol as the object spells it (mangled, Rust's hash kept) when known. */
    pb_put_uint(&w->b, FUNCTION_SYSTEM_NAME, f->raw_name ? sid(w, f->raw_name) : name);
    pb_put_uint(&w->b, FUNCTION_FILENAME, file);
    pb_end(&w->b, m);
    return *slot;
}

/* The location of frames [from, to] of a leaf-first stack (innermost first). */
static uint64_t location_id(struct pprof *w, const uint32_t *frames, uint32_t from, uint32_t to)
{
    const struct profile *p = w->p;
    int added;
    uint32_t *slot =
        intmap_slot(&w->locations, ((uint64_t)frames[from] << 32 | frames[to]) + 1, &added);
    if (!slot) return w->oom = 1, 0;
    if (!added) return *slot;
    uint32_t id = *slot = ++w->n_locations;
    uint64_t fn[PROFILE_MAX_DEPTH];
    for (uint32_t k = from; k <= to; k++) /* functions are messages of their own */
        fn[k - from] = p->frames[frames[k]].symbolized ? function_id(w, &p->frames[frames[k]]) : 0;
    const struct profile_frame *outer = &p->frames[frames[to]];
    size_t m = pb_begin(&w->b, PROFILE_LOCATION);
    pb_put_uint(&w->b, LOCATION_ID, id);
    if (outer->image >= 0) pb_put_uint(&w->b, LOCATION_MAPPING_ID, (uint64_t)outer->image + 1);
    pb_put_uint(&w->b, LOCATION_ADDRESS, outer->address);
    for (uint32_t k = from; k <= to; k++) {
        const struct profile_frame *f = &p->frames[frames[k]];
        if (!f->symbolized) continue;
        if (f->image >= 0) w->image_symbolized[f->image] = 1;
        size_t lm = pb_begin(&w->b, LOCATION_LINE);
        pb_put_uint(&w->b, LINE_FUNCTION_ID, fn[k - from]);
        pb_put_int(&w->b, LINE_LINE, f->line);
        pb_put_int(&w->b, LINE_COLUMN, f->column);
        pb_end(&w->b, lm);
    }
    pb_end(&w->b, m);
    return id;
}

/* Location ids of a stack, leaf first, into ids; returns their count. */
static size_t stack_locations(struct pprof *w, uint32_t stack, uint64_t *ids)
{
    const struct profile_stack *st = &w->p->stacks[stack];
    size_t n = 0;
    for (uint32_t from = 0; from < st->depth;) {
        uint32_t to = from;
        while (to + 1 < st->depth && w->p->frames[st->frames[to]].inlined)
            to++;
        ids[n++] = location_id(w, st->frames, from, to);
        from = to + 1;
    }
    return n;
}

struct pprof_sample {
    uint32_t thread, stack;
    uint8_t state;
    int64_t *values;
};

/* Samples that say the same are one: merged by (stack, thread, state). */
static int merge_samples(struct pprof *w, struct pprof_sample **out, int64_t **values,
                         size_t *n_out)
{
    const struct profile *p = w->p;
    size_t nt = p->n_sample_types, n = 0;
    struct intmap seen = {0};
    struct pprof_sample *v = malloc((p->n_samples + 1) * sizeof *v);
    int64_t *vals = calloc(p->n_samples * nt + 1, sizeof *vals);
    if (!v || !vals || p->n_threads >= 1u << 24) goto fail;
    for (size_t i = 0; i < p->n_samples; i++) {
        const struct profile_sample *sm = &p->samples[i];
        uint64_t key = ((uint64_t)sm->stack << 25 | (uint64_t)sm->thread << 1 | sm->state) + 1;
        int64_t k = intmap_intern(&seen, key, (uint32_t)n);
        if (k < 0) goto fail;
        if ((size_t)k == n)
            v[n++] = (struct pprof_sample){sm->thread, sm->stack, sm->state, vals + (size_t)k * nt};
        for (size_t t = 0; t < nt; t++)
            v[k].values[t] += profile_values(p, i)[t];
    }
    intmap_free(&seen);
    *out = v, *values = vals, *n_out = n;
    return 0;
fail:
    intmap_free(&seen);
    free(v), free(vals);
    return -ENOMEM;
}

static int put_samples(struct pprof *w, const struct pprof_sample *v, size_t n)
{
    static const char *const states[PROFILE_NSTATES] = {"running", "waiting"};
    const struct profile *p = w->p;
    uint64_t ids[PROFILE_MAX_DEPTH], vals[PROFILE_MAX_SAMPLE_TYPES + 1];
    uint64_t thread_key = sid(w, "thread"), state_key = sid(w, "state"), state[PROFILE_NSTATES];
    for (int k = 0; k < PROFILE_NSTATES; k++)
        state[k] = sid(w, states[k]);
    uint64_t *thread = malloc((p->n_threads + 1) * sizeof *thread);
    if (!thread) return -ENOMEM;
    /* A process tree: a `process` label ("gzip [1234]") and a numeric `pid`. */
    uint64_t process_key = sid(w, "process"), pid_key = sid(w, "pid");
    uint64_t stack_key = 0, guessed_str = 0;
    for (size_t k = 0; k < n && !stack_key; k++)
        if (profile_stack_marks(p, &p->stacks[v[k].stack], NULL, NULL))
            stack_key = sid(w, "stack"), guessed_str = sid(w, "guessed");
    uint64_t *process = calloc(p->n_processes + 1, sizeof *process);
    if (!process) return free(thread), -ENOMEM;
    for (size_t k = 0; k < p->n_processes; k++) {
        char buf[512];
        process[k] = sid(w, profile_process_label(p, (int32_t)k, buf, sizeof buf));
    }
    for (size_t t = 0; t < p->n_threads; t++)
        thread[t] = sid(w, p->threads[t].name ? p->threads[t].name : p->threads[t].label);
    size_t nv = p->n_sample_types;
    for (size_t i = 0; i < n; i++) {
        size_t n_ids = stack_locations(w, v[i].stack, ids);
        for (size_t t = 0; t < nv; t++)
            vals[t] = (uint64_t)v[i].values[t];
        if (w->cpu_from_samples >= 0)
            vals[nv] = (uint64_t)(v[i].values[w->cpu_from_samples] * p->period);
        size_t m = pb_begin(&w->b, PROFILE_SAMPLE);
        pb_put_packed(&w->b, SAMPLE_LOCATION_ID, ids, n_ids);
        pb_put_packed(&w->b, SAMPLE_VALUE, vals, nv + (w->cpu_from_samples >= 0));
        size_t lm = pb_begin(&w->b, SAMPLE_LABEL);
        pb_put_uint(&w->b, LABEL_KEY, thread_key);
        pb_put_uint(&w->b, LABEL_STR, thread[v[i].thread]);
        pb_end(&w->b, lm);
        int32_t pr = p->threads[v[i].thread].process;
        if (p->n_processes > 1 && pr >= 0) {
            lm = pb_begin(&w->b, SAMPLE_LABEL);
            pb_put_uint(&w->b, LABEL_KEY, process_key);
            pb_put_uint(&w->b, LABEL_STR, process[pr]);
            pb_end(&w->b, lm);
            if (p->processes[pr].pid >= 0) {
                lm = pb_begin(&w->b, SAMPLE_LABEL);
                pb_put_uint(&w->b, LABEL_KEY, pid_key);
                pb_put_uint(&w->b, LABEL_NUM, (uint64_t)p->processes[pr].pid);
                pb_end(&w->b, lm);
            }
        }
        if (p->kind == PROFILE_CPU) {
            lm = pb_begin(&w->b, SAMPLE_LABEL);
            pb_put_uint(&w->b, LABEL_KEY, state_key);
            pb_put_uint(&w->b, LABEL_STR, state[v[i].state]);
            pb_end(&w->b, lm);
        }
        /* A stack the engine did not walk: `-tagfocus=stack=guessed` finds them. */
        if (profile_stack_marks(p, &p->stacks[v[i].stack], NULL, NULL)) {
            lm = pb_begin(&w->b, SAMPLE_LABEL);
            pb_put_uint(&w->b, LABEL_KEY, stack_key);
            pb_put_uint(&w->b, LABEL_STR, guessed_str);
            pb_end(&w->b, lm);
        }
        pb_end(&w->b, m);
    }
    free(thread);
    free(process);
    return 0;
}

static void put_mappings(struct pprof *w)
{
    const struct profile *p = w->p;
    for (size_t i = 0; i < p->n_images; i++) {
        const struct profile_image *im = &p->images[i];
        uint64_t start = im->text_size ? im->text : im->base;
        uint64_t limit = im->text_size ? im->text + im->text_size : start;
        uint64_t lead = start % PAGE; /* page-aligned, as pprof expects of a mapping */
        uint64_t offset = im->text_offset >= lead ? im->text_offset - lead : 0;
        limit = (limit + PAGE - 1) / PAGE * PAGE;
        int sym = w->image_symbolized[i];
        size_t m = pb_begin(&w->b, PROFILE_MAPPING);
        pb_put_uint(&w->b, MAPPING_ID, i + 1);
        pb_put_uint(&w->b, MAPPING_START, start - lead);
        pb_put_uint(&w->b, MAPPING_LIMIT, limit);
        pb_put_uint(&w->b, MAPPING_OFFSET, offset);
        pb_put_uint(&w->b, MAPPING_FILENAME, sid(w, im->path));
        pb_put_uint(&w->b, MAPPING_BUILD_ID, sid(w, im->build_id));
        pb_put_uint(&w->b, MAPPING_HAS_FUNCTIONS, sym);
        pb_put_uint(&w->b, MAPPING_HAS_FILENAMES, sym);
        pb_put_uint(&w->b, MAPPING_HAS_LINE_NUMBERS, sym);
        pb_put_uint(&w->b, MAPPING_HAS_INLINE_FRAMES, sym);
        pb_end(&w->b, m);
    }
}

static void put_header(struct pprof *w)
{
    const struct profile *p = w->p;
    for (size_t t = 0; t < p->n_sample_types; t++)
        put_value_type(w, PROFILE_SAMPLE_TYPE, p->sample_types[t].type, p->sample_types[t].unit);
    if (w->cpu_from_samples >= 0) put_value_type(w, PROFILE_SAMPLE_TYPE, "cpu", "nanoseconds");
    if (p->period_type.type)
        put_value_type(w, PROFILE_PERIOD_TYPE, p->period_type.type, p->period_type.unit);
    else if (p->kind == PROFILE_CPU)
        put_value_type(w, PROFILE_PERIOD_TYPE, "cpu", "nanoseconds");
    pb_put_int(&w->b, PROFILE_PERIOD, p->period);
    pb_put_int(&w->b, PROFILE_TIME_NANOS, p->meta.start_unix_ns);
    pb_put_int(&w->b, PROFILE_DURATION_NANOS, profile_wall_ns(p));
    if (p->n_sample_types)
        pb_put_uint(&w->b, PROFILE_DEFAULT_SAMPLE_TYPE,
                    sid(w, p->sample_types[p->default_type].type));
    int walks_said = 0;
    for (size_t i = 0; i < p->meta.n_comments; i++) {
        pb_put_uint(&w->b, PROFILE_COMMENT, sid(w, p->meta.comments[i]));
        walks_said |= !strncmp(p->meta.comments[i], PROFILE_WALKS_COMMENT,
                               strlen(PROFILE_WALKS_COMMENT));
    }
    if (p->meta.ends_known && !walks_said)
        pb_put_uint(&w->b, PROFILE_COMMENT,
                    sid(w, PROFILE_WALKS_COMMENT " recorded per stack; a stack cut short ends in "
                           PROFILE_INCOMPLETE_FRAME));
}

/* ------------------------------------------------------------------ gzip */

static int gzip_to(FILE *out, const uint8_t *data, size_t len)
{
    z_stream z = {0};
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -ENOMEM;
    uint8_t chunk[1 << 16];
    int rc = 0, zr;
    z.next_in = (uint8_t *)data;
    do {
        size_t in = len > (1u << 30) ? 1u << 30 : len;
        z.avail_in = (uInt)in;
        len -= in;
        do {
            z.next_out = chunk, z.avail_out = sizeof chunk;
            zr = deflate(&z, len ? Z_NO_FLUSH : Z_FINISH);
            size_t have = sizeof chunk - z.avail_out;
            if (fwrite(chunk, 1, have, out) != have) rc = -EIO;
        } while (!rc && z.avail_out == 0);
    } while (!rc && len);
    if (!rc && zr != Z_STREAM_END) rc = -EIO;
    deflateEnd(&z);
    return rc;
}

static int write_pprof(const struct profile *p, const struct summary *s, FILE *out)
{
    struct pprof w = {.p = p, .s = s};
    struct pprof_sample *samples = NULL;
    int64_t *values = NULL;
    size_t n_samples = 0;
    int rc = -ENOMEM;
    w.image_symbolized = calloc(p->n_images + 1, 1);
    if (!w.image_symbolized || sid(&w, "") != 0 || merge_samples(&w, &samples, &values, &n_samples))
        goto out;
    int samples_type = profile_find_sample_type(p, "samples");
    w.cpu_from_samples = p->kind == PROFILE_CPU && profile_find_sample_type(p, "cpu") < 0 &&
                                 samples_type >= 0 && p->period > 0
                             ? samples_type
                             : -1;
    put_header(&w);
    if ((rc = put_samples(&w, samples, n_samples))) goto out;
    rc = -ENOMEM;
    put_mappings(&w); /* after the samples: which images have names is known then */
    for (size_t i = 0; i < w.str.n; i++)
        pb_put_string(&w.b, PROFILE_STRING_TABLE, w.str.strs[i]);
    if (w.oom || w.b.failed) goto out;
    rc = gzip_to(out, w.b.data, w.b.len);
out:
    free(samples), free(values);
    strtab_free(&w.str);
    intmap_free(&w.functions);
    intmap_free(&w.locations);
    free(w.image_symbolized);
    pb_buf_free(&w.b);
    return rc;
}

const struct writer writer_pprof = {"pprof", ".pb.gz", write_pprof, 1};
