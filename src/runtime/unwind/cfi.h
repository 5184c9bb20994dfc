/* cfi — the decoder of an image's call frame information: the `.eh_frame` records
 * (CIE, FDE, the DW_CFA program of each, DW_EH_PE pointer encodings) found through
 * the `.eh_frame_hdr` search table, turned into the rows of the unwind table
 * (unwind/table.h): for each address, where the caller's stack pointer (the CFA), its
 * return address and its frame pointer are.
 *
 * Every byte is read through a cfi_mem, which holds the bounds of the memory the
 * image maps readable; a record that runs past them is rejected, never read.
 *
 * Signal handlers: cfi_lookup() and cfi_count_fdes() (the one FDE that covers an
 * address, read where the image is mapped; the caller must know that it still is).
 * Tables are built on the runtime's own thread. Inside malloc: everything (no
 * allocation; the caller hands the output array). */
#ifndef KESTREL_UNWIND_CFI_H
#define KESTREL_UNWIND_CFI_H
#include <stddef.h>
#include <stdint.h>

/* One row of a table: from `loc` (an address minus the image's slide) to the next
 * row's, how to find the caller. 12 bytes. Kinds (x86-64's registers named; on
 * aarch64 sp, x29 and x30, arch.h):
 *   CFA_SP, CFA_FP   CFA = sp or fp + cfa_off; the return address and fp per fp_rule
 *   CFA_DEREF_FP     CFA = [rbp + cfa_off] (a function that realigns its stack)
 *   PLT              CFA = rsp + cfa_off, + 8 more once (pc & 15) >= fp_off (a PLT stub)
 *   SIGNAL           a signal frame: the interrupted rsp, rbp, rip are saved at
 *                    rsp + cfa_off, rsp + fp_off and rsp + 8 * fp_rule (a ucontext)
 *   END              the outermost frame: the return address is undefined
 *   NONE             no CFI covers this address
 *   UNSUPPORTED      a rule this unwinder does not evaluate (cfa_off: the CFA register) */
enum cfi_kind {
    CFI_NONE = 0,
    CFI_CFA_SP,
    CFI_CFA_FP,
    CFI_CFA_DEREF_FP,
    CFI_PLT,
    CFI_SIGNAL,
    CFI_END,
    CFI_UNSUPPORTED,
};

/* Where the caller's frame pointer is: unchanged, saved at CFA + fp_off, or saved at
 * fp + fp_off (bits 0-1 of fp_rule, but in SIGNAL rows). */
enum cfi_fp_rule { CFI_FP_SAME = 0, CFI_FP_AT_CFA, CFI_FP_AT_FP };

/* Where the return address is (bits 2-7 of fp_rule, but in SIGNAL rows): slot k in
 * 0..61 is at CFA - 8 (k + 1) (x86-64: always 0, pushed by the call just below the
 * CFA; aarch64: a save near the frame's top), CFI_RA_PAIR just above the saved frame
 * pointer, at CFA + fp_off + 8 (aarch64: the x30 of a frame record {x29, x30},
 * wherever the frame keeps it), CFI_RA_LR still in the link register (aarch64: a
 * leaf, or before the prologue saved it). */
#define CFI_RA_PAIR 62
#define CFI_RA_LR 63
#define CFI_FP_RULE(r) ((r)->fp_rule & 3)
#define CFI_RA_SLOT(r) ((r)->fp_rule >> 2)

struct cfi_row {
    uint32_t loc;    /* address - slide */
    int32_t cfa_off; /* see the kinds */
    int16_t fp_off;  /* see the kinds */
    uint8_t kind;    /* enum cfi_kind */
    uint8_t fp_rule; /* enum cfi_fp_rule; SIGNAL: the rip slot / 8 */
};
_Static_assert(sizeof(struct cfi_row) == 12, "a row is 12 bytes");

/* The readable spans of the image's mapped memory (its PT_LOAD segments with PF_R,
 * as far as the file backs them). */
#define CFI_MEM_SPANS 8
struct cfi_mem {
    int n;
    struct {
        uint64_t lo, hi;
    } s[CFI_MEM_SPANS];
    /* Where the bytes are: address a is read at a + bias. 0 for an image mapped in
     * this process; the attached host (src/attach) walks another process's stacks with
     * that process's addresses over copies of its image files mapped here. */
    intptr_t bias;
};

/* What a decode of one image found. */
struct cfi_stats {
    uint64_t fdes;        /* FDEs decoded */
    uint64_t bad;         /* FDEs or CIEs rejected (out of bounds, malformed) */
    uint64_t unsupported; /* rows whose rule is not evaluated */
};

/* Decodes every FDE listed in the .eh_frame_hdr at `hdr` (mapped address), rows
 * relative to `slide`. Writes at most `max` rows into `out` (NULL: counts only) and
 * returns how many rows the image needs, or -1 when the header is unusable. Rows come
 * out sorted by loc; consecutive rows with the same rule are merged. */
long cfi_decode_image(const struct cfi_mem *mem, uint64_t hdr, uint64_t slide, struct cfi_row *out,
                      size_t max, struct cfi_stats *st);

/* The number of FDEs the .eh_frame_hdr at `hdr` lists, or -1 when it is unusable. */
long cfi_count_fdes(const struct cfi_mem *mem, uint64_t hdr);

/* The row that covers pc (a mapped address), decoded from the one FDE that the
 * header's search table gives for it: the same rule as the image's table has at pc
 * (its loc is pc - slide). Returns 0 (a NONE row when no FDE covers pc) or -1 when the
 * header or the FDE is unusable. */
int cfi_lookup(const struct cfi_mem *mem, uint64_t hdr, uint64_t slide, uint64_t pc,
               struct cfi_row *row);
#endif
