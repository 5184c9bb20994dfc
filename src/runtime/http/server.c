/* server.c — the scrape endpoints' listening socket, thread and connections (http.h).
 *
 * Safety, in the order a request meets it:
 *  - the address: loopback only (127.0.0.0/8, ::1) or a Unix socket (unix:/path, mode
 *    0600), unless KESTREL_HTTP_ALLOW_REMOTE=1, which is said (rtsay.h); an address in use
 *    or refused is one line (rtsay.h), and the program runs on without the server;
 *  - descriptors: the server thread has a descriptor table of its own (rtthread.h,
 *    RT_OWN_FDS). The listening socket is made in the constructor (so that an address
 *    in use is said before the program starts), taken into that table by the thread
 *    (rtfd.h's import) and closed in the program's; its connections and every file the
 *    thread opens to answer (the images' symbol tables, /proc) are in that table alone.
 *    So the program's close_range(3, ~0U, 0) or dup2 over any number never reaches
 *    them, and none of the server's opens can land on a number the program is about to
 *    take. Where the kernel gives no table of its own, the thread shares the program's,
 *    and every descriptor is checked before each read, send and close (rtfd.h): one the
 *    program closed or replaced is never read, written or closed, and the listening
 *    socket lost ends the server, with a line (rtsay.h). A fork child has none of them
 *    (or closes them at once): it does not serve, and must not keep the port;
 *  - at most HTTP_CONN_MAX connections, each read and written without blocking from one
 *    poll loop: a request must arrive whole within HTTP_READ_MS and HTTP_HEAD_MAX
 *    (+ HTTP_BODY_MAX for a POST), a response leave within HTTP_WRITE_MS, or the
 *    connection is dropped. A new connection when every slot is taken replaces the
 *    oldest one still sending its request (idle and slow clients cannot crowd out a
 *    scraper, whose request follows its connect at once); when none is, it is refused
 *    with a 503 at once, never queued. Answers in flight hold at most HTTP_PENDING_MAX
 *    bytes. The program and the profiler never wait for this thread;
 *  - the peer: only the program's own user and root (peer.c), unless
 *    KESTREL_HTTP_ALLOW_ANY_USER=1 (said, rtsay.h), checked when its request is whole;
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
#include "runtime/pprof_enc.h"
#include "runtime/rtfd.h"
#include "runtime/rtsay.h"
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
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define HTTP_STACK (256 * 1024)
/* After a window's end, the engine may still drain samples taken before it: the perf
 * engine drains every 500 ms at the longest. */
#define HTTP_WINDOW_GRACE_MS 600
#define HTTP_SLOT_BUF (HTTP_HEAD_MAX + 1)                /* a connection's own buffer */
#define HTTP_BIG_BUF (HTTP_HEAD_MAX + HTTP_BODY_MAX + 1) /* one request with a large body */
#define HTTP_ACCEPT_BURST 64   /* connections taken per wake-up */

enum conn_state { CONN_FREE, CONN_READ, CONN_WINDOW, CONN_WRITE };

/* One connection. A request is read into `buf` (its slot's, or the one large buffer
 * when its body does not fit); its answer is `head` then `body`, sent from `sent`. */
struct http_conn {
    struct rtfd fd;
    enum conn_state state;
    uint64_t since_ms;        /* accepted (CLOCK_MONOTONIC) */
    uint64_t deadline_ms;     /* the whole request read, or the whole answer sent, by then */
    char *slot;               /* its HTTP_SLOT_BUF bytes */
    char *buf;                /* slot, or hs.big while it holds that */
    size_t have;              /* bytes of the request in buf */
    size_t head_len;          /* 0 until the head is whole (with its blank line) */
    size_t body_len;          /* Content-Length */
    struct http_req req;      /* parsed when the head is whole */
    int names;                /* profiles answered carry function names (not for kestrel's
                                 own CLI, which symbolizes from the binaries: lines, inlines) */
    enum http_method method;  /* of the answer (HEAD: no body sent) */
    char head[512];           /* the answer's status line and headers */
    size_t head_n;
    struct pb_buf body;       /* the answer's body */
    size_t sent;              /* bytes of head, then body, sent */
};

static struct {
    struct rtfd listen;            /* fd -1: no server */
    unsigned seconds_max;          /* KESTREL_HTTP_MAX_SECONDS */
    int any_user;                  /* peers of every uid are served */
    struct http_conn *conns;       /* HTTP_CONN_MAX of them */
    char *big;                     /* HTTP_BIG_BUF: the one request with a large body */
    struct http_conn *big_owner;
    struct http_conn *cur;         /* the connection being routed */
    size_t pending;                /* bytes of answers not yet sent */
    uint64_t accept_pause_ms;      /* out of descriptors: accept again then */
    uint64_t refused, evicted;     /* connections turned away */
    /* the pending CPU window */
    struct http_conn *win;         /* its connection, NULL none */
    enum http_method win_method;
    int win_waiting;               /* state=all */
    int win_names;                 /* its profile carries function names */
    uint64_t win_deadline_ms;      /* CLOCK_MONOTONIC: its end, then the end of its grace */
    uint64_t win_end_ns;           /* CLOCK_MONOTONIC: its start + the seconds asked */
    int win_grace;                 /* its end has passed: waiting for the last drains */
    char unix_path[108];           /* unix:PATH, to say so at bind */
} hs = {.listen = {.fd = -1}};

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

/* ============================== requests ============================== */

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

/* ============================== connections ============================== */

static void conn_close(struct http_conn *c)
{
    if (c->state == CONN_FREE) return;
    if (c->state == CONN_WRITE) hs.pending -= c->body.failed ? 0 : c->body.len;
    rtfd_close(&c->fd);
    pb_buf_free(&c->body);
    if (hs.big_owner == c) hs.big_owner = NULL;
    if (hs.win == c) hs.win = NULL;
    c->state = CONN_FREE;
}

/* Sends what the socket takes now; closes the connection once all is sent or when the
 * client is gone. */
static void conn_write(struct http_conn *c)
{
    if (!rtfd_ok(&c->fd)) {
        conn_close(c);
        return;
    }
    size_t body_n = c->method == HTTP_HEAD || c->body.failed ? 0 : c->body.len;
    while (c->sent < c->head_n + body_n) {
        const char *p = c->sent < c->head_n ? c->head + c->sent
                                            : (const char *)c->body.data + (c->sent - c->head_n);
        size_t n = c->sent < c->head_n ? c->head_n - c->sent : c->head_n + body_n - c->sent;
        ssize_t w = send(c->fd.fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            c->sent += (size_t)w;
            continue;
        }
        if (w < 0 && (errno == EAGAIN || errno == EINTR)) return; /* POLLOUT */
        break;
    }
    conn_close(c);
}

/* Makes `r` the connection's answer (its body is taken over) and starts sending it.
 * HEAD requests get the headers alone. */
static void conn_respond(struct http_conn *c, enum http_method m, struct http_resp *r)
{
    size_t len = r->body.failed ? 0 : r->body.len;
    if (hs.pending + len > HTTP_PENDING_MAX)
        http_error(r, 503, "too many answers in flight; retry");
    len = r->body.failed ? 0 : r->body.len;
    int n = snprintf(c->head, sizeof(c->head),
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "X-Content-Type-Options: nosniff\r\nConnection: close\r\n%s%s%s%s%s\r\n",
                     r->status, http_reason(r->status),
                     r->content_type ? r->content_type : "text/plain; charset=utf-8", len,
                     r->go_error ? "X-Go-Pprof: 1\r\n" : "",
                     r->attachment ? "Content-Disposition: attachment; filename=\"profile\"\r\n"
                                   : "",
                     r->allow ? "Allow: " : "", r->allow ? r->allow : "",
                     r->allow ? "\r\n" : "");
    if (n < 0 || n >= (int)sizeof(c->head)) n = 0;
    pb_buf_free(&c->body);
    c->body = r->body;
    r->body = (struct pb_buf){0};
    c->head_n = (size_t)n;
    c->method = m;
    c->sent = 0;
    c->state = CONN_WRITE;
    c->deadline_ms = http_now_ms() + HTTP_WRITE_MS;
    hs.pending += c->body.failed ? 0 : c->body.len;
    conn_write(c);
}

/* Parses the head in c->buf[0, head_len): request line, Content-Length. 0, or -1 with
 * *err the answer. */
static int conn_parse_head(struct http_conn *c, struct http_resp *err)
{
    char *buf = c->buf;
    struct http_req *req = &c->req;
    const char *head_end = buf + c->head_len - 4;
    /* request line: METHOD SP TARGET SP HTTP/1.x */
    const char *eol = http_find(buf, c->head_len, "\r\n");
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
    const char *ua = http_header(hdrs, hend, "User-Agent", &vlen);
    c->names = !(ua && vlen >= 7 && !memcmp(ua, "kestrel", 7) && (vlen == 7 || ua[7] == '/'));
    c->body_len = 0;
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
        c->body_len = (size_t)v;
    }
    if (c->head_len + c->body_len > HTTP_HEAD_MAX) {
        /* the body does not fit the slot: the one large buffer, if free */
        if (hs.big_owner) {
            http_error(err, 503, "another large request is being read; retry");
            return -1;
        }
        hs.big_owner = c;
        memcpy(hs.big, c->buf, c->have);
        c->buf = hs.big;
    }
    return 0;
}

/* The request is whole: who asks, then what it asks. */
static void conn_request(struct http_conn *c)
{
    struct http_resp resp = {0};
    struct http_req *req = &c->req;
    uid_t uid;
    int rc;
    if (!hs.any_user && ((rc = peer_uid(c->fd.fd, &uid)) != 0 || !peer_allowed(uid))) {
        if (rc)
            http_error(&resp, 403, "Forbidden: the client's user could not be told (%s)",
                       strerror(-rc));
        else
            http_error(&resp, 403,
                       "Forbidden: only this program's user (uid %u) and root may read its "
                       "profiles; uid %u may not (KESTREL_HTTP_ALLOW_ANY_USER=1 allows every "
                       "user)", (unsigned)geteuid(), (unsigned)uid);
        conn_respond(c, req->method == HTTP_HEAD ? HTTP_HEAD : HTTP_GET, &resp);
        return;
    }
    c->buf[c->head_len + c->body_len] = 0;
    req->body = c->buf + c->head_len;
    req->body_len = c->body_len;
    req->fd = c->fd.fd;
    hs.cur = c;
    pp_names_here = c->names;
    int taken = http_route(req, &resp);
    hs.cur = NULL;
    if (hs.big_owner == c) hs.big_owner = NULL; /* the body has been used */
    c->buf = c->slot;
    if (taken) return; /* the CPU window took the connection */
    conn_respond(c, req->method, &resp);
}

/* Reads what has arrived. */
static void conn_read(struct http_conn *c)
{
    struct http_resp err = {0};
    if (!rtfd_ok(&c->fd)) {
        conn_close(c);
        return;
    }
    for (;;) {
        size_t want = c->head_len ? c->head_len + c->body_len : HTTP_HEAD_MAX;
        if (c->have >= want) break;
        ssize_t r = recv(c->fd.fd, c->buf + c->have, want - c->have, MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
            conn_close(c); /* the client is gone: nobody to answer */
            return;
        }
        if (r < 0) {
            if (errno == EINTR) continue;
            return; /* more later */
        }
        size_t from = c->have > 3 ? c->have - 3 : 0;
        c->have += (size_t)r;
        if (!c->head_len) {
            const char *e = http_find(c->buf + from, c->have - from, "\r\n\r\n");
            if (!e && c->have >= HTTP_HEAD_MAX) {
                http_error(&err, 431, "request line and headers larger than %d bytes",
                           HTTP_HEAD_MAX);
                conn_respond(c, HTTP_GET, &err);
                return;
            }
            if (!e) continue;
            c->head_len = (size_t)(e - c->buf) + 4;
            if (c->have > c->head_len + HTTP_BODY_MAX) c->have = c->head_len; /* reparsed */
            if (conn_parse_head(c, &err) != 0) {
                conn_respond(c, HTTP_GET, &err);
                return;
            }
            /* a pipelined request behind this one is ignored */
            if (c->have > c->head_len + c->body_len) c->have = c->head_len + c->body_len;
        }
    }
    conn_request(c);
}

/* A connection to refuse at once: every slot serves a request already. */
static void conn_refuse(int fd)
{
    static const char msg[] = "HTTP/1.1 503 Service Unavailable\r\n"
                              "Content-Type: text/plain; charset=utf-8\r\nX-Go-Pprof: 1\r\n"
                              "Connection: close\r\nContent-Length: 50\r\n\r\n"
                              "too many connections to /debug/pprof/; retry later\n";
    (void)!send(fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    hs.refused++;
}

/* A slot for a new connection: a free one, else the oldest still sending its request. */
static struct http_conn *conn_slot(void)
{
    struct http_conn *oldest = NULL;
    for (int i = 0; i < HTTP_CONN_MAX; i++) {
        struct http_conn *c = &hs.conns[i];
        if (c->state == CONN_FREE) return c;
        if (c->state == CONN_READ && (!oldest || c->since_ms < oldest->since_ms)) oldest = c;
    }
    if (oldest) {
        conn_close(oldest);
        hs.evicted++;
    }
    return oldest;
}

static void http_accept_all(void)
{
    for (int k = 0; k < HTTP_ACCEPT_BURST; k++) {
        int fd = accept4(hs.listen.fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                /* out of descriptors (the program's own limit) or memory: the connection
                 * stays in the backlog; try again later, not in a spin */
                hs.accept_pause_ms = http_now_ms() + 100;
            return;
        }
        struct rtfd tmp;
        if (rtfd_adopt(&tmp, fd, 0) < 0) continue;
        struct http_conn *c = conn_slot();
        if (!c) {
            conn_refuse(tmp.fd);
            rtfd_close(&tmp);
            continue;
        }
        uint64_t now = http_now_ms();
        char *slot = c->slot;
        *c = (struct http_conn){.fd = tmp, .state = CONN_READ, .since_ms = now,
                                .deadline_ms = now + HTTP_READ_MS, .slot = slot, .buf = slot};
        conn_read(c);
    }
}

/* ============================== the CPU window ============================== */

int http_window_begin(int fd, enum http_method m, unsigned seconds, int waiting)
{
    if (hs.win) return -EBUSY;
    if (!hs.cur || fd != hs.cur->fd.fd) return -EBADF;
    const struct engine *e = profile_active() ? profile_engine() : NULL;
    uint64_t now = http_now_ms();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t start = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    int rc = sink_window_open(start, profile_hz(), e ? e->name : NULL);
    if (rc) return rc;
    hs.win_end_ns = start + (uint64_t)seconds * 1000000000ull;
    hs.win = hs.cur;
    hs.win->state = CONN_WINDOW;
    hs.win_method = m;
    hs.win_waiting = waiting;
    hs.win_names = hs.cur->names;
    hs.win_deadline_ms = now + (uint64_t)seconds * 1000u;
    hs.win_grace = 0;
    return 0;
}

/* Ends the window; with `answer`, sends its profile. */
static void http_window_end(int answer)
{
    struct http_conn *c = hs.win;
    struct sink_window w;
    hs.win = NULL;
    if (sink_window_close(&w) == 0) {
        if (answer && c && rtfd_ok(&c->fd)) {
            struct http_resp r = {.status = 200, .content_type = "application/octet-stream",
                                  .attachment = 1};
            pp_names_here = hs.win_names;
            int rc = cpu_pprof_write(&w, hs.win_waiting, &r.body);
            if (rc) http_error(&r, 500, "Could not write the CPU profile: %s", strerror(-rc));
            sink_window_free(&w);
            conn_respond(c, hs.win_method, &r);
            return;
        }
        sink_window_free(&w);
    }
    if (c) conn_close(c);
}

/* ============================== the loop ============================== */

static void http_end_all(void)
{
    if (hs.win) http_window_end(0);
    for (int i = 0; i < HTTP_CONN_MAX; i++)
        conn_close(&hs.conns[i]);
}

static _Atomic int http_taken; /* the thread has the listening socket: 1 in its own
                                  table, -1 it shares the program's, -2 it could not
                                  take it (no server) */

static void *http_main(void *arg)
{
    (void)arg;
    struct pollfd pf[HTTP_CONN_MAX + 1];
    struct http_conn *who[HTTP_CONN_MAX + 1];
    if (rt_thread_table() && !rtfd_ok(&hs.listen)) { /* the import refused */
        atomic_store(&http_taken, -2);
        rtsay("kestrel: KESTREL_HTTP: the server's thread could not take its socket; no "
              "HTTP server");
        return NULL;
    }
    if (rt_thread_table()) hs.listen.table = rt_thread_table(); /* its copy, its own */
    atomic_store(&http_taken, rt_thread_table() ? 1 : -1);
    for (;;) {
        if (!rtfd_ok(&hs.listen)) {
            /* The program closed or replaced the listening socket (a daemon's
             * close_range): the server ends; the program and its profile go on. */
            http_end_all();
            rtsay("kestrel: KESTREL_HTTP: the program closed the server's socket; "
                            "no more /debug/pprof/ answers");
            return NULL;
        }
        uint64_t now = http_now_ms();
        uint64_t wake = UINT64_MAX;
        int n = 0;
        if (now >= hs.accept_pause_ms) {
            pf[n] = (struct pollfd){hs.listen.fd, POLLIN, 0};
            who[n++] = NULL;
        } else
            wake = hs.accept_pause_ms;
        for (int i = 0; i < HTTP_CONN_MAX; i++) {
            struct http_conn *c = &hs.conns[i];
            short ev = c->state == CONN_READ     ? POLLIN
                       : c->state == CONN_WRITE  ? POLLOUT
                       : c->state == CONN_WINDOW ? POLLRDHUP
                                                 : 0;
            if (!ev) continue;
            pf[n] = (struct pollfd){c->fd.fd, ev, 0};
            who[n++] = c;
            if (c->state != CONN_WINDOW && c->deadline_ms < wake) wake = c->deadline_ms;
        }
        if (hs.win && hs.win_deadline_ms < wake) wake = hs.win_deadline_ms;
        int timeout = wake == UINT64_MAX ? -1 : wake <= now ? 0 : (int)(wake - now);
        int got = poll(pf, (nfds_t)n, timeout);
        if (got < 0 && errno != EINTR) {
            struct timespec pause = {0, 100 * 1000000};
            nanosleep(&pause, NULL);
            continue;
        }
        int accept_now = 0;
        for (int i = 0; got > 0 && i < n; i++) {
            if (!pf[i].revents) continue;
            struct http_conn *c = who[i];
            if (!c) {
                accept_now = 1;
                continue;
            }
            if (c->state == CONN_WINDOW) {
                if (pf[i].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))
                    http_window_end(0); /* the client hung up: nobody to answer */
            } else if (c->state == CONN_READ)
                conn_read(c);
            else if (c->state == CONN_WRITE)
                conn_write(c);
        }
        now = http_now_ms();
        if (hs.win) {
            if (now >= hs.win_deadline_ms && !hs.win_grace) {
                /* exactly the seconds asked, even when the loop was late */
                sink_window_end_at(hs.win_end_ns);
                hs.win_grace = 1;
                hs.win_deadline_ms = now + HTTP_WINDOW_GRACE_MS;
            } else if (now >= hs.win_deadline_ms)
                http_window_end(1);
        }
        for (int i = 0; i < HTTP_CONN_MAX; i++) {
            struct http_conn *c = &hs.conns[i];
            if (c->state == CONN_READ && now >= c->deadline_ms) {
                struct http_resp err = {0};
                if (c->have == 0) {
                    conn_close(c); /* never said a word: nothing to answer */
                    continue;
                }
                http_error(&err, 408, "request not received whole within %d ms", HTTP_READ_MS);
                conn_respond(c, HTTP_GET, &err);
            } else if (c->state == CONN_WRITE && now >= c->deadline_ms)
                conn_close(c); /* a client that does not read */
        }
        if (accept_now) http_accept_all();
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
    for (int i = 0; hs.conns && i < HTTP_CONN_MAX; i++) {
        rtfd_close(&hs.conns[i].fd);
        hs.conns[i].state = CONN_FREE;
    }
    hs.win = NULL;
    symtab_forget();
}

static const struct lifecycle_client http_client = {
    .name = "http",
    .after_fork_child = http_after_fork_child,
    .flush_in_handler = 1, /* nothing to flush */
};

/* unix:PATH: a socket file only its owner may open (peers are checked too, with
 * SO_PEERCRED). A stale socket file nobody listens on is replaced; anything else there
 * is left alone. 0 or -1 (said on stderr). */
static int http_unix_addr(const char *v, struct sockaddr_storage *ss, socklen_t *len)
{
    const char *path = v + 5;
    struct sockaddr_un *un = (struct sockaddr_un *)ss;
    memset(ss, 0, sizeof(*ss));
    if (!*path || strlen(path) >= sizeof(un->sun_path)) {
        rtsay("kestrel: KESTREL_HTTP=%s: a socket path of 1 to %zu bytes; no HTTP "
                        "server", v, sizeof(un->sun_path) - 1);
        return -1;
    }
    un->sun_family = AF_UNIX;
    strcpy(un->sun_path, path);
    *len = (socklen_t)sizeof(*un);
    struct stat st;
    if (lstat(path, &st) == 0) {
        int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int live = S_ISSOCK(st.st_mode) && probe >= 0 &&
                   (connect(probe, (struct sockaddr *)un, *len) == 0 || errno != ECONNREFUSED);
        if (probe >= 0) close(probe);
        if (!S_ISSOCK(st.st_mode) || live) {
            rtsay("kestrel: KESTREL_HTTP=%s: %s; no HTTP server", v,
                    S_ISSOCK(st.st_mode) ? "in use" : "exists and is not a socket");
            return -1;
        }
        unlink(path);
    }
    strcpy(hs.unix_path, path);
    return 0;
}

static int http_listen(const char *v)
{
    struct sockaddr_storage ss;
    socklen_t len;
    int loopback = 1;
    if (!strncmp(v, "unix:", 5)) {
        if (http_unix_addr(v, &ss, &len) != 0) return -1;
    } else if (http_parse_addr(v, &ss, &len, &loopback) != 0) {
        rtsay("kestrel: KESTREL_HTTP=%s: not an address (HOST:PORT, e.g. "
                        "127.0.0.1:6060); no HTTP server", v);
        return -1;
    }
    const char *allow = getenv("KESTREL_HTTP_ALLOW_REMOTE");
    if (!loopback) {
        if (!allow || strcmp(allow, "1") != 0) {
            rtsay("kestrel: KESTREL_HTTP=%s: not a loopback address; profiles would "
                            "be served to the network (set KESTREL_HTTP_ALLOW_REMOTE=1 to allow "
                            "it); no HTTP server", v);
            return -1;
        }
        rtsay("kestrel: KESTREL_HTTP=%s: serving profiles beyond this machine, to "
                        "every user (KESTREL_HTTP_ALLOW_REMOTE=1)", v);
        hs.any_user = 1;
    }
    const char *any = getenv("KESTREL_HTTP_ALLOW_ANY_USER");
    if (any && !strcmp(any, "1") && !hs.any_user) {
        rtsay("kestrel: KESTREL_HTTP=%s: serving profiles to every user of this "
                        "machine (KESTREL_HTTP_ALLOW_ANY_USER=1)", v);
        hs.any_user = 1;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        rtsay("kestrel: KESTREL_HTTP=%s: %s; no HTTP server", v, strerror(errno));
        return -1;
    }
    fd = rtfd_adopt(&hs.listen, fd, 0);
    if (fd < 0) {
        rtsay("kestrel: KESTREL_HTTP=%s: %s; no HTTP server", v, strerror(-fd));
        return -1;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    /* owner-only from the start: the umask is the program's, and process-wide */
    if (ss.ss_family == AF_UNIX) fchmod(fd, 0600);
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 ||
        (ss.ss_family == AF_UNIX && chmod(hs.unix_path, 0600) != 0) || listen(fd, 128) != 0) {
        rtsay("kestrel: KESTREL_HTTP=%s: %s; no HTTP server", v, strerror(errno));
        rtfd_close(&hs.listen);
        return -1;
    }
    struct sockaddr_storage got;
    socklen_t gl = sizeof(got);
    uint16_t port_asked = ss.ss_family == AF_UNIX ? 1
                          : ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                                  : ((struct sockaddr_in6 *)&ss)->sin6_port;
    if (ss.ss_family != AF_UNIX && !port_asked && getsockname(fd, (struct sockaddr *)&got, &gl) == 0) {
        unsigned port = ntohs(got.ss_family == AF_INET ? ((struct sockaddr_in *)&got)->sin_port
                                                       : ((struct sockaddr_in6 *)&got)->sin6_port);
        rtsay("kestrel: KESTREL_HTTP=%s: serving /debug/pprof/ on port %u", v, port);
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
    size_t conns_size = sizeof(struct http_conn) * HTTP_CONN_MAX;
    size_t mem = conns_size + (size_t)HTTP_SLOT_BUF * HTTP_CONN_MAX + HTTP_BIG_BUF;
    char *mm = rtmem_alloc(mem);
    if (!mm) return;
    int fd = http_listen(v);
    if (fd < 0) {
        rtmem_free(mm, mem);
        return;
    }
    hs.conns = (struct http_conn *)mm;
    for (int i = 0; i < HTTP_CONN_MAX; i++) {
        hs.conns[i] = (struct http_conn){.fd = {.fd = -1}, .state = CONN_FREE};
        hs.conns[i].slot = mm + conns_size + (size_t)HTTP_SLOT_BUF * i;
    }
    hs.big = mm + conns_size + (size_t)HTTP_SLOT_BUF * HTTP_CONN_MAX;
    pp_name_of = symtab_lookup;
    lifecycle_register(&http_client);
    lifecycle_threads_coming();
    pthread_t t;
    struct rtfd mine = hs.listen; /* the program's table's copy */
    int rc = rt_thread_spawn(&t, "kestrel-http", HTTP_STACK, RT_DETACHED | RT_OWN_FDS,
                             http_main, NULL);
    if (rc != 0) {
        rtsay("kestrel: KESTREL_HTTP=%s: no thread (%s); no HTTP server", v,
                strerror(rc));
        rtfd_close(&hs.listen);
        return;
    }
    /* Once the thread has its copy, the program's table keeps none (within a second;
     * a thread that is not running by then leaves it there, checked as before). */
    for (int i = 0; i < 10000 && !atomic_load(&http_taken); i++) {
        struct timespec pause = {0, 100000};
        nanosleep(&pause, NULL);
    }
    if (atomic_load(&http_taken) == 1 || atomic_load(&http_taken) == -2) rtfd_close(&mine);
}
