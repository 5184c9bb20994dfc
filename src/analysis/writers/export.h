/* What the export writers (write_*.c) share: a thread's synthetic root frame, the
 * value a writer shows for a sample, and the time order of samples. */
#ifndef KESTREL_EXPORT_H
#define KESTREL_EXPORT_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/model/intmap.h"
#include "analysis/model/profile.h"
#include "analysis/aggregate/summary.h"

/* "<label>-<fiber>" (FORMATS.md §3), malloc'd and unescaped; NULL when memory runs
 * out. */
char *export_thread_root(const struct profile *p, size_t thread);

/* Sample i's value of the type the summary aggregated: every export shows the same
 * quantity as the summary it was given. */
static inline int64_t export_value(const struct summary *s, size_t i)
{
    return profile_values(s->profile, i)[s->type];
}

/* The function (summary.functions index) a frame belongs to. */
static inline uint32_t export_function(const struct summary *s, uint32_t frame)
{
    return s->function_of_frame[frame];
}

/* Writes v in decimal: the writers print millions of numbers, and fprintf's format
 * parsing would dominate their time. */
void export_put_int(FILE *out, int64_t v);

/* Sorts order[0..n) (sample indices, ascending) by the samples' times, stably: equal
 * times keep index order. A radix sort: a million samples in a few passes, where
 * qsort's comparisons were a quarter of the cpuprofile writer. 0 or -ENOMEM. */
int export_sort_by_time(const struct profile *p, size_t *order, size_t n);
#endif
