/* rtfd — the runtime's own file descriptors (the perf engine's events, its epoll set and
 * its eventfd), kept out of the program's way.
 *
 * A program owns its descriptor table: it may close every descriptor above 2
 * (close_range(3, ~0U, 0), as daemons do), dup2 one of its files over any number, or
 * start with 0, 1 or 2 closed and expect its first open() to fill the gap. So each
 * descriptor the runtime keeps is
 *  - moved out of the program's reach where the limits allow: at or above the soft
 *    RLIMIT_NOFILE (up to 16,384) when the hard limit leaves room above it, the soft
 *    limit raised for the one F_DUPFD and put back (the kernel checks it only as it
 *    hands a number out), so the program opens as many files as unprofiled;
 *    elsewhere moved high (F_DUPFD_CLOEXEC at or above rtfd_base(), near the top of the
 *    soft limit but at most 1024), so that the numbers a program's open() hands out
 *    are the ones it would get unprofiled, though a program that opens files up to its
 *    limit gets as many fewer as the runtime keeps;
 *  - remembered by identity: its file's st_dev/st_ino/st_mode and, for a perf event,
 *    the kernel's unique event id (PERF_EVENT_IOC_ID: every anonymous-inode descriptor
 *    shares one inode, the id tells two perf events apart);
 *  - checked before every use (rtfd_ok): a descriptor the program closed or replaced is
 *    never written to, never ioctl'd, never closed. It is forgotten and counted
 *    (rtfd_lost), and the engine goes on without it.
 * What cannot be told apart: an eventfd or epoll set the program made and placed at
 * exactly the number of the runtime's own after closing it (both share the anonymous
 * inode and carry no id). The check and the use are two system calls: a program thread
 * that closes the number in between is not seen.
 *
 * Two tables. A runtime thread may have a descriptor table of its own (rtthread.h,
 * RT_OWN_FDS), where the program's descriptors are not, and where its own opens land.
 * Each descriptor remembers the table it was opened in (`table`). On a thread with a
 * table of its own, one of the program's table is imported at its first use there
 * (pidfd_getfd, at the same number, where that number is free or holds an earlier
 * import) and closing it closes the copy there at once and the program's at the next
 * rtfd_close_deferred() on a thread of the program's table. A thread of the program's
 * table does not use a descriptor of a runtime thread's own table: rtfd_ok says 0,
 * and nothing is counted lost.
 *
 * Signal handlers and inside malloc: rtfd_open_once() and rtfd_close() of its descriptor
 * (open, fstat, close, an atomic add: /proc/self/maps is read there); nothing else. */
#ifndef KESTREL_RTFD_H
#define KESTREL_RTFD_H
#include <stdint.h>
#include <sys/types.h>

struct rtfd {
    int fd;           /* -1: none, or forgotten */
    dev_t dev;        /* identity of the open file, from fstat at adoption */
    ino_t ino;        /* ... */
    mode_t type;      /* ... st_mode & S_IFMT */
    uint64_t perf_id; /* a perf event's PERF_EVENT_IOC_ID, 0 for other files */
    pid_t table;      /* the table it is in: 0 the program's, else rt_thread_table() */
};

/* The lowest number the runtime's descriptors take below the soft limit. */
int rtfd_base(void);
/* Whether the runtime's descriptors go above the soft RLIMIT_NOFILE, out of the
 * program's reach (the hard limit leaves room, the soft one is at most 16,384). */
int rtfd_can_go_above(void);

/* Takes ownership of `fd` (just opened by the runtime): moves it to rtfd_base() or
 * above (the original number is closed; where no high number is free it stays where it
 * is) and records its identity. `perf` says it is a perf event. Returns the descriptor
 * now in r->fd, or -errno with `fd` closed and r->fd = -1. */
int rtfd_adopt(struct rtfd *r, int fd, int perf);

/* Opens `path` read-only for one read (a /proc file) and records its identity at once,
 * where the number stays (transient: nothing is moved high). Returns the descriptor, or
 * -1 with errno. Close it with rtfd_close(), which leaves alone a number the program
 * dup2'd its own file over meanwhile (what remains is the moment between the open and
 * the fstat after it). */
int rtfd_open_once(struct rtfd *r, const char *path);

/* 1 when r->fd still refers to the file adopted, in the calling thread's table (where
 * it is imported to, see above); 0 for none. A descriptor found closed or replaced in
 * its own table is forgotten (r->fd = -1) and counted once. */
int rtfd_ok(struct rtfd *r);

/* Whether r->fd is still the runtime's file in the table it was opened in, for the
 * count of those the program closed or replaced: rtfd_ok, but on a runtime thread with
 * a table of its own, one of the program's table is looked at there (a copy the thread
 * took earlier stays its own whatever the program did since). 1 where it cannot be told
 * from the calling thread. A descriptor found closed or replaced is forgotten and
 * counted. */
int rtfd_held(struct rtfd *r);

/* Closes r->fd if it is still the runtime's; forgets it either way. */
void rtfd_close(struct rtfd *r);

/* The program's copies of descriptors closed on a runtime thread's own table: closed
 * now, where still the runtime's. On a thread of the program's table; not in a signal
 * handler. */
void rtfd_close_deferred(void);

/* Descriptors found closed or replaced since the last rtfd_lost_reset(). */
uint64_t rtfd_lost(void);
void rtfd_lost_reset(void);
#endif
