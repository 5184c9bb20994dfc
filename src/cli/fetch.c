/* fetch.c — an HTTP GET of a profile (fetch.h). */
#include "cli/fetch.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define FETCH_MAX (512u << 20) /* a profile larger than this is not one */

int fetch_is_url(const char *input)
{
    return !strncmp(input, "http://", 7);
}

void fetch_url_name(const char *url, char *out, size_t size)
{
    const char *p = url + 7, *path = strchr(p, '/');
    const char *end = path ? path + strcspn(path, "?#") : p;
    while (end > (path ? path : p) && end[-1] == '/')
        end--;
    const char *b = end;
    while (path && b > path && b[-1] != '/')
        b--;
    snprintf(out, size, "%.*s", (int)(end - b), b);
    if (!out[0] || !path) snprintf(out, size, "profile");
}

static long fetch_seconds(const char *url)
{
    const char *q = strchr(url, '?');
    for (const char *p = q; p; p = strchr(p + 1, '&')) {
        if (!strncmp(p + 1, "seconds=", 8)) return strtol(p + 9, NULL, 10);
    }
    return 0;
}

static double fetch_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int fetch_url(const char *url, char *path, size_t path_size, char *why, size_t why_size)
{
    char host[256], port[16] = "80";
    const char *p = url + 7, *slash = strchr(p, '/');
    const char *hend = slash ? slash : p + strlen(p);
    const char *target = slash ? slash : "/";
    const char *colon = memchr(p, ':', (size_t)(hend - p));
    if (p[0] == '[') { /* [v6]:port */
        const char *rb = memchr(p, ']', (size_t)(hend - p));
        colon = rb && rb + 1 < hend && rb[1] == ':' ? rb + 1 : NULL;
    }
    size_t hl = (size_t)((colon ? colon : hend) - p);
    if (!hl || hl >= sizeof(host)) {
        snprintf(why, why_size, "not an http://HOST[:PORT]/PATH URL");
        return -1;
    }
    memcpy(host, p, hl);
    host[hl] = 0;
    if (host[0] == '[' && host[hl - 1] == ']') {
        memmove(host, host + 1, hl - 2);
        host[hl - 2] = 0;
    }
    if (colon) snprintf(port, sizeof(port), "%.*s", (int)(hend - colon - 1), colon + 1);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai;
    int gai = getaddrinfo(host, port, &hints, &ai);
    if (gai) {
        snprintf(why, why_size, "%s", gai_strerror(gai));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(ai);
    if (fd < 0) {
        snprintf(why, why_size, "cannot connect: %s", strerror(errno));
        return -1;
    }
    char req[4096];
    int n = snprintf(req, sizeof(req),
                     "GET %s HTTP/1.1\r\nHost: %s:%s\r\nUser-Agent: kestrel\r\n"
                     "Accept-Encoding: identity\r\nConnection: close\r\n\r\n",
                     target, host, port);
    if (n <= 0 || (size_t)n >= sizeof(req) || send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
        snprintf(why, why_size, "cannot send the request");
        close(fd);
        return -1;
    }
    long secs = fetch_seconds(url);
    double deadline = fetch_now() + (secs > 0 && secs < 86400 ? secs : 0) + 60;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    int rc = -1;
    for (;;) {
        double left = deadline - fetch_now();
        if (left <= 0) {
            snprintf(why, why_size, "no complete answer within %ld s", (secs > 0 ? secs : 0) + 60);
            goto out;
        }
        struct pollfd pf = {fd, POLLIN, 0};
        if (poll(&pf, 1, (int)(left * 1000) + 1) <= 0) continue;
        if (len == cap) {
            if (cap >= FETCH_MAX) {
                snprintf(why, why_size, "the answer is larger than %u MiB", FETCH_MAX >> 20);
                goto out;
            }
            char *g = buf ? realloc(buf, cap * 2) : NULL;
            if (!g) goto oom;
            buf = g;
            cap *= 2;
        }
        if (!buf) goto oom;
        ssize_t r = recv(fd, buf + len, cap - len, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            snprintf(why, why_size, "reading the answer: %s", strerror(errno));
            goto out;
        }
        if (r == 0) break;
        len += (size_t)r;
    }
    char *body = NULL;
    for (size_t i = 0; i + 4 <= len; i++)
        if (!memcmp(buf + i, "\r\n\r\n", 4)) {
            body = buf + i + 4;
            break;
        }
    int status = 0;
    if (!body || sscanf(buf, "HTTP/1.%*d %d", &status) != 1) {
        snprintf(why, why_size, "not an HTTP answer");
        goto out;
    }
    size_t blen = len - (size_t)(body - buf);
    if (status != 200) {
        while (blen && (body[blen - 1] == '\n' || body[blen - 1] == '\r'))
            blen--;
        snprintf(why, why_size, "HTTP %d: %.*s", status, (int)(blen < 400 ? blen : 400), body);
        goto out;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(path, path_size, "%s/kestrel-fetch-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int out = mkstemp(path);
    if (out < 0) {
        snprintf(why, why_size, "cannot make a temporary file: %s", strerror(errno));
        goto out;
    }
    if (write(out, body, blen) != (ssize_t)blen) {
        snprintf(why, why_size, "cannot write the temporary file: %s", strerror(errno));
        close(out);
        unlink(path);
        goto out;
    }
    close(out);
    rc = 0;
    goto out;
oom:
    snprintf(why, why_size, "out of memory");
out:
    free(buf);
    close(fd);
    return rc;
}
