/* proc.c — readers of /proc/PID for the attached host (proc.h). */
#include "attach/proc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The whole of a /proc file (malloc'd, NUL-terminated), or NULL with errno set. */
static char *slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    size_t cap = 8192, n = 0;
    char *b = malloc(cap);
    for (;;) {
        if (!b) break;
        if (n + 1 == cap) {
            char *p = realloc(b, cap *= 2);
            if (!p) {
                free(b);
                b = NULL;
                break;
            }
            b = p;
        }
        ssize_t got = read(fd, b + n, cap - 1 - n);
        if (got < 0) {
            int e = errno;
            free(b);
            b = NULL;
            errno = e;
            break;
        }
        if (got == 0) break;
        n += (size_t)got;
    }
    close(fd);
    if (b) b[n] = 0;
    if (len) *len = n;
    return b;
}

int proc_maps(pid_t pid, int (*fn)(const struct proc_map *m, void *arg), void *arg)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    char *b = slurp(path, NULL);
    if (!b) return -errno;
    struct proc_map *m = malloc(sizeof *m);
    int rc = m ? 0 : -ENOMEM;
    for (char *line = b, *next; !rc && line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        char perms[8] = "";
        int at = 0;
        unsigned long long s, e, off, ino;
        if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &s, &e, perms, &off, &m->dev_major,
                   &m->dev_minor, &ino, &at) < 7)
            continue;
        m->start = s, m->end = e, m->offset = off, m->ino = ino;
        m->read = perms[0] == 'r';
        m->exec = perms[2] == 'x';
        const char *p = at ? line + at : "";
        while (*p == ' ') p++;
        snprintf(m->path, sizeof m->path, "%s", p);
        rc = fn(m, arg);
    }
    free(m);
    free(b);
    return rc < 0 ? rc : 0;
}

struct mapping_at {
    uint64_t addr, lo, hi;
};

static int mapping_at_fn(const struct proc_map *m, void *arg)
{
    struct mapping_at *a = arg;
    if (a->addr < m->start || a->addr >= m->end) return 0;
    a->lo = m->start, a->hi = m->end;
    return 1;
}

int proc_mapping_at(pid_t pid, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
    struct mapping_at a = {addr, 0, 0};
    int rc = proc_maps(pid, mapping_at_fn, &a);
    if (rc < 0) return rc;
    if (!a.hi) return -ENOENT;
    *lo = a.lo, *hi = a.hi;
    return 0;
}

int proc_tasks(pid_t pid, pid_t **tids, size_t *n)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d) return -errno;
    size_t cap = 16;
    *n = 0;
    *tids = malloc(cap * sizeof **tids);
    struct dirent *de;
    while (*tids && (de = readdir(d))) {
        if (!isdigit((unsigned char)de->d_name[0])) continue;
        if (*n == cap) {
            pid_t *p = realloc(*tids, (cap *= 2) * sizeof **tids);
            if (!p) {
                free(*tids);
                *tids = NULL;
                break;
            }
            *tids = p;
        }
        (*tids)[(*n)++] = (pid_t)atoi(de->d_name);
    }
    closedir(d);
    return *tids ? 0 : -ENOMEM;
}

void proc_comm(pid_t pid, pid_t tid, char *out, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/comm", (int)pid, (int)tid);
    char *b = slurp(path, NULL);
    out[0] = 0;
    if (!b) return;
    b[strcspn(b, "\n")] = 0;
    snprintf(out, size, "%s", b);
    free(b);
}

pid_t proc_ppid(pid_t pid, int *kthread)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    char *b = slurp(path, NULL);
    if (kthread) *kthread = 0;
    if (!b) return 0;
    /* pid (comm) state ppid pgrp session tty tpgid flags: comm may hold anything but
     * ends at the last ')'. */
    char *r = strrchr(b, ')');
    int ppid = 0;
    unsigned long flags = 0;
    if (r) sscanf(r + 1, " %*c %d %*d %*d %*d %*d %lu", &ppid, &flags);
    if (kthread) *kthread = (flags & 0x00200000) != 0; /* PF_KTHREAD */
    free(b);
    return (pid_t)ppid;
}

void proc_exe(pid_t pid, char *out, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(path, out, size - 1);
    out[n > 0 ? n : 0] = 0;
}

int proc_cmdline(pid_t pid, char ***argv, size_t *n)
{
    char path[64];
    size_t len;
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    char *b = slurp(path, &len);
    *argv = NULL;
    *n = 0;
    if (!b) return -errno;
    size_t k = 0;
    for (size_t i = 0; i < len; i += strlen(b + i) + 1) k++;
    /* The pointers first, then the bytes, in one block. */
    char **v = malloc(k * sizeof *v + len + 1);
    if (!v) return free(b), -ENOMEM;
    char *s = (char *)(v + k);
    memcpy(s, b, len + 1);
    for (size_t i = 0, j = 0; i < len; i += strlen(s + i) + 1) v[j++] = s + i;
    free(b);
    *argv = v;
    *n = k;
    return 0;
}

pid_t proc_nspid(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    char *b = slurp(path, NULL);
    pid_t ns = pid;
    char *l = b ? strstr(b, "\nNSpid:") : NULL;
    if (l) {
        l += 7;
        char *end = strchr(l, '\n');
        if (end) *end = 0;
        char *last = strrchr(l, '\t');
        if (!last) last = strrchr(l, ' ');
        if (last) ns = (pid_t)atoi(last + 1);
    }
    free(b);
    return ns > 0 ? ns : pid;
}

uid_t proc_uid(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    char *b = slurp(path, NULL);
    unsigned uid = (unsigned)-1;
    char *l = b ? strstr(b, "\nUid:") : NULL;
    if (l) sscanf(l + 5, "%u", &uid);
    free(b);
    return (uid_t)uid;
}

pid_t proc_tgid(pid_t tid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
    char *b = slurp(path, NULL);
    int tgid = 0;
    char *l = b ? strstr(b, "\nTgid:") : NULL;
    if (l) sscanf(l + 6, "%d", &tgid);
    free(b);
    return (pid_t)tgid;
}
