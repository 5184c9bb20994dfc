/* Escaping of profile text for the writers (escape.h). */
#include "analysis/model/escape.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

size_t escape_utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80) return 1;
    size_t len;
    uint32_t min, cp;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2, min = 0x80, cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3, min = 0x800, cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, min = 0x10000, cp = c & 0x07;
    } else {
        return 0; /* a continuation byte, or a lead byte no valid sequence has */
    }
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return len;
}

void escape_json(FILE *out, const char *str)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    size_t n = strlen((const char *)s);
    putc('"', out);
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t len = escape_utf8_seq(s + i, n - i);
        if (!len) {
            fputs(replacement, out);
            i++;
            continue;
        }
        if (len == 3 && c == 0xe2 && s[i + 1] == 0x80 && (s[i + 2] == 0xa8 || s[i + 2] == 0xa9)) {
            fprintf(out, "\\u%04x", s[i + 2] == 0xa8 ? 0x2028 : 0x2029);
        } else if (len > 1) {
            fwrite(s + i, 1, len, out);
        } else if (c == '"' || c == '\\') {
            putc('\\', out), putc((int)c, out);
        } else if (c == '\n') {
            fputs("\\n", out);
        } else if (c == '\t') {
            fputs("\\t", out);
        } else if (c == '\r') {
            fputs("\\r", out);
        } else if (c < 0x20 || c == 0x7f || c == '<' || c == '>' || c == '&') {
            fprintf(out, "\\u%04x", c);
        } else {
            putc((int)c, out);
        }
        i += len;
    }
    putc('"', out);
}

char *escape_utf8_dup(const char *str, const char *unsafe)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    size_t n = strlen((const char *)s);
    char *d = malloc(n * 3 + 1); /* each byte becomes at most U+FFFD's three */
    if (!d) return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t len = escape_utf8_seq(s + i, n - i);
        int bad =
            !len || (unsafe && len == 1 && (s[i] < 0x20 || s[i] == 0x7f || strchr(unsafe, s[i])));
        if (bad) {
            memcpy(d + o, replacement, 3), o += 3, i++;
        } else {
            memcpy(d + o, s + i, len), o += len, i += len;
        }
    }
    d[o] = 0;
    return d;
}
