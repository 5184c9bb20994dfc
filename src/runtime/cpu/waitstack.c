/* waitstack.c — stacks of blocked threads, read from their memory (waitstack.h):
 * walked by CFI from the (pc, sp) of /proc/self/task/TID/syscall, else (fp mode, no
 * tables, or a CFI walk that did not reach the top) by a scan for the first frame
 * record and the frame-pointer chain from there.
 *
 * Signal handlers: nothing. Inside malloc: nothing. Engine thread only: the copy
 * buffer is shared between calls. */
#include "runtime/cpu/waitstack.h"
#include "runtime/fibers.h"
#include "runtime/rtfd.h"
#include "runtime/arch/arch.h"
#include "runtime/images.h"
#include "runtime/rtmem.h"
#include "runtime/cpu/sink.h"
#include "runtime/unwind/unwind.h"
#include "runtime/unwind/step.h"
#include "runtime/unwind/table.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define WS_COPY_MAX (256u * 1024) /* bytes of stack copied above the SP */
#define WS_SCAN_WORDS 2048        /* words searched for the first frame record */
#define WS_LEAF_MAX 16            /* return addresses kept below that record */

static uint8_t *ws_buf; /* WS_COPY_MAX, mapped on first use */

/* A return address: inside some image's text, right after a call instruction
 * (arch_follows_call: code pointers that are not return addresses, function starts
 * and tables, mostly fail that second test). */
static int ws_is_text(uint64_t a)
{
    const struct image *im = images_find_text(a);
    if (!im) return 0;
    return arch_follows_call(a, im->text);
}

static uint64_t ws_word(const uint8_t *copy, size_t len, uint64_t sp, uint64_t a, int *ok)
{
    if (a < sp || a - sp + 8 > len || (a & 7)) {
        *ok = 0;
        return 0;
    }
    uint64_t w;
    memcpy(&w, copy + (a - sp), 8);
    *ok = 1;
    return w;
}

/* Does a frame record sit at address a: [a] = caller's frame pointer (0 or above a,
 * inside the stack), [a+8] = a return address in some image's text, and the caller's
 * record (when inside the copy) holds a text address too. */
static int ws_is_record(const uint8_t *copy, size_t len, uint64_t sp, uint64_t hi, uint64_t a)
{
    int ok1, ok2, ok3;
    uint64_t next = ws_word(copy, len, sp, a, &ok1);
    uint64_t ret = ws_word(copy, len, sp, a + 8, &ok2);
    if (!ok1 || !ok2 || !ws_is_text(ret)) return 0;
    if (next == hi) /* the registered top (a zero here is too common to trust) */
        return 1;
    if ((next & 7) || next <= a || next > hi || next - a > UNWIND_MAX_FRAME) return 0;
    uint64_t ret2 = ws_word(copy, len, sp, next + 8, &ok3);
    return !ok3 || ret2 == 0 || ws_is_text(ret2);
}

size_t waitstack_walk_copy(uint64_t pc, uint64_t sp, uint64_t hi, const uint8_t *copy, size_t len,
                           uint64_t *out, size_t max, int *stop)
{
    size_t n = 0;
    *stop = UNWIND_CUT_RANGE;
    if (max == 0) return 0;
    out[n++] = pc;
    uint64_t end = sp + len; /* what we can read */
    for (uint64_t a = sp; a + 16 <= end && (a - sp) / 8 < WS_SCAN_WORDS; a += 8) {
        if (ws_is_record(copy, len, sp, hi, a)) {
            enum unwind_stop st;
            /* out[n-1] is rewritten with itself: unwind_fp puts its pc first. */
            size_t got = unwind_fp(out[n - 1], a, sp, end, (intptr_t)copy - (intptr_t)sp,
                                   &out[n - 1], max - (n - 1), &st);
            n = n - 1 + got;
            /* Leaving a copy that ends below the stack's top is the end of what
             * could be seen: frames above it are missing. */
            *stop = st == UNWIND_END_TOP && end < hi && !unwind_ends_at_root(out, n)
                        ? UNWIND_CUT_COPY_END
                        : st;
            return n;
        }
        int ok;
        uint64_t w = ws_word(copy, len, sp, a, &ok);
        if (ok && n < WS_LEAF_MAX && n < max && ws_is_text(w)) out[n++] = w;
    }
    return n;
}

/* Parses "nr a1 a2 a3 a4 a5 a6 sp pc" or "-1 sp pc"; 0 when blocked, -EAGAIN when the
 * thread is running (or runnable). */
static int ws_read_syscall(pid_t tid, uint64_t key[3])
{
    char path[64], buf[256];
    snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
    struct rtfd once;
    int fd = rtfd_open_once(&once, path);
    if (fd < 0) return -errno;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    rtfd_close(&once);
    if (n <= 0) return -EIO;
    buf[n] = 0;
    if (strncmp(buf, "running", 7) == 0) return -EAGAIN;
    uint64_t f[9];
    int k = 0;
    char *p = buf, *e;
    while (k < 9) {
        f[k] = strtoull(p, &e, 0);
        if (e == p) break;
        k++;
        p = e;
    }
    if (k != 9 && k != 3) return -EIO;
    key[0] = f[0];
    key[1] = f[k - 2];
    key[2] = f[k - 1];
    return 0;
}

/* n more samples of the episode's stack, the first carrying cpu_ns. */
static void ws_add(struct reg_slot *s, uint64_t t_ns, uint64_t cpu_ns, unsigned count)
{
    for (unsigned k = 0; k < count; k++)
        sink_add_interned_to(sink_thread_of(s, s->wait_thread1), t_ns, k ? 0 : cpu_ns,
                             SINK_WAITING, s->wait_stack);
}

int waitstack_sample_n(struct reg_slot *s, uint64_t t_ns, uint64_t cpu_ns, unsigned count)
{
    if (s->wait_stack >= 0 && cpu_ns == 0) {
        ws_add(s, t_ns, 0, count);
        return 1;
    }
    uint64_t key[3] = {0, 0, 0};
    int r = ws_read_syscall(s->tid, key);
    if (r < 0) return r == -EAGAIN ? 0 : r;
    if (count == 0) return 1;
    if (s->wait_stack >= 0 && memcmp(key, s->wait_key, sizeof(key)) == 0) {
        ws_add(s, t_ns, cpu_ns, count);
        return 1;
    }
    uint64_t sp = key[1], pc = key[2];
    if (!ws_buf && !(ws_buf = rtmem_alloc(WS_COPY_MAX))) return -ENOMEM;
    size_t len = 0;
    /* Blocked on a fiber's stack (fibers.h): walked within it, the fiber's waiting. */
    uint64_t top = s->stack_hi, f_lo, fiber = 0;
    int in = sp >= s->stack_lo && sp < s->stack_hi;
    if (!in && fiber_find(sp, s->stack_lo, s->stack_hi, &f_lo, &top, &fiber)) in = 1;
    uint32_t thread1 = fiber ? fiber_thread(s->tid, fiber) : 0;
    if (in) {
        size_t want = top - sp < WS_COPY_MAX ? top - sp : WS_COPY_MAX;
        struct iovec local = {ws_buf, want}, remote = {(void *)(uintptr_t)sp, want};
        ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
        len = got > 0 ? (size_t)got & ~(size_t)7 : 0;
    }
    uint64_t frames[UNWIND_MAX_DEPTH];
    int stop = UNWIND_CUT_RANGE;
    size_t n = 0;
    int mode = uw_mode_current();
    if (mode != UW_MODE_FP && uw_tables_ready()) {
        /* CFI from the (pc, sp) the kernel shows; rbp is not shown, so a frame whose
         * CFA is rbp-based cannot be stepped until a callee's save restored it. */
        uint64_t hi = sp + len < top ? sp + len : top;
        struct uw_stack m = {sp, hi, (intptr_t)ws_buf - (intptr_t)sp, UW_DIRECT_NONE, NULL};
        struct uw_regs regs = {.pc = pc, .sp = sp, .interrupted = 1};
        enum unwind_stop st;
        n = uw_walk_copy(mode, regs, &m, frames, UNWIND_MAX_DEPTH, &st);
        stop = st;
        if (st == UNWIND_END_TOP && hi < top) stop = UNWIND_CUT_COPY_END;
    }
    /* Without CFI, or where it did not reach the top: the frame-record scan. */
    if (n == 0 || (mode != UW_MODE_CFI && stop != UNWIND_END_TOP && stop != UNWIND_END_CFI)) {
        uint64_t alt[UNWIND_MAX_DEPTH];
        int alt_stop;
        size_t k =
            waitstack_walk_copy(pc, sp, top, ws_buf, len, alt, UNWIND_MAX_DEPTH, &alt_stop);
        if (k > n) {
            memcpy(frames, alt, k * sizeof *alt);
            n = k;
            stop = alt_stop;
        }
    }
    struct sink_sample smp = {
        .slot = s,
        .t_ns = t_ns,
        .cpu_ns = cpu_ns,
        .state = SINK_WAITING,
        .stop = (uint8_t)stop,
        .nframes = (uint16_t)n,
        .frames = frames,
        .thread1 = thread1,
    };
    int32_t st = sink_add(&smp);
    s->wait_stack = st;
    s->wait_thread1 = thread1;
    memcpy(s->wait_key, key, sizeof(key));
    if (st >= 0 && count > 1) ws_add(s, t_ns, 0, count - 1);
    return 1;
}

int waitstack_sample(struct reg_slot *s, uint64_t t_ns, uint64_t cpu_ns)
{
    return waitstack_sample_n(s, t_ns, cpu_ns, 1);
}
