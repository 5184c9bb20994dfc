/* The benchmark's HTTP server: a small program of the kind the scrape endpoints are
 * for. THREADS worker threads accept on one listening socket; each request
 * (GET /item?id=N) is answered with a JSON-ish document built in malloc'd pieces
 * (a list of fields, each a formatted string), so the handler both computes and
 * allocates. One request per connection. Usage: server PORT */
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define THREADS 4
#define FIELDS 24

static int listen_fd;

__attribute__((noinline)) static char *field(unsigned long id, int k)
{
    char *s = malloc(96);
    unsigned long h = id * 2654435761u + (unsigned long)k;
    for (int i = 0; i < 2000; i++)
        h = h * 6364136223846793005ull + 1442695040888963407ull;
    snprintf(s, 96, "\"f%d\":\"%016lx\"", k, h);
    return s;
}

__attribute__((noinline)) static size_t render(unsigned long id, char *out, size_t cap)
{
    char *f[FIELDS];
    for (int k = 0; k < FIELDS; k++)
        f[k] = field(id, k);
    size_t n = (size_t)snprintf(out, cap, "{\"id\":%lu", id);
    for (int k = 0; k < FIELDS; k++) {
        n += (size_t)snprintf(out + n, cap - n, ",%s", f[k]);
        free(f[k]);
    }
    n += (size_t)snprintf(out + n, cap - n, "}\n");
    return n;
}

static void handle(int c)
{
    char req[2048];
    ssize_t got = 0, r;
    while (got < (ssize_t)sizeof(req) - 1 && (r = read(c, req + got, sizeof(req) - 1 - got)) > 0) {
        got += r;
        req[got] = 0;
        if (strstr(req, "\r\n\r\n")) break;
    }
    if (got <= 0) return;
    const char *q = strstr(req, "id=");
    unsigned long id = q ? strtoul(q + 3, NULL, 10) : 0;
    char body[4096], head[128];
    size_t n = render(id, body, sizeof(body));
    int h = snprintf(head, sizeof(head),
                     "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n",
                     n);
    if (write(c, head, (size_t)h) == h) (void)!write(c, body, n);
}

static void *worker(void *arg)
{
    (void)arg;
    for (;;) {
        int c = accept(listen_fd, NULL, NULL);
        if (c < 0) continue;
        handle(c);
        close(c);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1])),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(listen_fd, (struct sockaddr *)&a, sizeof(a)) || listen(listen_fd, 256)) {
        perror("bind");
        return 1;
    }
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    return 0;
}
