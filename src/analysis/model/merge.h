/* The profile of a process tree: the profiles of its processes merged into one
 * model, with a process per pid (profile.h, struct profile_process). The inputs may
 * be symbolized or not: an unsymbolized frame of a file mapped once in its process is
 * moved to the tree's first image of that file, so the tree is symbolized once, each
 * file opened once, and one function of many processes is one frame. */
#ifndef KESTREL_MERGE_H
#define KESTREL_MERGE_H
#include <stddef.h>

#include "analysis/model/profile.h"

/* A new profile holding every sample of in[0..n), all of one kind, with every sample
 * type any of them has (a value a profile lacks is 0). Processes are in the order they started; an exec chain of one pid (the
 * profiles of one pid, by exec_gen) is one process. The inputs are left as they are.
 * NULL with a one-line reason in why on failure. */
struct profile *profile_merge_tree(const struct profile *const *in, size_t n, char *why,
                                   size_t why_size);
#endif
