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

/* ===== heap profiler =====
 *
 * Samples allocations (malloc and the rest of its family) of every thread, about one
 * per `interval` bytes requested, and reports what they allocated and what is still
 * in use as a gzip-compressed pprof profile (FORMATS.md §2). One profile per process;
 * KESTREL_HEAP=<path> starts one before main and writes it at exit. */

#define KESTREL_HEAP_INTERVAL_DEFAULT 524288 /* bytes */
#define KESTREL_HEAP_INTERVAL_MIN 65536

/* Starts the heap profile, sampling about once per `interval` bytes (0: the
 * default). -EINVAL for an interval below 64 KiB or above 4 GiB (nothing starts),
 * -EBUSY while a profile runs, -ENOMEM. */
int kestrel_heap_start(size_t interval);

/* The profile so far, as a gzip'd pprof in *data (free() it), *size bytes; the
 * profile keeps running. -ESRCH when none runs. */
int kestrel_heap_profile(void **data, size_t *size);

/* Ends the profile; the final one goes to *data as above, or is discarded when data
 * is NULL. -ESRCH when none runs. */
int kestrel_heap_stop(void **data, size_t *size);

/* 1 while a heap profile runs, else 0. */
int kestrel_heap_is_running(void);

#ifdef __cplusplus
}
#endif
#endif
