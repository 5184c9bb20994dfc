/* Telling a return address from one a fiber library made up (unwind/callsite.c): the
 * call encodings of x86-64 that end at an address, and code that is no call. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "runtime/unwind/callsite.c"

/* The UW_CALL_BYTES bytes before an address: `n` bytes of code, padded in front. */
static int follows(const uint8_t *code, size_t n, uint8_t pad)
{
    uint8_t b[UW_CALL_BYTES];
    memset(b, pad, sizeof b);
    memcpy(b + UW_CALL_BYTES - n, code, n);
    return uw_code_follows_call(b);
}

__attribute__((noinline)) static uint64_t my_return_address(void)
{
    return (uint64_t)(uintptr_t)__builtin_return_address(0);
}

int main(void)
{
#if defined(__x86_64__)
    static const uint8_t rel32[] = {0xe8, 0x10, 0x20, 0x30, 0x40};          /* call rel32 */
    static const uint8_t reg[] = {0xff, 0xd0};                              /* call *%rax */
    static const uint8_t rex_reg[] = {0x41, 0xff, 0xd3};                    /* call *%r11 */
    static const uint8_t rip[] = {0xff, 0x15, 0x01, 0x02, 0x03, 0x04};      /* call *x(%rip) */
    static const uint8_t sib8[] = {0xff, 0x54, 0x24, 0x08};                 /* call *8(%rsp) */
    static const uint8_t disp32[] = {0xff, 0x90, 0x00, 0x01, 0x00, 0x00};   /* call *0x100(%rax) */
    static const uint8_t sib32[] = {0xff, 0x94, 0x24, 0x00, 0x01, 0x00, 0x00};
    static const uint8_t mem[] = {0xff, 0x10};                              /* call *(%rax) */
    CHECK(follows(rel32, sizeof rel32, 0x90));
    CHECK(follows(reg, sizeof reg, 0x90));
    CHECK(follows(rex_reg, sizeof rex_reg, 0x90));
    CHECK(follows(rip, sizeof rip, 0x90));
    CHECK(follows(sib8, sizeof sib8, 0x90));
    CHECK(follows(disp32, sizeof disp32, 0x90));
    CHECK(follows(sib32, sizeof sib32, 0x90));
    CHECK(follows(mem, sizeof mem, 0x90));
    /* boost.context's trampoline: push %rbp; jmp *%rbx, then its `_exit` call. */
    static const uint8_t jmp_reg[] = {0x55, 0xff, 0xe3};
    /* glibc's padding before __start_context: nopl 0x0(%rax). */
    static const uint8_t nopl[] = {0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00};
    static const uint8_t ret[] = {0x5d, 0xc3};
    CHECK(!follows(jmp_reg, sizeof jmp_reg, 0x90));
    CHECK(!follows(nopl, sizeof nopl, 0xcc));
    CHECK(!follows(ret, sizeof ret, 0x90));
#endif
    /* A return address of this process, read from its own code. */
    CHECK(uw_ra_follows_call(my_return_address()) == 1);
    CHECK(uw_ra_follows_call(8) == -1); /* nothing mapped there */
    return check_exit();
}
