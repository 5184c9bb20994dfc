/* The readers: the seed's minimal raw JSON, the full one with every optional field,
 * pprof (plain and gzip, symbolized and not), and bad input of every kind giving a
 * reason instead of a profile. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "analysis/readers/readers.h"
#include "check.h"
#include "common/pbwire.h"

static char why[256];

static struct profile *raw(const char *json)
{
    why[0] = 0;
    return read_raw_json(json, strlen(json), why, sizeof why);
}

static const char minimal[] =
    "{\"version\":1, \"pid\":4242, \"exe\":\"/path/bin\", \"rate_hz\":997, "
    "\"platform\":\"linux-x86_64\", \"start_unix_ns\":1000, \"end_unix_ns\":2000000000, "
    "\"images\":[{\"path\":\"/path/bin\",\"base\":4194304,\"slide\":0,\"text\":4198400,"
    "\"text_size\":8192,\"arch\":\"x86_64\"}],"
    "\"threads\":[{\"fiber\":0,\"label\":\"main\"}],"
    "\"stacks\":[[4198500,4198700],[4198600]],"
    "\"samples\":[[12345,0,0,0],[22345,0,1,1],[32345,0,0,0]],"
    "\"dropped\":3}";

static void test_minimal(void)
{
    struct profile *p = raw(minimal);
    CHECKF(p != NULL, "%s", why);
    if (!p) return;
    CHECK(p->kind == PROFILE_CPU && p->n_sample_types == 1);
    CHECK(!strcmp(p->sample_types[0].type, "samples") && !strcmp(p->sample_types[0].unit, "count"));
    CHECK(p->meta.pid == 4242 && !strcmp(p->meta.exe, "/path/bin") && p->meta.rate_hz == 997);
    CHECK(p->meta.dropped == 3 && p->meta.engine == NULL && p->meta.requested_hz == 0);
    CHECK(profile_wall_ns(p) == 2000000000 - 1000);
    CHECK(p->period == 1003009); /* 1e9 / 997 */
    CHECK(p->n_images == 1 && p->images[0].is_main && p->images[0].build_id == NULL);
    CHECK(p->n_threads == 1 && !strcmp(p->threads[0].label, "main") && p->threads[0].tid == -1);
    CHECK(p->n_stacks == 2 && p->stacks[0].depth == 2 && p->n_frames == 3);
    /* Leaf first, as written; unresolved frames are hex, in the image's text. */
    const struct profile_frame *leaf = &p->frames[p->stacks[0].frames[0]];
    CHECK(leaf->address == 4198500 && !strcmp(leaf->name, "0x401064") && leaf->image == 0);
    CHECK(!leaf->symbolized);
    CHECK(p->n_samples == 3 && p->samples[1].state == PROFILE_WAITING && p->samples[1].stack == 1 &&
          p->samples[2].time_ns == 32345);
    CHECK(profile_values(p, 0)[0] == 1);
    profile_free(p);
}

static void test_full(void)
{
    struct profile *p =
        raw("{\"version\":1, \"pid\":7, \"exe\":\"/b\", \"rate_hz\":990.5, \"requested_hz\":997,"
            "\"engine\":\"perf\", \"start_unix_ns\":5, \"end_unix_ns\":10,"
            "\"walks_cut_short\":4, \"tables\":{\"stacks\":[2,65536],\"samples\":{\"used\":3,"
            "\"limit\":9,\"past\":1}}, \"past_limits\":{\"stacks\":7,\"other_stacks_samples\":5},"
            "\"engine_fallback\":\"perf_event_open: EACCES\", \"other_stack\":2,"
            "\"images\":[{\"path\":\"/lib/c.so\",\"base\":0,\"slide\":0,\"text\":0,\"text_size\":0,"
            "\"arch\":\"\"},{\"path\":\"/b\",\"base\":4096,\"slide\":4096,\"text\":8192,"
            "\"text_size\":4096,\"arch\":\"x86_64\",\"build_id\":\"0a1b2c\"}],"
            "\"threads\":[{\"fiber\":0,\"label\":\"main\",\"tid\":7,\"name\":\"b\"},"
            "{\"fiber\":3,\"label\":\"worker\",\"tid\":8,\"name\":\"w\\u00e9\"}],"
            "\"stacks\":[[8200,8300],[8200,8300],[]],"
            "\"samples\":[[1,0,0,0,900],[2,1,1,1],[3,1,0,0,1100]], \"dropped\":0}");
    CHECKF(p != NULL, "%s", why);
    if (!p) return;
    CHECK(p->n_sample_types == 2 && !strcmp(p->sample_types[1].type, "cpu") &&
          !strcmp(p->sample_types[1].unit, "nanoseconds"));
    CHECK(p->default_type == 0);
    CHECK(!strcmp(p->meta.engine, "perf") && p->meta.requested_hz == 997 &&
          p->meta.rate_hz == 990.5 && p->meta.truncated == 4);
    CHECK(p->meta.n_tables == 2 && !strcmp(p->meta.tables[0].name, "stacks") &&
          p->meta.tables[0].used == 2 && p->meta.tables[0].limit == 65536 &&
          p->meta.tables[0].past == 7 && p->meta.tables[1].past == 1);
    CHECK(p->meta.n_comments == 2 &&
          !strcmp(p->meta.comments[0], "engine: perf_event_open: EACCES") &&
          !strcmp(p->meta.comments[1], "past the limits: other_stacks_samples=5"));
    /* The runtime's bucket past its stack limit is an empty stack: one frame says so. */
    CHECK(p->n_stacks == 2 && p->stacks[1].depth == 1 &&
          !strcmp(p->frames[p->stacks[1].frames[0]].name, "(other stacks)"));
    CHECK(p->images[1].is_main && !p->images[0].is_main &&
          !strcmp(p->images[1].build_id, "0a1b2c"));
    CHECK(p->images[0].arch == NULL && !strcmp(p->images[1].arch, "x86_64"));
    CHECK(p->threads[1].fiber == 3 && p->threads[1].tid == 8 &&
          !strcmp(p->threads[1].name, "w\xc3\xa9"));
    /* Two equal input stacks are one stack in the model. */
    CHECK(p->samples[1].stack == 0 && p->samples[0].stack == 0);
    CHECK(profile_values(p, 0)[1] == 900 && profile_values(p, 1)[1] == 0 &&
          profile_values(p, 2)[1] == 1100);
    /* 8200 is in /b's text; the range-less image does not claim it. */
    CHECK(p->frames[0].image == 1);
    profile_free(p);
}

static void bad_raw(const char *json, const char *expect)
{
    struct profile *p = raw(json);
    CHECKF(p == NULL && strstr(why, expect), "input %.60s: got \"%s\", want \"%s\"", json, why,
           expect);
    profile_free(p);
}

static void test_bad_raw(void)
{
    bad_raw(
        "{\"version\":1, \"threads\":[{\"label\":\"m\"}], \"stacks\":[[1]], \"samples\":[[0,0,0,0]",
        "not valid JSON");
    bad_raw("[1,2]", "not an object");
    bad_raw("{\"version\":2, \"threads\":[], \"stacks\":[], \"samples\":[]}", "version");
    bad_raw("{\"version\":1, \"threads\":[], \"samples\":[]}", "no \"stacks\"");
    bad_raw("{\"version\":1, \"threads\":[{}], \"stacks\":[[1]], \"samples\":[[0,1,0,0]]}",
            "thread 1 out of range");
    bad_raw("{\"version\":1, \"threads\":[{}], \"stacks\":[[1]], \"samples\":[[0,0,5,0]]}",
            "stack 5 out of range");
    bad_raw("{\"version\":1, \"threads\":[{}], \"stacks\":[[1]], \"samples\":[[0,0,0,2]]}",
            "unknown state");
    bad_raw("{\"version\":1, \"threads\":[{}], \"stacks\":[[1]], \"samples\":[[0,0,0]]}", "4 or 5");
    bad_raw("{\"version\":1, \"threads\":[{}], \"stacks\":[[-1]], \"samples\":[]}",
            "not an address");
    bad_raw("{\"version\":1, \"threads\":[{}], \"stacks\":[[1]], "
            "\"samples\":[[0,0,0,0,99999999999999999999]]}",
            "not valid JSON");
    bad_raw(
        "{\"version\":1, \"threads\":[{\"label\":\"\xff\xfe\"}], \"stacks\":[], \"samples\":[]}",
        "not valid JSON");
    bad_raw("{\"version\":1, \"threads\":[{\"label\":3}], \"stacks\":[], \"samples\":[]}",
            "not a string");
    bad_raw("{\"version\":1, \"images\":[{\"build_id\":\"XYZ\"}], \"threads\":[], \"stacks\":[], "
            "\"samples\":[]}",
            "build_id");
    bad_raw("{\"version\":1, \"version\":1}", "not valid JSON");
    /* Deep stacks: one past the limit is refused, at the limit accepted. */
    for (int depth = PROFILE_MAX_DEPTH; depth <= PROFILE_MAX_DEPTH + 1; depth++) {
        size_t cap = (size_t)depth * 8 + 200, n = 0;
        char *j = malloc(cap);
        n += (size_t)snprintf(j, cap, "{\"version\":1,\"threads\":[{}],\"stacks\":[[");
        for (int k = 0; k < depth; k++)
            n += (size_t)snprintf(j + n, cap - n, "%s%d", k ? "," : "", k + 1);
        snprintf(j + n, cap - n, "]],\"samples\":[[0,0,0,0]]}");
        struct profile *p = raw(j);
        if (depth == PROFILE_MAX_DEPTH)
            CHECKF(p && p->stacks[0].depth == (uint32_t)depth, "%s", why);
        else
            CHECK(!p && strstr(why, "frames deep"));
        profile_free(p);
        free(j);
    }
}

/* ------------------------------------------------------------------ pprof */

struct strtab {
    const char *s[64];
    int n;
};

static uint64_t sid(struct strtab *t, const char *s)
{
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->s[i], s)) return (uint64_t)i;
    t->s[t->n] = s;
    return (uint64_t)t->n++;
}

static void value_type(struct pb_buf *b, struct strtab *t, int field, const char *ty,
                       const char *un)
{
    size_t m = pb_begin(b, (uint32_t)field);
    pb_put_uint(b, 1, sid(t, ty));
    pb_put_uint(b, 2, sid(t, un));
    pb_end(b, m);
}

/* A heap profile like the runtime writes (bare addresses), plus one symbolized
 * location with an inlined call, as another tool would write. */
static struct pb_buf heap_pprof(int bad_location)
{
    struct pb_buf b = {0};
    struct strtab t = {.n = 0};
    sid(&t, "");
    value_type(&b, &t, 1, "alloc_objects", "count");
    value_type(&b, &t, 1, "alloc_space", "bytes");
    value_type(&b, &t, 1, "inuse_objects", "count");
    value_type(&b, &t, 1, "inuse_space", "bytes");
    /* mapping 1: the program */
    size_t m = pb_begin(&b, 3);
    pb_put_uint(&b, 1, 1);
    pb_put_uint(&b, 2, 0x400000);
    pb_put_uint(&b, 3, 0x401000);
    pb_put_uint(&b, 4, 0);
    pb_put_uint(&b, 5, sid(&t, "/bin/prog"));
    pb_put_uint(&b, 6, sid(&t, "abcd"));
    pb_end(&b, m);
    /* function 1 "outer", 2 "inner" */
    for (int f = 1; f <= 2; f++) {
        m = pb_begin(&b, 5);
        pb_put_uint(&b, 1, (uint64_t)f);
        pb_put_uint(&b, 2, sid(&t, f == 1 ? "outer" : "inner"));
        pb_put_uint(&b, 4, sid(&t, "x.c"));
        pb_end(&b, m);
    }
    /* location 10: bare address; location 20: inner inlined into outer */
    m = pb_begin(&b, 4);
    pb_put_uint(&b, 1, 10);
    pb_put_uint(&b, 2, 1);
    pb_put_uint(&b, 3, 0x400123);
    pb_end(&b, m);
    m = pb_begin(&b, 4);
    pb_put_uint(&b, 1, 20);
    pb_put_uint(&b, 2, 1);
    pb_put_uint(&b, 3, 0x400456);
    size_t l = pb_begin(&b, 4);
    pb_put_uint(&b, 1, 2);
    pb_put_int(&b, 2, 7);
    pb_end(&b, l);
    l = pb_begin(&b, 4);
    pb_put_uint(&b, 1, 1);
    pb_put_int(&b, 2, 30);
    pb_end(&b, l);
    pb_end(&b, m);
    /* two samples with thread labels */
    for (int s = 0; s < 2; s++) {
        m = pb_begin(&b, 2);
        uint64_t locs[] = {10, bad_location ? 99 : 20};
        pb_put_packed(&b, 1, locs, 2);
        uint64_t vals[] = {1, 1000u * (s + 1), (uint64_t)s, 1000u * s};
        pb_put_packed(&b, 2, vals, 4);
        l = pb_begin(&b, 3);
        pb_put_uint(&b, 1, sid(&t, "thread"));
        pb_put_uint(&b, 2, sid(&t, s ? "worker" : "main"));
        pb_end(&b, l);
        pb_end(&b, m);
    }
    value_type(&b, &t, 11, "space", "bytes");
    pb_put_uint(&b, 12, 524288);
    pb_put_uint(&b, 13, sid(&t, "stacks=2/65536 strings=9/32768"));
    for (int i = 0; i < t.n; i++)
        pb_put_string(&b, 6, t.s[i]);
    return b;
}

static void test_pprof(void)
{
    struct pb_buf b = heap_pprof(0);
    CHECK(!b.failed);
    for (int gz = 0; gz < 2; gz++) {
        const void *data = b.data;
        size_t len = b.len;
        uLongf zlen = compressBound(b.len) + 32;
        unsigned char *z = malloc(zlen);
        if (gz) {
            /* gzip framing, as pprof files are written */
            z_stream s = {0};
            deflateInit2(&s, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
            s.next_in = b.data;
            s.avail_in = (uInt)b.len;
            s.next_out = z;
            s.avail_out = (uInt)zlen;
            CHECK(deflate(&s, Z_FINISH) == Z_STREAM_END);
            data = z;
            len = s.total_out;
            deflateEnd(&s);
        }
        struct profile *p = read_pprof(data, len, why, sizeof why);
        CHECKF(p != NULL, "%s", why);
        if (p) {
            CHECK(p->kind == PROFILE_HEAP && p->n_sample_types == 4);
            CHECK(!strcmp(p->sample_types[p->default_type].type, "inuse_space"));
            CHECK(p->period == 524288 && !strcmp(p->period_type.type, "space"));
            CHECK(p->n_images == 1 && !strcmp(p->images[0].path, "/bin/prog") &&
                  !strcmp(p->images[0].build_id, "abcd") && p->images[0].text == 0x400000 &&
                  p->images[0].text_size == 0x1000 && !p->images[0].slide_known);
            CHECK(p->n_threads == 2 && !strcmp(p->threads[1].label, "worker"));
            CHECK(p->n_samples == 2 && profile_values(p, 1)[1] == 2000);
            /* leaf first: the bare address, then inner (inlined), then outer */
            const struct profile_stack *st = &p->stacks[p->samples[0].stack];
            CHECK(st->depth == 3);
            const struct profile_frame *f0 = &p->frames[st->frames[0]],
                                       *f1 = &p->frames[st->frames[1]],
                                       *f2 = &p->frames[st->frames[2]];
            CHECK(!f0->symbolized && !strcmp(f0->name, "0x400123") && f0->image == 0);
            CHECK(f1->symbolized && !strcmp(f1->name, "inner") && f1->inlined && f1->line == 7);
            CHECK(!strcmp(f2->name, "outer") && !f2->inlined && f2->line == 30 &&
                  !strcmp(f2->file, "x.c") && f2->address == 0x400456);
            CHECK(p->meta.n_comments == 1 && p->meta.n_tables == 2 &&
                  !strcmp(p->meta.tables[1].name, "strings") && p->meta.tables[1].used == 9);
        }
        profile_free(p);
        /* Every truncation is refused with a reason (or, cut at a field boundary,
         * still a consistent profile). */
        for (size_t cut = 0; cut < len; cut += gz ? 1 : 3) {
            why[0] = 0;
            struct profile *q = read_pprof(data, cut, why, sizeof why);
            if (q) {
                char w2[128];
                CHECK(profile_check(q, w2, sizeof w2) == 0);
            } else {
                CHECK(why[0] != 0);
            }
            profile_free(q);
        }
        free(z);
    }
    pb_buf_free(&b);
    b = heap_pprof(1);
    CHECK(read_pprof(b.data, b.len, why, sizeof why) == NULL && strstr(why, "location 99"));
    pb_buf_free(&b);
    CHECK(read_pprof("garbage!", 8, why, sizeof why) == NULL && why[0]);
    CHECK(read_pprof("\x1f\x8b\x08\x00zz", 6, why, sizeof why) == NULL && strstr(why, "gzip"));
}


/* Strings the runtime wrote as bytes (U+0080..U+00FF standing for 0x80..0xff) and named
 * in its comment come back as the program's bytes; the comment is not kept, an index
 * out of range or 0 is ignored, and a string it does not name stays as written. */
static void test_pprof_bytes(void)
{
    struct pb_buf b = {0};
    struct strtab t = {.n = 0};
    sid(&t, "");
    value_type(&b, &t, 1, "inuse_space", "bytes");
    size_t m = pb_begin(&b, 3);
    pb_put_uint(&b, 1, 1);
    pb_put_uint(&b, 2, 0x400000);
    pb_put_uint(&b, 3, 0x401000);
    pb_put_uint(&b, 5, sid(&t, "/tmp/caf\xc3\xa9 \xc3\xbf/lib.so")); /* caf\xe9 \xff */
    pb_end(&b, m);
    m = pb_begin(&b, 4);
    pb_put_uint(&b, 1, 1);
    pb_put_uint(&b, 2, 1);
    pb_put_uint(&b, 3, 0x400123);
    pb_end(&b, m);
    m = pb_begin(&b, 2);
    uint64_t locs[] = {1}, vals[] = {4096};
    pb_put_packed(&b, 1, locs, 1);
    pb_put_packed(&b, 2, vals, 1);
    size_t l = pb_begin(&b, 3);
    pb_put_uint(&b, 1, sid(&t, "thread"));
    pb_put_uint(&b, 2, sid(&t, "w\xc3\xa9")); /* named below: w\xe9 */
    pb_end(&b, l);
    pb_end(&b, m);
    uint64_t plain = sid(&t, "caf\xc3\xa9"); /* valid UTF-8, not named: stays */
    char c[128];
    snprintf(c, sizeof c, "kestrel: strings written as bytes: %llu %llu 0 999",
             (unsigned long long)sid(&t, "/tmp/caf\xc3\xa9 \xc3\xbf/lib.so"),
             (unsigned long long)sid(&t, "w\xc3\xa9"));
    pb_put_uint(&b, 13, sid(&t, c));
    pb_put_uint(&b, 13, plain);
    for (int i = 0; i < t.n; i++)
        pb_put_string(&b, 6, t.s[i]);
    struct profile *p = read_pprof(b.data, b.len, why, sizeof why);
    CHECKF(p != NULL, "%s", why);
    if (p) {
        CHECKF(p->n_images == 1 && !strcmp(p->images[0].path, "/tmp/caf\xe9 \xff/lib.so"),
               "path %s", p->n_images ? p->images[0].path : "none");
        CHECK(p->n_threads == 1 && !strcmp(p->threads[0].label, "w\xe9"));
        CHECK(p->meta.n_comments == 1 && !strcmp(p->meta.comments[0], "caf\xc3\xa9"));
    }
    profile_free(p);
    pb_buf_free(&b);
}

/* A streamed file (docs/raw-format.md, "Streamed"): chunks joined, images and threads
 * replaced from their _from index, stacks and samples appended with indices across
 * chunks, the last value of a count kept; a file cut inside a chunk read to the chunk
 * before and said; a cut inside the first chunk, or chunks out of order, refused. */
static const char chunk0[] =
    "{\"chunk\":0,\"version\":1,\"pid\":77,\"exe\":\"/bin/x\",\"invoked\":\"/usr/bin/name\","
    "\"cmdline\":[\"x: worker process\"],\"rate_hz\":100,\"start_unix_ns\":1000000000,"
    "\"end_unix_ns\":2000000000,\"images_from\":0,\"threads_from\":0,"
    "\"images\":[{\"path\":\"/bin/x\",\"base\":4194304,\"slide\":0,\"text\":4198400,"
    "\"text_size\":8192,\"arch\":\"x86_64\"}],"
    "\"threads\":[{\"fiber\":0,\"label\":\"main\",\"tid\":77,\"name\":\"early\"}],"
    "\"stacks\":[[4198500]],\"stack_ends\":[1],\"samples\":[[10,0,0,0,5]],\"dropped\":1}\n";
static const char chunk1[] =
    "{\"chunk\":1,\"end_unix_ns\":3000000000,\"images_from\":1,\"threads_from\":1,"
    "\"images\":[],\"threads\":[{\"fiber\":0,\"label\":\"thread\",\"tid\":78}],"
    "\"stacks\":[[4198600]],\"stack_ends\":[1],\"samples\":[[20,1,1,0,5],[30,0,0,1,0]],"
    "\"dropped\":2}\n";
static const char closing[] =
    "{\"chunk\":2,\"closing\":true,\"end_unix_ns\":4000000000,\"images_from\":0,"
    "\"threads_from\":0,\"images\":[{\"path\":\"/bin/x\",\"base\":4194304,\"slide\":0,"
    "\"text\":4198400,\"text_size\":8192,\"arch\":\"x86_64\"}],"
    "\"threads\":[{\"fiber\":0,\"label\":\"main\",\"tid\":77,\"name\":\"late\"},"
    "{\"fiber\":0,\"label\":\"thread\",\"tid\":78}],"
    "\"stacks\":[],\"stack_ends\":[],\"samples\":[[40,1,1,0,5]],\"dropped\":3}\n";

static int has_comment(const struct profile *p, const char *part)
{
    for (size_t i = 0; i < p->meta.n_comments; i++)
        if (strstr(p->meta.comments[i], part)) return 1;
    return 0;
}

static void test_streamed(void)
{
    char doc[4096];
    snprintf(doc, sizeof doc, "%s%s%s", chunk0, chunk1, closing);
    struct profile *p = raw(doc);
    CHECKF(p != NULL, "%s", why);
    if (p) {
        CHECK(p->n_threads == 2 && !strcmp(p->threads[0].name, "late"));
        CHECK(p->n_images == 1 && p->n_samples == 4 && p->meta.dropped == 3);
        CHECK(p->meta.end_unix_ns == 4000000000);
        CHECK(p->samples[3].thread == 1 && p->samples[1].stack == p->samples[3].stack);
        CHECK(!has_comment(p, "ended without"));
        CHECK(p->n_processes == 1 && !strcmp(p->processes[0].name, "name"));
        profile_free(p);
    }
    /* Killed after chunk 1, in the middle of the closing chunk. */
    snprintf(doc, sizeof doc, "%s%s%.*s", chunk0, chunk1, 60, closing);
    p = raw(doc);
    CHECKF(p != NULL, "%s", why);
    if (p) {
        CHECK(p->n_samples == 3 && p->meta.dropped == 2 && p->n_threads == 2);
        CHECK(!strcmp(p->threads[0].name, "early"));
        CHECK(has_comment(p, "pid 77 ended without writing the end of its profile"));
        CHECK(has_comment(p, "its first 2 chunks are read, 2.0 s of its run; the last 60 bytes"));
        profile_free(p);
    }
    /* Cut inside chunk 0: nothing to read. */
    snprintf(doc, sizeof doc, "%.*s", 100, chunk0);
    CHECK(raw(doc) == NULL && strstr(why, "cut inside its first chunk"));
    /* Chunks out of order. */
    snprintf(doc, sizeof doc, "%s%s", chunk0, closing);
    CHECK(raw(doc) == NULL && strstr(why, "chunk 1 is numbered 2"));
    /* A thread's index past the threads given (a sample before its thread). */
    snprintf(doc, sizeof doc, "%s%s", chunk0,
             "{\"chunk\":1,\"closing\":true,\"samples\":[[20,5,0,0]]}");
    CHECK(raw(doc) == NULL && strstr(why, "thread 5 out of range"));
}

int main(void)
{
    test_streamed();
    test_minimal();
    test_full();
    test_bad_raw();
    test_pprof();
    test_pprof_bytes();
    return check_exit();
}
