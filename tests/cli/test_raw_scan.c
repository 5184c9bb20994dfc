/* The raw reader's fast path (raw_scan.h): it finds the two big arrays in any valid
 * layout, reads them as jansson would, and stands aside for everything else. Every
 * document here is read twice: as it is, and with an escaped top-level key added,
 * which the fast path never takes (jansson reads the whole document). Both readings
 * must give the same profile, or the same error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/readers/raw_scan.h"
#include "analysis/readers/readers.h"
#include "check.h"

/* doc with `"\u007a\u007a":0,` ("zz") after its first {, a key only jansson can compare. */
static char *slow_variant(const char *doc)
{
    const char *brace = strchr(doc, '{');
    if (!brace) return strdup(doc);
    size_t at = (size_t)(brace - doc) + 1, len = strlen(doc);
    char *out = malloc(len + 24);
    memcpy(out, doc, at);
    strcpy(out + at, "\"\\u007a\\u007a\":0,");
    strcat(out, doc + at);
    return out;
}

/* The profile as text: every sample's thread, state, time, values and stack of
 * addresses. */
static char *dump(const struct profile *p)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fprintf(f, "types %zu threads %zu stacks %zu frames %zu\n", p->n_sample_types, p->n_threads,
            p->n_stacks, p->n_frames);
    for (size_t i = 0; i < p->n_samples; i++) {
        const struct profile_sample *s = &p->samples[i];
        fprintf(f, "%u %u %lld", s->thread, s->state, (long long)s->time_ns);
        for (size_t k = 0; k < p->n_sample_types; k++)
            fprintf(f, " v%lld", (long long)profile_values(p, i)[k]);
        const struct profile_stack *st = &p->stacks[s->stack];
        for (uint32_t k = 0; k < st->depth; k++)
            fprintf(f, " %s", p->frames[st->frames[k]].name);
        fputc('\n', f);
    }
    fclose(f);
    return buf;
}

/* Reads doc both ways; expect_ok says whether it is a valid profile. Returns the
 * error message of the plain reading (static), "" when it read. */
static const char *both(const char *doc, int expect_ok)
{
    static char why[256];
    char why_slow[256] = "";
    why[0] = 0;
    char *slow = slow_variant(doc);
    struct profile *a = read_raw_json(doc, strlen(doc), why, sizeof why);
    struct profile *b = read_raw_json(slow, strlen(slow), why_slow, sizeof why_slow);
    CHECKF((a != NULL) == expect_ok, "%s: %s", doc, why);
    CHECKF((b != NULL) == expect_ok, "%s (jansson): %s", doc, why_slow);
    if (a && b) {
        char *da = dump(a), *db = dump(b);
        CHECKF(!strcmp(da, db), "%s:\n%s\nvs jansson's\n%s", doc, da, db);
        free(da), free(db);
    } else if (!a && !b && strncmp(why, "not valid JSON", 14)) {
        /* A syntax error's column moved with the added key; any other message is
         * the same. */
        CHECKF(!strcmp(why, why_slow), "%s: \"%s\" vs jansson's \"%s\"", doc, why, why_slow);
    }
    profile_free(a);
    profile_free(b);
    free(slow);
    return why;
}

#define HEAD                                                                                       \
    "{\"version\":1,\"images\":[],\"threads\":[{\"fiber\":0,\"label\":\"main\"},{\"label\":"       \
    "\"w\"}],"

static void test_layouts(void)
{
    /* Whitespace everywhere, samples before stacks, a 5th column in a later row only,
     * -0, the largest int64, an empty stack, unknown keys holding brackets, quotes
     * and the two names inside strings and nested objects. */
    both(" {\n\t\"version\" : 1 ,\"samples\" : [ [ 1 , 0 , 1 , 0 ] "
         ",\r\n[2,1,0,1,9223372036854775807],"
         "[-0,0,2,0]] , \"x\":{\"samples\":[[\"]\"]],\"s\":\"\\\"stacks\\\"[\"},"
         "\"threads\":[{\"label\":\"a\"},{\"label\":\"b\"}], \"stacks\" : [ [ 4096 , 8192 ] , "
         "[ ] , [1]] , \"images\":[] } \n",
         1);
    both(HEAD "\"stacks\":[],\"samples\":[]}", 1);
    both(HEAD "\"stacks\":[[1,2,3]],\"samples\":[[5,1,0,1]]}", 1);
}

static void test_errors(void)
{
    /* Semantic errors: the same message from both readings. */
    const char *m = both(HEAD "\"stacks\":[[1]],\"samples\":[[5,2,0,0]]}", 0);
    CHECKF(strstr(m, "thread 2 out of range"), "%s", m);
    m = both(HEAD "\"stacks\":[[1]],\"samples\":[[5,0,1,0]]}", 0);
    CHECKF(strstr(m, "stack 1 out of range"), "%s", m);
    m = both(HEAD "\"stacks\":[[1,-5]],\"samples\":[[5,0,0,0]]}", 0);
    CHECKF(strstr(m, "stack 0: frame 1 is not an address"), "%s", m);
    m = both(HEAD "\"stacks\":[[1]],\"samples\":[[5,0,0]]}", 0);
    CHECKF(strstr(m, "sample 0 is not a row of 4 or 5 integers"), "%s", m);
    m = both(HEAD "\"stacks\":[[1]],\"samples\":[[5,0,0,0,1,2]]}", 0);
    CHECKF(strstr(m, "not a row of 4 or 5"), "%s", m);
    m = both(HEAD "\"stacks\":[[1]],\"samples\":[[5,0,0,3]]}", 0);
    CHECKF(strstr(m, "unknown state 3"), "%s", m);
    m = both(HEAD "\"stacks\":[[1]],\"samples\":[[5,0,0,0,-1]]}", 0);
    CHECKF(strstr(m, "negative CPU time"), "%s", m);
    /* What the fast path leaves to jansson: reals, strings, nesting, too big,
     * leading zeros, a key twice, trailing bytes, a cut document. */
    m = both(HEAD "\"stacks\":[[1.5]],\"samples\":[[5,0,0,0]]}", 0);
    CHECKF(strstr(m, "frame 0 is not an address"), "%s", m);
    m = both(HEAD "\"stacks\":[[1]],\"samples\":[[5,0,0,\"0\"]]}", 0);
    CHECKF(strstr(m, "column 3 is not an integer"), "%s", m);
    m = both(HEAD "\"stacks\":[[1]],\"samples\":[5]}", 0);
    CHECKF(strstr(m, "sample 0 is not a row"), "%s", m);
    m = both(HEAD "\"stacks\":[[[1]]],\"samples\":[]}", 0);
    CHECKF(strstr(m, "frame 0 is not an address"), "%s", m);
    m = both(HEAD "\"stacks\":[[1]],\"samples\":[[5,0,0,0,1e3]]}", 0);
    CHECKF(strstr(m, "column 4 is not an integer"), "%s", m);
    m = both(HEAD "\"stacks\":[[99999999999999999999]],\"samples\":[]}", 0);
    CHECKF(strstr(m, "not valid JSON"), "%s", m);
    /* Addresses past int64 (any uint64 is a valid frame, FORMATS.md §1): jansson
     * cannot read them, the fast path does. */
    const char big[] = HEAD "\"stacks\":[[18446744073709551615,9223372036854775808,0]],"
                            "\"samples\":[[5,0,0,0]]}";
    char why_big[256];
    struct profile *pb = read_raw_json(big, strlen(big), why_big, sizeof why_big);
    CHECKF(pb != NULL, "addresses of 2^64-1, 2^63 and 0: %s", why_big);
    if (pb) {
        const struct profile_stack *st = &pb->stacks[pb->samples[0].stack];
        CHECK(st->depth == 3 && pb->frames[st->frames[0]].address == UINT64_MAX &&
              pb->frames[st->frames[1]].address == 1ull << 63 &&
              pb->frames[st->frames[2]].address == 0);
        profile_free(pb);
    }
    m = both(HEAD "\"stacks\":[[01]],\"samples\":[]}", 0);
    CHECKF(strstr(m, "not valid JSON"), "%s", m);
    m = both(HEAD "\"stacks\":[[1]],\"samples\":[],\"samples\":[]}", 0);
    CHECKF(strstr(m, "not valid JSON") && strstr(m, "duplicate"), "%s", m);
    m = both(HEAD "\"stacks\":[[1]],\"samples\":[]} x", 0);
    CHECKF(strstr(m, "not valid JSON"), "%s", m);
    m = both(HEAD "\"stacks\":[[1]],\"samples\":[[1,0,0", 0);
    CHECKF(strstr(m, "not valid JSON"), "%s", m);
    m = both(HEAD "\"stacks\":[[1],],\"samples\":[]}", 0);
    CHECKF(strstr(m, "not valid JSON"), "%s", m);
    m = both(HEAD "\"stacks\":[[1]],\"samples\":[],\"bad\":tru}", 0);
    CHECKF(strstr(m, "not valid JSON"), "%s", m);
    m = both(HEAD "\"stacks\":{},\"samples\":[]}", 0);
    CHECKF(strstr(m, "\"stacks\" is not an array"), "%s", m);
}

/* Every u64 is a frame, whichever way the document is read: 2^63, 2^64-1 and 0 (the
 * values a frame pointer register holding data gives), next to a negative frame and a
 * value past 2^64, which are not frames. */
static void test_u64_frames(void)
{
    both(HEAD "\"stacks\":[[9223372036854775808,18446744073709551615,0],[18404347485415029767]],"
              "\"samples\":[[5,0,0,0],[6,1,1,0,9223372036854775807]]}",
         1);
    static char why[256];
    const char *doc = HEAD "\"stacks\":[[4096,9223372036854775808,18446744073709551615,0]],"
                           "\"samples\":[[5,0,0,0]]}";
    for (int slow = 0; slow < 2; slow++) {
        char *d = slow ? slow_variant(doc) : strdup(doc);
        struct profile *p = read_raw_json(d, strlen(d), why, sizeof why);
        CHECKF(p, "%s: %s", slow ? "jansson" : "fast", why);
        if (p) {
            const struct profile_stack *st = &p->stacks[p->samples[0].stack];
            CHECK(st->depth == 4);
            CHECK(st->depth == 4 && p->frames[st->frames[1]].address == 1ull << 63 &&
                  p->frames[st->frames[2]].address == UINT64_MAX &&
                  p->frames[st->frames[3]].address == 0);
            CHECK(st->depth == 4 && !strcmp(p->frames[st->frames[2]].name, "0xffffffffffffffff") &&
                  p->frames[st->frames[2]].image == -1);
        }
        profile_free(p);
        free(d);
    }
    /* A big value written where a big one was rewritten and a negative one: the
     * negative one is still not an address. */
    const char *m = both(HEAD "\"stacks\":[[9223372036854775808,-5]],\"samples\":[]}", 0);
    CHECKF(strstr(m, "stack 0: frame 1 is not an address"), "%s", m);
    m = both(HEAD "\"stacks\":[[18446744073709551616]],\"samples\":[]}", 0);
    CHECKF(strstr(m, "not valid JSON"), "%s", m);
    m = both(HEAD "\"stacks\":[[1]],\"samples\":[[5,0,0,0,9223372036854775808]]}", 0);
    CHECKF(strstr(m, "sample 0: column 4 is past 2^63"), "%s", m);
    /* Elsewhere than in a row, a big integer stays jansson's error. */
    m = both("{\"version\":1,\"pid\":9223372036854775808,\"threads\":[],\"stacks\":[[1]],"
             "\"samples\":[]}",
             0);
    CHECKF(strstr(m, "not valid JSON") && strstr(m, "too big"), "%s", m);
}

/* stack_ends: a stack whose walk was cut sits under the [incomplete stack] frame, and
 * each sample is counted by its stack's end. */
static void test_stack_ends(void)
{
    const char *doc = HEAD "\"stacks\":[[4096,8192],[4096,8192],[4096]],\"stack_ends\":[1,11,99],"
                           "\"samples\":[[5,0,0,0],[6,0,1,0],[7,0,1,0],[8,0,2,0]]}";
    both(doc, 1);
    static char why[256];
    struct profile *p = read_raw_json(doc, strlen(doc), why, sizeof why);
    CHECKF(p, "%s", why);
    if (!p) return;
    CHECK(p->meta.ends_known && p->meta.end_samples[1] == 1 && p->meta.end_samples[11] == 2 &&
          p->meta.end_samples[99 % PROFILE_STACK_ENDS] == 0);
    const struct profile_stack *whole = &p->stacks[p->samples[0].stack];
    const struct profile_stack *cut = &p->stacks[p->samples[1].stack];
    const struct profile_stack *unknown = &p->stacks[p->samples[3].stack];
    CHECK(whole->depth == 2 && cut->depth == 3 && unknown->depth == 1);
    CHECK(cut->depth == 3 && !strcmp(p->frames[cut->frames[2]].name, PROFILE_INCOMPLETE_FRAME));
    profile_free(p);
    const char *m = both(HEAD "\"stacks\":[[1]],\"stack_ends\":[1,2],\"samples\":[]}", 0);
    CHECKF(strstr(m, "\"stack_ends\" has 2 entries for 1 stacks"), "%s", m);
    m = both(HEAD "\"stacks\":[[1]],\"stack_ends\":[-1],\"samples\":[]}", 0);
    CHECKF(strstr(m, "stack_ends: entry 0 is not a walk-end code"), "%s", m);
}

/* The scanner itself: where it finds the arrays, what rows it reads. */
static int collect(void *ctx, size_t i, const int64_t *v, size_t n)
{
    int64_t *sum = ctx;
    *sum += (int64_t)(i * 1000 + n);
    for (size_t k = 0; k < n && k < 2; k++)
        *sum += v[k];
    return 0;
}

static void test_scanner(void)
{
    const char doc[] = "{\"a\":\"stacks\",\"stacks\" :[[1,2,3],[4]],\"samples\":[[5]]}";
    struct raw_span st, sa;
    CHECK(raw_scan_locate(doc, strlen(doc), &st, &sa) == 0);
    CHECK(st.b && !strncmp(st.b, "[[1,2,3],[4]]", (size_t)(st.e - st.b)) && st.e - st.b == 13);
    CHECK(sa.b && sa.e - sa.b == 5 && !strncmp(sa.b, "[[5]]", 5));
    int64_t v[2], sum = 0;
    size_t rows = 0;
    /* Rows 0 (3 long: 1+2 kept) and 1 (1 long: 4). */
    CHECK(raw_scan_rows(st, v, 2, collect, &sum, &rows) == 0 && rows == 2);
    CHECK(sum == (0 + 3 + 1 + 2) + (1000 + 1 + 4));
    size_t rest_len;
    char *rest = raw_scan_rest(doc, strlen(doc), sa, st, &rest_len);
    CHECK(rest && !strcmp(rest, "{\"a\":\"stacks\",\"stacks\" :[],\"samples\":[]}") &&
          rest_len == strlen(rest));
    free(rest);
    const char *no[] = {"[]",
                        "{}",
                        "{\"stacks\":[]}",
                        "{\"st\\u0061cks\":[],\"samples\":[]}",
                        "{\"stacks\":[],\"samples\":[]",
                        "{\"stacks\":[],\"samples\":[]}}"};
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        CHECKF(raw_scan_locate(no[i], strlen(no[i]), &st, &sa) == -1, "%s", no[i]);
    const char *bad_rows[] = {"[1]", "[[1],", "[[1] [2]]", "[[1,]]", "[[+1]]", "[[1]]x", "[[-]]"};
    for (size_t i = 0; i < sizeof bad_rows / sizeof *bad_rows; i++) {
        struct raw_span s = {bad_rows[i], bad_rows[i] + strlen(bad_rows[i])};
        CHECKF(raw_scan_rows(s, v, 2, NULL, NULL, &rows) == -1, "%s", bad_rows[i]);
    }
}

int main(void)
{
    test_layouts();
    test_errors();
    test_scanner();
    test_u64_frames();
    test_stack_ends();
    return check_exit();
}
