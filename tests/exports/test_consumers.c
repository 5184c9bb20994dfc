/* Every export kestrel writes, read back by the tool that consumes it:
 *   pprof       go tool pprof -raw (Go's own parser): sample types, period, every
 *               stack's functions, files and lines, labels and values;
 *   speedscope  ajv against speedscope's published file-format schema, then
 *               speedscope itself (its importer, in chromium): frames and weights;
 *   cpuprofile  speedscope's Chrome importer, in chromium: frames and weights;
 *   folded      its lines, as flamegraph.pl reads them;
 *   profile.json  jansson: totals, states, threads and functions as aggregated.
 * The profile is built in memory with hostile names (quotes, control characters,
 * markup, invalid UTF-8, `;`), several threads, inlined calls, recursion and an
 * unresolved address, and each consumer must return every name byte for byte (invalid
 * UTF-8 as U+FFFD). Expectations are written with jansson from the model, not by the
 * writers under test. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/model/profile.h"
#include "analysis/aggregate/summary.h"
#include "analysis/writers/writers.h"
#include "check.h"

extern const struct writer writer_speedscope, writer_cpuprofile, writer_folded, writer_summary,
    writer_pprof;

/* A name as the program gave it, as a consumer must read it back, and as the folded
 * format (which cannot escape `;` or a line break) carries it. */
struct hostile {
    const char *raw, *read, *folded;
};

static const struct hostile names[] = {
    {"<img src=x onerror=alert(1)>", "<img src=x onerror=alert(1)>",
     "<img src=x onerror=alert(1)>"},
    {"quote\"d \\back'slash", "quote\"d \\back'slash", "quote\"d \\back'slash"},
    {"ctl\x01\x1f\ttab\x7f", "ctl\x01\x1f\ttab\x7f", "ctl\uFFFD\uFFFD\uFFFDtab\uFFFD"},
    {"bad\xff\xfe utf8 \xc3(", "bad\uFFFD\uFFFD utf8 \uFFFD(", "bad\uFFFD\uFFFD utf8 \uFFFD("},
    {"overlong\xc0\xaf surrogate\xed\xa0\x80", "overlong\uFFFD\uFFFD surrogate\uFFFD\uFFFD\uFFFD",
     "overlong\uFFFD\uFFFD surrogate\uFFFD\uFFFD\uFFFD"},
    {"\xc3\xbcnic\xc3\xb6"
     "de \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80 line\xe2\x80\xa8sep",
     "\xc3\xbcnic\xc3\xb6"
     "de \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80 line\xe2\x80\xa8sep",
     "\xc3\xbcnic\xc3\xb6"
     "de \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80 line\xe2\x80\xa8sep"},
    {"semi;colon", "semi;colon", "semi\uFFFDcolon"},
    {"std::vector<int, std::allocator<int> >::push_back(int const&)",
     "std::vector<int, std::allocator<int> >::push_back(int const&)",
     "std::vector<int, std::allocator<int> >::push_back(int const&)"},
    {"</script><script>alert(2)</script>", "</script><script>alert(2)</script>",
     "</script><script>alert(2)</script>"},
};
#define N_NAMES (sizeof names / sizeof names[0])

static const char *hostile_file = "/src/<b>\"x\"\\y.c";
static const char *thread_names[] = {"main", "w\"<b>&amp;", NULL};
static const char *thread_labels[] = {"main", "worker", "fiber"};
static const int64_t thread_fibers[] = {0, 0, 1};

static char dir[256];

/* ------------------------------------------------------------------ the profile */

static uint32_t frame(struct profile *p, const char *name, const char *file, int line,
                      uint64_t addr, int inlined, int symbolized)
{
    struct profile_frame f = {.name = (char *)name,
                              .file = (char *)file,
                              .line = line,
                              .image = symbolized ? 0 : -1,
                              .address = addr,
                              .inlined = (uint8_t)inlined,
                              .symbolized = (uint8_t)symbolized};
    int64_t i = profile_intern_frame(p, &f);
    if (i < 0) abort();
    return (uint32_t)i;
}

static uint32_t stack(struct profile *p, const uint32_t *frames, uint32_t depth)
{
    int64_t i = profile_intern_stack(p, frames, depth);
    if (i < 0) abort();
    return (uint32_t)i;
}

/* The raw-name index of each frame that carries a hostile name, -1 otherwise. */
static int hostile_of_frame[64];

/* A CPU profile counts samples and, with_cpu, their CPU time too. */
static struct profile *build(enum profile_kind kind, int with_cpu)
{
    struct profile *p = profile_new(kind);
    if (!p) abort();
    p->source = strdup("/tmp/<hostile> \"profile\".json");
    if (kind == PROFILE_CPU) {
        profile_add_sample_type(p, "samples", "count");
        if (with_cpu) profile_add_sample_type(p, "cpu", "nanoseconds");
        p->default_type = with_cpu ? 1 : 0;
        p->period = 1003009;
        p->meta.rate_hz = 997;
    } else {
        profile_add_sample_type(p, "alloc_objects", "count");
        profile_add_sample_type(p, "alloc_space", "bytes");
        profile_add_sample_type(p, "inuse_objects", "count");
        profile_add_sample_type(p, "inuse_space", "bytes");
        p->default_type = 3;
        p->period_type.type = strdup("space");
        p->period_type.unit = strdup("bytes");
        p->period = 524288;
    }
    p->meta.start_unix_ns = 1700000000000000000;
    p->meta.end_unix_ns = p->meta.start_unix_ns + 2000000000;
    struct profile_image im = {.path = "/opt/app \"x\"/bin<1>",
                               .build_id = "abcdef0123",
                               .base = 0x400000,
                               .text = 0x401000,
                               .text_size = 0x3000,
                               .text_offset = 0x1000,
                               .slide_known = 1,
                               .is_main = 1};
    profile_add_image(p, &im);
    for (size_t t = 0; t < 3; t++)
        profile_add_thread(p, thread_labels[t], thread_fibers[t], 100 + (int64_t)t,
                           thread_names[t]);

    memset(hostile_of_frame, -1, sizeof hostile_of_frame);
    uint32_t fmain = frame(p, "main", "/src/main.c", 10, 0x401100, 0, 1);
    uint32_t st[24];
    size_t n = 0;
    for (size_t i = 0; i < N_NAMES; i++) {
        uint32_t f = frame(p, names[i].raw, hostile_file, 20 + (int)i, 0x401200 + 16 * i, 0, 1);
        hostile_of_frame[f] = (int)i;
        st[n++] = stack(p, (uint32_t[]){f, fmain}, 2);
    }
    uint32_t h0 = p->stacks[st[0]].frames[0];
    uint32_t h1 = p->stacks[st[1]].frames[0];
    st[n++] = stack(p, (uint32_t[]){h0, h1, fmain}, 3);
    /* An inlined call: two frames of one address, innermost first. */
    uint32_t inner = frame(p, "inlined_leaf", "/src/inl.h", 5, 0x401300, 1, 1);
    uint32_t outer = frame(p, "outer_of_inline", "/src/main.c", 50, 0x401300, 0, 1);
    st[n++] = stack(p, (uint32_t[]){inner, outer, fmain}, 3);
    /* Recursion through two call sites of one function. */
    uint32_t ra = frame(p, "rec", "/src/main.c", 70, 0x401400, 0, 1);
    uint32_t rb = frame(p, "rec", "/src/main.c", 71, 0x401410, 0, 1);
    st[n++] = stack(p, (uint32_t[]){rb, ra, ra, fmain}, 4);
    /* An address nothing describes. */
    uint32_t unres = frame(p, "0x7f0000001234", NULL, 0, 0x7f0000001234, 0, 0);
    st[n++] = stack(p, (uint32_t[]){unres, fmain}, 2);

    for (size_t k = 0; k < 600; k++) {
        uint32_t t = (uint32_t)(k % 3);
        int waiting = kind == PROFILE_CPU && k % 5 == 0;
        int64_t v[4];
        if (kind == PROFILE_CPU) {
            v[0] = 1;
            v[1] = waiting ? 0 : 1000000 + (int64_t)(k % 7) * 1001;
        } else {
            v[0] = 1 + (int64_t)(k % 3), v[1] = 4096 * v[0], v[2] = k % 2, v[3] = v[2] * 4096;
        }
        if (profile_add_sample(p, t, st[(k * 7 + k / 3) % n], waiting,
                               kind == PROFILE_CPU ? (int64_t)k * 1000 : -1, v))
            abort();
    }
    char why[200];
    if (profile_check(p, why, sizeof why)) {
        fprintf(stderr, "test profile unsound: %s\n", why);
        abort();
    }
    return p;
}

/* The name a consumer must read back for frame f. */
static const char *read_name(const struct profile *p, uint32_t f)
{
    return hostile_of_frame[f] >= 0 ? names[hostile_of_frame[f]].read : p->frames[f].name;
}

static char *thread_root(const struct profile *p, size_t t)
{
    char *s;
    if (asprintf(&s, "%s-%" PRId64, p->threads[t].label, p->threads[t].fiber) < 0) abort();
    return s;
}

/* ------------------------------------------------------------------ running consumers */

static char *path_of(const char *name)
{
    char *s;
    if (asprintf(&s, "%s/%s", dir, name) < 0) abort();
    return s;
}

static int run(const char *cmd)
{
    fprintf(stderr, "$ %s\n", cmd);
    fflush(stderr);
    int rc = system(cmd);
    return rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

static void dump(json_t *j, const char *name)
{
    char *path = path_of(name);
    if (json_dump_file(j, path, JSON_INDENT(1))) abort();
    free(path);
    json_decref(j);
}

static char *write_export(const struct writer *w, const struct profile *p, const struct summary *s,
                          const char *stem)
{
    char *name, *path;
    if (asprintf(&name, "%s%s", stem, w->suffix) < 0) abort();
    path = path_of(name);
    free(name);
    CHECKF(writer_write_file(w, p, s, path) == 0, "%s writer failed", w->format);
    return path;
}

/* ------------------------------------------------------------------ expectations */

static json_t *speedscope_frame(const struct profile *p, const struct summary *s, uint32_t f)
{
    const struct summary_function *fn = &s->functions[s->function_of_frame[f]];
    return json_pack("{s:s, s:s, s:i}", "name", read_name(p, f), "file", fn->file ? fn->file : "",
                     "line", fn->line);
}

static json_t *root_frame(const struct profile *p, size_t t)
{
    char *r = thread_root(p, t);
    json_t *j = json_pack("{s:s, s:s, s:i}", "name", r, "file", "", "line", 0);
    free(r);
    return j;
}

/* speedscope's view of our speedscope file: a profile per thread. */
static void expect_speedscope(const struct profile *p, const struct summary *s, const char *unit,
                              const char *name)
{
    json_t *profiles = json_array();
    /* Exported with every state: a thread's running samples, then its waiting ones in a
     * profile of their own ("<root> [waiting]"). */
    int marks = s->only_state == SUMMARY_ALL_STATES && p->kind == PROFILE_CPU;
    for (size_t t = 0; t < p->n_threads; t++)
        for (int part = 0; part <= marks; part++) {
        json_t *stacks = json_array();
        for (size_t i = 0; i < p->n_samples; i++) {
            int64_t v = profile_values(p, i)[s->type];
            if (p->samples[i].thread != t || !v) continue;
            if (marks && p->samples[i].state != part) continue;
            const struct profile_stack *st = &p->stacks[p->samples[i].stack];
            json_t *frames = json_array();
            for (uint32_t d = st->depth; d-- > 0;)
                json_array_append_new(frames, speedscope_frame(p, s, st->frames[d]));
            json_array_append_new(stacks, json_pack("{s:o, s:I}", "frames", frames, "weight", v));
        }
        char *r = thread_root(p, t), *named = NULL;
        if (part && asprintf(&named, "%s [waiting]", r) < 0) abort();
        if (json_array_size(stacks))
            json_array_append_new(profiles, json_pack("{s:s, s:s, s:o}", "name", named ? named : r,
                                                      "unit", unit, "stacks", stacks));
        else
            json_decref(stacks);
        free(r), free(named);
        }
    dump(json_pack("{s:o}", "profiles", profiles), name);
}

/* speedscope's view of our cpuprofile: one profile, threads as root frames, weights in
 * microseconds. */
static void expect_cpuprofile(const struct profile *p, const struct summary *s, double ns_per_value,
                              const char *name)
{
    json_t *stacks = json_array();
    double idle = 0;
    for (size_t i = 0; i < p->n_samples; i++) {
        int64_t v = profile_values(p, i)[s->type];
        if (!v) continue;
        const struct profile_stack *st = &p->stacks[p->samples[i].stack];
        json_t *frames = json_array();
        /* With every state, a waiting sample is V8's "(idle)", which speedscope takes
         * as idle time: no stack of its own. */
        if (s->only_state == SUMMARY_ALL_STATES && p->samples[i].state == PROFILE_WAITING) {
            idle += (double)v * ns_per_value / 1000.0;
            json_decref(frames);
            continue;
        }
        json_array_append_new(frames, root_frame(p, p->samples[i].thread));
        for (uint32_t d = st->depth; d-- > 0;)
            json_array_append_new(frames, speedscope_frame(p, s, st->frames[d]));
        json_array_append_new(stacks, json_pack("{s:o, s:f}", "frames", frames, "weight",
                                                (double)v * ns_per_value / 1000.0));
    }
    json_t *prof = json_pack("{s:n, s:s, s:o, s:f}", "name", "unit", "microseconds", "stacks", stacks,
                             "idle_weight", idle);
    dump(json_pack("{s:[o]}", "profiles", prof), name);
}

static void expect_pprof(const struct profile *p, const char *name)
{
    static const char *const states[] = {"running", "waiting"};
    json_t *types = json_array(), *samples = json_array();
    /* A CPU profile without CPU times gets them as count x period (Go's convention). */
    int derive = p->kind == PROFILE_CPU && profile_find_sample_type(p, "cpu") < 0;
    for (size_t t = 0; t < p->n_sample_types; t++)
        json_array_append_new(types,
                              json_pack("[s,s]", p->sample_types[t].type, p->sample_types[t].unit));
    if (derive) json_array_append_new(types, json_pack("[s,s]", "cpu", "nanoseconds"));
    for (size_t i = 0; i < p->n_samples; i++) {
        const struct profile_stack *st = &p->stacks[p->samples[i].stack];
        json_t *frames = json_array(), *values = json_array();
        for (uint32_t d = 0; d < st->depth; d++) {
            const struct profile_frame *f = &p->frames[st->frames[d]];
            if (!f->symbolized) { /* an address alone prints no line */
                json_array_append_new(frames, json_pack("{s:b}", "address_only", 1));
                continue;
            }
            json_array_append_new(frames,
                                  json_pack("{s:s, s:s, s:i}", "name", read_name(p, st->frames[d]),
                                            "file", f->file ? f->file : "", "line", f->line));
        }
        for (size_t t = 0; t < p->n_sample_types; t++)
            json_array_append_new(values, json_integer(profile_values(p, i)[t]));
        if (derive)
            json_array_append_new(values, json_integer(profile_values(p, i)[0] * p->period));
        const struct profile_thread *th = &p->threads[p->samples[i].thread];
        json_t *labels = json_pack("{s:s}", "thread", th->name ? th->name : th->label);
        if (p->kind == PROFILE_CPU)
            json_object_set_new(labels, "state", json_string(states[p->samples[i].state]));
        json_array_append_new(samples, json_pack("{s:o, s:o, s:o}", "frames", frames, "values",
                                                 values, "labels", labels));
    }
    const char *pt = p->kind == PROFILE_CPU ? "cpu" : "space";
    const char *pu = p->kind == PROFILE_CPU ? "nanoseconds" : "bytes";
    dump(json_pack("{s:o, s:s, s:[s,s], s:I, s:o}", "sample_types", types, "default_sample_type",
                   p->sample_types[p->default_type].type, "period_type", pt, pu, "period",
                   (json_int_t)p->period, "samples", samples),
         name);
}

/* ------------------------------------------------------------------ folded, profile.json */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0, r;
    do {
        if (n + 4096 > cap && !(buf = realloc(buf, cap = cap * 2 + 8192))) abort();
        r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
    } while (r > 0);
    fclose(f);
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

/* Every folded line is "root;...;leaf VALUE"; the set of lines must be exactly the
 * distinct stacks with their summed values. */
static void check_folded(const struct profile *p, const struct summary *s, const char *path)
{
    struct line {
        char *text;
        int64_t value;
    } want[1024];
    size_t n_want = 0;
    for (size_t i = 0; i < p->n_samples; i++) {
        int64_t v = profile_values(p, i)[s->type];
        if (!v) continue;
        const struct profile_stack *st = &p->stacks[p->samples[i].stack];
        char *text = thread_root(p, p->samples[i].thread);
        for (uint32_t d = st->depth; d-- > 0;) {
            uint32_t f = st->frames[d];
            const char *nm =
                hostile_of_frame[f] >= 0 ? names[hostile_of_frame[f]].folded : p->frames[f].name;
            char *t2;
            if (asprintf(&t2, "%s;%s", text, nm) < 0) abort();
            free(text), text = t2;
        }
        /* Exported with every state, a waiting sample's stack ends in [waiting]. */
        if (s->only_state == SUMMARY_ALL_STATES && p->kind == PROFILE_CPU &&
            p->samples[i].state == PROFILE_WAITING) {
            char *t2;
            if (asprintf(&t2, "%s;[waiting]", text) < 0) abort();
            free(text), text = t2;
        }
        size_t k = 0;
        while (k < n_want && strcmp(want[k].text, text))
            k++;
        if (k == n_want)
            want[n_want++] = (struct line){text, 0};
        else
            free(text);
        want[k].value += v;
    }
    char *buf = slurp(path, NULL);
    CHECKF(buf != NULL, "cannot read %s", path);
    size_t got = 0;
    for (char *line = buf, *next; buf && *line; line = next) {
        next = strchr(line, '\n');
        CHECKF(next != NULL, "folded: last line has no newline");
        if (!next) break;
        *next++ = 0;
        char *sp = strrchr(line, ' ');
        CHECKF(sp != NULL, "folded: no count: %s", line);
        if (!sp) continue;
        *sp = 0;
        got++;
        size_t k = 0;
        while (k < n_want && strcmp(want[k].text, line))
            k++;
        CHECKF(k < n_want, "folded: a line that was not in the profile: %s", line);
        if (k < n_want) {
            CHECKF(strtoll(sp + 1, NULL, 10) == want[k].value, "folded: %s: %s, want %" PRId64,
                   line, sp + 1, want[k].value);
            want[k].value = -1; /* seen */
        }
    }
    CHECKF(got == n_want, "folded: %zu lines, %zu distinct stacks", got, n_want);
    for (size_t k = 0; k < n_want; k++)
        free(want[k].text);
    free(buf);
}

static void check_summary_json(const struct profile *p, const struct summary *s, const char *path)
{
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);
    CHECKF(j != NULL, "profile.json does not parse: %s (line %d)", err.text, err.line);
    if (!j) return;
    json_t *totals = json_object_get(j, "totals");
    CHECK(json_integer_value(json_object_get(totals, "value")) == s->total);
    CHECK(json_integer_value(json_object_get(totals, "samples")) == (json_int_t)s->n_samples);
    CHECK(json_integer_value(json_object_get(totals, "wall_ns")) == 2000000000);
    CHECK(!strcmp(json_string_value(json_object_get(j, "source")), p->source));
    json_t *wait = json_object_get(json_object_get(j, "states"), "waiting");
    CHECK(json_integer_value(json_object_get(wait, "value")) == s->state[PROFILE_WAITING].value);
    CHECK(fabs(json_number_value(json_object_get(wait, "se")) - s->state[PROFILE_WAITING].se) <=
          1e-8 * s->state[PROFILE_WAITING].se);
    /* Counted in samples, the waiting fifth is a share with an error; in CPU time it is 0. */
    CHECK((s->type == 0) == (s->state[PROFILE_WAITING].se > 0));
    json_t *threads = json_object_get(j, "threads");
    CHECK(json_array_size(threads) == p->n_threads);
    CHECK(!strcmp(json_string_value(json_object_get(json_array_get(threads, 1), "name")),
                  thread_names[1]));
    CHECK(json_is_null(json_object_get(json_array_get(threads, 2), "name")));
    /* Every hot function, with its name as given and its numbers as aggregated. */
    json_t *fns = json_object_get(j, "functions");
    size_t hot = 0;
    for (size_t i = 0; i < s->n_functions; i++) {
        const struct summary_function *f = &s->functions[i];
        if (!f->self.value && !f->total.value) continue;
        json_t *e = json_array_get(fns, hot++);
        const char *want = f->name;
        for (size_t h = 0; h < N_NAMES; h++)
            if (!strcmp(f->name, names[h].raw)) want = names[h].read;
        CHECKF(e && !strcmp(json_string_value(json_object_get(e, "name")), want),
               "profile.json function %zu", hot - 1);
        json_t *self = json_object_get(e, "self"), *total = json_object_get(e, "total");
        CHECK(json_integer_value(json_object_get(self, "value")) == f->self.value);
        CHECK(json_integer_value(json_object_get(total, "value")) == f->total.value);
        CHECK(fabs(json_number_value(json_object_get(self, "share")) - f->self.share) < 1e-8);
        CHECK(json_is_boolean(json_object_get(self, "significant")));
    }
    CHECKF(json_array_size(fns) == hot && hot >= N_NAMES, "profile.json: %zu functions, %zu hot",
           json_array_size(fns), hot);
    CHECK(json_array_size(json_object_get(j, "lines")) > 0);
    json_decref(j);
}

/* ------------------------------------------------------------------ main */

/* The pprof kestrel wrote, read back by kestrel itself (`kestrel export`, the
 * sanitizer build) and written in every format: every hostile name must come through
 * the pprof reader and each writer exactly, and the CPU total must be kept. */
static void check_cli_roundtrip(const struct profile *p, const char *pp, const char *exp_pp,
                                const char *node, const char *consumers)
{
    static const char *const formats[] = {"speedscope", "cpuprofile", "folded", "summary", "pprof"};
    char cmd[4096], *out[5];
    for (size_t i = 0; i < 5; i++) {
        char name[64];
        snprintf(name, sizeof name, "cli.%s", formats[i]);
        out[i] = path_of(name);
        snprintf(cmd, sizeof cmd, "build/bin/kestrel-san export --format %s -o %s %s", formats[i],
                 out[i], pp);
        CHECKF(run(cmd) == 0, "kestrel export --format %s", formats[i]);
    }
    int cpu = profile_find_sample_type(p, "cpu");
    int64_t total = 0;
    for (size_t i = 0; i < p->n_samples; i++)
        total += profile_values(p, i)[cpu];
    json_t *hot = json_array();
    for (size_t h = 0; h < N_NAMES; h++)
        json_array_append_new(hot, json_string(names[h].read));
    json_array_append_new(hot, json_string("inlined_leaf"));
    dump(json_pack("{s:s, s:I, s:O}", "unit", "nanoseconds", "total_weight", (json_int_t)total,
                   "names", hot),
         "cli.expect-speedscope.json");
    dump(json_pack("{s:s, s:f, s:O}", "unit", "microseconds", "total_weight", total / 1000.0,
                   "names", hot),
         "cli.expect-cpuprofile.json");
    snprintf(cmd, sizeof cmd,
             "%s %s/speedscope_probe.mjs %s %s/cli.expect-speedscope.json %s "
             "%s/cli.expect-cpuprofile.json",
             node, consumers, out[0], dir, out[1], dir);
    CHECKF(run(cmd) == 0, "speedscope import of kestrel export's files");
    snprintf(cmd, sizeof cmd, "python3 %s/pprof_raw_check.py %s %s/%s", consumers, out[4], dir,
             exp_pp);
    CHECKF(run(cmd) == 0, "go tool pprof, pprof -> kestrel export -> pprof");

    char *folded = slurp(out[2], NULL);
    int64_t sum = 0;
    for (char *l = folded; l && *l; l = strchr(l, '\n') + 1) {
        char *nl = strchr(l, '\n'), *sp = nl ? memrchr(l, ' ', (size_t)(nl - l)) : NULL;
        if (!sp) break;
        sum += strtoll(sp + 1, NULL, 10);
    }
    CHECKF(sum == total, "folded from pprof: counts sum to %" PRId64 ", want %" PRId64, sum, total);
    json_error_t err;
    json_t *sj = json_load_file(out[3], 0, &err);
    CHECKF(sj != NULL, "profile.json from pprof: %s", err.text);
    for (size_t h = 0; h < N_NAMES; h++) {
        CHECKF(folded && strstr(folded, names[h].folded), "folded from pprof lacks name %zu", h);
        int found = 0;
        json_t *fns = json_object_get(sj, "functions"), *e;
        size_t k;
        json_array_foreach(fns, k, e) found |=
            !strcmp(json_string_value(json_object_get(e, "name")), names[h].read);
        CHECKF(found, "profile.json from pprof lacks name %zu", h);
    }
    json_decref(sj);
    json_decref(hot);
    free(folded);
    for (size_t i = 0; i < 5; i++)
        free(out[i]);
}

static void check_cpu(const char *node, const char *consumers)
{
    /* CPU time (nanoseconds), sample counts, and counts alone (no CPU times recorded). */
    static const struct {
        int with_cpu;
        size_t type;
    } cases[] = {{1, 1}, {1, 0}, {0, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct profile *p = build(PROFILE_CPU, cases[c].with_cpu);
        size_t type = cases[c].type;
        const char *why = NULL;
        struct summary *s = summary_build(p, type, &why);
        CHECKF(s != NULL, "summary_build: %s", why ? why : "?");
        if (!s) continue;
        char stem[32], exp_ss[64], exp_cp[64], exp_pp[64], cmd[4096];
        snprintf(stem, sizeof stem, "cpu%zu", c);
        snprintf(exp_ss, sizeof exp_ss, "%s.expect-speedscope.json", stem);
        snprintf(exp_cp, sizeof exp_cp, "%s.expect-cpuprofile.json", stem);
        snprintf(exp_pp, sizeof exp_pp, "%s.expect-pprof.json", stem);
        char *ss = write_export(&writer_speedscope, p, s, stem);
        char *cp = write_export(&writer_cpuprofile, p, s, stem);
        char *fo = write_export(&writer_folded, p, s, stem);
        char *js = write_export(&writer_summary, p, s, stem);
        char *pp = write_export(&writer_pprof, p, s, stem);
        expect_speedscope(p, s, type ? "nanoseconds" : "none", exp_ss);
        expect_cpuprofile(p, s, type ? 1.0 : (double)p->period, exp_cp);
        expect_pprof(p, exp_pp);

        snprintf(cmd, sizeof cmd, "%s %s/speedscope_schema.mjs %s", node, consumers, ss);
        CHECKF(run(cmd) == 0, "speedscope schema");
        snprintf(cmd, sizeof cmd, "%s %s/speedscope_probe.mjs %s %s/%s %s %s/%s", node, consumers,
                 ss, dir, exp_ss, cp, dir, exp_cp);
        CHECKF(run(cmd) == 0, "speedscope import");
        snprintf(cmd, sizeof cmd, "python3 %s/pprof_raw_check.py %s %s/%s", consumers, pp, dir,
                 exp_pp);
        CHECKF(run(cmd) == 0, "go tool pprof");
        check_folded(p, s, fo);
        check_summary_json(p, s, js);
        if (c == 0) check_cli_roundtrip(p, pp, exp_pp, node, consumers);
        free(ss), free(cp), free(fo), free(js), free(pp);
        summary_free(s);
        profile_free(p);
    }
}

static void check_heap(const char *consumers)
{
    struct profile *p = build(PROFILE_HEAP, 0);
    const char *why = NULL;
    struct summary *s = summary_build(p, p->default_type, &why);
    CHECKF(s != NULL, "summary_build: %s", why ? why : "?");
    if (!s) return;
    char *pp = write_export(&writer_pprof, p, s, "heap");
    expect_pprof(p, "heap.expect-pprof.json");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "python3 %s/pprof_raw_check.py %s %s/heap.expect-pprof.json",
             consumers, pp, dir);
    CHECKF(run(cmd) == 0, "go tool pprof (heap)");
    /* In-use bytes as a speedscope flame graph, in bytes. */
    char *ss = write_export(&writer_speedscope, p, s, "heap");
    expect_speedscope(p, s, "bytes", "heap.expect-speedscope.json");
    snprintf(cmd, sizeof cmd,
             "node %s/speedscope_schema.mjs %s && node %s/speedscope_probe.mjs %s "
             "%s/heap.expect-speedscope.json",
             consumers, ss, consumers, ss, dir);
    CHECKF(run(cmd) == 0, "speedscope (heap)");
    free(ss);
    /* A heap profile has no time: the V8 format refuses it, and leaves no file. */
    char *cp = path_of("heap.cpuprofile");
    CHECK(writer_write_file(&writer_cpuprofile, p, s, cp) == -EINVAL);
    CHECK(access(cp, F_OK) != 0);
    free(cp), free(pp);
    summary_free(s);
    profile_free(p);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/kestrel-exports-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    const char *consumers = "tests/consumers";
    char probe[256];
    snprintf(probe, sizeof probe, "%s/node_modules/speedscope/package.json", consumers);
    CHECKF(access(probe, R_OK) == 0, "%s missing: run scripts/deps.sh (npm ci)", probe);
    check_cpu("node", consumers);
    check_heap(consumers);
    if (!check_failures) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        run(cmd);
    } else {
        fprintf(stderr, "outputs kept in %s\n", dir);
    }
    return check_exit();
}
