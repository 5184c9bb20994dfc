/* unwind.c — the validated frame-pointer walk (unwind.h).
 *
 * Signal handlers: unwind_fp(), which reads only memory it checked against [lo, hi)
 * and calls nothing but unwind_is_root_text(), and that. Inside malloc: everything
 * (nothing here allocates). */
#include "runtime/unwind/unwind.h"
#include "runtime/arch/arch.h"

/* The linker's bounds of the root functions' section; weak, so that a program
 * without any (a test of the walker alone) links with an empty range. */
extern const char __start_kestrel_root_text[] __attribute__((weak, visibility("hidden")));
extern const char __stop_kestrel_root_text[] __attribute__((weak, visibility("hidden")));

int unwind_is_root_text(uint64_t addr)
{
    uint64_t b = (uint64_t)(uintptr_t)__start_kestrel_root_text;
    uint64_t e = (uint64_t)(uintptr_t)__stop_kestrel_root_text;
    return addr - b < e - b;
}

size_t unwind_fp(uint64_t pc, uint64_t fp, uint64_t lo, uint64_t hi, intptr_t bias, uint64_t *out,
                 size_t max, enum unwind_stop *stop)
{
    size_t n = 0;
    if (max == 0) {
        *stop = UNWIND_CUT_DEPTH;
        return 0;
    }
    out[n++] = pc;
    uint64_t prev = lo; /* the first frame pointer may sit at lo itself */
    int first = 1;
    for (;;) {
        if (fp == 0) {
            *stop = UNWIND_END_ZERO;
            break;
        }
        if (fp & 7) {
            *stop = UNWIND_CUT_ALIGN;
            break;
        }
        if (fp < lo) {
            *stop = UNWIND_CUT_RANGE;
            break;
        }
        if (first ? fp < prev : fp <= prev) {
            *stop = UNWIND_CUT_ORDER;
            break;
        }
        if (fp >= hi || hi - fp < 16) {
            *stop = UNWIND_END_TOP;
            break;
        }
        if (!first && fp - prev > UNWIND_MAX_FRAME) {
            *stop = UNWIND_CUT_FRAME;
            break;
        }
        const uint64_t *rec = (const uint64_t *)(uintptr_t)(fp + (uint64_t)bias);
        uint64_t ret = arch_strip_ra(rec[1]), next = rec[0];
        if (ret == 0) {
            *stop = UNWIND_END_ZERO;
            break;
        }
        if (n == max) {
            *stop = UNWIND_CUT_DEPTH;
            break;
        }
        out[n++] = ret;
        if (unwind_is_root_text(ret)) {
            /* The root function's own record (built with frame pointers) names its
             * caller in libc, the frame perf record -g ends on too. */
            if (next > fp && next <= hi - UNWIND_ROOT_RECORD && !(next & 7) && n < max) {
                const uint64_t *root = (const uint64_t *)(uintptr_t)(next + (uint64_t)bias);
                if (root[1]) out[n++] = arch_strip_ra(root[1]);
            }
            *stop = UNWIND_END_TOP;
            break;
        }
        prev = fp;
        fp = next;
        first = 0;
    }
    return n;
}
