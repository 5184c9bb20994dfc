/* aarch64 — the processor as the runtime sees it (arch.h lists the names).
 *
 * A call (bl, blr) leaves the return address in x30, the link register: a function
 * that calls saves it with x29 in a frame record {x29, x30} and points x29 at it, so
 * the frame-pointer chain gives every caller but the leaf's, which only lr holds.
 * With pointer authentication (-mbranch-protection=pac-ret) a saved return address
 * carries a signature in its bits above the virtual address size: every return
 * address is stripped before it is recorded or followed (arch_strip_ra).
 *
 * Signal handlers and malloc: everything (registers and checked loads only). */
#ifndef KESTREL_ARCH_AARCH64_H
#define KESTREL_ARCH_AARCH64_H
#include <stdint.h>
#include <ucontext.h>

#define ARCH_NAME "aarch64"

static inline void arch_uc_regs(const ucontext_t *uc, struct arch_regs *r)
{
    r->pc = (uint64_t)uc->uc_mcontext.pc;
    r->sp = (uint64_t)uc->uc_mcontext.sp;
    r->fp = (uint64_t)uc->uc_mcontext.regs[29];
    r->lr = (uint64_t)uc->uc_mcontext.regs[30];
}

/* perf_event's arm64 numbering (asm/perf_regs.h): x29 29, lr 30, sp 31, pc 32; in a
 * sample they come in bit order. The kernel of another architecture (an emulator's
 * host) rejects bits 29..32 of its own numbering, or means other registers by them. */
#define ARCH_PERF_REGS_MASK ((1ull << 29) | (1ull << 30) | (1ull << 31) | (1ull << 32))
static inline void arch_perf_regs(const uint64_t *w, struct arch_regs *r)
{
    r->fp = w[0], r->lr = w[1], r->sp = w[2], r->pc = w[3];
}

/* DWARF: x29 29, sp 31, the return address column is x30; the CFA is sp itself at a
 * function's first instruction (nothing pushed: the return address is in x30). */
#define ARCH_DW_FP 29
#define ARCH_DW_SP 31
#define ARCH_CFA_INIT_OFF 0
#define ARCH_RA_IN_LR 1
/* DW_CFA_AARCH64_negate_ra_state (0x2d): from here the return address is signed, or
 * no longer. Every return address is stripped whatever its state, so the walk needs
 * nothing of it. */
#define ARCH_NEGATE_RA_STATE 1
#define ARCH_RECORD_IS_CFA 0 /* the record sits anywhere in the frame (GCC: at its bottom) */

/* Linux signs user return addresses in bits [54, VA bits) (the kernel's own
 * ptrauth_user_pac_mask); a user address has bits 55..63 clear, so keeping the bits
 * below the address size strips the signature whatever the key. arch_init() sets the
 * mask from the highest address mapped. */
#define ARCH_SIGNED_RA 1
static inline uint64_t arch_strip_ra(uint64_t a)
{
    return a & arch_ra_mask;
}

/* The instruction before a: bl imm26, blr xN, or blraa/blrab/blraaz/blrabz. */
static inline int arch_follows_call(uint64_t a, uint64_t text)
{
    if ((a & 3) || a - text < 4) return 0;
    uint32_t i = *(const uint32_t *)(uintptr_t)(a - 4);
    return (i & 0xfc000000u) == 0x94000000u || (i & 0xfffffc1fu) == 0xd63f0000u ||
           (i & 0xfefff800u) == 0xd63f0800u;
}

/* svc #0 (d4000001): a restarted call has the PC back on it, one ended by EINTR has
 * the PC after it and -EINTR in x0. */
static inline int arch_at_syscall(const ucontext_t *uc, int eintr)
{
    const uint32_t *pc = (const uint32_t *)(uintptr_t)uc->uc_mcontext.pc;
    if (pc[0] == 0xd4000001u) return 1;
    return ((uintptr_t)pc & 4095) >= 4 && pc[-1] == 0xd4000001u &&
           (int64_t)uc->uc_mcontext.regs[0] == -eintr;
}

static inline uint64_t arch_cycles(void)
{
    uint64_t v;
    __asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
    return v;
}

#define ARCH_HERE(pc, sp) __asm__ volatile("adr %0, .\n\tmov %1, sp" : "=r"(pc), "=r"(sp))

/* arch_on_stack(fn, arg, top): x0, x1, x2. Its frame record {x29, x30} stays on the
 * caller's stack and x29 points at it while fn runs, so a frame-pointer walk or the
 * CFI (the CFA from x29) leads from fn's frames back to the caller's stack. */
#define ARCH_ON_STACK_ASM                                                                          \
    "stp x29, x30, [sp, #-16]!\n\t"                                                                \
    ".cfi_def_cfa_offset 16\n\t"                                                                   \
    ".cfi_offset x29, -16\n\t"                                                                     \
    ".cfi_offset x30, -8\n\t"                                                                      \
    "mov x29, sp\n\t"                                                                              \
    ".cfi_def_cfa_register x29\n\t"                                                                \
    "mov sp, x2\n\t"                                                                               \
    "mov x3, x0\n\t"                                                                               \
    "mov x0, x1\n\t"                                                                               \
    "blr x3\n\t"                                                                                   \
    "mov sp, x29\n\t"                                                                              \
    ".cfi_def_cfa_register sp\n\t"                                                                 \
    "ldp x29, x30, [sp], #16\n\t"                                                                  \
    ".cfi_def_cfa_offset 0\n\t"                                                                    \
    ".cfi_restore x29\n\t"                                                                         \
    ".cfi_restore x30\n\t"                                                                         \
    "ret\n\t"

/* The address size from the highest mapped address (the stack, placed just below the
 * top of the user address space): the bits it needs. At least 39 (the smallest
 * arm64 Linux user space), at most 55 (bit 55 tells user from kernel addresses). */
static inline uint64_t arch_mask_from_highest(uint64_t highest)
{
    int bits = highest ? 64 - __builtin_clzll(highest) : 48;
    if (bits < 39) bits = 39;
    if (bits > 55) bits = 55;
    return (1ull << bits) - 1;
}
#endif
