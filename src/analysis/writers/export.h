/* What the export writers (write_*.c) share: a thread's synthetic root frame, the
 * value a writer shows for a sample, and a small integer map for interning. */
#ifndef KESTREL_EXPORT_H
#define KESTREL_EXPORT_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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

/* An open-addressing map from nonzero 64-bit keys to 32-bit values. */
struct export_map {
    uint64_t *keys; /* 0 = empty slot */
    uint32_t *vals;
    size_t cap; /* a power of two */
    size_t n;
};

/* The value slot for key (nonzero), valid until the next insertion; *added says it
 * was absent (the caller fills it). NULL when memory runs out. */
uint32_t *export_map_slot(struct export_map *m, uint64_t key, int *added);
/* The value for key; when absent, stores `fresh` and returns it. -1 when memory runs
 * out. */
int64_t export_map_intern(struct export_map *m, uint64_t key, uint32_t fresh);
void export_map_free(struct export_map *m);

/* Sorts order[0..n) (sample indices, ascending) by the samples' times, stably: equal
 * times keep index order. A radix sort: a million samples in a few passes, where
 * qsort's comparisons were a quarter of the cpuprofile writer. 0 or -ENOMEM. */
int export_sort_by_time(const struct profile *p, size_t *order, size_t n);

/* Grows *v (elements of `size` bytes, capacity *cap) to hold `need`; 0 or -ENOMEM. */
int export_reserve(void **v, size_t *cap, size_t need, size_t size);
#endif
