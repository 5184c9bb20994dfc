/* outfile.c — the profile files' destination (outfile.h).
 *
 * Signal handlers: everything here (open, stat, rename, unlink; realpath for a
 * symlink). Inside malloc: nothing. */
#include "runtime/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int outfile_open(struct outfile *o, const char *path, int pid)
{
    o->fd = -1;
    o->in_place = 0;
    struct stat st;
    if ((size_t)snprintf(o->final, sizeof o->final, "%s", path) >= sizeof o->final)
        return -ENAMETOOLONG;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        char target[PATH_MAX];
        if (realpath(path, target)) snprintf(o->final, sizeof o->final, "%s", target);
        /* a dangling link: its target is created as a regular file, through the link */
    }
    if (stat(o->final, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) return -EISDIR;
        if (S_ISSOCK(st.st_mode)) return -ENXIO;
        int flags = O_WRONLY | O_NOCTTY | O_CLOEXEC | (S_ISFIFO(st.st_mode) ? O_NONBLOCK : 0);
        o->fd = open(o->final, flags);
        if (o->fd < 0) return -errno; /* a FIFO with no reader: ENXIO */
        if (S_ISFIFO(st.st_mode)) fcntl(o->fd, F_SETFL, O_WRONLY); /* blocking writes */
        o->in_place = 1;
        return 0;
    }
    if ((size_t)snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%d", o->final, pid) >= sizeof o->tmp)
        return -ENAMETOOLONG;
    o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    return o->fd < 0 ? -errno : 0;
}

int outfile_commit(struct outfile *o, int err)
{
    if (o->fd >= 0 && close(o->fd) != 0 && !err) err = -errno;
    o->fd = -1;
    if (o->in_place) return err;
    if (!err && rename(o->tmp, o->final) != 0) err = -errno;
    if (err) unlink(o->tmp);
    return err;
}
