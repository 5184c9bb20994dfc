/* The terminal report of `kestrel diff` (aggregate/diff.h): a header with both
 * profiles' samples, rates and durations and what makes them hard to compare, then
 * the functions whose self and whose total changed most,
 *   BASE% ±SE  NEW% ±SE  Δ pts  z  verdict  FUNCTION
 * (times instead of shares with --absolute), `real` or `noise` per the corrected test,
 * and the functions new in NEW or gone from BASE marked as such. */
#ifndef KESTREL_REPORT_DIFF_H
#define KESTREL_REPORT_DIFF_H
#include <stdio.h>

#include "analysis/aggregate/diff.h"

struct report_diff_options {
    size_t top;   /* rows per table */
    int by_delta; /* sorted by |Δ| instead of |z| */
    int colour;   /* red for a real growth, blue for a real shrink */
};


/* Sorts d's rows as it goes. Returns 0 or -errno. */
int report_diff_write(struct diff *d, const struct report_diff_options *o, FILE *out);
#endif
