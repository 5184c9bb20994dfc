/* proc — what /proc says of another process: its executable mappings, threads, names,
 * parent and command line, read from outside and never written. */
#ifndef KESTREL_ATTACH_PROC_H
#define KESTREL_ATTACH_PROC_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One line of /proc/PID/maps. */
struct proc_map {
    uint64_t start, end, offset;
    unsigned dev_major, dev_minor;
    uint64_t ino;
    int exec, read;
    char path[4096]; /* "" for anonymous memory; "[vdso]", "[stack]"...; may end in " (deleted)" */
};

/* Calls fn for every mapping, in address order. 0, or -errno when the file cannot be
 * read (the process is gone: -ENOENT or -ESRCH). */
int proc_maps(pid_t pid, int (*fn)(const struct proc_map *m, void *arg), void *arg);

/* The mapping of pid holding addr: 0 with [*lo, *hi), or -errno (-ENOENT none). */
int proc_mapping_at(pid_t pid, uint64_t addr, uint64_t *lo, uint64_t *hi);

/* The thread ids of /proc/PID/task, into a malloc'd array (*n of them). 0 or -errno. */
int proc_tasks(pid_t pid, pid_t **tids, size_t *n);

/* A thread's name (comm), "" when gone. */
void proc_comm(pid_t pid, pid_t tid, char *out, size_t size);

/* The parent's pid, 0 when unknown; whether it is a kernel thread (*kthread). */
pid_t proc_ppid(pid_t pid, int *kthread);

/* The executable's path as the process names it (readlink of /proc/PID/exe), "" when
 * unknown. */
void proc_exe(pid_t pid, char *out, size_t size);

/* The command line: *n strings in one malloc'd block (*argv, freed with free()). */
int proc_cmdline(pid_t pid, char ***argv, size_t *n);

/* The pid the process has in its own pid namespace (NSpid's last field), or pid. */
pid_t proc_nspid(pid_t pid);

/* The process a thread belongs to (Tgid), 0 when gone. */
pid_t proc_tgid(pid_t tid);

/* Whether the process's thread tid is the owner of a uid other than ours. */
uid_t proc_uid(pid_t pid);
#endif
