/* What one fork costs a profiled program: N times, fork a child that ends at once
 * (exit_group through the syscall instruction, so nothing of the runtime runs at its
 * end) and wait for it. Prints the median and the quartiles of fork-to-reaped, in
 * microseconds, over the N, then the CPU time per fork (this process and its children,
 * user and system: what a loaded machine does not inflate the way it does wall time).
 * The child's part (the runtime's fork handlers) is inside both: fork returns in the
 * child only after them. A block of `keep_mb` MiB is
 * allocated and touched first, as a program's heap would be.
 *
 * The CPU time includes the process's own start and the touching of the block, the same
 * in every configuration but the runtime's own start, so compare rows, not absolutes.
 *
 * With `stacks` (a power of two), that many blocks of 64 KiB are allocated first, each
 * from a call path of its own, and kept: a heap profile then holds that many stacks,
 * and its tables are that full when the program forks.
 *
 * Last, the median CPU time a child has used when fork returns in it (its
 * CLOCK_PROCESS_CPUTIME_ID, read first thing): the runtime's fork handlers and any
 * thread they started, without the parent's side or the child's exit. The least noisy
 * of the figures on a loaded machine.
 *
 * Usage: fork_work N [keep_mb [stacks]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void die_now(void)
{
    __asm__ volatile("mov $231, %%eax\n\txor %%edi, %%edi\n\tsyscall" ::: "rax", "rdi", "memory");
}

static void *kept_blocks[1 << 16];
static int n_kept;

/* A block from a call path of its own: two call sites per level, `bits` choosing. */
__attribute__((noinline)) static void grow(unsigned bits, int level);
__attribute__((noinline)) static void left(unsigned bits, int level)
{
    grow(bits, level);
    __asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) static void right(unsigned bits, int level)
{
    grow(bits, level);
    __asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) static void grow(unsigned bits, int level)
{
    if (level == 0) {
        if (n_kept < (int)(sizeof kept_blocks / sizeof *kept_blocks))
            kept_blocks[n_kept++] = malloc(65536);
        return;
    }
    if (bits & 1)
        left(bits >> 1, level - 1);
    else
        right(bits >> 1, level - 1);
    __asm__ volatile("" ::: "memory");
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 200;
    size_t keep = (size_t)(argc > 2 ? atoi(argv[2]) : 16) << 20;
    int stacks = argc > 3 ? atoi(argv[3]) : 0, levels = 0;
    while ((1 << levels) < stacks)
        levels++;
    for (int i = 0; i < stacks; i++)
        grow((unsigned)i, levels);
    char *block = malloc(keep);
    if (block) memset(block, 1, keep);
    double *t = calloc((size_t)n, sizeof *t);
    double *born = mmap(NULL, (size_t)n * sizeof *born, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (!t || born == MAP_FAILED) return 1;
    for (int i = 0; i < n; i++) {
        double a = now_us();
        pid_t c = fork();
        if (c == 0) {
            struct timespec ts;
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
            born[i] = (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
            die_now();
        }
        if (c < 0) return 1;
        waitpid(c, NULL, 0);
        t[i] = now_us() - a;
    }
    qsort(t, (size_t)n, sizeof *t, cmp);
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    double cpu = 0;
    struct timeval tv[] = {self.ru_utime, self.ru_stime, kids.ru_utime, kids.ru_stime};
    for (int i = 0; i < 4; i++)
        cpu += (double)tv[i].tv_sec * 1e6 + (double)tv[i].tv_usec;
    qsort(born, (size_t)n, sizeof *born, cmp);
    printf("%.1f %.1f %.1f %.1f %.1f\n", t[n / 4], t[n / 2], t[3 * n / 4], cpu / n, born[n / 2]);
    return block ? 0 : 1;
}
