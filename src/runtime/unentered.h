/* unentered — whether a program about to be exec'd is one the runtime cannot enter:
 * statically linked (no dynamic loader to preload it), set-user-ID or set-group-ID, or
 * given file capabilities (the loader then runs in secure mode, AT_SECURE, and ignores
 * LD_PRELOAD). Such a process leaves no profile; the process that execs it says so in a
 * note the CLI lists (docs/raw-format.md, "Processes that left no profile").
 *
 * Signal handlers: nothing. Inside malloc: nothing. */
#ifndef KESTREL_UNENTERED_H
#define KESTREL_UNENTERED_H
#include <stddef.h>

/* The reason (a static string) why an exec of `file` (relative to dirfd; with `search`
 * looked up in PATH as execvp does) starts a program the runtime cannot enter, or NULL.
 * The file found is copied into path[size]. errno is kept. */
const char *unentered_why(int dirfd, const char *file, int search, char *path, size_t size);
#endif
