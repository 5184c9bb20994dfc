/* Picks a reader by content: gzip or protobuf is pprof, a JSON object is the raw
 * CPU profile. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/readers/readers.h"

static char *slurp(const char *path, size_t *len, char *why, size_t why_size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(why, why_size, "%s", strerror(errno));
        return NULL;
    }
    struct stat st;
    int regular = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
    if (!regular && S_ISDIR(st.st_mode)) {
        snprintf(why, why_size, "is a directory");
        fclose(f);
        return NULL;
    }
    if (regular && (uint64_t)st.st_size > READ_MAX_FILE) {
        snprintf(why, why_size, "%.1f GiB; kestrel reads profiles of at most %llu GiB",
                 (double)st.st_size / (1 << 30), READ_MAX_FILE >> 30);
        fclose(f);
        return NULL;
    }
    /* A regular file's size is known: one buffer of that size (and a byte to see that
     * it did not grow), not a doubling one. A pipe grows up to the same limit. */
    size_t cap = regular ? (size_t)st.st_size + 1 : 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        if (cap > READ_MAX_FILE) {
            snprintf(why, why_size, "more than %llu GiB; kestrel reads profiles of at most that",
                     READ_MAX_FILE >> 30);
            free(buf);
            fclose(f);
            return NULL;
        }
        char *q = realloc(buf, cap * 2);
        if (!q) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = q;
        cap *= 2;
    }
    int err = ferror(f);
    fclose(f);
    if (!buf || err) {
        snprintf(why, why_size, "%s", buf ? "read error" : "out of memory");
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
