/* Process life as a profiler client sees it: one flush per process image at exit,
 * before exec (and again in the new image), before SIGTERM/SIGINT/SIGHUP/SIGABRT and a
 * fault (SIGSEGV from the kernel) end the process — which then ends by the same
 * signal — never when the program handles the signal itself, and a fresh start in a
 * fork child. A fault while a lock of the runtime is held ends the process at once,
 * unwritten (it cannot be deferred: the faulting instruction would run again).
 *
 * A client whose flush may run in the handler (flush_in_handler, as the heap
 * profiler's) gets no thread of the runtime while the process has one thread: each
 * fatal signal's flush then runs on the signalled thread itself. A signal that
 * arrives while the thread holds a lock of the runtime (lifecycle_hold) is deferred:
 * the process runs on until lifecycle_release, then flushes and ends by the signal.
 *
 * Run without arguments it is the test: it runs itself in each scenario and checks
 * the exit status and the marker files the client wrote (<dir>/<pid>.<gen>.<event>). */
#include "check.h"
#include "runtime/lifecycle.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *dir;

static void mark(enum lifecycle_event ev)
{
    static const char *names[] = {"exit", "exec", "signal"};
    char p[512];
    snprintf(p, sizeof(p), "%s/%d.%u.%s", dir, lifecycle_pid(), lifecycle_image_generation(),
             names[ev]);
    int fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd >= 0) close(fd);
}
static void forked(void) {}
static const struct lifecycle_client client = {
    .name = "test", .flush = mark, .after_fork_child = forked};
static const struct lifecycle_client client_in_handler = {
    .name = "test", .flush = mark, .after_fork_child = forked, .flush_in_handler = 1};

/* Runs this program again with (dir, mode). Under an emulator (tests/arch: qemu-user
 * without binfmt_misc, KESTREL_TEST_QEMU and KESTREL_TEST_SYSROOT set) the kernel
 * cannot run it itself: the emulator runs it. */
static void self_exec(const char *d, const char *mode)
{
    const char *qemu = getenv("KESTREL_TEST_QEMU"), *root = getenv("KESTREL_TEST_SYSROOT");
    char self[1024];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (qemu && root && n > 0) {
        self[n] = 0;
        execl(qemu, qemu, "-L", root, self, d, mode, (char *)NULL);
    }
    execl("/proc/self/exe", "x", d, mode, (char *)NULL);
}

/* Threads of this process, from /proc/self/task. */
static int threads(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    int n = -1;
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, "Threads:", 8)) n = atoi(line + 8);
    if (f) fclose(f);
    return n;
}

/* A null pointer the compiler cannot see through: writing it faults. */
static int *volatile nowhere;

static void on_term(int sig)
{
    (void)sig;
    _exit(42);
}

/* The modes of the in-handler client: <signal>1 ends by that signal with one thread;
 * "held" raises SIGTERM while holding, proves it is still running (a marker), then
 * releases. */
static int child_in_handler(const char *mode)
{
    int before = threads(); /* 1, or the emulator's own threads too (qemu-user's) */
    lifecycle_register(&client_in_handler);
    if (threads() != before) return 96; /* no thread of the runtime's */
    if (!strcmp(mode, "term1")) kill(getpid(), SIGTERM);
    if (!strcmp(mode, "int1")) raise(SIGINT);
    if (!strcmp(mode, "hup1")) raise(SIGHUP);
    if (!strcmp(mode, "abort1")) abort();
    if (!strcmp(mode, "segv1")) *nowhere = 1;
    if (!strcmp(mode, "heldsegv")) {
        lifecycle_hold();
        *nowhere = 1;
        lifecycle_release();
        return 93;
    }
    if (!strcmp(mode, "held")) {
        lifecycle_hold();
        lifecycle_hold(); /* nested: only the outermost release acts */
        raise(SIGTERM);
        char p[512];
        snprintf(p, sizeof(p), "%s/%d.0.after-raise", dir, lifecycle_pid());
        int fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (fd >= 0) close(fd);
        lifecycle_release();
        snprintf(p, sizeof(p), "%s/%d.0.after-inner-release", dir, lifecycle_pid());
        fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (fd >= 0) close(fd);
        lifecycle_release();
        return 95; /* not reached: the release ends the process */
    }
    return 94;
}

static int child_main(const char *mode)
{
    size_t len = strlen(mode);
    if (!strncmp(mode, "held", 4) || (len && mode[len - 1] == '1'))
        return child_in_handler(mode);
    lifecycle_register(&client);
    if (!strcmp(mode, "exit")) return 3;
    if (!strcmp(mode, "exec")) {
        self_exec(dir, "exit");
        return 99;
    }
    if (!strcmp(mode, "term")) kill(getpid(), SIGTERM);
    if (!strcmp(mode, "int")) raise(SIGINT);
    if (!strcmp(mode, "hup")) raise(SIGHUP);
    if (!strcmp(mode, "abort")) abort();
    if (!strcmp(mode, "segv")) *nowhere = 1;
    if (!strcmp(mode, "own")) { /* the program's handler decides */
        signal(SIGTERM, on_term);
        raise(SIGTERM);
    }
    if (!strcmp(mode, "query")) { /* the program sees the default disposition */
        struct sigaction sa;
        sigaction(SIGTERM, NULL, &sa);
        return sa.sa_handler == SIG_DFL ? 5 : 6;
    }
    if (!strcmp(mode, "fork")) {
        pid_t c = fork();
        if (c == 0) exit(7);
        int st;
        waitpid(c, &st, 0);
        printf("%d\n", c);
        return WIFEXITED(st) && WEXITSTATUS(st) == 7 ? 0 : 1;
    }
    return 98;
}

static int exists(const char *fmt, int pid, unsigned gen, const char *ev)
{
    char p[512];
    struct stat st;
    snprintf(p, sizeof(p), fmt, dir, pid, gen, ev);
    return stat(p, &st) == 0;
}

/* Runs one scenario; returns the wait status and the child's pid. */
static int run(const char *mode, pid_t *pid)
{
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_CORE, &none); /* the faults leave no core file */
        self_exec(dir, mode);
        _exit(127);
    }
    int st;
    waitpid(c, &st, 0);
    *pid = c;
    return st;
}

int main(int argc, char **argv)
{
    if (argc == 3) {
        dir = argv[1];
        return child_main(argv[2]);
    }
    char tmpl[] = "/tmp/kestrel-lifecycle-XXXXXX";
    dir = mkdtemp(tmpl);
    const char *F = "%s/%d.%u.%s";
    pid_t p;
    int st;

    st = run("exit", &p);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3);
    CHECK(exists(F, p, 0, "exit"));
    CHECK(!exists(F, p, 0, "signal"));

    st = run("exec", &p);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3);
    CHECK(exists(F, p, 0, "exec"));
    CHECK(exists(F, p, 1, "exit")); /* the new image is generation 1 */

    /* each signal with the runtime's flushing thread, then (mode suffix "1") with one
     * thread and the flush in the handler */
    static const struct {
        const char *mode;
        int sig;
    } sigs[] = {{"term", SIGTERM}, {"int", SIGINT},    {"hup", SIGHUP},
                {"abort", SIGABRT}, {"segv", SIGSEGV}};
    for (int in_handler = 0; in_handler < 2; in_handler++) {
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
            char mode[16];
            snprintf(mode, sizeof(mode), "%s%s", sigs[i].mode, in_handler ? "1" : "");
            st = run(mode, &p);
            CHECKF(WIFSIGNALED(st) && WTERMSIG(st) == sigs[i].sig, "%s: status %#x", mode, st);
            CHECKF(exists(F, p, 0, "signal"), "%s", mode);
            CHECKF(!exists(F, p, 0, "exit"), "%s", mode);
        }
    }

    /* deferred while held: still running after the raise and after the inner release,
     * then the flush and SIGTERM at the outer release */
    st = run("held", &p);
    CHECKF(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "held: status %#x", st);
    CHECK(exists(F, p, 0, "after-raise"));
    CHECK(exists(F, p, 0, "after-inner-release"));
    CHECK(exists(F, p, 0, "signal"));

    /* a fault while held: the same death, at once and without a flush */
    st = run("heldsegv", &p);
    CHECKF(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "heldsegv: status %#x", st);
    CHECK(!exists(F, p, 0, "signal"));

    st = run("own", &p);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 42);
    /* The program's handler decides: no fatal-signal flush, and the _exit it calls
     * writes the files. */
    CHECK(!exists(F, p, 0, "signal") && exists(F, p, 0, "exit"));

    st = run("query", &p);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 5);

    /* fork: the child writes its own file under its own pid. Not under qemu-user
     * (7.2): the child of a threaded program that starts a thread aborts the emulator
     * itself ("cpu_exec: assertion failed: (cpu == current_cpu)"), kestrel or not. */
    char cmd[600];
    if (!getenv("KESTREL_TEST_QEMU")) {
        char out[64] = "";
        snprintf(cmd, sizeof(cmd), "/proc/%d/exe %s fork", getpid(), dir);
        FILE *f = popen(cmd, "r");
        int cpid = 0;
        if (f && fgets(out, sizeof(out), f)) cpid = atoi(out);
        int pst = f ? pclose(f) : -1;
        CHECK(pst == 0 && cpid > 0);
        CHECK(cpid > 0 && exists(F, cpid, 0, "exit"));
    } else {
        fprintf(stderr, "fork: not checked under qemu-user (it aborts a threaded fork child)\n");
    }

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_exit();
}
