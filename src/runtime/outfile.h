/* outfile — where a profile file is written: a regular file (or a path where nothing
 * is yet) through a temporary name renamed into place, so that a reader never sees
 * half a file; anything else is never replaced by a regular file. A symlink is
 * followed, and its target written as the target would be. A character or block
 * device (/dev/null, /dev/full, a tty) is written in place. A FIFO is written in place
 * when it has a reader, else refused (-ENXIO) rather than block the exit. A socket or
 * a directory is refused.
 *
 * Signal handlers: outfile_open and outfile_commit may run in a fatal signal's flush
 * (system calls; realpath only for a symlink). Inside malloc: nothing. */
#ifndef KESTREL_OUTFILE_H
#define KESTREL_OUTFILE_H
#include <stddef.h>

struct outfile {
    int fd;            /* write the profile here */
    int in_place;      /* 1: the file itself; 0: `tmp`, renamed to `final` */
    char final[4200];  /* the path written (a symlink's target) */
    char tmp[4240];
};

/* Opens the file for `path`; `pid` names the temporary file. 0 or -errno. */
int outfile_open(struct outfile *o, const char *path, int pid);
/* Closes it and, for a temporary file, renames it into place; with err != 0 (the
 * writing failed) removes the temporary file instead. Returns err, or the first error
 * of closing and renaming. */
int outfile_commit(struct outfile *o, int err);
#endif
