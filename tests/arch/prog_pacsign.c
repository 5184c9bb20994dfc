/* prog_pacsign — says whether return addresses are signed where it runs. Built with
 * -mbranch-protection=pac-ret and frame pointers, probe() saves its x30 signed in its
 * frame record where the CPU authenticates pointers (qemu's -cpu max), plain
 * elsewhere; __builtin_return_address gives it stripped (xpaclri). Prints "signed" (when
 * any of 8 probes at different depths is) or "plain", and a probe's two values. */
#include <stdint.h>
#include <stdio.h>

/* One probe: 1 when its frame record's x30 differs from the stripped one. */
__attribute__((noinline)) static int probe(uint64_t *saved_out, uint64_t *plain_out)
{
    const uint64_t *rec = __builtin_frame_address(0);
    uint64_t saved = rec[1], plain = (uint64_t)(uintptr_t)__builtin_return_address(0);
    *saved_out = saved;
    *plain_out = plain;
    return saved != plain;
}

/* Probes at 8 depths: each frame's sp is its signature's modifier, so one signature
 * that happens to be all zero (a chance in 2^15 or so) does not read as unsigned. */
__attribute__((noinline)) static int probe_at(int depth, uint64_t *saved, uint64_t *plain)
{
    int s = probe(saved, plain);
    if (depth > 0) {
        uint64_t s2, p2;
        if (probe_at(depth - 1, &s2, &p2) && !s) {
            *saved = s2;
            *plain = p2;
            s = 1;
        }
    }
    return s;
}

int main(void)
{
    uint64_t saved, plain;
    int s = probe_at(7, &saved, &plain);
    return printf("%s %#llx %#llx\n", s ? "signed" : "plain", (unsigned long long)saved,
                  (unsigned long long)plain) < 0;
}
