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
    long fdes;           /* FDEs its header lists, -1 before it was read */
    uint64_t misses;     /* lookups made without the table */
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
    f->hdr_vaddr = have_hdr ? f->hdr_vaddr : 0;
    return f->n ? 0 : -1;
}

/* .eh_frame's address and size from the section headers, for an image that has no
 * .eh_frame_hdr (a static glibc program: gcc passes --eh-frame-hdr to dynamic links
 * only). 0, or -1 when there is none. */
static int eh_frame_section(int fd, uint64_t *addr, uint64_t *size)
{
    Elf64_Ehdr e;
    if (pread(fd, &e, sizeof e, 0) != (ssize_t)sizeof e || e.e_shentsize != sizeof(Elf64_Shdr) ||
        e.e_shnum == 0 || e.e_shnum > 4096 || e.e_shstrndx >= e.e_shnum)
        return -1;
    size_t n = e.e_shnum * sizeof(Elf64_Shdr);
    Elf64_Shdr *sh = malloc(n);
    if (!sh || pread(fd, sh, n, (off_t)e.e_shoff) != (ssize_t)n) return free(sh), -1;
    const Elf64_Shdr *ss = &sh[e.e_shstrndx];
    char *names = ss->sh_size < (1u << 24) ? malloc(ss->sh_size + 1) : NULL;
    int rc = -1;
    if (names && pread(fd, names, ss->sh_size, (off_t)ss->sh_offset) == (ssize_t)ss->sh_size) {
        names[ss->sh_size] = 0;
        for (int i = 0; i < e.e_shnum && rc; i++)
            if (sh[i].sh_name < ss->sh_size && !strcmp(names + sh[i].sh_name, ".eh_frame") &&
                sh[i].sh_addr && sh[i].sh_size)
                *addr = sh[i].sh_addr, *size = sh[i].sh_size, rc = 0;
    }
    free(names);
    free(sh);
    return rc;
}

/* A DW_EH_PE pointer of the encodings .eh_frame uses for pc_begin (absolute or pc-
 * relative, 4 or 8 bytes); at is its vaddr, p its bytes. 0 when not understood. */
static int eh_pc(uint8_t enc, const unsigned char *p, uint64_t at, uint64_t *v)
{
    switch (enc & 0x0f) {
    case 0x00: case 0x04: case 0x0c: memcpy(v, p, 8); break;
    case 0x03: { uint32_t x; memcpy(&x, p, 4); *v = x; break; }
    case 0x0b: { int32_t x; memcpy(&x, p, 4); *v = (uint64_t)(int64_t)x; break; }
    default: return 0;
    }
    if ((enc & 0x70) == 0x10) *v += at;
    else if (enc & 0x70) return 0;
    return 1;
}

/* The R encoding of the CIE at vaddr `at` (local bytes at l), 0 absptr. -1 unknown. */
static int cie_enc(const unsigned char *l, uint64_t avail)
{
    if (avail < 9) return -1;
    const unsigned char *p = l + 8, *end = l + avail; /* past length and id */
    if (*p != 1 && *p != 3) return -1;
    int version = *p++;
    const char *aug = (const char *)p;
    size_t na = strnlen(aug, (size_t)(end - p));
    if (p + na >= end || aug[0] != 'z') return aug[0] ? -1 : 0;
    p += na + 1;
    for (int k = 0; k < 3; k++) { /* code align, data align, return column */
        if (k == 2 && version == 1) {
            p++;
            continue;
        }
        while (p < end && (*p & 0x80)) p++;
        p++;
    }
    while (p < end && (*p & 0x80)) p++; /* augmentation length */
    p++;
    for (size_t i = 1; i < na && p < end; i++) {
        if (aug[i] == 'R') return *p;
        if (aug[i] == 'L') p++;
        else if (aug[i] == 'P') {
            uint8_t pe = *p++;
            p += (pe & 0x0f) == 0x0b || (pe & 0x0f) == 0x03 ? 4 : 8;
        } else if (aug[i] != 'S') return -1;
    }
    return 0;
}

static int pair_cmp(const void *a, const void *b)
{
    const int32_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Writes an .eh_frame_hdr for the .eh_frame at vaddr ef (size sz, local bytes at
 * local0 + ef) into out (cap bytes), which will be at vaddr hv: version 1, the table
 * datarel sdata4, sorted, as linkers write it. Returns its length, 0 when none. */
static size_t synth_hdr(uintptr_t local0, uint64_t ef, uint64_t sz, unsigned char *out,
                        size_t cap, uint64_t hv)
{
    if (cap < 12) return 0;
    const unsigned char *b = (const unsigned char *)(local0 + ef);
    int32_t *tab = (int32_t *)(out + 12);
    size_t n = 0, max = (cap - 12) / 8;
    for (uint64_t at = 0; at + 8 <= sz && n < max;) {
        uint32_t len, id;
        memcpy(&len, b + at, 4);
        if (len == 0 || len == 0xffffffffu || len > sz - at - 4) break;
        memcpy(&id, b + at + 4, 4);
        if (id != 0 && id <= at + 4) {
            uint64_t cie = at + 4 - id;
            uint32_t clen;
            memcpy(&clen, b + cie, 4);
            int enc = cie_enc(b + cie, (uint64_t)clen + 4);
            uint64_t pc;
            if (enc >= 0 && len >= 12 && eh_pc((uint8_t)enc, b + at + 8, ef + at + 8, &pc)) {
                int64_t lo = (int64_t)(pc - hv), fo = (int64_t)(ef + at - hv);
                if (lo == (int32_t)lo && fo == (int32_t)fo && pc)
                    tab[2 * n] = (int32_t)lo, tab[2 * n + 1] = (int32_t)fo, n++;
            }
        }
        at += 4 + (uint64_t)len;
    }
    if (!n) return 0;
    qsort(tab, n, 8, pair_cmp);
    int32_t efp = (int32_t)(int64_t)(ef - (hv + 4)), cnt = (int32_t)n;
    out[0] = 1, out[1] = 0x1b, out[2] = 0x03, out[3] = 0x3b; /* pcrel sdata4, udata4, datarel sdata4 */
    memcpy(out + 4, &efp, 4);
    memcpy(out + 8, &cnt, 4);
    return 12 + 8 * n;
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
    f->fdes = -1;
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
    /* Without .eh_frame_hdr, a search table is made for .eh_frame, in memory just past
     * the image (its vaddrs continue the image's: the table's offsets are 32 bits). */
    uint64_t ef = 0, efsz = 0;
    size_t extra = 0;
    if (!f->hdr_vaddr) {
        if (eh_frame_section(fd, &ef, &efsz) || efsz > (1u << 28)) goto fail;
        extra = (size_t)((12 + 8 * (efsz / 16 + 1) + pg - 1) & ~(pg - 1));
    }
    unsigned char *base = mmap(NULL, span + extra, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) goto fail;
    for (int i = 0; i < nph; i++) {
        if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_R) || !ph[i].p_filesz) continue;
        uint64_t va = ph[i].p_vaddr & ~(pg - 1), off = ph[i].p_offset & ~(pg - 1);
        size_t len = (size_t)(ph[i].p_vaddr + ph[i].p_filesz - va);
        if ((ph[i].p_vaddr - va) != (ph[i].p_offset - off) ||
            off + len > (uint64_t)sb.st_size + pg ||
            mmap(base + (va - vlo), len, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, (off_t)off) ==
                MAP_FAILED) {
            munmap(base, span + extra);
            goto fail;
        }
    }
    f->local0 = (uintptr_t)base - (uintptr_t)vlo;
    if (extra) {
        size_t len = 0;
        int inside = 0;
        for (int i = 0; i < f->n; i++) inside |= ef >= f->lo[i] && ef + efsz <= f->hi[i];
        if (inside && f->n < CFI_MEM_SPANS &&
            !mprotect(base + span, extra, PROT_READ | PROT_WRITE))
            len = synth_hdr(f->local0, ef, efsz, base + span, extra, vlo + span);
        if (!len) {
            munmap(base, span + extra);
            goto fail;
        }
        f->hdr_vaddr = vlo + span;
        f->lo[f->n] = f->hdr_vaddr, f->hi[f->n] = f->hdr_vaddr + len;
        f->n++;
    }
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
    f->fdes = -1;
    const Elf64_Phdr *ph;
    int nph;
    if (file_phdrs(f, bytes, len, &ph, &nph) || !f->hdr_vaddr) return free(uf), NULL;
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
    if (!f->built) {
        if (f->fdes < 0) f->fdes = cfi_count_fdes(&im->mem, im->hdr);
        if (f->fdes > 0 && f->misses < 2 * (uint64_t)f->fdes) {
            f->misses++;
            st.direct++;
            if (cfi_lookup(&im->mem, im->hdr, im->slide, pc, row) != 0)
                *row = (struct cfi_row){.kind = CFI_NONE};
            return row->kind != CFI_NONE;
        }
        build(f, im);
    }
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
