/* kestrel's line-table reader (src/analysis/symbols/linetab.c) against libdw itself, whose
 * answers it must give: on real binaries (the fixture built by gcc and clang, DWARF
 * 3, 4 and 5, -ffunction-sections with --gc-sections, compressed debug sections, a
 * C++ program, a Go program, kestrel itself, libc's separate debug file when
 * installed) every CU
 * must be read, with the same file table and, at every address where libdw has a row
 * and at the addresses either side of it, the same row (file, line, column) or the
 * same absence of one. Then the same on copies of two of them whose .debug_line has
 * random bytes changed: the reader may refuse a CU (the symbolizer then asks libdw),
 * but what it accepts must be what libdw says.
 *
 *   test_linetab [BINARY...]   the binaries above, or the ones given */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/symbols/linetab.h"
#include "check.h"
#include "linetab_fixtures.h"

static int same_str(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* Compares the answers at address a; returns 1 when they agree. */
static int same_at(Dwarf_Die *cu, struct linetab *t, Dwarf_Addr a, const char *what)
{
    Dwarf_Line *l = dwarf_getsrc_die(cu, a);
    const struct linetab_row *r = linetab_lookup(t, a);
    const char *lf = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
    int line = 0, col = 0;
    if (l) dwarf_lineno(l, &line), dwarf_linecol(l, &col);
    if (!l && !r) return 1;
    if (l && r && same_str(lf, linetab_file(t, r->file)) && line == r->line && col == r->column)
        return 1;
    fprintf(stderr, "%s: CU %s at 0x%llx: libdw %s:%d:%d, linetab %s:%d:%d\n", what,
            dwarf_diename(cu) ? dwarf_diename(cu) : "?", (unsigned long long)a,
            l ? (lf ? lf : "(null)") : "-", line, col,
            r ? (linetab_file(t, r->file) ? linetab_file(t, r->file) : "(null)") : "-",
            r ? r->line : 0, r ? r->column : 0);
    return 0;
}

struct tally {
    size_t cus, read, refused, libdw_failed, rows, mismatches;
};

/* Compares every CU of the file at path. With `must_read`, a CU the reader refuses
 * while libdw reads it is a mismatch too. */
static void compare_file(const char *path, int must_read, struct tally *tl)
{
    int fd = open(path, O_RDONLY);
    Dwarf *dw = fd < 0 ? NULL : dwarf_begin(fd, DWARF_C_READ);
    if (!dw) {
        if (fd >= 0) close(fd);
        tl->libdw_failed++;
        return;
    }
    struct linetab_sections s;
    int have_sections = linetab_sections_find(dw, &s) == 0;
    Dwarf_Off off = 0, next;
    size_t hsize;
    while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu;
        if (!dwarf_offdie(dw, off + hsize, &cu)) break;
        off = next;
        struct linetab t;
        int rc = have_sections ? linetab_read(&s, &cu, &t) : -1;
        CHECK(rc != -2);
        Dwarf_Attribute a;
        if (!dwarf_attr(&cu, DW_AT_stmt_list, &a)) {
            if (!rc) linetab_free(&t);
            continue; /* a CU without lines: nothing to compare */
        }
        tl->cus++;
        if (rc) {
            tl->refused++;
            Dwarf_Lines *lines;
            size_t n;
            if (must_read && dwarf_getsrclines(&cu, &lines, &n) == 0) {
                tl->mismatches++;
                fprintf(stderr, "%s: CU %s refused, libdw reads it\n", path,
                        dwarf_diename(&cu) ? dwarf_diename(&cu) : "?");
            }
            continue;
        }
        tl->read++;
        Dwarf_Lines *lines;
        size_t n;
        if (dwarf_getsrclines(&cu, &lines, &n)) {
            /* Accepted what libdw refuses: every answer would differ. */
            tl->libdw_failed++;
            tl->mismatches++;
            fprintf(stderr, "%s: CU %s read, libdw refuses it: %s\n", path,
                    dwarf_diename(&cu) ? dwarf_diename(&cu) : "?", dwarf_errmsg(-1));
            linetab_free(&t);
            continue;
        }
        Dwarf_Files *files;
        size_t nf;
        int bad = dwarf_getsrcfiles(&cu, &files, &nf) != 0 || nf != t.n_files;
        for (size_t i = 0; !bad && i < nf; i++)
            bad = !same_str(dwarf_filesrc(files, i, NULL, NULL), linetab_file(&t, (uint32_t)i));
        if (bad) fprintf(stderr, "%s: CU %s: file tables differ\n", path, dwarf_diename(&cu));
        for (size_t i = 0; i < n && bad < 5; i++) {
            Dwarf_Addr ad;
            dwarf_lineaddr(dwarf_onesrcline(lines, i), &ad);
            bad += !same_at(&cu, &t, ad, path) + !same_at(&cu, &t, ad - 1, path) +
                   !same_at(&cu, &t, ad + 1, path);
        }
        for (size_t i = 0; i < t.n_rows && bad < 5; i++)
            bad += !same_at(&cu, &t, t.rows[i].addr, path);
        bad += !same_at(&cu, &t, 0, path) + !same_at(&cu, &t, ~(Dwarf_Addr)0, path);
        tl->rows += n;
        tl->mismatches += bad != 0;
        linetab_free(&t);
    }
    dwarf_end(dw);
    close(fd);
}

/* The file offset and size of path's .debug_line; -1 when it has none. */
static int debug_line_of(const char *path, size_t *at, size_t *size)
{
    int fd = open(path, O_RDONLY);
    Elf *elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
    size_t shstrndx;
    int rc = -1;
    if (elf && !elf_getshdrstrndx(elf, &shstrndx))
        for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn && rc; scn = elf_nextscn(elf, scn)) {
            GElf_Shdr sh;
            const char *name =
                gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
            if (name && !strcmp(name, ".debug_line") && sh.sh_type == SHT_PROGBITS &&
                !(sh.sh_flags & SHF_COMPRESSED))
                *at = sh.sh_offset, *size = sh.sh_size, rc = 0;
        }
    elf_end(elf);
    if (fd >= 0) close(fd);
    return rc;
}

/* Copies of path with 1 to 4 random bytes of .debug_line changed (most in the
 * headers, where a changed byte changes the most), each compared as above. */
static void mutate(const char *path, int rounds, unsigned seed, struct tally *tl)
{
    size_t at, size;
    CHECKF(debug_line_of(path, &at, &size) == 0, "%s has no .debug_line", path);
    FILE *f = fopen(path, "rb");
    if (!f) return;
    struct stat st;
    fstat(fileno(f), &st);
    unsigned char *orig = malloc((size_t)st.st_size), *copy = malloc((size_t)st.st_size);
    CHECK(orig && copy && fread(orig, 1, (size_t)st.st_size, f) == (size_t)st.st_size);
    fclose(f);
    char tmp[] = "/tmp/kestrel-linetab-XXXXXX";
    int fd = mkstemp(tmp);
    CHECK(fd >= 0);
    srand(seed);
    for (int r = 0; r < rounds && fd >= 0; r++) {
        memcpy(copy, orig, (size_t)st.st_size);
        int n = 1 + rand() % 4;
        for (int k = 0; k < n; k++) {
            size_t span = rand() % 2 ? (size < 160 ? size : 160) : size;
            copy[at + (size_t)rand() % span] = (unsigned char)(rand() % 3 ? rand() : rand() % 4);
        }
        CHECK(pwrite(fd, copy, (size_t)st.st_size, 0) == st.st_size);
        compare_file(tmp, 0, tl);
    }
    if (fd >= 0) close(fd), unlink(tmp);
    free(orig), free(copy);
}

/* libc's separate debug file, found by the build id of the libc this test runs on. */
static int libc_debug(char *out, size_t size)
{
    const char *libs[] = {"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6",
                          "/lib64/libc.so.6"};
    for (size_t i = 0; i < sizeof libs / sizeof *libs; i++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "readelf -n %s 2>/dev/null | awk '/Build ID/ {print $3; exit}'",
                 libs[i]);
        FILE *p = popen(cmd, "r");
        char id[128] = "";
        if (p) {
            if (!fgets(id, sizeof id, p)) id[0] = 0;
            pclose(p);
        }
        id[strcspn(id, "\n")] = 0;
        if (strlen(id) < 4) continue;
        snprintf(out, size, "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
        if (access(out, R_OK) == 0) return 0;
    }
    return -1;
}

int main(int argc, char **argv)
{
    elf_version(EV_CURRENT);
    struct tally all = {0};
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            compare_file(argv[i], 1, &all);
    } else {
        for (size_t i = 0; i < LINETAB_FIXTURES; i++) {
            struct tally tl = {0};
            compare_file(linetab_fixtures[i], 1, &tl);
            CHECKF(tl.cus > 0 && tl.read == tl.cus && tl.mismatches == 0,
                   "%s: %zu CUs, %zu read, %zu mismatches", linetab_fixtures[i], tl.cus, tl.read,
                   tl.mismatches);
            all.cus += tl.cus, all.read += tl.read, all.rows += tl.rows;
        }
        char dbg[512];
        if (libc_debug(dbg, sizeof dbg) == 0) {
            struct tally tl = {0};
            compare_file(dbg, 1, &tl);
            CHECKF(tl.cus > 100 && tl.read == tl.cus && tl.mismatches == 0,
                   "%s: %zu CUs, %zu read, %zu mismatches", dbg, tl.cus, tl.read, tl.mismatches);
            fprintf(stderr, "libc (%s): %zu CUs, %zu rows\n", dbg, tl.cus, tl.rows);
        } else {
            fprintf(stderr, "libc's debug file is not installed: skipped\n");
        }
        struct tally fz = {0};
        const char *seed_env = getenv("KESTREL_LINETAB_SEED");
        unsigned seed = seed_env ? (unsigned)atoi(seed_env) : 1;
        mutate("build/tests/cli/linetab/gcc-dwarf5", 400, seed, &fz);
        mutate("build/tests/cli/linetab/clang-dwarf4", 400, seed + 1, &fz);
        CHECKF(fz.mismatches == 0, "%zu mismatches on changed .debug_line", fz.mismatches);
        /* The changes must reach both outcomes, or the comparison proved nothing. */
        CHECKF(fz.read > 0 && fz.refused > 0, "changed CUs: %zu read, %zu refused", fz.read,
               fz.refused);
        fprintf(stderr, "changed .debug_line: %zu CUs, %zu read (%zu rows compared), %zu refused\n",
                fz.cus, fz.read, fz.rows, fz.refused);
    }
    CHECKF(all.mismatches == 0, "%zu mismatches", all.mismatches);
    fprintf(stderr, "%zu CUs, %zu read, %zu rows compared\n", all.cus, all.read, all.rows);
    return check_exit();
}
