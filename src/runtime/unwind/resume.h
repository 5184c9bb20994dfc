/* resume — a walk over a stack copy that goes on over the stack itself.
 *
 * A sampled stack is copied at the sample (the kernel's PERF_SAMPLE_STACK_USER, a
 * fixed size for every sample) and walked later. Where the copy ends before the
 * stack's top (an optimizing C++ compiler's 25-130 frames of large frames: 98% of
 * clang's samples ran out of a 16 KiB copy), the walk goes on from the stack's memory
 * as it is now, read through the host's reader (process_vm_readv in the profiled
 * process; the same from outside). The caller frames of a sample that the thread has
 * not returned from since are still there: their return addresses and saved registers
 * do not change while the frames exist (their locals may: a callee writes through a
 * pointer). So the walk starts again UW_MARK_BACK - 1 frames before the copy's end,
 * over the memory read, and goes on only if that walk finds again the frames the copy
 * gave (each return address, at the same stack pointer); where it does not, the
 * thread has returned past them since, and the walk ends there, cut (`copy_end`). A
 * thread that returned past them and came back down the same calls to the same depth
 * is not told apart: its callers are then taken as they are at the read.
 *
 * Libc only; no allocation (the host gives the buffers). Never from a signal handler
 * or inside malloc (the walks take the loader's lock: uw_walk_copy). */
#ifndef KESTREL_UNWIND_RESUME_H
#define KESTREL_UNWIND_RESUME_H
#include "runtime/unwind/step.h"

#include <stddef.h>
#include <stdint.h>

#define UW_RESUME_ROUNDS 16     /* reads per walk, at most */

/* Reads len bytes of the stack at addr into buf: the bytes read (fewer where the
 * memory ends), or a negative errno. */
typedef long (*uw_read_fn)(void *arg, uint64_t addr, void *buf, size_t len);

/* The stack a copy was taken from. */
struct uw_source {
    uw_read_fn read; /* NULL: the copy alone */
    void *arg;
    uint64_t top; /* the stack's top: walks end there (the thread's registered top) */
    void *buf[2]; /* two buffers of cap bytes each (8-byte aligned), for the reads */
    size_t cap;
};

/* What the resumed walks did, added to by each walk. */
struct uw_resume_stats {
    uint64_t walks;   /* walks that went past their copy */
    uint64_t changed; /* of them, cut: the stack had changed at the copy's end */
    uint64_t bytes;   /* bytes read */
};

/* Walks the copy m (as uw_walk_copy) and, where the walk needs memory past the copy's
 * end below src->top, goes on over memory read from src. *stop is UNWIND_CUT_COPY_END
 * when the walk needed memory past every byte it had below the top (the copy ran out
 * and the stack could not be read on, or had changed). st may be NULL. */
size_t uw_walk_resume(int mode, struct uw_regs r, const struct uw_stack *m,
                      const struct uw_source *src, uint64_t *out, size_t max,
                      enum unwind_stop *stop, struct uw_resume_stats *st);
#endif
