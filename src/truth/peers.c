/* The peers of the accuracy benchmark as ground-truth profilers (truth.h): perf
 * record with frame pointers, perf record with DWARF unwinding, and gperftools'
 * libprofiler. Each runs the workload under the peer and turns the peer's own output
 * into kestrel's profile model: `perf script` text (times, threads, symbols) and
 * `google-pprof --collapsed` (stacks and counts only). */
#include "truth/peers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/model/profile.h"

static int64_t intern_name(struct profile *p, const char *name)
{
    struct profile_frame f = {0};
    f.name = (char *)name;
    f.image = -1;
    f.symbolized = 1;
    return profile_intern_frame(p, &f);
}

/* Reads a command's whole output. */
static char *slurp_command(char *const argv[], size_t *len, char *why, size_t why_size)
{
    int fds[2];
    if (pipe(fds) < 0) return NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]), close(fds[1]);
        if (!freopen("/dev/null", "w", stderr)) _exit(127);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    ssize_t got;
    while (buf && (got = read(fds[0], buf + n, cap - n - 1)) > 0) {
        n += (size_t)got;
        if (cap - n < 4096) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    close(fds[0]);
    int st;
    waitpid(pid, &st, 0);
    if (!buf || !WIFEXITED(st) || WEXITSTATUS(st)) {
        snprintf(why, why_size, "%s failed", argv[0]);
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

/* `perf script -F comm,tid,time,ip,sym`: a header "COMM TID SECONDS:" then one
 * "\tADDR SYMBOL" line per frame, leaf first, then a blank line. */
struct profile *peer_parse_perf_script(char *text, char *why, size_t why_size)
{
    struct profile *p = profile_new(PROFILE_CPU);
    if (!p || profile_add_sample_type(p, "samples", "count") < 0) goto oom;
    int64_t tids[4096], thread_of[4096];
    size_t n_tids = 0;
    uint32_t frames[PROFILE_MAX_DEPTH];
    uint32_t depth = 0;
    int64_t thread = -1, t_ns = 0, t0 = -1, one = 1;
    for (char *line = strtok(text, "\n");; line = strtok(NULL, "\n")) {
        int header = line && line[0] != '\t';
        if ((!line || header) && thread >= 0) {
            int64_t st = profile_intern_stack(p, frames, depth);
            if (st < 0 || profile_add_sample(p, (uint32_t)thread, (uint32_t)st, PROFILE_RUNNING,
                                             t_ns, &one) < 0)
                goto oom;
            thread = -1;
        }
        if (!line) break;
        if (header) {
            while (*line == ' ')
                line++;
            /* The command name may hold spaces: take the time and tid from the right. */
            char *colon = strrchr(line, ':'), *sp;
            if (!colon) continue;
            *colon = 0;
            if (!(sp = strrchr(line, ' '))) continue;
            double secs = strtod(sp + 1, NULL);
            while (sp > line && sp[-1] == ' ')
                sp--;
            *sp = 0;
            char *tsp = strrchr(line, ' ');
            if (!tsp) continue;
            int64_t tid = strtoll(tsp + 1, NULL, 10);
            *tsp = 0;
            size_t k = 0;
            while (k < n_tids && tids[k] != tid)
                k++;
            if (k == n_tids) {
                if (n_tids == 4096) continue;
                tids[n_tids] = tid;
                thread_of[n_tids++] = profile_add_thread(p, line, 0, tid, line);
            }
            thread = thread_of[k];
            int64_t ns = (int64_t)(secs * 1e9);
            if (t0 < 0) t0 = ns;
            t_ns = ns - t0;
            depth = 0;
            continue;
        }
        /* "\t   19b4 compute_rows" */
        char *s = line;
        while (*s == '\t' || *s == ' ')
            s++;
        while (*s && *s != ' ')
            s++;
        while (*s == ' ')
            s++;
        char *end = s + strlen(s);
        /* perf appends " (dso)" when asked for it; the symbol ends before. */
        char *paren = strstr(s, " (");
        if (paren) end = paren;
        *end = 0;
        int64_t f = intern_name(p, *s ? s : "[unknown]");
        if (f < 0) goto oom;
        if (depth < PROFILE_MAX_DEPTH) frames[depth++] = (uint32_t)f;
    }
    return p;
oom:
    snprintf(why, why_size, "out of memory reading perf script output");
    profile_free(p);
    return NULL;
}

/* `google-pprof --collapsed`: "root;...;leaf COUNT", each name followed by its
 * address in angle brackets. */
struct profile *peer_parse_collapsed(char *text, char *why, size_t why_size)
{
    struct profile *p = profile_new(PROFILE_CPU);
    if (!p || profile_add_sample_type(p, "samples", "count") < 0) goto oom;
    int64_t thread = profile_add_thread(p, "process", 0, -1, NULL), one = 1;
    if (thread < 0) goto oom;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *sp = strrchr(line, ' ');
        if (!sp) continue;
        long long count = strtoll(sp + 1, NULL, 10);
        *sp = 0;
        uint32_t root_first[PROFILE_MAX_DEPTH], frames[PROFILE_MAX_DEPTH], depth = 0;
        for (char *save, *name = strtok_r(line, ";", &save); name && depth < PROFILE_MAX_DEPTH;
             name = strtok_r(NULL, ";", &save)) {
            char *lt = strchr(name, '<');
            if (lt && lt != name) *lt = 0;
            int64_t f = intern_name(p, name);
            if (f < 0) goto oom;
            root_first[depth++] = (uint32_t)f;
        }
        for (uint32_t d = 0; d < depth; d++)
            frames[d] = root_first[depth - 1 - d];
        int64_t st = profile_intern_stack(p, frames, depth);
        if (st < 0) goto oom;
        for (long long c = 0; c < count; c++)
            if (profile_add_sample(p, (uint32_t)thread, (uint32_t)st, PROFILE_RUNNING, -1, &one) <
                0)
                goto oom;
    }
    return p;
oom:
    snprintf(why, why_size, "out of memory reading collapsed stacks");
    profile_free(p);
    return NULL;
}

/* --- the runners ------------------------------------------------------------------- */

static struct profile *run_perf(const struct truth_profiler *self, char *const argv[], unsigned hz,
                                const char *dir, struct truth_child *child, char *why,
                                size_t why_size)
{
    static unsigned seq;
    char data[512], freq[32], *cmd[32];
    snprintf(data, sizeof data, "%s/perf-%d-%u.data", dir, (int)getpid(), seq++);
    snprintf(freq, sizeof freq, "%u", hz);
    int n = 0;
    cmd[n++] = "perf", cmd[n++] = "record", cmd[n++] = "-q", cmd[n++] = "-F", cmd[n++] = freq;
    cmd[n++] = "-o", cmd[n++] = data;
    if (self->ctx)
        cmd[n++] = "--call-graph", cmd[n++] = "dwarf";
    else
        cmd[n++] = "-g";
    cmd[n++] = "--";
    for (int i = 0; argv[i] && n < 31; i++)
        cmd[n++] = argv[i];
    cmd[n] = NULL;
    if (truth_spawn(cmd, NULL, child, why, why_size) < 0) {
        unlink(data);
        return NULL;
    }
    char *script[] = {"perf", "script", "-i", data, "-F", "comm,tid,time,ip,sym", NULL};
    size_t len;
    char *text = slurp_command(script, &len, why, why_size);
    unlink(data);
    if (!text) return NULL;
    struct profile *p = peer_parse_perf_script(text, why, why_size);
    free(text);
    return p;
}

static struct profile *run_gperf(const struct truth_profiler *self, char *const argv[], unsigned hz,
                                 const char *dir, struct truth_child *child, char *why,
                                 size_t why_size)
{
    static unsigned seq;
    char prof[512], e_pre[600], e_prof[600], e_freq[64];
    snprintf(prof, sizeof prof, "%s/gperf-%d-%u.prof", dir, (int)getpid(), seq++);
    snprintf(e_pre, sizeof e_pre, "LD_PRELOAD=%s", PEER_LIBPROFILER);
    snprintf(e_prof, sizeof e_prof, "CPUPROFILE=%s", prof);
    snprintf(e_freq, sizeof e_freq, "CPUPROFILE_FREQUENCY=%u", hz);
    /* Per-thread timers fire on each registered thread's own CPU time; a thread that
     * never calls ProfilerRegisterThread (none of ours do) gets no timer. */
    char *env[] = {e_pre, e_prof, e_freq, self->ctx ? "CPUPROFILE_PER_THREAD_TIMERS=1" : NULL,
                   NULL};
    if (truth_spawn(argv, env, child, why, why_size) < 0) {
        unlink(prof);
        return NULL;
    }
    char *pp[] = {"google-pprof", "--collapsed", argv[0], prof, NULL};
    size_t len;
    char *text = slurp_command(pp, &len, why, why_size);
    unlink(prof);
    if (!text) return NULL;
    struct profile *p = peer_parse_collapsed(text, why, why_size);
    free(text);
    return p;
}

const struct truth_profiler peer_perf_fp = {"perf -g", run_perf, 1, 0, 1, NULL};
const struct truth_profiler peer_perf_dwarf = {"perf dwarf", run_perf, 1, 0, 1, (void *)1};
const struct truth_profiler peer_gperftools = {"gperftools", run_gperf, 0, 0, 0, NULL};
const struct truth_profiler peer_gperftools_pt = {
    "gperftools per-thread", run_gperf, 0, 0, 0, (void *)1};
