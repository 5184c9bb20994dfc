/* A streamed raw profile (raw_chunks.h): its chunks joined into one document. */
#include "analysis/readers/raw_chunks.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RC_SCALARS 256 /* distinct top-level keys kept, last value wins */

struct rc_list {
    struct raw_span *v;
    size_t n, cap;
};

struct rc_scalar {
    const char *key;
    size_t key_len;
    struct raw_span v;
};

/* The tables whose entries the chunks add to. `from`: a chunk says where its entries
 * start ("<key>_from"), replacing what was there (images and threads: the closing
 * chunk gives them again, whole); the others only append. */
static const struct {
    const char *key;
    int from;
} rc_tables[] = {{"images", 1},     {"threads", 1},        {"stacks", 0},
                 {"stack_ends", 0}, {"stacks_guessed", 0}, {"samples", 0},
                 {"untimed", 0}};
#define RC_TABLES (sizeof rc_tables / sizeof rc_tables[0])

struct rc_join {
    struct rc_scalar scalars[RC_SCALARS];
    size_t n_scalars;
    struct rc_list tables[RC_TABLES]; /* from: one span per entry; else one per chunk */
    /* the chunk being read */
    struct raw_span chunk_tables[RC_TABLES];
    long long from[RC_TABLES]; /* -1: not given */
    long long number;          /* its "chunk", -1 when missing */
    int closing;
    int failed;
    char *why;
    size_t why_size;
};

static int rc_fail(struct rc_join *j, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->why, j->why_size, fmt, ap);
    va_end(ap);
    j->failed = 1;
    return -1;
}

static int rc_push(struct rc_list *l, struct raw_span v)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        struct raw_span *nv = realloc(l->v, cap * sizeof *nv);
        if (!nv) return -1;
        l->v = nv, l->cap = cap;
    }
    l->v[l->n++] = v;
    return 0;
}

static int rc_key_is(const char *key, size_t len, const char *want)
{
    return strlen(want) == len && !memcmp(key, want, len);
}

/* A non-negative JSON integer at v, or -1. */
static long long rc_count(struct raw_span v)
{
    long long n = 0;
    if (v.b == v.e) return -1;
    for (const char *p = v.b; p < v.e; p++) {
        if (*p < '0' || *p > '9' || n > (1ll << 50)) return -1;
        n = n * 10 + (*p - '0');
    }
    return n;
}

static int rc_member(void *ctx, const char *key, size_t len, struct raw_span v)
{
    struct rc_join *j = ctx;
    if (rc_key_is(key, len, "chunk")) return j->number = rc_count(v), 0;
    if (rc_key_is(key, len, "closing")) return j->closing = v.e - v.b == 4, 0;
    for (size_t t = 0; t < RC_TABLES; t++) {
        if (rc_key_is(key, len, rc_tables[t].key)) return j->chunk_tables[t] = v, 0;
        size_t kl = strlen(rc_tables[t].key);
        if (rc_tables[t].from && len == kl + 5 && !memcmp(key, rc_tables[t].key, kl) &&
            !memcmp(key + kl, "_from", 5)) {
            if ((j->from[t] = rc_count(v)) < 0)
                return rc_fail(j, "\"%s_from\" is not a count", rc_tables[t].key);
            return 0;
        }
    }
    for (size_t i = 0; i < j->n_scalars; i++)
        if (j->scalars[i].key_len == len && !memcmp(j->scalars[i].key, key, len))
            return j->scalars[i].v = v, 0;
    if (j->n_scalars == RC_SCALARS) return rc_fail(j, "more than %d keys", RC_SCALARS);
    j->scalars[j->n_scalars++] = (struct rc_scalar){key, len, v};
    return 0;
}

static int rc_entry(void *ctx, struct raw_span v)
{
    return rc_push(ctx, v);
}

/* One whole chunk's tables, into the joined ones. */
static int rc_take_tables(struct rc_join *j)
{
    for (size_t t = 0; t < RC_TABLES; t++) {
        struct raw_span v = j->chunk_tables[t];
        struct rc_list *l = &j->tables[t];
        if (!rc_tables[t].from) {
            if (v.b && rc_push(l, v)) return rc_fail(j, "out of memory");
            continue;
        }
        if (j->from[t] >= 0) {
            if ((size_t)j->from[t] > l->n)
                return rc_fail(j, "chunk %lld: \"%s_from\" %lld past the %zu %s before it",
                               j->number, rc_tables[t].key, j->from[t], l->n, rc_tables[t].key);
            l->n = (size_t)j->from[t];
        }
        if (v.b && raw_scan_elements(v, rc_entry, l))
            return rc_fail(j, "chunk %lld: \"%s\" is not an array", j->number, rc_tables[t].key);
    }
    return 0;
}

/* Output, growing. */
struct rc_out {
    char *b;
    size_t n, cap;
    int oom;
};

static void rc_put(struct rc_out *o, const char *s, size_t n)
{
    if (o->oom) return;
    if (o->n + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        while (o->n + n + 1 > cap)
            cap *= 2;
        char *nb = realloc(o->b, cap);
        if (!nb) {
            o->oom = 1;
            return;
        }
        o->b = nb, o->cap = cap;
    }
    memcpy(o->b + o->n, s, n);
    o->n += n;
    o->b[o->n] = 0;
}

static void rc_puts(struct rc_out *o, const char *s)
{
    rc_put(o, s, strlen(s));
}

/* An array's inside: what lies between its brackets, without the whitespace around. */
static struct raw_span rc_inside(struct raw_span v)
{
    const char *b = v.b, *e = v.e;
    while (b < e && *b != '[')
        b++;
    while (e > b && e[-1] != ']')
        e--;
    if (b < e) b++, e--;
    while (b < e && (*b == ' ' || *b == '\n' || *b == '\t' || *b == '\r'))
        b++;
    while (e > b && (e[-1] == ' ' || e[-1] == '\n' || e[-1] == '\t' || e[-1] == '\r'))
        e--;
    return (struct raw_span){b, e};
}

static void rc_write(struct rc_join *j, struct rc_out *o)
{
    rc_puts(o, "{");
    for (size_t i = 0; i < j->n_scalars; i++) {
        if (i) rc_puts(o, ",");
        rc_puts(o, "\"");
        rc_put(o, j->scalars[i].key, j->scalars[i].key_len);
        rc_puts(o, "\":");
        rc_put(o, j->scalars[i].v.b, (size_t)(j->scalars[i].v.e - j->scalars[i].v.b));
    }
    for (size_t t = 0; t < RC_TABLES; t++) {
        const struct rc_list *l = &j->tables[t];
        /* untimed only when a chunk had it (it needs timed_end_ns beside it) */
        if (!l->n && !strcmp(rc_tables[t].key, "untimed")) continue;
        if (!l->n && !strcmp(rc_tables[t].key, "stack_ends")) continue;
        if (!l->n && !strcmp(rc_tables[t].key, "stacks_guessed")) continue;
        rc_puts(o, j->n_scalars || t ? ",\n\"" : "\n\"");
        rc_puts(o, rc_tables[t].key);
        rc_puts(o, "\":[");
        int any = 0;
        for (size_t k = 0; k < l->n; k++) {
            struct raw_span v = rc_tables[t].from ? l->v[k] : rc_inside(l->v[k]);
            if (v.b == v.e) continue;
            if (any) rc_puts(o, ",\n");
            rc_put(o, v.b, (size_t)(v.e - v.b));
            any = 1;
        }
        rc_puts(o, "]");
    }
    rc_puts(o, "}\n");
}

int raw_chunks_is_stream(const char *buf, size_t len)
{
    static const char key[] = "\"chunk\"";
    size_t i = 0;
    while (i < len && (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\t' || buf[i] == '\r'))
        i++;
    if (i >= len || buf[i] != '{') return 0;
    for (i++; i < len && (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\t' || buf[i] == '\r');)
        i++;
    return len - i >= sizeof key - 1 && !memcmp(buf + i, key, sizeof key - 1);
}

static int rc_is_space(char c)
{
    return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

char *raw_chunks_join(const char *buf, size_t len, size_t *out_len, struct raw_chunks *info,
                      char *why, size_t why_size)
{
    struct rc_join *j = calloc(1, sizeof *j);
    memset(info, 0, sizeof *info);
    if (!j) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    j->why = why, j->why_size = why_size;
    const char *p = buf, *end = buf + len;
    for (;;) {
        while (p < end && rc_is_space(*p))
            p++;
        if (p == end) break;
        if (info->closed) {
            rc_fail(j, "data after the closing chunk (byte %zu)", (size_t)(p - buf));
            break;
        }
        memset(j->chunk_tables, 0, sizeof j->chunk_tables);
        for (size_t t = 0; t < RC_TABLES; t++)
            j->from[t] = -1;
        j->number = -1, j->closing = 0;
        size_t scalars_before = j->n_scalars;
        struct rc_scalar saved[RC_SCALARS];
        memcpy(saved, j->scalars, scalars_before * sizeof *saved);
        const char *next;
        if (raw_scan_object(p, end, rc_member, j, &next)) {
            if (j->failed) break;
            /* Not a whole object: the chunk the process was writing when it ended. What
             * it had set is not taken. */
            memcpy(j->scalars, saved, scalars_before * sizeof *saved);
            j->n_scalars = scalars_before;
            info->cut_bytes = (size_t)(end - p);
            break;
        }
        if (j->number != (long long)info->chunks) {
            rc_fail(j, "chunk %u is numbered %lld", info->chunks, j->number);
            break;
        }
        if (rc_take_tables(j)) break;
        info->chunks++;
        info->closed = j->closing;
        p = next;
    }
    char *out = NULL;
    if (!j->failed && !info->chunks)
        rc_fail(j, "a streamed raw profile cut inside its first chunk (%zu bytes): the process "
                   "ended before it wrote one whole chunk",
                len);
    if (!j->failed) {
        struct rc_out o = {0};
        rc_write(j, &o);
        if (o.oom) {
            free(o.b);
            rc_fail(j, "out of memory");
        } else {
            out = o.b;
            *out_len = o.n;
        }
    }
    for (size_t t = 0; t < RC_TABLES; t++)
        free(j->tables[t].v);
    free(j);
    return out;
}
