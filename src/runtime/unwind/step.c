/* step.c — one walker over CFI rows and frame pointers (step.h).
 *
 * Signal handlers: uw_walk() and the static functions it calls: loads from the stack
 * only after a bounds check, reads of published tables (uw_table_find, uw_image_row,
 * which reads a mapped image's FDE where the walk's uw_stack allows it), nothing else.
 * Inside malloc: the same. uw_walk_copy() only on the runtime's own thread (it may take
 * the loader's lock). uw_mode_parse() and uw_mode_name() run anywhere. */
#include "runtime/unwind/step.h"
#include "runtime/arch/arch.h"
#include "runtime/unwind/table.h"

#include <errno.h>
#include <string.h>

int uw_mode_parse(const char *s)
{
    if (!s) return -1;
    if (strcmp(s, "auto") == 0) return UW_MODE_AUTO;
    if (strcmp(s, "fp") == 0) return UW_MODE_FP;
    if (strcmp(s, "cfi") == 0) return UW_MODE_CFI;
    return -1;
}

const char *uw_mode_name(int mode)
{
    return mode == UW_MODE_FP ? "fp" : mode == UW_MODE_CFI ? "cfi" : "auto";
}

/* A walk's stack memory (struct uw_stack), with the bounds check made one compare:
 * an 8-byte load at a is allowed when a - clo <= span. A stack of fewer than 8 bytes
 * gets clo = UINT64_MAX, span = 0: only that address passes, and it is misaligned. */
struct uw_mem {
    uint64_t lo, hi;    /* struct uw_stack's */
    uint64_t clo, span; /* the load check's */
    intptr_t bias;
    int direct;
    unsigned *unbuilt;
    uint64_t *past; /* if not NULL, the highest address at or past hi a load wanted */
};

/* The failed load's address, when it lay at or past the memory's end: the walk could
 * go on over more of the same stack (uw_mark). */
static void ld_past(const struct uw_mem *m, uint64_t a)
{
    if (m->past && !(a & 7) && a + 8 > m->hi && a < m->hi + UNWIND_MAX_FRAME && a > *m->past)
        *m->past = a;
}

/* One checked load: inside [lo, hi), 8-byte aligned. */
static inline int ld(const struct uw_mem *m, uint64_t a, uint64_t *v)
{
    if (__builtin_expect((a & 7) | (a - m->clo > m->span), 0)) {
        ld_past(m, a);
        return 0;
    }
    memcpy(v, (const void *)(uintptr_t)(a + (uint64_t)m->bias), 8);
    return 1;
}

enum step_result { STEP_OK = 0, STEP_STOP };

/* The frame-pointer step: [rbp] = caller's rbp, [rbp+8] = return address; the record
 * must sit at or above sp, inside the stack. */
static int step_fp(const struct uw_mem *m, struct uw_regs *r, enum unwind_stop *stop)
{
    uint64_t fp = r->fp, next, ret;
    if (fp == 0) {
        *stop = UNWIND_END_ZERO;
        return STEP_STOP;
    }
    if (fp & 7) {
        *stop = UNWIND_CUT_ALIGN;
        return STEP_STOP;
    }
    if (fp < r->sp || fp < m->lo) {
        *stop = fp < m->lo ? UNWIND_CUT_RANGE : UNWIND_CUT_ORDER;
        return STEP_STOP;
    }
    if (fp - r->sp > UNWIND_MAX_FRAME) {
        *stop = UNWIND_CUT_FRAME;
        return STEP_STOP;
    }
    if (!ld(m, fp, &next) || !ld(m, fp + 8, &ret)) {
        *stop = UNWIND_END_TOP;
        return STEP_STOP;
    }
    if (ret == 0) {
        *stop = UNWIND_END_ZERO;
        return STEP_STOP;
    }
    r->pc = arch_strip_ra(ret);
    r->sp = fp + 16;
    r->fp = next;
    r->interrupted = 0;
    r->lr = 0;
    return STEP_OK;
}

/* An interrupted pc that no FDE covers (.init's _init, whose first instruction a
 * fresh mapping's page fault often catches): if the word at sp (or, where calls
 * leave it there, the link register) is a return address into code CFI covers, the
 * pc is at a function's entry or in a frameless stub, and the caller is that word.
 * Only the tables are read, never the code. */
static int step_entry(const struct uw_mem *m, struct uw_regs *r)
{
    struct cfi_row row;
    uint64_t ra = r->lr;
    if (!ARCH_RA_IN_LR && !ld(m, r->sp, &ra)) return 0;
    ra = arch_strip_ra(ra);
    if (ra == 0) return 0;
    /* The word is not known to be a return address: an image's CFI is read only
     * where every image is known to be mapped. */
    const struct uw_image *im = uw_table_find(ra - 1);
    if (!im || uw_image_row(im, ra - 1, m->direct == UW_DIRECT_LOCKED ? UW_DIRECT_LOCKED : 0,
                            &row) <= 0)
        return 0;
    r->pc = ra;
    if (!ARCH_RA_IN_LR) r->sp += 8;
    r->interrupted = 0;
    r->lr = 0;
    return 1;
}

/* The caller's registers: its return address (0 ends the walk), CFA and frame pointer. */
static inline int step_to(struct uw_regs *r, uint64_t ra, uint64_t cfa, uint64_t fp,
                          enum unwind_stop *stop)
{
    if (ra == 0) {
        *stop = UNWIND_END_ZERO;
        return STEP_STOP;
    }
    r->pc = ra;
    r->sp = cfa;
    r->fp = fp;
    r->interrupted = 0;
    r->lr = 0;
    return STEP_OK;
}

/* The CFI step for one row. */
static int step_row(const struct uw_mem *m, const struct cfi_row *row, struct uw_regs *r,
                    enum unwind_stop *stop)
{
    uint64_t cfa, ra, fp = r->fp;
    /* The common rule first: CFA = sp or fp + N, the return address just below it,
     * the frame pointer unchanged or saved at CFA + N. The checks are the general
     * path's: CFA at least 8 above sp and at most UNWIND_MAX_FRAME; a load that
     * fails leaves the walk to it, which says why. */
    if ((row->kind == CFI_CFA_SP || row->kind == CFI_CFA_FP) && CFI_RA_SLOT(row) == 0 &&
        CFI_FP_RULE(row) != CFI_FP_AT_FP && !ARCH_RA_IN_LR) {
        cfa = (row->kind == CFI_CFA_SP ? r->sp : r->fp) + (uint64_t)(int64_t)row->cfa_off;
        uint64_t fp_at = cfa + (uint64_t)(int64_t)row->fp_off;
        if (cfa - r->sp - 8 <= UNWIND_MAX_FRAME - 8 && ld(m, cfa - 8, &ra) &&
            (CFI_FP_RULE(row) == CFI_FP_SAME || fp_at < r->sp || ld(m, fp_at, &fp))) {
            return step_to(r, arch_strip_ra(ra), cfa, fp, stop);
        }
        fp = r->fp;
    }
    switch (row->kind) {
    case CFI_CFA_SP: cfa = r->sp + (uint64_t)(int64_t)row->cfa_off; break;
    case CFI_CFA_FP: cfa = r->fp + (uint64_t)(int64_t)row->cfa_off; break;
    case CFI_CFA_DEREF_FP:
        if (!ld(m, r->fp + (uint64_t)(int64_t)row->cfa_off, &cfa)) {
            *stop = UNWIND_CUT_RANGE;
            return STEP_STOP;
        }
        break;
    case CFI_PLT:
        cfa = r->sp + (uint64_t)(int64_t)row->cfa_off + ((r->pc & 15) >= (uint64_t)row->fp_off ? 8 : 0);
        break;
    case CFI_SIGNAL: {
        uint64_t sp2, pc2, fp2 = r->fp;
        if (!ld(m, r->sp + (uint64_t)(int64_t)row->cfa_off, &sp2) ||
            !ld(m, r->sp + 8u * row->fp_rule, &pc2) ||
            (row->fp_off >= 0 && !ld(m, r->sp + (uint64_t)(int64_t)row->fp_off, &fp2))) {
            *stop = UNWIND_CUT_RANGE;
            return STEP_STOP;
        }
        if (pc2 == 0) {
            *stop = UNWIND_END_ZERO;
            return STEP_STOP;
        }
        r->pc = arch_strip_ra(pc2);
        r->sp = sp2;
        r->fp = fp2;
        r->interrupted = 1;
        r->lr = 0;
        return STEP_OK;
    }
    case CFI_END: *stop = UNWIND_END_CFI; return STEP_STOP;
    default: *stop = UNWIND_CUT_RULE; return STEP_STOP;
    }
    /* The return address sits below the CFA, so the CFA is above sp; or it is in
     * the link register, known only where the thread was stopped. */
    unsigned ra_slot = CFI_RA_SLOT(row);
    uint64_t ra_at = ra_slot == CFI_RA_PAIR ? cfa + (uint64_t)(int64_t)row->fp_off + 8
                                            : cfa - 8u * (ra_slot + 1);
    if (ra_slot == CFI_RA_LR && (!r->interrupted || !r->lr)) {
        *stop = UNWIND_CUT_RULE;
        return STEP_STOP;
    }
    if (ra_slot == CFI_RA_LR ? cfa < r->sp
                             : cfa < r->sp + 8 || ra_at < r->sp || ra_at > cfa - 8) {
        *stop = UNWIND_CUT_ORDER;
        return STEP_STOP;
    }
    if (cfa - r->sp > UNWIND_MAX_FRAME) {
        *stop = UNWIND_CUT_FRAME;
        return STEP_STOP;
    }
    if (ra_slot == CFI_RA_LR) {
        ra = r->lr;
    } else if (!ld(m, ra_at, &ra)) {
        *stop = ra_at >= m->hi ? UNWIND_END_TOP : UNWIND_CUT_RANGE;
        return STEP_STOP;
    }
    ra = arch_strip_ra(ra);
    /* A slot below sp was popped already (an epilogue whose rule was not reset):
     * the register holds the caller's value again. */
    if (CFI_FP_RULE(row) == CFI_FP_AT_CFA && cfa + (uint64_t)(int64_t)row->fp_off >= r->sp) {
        if (!ld(m, cfa + (uint64_t)(int64_t)row->fp_off, &fp)) {
            *stop = UNWIND_CUT_RANGE;
            return STEP_STOP;
        }
    } else if (CFI_FP_RULE(row) == CFI_FP_AT_FP) {
        if (!ld(m, r->fp + (uint64_t)(int64_t)row->fp_off, &fp)) {
            *stop = UNWIND_CUT_RANGE;
            return STEP_STOP;
        }
    }
    return step_to(r, ra, cfa, fp, stop);
}

/* pc is the first instruction of code CFI covers, and no CFI covers the byte before
 * it: no call returns there, and the return address was made up to start the stack
 * (makecontext pushes __start_context itself as the fiber's function's return
 * address). The stack holds nothing older: it is the outermost frame. */
static int uw_made_up_return(uint64_t pc, int direct)
{
    const struct uw_image *im = uw_table_find(pc);
    struct cfi_row row;
    return im && uw_image_row(im, pc, direct, &row) > 0;
}

/* The leaf's return address, in the link register: second, unless the first frame
 * record holds it too (the function saved it already: not a leaf, or past its
 * prologue). Known limit: between a call's return and the function's next call, lr
 * points into the function itself, which then appears once as its own caller. */
static size_t uw_leaf_lr(uint64_t *out, size_t n, size_t max, uint64_t lr, enum unwind_stop *stop)
{
    if (lr == 0 || max < 2 || (n >= 2 && out[1] == lr)) return n;
    size_t keep = n - 1 < max - 2 ? n - 1 : max - 2;
    memmove(&out[2], &out[1], keep * sizeof *out);
    out[1] = lr;
    if (n == max) *stop = UNWIND_CUT_DEPTH;
    return keep + 2;
}

/* uw_walk, with the mark (step.h) kept where mk is not NULL. */
static size_t uw_walk_mark(int mode, struct uw_regs r, const struct uw_stack *ms, uint64_t *out,
                           size_t max, enum unwind_stop *stop, struct uw_mark *mk)
{
    if (mk) {
        mk->n = 0;
        mk->past = 0;
    }
    if (max == 0) {
        *stop = UNWIND_CUT_DEPTH;
        return 0;
    }
    if (mode == UW_MODE_FP) {
        uint64_t lo = r.sp > ms->lo ? r.sp : ms->lo;
        size_t n = unwind_fp(r.pc, r.fp, lo, ms->hi, ms->bias, out, max, stop);
        return r.interrupted && r.lr ? uw_leaf_lr(out, n, max, arch_strip_ra(r.lr), stop) : n;
    }
    struct uw_mem mem = {ms->lo, ms->hi,      UINT64_MAX, 0, ms->bias, ms->direct, ms->unbuilt,
                         mk ? &mk->past : NULL};
    if (ms->hi >= 8 && ms->hi - 8 >= ms->lo) {
        mem.clo = ms->lo;
        mem.span = ms->hi - 8 - ms->lo;
    }
    const struct uw_mem *m = &mem;
    size_t n = 0;
    out[n++] = r.pc;
    if (mk) {
        mk->back[0] = r;
        mk->sp[0] = r.sp;
        mk->n = 1;
    }
    /* The previous frame's image is looked at first: most callers are in the same one
     * (a descriptor stays readable after its image is retired, and the walk reads
     * nothing of the image itself). */
    const struct uw_image *im = NULL;
    int direct = m->direct;
    for (;;) {
        /* A return address is looked up one byte back: the call may be its function's
         * last instruction (a call to a function that does not return). */
        uint64_t at = r.interrupted ? r.pc : r.pc - 1;
        if (!im || at - im->lo >= im->hi - im->lo) im = uw_table_find(at);
        struct cfi_row row;
        int got = im ? uw_image_row(im, at, direct, &row) : 0;
        if (got == 0 && n > 1 && !r.interrupted && uw_made_up_return(r.pc, direct)) {
            *stop = UNWIND_END_CFI;
            break;
        }
        int rc;
        if (!im && mode == UW_MODE_CFI && uw_tables_ready()) {
            *stop = UNWIND_CUT_NO_CFI;
            break;
        }
        if (got < 0 && m->unbuilt) (*m->unbuilt)++;
        if (got > 0 && (row.kind != CFI_UNSUPPORTED || mode == UW_MODE_CFI)) {
            rc = step_row(m, &row, &r, stop);
        } else if (got == 0 && r.interrupted && step_entry(m, &r)) {
            rc = STEP_OK;
        } else {
            rc = step_fp(m, &r, stop);
            if (m->direct == UW_DIRECT_LIVE) direct = UW_DIRECT_NONE;
        }
        if (rc != STEP_OK) break;
        if (n == max) {
            *stop = UNWIND_CUT_DEPTH;
            break;
        }
        out[n++] = r.interrupted ? r.pc + 1 : r.pc;
        if (mk) {
            mk->back[(n - 1) % UW_MARK_BACK] = r;
            if (n - 1 < UW_MARK_BACK) mk->sp[n - 1] = r.sp;
            mk->n = n;
        }
    }
    return n;
}

size_t uw_walk(int mode, struct uw_regs r, const struct uw_stack *ms, uint64_t *out, size_t max,
               enum unwind_stop *stop)
{
    return uw_walk_mark(mode, r, ms, out, max, stop, NULL);
}

/* ============================ copies, on the runtime's thread ============================ */

struct uw_locked_walk {
    int mode;
    struct uw_regs r;
    struct uw_stack m;
    uint64_t *out;
    size_t max, n;
    enum unwind_stop stop;
    struct uw_mark *mk;
};

static void uw_walk_locked(void *arg)
{
    struct uw_locked_walk *w = arg;
    w->n = uw_walk_mark(w->mode, w->r, &w->m, w->out, w->max, &w->stop, w->mk);
}

size_t uw_walk_copy_mark(int mode, struct uw_regs r, const struct uw_stack *m, uint64_t *out,
                         size_t max, enum unwind_stop *stop, struct uw_mark *mk)
{
    unsigned unbuilt = 0;
    struct uw_locked_walk w = {mode, r, *m, out, max, 0, UNWIND_CUT_RANGE, mk};
    w.m.direct = UW_DIRECT_NONE;
    w.m.unbuilt = &unbuilt;
    w.n = uw_walk_mark(mode, r, &w.m, out, max, &w.stop, mk);
    if (unbuilt && mode != UW_MODE_FP) {
        /* Else the first walk stands: its frame-pointer steps where no table was. */
        w.m.direct = UW_DIRECT_LOCKED;
        w.m.unbuilt = NULL;
        if (uw_tables_locked(uw_walk_locked, &w) == -EAGAIN && uw_tables_refresh() >= 0)
            uw_tables_locked(uw_walk_locked, &w);
    }
    *stop = w.stop;
    return w.n;
}

size_t uw_walk_copy(int mode, struct uw_regs r, const struct uw_stack *m, uint64_t *out, size_t max,
                    enum unwind_stop *stop)
{
    return uw_walk_copy_mark(mode, r, m, out, max, stop, NULL);
}
