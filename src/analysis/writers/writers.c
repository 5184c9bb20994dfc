/* The writer table and atomic output (writers.h). */
#include "analysis/writers/writers.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern const struct writer writer_speedscope, writer_cpuprofile, writer_folded, writer_summary,
    writer_pprof, writer_html, writer_otlp;

static const struct writer *const all[] = {
    &writer_speedscope, &writer_cpuprofile, &writer_folded,
    &writer_summary,    &writer_pprof,      &writer_html, &writer_otlp,
};

const struct writer *const *writers_all(size_t *n)
{
    *n = sizeof all / sizeof all[0];
    return all;
}

int writer_export_only(const struct writer *w)
{
    return w == &writer_otlp;
}

const struct writer *writers_find(const char *format)
{
    size_t n;
    const struct writer *const *w = writers_all(&n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(w[i]->format, format)) return w[i];
    return NULL;
}

/* ------------------------------------------------------------------ output
 *
 * Where the output goes decides how it is written:
 * - a regular file (or a path that does not exist yet): a temporary file beside it,
 *   renamed over it when complete; a symlink to a regular file keeps the symlink and
 *   has its target replaced the same way;
 * - a character device or a FIFO (/dev/null, /dev/stdout on a pipe or a terminal, a
 *   named pipe): written in place, never replaced by a regular file; the output is
 *   made in memory first, so a failed writer writes nothing there;
 * - anything else (a directory, a block device, a socket): refused.
 * Every error keeps the errno of the call that failed ("No space left on device",
 * not the "Input/output error" a FILE's error flag alone would give). */

/* A FILE over a descriptor that remembers the first write error's errno. */
struct out_sink {
    int fd;
    int err;
};

/* Writes all of buf; 0, or -errno. */
static int out_write_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t k = write(fd, buf, len);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return k < 0 ? -errno : -EIO;
        buf += k;
        len -= (size_t)k;
    }
    return 0;
}

static ssize_t out_sink_write(void *cookie, const char *buf, size_t len)
{
    struct out_sink *s = cookie;
    int rc = s->err ? -s->err : out_write_all(s->fd, buf, len);
    if (rc && !s->err) s->err = -rc;
    return rc ? 0 : (ssize_t)len; /* 0: an error, for stdio */
}

/* Runs fn into memory (*buf, *len): the output is written only once complete. */
static int out_to_memory(int (*fn)(void *, FILE *), void *ctx, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    FILE *mem = open_memstream(buf, len);
    if (!mem) return -errno;
    int rc = fn(ctx, mem);
    if (fclose(mem) && !rc) rc = -ENOMEM;
    if (rc) free(*buf), *buf = NULL;
    return rc;
}

/* Why no file can be made beside path, naming its directory. */
static void out_dir_why(const char *path, int err, char *why, size_t why_size)
{
    const char *slash = strrchr(path, '/');
    const char *dir = slash ? path : ".";
    int len = !slash || slash == path ? 1 : (int)(slash - path);
    if (err == ENOENT)
        snprintf(why, why_size, "directory %.*s does not exist", len, dir);
    else if (err == ENOTDIR)
        snprintf(why, why_size, "%.*s is not a directory", len, dir);
    else
        snprintf(why, why_size, "cannot create a file in %.*s: %s", len, dir, strerror(err));
}

static int out_temp_then_rename(const char *path, int (*fn)(void *, FILE *), void *ctx,
                                char *why, size_t why_size)
{
    /* The temporary file lives beside path, so the rename stays in one filesystem. */
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    if (!tmp) return -ENOMEM;
    snprintf(tmp, n, "%.*s.%s.XXXXXX", (int)dir_len, path, path + dir_len);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        out_dir_why(path, e, why, why_size);
        free(tmp);
        return -e;
    }
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask); /* mkstemp's 0600 would surprise a user */
    struct out_sink sink = {fd, 0};
    FILE *out = fopencookie(&sink, "w", (cookie_io_functions_t){.write = out_sink_write});
    int rc = out ? 0 : -errno;
    if (out) {
        rc = fn(ctx, out);
        if (fflush(out) && !rc) rc = -EIO;
        if (fclose(out) && !rc) rc = -EIO;
        /* The descriptor's own error is the reason; the writer's -EIO only echoes it. */
        if (sink.err && rc != -EINVAL) rc = -sink.err;
    }
    if (close(fd) && !rc) rc = -errno;
    if (!rc && rename(tmp, path)) rc = -errno;
    if (rc) unlink(tmp);
    free(tmp);
    return rc;
}

/* Writes in place, opened only once the output is complete: a character device, a
 * FIFO, stdout, or the target a dangling symlink names. */
static int out_in_place(const char *path, int fd, int flags, int (*fn)(void *, FILE *), void *ctx)
{
    char *buf;
    size_t len;
    int rc = out_to_memory(fn, ctx, &buf, &len);
    if (rc) return rc;
    if (path && (fd = open(path, O_WRONLY | O_CLOEXEC | flags, 0666)) < 0) rc = -errno;
    if (!rc) rc = out_write_all(fd, buf, len);
    if (path && fd >= 0 && close(fd) && !rc) rc = -errno;
    free(buf);
    return rc;
}

static int out_file(const char *path, int (*fn)(void *, FILE *), void *ctx, char *why,
                    size_t why_size)
{
    struct stat st, lst;
    if (stat(path, &st)) {
        int e = errno;
        if (e == ENOTDIR) out_dir_why(path, e, why, why_size);
        if (e != ENOENT) return -e;
        /* A symlink to nothing yet: its target is made, as a shell's `>` would. */
        if (!lstat(path, &lst) && S_ISLNK(lst.st_mode))
            return out_in_place(path, -1, O_CREAT | O_TRUNC, fn, ctx);
        return out_temp_then_rename(path, fn, ctx, why, why_size);
    }
    if (S_ISREG(st.st_mode)) {
        if (lstat(path, &lst) || !S_ISLNK(lst.st_mode))
            return out_temp_then_rename(path, fn, ctx, why, why_size);
        /* Replace the file the symlink points to, not the symlink. */
        char *target = realpath(path, NULL);
        if (!target) return -errno;
        int rc = out_temp_then_rename(target, fn, ctx, why, why_size);
        free(target);
        return rc;
    }
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return out_in_place(path, -1, O_TRUNC, fn, ctx);
    if (S_ISDIR(st.st_mode)) return -EISDIR;
    snprintf(why, why_size, "is a %s; kestrel writes regular files, character devices and FIFOs",
             S_ISBLK(st.st_mode) ? "block device" : S_ISSOCK(st.st_mode) ? "socket" : "special file");
    return -EPERM;
}

int atomic_write(const char *path, int (*fn)(void *ctx, FILE *out), void *ctx)
{
    char why[512] = "";
    int to_stdout = !strcmp(path, "-");
    if (to_stdout) fflush(stdout);
    int rc = to_stdout ? out_in_place(NULL, STDOUT_FILENO, 0, fn, ctx) : out_file(path, fn, ctx, why, sizeof why);
    if (rc && rc != -EINVAL)
        fprintf(stderr, "kestrel: %s: %s\n", to_stdout ? "stdout" : path, why[0] ? why : strerror(-rc));
    return rc;
}

struct writer_call {
    const struct writer *w;
    const struct profile *p;
    const struct summary *s;
};

static int call_writer(void *ctx, FILE *out)
{
    const struct writer_call *c = ctx;
    return c->w->write(c->p, c->s, out);
}

int writer_write_file(const struct writer *w, const struct profile *p, const struct summary *s,
                      const char *path)
{
    struct writer_call c = {w, p, s};
    return atomic_write(path, call_writer, &c);
}
