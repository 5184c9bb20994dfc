/* Picks a reader by content: gzip or protobuf is pprof, a JSON object is the raw
 * CPU profile. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/readers/readers.h"

/* Reads fd whole; a pipe or FIFO opened without blocking is waited on with poll()
 * while a writer is there, and its end (or no writer at all) ends the input. */
static ssize_t read_some(int fd, char *buf, size_t n)
{
    for (;;) {
        ssize_t got = read(fd, buf, n);
        if (got >= 0 || errno == EINTR) {
            if (got >= 0) return got;
            continue;
        }
        if (errno != EAGAIN) return -1;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, -1) < 0 && errno != EINTR) return -1;
    }
}

/* The input whole, at most READ_MAX_FILE bytes, never more memory than that: a
 * regular file, a pipe or FIFO, or "-" (stdin). A FIFO is opened without blocking,
 * so one with no writer is an empty input at once rather than a wait for ever; a
 * device (/dev/zero, a terminal) or a socket is refused. */
static char *slurp(const char *path, size_t *len, char *why, size_t why_size)
{
    int is_stdin = !strcmp(path, "-");
    int fd = is_stdin ? 0 : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, why_size, "%s", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st)) {
        snprintf(why, why_size, "%s", strerror(errno));
        if (!is_stdin) close(fd);
        return NULL;
    }
    int regular = S_ISREG(st.st_mode);
    const char *refused = S_ISDIR(st.st_mode) ? "is a directory"
                          : !regular && !S_ISFIFO(st.st_mode)
                              ? "is not a regular file or a pipe (kestrel reads profiles from "
                                "files, pipes and - for stdin)"
                              : NULL;
    if (!refused && regular && (uint64_t)st.st_size > READ_MAX_FILE) {
        snprintf(why, why_size, "%.1f GiB; kestrel reads profiles of at most %llu GiB",
                 (double)st.st_size / (1 << 30), READ_MAX_FILE >> 30);
        refused = why;
    }
    if (refused) {
        if (refused != why) snprintf(why, why_size, "%s", refused);
        if (!is_stdin) close(fd);
        return NULL;
    }
    /* A regular file's size is known: one buffer of that size (and a byte to see that
     * it did not grow), not a doubling one. A pipe grows up to the same limit, and the
     * buffer never past it. */
    size_t cap = regular ? (size_t)st.st_size + 1 : 1 << 16, n = 0;
    char *buf = malloc(cap);
    int err = 0, over = 0;
    while (buf) {
        ssize_t got = read_some(fd, buf + n, cap - n);
        if (got < 0) {
            err = errno;
            break;
        }
        if (got == 0) break;
        n += (size_t)got;
        if (n < cap) continue;
        if (n > READ_MAX_FILE) {
            over = 1;
            break;
        }
        size_t grown = cap * 2 > READ_MAX_FILE + 1 ? READ_MAX_FILE + 1 : cap * 2;
        char *q = realloc(buf, grown);
        if (!q) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = q;
        cap = grown;
    }
    if (!is_stdin) close(fd);
    if (buf && !err && !over && !n && !regular) {
        snprintf(why, why_size, "nothing to read (a pipe or FIFO with no writer, or empty)");
        free(buf);
        return NULL;
    }
    if (!buf || err || over) {
        if (over)
            snprintf(why, why_size, "more than %llu GiB; kestrel reads profiles of at most that",
                     READ_MAX_FILE >> 30);
        else
            snprintf(why, why_size, "%s", buf ? strerror(err) : "out of memory");
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

size_t read_memory_budget(size_t n)
{
    uint64_t b = READ_MEMORY_BASE + (uint64_t)n * READ_MEMORY_PER_BYTE;
    return (size_t)(b < READ_MEMORY_MAX ? b : READ_MEMORY_MAX);
}

int read_over_budget(char *why, size_t why_size, size_t budget, size_t n)
{
    snprintf(why, why_size,
             "would take more than %zu MiB of memory to read (kestrel's limit for %zu bytes of "
             "profile: %llu MiB + %d bytes a byte, at most %llu GiB)",
             budget >> 20, n, READ_MEMORY_BASE >> 20, READ_MEMORY_PER_BYTE, READ_MEMORY_MAX >> 30);
    return -1;
}

struct profile *read_profile(const char *path, char *why, size_t why_size)
{
    size_t len;
    char *buf = slurp(path, &len, why, why_size);
    if (!buf) return NULL;
    struct profile *p = NULL;
    size_t i = 0;
    while (i < len && strchr(" \t\r\n", buf[i]))
        i++;
    if (!len)
        snprintf(why, why_size, "empty file");
    else if (buf[i] == '{')
        p = read_raw_json(buf, len, why, why_size);
    else
        p = read_pprof(buf, len, why, why_size);
    free(buf);
    if (p && !(p->source = strdup(path))) {
        profile_free(p);
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    return p;
}
