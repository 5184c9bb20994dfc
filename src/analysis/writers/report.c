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

/* "file.c:12", the image's name for an unresolved frame, or "?". */
static void location(char *buf, size_t n, const struct profile *p,
                     const struct summary_function *fn)
{
    if (fn->file && fn->line)
        snprintf(buf, n, "%s:%d", base_name(fn->file), fn->line);
    else if (fn->file)
        snprintf(buf, n, "%s", base_name(fn->file));
    else if (fn->image >= 0)
        /* Anonymous executable memory: JIT code. */
        snprintf(buf, n, "%s", *p->images[fn->image].path ? base_name(p->images[fn->image].path)
                                                          : "[jit]");
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

/* The total of `type` over the samples of one state; -1 when the type is absent. */
static int64_t type_total_state(const struct profile *p, const char *type, int state)
{
    int k = profile_find_sample_type(p, type);
    int64_t sum = 0;
    for (size_t i = 0; k >= 0 && i < p->n_samples; i++)
        if (p->samples[i].state == state &&
            __builtin_add_overflow(sum, profile_values(p, i)[k], &sum))
            return -1;
    return k >= 0 ? sum : -1;
}

static void header(FILE *out, const struct profile *p, const struct summary *s)
{
    const struct profile_sample_type *t = &p->sample_types[s->type];
    char buf[64];
    const char *exe = p->meta.exe ? p->meta.exe : p->source ? p->source : "profile";
    char *safe = escape_utf8_dup(exe, "");
    fprintf(out, "kestrel: %s", safe ? safe : "?");
    free(safe);
    if (p->meta.pid >= 0) fprintf(out, " (pid %" PRId64 ")", p->meta.pid);
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
        /* Achieved: the samples of running threads per second of their CPU time, as
         * measured; the runtime's rate_hz is the rate it aimed at, and with no sample
         * nothing was achieved. */
        const char *sep = p->meta.requested_hz > 0 ? ", " : " · ";
        int64_t cpu_all = type_total_state(p, "cpu", PROFILE_RUNNING);
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

/* The FUNCTION column's width: the widest name with --wide; else what the terminal
 * leaves beside the numbers and the widest location. *values = 0 when the terminal is
 * too narrow for the SELF and TOTAL values (the shares say the same). */
static int name_cols(FILE *out, const struct profile *p, const struct summary *s, int wide,
                     int *values, int *loc_cols)
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
    int cols =
        term - FIXED_COLS + (*values ? 0 : VALUE_COLS) - (locs < *loc_cols ? locs : *loc_cols);
    if (cols > names) cols = names;
    return cols < MIN_NAME_COLS ? MIN_NAME_COLS : cols;
}

static void table(FILE *out, const struct profile *p, const struct summary *s, int flags)
{
    const char *unit = p->sample_types[s->type].unit;
    int colour = flags & REPORT_COLOUR, values, loc_cols;
    int ncols = name_cols(out, p, s, flags & REPORT_WIDE, &values, &loc_cols);
    size_t shown = 0;
    fprintf(out, "\n%-*s %6s %5s %7s", BAR_CELLS, "", "SELF%", "±SE", "TOTAL%");
    if (values) fprintf(out, " %9s %9s", "SELF", "TOTAL");
    fprintf(out, "  %-*s %s\n", ncols, "FUNCTION", "LOCATION");
    for (size_t i = 0; i < s->n_functions && shown < REPORT_TOP; i++) {
        const struct summary_function *fn = &s->functions[i];
        if (!fn->self.value && !fn->total.value) continue;
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
        char *name = escape_utf8_dup(fn->name, "");
        put_name(out, name ? name : "?", ncols);
        free(name);
        char *safe = escape_utf8_dup(loc, "");
        const char *l = safe ? safe : "?";
        int over = cols_of(l) - loc_cols;
        if (over > 0) { /* keep the end: the file's name and line */
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
        int16_t pm = p->images[img].fp_permille;
        if ((pm >= FPCHECK_WITHOUT_PERMILLE) != keeps) continue;
        char *name = escape_utf8_dup(base_name(p->images[img].path), "");
        o += (size_t)snprintf(names + o, o < n ? n - o : 0, "%s%s", count ? ", " : "",
                              name ? name : "?");
        so += (size_t)snprintf(shares + so, so < n ? n - so : 0, "%s%d%%", count ? ", " : "",
                               (pm + 5) / 10);
        free(name);
        count++;
    }
    return count;
}

/* How whole the stacks are (report.h). */
static void walks_lines(FILE *out, const struct profile *p, const struct summary *s)
{
    const struct summary_walks *w = &s->walks;
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
    for (size_t i = 0; i < w->n_ends && end_shown(w, i); i++) {
        int32_t img = w->ends[i].image;
        char *name = escape_utf8_dup(img >= 0 ? base_name(p->images[img].path) : "(no image)", "");
        fprintf(out, "%s%s (%.1f%%)", i ? ", " : "; walks end early in ", name ? name : "?",
                100 * w->ends[i].share.share);
        free(name);
    }
    fputc('\n', out);
    char names[1024], shares[1024];
    size_t n = fp_images(names, shares, sizeof names, p, w, 0);
    if (n)
        fprintf(out,
                "  %s: built without frame pointers (%s of %s functions set one up, by %s CFI); "
                "rebuild with -fno-omit-frame-pointer\n",
                names, shares, n > 1 ? "their" : "its", n > 1 ? "their" : "its");
    n = fp_images(names, shares, sizeof names, p, w, 1);
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
    if (p->kind == PROFILE_CPU)
        fprintf(out, "  %" PRIu64 " sample%s dropped\n", p->meta.dropped,
                p->meta.dropped == 1 ? "" : "s");
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
    table(out, p, s, flags);
    footer(out, p, s);
    return fflush(out) || ferror(out) ? -EIO : 0;
}
