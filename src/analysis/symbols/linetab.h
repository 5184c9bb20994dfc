/* kestrel's own reader of a compilation unit's DWARF line-number program
 * (.debug_line, versions 2 to 5 as GCC, clang and Go write them), for the symbolizer.
 *
 * libdw's dwarf_getsrclines allocates a list node per row and sorts them all, and
 * dwarf_getsrcfiles does the same work to get at the file table: on a program of a
 * few thousand functions that was the largest part of symbolizing. This reader
 * decodes the program in one pass into one sorted array with one row per address.
 *
 * Its answers are libdw's, by construction and by test (tests/cli/test_linetab.c):
 * - linetab_lookup(t, a) is the row dwarf_getsrc_die(cu, a) returns: the last row at
 *   or below a, none when that is the end of a sequence (and the highest row is
 *   taken as an end, as libdw does); among rows at one address, a row that is not an
 *   end wins over an end, and a later row over an earlier one;
 * - linetab_file(t, i) is dwarf_filesrc's name of file i (dwarf_linesrc's for a row):
 *   the directory joined to the name unless the name is absolute, "???" for DWARF 4's
 *   file 0; NULL past the table.
 * Whatever it does not handle exactly as libdw does — a form, an opcode or a value it
 * does not know, a malformed or truncated header or program, a compressed section it
 * cannot see, a split unit, DW_LNE_define_file, VLIW operation indices — makes
 * linetab_read refuse (-1), and the caller asks libdw instead.
 *
 * One difference is known: libdw reads a line program once per .debug_line offset
 * and keeps the DW_AT_comp_dir of the first unit that asked for it, so two DWARF 4
 * units sharing one program (as dwz can make them) with different directories would
 * see its directory-0 files under whichever asked first; here each unit sees them
 * under its own. Not thread-safe: a lookup keeps where it was (linetab.hint). */
#ifndef KESTREL_LINETAB_H
#define KESTREL_LINETAB_H
#include <elfutils/libdw.h>
#include <stddef.h>
#include <stdint.h>

/* The debug sections of one Dwarf, found once (for every CU of it). */
struct linetab_sections {
    const uint8_t *line, *line_str, *str; /* NULL when absent or unusable */
    size_t line_size, line_str_size, str_size;
};

#define LINETAB_END 0xffffu    /* row.file of a sequence's end: no line there */
#define LINETAB_NOFILE 0xfffeu /* row.file past the file table: no file name */

struct linetab_row {
    uint64_t addr;
    int32_t line;
    uint16_t column;
    uint16_t file; /* index into files, or LINETAB_END / LINETAB_NOFILE */
};

/* One CU's table. Rows are sorted by addr, one per distinct address. */
struct linetab {
    struct linetab_row *rows;
    size_t n_rows;
    size_t hint;        /* the row the last lookup found: lookups mostly go up from it */
    const char **files; /* names as libdw makes them; files[i] owned when owned[i] */
    uint8_t *owned;
    size_t n_files;
};

/* Finds dw's sections. Returns 0, or -1 when none of its CUs can be read here (no
 * .debug_line, compressed sections, a byte order or file type this reader does not
 * handle). */
int linetab_sections_find(Dwarf *dw, struct linetab_sections *s);

/* Reads cu's line program into t. Returns 0; -1 when cu has no line program or it
 * is one this reader leaves to libdw (t is then empty); -2 when memory runs out. */
int linetab_read(const struct linetab_sections *s, Dwarf_Die *cu, struct linetab *t);

/* The row describing a; NULL when none does. Fastest when addresses come in
 * increasing order. */
const struct linetab_row *linetab_lookup(struct linetab *t, uint64_t a);

/* File i's name; NULL when i is past the table. */
static inline const char *linetab_file(const struct linetab *t, uint32_t i)
{
    return i < t->n_files ? t->files[i] : NULL;
}

void linetab_free(struct linetab *t);
#endif
