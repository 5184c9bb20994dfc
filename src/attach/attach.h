/* attach — the attached host: kestrel record -p/-a/--attach. Samples processes from
 * outside with perf events (events.h), walks each sample's stack copy with the
 * runtime's walker over the target's image files (uwtab.h), and writes one raw profile
 * per process into a folder, as the runtime does for `record -- PROGRAM`. */
#ifndef KESTREL_ATTACH_H
#define KESTREL_ATTACH_H
#include <stddef.h>
#include <sys/types.h>

struct attach_options {
    const pid_t *pids;  /* -p; n_pids of them */
    size_t n_pids;
    int all;            /* -a: every process */
    int children;       /* --children: fork children of the targets too */
    double duration;    /* --duration seconds; 0: until the targets end or a signal */
    unsigned hz;        /* -F */
    int mode;           /* enum uw_mode */
    char **argv;        /* --attach: the program to start and sample */
    int after_exec;     /* --attach: open the events once it has exec'd (a program whose
                           ids change at its exec: the kernel drops the events it had) */
};

/* Records into raw_dir (<pid>.raw.json per process, copies of unreachable images in
 * raw_dir/images). *status: the program's wait status with argv, else -1. Returns 0,
 * or 1 after one line on stderr saying why nothing was recorded. */
int attach_record(const struct attach_options *o, const char *raw_dir, int *status);

/* Checks a target pid before anything is opened: 0, or 1 after one line on stderr
 * (no such process, kestrel itself, a kernel thread). */
int attach_check_pid(pid_t pid);

/* The walk's mode for `--unwind NAME` (NULL: auto); the name was checked. */
int attach_unwind_mode(const char *name);
#endif
