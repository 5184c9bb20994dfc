/* execmap — the executable memory of this process, to tell a return address from
 * data: a frame after the leaf that lies in none of it ends the stack (unwind.h,
 * UNWIND_CUT_NO_EXEC). It is every executable mapping of /proc/self/maps (the images'
 * text, the vdso, anonymous executable memory such as JIT code, file-backed code the
 * loader did not report) and the text of every image the runtime recorded, unloaded
 * ones too (a sample taken while one was mapped is drained after it left).
 *
 * Each user owns its own map (the engine thread's sink, the heap writer), so nothing
 * is shared and nothing locks. Signal handlers: nothing. Inside malloc: everything
 * (open/read of /proc and mmap only, no allocation). */
#ifndef KESTREL_EXECMAP_H
#define KESTREL_EXECMAP_H
#include "runtime/unwind/unwind.h"

#include <stddef.h>
#include <stdint.h>

#define EXECMAP_RANGES 4096 /* executable mappings kept; past it, images' text only */
#define EXECMAP_REREAD_NS (100ull * 1000 * 1000) /* a miss re-reads maps at most this often */

struct execmap {
    uint64_t (*r)[2]; /* sorted, disjoint [start, end) ranges; EXECMAP_RANGES, mmap'd */
    size_t n;         /* ranges read */
    uint64_t read_ns; /* CLOCK_MONOTONIC of the last read, 0 before the first */
};

/* 1 when addr lies in executable memory. A miss re-reads /proc/self/maps (at most
 * every EXECMAP_REREAD_NS), so code mapped since the last read is found. */
int execmap_has(struct execmap *m, uint64_t addr);
void execmap_free(struct execmap *m);

/* Trims a leaf-first stack to what can be trusted, and says how its walk ended:
 * frames[1..] are checked in order; a return address into kestrel's root functions
 * ends it after that frame (UNWIND_END_TOP), one in no executable mapping ends it
 * before that frame (UNWIND_CUT_NO_EXEC). Otherwise the walker's *stop stands, except
 * that in a thread whose root frame is known (`rooted`) a walk that ended elsewhere
 * than at it was cut: END_ZERO becomes CUT_EARLY, END_TOP (a frame pointer past the
 * root's) CUT_RANGE. Returns the number of frames kept. */
size_t execmap_trim(struct execmap *m, const uint64_t *frames, size_t n, int rooted,
                    enum unwind_stop *stop);
#endif
