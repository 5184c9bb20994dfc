/* A program that looks at its threads' descriptor tables (tests/runtime/test_fd_table.py):
 *
 *   prog_fdtable SECONDS   after 300 ms (the runtime's threads are up), prints a line
 *                          "task NAME FDS" for each of its threads, with the number of
 *                          descriptors in that thread's table (/proc/self/task/TID/fd;
 *                          the program's own table holds 0-2 and two directories),
 *                          then "closing", closes descriptor 1 and works SECONDS of CPU,
 *                          printing "done" on stderr at its end. The one reading its
 *                          stdout sees the end of it as the program closes it, not as
 *                          the program ends: no thread of the process holds a copy. */
#include "burn.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int count_fds(const char *tid)
{
    char path[320];
    snprintf(path, sizeof path, "/proc/self/task/%s/fd", tid);
    DIR *d = opendir(path);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n; /* with this program's two open directories, where its table is */
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 2;
    usleep(300000);
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks) return 2;
    for (struct dirent *e; (e = readdir(tasks));) {
        if (e->d_name[0] == '.') continue;
        char path[320], comm[32] = "?";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = 0;
            fclose(f);
        }
        printf("task %s %d\n", comm, count_fds(e->d_name));
    }
    closedir(tasks);
    printf("closing\n");
    fflush(stdout);
    close(1);
    burn_cpu_us((long)(secs * 1e6));
    fprintf(stderr, "done\n");
    return 0;
}
