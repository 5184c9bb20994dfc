/* Whether a program is statically linked (cli.h): an ELF file with no PT_INTERP has
 * no dynamic loader, so LD_PRELOAD never loads the runtime into it. */
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

/* The file execvp would run for name: name itself when it has a '/', else the first
 * executable of that name in $PATH. 0, or -1 when there is none. */
static int program_file(const char *name, char *out, size_t size)
{
    if (strchr(name, '/')) return snprintf(out, size, "%s", name) < (int)size ? 0 : -1;
    const char *path = getenv("PATH");
    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path;; p++) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (snprintf(out, size, "%.*s%s%s", (int)len, len ? p : ".", "/", name) < (int)size &&
            !access(out, X_OK))
            return 0;
        if (!end) return -1;
        p = end;
    }
}

int cli_static_program(const char *name)
{
    char file[PATH_MAX];
    if (program_file(name, file, sizeof file)) return 0;
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    Elf64_Ehdr eh;
    int is_static = 0;
    if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
        eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr) &&
        (eh.e_type == ET_EXEC || eh.e_type == ET_DYN)) {
        is_static = 1;
        for (unsigned i = 0; i < eh.e_phnum && is_static; i++) {
            Elf64_Phdr ph;
            if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph)
                is_static = 0; /* unreadable: say nothing rather than guess */
            else if (ph.p_type == PT_INTERP)
                is_static = 0;
        }
    }
    close(fd);
    return is_static;
}

int cli_setid_program(const char *name)
{
    char file[PATH_MAX];
    struct stat st;
    if (program_file(name, file, sizeof file) || stat(file, &st)) return 0;
    return ((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
           ((st.st_mode & S_ISGID) && st.st_gid != getegid());
}
