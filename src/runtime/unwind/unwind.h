/* unwind — the one frame-pointer walker, shared by the signal handler (walking its
 * own stack from the ucontext) and the engine thread (walking a waiting thread's
 * stack from a copy of its memory).
 *
 * Signal handlers: unwind_fp() (no allocation, no lock, no call out). */
#ifndef KESTREL_UNWIND_H
#define KESTREL_UNWIND_H
#include <stddef.h>
#include <stdint.h>

#define UNWIND_MAX_DEPTH 128        /* frames, the PC included */
#define UNWIND_MAX_FRAME (1u << 20) /* bytes between two frame records, at most */

/* How a walk ended. The first two are the ends of a chain; every other one is a walk
 * cut short by a failed check (counted in the raw file's `walks_cut_short`). */
enum unwind_stop {
    UNWIND_END_ZERO = 0, /* next frame pointer 0: the outermost frame */
    UNWIND_END_TOP,      /* the chain left through the top of the stack [.., hi) */
    UNWIND_CUT_ALIGN,    /* a frame pointer not 8-byte aligned */
    UNWIND_CUT_ORDER,    /* not strictly above the previous one */
    UNWIND_CUT_RANGE,    /* below the stack's low bound */
    UNWIND_CUT_FRAME,    /* a frame larger than UNWIND_MAX_FRAME */
    UNWIND_CUT_DEPTH,    /* UNWIND_MAX_DEPTH frames taken, the chain went on */
    UNWIND_NOT_WALKED,   /* the engine got its frames elsewhere (kernel callchain) */
    UNWIND_STOPS
};

static inline int unwind_cut_short(enum unwind_stop s)
{
    return s >= UNWIND_CUT_ALIGN && s <= UNWIND_CUT_DEPTH;
}

/* Walks a frame-pointer chain: out[0] = pc, then one return address per frame record
 * [fp] = caller's fp, [fp+8] = return address. A frame pointer is read only after it
 * passed every check: 8-byte aligned, strictly above the previous one (the first one:
 * at or above lo), inside [lo, hi) with its 16 bytes, at most UNWIND_MAX_FRAME above
 * the previous, at most `max` frames in all. Memory is read at address + bias, so a
 * copy of a stack can be walked with the addresses of the original (bias = copy -
 * original); 0 walks live memory. Returns the number of frames; *stop says why it
 * ended. */
size_t unwind_fp(uint64_t pc, uint64_t fp, uint64_t lo, uint64_t hi, intptr_t bias, uint64_t *out,
                 size_t max, enum unwind_stop *stop);
#endif
