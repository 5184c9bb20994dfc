/* libFuzzer target for kestrel's line-table reader (src/analysis/symbols/linetab.c): the input
 * takes the place of the .debug_line section of a small program (fixture_lines.c
 * built with -gdwarf-4; KESTREL_FUZZ_TEMPLATE names another), cut to the section's
 * size. Whatever it holds, the reader must not crash, hang or leak; and a table it
 * accepts must be what libdw reads: the same file table and, at every address where
 * either has a row and the addresses either side of it, the same answer. (A unit
 * the reader refuses goes to libdw in the symbolizer, as it always did.) */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/symbols/linetab.h"

static unsigned char *template;
static size_t template_size, line_at, line_size;

static void load_template(void)
{
    const char *path = getenv("KESTREL_FUZZ_TEMPLATE");
    path = path ? path : "build/tests/cli/linetab/gcc-dwarf4";
    FILE *f = fopen(path, "rb");
    if (!f || fseek(f, 0, SEEK_END)) abort();
    template_size = (size_t)ftell(f);
    rewind(f);
    template = malloc(template_size);
    if (!template || fread(template, 1, template_size, f) != template_size) abort();
    fclose(f);
    elf_version(EV_CURRENT);
    Elf *e = elf_memory((char *)template, template_size);
    size_t shstrndx;
    if (!e || elf_getshdrstrndx(e, &shstrndx)) abort();
    for (Elf_Scn *scn = elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
        GElf_Shdr sh;
        const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(e, shstrndx, sh.sh_name) : NULL;
        if (name && !strcmp(name, ".debug_line")) line_at = sh.sh_offset, line_size = sh.sh_size;
    }
    elf_end(e);
    if (!line_at) abort();
}

static int same_str(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static void same_at(Dwarf_Die *cu, struct linetab *t, Dwarf_Addr a)
{
    Dwarf_Line *l = dwarf_getsrc_die(cu, a);
    const struct linetab_row *r = linetab_lookup(t, a);
    if (!l && !r) return;
    int line = 0, col = 0;
    if (l) dwarf_lineno(l, &line), dwarf_linecol(l, &col);
    if (l && r && same_str(dwarf_linesrc(l, NULL, NULL), linetab_file(t, r->file)) &&
        line == r->line && col == r->column)
        return;
    fprintf(stderr, "at 0x%llx: libdw %s:%d:%d, linetab %s:%d:%d\n", (unsigned long long)a,
            l ? dwarf_linesrc(l, NULL, NULL) : "-", line, col, r ? linetab_file(t, r->file) : "-",
            r ? r->line : 0, r ? r->column : 0);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!template) load_template();
    unsigned char *image = malloc(template_size);
    if (!image) abort();
    memcpy(image, template, template_size);
    memcpy(image + line_at, data, size < line_size ? size : line_size);
    Elf *e = elf_memory((char *)image, template_size);
    Dwarf *dw = e ? dwarf_begin_elf(e, DWARF_C_READ, NULL) : NULL;
    struct linetab_sections s;
    Dwarf_Off off = 0, next;
    size_t hsize;
    while (dw && !linetab_sections_find(dw, &s) &&
           dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu;
        struct linetab t;
        Dwarf_Off cu_off = off + hsize;
        off = next;
        if (!dwarf_offdie(dw, cu_off, &cu)) continue;
        if (linetab_read(&s, &cu, &t)) continue; /* refused: libdw's business */
        Dwarf_Lines *lines;
        size_t n;
        if (dwarf_getsrclines(&cu, &lines, &n)) {
            fprintf(stderr, "read a unit libdw refuses: %s\n", dwarf_errmsg(-1));
            abort();
        }
        Dwarf_Files *files;
        size_t nf;
        if (dwarf_getsrcfiles(&cu, &files, &nf) || nf != t.n_files) abort();
        for (size_t i = 0; i < nf; i++)
            if (!same_str(dwarf_filesrc(files, i, NULL, NULL), linetab_file(&t, (uint32_t)i)))
                abort();
        for (size_t i = 0; i < n; i++) {
            Dwarf_Addr a;
            dwarf_lineaddr(dwarf_onesrcline(lines, i), &a);
            same_at(&cu, &t, a - 1), same_at(&cu, &t, a), same_at(&cu, &t, a + 1);
        }
        for (size_t i = 0; i < t.n_rows; i++)
            same_at(&cu, &t, t.rows[i].addr);
        linetab_free(&t);
    }
    if (dw) dwarf_end(dw);
    elf_end(e);
    free(image);
    return 0;
}
