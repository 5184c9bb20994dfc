/* callsite.c — is there a call instruction before this address (callsite.h).
 *
 * Signal handlers: both functions (one system call, no allocation). Inside malloc:
 * both. */
#include "runtime/unwind/callsite.h"

#include <sys/uio.h>
#include <unistd.h>

#if defined(__x86_64__)
/* call rel32 (E8), or call r/m64 (FF /2, any addressing form) ending at the address. */
int uw_code_follows_call(const uint8_t code[UW_CALL_BYTES])
{
    const uint8_t *end = code + UW_CALL_BYTES;
    if (end[-5] == 0xe8) return 1;
    for (int k = 2; k <= 7; k++) {
        const uint8_t *p = end - k;
        if (p[0] != 0xff || ((p[1] >> 3) & 7) != 2) continue;
        unsigned mod = p[1] >> 6, rm = p[1] & 7, len = 2;
        if (mod != 3) {
            int sib = rm == 4;
            unsigned disp = mod == 1 ? 1 : mod == 2 ? 4 : (rm == 5 ? 4 : 0);
            if (mod == 0 && sib && (k < 3 || (p[2] & 7) == 5)) disp = 4;
            len = 2 + (unsigned)sib + disp;
        }
        if (len == (unsigned)k) return 1;
    }
    return 0;
}
#elif defined(__aarch64__)
/* bl, blr and the pointer-authenticating blra*: the word before the address. */
int uw_code_follows_call(const uint8_t code[UW_CALL_BYTES])
{
    uint32_t w = (uint32_t)code[4] | (uint32_t)code[5] << 8 | (uint32_t)code[6] << 16 |
                 (uint32_t)code[7] << 24;
    return (w & 0xfc000000u) == 0x94000000u || (w & 0xfffffc1fu) == 0xd63f0000u ||
           (w & 0xfefff800u) == 0xd63f0800u;
}
#else
int uw_code_follows_call(const uint8_t code[UW_CALL_BYTES])
{
    (void)code;
    return 1; /* unknown: every address is taken as a return address */
}
#endif

int uw_ra_follows_call(uint64_t ra)
{
    uint8_t code[UW_CALL_BYTES];
    if (ra < UW_CALL_BYTES) return -1;
    struct iovec local = {code, sizeof code}, remote = {(void *)(uintptr_t)(ra - UW_CALL_BYTES), sizeof code};
    if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)sizeof code) return -1;
    return uw_code_follows_call(code);
}
