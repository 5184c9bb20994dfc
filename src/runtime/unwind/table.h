/* table — the unwind tables of the images mapped into this process: each image's CFI
 * decoded once (unwind/cfi.h) into sorted 12-byte rows, built on the runtime's own
 * thread and published atomically, so that a signal handler, malloc, or the perf
 * engine's drain only ever search them.
 *
 * An image's rows are relative to its slide, so when the same file is mapped again
 * (a dlopen/dlclose loop) its table is found again, not rebuilt. The memory is the
 * runtime's own (rtmem), bounded (UW_TABLE_BYTES_MAX), counted, and never unmapped
 * while the process lives: a handler that found a table may read it however long
 * it takes.
 *
 * Signal handlers: uw_table_find(), uw_image_row() (atomics and reads of published,
 * immutable memory). Inside malloc: the same, never uw_tables_refresh() (it takes the
 * loader's lock). uw_tables_refresh() is serialised by its own mutex. */
#ifndef KESTREL_UNWIND_TABLE_H
#define KESTREL_UNWIND_TABLE_H
#include "runtime/unwind/cfi.h"

#include <stddef.h>
#include <stdint.h>

#define UW_TABLE_BYTES_MAX (64u << 20) /* rows of every image together */
#define UW_SLOTS 1024                   /* images mapped at once */
#define UW_DESCS (1u << 16)             /* image mappings seen in a process's life */

/* One mapped image, immutable once published. */
struct uw_image {
    uint64_t lo, hi;             /* its executable span, mapped addresses */
    uint64_t slide;              /* rows are addresses - slide */
    const struct cfi_row *rows;  /* sorted by loc; NULL: the image has no usable CFI */
    uint32_t nrows;
    /* Where a lookup starts: pidx[k] is the first row whose loc >> UW_PIDX_SHIFT is at
     * least pbase + k, so a search looks at the few rows of one 256-byte span instead
     * of all of them (NULL: search all rows). */
    const uint32_t *pidx;
    uint32_t pbase, npages;
};
#define UW_PIDX_SHIFT 8

/* The image whose executable span holds pc, or NULL when no image known to the
 * tables does (code outside any image: JIT, or an image mapped since the last
 * refresh). */
const struct uw_image *uw_table_find(uint64_t pc);

/* Whether any table was published yet (before, a walk takes the frame pointer). */
int uw_tables_ready(void);

/* The row that covers pc in im (NULL when none does). */
const struct cfi_row *uw_image_row(const struct uw_image *im, uint64_t pc);

/* Builds the tables of images loaded since the last call and retires those unloaded
 * (cheap when nothing changed: the loader's counters are compared first). Returns
 * the number of images mapped, or -errno. Never from a signal handler. */
int uw_tables_refresh(void);

struct uw_table_stats {
    uint64_t images;       /* images with a table */
    uint64_t images_nocfi; /* images without usable CFI (no PT_GNU_EH_FRAME, bad header) */
    uint64_t images_over;  /* images left without a table: the byte or slot limit */
    uint64_t rows;         /* rows in all tables */
    uint64_t bytes;        /* memory mapped for them */
    uint64_t fdes;         /* FDEs decoded */
    uint64_t fdes_bad;     /* FDEs rejected (malformed, out of bounds) */
    uint64_t rows_unsupported; /* rows with a rule the step does not evaluate */
    uint64_t reused;       /* mappings that found their table already built */
};
void uw_table_stats(struct uw_table_stats *out);
#endif
