/* kestrel run: compiles one C file for profiling (-O2 -g with frame pointers, the
 * leaf's included, so every stack walks) and records it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"

static const char usage[] =
    "usage: kestrel run [record options] FILE.c [ARGS]\n"
    "\n"
    "Compiles FILE.c with $CC (default clang, else cc) -O2 -g -fno-omit-frame-pointer\n"
    "-mno-omit-leaf-frame-pointer -pthread $CFLAGS -lm into a temporary directory, then runs\n"
    "it as `kestrel record` does with ARGS (exports named after FILE unless -o says).\n"
    "The record options (-F, --engine, --heap, --heap-interval, -o, --report, --state,\n"
    "--process) are\n"
    "accepted; see kestrel record --help.\n";

/* Runs the compiler argv names, falling back to cc when $CC did not choose it; 0 when
 * it succeeded. */
static int spawn_compiler(const char *cc, int chosen, char **argv)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        execvp(cc, argv);
        if (!chosen) execvp(argv[0] = "cc", argv);
        fprintf(stderr, "kestrel: %s: %s\n", cc, strerror(errno));
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* clang unless $CC says otherwise: GCC 12 drops a leaf function's frame pointer
 * despite -mno-omit-leaf-frame-pointer, and samples in that leaf lose its caller.
 * $CFLAGS (words split at blanks, no quoting) come after kestrel's own flags, so that
 * they can override them (-O1), as an editor's "extra compiler flags" setting needs. */
static int compile(const char *src, const char *out)
{
    const char *cc = getenv("CC");
    int chosen = cc && *cc;
    if (!chosen) cc = "clang";
    const char *own[] = {"-O2", "-g", "-fno-omit-frame-pointer", "-mno-omit-leaf-frame-pointer",
                         "-pthread"};
    const size_t n_own = sizeof own / sizeof own[0];
    const char *env = getenv("CFLAGS");
    char *flags = strdup(env ? env : "");
    size_t n_flags = 0;
    for (const char *c = flags ? flags : ""; *c; c++)
        n_flags += !strchr(" \t\n", *c) && (c == flags || strchr(" \t\n", c[-1]));
    char **argv = flags ? calloc(n_own + n_flags + 6, sizeof *argv) : NULL;
    if (!argv) {
        free(flags);
        return -1;
    }
    size_t n = 0;
    argv[n++] = (char *)cc;
    for (size_t i = 0; i < n_own; i++) argv[n++] = (char *)own[i];
    for (char *save, *w = strtok_r(flags, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save))
        argv[n++] = w;
    argv[n++] = "-o";
    argv[n++] = (char *)out;
    argv[n++] = (char *)src;
    argv[n++] = "-lm";
    argv[n] = NULL;
    int rc = spawn_compiler(cc, chosen, argv);
    free(argv);
    free(flags);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    for (int i = 1; i < argc && argv[i][0] == '-'; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return fputs(usage, stdout), 0;
    struct record_options o = {0};
    int first = record_parse(argc, argv, "run", &o);
    if (first <= 0) return first == 0 ? 0 : 2;
    const char *src = argv[first];
    size_t len = strlen(src);
    if (len < 3 || strcmp(src + len - 2, ".c"))
        return cli_usage_error("run", "%s is not a C file (FILE.c)", src);
    if (access(src, R_OK)) {
        fprintf(stderr, "kestrel: %s: %s\n", src, strerror(errno));
        return 1;
    }
    /* The program is named after the file, so the exports and the report are. */
    const char *slash = strrchr(src, '/');
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(len - 2 - (slash ? (size_t)(slash + 1 - src) : 0)),
             slash ? slash + 1 : src);
    char dir[] = "/tmp/kestrel-run-XXXXXX";
    if (!mkdtemp(dir)) {
        fprintf(stderr, "kestrel: %s: %s\n", dir, strerror(errno));
        return 1;
    }
    char bin[sizeof dir + 260];
    snprintf(bin, sizeof bin, "%s/%s", dir, name);
    int rc;
    if (compile(src, bin)) {
        fprintf(stderr, "kestrel: %s: compilation failed\n", src);
        rc = 1;
    } else {
        if (!o.stem) o.stem = name;
        argv[first] = bin;
        rc = record_run(&o, argv + first);
    }
    unlink(bin);
    rmdir(dir);
    return rc;
}
