/* symtab.c — function names for /debug/pprof/symbol (http.h), from the ELF symbol
 * tables (.symtab, else .dynsym: both when present) of the loaded images' files, read
 * on the server thread the first time an address falls in an image and kept for the
 * process's life (at most SYMTAB_IMAGES images; the table is dropped whole past that).
 *
 * The file is mapped read-only and stays mapped: names point into its string table,
 * and its pages are the page cache's, not the program's memory. Names are as the
 * symbol table has them (C++ and Rust mangled: go tool pprof demangles them).
 * An image whose file is gone or changed (different build id) gets no names.
 *
 * Server thread only. Signal handlers: nothing. Inside malloc: nothing. */
#include "runtime/http/http.h"
#include "runtime/images.h"
#include "runtime/maps.h"
#include "runtime/rtmem.h"

#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define SYMTAB_IMAGES 256

struct st_sym {
    uint64_t value, size;
    const char *name;
};

struct st_image {
    uint64_t base, slide;
    char path[IMAGE_PATH_MAX];
    void *file; /* the mapped file, NULL when unreadable */
    size_t file_size;
    struct st_sym *syms; /* sorted by value */
    size_t nsyms, syms_bytes;
};

static struct st_image *st_cache; /* SYMTAB_IMAGES, mapped on first use */
static size_t st_n;

static void st_sift(struct st_sym *a, size_t i, size_t n)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) return;
        if (c + 1 < n && a[c + 1].value > a[c].value) c++;
        if (a[c].value <= a[i].value) return;
        struct st_sym t = a[i];
        a[i] = a[c];
        a[c] = t;
        i = c;
    }
}

/* Heapsort: qsort may allocate, and this needs no more than the array. */
static void st_sort(struct st_sym *a, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        st_sift(a, i, n);
    for (size_t k = n; k-- > 1;) {
        struct st_sym t = a[0];
        a[0] = a[k];
        a[k] = t;
        st_sift(a, 0, k);
    }
}

/* The functions of one symbol table section into im->syms (appended). */
static void st_read_section(struct st_image *im, const Elf64_Shdr *sh, const Elf64_Shdr *shs,
                            size_t shnum)
{
    const uint8_t *f = im->file;
    if (sh->sh_link >= shnum || sh->sh_entsize != sizeof(Elf64_Sym)) return;
    const Elf64_Shdr *strs = &shs[sh->sh_link];
    if (sh->sh_offset + sh->sh_size > im->file_size ||
        strs->sh_offset + strs->sh_size > im->file_size || !strs->sh_size)
        return;
    const Elf64_Sym *sym = (const Elf64_Sym *)(f + sh->sh_offset);
    size_t n = sh->sh_size / sizeof(Elf64_Sym);
    const char *str = (const char *)f + strs->sh_offset;
    if (str[strs->sh_size - 1] != 0) return; /* names must end inside the table */
    for (size_t i = 0; i < n; i++) {
        int type = ELF64_ST_TYPE(sym[i].st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || !sym[i].st_value ||
            sym[i].st_shndx == SHN_UNDEF || sym[i].st_name >= strs->sh_size ||
            !str[sym[i].st_name])
            continue;
        if ((im->nsyms + 1) * sizeof(struct st_sym) > im->syms_bytes) {
            size_t nb = im->syms_bytes ? 2 * im->syms_bytes : 64 * 1024;
            struct st_sym *g = rtmem_alloc(nb);
            if (!g) return;
            if (im->syms) {
                memcpy(g, im->syms, im->nsyms * sizeof(struct st_sym));
                rtmem_free(im->syms, im->syms_bytes);
            }
            im->syms = g;
            im->syms_bytes = nb;
        }
        im->syms[im->nsyms++] =
            (struct st_sym){sym[i].st_value, sym[i].st_size, str + sym[i].st_name};
    }
}

/* The build id of the mapped file (its first NT_GNU_BUILD_ID note); 0 when none. */
static size_t st_build_id(const struct st_image *im, const Elf64_Ehdr *eh, const uint8_t **id)
{
    const uint8_t *f = im->file;
    if (eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > im->file_size) return 0;
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(f + eh->e_phoff);
    for (size_t i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type != PT_NOTE || ph[i].p_offset + ph[i].p_filesz > im->file_size) continue;
        const uint8_t *p = f + ph[i].p_offset, *end = p + ph[i].p_filesz;
        while (p + sizeof(Elf64_Nhdr) <= end) {
            const Elf64_Nhdr *nh = (const Elf64_Nhdr *)p;
            size_t name = (nh->n_namesz + 3) & ~3u, desc = (nh->n_descsz + 3) & ~3u;
            const uint8_t *d = p + sizeof(*nh) + name;
            if (d + desc > end) break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
                !memcmp(p + sizeof(*nh), "GNU", 4)) {
                *id = d;
                return nh->n_descsz;
            }
            p = d + desc;
        }
    }
    return 0;
}

static void st_load(struct st_image *im, const struct image *src)
{
    int fd = open(src->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size < sizeof(Elf64_Ehdr)) {
        close(fd);
        return;
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd); /* the mapping stays; the descriptor is not kept */
    if (m == MAP_FAILED) return;
    im->file = m;
    im->file_size = (size_t)st.st_size;
    const Elf64_Ehdr *eh = m;
    const Elf64_Shdr *shs = (const Elf64_Shdr *)((const uint8_t *)m + eh->e_shoff);
    const uint8_t *id = NULL;
    size_t idn = 0;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shentsize != sizeof(Elf64_Shdr) ||
        eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > im->file_size ||
        (src->build_id_len &&
         ((idn = st_build_id(im, eh, &id)) != src->build_id_len ||
          memcmp(id, src->build_id, idn) != 0))) {
        munmap(m, im->file_size); /* not the image that is loaded */
        im->file = NULL;
        return;
    }
    for (int want = SHT_SYMTAB; want; want = want == SHT_SYMTAB ? SHT_DYNSYM : 0)
        for (size_t i = 0; i < eh->e_shnum; i++)
            if (shs[i].sh_type == (Elf64_Word)want) st_read_section(im, &shs[i], shs, eh->e_shnum);
    st_sort(im->syms, im->nsyms);
}

static void st_drop_all(void)
{
    for (size_t i = 0; i < st_n; i++) {
        if (st_cache[i].file) munmap(st_cache[i].file, st_cache[i].file_size);
        rtmem_free(st_cache[i].syms, st_cache[i].syms_bytes);
    }
    st_n = 0;
}

static struct st_image *st_image_for(const struct image *src)
{
    if (!st_cache && !(st_cache = rtmem_alloc(SYMTAB_IMAGES * sizeof(struct st_image))))
        return NULL;
    for (size_t i = 0; i < st_n; i++)
        if (st_cache[i].base == src->base && st_cache[i].slide == src->slide &&
            !strcmp(st_cache[i].path, src->path))
            return &st_cache[i];
    if (st_n == SYMTAB_IMAGES) st_drop_all();
    struct st_image *im = &st_cache[st_n++];
    memset(im, 0, sizeof(*im));
    im->base = src->base;
    im->slide = src->slide;
    memcpy(im->path, src->path, sizeof(im->path));
    st_load(im, src);
    return im;
}

const char *symtab_lookup(uint64_t addr)
{
    maps_refresh_all();
    const struct image *src = images_find_text(addr);
    if (!src) return NULL;
    struct st_image *im = st_image_for(src);
    if (!im || !im->nsyms) return NULL;
    uint64_t v = addr - src->slide;
    size_t lo = 0, hi = im->nsyms; /* the last symbol at or below v */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (im->syms[mid].value <= v)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo) return NULL;
    const struct st_sym *s = &im->syms[lo - 1];
    /* Sized symbols must contain v; a symbol of size 0 reaches up to the next. Several
     * names at one address (aliases): the first in sort order is as good as any. */
    if (s->size && v - s->value >= s->size) {
        /* an alias with a larger size at the same address may contain it */
        for (size_t k = lo - 1; k-- > 0 && im->syms[k].value == s->value;)
            if (im->syms[k].size && v - im->syms[k].value < im->syms[k].size) return im->syms[k].name;
        return NULL;
    }
    return s->name;
}

void symtab_forget(void)
{
    st_cache = NULL; /* a fork child keeps the parent's mappings: harmless, not reused */
    st_n = 0;
}
