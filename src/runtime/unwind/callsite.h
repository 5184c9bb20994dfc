/* callsite — whether an address follows a call instruction: a return address that
 * does not was made up by whoever built the stack (a fiber library's entry trampoline:
 * boost.context's make_fcontext pushes the address of its own `_exit` call; glibc's
 * makecontext the first instruction of __start_context), so a walk that ends there
 * reached the fiber's outermost frame rather than being cut.
 *
 * Libc only. Signal handlers: uw_code_follows_call() (pure). Inside malloc: both. */
#ifndef KESTREL_UNWIND_CALLSITE_H
#define KESTREL_UNWIND_CALLSITE_H
#include <stdint.h>

#define UW_CALL_BYTES 8 /* bytes before the address that the decoder looks at */

/* 1 when the UW_CALL_BYTES bytes before an address (code[UW_CALL_BYTES] is the
 * address itself) end with a call instruction of this architecture. */
int uw_code_follows_call(const uint8_t code[UW_CALL_BYTES]);

/* The same for an address of this process, read with process_vm_readv (which fails
 * where nothing is mapped): 1 a call, 0 not, -1 unreadable. Not in a signal handler
 * of a thread that must not make system calls; never faults. */
int uw_ra_follows_call(uint64_t ra);
#endif
