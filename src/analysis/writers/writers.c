/* The writer table and atomic output (writers.h). */
#include "analysis/writers/writers.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern const struct writer writer_speedscope, writer_cpuprofile, writer_folded, writer_summary,
    writer_pprof, writer_html;

static const struct writer *const all[] = {
    &writer_speedscope, &writer_cpuprofile, &writer_folded,
    &writer_summary,    &writer_pprof,      &writer_html,
};

const struct writer *const *writers_all(size_t *n)
{
    *n = sizeof all / sizeof all[0];
    return all;
}

const struct writer *writers_find(const char *format)
{
    size_t n;
    const struct writer *const *w = writers_all(&n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(w[i]->format, format)) return w[i];
    return NULL;
}

/* Buffers the whole output in memory, then copies it to stdout: a failed writer
 * prints nothing. */
static int write_stdout(int (*fn)(void *, FILE *), void *ctx)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) return -errno;
    int rc = fn(ctx, mem);
    if (fclose(mem) && !rc) rc = -ENOMEM;
    if (!rc && (fwrite(buf, 1, len, stdout) != len || fflush(stdout))) rc = -errno ? -errno : -EIO;
    free(buf);
    return rc;
}

static int write_temp_then_rename(const char *path, int (*fn)(void *, FILE *), void *ctx)
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
        int e = -errno;
        free(tmp);
        return e;
    }
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask); /* mkstemp's 0600 would surprise a user */
    FILE *out = fdopen(fd, "w");
    int rc = out ? 0 : -errno;
    if (out) {
        rc = fn(ctx, out);
        if (fflush(out) && !rc) rc = -errno;
        if (ferror(out) && !rc) rc = -EIO;
        if (fclose(out) && !rc) rc = -errno;
    } else {
        close(fd);
    }
    if (!rc && rename(tmp, path)) rc = -errno;
    if (rc) unlink(tmp);
    free(tmp);
    return rc;
}

int atomic_write(const char *path, int (*fn)(void *ctx, FILE *out), void *ctx)
{
    int rc = !strcmp(path, "-") ? write_stdout(fn, ctx) : write_temp_then_rename(path, fn, ctx);
    if (rc && rc != -EINVAL)
        fprintf(stderr, "kestrel: %s: %s\n", strcmp(path, "-") ? path : "stdout", strerror(-rc));
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
