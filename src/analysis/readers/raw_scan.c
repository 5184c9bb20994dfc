/* The raw profile reader's fast path (raw_scan.h): a scanner for JSON's structure and
 * for arrays of integer arrays, nothing more. */
#include "analysis/readers/raw_scan.h"

#include <stdlib.h>
#include <string.h>

struct scan {
    const char *p, *end;
};

static void skip_ws(struct scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

/* The next byte after whitespace, or -1 at the end. */
static int peek(struct scan *s)
{
    skip_ws(s);
    return s->p < s->end ? (unsigned char)*s->p : -1;
}

/* Skips the string at s->p (at its opening quote); *escaped is set when it holds a
 * backslash escape. 0, or -1 when it does not end. */
static int skip_string(struct scan *s, int *escaped)
{
    for (s->p++; s->p < s->end;) {
        char c = *s->p++;
        if (c == '"') return 0;
        if (c == '\\') {
            *escaped = 1;
            if (s->p++ >= s->end) return -1;
        }
    }
    return -1;
}

static int is_delimiter(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ':' || c == ']' ||
           c == '}' || c == '[' || c == '{' || c == '"';
}

/* Skips one value of any kind: brackets matched, strings skipped whole, scalars as
 * the bytes up to a delimiter. 0, or -1 when the value does not end. */
static int skip_value(struct scan *s)
{
    int depth = 0, escaped = 0;
    do {
        int c = peek(s);
        if (c < 0) return -1;
        if (c == '"') {
            if (skip_string(s, &escaped)) return -1;
        } else if (c == '[' || c == '{') {
            depth++, s->p++;
        } else if (c == ']' || c == '}') {
            if (!depth--) return -1;
            s->p++;
        } else if (c == ',' || c == ':') {
            if (!depth) return -1;
            s->p++;
        } else {
            while (s->p < s->end && !is_delimiter(*s->p))
                s->p++;
        }
    } while (depth > 0);
    return 0;
}

struct locate {
    struct raw_span *stacks, *samples;
};

static int locate_member(void *ctx, const char *key, size_t key_len, struct raw_span v)
{
    struct locate *l = ctx;
    struct raw_span *which = key_len == 6 && !memcmp(key, "stacks", 6)    ? l->stacks
                             : key_len == 7 && !memcmp(key, "samples", 7) ? l->samples
                                                                          : NULL;
    if (!which) return 0;
    if (which->b) return -1; /* jansson rejects a key given twice */
    *which = v;
    return 0;
}

int raw_scan_locate(const char *buf, size_t len, struct raw_span *stacks, struct raw_span *samples)
{
    *stacks = *samples = (struct raw_span){NULL, NULL};
    struct locate l = {stacks, samples};
    const char *end;
    if (raw_scan_object(buf, buf + len, locate_member, &l, &end)) return -1;
    struct scan s = {end, buf + len};
    skip_ws(&s);
    return s.p == s.end && stacks->b && samples->b ? 0 : -1;
}

/* A JSON integer (no fraction, no exponent, no leading zero) within int64, or (as_u64)
 * a non-negative one within uint64, its bits in *out. */
static int scan_int(struct scan *s, int64_t *out, int as_u64)
{
    const char *p = s->p;
    int neg = p < s->end && *p == '-';
    p += neg;
    if (p >= s->end || *p < '0' || *p > '9') return -1;
    if (*p == '0' && p + 1 < s->end && p[1] >= '0' && p[1] <= '9') return -1;
    uint64_t u = 0;
    for (; p < s->end && *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (u > (UINT64_MAX - d) / 10) return -1;
        u = u * 10 + d;
    }
    if (p < s->end && (*p == '.' || *p == 'e' || *p == 'E')) return -1; /* a real */
    if (as_u64 ? neg && u : u > (uint64_t)INT64_MAX + neg) return -1;
    *out = neg ? (int64_t)(0 - u) : (int64_t)u;
    s->p = p;
    return 0;
}

static int scan_rows(struct raw_span span, int64_t *v, size_t max, raw_row_fn fn,
                     raw_addr_row_fn afn, void *ctx, size_t *rows, int as_u64)
{
    struct scan s = {span.b, span.e};
    *rows = 0;
    if (peek(&s) != '[') return -1;
    s.p++;
    if (peek(&s) == ']') return s.p++, peek(&s) < 0 ? 0 : -1;
    for (size_t i = 0;; i++) {
        if (peek(&s) != '[') return -1;
        s.p++;
        size_t n = 0;
        if (peek(&s) == ']') {
            s.p++;
        } else {
            for (;;) {
                int64_t x;
                skip_ws(&s);
                if (scan_int(&s, &x, as_u64)) return -1;
                if (n < max) v[n] = x;
                n++;
                int c = peek(&s);
                s.p++;
                if (c == ']') break;
                if (c != ',') return -1;
            }
        }
        *rows = i + 1;
        int rc = fn ? fn(ctx, i, v, n) : afn ? afn(ctx, i, (const uint64_t *)v, n) : 0;
        if (rc) return rc;
        int c = peek(&s);
        s.p++;
        if (c == ']') return peek(&s) < 0 ? 0 : -1;
        if (c != ',') return -1;
    }
}

int raw_scan_rows(struct raw_span span, int64_t *v, size_t max, raw_row_fn fn, void *ctx,
                  size_t *rows)
{
    return scan_rows(span, v, max, fn, NULL, ctx, rows, 0);
}

int raw_scan_addr_rows(struct raw_span span, uint64_t *v, size_t max, raw_addr_row_fn fn,
                       void *ctx, size_t *rows)
{
    return scan_rows(span, (int64_t *)v, max, NULL, fn, ctx, rows, 1);
}

char *raw_scan_rest(const char *buf, size_t len, struct raw_span a, struct raw_span b,
                    size_t *out_len)
{
    if (a.b > b.b) {
        struct raw_span t = a;
        a = b, b = t;
    }
    size_t n = len - (size_t)(a.e - a.b) - (size_t)(b.e - b.b) + 4;
    char *out = malloc(n + 1), *o = out;
    if (!out) return NULL;
    memcpy(o, buf, (size_t)(a.b - buf)), o += a.b - buf;
    memcpy(o, "[]", 2), o += 2;
    memcpy(o, a.e, (size_t)(b.b - a.e)), o += b.b - a.e;
    memcpy(o, "[]", 2), o += 2;
    memcpy(o, b.e, (size_t)(buf + len - b.e)), o += buf + len - b.e;
    *o = 0;
    *out_len = n;
    return out;
}

int raw_scan_object(const char *b, const char *e, raw_member_fn fn, void *ctx, const char **end)
{
    struct scan s = {b, e};
    if (peek(&s) != '{') return -1;
    s.p++;
    if (peek(&s) == '}') return *end = s.p + 1, 0;
    for (;;) {
        if (peek(&s) != '"') return -1;
        const char *key = s.p + 1;
        int escaped = 0;
        if (skip_string(&s, &escaped) || escaped) return -1;
        size_t key_len = (size_t)(s.p - 1 - key);
        if (peek(&s) != ':') return -1;
        s.p++;
        skip_ws(&s);
        struct raw_span v = {s.p, NULL};
        if (skip_value(&s)) return -1;
        v.e = s.p;
        if (fn && fn(ctx, key, key_len, v)) return -1;
        int c = peek(&s);
        s.p++;
        if (c == '}') break;
        if (c != ',') return -1;
    }
    *end = s.p;
    return 0;
}

int raw_scan_elements(struct raw_span span, int (*fn)(void *ctx, struct raw_span v), void *ctx)
{
    struct scan s = {span.b, span.e};
    if (peek(&s) != '[') return -1;
    s.p++;
    if (peek(&s) == ']') return 0;
    for (;;) {
        skip_ws(&s);
        struct raw_span v = {s.p, NULL};
        if (skip_value(&s)) return -1;
        v.e = s.p;
        if (fn(ctx, v)) return -1;
        int c = peek(&s);
        s.p++;
        if (c == ']') return 0;
        if (c != ',') return -1;
    }
}
