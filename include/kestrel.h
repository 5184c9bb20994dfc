/* kestrel — the public API of libkestrel, the in-process sampling profiler.
 *
 * Every function is safe to call whether or not profiling is active; while the
 * profiler is inactive they do nothing and return 0. Errors are negative errno
 * values. Link with -lkestrel (pkg-config kestrel) or preload libkestrel.so. */
#ifndef KESTREL_H
#define KESTREL_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Registers the calling thread with the CPU profiler under a fiber id and a label
 * (copied; at most 31 bytes kept). Threads made by pthread_create and the main
 * thread register themselves; call this for threads made any other way (clone,
 * a foreign runtime) or to give a thread a fiber id and label of its own. */
int kestrel_thread_register(int64_t fiber_id, const char *label);

/* Removes the calling thread from the CPU profiler. Its samples stay in the profile. */
int kestrel_thread_unregister(void);

#ifdef __cplusplus
}
#endif
#endif
