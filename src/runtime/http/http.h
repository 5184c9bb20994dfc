/* http — the runtime's scrape endpoints: Go's net/http/pprof contract served from a
 * thread of the runtime's own when KESTREL_HTTP=ADDR:PORT is set.
 *
 *   server.c   the address (loopback or unix:PATH unless KESTREL_HTTP_ALLOW_REMOTE=1),
 *              the listening socket, the thread, up to HTTP_CONN_MAX connections read
 *              and written from one poll loop under size and time bounds, the
 *              responses, the CPU window that is pending
 *   peer.c     the uid of the client (SO_PEERCRED, /proc/net/tcp{,6}): the program's
 *              own user and root only, unless KESTREL_HTTP_ALLOW_ANY_USER=1
 *   routes.c   what each path answers: /debug/pprof/ (index), profile, heap, allocs,
 *              symbol; Go's errors (text/plain, X-Go-Pprof: 1)
 *   symtab.c   function names from the images' .symtab/.dynsym, for /debug/pprof/symbol
 *
 * Everything runs on the server thread (every signal blocked, never registered with
 * the CPU profiler, inside the heap profiler's ignore state for its whole life), but
 * for the start, which runs in the library's constructor, and the fork child's reset.
 * Signal handlers: nothing. Inside malloc: nothing. */
#ifndef KESTREL_HTTP_H
#define KESTREL_HTTP_H
#include <stddef.h>
#include <stdint.h>

#include "common/pbwire.h"

#define HTTP_HEAD_MAX (16 * 1024)      /* request line and headers */
#define HTTP_CONN_MAX 32               /* connections open at once; more are refused */
#define HTTP_PENDING_MAX (64u << 20)   /* bytes of answers in flight at once */
#define HTTP_BODY_MAX (1024 * 1024)    /* a POST body (/debug/pprof/symbol) */
#define HTTP_READ_MS 3000              /* a whole request must arrive within this */
#define HTTP_WRITE_MS 10000            /* a whole response must leave within this */
#define HTTP_SECONDS_DEFAULT 30        /* profile?seconds= when absent, as Go's */
#define HTTP_SECONDS_MAX_DEFAULT 600   /* KESTREL_HTTP_MAX_SECONDS when unset */

enum http_method { HTTP_GET, HTTP_HEAD, HTTP_POST, HTTP_OTHER };

struct http_req {
    enum http_method method;
    char path[512];     /* the target's path, undecoded */
    char query[1024];   /* after '?', undecoded; "" when none */
    const char *body;   /* POST body, NUL-terminated, in the server's buffer */
    size_t body_len;
    int fd;             /* the connection */
};

/* A response body: static text or an encoder's buffer (freed by the server). */
struct http_resp {
    int status;
    const char *content_type;
    int go_error;        /* Go's error headers (X-Go-Pprof: 1) */
    int attachment;      /* Content-Disposition: attachment; filename="profile" */
    const char *allow;   /* the Allow header of a 405 */
    struct pb_buf body;  /* the bytes */
};

/* ===== server.c ===== */
/* A Go-style error response: text/plain, X-Go-Pprof: 1, the text and a newline. */
void http_error(struct http_resp *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The CPU window: opens it for `seconds` on behalf of the connection fd (which the
 * server then owns: it answers when the window ends). 0, -EBUSY (one pending already),
 * or the window's error. */
int http_window_begin(int fd, enum http_method m, unsigned seconds, int waiting);
unsigned http_seconds_max(void);

/* ===== routes.c ===== */
/* Answers one request. Returns 1 when the connection was taken over (a CPU window),
 * 0 when `out` holds the response to send now. */
int http_route(const struct http_req *req, struct http_resp *out);

/* ===== peer.c ===== */
#include <sys/types.h>
/* The uid owning the other end of a connected socket: 0, or -errno (-ENOENT: not found
 * among this machine's sockets). */
int peer_uid(int fd, uid_t *uid);
/* 1 for the program's real or effective user and root. */
int peer_allowed(uid_t uid);

/* ===== symtab.c ===== */
/* The name of the function containing `addr` in a loaded image, from its ELF symbol
 * tables; NULL when none. Valid until the next call. */
const char *symtab_lookup(uint64_t addr);
/* Forgets every table read (after fork in the child: nothing of it is unmapped). */
void symtab_forget(void);
#endif
