/* The terminal report (report.h). */
#include "analysis/writers/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "analysis/model/escape.h"
#include "analysis/symbols/demangle.h"
#include "analysis/symbols/fpcheck.h"
#include "runtime/unwind/unwind.h"

#define RED_BOLD "\033[1;31m"
#define YELLOW "\033[33m"
#define RESET "\033[0m"
#define BAR_CELLS 8      /* the self gutter: 8 cells of 8 eighths each = 100% */
#define FIXED_COLS 54    /* the table's columns but FUNCTION and LOCATION, the gaps, " ~" */
#define VALUE_COLS 20    /* of them, the SELF and TOTAL values' */
#define NARROW_COLS 100  /* a terminal narrower than this gets no value columns */
#define MIN_NAME_COLS 24 /* a narrower terminal wraps rather than lose every name */
#define MAX_LOC_COLS 28  /* a longer location keeps its end (file:line) */
#define NARROW_LOC_COLS 18
#define DEFAULT_COLS 120 /* stdout not a terminal and COLUMNS unset */

int report_wants_colour(FILE *out)
{
    const char *no = getenv("NO_COLOR");
    return (!no || !*no) && isatty(fileno(out));
}

/* ------------------------------------------------------------------ formatting */

/* A value in its unit, short: "1.25 s", "3.4 MiB", "1,234". */
static void fmt_value(char *buf, size_t n, int64_t v, const char *unit)
{
    double d = (double)v;
    if (!strcmp(unit, "nanoseconds")) {
        if (llabs(v) >= 1000000000)
            snprintf(buf, n, "%.2f s", d / 1e9);
        else if (llabs(v) >= 1000000)
            snprintf(buf, n, "%.1f ms", d / 1e6);
        else
            snprintf(buf, n, "%.1f us", d / 1e3);
    } else if (!strcmp(unit, "bytes")) {
        if (llabs(v) >= 1 << 30)
            snprintf(buf, n, "%.1f GiB", d / (1 << 30));
        else if (llabs(v) >= 1 << 20)
            snprintf(buf, n, "%.1f MiB", d / (1 << 20));
        else if (llabs(v) >= 1 << 10)
            snprintf(buf, n, "%.1f KiB", d / (1 << 10));
        else
            snprintf(buf, n, "%" PRId64 " B", v);
    } else {
        snprintf(buf, n, "%" PRId64, v);
    }
}

/* The self gutter: share as eighth-blocks over BAR_CELLS cells, padded with spaces. */
static void put_bar(FILE *out, double share)
{
    static const char *const eighths[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
    long units = (long)(share * BAR_CELLS * 8 + 0.5);
    if (units > BAR_CELLS * 8) units = BAR_CELLS * 8;
    if (units == 0 && share > 0) units = 1; /* present, however small */
    int cells = 0;
    for (; units >= 8; units -= 8, cells++)
        fputs("█", out);
    if (units) {
        fputs(eighths[units], out);
        cells++;
    }
    for (; cells < BAR_CELLS; cells++)
        fputc(' ', out);
}

/* Code points of s (no East Asian width: names are rarely wide). */
static int cols_of(const char *s)
{
    size_t len = strlen(s), i = 0;
    int n = 0;
    for (; i < len; n++) {
        size_t k = escape_utf8_seq((const unsigned char *)s + i, len - i);
        i += k ? k : 1;
    }
    return n;
}

/* Writes a function's name into exactly `cols` columns, shortened as demangle_fit
 * says (parameters, then template arguments, then the end) or padded. s is
 * terminal-safe. */
static void put_name(FILE *out, const char *s, int cols)
{
    size_t size = strlen(s) + 4;
    char *fit = malloc(size);
    int n = fit ? demangle_fit(s, cols, fit, size) : 0;
    fputs(fit ? fit : "?", out);
    free(fit);
    for (; n < cols; n++)
        fputc(' ', out);
}

/* The terminal's width: COLUMNS when set, else the terminal's own, else DEFAULT_COLS. */
static int terminal_cols(FILE *out)
{
    const char *env = getenv("COLUMNS");
    int cols = env ? atoi(env) : 0;
    struct winsize ws;
    if (cols <= 0 && isatty(fileno(out)) && !ioctl(fileno(out), TIOCGWINSZ, &ws) && ws.ws_col)
        cols = ws.ws_col;
    return cols > 0 ? cols : DEFAULT_COLS;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* An image as the report names it: its file's base name, "[jit]" for anonymous
 * executable memory (no file), "(no image)" for an address outside every image. */
static const char *image_name(const struct profile *p, int32_t img)
{
    if (img < 0) return "(no image)";
    return *p->images[img].path ? base_name(p->images[img].path) : "[jit]";
}

/* "file.c:12", the image's name for an unresolved frame, or "?". */
static void location(char *buf, size_t n, const struct profile *p,
                     const struct summary_function *fn)
{
    if (fn->file && fn->line)
        snprintf(buf, n, "%s:%d", base_name(fn->file), fn->line);
    else if (fn->file)
        snprintf(buf, n, "%s", base_name(fn->file));
    else if (fn->image >= 0)
        snprintf(buf, n, "%s", image_name(p, fn->image));
    else
        snprintf(buf, n, "?");
}

/* ------------------------------------------------------------------ parts */

static int64_t type_total(const struct profile *p, const char *type)
{
    int k = profile_find_sample_type(p, type);
    int64_t sum = 0;
    for (size_t i = 0; k >= 0 && i < p->n_samples; i++)
        if (__builtin_add_overflow(sum, profile_values(p, i)[k], &sum)) return -1;
    return k >= 0 ? sum : -1;
}

static void header(FILE *out, const struct profile *p, const struct summary *s)
{
    const struct profile_sample_type *t = &p->sample_types[s->type];
    char buf[64];
    /* The program as it was invoked (a symlink's name), and the file that ran when
     * that is another name. */
    const struct profile_process *root = p->n_processes ? &p->processes[0] : NULL;
    const char *exe = p->meta.exe ? p->meta.exe : p->source ? p->source : "profile";
    char *safe = escape_utf8_dup(root ? root->name : exe, "");
    fprintf(out, "kestrel: %s", safe ? safe : "?");
    free(safe);
    if (p->meta.pid >= 0) fprintf(out, " (pid %" PRId64 ")", p->meta.pid);
    if (root && root->exe && strcmp(base_name(root->exe), root->name)) {
        safe = escape_utf8_dup(root->exe, "");
        fprintf(out, " · ran %s", safe ? safe : "?");
        free(safe);
    }
    if (p->n_processes > 1)
        fprintf(out, " · %zu processes", p->n_processes);
    fputc('\n', out);
    int64_t wall = profile_wall_ns(p);
    if (wall) {
        fmt_value(buf, sizeof buf, wall, "nanoseconds");
        fprintf(out, "  wall %s", buf);
    } else {
        fputs("  wall ?", out);
    }
    int64_t cpu = type_total(p, "cpu");
    if (p->kind == PROFILE_CPU) {
        if (cpu >= 0) {
            fmt_value(buf, sizeof buf, cpu, "nanoseconds");
            fprintf(out, " · CPU %s", buf);
            /* The total is of the samples kept: say what it leaves out. */
            if (p->meta.dropped)
                fprintf(out, " (without %" PRIu64 " lost sample%s)", p->meta.dropped,
                        p->meta.dropped == 1 ? "" : "s");
        } else {
            fputs(" · CPU ?", out);
        }
    }
    if (p->kind == PROFILE_HEAP && s->n_events > (double)s->n_samples)
        fprintf(out, " · about %.0f sampled allocations over %" PRIu64 " stack%s", s->n_events,
                s->n_samples, s->n_samples == 1 ? "" : "s");
    else
        fprintf(out, " · %" PRIu64 " sample%s", s->n_samples_all, s->n_samples_all == 1 ? "" : "s");
    if (strcmp(t->type, "samples")) {
        fmt_value(buf, sizeof buf, s->total, t->unit);
        fprintf(out, " · %s %s", t->type, buf);
    }
    if (p->kind == PROFILE_CPU) {
        if (p->meta.requested_hz > 0) fprintf(out, " · %.0f Hz requested", p->meta.requested_hz);
        /* Achieved: the running samples per second of the sampled threads' CPU time,
         * as measured (the CPU time of every sample: a sample that found its thread
         * off-CPU still carries the CPU time since the one before); the runtime's
         * rate_hz is the rate it aimed at, and with no sample nothing was achieved. */
        const char *sep = p->meta.requested_hz > 0 ? ", " : " · ";
        int64_t cpu_all = type_total(p, "cpu");
        uint64_t running = s->state[PROFILE_RUNNING].n;
        if (!running)
            fprintf(out, "%sno on-CPU sample taken", sep);
        else if (cpu_all > 0 && running)
            fprintf(out, "%s%.1f Hz achieved", sep, (double)running * 1e9 / (double)cpu_all);
        else if (p->meta.rate_hz > 0)
            fprintf(out, "%s%.0f Hz aimed at", sep, p->meta.rate_hz);
        if (p->meta.engine) fprintf(out, " (%s engine)", p->meta.engine);
    } else if (p->period > 0) {
        fmt_value(buf, sizeof buf, p->period, "bytes");
        fprintf(out, " · one sample per %s", buf);
    }
    fprintf(out, " · %zu thread%s\n", p->n_threads, p->n_threads == 1 ? "" : "s");
}

static void split(FILE *out, const struct profile *p, const struct summary *s)
{
    if (p->kind != PROFILE_CPU || !s->n_samples_all) return;
    const struct summary_share *run = &s->state[PROFILE_RUNNING],
                               *wait = &s->state[PROFILE_WAITING];
    fprintf(out, "  running %.1f%% ±%.1f · waiting %.1f%% ±%.1f\n", 100 * run->share, 100 * run->se,
            100 * wait->share, 100 * wait->se);
    if (s->only_state != SUMMARY_ALL_STATES)
        fprintf(out, "  the table below counts the %s samples only: %" PRIu64 " of %" PRIu64 "\n",
                s->only_state == PROFILE_RUNNING ? "running (on-CPU)" : "waiting (off-CPU)",
                s->n_samples, s->n_samples_all);
}

/* ------------------------------------------------------------------ processes */

static int counted(const struct summary *s, const struct profile_sample *smp)
{
    return s->only_state == SUMMARY_ALL_STATES || smp->state == s->only_state;
}

/* A tree's processes, in the order they started: pid, parent, program (the chain of
 * programs of an exec chain), CPU time, samples (of the state the table counts); of a
 * heap profile, the bytes in use and allocated. */
static void processes(FILE *out, const struct profile *p, const struct summary *s)
{
    if (p->n_processes < 2) return;
    size_t n = p->n_processes;
    int heap = p->kind == PROFILE_HEAP;
    int64_t *cpu = calloc(n, sizeof *cpu);
    uint64_t *count = calloc(n, sizeof *count), *all = calloc(n, sizeof *all);
    int k = profile_find_sample_type(p, heap ? "inuse_space" : "cpu");
    int ka = heap ? profile_find_sample_type(p, "alloc_space") : -1;
    for (size_t i = 0; cpu && count && all && i < p->n_samples; i++) {
        int32_t pr = p->threads[p->samples[i].thread].process;
        if (pr < 0) continue;
        if (k >= 0) cpu[pr] += profile_values(p, i)[k];
        all[pr]++;
        if (heap)
            count[pr] += ka >= 0 ? (uint64_t)profile_values(p, i)[ka] : 0;
        else if (counted(s, &p->samples[i]))
            count[pr]++;
    }
    /* A build runs hundreds of processes: the root and those with the most samples
     * counted (then CPU) are listed, in the order they started, the rest summed. */
    unsigned char *shown = calloc(n, 1);
    size_t *rank = malloc(n * sizeof *rank);
    for (size_t i = 0; shown && rank && cpu && count && i < n; i++)
        rank[i] = i;
    for (size_t i = 1; shown && rank && cpu && count && i < n; i++) /* insertion: n is small */
        for (size_t j = i; j > 0; j--) {
            size_t a = rank[j - 1], b = rank[j];
            if (count[a] > count[b] || (count[a] == count[b] && cpu[a] >= cpu[b])) break;
            rank[j - 1] = b, rank[j] = a;
        }
    for (size_t i = 0; shown && rank && i < n && i < REPORT_PROCESSES; i++)
        shown[rank[i]] = 1;
    if (shown) shown[0] = 1;
    const char *unit = heap ? "bytes" : "nanoseconds";
    if (heap)
        fprintf(out, "\n  %8s %8s %10s %10s  %s\n", "PID", "PARENT", "IN USE", "ALLOCATED",
                "PROGRAM");
    else
        fprintf(out, "\n  %8s %8s %10s %8s  %s\n", "PID", "PARENT", "CPU", "SAMPLES", "PROGRAM");
    size_t rest = 0;
    int64_t rest_cpu = 0;
    uint64_t rest_count = 0;
    for (size_t i = 0; cpu && count && all && shown && rank && i < n; i++) {
        const struct profile_process *pr = &p->processes[i];
        if (!shown[i]) {
            rest++, rest_cpu += cpu[i], rest_count += count[i];
            continue;
        }
        char c[32], a[32];
        if (k >= 0)
            fmt_value(c, sizeof c, cpu[i], unit);
        else
            snprintf(c, sizeof c, "?");
        if (heap) {
            if (ka >= 0)
                fmt_value(a, sizeof a, (int64_t)count[i], "bytes");
            else
                snprintf(a, sizeof a, "?");
            fprintf(out, "  %8" PRId64 " %8" PRId64 " %10s %10s  ", pr->pid, pr->ppid, c, a);
        } else {
            fprintf(out, "  %8" PRId64 " %8" PRId64 " %10s %8" PRIu64 "  ", pr->pid, pr->ppid, c,
                    count[i]);
        }
        char *name = escape_utf8_dup(pr->chain ? pr->chain : pr->name, "");
        fputs(name ? name : "?", out);
        free(name);
        if (pr->cmdline) { /* what it was run with, cut to a line's worth */
            char *cmd = escape_utf8_dup(pr->cmdline, "");
            if (cmd && strlen(cmd) > 64) strcpy(cmd + 61, "...");
            fprintf(out, "  (%s)", cmd ? cmd : "?");
            free(cmd);
        }
        fputc('\n', out);
    }
    if (rest) {
        char c[32], a[32];
        fmt_value(c, sizeof c, rest_cpu, unit);
        fmt_value(a, sizeof a, (int64_t)rest_count, "bytes");
        if (heap)
            fprintf(out, "  %8s %8s %10s %10s  and %zu more process%s (--process PID|NAME)\n", "",
                    "", k >= 0 ? c : "?", ka >= 0 ? a : "?", rest, rest == 1 ? "" : "es");
        else
            fprintf(out,
                    "  %8s %8s %10s %8" PRIu64 "  and %zu more process%s (--process PID|NAME)\n",
                    "", "", k >= 0 ? c : "?", rest_count, rest, rest == 1 ? "" : "es");
    }
    if (heap && p->source) { /* every process's own file */
        char *src = escape_utf8_dup(p->source, "");
        fprintf(out, "  each process's heap profile: %s/<pid>.heap.pb.gz (", src ? src : "?");
        for (size_t i = 0; i < n; i++)
            fprintf(out, "%s%" PRId64, i ? " " : "", p->processes[i].pid);
        fputs(")\n", out);
        free(src);
    } else if (!heap && s->only_state != SUMMARY_ALL_STATES)
        fprintf(out, "  (SAMPLES counts the %s samples, as the table below)\n",
                s->only_state == PROFILE_RUNNING ? "running" : "waiting");
    free(cpu), free(count), free(all), free(shown), free(rank);
}

/* For each of the shown functions, which processes its samples are from: its self
 * samples, or (no self) the samples it is on the stack of. */
struct fn_procs {
    int32_t first; /* a process, -1 none */
    uint32_t n;    /* how many distinct processes */
    int same_name; /* every one of them has first's name */
};

static void function_processes(const struct profile *p, const struct summary *s,
                               const size_t *shown, size_t n_shown, struct fn_procs *fp)
{
    size_t np = p->n_processes;
    unsigned char *seen = calloc(n_shown * (np ? np : 1), 1);
    for (size_t j = 0; j < n_shown; j++)
        fp[j] = (struct fn_procs){-1, 0, 1};
    if (!seen) return;
    for (size_t i = 0; i < p->n_samples; i++) {
        const struct profile_sample *smp = &p->samples[i];
        int32_t pr = p->threads[smp->thread].process;
        if (pr < 0 || !counted(s, smp)) continue;
        const struct profile_stack *st = &p->stacks[smp->stack];
        for (size_t j = 0; j < n_shown; j++) {
            const struct summary_function *fn = &s->functions[shown[j]];
            int on = 0;
            if (fn->self.value)
                on = st->depth && s->function_of_frame[st->frames[0]] == shown[j];
            else
                for (uint32_t d = 0; d < st->depth && !on; d++)
                    on = s->function_of_frame[st->frames[d]] == shown[j];
            if (!on || seen[j * np + (size_t)pr]) continue;
            seen[j * np + (size_t)pr] = 1;
            if (fp[j].first < 0)
                fp[j].first = pr;
            else if (strcmp(p->processes[pr].name, p->processes[fp[j].first].name))
                fp[j].same_name = 0;
            fp[j].n++;
        }
    }
    free(seen);
}

#define PROCESS_COLS 18

/* The PROCESS cell of a row: one process's name and pid, "name ×N" for N of one
 * name, else "N processes". */
static void process_text(const struct profile *p, const struct fn_procs *fp, char *buf,
                         size_t size)
{
    if (fp->first < 0)
        snprintf(buf, size, "?");
    else if (fp->n == 1)
        profile_process_label(p, fp->first, buf, size);
    else if (fp->same_name)
        snprintf(buf, size, "%s ×%u", p->processes[fp->first].name, fp->n);
    else
        snprintf(buf, size, "%u processes", fp->n);
}

static int process_cols(const struct profile *p, const struct fn_procs *fp)
{
    char buf[512];
    process_text(p, fp, buf, sizeof buf);
    char *safe = escape_utf8_dup(buf, "");
    int n = safe ? cols_of(safe) : 1;
    free(safe);
    return n;
}

static void process_cell(FILE *out, const struct profile *p, const struct fn_procs *fp, int cols)
{
    char buf[512];
    process_text(p, fp, buf, sizeof buf);
    char *safe = escape_utf8_dup(buf, "");
    put_name(out, safe ? safe : "?", cols);
    free(safe);
}

/* The FUNCTION column's width: the widest name with --wide; else what the terminal
 * leaves beside the numbers and the widest location. *values = 0 when the terminal is
 * too narrow for the SELF and TOTAL values (the shares say the same). `extra`: the
 * columns a PROCESS column takes. */
static int name_cols(FILE *out, const struct profile *p, const struct summary *s, int wide,
                     int extra, int *values, int *loc_cols)
{
    *loc_cols = INT32_MAX;
    int names = 8, locs = 8;
    size_t shown = 0;
    for (size_t i = 0; i < s->n_functions && shown < REPORT_TOP; i++) {
        const struct summary_function *fn = &s->functions[i];
        if (!fn->self.value && !fn->total.value) continue;
        char loc[256];
        location(loc, sizeof loc, p, fn);
        int n = cols_of(fn->name), l = cols_of(loc);
        names = n > names ? n : names;
        locs = l > locs ? l : locs;
        shown++;
    }
    int term = terminal_cols(out);
    *values = wide || term >= NARROW_COLS;
    if (wide) return names;
    *loc_cols = *values ? MAX_LOC_COLS : NARROW_LOC_COLS;
    int cols = term - FIXED_COLS - extra + (*values ? 0 : VALUE_COLS) -
               (locs < *loc_cols ? locs : *loc_cols);
    if (cols > names) cols = names;
    return cols < MIN_NAME_COLS ? MIN_NAME_COLS : cols;
}

static void table(FILE *out, const struct profile *p, const struct summary *s, int flags)
{
    int tree = p->n_processes > 1;
    size_t pick[REPORT_TOP], n_pick = 0;
    for (size_t i = 0; i < s->n_functions && n_pick < REPORT_TOP; i++)
        if (s->functions[i].self.value || s->functions[i].total.value) pick[n_pick++] = i;
    struct fn_procs fp[REPORT_TOP];
    if (tree) function_processes(p, s, pick, n_pick, fp);
    const char *unit = p->sample_types[s->type].unit;
    int colour = flags & REPORT_COLOUR, values, loc_cols;
    /* --wide: the PROCESS column as wide as its widest cell, never cut. */
    int pcols = PROCESS_COLS;
    for (size_t j = 0; tree && (flags & REPORT_WIDE) && j < n_pick; j++) {
        int c = process_cols(p, &fp[j]);
        pcols = c > pcols ? c : pcols;
    }
    int ncols = name_cols(out, p, s, flags & REPORT_WIDE, tree ? pcols + 1 : 0, &values,
                          &loc_cols);
    size_t shown = 0;
    fprintf(out, "\n%-*s %6s %5s %7s", BAR_CELLS, "", "SELF%", "±SE", "TOTAL%");
    if (values) fprintf(out, " %9s %9s", "SELF", "TOTAL");
    fputs("  ", out);
    if (tree) fprintf(out, "%-*s ", pcols, "PROCESS");
    fprintf(out, "%-*s %s\n", ncols, "FUNCTION", "LOCATION");
    for (size_t j = 0; j < n_pick; j++) {
        const struct summary_function *fn = &s->functions[pick[j]];
        char self[32], total[32], loc[256];
        fmt_value(self, sizeof self, fn->self.value, unit);
        fmt_value(total, sizeof total, fn->total.value, unit);
        location(loc, sizeof loc, p, fn);
        const char *on = !colour                   ? ""
                         : fn->self.share >= 0.05  ? RED_BOLD
                         : fn->self.share >= 0.005 ? YELLOW
                                                   : "";
        put_bar(out, fn->self.share);
        fprintf(out, " %s%5.1f%%%s %5.1f %6.1f%%", on, 100 * fn->self.share, *on ? RESET : "",
                100 * fn->self.se, 100 * fn->total.share);
        if (values) fprintf(out, " %9s %9s", self, total);
        fputs("  ", out);
        if (tree) {
            process_cell(out, p, &fp[j], pcols);
            fputc(' ', out);
        }
        char *name = escape_utf8_dup(fn->name, "");
        put_name(out, name ? name : "?", ncols);
        free(name);
        char *safe = escape_utf8_dup(loc, "");
        const char *l = safe ? safe : "?";
        int over = cols_of(l) - loc_cols;
        if (over > 0 && !fn->file) { /* an image's name: keep its start, the name */
            fputc(' ', out);
            int keep = loc_cols - 1;
            for (int k = 0; k < keep && *l; k++) {
                size_t len = escape_utf8_seq((const unsigned char *)l, strlen(l)) ?: 1;
                fwrite(l, 1, len, out);
                l += len;
            }
            l = "…";
        } else if (over > 0) { /* keep the end: the file's name and line */
            fputs(" …", out);
            for (int k = 0; k <= over; k++)
                l += escape_utf8_seq((const unsigned char *)l, strlen(l)) ?: 1;
        } else {
            fputc(' ', out);
        }
        fprintf(out, "%s%s\n", l, fn->self.value && !fn->self.significant ? " ~" : "");
        free(safe);
        shown++;
    }
    if (!shown) fputs("  (no samples)\n", out);
}

/* The walk ends shown: those with at least REPORT_END_SHARE of the samples, and the
 * first whatever its share. */
#define REPORT_END_SHARE 0.005
static int end_shown(const struct summary_walks *w, size_t i)
{
    return i == 0 || w->ends[i].share.share >= REPORT_END_SHARE;
}

/* Walk end i names the same file as an earlier shown one (the images of the processes
 * of one tree are each their own): it is listed once, under the first. */
static int end_repeats(const struct profile *p, const struct summary_walks *w, size_t i)
{
    int32_t img = w->ends[i].image;
    for (size_t k = 0; k < i; k++) {
        int32_t o = w->ends[k].image;
        if (o == img || (o >= 0 && img >= 0 && p->images[o].path && p->images[img].path &&
                         strcmp(p->images[o].path, p->images[img].path) == 0))
            return 1;
    }
    return 0;
}

/* The share of the samples whose walk ended at the same file as end i, i included. */
static double end_share(const struct profile *p, const struct summary_walks *w, size_t i)
{
    double sh = 0;
    for (size_t k = i; k < w->n_ends; k++) {
        int32_t a = w->ends[i].image, b = w->ends[k].image;
        if (a == b || (a >= 0 && b >= 0 && p->images[a].path && p->images[b].path &&
                       strcmp(p->images[a].path, p->images[b].path) == 0))
            sh += w->ends[k].share.share;
    }
    return sh;
}

/* The shown walk ends whose CFI says (keeps == 0) they keep no frame pointers, or
 * (keeps == 1) that they do: their names into names ("a, b") and the shares of their
 * functions that set one up into shares ("2%, 0%"); returns how many. */
static size_t fp_images(char *names, char *shares, size_t n, const struct profile *p,
                        const struct summary_walks *w, int keeps)
{
    size_t o = 0, so = 0, count = 0;
    names[0] = shares[0] = 0;
    for (size_t i = 0; i < w->n_ends && end_shown(w, i); i++) {
        int32_t img = w->ends[i].image;
        if (img < 0 || !p->images[img].fp_checked || p->images[img].fp_permille < 0) continue;
        if (end_repeats(p, w, i)) continue;
        int16_t pm = p->images[img].fp_permille;
        if ((pm >= FPCHECK_WITHOUT_PERMILLE) != keeps) continue;
        char *name = escape_utf8_dup(image_name(p, img), "");
        o += (size_t)snprintf(names + o, o < n ? n - o : 0, "%s%s", count ? ", " : "",
                              name ? name : "?");
        so += (size_t)snprintf(shares + so, so < n ? n - so : 0, "%s%d%%", count ? ", " : "",
                               (pm + 5) / 10);
        free(name);
        count++;
    }
    return count;
}

/* The cut walks by cause, from the profile's count of every sample's walk end (all
 * states): what ended them decides the advice. */
struct cut_causes {
    uint64_t walks;                    /* every walk */
    uint64_t all, copy_end, depth, fp; /* cut; fp: by the causes frame pointers would fix */
};

static void cut_causes(const struct profile *p, const struct summary *s, struct cut_causes *c)
{
    memset(c, 0, sizeof *c);
    if (!p->meta.ends_known) return;
    /* Of the samples the report counts: the running ones by default. */
    const uint64_t *ends =
        s->only_state == PROFILE_RUNNING ? p->meta.end_running : p->meta.end_samples;
    for (size_t k = 0; k < PROFILE_STACK_ENDS && k < UNWIND_STOPS; k++) {
        uint64_t v = ends[k];
        c->walks += v;
        if (!unwind_cut_short((enum unwind_stop)k) || !v) continue;
        c->all += v;
        if (k == UNWIND_CUT_COPY_END) c->copy_end += v;
        else if (k == UNWIND_CUT_DEPTH) c->depth += v;
        else if (k != UNWIND_CUT_READ && k != UNWIND_CUT_NO_CFI && k != UNWIND_CUT_RULE) c->fp += v;
    }
}

/* How whole the stacks are (report.h). */
static void walks_lines(FILE *out, const struct profile *p, const struct summary *s)
{
    const struct summary_walks *w = &s->walks;
    /* Stacks the engine did not walk for these samples, whatever their share. */
    if (w->guessed.n)
        fprintf(out,
                "  guessed stacks: %.1f%% ±%.1f of %s (under %s): time the engine could not "
                "walk a stack for (a wait too short to read, system-call time without the "
                "kernel's samples), given the thread's earlier stack\n",
                100 * w->guessed.share, 100 * w->guessed.se, p->sample_types[s->type].type,
                PROFILE_GUESSED_FRAME);
    if (!w->known) {
        if (p->kind != PROFILE_CPU) return;
        if (p->meta.truncated)
            fprintf(out,
                    "  %" PRIu64 " stack walk%s cut short; which stacks, this profile does not "
                    "record\n",
                    p->meta.truncated, p->meta.truncated == 1 ? " was" : "s were");
        else
            fputs("  how whole the stacks are, this profile does not record\n", out);
        return;
    }
    if (w->cut.share < REPORT_CUT_SHARE) return;
    fprintf(out, "  incomplete stacks: %.1f%% ±%.1f of %s (under %s)", 100 * w->cut.share,
            100 * w->cut.se, p->sample_types[s->type].type, PROFILE_INCOMPLETE_FRAME);
    for (size_t i = 0, said = 0; i < w->n_ends && end_shown(w, i); i++) {
        if (end_repeats(p, w, i)) continue;
        int32_t img = w->ends[i].image;
        char *name = escape_utf8_dup(image_name(p, img), "");
        fprintf(out, "%s%s (%.1f%%)", said++ ? ", " : "; walks end early in ", name ? name : "?",
                100 * end_share(p, w, i));
        free(name);
    }
    fputc('\n', out);
    /* The advice fits the cause: frame pointers do not make a copy longer or a
     * recursion shallower. */
    struct cut_causes c;
    cut_causes(p, s, &c);
    if (c.copy_end)
        fprintf(out,
                "  %.1f%% of the cut walks: the stack copy ran out (copy exhausted): the stack was "
                "deeper than the perf engine's copy and changed before it could be read on; "
                "the signal engine walks the live stack (--engine signal)\n",
                100.0 * (double)c.copy_end / (double)c.all);
    if (c.depth)
        fprintf(out,
                "  %.1f%% of the cut walks: deeper than the %d-frame depth limit (deep recursion): "
                "their outermost frames are missing\n",
                100.0 * (double)c.depth / (double)c.all, UNWIND_MAX_DEPTH);
    char names[1024], shares[1024];
    /* Frame pointers are advised where walks that they would have carried on are a
     * share worth saying (or the profile does not say why its walks ended). */
    int fp_said = !c.all || (double)c.fp >= REPORT_CUT_SHARE * (double)c.walks;
    size_t n = fp_said ? fp_images(names, shares, sizeof names, p, w, 0) : 0;
    if (n)
        fprintf(out,
                "  %s: built without frame pointers (%s of %s functions set one up, by %s CFI); "
                "rebuild with -fno-omit-frame-pointer\n",
                names, shares, n > 1 ? "their" : "its", n > 1 ? "their" : "its");
    n = fp_said ? fp_images(names, shares, sizeof names, p, w, 1) : 0;
    if (n)
        fprintf(out,
                "  %s: keep%s frame pointers (%s of %s functions set one up); %s walks end in "
                "code that sets up no frame (a leaf function, or one called from code without "
                "frame pointers)\n",
                names, n > 1 ? "" : "s", shares, n > 1 ? "their" : "its", n > 1 ? "their" : "its");
}

char *report_walks_text(const struct profile *p, const struct summary *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    walks_lines(f, p, s);
    if (fclose(f)) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* ------------------------------------------------------------------ waiting */

#define WAIT_SHOWN 5           /* rows of "where it waited" */
#define WAIT_LARGE 0.2         /* shown when waiting is at least this share of samples */
#define WAIT_CALLERS 3         /* callers named after the leaf */
#define WAIT_NAME_COLS 40      /* each function's name at most, but with --wide */

struct wait_row {
    uint32_t fn[1 + WAIT_CALLERS]; /* leaf first; UINT32_MAX past the stack's end */
    int32_t process;               /* -1 when the profile has none */
    uint64_t n;
    char *text; /* the line as printed (names shortened), once made */
};

static int wait_row_cmp_key(const void *a, const void *b)
{
    const struct wait_row *x = a, *y = b;
    int c = memcmp(x->fn, y->fn, sizeof x->fn);
    return c ? c : (x->process > y->process) - (x->process < y->process);
}

static int wait_row_cmp_text(const void *a, const void *b)
{
    const struct wait_row *x = a, *y = b;
    int c = strcmp(x->text, y->text);
    return c ? c : (x->process > y->process) - (x->process < y->process);
}

static int wait_group_cmp(const void *a, const void *b)
{
    const struct wait_row *x = a, *y = b;
    if (x->n != y->n) return x->n < y->n ? 1 : -1;
    return strcmp(x->text, y->text);
}

/* The line of a row: its functions' names, each shortened as in the table (to
 * WAIT_NAME_COLS, whole with --wide), leaf first. */
static char *wait_text(const struct summary *w, const struct wait_row *r, int wide)
{
    size_t cap = 64, len = 0;
    char *text = malloc(cap);
    for (int k = 0; text && k <= WAIT_CALLERS && r->fn[k] != UINT32_MAX; k++) {
        char *name = escape_utf8_dup(w->functions[r->fn[k]].name, "");
        size_t size = (name ? strlen(name) : 1) + 8;
        char *fit = malloc(size);
        if (fit && name && !wide)
            demangle_fit(name, WAIT_NAME_COLS, fit, size);
        else if (fit)
            snprintf(fit, size, "%s", name ? name : "?");
        size_t need = len + (fit ? strlen(fit) : 1) + 8;
        if (need > cap) {
            char *q = realloc(text, cap = 2 * need);
            if (!q) free(text);
            text = q;
        }
        if (text) len += (size_t)snprintf(text + len, cap - len, "%s%s", k ? " ← " : "",
                                          fit ? fit : "?");
        free(fit);
        free(name);
    }
    return text;
}

/* When the table counts running samples and waiting is a large share: the waiting
 * stacks' most common leaves, each with its callers, so that what the table leaves
 * out is not out of sight. Lines that read the same are one line; in a tree each
 * says which processes it is from, as the table's PROCESS column does. */
static void where_waited(FILE *out, const struct profile *p, const struct summary *s, int wide)
{
    const struct summary_share *wait = &s->state[PROFILE_WAITING];
    if (p->kind != PROFILE_CPU || s->only_state != PROFILE_RUNNING || wait->share < WAIT_LARGE ||
        !wait->n)
        return;
    const char *why;
    struct summary *w = summary_build_state(p, s->type, PROFILE_WAITING, &why);
    struct wait_row *rows = w ? calloc(p->n_samples + 1, sizeof *rows) : NULL;
    size_t n = 0, m = 0;
    for (size_t i = 0; rows && i < p->n_samples; i++) {
        if (p->samples[i].state != PROFILE_WAITING) continue;
        const struct profile_stack *st = &p->stacks[p->samples[i].stack];
        struct wait_row r = {.n = 1, .process = p->threads[p->samples[i].thread].process};
        uint32_t k = 0;
        for (uint32_t d = 0; d < st->depth && k <= WAIT_CALLERS; d++) {
            uint32_t fn = w->function_of_frame[st->frames[d]];
            if (k && r.fn[k - 1] == fn) continue; /* one function's inlined frames: once */
            r.fn[k++] = fn;
        }
        for (; k <= WAIT_CALLERS; k++)
            r.fn[k] = UINT32_MAX;
        rows[n++] = r;
    }
    if (rows) { /* one row per (functions, process), then its line */
        qsort(rows, n, sizeof *rows, wait_row_cmp_key);
        for (size_t i = 0; i < n; i++) {
            if (m && !wait_row_cmp_key(&rows[m - 1], &rows[i]))
                rows[m - 1].n += rows[i].n;
            else
                rows[m++] = rows[i];
        }
        for (size_t i = 0; i < m; i++)
            if (!(rows[i].text = wait_text(w, &rows[i], wide))) {
                for (size_t j = 0; j < i; j++)
                    free(rows[j].text);
                m = 0;
            }
    }
    /* Lines that read the same merged: the processes of each, as struct fn_procs. */
    struct fn_procs *procs = m ? calloc(m, sizeof *procs) : NULL;
    size_t g = 0;
    if (procs) {
        qsort(rows, m, sizeof *rows, wait_row_cmp_text);
        for (size_t i = 0; i < m; i++) {
            int same = g && !strcmp(rows[g - 1].text, rows[i].text);
            if (!same) {
                procs[g] = (struct fn_procs){-1, 0, 1};
                rows[g++] = rows[i];
            } else {
                rows[g - 1].n += rows[i].n;
                free(rows[i].text);
            }
            struct fn_procs *fp = &procs[g - 1];
            int32_t pr = rows[i].process;
            if (pr < 0 || (same && rows[i - 1].process == pr)) continue;
            if (fp->first < 0)
                fp->first = pr;
            else if (strcmp(p->processes[pr].name, p->processes[fp->first].name))
                fp->same_name = 0;
            fp->n++;
        }
        /* Most first, each row taking its processes along. */
        for (size_t i = 0; i < g; i++)
            rows[i].process = (int32_t)i;
        qsort(rows, g, sizeof *rows, wait_group_cmp);
        fprintf(out, "\n  where it waited (%.1f%% of all samples; --state waiting for its table):\n",
                100 * wait->share);
        int pcols = PROCESS_COLS; /* --wide: as wide as the widest cell shown */
        for (size_t i = 0; wide && i < g && i < WAIT_SHOWN; i++) {
            int c = process_cols(p, &procs[rows[i].process]);
            pcols = c > pcols ? c : pcols;
        }
        for (size_t i = 0; i < g && i < WAIT_SHOWN; i++) {
            fprintf(out, "  %5.1f%%  ", 100.0 * (double)rows[i].n / (double)s->n_samples_all);
            if (p->n_processes > 1) {
                process_cell(out, p, &procs[rows[i].process], pcols);
                fputc(' ', out);
            }
            fprintf(out, "%s\n", rows[i].text);
        }
    } else if (m) {
        for (size_t i = 0; i < m; i++)
            free(rows[i].text);
    }
    for (size_t i = 0; i < g; i++)
        free(rows[i].text);
    free(procs);
    free(rows);
    summary_free(w);
}

static void footer(FILE *out, const struct profile *p, const struct summary *s)
{
    int any_insignificant = 0;
    for (size_t i = 0; i < s->n_functions && i < REPORT_TOP; i++)
        any_insignificant |= s->functions[i].self.value && !s->functions[i].self.significant;
    fputc('\n', out);
    if (any_insignificant)
        fputs("  ~ self share within two standard errors of zero: not yet told apart from noise\n",
              out);
    if (s->n_events < REPORT_LOW_CONFIDENCE)
        fprintf(out,
                "  low confidence: only %.0f sample%s (about %d needed); record longer "
                "or at a higher rate\n",
                s->n_events, s->n_events == 1 ? "" : "s", REPORT_LOW_CONFIDENCE);
    walks_lines(out, p, s);
    if (p->kind == PROFILE_CPU && !p->meta.dropped)
        fputs("  0 samples dropped\n", out);
    else if (p->kind == PROFILE_CPU)
        fprintf(out,
                "  %" PRIu64 " sample%s dropped (%.2f%% of all, kept and lost; the totals above "
                "leave them out; the engine's note says which time and threads)\n",
                p->meta.dropped, p->meta.dropped == 1 ? "" : "s",
                100.0 * (double)p->meta.dropped /
                    (double)(s->n_samples_all + p->meta.dropped));
    if (p->kind == PROFILE_CPU && p->meta.runtime_samples) {
        /* Samples taken at the rate the run achieved: each stands for 1/rate s. */
        uint64_t n = p->meta.runtime_samples;
        double ms = p->meta.rate_hz > 0 ? 1e3 * (double)n / p->meta.rate_hz : 0;
        fprintf(out, "  kestrel's own work on the program's threads: %" PRIu64 " sample%s", n,
                n == 1 ? "" : "s");
        if (ms > 0) fprintf(out, " (about %.1f ms)", ms);
        fputs(", left out of the profile\n", out);
    }
    /* What the run said about itself: an engine fallback and why, what went past a
     * table's limit. */
    for (size_t i = 0; i < p->meta.n_comments; i++) {
        /* The runtime's own count of cut walks: the lines above say it for the samples
         * shown. */
        if (!strncmp(p->meta.comments[i], PROFILE_WALKS_COMMENT, strlen(PROFILE_WALKS_COMMENT)))
            continue;
        char *safe = escape_utf8_dup(p->meta.comments[i], "");
        fprintf(out, "  note: %s\n", safe ? safe : "?");
        free(safe);
    }
    for (size_t i = 0; i < p->meta.n_tables; i++)
        if (p->meta.tables[i].past)
            fprintf(out, "  table %s full: %" PRIu64 " past its limit of %" PRIu64 "\n",
                    p->meta.tables[i].name, p->meta.tables[i].past, p->meta.tables[i].limit);
}

int report_write(const struct profile *p, const struct summary *s, FILE *out, int flags)
{
    header(out, p, s);
    split(out, p, s);
    processes(out, p, s);
    table(out, p, s, flags);
    where_waited(out, p, s, flags & REPORT_WIDE);
    footer(out, p, s);
    return fflush(out) || ferror(out) ? -EIO : 0;
}
