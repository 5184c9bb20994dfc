/* A prefork server as daemons are written: the master, started as root, opens its log
 * and its listening socket (port 0: the kernel's choice, written to argv[1]), sends its
 * stderr to the log, forks argv[2] workers and waits for SIGTERM; each worker drops to
 * the user nobody, then serves connections: for each, it works the CPU and the heap (a
 * few MiB allocated and freed) and answers "ok\n". On SIGTERM the master stops its
 * workers and every process exits 0. The log's lines name no time and no pid. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static volatile double sink;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

__attribute__((noinline)) static void handle_request(void)
{
    for (int k = 0; k < 8; k++) {
        char *p = malloc(1 << 20);
        if (!p) continue;
        memset(p, k, 1 << 20);
        for (int i = 0; i < (1 << 20); i += 64)
            sink += p[i] * 0.5;
        free(p);
    }
    for (int i = 0; i < 3000000; i++)
        sink += i * 0.25;
}

static void worker(int ls)
{
    struct passwd *pw = getpwnam("nobody");
    if (!pw || setgroups(0, NULL) || setgid(pw->pw_gid) || setuid(pw->pw_uid)) {
        fprintf(stderr, "worker: cannot drop to nobody: %s\n", strerror(errno));
        _exit(1);
    }
    fprintf(stderr, "worker: serving as uid %d\n", (int)getuid());
    while (!stop) {
        int c = accept(ls, NULL, NULL);
        if (c < 0) continue; /* EINTR at SIGTERM */
        char buf[512];
        (void)!read(c, buf, sizeof buf);
        handle_request();
        (void)!write(c, "HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nok\n", 42);
        close(c);
    }
    fprintf(stderr, "worker: stopping\n");
    exit(0);
}

int main(int argc, char **argv)
{
    if (argc < 4) return 2;
    int n = atoi(argv[2]);
    int log = open(argv[3], O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (log < 0 || dup2(log, 2) < 0) return 2;
    close(log);
    setvbuf(stderr, NULL, _IONBF, 0);
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 64) ||
        getsockname(ls, (struct sockaddr *)&a, &al))
        return 2;
    struct sigaction sa = {.sa_handler = on_term}; /* no SA_RESTART: accept returns */
    sigaction(SIGTERM, &sa, NULL);
    fprintf(stderr, "master: %d workers\n", n);
    pid_t kids[64];
    for (int i = 0; i < n && i < 64; i++)
        if ((kids[i] = fork()) == 0) worker(ls);
    FILE *pf = fopen(argv[1], "w");
    if (!pf) return 2;
    fprintf(pf, "%d\n", ntohs(a.sin_port));
    fclose(pf);
    while (!stop)
        pause();
    for (int i = 0; i < n; i++)
        kill(kids[i], SIGTERM);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        int st;
        waitpid(kids[i], &st, 0);
        bad += !WIFEXITED(st) || WEXITSTATUS(st);
    }
    fprintf(stderr, "master: %d workers stopped, %d failed\n", n, bad);
    return 0;
}
