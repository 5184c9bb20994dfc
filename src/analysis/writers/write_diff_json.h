/* A comparison as JSON (`kestrel diff --format json`, and the `diff` object of a diff
 * page, docs/viewer-data.md): for editors and scripts, every function of either
 * profile with both sides of its self and total, z and verdict. */
#ifndef KESTREL_WRITE_DIFF_JSON_H
#define KESTREL_WRITE_DIFF_JSON_H
#include <stdio.h>

#include "analysis/aggregate/diff.h"

/* One JSON object. 0 or -errno. */
int write_diff_json(const struct diff *d, FILE *out);
#endif
