/* utf8.h — whether bytes are well-formed UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF), for the runtime's pprof encoders, which write
 * paths and thread names: whatever bytes the program used. libc only, no state. */
#ifndef KESTREL_UTF8_H
#define KESTREL_UTF8_H
#include <stddef.h>

/* Length of the well-formed sequence at s (at most n bytes), 0 if there is none. */
static inline size_t utf8_seq_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xbf;
    size_t len;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0) lo = 0xa0; /* overlong */
        if (c == 0xed) hi = 0x9f; /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0) lo = 0x90; /* overlong */
        if (c == 0xf4) hi = 0x8f; /* past U+10FFFF */
    } else
        return 0;
    if (len > n || s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < len; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    return len;
}

static inline int utf8_valid(const char *p, size_t n)
{
    const unsigned char *s = (const unsigned char *)p;
    for (size_t i = 0, k; i < n; i += k)
        if (!(k = utf8_seq_len(s + i, n - i))) return 0;
    return 1;
}
#endif
