/* kestrel — the public API of libkestrel, the in-process sampling profiler.
 *
 * Every function is safe to call whether or not profiling is active. Errors are
 * negative errno values. Link with -lkestrel (pkg-config kestrel) or preload
 * libkestrel.so.
 *
 * On Windows and Wasm (wasm32-wasi), libkestrel is an inactive stub
 * (src/platform/stub): each function does nothing and returns the value given with
 * it below as "Inactive:", the value it returns on Linux when nothing is being
 * profiled, except that the two starts return -ENOTSUP; the KESTREL_* environment
 * variables are ignored and nothing is printed. The errno values are the
 * platform's own (<errno.h>). */
#ifndef KESTREL_H
#define KESTREL_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility; the API is what it exports. A
 * Windows DLL exports every function it defines (the stub defines only these). */
#ifndef KESTREL_API
#ifdef _WIN32
#define KESTREL_API
#else
#define KESTREL_API __attribute__((visibility("default")))
#endif
#endif

/* Registers the calling thread with the CPU profiler under a fiber id and a label
 * (copied; at most 31 bytes kept). Threads made by pthread_create and the main
 * thread register themselves; call this for threads made any other way (clone,
 * a foreign runtime) or to give a thread a fiber id and label of its own.
 * Inactive (no CPU session runs): does nothing, 0. */
KESTREL_API int kestrel_thread_register(int64_t fiber_id, const char *label);

/* Removes the calling thread from the CPU profiler. Its samples stay in the profile.
 * Inactive: does nothing, 0. */
KESTREL_API int kestrel_thread_unregister(void);

/* Fibers: a stack of the program's own that a thread switches to (makecontext and
 * swapcontext, boost.context, a coroutine library). Registers [stack, stack + size) as
 * fiber `fiber_id` with a label (copied; at most 31 bytes kept; NULL or "": "fiber"):
 * a sample taken while a thread runs on it is walked to the fiber's outermost frame and
 * shown as the thread's fiber (`<label>-<fiber_id>` in every export). Stacks not
 * registered are found from the writable mapping that holds the stack pointer and
 * labelled "fiber" with a number of kestrel's own. Registering a stack again replaces
 * it. 0, -EINVAL (NULL stack or size under 64), -ENOSPC (4096 fibers registered at
 * once). Works whether or not a session runs (no allocation). Inactive (the stubs): 0. */
KESTREL_API int kestrel_fiber_register(const void *stack, size_t size, int64_t fiber_id,
                                       const char *label);

/* Removes a fiber registered at `stack`. 0, or -ENOENT when none is. Inactive (the
 * stubs): 0. */
KESTREL_API int kestrel_fiber_unregister(const void *stack);

/* CPU profiling of a region of code, without environment variables. Starts sampling
 * this process at `hz` samples per second of each thread's time (0 = 997; otherwise
 * 10..10000, else -EINVAL) with the engine KESTREL_PROFILE_ENGINE names (default
 * auto). The calling thread is registered, and so is every thread pthread_create
 * makes from now on; threads that already run join with kestrel_thread_register().
 * -EBUSY while a session runs (KESTREL_PROFILE's included), -ENOTSUP when the engine
 * cannot run here. Inactive (the stubs): -ENOTSUP, whatever `hz`. */
KESTREL_API int kestrel_profile_start(unsigned hz);

/* Stops the session kestrel_profile_start() began and writes the raw CPU profile
 * (JSON v1, FORMATS.md §1) to `path`, through a temporary file renamed into place.
 * 0, -EINVAL for a NULL or empty path (nothing stops), -ESRCH when no session runs,
 * -EBUSY for KESTREL_PROFILE's session (it is written when the process ends), or the
 * -errno of the write. A session never stopped is discarded when the process ends.
 * Inactive: -EINVAL for a NULL or empty path, else -ESRCH. */
KESTREL_API int kestrel_profile_stop(const char *path);

/* 1 while a CPU profiling session runs, else 0. Inactive: 0. */
KESTREL_API int kestrel_profile_is_running(void);

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
 * -EBUSY while a profile runs, -ENOMEM. -ENOTSUP when the program's malloc is not
 * kestrel's (an allocator preloaded before it, or defined by the executable: its
 * allocations cannot be seen). Inactive (the stubs): -ENOTSUP, whatever `interval`. */
KESTREL_API int kestrel_heap_start(size_t interval);

/* The profile so far, as a gzip'd pprof in *data (free() it), *size bytes; the
 * profile keeps running. -EINVAL when data or size is NULL, -ESRCH when none runs;
 * *data and *size are left as they were on an error. Inactive: -EINVAL or -ESRCH
 * as said. */
KESTREL_API int kestrel_heap_profile(void **data, size_t *size);

/* Ends the profile; the final one goes to *data as above, or is discarded when data
 * is NULL. -EINVAL when data is given without size, -ESRCH when none runs; *data
 * and *size are left as they were on an error. Inactive: -EINVAL or -ESRCH as said. */
KESTREL_API int kestrel_heap_stop(void **data, size_t *size);

/* 1 while a heap profile runs, else 0. Inactive: 0. */
KESTREL_API int kestrel_heap_is_running(void);

#ifdef __cplusplus
}
#endif
#endif
