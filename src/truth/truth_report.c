/* The ground truth's report: text for people, JSON for scripts (truth_report.h). */
#include "truth/truth_report.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

static void print_calib(FILE *out, const struct calib_result *c)
{
    fprintf(out, "Calibration of burn() on this host\n");
    fprintf(out, "  cost per unit         %.1f ns\n", c->ns_per_unit);
    fprintf(out, "  linearity R²          %.6f\n", c->r2);
    fprintf(out, "  worst rel. residual   %.2f%% (at %llu units; minimum of the repeats)\n",
            100 * c->worst_residual, (unsigned long long)c->worst_units);
    fprintf(out, "  median/minimum        +%.1f%%\n", 100 * c->spread);
    if (c->others_cores >= 0)
        fprintf(out, "  other processes       %.2f cores busy while timing\n", c->others_cores);
    else
        fprintf(out, "  other processes       unknown\n");
    fprintf(out, "  verdict               %s: %s\n\n", c->fit ? "FIT" : "UNFIT", c->reason);
}

static void print_rates(FILE *out, const struct truth_report *r)
{
    fprintf(out, "Sampling rate (%s; %.2f s of CPU work per rate, %.2f s unprofiled)\n",
            r->profiler, r->baseline_cpu_s, r->baseline_cpu_s);
    fprintf(out, "  %9s  %9s  %6s  %9s\n", "requested", "achieved", "ratio", "overhead");
    for (unsigned k = 0; k < r->n_rates; k++) {
        const struct truth_rate *t = &r->rates[k];
        if (!t->ok)
            fprintf(out, "  %6u Hz  failed: %s\n", t->requested, t->note);
        else
            fprintf(out, "  %6u Hz  %6.0f Hz  %6.2f  %8.1f%%\n", t->requested, t->achieved,
                    t->ratio, 100 * t->overhead);
    }
    fputc('\n', out);
}

static void print_errors(FILE *out, const struct truth_report *r)
{
    fprintf(out, "Error against truth as samples grow (%s at %u Hz; seven functions, 40%%..2%%)\n",
            r->profiler, r->error_hz);
    if (r->error_note[0]) {
        fprintf(out, "  %s\n\n", r->error_note);
        return;
    }
    fprintf(out, "  %8s  %7s  %14s  %19s  %6s\n", "samples", "windows", "mean abs error",
            "binomial sqrt(p(1-p)/n)", "ratio");
    for (unsigned k = 0; k < r->n_rows; k++) {
        const struct accuracy_point *p = &r->rows[k];
        fprintf(out, "  %8llu  %7u  %14.4f  %23.4f  %5.2fx\n", (unsigned long long)p->samples,
                p->windows, p->mae, p->binomial, p->ratio);
    }
    fprintf(out, "  (each row: the run cut into disjoint windows of that many samples, the "
                 "error averaged over them)\n");
    if (r->floor_ok) {
        if (r->floor.seen)
            fprintf(out,
                    "  floor: the error stops falling at about %.4f (%.2f points) from about "
                    "%.0f samples on; more samples stop buying accuracy\n",
                    r->floor.floor, 100 * r->floor.floor, r->floor.from_samples);
        else
            fprintf(out,
                    "  floor: none seen; the error still falls as sampling predicts (bias "
                    "estimate %.4f)\n",
                    r->floor.floor);
    }
    fputc('\n', out);
}

static void print_detect(FILE *out, const struct truth_report *r)
{
    static const double shares[] = {0.10, 0.03, 0.01, 0.001};
    fprintf(out, "Detectability: samples for a share to clear two standard errors, n = 4(1-p)/p\n");
    fprintf(out, "  %10s  %14s  %s\n", "true share", "samples needed", "seconds of CPU");
    for (unsigned i = 0; i < 4; i++) {
        uint64_t n = accuracy_samples_to_detect(shares[i]);
        if (r->detect_rate > 0)
            fprintf(out, "  %9.1f%%  %14llu  %.1f s at %.0f Hz achieved\n", 100 * shares[i],
                    (unsigned long long)n, (double)n / r->detect_rate, r->detect_rate);
        else
            fprintf(out, "  %9.1f%%  %14llu\n", 100 * shares[i], (unsigned long long)n);
    }
    if (!r->verify_samples) {
        fputc('\n', out);
        return;
    }
    unsigned clear = 0;
    for (unsigned i = 0; i < WORKLOAD_SHARES_N; i++)
        clear += r->fns[i].clears;
    fprintf(out,
            "  verified with %llu samples: %u of %u functions clear the bar; truth by "
            "construction and by timing each alone differ by at most %.2f points",
            (unsigned long long)r->verify_samples, clear, WORKLOAD_SHARES_N, 100 * r->disagreement);
    if (r->disagreement_run >= 0)
        fprintf(out, ", timed alone and timed in the run by at most %.2f (the run's is the truth)",
                100 * r->disagreement_run);
    fprintf(out, "\n  %-9s %11s %7s %7s %16s %6s\n", "function", "constructed", "timed", "in run",
            "measured ± SE", "z");
    for (unsigned i = 0; i < WORKLOAD_SHARES_N; i++) {
        const struct truth_fn *f = &r->fns[i];
        char run[16] = "-";
        if (f->in_run >= 0) snprintf(run, sizeof run, "%.2f%%", 100 * f->in_run);
        fprintf(out, "  %-9s %10.1f%% %6.2f%% %7s %7.2f%% ± %4.2f %+6.1f%s\n", f->name,
                100 * f->constructed, 100 * f->timed, run, 100 * f->measured, 100 * f->se, f->z,
                f->clears ? "" : "  (below the bar)");
    }
    fputc('\n', out);
}

static void print_blind(FILE *out, const struct truth_report *r)
{
    fprintf(out, "Blind spots (%s), truth beside measurement\n", r->profiler);
    for (unsigned i = 0; i < TRUTH_NBLIND; i++) {
        const struct truth_blind *b = &r->blind[i];
        if (!b->what) continue;
        if (!b->ok) {
            fprintf(out, "  %-26s not measured: %s\n", b->what, b->detail);
            continue;
        }
        fprintf(out, "  %-26s truth %5.1f%%  measured %5.1f%% ± %.1f  (%+.1f SE)%s\n", b->what,
                100 * b->truth, 100 * b->measured, 100 * b->se, b->z,
                b->within ? "" : "  WRONG beyond 2 SE");
        fprintf(out, "  %-26s %s: %s\n", "", b->quantity, b->detail);
        fprintf(out, "  %-26s why: %s\n", "", b->explain);
    }
}

void truth_print_text(FILE *out, const struct truth_report *r, int full)
{
    fprintf(out, "kestrel calibrate (%s): how far this host lets a profile be trusted\n\n",
            full ? "full" : "quick");
    print_calib(out, &r->calib);
    if (!r->profiler) return;
    print_rates(out, r);
    print_errors(out, r);
    print_detect(out, r);
    print_blind(out, r);
    fprintf(out, "\n(%.1f s)\n", r->seconds);
}

/* --- JSON -------------------------------------------------------------------------- */

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *calib_json(const struct calib_result *c)
{
    json_t *sizes = json_array();
    for (unsigned k = 0; k < c->nsizes; k++)
        json_array_append_new(sizes, json_pack("{s:I,s:o}", "units", (json_int_t)c->units[k],
                                               "min_ns", num(c->min_ns[k])));
    return json_pack("{s:o,s:o,s:o,s:o,s:I,s:o,s:o,s:o,s:b,s:s,s:o}", "ns_per_unit",
                     num(c->ns_per_unit), "intercept_ns", num(c->intercept_ns), "r2", num(c->r2),
                     "worst_residual", num(c->worst_residual), "worst_units",
                     (json_int_t)c->worst_units, "spread", num(c->spread), "others_cores",
                     c->others_cores >= 0 ? num(c->others_cores) : json_null(), "seconds",
                     num(c->seconds), "fit", c->fit, "reason", c->reason, "sizes", sizes);
}

json_t *truth_report_json(const struct truth_report *r, int full)
{
    json_t *root = json_pack("{s:s,s:o}", "mode", full ? "full" : "quick", "calibration",
                             calib_json(&r->calib));
    if (!r->profiler) return root;
    json_object_set_new(root, "profiler", json_string(r->profiler));
    json_t *rates = json_array();
    for (unsigned k = 0; k < r->n_rates; k++) {
        const struct truth_rate *t = &r->rates[k];
        json_array_append_new(
            rates, t->ok
                       ? json_pack("{s:i,s:o,s:o,s:o,s:I}", "requested_hz", t->requested,
                                   "achieved_hz", num(t->achieved), "ratio", num(t->ratio),
                                   "overhead", num(t->overhead), "samples", (json_int_t)t->samples)
                       : json_pack("{s:i,s:s}", "requested_hz", t->requested, "error", t->note));
    }
    json_object_set_new(root, "rates", rates);
    json_t *rows = json_array();
    for (unsigned k = 0; k < r->n_rows; k++)
        json_array_append_new(
            rows, json_pack("{s:I,s:i,s:o,s:o,s:o}", "samples", (json_int_t)r->rows[k].samples,
                            "windows", (int)r->rows[k].windows, "mae", num(r->rows[k].mae),
                            "binomial", num(r->rows[k].binomial), "ratio", num(r->rows[k].ratio)));
    json_t *err = json_pack("{s:i,s:o,s:o}", "rate_hz", r->error_hz, "achieved_hz",
                            num(r->error_achieved), "rows", rows);
    if (r->floor_ok)
        json_object_set_new(err, "floor",
                            json_pack("{s:o,s:b,s:o}", "floor", num(r->floor.floor), "seen",
                                      r->floor.seen, "from_samples", num(r->floor.from_samples)));
    if (r->error_note[0]) json_object_set_new(err, "error", json_string(r->error_note));
    json_object_set_new(root, "errors", err);

    static const double shares[] = {0.10, 0.03, 0.01, 0.001};
    json_t *det = json_array();
    for (unsigned i = 0; i < 4; i++) {
        uint64_t n = accuracy_samples_to_detect(shares[i]);
        json_array_append_new(
            det,
            json_pack("{s:o,s:I,s:o}", "share", num(shares[i]), "samples", (json_int_t)n, "seconds",
                      r->detect_rate > 0 ? num((double)n / r->detect_rate) : json_null()));
    }
    json_t *fns = json_array();
    for (unsigned i = 0; i < WORKLOAD_SHARES_N; i++) {
        const struct truth_fn *f = &r->fns[i];
        json_array_append_new(fns,
                              json_pack("{s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:b}", "function", f->name,
                                        "constructed", num(f->constructed), "timed", num(f->timed),
                                        "in_run", f->in_run >= 0 ? num(f->in_run) : json_null(),
                                        "measured", num(f->measured), "se", num(f->se), "z",
                                        num(f->z), "clears", f->clears));
    }
    json_object_set_new(root, "detectability",
                        json_pack("{s:o,s:o,s:I,s:o,s:o,s:o}", "rate_hz", num(r->detect_rate),
                                  "table", det, "verify_samples", (json_int_t)r->verify_samples,
                                  "disagreement", num(r->disagreement), "disagreement_run",
                                  r->disagreement_run >= 0 ? num(r->disagreement_run) : json_null(),
                                  "functions", fns));
    json_t *blind = json_array();
    for (unsigned i = 0; i < TRUTH_NBLIND; i++) {
        const struct truth_blind *b = &r->blind[i];
        if (!b->what) continue;
        json_array_append_new(
            blind, json_pack("{s:s,s:s,s:b,s:o,s:o,s:o,s:o,s:b,s:I,s:s,s:s}", "what", b->what,
                             "quantity", b->quantity, "measured_ok", b->ok, "truth", num(b->truth),
                             "measured", num(b->measured), "se", num(b->se), "z", num(b->z),
                             "within_2se", b->within, "samples", (json_int_t)b->samples, "detail",
                             b->detail, "explanation", b->explain));
    }
    json_object_set_new(root, "blind_spots", blind);
    json_object_set_new(root, "seconds", num(r->seconds));
    return root;
}
