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

/* The process root of a thread in a profile of several processes, "gzip [1234]";
 * NULL for a profile of one process (its exports stay as they were) or when memory
 * runs out (*oom set). */
char *export_process_root(const struct profile *p, size_t thread, int *oom);

/* "gzip [1234] main-0" in a profile of several processes, else "main-0": the name of
 * one thread's profile (speedscope) or node (cpuprofile). NULL when memory runs out. */
char *export_thread_title(const struct profile *p, size_t thread);

/* Sample i's value of the type the summary aggregated, 0 for a sample of a state the
 * summary does not count: every export shows the same quantity, of the same samples,
 * as the summary it was given (on-CPU by default, DESIGN.md §2). */
static inline int64_t export_value(const struct summary *s, size_t i)
{
    if (s->only_state != SUMMARY_ALL_STATES && s->profile->samples[i].state != s->only_state)
        return 0;
    return profile_values(s->profile, i)[s->type];
}

/* Whether an export holds running and waiting samples alike, and so must mark each
 * waiting one (`[waiting]` in folded, waiting profiles in speedscope, (idle) in
 * cpuprofile): a CPU profile exported with every state. */
static inline int export_marks_waiting(const struct summary *s)
{
    return s->only_state == SUMMARY_ALL_STATES && s->profile->kind == PROFILE_CPU;
}

/* Sample i is a waiting sample that must be marked. */
static inline int export_waiting(const struct summary *s, size_t i)
{
    return export_marks_waiting(s) && s->profile->samples[i].state == PROFILE_WAITING;
}

#define EXPORT_WAITING_FRAME "[waiting]"

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
