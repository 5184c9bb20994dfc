/* peer.c — who is on the other end of a connection to the scrape endpoints (http.h).
 *
 * A profile shows what a program does, and /debug/pprof/symbol its code's layout: by
 * default only the program's own user (real or effective) and root may read them. The
 * peer's uid comes from the kernel: SO_PEERCRED on a Unix socket; on TCP over loopback,
 * the row of the peer's own socket in /proc/net/tcp or /proc/net/tcp6 (its local
 * address is our peer address and its remote address ours), whose uid column is the
 * socket owner's. A peer that cannot be found (it closed meanwhile) is refused.
 *
 * Server thread only. Signal handlers: nothing. Inside malloc: nothing. */
#include "runtime/http/http.h"
#include "runtime/rtfd.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* One address as /proc/net/tcp{,6} prints it: the 32-bit words as the kernel holds
 * them, printed %08X each, and the port in host order. */
struct peer_addr {
    uint32_t w[4];
    int nw; /* 1 (IPv4) or 4 (IPv6) */
    unsigned port;
};

static int peer_hex_words(const char *s, size_t n, uint32_t *w, int nw)
{
    if (n != (size_t)nw * 8) return -1;
    for (int i = 0; i < nw; i++) {
        char word[9];
        memcpy(word, s + 8 * i, 8);
        word[8] = 0;
        char *end;
        w[i] = (uint32_t)strtoul(word, &end, 16);
        if (*end) return -1;
    }
    return 0;
}

/* Parses "HEX:PORT" at *p; advances past it. */
static int peer_field(const char **p, struct peer_addr *a)
{
    const char *s = *p;
    while (*s == ' ')
        s++;
    const char *colon = strchr(s, ':');
    if (!colon) return -1;
    if (peer_hex_words(s, (size_t)(colon - s), a->w, a->nw) != 0) return -1;
    char *end;
    a->port = (unsigned)strtoul(colon + 1, &end, 16);
    *p = end;
    return 0;
}

static int peer_same(const struct peer_addr *a, const struct peer_addr *b)
{
    return a->port == b->port && !memcmp(a->w, b->w, sizeof(uint32_t) * (size_t)a->nw);
}

/* Looks for the socket whose local address is `theirs` and remote `ours` in the table
 * at `path`; its uid into *uid. 0 or -ENOENT. */
static int peer_scan(const char *path, const struct peer_addr *theirs,
                     const struct peer_addr *ours, uid_t *uid)
{
    struct rtfd f;
    if (rtfd_open_once(&f, path) < 0) return -errno;
    char buf[8192];
    size_t have = 0;
    int found = -ENOENT, first = 1;
    for (;;) {
        ssize_t r = read(f.fd, buf + have, sizeof(buf) - 1 - have);
        if (r <= 0) break;
        have += (size_t)r;
        buf[have] = 0;
        char *line = buf, *nl;
        while ((nl = strchr(line, '\n'))) {
            *nl = 0;
            if (!first) {
                /* "  sl  local rem st tx:rx tr:when retrnsmt uid ..." */
                const char *p = strchr(line, ':');
                struct peer_addr l = {.nw = theirs->nw}, m = {.nw = theirs->nw};
                const char *q = p ? p + 1 : NULL;
                if (q && peer_field(&q, &l) == 0 && peer_field(&q, &m) == 0 &&
                    peer_same(&l, theirs) && peer_same(&m, ours)) {
                    unsigned st, txq, rxq, tr, retr;
                    unsigned long when, u;
                    if (sscanf(q, " %x %x:%x %x:%lx %x %lu", &st, &txq, &rxq, &tr, &when, &retr,
                               &u) == 7) {
                        *uid = (uid_t)u;
                        found = 0;
                        break;
                    }
                }
            }
            first = 0;
            line = nl + 1;
        }
        if (found == 0) break;
        have = (size_t)(buf + have - line);
        memmove(buf, line, have);
        if (have == sizeof(buf) - 1) have = 0; /* no line is this long */
    }
    rtfd_close(&f);
    return found;
}

static void peer_from_in(struct peer_addr *a, const struct sockaddr_in *s)
{
    a->nw = 1;
    a->w[0] = s->sin_addr.s_addr;
    a->port = ntohs(s->sin_port);
}

int peer_uid(int fd, uid_t *uid)
{
    struct sockaddr_storage me, them;
    socklen_t ml = sizeof(me), tl = sizeof(them);
    if (getsockname(fd, (struct sockaddr *)&me, &ml) != 0 ||
        getpeername(fd, (struct sockaddr *)&them, &tl) != 0)
        return -errno;
    if (them.ss_family == AF_UNIX) {
        struct ucred cr;
        socklen_t cl = sizeof(cr);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0) return -errno;
        *uid = cr.uid;
        return 0;
    }
    struct peer_addr ours, theirs;
    if (them.ss_family == AF_INET) {
        peer_from_in(&theirs, (struct sockaddr_in *)&them);
        peer_from_in(&ours, (struct sockaddr_in *)&me);
        return peer_scan("/proc/net/tcp", &theirs, &ours, uid);
    }
    if (them.ss_family != AF_INET6) return -EAFNOSUPPORT;
    const struct sockaddr_in6 *t6 = (struct sockaddr_in6 *)&them, *m6 = (struct sockaddr_in6 *)&me;
    if (IN6_IS_ADDR_V4MAPPED(&t6->sin6_addr)) {
        /* an IPv4 client of a dual-stack socket: its own socket is an IPv4 one */
        struct sockaddr_in t4 = {.sin_family = AF_INET, .sin_port = t6->sin6_port};
        struct sockaddr_in m4 = {.sin_family = AF_INET, .sin_port = m6->sin6_port};
        memcpy(&t4.sin_addr, &t6->sin6_addr.s6_addr[12], 4);
        memcpy(&m4.sin_addr, &m6->sin6_addr.s6_addr[12], 4);
        peer_from_in(&theirs, &t4);
        peer_from_in(&ours, &m4);
        return peer_scan("/proc/net/tcp", &theirs, &ours, uid);
    }
    theirs.nw = ours.nw = 4;
    memcpy(theirs.w, &t6->sin6_addr, 16);
    memcpy(ours.w, &m6->sin6_addr, 16);
    theirs.port = ntohs(t6->sin6_port);
    ours.port = ntohs(m6->sin6_port);
    return peer_scan("/proc/net/tcp6", &theirs, &ours, uid);
}

int peer_allowed(uid_t uid)
{
    return uid == 0 || uid == geteuid() || uid == getuid();
}
