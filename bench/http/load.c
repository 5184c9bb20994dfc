/* The benchmark's load generator: an open loop at RATE requests a second (each sent
 * at its scheduled time, whatever the earlier ones are doing, so a slow answer does
 * not hide the ones queued behind it), CONC connections in flight at most, for
 * SECONDS. Every WINDOW seconds (default 60) it prints one line: requests done, errors,
 * latency p50, p90, p99, max (µs, measured from each request's scheduled time). Usage:
 * load PORT RATE SECONDS [CONC] [WINDOW] */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CONC_MAX 256

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct conn {
    int fd;
    double sched;
    size_t got;
};

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double *lat;
static size_t nlat, caplat;

static void report(int minute, size_t errors)
{
    qsort(lat, nlat, sizeof *lat, cmp);
    double p = nlat ? 1e6 : 0;
    printf("window %d requests %zu errors %zu p50 %.0f p90 %.0f p99 %.0f max %.0f\n", minute, nlat,
           errors, nlat ? lat[nlat / 2] * p : 0, nlat ? lat[nlat * 9 / 10] * p : 0,
           nlat ? lat[nlat * 99 / 100] * p : 0, nlat ? lat[nlat - 1] * p : 0);
    fflush(stdout);
    nlat = 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) return 2;
    int port = atoi(argv[1]);
    double rate = atof(argv[2]), seconds = atof(argv[3]);
    int conc = argc > 4 ? atoi(argv[4]) : 64;
    double window = argc > 5 ? atof(argv[5]) : 60;
    if (window <= 0) window = 60;
    if (conc > CONC_MAX) conc = CONC_MAX;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct conn c[CONC_MAX];
    for (int i = 0; i < conc; i++)
        c[i].fd = -1;
    double start = now(), next = start, minute_end = start + window;
    unsigned long id = 0;
    size_t errors = 0;
    int minute = 1;
    while (now() - start < seconds) {
        double t = now();
        /* start every request whose time has come, in a free slot */
        while (next <= t) {
            int i = 0;
            while (i < conc && c[i].fd >= 0)
                i++;
            if (i == conc) break; /* all in flight: it waits, its latency counts the wait */
            int fd = socket(AF_INET, SOCK_STREAM, 0);
            if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
                if (fd >= 0) close(fd);
                errors++;
                next += 1.0 / rate;
                continue;
            }
            char req[128];
            int n = snprintf(req, sizeof(req), "GET /item?id=%lu HTTP/1.1\r\nHost: x\r\n\r\n", id++);
            if (write(fd, req, (size_t)n) != n) {
                close(fd);
                errors++;
            } else {
                c[i] = (struct conn){fd, next, 0};
            }
            next += 1.0 / rate;
        }
        struct pollfd pf[CONC_MAX];
        int map[CONC_MAX], np = 0;
        for (int i = 0; i < conc; i++)
            if (c[i].fd >= 0) pf[np] = (struct pollfd){c[i].fd, POLLIN, 0}, map[np++] = i;
        double wait = next - now();
        poll(pf, (nfds_t)np, wait > 0 ? (int)(wait * 1000) + 1 : 0);
        for (int k = 0; k < np; k++) {
            if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            struct conn *x = &c[map[k]];
            char buf[8192];
            ssize_t r = read(x->fd, buf, sizeof(buf));
            if (r > 0) {
                x->got += (size_t)r;
                continue;
            }
            if (r < 0 && errno == EINTR) continue;
            if (x->got == 0) errors++;
            else {
                if (nlat == caplat) lat = realloc(lat, (caplat = caplat ? caplat * 2 : 65536) * sizeof *lat);
                lat[nlat++] = now() - x->sched;
            }
            close(x->fd);
            x->fd = -1;
        }
        if (now() >= minute_end) {
            report(minute++, errors);
            errors = 0;
            minute_end += window;
        }
    }
    if (nlat) report(minute, errors);
    return 0;
}
