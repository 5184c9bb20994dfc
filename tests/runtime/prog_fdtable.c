/* A program that looks at its threads' descriptor tables (tests/runtime/test_fd_table.py):
 *
 *   prog_fdtable SECONDS [thread]
 *       opens /dev/null 16 times (files of its own), works 0.3 s in before_thread(),
 *       then prints "task NAME FDS EPOLLS" for each of its threads, with the number of
 *       descriptors in that thread's table (/proc/self/task/TID/fd; the program's own
 *       table also holds 0-2 and the two directories it reads) and the numbers of the
 *       epoll sets there (comma-separated, "-" for none). With `thread`, it then
 *       makes a thread that works 0.5 s in in_thread() while main works 0.5 s in
 *       after_thread(), joins it and prints the lines again, each as
 *       "after NAME FDS EPOLLS".
 *       Then "closing": it closes descriptor 1 and works SECONDS of CPU, printing "done"
 *       on stderr at its end. The one reading its stdout sees the end of it as the
 *       program closes it, not as the program ends: no thread of the process holds a
 *       copy. */
#include "burn.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The number of descriptors in thread tid's table, and its epoll sets' numbers. */
static int count_fds(const char *tid, char *epolls, size_t size)
{
    char path[320];
    snprintf(path, sizeof path, "/proc/self/task/%s/fd", tid);
    DIR *d = opendir(path);
    if (!d) return -1;
    int n = 0;
    size_t o = 0;
    epolls[0] = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        n++;
        char link[600], target[64];
        snprintf(link, sizeof link, "%s/%s", path, e->d_name);
        ssize_t len = readlink(link, target, sizeof target - 1);
        target[len > 0 ? len : 0] = 0;
        if (strcmp(target, "anon_inode:[eventpoll]") == 0 && o + 16 < size)
            o += (size_t)snprintf(epolls + o, size - o, "%s%s", o ? "," : "", e->d_name);
    }
    closedir(d);
    return n;
}

static void list_tasks(const char *word)
{
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks) exit(2);
    for (struct dirent *e; (e = readdir(tasks));) {
        if (e->d_name[0] == '.') continue;
        char path[320], comm[32] = "?";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = 0;
            fclose(f);
        }
        char epolls[256];
        int n = count_fds(e->d_name, epolls, sizeof epolls);
        printf("%s %s %d %s\n", word, comm, n, *epolls ? epolls : "-");
    }
    closedir(tasks);
}

/* Not tail calls, and not folded into one: each keeps its frame while burn_cpu_us runs. */
__attribute__((noinline)) static void before_thread(void) { burn_cpu_us(300000); prog_sink += 1; }
__attribute__((noinline)) static void in_thread(void) { burn_cpu_us(500000); prog_sink += 2; }
__attribute__((noinline)) static void after_thread(void) { burn_cpu_us(500000); prog_sink += 3; }

static void *worker(void *arg)
{
    (void)arg;
    in_thread();
    return NULL;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 2;
    for (int i = 0; i < 16; i++)
        if (open("/dev/null", O_RDONLY) < 0) return 2;
    before_thread();
    list_tasks("task");
    if (argc > 2 && strcmp(argv[2], "thread") == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker, NULL) != 0) return 3;
        after_thread();
        pthread_join(t, NULL);
        list_tasks("after");
    }
    printf("closing\n");
    fflush(stdout);
    close(1);
    burn_cpu_us((long)(secs * 1e6));
    fprintf(stderr, "done\n");
    return 0;
}
