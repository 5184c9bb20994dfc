/* Spins for argv[1] seconds (writing its pid to argv[2] first), then ends as argv[3]
 * says: "return" (exit status 0), "exit_group" (syscall(SYS_exit_group, 7) through
 * libc), "raw" (the exit_group instruction itself, status 5: nothing of the runtime
 * runs), "wait" (sleeps until killed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile double sink;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline)) static void spin_hard(double secs)
{
    double end = now() + secs;
    while (now() < end)
        for (int i = 0; i < 20000; i++)
            sink += i * 0.5;
}

int main(int argc, char **argv)
{
    if (argc < 4) return 2;
    FILE *f = fopen(argv[2], "w");
    if (!f) return 2;
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    spin_hard(atof(argv[1]));
    if (!strcmp(argv[3], "exit_group")) syscall(SYS_exit_group, 7);
    if (!strcmp(argv[3], "raw")) {
        long nr = SYS_exit_group, status = 5;
        __asm__ volatile("syscall" : : "a"(nr), "D"(status) : "rcx", "r11", "memory");
    }
    if (!strcmp(argv[3], "wait"))
        for (;;)
            pause();
    return 0;
}
