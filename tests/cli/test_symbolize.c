/* The symbolizer against a real program (tests/cli/fixture_symbols.cpp) that records
 * addresses of its own code with the lines they must name: -1 on return addresses,
 * inlined calls as frames of their own, C++ demangling, separate debug info, a moved
 * program found with --binary, and a missing or changed program named image+offset with a
 * warning — never a wrong name. */
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/readers/readers.h"
#include "analysis/symbols/symbolize.h"
#include "check.h"

/* The fixture's directory: built by g++, then by clang++ (DWARF 5, no aranges). */
static char fixtures[256];

static const char *fixture_dir(void)
{
    return fixtures;
}

static char dir[] = "/tmp/kestrel-sym-XXXXXX";
static char prog[512], json_path[512];
static int expect_inl, expect_outer, expect_method;

static int sh(const char *fmt, const char *a, const char *b)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, fmt, a, b);
    return system(cmd);
}

/* Runs the fixture from the temp directory, so the profile names that path. */
static void record(void)
{
    char src[512];
    snprintf(src, sizeof src, "%s/fixture_symbols", fixture_dir());
    CHECK(sh("cp '%s' '%s'", src, prog) == 0);
    CHECK(sh("'%s' '%s'", prog, json_path) == 0);
    json_error_t err;
    json_t *root = json_load_file(json_path, 0, &err);
    CHECK(root != NULL);
    json_t *e = json_object_get(root, "expect");
    expect_inl = (int)json_integer_value(json_object_get(e, "inl"));
    expect_outer = (int)json_integer_value(json_object_get(e, "outer"));
    expect_method = (int)json_integer_value(json_object_get(e, "method"));
    json_decref(root);
    CHECK(expect_inl > 0 && expect_outer > 0 && expect_method > 0);
}

/* Reads the profile and symbolizes it; stderr's warnings go into `warn`. */
static struct profile *load(const char *binary, char *warn, size_t warn_size)
{
    char why[256];
    struct profile *p = read_profile(json_path, why, sizeof why);
    CHECKF(p != NULL, "%s", why);
    if (!p) return NULL;
    char errfile[600];
    snprintf(errfile, sizeof errfile, "%s/stderr", dir);
    fflush(stderr);
    int saved = dup(2);
    CHECK(freopen(errfile, "w", stderr) != NULL);
    struct symbolize_options o = {.binary = binary};
    CHECK(symbolize_profile(p, &o) == 0);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    FILE *f = fopen(errfile, "r");
    size_t n = f ? fread(warn, 1, warn_size - 1, f) : 0;
    warn[n] = 0;
    if (f) fclose(f);
    return p;
}

static const struct profile_frame *frame(const struct profile *p, size_t stack, uint32_t k)
{
    const struct profile_stack *st = &p->stacks[p->samples[stack].stack];
    return k < st->depth ? &p->frames[st->frames[k]] : NULL;
}

static int ends_with(const char *s, const char *tail)
{
    size_t a = s ? strlen(s) : 0, b = strlen(tail);
    return a >= b && !strcmp(s + a - b, tail);
}

static void check_resolved(const struct profile *p)
{
    /* Sample 0: leaf_fn's entry, then the return address into outer_c where
     * inl_helper was inlined: inl_helper at its call of grab, outer_c at its call of
     * inl_helper. */
    const struct profile_frame *leaf = frame(p, 0, 0), *inl = frame(p, 0, 1),
                               *outer = frame(p, 0, 2);
    CHECKF(leaf && !strcmp(leaf->name, "leaf_fn") && leaf->symbolized, "leaf %s",
           leaf ? leaf->name : "-");
    /* g++ gives a static function no linkage name, clang++ does. */
    CHECKF(inl && (!strcmp(inl->name, "inl_helper") || !strcmp(inl->name, "inl_helper()")) &&
               inl->inlined && inl->line == expect_inl,
           "inlined %s:%d (want inl_helper:%d)", inl ? inl->name : "-", inl ? inl->line : 0,
           expect_inl);
    CHECK(inl && ends_with(inl->file, "tests/cli/fixture_symbols.cpp"));
    CHECKF(outer && !strcmp(outer->name, "outer_c()") && !outer->inlined &&
               outer->line == expect_outer,
           "outer %s:%d (want %d)", outer ? outer->name : "-", outer ? outer->line : 0,
           expect_outer);
    CHECK(p->stacks[p->samples[0].stack].depth == 3);
    /* Sample 1: a C++ method, demangled, at the call's line (the -1 rule: the return
     * address itself may be on the next line). */
    const struct profile_frame *m = frame(p, 1, 1);
    CHECKF(m && !strcmp(m->name, "ns::K::method(int)") && m->line == expect_method,
           "method %s:%d (want %d)", m ? m->name : "-", m ? m->line : 0, expect_method);
}

/* No file describes the image: every frame is named by its image and its address in
 * the image's own terms (the run's address less the slide), never by another
 * build's symbols. */
static void check_hex(const struct profile *p)
{
    for (size_t i = 0; i < p->n_frames; i++) {
        const struct profile_frame *f = &p->frames[i];
        char want[600] = "0x";
        if (f->image >= 0) {
            const struct profile_image *im = &p->images[f->image];
            const char *base = strrchr(im->path, '/');
            snprintf(want, sizeof want, "%s+0x%" PRIx64, base ? base + 1 : im->path,
                     f->address - im->slide);
        }
        CHECKF(!f->symbolized && !strncmp(f->name, want, strlen(want)) &&
                   strlen(f->name) == strlen(want),
               "frame %zu is %s, want %s", i, f->name, want);
    }
}

static void run_all(void)
{
    strcpy(dir, "/tmp/kestrel-sym-XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    snprintf(prog, sizeof prog, "%s/prog", dir);
    snprintf(json_path, sizeof json_path, "%s/prof.json", dir);
    record();
    char warn[4096], moved[600], v2[600];
    snprintf(moved, sizeof moved, "%s/prog.moved", dir);
    snprintf(v2, sizeof v2, "%s/fixture_symbols_v2", fixture_dir());

    struct profile *p = load(NULL, warn, sizeof warn);
    if (p) check_resolved(p);
    CHECKF(warn[0] == 0, "unexpected warning: %s", warn);
    profile_free(p);

    /* Separate debug info: the program stripped, its DWARF in a file named by
     * .gnu_debuglink beside it. The build id is unchanged by stripping. */
    CHECK(sh("objcopy --only-keep-debug '%s' '%s.debug'", prog, prog) == 0);
    CHECK(sh("objcopy --strip-all --add-gnu-debuglink='%s.debug' '%s'", prog, prog) == 0);
    p = load(NULL, warn, sizeof warn);
    if (p) check_resolved(p);
    profile_free(p);
    CHECK(sh("rm -f '%s.debug'%s", prog, "") == 0);

    /* Moved: hex and a warning that names --binary; then --binary resolves it. */
    CHECK(sh("cp '%s/fixture_symbols' '%s'", fixture_dir(), moved) == 0);
    CHECK(unlink(prog) == 0);
    p = load(NULL, warn, sizeof warn);
    if (p) check_hex(p);
    CHECKF(strstr(warn, "kestrel: warning: ") && strstr(warn, "missing") &&
               strstr(warn, "--binary"),
           "warning was: %s", warn);
    profile_free(p);
    p = load(moved, warn, sizeof warn);
    if (p) check_resolved(p);
    profile_free(p);

    /* Changed: another build at the recorded path, and as --binary: hex, a warning
     * that says the build id differs, never the other build's names. */
    CHECK(sh("cp '%s' '%s'", v2, prog) == 0);
    p = load(NULL, warn, sizeof warn);
    if (p) check_hex(p);
    CHECKF(strstr(warn, "build id"), "warning was: %s", warn);
    profile_free(p);
    p = load(v2, warn, sizeof warn);
    if (p) check_hex(p);
    CHECKF(strstr(warn, "--binary") && strstr(warn, "build id"), "warning was: %s", warn);
    profile_free(p);

    sh("rm -rf '%s'%s", dir, "");
}

int main(void)
{
    const char *d = getenv("KESTREL_FIXTURES");
    d = d ? d : "build/tests/cli";
    snprintf(fixtures, sizeof fixtures, "%s", d);
    run_all();
    fprintf(stderr, "(clang++ build)\n");
    snprintf(fixtures, sizeof fixtures, "%s/clang", d);
    run_all();
    return check_exit();
}
