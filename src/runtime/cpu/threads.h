/* threads — how threads join the CPU profile: the main thread at session start, every
 * thread made by pthread_create (interposed) on entry, any other through
 * kestrel_thread_register(); each leaves at kestrel_thread_unregister() or at its exit
 * (a thread-specific key's destructor). Stack bounds come from glibc's thread layout
 * (the thread descriptor sits above the stack) or from /proc/self/maps.
 *
 * Signal handlers: nothing. Inside malloc: nothing. */
#ifndef KESTREL_THREADS_H
#define KESTREL_THREADS_H
#include <stdint.h>

/* Registers the calling thread with the running session and its engine. 0 or -errno
 * (-EAGAIN when the registry is full, -ESRCH when no session runs). */
int threads_register(int64_t fiber, const char *label, uint64_t lo, uint64_t hi);
/* Unregisters the calling thread. 0 or -ENOENT. */
int threads_unregister(void);
/* The calling thread's stack bounds from /proc/self/maps (the mapping holding its
 * SP; for a growing main stack, down to RLIMIT_STACK below its top). 0 or -errno. */
int threads_bounds_from_maps(uint64_t *lo, uint64_t *hi);
/* Sets up the key whose destructor unregisters exiting threads. 0 or -errno. */
int threads_init(void);
#endif
