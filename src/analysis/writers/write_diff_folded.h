/* The folded form of a comparison, BASE and NEW values per stack (write_diff_folded.c). */
#ifndef KESTREL_WRITE_DIFF_FOLDED_H
#define KESTREL_WRITE_DIFF_FOLDED_H
#include <stdio.h>

#include "analysis/aggregate/summary.h"

/* 0 or -errno. */
int write_diff_folded(const struct summary *base, const struct summary *now, FILE *out);
#endif
