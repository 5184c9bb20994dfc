/* The HTML viewer of a comparison (`kestrel diff --format html`): NEW's flame graph
 * with every frame coloured by the change of its function's total share, red where it
 * grew and blue where it shrank when the change is real, grey within noise (the same
 * test as the table's verdict, not a colour threshold), and both shares, their
 * standard errors and z in the tooltip. The plain viewer is writer_html. */
#ifndef KESTREL_WRITE_HTML_H
#define KESTREL_WRITE_HTML_H
#include <stdio.h>

#include "analysis/aggregate/diff.h"

/* 0 or -errno. */
int write_html_diff(const struct diff *d, FILE *out);
#endif
