/* Picks a reader by content: gzip or protobuf is pprof, a JSON object is the raw
 * CPU profile. */
#include <errno.h>
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
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(why, why_size, "is a directory");
        fclose(f);
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
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
