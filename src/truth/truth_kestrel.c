/* kestrel itself as a ground-truth profiler (truth.h): the workload runs with the
 * runtime preloaded (the libkestrel.so next to this binary, as `kestrel record` finds
 * it), writes raw JSON, and the profile is read and symbolized as any other. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/readers/readers.h"
#include "analysis/symbols/symbolize.h"
#include "truth/truth.h"

/* <dir of the kestrel binary>/../lib/libkestrel.so: build/ mirrors the installed
 * layout, so the runtime is found next to whichever kestrel runs the workload. */
static int runtime_path(const char *kestrel, char *out, size_t size)
{
    char exe[PATH_MAX];
    if (!realpath(kestrel, exe)) return -1;
    char *slash = strrchr(exe, '/');
    if (!slash) return -1;
    *slash = 0;
    if ((size_t)snprintf(out, size, "%s/../lib/libkestrel.so", exe) >= size) return -1;
    struct stat st;
    return stat(out, &st) == 0 ? 0 : -1;
}

static struct profile *run_kestrel(const struct truth_profiler *self, char *const argv[],
                                   unsigned hz, const char *dir, struct truth_child *child,
                                   char *why, size_t why_size)
{
    (void)self;
    static unsigned seq;
    char lib[PATH_MAX], e_pre[PATH_MAX + 16], e_prof[PATH_MAX + 32], e_hz[64], path[PATH_MAX];
    if (runtime_path(argv[0], lib, sizeof lib) < 0) {
        snprintf(why, why_size, "%s: the runtime is not in ../lib/libkestrel.so beside it",
                 argv[0]);
        return NULL;
    }
    snprintf(path, sizeof path, "%s/kestrel-%u.json", dir, seq++);
    snprintf(e_pre, sizeof e_pre, "LD_PRELOAD=%s", lib);
    snprintf(e_prof, sizeof e_prof, "KESTREL_PROFILE=%s", path);
    snprintf(e_hz, sizeof e_hz, "KESTREL_PROFILE_HZ=%u", hz);
    char *env[] = {e_pre, e_prof, e_hz, NULL};
    if (truth_spawn(argv, env, child, why, why_size) < 0) {
        unlink(path);
        return NULL;
    }
    struct profile *p = read_profile(path, why, why_size);
    unlink(path);
    if (!p) return NULL;
    struct symbolize_options so = {.quiet = 1};
    if (symbolize_profile(p, &so) < 0) {
        snprintf(why, why_size, "out of memory symbolizing");
        profile_free(p);
        return NULL;
    }
    return p;
}

const struct truth_profiler truth_kestrel = {"kestrel", run_kestrel, 1, 1, 1, NULL};
