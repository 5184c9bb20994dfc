/* The HTML writer: the page around the data is the built-in page unchanged, no
 * profile string can close the script element or start markup, frames are merged by
 * (name, file, line), stacks come out root first, and the sources of the hottest
 * files are embedded or said missing with the reason. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/aggregate/summary.h"
#include "analysis/writers/writers.h"
#include "check.h"

extern const unsigned char viewer_page[];
extern const size_t viewer_page_len;

static size_t count(const char *hay, size_t n, const char *needle)
{
    size_t c = 0, k = strlen(needle);
    for (const char *p = hay; (p = memmem(p, n - (size_t)(p - hay), needle, k)); p += k)
        c++;
    return c;
}

#define EVIL "</script><script>alert(1)</script>\xe2\x80\xa8<!--"

int main(void)
{
    char src[] = "/tmp/kestrel-html-src-XXXXXX";
    int fd = mkstemp(src);
    CHECK(fd >= 0);
    const char text[] = "int x;\n/* </SCRIPT> alert(2) \xe2\x80\xa9 */\nint y;\nint z;\nint w;\n";
    CHECK(write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1));
    close(fd);

    struct profile *p = profile_new(PROFILE_CPU);
    profile_add_sample_type(p, "samples", "count");
    profile_add_thread(p, "main", 0, 7, "prog");
    /* Files as the symbolizer leaves them when debug info names them (from_debug):
     * only such a file is opened (tests/viewer/test_view_cli.sh has the others). */
    struct profile_frame f = {
        .name = "main", .file = src, .line = 3, .image = -1, .address = 0x10, .from_debug = 1};
    uint32_t fmain = (uint32_t)profile_intern_frame(p, &f);
    f = (struct profile_frame){
        .name = EVIL, .file = src, .line = 5, .image = -1, .address = 0x20, .from_debug = 1};
    uint32_t fevil = (uint32_t)profile_intern_frame(p, &f);
    f.address = 0x21; /* another address of the same line: one frame for the viewer */
    uint32_t fevil2 = (uint32_t)profile_intern_frame(p, &f);
    f = (struct profile_frame){.name = "gone", .file = "/nonexistent/kestrel/gone.c", .line = 2,
                               .image = -1, .address = 0x30, .from_debug = 1};
    uint32_t fgone = (uint32_t)profile_intern_frame(p, &f);
    CHECK(fevil != fevil2);
    uint32_t s0[] = {fevil, fmain}, s1[] = {fevil2, fmain}, s2[] = {fgone, fmain};
    uint32_t st0 = (uint32_t)profile_intern_stack(p, s0, 2);
    uint32_t st1 = (uint32_t)profile_intern_stack(p, s1, 2);
    uint32_t st2 = (uint32_t)profile_intern_stack(p, s2, 2);
    int64_t one = 1;
    for (int i = 0; i < 6; i++)
        profile_add_sample(p, 0, i < 3 ? st0 : i < 5 ? st1 : st2, i % 2, 1000 * i, &one);
    const char *why;
    struct summary *s = summary_build(p, 0, &why);
    CHECK(s != NULL);

    const struct writer *w = writers_find("html");
    CHECK(w && !strcmp(w->suffix, ".html"));
    char *out = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&out, &len);
    CHECK(w->write(p, s, mem) == 0);
    fclose(mem);

    /* The page is the built-in one with the placeholder replaced, and nothing else. */
    const char *page = (const char *)viewer_page;
    const char *at = memmem(page, viewer_page_len, "@KESTREL_DATA@", 14);
    CHECK(at != NULL);
    size_t head = (size_t)(at - page), tail = viewer_page_len - head - 14;
    CHECK(len > head + tail);
    CHECK(!memcmp(out, page, head));
    CHECK(!memcmp(out + len - tail, at + 14, tail));
    const char *data = out + head;
    size_t n = len - head - tail;

    /* No profile string reaches the page as markup or as a line terminator of JS. */
    CHECK(!memchr(data, '<', n) && !memchr(data, '>', n) && !memchr(data, '&', n));
    CHECK(count(data, n, "\xe2\x80\xa8") == 0 && count(data, n, "\xe2\x80\xa9") == 0);
    CHECK(count(out, len, "</script") == count(page, viewer_page_len, "</script"));
    CHECK(count(data, n, "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)") == 1);
    CHECK(count(data, n, "\\u2028") == 1 && count(data, n, "\\u2029") == 1);

    json_error_t err;
    json_t *d = json_loadb(data, n, 0, &err);
    CHECKF(d != NULL, "%s at %d", err.text, err.position);
    if (d) {
        CHECK(json_integer_value(json_object_get(d, "version")) == 1);
        CHECK(!strcmp(json_string_value(json_object_get(d, "kind")), "cpu"));
        /* Frames sorted by (file, name, line) and merged: gone, EVIL, main. */
        json_t *frames = json_object_get(d, "frames");
        CHECK(json_array_size(frames) == 3);
        CHECK(!strcmp(json_string_value(json_array_get(json_array_get(frames, 1), 0)), EVIL));
        CHECK(json_integer_value(json_array_get(json_array_get(frames, 1), 2)) == 5);
        /* Root first. */
        char *stacks = json_dumps(json_object_get(d, "stacks"), JSON_COMPACT);
        CHECKF(!strcmp(stacks, "[[2,1],[2,1],[2,0]]"), "%s", stacks);
        free(stacks);
        json_t *sm = json_object_get(d, "samples");
        char *cols = json_dumps(sm, JSON_COMPACT | JSON_SORT_KEYS);
        CHECKF(!strcmp(cols, "{\"stack\":[0,0,0,1,1,2],\"state\":[0,1,0,1,0,1],\"thread\":[0,0,0,0,0,0],"
                             "\"time\":[0,1000,2000,3000,4000,5000],\"values\":[[1,1,1,1,1,1]]}"),
               "%s", cols);
        free(cols);
        json_t *th = json_array_get(json_object_get(d, "threads"), 0);
        CHECK(json_integer_value(json_object_get(th, "tid")) == 7);
        /* How whole the stacks are: this model records nothing of it, and the banner's
         * text says so, as the report does. */
        json_t *sk = json_object_get(json_object_get(d, "meta"), "stacks");
        CHECK(json_is_false(json_object_get(sk, "known")));
        CHECKF(json_is_string(json_object_get(sk, "text")) &&
                   strstr(json_string_value(json_object_get(sk, "text")),
                          "how whole the stacks are, this profile does not record"),
               "%s", json_string_value(json_object_get(sk, "text")));
        /* The readable file is embedded as it is; the missing one says why. */
        json_t *sources = json_object_get(d, "sources");
        CHECK(json_array_size(sources) == 2);
        int embedded = 0, missing = 0;
        for (size_t i = 0; i < json_array_size(sources); i++) {
            json_t *e = json_array_get(sources, i);
            const char *file = json_string_value(json_object_get(e, "file"));
            if (!strcmp(file, src))
                embedded += !strcmp(json_string_value(json_object_get(e, "text")), text);
            else
                missing += !strcmp(json_string_value(json_object_get(e, "missing")),
                                   "cannot open /nonexistent/kestrel/gone.c: No such file or "
                                   "directory");
        }
        CHECK(embedded == 1 && missing == 1);
        json_decref(d);
    }
    free(out);
    summary_free(s);
    profile_free(p);
    unlink(src);
    return check_exit();
}
