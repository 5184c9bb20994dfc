/* table — the unwind tables of the images mapped into this process. Each image is
 * registered when the runtime's thread first sees it mapped (its span, its
 * .eh_frame_hdr, a few words); its CFI is decoded into a sorted table of 12-byte rows
 * (unwind/cfi.h) only once walks have needed it often enough, on the runtime's own
 * thread, and published atomically. Until then a lookup reads the one FDE that
 * covers the address through the .eh_frame_hdr search table, where the caller knows
 * that the image is mapped (its own live stack, or the loader's lock held): a process
 * that takes few samples never pays for decoding libc's 3,000 FDEs.
 *
 * An image's rows are relative to its slide, so when the same file is mapped again
 * (a dlopen/dlclose loop) its table is found again, not rebuilt. The memory is the
 * runtime's own (rtmem), bounded (UW_TABLE_BYTES_MAX), counted, and never unmapped
 * while the process lives: a handler that found a table may read it however long
 * it takes.
 *
 * Signal handlers: uw_table_find(), uw_image_row(), uw_image_rows() (atomics, reads of
 * published, immutable memory, and with `direct` reads of the mapped image's CFI).
 * Inside malloc: the same, never uw_tables_refresh(), uw_tables_build() or
 * uw_tables_locked() (they take the loader's lock). Those three are serialised by one
 * mutex. */
#ifndef KESTREL_UNWIND_TABLE_H
#define KESTREL_UNWIND_TABLE_H
#include "runtime/unwind/cfi.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* What a walk (step.h) may read of an image whose table is not built yet:
 *   NONE    nothing: such a frame is stepped by frame pointer, and counted in
 *           *unbuilt, so that the caller may walk again under the loader's lock;
 *   LIVE    the one FDE, while every frame so far was found by CFI: the walk of the
 *           thread's own live stack, whose frames' images stay mapped while they run
 *           (a frame-pointer step may find junk in an image unloaded since the last
 *           refresh, so after one the walk reads no more);
 *   LOCKED  the one FDE of any image (uw_tables_locked: every registered image is
 *           mapped). */
enum uw_direct { UW_DIRECT_NONE = 0, UW_DIRECT_LIVE, UW_DIRECT_LOCKED };

#define UW_TABLE_BYTES_MAX (64u << 20) /* rows of every image together */
#define UW_SLOTS 1024                  /* images mapped at once */
#define UW_DESCS (1u << 16)            /* image mappings seen in a process's life */

/* One image file's table: rows sorted by loc, and where a lookup starts: pidx[k] is
 * the first row whose loc >> UW_PIDX_SHIFT is at least pbase + k, so a search looks at
 * the few rows of one 256-byte span instead of all of them (NULL: search all rows). */
struct uw_rows {
    const struct cfi_row *rows;
    uint32_t nrows;
    const uint32_t *pidx;
    uint32_t pbase, npages;
};
#define UW_PIDX_SHIFT 8

struct uw_file; /* an image file: its identity, its table once built (table.c) */

/* One mapping of an image, immutable once published. */
struct uw_image {
    uint64_t lo, hi;      /* its executable span, mapped addresses */
    uint64_t slide;       /* rows are addresses - slide */
    uint64_t hdr;         /* its .eh_frame_hdr, mapped address */
    struct cfi_mem mem;   /* its readable memory, for lookups before the table */
    uint8_t hdr_head[16]; /* the first bytes of its .eh_frame_hdr when registered */
    struct uw_file *file; /* NULL: the image has no usable CFI */
};

/* The image whose executable span holds pc, or NULL when no image known to the
 * tables does (code outside any image: JIT, or an image mapped since the last
 * refresh). */
const struct uw_image *uw_table_find(uint64_t pc);

/* Whether any image was registered yet (before, a walk takes the frame pointer). */
int uw_tables_ready(void);

/* The rule that covers pc in im, into *row: 1 when CFI covers pc, 0 when none does
 * (a NONE row), -1 when im's table is not built and `direct` is 0 (enum uw_direct
 * above). With `direct` the caller vouches that the image that holds pc is mapped, and
 * a missing table is read from the FDE: LOCKED, the loader's lock held, im is that
 * image; LIVE (a thread's own live frames), im may be a descriptor an unload and a load
 * at the same address made stale since the last refresh, so the first bytes of its
 * .eh_frame_hdr are read first through a call that cannot fault and must be those it
 * had when it was registered (else -1).
 * The rules found lately are kept in a cache that the inline part reads. */
static inline int uw_image_row(const struct uw_image *im, uint64_t pc, int direct,
                               struct cfi_row *row);
int uw_image_row_slow(const struct uw_image *im, uint64_t pc, int direct, struct cfi_row *row);

/* The row cache (table.c): direct-mapped by pc; an entry is (pc, mapping, row), the
 * row held in the entry itself. A mapping's descriptor is never reused, so an image
 * mapped again never takes another mapping's row. A writer claims an entry by swapping
 * its pc for UW_CACHE_BUSY and skips the entry when another writer holds it (a handler
 * never waits); a reader takes the entry only when its pc reads the same before and
 * after the other words (a seqlock with no sequence: an entry rewritten meanwhile for
 * the same pc holds the same row, unless two mappings of different files at one
 * address were walked at once, around a dlclose). */
#define UW_CACHE_BITS 12
#define UW_CACHE_BUSY 1u
struct uw_cache_entry {
    _Atomic uint64_t pc;
    _Atomic(const struct uw_image *) im;
    _Atomic uint64_t w[2]; /* the struct cfi_row */
};
extern struct uw_cache_entry uw_cache[1u << UW_CACHE_BITS];
_Static_assert(sizeof(struct cfi_row) <= 16, "a row fits in a cache entry");

static inline size_t uw_cache_slot(uint64_t pc)
{
    return (size_t)((pc * 0x9E3779B97F4A7C15ull) >> (64 - UW_CACHE_BITS));
}

static inline int uw_image_row(const struct uw_image *im, uint64_t pc, int direct,
                               struct cfi_row *row)
{
    struct uw_cache_entry *e = &uw_cache[uw_cache_slot(pc)];
    if (atomic_load_explicit(&e->pc, memory_order_acquire) == pc) {
        const struct uw_image *ci = atomic_load_explicit(&e->im, memory_order_relaxed);
        uint64_t w[2] = {atomic_load_explicit(&e->w[0], memory_order_relaxed),
                         atomic_load_explicit(&e->w[1], memory_order_relaxed)};
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&e->pc, memory_order_relaxed) == pc && ci == im) {
            memcpy(row, w, sizeof *row);
            return row->kind != CFI_NONE;
        }
    }
    return uw_image_row_slow(im, pc, direct, row);
}

/* im's table, or NULL while it is not built (or the image has none). */
const struct uw_rows *uw_image_rows(const struct uw_image *im);

/* Registers the images loaded since the last call and retires those unloaded (cheap
 * when nothing changed: the loader's counters are compared first). Returns the number
 * of images mapped, or -errno. Never from a signal handler. */
int uw_tables_refresh(void);

/* Builds the tables that lookups asked for often enough (all: every registered
 * image's). Cheap when none is wanted (one atomic load). Returns the number built. */
int uw_tables_build(int all);

/* Runs fn(arg) with the loader's lock held and the registered images exactly those
 * mapped (none loaded or unloaded since the last refresh), so that fn may walk with
 * direct reads of any image. 0 when fn ran, -EAGAIN when the images changed (refresh,
 * then try again). */
int uw_tables_locked(void (*fn)(void *), void *arg);

struct uw_table_stats {
    uint64_t images;           /* images with a table */
    uint64_t images_nocfi;     /* images without usable CFI (no PT_GNU_EH_FRAME, bad header) */
    uint64_t images_over;      /* images left without a table: the byte or slot limit */
    uint64_t rows;             /* rows in all tables */
    uint64_t bytes;            /* memory mapped for them */
    uint64_t fdes;             /* FDEs decoded */
    uint64_t fdes_bad;         /* FDEs rejected (malformed, out of bounds) */
    uint64_t rows_unsupported; /* rows with a rule the step does not evaluate */
    uint64_t reused;           /* mappings that found their table already built */
    uint64_t mapped;           /* images registered (with CFI or not) */
    uint64_t direct;           /* lookups read from an FDE, the table not built */
};
void uw_table_stats(struct uw_table_stats *out);
#endif
