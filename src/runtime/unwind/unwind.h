/* unwind — how the runtime takes stacks, and how a stack's walk ended.
 *
 * unwind_fp is the one frame-pointer walker, shared by the signal handler (walking its
 * own stack from the ucontext), malloc (heap samples) and the engine thread (walking a
 * waiting thread's stack from a copy of its memory). enum unwind_stop is how every
 * walk ends, whichever walker took it (the kernel's callchain for the perf engine
 * too): the raw file writes it per stack (`stack_ends`, docs/raw-format.md), so its
 * numbers are part of the format — never renumber one, only append.
 *
 * Signal handlers: unwind_fp(), unwind_is_root_text() and the inline predicates (no
 * allocation, no lock, no call out). */
#ifndef KESTREL_UNWIND_H
#define KESTREL_UNWIND_H
#include <stddef.h>
#include <stdint.h>

#define UNWIND_MAX_DEPTH 128        /* frames, the PC included */
#define UNWIND_MAX_FRAME (1u << 20) /* bytes between two frame records, at most */

/* How a walk ended. A stack is whole when its walk reached the thread's root (the
 * UNWIND_END_* codes); every UNWIND_CUT_* code is a walk cut short, the frames between
 * its last one and the root missing. */
enum unwind_stop {
    /* Whole. */
    UNWIND_END_ZERO = 0, /* a zero frame pointer or return address, in a thread whose
                          * root frame kestrel does not know (a registered fiber) */
    UNWIND_END_TOP = 1,  /* the thread's root: kestrel's frame under main() or under a
                          * thread's start function, or the top of a registered stack */
    /* Cut by a frame-pointer check. */
    UNWIND_CUT_ALIGN = 2, /* a frame pointer not 8-byte aligned */
    UNWIND_CUT_ORDER = 3, /* not strictly above the previous one */
    UNWIND_CUT_RANGE = 4, /* outside the thread's stack (or no frame record found) */
    UNWIND_CUT_FRAME = 5, /* a frame larger than UNWIND_MAX_FRAME */
    UNWIND_CUT_DEPTH = 6, /* UNWIND_MAX_DEPTH frames taken (the kernel's limit for the
                           * perf engine), the chain went on */
    /* Not classified: frames from a producer that did not say how its walk ended. */
    UNWIND_NOT_WALKED = 7,
    /* CFI unwinding. */
    UNWIND_END_CFI = 8,    /* whole: CFI marks the return address undefined (the outermost
                            * frame, e.g. _start, clone3) */
    UNWIND_CUT_NO_CFI = 9, /* no CFI covers the pc (code outside every image, e.g. JIT) */
    UNWIND_CUT_RULE = 10,  /* a CFI rule the unwinder does not evaluate */
    /* Cut by a check of the frames themselves. */
    UNWIND_CUT_NO_EXEC = 11, /* the next return address lies in no executable mapping
                              * of the process: the chain ran through data */
    UNWIND_CUT_EARLY = 12,   /* the chain ended (a zero or unreadable frame pointer, a
                              * zero return address) before the thread's root frame */
    UNWIND_CUT_COPY_END = 13, /* the walk left the copied part of the stack */
    UNWIND_CUT_READ = 14,     /* memory the walk needed could not be read */
    UNWIND_STOPS
};

/* The raw file's names for the codes (`walk_stops`), indexed by enum unwind_stop. */
#define UNWIND_STOP_NAMES                                                                          \
    {"end",         "top",             "misaligned",  "not_increasing",                           \
     "below_stack", "frame_too_large", "depth_limit", "not_walked",                               \
     "cfi_end",     "no_cfi",          "cfi_rule",    "no_exec",                                  \
     "ended_early", "copy_end",        "unreadable"}

static inline int unwind_is_root(enum unwind_stop s)
{
    return s == UNWIND_END_ZERO || s == UNWIND_END_TOP || s == UNWIND_END_CFI;
}

/* A walk cut short: neither whole nor unclassified. */
static inline int unwind_cut_short(enum unwind_stop s)
{
    return s < UNWIND_STOPS && !unwind_is_root(s) && s != UNWIND_NOT_WALKED;
}

/* Functions that are a thread's outermost frame as kestrel starts it (the frame under
 * main(), the one under each thread's start function) live in their own text
 * section, so that a return address into them is known to be the root, whichever
 * walker found it (the kernel's callchain carries no frame pointers to compare). */
#define UNWIND_ROOT_FN __attribute__((section("kestrel_root_text"), noinline, used))

/* 1 when addr lies in that section. */
int unwind_is_root_text(uint64_t addr);

/* A root function's frame record: the thread's stack for the walker ends just above
 * it, so that every walker reads the root's caller (start_thread,
 * __libc_start_call_main) and nothing further, where glibc keeps no frame pointer. */
#define UNWIND_ROOT_RECORD 16u

/* The walk of frames[0..n) ended at a root: its last frame is a root function, or
 * the root's caller just after one. */
static inline int unwind_ends_at_root(const uint64_t *frames, size_t n)
{
    return (n >= 1 && unwind_is_root_text(frames[n - 1])) ||
           (n >= 2 && unwind_is_root_text(frames[n - 2]));
}

/* Walks a frame-pointer chain: out[0] = pc, then one return address per frame record
 * [fp] = caller's fp, [fp+8] = return address. A frame pointer is read only after it
 * passed every check: 8-byte aligned, strictly above the previous one (the first one:
 * at or above lo), inside [lo, hi) with its 16 bytes, at most UNWIND_MAX_FRAME above
 * the previous, at most `max` frames in all. A return address into a root function
 * ends the walk (UNWIND_END_TOP) after it. Memory is read at address + bias, so a copy
 * of a stack can be walked with the addresses of the original (bias = copy -
 * original); 0 walks live memory. Returns the number of frames; *stop says why it
 * ended. */
size_t unwind_fp(uint64_t pc, uint64_t fp, uint64_t lo, uint64_t hi, intptr_t bias, uint64_t *out,
                 size_t max, enum unwind_stop *stop);
#endif
