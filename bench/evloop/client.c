/* The load of the event-loop server (server.c): CONNS keep-alive connections on
 * loopback, each with one request in flight at a time (closed loop), driven by one
 * thread's epoll. Connects (retrying while the server starts), then measures for
 * SECONDS after WARMUP seconds and prints
 *   requests N rps R p50_us A p99_us B
 * Latency is from the request's write to the response's last byte.
 *
 *   client PORT CONNS WARMUP SECONDS */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define REQ 32
#define RESP 256
#define MAXLAT (1 << 22)

struct conn {
    int fd, got;
    int64_t sent_ns;
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int dial(int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    for (int tries = 0; tries < 500; tries++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            return fd;
        }
        close(fd);
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "client: cannot connect to 127.0.0.1:%d\n", port);
    exit(1);
}

static void send_req(struct conn *c)
{
    static const char req[REQ] = "GET /work HTTP/1.1 keep-alive..\n";
    c->sent_ns = now_ns();
    c->got = 0;
    if (write(c->fd, req, REQ) != REQ) {
        perror("client: write");
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: client PORT CONNS WARMUP SECONDS\n");
        return 2;
    }
    int port = atoi(argv[1]), nconn = atoi(argv[2]);
    double warm = atof(argv[3]), secs = atof(argv[4]);
    struct conn *cs = calloc((size_t)nconn, sizeof *cs);
    int64_t *lat = malloc(sizeof(int64_t) * MAXLAT);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    for (int i = 0; i < nconn; i++) {
        cs[i].fd = dial(port);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &cs[i]};
        epoll_ctl(ep, EPOLL_CTL_ADD, cs[i].fd, &ev);
    }
    int64_t start = now_ns() + (int64_t)(warm * 1e9), end = start + (int64_t)(secs * 1e9);
    long n = 0;
    for (int i = 0; i < nconn; i++)
        send_req(&cs[i]);
    struct epoll_event evs[64];
    char buf[RESP];
    for (;;) {
        int64_t t = now_ns();
        if (t >= end) break;
        int k = epoll_wait(ep, evs, 64, 100);
        if (k < 0 && errno == EINTR) continue;
        for (int i = 0; i < k; i++) {
            struct conn *c = evs[i].data.ptr;
            ssize_t r = read(c->fd, buf, (size_t)(RESP - c->got));
            if (r <= 0) {
                fprintf(stderr, "client: the server closed a connection\n");
                return 1;
            }
            c->got += (int)r;
            if (c->got < RESP) continue;
            int64_t done = now_ns();
            if (c->sent_ns >= start && done < end && n < MAXLAT) lat[n++] = done - c->sent_ns;
            send_req(c);
        }
    }
    if (n == 0) {
        fprintf(stderr, "client: no request completed\n");
        return 1;
    }
    qsort(lat, (size_t)n, sizeof *lat, cmp);
    printf("requests %ld rps %.1f p50_us %.1f p99_us %.1f\n", n, (double)n / secs,
           (double)lat[n / 2] / 1e3, (double)lat[(size_t)((double)n * 0.99)] / 1e3);
    return 0;
}
