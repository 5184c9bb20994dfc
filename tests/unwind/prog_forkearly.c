/* Forks from the first instant of main, as a shell or `timeout` does, while the
 * runtime builds its unwind tables on its own thread: for argv[1] seconds (default
 * 0.5) it forks a child that walks the loader's list (dl_iterate_phdr, as a C++ throw
 * does) and exits, and waits for it at most 10 s. Prints "forks N hung N" and exits 0
 * when no child hung, 1 otherwise (a hung child is killed). */
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int count_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info, (void)size;
    ++*(int *)data;
    return 0;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 0.5, end = now() + secs;
    int forks = 0, hung = 0;
    while (now() < end && !hung) {
        pid_t c = fork();
        if (c < 0) return 2;
        if (c == 0) {
            int n = 0;
            dl_iterate_phdr(count_cb, &n);
            _exit(n > 0 ? 0 : 3);
        }
        forks++;
        double limit = now() + 10;
        int st = 0;
        pid_t w;
        while ((w = waitpid(c, &st, WNOHANG)) == 0 && now() < limit) {
            struct timespec gap = {0, 1000000};
            nanosleep(&gap, NULL);
        }
        if (w == 0) {
            hung++;
            kill(c, SIGKILL);
            waitpid(c, &st, 0);
        } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            printf("child status %d\n", st);
            return 1;
        }
    }
    printf("forks %d hung %d\n", forks, hung);
    return hung ? 1 : 0;
}
