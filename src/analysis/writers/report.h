/* The terminal report (DESIGN.md §2): a header (wall, CPU, samples, requested and
 * achieved rate, threads), the running/waiting split, and the top-10 table
 *   SELF% ±SE TOTAL% SELF TOTAL FUNCTION LOCATION
 * with eighth-block bars in the self gutter, red/bold at >= 5% and yellow at >= 0.5%
 * when colour is on; a low-confidence flag under about 100 samples; how many samples
 * were dropped; and, from REPORT_CUT_SHARE of samples with an incomplete stack on,
 * that share with its standard error, the images where their walks ended and, for
 * those whose CFI says they keep no frame pointers, the fix (nothing is said below
 * it, and a profile that does not record how its walks ended says so). Sampling gives
 * no call counts, so there is no calls column. */
#ifndef KESTREL_REPORT_H
#define KESTREL_REPORT_H
#include <stdio.h>

#include "analysis/model/profile.h"
#include "analysis/aggregate/summary.h"

#define REPORT_TOP 10
#define REPORT_LOW_CONFIDENCE 100 /* fewer samples than this: say so */
#define REPORT_CUT_SHARE 0.01     /* incomplete stacks below this share: say nothing */

/* The report's lines on how whole the stacks are (as the footer prints them, two
 * spaces before each, each ending in a newline; "" when it says nothing), for the
 * viewer's banner. malloc'd; NULL when memory runs out. */
char *report_walks_text(const struct profile *p, const struct summary *s);
#define REPORT_PROCESSES 12       /* rows of a tree's process table; the rest summed */

/* Colour only when out is a terminal and NO_COLOR is unset (https://no-color.org). */
int report_wants_colour(FILE *out);

#define REPORT_COLOUR 1 /* flags of report_write: bars and shares coloured */
#define REPORT_WIDE 2   /* whole function names, however wide (`--wide`) */

/* Writes the report of s (an aggregation of p). The FUNCTION column fits the
 * terminal (COLUMNS, else the terminal's width, else 120 columns): a name too long
 * is shortened by demangle_fit, so two functions still read apart. Returns 0 or
 * -errno. */
int report_write(const struct profile *p, const struct summary *s, FILE *out, int flags);
#endif
