/* Frame pointers or not, from an image's CFI (fpcheck.h). */
#include "analysis/symbols/fpcheck.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DWARF_REG_RBP 6
#define EH_PE_UDATA4 0x03
#define EH_PE_DATAREL_SDATA4 0x3b
#define ROWS_MAX 64 /* rows of one function's CFI looked at */

/* The CFA's register at pc, or -1. */
static int cfa_register(Dwarf_CFI *cfi, Dwarf_Addr pc, Dwarf_Addr *row_end)
{
    Dwarf_Frame *frame;
    if (dwarf_cfi_addrframe(cfi, pc, &frame) != 0) return -1;
    Dwarf_Op *ops;
    size_t nops;
    int reg = -1;
    Dwarf_Addr start, end;
    bool signalp;
    *row_end = 0;
    if (dwarf_frame_info(frame, &start, &end, &signalp) >= 0) *row_end = end;
    if (dwarf_frame_cfa(frame, &ops, &nops) == 0 && nops >= 1) {
        if (ops[0].atom == DW_OP_bregx)
            reg = (int)ops[0].number;
        else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31)
            reg = ops[0].atom - DW_OP_breg0;
    }
    free(frame);
    return reg;
}

/* 1 when a row of the CFI in [lo, hi) is rbp-based, 0 when none is, -1 when the
 * function has no CFI. */
static int keeps_fp(Dwarf_CFI *cfi, Dwarf_Addr lo, Dwarf_Addr hi)
{
    int seen = 0;
    Dwarf_Addr pc = lo;
    for (int rows = 0; pc < hi && rows < ROWS_MAX; rows++) {
        Dwarf_Addr end;
        int reg = cfa_register(cfi, pc, &end);
        if (reg < 0) return seen ? 0 : -1;
        if (reg == DWARF_REG_RBP) return 1;
        seen = 1;
        if (end <= pc) break;
        pc = end;
    }
    return 0;
}

static int32_t rd32(const unsigned char *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

int fpcheck_module(Dwfl_Module *mod)
{
    GElf_Addr bias;
    Elf *elf = dwfl_module_getelf(mod, &bias);
    if (!elf) return -1;
    GElf_Ehdr eh;
    if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64) return -1;
    size_t nph;
    if (elf_getphdrnum(elf, &nph) != 0) return -1;
    GElf_Phdr ph, hdr = {0};
    for (size_t i = 0; i < nph; i++)
        if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_GNU_EH_FRAME) hdr = ph;
    if (hdr.p_type != PT_GNU_EH_FRAME || hdr.p_filesz < 12) return -1;
    Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)hdr.p_offset, hdr.p_filesz, ELF_T_BYTE);
    if (!d || d->d_size < 12) return -1;
    const unsigned char *t = d->d_buf;
    /* version 1, eh_frame_ptr (4 bytes), fde_count udata4, table of datarel sdata4
     * pairs (initial location, FDE), sorted by location. */
    if (t[0] != 1 || (t[1] & 0x0f) != 0x0b || t[2] != EH_PE_UDATA4 || t[3] != EH_PE_DATAREL_SDATA4)
        return -1;
    uint32_t n;
    memcpy(&n, t + 8, 4);
    if (n < 2 || 12 + (uint64_t)n * 8 > d->d_size) return -1;
    Dwarf_Addr cfi_bias;
    Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &cfi_bias);
    if (!cfi) return -1;
    size_t step = n - 1 > FPCHECK_FUNCTIONS ? (n - 1) / FPCHECK_FUNCTIONS : 1;
    unsigned judged = 0, with = 0;
    for (uint32_t i = 0; i + 1 < n; i += (uint32_t)step) {
        Dwarf_Addr lo = hdr.p_vaddr + (Dwarf_Addr)(int64_t)rd32(t + 12 + (size_t)i * 8);
        Dwarf_Addr hi = hdr.p_vaddr + (Dwarf_Addr)(int64_t)rd32(t + 12 + (size_t)(i + 1) * 8);
        if (hi <= lo) continue;
        int k = keeps_fp(cfi, lo, hi);
        if (k < 0) continue;
        judged++;
        with += (unsigned)k;
    }
    return judged ? (int)(1000ull * with / judged) : -1;
}
