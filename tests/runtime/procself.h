/* What the runtime's test programs read of their own process in /proc: the entries of
 * a directory (threads in /proc/self/task, descriptors in /proc/self/fd) and the
 * size of its mappings, to show that profiling added or leaked nothing. */
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

/* The size of every mapping of this process in KiB (/proc/self/maps), -1 if unreadable.
 * On a kernel it is VmSize (and x86-64's vsyscall page); under qemu-user, which answers
 * the guest's reads of its maps itself, the program's own mappings, where VmSize is
 * the emulator's (its threads' stacks, its translated code: 47 MB more after 50
 * sessions of prog_api, whose own mappings did not change). */
static inline long proc_vmsize_kb(void)
{
    unsigned long lo, hi, kb = 0;
    char line[4352]; /* a path is at most PATH_MAX long */
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2) kb += (hi - lo) / 1024;
    fclose(f);
    return (long)kb;
}

#endif
