/* table.c — per-image unwind tables: images registered and their tables built on the
 * runtime's thread, searched anywhere (table.h).
 *
 * Signal handlers: uw_table_find(), uw_image_row(), uw_image_rows() (atomic loads and
 * stores, reads of immutable published memory, process_vm_readv and cfi_lookup() of a
 * mapped image). Inside malloc: those; uw_tables_refresh(), uw_tables_build() and
 * uw_tables_locked() are never called there (they take the loader's lock through
 * dl_iterate_phdr). dlopen is not interposed: glibc resolves a relative name with the
 * caller's RUNPATH, and a wrapper would become the caller.
 *
 * Publication: a slot holds one atomic pointer to an immutable struct uw_image; a
 * refresh stores a new pointer (release) into a free or retired slot, a reader loads
 * it (acquire) once and reads only through it. A file's table pointer is stored once
 * (release) after its rows. Descriptors, files and rows are never freed, so a reader
 * that loaded a pointer just before the image was retired reads memory that is still
 * the runtime's. Tables are built inside dl_iterate_phdr's callback: the loader's lock
 * is held, so the image cannot be unmapped while it is read.
 *
 * When to build: decoding one FDE into a table costs about what UW_BUILD_PER_FDE
 * lookups that read an FDE do (instruction counts, BENCHMARKS.md), so a file's table
 * is built once its lookups without one reach that many times its FDE count: a
 * process never pays much more than twice the cheaper of the two (the rent-or-buy
 * rule), and one that takes few samples decodes nothing. */
#include "runtime/unwind/table.h"
#include "runtime/loader_fork.h"
#include "runtime/rtmem.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define UW_KEY_MAX 256     /* bytes of an image's path kept to recognise it again */
#define UW_BUILD_MIN 8     /* lookups without a table before any table is built */
#define UW_BUILD_PER_FDE 2 /* lookups that cost what decoding one FDE into a table does */

/* An image file, shared by its mappings. The identity is written before the file is
 * published through a descriptor; `tab` is stored once, after `rows`. */
struct uw_file {
    char key[UW_KEY_MAX]; /* path */
    uint64_t hdr_rel;     /* .eh_frame_hdr - slide */
    uint64_t text_rel;    /* executable span - slide */
    uint64_t text_size;
    uint32_t fdes;                       /* FDEs its header lists */
    _Atomic uint32_t misses;             /* lookups made without the table */
    _Atomic(const struct uw_rows *) tab; /* &rows once built, NULL before */
    _Atomic uint8_t done;                /* a build was tried (the runtime's thread) */
    struct uw_rows rows;
};

/* How many lookups without its table a file takes before the table is built. */
static uint32_t uw_build_after(const struct uw_file *f)
{
    uint64_t n = (uint64_t)f->fdes * UW_BUILD_PER_FDE;
    return n < UW_BUILD_MIN ? UW_BUILD_MIN : n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

static _Atomic(const struct uw_image *) uw_slots[UW_SLOTS];
static _Atomic size_t uw_nslots;  /* slots ever used */
/* Descriptors and files live in blocks of UW_BLOCK, mapped as they are needed and never
 * moved (readers hold pointers into them): mapping UW_DESCS of each at once took 33 MiB
 * of address space from every profiled process, which a program under RLIMIT_AS lacks. */
#define UW_BLOCK 256u
static struct uw_image *uw_desc_blocks[UW_DESCS / UW_BLOCK];
static size_t uw_ndescs;
static struct uw_file *uw_file_blocks[UW_DESCS / UW_BLOCK];
static size_t uw_nfiles;
static int uw_descs; /* the first blocks are mapped */

/* Entry i of a table of blocks, its block mapped if it is not yet; NULL when it cannot be. */
static void *uw_block_entry(void **blocks, size_t size, size_t i)
{
    void **b = &blocks[i / UW_BLOCK];
    if (!*b) *b = rtmem_alloc(size * UW_BLOCK);
    return *b ? (char *)*b + size * (i % UW_BLOCK) : NULL;
}
#define uw_file_at(i) ((struct uw_file *)uw_block_entry((void **)uw_file_blocks, sizeof(struct uw_file), (i)))
#define uw_desc_at(i) ((struct uw_image *)uw_block_entry((void **)uw_desc_blocks, sizeof(struct uw_image), (i)))
static uint8_t uw_seen[UW_SLOTS];
static struct uw_table_stats uw_st;
static _Atomic uint64_t uw_ndirect; /* lookups read from an FDE */
static _Atomic int uw_want;         /* a file's lookups reached its threshold */
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

const struct uw_rows *uw_image_rows(const struct uw_image *im)
{
    return im->file ? atomic_load_explicit(&im->file->tab, memory_order_acquire) : NULL;
}

/* The rules found lately, shared by every walker (table.h): a walk meets the same
 * return addresses again and again (a program's hot stacks), and a hit costs a few
 * loads where a search costs a chain of dependent ones, and a lookup without a table
 * the decoding of an FDE. */
struct uw_cache_entry uw_cache[1u << UW_CACHE_BITS];

static const struct cfi_row *uw_row_search(const struct uw_rows *t, uint64_t slide, uint64_t pc);

/* Whether im's .eh_frame_hdr still begins as it did when im was registered, read by the
 * kernel (process_vm_readv fails where nothing is mapped, never faults): an image
 * unloaded since the last refresh and another loaded at its address would make im a
 * stale descriptor whose memory is no longer what it says. Where the call does not
 * exist or is refused (qemu-user: ENOSYS; a seccomp filter: EPERM), or cannot read an
 * image's header as it is registered, the check is skipped from then on: reading no
 * FDE there would leave every table unbuilt. errno is the caller's again on return (a
 * handler, malloc). */
static _Atomic int uw_vm_read = 1; /* 0: process_vm_readv unavailable */

static int uw_hdr_same(const struct uw_image *im)
{
    if (!atomic_load_explicit(&uw_vm_read, memory_order_relaxed)) return 1;
    int saved = errno;
    uint8_t now[sizeof im->hdr_head];
    struct iovec local = {now, sizeof now};
    struct iovec remote = {(void *)(uintptr_t)im->hdr, sizeof now};
    ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    int err = errno;
    errno = saved;
    if (got < 0 && (err == ENOSYS || err == EPERM)) {
        atomic_store_explicit(&uw_vm_read, 0, memory_order_relaxed);
        return 1;
    }
    return got == (ssize_t)sizeof now && memcmp(now, im->hdr_head, sizeof now) == 0;
}

int uw_image_row_slow(const struct uw_image *im, uint64_t pc, int direct, struct cfi_row *row)
{
    struct uw_file *f = im->file;
    if (!f) {
        *row = (struct cfi_row){.kind = CFI_NONE};
        return 0;
    }
    size_t i = uw_cache_slot(pc);
    uint64_t k = atomic_load_explicit(&uw_cache[i].pc, memory_order_acquire);
    const struct uw_rows *t = atomic_load_explicit(&f->tab, memory_order_acquire);
    if (t) {
        const struct cfi_row *r = uw_row_search(t, im->slide, pc);
        if (r)
            *row = *r;
        else
            *row = (struct cfi_row){.kind = CFI_NONE};
    } else if (!direct || (direct == UW_DIRECT_LIVE && !uw_hdr_same(im))) {
        return -1;
    } else {
        if (cfi_lookup(&im->mem, im->hdr, im->slide, pc, row) != 0)
            *row = (struct cfi_row){.kind = CFI_NONE};
        atomic_fetch_add_explicit(&uw_ndirect, 1, memory_order_relaxed);
        uint32_t m = atomic_fetch_add_explicit(&f->misses, 1, memory_order_relaxed) + 1;
        /* Asked again at every lookup past the threshold: a build finds the image only
         * where it is mapped at that moment. A file whose build failed asks no more. */
        if (m >= uw_build_after(f) && !atomic_load_explicit(&f->done, memory_order_relaxed))
            atomic_store_explicit(&uw_want, 1, memory_order_relaxed);
    }
    if (k != UW_CACHE_BUSY && pc != UW_CACHE_BUSY &&
        atomic_compare_exchange_strong(&uw_cache[i].pc, &k, UW_CACHE_BUSY)) {
        uint64_t w[2] = {0, 0};
        memcpy(w, row, sizeof *row);
        atomic_store_explicit(&uw_cache[i].im, im, memory_order_relaxed);
        atomic_store_explicit(&uw_cache[i].w[0], w[0], memory_order_relaxed);
        atomic_store_explicit(&uw_cache[i].w[1], w[1], memory_order_relaxed);
        atomic_store_explicit(&uw_cache[i].pc, pc, memory_order_release);
    }
    return row->kind != CFI_NONE;
}

static const struct cfi_row *uw_row_search(const struct uw_rows *t, uint64_t slide, uint64_t pc)
{
    if (!t->rows || pc < slide || pc - slide > UINT32_MAX) return NULL;
    uint32_t loc = (uint32_t)(pc - slide);
    /* Rows before lo have loc <= this one and rows from hi on are past it, so the
     * answer, the last row with row.loc <= loc, is found between them. */
    size_t lo = 0, hi = t->nrows;
    if (t->pidx) {
        uint32_t p = loc >> UW_PIDX_SHIFT;
        if (p < t->pbase) return NULL; /* before the first row */
        p -= t->pbase;
        if (p >= t->npages) {
            lo = t->nrows - 1;
        } else {
            lo = t->pidx[p] ? t->pidx[p] - 1 : 0;
            hi = p + 1 < t->npages ? t->pidx[p + 1] : t->nrows;
        }
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->rows[mid].loc <= loc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0) return NULL;
    const struct cfi_row *r = &t->rows[lo - 1];
    return r->kind == CFI_NONE ? NULL : r;
}

/* ============================ building ============================ */

static const char *uw_path(const struct dl_phdr_info *info)
{
    return info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "(exe)";
}

/* The start index of t's rows (t->pidx stays NULL when its memory is not to be had:
 * lookups then search every row). */
static void uw_index(struct uw_rows *t)
{
    if (!t->nrows) return;
    uint32_t first = t->rows[0].loc >> UW_PIDX_SHIFT;
    size_t np = (size_t)(t->rows[t->nrows - 1].loc >> UW_PIDX_SHIFT) - first + 1;
    size_t bytes = (np * sizeof(uint32_t) + 4095) & ~(size_t)4095;
    if (uw_st.bytes + bytes > UW_TABLE_BYTES_MAX) return;
    uint32_t *ix = rtmem_alloc(bytes);
    if (!ix) return;
    uint32_t k = 0;
    for (size_t p = 0; p < np; p++) {
        while (k < t->nrows && (t->rows[k].loc >> UW_PIDX_SHIFT) < first + p)
            k++;
        ix[p] = k;
    }
    uw_st.bytes += bytes;
    t->pidx = ix;
    t->pbase = first;
    t->npages = (uint32_t)np;
}

/* An image's executable span, its PT_GNU_EH_FRAME and readable memory. 0: no code. */
static int uw_scan(const struct dl_phdr_info *info, uint64_t *lo, uint64_t *hi, uint64_t *hdr,
                   struct cfi_mem *mem)
{
    *lo = UINT64_MAX;
    *hi = 0;
    *hdr = 0;
    memset(mem, 0, sizeof *mem);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uint64_t at = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            if (at < *lo) *lo = at;
            if (at + ph->p_memsz > *hi) *hi = at + ph->p_memsz;
        }
        if (ph->p_type == PT_GNU_EH_FRAME) *hdr = at;
        /* Readable and backed by the file (the vdso's memsz = filesz): reading cannot
         * fault while the image is mapped. */
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && mem->n < CFI_MEM_SPANS) {
            mem->s[mem->n].lo = at;
            mem->s[mem->n].hi = at + ph->p_filesz;
            mem->n++;
        }
    }
    return *hi > *lo;
}

/* The file of a new mapping, found again or made (NULL: no usable CFI). */
static struct uw_file *uw_file_of(const struct dl_phdr_info *info, const struct uw_image *d)
{
    if (!d->hdr) {
        uw_st.images_nocfi++;
        return NULL;
    }
    const char *path = uw_path(info);
    uint64_t hdr_rel = d->hdr - info->dlpi_addr, text_rel = d->lo - info->dlpi_addr;
    for (size_t i = 0; i < uw_nfiles; i++) {
        struct uw_file *f = uw_file_at(i);
        if (f->hdr_rel == hdr_rel && f->text_rel == text_rel && f->text_size == d->hi - d->lo &&
            strncmp(f->key, path, UW_KEY_MAX - 1) == 0) {
            if (atomic_load_explicit(&f->tab, memory_order_relaxed)) uw_st.reused++;
            return f;
        }
    }
    long fdes = cfi_count_fdes(&d->mem, d->hdr);
    if (fdes <= 0 || fdes > UINT32_MAX) {
        uw_st.images_nocfi++;
        return NULL;
    }
    struct uw_file *f = uw_nfiles < UW_DESCS ? uw_file_at(uw_nfiles) : NULL;
    if (!f) {
        uw_st.images_over++;
        return NULL;
    }
    uw_nfiles++;
    size_t pl = strnlen(path, UW_KEY_MAX - 1);
    memcpy(f->key, path, pl);
    f->key[pl] = 0;
    f->hdr_rel = hdr_rel;
    f->text_rel = text_rel;
    f->text_size = d->hi - d->lo;
    f->fdes = (uint32_t)fdes;
    return f;
}

/* Decodes d's file's table from d's mapping (the loader's lock held). */
static void uw_build(const struct uw_image *d)
{
    struct uw_file *f = d->file;
    atomic_store_explicit(&f->done, 1, memory_order_relaxed);
    struct cfi_stats cs = {0};
    long need = cfi_decode_image(&d->mem, d->hdr, d->slide, NULL, 0, &cs);
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
    long got = cfi_decode_image(&d->mem, d->hdr, d->slide, r, (size_t)need, &cs);
    if (got < 0 || got > need) { /* cannot happen: the same bytes, read twice */
        rtmem_free(r, bytes);
        uw_st.images_nocfi++;
        return;
    }
    uw_st.bytes += bytes;
    f->rows.rows = r;
    f->rows.nrows = (uint32_t)got;
    uw_index(&f->rows);
    uw_st.rows += (uint64_t)got;
    uw_st.fdes += cs.fdes;
    uw_st.fdes_bad += cs.bad;
    uw_st.rows_unsupported += cs.unsupported;
    uw_st.images++;
    atomic_store_explicit(&f->tab, &f->rows, memory_order_release);
}

static int uw_counters_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    unsigned long long *c = data;
    if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) return 1;
    c[0] = info->dlpi_adds;
    c[1] = info->dlpi_subs;
    return 1;
}

/* The registered slot of this mapping, or UW_SLOTS. */
static size_t uw_slot_of(uint64_t lo, uint64_t hi, uint64_t slide, uint64_t hdr)
{
    size_t n = atomic_load_explicit(&uw_nslots, memory_order_relaxed);
    for (size_t i = 0; i < n; i++) {
        const struct uw_image *im = atomic_load_explicit(&uw_slots[i], memory_order_relaxed);
        if (im && im->lo == lo && im->hi == hi && im->slide == slide && im->hdr == hdr) return i;
    }
    return UW_SLOTS;
}

static int uw_visit_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    uint64_t lo, hi, hdr;
    struct cfi_mem mem;
    if (!uw_scan(info, &lo, &hi, &hdr, &mem)) return 0;
    size_t have = uw_slot_of(lo, hi, info->dlpi_addr, hdr);
    if (have < UW_SLOTS && !uw_seen[have]) {
        uw_seen[have] = 1;
        return 0;
    }
    size_t n = atomic_load_explicit(&uw_nslots, memory_order_relaxed);
    size_t slot = n;
    for (size_t i = 0; i < n; i++)
        if (!atomic_load_explicit(&uw_slots[i], memory_order_relaxed)) {
            slot = i;
            break;
        }
    struct uw_image *d = slot < UW_SLOTS && uw_ndescs < UW_DESCS ? uw_desc_at(uw_ndescs) : NULL;
    if (!d) {
        uw_st.images_over++;
        return 0;
    }
    uw_ndescs++;
    d->lo = lo;
    d->hi = hi;
    d->slide = info->dlpi_addr;
    d->hdr = hdr;
    d->mem = mem;
    memset(d->hdr_head, 0, sizeof d->hdr_head);
    if (hdr) { /* mapped: the loader's lock is held; a header shorter than 16 bytes
                * (no FDE) has no file, and is never read again */
        uint64_t end = 0;
        for (int i = 0; i < mem.n; i++)
            if (hdr >= mem.s[i].lo && hdr < mem.s[i].hi) end = mem.s[i].hi;
        if (end - hdr >= sizeof d->hdr_head) {
            memcpy(d->hdr_head, (const void *)(uintptr_t)hdr, sizeof d->hdr_head);
            /* A kernel call that cannot read this mapped header here cannot check
             * any (an emulator that does not translate it): the check is skipped. */
            if (!uw_hdr_same(d)) atomic_store_explicit(&uw_vm_read, 0, memory_order_relaxed);
        }
    }
    d->file = uw_file_of(info, d);
    uw_st.mapped++;
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
        if (!uw_desc_at(0) || !uw_file_at(0)) {
            pthread_mutex_unlock(&uw_mu);
            return -12; /* -ENOMEM */
        }
        uw_descs = 1;
    }
    dl_iterate_phdr(uw_counters_cb, c);
    if (c[0] != uw_adds || c[1] != uw_subs) {
        memset(uw_seen, 0, sizeof(uw_seen));
        dl_iterate_phdr(uw_visit_cb, NULL);
        /* Images gone: their slots are cleared (the descriptors stay mapped). New
         * slots taken this pass were marked seen. */
        size_t n2 = atomic_load_explicit(&uw_nslots, memory_order_relaxed);
        for (size_t i = 0; i < n2 && i < UW_SLOTS; i++)
            if (!uw_seen[i]) atomic_store_explicit(&uw_slots[i], NULL, memory_order_release);
        uw_adds = c[0];
        uw_subs = c[1];
    }
    size_t live = 0, n = atomic_load_explicit(&uw_nslots, memory_order_relaxed);
    for (size_t i = 0; i < n; i++)
        if (atomic_load_explicit(&uw_slots[i], memory_order_relaxed)) live++;
    pthread_mutex_unlock(&uw_mu);
    return (int)live;
}

struct uw_build_pass {
    int all;
    int built;
};

static int uw_build_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct uw_build_pass *bp = data;
    uint64_t lo, hi, hdr;
    struct cfi_mem mem;
    if (!uw_scan(info, &lo, &hi, &hdr, &mem)) return 0;
    size_t i = uw_slot_of(lo, hi, info->dlpi_addr, hdr);
    const struct uw_image *d =
        i < UW_SLOTS ? atomic_load_explicit(&uw_slots[i], memory_order_relaxed) : NULL;
    if (!d || !d->file || atomic_load_explicit(&d->file->done, memory_order_relaxed)) return 0;
    if (!bp->all &&
        atomic_load_explicit(&d->file->misses, memory_order_relaxed) < uw_build_after(d->file))
        return 0;
    uw_build(d);
    bp->built++;
    return 0;
}

int uw_tables_build(int all)
{
    if (!all && !atomic_load_explicit(&uw_want, memory_order_relaxed)) return 0;
    struct uw_build_pass bp = {all, 0};
    pthread_mutex_lock(&uw_mu);
    atomic_store_explicit(&uw_want, 0, memory_order_relaxed);
    if (uw_descs) dl_iterate_phdr(uw_build_cb, &bp);
    pthread_mutex_unlock(&uw_mu);
    return bp.built;
}

struct uw_locked_call {
    void (*fn)(void *);
    void *arg;
    int ran;
};

static int uw_locked_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    struct uw_locked_call *c = data;
    if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) return 1;
    if (info->dlpi_adds == uw_adds && info->dlpi_subs == uw_subs) {
        c->fn(c->arg);
        c->ran = 1;
    }
    return 1;
}

int uw_tables_locked(void (*fn)(void *), void *arg)
{
    struct uw_locked_call c = {fn, arg, 0};
    pthread_mutex_lock(&uw_mu);
    if (uw_descs) dl_iterate_phdr(uw_locked_cb, &c);
    pthread_mutex_unlock(&uw_mu);
    return c.ran ? 0 : -EAGAIN;
}

void uw_table_stats(struct uw_table_stats *out)
{
    pthread_mutex_lock(&uw_mu);
    *out = uw_st;
    pthread_mutex_unlock(&uw_mu);
    out->direct = atomic_load_explicit(&uw_ndirect, memory_order_relaxed);
}

/* fork: no fork inside a build (loader_fork.h); the parent's tables stay valid in
 * the child (the same mappings). */
__attribute__((constructor(101))) static void uw_table_init(void)
{
    loader_fork_guard(&uw_mu);
}
