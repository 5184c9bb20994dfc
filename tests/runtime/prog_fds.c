/* A program that treats its descriptor table as its own, as daemons and shells do:
 *
 *   prog_fds dup2 LOG exit|exec   opens LOG, dup2s it over every anonymous-inode
 *                                 descriptor it has (eventfds, epoll sets, perf events:
 *                                 none are its own), writes 0123456789 to LOG, works,
 *                                 then exits, or execs a shell that lists which of those
 *                                 numbers it still has open (the shell unprofiled);
 *   prog_fds closerange LOG       close_range(3, ~0U, 0), then opens LOG (which gets 3)
 *                                 and /dev/null six times (4..9), writes 0123456789 to
 *                                 LOG, works, and execs a shell that lists 3..9;
 *   prog_fds stdout LOG           run with descriptor 1 closed: opens LOG, which should
 *                                 become descriptor 1, and prints its lines there.
 * Unprofiled, LOG holds 0123456789 (or the lines) and the shell lists every number. */
#include "burn.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void work(void)
{
    for (int i = 0; i < 20; i++)
        burn_cpu_us(10000);
}

static int open_log(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(path);
        exit(2);
    }
    return fd;
}

static void exec_lister(const char *numbers)
{
    char script[512];
    snprintf(script, sizeof script,
             "for f in %s; do [ -e /proc/$$/fd/$f ] && printf '%%s ' $f; done; echo", numbers);
    unsetenv("LD_PRELOAD"); /* the shell unprofiled: its descriptors are the ones it got */
    execl("/bin/sh", "sh", "-c", script, (char *)NULL);
    perror("exec");
    exit(3);
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    if (strcmp(argv[1], "dup2") == 0 && argc == 4) {
        int log = open_log(argv[2]);
        char numbers[4096] = "";
        size_t o = 0;
        int n = 0;
        DIR *d = opendir("/proc/self/fd");
        struct dirent *e;
        int dfd = dirfd(d);
        while ((e = readdir(d))) {
            int fd = atoi(e->d_name);
            char link[256], path[300];
            snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
            ssize_t len = readlink(path, link, sizeof link - 1);
            if (e->d_name[0] == '.' || fd == dfd || len <= 0) continue;
            link[len] = 0;
            if (strncmp(link, "anon_inode:", 11) != 0) continue;
            if (dup2(log, fd) != fd) return 4;
            o += (size_t)snprintf(numbers + o, sizeof numbers - o, "%d ", fd);
            n++;
        }
        closedir(d);
        fprintf(stderr, "replaced %d: %s\n", n, numbers);
        if (write(log, "0123456789", 10) != 10) return 5;
        work();
        if (strcmp(argv[3], "exec") == 0) exec_lister(n ? numbers : "none");
        return 0;
    }
    if (strcmp(argv[1], "closerange") == 0) {
        if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0) return 4;
        int log = open_log(argv[2]);
        for (int i = 0; i < 6; i++)
            if (open("/dev/null", O_RDONLY) < 0) return 4;
        fprintf(stderr, "log fd %d\n", log);
        if (write(log, "0123456789", 10) != 10) return 5;
        work();
        exec_lister("3 4 5 6 7 8 9");
    }
    if (strcmp(argv[1], "stdout") == 0) {
        int log = open_log(argv[2]);
        fprintf(stderr, "log fd %d\n", log);
        for (int i = 0; i < 5; i++) {
            printf("line %d\n", i);
            fflush(stdout);
            work();
        }
        return 0;
    }
    return 2;
}
