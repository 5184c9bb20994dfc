/* A program with JIT code (tests/attach/test_attach.py): a countdown loop copied into
 * anonymous executable memory, named in /tmp/perf-PID.map as a JIT would, and run for
 * SECONDS. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 3;
    /* loop: dec %rdi; jnz loop; ret */
    static const unsigned char code[] = {0x48, 0xff, 0xcf, 0x75, 0xfb, 0xc3};
    unsigned char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return 1;
    memcpy(m, code, sizeof code);
    char path[64];
    snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
    FILE *f = fopen(path, "w");
    if (!f) return 1;
    fprintf(f, "%lx %zx jit_countdown\n", (unsigned long)(uintptr_t)m, sizeof code);
    fclose(f);
    void (*fn)(uint64_t) = (void (*)(uint64_t))(uintptr_t)m;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        fn(1000000);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
    unlink(path);
    return 0;
}
