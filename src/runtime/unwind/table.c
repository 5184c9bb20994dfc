/* table.c — per-image unwind tables, built on the runtime's thread, searched anywhere
 * (table.h).
 *
 * Signal handlers: uw_table_find(), uw_image_row() (atomic loads, reads of immutable
 * published memory, no call out). Inside malloc: those two; uw_tables_refresh() is
 * never called there (it takes the loader's lock through dl_iterate_phdr). dlopen is
 * not interposed: glibc resolves a relative name with the caller's RUNPATH, and a
 * wrapper would become the caller.
 *
 * Publication: a slot holds one atomic pointer to an immutable struct uw_image; a
 * refresh stores a new pointer (release) into a free or retired slot, a reader loads
 * it (acquire) once and reads only through it. Descriptors and rows are never freed,
 * so a reader that loaded a pointer just before the image was retired reads memory
 * that is still the runtime's. Tables are built inside dl_iterate_phdr's callback:
 * the loader's lock is held, so the image cannot be unmapped while it is read. */
#include "runtime/unwind/table.h"
#include "runtime/loader_fork.h"
#include "runtime/rtmem.h"

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define UW_KEY_MAX 256 /* bytes of an image's path kept to recognise it again */

/* A built table and what identifies the file it came from. */
struct uw_built {
    char key[UW_KEY_MAX]; /* path */
    uint64_t hdr_rel;     /* .eh_frame_hdr - slide */
    uint64_t text_rel;    /* executable span - slide */
    uint64_t text_size;
    struct uw_image tab; /* rows, nrows, pidx, pbase, npages */
};

static _Atomic(const struct uw_image *) uw_slots[UW_SLOTS];
static _Atomic size_t uw_nslots; /* slots ever used */
static struct uw_image *uw_descs; /* UW_DESCS, mapped on first refresh */
static size_t uw_ndescs;
static struct uw_built *uw_built; /* UW_DESCS */
static size_t uw_nbuilt;
static uint8_t uw_seen[UW_SLOTS];
static struct uw_table_stats uw_st;
static unsigned long long uw_adds = ~0ull, uw_subs = ~0ull;
static pthread_mutex_t uw_mu = PTHREAD_MUTEX_INITIALIZER;

/* ============================ readers ============================ */

const struct uw_image *uw_table_find(uint64_t pc)
{
    size_t n = atomic_load_explicit(&uw_nslots, memory_order_acquire);
    for (size_t i = 0; i < n; i++) {
        const struct uw_image *im = atomic_load_explicit(&uw_slots[i], memory_order_acquire);
        if (im && pc - im->lo < im->hi - im->lo) return im;
    }
    return NULL;
}

int uw_tables_ready(void)
{
    return atomic_load_explicit(&uw_nslots, memory_order_acquire) != 0;
}

/* The rows found lately, shared by every walker: a walk meets the same return
 * addresses again and again (a program's hot stacks), and a hit costs a few loads
 * where a search costs a chain of dependent ones. Direct-mapped by pc; an entry is
 * (pc, slide, row), valid for an image whose rows hold `row` at the same slide (an
 * image mapped again reuses its rows at another slide). A writer claims an entry by
 * swapping its pc for UW_CACHE_BUSY, and skips the entry when another writer holds it
 * (a handler never waits); a reader takes the entry only when its pc reads the same
 * before and after the other two words (a seqlock with no sequence: an entry rewritten
 * meanwhile for the same pc holds the same row). */
#define UW_CACHE_BITS 12
#define UW_CACHE_BUSY 1u
static struct {
    _Atomic uint64_t pc;
    _Atomic uint64_t slide;
    _Atomic(const struct cfi_row *) row;
} uw_cache[1u << UW_CACHE_BITS];

static size_t uw_cache_slot(uint64_t pc)
{
    return (size_t)((pc * 0x9E3779B97F4A7C15ull) >> (64 - UW_CACHE_BITS));
}

static const struct cfi_row *uw_row_search(const struct uw_image *im, uint64_t pc);

const struct cfi_row *uw_image_row(const struct uw_image *im, uint64_t pc)
{
    size_t i = uw_cache_slot(pc);
    uint64_t k = atomic_load_explicit(&uw_cache[i].pc, memory_order_acquire);
    if (k == pc) {
        uint64_t slide = atomic_load_explicit(&uw_cache[i].slide, memory_order_relaxed);
        const struct cfi_row *r = atomic_load_explicit(&uw_cache[i].row, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&uw_cache[i].pc, memory_order_relaxed) == k &&
            slide == im->slide && r >= im->rows && r < im->rows + im->nrows)
            return r;
    }
    const struct cfi_row *r = uw_row_search(im, pc);
    if (r && k != UW_CACHE_BUSY && pc != UW_CACHE_BUSY &&
        atomic_compare_exchange_strong(&uw_cache[i].pc, &k, UW_CACHE_BUSY)) {
        atomic_store_explicit(&uw_cache[i].slide, im->slide, memory_order_relaxed);
        atomic_store_explicit(&uw_cache[i].row, r, memory_order_relaxed);
        atomic_store_explicit(&uw_cache[i].pc, pc, memory_order_release);
    }
    return r;
}

static const struct cfi_row *uw_row_search(const struct uw_image *im, uint64_t pc)
{
    if (!im->rows || pc < im->slide || pc - im->slide > UINT32_MAX) return NULL;
    uint32_t loc = (uint32_t)(pc - im->slide);
    /* Rows before lo have loc <= this one and rows from hi on are past it, so the
     * answer, the last row with row.loc <= loc, is found between them. */
    size_t lo = 0, hi = im->nrows;
    if (im->pidx) {
        uint32_t p = loc >> UW_PIDX_SHIFT;
        if (p < im->pbase) return NULL; /* before the first row */
        p -= im->pbase;
        if (p >= im->npages) {
            lo = im->nrows - 1;
        } else {
            lo = im->pidx[p] ? im->pidx[p] - 1 : 0;
            hi = p + 1 < im->npages ? im->pidx[p + 1] : im->nrows;
        }
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (im->rows[mid].loc <= loc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0) return NULL;
    const struct cfi_row *r = &im->rows[lo - 1];
    return r->kind == CFI_NONE ? NULL : r;
}

/* ============================ building ============================ */

static const char *uw_path(const struct dl_phdr_info *info)
{
    return info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "(exe)";
}

/* The start index of d's rows (d->pidx stays NULL when its memory is not to be had:
 * lookups then search every row). */
static void uw_index(struct uw_image *d)
{
    if (!d->nrows) return;
    uint32_t first = d->rows[0].loc >> UW_PIDX_SHIFT;
    size_t np = (size_t)(d->rows[d->nrows - 1].loc >> UW_PIDX_SHIFT) - first + 1;
    size_t bytes = (np * sizeof(uint32_t) + 4095) & ~(size_t)4095;
    if (uw_st.bytes + bytes > UW_TABLE_BYTES_MAX) return;
    uint32_t *ix = rtmem_alloc(bytes);
    if (!ix) return;
    uint32_t k = 0;
    for (size_t p = 0; p < np; p++) {
        while (k < d->nrows && (d->rows[k].loc >> UW_PIDX_SHIFT) < first + p)
            k++;
        ix[p] = k;
    }
    uw_st.bytes += bytes;
    d->pidx = ix;
    d->pbase = first;
    d->npages = (uint32_t)np;
}

/* Builds (or finds again) the rows of one image. NULL rows: no usable CFI. */
static void uw_build(const struct dl_phdr_info *info, uint64_t text_lo, uint64_t text_hi,
                     struct uw_image *d)
{
    d->rows = NULL;
    d->nrows = 0;
    d->pidx = NULL;
    const ElfW(Phdr) *eh = NULL;
    struct cfi_mem mem = {0};
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_GNU_EH_FRAME) eh = ph;
        /* Readable and backed by the file (the vdso's memsz = filesz): reading cannot
         * fault. */
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && mem.n < CFI_MEM_SPANS) {
            mem.s[mem.n].lo = info->dlpi_addr + ph->p_vaddr;
            mem.s[mem.n].hi = info->dlpi_addr + ph->p_vaddr + ph->p_filesz;
            mem.n++;
        }
    }
    if (!eh) {
        uw_st.images_nocfi++;
        return;
    }
    const char *path = uw_path(info);
    uint64_t hdr = info->dlpi_addr + eh->p_vaddr;
    for (size_t i = 0; i < uw_nbuilt; i++) {
        const struct uw_built *b = &uw_built[i];
        if (b->hdr_rel == eh->p_vaddr && b->text_rel == text_lo - info->dlpi_addr &&
            b->text_size == text_hi - text_lo && strncmp(b->key, path, UW_KEY_MAX - 1) == 0) {
            d->rows = b->tab.rows;
            d->nrows = b->tab.nrows;
            d->pidx = b->tab.pidx;
            d->pbase = b->tab.pbase;
            d->npages = b->tab.npages;
            uw_st.reused++;
            return;
        }
    }
    if (uw_nbuilt == UW_DESCS) {
        uw_st.images_over++;
        return;
    }
    struct cfi_stats cs = {0};
    long need = cfi_decode_image(&mem, hdr, info->dlpi_addr, NULL, 0, &cs);
    if (need <= 0 || (uint64_t)need > UINT32_MAX) {
        uw_st.images_nocfi++;
        return;
    }
    size_t bytes = ((size_t)need * sizeof(struct cfi_row) + 4095) & ~(size_t)4095;
    if (uw_st.bytes + bytes > UW_TABLE_BYTES_MAX) {
        uw_st.images_over++;
        return;
    }
    struct cfi_row *r = rtmem_alloc(bytes);
    if (!r) {
        uw_st.images_over++;
        return;
    }
    memset(&cs, 0, sizeof(cs));
    long got = cfi_decode_image(&mem, hdr, info->dlpi_addr, r, (size_t)need, &cs);
    if (got < 0 || got > need) { /* cannot happen: the same bytes, read twice */
        rtmem_free(r, bytes);
        uw_st.images_nocfi++;
        return;
    }
    uw_st.bytes += bytes;
    d->rows = r;
    d->nrows = (uint32_t)got;
    uw_index(d);
    uw_st.rows += (uint64_t)got;
    uw_st.fdes += cs.fdes;
    uw_st.fdes_bad += cs.bad;
    uw_st.rows_unsupported += cs.unsupported;
    uw_st.images++;
    struct uw_built *b = &uw_built[uw_nbuilt++];
    size_t pl = strnlen(path, UW_KEY_MAX - 1);
    memcpy(b->key, path, pl);
    b->key[pl] = 0;
    b->hdr_rel = eh->p_vaddr;
    b->text_rel = text_lo - info->dlpi_addr;
    b->text_size = text_hi - text_lo;
    b->tab = *d;
}

static int uw_counters_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    unsigned long long *c = data;
    if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) return 1;
    c[0] = info->dlpi_adds;
    c[1] = info->dlpi_subs;
    return 1;
}

static int uw_visit_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            if (info->dlpi_addr + ph->p_vaddr < lo) lo = info->dlpi_addr + ph->p_vaddr;
            if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
                hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        }
    }
    if (hi <= lo) return 0;
    size_t n = atomic_load_explicit(&uw_nslots, memory_order_relaxed);
    for (size_t i = 0; i < n; i++) {
        const struct uw_image *im = atomic_load_explicit(&uw_slots[i], memory_order_relaxed);
        if (im && !uw_seen[i] && im->lo == lo && im->hi == hi && im->slide == info->dlpi_addr) {
            uw_seen[i] = 1;
            return 0;
        }
    }
    size_t slot = n;
    for (size_t i = 0; i < n; i++)
        if (!atomic_load_explicit(&uw_slots[i], memory_order_relaxed)) {
            slot = i;
            break;
        }
    if (slot == UW_SLOTS || uw_ndescs == UW_DESCS) {
        uw_st.images_over++;
        return 0;
    }
    struct uw_image *d = &uw_descs[uw_ndescs++];
    d->lo = lo;
    d->hi = hi;
    d->slide = info->dlpi_addr;
    uw_build(info, lo, hi, d);
    uw_seen[slot] = 1;
    atomic_store_explicit(&uw_slots[slot], d, memory_order_release);
    if (slot == n) atomic_store_explicit(&uw_nslots, n + 1, memory_order_release);
    return 0;
}

int uw_tables_refresh(void)
{
    unsigned long long c[2] = {0, 0};
    pthread_mutex_lock(&uw_mu);
    if (!uw_descs) {
        uw_descs = rtmem_alloc(sizeof(struct uw_image) * UW_DESCS);
        uw_built = rtmem_alloc(sizeof(struct uw_built) * UW_DESCS);
        if (!uw_descs || !uw_built) {
            rtmem_free(uw_descs, sizeof(struct uw_image) * UW_DESCS);
            rtmem_free(uw_built, sizeof(struct uw_built) * UW_DESCS);
            uw_descs = NULL;
            uw_built = NULL;
            pthread_mutex_unlock(&uw_mu);
            return -12; /* -ENOMEM */
        }
    }
    dl_iterate_phdr(uw_counters_cb, c);
    if (c[0] != uw_adds || c[1] != uw_subs) {
        size_t n = atomic_load_explicit(&uw_nslots, memory_order_relaxed);
        memset(uw_seen, 0, sizeof(uw_seen));
        dl_iterate_phdr(uw_visit_cb, NULL);
        /* Images gone: their slots are cleared (the descriptors stay mapped). New
         * slots taken this pass were marked seen. */
        size_t n2 = atomic_load_explicit(&uw_nslots, memory_order_relaxed);
        for (size_t i = 0; i < n2 && i < UW_SLOTS; i++)
            if (!uw_seen[i]) atomic_store_explicit(&uw_slots[i], NULL, memory_order_release);
        (void)n;
        uw_adds = c[0];
        uw_subs = c[1];
    }
    size_t live = 0, n = atomic_load_explicit(&uw_nslots, memory_order_relaxed);
    for (size_t i = 0; i < n; i++)
        if (atomic_load_explicit(&uw_slots[i], memory_order_relaxed)) live++;
    pthread_mutex_unlock(&uw_mu);
    return (int)live;
}

void uw_table_stats(struct uw_table_stats *out)
{
    pthread_mutex_lock(&uw_mu);
    *out = uw_st;
    pthread_mutex_unlock(&uw_mu);
}

/* fork: no fork inside a build (loader_fork.h); the parent's tables stay valid in
 * the child (the same mappings). */
__attribute__((constructor(101))) static void uw_table_init(void)
{
    loader_fork_guard(&uw_mu);
}
