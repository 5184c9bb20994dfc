/* kestrel run: compiles one C, C++ or Rust file for profiling (optimised, with debug
 * info and frame pointers, the leaf's included, so every stack walks) into a temporary
 * directory and records it. A signal that ends kestrel meanwhile (^C, an editor's
 * Cancel) ends the compiler or the program and still removes that directory. */
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"

static const char usage[] =
    "usage: kestrel run [record options] FILE [ARGS]\n"
    "\n"
    "Compiles FILE into a temporary directory ($TMPDIR, else /tmp), then runs it as\n"
    "`kestrel record` does with ARGS (exports named after FILE unless -o says):\n"
    "  FILE.c                   $CC (default clang, else cc) -O2 -g -fno-omit-frame-pointer\n"
    "                           -mno-omit-leaf-frame-pointer -pthread $CFLAGS -lm\n"
    "  FILE.cc .cpp .cxx .C     $CXX (default clang++, else c++), the same flags, $CXXFLAGS\n"
    "  FILE.rs                  $RUSTC (default rustc) -C opt-level=2 -g\n"
    "                           -C force-frame-pointers=yes $RUSTFLAGS\n"
    "The record options (-F, --engine, --unwind, --heap, --heap-interval, -o, --report,\n"
    "--state, --process, --wide) are accepted; see kestrel record --help.\n";

/* One language: its file names, its compiler and the flags kestrel gives it. The
 * user's flags ($CFLAGS...) come after kestrel's own, so that they can override them
 * (-O1), as an editor's "extra compiler flags" setting needs. */
struct language {
    const char *suffix[5];  /* the file names it takes, NULL-terminated */
    const char *cc_env;     /* the variable that names the compiler */
    const char *cc;         /* the compiler when that variable is empty */
    const char *fallback;   /* tried when `cc` is missing; NULL: none */
    const char *flags_env;  /* the variable of the user's flags */
    const char *own[6];     /* kestrel's flags, NULL-terminated */
    const char *libs[2];    /* after the source, NULL-terminated */
};

/* clang unless $CC says otherwise: GCC 12 drops a leaf function's frame pointer
 * despite -mno-omit-leaf-frame-pointer, and samples in that leaf lose its caller. */
static const struct language languages[] = {
    {{".c"}, "CC", "clang", "cc", "CFLAGS",
     {"-O2", "-g", "-fno-omit-frame-pointer", "-mno-omit-leaf-frame-pointer", "-pthread"},
     {"-lm"}},
    {{".cc", ".cpp", ".cxx", ".C"}, "CXX", "clang++", "c++", "CXXFLAGS",
     {"-O2", "-g", "-fno-omit-frame-pointer", "-mno-omit-leaf-frame-pointer", "-pthread"},
     {"-lm"}},
    {{".rs"}, "RUSTC", "rustc", NULL, "RUSTFLAGS",
     {"-C", "opt-level=2", "-g", "-C", "force-frame-pointers=yes"}, {NULL}},
};

/* The language of `src` and the length of its name without the suffix. */
static const struct language *language_of(const char *src, size_t *stem_len)
{
    size_t len = strlen(src);
    for (size_t i = 0; i < sizeof languages / sizeof languages[0]; i++)
        for (const char *const *s = languages[i].suffix; *s; s++) {
            size_t n = strlen(*s);
            if (len > n && !strcmp(src + len - n, *s) && src[len - n - 1] != '/') {
                *stem_len = len - n;
                return &languages[i];
            }
        }
    return NULL;
}

/* The signal that ended kestrel's wait, and the compiler it goes on to. */
static volatile sig_atomic_t caught, compiler_pid;
static const int ending[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};
#define N_ENDING (sizeof ending / sizeof ending[0])

static void on_signal(int sig)
{
    if (!caught) caught = sig;
    if (compiler_pid > 0) kill((pid_t)compiler_pid, sig);
}

/* Runs the compiler argv names in `dir`'s name as its TMPDIR, falling back as `lang`
 * says when the default is missing; 0 when it succeeded. The ending signals stay blocked until compiler_pid is
 * set, so that one sent to kestrel as the compiler starts reaches it. */
static int spawn_compiler(const struct language *lang, const char *cc, int chosen, char **argv,
                          const char *dir)
{
    sigset_t block, mask;
    sigemptyset(&block);
    for (size_t i = 0; i < N_ENDING; i++) sigaddset(&block, ending[i]);
    sigprocmask(SIG_BLOCK, &block, &mask);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        for (size_t i = 0; i < N_ENDING; i++) signal(ending[i], SIG_DFL);
        sigprocmask(SIG_SETMASK, &mask, NULL);
        /* Its temporary files (clang's object file) go where kestrel removes them,
         * even when a signal ends it before it does. */
        setenv("TMPDIR", dir, 1);
        execvp(cc, argv);
        if (!chosen && lang->fallback) execvp(argv[0] = (char *)lang->fallback, argv);
        fprintf(stderr, "kestrel: %s: %s\n", cc, strerror(errno));
        _exit(127);
    }
    if (pid > 0) compiler_pid = pid;
    sigprocmask(SIG_SETMASK, &mask, NULL);
    if (pid < 0) return -1;
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    compiler_pid = 0;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* The compiler's command line: its name, kestrel's flags, the user's (words split at
 * blanks, no quoting), -o OUT, the source, the libraries. */
static int compile(const struct language *lang, const char *src, const char *out, const char *dir)
{
    const char *cc = getenv(lang->cc_env);
    int chosen = cc && *cc;
    if (!chosen) cc = lang->cc;
    const char *env = getenv(lang->flags_env);
    char *flags = strdup(env ? env : "");
    size_t n_flags = 0;
    for (const char *c = flags ? flags : ""; *c; c++)
        n_flags += !strchr(" \t\n", *c) && (c == flags || strchr(" \t\n", c[-1]));
    const size_t n_fixed = sizeof lang->own / sizeof lang->own[0] + sizeof lang->libs / sizeof lang->libs[0];
    char **argv = flags ? calloc(n_fixed + n_flags + 5, sizeof *argv) : NULL;
    if (!argv) {
        free(flags);
        return -1;
    }
    size_t n = 0;
    argv[n++] = (char *)cc;
    for (const char *const *f = lang->own; *f; f++) argv[n++] = (char *)*f;
    for (char *save, *w = strtok_r(flags, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save))
        argv[n++] = w;
    argv[n++] = "-o";
    argv[n++] = (char *)out;
    argv[n++] = (char *)src;
    for (const char *const *l = lang->libs; *l; l++) argv[n++] = (char *)*l;
    argv[n] = NULL;
    int rc = spawn_compiler(lang, cc, chosen, argv, dir);
    free(argv);
    free(flags);
    return rc;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)ftw;
    return (type == FTW_DP ? rmdir(path) : unlink(path)), 0;
}

/* The temporary directory and all in it: the program, and whatever a compiler ended
 * by a signal left there (clang's object file, rustc's working directory). */
static void remove_dir(const char *dir)
{
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int cmd_run(int argc, char **argv)
{
    for (int i = 1; i < argc && argv[i][0] == '-'; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return fputs(usage, stdout), 0;
    struct record_options o = {0};
    int first = record_parse(argc, argv, "run", &o);
    if (first <= 0) return first == 0 ? 0 : 2;
    const char *src = argv[first];
    size_t stem_len;
    const struct language *lang = language_of(src, &stem_len);
    if (!lang)
        return cli_usage_error("run", "%s is not a C, C++ or Rust file (.c, .cc, .cpp, .cxx, .C, .rs)",
                               src);
    if (access(src, R_OK)) {
        fprintf(stderr, "kestrel: %s: %s\n", src, strerror(errno));
        return 1;
    }
    /* The program is named after the file, so the exports and the report are. */
    const char *slash = strrchr(src, '/');
    const char *base = slash ? slash + 1 : src;
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(stem_len - (size_t)(base - src)), base);
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/kestrel-run-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    struct sigaction on = {.sa_handler = on_signal}, old[N_ENDING];
    for (size_t i = 0; i < N_ENDING; i++) sigaction(ending[i], &on, &old[i]);
    if (!mkdtemp(dir)) {
        fprintf(stderr, "kestrel: %s: %s\n", dir, strerror(errno));
        for (size_t i = 0; i < N_ENDING; i++) sigaction(ending[i], &old[i], NULL);
        return caught ? cli_raise_default(caught), 1 : 1;
    }
    char bin[sizeof dir + 260];
    snprintf(bin, sizeof bin, "%s/%s", dir, name);
    int rc, status = -1;
    if (compile(lang, src, bin, dir)) {
        if (!caught) fprintf(stderr, "kestrel: %s: compilation failed\n", src);
        rc = 1;
    } else if (caught) {
        rc = 1;
    } else {
        if (!o.stem) o.stem = name;
        argv[first] = bin;
        /* record takes these signals while the program runs, and gives them back. */
        rc = record_program(&o, argv + first, &status);
    }
    remove_dir(dir);
    if (caught) cli_raise_default(caught);
    for (size_t i = 0; i < N_ENDING; i++) sigaction(ending[i], &old[i], NULL);
    return status == -1 ? rc : record_exit(status, rc);
}
