/* server.c — the scrape endpoints' listening socket, thread and connections (http.h).
 *
 * Safety, in the order a request meets it:
 *  - the address: loopback only (127.0.0.0/8, ::1) unless KESTREL_HTTP_ALLOW_REMOTE=1,
 *    which is said on stderr; an address in use or refused is one line on stderr, and
 *    the program runs on without the server;
 *  - descriptors: O_CLOEXEC, the runtime's own (rtfd.h: moved high, so that the
 *    numbers the program's own open() gets are those it would get unprofiled, and
 *    checked before every read, send and close: a socket the program closed or
 *    replaced — close_range(3, ~0U, 0), dup2 — is never read, written or closed; the
 *    listening socket lost ends the server, with a line on stderr); a fork child closes
 *    them at once (it does not serve, and must not keep the port);
 *  - one connection at a time: the next waits in the kernel's backlog; a request must
 *    arrive whole within HTTP_READ_MS and HTTP_HEAD_MAX (+ HTTP_BODY_MAX for a POST),
 *    a response leave within HTTP_WRITE_MS, or the connection is dropped, so a slow or
 *    malicious client holds the server for seconds at most and never the program or
 *    the profiler (they never wait for this thread);
 *  - a CPU window is the one thing that outlives its request: the connection waits,
 *    the server goes on answering others (a second CPU request gets 409), and at the
 *    window's end the profile is sent. A client that hangs up meanwhile ends it.
 *
 * Runs on the server thread, but for http_init (the library's constructor) and the
 * fork child's reset. Signal handlers: nothing. Inside malloc: nothing. */
#include "runtime/http/http.h"
#include "runtime/cpu/cpu_pprof.h"
#include "runtime/cpu/profile_state.h"
#include "runtime/cpu/sink.h"
#include "runtime/lifecycle.h"
#include "runtime/rtfd.h"
#include "runtime/rtmem.h"
#include "runtime/rtthread.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HTTP_STACK (256 * 1024)
/* After a window's end, the engine may still drain samples taken before it: the perf
 * engine drains every 500 ms at the longest. */
#define HTTP_WINDOW_GRACE_MS 600

static struct {
    struct rtfd listen;            /* fd -1: no server */
    unsigned seconds_max;          /* KESTREL_HTTP_MAX_SECONDS */
    char *buf;                     /* request buffer: head, then body */
    /* the pending CPU window */
    struct rtfd win;               /* its connection, fd -1 none */
    enum http_method win_method;
    int win_waiting;               /* state=all */
    uint64_t win_deadline_ms;      /* CLOCK_MONOTONIC: its end, then the end of its grace */
    uint64_t win_end_ns;           /* CLOCK_MONOTONIC: its start + the seconds asked */
    int win_grace;                 /* its end has passed: waiting for the last drains */
} hs = {.listen = {.fd = -1}, .win = {.fd = -1}};

/* The connection being served (a window takes it over). */
static struct rtfd http_conn = {.fd = -1};

#define HTTP_BUF (HTTP_HEAD_MAX + HTTP_BODY_MAX + 1)

static uint64_t http_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

unsigned http_seconds_max(void)
{
    return hs.seconds_max;
}

/* ============================== responses ============================== */

static const char *http_reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return "Error";
    }
}

/* Writes all of [p, p+n) before the deadline; 0, or -1 when the client is gone or slow. */
static int http_write_all(int fd, const char *p, size_t n, uint64_t deadline)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && errno != EAGAIN && errno != EINTR) return -1;
        uint64_t now = http_now_ms();
        if (now >= deadline) return -1;
        struct pollfd pf = {fd, POLLOUT, 0};
        poll(&pf, 1, (int)(deadline - now));
    }
    return 0;
}

/* Sends `r` on fd (bounded in time; a client that does not read is dropped) and frees
 * its body. HEAD requests get the headers alone. */
static void http_send(int fd, enum http_method m, struct http_resp *r)
{
    char head[512];
    size_t len = r->body.failed ? 0 : r->body.len;
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "X-Content-Type-Options: nosniff\r\nConnection: close\r\n%s%s%s%s%s\r\n",
                     r->status, http_reason(r->status),
                     r->content_type ? r->content_type : "text/plain; charset=utf-8", len,
                     r->go_error ? "X-Go-Pprof: 1\r\n" : "",
                     r->attachment ? "Content-Disposition: attachment; filename=\"profile\"\r\n"
                                   : "",
                     r->allow ? "Allow: " : "", r->allow ? r->allow : "",
                     r->allow ? "\r\n" : "");
    if (n >= (int)sizeof(head)) n = -1;
    uint64_t deadline = http_now_ms() + HTTP_WRITE_MS;
    if (n > 0 && http_write_all(fd, head, (size_t)n, deadline) == 0 && m != HTTP_HEAD && len)
        http_write_all(fd, (const char *)r->body.data, len, deadline);
    pb_buf_free(&r->body);
}

void http_error(struct http_resp *r, int status, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof(text) - 1, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if ((size_t)n > sizeof(text) - 2) n = (int)sizeof(text) - 2;
    text[n++] = '\n';
    pb_buf_free(&r->body);
    *r = (struct http_resp){.status = status, .go_error = 1};
    pb_put_raw(&r->body, text, (size_t)n);
}

/* ============================== requests ============================== */

static const char *http_find(const char *p, size_t n, const char *s)
{
    size_t k = strlen(s);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(p + i, s, k) == 0) return p + i;
    return NULL;
}

/* The value of header `name` (case-insensitive) in [p, end), or NULL; *len its length. */
static const char *http_header(const char *p, const char *end, const char *name, size_t *len)
{
    size_t k = strlen(name);
    while (p < end) {
        const char *eol = http_find(p, (size_t)(end - p), "\r\n");
        if (!eol) eol = end;
        if ((size_t)(eol - p) > k && p[k] == ':' && strncasecmp(p, name, k) == 0) {
            const char *v = p + k + 1;
            while (v < eol && (*v == ' ' || *v == '\t'))
                v++;
            const char *ve = eol;
            while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
                ve--;
            *len = (size_t)(ve - v);
            return v;
        }
        p = eol + 2;
    }
    return NULL;
}

/* Reads into buf until `want` bytes or `stop` is found. Returns bytes held, -ETIMEDOUT,
 * -EPIPE (the client closed) or -E2BIG (no stop within want). */
static ssize_t http_read_until(int fd, char *buf, size_t have, size_t want, const char *stop,
                               uint64_t deadline)
{
    while (have < want) {
        if (stop && http_find(buf, have, stop)) return (ssize_t)have;
        ssize_t r = recv(fd, buf + have, want - have, MSG_DONTWAIT);
        if (r > 0) {
            have += (size_t)r;
            continue;
        }
        if (r == 0) return -EPIPE;
        if (errno != EAGAIN && errno != EINTR) return -EPIPE;
        uint64_t now = http_now_ms();
        if (now >= deadline) return -ETIMEDOUT;
        struct pollfd pf = {fd, POLLIN, 0};
        poll(&pf, 1, (int)(deadline - now));
    }
    if (stop && !http_find(buf, have, stop)) return -E2BIG;
    return (ssize_t)have;
}

/* Reads and parses one request. 0, or -1 with *err the answer (status 0: none, the
 * client is gone). */
static int http_read_request(int fd, struct http_req *req, struct http_resp *err)
{
    uint64_t deadline = http_now_ms() + HTTP_READ_MS;
    char *buf = hs.buf;
    ssize_t have = http_read_until(fd, buf, 0, HTTP_HEAD_MAX, "\r\n\r\n", deadline);
    if (have == -EPIPE) return -1;
    if (have == -ETIMEDOUT) {
        http_error(err, 408, "request not received whole within %d ms", HTTP_READ_MS);
        return -1;
    }
    if (have == -E2BIG) {
        http_error(err, 431, "request line and headers larger than %d bytes", HTTP_HEAD_MAX);
        return -1;
    }
    const char *head_end = http_find(buf, (size_t)have, "\r\n\r\n");
    size_t head_len = (size_t)(head_end - buf) + 4;
    /* request line: METHOD SP TARGET SP HTTP/1.x */
    const char *eol = http_find(buf, head_len, "\r\n");
    const char *sp1 = memchr(buf, ' ', (size_t)(eol - buf));
    const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
    if (!sp1 || !sp2 || eol - sp2 < 9 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0) {
        http_error(err, 400, "malformed request line");
        return -1;
    }
    size_t ml = (size_t)(sp1 - buf);
    req->method = ml == 3 && !memcmp(buf, "GET", 3)    ? HTTP_GET
                  : ml == 4 && !memcmp(buf, "HEAD", 4) ? HTTP_HEAD
                  : ml == 4 && !memcmp(buf, "POST", 4) ? HTTP_POST
                                                       : HTTP_OTHER;
    const char *t = sp1 + 1, *q = memchr(t, '?', (size_t)(sp2 - t));
    const char *pe = q ? q : sp2;
    if (*t != '/' || (size_t)(pe - t) >= sizeof(req->path) ||
        (q && (size_t)(sp2 - q - 1) >= sizeof(req->query))) {
        http_error(err, 400, "malformed or too long request target");
        return -1;
    }
    memcpy(req->path, t, (size_t)(pe - t));
    req->path[pe - t] = 0;
    req->query[0] = 0;
    if (q) {
        memcpy(req->query, q + 1, (size_t)(sp2 - q - 1));
        req->query[sp2 - q - 1] = 0;
    }
    size_t vlen;
    const char *hdrs = eol + 2, *hend = head_end + 2;
    if (http_header(hdrs, hend, "Transfer-Encoding", &vlen)) {
        http_error(err, 501, "chunked request bodies are not supported; send Content-Length");
        return -1;
    }
    size_t body_len = 0;
    const char *cl = http_header(hdrs, hend, "Content-Length", &vlen);
    if (cl) {
        char num[24];
        if (vlen == 0 || vlen >= sizeof(num)) {
            http_error(err, 400, "bad Content-Length");
            return -1;
        }
        memcpy(num, cl, vlen);
        num[vlen] = 0;
        char *end;
        unsigned long long v = strtoull(num, &end, 10);
        if (*end || num[0] == '-') {
            http_error(err, 400, "bad Content-Length");
            return -1;
        }
        if (v > HTTP_BODY_MAX) {
            http_error(err, 413, "request body larger than %d bytes", HTTP_BODY_MAX);
            return -1;
        }
        body_len = (size_t)v;
    }
    /* the body follows the head in the buffer */
    size_t got = (size_t)have - head_len;
    if (got > body_len) got = body_len; /* a pipelined request behind it is ignored */
    memmove(buf, head_end + 4, got);
    if (got < body_len) {
        ssize_t r = http_read_until(fd, buf, got, body_len, NULL, deadline);
        if (r == -ETIMEDOUT) {
            http_error(err, 408, "request body not received whole within %d ms", HTTP_READ_MS);
            return -1;
        }
        if (r < 0) return -1;
    }
    buf[body_len] = 0;
    req->body = buf;
    req->body_len = body_len;
    req->fd = fd;
    return 0;
}

/* ============================== the CPU window ============================== */

int http_window_begin(int fd, enum http_method m, unsigned seconds, int waiting)
{
    if (hs.win.fd >= 0) return -EBUSY;
    if (fd != http_conn.fd) return -EBADF;
    const struct engine *e = profile_active() ? profile_engine() : NULL;
    uint64_t now = http_now_ms();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t start = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    int rc = sink_window_open(start, profile_hz(), e ? e->name : NULL);
    if (rc) return rc;
    hs.win_end_ns = start + (uint64_t)seconds * 1000000000ull;
    hs.win = http_conn;
    http_conn.fd = -1;
    hs.win_method = m;
    hs.win_waiting = waiting;
    hs.win_deadline_ms = now + (uint64_t)seconds * 1000u;
    hs.win_grace = 0;
    return 0;
}

/* Ends the window; with `answer`, sends its profile. */
static void http_window_end(int answer)
{
    struct sink_window w;
    if (sink_window_close(&w) == 0) {
        if (answer && rtfd_ok(&hs.win)) {
            struct http_resp r = {.status = 200, .content_type = "application/octet-stream",
                                  .attachment = 1};
            int rc = cpu_pprof_write(&w, hs.win_waiting, &r.body);
            if (rc) http_error(&r, 500, "Could not write the CPU profile: %s", strerror(-rc));
            http_send(hs.win.fd, hs.win_method, &r);
        }
        sink_window_free(&w);
    }
    rtfd_close(&hs.win);
}

/* ============================== the loop ============================== */

static void http_serve_one(void)
{
    struct http_req req;
    struct http_resp resp = {0};
    if (!rtfd_ok(&http_conn)) return;
    if (http_read_request(http_conn.fd, &req, &resp) == 0) {
        if (http_route(&req, &resp)) return; /* the window took the connection */
    } else if (!resp.status) {
        rtfd_close(&http_conn);
        return;
    } else {
        req.method = HTTP_GET;
    }
    if (rtfd_ok(&http_conn)) http_send(http_conn.fd, req.method, &resp);
    rtfd_close(&http_conn);
}

static void *http_main(void *arg)
{
    (void)arg;
    for (;;) {
        if (!rtfd_ok(&hs.listen)) {
            /* The program closed or replaced the listening socket (a daemon's
             * close_range): the server ends; the program and its profile go on. */
            if (hs.win.fd >= 0) http_window_end(0);
            fprintf(stderr, "kestrel: KESTREL_HTTP: the program closed the server's socket; "
                            "no more /debug/pprof/ answers\n");
            return NULL;
        }
        struct pollfd pf[2] = {{hs.listen.fd, POLLIN, 0}, {hs.win.fd, POLLRDHUP, 0}};
        int timeout = -1;
        if (hs.win.fd >= 0) {
            uint64_t now = http_now_ms();
            timeout = now >= hs.win_deadline_ms ? 0 : (int)(hs.win_deadline_ms - now);
        }
        int n = poll(pf, hs.win.fd >= 0 ? 2 : 1, timeout);
        if (n < 0 && errno != EINTR) {
            struct timespec pause = {0, 100 * 1000000};
            nanosleep(&pause, NULL);
            continue;
        }
        if (hs.win.fd >= 0) {
            if (pf[1].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))
                http_window_end(0); /* the client hung up: nobody to answer */
            else if (http_now_ms() >= hs.win_deadline_ms && !hs.win_grace) {
                /* exactly the seconds asked, even when a slow request held us past them */
                sink_window_end_at(hs.win_end_ns);
                hs.win_grace = 1;
                hs.win_deadline_ms = http_now_ms() + HTTP_WINDOW_GRACE_MS;
            } else if (http_now_ms() >= hs.win_deadline_ms)
                http_window_end(1);
        }
        if (n > 0 && (pf[0].revents & POLLIN)) {
            int fd = accept4(hs.listen.fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (fd >= 0) {
                if (rtfd_adopt(&http_conn, fd, 0) >= 0) http_serve_one();
            } else if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
                /* Out of descriptors (the program's own limit) or memory: the
                 * connection stays in the backlog; try again later, not in a spin. */
                struct timespec pause = {0, 100 * 1000000};
                nanosleep(&pause, NULL);
            }
        }
    }
    return NULL;
}

/* ============================== start ============================== */

/* Parses "HOST:PORT" ("[V6]:PORT"; HOST may be "localhost"; ":PORT" is every
 * interface). 0 or -1. */
static int http_parse_addr(const char *v, struct sockaddr_storage *ss, socklen_t *len,
                           int *loopback)
{
    char host[128];
    const char *colon;
    if (v[0] == '[') {
        const char *rb = strchr(v, ']');
        if (!rb || rb[1] != ':' || (size_t)(rb - v - 1) >= sizeof(host)) return -1;
        memcpy(host, v + 1, (size_t)(rb - v - 1));
        host[rb - v - 1] = 0;
        colon = rb + 1;
    } else {
        colon = strrchr(v, ':');
        if (!colon || (size_t)(colon - v) >= sizeof(host)) return -1;
        memcpy(host, v, (size_t)(colon - v));
        host[colon - v] = 0;
    }
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || port < 0 || port > 65535) return -1;
    memset(ss, 0, sizeof(*ss));
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
    if (!strcmp(host, "localhost")) strcpy(host, "127.0.0.1");
    if (!host[0]) strcpy(host, "0.0.0.0");
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        *len = sizeof(*a4);
        *loopback = (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
        return 0;
    }
    if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        *len = sizeof(*a6);
        *loopback = IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr) ||
                    (IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr) && a6->sin6_addr.s6_addr[12] == 127);
        return 0;
    }
    return -1;
}

static void http_after_fork_child(void)
{
    /* The server thread is gone; its port and its pending client are the parent's. */
    rtfd_close(&hs.listen);
    rtfd_close(&hs.win);
    rtfd_close(&http_conn);
    symtab_forget();
}

static const struct lifecycle_client http_client = {
    .name = "http",
    .after_fork_child = http_after_fork_child,
    .flush_in_handler = 1, /* nothing to flush */
};

static int http_listen(const char *v)
{
    struct sockaddr_storage ss;
    socklen_t len;
    int loopback;
    if (http_parse_addr(v, &ss, &len, &loopback) != 0) {
        fprintf(stderr, "kestrel: KESTREL_HTTP=%s: not an address (HOST:PORT, e.g. "
                        "127.0.0.1:6060); no HTTP server\n", v);
        return -1;
    }
    const char *allow = getenv("KESTREL_HTTP_ALLOW_REMOTE");
    if (!loopback) {
        if (!allow || strcmp(allow, "1") != 0) {
            fprintf(stderr, "kestrel: KESTREL_HTTP=%s: not a loopback address; profiles would "
                            "be served to the network (set KESTREL_HTTP_ALLOW_REMOTE=1 to allow "
                            "it); no HTTP server\n", v);
            return -1;
        }
        fprintf(stderr, "kestrel: KESTREL_HTTP=%s: serving profiles beyond this machine "
                        "(KESTREL_HTTP_ALLOW_REMOTE=1)\n", v);
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        fprintf(stderr, "kestrel: KESTREL_HTTP=%s: %s; no HTTP server\n", v, strerror(errno));
        return -1;
    }
    fd = rtfd_adopt(&hs.listen, fd, 0);
    if (fd < 0) {
        fprintf(stderr, "kestrel: KESTREL_HTTP=%s: %s; no HTTP server\n", v, strerror(-fd));
        return -1;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 8) != 0) {
        fprintf(stderr, "kestrel: KESTREL_HTTP=%s: %s; no HTTP server\n", v, strerror(errno));
        rtfd_close(&hs.listen);
        return -1;
    }
    struct sockaddr_storage got;
    socklen_t gl = sizeof(got);
    uint16_t port_asked = ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                                  : ((struct sockaddr_in6 *)&ss)->sin6_port;
    if (!port_asked && getsockname(fd, (struct sockaddr *)&got, &gl) == 0) {
        unsigned port = ntohs(got.ss_family == AF_INET ? ((struct sockaddr_in *)&got)->sin_port
                                                       : ((struct sockaddr_in6 *)&got)->sin6_port);
        fprintf(stderr, "kestrel: KESTREL_HTTP=%s: serving /debug/pprof/ on port %u\n", v, port);
    }
    return fd;
}

__attribute__((constructor)) static void http_init(void)
{
    const char *v = getenv("KESTREL_HTTP");
    if (!v || !*v) return; /* inactive: no socket, no thread */
    const char *mx = getenv("KESTREL_HTTP_MAX_SECONDS");
    char *end;
    long m = mx ? strtol(mx, &end, 10) : 0;
    hs.seconds_max = mx && *mx && !*end && m > 0 && m <= 86400 ? (unsigned)m : HTTP_SECONDS_MAX_DEFAULT;
    hs.buf = rtmem_alloc(HTTP_BUF);
    if (!hs.buf) return;
    int fd = http_listen(v);
    if (fd < 0) {
        rtmem_free(hs.buf, HTTP_BUF);
        hs.buf = NULL;
        return;
    }
    lifecycle_register(&http_client);
    lifecycle_threads_coming();
    pthread_t t;
    int rc = rt_thread_spawn(&t, "kestrel-http", HTTP_STACK, 1, http_main, NULL);
    if (rc != 0) {
        fprintf(stderr, "kestrel: KESTREL_HTTP=%s: no thread (%s); no HTTP server\n", v,
                strerror(rc));
        rtfd_close(&hs.listen);
        return;
    }
}
