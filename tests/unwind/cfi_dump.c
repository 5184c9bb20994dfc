/* cfi_dump — prints the unwind table kestrel builds for one mapped image, one row a
 * line, in readelf's notation (`readelf --debug-dump=frames-interp`), for
 * test_cfi_readelf.py to compare:
 *     LOC CFA RA RBP
 * LOC in hex (address - slide), CFA "rsp+N" / "rbp+N" / "exp" / "none" / "?", RA
 * "c-8" / "u" / "exp", RBP "c-N" / "exp" / "s" (unchanged).
 * Usage: cfi_dump SUBSTRING-OF-PATH [LIB-TO-DLOPEN...]; "exe" names the executable,
 * "vdso" the vdso. */
#include "runtime/unwind/table.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

static const char *want;
static uint64_t found_pc;

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "exe";
    if (!strstr(name, want) || found_pc) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            found_pc = info->dlpi_addr + ph->p_vaddr;
            printf("# %s slide=%#lx\n", name, (unsigned long)info->dlpi_addr);
            return 1;
        }
    }
    return 0;
}

static int same_rule(const struct cfi_row *a, const struct cfi_row *b)
{
    return a->kind == b->kind &&
           (a->kind == CFI_NONE ||
            (a->cfa_off == b->cfa_off && a->fp_off == b->fp_off && a->fp_rule == b->fp_rule));
}

static const char *regname(int r)
{
    static const char *n[] = {"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8",
                              "r9",  "r10", "r11", "r12", "r13", "r14", "r15", "rip"};
    return r >= 0 && r <= 16 ? n[r] : "r?";
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    for (int i = 2; i < argc; i++)
        if (!dlopen(argv[i], RTLD_NOW)) {
            fprintf(stderr, "cfi_dump: %s\n", dlerror());
            return 2;
        }
    want = argv[1];
    if (uw_tables_refresh() < 0) return 3;
    uw_tables_build(1);
    dl_iterate_phdr(visit, NULL);
    const struct uw_image *im = found_pc ? uw_table_find(found_pc) : NULL;
    if (!im) {
        fprintf(stderr, "cfi_dump: no image matching %s\n", want);
        return 4;
    }
    const struct uw_rows *t = uw_image_rows(im);
    if (!t) {
        fprintf(stderr, "cfi_dump: %s: no table\n", want);
        return 5;
    }
    for (uint32_t i = 0; i < t->nrows; i++) {
        const struct cfi_row *r = &t->rows[i];
        char cfa[32], ra[8] = "c-8", fp[16] = "s";
        switch (r->kind) {
        case CFI_NONE: strcpy(cfa, "none"); break;
        case CFI_CFA_SP: snprintf(cfa, sizeof cfa, "rsp+%d", r->cfa_off); break;
        case CFI_CFA_FP: snprintf(cfa, sizeof cfa, "rbp+%d", r->cfa_off); break;
        case CFI_CFA_DEREF_FP:
        case CFI_PLT: strcpy(cfa, "exp"); break;
        case CFI_SIGNAL:
            strcpy(cfa, "exp");
            strcpy(ra, "exp");
            if (r->fp_off >= 0) strcpy(fp, "exp");
            break;
        case CFI_END: strcpy(cfa, "*"); strcpy(ra, "u"); break;
        default:
            if (r->cfa_off >= 0 && r->cfa_off <= 16)
                snprintf(cfa, sizeof cfa, "?%s+%d", regname(r->cfa_off), r->fp_off);
            else
                strcpy(cfa, "?");
            break;
        }
        if (r->kind != CFI_SIGNAL && r->kind != CFI_UNSUPPORTED && r->kind != CFI_NONE) {
            if (CFI_FP_RULE(r) == CFI_FP_AT_CFA) snprintf(fp, sizeof fp, "c%d", r->fp_off);
            if (CFI_FP_RULE(r) == CFI_FP_AT_FP) strcpy(fp, "exp");
        }
        printf("%x %s %s %s\n", r->loc, cfa, ra, fp);
    }
    /* Every row is found by a lookup of its first and its last address (the one before
     * the next row's), as the walker looks it up: through the start index. And the
     * lookup that reads the one FDE, as walks do before the table is built, gives the
     * same rule at both. */
    unsigned long wrong = 0, wrong_direct = 0;
    for (uint32_t i = 0; i < t->nrows; i++) {
        const struct cfi_row *r = &t->rows[i];
        uint64_t last = i + 1 < t->nrows ? t->rows[i + 1].loc - 1 : r->loc;
        uint64_t at[2] = {r->loc, last};
        for (int k = 0; k < (last >= r->loc ? 2 : 1); k++) {
            struct cfi_row got, d;
            int rc = uw_image_row(im, im->slide + at[k], 0, &got);
            if (rc != (r->kind != CFI_NONE) || (rc > 0 && !same_rule(&got, r))) wrong++;
            if (cfi_lookup(&im->mem, im->hdr, im->slide, im->slide + at[k], &d) != 0 ||
                !same_rule(&d, r))
                wrong_direct++;
        }
    }
    struct cfi_row none;
    if (t->nrows && t->rows[0].loc > 0 &&
        uw_image_row(im, im->slide + t->rows[0].loc - 1, 0, &none) != 0)
        wrong++;
    if (wrong || wrong_direct) {
        fprintf(stderr, "cfi_dump: %s: %lu table lookups and %lu FDE lookups found another rule\n",
                want, wrong, wrong_direct);
        return 6;
    }
    struct uw_table_stats st;
    uw_table_stats(&st);
    printf("# images=%lu rows=%lu bytes=%lu fdes=%lu bad=%lu unsupported=%lu\n",
           (unsigned long)st.images, (unsigned long)st.rows, (unsigned long)st.bytes,
           (unsigned long)st.fdes, (unsigned long)st.fdes_bad, (unsigned long)st.rows_unsupported);
    return 0;
}
