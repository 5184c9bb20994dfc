/* resume.c — walks that go on past their stack copy (resume.h).
 *
 * Signal handlers: nothing here runs in one. Inside malloc: nothing. */
#include "runtime/unwind/resume.h"
#include "runtime/unwind/table.h"

#include <string.h>

/* The walk stopped for want of memory past the end of the memory it had. */
static int uw_wants_more(enum unwind_stop s, const struct uw_mark *mk, const struct uw_stack *m)
{
    return (s == UNWIND_END_TOP || s == UNWIND_CUT_RANGE) && mk->past && mk->past + 8 > m->hi;
}

size_t uw_walk_resume(int mode, struct uw_regs r, const struct uw_stack *m,
                      const struct uw_source *src, uint64_t *out, size_t max,
                      enum unwind_stop *stop, struct uw_resume_stats *st)
{
    struct uw_mark mk;
    struct uw_stack cur = *m;
    size_t n = uw_walk_copy_mark(mode, r, &cur, out, max, stop, &mk);
    if (!uw_wants_more(*stop, &mk, &cur) || !src || cur.hi >= src->top) return n;
    if (!src->read || mk.n != n || n == max) {
        *stop = UNWIND_CUT_COPY_END;
        return n;
    }
    if (st) st->walks++;
    for (unsigned round = 0; round < UW_RESUME_ROUNDS; round++) {
        /* From UW_MARK_BACK - 1 frames back (the leaf at most): the frames after it
         * must be found again, the same, in the memory read. */
        size_t at = n >= UW_MARK_BACK ? n - UW_MARK_BACK : 0;
        struct uw_regs from_r = mk.back[at % UW_MARK_BACK];
        uint64_t again[UW_MARK_BACK], again_sp[UW_MARK_BACK];
        size_t k_again = n - 1 - at;
        for (size_t k = 0; k < k_again; k++) {
            again[k] = out[at + 1 + k];
            again_sp[k] = mk.back[(at + 1 + k) % UW_MARK_BACK].sp;
        }
        uint64_t from = from_r.sp & ~(uint64_t)7;
        uint64_t want = src->top - from < src->cap ? src->top - from : src->cap;
        void *buf = src->buf[round & 1];
        long got = from >= cur.lo && from < cur.hi ? src->read(src->arg, from, buf, (size_t)want) : -1;
        if (got > 0 && st) st->bytes += (uint64_t)got;
        if (got <= (long)(cur.hi - from)) { /* the stack is gone, or ends before the copy did */
            *stop = UNWIND_CUT_COPY_END;
            return n;
        }
        struct uw_stack next = {from, from + ((uint64_t)got & ~(uint64_t)7),
                                (intptr_t)buf - (intptr_t)from, UW_DIRECT_NONE, NULL};
        /* The resumed walk's first frame is frame `at` again: its entry stays as the
         * first walk wrote it (an interrupted pc is written + 1). */
        uint64_t keep = out[at];
        struct uw_mark mk2;
        enum unwind_stop st2;
        size_t k = uw_walk_copy_mark(mode, from_r, &next, out + at, max - at, &st2, &mk2);
        out[at] = keep;
        int same = k >= 1 + k_again;
        for (size_t i = 0; same && i < k_again; i++)
            same = out[at + 1 + i] == again[i] && (i + 1 >= UW_MARK_BACK || mk2.sp[i + 1] == again_sp[i]);
        if (!same) {
            /* The thread returned past those frames since: the copy's frames stand. */
            for (size_t i = 0; i < k_again; i++)
                out[at + 1 + i] = again[i];
            if (st) st->changed++;
            *stop = UNWIND_CUT_COPY_END;
            return n;
        }
        n = at + k;
        *stop = st2;
        if (!uw_wants_more(st2, &mk2, &next) || next.hi >= src->top) return n;
        if (mk2.n != k || n == max || n <= at + 1 + k_again) break; /* no frame gained */
        mk = mk2;
        /* mk2 counts from `at`: its ring is indexed by frame number within that walk. */
        for (size_t i = 0; i < UW_MARK_BACK && i < k; i++)
            mk.back[(at + k - 1 - i) % UW_MARK_BACK] = mk2.back[(k - 1 - i) % UW_MARK_BACK];
        cur = next;
    }
    *stop = UNWIND_CUT_COPY_END;
    return n;
}
