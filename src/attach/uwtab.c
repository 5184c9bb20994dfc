/* uwtab.c — table.h's interface over another process's images (uwtab.h).
 *
 * Tables are built whole at an image's first lookup: the CLI is not inside the
 * program, and decoding libc's 3,000 FDEs costs it about a millisecond. Files and
 * their tables live until the CLI ends. */
#include "attach/uwtab.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct uw_file {
    dev_t dev;
    ino_t ino;
    int memory;          /* bytes read from the target (the vdso), not a file */
    uint64_t hdr_vaddr;  /* .eh_frame_hdr's p_vaddr */
    uintptr_t local0;    /* where vaddr 0 would be in this process */
    int n;               /* readable spans, in vaddrs */
    uint64_t lo[CFI_MEM_SPANS], hi[CFI_MEM_SPANS];
    int built;           /* a build was tried */
    struct uw_rows rows; /* sorted by loc (vaddr), no start index */
};

struct uwtab_file {
    struct uw_file f;
};

static struct uwtab_file **files;
static size_t n_files, cap_files;
static const struct uwtab_set *cur;
static struct uw_table_stats st;

struct uw_cache_entry uw_cache[1u << UW_CACHE_BITS]; /* left empty: lookups search rows */

/* ============================ files ============================ */

static struct uwtab_file *file_keep(struct uwtab_file *f)
{
    if (n_files == cap_files) {
        size_t c = cap_files ? 2 * cap_files : 64;
        void *p = realloc(files, c * sizeof *files);
        if (!p) return NULL;
        files = p, cap_files = c;
    }
    return files[n_files++] = f;
}

/* The spans and .eh_frame_hdr of the ELF image whose headers are at eh (ehsize bytes
 * readable there). 0, or -1 when it is not an ELF image of this machine or has no
 * .eh_frame_hdr. */
static int file_phdrs(struct uw_file *f, const unsigned char *eh, size_t ehsize,
                      const Elf64_Phdr **ph_out, int *nph)
{
    const Elf64_Ehdr *e = (const Elf64_Ehdr *)eh;
    if (ehsize < sizeof *e || memcmp(e->e_ident, ELFMAG, SELFMAG) ||
        e->e_ident[EI_CLASS] != ELFCLASS64 || e->e_phentsize != sizeof(Elf64_Phdr) ||
        e->e_phoff > ehsize || (ehsize - e->e_phoff) / sizeof(Elf64_Phdr) < e->e_phnum)
        return -1;
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(eh + e->e_phoff);
    int have_hdr = 0;
    for (int i = 0; i < e->e_phnum; i++) {
        if (ph[i].p_type == PT_GNU_EH_FRAME) f->hdr_vaddr = ph[i].p_vaddr, have_hdr = 1;
        if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_R) && f->n < CFI_MEM_SPANS) {
            f->lo[f->n] = ph[i].p_vaddr;
            f->hi[f->n] = ph[i].p_vaddr + ph[i].p_filesz;
            f->n++;
        }
    }
    *ph_out = ph;
    *nph = e->e_phnum;
    return have_hdr && f->n ? 0 : -1;
}

struct uwtab_file *uwtab_file(int fd, dev_t dev, ino_t ino)
{
    for (size_t i = 0; i < n_files; i++)
        if (!files[i]->f.memory && files[i]->f.dev == dev && files[i]->f.ino == ino)
            return files[i];
    struct stat sb;
    if (fstat(fd, &sb) || sb.st_size < (off_t)sizeof(Elf64_Ehdr)) return NULL;
    size_t hsz = sb.st_size < 65536 ? (size_t)sb.st_size : 65536;
    unsigned char *head = malloc(hsz);
    struct uwtab_file *uf = calloc(1, sizeof *uf);
    if (!head || !uf || pread(fd, head, hsz, 0) != (ssize_t)hsz) goto fail;
    struct uw_file *f = &uf->f;
    f->dev = dev, f->ino = ino;
    const Elf64_Phdr *ph;
    int nph;
    if (file_phdrs(f, head, hsz, &ph, &nph)) goto fail;
    /* The readable PT_LOAD segments at their relative places, as the loader maps them
     * (page-aligned offsets and addresses: p_vaddr = p_offset modulo the page). */
    uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE), vlo = UINT64_MAX, vhi = 0;
    for (int i = 0; i < nph; i++)
        if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_R)) {
            if ((ph[i].p_vaddr & ~(pg - 1)) < vlo) vlo = ph[i].p_vaddr & ~(pg - 1);
            if (ph[i].p_vaddr + ph[i].p_filesz > vhi) vhi = ph[i].p_vaddr + ph[i].p_filesz;
        }
    if (vhi <= vlo || vhi - vlo > (1ull << 34)) goto fail;
    size_t span = (size_t)((vhi - vlo + pg - 1) & ~(pg - 1));
    unsigned char *base = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) goto fail;
    for (int i = 0; i < nph; i++) {
        if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_R) || !ph[i].p_filesz) continue;
        uint64_t va = ph[i].p_vaddr & ~(pg - 1), off = ph[i].p_offset & ~(pg - 1);
        size_t len = (size_t)(ph[i].p_vaddr + ph[i].p_filesz - va);
        if ((ph[i].p_vaddr - va) != (ph[i].p_offset - off) ||
            off + len > (uint64_t)sb.st_size + pg ||
            mmap(base + (va - vlo), len, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, (off_t)off) ==
                MAP_FAILED) {
            munmap(base, span);
            goto fail;
        }
    }
    f->local0 = (uintptr_t)base - (uintptr_t)vlo;
    free(head);
    if (file_keep(uf)) return uf;
    return NULL;
fail:
    free(head);
    free(uf);
    return NULL;
}

struct uwtab_file *uwtab_file_memory(const void *bytes, size_t len, uint64_t at)
{
    struct uwtab_file *uf = calloc(1, sizeof *uf);
    if (!uf) return NULL;
    struct uw_file *f = &uf->f;
    f->memory = 1;
    const Elf64_Phdr *ph;
    int nph;
    if (file_phdrs(f, bytes, len, &ph, &nph)) return free(uf), NULL;
    (void)at;
    /* The vdso is one mapping: its vaddr 0 is its first byte. Spans past the bytes
     * read are cut to them. */
    for (int i = 0; i < f->n; i++) {
        if (f->hi[i] > len) f->hi[i] = len;
        if (f->lo[i] > f->hi[i]) f->lo[i] = f->hi[i];
    }
    f->local0 = (uintptr_t)bytes;
    return file_keep(uf);
}

/* ============================ images ============================ */

int uwtab_add(struct uwtab_set *s, struct uwtab_file *uf, uint64_t lo, uint64_t hi,
              uint64_t slide)
{
    struct uw_image *im = calloc(1, sizeof *im);
    if (!im) return -1;
    im->lo = lo, im->hi = hi, im->slide = slide;
    if (uf) {
        struct uw_file *f = &uf->f;
        im->file = f;
        im->hdr = slide + f->hdr_vaddr;
        im->mem.n = f->n;
        for (int i = 0; i < f->n; i++)
            im->mem.s[i].lo = slide + f->lo[i], im->mem.s[i].hi = slide + f->hi[i];
        im->mem.bias = (intptr_t)(f->local0 - (uintptr_t)slide);
    } else {
        st.images_nocfi++;
    }
    st.mapped++;
    if (s->n == s->cap) {
        size_t c = s->cap ? 2 * s->cap : 32;
        void *p = realloc(s->im, c * sizeof *s->im);
        if (!p) return free(im), -1;
        s->im = p, s->cap = c;
    }
    size_t k = s->n;
    while (k > 0 && s->im[k - 1]->lo > lo) k--;
    memmove(&s->im[k + 1], &s->im[k], (s->n - k) * sizeof *s->im);
    s->im[k] = im;
    s->n++;
    return 0;
}

void uwtab_set_free(struct uwtab_set *s)
{
    for (size_t i = 0; i < s->n; i++) free(s->im[i]);
    free(s->im);
    memset(s, 0, sizeof *s);
}

void uwtab_use(const struct uwtab_set *s)
{
    cur = s;
}

/* ============================ table.h ============================ */

const struct uw_image *uw_table_find(uint64_t pc)
{
    if (!cur) return NULL;
    size_t lo = 0, hi = cur->n;
    while (lo < hi) { /* the last image with lo <= pc */
        size_t mid = lo + (hi - lo) / 2;
        if (cur->im[mid]->lo <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0) return NULL;
    const struct uw_image *im = cur->im[lo - 1];
    return pc < im->hi ? im : NULL;
}

int uw_tables_ready(void)
{
    return cur && cur->n;
}

const struct uw_rows *uw_image_rows(const struct uw_image *im)
{
    return im->file && im->file->rows.rows ? &im->file->rows : NULL;
}

/* Decodes f's whole table through the mapping im. */
static void build(struct uw_file *f, const struct uw_image *im)
{
    f->built = 1;
    struct cfi_stats cs = {0};
    long need = cfi_decode_image(&im->mem, im->hdr, im->slide, NULL, 0, &cs);
    if (need <= 0) {
        st.images_nocfi++;
        return;
    }
    struct cfi_row *r = malloc((size_t)need * sizeof *r);
    if (!r) {
        st.images_over++;
        return;
    }
    memset(&cs, 0, sizeof cs);
    long got = cfi_decode_image(&im->mem, im->hdr, im->slide, r, (size_t)need, &cs);
    if (got < 0 || got > need) {
        free(r);
        st.images_nocfi++;
        return;
    }
    f->rows.rows = r;
    f->rows.nrows = (uint32_t)got;
    st.images++;
    st.rows += (uint64_t)got;
    st.bytes += (uint64_t)need * sizeof *r;
    st.fdes += cs.fdes;
    st.fdes_bad += cs.bad;
    st.rows_unsupported += cs.unsupported;
}

int uw_image_row_slow(const struct uw_image *im, uint64_t pc, int direct, struct cfi_row *row)
{
    (void)direct; /* every image here is a mapping of this process's own: always readable */
    struct uw_file *f = im->file;
    *row = (struct cfi_row){.kind = CFI_NONE};
    if (!f) return 0;
    if (!f->built) build(f, im);
    const struct uw_rows *t = &f->rows;
    if (!t->rows || pc < im->slide || pc - im->slide > UINT32_MAX) return 0;
    uint32_t loc = (uint32_t)(pc - im->slide);
    size_t lo = 0, hi = t->nrows;
    while (lo < hi) { /* the last row with loc <= pc's */
        size_t mid = lo + (hi - lo) / 2;
        if (t->rows[mid].loc <= loc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0) return 0;
    *row = t->rows[lo - 1];
    return row->kind != CFI_NONE;
}

/* The walker's copies of a stack are walked with direct reads already: the images
 * are files mapped by this process, which stay mapped. */
int uw_tables_locked(void (*fn)(void *), void *arg)
{
    fn(arg);
    return 0;
}

int uw_tables_refresh(void)
{
    return cur ? (int)cur->n : 0;
}

int uw_tables_build(int all)
{
    (void)all;
    return 0;
}

void uw_table_stats(struct uw_table_stats *out)
{
    *out = st;
}
