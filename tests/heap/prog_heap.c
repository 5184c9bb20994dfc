/* A program profiled through KESTREL_HEAP (preloaded runtime, no link to it): keeps
 * 16 MiB allocated at site_keep, then ends as argv[1] says: exit, exec (of /bin/true),
 * sigterm (its default action), or fork (the child reports whether a profile runs in
 * it, allocates, and exits). Prints "ran" first, so a test can tell it started. */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *kept[4096];

__attribute__((noinline)) void *site_keep(void)
{
    void *p = malloc(4096);
    __asm__ volatile("" ::: "memory");
    return p;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "exit";
    printf("ran\n");
    fflush(stdout);
    for (int i = 0; i < 4096; i++)
        kept[i] = site_keep();
    if (!strcmp(mode, "exec")) {
        execl("/bin/true", "true", (char *)NULL);
        return 2;
    }
    if (!strcmp(mode, "sigterm")) {
        kill(getpid(), SIGTERM);
        return 3;
    }
    if (!strcmp(mode, "fork")) {
        pid_t c = fork();
        if (c == 0) {
            int (*running)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "kestrel_heap_is_running");
            printf("child running=%d\n", running ? running() : -1);
            for (int i = 0; i < 4096; i++)
                free(kept[i]);
            for (int i = 0; i < 4096; i++)
                kept[i] = site_keep();
            exit(0);
        }
        int st;
        waitpid(c, &st, 0);
    }
    return 0;
}
