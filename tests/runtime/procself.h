/* What the runtime's test programs read of their own process in /proc: the entries of
 * a directory (threads in /proc/self/task, descriptors in /proc/self/fd) and the
 * virtual size, to show that profiling added or leaked nothing. */
#ifndef KESTREL_TESTS_RUNTIME_PROCSELF_H
#define KESTREL_TESTS_RUNTIME_PROCSELF_H
#include <dirent.h>
#include <stdio.h>

/* Entries of dir, "." and ".." left out. */
static inline int proc_entries(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d) closedir(d);
    return n;
}

/* VmSize of this process in KiB, -1 if unreadable. */
static inline long proc_vmsize_kb(void)
{
    long vm = -1;
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "VmSize: %ld", &vm) == 1) break;
    if (f) fclose(f);
    return vm;
}

#endif
