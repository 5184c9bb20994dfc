/* Escaping of profile text (escape.h): every output is valid JSON / valid UTF-8 that
 * decodes to the input with exactly the ill-formed bytes replaced by U+FFFD. jansson,
 * a strict UTF-8 and JSON parser, is the judge. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model/escape.h"
#include "check.h"

/* escape_json(s) parsed back by jansson. */
static char *roundtrip(const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    escape_json(m, s);
    fclose(m);
    json_error_t err;
    json_t *j = json_loadb(buf, len, JSON_DECODE_ANY, &err);
    CHECKF(j && json_is_string(j), "escape_json output does not parse: %s: %s", buf, err.text);
    CHECKF(!strpbrk(buf, "<>&\n\r\t") || !j, "markup or a raw control character in %s", buf);
    char *out = j ? strdup(json_string_value(j)) : NULL;
    json_decref(j);
    free(buf);
    return out;
}

static void expect(const char *in, const char *want)
{
    char *got = roundtrip(in);
    CHECKF(got && !strcmp(got, want), "escape_json(\"%s\") read back as \"%s\"", in, got);
    free(got);
    char *d = escape_utf8_dup(in, NULL);
    CHECKF(!strcmp(d, want), "escape_utf8_dup(\"%s\") = \"%s\"", in, d);
    free(d);
}

int main(void)
{
    expect("plain", "plain");
    expect("<img src=x onerror=alert(1)>", "<img src=x onerror=alert(1)>");
    expect("q\"b\\s/", "q\"b\\s/");
    expect("\x01\x1f\x7f\n\r\t\b\f", "\x01\x1f\x7f\n\r\t\b\f");
    expect("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    expect("\xe2\x80\xa8\xe2\x80\xa9", "\xe2\x80\xa8\xe2\x80\xa9");
    expect("\xff", "\uFFFD");
    expect("\xc0\xaf", "\uFFFD\uFFFD");                     /* overlong '/' */
    expect("\xe0\x80\xaf", "\uFFFD\uFFFD\uFFFD");           /* overlong, 3 bytes */
    expect("\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD");           /* a UTF-16 surrogate */
    expect("\xf4\x90\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD"); /* past U+10FFFF */
    expect("a\xe2\x82", "a\uFFFD\uFFFD");                   /* truncated at the end */
    expect("\xe2\x82x", "\uFFFD\uFFFDx");
    expect(NULL, "");

    char *f = escape_utf8_dup("a;b\nc\x01\xff", ";");
    CHECKF(!strcmp(f, "a\uFFFDb\uFFFDc\uFFFD\uFFFD"), "unsafe bytes: %s", f);
    free(f);

    /* Random bytes: every output parses, and matches escape_utf8_dup's reading. */
    srand(7);
    for (int k = 0; k < 20000; k++) {
        unsigned char s[24];
        size_t n = (size_t)(rand() % 23);
        for (size_t i = 0; i < n; i++) {
            int r = rand() % 4;
            s[i] = (unsigned char)(r == 0   ? rand() % 0x20 + 1
                                   : r == 1 ? rand() % 0x80 + 0x80
                                   : r == 2 ? "\xc3\xe2\xf0\xed\xf4"[rand() % 5]
                                            : rand() % 255 + 1);
        }
        s[n] = 0;
        char *got = roundtrip((char *)s);
        char *d = escape_utf8_dup((char *)s, NULL);
        if (got && strcmp(got, d)) {
            CHECKF(0, "random input %d: JSON and UTF-8 readings differ", k);
        }
        free(got), free(d);
        if (check_failures > 10) break;
    }
    return check_exit();
}
