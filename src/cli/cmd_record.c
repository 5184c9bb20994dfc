/* kestrel record: runs a program under the runtime (LD_PRELOAD), passes its exit
 * status through, then symbolizes, writes every export of FORMATS.md §3 and prints
 * the report. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach/attach.h"
#include "attach/proc.h"
#include "cli/cli.h"
#include "cli/commands.h"

static const char usage[] =
    "usage: kestrel record [-F HZ] [--engine auto|perf|signal] [--unwind auto|cfi|fp]\n"
    "                      [--heap[=PATH]] [--heap-interval=BYTES] [-o STEM]\n"
    "                      [--report=PATH] [--binary PATH] [--state STATE]\n"
    "                      [--process PID|NAME] [--http=ADDR] [--wide] -- PROGRAM [ARGS]\n"
    "       kestrel record -p PID[,PID...] | -a | --attach [--children] [--duration SECONDS]\n"
    "                      [-F HZ] [--unwind auto|cfi|fp] [-o STEM] [--report=PATH]\n"
    "                      [--process PID|NAME] [--state STATE] [--wide] [-- PROGRAM [ARGS]]\n"
    "\n"
    "Runs PROGRAM with the kestrel runtime preloaded, passes its exit status through,\n"
    "then writes STEM.speedscope.json, STEM.cpuprofile, STEM.folded, STEM.profile.json,\n"
    "STEM.pb.gz and STEM.html, and prints the report.\n"
    "\n"
    "PROGRAM's stdin, stdout and stderr are its own, untouched: the report goes to the\n"
    "terminal (/dev/tty) when there is one, else to stderr, or to --report's file;\n"
    "kestrel's messages go to stderr, each starting with \"kestrel:\"; so do the\n"
    "runtime's, which it writes to STEM.raw/kestrel.messages, never to PROGRAM's files.\n"
    "kestrel exits with PROGRAM's status (or its signal), whatever became of the profile.\n"
    "Every process PROGRAM starts inherits the runtime (fork, exec, posix_spawn, shells,\n"
    "build tools) and is profiled too, unless it clears its environment; each writes\n"
    "its raw profile into the folder STEM.raw/ (`kestrel report STEM.raw` reads them\n"
    "again). The report lists the processes (pid, parent, program, CPU, samples) and\n"
    "ranks the functions of the whole tree, naming the process of each; the exports\n"
    "hold every process, each as its own root. An exec chain of one pid is one process\n"
    "whose program changed.\n"
    "\n"
    "  -F HZ                  CPU sampling rate (the runtime clamps it to 10..10000;\n"
    "                         default 997)\n"
    "  --engine ENGINE        auto (default: perf where allowed, else signal), perf, signal\n"
    "  --unwind MODE          how stacks are walked: auto (default: the images' CFI, the\n"
    "                         frame pointer where CFI cannot take a step), cfi (CFI\n"
    "                         only; frame pointers only in images without CFI), fp\n"
    "                         (frame pointers only)\n"
    "  --heap[=PATH]          also profile the heap; the runtime writes PATH (default\n"
    "                         STEM.raw/<pid>.heap.pb.gz) and kestrel the heap exports\n"
    "                         STEM.heap.* and report\n"
    "  --heap-interval=BYTES  mean bytes between heap samples (needs --heap)\n"
    "  -o STEM                where the exports go (default: PROGRAM's base name)\n"
    "  --report=PATH          write the report to PATH instead of the terminal\n"
    "  --process PID|NAME     the report and the exports of that process of the tree\n"
    "                         alone (a pid, or the name a program was invoked by)\n"
    "  --binary PATH          the program's file if it is not where it ran from\n"
    "  --state STATE          which samples the report's table and the flame-graph\n"
    "                         exports (folded, speedscope, cpuprofile, profile.json)\n"
    "                         count: running (on-CPU, the default), waiting (off-CPU)\n"
    "                         or all (each waiting sample marked); pprof and the\n"
    "                         viewer hold every sample with its state\n"
    "  --http=ADDR            also serve /debug/pprof/ (Go's net/http/pprof endpoints)\n"
    "                         from the program while it runs, at ADDR (HOST:PORT,\n"
    "                         loopback; docs/continuous.md)\n"
    "  --wide                 the report's function names whole, however wide\n"
    "\n"
    "Attached mode (sampled from outside with perf events; nothing enters the program):\n"
    "  -p PID[,PID...]        sample these running processes, every thread (threads\n"
    "                         made meanwhile too), until --duration ends, ^C, or they\n"
    "                         end; STEM defaults to the first one's name\n"
    "  -a                     sample every process of the machine (root or CAP_PERFMON);\n"
    "                         needs --duration or ^C; one process per root in the report\n"
    "  --attach               start PROGRAM and sample it from outside: static and\n"
    "                         set-user-ID programs, which preloading cannot enter\n"
    "  --children             also the processes the targets start from then on\n"
    "  --duration SECONDS     how long to sample (default: until the targets end, or ^C)\n"
    "  -h, --help             this text\n";

/* ------------------------------------------------------------------ options */

static int record_attached_parse(const char *cmd, int argc, struct record_options *o);

static int positive_int(const char *s)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    return !errno && end != s && !*end && v > 0 && v <= INT_MAX;
}

int record_parse(int argc, char **argv, const char *cmd, struct record_options *o)
{
    static const struct option longopts[] = {{"engine", required_argument, 0, 'e'},
                                             {"unwind", required_argument, 0, 'u'},
                                             {"heap", optional_argument, 0, 'H'},
                                             {"heap-interval", required_argument, 0, 'i'},
                                             {"output", required_argument, 0, 'o'},
                                             {"binary", required_argument, 0, 'b'},
                                             {"state", required_argument, 0, 's'},
                                             {"http", required_argument, 0, 'W'},
                                             {"wide", no_argument, 0, 'w'},
                                             {"report", required_argument, 0, 'r'},
                                             {"process", required_argument, 0, 'P'},
                                             {"attach", no_argument, 0, 'A'},
                                             {"children", no_argument, 0, 'C'},
                                             {"duration", required_argument, 0, 'D'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+hF:o:p:a", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            fputs(usage, stdout);
            return 0;
        case 'F':
            o->hz = optarg;
            break;
        case 'e':
            o->engine = optarg;
            break;
        case 'u':
            o->unwind = optarg;
            break;
        case 'H':
            o->heap = 1, o->heap_path = optarg;
            break;
        case 'i':
            o->heap_interval = optarg;
            break;
        case 'o':
            o->stem = optarg;
            break;
        case 'b':
            o->binary = optarg;
            break;
        case 's':
            o->state = optarg;
            break;
        case 'W':
            o->http = optarg;
            break;
        case 'r':
            o->report = optarg;
            break;
        case 'w':
            o->wide = 1;
            break;
        case 'P':
            o->process = optarg;
            break;
        case 'p':
            o->pids = optarg;
            break;
        case 'a':
            o->all = 1;
            break;
        case 'A':
            o->attach = 1;
            break;
        case 'C':
            o->children = 1;
            break;
        case 'D':
            o->duration = optarg;
            break;
        default:
            cli_usage_error(cmd, "unknown option or missing value: %s", argv[optind - 1]);
            return -1;
        }
    }
    int state;
    if (cli_parse_state(o->state, &state))
        return cli_usage_error(cmd, "--state is running, waiting or all, not \"%s\"", o->state), -1;
    if (o->hz && !positive_int(o->hz))
        return cli_usage_error(cmd, "-F takes a rate in Hz, not \"%s\"", o->hz), -1;
    if (o->engine && strcmp(o->engine, "auto") && strcmp(o->engine, "perf") &&
        strcmp(o->engine, "signal"))
        return cli_usage_error(cmd, "--engine is auto, perf or signal, not \"%s\"", o->engine), -1;
    if (o->unwind && strcmp(o->unwind, "auto") && strcmp(o->unwind, "cfi") &&
        strcmp(o->unwind, "fp"))
        return cli_usage_error(cmd, "--unwind is auto, cfi or fp, not \"%s\"", o->unwind), -1;
    if (o->heap_interval && !o->heap)
        return cli_usage_error(cmd, "--heap-interval needs --heap"), -1;
    if (o->heap_interval && !positive_int(o->heap_interval))
        return cli_usage_error(cmd, "--heap-interval takes bytes, not \"%s\"", o->heap_interval),
               -1;
    if (o->heap_interval && strtoll(o->heap_interval, NULL, 10) < 65536)
        return cli_usage_error(cmd, "--heap-interval is at least 65536 bytes, not \"%s\"",
                               o->heap_interval),
               -1;
    if (o->heap_path && !*o->heap_path) return cli_usage_error(cmd, "--heap= needs a path"), -1;
    if (o->http && !*o->http) return cli_usage_error(cmd, "--http= needs HOST:PORT"), -1;
    if (o->report && !*o->report) return cli_usage_error(cmd, "--report= needs a path"), -1;
    int attached = record_attached_parse(cmd, argc, o);
    if (attached < 0) return -1;
    if (attached && !o->attach) return argc;
    if (optind >= argc) return cli_usage_error(cmd, "no PROGRAM to run"), -1;
    return optind;
}

/* ------------------------------------------------------------------ running */

/* <directory of this executable>/../lib/libkestrel.so: build/ and an installed
 * prefix have the same layout. */
static char *runtime_path(void)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return NULL;
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (!slash) return NULL;
    *slash = 0;
    size_t len = strlen(self) + 32;
    char *lib = malloc(len);
    if (lib) snprintf(lib, len, "%s/../lib/libkestrel.so", self);
    return lib;
}

static char *cat(const char *a, const char *b)
{
    size_t len = strlen(a) + strlen(b) + 1;
    char *s = malloc(len);
    if (s) snprintf(s, len, "%s%s", a, b);
    return s;
}

/* path made absolute against the current directory: the runtime gets absolute paths,
 * so a program that changes directory still writes where it was asked to. */
static char *absolute(const char *path)
{
    if (path[0] == '/') return strdup(path);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return NULL;
    size_t len = strlen(cwd) + strlen(path) + 2;
    char *s = malloc(len);
    if (s) snprintf(s, len, "%s/%s", cwd, path);
    return s;
}

/* STEM.raw/, the folder of the runtime's files: made, or emptied of the files an
 * earlier run of the same stem left there (kestrel's own names: <pid>.<...>), so that
 * the report is of this run alone. */
static int raw_folder(const char *dir)
{
    if (mkdir(dir, 0777) == 0) return 0;
    int e = errno;
    struct stat st;
    if (e != EEXIST || stat(dir, &st) || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "kestrel: %s: %s\n", dir, strerror(e == EEXIST ? ENOTDIR : e));
        return -1;
    }
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "kestrel: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    struct dirent *de;
    while ((de = readdir(d)))
        if (de->d_name[0] >= '0' && de->d_name[0] <= '9') unlinkat(dirfd(d), de->d_name, 0);
    closedir(d);
    return 0;
}

/* kestrel.messages, empty, for the runtime's lines. Run as root, a program may switch
 * its processes to other users (a server's workers drop to www-data): the folder and
 * the file are then theirs to write too, the folder sticky as /tmp is. */
static int messages_file(const char *dir, const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        fprintf(stderr, "kestrel: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (geteuid() == 0) {
        fchmod(fd, 0666);
        chmod(dir, 01777);
    }
    close(fd);
    return 0;
}

/* The signals kestrel takes while the program runs: ^C and ^\ ignored, SIGTERM and
 * SIGHUP forwarded. */
static const int passed[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};
#define N_PASSED (sizeof passed / sizeof passed[0])

/* In the child: sets the runtime's environment, puts back the signal dispositions and
 * mask kestrel had (as exec leaves them), and execs the program. If the exec fails, its errno goes to the
 * parent through `err` (closed by a successful exec), which says why in one line. */
static void child(const struct record_options *o, char **argv, const char *lib, const char *raw,
                  const char *heap, const char *messages, int err, const struct sigaction saved[],
                  const sigset_t *mask)
{
    const char *old = getenv("LD_PRELOAD");
    char *preload = old && *old ? cat(lib, ":") : NULL;
    char *full = preload ? cat(preload, old) : NULL;
    setenv("LD_PRELOAD", full ? full : lib, 1);
    setenv("KESTREL_PROFILE", raw, 1);
    if (o->hz) setenv("KESTREL_PROFILE_HZ", o->hz, 1);
    if (o->engine) setenv("KESTREL_PROFILE_ENGINE", o->engine, 1);
    if (o->unwind) setenv("KESTREL_PROFILE_UNWIND", o->unwind, 1);
    if (heap) setenv("KESTREL_HEAP", heap, 1);
    if (o->heap_interval) setenv("KESTREL_HEAP_INTERVAL", o->heap_interval, 1);
    if (o->http) setenv("KESTREL_HTTP", o->http, 1);
    if (messages) setenv("KESTREL_MESSAGES", messages, 1);
    /* What exec would make of them: a handler becomes the default, an ignored signal
     * stays ignored; so a signal pending since the fork acts on the program. */
    for (size_t i = 0; i < N_PASSED; i++) {
        struct sigaction a = {.sa_handler = saved[i].sa_handler == SIG_IGN ? SIG_IGN : SIG_DFL};
        sigaction(passed[i], &a, NULL);
    }
    sigprocmask(SIG_SETMASK, mask, NULL);
    execvp(argv[0], argv);
    int e = errno;
    (void)!write(err, &e, sizeof e);
    _exit(e == ENOENT ? 127 : 126);
}

static volatile sig_atomic_t child_pid;

/* The runtime's lines (rtsay.h), from the file KESTREL_MESSAGES names to kestrel's own
 * stderr, as they come: the runtime never writes into the program's descriptors. */
static void relay(int fd)
{
    char buf[4096];
    ssize_t n;
    while (fd >= 0 && (n = read(fd, buf, sizeof buf)) > 0)
        fwrite(buf, 1, (size_t)n, stderr);
    fflush(stderr);
}

/* Waits for the program, relaying the runtime's lines meanwhile (a pidfd wakes kestrel
 * when the program ends; without one, they come at the end). */
static void wait_program(pid_t pid, int *status, int messages)
{
    int pfd = messages >= 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
    for (;;) {
        pid_t w = waitpid(pid, status, pfd >= 0 ? WNOHANG : 0);
        if (w == pid || (w < 0 && errno != EINTR)) break;
        relay(messages);
        if (pfd >= 0) {
            struct pollfd p = {.fd = pfd, .events = POLLIN};
            poll(&p, 1, 200);
        }
    }
    if (pfd >= 0) close(pfd);
    relay(messages);
}

/* A SIGTERM or SIGHUP sent to kestrel is meant for the program. */
static void forward(int sig)
{
    if (child_pid > 0) kill((pid_t)child_pid, sig);
}

/* Runs the program; returns its wait status, or -1 when it could not be started
 * (*exec_errno then says why, when its exec failed). */
static int run_child(const struct record_options *o, char **argv, const char *lib, const char *raw,
                     const char *heap, const char *messages, pid_t *pid, int *exec_errno)
{
    int err[2];
    *exec_errno = 0;
    if (pipe2(err, O_CLOEXEC)) {
        fprintf(stderr, "kestrel: pipe: %s\n", strerror(errno));
        return -1;
    }
    /* Like a shell, let ^C and ^\ reach the program alone: kestrel lives on to write
     * the profile of a program the user interrupted. The signals stay blocked from
     * before the fork until child_pid names the program, so that a SIGTERM sent to
     * kestrel as it starts the program is passed on, not lost; the child puts back the
     * dispositions and mask it came with before its exec. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, fwd = {.sa_handler = forward}, old[N_PASSED];
    sigset_t block, mask;
    sigemptyset(&block);
    for (size_t i = 0; i < N_PASSED; i++) sigaddset(&block, passed[i]);
    sigprocmask(SIG_BLOCK, &block, &mask);
    for (size_t i = 0; i < N_PASSED; i++)
        sigaction(passed[i], passed[i] == SIGINT || passed[i] == SIGQUIT ? &ign : &fwd, &old[i]);
    fflush(NULL);
    *pid = fork();
    if (*pid == 0) {
        close(err[0]);
        child(o, argv, lib, raw, heap, messages, err[1], old, &mask);
    }
    int status = -1;
    if (*pid < 0) {
        fprintf(stderr, "kestrel: fork: %s\n", strerror(errno));
        close(err[0]);
        close(err[1]);
    } else {
        child_pid = *pid;
        sigprocmask(SIG_SETMASK, &mask, NULL);
        close(err[1]);
        ssize_t got;
        while ((got = read(err[0], exec_errno, sizeof *exec_errno)) < 0 && errno == EINTR) {
        }
        close(err[0]);
        int exec_failed = got == (ssize_t)sizeof *exec_errno;
        if (!exec_failed) *exec_errno = 0;
        int mfd = messages ? open(messages, O_RDONLY | O_CLOEXEC) : -1;
        wait_program(*pid, &status, mfd);
        if (mfd >= 0) close(mfd);
        if (exec_failed) status = -1;
    }
    child_pid = 0;
    for (size_t i = 0; i < N_PASSED; i++) sigaction(passed[i], &old[i], NULL);
    return status;
}

/* Ends kestrel the way the program ended: its exit code, or the same signal. */
static int pass_status(int status)
{
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    int sig = WTERMSIG(status);
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none); /* the core would be kestrel's, not the program's */
    cli_raise_default(sig);
    return 128 + sig; /* a signal whose default is to be ignored */
}

/* Where the report goes: --report's file, else the terminal, else stderr; never the
 * program's stdout, which may be a pipe or a file it writes. Opened after the run,
 * so the program never inherits it. */
static FILE *report_open(const struct record_options *o, const char **name)
{
    if (o->report) {
        *name = o->report;
        FILE *f = fopen(o->report, "w");
        if (!f) fprintf(stderr, "kestrel: %s: %s\n", o->report, strerror(errno));
        return f;
    }
    int fd = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (f) {
        *name = "/dev/tty";
        return f;
    }
    if (fd >= 0) close(fd);
    *name = "stderr";
    return stderr;
}

/* Reads, symbolizes, exports and reports one profile the runtime wrote, or the tree's
 * (a STEM.raw folder: its CPU profiles, or with heap its heap profiles). */
static int analyse(const char *path, int heap, const char *stem, const struct record_options *o,
                   FILE *out, const char *out_name)
{
    int state;
    cli_parse_state(o->state, &state); /* checked by record_parse */
    struct cli_load_options lo = {
        .binary = o->binary, .process = o->process, .state = state, .heap = heap};
    struct profile *p;
    struct summary *s;
    if (cli_load(path, &lo, &p, &s)) return -1;
    int failed = cli_export_all(p, s, state, stem);
    if (!failed) fprintf(stderr, "kestrel: wrote %s.*\n", stem);
    failed += cli_report(p, s, state, o->wide, out, out_name) ? 1 : 0;
    summary_free(s);
    profile_free(p);
    return failed ? -1 : 0;
}

/* Everything record_run names: the exports' stem as given, the runtime's paths
 * absolute. */
struct record_paths {
    char *raw_dir;      /* <absolute stem>.raw */
    char *raw_pattern;  /* <raw_dir>/%p.raw.json */
    char *heap_pattern; /* --heap=PATH made absolute, or <raw_dir>/%p.heap.pb.gz; NULL */
    char *heap_stem;    /* <stem>.heap */
    char *messages;     /* <raw_dir>/kestrel.messages: the runtime's lines (rtsay.h) */
};

static void paths_free(struct record_paths *r)
{
    free(r->raw_dir);
    free(r->raw_pattern);
    free(r->heap_pattern);
    free(r->heap_stem);
    free(r->messages);
}

static int paths_make(const struct record_options *o, const char *stem, struct record_paths *r)
{
    char *abs = absolute(stem);
    r->raw_dir = abs ? cat(abs, ".raw") : NULL;
    free(abs);
    r->raw_pattern = r->raw_dir ? cat(r->raw_dir, "/%p.raw.json") : NULL;
    r->messages = r->raw_dir ? cat(r->raw_dir, "/kestrel.messages") : NULL;
    r->heap_stem = cat(stem, ".heap");
    if (o->heap)
        r->heap_pattern = o->heap_path ? absolute(o->heap_path)
                          : r->raw_dir ? cat(r->raw_dir, "/%p.heap.pb.gz")
                                       : NULL;
    if (!r->raw_pattern || !r->heap_stem || !r->messages || (o->heap && !r->heap_pattern)) {
        fprintf(stderr, "kestrel: %s: %s\n", stem, strerror(errno ? errno : ENOMEM));
        return -1;
    }
    return 0;
}

/* The file a pattern names for one pid ("%p" replaced). */
static char *expand_pid(const char *s, pid_t pid)
{
    size_t len = strlen(s) * 8 + 32, n = 0;
    char *out = malloc(len);
    if (!out) return NULL;
    for (; *s; s++) {
        if (s[0] == '%' && s[1] == 'p') {
            n += (size_t)snprintf(out + n, len - n, "%d", (int)pid);
            s++;
        } else {
            out[n++] = *s;
        }
    }
    out[n] = 0;
    return out;
}

/* Whether any process of the tree left a raw profile in dir. */
static int tree_has_profiles(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *de;
    int found = 0;
    while (!found && (de = readdir(d))) {
        const char *raw = strstr(de->d_name, ".raw.json");
        found = de->d_name[0] >= '0' && de->d_name[0] <= '9' && raw &&
                (!raw[9] || !strncmp(raw + 9, ".exec", 5)) && !strstr(de->d_name, ".tmp.");
    }
    closedir(d);
    return found;
}

/* A process of the tree that left no profile, from its note (<pid>.raw.json.noprofile:
 * the program's name, a tab, the reason). */
struct record_note {
    long long pid;
    char *text; /* "name\treason" */
};

static int note_cmp(const void *a, const void *b)
{
    long long x = ((const struct record_note *)a)->pid, y = ((const struct record_note *)b)->pid;
    return x < y ? -1 : x > y;
}

#define RECORD_NOTES_SHOWN 50

/* Lists every process of the tree that left a note in dir, by pid: its name and why it
 * left no profile (a static or set-user-ID program a process exec'd). Returns how
 * many. */
static size_t record_list_unprofiled(const char *dir, FILE *out)
{
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d) return 0;
    struct record_note *notes = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t digits = strspn(de->d_name, "0123456789");
        if (!digits || strcmp(de->d_name + digits, ".raw.json.noprofile")) continue;
        char *path = cat(dir, "/"), *full = path ? cat(path, de->d_name) : NULL;
        free(path);
        FILE *f = full ? fopen(full, "r") : NULL;
        free(full);
        char line[1024] = "";
        if (f) {
            if (!fgets(line, sizeof line, f)) line[0] = 0;
            fclose(f);
        }
        line[strcspn(line, "\n")] = 0;
        if (!strchr(line, '\t')) continue; /* not one the runtime wrote whole */
        if (n == cap) {
            struct record_note *g = realloc(notes, (cap = cap ? 2 * cap : 8) * sizeof *g);
            if (!g) break;
            notes = g;
        }
        notes[n].pid = atoll(de->d_name);
        if (!(notes[n].text = strdup(line))) break;
        n++;
    }
    closedir(d);
    if (n) qsort(notes, n, sizeof *notes, note_cmp);
    if (n) fprintf(out, "\nprocesses that left no profile (%zu):\n", n);
    for (size_t i = 0; i < n; i++) {
        char *tab = strchr(notes[i].text, '\t');
        *tab = 0;
        if (i < RECORD_NOTES_SHOWN)
            fprintf(out, "  %s (pid %lld): %s\n", notes[i].text, notes[i].pid, tab + 1);
        free(notes[i].text);
    }
    if (n > RECORD_NOTES_SHOWN) fprintf(out, "  and %zu more\n", n - RECORD_NOTES_SHOWN);
    free(notes);
    return n;
}

/* Whether any process of the tree left a heap profile in dir. */
static int tree_has_heap(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *de;
    int found = 0;
    while (!found && (de = readdir(d))) {
        size_t digits = strspn(de->d_name, "0123456789");
        found = digits && !strcmp(de->d_name + digits, ".heap.pb.gz");
    }
    closedir(d);
    return found;
}

/* The descriptor limit the program started with (kestrel's own), when it is small
 * enough that a program may have used every one. */
static int low_nofile(rlim_t *n)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= 1024)
        return 0;
    *n = rl.rlim_cur;
    return 1;
}

/* After the run: every profile the runtime left, exported and reported. */
static int analyse_run(const struct record_options *o, const char *stem,
                       const struct record_paths *r, pid_t pid, int status, const char *argv0)
{
    int failed = 0;
    const char *out_name;
    FILE *out = NULL;
    /* The program's own file, or the last one its pid wrote before an exec. */
    char *raw = expand_pid(r->raw_pattern, pid);
    char *gen0 = raw ? cat(raw, ".exec0") : NULL;
    int own = raw && gen0 && (!access(raw, F_OK) || !access(gen0, F_OK));
    int any = own || tree_has_profiles(r->raw_dir);
    /* The heap: every process's file in STEM.raw/, summed as one tree (a compiler
     * driver's children allocate, not the driver); --heap=PATH's one file alone. */
    char *heap = r->heap_pattern ? expand_pid(r->heap_pattern, pid) : NULL;
    int tree = r->heap_pattern && !o->heap_path;
    int heap_any = heap && (!access(heap, F_OK) || (tree && tree_has_heap(r->raw_dir)));
    if (!own) {
        /* Said either way, in one line; a failure only when nothing at all is left to
         * report (a program that ends by _exit, as dash does, leaves its children's
         * profiles). */
        const char *why = any ? ", only its child processes did" : "";
        const char *where = raw ? raw : r->raw_dir;
        rlim_t nofile = 0;
        if (cli_static_program(argv0))
            fprintf(stderr,
                    "kestrel: %s: the program left no profile: %s is statically linked, and "
                    "preloading cannot reach a static program; `kestrel record --attach -- "
                    "PROGRAM` (or -p PID) samples it from outside\n",
                    where, argv0);
        else if (cli_setid_program(argv0))
            fprintf(stderr,
                    "kestrel: %s: the program left no profile: %s is set-user-ID or "
                    "set-group-ID, and the loader ignores preloading there; `kestrel record "
                    "--attach -- PROGRAM` (or -p PID) samples it from outside\n",
                    where, argv0);
        else if (WIFSIGNALED(status))
            fprintf(stderr, "kestrel: %s: the program left no profile (killed by SIG%s)%s\n",
                    where, sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?",
                    why);
        else if (low_nofile(&nofile))
            fprintf(stderr,
                    "kestrel: %s: the program left no profile%s; under a descriptor limit of "
                    "%llu (RLIMIT_NOFILE), a program that holds every descriptor when it ends "
                    "leaves none to write it\n",
                    where, why, (unsigned long long)nofile);
        else
            fprintf(stderr, "kestrel: %s: the program left no profile%s\n", where, why);
        failed = !any;
    }
    if (r->heap_pattern && !heap_any) {
        fprintf(stderr, "kestrel: %s: the program left no heap profile\n",
                heap ? heap : r->heap_pattern);
        failed = 1;
    }
    /* The report's file only when there is something to report. */
    if ((any || heap_any) && !(out = report_open(o, &out_name))) failed = 1;
    if (out && any && analyse(r->raw_dir, 0, stem, o, out, out_name)) failed = 1;
    free(raw);
    free(gen0);
    if (out && heap_any) {
        fputc('\n', out);
        if (analyse(tree ? r->raw_dir : heap, tree, r->heap_stem, o, out, out_name)) failed = 1;
    }
    free(heap);
    /* The processes that left none, where the report is, else on stderr. */
    record_list_unprofiled(r->raw_dir, out ? out : stderr);
    if (out && out != stderr && fclose(out)) {
        fprintf(stderr, "kestrel: %s: %s\n", out_name, strerror(errno));
        failed = 1;
    }
    return failed;
}

int record_program(const struct record_options *o, char **argv, int *status_out)
{
    *status_out = -1;
    char *lib = runtime_path();
    if (!lib || access(lib, R_OK)) {
        fprintf(stderr, "kestrel: %s: the runtime is missing (build it with make)\n",
                lib ? lib : "libkestrel.so");
        free(lib);
        return 1;
    }
    const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    const char *stem = o->stem ? o->stem : base;
    /* The runtime cannot say why it could not write its file: check the place first. */
    const char *slash = strrchr(stem, '/');
    char *dir = slash ? strndup(stem, (size_t)(slash - stem) + 1) : strdup(".");
    if (!dir || access(dir, W_OK)) {
        int e = dir ? errno : ENOMEM;
        if (e == ENOENT)
            fprintf(stderr, "kestrel: %s: directory %s does not exist\n", stem, dir);
        else
            fprintf(stderr, "kestrel: %s: %s\n", dir ? dir : stem, strerror(e));
        free(dir);
        free(lib);
        return 1;
    }
    free(dir);
    struct record_paths r = {0};
    pid_t pid = 0;
    int exec_errno = 0, status = -1;
    if (!paths_make(o, stem, &r) && !raw_folder(r.raw_dir) && !messages_file(r.raw_dir, r.messages))
        status = run_child(o, argv, lib, r.raw_pattern, r.heap_pattern, r.messages, &pid,
                           &exec_errno);
    free(lib);
    if (status == -1) {
        if (exec_errno) fprintf(stderr, "kestrel: %s: %s\n", argv[0], strerror(exec_errno));
        if (r.messages) unlink(r.messages);
        if (r.raw_dir) rmdir(r.raw_dir); /* made for this run and empty: nothing ran */
        paths_free(&r);
        return exec_errno == ENOENT ? 127 : exec_errno ? 126 : 1;
    }
    int failed = analyse_run(o, stem, &r, pid, status, argv[0]);
    /* A program that left nothing (static, set-user-ID) leaves no folder behind: the
     * messages file goes if the runtime wrote nothing there, then the folder if empty. */
    struct stat ms;
    if (r.messages && !stat(r.messages, &ms) && ms.st_size == 0 && r.raw_dir) {
        unlink(r.messages);
        if (rmdir(r.raw_dir) && errno == ENOTEMPTY) messages_file(r.raw_dir, r.messages);
    }
    paths_free(&r);
    *status_out = status;
    return failed;
}

/* kestrel ends as the program did, whatever became of its profile: what went wrong
 * with that was said on stderr. */
int record_exit(int status, int failed)
{
    (void)failed;
    return pass_status(status);
}

int record_run(const struct record_options *o, char **argv)
{
    int status;
    int rc = record_program(o, argv, &status);
    return status == -1 ? rc : record_exit(status, rc);
}

static int record_attached(const struct record_options *o, char **argv);

int cmd_record(int argc, char **argv)
{
    struct record_options o = {0};
    int first = record_parse(argc, argv, "record", &o);
    if (first <= 0) return first == 0 ? 0 : 2;
    if (o.pids || o.all || o.attach) return record_attached(&o, argv + first);
    return record_run(&o, argv + first);
}


/* ================================================================ attached mode
 * kestrel record -p PID / -a / --attach -- PROGRAM: the options, and a recording made
 * from outside (src/attach) whose raw files go through the same analysis as a run
 * under the runtime. */

static int record_attached_parse(const char *cmd, int argc, struct record_options *o)
{
    if (!o->pids && !o->all && !o->attach && !o->children && !o->duration) return 0;
    if (strcmp(cmd, "record"))
        return cli_usage_error(cmd, "-p, -a, --attach, --children and --duration are record's"),
               -1;
    if ((o->pids != NULL) + o->all + o->attach > 1)
        return cli_usage_error(cmd, "-p, -a and --attach go one at a time"), -1;
    if (!o->pids && !o->all && !o->attach)
        return cli_usage_error(cmd, "--children and --duration go with -p, -a or --attach"), -1;
    if (!o->attach && optind < argc)
        return cli_usage_error(cmd, "%s takes no PROGRAM (--attach -- PROGRAM starts one)",
                               o->all ? "-a" : "-p"),
               -1;
    if (o->attach && optind >= argc) return cli_usage_error(cmd, "--attach needs a PROGRAM"), -1;
    if (o->heap || o->http)
        return cli_usage_error(cmd, "%s needs the runtime inside the program: not with -p, -a or "
                                    "--attach",
                               o->heap ? "--heap" : "--http"),
               -1;
    if (o->engine && strcmp(o->engine, "perf"))
        return cli_usage_error(cmd, "-p, -a and --attach sample with perf events (--engine perf)"),
               -1;
    if (o->duration) {
        char *end;
        double d = strtod(o->duration, &end);
        if (end == o->duration || *end || !(d > 0) || d > 1e7)
            return cli_usage_error(cmd, "--duration takes seconds, not \"%s\"", o->duration), -1;
    }
    if (o->pids) {
        for (const char *p = o->pids;;) {
            char *end;
            errno = 0;
            long v = strtol(p, &end, 10);
            if (errno || end == p || v <= 0 || v > INT_MAX || (*end && *end != ','))
                return cli_usage_error(cmd, "-p takes PID[,PID...], not \"%s\"", o->pids), -1;
            if (!*end) break;
            p = end + 1;
        }
    }
    return 1;
}

static int record_attached(const struct record_options *o, char **argv)
{
    pid_t pids[256];
    size_t n = 0;
    for (const char *p = o->pids; p && *p && n < sizeof pids / sizeof *pids;) {
        char *end;
        pids[n++] = (pid_t)strtol(p, &end, 10);
        p = *end ? end + 1 : end;
    }
    for (size_t i = 0; i < n; i++)
        if (attach_check_pid(pids[i])) return 1;
    long hz = o->hz ? strtol(o->hz, NULL, 10) : 997;
    hz = hz < 10 ? 10 : hz > 10000 ? 10000 : hz; /* the runtime's bounds */
    char comm[64] = "";
    if (n) proc_comm(pids[0], pids[0], comm, sizeof comm);
    const char *base = o->attach ? (strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0])
                       : o->all  ? "all"
                       : *comm   ? comm
                                 : "attached";
    const char *stem = o->stem ? o->stem : base;
    const char *slash = strrchr(stem, '/');
    char *dir = slash ? strndup(stem, (size_t)(slash - stem) + 1) : strdup(".");
    if (!dir || access(dir, W_OK)) {
        fprintf(stderr, "kestrel: %s: %s\n", dir ? dir : stem, strerror(dir ? errno : ENOMEM));
        free(dir);
        return 1;
    }
    free(dir);
    struct record_paths r = {0};
    if (paths_make(o, stem, &r) || raw_folder(r.raw_dir)) {
        paths_free(&r);
        return 1;
    }
    struct attach_options ao = {.pids = pids,
                                .n_pids = n,
                                .all = o->all,
                                .children = o->children,
                                .duration = o->duration ? strtod(o->duration, NULL) : 0,
                                .hz = (unsigned)hz,
                                .mode = attach_unwind_mode(o->unwind),
                                .argv = o->attach ? argv : NULL,
                                .after_exec = o->attach && cli_setid_program(argv[0])};
    int status = -1;
    int failed = attach_record(&ao, r.raw_dir, &status);
    if (failed && !tree_has_profiles(r.raw_dir)) {
        /* Nothing recorded: no folder left behind (kestrel's own names only). */
        char *images = cat(r.raw_dir, "/images");
        if (images) rmdir(images);
        free(images);
        raw_folder(r.raw_dir);
        rmdir(r.raw_dir);
    }
    if (!failed) {
        const char *out_name;
        FILE *out = report_open(o, &out_name);
        failed = !out || analyse(r.raw_dir, 0, stem, o, out, out_name) ? 1 : 0;
        if (out && out != stderr && fclose(out)) {
            fprintf(stderr, "kestrel: %s: %s\n", out_name, strerror(errno));
            failed = 1;
        }
    }
    paths_free(&r);
    return o->attach && status != -1 ? record_exit(status, failed) : failed;
}
