/* rtsay.c — the runtime's lines for the user (rtsay.h).
 * Signal handlers: rtsay. Inside malloc: rtsay. */
#include "runtime/rtsay.h"
#include "runtime/rtthread.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static char rtsay_channel[4096]; /* KESTREL_MESSAGES as the process started; "" none */

/* Read once, before anything can say something: getenv is not safe later on. */
__attribute__((constructor(101))) static void rtsay_init(void)
{
    const char *v = getenv("KESTREL_MESSAGES");
    if (v && *v && strlen(v) < sizeof rtsay_channel) strcpy(rtsay_channel, v);
}

void rtsay(const char *fmt, ...)
{
    int saved = errno;
    char line[1280];
    size_t o = 0;
    int fd = 2, own = rt_thread_table() != 0;
    if (!rtsay_channel[0] && own && (fd = rt_thread_program_fd(2)) < 0) {
        errno = saved; /* the program's stderr, from a runtime thread's own table */
        return;
    }
    if (rtsay_channel[0]) {
        /* "kestrel: pid N (exe): ..." in place of "kestrel: ...": the file holds the
         * lines of every process of the tree. */
        char exe[256];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = 0;
        const char *base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
        int k = snprintf(line, 320, "kestrel: pid %ld (%s): ", (long)syscall(SYS_getpid), base);
        o = k > 0 ? (size_t)(k < 320 ? k : 319) : 0;
        if (!strncmp(fmt, "kestrel: ", 9)) fmt += 9;
        fd = open(rtsay_channel, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
            errno = saved;
            return;
        }
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line + o, sizeof line - 1 - o, fmt, ap);
    va_end(ap);
    if (n > 0) {
        size_t len = o + ((size_t)n < sizeof line - 1 - o ? (size_t)n : sizeof line - 2 - o);
        line[len++] = '\n';
        (void)!write(fd, line, len);
    }
    if (fd != 2 || own) close(fd);
    errno = saved;
}
