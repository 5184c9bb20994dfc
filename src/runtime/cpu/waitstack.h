/* waitstack — the stack of a thread blocked in a system call, taken without waking
 * it: /proc/self/task/<tid>/syscall gives the call, the user SP and PC; the stack
 * above that SP is copied with process_vm_readv (a fault is an error, never a crash)
 * and walked there. A blocking episode is the time during which the thread's CPU clock
 * does not move: it is captured once, at its first waiting tick, and every further
 * waiting sample of the episode reuses the interned stack.
 *
 * The walk: frame 0 is the PC; above the SP, the first word pair that looks like a
 * frame record (a saved frame pointer above it inside the stack, next to an address
 * inside some image's text, and the same for the record it points to) starts the
 * frame-pointer walk; text addresses between the SP and that record (the return
 * addresses of the frame-pointer-less libc code the call went through) come first.
 *
 * Engine thread only. Signal handlers: nothing. Inside malloc: nothing. */
#ifndef KESTREL_WAITSTACK_H
#define KESTREL_WAITSTACK_H
#include "runtime/cpu/registry.h"

#include <stddef.h>
#include <stdint.h>

/* For an ACTIVE slot that used little or no CPU since its previous sample (cpu_ns):
 * if the thread is blocked in the kernel now, adds a waiting sample at t_ns carrying
 * cpu_ns, with the stack of its blocking episode. The episode goes on while the CPU
 * clock stands still (no system call is made then) or, when it moved a little (a
 * signal handled, a futex woken and re-entered), while /proc shows the same call, SP
 * and PC. Returns 1 when it added the sample, 0 when the thread is not blocked
 * (running, or runnable and waiting for a CPU: the caller samples it as it would a
 * running thread), or -errno. */
int waitstack_sample(struct reg_slot *s, uint64_t t_ns, uint64_t cpu_ns);

/* The same with `count` samples of the episode's stack (the first carrying cpu_ns); with
 * count 0 it only looks whether the thread is blocked. */
int waitstack_sample_n(struct reg_slot *s, uint64_t t_ns, uint64_t cpu_ns, unsigned count);

/* The thread ran: its next waiting tick starts a new episode. */
static inline void waitstack_episode_end(struct reg_slot *s)
{
    s->wait_stack = -1;
    s->wait_thread1 = 0;
}

/* Frames of a stack copy: `copy` holds the `len` bytes that were at [sp, sp+len) in
 * a stack bounded by [.., hi); fills out[0..max) leaf-first starting with pc.
 * Exposed for tests. */
size_t waitstack_walk_copy(uint64_t pc, uint64_t sp, uint64_t hi, const uint8_t *copy, size_t len,
                           uint64_t *out, size_t max, int *stop);
#endif
