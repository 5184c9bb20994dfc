/* A system-call-heavy program, to check that time in system calls is profiled
 * whoever runs it (tests/perf/test_unprivileged.py).
 *
 *   syscalls dd SECONDS      read 4 KiB from /dev/zero, write it to /dev/null, as dd does
 *   syscalls server SECONDS DIR   a client thread sends requests over a socket pair to a
 *                            server thread that appends each to a file in DIR, syncs it
 *                            and answers
 *
 * SECONDS ending in "x" is a count of blocks (dd) or requests (server) instead: fixed
 * work, for benchmarks.
 *
 * At the end it prints "cpu_ns N": its own CPU time (getrusage, every thread) less
 * that of a profiler's threads still running (kestrel-*, from /proc); and "all_ns N":
 * every thread's. The server also prints its two threads' CPU times (client_ns, the
 * main thread's; server_ns) and the time its server thread spent in handle_request
 * (handle_ns, a monotonic clock read in the vDSO around each call). */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

/* CPU ns of this process's threads named kestrel-*: a profiler's own, which its report
 * leaves out (schedstat's first field). */
static long long runtime_threads_ns(void)
{
    long long sum = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (!fgets(comm, sizeof comm, f)) comm[0] = 0;
        fclose(f);
        if (strncmp(comm, "kestrel-", 8)) continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
        long long ns = 0;
        if ((f = fopen(path, "r"))) {
            if (fscanf(f, "%lld", &ns) != 1) ns = 0;
            fclose(f);
        }
        sum += ns;
    }
    if (d) closedir(d);
    return sum;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char buf[4096];

__attribute__((noinline)) static void dd_read(int fd)
{
    if (read(fd, buf, sizeof buf) != (ssize_t)sizeof buf) exit(3);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void dd_write(int fd)
{
    if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf) exit(3);
    __asm__ volatile("" ::: "memory");
}

static long count; /* blocks or requests to do, 0: for `secs` seconds */

__attribute__((noinline)) static void dd_loop(double secs)
{
    int in = open("/dev/zero", O_RDONLY), out = open("/dev/null", O_WRONLY);
    if (in < 0 || out < 0) exit(2);
    double end = now_s() + secs;
    for (unsigned i = 0;; i++) {
        dd_read(in);
        dd_write(out);
        if (count ? i + 1 >= (unsigned long)count : !(i & 255) && now_s() > end) break;
    }
}

static int sv[2];
static int logfd;
static long long server_ns; /* the server thread's CPU time, at its end */
static long long handle_ns; /* the time it spent in handle_request (a monotonic clock's,
                               read in the vDSO: no system call of its own) */

static long long thread_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}
static volatile int done;

__attribute__((noinline)) static uint64_t handle_request(const char *req, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (int r = 0; r < 4; r++)
        for (size_t i = 0; i < n; i++)
            h = (h ^ (unsigned char)req[i]) * 1099511628211ull;
    return h;
}

__attribute__((noinline)) static void server_store(const char *req, size_t n)
{
    static unsigned stored;
    if (write(logfd, req, n) != (ssize_t)n) exit(4);
    if (++stored % 64 == 0) fdatasync(logfd); /* a group commit */
}

static void *server(void *arg)
{
    (void)arg;
    char req[1024], resp[64];
    for (;;) {
        ssize_t n = recv(sv[1], req, sizeof req, 0);
        if (n <= 0) break;
        double t0 = now_s();
        uint64_t h = handle_request(req, (size_t)n);
        handle_ns += (long long)((now_s() - t0) * 1e9);
        server_store(req, (size_t)n);
        memcpy(resp, &h, sizeof h);
        send(sv[1], resp, sizeof resp, 0);
    }
    server_ns = thread_ns();
    return NULL;
}

__attribute__((noinline)) static void client(double secs)
{
    char req[1024], resp[64];
    memset(req, 'q', sizeof req);
    double end = now_s() + secs;
    for (long i = 0; count ? i < count : now_s() < end; i++) {
        send(sv[0], req, sizeof req, 0);
        if (recv(sv[0], resp, sizeof resp, 0) <= 0) break;
    }
    shutdown(sv[0], SHUT_RDWR);
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    double secs = atof(argv[2]);
    if (argv[2][0] && argv[2][strlen(argv[2]) - 1] == 'x') count = atol(argv[2]);
    if (!strcmp(argv[1], "dd")) {
        dd_loop(secs);
    } else if (!strcmp(argv[1], "server") && argc > 3) {
        char path[4096];
        snprintf(path, sizeof path, "%s/server.log", argv[3]);
        logfd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (logfd < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0) return 2;
        pthread_t t;
        pthread_create(&t, NULL, server, NULL);
        client(secs);
        long long client_ns = thread_ns();
        pthread_join(t, NULL);
        printf("client_ns %lld\nserver_ns %lld\nhandle_ns %lld\n", client_ns, server_ns,
               handle_ns);
    } else {
        return 2;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    long long all = (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ll +
                    (long long)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ll;
    printf("cpu_ns %lld\nall_ns %lld\n", all - runtime_threads_ns(), all);
    return 0;
}
