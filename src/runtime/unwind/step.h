/* step — the one stack walker over CFI: from a register set (pc, sp, rbp) to the
 * caller's, one frame at a time, through the unwind tables (unwind/table.h), over a
 * stack memory that every load is checked against. The same walk serves the signal
 * handler (its own live stack), malloc (the allocating thread's stack), the perf
 * engine's drain (the kernel's copy of the stack) and the waiting-thread stacks (a
 * copy read from another thread's memory).
 *
 * Signal handlers: uw_walk(), uw_step() (no allocation, no lock, no call out; only
 * checked loads of the stack and reads of published tables). Inside malloc: the same. */
#ifndef KESTREL_UNWIND_STEP_H
#define KESTREL_UNWIND_STEP_H
#include "runtime/unwind/unwind.h"

#include <stddef.h>
#include <stdint.h>

/* How stacks are walked (KESTREL_PROFILE_UNWIND, `kestrel record --unwind`):
 *   FP    the frame-pointer chain only;
 *   CFI   the images' CFI, the frame pointer only in images that have no CFI; a frame
 *         in code outside every image (JIT) or with a rule not evaluated ends the walk;
 *   AUTO  CFI, and the frame pointer wherever CFI cannot take the next step. */
enum uw_mode { UW_MODE_AUTO = 0, UW_MODE_FP, UW_MODE_CFI };

/* The process's mode (KESTREL_PROFILE_UNWIND, read when the library loads; auto
 * when unset), and a way for tests to set it. */
int uw_mode_current(void);
void uw_mode_set(int mode);

/* Parses "fp", "cfi", "auto"; -1 for anything else. */
int uw_mode_parse(const char *s);
const char *uw_mode_name(int mode);


/* Stack memory: addresses [lo, hi) may be read, at address + bias (a copy of a stack
 * is walked with the original's addresses; bias 0 reads live memory). */
struct uw_stack {
    uint64_t lo, hi;
    intptr_t bias;
    int direct;        /* enum uw_direct (table.h) */
    unsigned *unbuilt; /* if not NULL, counts frames that met a table not built */
};

struct uw_regs {
    uint64_t pc, sp, fp;
    int interrupted; /* pc is where the thread was stopped, not a return address */
    uint64_t lr;     /* the link register where the thread was stopped (aarch64), or 0 */
};

/* Walks from r: out[0] = r.pc, then one address per caller. A caller interrupted by a
 * signal (its pc restored from a signal frame) is written as its pc + 1, so that a
 * reader's return-address adjustment (-1) lands on the interrupted instruction
 * itself. Every return address is stripped of its signature (arch_strip_ra). In FP
 * mode an interrupted frame's link register (aarch64: the leaf's return address,
 * which no frame record holds yet) comes second, unless the first frame record
 * gives the same address. At most `max` frames; *stop says why the walk ended. */
size_t uw_walk(int mode, struct uw_regs r, const struct uw_stack *m, uint64_t *out, size_t max,
               enum unwind_stop *stop);

/* uw_walk over a copy of a stack taken earlier (the perf engine's sample, a waiting
 * thread's stack), on the runtime's own thread: the images its frames lie in may have
 * been unloaded since, so a frame whose image's table is not built yet is read from
 * its FDE only under the loader's lock (uw_tables_locked), in a second walk. m->direct
 * and m->unbuilt are ignored. Never from a signal handler or inside malloc. */
size_t uw_walk_copy(int mode, struct uw_regs r, const struct uw_stack *m, uint64_t *out,
                    size_t max, enum unwind_stop *stop);

/* Where a walk over a copy can go on over more of the same stack (resume.h): the
 * registers of its last UW_MARK_BACK frames, the stack pointers of its first ones, and
 * whether it stopped for want of memory past the copy's end. */
#define UW_MARK_BACK 3
struct uw_mark {
    struct uw_regs back[UW_MARK_BACK]; /* frame i's registers at back[i % UW_MARK_BACK] */
    uint64_t sp[UW_MARK_BACK];         /* frame i's sp, i < UW_MARK_BACK */
    size_t n;                          /* frames walked (0: none kept, FP mode) */
    uint64_t past; /* the highest address at or past the end a load wanted, 0 none */
};

/* uw_walk_copy, keeping mk (not in FP mode: mk->n = 0). */
size_t uw_walk_copy_mark(int mode, struct uw_regs r, const struct uw_stack *m, uint64_t *out,
                         size_t max, enum unwind_stop *stop, struct uw_mark *mk);
#endif
