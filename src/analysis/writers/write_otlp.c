/* The OpenTelemetry profiles export: one OTLP ExportProfilesServiceRequest
 * (opentelemetry.proto.collector.profiles.v1development, the messages of
 * go.opentelemetry.io/proto/otlp/profiles/v1development v0.3.0), protobuf binary, as an
 * OTLP/gRPC or OTLP/HTTP receiver takes it.
 *
 * - One shared ProfilesDictionary: mappings (one per image, its GNU build id as the
 *   attribute process.executable.build_id.gnu), locations (an address and its inline
 *   chain of lines, innermost first, as pprof's), functions, stacks (leaf first),
 *   attributes and strings; entry 0 of every table is its zero value.
 * - One ResourceProfiles per process, with resource attributes process.pid,
 *   process.parent_pid, process.executable.name, process.executable.path,
 *   process.command_line, host.name (the machine that exports), host.arch, os.type.
 * - In it one Profile per sample type (samples/count, cpu/nanoseconds, ...), each its
 *   sample_type and period. A Sample is one (stack, thread, state) with the thread's
 *   attributes thread.id, thread.name and kestrel.state (and kestrel.stack = guessed
 *   when its stack is a guess, PROFILE_GUESSED_FRAME); when every sample has a time
 *   (a raw CPU profile) it lists one value and one timestamp per sample taken, else
 *   (pprof input, heap profiles) one summed value.
 * - The first profile of a profile of one process carries the whole profile as pprof in
 *   original_payload (format "pprof"): sample types together, comments, walk ends.
 *
 * The samples are those of the state asked (running by default, as folded's); a
 * sample whose value is 0 is kept when it has a time (it was taken) and dropped
 * otherwise. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/model/escape.h"
#include "analysis/writers/export.h"
#include "analysis/writers/writers.h"
#include "common/pbwire.h"

/* field numbers */
enum {
    REQ_RESOURCE_PROFILES = 1, REQ_DICTIONARY = 2,
    RP_RESOURCE = 1, RP_SCOPE_PROFILES = 2,
    RES_ATTRIBUTES = 1,
    KV_KEY = 1, KV_VALUE = 2,
    ANY_STRING = 1, ANY_INT = 3,
    SP_SCOPE = 1, SP_PROFILES = 2,
    SCOPE_NAME = 1, SCOPE_VERSION = 2,
    PR_SAMPLE_TYPE = 1, PR_SAMPLES = 2, PR_TIME = 3, PR_DURATION = 4, PR_PERIOD_TYPE = 5,
    PR_PERIOD = 6, PR_PAYLOAD_FORMAT = 9, PR_PAYLOAD = 10,
    VT_TYPE = 1, VT_UNIT = 2,
    SA_STACK = 1, SA_ATTRIBUTES = 2, SA_VALUES = 4, SA_TIMESTAMPS = 5,
    D_MAPPING = 1, D_LOCATION = 2, D_FUNCTION = 3, D_LINK = 4, D_STRING = 5, D_ATTRIBUTE = 6,
    D_STACK = 7,
    MAP_START = 1, MAP_LIMIT = 2, MAP_OFFSET = 3, MAP_FILENAME = 4, MAP_ATTRIBUTES = 5,
    STACK_LOCATIONS = 1,
    LOC_MAPPING = 1, LOC_ADDRESS = 2, LOC_LINES = 3,
    LINE_FUNCTION = 1, LINE_LINE = 2, LINE_COLUMN = 3,
    FN_NAME = 1, FN_SYSTEM_NAME = 2, FN_FILENAME = 3,
    KVU_KEY = 1, KVU_VALUE = 2,
};

/* ------------------------------------------------------------------ the dictionary */

struct otlp {
    const struct profile *p;
    const struct summary *s;
    struct pb_buf dict;        /* the dictionary's entries, strings last */
    char **strs;               /* the string table, strs[0] = "" */
    size_t n_strs, cap_strs;
    struct intmap str_of;      /* string hash chain: hash -> index + 1 (probed) */
    struct intmap functions;   /* (name, system name, file) -> index */
    struct intmap locations;   /* (innermost frame, outermost frame) -> index */
    int32_t *stack_of;         /* profile stack -> stack_table index, 0 not yet */
    uint32_t n_functions, n_locations, n_stacks, n_attributes;
    int32_t guessed_attr;      /* kestrel.stack = guessed; 0 when no stack is a guess */
    int oom;
};

static uint64_t otlp_hash(const char *s, uint64_t salt)
{
    uint64_t h = 1469598103934665603ULL ^ salt;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h ? h : 1;
}

/* The string table index of s (NULL is ""). */
static int32_t otlp_str(struct otlp *w, const char *raw)
{
    if (!raw || !*raw) return 0;
    char *s = escape_utf8_dup(raw, NULL);
    if (!s) return w->oom = 1, 0;
    for (uint64_t salt = 0;; salt++) {
        int added;
        uint32_t *slot = intmap_slot(&w->str_of, otlp_hash(s, salt), &added);
        if (!slot) break;
        if (!added) {
            if (!strcmp(w->strs[*slot], s)) {
                free(s);
                return (int32_t)*slot;
            }
            continue; /* another string with this hash: the next salt */
        }
        if (array_reserve((void **)&w->strs, &w->cap_strs, w->n_strs + 1, sizeof *w->strs)) break;
        *slot = (uint32_t)w->n_strs;
        w->strs[w->n_strs] = s;
        return (int32_t)w->n_strs++;
    }
    free(s);
    w->oom = 1;
    return 0;
}

static void otlp_value_type(struct otlp *w, struct pb_buf *b, uint32_t field, const char *type,
                            const char *unit)
{
    size_t m = pb_begin(b, field);
    pb_put_uint(b, VT_TYPE, (uint64_t)otlp_str(w, type));
    pb_put_uint(b, VT_UNIT, (uint64_t)otlp_str(w, unit));
    pb_end(b, m);
}

/* An attribute of the dictionary: its index. Strings when `sval`, else ival. */
static int32_t otlp_attribute(struct otlp *w, const char *key, const char *sval, int64_t ival)
{
    size_t m = pb_begin(&w->dict, D_ATTRIBUTE);
    pb_put_uint(&w->dict, KVU_KEY, (uint64_t)otlp_str(w, key));
    size_t v = pb_begin(&w->dict, KVU_VALUE);
    if (sval) {
        char *u = escape_utf8_dup(sval, NULL); /* a thread's name may be any bytes */
        if (!u) w->oom = 1;
        pb_put_string(&w->dict, ANY_STRING, u ? u : "");
        free(u);
    } else {
        pb_put_tag(&w->dict, ANY_INT, PB_VARINT);
        pb_put_varint(&w->dict, (uint64_t)ival);
    }
    pb_end(&w->dict, v);
    pb_end(&w->dict, m);
    return (int32_t)++w->n_attributes;
}

static uint32_t otlp_function(struct otlp *w, const struct profile_frame *f)
{
    int32_t name = otlp_str(w, f->name), sys = otlp_str(w, f->raw_name ? f->raw_name : f->name);
    int32_t file = otlp_str(w, f->file);
    int added;
    uint64_t key = ((uint64_t)name << 42 ^ (uint64_t)sys << 21 ^ (uint64_t)file) + 1;
    uint32_t *slot = intmap_slot(&w->functions, key, &added);
    if (!slot) return w->oom = 1, 0;
    if (!added) return *slot;
    *slot = ++w->n_functions;
    size_t m = pb_begin(&w->dict, D_FUNCTION);
    pb_put_uint(&w->dict, FN_NAME, (uint64_t)name);
    pb_put_uint(&w->dict, FN_SYSTEM_NAME, (uint64_t)sys);
    pb_put_uint(&w->dict, FN_FILENAME, (uint64_t)file);
    pb_end(&w->dict, m);
    return w->n_functions;
}

/* The location of frames [from, to] of a leaf-first stack: one address, its lines
 * innermost first. */
static uint32_t otlp_location(struct otlp *w, const uint32_t *frames, uint32_t from, uint32_t to)
{
    const struct profile *p = w->p;
    int added;
    uint32_t *slot =
        intmap_slot(&w->locations, ((uint64_t)frames[from] << 32 | frames[to]) + 1, &added);
    if (!slot) return w->oom = 1, 0;
    if (!added) return *slot;
    *slot = ++w->n_locations;
    uint32_t index = w->n_locations;
    uint32_t fn[PROFILE_MAX_DEPTH];
    for (uint32_t k = from; k <= to; k++) /* functions are entries of their own */
        fn[k - from] = otlp_function(w, &p->frames[frames[k]]);
    const struct profile_frame *outer = &p->frames[frames[to]];
    size_t m = pb_begin(&w->dict, D_LOCATION);
    if (outer->image >= 0) pb_put_uint(&w->dict, LOC_MAPPING, (uint64_t)outer->image + 1);
    pb_put_uint(&w->dict, LOC_ADDRESS, outer->address);
    for (uint32_t k = from; k <= to; k++) {
        const struct profile_frame *f = &p->frames[frames[k]];
        size_t lm = pb_begin(&w->dict, LOC_LINES);
        pb_put_uint(&w->dict, LINE_FUNCTION, fn[k - from]);
        pb_put_int(&w->dict, LINE_LINE, f->line);
        pb_put_int(&w->dict, LINE_COLUMN, f->column);
        pb_end(&w->dict, lm);
    }
    pb_end(&w->dict, m);
    return index;
}

static int32_t otlp_stack(struct otlp *w, uint32_t stack)
{
    if (w->stack_of[stack]) return w->stack_of[stack];
    const struct profile_stack *st = &w->p->stacks[stack];
    uint64_t *ids = malloc((st->depth + 1) * sizeof *ids);
    if (!ids) return w->oom = 1, 0;
    size_t n = 0;
    for (uint32_t from = 0; from < st->depth;) {
        uint32_t to = from;
        while (to + 1 < st->depth && w->p->frames[st->frames[to]].inlined)
            to++;
        ids[n++] = otlp_location(w, st->frames, from, to);
        from = to + 1;
    }
    size_t m = pb_begin(&w->dict, D_STACK);
    pb_put_packed(&w->dict, STACK_LOCATIONS, ids, n);
    pb_end(&w->dict, m);
    free(ids);
    return w->stack_of[stack] = (int32_t)++w->n_stacks;
}

static void otlp_mappings(struct otlp *w)
{
    const struct profile *p = w->p;
    for (size_t i = 0; i < p->n_images; i++) {
        const struct profile_image *im = &p->images[i];
        int32_t bid = im->build_id ? otlp_attribute(w, "process.executable.build_id.gnu",
                                                    im->build_id, 0)
                                   : 0;
        uint64_t start = im->text_size ? im->text : im->base;
        size_t m = pb_begin(&w->dict, D_MAPPING);
        pb_put_uint(&w->dict, MAP_START, start);
        pb_put_uint(&w->dict, MAP_LIMIT, start + im->text_size);
        pb_put_uint(&w->dict, MAP_OFFSET, im->text_offset);
        pb_put_uint(&w->dict, MAP_FILENAME, (uint64_t)otlp_str(w, im->path));
        if (bid) {
            uint64_t b = (uint64_t)bid;
            pb_put_packed(&w->dict, MAP_ATTRIBUTES, &b, 1);
        }
        pb_end(&w->dict, m);
    }
}

/* ------------------------------------------------------------------ samples */

/* One Sample: a (stack, thread, state) and the samples of it, in time order. */
struct otlp_group {
    uint32_t stack, thread;
    uint8_t state;
    size_t first, n; /* its run in the grouped order */
};

/* Groups the samples counted (state asked) by (stack, thread, state), each group's in
 * time order. */
static int otlp_group(const struct profile *p, const struct summary *s, struct otlp_group **out,
                      size_t *n_out, size_t **order_out)
{
    size_t *order = malloc((p->n_samples + 1) * sizeof *order);
    size_t *sorted = malloc((p->n_samples + 1) * sizeof *sorted);
    uint32_t *gid = malloc((p->n_samples + 1) * sizeof *gid);
    struct otlp_group *g = NULL;
    size_t n = 0, cap = 0, k = 0;
    struct intmap seen = {0};
    int rc = -ENOMEM;
    if (!order || !sorted || !gid) goto out;
    for (size_t i = 0; i < p->n_samples; i++)
        if (s->only_state == SUMMARY_ALL_STATES || p->samples[i].state == s->only_state)
            sorted[k++] = i;
    if (export_sort_by_time(p, sorted, k)) goto out;
    for (size_t j = 0; j < k; j++) {
        const struct profile_sample *sa = &p->samples[sorted[j]];
        int added;
        uint64_t key = ((uint64_t)sa->stack << 33 | (uint64_t)sa->thread << 1 | sa->state) + 1;
        uint32_t *slot = intmap_slot(&seen, key, &added);
        if (!slot) goto out;
        if (added) {
            if (array_reserve((void **)&g, &cap, n + 1, sizeof *g)) goto out;
            g[n] = (struct otlp_group){sa->stack, sa->thread, sa->state, 0, 0};
            *slot = (uint32_t)n++;
        }
        gid[j] = *slot;
        g[*slot].n++;
    }
    for (size_t i = 0, at = 0; i < n; i++)
        g[i].first = at, at += g[i].n, g[i].n = 0;
    for (size_t j = 0; j < k; j++) {
        struct otlp_group *x = &g[gid[j]];
        order[x->first + x->n++] = sorted[j];
    }
    *out = g, *n_out = n, *order_out = order;
    g = NULL, order = NULL;
    rc = 0;
out:
    intmap_free(&seen);
    free(g), free(order), free(sorted), free(gid);
    return rc;
}

/* ------------------------------------------------------------------ the request */

struct otlp_thread_attrs {
    int32_t tid, name; /* attribute indices, 0 none */
};

static void otlp_resource_attr_s(struct pb_buf *b, const char *key, const char *v)
{
    if (!v) return;
    char *u = escape_utf8_dup(v, NULL);
    size_t m = pb_begin(b, RES_ATTRIBUTES);
    pb_put_string(b, KV_KEY, key);
    size_t a = pb_begin(b, KV_VALUE);
    pb_put_string(b, ANY_STRING, u ? u : "");
    pb_end(b, a);
    pb_end(b, m);
    free(u);
}

static void otlp_resource_attr_i(struct pb_buf *b, const char *key, int64_t v)
{
    size_t m = pb_begin(b, RES_ATTRIBUTES);
    pb_put_string(b, KV_KEY, key);
    size_t a = pb_begin(b, KV_VALUE);
    pb_put_tag(b, ANY_INT, PB_VARINT);
    pb_put_varint(b, (uint64_t)v);
    pb_end(b, a);
    pb_end(b, m);
}

static void otlp_resource(struct otlp *w, struct pb_buf *b, int32_t proc)
{
    const struct profile *p = w->p;
    const struct profile_process *pr = proc >= 0 ? &p->processes[proc] : NULL;
    int64_t pid = pr ? pr->pid : p->meta.pid, ppid = pr ? pr->ppid : p->meta.ppid;
    const char *exe = pr && pr->exe ? pr->exe : p->meta.exe;
    size_t m = pb_begin(b, RP_RESOURCE);
    if (pid >= 0) otlp_resource_attr_i(b, "process.pid", pid);
    if (ppid >= 0) otlp_resource_attr_i(b, "process.parent_pid", ppid);
    const char *name = pr ? pr->name : exe ? (strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe) : NULL;
    otlp_resource_attr_s(b, "process.executable.name", name);
    otlp_resource_attr_s(b, "process.executable.path", exe);
    if (pr) otlp_resource_attr_s(b, "process.command_line", pr->cmdline);
    char host[256];
    if (gethostname(host, sizeof host) == 0) {
        host[sizeof host - 1] = 0;
        otlp_resource_attr_s(b, "host.name", host);
    }
    const char *plat = p->meta.platform;
    if (plat && !strncmp(plat, "linux-", 6)) {
        const char *arch = plat + 6;
        otlp_resource_attr_s(b, "host.arch", !strcmp(arch, "x86_64") ? "amd64"
                                             : !strcmp(arch, "aarch64") ? "arm64"
                                                                        : arch);
        otlp_resource_attr_s(b, "os.type", "linux");
    }
    pb_end(b, m);
}

/* The samples of one process (proc, -1: all) and one sample type as a Profile. */
static void otlp_profile(struct otlp *w, struct pb_buf *b, int32_t proc, size_t type,
                         const struct otlp_group *g, size_t n_groups, const size_t *order,
                         const struct otlp_thread_attrs *ta, const int32_t *state_attr,
                         int timed, const struct pb_buf *payload)
{
    const struct profile *p = w->p;
    int64_t start = p->meta.start_unix_ns, end = start + profile_wall_ns(p);
    size_t m = pb_begin(b, SP_PROFILES);
    otlp_value_type(w, b, PR_SAMPLE_TYPE, p->sample_types[type].type, p->sample_types[type].unit);
    uint64_t *vals = NULL, *ts = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < n_groups; i++) {
        const struct otlp_group *x = &g[i];
        if (proc >= 0 && p->threads[x->thread].process != proc) continue;
        size_t had = cap;
        if (array_reserve((void **)&vals, &cap, x->n + 1, sizeof *vals)) {
            w->oom = 1;
            break;
        }
        if (cap != had || !ts) {
            uint64_t *t = realloc(ts, (cap + 1) * sizeof *ts);
            if (!t) {
                w->oom = 1;
                break;
            }
            ts = t;
        }
        size_t n = 0;
        int64_t sum = 0;
        for (size_t j = 0; j < x->n; j++) {
            size_t si = order[x->first + j];
            int64_t v = profile_values(p, si)[type];
            sum += v;
            if (timed) {
                vals[n] = (uint64_t)v;
                ts[n++] = (uint64_t)(start + p->samples[si].time_ns);
                if (start + p->samples[si].time_ns >= end) end = start + p->samples[si].time_ns + 1;
            }
        }
        if (!timed && !sum) continue;
        size_t sm = pb_begin(b, PR_SAMPLES);
        pb_put_uint(b, SA_STACK, (uint64_t)otlp_stack(w, x->stack));
        uint64_t attrs[4];
        size_t na = 0;
        if (ta[x->thread].tid) attrs[na++] = (uint64_t)ta[x->thread].tid;
        if (ta[x->thread].name) attrs[na++] = (uint64_t)ta[x->thread].name;
        attrs[na++] = (uint64_t)state_attr[x->state];
        if (w->guessed_attr && profile_stack_marks(p, &p->stacks[x->stack], NULL, NULL))
            attrs[na++] = (uint64_t)w->guessed_attr;
        pb_put_packed(b, SA_ATTRIBUTES, attrs, na);
        if (timed) {
            pb_put_packed(b, SA_VALUES, vals, n);
            pb_put_tag(b, SA_TIMESTAMPS, PB_LEN);
            pb_put_varint(b, n * 8);
            for (size_t j = 0; j < n; j++)
                for (int byte = 0; byte < 8; byte++) {
                    uint8_t c = (uint8_t)(ts[j] >> (8 * byte));
                    pb_put_raw(b, &c, 1);
                }
        } else {
            uint64_t v = (uint64_t)sum;
            pb_put_packed(b, SA_VALUES, &v, 1);
        }
        pb_end(b, sm);
    }
    free(vals), free(ts);
    if (start > 0) {
        pb_put_tag(b, PR_TIME, PB_FIXED64);
        for (int byte = 0; byte < 8; byte++) {
            uint8_t c = (uint8_t)((uint64_t)start >> (8 * byte));
            pb_put_raw(b, &c, 1);
        }
        pb_put_uint(b, PR_DURATION, (uint64_t)(end - start));
    }
    if (p->period_type.type)
        otlp_value_type(w, b, PR_PERIOD_TYPE, p->period_type.type, p->period_type.unit);
    else if (p->kind == PROFILE_CPU)
        otlp_value_type(w, b, PR_PERIOD_TYPE, "cpu", "nanoseconds");
    else
        otlp_value_type(w, b, PR_PERIOD_TYPE, "space", "bytes");
    pb_put_int(b, PR_PERIOD, p->period);
    if (payload) {
        pb_put_string(b, PR_PAYLOAD_FORMAT, "pprof");
        pb_put_bytes(b, PR_PAYLOAD, payload->data, payload->len);
    }
    pb_end(b, m);
}

/* The whole profile as kestrel's pprof export, for original_payload. */
static int otlp_pprof(const struct profile *p, const struct summary *s, struct pb_buf *out)
{
    extern const struct writer writer_pprof;
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) return -ENOMEM;
    int rc = writer_pprof.write(p, s, mem);
    if (fclose(mem) && !rc) rc = -EIO;
    if (!rc) pb_put_raw(out, buf, len);
    free(buf);
    return rc ? rc : out->failed ? -ENOMEM : 0;
}

static int write_otlp(const struct profile *p, const struct summary *s, FILE *out)
{
    struct otlp w = {.p = p, .s = s};
    struct pb_buf req = {0}, payload = {0};
    struct otlp_group *g = NULL;
    size_t n_groups = 0, *order = NULL;
    struct otlp_thread_attrs *ta = calloc(p->n_threads + 1, sizeof *ta);
    int rc = -ENOMEM;
    w.stack_of = calloc(p->n_stacks + 1, sizeof *w.stack_of);
    if (!ta || !w.stack_of || otlp_group(p, s, &g, &n_groups, &order)) goto out;
    if (array_reserve((void **)&w.strs, &w.cap_strs, 1, sizeof *w.strs) ||
        !(w.strs[0] = strdup("")))
        goto out;
    w.n_strs = 1;
    /* every table's entry 0 is its zero value */
    for (uint32_t f = D_MAPPING; f <= D_STACK; f++)
        if (f != D_STRING) pb_end(&w.dict, pb_begin(&w.dict, f));
    otlp_mappings(&w);
    int32_t state_attr[PROFILE_NSTATES] = {otlp_attribute(&w, "kestrel.state", "running", 0),
                                           otlp_attribute(&w, "kestrel.state", "waiting", 0)};
    for (size_t i = 0; i < n_groups && !w.guessed_attr; i++)
        if (profile_stack_marks(p, &p->stacks[g[i].stack], NULL, NULL))
            w.guessed_attr = otlp_attribute(&w, "kestrel.stack", "guessed", 0);
    for (size_t t = 0; t < p->n_threads; t++) {
        const struct profile_thread *th = &p->threads[t];
        if (th->tid >= 0) ta[t].tid = otlp_attribute(&w, "thread.id", NULL, th->tid);
        ta[t].name = otlp_attribute(&w, "thread.name", th->name ? th->name : th->label, 0);
    }
    /* timestamps per sample when every sample counted has one */
    int timed = p->meta.start_unix_ns > 0 && n_groups > 0;
    for (size_t i = 0; timed && i < n_groups; i++)
        for (size_t j = 0; j < g[i].n; j++)
            if (p->samples[order[g[i].first + j]].time_ns < 0) timed = 0;
    size_t n_res = p->n_processes > 1 ? p->n_processes : 1;
    if (n_res == 1 && (rc = otlp_pprof(p, s, &payload))) goto out;
    rc = -ENOMEM;
    for (size_t r = 0; r < n_res; r++) {
        int32_t proc = p->n_processes > 1 ? (int32_t)r : -1;
        size_t rm = pb_begin(&req, REQ_RESOURCE_PROFILES);
        otlp_resource(&w, &req, p->n_processes >= 1 ? (int32_t)r : -1);
        size_t sm = pb_begin(&req, RP_SCOPE_PROFILES);
        size_t scope = pb_begin(&req, SP_SCOPE);
        pb_put_string(&req, SCOPE_NAME, "kestrel");
        pb_end(&req, scope);
        for (size_t t = 0; t < p->n_sample_types; t++)
            otlp_profile(&w, &req, proc, t, g, n_groups, order, ta, state_attr, timed,
                         t == 0 && n_res == 1 ? &payload : NULL);
        pb_end(&req, sm);
        pb_end(&req, rm);
    }
    for (size_t i = 1; i < w.n_strs; i++) /* strings last: all are known now */
        pb_put_string(&w.dict, D_STRING, w.strs[i]);
    /* string_table[0] must be present: "" before the others */
    struct pb_buf d = {0};
    pb_put_string(&d, D_STRING, "");
    pb_put_raw(&d, w.dict.data, w.dict.len);
    pb_put_bytes(&req, REQ_DICTIONARY, d.data, d.len);
    int failed = d.failed;
    pb_buf_free(&d);
    if (w.oom || failed || w.dict.failed || req.failed) goto out;
    rc = fwrite(req.data, 1, req.len, out) == req.len ? 0 : -EIO;
out:
    for (size_t i = 0; i < w.n_strs; i++)
        free(w.strs[i]);
    free(w.strs), free(w.stack_of), free(ta), free(g), free(order);
    intmap_free(&w.str_of), intmap_free(&w.functions), intmap_free(&w.locations);
    pb_buf_free(&w.dict), pb_buf_free(&req), pb_buf_free(&payload);
    return rc;
}

const struct writer writer_otlp = {"otlp", ".otlp.pb", write_otlp, 0};
