/* Ends with no file descriptor left: lowers its limit to 64 descriptors, opens
 * /dev/null until none is left, keeps a block of 1 MiB, burns 0.2 s of CPU and returns
 * 0. With "free" as argv[1] it closes nothing either but is otherwise the same; any
 * other argument skips the descriptors (a plain short run). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "burn.h"

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "free")) {
        struct rlimit r = {64, 64};
        setrlimit(RLIMIT_NOFILE, &r);
        while (open("/dev/null", O_RDONLY) >= 0)
            ;
    }
    void *volatile keep = malloc(1 << 20);
    (void)keep;
    burn_cpu_us(200000);
    return 0;
}
