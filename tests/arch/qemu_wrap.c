/* qemu_wrap — runs the aarch64 program of the same name under qemu-aarch64, so that the
 * runtime's process tests (tests/runtime/test_*.py with KESTREL_TEST_ARCH=aarch64) start
 * build/aarch64's helpers as they start the native ones. Installed as
 * <dir>/qemu/<name> for each <dir>/<name>; built static, so that the LD_PRELOAD of an
 * aarch64 libkestrel in its environment never reaches a host loader: it is taken out
 * and handed to the guest alone (-E). The guest finds this wrapper's path in
 * KESTREL_TEST_SELF, to run itself again (prog_life's exec modes): the kernel here cannot
 * run an aarch64 program. A64_QEMU, A64_SYSROOT override the defaults. */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    char self[4096], dir[4096], target[8192], pre[8192] = "";
    snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(dir, sizeof dir, "%s", argv[0]);
    snprintf(target, sizeof target, "%s/../%s", dirname(dir), basename(self));
    const char *qemu = getenv("A64_QEMU") ? getenv("A64_QEMU") : "/usr/bin/qemu-aarch64";
    const char *root = getenv("A64_SYSROOT") ? getenv("A64_SYSROOT") : "/usr/aarch64-linux-gnu";
    const char *lp = getenv("LD_PRELOAD");
    char **av = calloc((size_t)argc + 8, sizeof *av);
    int n = 0;
    if (!av) return 127;
    av[n++] = (char *)qemu;
    av[n++] = "-L";
    av[n++] = (char *)root;
    if (lp) {
        snprintf(pre, sizeof pre, "LD_PRELOAD=%s", lp);
        av[n++] = "-E";
        av[n++] = pre;
        unsetenv("LD_PRELOAD");
    }
    setenv("KESTREL_TEST_SELF", argv[0], 1);
    av[n++] = target;
    for (int i = 1; i < argc; i++) av[n++] = argv[i];
    execv(qemu, av);
    perror(qemu);
    return 127;
}
