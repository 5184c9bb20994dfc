/* Ways for a profiled process to end. Each mode burns CPU first (so there is
 * something to write), then:
 *   exit      returns 3 from main
 *   exec      execs itself in mode "exit" (the new image returns 3)
 *   execvp    the same through execvp
 *   term      kill(getpid(), SIGTERM)
 *   int       raise(SIGINT)
 *   hup       raise(SIGHUP)
 *   abort     abort()
 *   quit      raise(SIGQUIT)
 *   segv      writes through a null pointer (SIGSEGV from the kernel)
 *   fpe       divides by zero (SIGFPE from the kernel)
 *   pipe      writes to a pipe whose reader is closed (SIGPIPE)
 *   own       installs its own SIGTERM handler, raises SIGTERM, returns 9 once handled
 *   _exit, _Exit, quick_exit, exit_group (through syscall())   end with status 6 and no
 *             destructor run
 *   execfail  execl of a file that does not exist fails; burns again, returns 3
 *   execbad   execl of an executable file that is no program (ENOEXEC) fails; the same
 *   tree      a fork child execs this program in mode "exit", then posix_spawn runs it in
 *             mode "exit" too; prints "<child pid> <spawned pid>", burns, returns 0
 *   handler_exit   a SIGTERM handler of its own calls _exit(6); raises SIGTERM
 *   fork      two threads keep burning while the main thread forks 20 children (each
 *             burns and exits 4); returns 0 when every child exited 4
 * This program runs itself again by KESTREL_TEST_SELF where it is set: under qemu-user
 * (tests/arch) the kernel cannot run an aarch64 program, and the wrapper that started
 * this one under qemu says there how to start it again.
 */
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "burn.h"

extern char **environ;
static volatile sig_atomic_t got_term;
static volatile int stop_burning;
static volatile int prog_zero; /* 0, unknown to the compiler */

static void on_term(int sig)
{
    (void)sig;
    got_term = 1;
}

static void exit_from_handler(int sig)
{
    (void)sig;
    _exit(6);
}

static void *burner(void *arg)
{
    (void)arg;
    while (!stop_burning)
        burn_cpu_us(5000);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "exit";
    char *self = getenv("KESTREL_TEST_SELF") ? getenv("KESTREL_TEST_SELF") : argv[0];
    burn_cpu_us(150000);
    if (!strcmp(mode, "exit")) return 3;
    if (!strcmp(mode, "exec")) {
        execl(self, self, "exit", (char *)NULL);
        return 100;
    }
    if (!strcmp(mode, "execvp")) {
        char *args[] = {self, "exit", NULL};
        execvp(self, args);
        return 100;
    }
    if (!strcmp(mode, "execfail") || !strcmp(mode, "execbad")) {
        char bad[64] = "/nonexistent/kestrel-no-such-program";
        if (!strcmp(mode, "execbad")) {
            snprintf(bad, sizeof bad, "/tmp/kestrel-noexec.%d", (int)getpid());
            FILE *f = fopen(bad, "w");
            if (f) fputs("\177ELF not a program\n", f), fclose(f);
            chmod(bad, 0755);
        }
        execl(bad, bad, (char *)NULL);
        if (!strcmp(mode, "execbad")) unlink(bad);
        burn_cpu_us(150000);
        return 3;
    }
    if (!strcmp(mode, "tree")) {
        pid_t c = fork(), s = -1;
        if (c == 0) {
            execl(self, self, "exit", (char *)NULL);
            _exit(100);
        }
        waitpid(c, NULL, 0);
        char *args[] = {self, "exit", NULL};
        if (posix_spawn(&s, self, NULL, NULL, args, environ) == 0) waitpid(s, NULL, 0);
        printf("%d %d\n", (int)c, (int)s);
        burn_cpu_us(100000);
        return 0;
    }
    if (!strcmp(mode, "_exit")) _exit(6);
    if (!strcmp(mode, "_Exit")) _Exit(6);
    if (!strcmp(mode, "quick_exit")) quick_exit(6);
    if (!strcmp(mode, "exit_group")) syscall(SYS_exit_group, 6);
    if (!strcmp(mode, "handler_exit")) {
        signal(SIGTERM, exit_from_handler);
        raise(SIGTERM);
    }
    if (!strcmp(mode, "term")) kill(getpid(), SIGTERM);
    if (!strcmp(mode, "int")) raise(SIGINT);
    if (!strcmp(mode, "hup")) raise(SIGHUP);
    if (!strcmp(mode, "abort")) abort();
    if (!strcmp(mode, "quit")) raise(SIGQUIT);
    if (!strcmp(mode, "segv")) *(volatile int *)(uintptr_t)prog_zero = 1;
    if (!strcmp(mode, "fpe")) prog_sink = 1000 / prog_zero;
    if (!strcmp(mode, "pipe")) {
        int fd[2];
        if (pipe(fd) == 0 && close(fd[0]) == 0) (void)!write(fd[1], "x", 1);
    }
    if (!strcmp(mode, "own")) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_term;
        sigaction(SIGTERM, &sa, NULL);
        raise(SIGTERM);
        while (!got_term)
            ;
        return 9;
    }
    if (!strcmp(mode, "fork")) {
        pthread_t t[2];
        for (int i = 0; i < 2; i++)
            pthread_create(&t[i], NULL, burner, NULL);
        int good = 0;
        for (int k = 0; k < 20; k++) {
            pid_t c = fork();
            if (c == 0) {
                burn_cpu_us(30000);
                exit(4);
            }
            int st;
            if (c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 4) good++;
        }
        stop_burning = 1;
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        printf("%d\n", good);
        return good == 20 ? 0 : 1;
    }
    return 101;
}
