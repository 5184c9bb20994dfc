/* The heap profiler's reentrancy guard, and what a signal handler asks of it, for
 * every part of the runtime: between heap_ignore_enter() and heap_ignore_leave() the
 * calling thread's allocations go straight to the next allocator, never counted or
 * sampled. The runtime brackets the creation of its own threads with it (glibc
 * allocates inside pthread_create), and each of its threads enters it once for its
 * whole life. Nestable; a no-op cost when no heap profile runs. May run inside malloc;
 * not in a signal handler, but for the functions said to be async-signal-safe. */
#ifndef KESTREL_HEAP_GUARD_H
#define KESTREL_HEAP_GUARD_H
#include "runtime/arch/arch.h"

#include <stdint.h>

void heap_ignore_enter(void);
void heap_ignore_leave(void);

/* The calling thread runs a signal handler of the program, whose trampoline's frame
 * is at `frame` (sigwrap.c): until the leave, its allocations are served from the
 * runtime's region (never the next allocator's, whose lock the interrupted code may
 * hold) and not sampled. A handler left by a jump is noticed at the next allocation
 * made above that frame. Async-signal-safe; nestable. */
void heap_handler_enter(unsigned long frame);
void heap_handler_leave(void);
/* How many of the program's handlers the calling thread is inside (0: none). */
int heap_handler_depth(void);

/* Whether sp lies on any of the side stacks, where the runtime's own work on a program's
 * thread runs. Async-signal-safe; a loop over the stacks ever used (64 at most). */
int heap_side_holds_any(uint64_t sp);
/* Where a handler of the program that interrupted a heap sample on its side stack (sp,
 * in the handler's first frame) runs instead: on the thread's own stack, below the
 * sample's frames, as it would have without the side stack; 0 when sp is not on this
 * thread's side stack. Async-signal-safe. */
uintptr_t heap_side_below(uintptr_t sp);
#endif
