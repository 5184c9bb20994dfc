/* routes.c — what each path of the scrape endpoints answers (http.h), as Go's
 * net/http/pprof answers it where kestrel has the same thing:
 *
 *   /debug/pprof/            an index (HTML)
 *   /debug/pprof/profile     ?seconds=N (default 30, at most KESTREL_HTTP_MAX_SECONDS):
 *                            the CPU profile of the next N seconds; ?state=all adds the
 *                            waiting samples. Unlike Go, seconds=0 or a negative or
 *                            non-numeric value is a 400, not a silent 30-second profile.
 *   /debug/pprof/heap        the heap profile (kestrel_heap_profile()), inuse_space
 *   /debug/pprof/allocs      the same, alloc_space by default (Go's convention)
 *   /debug/pprof/symbol      Go's symbolz: GET says "num_symbols: 1"; POST (or a GET
 *                            query) of 0xADDR+0xADDR... gets "0xADDR name" lines
 *
 * Errors are Go's: text/plain, X-Go-Pprof: 1, a line of text. A profile Go has and
 * kestrel does not (goroutine, block, mutex, threadcreate, trace, cmdline) is a 404.
 * Server thread only. Signal handlers: nothing. Inside malloc: nothing. */
#include "runtime/http/http.h"
#include "runtime/heap/heap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The value of query parameter `key` into out; 1 when present. */
static int rt_param(const char *query, const char *key, char *out, size_t size)
{
    size_t k = strlen(key);
    for (const char *p = query; *p;) {
        const char *amp = strchr(p, '&'), *end = amp ? amp : p + strlen(p);
        if ((size_t)(end - p) >= k && !memcmp(p, key, k) && (p[k] == '=' || p + k == end)) {
            const char *v = p[k] == '=' ? p + k + 1 : end;
            size_t n = (size_t)(end - v) < size - 1 ? (size_t)(end - v) : size - 1;
            memcpy(out, v, n);
            out[n] = 0;
            return 1;
        }
        p = amp ? amp + 1 : end;
    }
    return 0;
}

static int rt_method_ok(const struct http_req *q, struct http_resp *r, int post)
{
    if (q->method == HTTP_GET || q->method == HTTP_HEAD || (post && q->method == HTTP_POST))
        return 1;
    http_error(r, 405, "Method Not Allowed");
    r->allow = post ? "GET, HEAD, POST" : "GET, HEAD";
    return 0;
}

static void rt_text(struct http_resp *r, const char *type, const char *s)
{
    *r = (struct http_resp){.status = 200, .content_type = type};
    pb_put_raw(&r->body, s, strlen(s));
}

static const char rt_index[] =
    "<html>\n<head><title>/debug/pprof/</title></head>\n<body>\n"
    "/debug/pprof/ (kestrel)<br>\n<br>\nProfiles:<br>\n<table>\n"
    "<tr><td><a href='allocs'>allocs</a></td><td>heap profile, alloc_space by default "
    "(needs a heap profile: KESTREL_HEAP)</td></tr>\n"
    "<tr><td><a href='heap'>heap</a></td><td>heap profile, inuse_space by default</td></tr>\n"
    "<tr><td><a href='profile'>profile</a></td><td>CPU profile of the next ?seconds=N "
    "(default 30); ?state=all adds waiting samples</td></tr>\n"
    "<tr><td><a href='symbol'>symbol</a></td><td>function names of addresses (Go's symbolz "
    "protocol)</td></tr>\n"
    "</table>\n<br>\ngo tool pprof http://HOST:PORT/debug/pprof/profile?seconds=5<br>\n"
    "kestrel report http://HOST:PORT/debug/pprof/profile?seconds=5\n</body>\n</html>\n";

/* ===== /debug/pprof/profile ===== */

static int rt_profile(const struct http_req *q, struct http_resp *r)
{
    if (!rt_method_ok(q, r, 0)) return 0;
    char v[64];
    unsigned seconds = HTTP_SECONDS_DEFAULT, max = http_seconds_max();
    if (rt_param(q->query, "seconds", v, sizeof(v))) {
        char *end;
        long long n = strtoll(v, &end, 10);
        if (!v[0] || *end || n <= 0) {
            http_error(r, 400, "profile?seconds=%s: not a positive whole number of seconds", v);
            return 0;
        }
        if (n > (long long)max) {
            http_error(r, 400,
                       "profile?seconds=%s: more than this server's limit of %u seconds "
                       "(KESTREL_HTTP_MAX_SECONDS)",
                       v, max);
            return 0;
        }
        seconds = (unsigned)n;
    }
    int waiting = 0;
    if (rt_param(q->query, "state", v, sizeof(v))) {
        if (!strcmp(v, "all"))
            waiting = 1;
        else if (strcmp(v, "running") != 0) {
            http_error(r, 400, "profile?state=%s: running (the default) or all", v);
            return 0;
        }
    }
    int rc = http_window_begin(q->fd, q->method, seconds, waiting);
    if (rc == 0) return 1;
    if (rc == -EBUSY)
        http_error(r, 409,
                   "Could not enable CPU profiling: cpu profiling already in use (another "
                   "/debug/pprof/profile request is being served; one at a time)");
    else if (rc == -ESRCH)
        http_error(r, 500,
                   "Could not enable CPU profiling: no CPU profiling session runs in this "
                   "process (its engine could not start; kestrel's messages say why)");
    else
        http_error(r, 500, "Could not enable CPU profiling: %s", strerror(-rc));
    return 0;
}

/* ===== /debug/pprof/heap, /debug/pprof/allocs ===== */

static int rt_heap(const struct http_req *q, struct http_resp *r, int allocs)
{
    if (!rt_method_ok(q, r, 0)) return 0;
    char v[32];
    if (rt_param(q->query, "debug", v, sizeof(v)) && strcmp(v, "0") != 0) {
        http_error(r, 400, "%s?debug=%s: kestrel serves the heap profile as pprof only (debug=0)",
                   allocs ? "allocs" : "heap", v);
        return 0;
    }
    if (rt_param(q->query, "seconds", v, sizeof(v))) {
        http_error(r, 400, "%s?seconds=%s: delta heap profiles are not served; the profile is "
                           "cumulative since the heap profile started",
                   allocs ? "allocs" : "heap", v);
        return 0;
    }
    *r = (struct http_resp){.status = 200, .content_type = "application/octet-stream",
                            .attachment = 1};
    int rc = heap_profile_pprof(allocs, &r->body);
    if (rc == -ESRCH)
        http_error(r, 404,
                   "Could not get the heap profile: no heap profile runs in this process; start "
                   "one with KESTREL_HEAP=<path> (or kestrel record --heap), or "
                   "kestrel_heap_start() in the program");
    else if (rc)
        http_error(r, 500, "Could not get the heap profile: %s", strerror(-rc));
    return 0;
}

/* ===== /debug/pprof/symbol ===== */

static int rt_symbol(const struct http_req *q, struct http_resp *r)
{
    if (!rt_method_ok(q, r, 1)) return 0;
    const char *in = q->method == HTTP_POST ? q->body : q->query;
    *r = (struct http_resp){.status = 200, .content_type = "text/plain; charset=utf-8"};
    pb_put_raw(&r->body, "num_symbols: 1\n", 15);
    for (const char *p = in; *p;) {
        const char *plus = strchr(p, '+'), *end = plus ? plus : p + strlen(p);
        char word[32];
        size_t n = (size_t)(end - p);
        if (n && n < sizeof(word)) {
            memcpy(word, p, n);
            word[n] = 0;
            char *e;
            unsigned long long a = strtoull(word, &e, 0);
            const char *name = a && !*e ? symtab_lookup(a) : NULL;
            if (name) {
                char line[64];
                int k = snprintf(line, sizeof(line), "%#llx ", a);
                pb_put_raw(&r->body, line, (size_t)k);
                pb_put_raw(&r->body, name, strlen(name));
                pb_put_raw(&r->body, "\n", 1);
            }
        }
        p = plus ? plus + 1 : end;
    }
    return 0;
}

int http_route(const struct http_req *q, struct http_resp *r)
{
    const char *p = q->path;
    if (!strcmp(p, "/debug/pprof/") || !strcmp(p, "/debug/pprof")) {
        if (rt_method_ok(q, r, 0)) rt_text(r, "text/html; charset=utf-8", rt_index);
        return 0;
    }
    if (!strcmp(p, "/debug/pprof/profile")) return rt_profile(q, r);
    if (!strcmp(p, "/debug/pprof/heap")) return rt_heap(q, r, 0);
    if (!strcmp(p, "/debug/pprof/allocs")) return rt_heap(q, r, 1);
    if (!strcmp(p, "/debug/pprof/symbol")) return rt_symbol(q, r);
    if (!strncmp(p, "/debug/pprof/", 13)) {
        http_error(r, 404, "Unknown profile: kestrel serves profile, heap, allocs and symbol");
        return 0;
    }
    http_error(r, 404, "404 page not found");
    return 0;
}
