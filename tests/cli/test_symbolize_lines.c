/* The symbolizer gives the same answers with kestrel's line-table reader as with
 * libdw's line tables alone (symbolize_options.libdw_lines), address by address: a
 * profile of every address where a binary's line tables have a row and the addresses
 * either side of it, each as a leaf and as a return address, symbolized both ways;
 * every frame (function, file, line, column, inlined or not) must be the same. On
 * the fixture built every way tests/cli/test_linetab.c uses, the C++ fixture, a Go
 * program, kestrel itself, and libc through its separate debug file when that is installed. Then on
 * copies with a damaged .debug_line: a version no reader knows (no lines either way,
 * the functions still named) and a vendor opcode kestrel's reader leaves to libdw
 * (the lines libdw reads, through the fallback).
 *
 *   test_symbolize_lines [BINARY...]   those, or the ones given */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/symbols/linetab.h"
#include "analysis/symbols/symbolize.h"
#include "check.h"
#include "linetab_fixtures.h"

enum { MAX_ADDRS = 30000 };

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Every row address of the file at `lines` and those either side, sorted, unique,
 * at most MAX_ADDRS of them spread evenly. */
static uint64_t *row_addresses(const char *lines, size_t *n)
{
    int fd = open(lines, O_RDONLY);
    Dwarf *dw = fd < 0 ? NULL : dwarf_begin(fd, DWARF_C_READ);
    size_t cap = 1024;
    uint64_t *a = malloc(cap * sizeof *a);
    *n = 0;
    Dwarf_Off off = 0, next;
    size_t hsize;
    while (dw && a && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu;
        Dwarf_Lines *ls;
        size_t nl;
        if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_getsrclines(&cu, &ls, &nl) == 0)
            for (size_t i = 0; i < nl; i++) {
                Dwarf_Addr ad;
                dwarf_lineaddr(dwarf_onesrcline(ls, i), &ad);
                if (*n + 3 > cap) a = realloc(a, (cap *= 2) * sizeof *a);
                if (!a) break;
                a[(*n)++] = ad - 1, a[(*n)++] = ad, a[(*n)++] = ad + 1;
            }
        off = next;
    }
    if (dw) dwarf_end(dw);
    if (fd >= 0) close(fd);
    if (!a) return NULL;
    qsort(a, *n, sizeof *a, cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < *n; i++)
        if (!u || a[u - 1] != a[i]) a[u++] = a[i];
    size_t step = u > MAX_ADDRS ? u / MAX_ADDRS + 1 : 1, k = 0;
    for (size_t i = 0; i < u; i += step)
        a[k++] = a[i];
    *n = k;
    return a;
}

/* The executable span of the ELF file at path: its PF_X PT_LOAD. */
static int text_of(const char *path, uint64_t *lo, uint64_t *size)
{
    int fd = open(path, O_RDONLY);
    Elf *elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
    size_t n = 0;
    int rc = -1;
    if (elf && elf_getphdrnum(elf, &n) == 0)
        for (size_t i = 0; i < n && rc; i++) {
            GElf_Phdr ph;
            if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
                *lo = ph.p_vaddr, *size = ph.p_memsz, rc = 0;
        }
    elf_end(elf);
    if (fd >= 0) close(fd);
    return rc;
}

/* A profile of one sample per address: the address as the leaf, its successor in
 * the list as its caller (so every address is asked both ways). The image is the
 * file at path, loaded where it was linked. */
static struct profile *profile_of(const char *path, const uint64_t *a, size_t n)
{
    uint64_t lo, size;
    struct profile *p = profile_new(PROFILE_CPU);
    CHECK(p != NULL);
    if (!p || text_of(path, &lo, &size)) return p;
    struct profile_image im = {
        .path = (char *)path, .text = lo, .text_size = size, .slide_known = 1, .is_main = 1};
    int64_t one = 1;
    CHECK(profile_add_sample_type(p, "samples", "count") == 0);
    CHECK(profile_add_thread(p, "main", 0, 1, NULL) == 0);
    CHECK(profile_add_image(p, &im) == 0);
    for (size_t i = 0; i + 1 < n; i++) {
        uint32_t st[2] = {(uint32_t)profile_intern_address(p, a[i]),
                          (uint32_t)profile_intern_address(p, a[i + 1])};
        int64_t s = profile_intern_stack(p, st, 2);
        CHECK(s >= 0 && profile_add_sample(p, 0, (uint32_t)s, 0, -1, &one) == 0);
    }
    return p;
}

static int same_str(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

struct outcome {
    size_t frames, with_line, named; /* named: resolved to a function, not hex */
};

/* Symbolizes path's row addresses both ways (their lines read from `lines`, the
 * file itself or its separate debug file) and compares. */
static struct outcome compare(const char *path, const char *lines)
{
    struct outcome out = {0};
    size_t n;
    uint64_t *a = row_addresses(lines, &n);
    CHECKF(a && n > 10, "%s: no line rows", lines);
    if (!a) return out;
    struct profile *own = profile_of(path, a, n), *libdw = profile_of(path, a, n);
    struct symbolize_options o1 = {.quiet = 1}, o2 = {.quiet = 1, .libdw_lines = 1};
    CHECK(own && libdw && symbolize_profile(own, &o1) == 0 && symbolize_profile(libdw, &o2) == 0);
    size_t differ = 0, frames = 0, with_line = 0, named = 0;
    for (size_t i = 0; own && libdw && i < own->n_samples && i < libdw->n_samples; i++) {
        const struct profile_stack *x = &own->stacks[own->samples[i].stack],
                                   *y = &libdw->stacks[libdw->samples[i].stack];
        int same = x->depth == y->depth;
        for (uint32_t k = 0; same && k < x->depth; k++) {
            const struct profile_frame *f = &own->frames[x->frames[k]],
                                       *g = &libdw->frames[y->frames[k]];
            same = same_str(f->name, g->name) && same_str(f->file, g->file) && f->line == g->line &&
                   f->column == g->column && f->inlined == g->inlined &&
                   f->symbolized == g->symbolized && f->address == g->address;
            frames++;
            with_line += f->line > 0;
            named += f->symbolized;
        }
        if (!same && differ++ < 5) {
            const struct profile_frame *f = &own->frames[x->frames[0]],
                                       *g = &libdw->frames[y->frames[0]];
            fprintf(stderr, "%s: sample %zu (0x%llx): %s %s:%d:%d vs %s %s:%d:%d\n", path, i,
                    (unsigned long long)f->address, f->name, f->file ? f->file : "??", f->line,
                    f->column, g->name, g->file ? g->file : "??", g->line, g->column);
        }
    }
    CHECKF(own && libdw && own->n_samples == libdw->n_samples && differ == 0,
           "%s: %zu of %zu samples differ", path, differ, own ? own->n_samples : 0);
    fprintf(stderr, "%s: %zu addresses, %zu frames, %zu with a line: %s\n", path, n, frames,
            with_line, differ ? "DIFFERENT" : "same");
    profile_free(own);
    profile_free(libdw);
    free(a);
    return (struct outcome){frames, with_line, named};
}

/* The comparison means something only when lines were found. */
static void compare_with_lines(const char *path, const char *lines)
{
    struct outcome o = compare(path, lines);
    CHECKF(o.with_line > o.frames / 4, "%s: %zu of %zu frames have a line", path, o.with_line,
           o.frames);
}

/* .debug_line's file offset in the ELF file `elf` (its bytes); 0 when absent. */
static size_t debug_line_at(const unsigned char *elf, size_t size, size_t *len)
{
    Elf *e = elf_memory((char *)elf, size);
    size_t shstrndx, at = 0;
    if (e && !elf_getshdrstrndx(e, &shstrndx))
        for (Elf_Scn *scn = elf_nextscn(e, NULL); scn && !at; scn = elf_nextscn(e, scn)) {
            GElf_Shdr sh;
            const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(e, shstrndx, sh.sh_name) : NULL;
            if (name && !strcmp(name, ".debug_line")) at = sh.sh_offset, *len = sh.sh_size;
        }
    elf_end(e);
    return at;
}

/* A copy of src at dst with every line-table header's version set to 9, or with
 * every DW_LNE_set_discriminator turned into a vendor opcode (DW_LNE_lo_user) of the
 * same length, which libdw skips and kestrel's reader does not know. Returns how
 * many places were changed. */
static int damaged_copy(const char *src, const char *dst, int vendor)
{
    FILE *f = fopen(src, "rb");
    struct stat st;
    if (!f || fstat(fileno(f), &st)) return 0;
    size_t size = (size_t)st.st_size, len = 0, changed = 0;
    unsigned char *b = malloc(size);
    if (!b || fread(b, 1, size, f) != size) size = 0;
    fclose(f);
    size_t at = size ? debug_line_at(b, size, &len) : 0;
    if (at && !vendor) {
        for (size_t u = 0; u + 6 <= len;) { /* 32-bit DWARF units: length, version */
            uint32_t ul = b[at + u] | b[at + u + 1] << 8 | b[at + u + 2] << 16 |
                          (uint32_t)b[at + u + 3] << 24;
            b[at + u + 4] = 9, b[at + u + 5] = 0, changed++;
            u += 4 + (size_t)ul;
        }
    } else if (at) {
        /* readelf names each opcode's offset in the section. */
        char cmd[1200];
        snprintf(cmd, sizeof cmd,
                 "readelf --debug-dump=rawline '%s' | sed -n 's/^ *\\[0x\\([0-9a-f]*\\)\\] *"
                 "Extended opcode 4: set Discriminator.*/\\1/p'",
                 src);
        FILE *p = popen(cmd, "r");
        char line[64];
        while (p && fgets(line, sizeof line, p)) {
            size_t o = (size_t)strtoul(line, NULL, 16);
            if (o + 2 < len && b[at + o] == 0 && b[at + o + 2] == DW_LNE_set_discriminator)
                b[at + o + 2] = DW_LNE_lo_user, changed++;
        }
        if (p) pclose(p);
    }
    FILE *out = fopen(dst, "wb");
    if (!out || fwrite(b, 1, size, out) != size) changed = 0;
    if (out) fclose(out);
    chmod(dst, 0755);
    free(b);
    return (int)changed;
}

/* How many of path's CUs kestrel's reader refuses while libdw reads them. */
static size_t left_to_libdw(const char *path)
{
    int fd = open(path, O_RDONLY);
    Dwarf *dw = fd < 0 ? NULL : dwarf_begin(fd, DWARF_C_READ);
    struct linetab_sections s;
    size_t n = 0;
    Dwarf_Off off = 0, next;
    size_t hsize;
    while (dw && !linetab_sections_find(dw, &s) &&
           dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu;
        struct linetab t;
        Dwarf_Lines *ls;
        size_t nl;
        if (dwarf_offdie(dw, off + hsize, &cu)) {
            int rc = linetab_read(&s, &cu, &t);
            if (!rc) linetab_free(&t);
            n += rc == -1 && dwarf_getsrclines(&cu, &ls, &nl) == 0 && nl > 0;
        }
        off = next;
    }
    if (dw) dwarf_end(dw);
    if (fd >= 0) close(fd);
    return n;
}

static void damaged(void)
{
    char dir[] = "/tmp/kestrel-symlines-XXXXXX", path[600];
    CHECK(mkdtemp(dir) != NULL);
    char *cwd = getcwd(NULL, 0);
    char src[600];
    snprintf(src, sizeof src, "%s/build/tests/cli/linetab/gcc-dwarf5", cwd ? cwd : ".");
    free(cwd);
    snprintf(path, sizeof path, "%s/version9", dir);
    CHECK(damaged_copy(src, path, 0) > 0);
    struct outcome o = compare(path, src);
    CHECKF(o.with_line == 0 && o.named > o.frames / 2,
           "version 9: %zu of %zu frames named, %zu with a line", o.named, o.frames, o.with_line);
    snprintf(path, sizeof path, "%s/vendor", dir);
    CHECK(damaged_copy(src, path, 1) > 0);
    CHECK(left_to_libdw(path) > 0);
    o = compare(path, src);
    CHECKF(o.with_line > o.frames / 4, "vendor opcode: %zu of %zu frames with a line", o.with_line,
           o.frames);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

int main(int argc, char **argv)
{
    elf_version(EV_CURRENT);
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            compare_with_lines(argv[i], argv[i]);
        return check_exit();
    }
    for (size_t i = 0; i < LINETAB_FIXTURES; i++) {
        char path[600];
        /* An absolute path, as a recorded image has. */
        char *cwd = getcwd(NULL, 0);
        snprintf(path, sizeof path, "%s/%s", cwd ? cwd : ".", linetab_fixtures[i]);
        free(cwd);
        compare_with_lines(path, path);
    }
    /* libc and its separate debug file, found by build id as the symbolizer finds it. */
    FILE *p = popen("readelf -n /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null | "
                    "awk '/Build ID/ {print $3; exit}'",
                    "r");
    char id[128] = "", dbg[256];
    if (p) {
        if (!fgets(id, sizeof id, p)) id[0] = 0;
        pclose(p);
    }
    id[strcspn(id, "\n")] = 0;
    snprintf(dbg, sizeof dbg, "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id[0] ? id + 2 : "");
    if (strlen(id) > 4 && access(dbg, R_OK) == 0)
        compare_with_lines("/lib/x86_64-linux-gnu/libc.so.6", dbg);
    else
        fprintf(stderr, "libc's debug file is not installed: skipped\n");
    damaged();
    return check_exit();
}
