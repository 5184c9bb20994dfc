/* arch.c — the one value of arch.h that is measured, not known at build time: the
 * mask that strips a return address's signature, from the highest mapped address;
 * and arch_on_stack, whose body is the architecture's (ARCH_ON_STACK_ASM).
 *
 * Signal handlers and malloc: arch_on_stack (registers only). arch_init runs once, at
 * load. */
#include "runtime/arch/arch.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

uint64_t arch_ra_mask = ~0ull;

__asm__(".text\n\t"
        ".globl arch_on_stack\n\t"
        ".hidden arch_on_stack\n\t"
        ".type arch_on_stack, %function\n\t"
        ".p2align 4\n"
        "arch_on_stack:\n\t"
        ".cfi_startproc\n\t" ARCH_ON_STACK_ASM ".cfi_endproc\n\t"
        ".size arch_on_stack, .-arch_on_stack\n\t");

/* The end of the last line of /proc/self/maps (mappings are listed in address
 * order), read backwards from the file's end in one buffer. 0 when unreadable. */
static uint64_t arch_highest_mapped(void)
{
    char buf[4096];
    size_t keep = 0;
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    for (;;) { /* the file's last buffer: the last lines */
        ssize_t n = read(fd, buf + keep, sizeof(buf) - 1 - keep);
        if (n <= 0) break;
        keep += (size_t)n;
        if (keep == sizeof(buf) - 1) { /* keep the last half: a line is far shorter */
            size_t half = keep / 2;
            for (size_t i = 0; i < keep - half; i++) buf[i] = buf[i + half];
            keep -= half;
        }
    }
    close(fd);
    buf[keep] = 0;
    while (keep && buf[keep - 1] == '\n') buf[--keep] = 0;
    size_t start = keep;
    while (start && buf[start - 1] != '\n') start--;
    const char *dash = buf + start;
    while (*dash && *dash != '-') dash++;
    return *dash ? strtoull(dash + 1, NULL, 16) - 1 : 0;
}

void arch_init(void)
{
    if (ARCH_SIGNED_RA) arch_ra_mask = arch_mask_from_highest(arch_highest_mapped());
}

/* Before the sessions' constructors, which start the engines that record return
 * addresses. */
__attribute__((constructor(101))) static void arch_load(void)
{
    arch_init();
}
