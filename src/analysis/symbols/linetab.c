/* kestrel's reader of DWARF line-number programs (linetab.h). Every value it reads
 * is bounds-checked; every case where libdw would read differently (or fail) is a
 * refusal, so the caller's fallback to libdw keeps every answer libdw's. */
#include "analysis/symbols/linetab.h"

#include <dwarf.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ sections */

int linetab_sections_find(Dwarf *dw, struct linetab_sections *s)
{
    *s = (struct linetab_sections){0};
    Elf *elf = dw ? dwarf_getelf(dw) : NULL;
    GElf_Ehdr eh;
    size_t shstrndx;
    /* Relocatable objects need relocations applied to their addresses; a foreign
     * byte order needs swapping: libdw does both, this reader neither. */
    if (!elf || !gelf_getehdr(elf, &eh) || eh.e_type == ET_REL ||
        eh.e_ident[EI_DATA] !=
            (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB) ||
        elf_getshdrstrndx(elf, &shstrndx))
        return -1;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh)) continue;
        const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
        const uint8_t **data;
        size_t *size;
        if (!name) continue;
        if (!strcmp(name, ".debug_line"))
            data = &s->line, size = &s->line_size;
        else if (!strcmp(name, ".debug_line_str"))
            data = &s->line_str, size = &s->line_str_size;
        else if (!strcmp(name, ".debug_str"))
            data = &s->str, size = &s->str_size;
        else
            continue;
        /* libdw decompresses a compressed section in place when it opens the file;
         * one still compressed (or without contents) is not readable here. */
        if (sh.sh_type == SHT_NOBITS || (sh.sh_flags & SHF_COMPRESSED)) continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        if (!d || !d->d_buf) continue;
        *data = d->d_buf;
        *size = d->d_size;
    }
    return s->line ? 0 : -1;
}

/* ------------------------------------------------------------------ reading */

/* A cursor over [p, end); `bad` is set by any read past the end or any value the
 * reader refuses, and sticks. */
struct cur {
    const uint8_t *p, *end;
    int bad;
};

/* Inlined everywhere, so a cursor never leaves registers in the program's loop. */
#define READER static inline __attribute__((always_inline))

READER uint64_t read_uleb(struct cur *c)
{
    if (c->p < c->end && *c->p < 0x80) return *c->p++;
    uint64_t v = 0;
    for (unsigned i = 0; i < 10 && c->p < c->end; i++) {
        uint8_t b = *c->p++;
        /* The tenth byte holds bit 63 only: more would be lost (libdw drops it). */
        if (i == 9 && (b & 0x7e)) break;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) return v;
    }
    c->bad = 1;
    return 0;
}

READER int64_t read_sleb(struct cur *c)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 10 && c->p < c->end; i++) {
        uint8_t b = *c->p++;
        if (i == 9 && b != 0 && b != 0x7f) break;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            if (7 * (i + 1) < 64 && (b & 0x40)) v |= ~(uint64_t)0 << (7 * (i + 1));
            return (int64_t)v;
        }
    }
    c->bad = 1;
    return 0;
}

/* n bytes (1 to 8), little-endian: the byte order was checked against the host's
 * and every supported host is little-endian (linetab_sections_find refuses else). */
READER uint64_t read_fixed(struct cur *c, unsigned n)
{
    if ((size_t)(c->end - c->p) < n) {
        c->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)c->p[i] << (8 * i);
    c->p += n;
    return v;
}

static void skip(struct cur *c, uint64_t n)
{
    if ((uint64_t)(c->end - c->p) < n)
        c->bad = 1;
    else
        c->p += n;
}

/* A NUL-terminated string inside [from, end); NULL when it runs past. */
static const char *string_at(const uint8_t *from, const uint8_t *end)
{
    return from < end && memchr(from, 0, (size_t)(end - from)) ? (const char *)from : NULL;
}

/* ------------------------------------------------------------------ header */

/* Standard opcodes 1..12 and the operands each takes: libdw refuses a program that
 * uses one with another count, and so this reader refuses the header. */
static const uint8_t std_lengths[13] = {0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1};

struct header {
    unsigned version, offset_size, address_size;
    uint8_t min_len, default_is_stmt, line_range, opcode_base;
    int8_t line_base;
    const uint8_t *std_len; /* [opcode_base - 1]: operands of opcodes 1.. */
    const uint8_t *program, *end;
};

/* One DWARF 5 entry format: what (DW_LNCT_*) and how (DW_FORM_*). */
struct entry_format {
    uint64_t what, form;
};

/* Reads one value of form at c: its string into *str (when str), its number into
 * *num (when num); skips it otherwise. Sets c->bad for a form not handled. */
static void read_form(struct cur *c, const struct linetab_sections *s, const struct header *h,
                      uint64_t form, const char **str, uint64_t *num)
{
    const char *sv = NULL;
    uint64_t nv = 0;
    int is_num = 0;
    switch (form) {
    case DW_FORM_string:
        sv = string_at(c->p, c->end);
        if (!sv) return (void)(c->bad = 1);
        c->p += strlen(sv) + 1;
        break;
    case DW_FORM_line_strp:
    case DW_FORM_strp: {
        uint64_t off = read_fixed(c, h->offset_size);
        const uint8_t *sec = form == DW_FORM_strp ? s->str : s->line_str;
        size_t size = form == DW_FORM_strp ? s->str_size : s->line_str_size;
        if (c->bad) return;
        if (!sec || off >= size || !(sv = string_at(sec + off, sec + size))) c->bad = 1;
        break;
    }
    case DW_FORM_data1:
    case DW_FORM_data2:
    case DW_FORM_data4:
    case DW_FORM_data8:
        nv = read_fixed(c, form == DW_FORM_data1   ? 1
                           : form == DW_FORM_data2 ? 2
                           : form == DW_FORM_data4 ? 4
                                                   : 8);
        is_num = 1;
        break;
    case DW_FORM_udata:
        nv = read_uleb(c);
        is_num = 1;
        break;
    case DW_FORM_data16:
        skip(c, 16);
        break;
    case DW_FORM_block: {
        uint64_t n = read_uleb(c);
        if (!c->bad) skip(c, n);
        break;
    }
    default:
        c->bad = 1;
        return;
    }
    if (str) {
        if (sv)
            *str = sv;
        else
            c->bad = 1;
    }
    if (num) {
        if (is_num)
            *num = nv;
        else
            c->bad = 1;
    }
}

/* Reads a DWARF 5 entry-format list: count, then (what, form) pairs. Returns the
 * count; *path and *dir are the indices of DW_LNCT_path and DW_LNCT_directory_index
 * (-1 when absent). */
static int read_formats(struct cur *c, struct entry_format *f, int *path, int *dir)
{
    if (c->p >= c->end) return c->bad = 1, 0;
    int n = *c->p++;
    *path = *dir = -1;
    for (int i = 0; i < n && !c->bad; i++) {
        f[i].what = read_uleb(c);
        f[i].form = read_uleb(c);
        /* libdw keeps both in 16 bits and uses the last path or index given. */
        if (f[i].what > 0xffff || f[i].form > 0xffff) c->bad = 1;
        if (f[i].what == DW_LNCT_path) *path = *path < 0 ? i : (c->bad = 1, i);
        if (f[i].what == DW_LNCT_directory_index) *dir = *dir < 0 ? i : (c->bad = 1, i);
    }
    return n;
}

/* dir joined to name as libdw joins them; name itself when absolute. Sets *owned
 * when the result was allocated. NULL when memory runs out. */
static const char *join(const char *dir, const char *name, uint8_t *owned)
{
    *owned = 0;
    if (name[0] == '/') return name;
    size_t dl = dir ? strlen(dir) : 0, nl = strlen(name);
    char *r = malloc(dl + nl + 2);
    if (!r) return NULL;
    char *q = r;
    if (dir) {
        memcpy(q, dir, dl);
        q += dl;
        *q++ = '/';
    }
    memcpy(q, name, nl + 1);
    *owned = 1;
    return r;
}

/* Adds a file name to t. Returns 0, -1 for a refusal, -2 when memory runs out. */
static int add_file(struct linetab *t, size_t *cap, const char *dir, const char *name)
{
    if (t->n_files >= LINETAB_NOFILE) return -1;
    if (t->n_files == *cap) {
        size_t n = *cap ? *cap * 2 : 16;
        const char **f = realloc(t->files, n * sizeof *f);
        if (!f) return -2;
        t->files = f;
        uint8_t *o = realloc(t->owned, n);
        if (!o) return -2;
        t->owned = o;
        *cap = n;
    }
    const char *j = join(dir, name, &t->owned[t->n_files]);
    if (!j) return -2;
    t->files[t->n_files++] = j;
    return 0;
}

/* Reads the header at `unit` (its unit length first) and the file table into t.
 * Returns 0, -1 for a refusal, -2 when memory runs out. */
static int read_header(const struct linetab_sections *s, const uint8_t *unit, const char *comp_dir,
                       unsigned address_size, struct header *h, struct linetab *t)
{
    struct cur c = {unit, s->line + s->line_size, 0};
    uint64_t length = read_fixed(&c, 4);
    h->offset_size = 4;
    if (length == 0xffffffffu) {
        length = read_fixed(&c, 8);
        h->offset_size = 8;
    }
    if (c.bad || length > (uint64_t)(c.end - c.p)) return -1;
    h->end = c.end = c.p + length;
    h->version = (unsigned)read_fixed(&c, 2);
    if (c.bad || h->version < 2 || h->version > 5) return -1;
    h->address_size = address_size;
    if (h->version >= 5) {
        unsigned as = (unsigned)read_fixed(&c, 1), seg = (unsigned)read_fixed(&c, 1);
        if (c.bad || as != address_size || seg != 0) return -1;
    }
    uint64_t header_length = read_fixed(&c, h->offset_size);
    if (c.bad || header_length > (uint64_t)(c.end - c.p)) return -1;
    h->program = c.p + header_length;
    c.end = h->program; /* the header's own end */
    h->min_len = (uint8_t)read_fixed(&c, 1);
    /* More than one operation per instruction (VLIW) is left to libdw. */
    if (h->version >= 4 && read_fixed(&c, 1) != 1) return -1;
    h->default_is_stmt = (uint8_t)read_fixed(&c, 1);
    h->line_base = (int8_t)read_fixed(&c, 1);
    h->line_range = (uint8_t)read_fixed(&c, 1);
    h->opcode_base = (uint8_t)read_fixed(&c, 1);
    /* DWARF 2's nine standard opcodes at least (Go's linker writes ten, GCC and clang
     * twelve): an opcode from opcode_base up is a special one, as libdw reads it. */
    if (c.bad || h->default_is_stmt > 1 || h->line_range == 0 || h->opcode_base < 10) return -1;
    h->std_len = c.p;
    skip(&c, h->opcode_base - 1u);
    unsigned known = h->opcode_base - 1u < 12 ? h->opcode_base - 1u : 12;
    if (c.bad || memcmp(h->std_len, std_lengths + 1, known)) return -1;

    size_t cap = 0;
    int rc;
    if (h->version < 5) {
        /* Directories: 0 is the CU's DW_AT_comp_dir (NULL when absent), then the
         * list up to an empty string; files: name, directory, time, size, up to an
         * empty name. DWARF 4 numbers files from 1: 0 is libdw's "???". */
        const char *dirs_at = (const char *)c.p;
        size_t n_dirs = 1;
        for (const char *d; c.p < c.end && *c.p; n_dirs++) {
            if (!(d = string_at(c.p, c.end))) return -1;
            c.p += strlen(d) + 1;
        }
        if (c.p >= c.end) return -1;
        c.p++;
        if ((rc = add_file(t, &cap, NULL, "???"))) return rc;
        while (c.p < c.end && *c.p) {
            const char *name = string_at(c.p, c.end);
            if (!name) return -1;
            c.p += strlen(name) + 1;
            uint64_t di = read_uleb(&c);
            read_uleb(&c), read_uleb(&c);
            if (c.bad || di >= n_dirs) return -1;
            const char *dir = comp_dir;
            if (di > 0) { /* the di-th string of the list */
                dir = dirs_at;
                for (uint64_t k = 1; k < di; k++)
                    dir += strlen(dir) + 1;
            }
            if ((rc = add_file(t, &cap, dir, name))) return rc;
        }
        if (c.p >= c.end) return -1;
        c.p++;
    } else {
        struct entry_format f[256];
        int path, dix;
        int nf = read_formats(&c, f, &path, &dix);
        uint64_t n_dirs = read_uleb(&c);
        if (c.bad || (nf && path < 0) || (!nf && n_dirs) ||
            n_dirs > (uint64_t)(c.end - c.p)) /* at least a byte each */
            return -1;
        const char **dirs = malloc((n_dirs + 1) * sizeof *dirs);
        if (!dirs) return -2;
        for (uint64_t i = 0; i < n_dirs && !c.bad; i++)
            for (int k = 0; k < nf && !c.bad; k++)
                read_form(&c, s, h, f[k].form, k == path ? &dirs[i] : NULL, NULL);
        nf = read_formats(&c, f, &path, &dix);
        uint64_t n_files = read_uleb(&c);
        if (c.bad || (nf && (path < 0 || dix < 0)) || (!nf && n_files) ||
            n_files > (uint64_t)(c.end - c.p)) {
            free(dirs);
            return -1;
        }
        /* DWARF 5 numbers files from 0; with no file at all libdw still has "???". */
        rc = n_files ? 0 : add_file(t, &cap, NULL, "???");
        for (uint64_t i = 0; i < n_files && !c.bad && !rc; i++) {
            const char *name = NULL;
            uint64_t di = 0;
            for (int k = 0; k < nf && !c.bad; k++)
                read_form(&c, s, h, f[k].form, k == path ? &name : NULL, k == dix ? &di : NULL);
            if (c.bad || di >= n_dirs)
                rc = -1;
            else
                rc = add_file(t, &cap, dirs[di], name);
        }
        free(dirs);
        if (rc) return rc;
        if (c.bad) return -1;
    }
    /* libdw refuses a header whose tables do not end where the program starts. */
    return c.p == c.end ? 0 : -1;
}

/* ------------------------------------------------------------------ program */

struct rows {
    struct linetab_row *r;
    size_t n, cap;
    size_t *runs; /* where each run of non-decreasing addresses starts */
    size_t n_runs, cap_runs;
};

/* Notes that a run starts at the next row. Returns 0 or -2. */
static int start_run(struct rows *rs)
{
    if (rs->n_runs == rs->cap_runs) {
        size_t cap = rs->cap_runs ? rs->cap_runs * 2 : 8;
        size_t *q = realloc(rs->runs, cap * sizeof *q);
        if (!q) return -2;
        rs->runs = q, rs->cap_runs = cap;
    }
    rs->runs[rs->n_runs++] = rs->n;
    return 0;
}

/* Appends a row, one per address within a run: at an address already holding a
 * row, a row that is not an end replaces it (the later row wins, and an end loses
 * to any row) and an end is dropped. Every row takes at least a byte of the
 * program, so rows has room for them all. Returns 0, or -2 when memory runs out. */
static inline int push(struct rows *rs, const struct linetab_row *row)
{
    if (rs->n) {
        struct linetab_row *prev = &rs->r[rs->n - 1];
        if (prev->addr == row->addr) {
            if (row->file != LINETAB_END) *prev = *row;
            return 0;
        }
        if (prev->addr > row->addr && start_run(rs)) return -2;
    } else if (start_run(rs)) {
        return -2;
    }
    if (rs->n == rs->cap) return -2; /* cannot happen: see above */
    rs->r[rs->n++] = *row;
    return 0;
}

/* Runs the program into rows. Returns 0, -1 for a refusal, -2 when memory runs out. */
static int run_program(const struct header *h, size_t n_files, struct rows *rs)
{
    struct cur c = {h->program, h->end, 0};
    uint64_t addr = 0;
    int64_t line = 1;
    uint64_t file = 1, column = 0;
    const unsigned base = h->opcode_base, range = h->line_range;
    int rc = 0;
    /* Each special opcode's line and address advance, divided out once. libdw
     * advances the address by an unsigned int product. */
    struct {
        int32_t line;
        uint32_t addr;
    } special[256];
    for (unsigned op = base; op < 256; op++) {
        special[op].line = h->line_base + (int)((op - base) % range);
        special[op].addr = (uint32_t)(h->min_len * ((op - base) / range));
    }
/* A row of the registers' values; libdw refuses a line that does not fit its int. */
#define ROW(is_end)                                                                                \
    do {                                                                                           \
        if (line < INT32_MIN || line > INT32_MAX) return -1;                                       \
        struct linetab_row row_ = {addr, (int32_t)line, (uint16_t)column,                          \
                                   (uint16_t)((is_end)         ? LINETAB_END                       \
                                              : file < n_files ? file                              \
                                                               : LINETAB_NOFILE)};                 \
        if ((rc = push(rs, &row_))) return rc;                                                     \
    } while (0)
    while (c.p < c.end) {
        unsigned op = *c.p++;
        if (op >= base) {
            line += special[op].line;
            addr += special[op].addr;
            ROW(0);
            continue;
        }
        uint64_t v;
        int64_t sv;
        switch (op) {
        case 0: { /* extended: a one-byte length (libdw reads no more), a sub-opcode */
            if (c.end - c.p < 2) return -1;
            unsigned len = *c.p++;
            if (len == 0 || len >= 0x80 || (size_t)(c.end - c.p) < len) return -1;
            const uint8_t *next = c.p + len;
            switch (*c.p++) {
            case DW_LNE_end_sequence:
                ROW(1);
                addr = 0, line = 1, file = 1, column = 0;
                break;
            case DW_LNE_set_address:
                if (len != 1 + h->address_size) return -1;
                addr = read_fixed(&c, h->address_size);
                break;
            case DW_LNE_set_discriminator:
                if (read_uleb(&c) > 0xffffff) return -1;
                break;
            default: /* DW_LNE_define_file, vendor extensions: libdw's business */
                return -1;
            }
            if (c.bad || c.p != next) return -1;
            break;
        }
        case DW_LNS_copy:
            ROW(0);
            break;
        case DW_LNS_advance_pc:
            if ((v = read_uleb(&c)) > UINT32_MAX) return -1;
            addr += (uint32_t)(h->min_len * (uint32_t)v);
            break;
        case DW_LNS_advance_line:
            sv = read_sleb(&c);
            if (sv < INT32_MIN || sv > INT32_MAX) return -1;
            line += sv;
            break;
        case DW_LNS_set_file:
            if ((file = read_uleb(&c)) > UINT32_MAX) return -1;
            break;
        case DW_LNS_set_column:
            if ((column = read_uleb(&c)) > 0xffff) return -1;
            break;
        case DW_LNS_const_add_pc:
            addr += (uint32_t)(h->min_len * ((255 - base) / range));
            break;
        case DW_LNS_fixed_advance_pc:
            addr += read_fixed(&c, 2);
            break;
        case DW_LNS_set_isa:
            if (read_uleb(&c) > 0xff) return -1;
            break;
        case DW_LNS_negate_stmt:
        case DW_LNS_set_basic_block:
        case DW_LNS_set_prologue_end:
        case DW_LNS_set_epilogue_begin:
            break;
        default: /* a standard opcode past the twelve known: skip its operands */
            for (unsigned k = h->std_len[op - 1]; k > 0; k--)
                read_uleb(&c);
            break;
        }
        if (c.bad) return -1;
    }
#undef ROW
    return 0;
}

/* ------------------------------------------------------------------ ordering */

/* libdw's order: by address, an end before a row at the same address, else the
 * program's order (pos). */
struct keyed {
    uint64_t addr;
    uint32_t pos;
    uint8_t end;
};

static int cmp_keyed(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;
    if (x->addr != y->addr) return x->addr < y->addr ? -1 : 1;
    if (x->end != y->end) return x->end ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

struct run {
    uint64_t first;  /* its first row's address */
    size_t from, to; /* [from, to) in the program's rows */
};

/* By first address; runs that start at one address keep the program's order. */
static int cmp_run(const void *a, const void *b)
{
    const struct run *x = a, *y = b;
    if (x->first != y->first) return x->first < y->first ? -1 : 1;
    return x->from < y->from ? -1 : x->from > y->from;
}

/* Puts rows in libdw's order with one row per address (the last of its group in
 * that order). One run is already so; runs that only touch at their ends are put
 * in order as wholes; anything else is sorted row by row. Returns 0 or -2. */
static int order(struct rows *rs)
{
    if (rs->n_runs <= 1) return 0;
    size_t nr = rs->n_runs;
    struct run *runs = malloc(nr * sizeof *runs);
    struct linetab_row *out = malloc(rs->n * sizeof *out);
    if (!runs || !out) {
        free(runs), free(out);
        return -2;
    }
    for (size_t i = 0; i < nr; i++)
        runs[i] = (struct run){rs->r[rs->runs[i]].addr, rs->runs[i],
                               i + 1 < nr ? rs->runs[i + 1] : rs->n};
    qsort(runs, nr, sizeof *runs, cmp_run);
    int overlap = 0;
    for (size_t i = 0; i + 1 < nr && !overlap; i++)
        overlap = rs->r[runs[i].to - 1].addr > rs->r[runs[i + 1].from].addr;
    size_t n = 0;
    if (!overlap) {
        size_t last_pos = 0;
        for (size_t i = 0; i < nr; i++)
            for (size_t k = runs[i].from; k < runs[i].to; k++) {
                const struct linetab_row *row = &rs->r[k];
                if (n && out[n - 1].addr == row->addr) {
                    /* Where two runs touch: a row beats an end, a later row an
                     * earlier one. */
                    int prev_end = out[n - 1].file == LINETAB_END, end = row->file == LINETAB_END;
                    if (end && !prev_end) continue;
                    if (!end && !prev_end && k < last_pos) continue;
                    out[n - 1] = *row, last_pos = k;
                    continue;
                }
                out[n++] = *row, last_pos = k;
            }
    } else {
        struct keyed *key = malloc(rs->n * sizeof *key);
        if (!key) {
            free(runs), free(out);
            return -2;
        }
        for (size_t k = 0; k < rs->n; k++)
            key[k] = (struct keyed){rs->r[k].addr, (uint32_t)k, rs->r[k].file == LINETAB_END};
        qsort(key, rs->n, sizeof *key, cmp_keyed);
        for (size_t k = 0; k < rs->n; k++) {
            if (n && out[n - 1].addr == key[k].addr) n--; /* the last of a group wins */
            out[n++] = rs->r[key[k].pos];
        }
        free(key);
    }
    free(runs);
    free(rs->r);
    rs->r = out;
    rs->n = n;
    return 0;
}

/* ------------------------------------------------------------------ API */

int linetab_read(const struct linetab_sections *s, Dwarf_Die *cu, struct linetab *t)
{
    *t = (struct linetab){0};
    Dwarf_Half version;
    uint8_t unit_type, address_size, offset_size;
    Dwarf_Die mem;
    Dwarf_Attribute a;
    Dwarf_Word off;
    /* Split units take their lines from the skeleton: libdw's business. */
    if (!s->line || dwarf_cu_info(cu->cu, &version, &unit_type, NULL, NULL, NULL, NULL, NULL) ||
        (unit_type != DW_UT_compile && unit_type != DW_UT_partial && unit_type != DW_UT_skeleton) ||
        !dwarf_diecu(cu, &mem, &address_size, &offset_size) ||
        (address_size != 4 && address_size != 8) ||
        dwarf_formudata(dwarf_attr(cu, DW_AT_stmt_list, &a), &off) || off >= s->line_size)
        return -1;
    const char *comp_dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a));
    struct header h;
    int rc = read_header(s, s->line + off, comp_dir, address_size, &h, t);
    struct rows rs = {0};
    if (!rc) {
        rs.cap = (size_t)(h.end - h.program) + 1;
        rs.r = malloc(rs.cap * sizeof *rs.r);
        rc = rs.r ? run_program(&h, t->n_files, &rs) : -2;
    }
    if (!rc) rc = order(&rs);
    free(rs.runs);
    if (rc) {
        free(rs.r);
        linetab_free(t);
        return rc;
    }
    /* libdw takes the highest row for an end, whatever the program said. */
    if (rs.n) rs.r[rs.n - 1].file = LINETAB_END;
    t->rows = rs.n ? realloc(rs.r, rs.n * sizeof *rs.r) : (free(rs.r), NULL);
    if (rs.n && !t->rows) t->rows = rs.r;
    t->n_rows = rs.n;
    return 0;
}

const struct linetab_row *linetab_lookup(struct linetab *t, uint64_t a)
{
    size_t lo = 0, hi = t->n_rows;
    /* Rows [0, lo) are at or below a and [hi, n) above it: from the last row found,
     * steps of doubling length up to a row above a narrow the search. */
    if (t->hint < t->n_rows && t->rows[t->hint].addr <= a) {
        size_t step = 1;
        lo = t->hint + 1;
        while (lo < t->n_rows) {
            size_t probe = lo + step - 1 < t->n_rows ? lo + step - 1 : t->n_rows - 1;
            if (t->rows[probe].addr > a) {
                hi = probe;
                break;
            }
            lo = probe + 1;
            step *= 2;
        }
    }
    while (lo < hi) { /* the first row past a */
        size_t mid = lo + (hi - lo) / 2;
        if (t->rows[mid].addr <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo) return NULL;
    t->hint = lo - 1;
    return t->rows[lo - 1].file == LINETAB_END ? NULL : &t->rows[lo - 1];
}

void linetab_free(struct linetab *t)
{
    for (size_t i = 0; i < t->n_files; i++)
        if (t->owned[i]) free((char *)t->files[i]);
    free(t->files);
    free(t->owned);
    free(t->rows);
    *t = (struct linetab){0};
}
