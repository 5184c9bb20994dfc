/* fibers — stacks a thread runs on that are not the stack it registered: coroutines
 * on stacks of their own (makecontext/swapcontext, boost.context, a green-thread
 * runtime). A sample whose stack pointer lies outside its thread's registered bounds
 * is walked within the fiber's: those the program registered (kestrel_fiber_register,
 * include/kestrel.h), else the writable mapping that holds the stack pointer, as
 * /proc/self/maps last said (and still mapped: mincore). Each fiber becomes a thread
 * record of its own in the profile (its label and fiber id, the thread's tid), so
 * every export shows it as it shows a thread.
 *
 * Signal handlers: fiber_find() (atomic loads, a table search, mincore; no lock, no
 * allocation). Inside malloc: nothing. The API functions run on any program thread
 * (a mutex among themselves); fiber_maps_refresh() and fiber_thread() on the engine
 * thread only. */
#ifndef KESTREL_FIBERS_H
#define KESTREL_FIBERS_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FIBER_MAX 4096             /* fibers registered at one time */
#define FIBER_MAPS_MAX 8192        /* writable mappings kept for unregistered fibers, each
                                    * as the kernel lists it (25 bytes, two tables) */
#define FIBER_WALK_MAX (256u << 10) /* bytes of a fiber's stack a walk may read above sp */
#define FIBER_THREADS_MAX 4096     /* fiber thread records a session makes */

/* The fiber whose stack holds sp, on a thread whose own stack is [own_lo, own_hi): 1
 * with [*lo, *hi) its bounds (hi at most FIBER_WALK_MAX above sp, every page of
 * [sp, hi) mapped) and *key naming it for fiber_thread() (a registered fiber's entry,
 * else the end of the mapping holding sp); 0 when none is known (the mappings are then
 * marked to be read again) or sp lies in the mapping of the thread's own stack. */
int fiber_find(uint64_t sp, uint64_t own_lo, uint64_t own_hi, uint64_t *lo, uint64_t *hi,
               uint64_t *key);

/* Re-reads the writable mappings when a lookup missed since the last read (or
 * `force`), at most every 8 ms. Engine thread. */
void fiber_maps_refresh(int force);
/* Re-reads them now unless they were read at or after t_ns (CLOCK_MONOTONIC): for a
 * sample taken at t_ns whose lookup missed, on a thread that can retry it (the perf
 * engine's drain), since a fiber made just before it is in no table read earlier.
 * 1 when read. Engine thread. */
int fiber_maps_refresh_since(uint64_t t_ns);

/* The thread record of fiber `key` on thread `tid` (its label and id: the registered
 * ones, else "fiber" and a number of the process's own), made on first sight: its
 * index + 1, 0 when the records ran out (the sample stays its thread's). Engine
 * thread. */
uint32_t fiber_thread(pid_t tid, uint64_t key);

/* A new session: the fiber thread records of the previous one are forgotten. */
void fiber_session_reset(void);
/* In a fork child: the registered fibers stay (the child has their stacks), the lock
 * and the fibers' thread records of the parent's session do not. */
void fiber_after_fork_child(void);
/* Fibers registered so far that are still registered, and registrations refused
 * (table full). */
size_t fiber_count(void);
uint64_t fiber_refused(void);
#endif
