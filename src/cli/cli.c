/* The analysis pipeline as the commands use it (cli.h). */
#include "cli/cli.h"
#include "cli/fetch.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "analysis/model/merge.h"
#include "analysis/readers/readers.h"
#include "analysis/writers/report.h"
#include "analysis/symbols/symbolize.h"
#include "analysis/writers/writers.h"

/* A raw CPU profile's name in STEM.raw/: <pid>.raw.json, or <pid>.raw.json.exec<N>
 * for an image that exec replaced; never a temporary file (.tmp.). */
static int tree_file(const char *name)
{
    if (name[0] < '0' || name[0] > '9' || strstr(name, ".tmp.")) return 0;
    const char *raw = strstr(name, ".raw.json");
    return raw && (!raw[9] || !strncmp(raw + 9, ".exec", 5));
}

/* A heap profile's name in STEM.raw/: <pid>.heap.pb.gz. */
static int heap_file(const char *name)
{
    size_t digits = strspn(name, "0123456789");
    return digits && !strcmp(name + digits, ".heap.pb.gz");
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The file names of a tree's raw profiles (heap: its heap profiles), sorted; NULL
 * with *n 0 when none. */
static char **tree_list(const char *dir, int heap, size_t *n)
{
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) return NULL;
    char **names = NULL;
    size_t cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!(heap ? heap_file(de->d_name) : tree_file(de->d_name))) continue;
        if (*n == cap) {
            char **g = realloc(names, (cap = cap ? 2 * cap : 16) * sizeof *g);
            if (!g) break;
            names = g;
        }
        size_t len = strlen(dir) + strlen(de->d_name) + 2;
        if (!(names[*n] = malloc(len))) break;
        snprintf(names[*n], len, "%s/%s", dir, de->d_name);
        (*n)++;
    }
    closedir(d);
    if (names) qsort(names, *n, sizeof *names, by_name);
    return names;
}

/* Whether a process (one raw profile) is the one --process names: its pid, or the
 * name it was invoked by. A profile that says nothing of its process (a pprof file)
 * is not told apart. */
static int process_wanted(const struct profile *p, const char *want)
{
    if (!want || (!p->n_processes && p->meta.pid < 0)) return 1;
    char *end;
    long long pid = strtoll(want, &end, 10);
    if (*want && !*end) return p->meta.pid == pid;
    return p->n_processes && !strcmp(p->processes[0].name, want);
}

/* A heap profile of the tree says nothing of its process: the pid is its file's name,
 * the rest (program, parent, command line, times) that of the CPU profile the same
 * process wrote beside it (the last of an exec chain), when there is one. */
static int heap_identity(struct profile *h, const char *path)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    long long pid = strtoll(base, NULL, 10);
    size_t len = (size_t)(base - path) + 64;
    char *raw = malloc(len);
    if (!raw) return -1;
    snprintf(raw, len, "%.*s%lld.raw.json", (int)(base - path), path, pid);
    char why[256];
    struct profile *c = access(raw, F_OK) ? NULL : read_profile(raw, why, sizeof why);
    free(raw);
    h->meta.pid = pid;
    int rc = 0;
    if (c) {
        h->meta.ppid = c->meta.ppid;
        if (!h->meta.start_unix_ns) h->meta.start_unix_ns = c->meta.start_unix_ns;
        if (!h->meta.end_unix_ns) h->meta.end_unix_ns = c->meta.end_unix_ns;
        if (!h->meta.exe && c->meta.exe && !(h->meta.exe = strdup(c->meta.exe))) rc = -1;
    }
    if (!rc && !h->n_processes) {
        struct profile_process pr = {.pid = pid, .ppid = h->meta.ppid, .name = "?"};
        if (c && c->n_processes) pr = c->processes[0];
        pr.pid = pid;
        if (profile_add_process(h, &pr) < 0) rc = -1;
    }
    for (size_t i = 0; !rc && i < h->n_threads; i++)
        h->threads[i].process = 0;
    profile_free(c);
    return rc;
}

/* symbolize_options.count_state of the table o->state counts. */
static int count_state(const struct cli_load_options *o)
{
    return o->state == SUMMARY_ALL_STATES ? 0 : 1 + o->state;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Reads every raw profile (o->heap: every heap profile) of a STEM.raw/ folder and
 * merges them, then symbolizes the tree once: each file of the tree is opened once
 * however many processes mapped it, and a warning is said once for the tree. A
 * process with a JIT's perf map (its own /tmp/perf-PID.map) is symbolized alone
 * first. A file that cannot be read is said and left out. On a terminal, the count
 * of files read shows after a second. */
static struct profile *load_tree(const char *dir, const struct cli_load_options *o)
{
    size_t n;
    char **names = tree_list(dir, o->heap, &n);
    struct profile **parts = calloc(n + 1, sizeof *parts);
    size_t kept = 0, seen = 0;
    char why[512];
    const char *delay_env = getenv("KESTREL_PROGRESS_DELAY_MS");
    double delay = delay_env ? atof(delay_env) / 1000 : 1.0, start = now_s();
    int progress = isatty(2), shown = 0;
    struct symbolize_options so = {.binary = o->binary, .count_state = count_state(o)};
    for (size_t i = 0; parts && i < n; i++) {
        if (progress && (i & 63) == 0 && now_s() - start >= delay) {
            fprintf(stderr, "\rkestrel: reading %zu/%zu profiles", i, n);
            shown = 1;
        }
        struct profile *p = read_profile(names[i], why, sizeof why);
        if (!p) {
            if (shown) fputc('\n', stderr), shown = 0;
            fprintf(stderr, "kestrel: %s: %s (left out of the tree)\n", names[i], why);
            continue;
        }
        if (o->heap && heap_identity(p, names[i])) {
            fprintf(stderr, "kestrel: %s: out of memory\n", names[i]);
            profile_free(p);
            continue;
        }
        seen++;
        if (!process_wanted(p, o->process)) {
            profile_free(p);
            continue;
        }
        if (p->meta.perf_map && symbolize_profile(p, &so)) {
            fprintf(stderr, "kestrel: %s: out of memory while symbolizing\n", names[i]);
            profile_free(p);
            continue;
        }
        parts[kept++] = p;
    }
    if (shown) fprintf(stderr, "\rkestrel: reading %zu/%zu profiles\n", n, n);
    struct profile *tree = NULL;
    if (!parts)
        fprintf(stderr, "kestrel: %s: out of memory\n", dir);
    else if (!n && o->heap)
        fprintf(stderr,
                "kestrel: %s: is a directory with no heap profile in it (kestrel record "
                "--heap writes <pid>.heap.pb.gz files there)\n",
                dir);
    else if (!n)
        fprintf(stderr,
                "kestrel: %s: is a directory with no raw profile in it (a STEM.raw folder "
                "holds <pid>.raw.json files)\n",
                dir);
    else if (!kept && o->process && seen)
        fprintf(stderr, "kestrel: %s: no process %s in the tree\n", dir, o->process);
    else if (kept && !(tree = profile_merge_tree((const struct profile *const *)parts, kept, why,
                                                 sizeof why)))
        fprintf(stderr, "kestrel: %s: %s\n", dir, why);
    for (size_t i = 0; i < kept; i++)
        profile_free(parts[i]);
    if (tree) {
        free(tree->source);
        tree->source = strdup(dir);
        if (symbolize_profile(tree, &so)) {
            fprintf(stderr, "kestrel: %s: out of memory while symbolizing\n", dir);
            profile_free(tree);
            tree = NULL;
        }
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(parts);
    return tree;
}

int cli_load(const char *path, const struct cli_load_options *o, struct profile **pp,
             struct summary **sp)
{
    char why[512];
    struct profile *p;
    struct stat st;
    int tree = !fetch_is_url(path) && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    if (o->heap && !tree) {
        fprintf(stderr, "kestrel: %s: --heap reads a STEM.raw folder, and this is not one\n",
                path);
        return -1;
    }
    if (tree) {
        p = load_tree(path, o);
    } else if (fetch_is_url(path)) { /* a scrape endpoint: fetched, then read as a file */
        char tmp[4096];
        if (fetch_url(path, tmp, sizeof tmp, why, sizeof why) != 0) {
            fprintf(stderr, "kestrel: %s: %s\n", path, why);
            return -1;
        }
        p = read_profile(tmp, why, sizeof why);
        unlink(tmp);
        char *url = p ? strdup(path) : NULL; /* messages name the URL, not the file */
        if (url) {
            free(p->source);
            p->source = url;
        }
    } else {
        p = read_profile(path, why, sizeof why);
    }
    if (!p) {
        if (!tree) fprintf(stderr, "kestrel: %s: %s\n", path, why);
        return -1;
    }
    if (!tree && o->process && !process_wanted(p, o->process)) {
        fprintf(stderr, "kestrel: %s: no process %s in it\n", path, o->process);
        profile_free(p);
        return -1;
    }
    size_t type = p->default_type;
    if (o->sample_type) {
        int k = profile_find_sample_type(p, o->sample_type);
        if (k < 0) {
            fprintf(stderr, "kestrel: %s: no sample type \"%s\" (it has:", path, o->sample_type);
            for (size_t i = 0; i < p->n_sample_types; i++)
                fprintf(stderr, " %s", p->sample_types[i].type);
            fprintf(stderr, ")\n");
            profile_free(p);
            return -1;
        }
        type = (size_t)k;
    }
    struct symbolize_options so = {.binary = o->binary, .count_state = count_state(o)};
    if (!tree && symbolize_profile(p, &so)) {
        fprintf(stderr, "kestrel: %s: out of memory while symbolizing\n", path);
        profile_free(p);
        return -1;
    }
    const char *err;
    struct summary *s = summary_build(p, type, &err);
    if (!s) {
        fprintf(stderr, "kestrel: %s: %s\n", path, err);
        profile_free(p);
        return -1;
    }
    *pp = p;
    *sp = s;
    return 0;
}

struct summary *cli_state_summary(const struct profile *p, const struct summary *s, int state,
                                  int *failed)
{
    *failed = 0;
    if (state == SUMMARY_ALL_STATES || p->kind != PROFILE_CPU) return NULL;
    const char *why;
    struct summary *only = summary_build_state(p, s->type, state, &why);
    if (!only) {
        fprintf(stderr, "kestrel: %s: %s\n", p->source ? p->source : "profile", why);
        *failed = 1;
    }
    return only;
}

int cli_export_all(const struct profile *p, const struct summary *s, int state,
                   const char *stem)
{
    size_t n;
    const struct writer *const *w = writers_all(&n);
    int failed = 0;
    struct summary *only = cli_state_summary(p, s, state, &failed);
    if (failed) return (int)n;
    for (size_t i = 0; i < n; i++) {
        if (writer_export_only(w[i])) continue;
        size_t len = strlen(stem) + strlen(w[i]->suffix) + 1;
        char *path = malloc(len);
        if (!path) return summary_free(only), failed + (int)(n - i);
        snprintf(path, len, "%s%s", stem, w[i]->suffix);
        /* A format that cannot hold this kind of profile is skipped, not an error. */
        int rc = writer_write_file(w[i], p, only && !w[i]->every_state ? only : s, path);
        if (rc && rc != -EINVAL) failed++;
        free(path);
    }
    summary_free(only);
    return failed;
}

int cli_parse_state(const char *word, int *state)
{
    if (!word || !strcmp(word, "running"))
        *state = PROFILE_RUNNING;
    else if (!strcmp(word, "all"))
        *state = SUMMARY_ALL_STATES;
    else if (!strcmp(word, "running"))
        *state = PROFILE_RUNNING;
    else if (!strcmp(word, "waiting"))
        *state = PROFILE_WAITING;
    else
        return -1;
    return 0;
}

int cli_report(const struct profile *p, const struct summary *s, int state, int wide,
               FILE *out, const char *out_name)
{
    int failed;
    struct summary *only = cli_state_summary(p, s, state, &failed);
    if (failed) return -1;
    int rc = report_write(p, only ? only : s, out,
                          report_wants_colour(out) | (wide ? REPORT_WIDE : 0));
    summary_free(only);
    if (rc) {
        fprintf(stderr, "kestrel: %s: write error\n", out_name);
        return -1;
    }
    return 0;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "kestrel %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see kestrel %s --help)\n", cmd);
    return 2;
}

void cli_raise_default(int sig)
{
    fflush(NULL);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
}
