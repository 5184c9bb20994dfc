/* A program profiled through KESTREL_HEAP (preloaded runtime, no link to it): keeps
 * 16 MiB allocated at site_keep, then ends as argv[1] says: exit, exec (of /bin/true),
 * sigterm, sigint, sighup, sigabrt (abort()), each by its default action, after
 * printing how many threads the process has; thread-sigterm (the same after a thread
 * of its own came and went, listing the names of its threads before and after);
 * churn (allocates and frees forever, one thread, until a signal ends it); _exit,
 * _Exit, quick_exit, exit_group (syscall()) or handler_exit (_exit(5) from a SIGTERM
 * handler), each with status 5 and no destructor run; execfail or execbad (an exec
 * that fails: no such file, or ENOEXEC; then 16 MiB more kept at site_after); or fork
 * (the child reports whether a profile runs in it, allocates, and exits). Prints
 * "ran" first, so a test can tell it started. */
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void *kept[4096], *after[4096];

/* The names of this process's threads, on one line. */
static void print_threads(const char *when)
{
    printf("%s:", when);
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[300], name[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fgets(name, sizeof name, f)) name[strcspn(name, "\n")] = 0;
        if (f) fclose(f);
        printf(" %s", name);
    }
    if (d) closedir(d);
    printf("\n");
    fflush(stdout);
}

static void exit_from_handler(int sig)
{
    (void)sig;
    _exit(5);
}

static void *idle(void *arg)
{
    return arg;
}

/* Allocation at every size class a ring of 1024 blocks sees, forever. */
__attribute__((noinline)) static void churn(void)
{
    static void *ring[1024];
    unsigned x = 12345;
    for (unsigned long i = 0;; i++) {
        x = x * 1103515245u + 12345u;
        free(ring[i & 1023]);
        ring[i & 1023] = malloc(16 + (x >> 16) % 4096);
        if (i == 100000) {
            printf("churning\n");
            fflush(stdout);
        }
    }
}

__attribute__((noinline)) void *site_after(void)
{
    void *p = malloc(4096);
    __asm__ volatile("" ::: "memory");
    return p;
}

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
    if (!strcmp(mode, "execfail") || !strcmp(mode, "execbad")) {
        char bad[64] = "/nonexistent/kestrel-no-such-program";
        if (!strcmp(mode, "execbad")) { /* executable, but no program: ENOEXEC */
            snprintf(bad, sizeof bad, "/tmp/kestrel-noexec.%d", (int)getpid());
            FILE *f = fopen(bad, "w");
            if (f) fputs("\177ELF not a program\n", f), fclose(f);
            chmod(bad, 0755);
        }
        execl(bad, bad, (char *)NULL);
        if (!strcmp(mode, "execbad")) unlink(bad);
        for (int i = 0; i < 4096; i++)
            after[i] = site_after();
        return 0;
    }
    static const struct {
        const char *mode;
        int sig;
    } sigs[] = {{"sigterm", SIGTERM}, {"sigint", SIGINT}, {"sighup", SIGHUP}, {"sigabrt", SIGABRT}};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        if (strcmp(mode, sigs[i].mode)) continue;
        print_threads("threads");
        if (sigs[i].sig == SIGABRT) abort();
        kill(getpid(), sigs[i].sig);
        return 3;
    }
    if (!strcmp(mode, "thread-sigterm")) {
        print_threads("before");
        pthread_t t;
        pthread_create(&t, NULL, idle, NULL);
        pthread_join(t, NULL);
        print_threads("after");
        kill(getpid(), SIGTERM);
        return 3;
    }
    if (!strcmp(mode, "churn")) churn();
    /* ends that run no destructor: the profile must be written all the same */
    if (!strcmp(mode, "_exit")) _exit(5);
    if (!strcmp(mode, "_Exit")) _Exit(5);
    if (!strcmp(mode, "quick_exit")) quick_exit(5);
    if (!strcmp(mode, "exit_group")) syscall(SYS_exit_group, 5);
    if (!strcmp(mode, "handler_exit")) {
        signal(SIGTERM, exit_from_handler);
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
