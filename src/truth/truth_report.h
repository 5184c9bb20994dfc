/* The ground truth's report (`kestrel calibrate`): the calibration and its verdict,
 * then the rate, error, detectability and blind-spot tables of truth.h. */
#ifndef KESTREL_TRUTH_REPORT_H
#define KESTREL_TRUTH_REPORT_H
#include <jansson.h>
#include <stdio.h>

#include "truth/truth.h"

/* r->profiler NULL: only the calibration is printed (an unfit host stops there). */
void truth_print_text(FILE *out, const struct truth_report *r, int full);
json_t *truth_report_json(const struct truth_report *r, int full);
#endif
