/* unentered.c — programs the runtime cannot enter (unentered.h).
 *
 * Signal handlers: nothing. Inside malloc: nothing. */
#include "runtime/unentered.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

/* The file an exec of `file` runs: itself when it has a '/' (or without search), else
 * the first executable of that name in PATH. 0, or -1. */
static int un_resolve(const char *file, int search, char *path, size_t size)
{
    if (!search || strchr(file, '/'))
        return (size_t)snprintf(path, size, "%s", file) < size ? 0 : -1;
    const char *dirs = getenv("PATH");
    if (!dirs) dirs = "/bin:/usr/bin";
    for (const char *p = dirs;;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        int n = snprintf(path, size, "%.*s%s%s", (int)len, p, len ? "/" : "", file);
        if (n > 0 && (size_t)n < size && access(path, X_OK) == 0) return 0;
        if (!end) return -1;
        p = end + 1;
    }
}

#if defined(__x86_64__)
#define UN_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define UN_MACHINE EM_AARCH64
#else
#define UN_MACHINE EM_NONE
#endif

/* An ELF executable with no PT_INTERP: no loader, so nothing is preloaded. A file that
 * cannot be read (mode 0711) or is not ELF (a script) is not called static, nor one
 * for another machine: an emulator runs it (binfmt_misc, qemu-user's own static
 * wrappers), and what that emulator loads is not known here. */
static int un_static(int dirfd, const char *path)
{
    int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    unsigned char id[EI_NIDENT];
    int is_static = 0;
    if (pread(fd, id, sizeof id, 0) == (ssize_t)sizeof id && !memcmp(id, ELFMAG, SELFMAG)) {
        int wide = id[EI_CLASS] == ELFCLASS64;
        Elf64_Ehdr e64;
        Elf32_Ehdr e32;
        uint64_t phoff = 0;
        unsigned phnum = 0, phentsize = 0, type = 0, machine = EM_NONE;
        if (wide && pread(fd, &e64, sizeof e64, 0) == (ssize_t)sizeof e64) {
            phoff = e64.e_phoff, phnum = e64.e_phnum, phentsize = e64.e_phentsize;
            type = e64.e_type, machine = e64.e_machine;
        } else if (!wide && pread(fd, &e32, sizeof e32, 0) == (ssize_t)sizeof e32) {
            phoff = e32.e_phoff, phnum = e32.e_phnum, phentsize = e32.e_phentsize;
            type = e32.e_type, machine = e32.e_machine;
        }
        is_static = (type == ET_EXEC || type == ET_DYN) && phnum > 0 && machine == UN_MACHINE &&
                    phentsize == (wide ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr));
        for (unsigned i = 0; i < phnum && is_static; i++) {
            uint32_t pt; /* p_type comes first in both classes */
            if (pread(fd, &pt, sizeof pt, (off_t)(phoff + (uint64_t)i * phentsize)) !=
                (ssize_t)sizeof pt)
                is_static = 0; /* unreadable: say nothing rather than guess */
            else if (pt == PT_INTERP)
                is_static = 0;
        }
    }
    close(fd);
    return is_static;
}

const char *unentered_why(int dirfd, const char *file, int search, char *path, size_t size)
{
    if (!file || !*file || size == 0) return NULL;
    int saved = errno;
    const char *why = NULL;
    struct stat st;
    if (un_resolve(file, search, path, size) == 0 && fstatat(dirfd, path, &st, 0) == 0 &&
        S_ISREG(st.st_mode)) {
        if (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
            ((st.st_mode & S_ISGID) && st.st_gid != getegid()))
            why = "set-user-ID or set-group-ID: the loader ignores preloading there; "
                  "`kestrel record --attach -- PROGRAM` (or -p PID) samples it from outside";
        else if (un_static(dirfd, path))
            why = "statically linked: the runtime cannot enter it; `kestrel record --attach "
                  "-- PROGRAM` (or -p PID) samples it from outside";
        else if (geteuid() != 0 && dirfd == AT_FDCWD &&
                 getxattr(path, "security.capability", NULL, 0) > 0)
            why = "given file capabilities: the loader runs it in secure mode (AT_SECURE) "
                  "and ignores preloading; `kestrel record --attach -- PROGRAM` (or -p "
                  "PID) samples it from outside";
    }
    errno = saved;
    return why;
}
