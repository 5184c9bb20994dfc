/* arch — what the runtime needs to know of the processor, one file per architecture,
 * chosen here once at build time (the only test of the architecture in the runtime):
 * the registers a signal's ucontext and a perf sample give, the frame record, the
 * DWARF numbers and rules of the CFI unwinder, the return addresses' signature bits,
 * the system call instruction, a cycle counter, the name written in the raw file.
 *
 * Each architecture file defines the same names:
 *   ARCH_NAME                    "x86_64", "aarch64": the raw file's platform suffix
 *   arch_uc_regs(uc, &r)         pc, sp, fp, lr of an interrupted context (lr 0: none)
 *   ARCH_PERF_REGS_MASK          perf_event's sample_regs_user for those registers
 *   arch_perf_regs(words, &r)    the same four from a sample's registers (mask order)
 *   ARCH_DW_SP, ARCH_DW_FP       DWARF numbers of the stack and frame pointers
 *   ARCH_CFA_INIT_OFF            the CFA before a function's first instruction (sp + it)
 *   ARCH_RA_IN_LR                1 when a call leaves the return address in a register
 *   ARCH_NEGATE_RA_STATE         1 when CFI may hold DW_CFA_AARCH64_negate_ra_state
 *   ARCH_RECORD_IS_CFA           1 when a frame record sits just below its caller's sp,
 *                                so that its address + 16 is the caller's sp
 *   arch_strip_ra(a)             a return address without signature bits
 *   arch_follows_call(a, lo)     a is just after a call instruction (code from lo)
 *   arch_at_syscall(uc)          the interrupted thread is in (or was restarted onto)
 *                                a system call: sleeping in it, not running
 *   arch_cycles()                a cheap counter for seeding random numbers
 *   ARCH_SIGNED_RA               1 when return addresses may carry a signature
 *   arch_mask_from_highest(a)    the mask of arch_strip_ra, a the highest mapped address
 *   ARCH_SUB_BELOW_OR_EQ(v,n,s)  optional: v -= n in place, s = (old v <= n) unsigned
 *   ARCH_HERE(pc, sp)            the current pc and sp (a walk of one's own stack)
 *   ARCH_ON_STACK_ASM            the body of arch_on_stack, below (arch.c)
 *
 * Signal handlers and malloc: every function here (inline, registers and loads only),
 * arch_on_stack too. arch_init() runs once when the library loads (it reads
 * /proc/self/maps). */
#ifndef KESTREL_ARCH_H
#define KESTREL_ARCH_H
#include <stdint.h>

/* The registers a walk starts from. */
struct arch_regs {
    uint64_t pc, sp, fp, lr;
};

/* The mask that removes a return address's signature bits (all ones where there are
 * none): set by arch_init(), read by arch_strip_ra(). */
extern uint64_t arch_ra_mask;
void arch_init(void);

/* Calls fn(arg) with the stack pointer at `top` (16-byte aligned, the end of a stack
 * of the runtime's own) and returns there: work that must not take room on the
 * calling thread's stack. A signal that arrives meanwhile is taken on that stack. */
void arch_on_stack(void (*fn)(void *), void *arg, void *top);

#if defined(__x86_64__)
#include "runtime/arch/x86_64.h"
#elif defined(__aarch64__)
#include "runtime/arch/aarch64.h"
#else
#error "kestrel's runtime knows x86_64 and aarch64 (src/runtime/arch/)"
#endif
#endif
