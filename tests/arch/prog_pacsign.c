/* prog_pacsign — says whether return addresses are signed where it runs. Built with
 * -mbranch-protection=pac-ret and frame pointers, probe() saves its x30 signed in its
 * frame record where the CPU authenticates pointers (qemu's -cpu max), plain
 * elsewhere; __builtin_return_address gives it stripped (xpaclri). Prints "signed" or
 * "plain" and both values. */
#include <stdint.h>
#include <stdio.h>

__attribute__((noinline)) static int probe(void)
{
    const uint64_t *rec = __builtin_frame_address(0);
    uint64_t saved = rec[1], plain = (uint64_t)(uintptr_t)__builtin_return_address(0);
    return printf("%s %#llx %#llx\n", saved != plain ? "signed" : "plain",
                  (unsigned long long)saved, (unsigned long long)plain) < 0;
}

int main(void)
{
    return probe();
}
