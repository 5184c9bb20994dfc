/* Ends with no file descriptor left: lowers its limit to 64 descriptors, opens
 * /dev/null until none is left, keeps a block of 1 MiB, burns 0.2 s of CPU, takes what
 * was given back meanwhile and returns 0. With "free" as argv[1] it closes nothing either
 * but is otherwise the same; any other argument skips the descriptors (a plain short
 * run). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "burn.h"

/* Opens /dev/null until 20 tries 1 ms apart find no descriptor: a profiler's thread may
 * hold one for a while (a /proc file it reads; under qemu-user the emulator's copy of
 * /proc/self/maps, a memfd, for milliseconds) when the first open fails, and give it
 * back after. */
static void take_every_descriptor(void)
{
    const struct timespec ms = {0, 1000000};
    for (int misses = 0; misses < 20;) {
        if (open("/dev/null", O_RDONLY) >= 0) {
            misses = 0;
            continue;
        }
        misses++;
        nanosleep(&ms, NULL);
    }
}

int main(int argc, char **argv)
{
    int nofd = argc < 2 || !strcmp(argv[1], "free");
    if (nofd) {
        struct rlimit r = {64, 64};
        setrlimit(RLIMIT_NOFILE, &r);
        take_every_descriptor();
    }
    void *volatile keep = malloc(1 << 20);
    (void)keep;
    burn_cpu_us(200000);
    if (nofd) take_every_descriptor();
    return 0;
}
