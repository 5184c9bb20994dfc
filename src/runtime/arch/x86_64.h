/* x86_64 — the processor as the runtime sees it (arch.h lists the names).
 * Signal handlers and malloc: everything (registers and checked loads only). */
#ifndef KESTREL_ARCH_X86_64_H
#define KESTREL_ARCH_X86_64_H
#include <asm/perf_regs.h>
#include <stdint.h>
#include <ucontext.h>

#define ARCH_NAME "x86_64"

static inline void arch_uc_regs(const ucontext_t *uc, struct arch_regs *r)
{
    r->pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    r->fp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
    r->sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
    r->lr = 0; /* a call pushes the return address */
}

/* In the sample they come in bit order: rbp, rsp, rip. */
#define ARCH_PERF_REGS_MASK                                                                        \
    ((1ull << PERF_REG_X86_BP) | (1ull << PERF_REG_X86_SP) | (1ull << PERF_REG_X86_IP))
static inline void arch_perf_regs(const uint64_t *w, struct arch_regs *r)
{
    r->fp = w[0], r->sp = w[1], r->pc = w[2], r->lr = 0;
}

/* DWARF: rbp 6, rsp 7; the return address (column 16) is pushed by the call, at
 * CFA - 8, the CFA being rsp + 8 at a function's first instruction. */
#define ARCH_DW_FP 6
#define ARCH_DW_SP 7
#define ARCH_CFA_INIT_OFF 8
#define ARCH_RA_IN_LR 0
#define ARCH_NEGATE_RA_STATE 0 /* no DW_CFA_AARCH64_negate_ra_state (0x2d) */
#define ARCH_RECORD_IS_CFA 1 /* push rbp right after the call: rbp + 16 = caller's rsp */

/* Return addresses carry no signature. */
#define ARCH_SIGNED_RA 0
static inline uint64_t arch_strip_ra(uint64_t a)
{
    return a;
}
static inline uint64_t arch_mask_from_highest(uint64_t highest)
{
    (void)highest;
    return ~0ull;
}

/* call rel32 (E8), or a call through a register or memory (FF /2, 2 to 7 bytes). Code
 * pointers that are not return addresses (function starts, tables) mostly fail. */
static inline int arch_follows_call(uint64_t a, uint64_t text)
{
    if (a - text < 7) return 0;
    const uint8_t *b = (const uint8_t *)(uintptr_t)a;
    if (b[-5] == 0xe8) return 1;
    for (int k = 2; k <= 7; k++)
        if (b[-k] == 0xff && ((b[-k + 1] >> 3) & 7) == 2) return 1;
    return 0;
}

/* The kernel, restarting a system call for the handler, set the PC back onto its
 * `syscall` instruction (0f 05); one it ended with EINTR leaves the PC after it. The
 * PC is in libc's, the vDSO's or the program's text, readable. */
static inline int arch_at_syscall(const ucontext_t *uc, int eintr)
{
    const unsigned char *pc = (const unsigned char *)uc->uc_mcontext.gregs[REG_RIP];
    if (pc[0] == 0x0f && pc[1] == 0x05) return 1;
    return ((uintptr_t)pc & 4095) >= 2 && pc[-2] == 0x0f && pc[-1] == 0x05 &&
           uc->uc_mcontext.gregs[REG_RAX] == -eintr;
}

static inline uint64_t arch_cycles(void)
{
    return (uint64_t)__builtin_ia32_rdtsc();
}

#define ARCH_HERE(pc, sp)                                                                          \
    __asm__ volatile("leaq 0(%%rip), %0\n\tmovq %%rsp, %1" : "=r"(pc), "=r"(sp))

/* arch_on_stack(fn, arg, top): rdi, rsi, rdx. Its frame record stays on the caller's
 * stack and rbp points at it while fn runs, so a frame-pointer walk or the CFI (the
 * CFA from rbp) leads from fn's frames back to the caller's stack. */
#define ARCH_ON_STACK_ASM                                                                          \
    "pushq %rbp\n\t"                                                                               \
    ".cfi_def_cfa_offset 16\n\t"                                                                   \
    ".cfi_offset %rbp, -16\n\t"                                                                    \
    "movq %rsp, %rbp\n\t"                                                                          \
    ".cfi_def_cfa_register %rbp\n\t"                                                               \
    "movq %rdx, %rsp\n\t"                                                                          \
    "movq %rdi, %rax\n\t"                                                                          \
    "movq %rsi, %rdi\n\t"                                                                          \
    "call *%rax\n\t"                                                                               \
    "movq %rbp, %rsp\n\t"                                                                          \
    ".cfi_def_cfa_register %rsp\n\t"                                                               \
    "popq %rbp\n\t"                                                                                \
    ".cfi_def_cfa_offset 8\n\t"                                                                    \
    ".cfi_restore %rbp\n\t"                                                                        \
    "ret\n\t"

/* The heap's countdown: one subtraction in place whose own flags decide
 * (sub %n, %fs:left; jbe), 1 when left was at most n, compared unsigned. */
#if defined(__GCC_ASM_FLAG_OUTPUTS__)
#define ARCH_SUB_BELOW_OR_EQ(var, n, slow)                                                         \
    __asm__("subq %2, %0" : "+m"(var), "=@ccbe"(slow) : "r"(n))
#endif
#endif
