/* images.c — the table of images mapped into this process (images.h).
 *
 * Signal handlers: nothing here. Inside malloc: everything (no allocation; the table
 * is one mmap'd array). images_refresh() is serialised by a mutex; readers need no
 * lock because entries are only ever appended and the count is published after the
 * entry it covers (release/acquire). images_reset() runs only in a fork child. */
#include "runtime/images.h"
#include "runtime/loader_fork.h"
#include "runtime/rtmem.h"

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

static struct image *images_tab; /* IMAGES_MAX entries, mmap'd on first use */
static _Atomic size_t images_n;  /* entries published */
static size_t images_over;       /* images seen after the table was full */
static unsigned long long images_adds = ~0ull, images_subs = ~0ull; /* loader counters */
static pthread_mutex_t images_mu = PTHREAD_MUTEX_INITIALIZER;

/* One refresh pass: which known entries were seen again. */
static uint8_t images_seen[IMAGES_MAX];

/* ===================== ELF details of one loaded object ===================== */

static const char *images_arch_of(uint16_t machine)
{
    switch (machine) {
    case EM_X86_64:
        return "x86_64";
    case EM_AARCH64:
        return "aarch64";
    case EM_386:
        return "i386";
    default:
        return "";
    }
}

/* True when [addr, addr+len) lies inside a PT_LOAD that is readable and backed by the
 * file, so reading it cannot fault. */
static int images_readable(const struct dl_phdr_info *info, ElfW(Addr) vaddr, size_t len)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && vaddr >= ph->p_vaddr &&
            vaddr + len <= ph->p_vaddr + ph->p_filesz && vaddr + len >= vaddr)
            return 1;
    }
    return 0;
}

static void images_read_build_id(const struct dl_phdr_info *info, struct image *im)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE || !images_readable(info, ph->p_vaddr, ph->p_memsz)) continue;
        const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        const uint8_t *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            size_t name_sz = (nh->n_namesz + 3) & ~3u, desc_sz = (nh->n_descsz + 3) & ~3u;
            const uint8_t *name = p + sizeof(*nh), *desc = name + name_sz;
            if (desc + desc_sz > end || desc + desc_sz < p) break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
                nh->n_descsz > 0 && nh->n_descsz <= IMAGE_BUILD_ID_MAX) {
                memcpy(im->build_id, desc, nh->n_descsz);
                im->build_id_len = (uint8_t)nh->n_descsz;
                return;
            }
            p = desc + desc_sz;
        }
    }
}

static void images_describe(const struct dl_phdr_info *info, struct image *im)
{
    memset(im, 0, sizeof(*im));
    const char *name = info->dlpi_name;
    if (!name || !name[0]) { /* the executable */
        ssize_t n = readlink("/proc/self/exe", im->path, sizeof(im->path) - 1);
        im->path[n > 0 ? n : 0] = 0;
    } else {
        size_t n = strnlen(name, sizeof(im->path) - 1);
        memcpy(im->path, name, n);
        im->path[n] = 0;
    }
    im->slide = info->dlpi_addr;

    uint64_t tlo = UINT64_MAX, thi = 0;
    int have_base = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        if (!have_base) { /* the first PT_LOAD maps the ELF header */
            im->base = info->dlpi_addr + ph->p_vaddr - ph->p_offset;
            have_base = 1;
            if (ph->p_offset == 0 && images_readable(info, ph->p_vaddr, sizeof(ElfW(Ehdr)))) {
                const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)(info->dlpi_addr + ph->p_vaddr);
                if (memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0) {
                    const char *a = images_arch_of(eh->e_machine);
                    memcpy(im->arch, a, strlen(a) + 1);
                }
            }
        }
        if (ph->p_flags & PF_X) {
            if (ph->p_vaddr < tlo) {
                tlo = ph->p_vaddr;
                im->text_offset = ph->p_offset;
            }
            if (ph->p_vaddr + ph->p_memsz > thi) thi = ph->p_vaddr + ph->p_memsz;
        }
    }
    if (thi > tlo) {
        im->text = info->dlpi_addr + tlo;
        im->text_size = thi - tlo;
    }
    images_read_build_id(info, im);
}

/* ============================ refresh ============================ */

static int images_counters_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    unsigned long long *c = data;
    if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) return 1;
    c[0] = info->dlpi_adds;
    c[1] = info->dlpi_subs;
    return 1; /* the counters are the same in every entry: one is enough */
}

static int images_visit_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    struct image tmp;
    images_describe(info, &tmp);
    size_t n = atomic_load_explicit(&images_n, memory_order_relaxed);
    for (size_t i = 0; i < n; i++) {
        struct image *im = &images_tab[i];
        if (!images_seen[i] && !im->unloaded && im->base == tmp.base && im->slide == tmp.slide &&
            strcmp(im->path, tmp.path) == 0) {
            images_seen[i] = 1;
            return 0;
        }
    }
    if (n >= IMAGES_MAX) {
        images_over++;
        return 0;
    }
    images_tab[n] = tmp;
    images_seen[n] = 1;
    atomic_store_explicit(&images_n, n + 1, memory_order_release);
    return 0;
}

int images_refresh(void)
{
    unsigned long long c[2] = {0, 0};
    pthread_mutex_lock(&images_mu);
    if (!images_tab) {
        images_tab = rtmem_alloc(sizeof(struct image) * IMAGES_MAX);
        if (!images_tab) {
            pthread_mutex_unlock(&images_mu);
            return -12; /* -ENOMEM */
        }
    }
    dl_iterate_phdr(images_counters_cb, c);
    if (c[0] != images_adds || c[1] != images_subs) {
        size_t n = atomic_load_explicit(&images_n, memory_order_relaxed);
        memset(images_seen, 0, n);
        dl_iterate_phdr(images_visit_cb, NULL);
        for (size_t i = 0; i < n; i++)
            if (!images_seen[i]) images_tab[i].unloaded = 1;
        images_adds = c[0];
        images_subs = c[1];
    }
    int r = (int)atomic_load_explicit(&images_n, memory_order_relaxed);
    pthread_mutex_unlock(&images_mu);
    return r;
}

size_t images_count(void)
{
    return atomic_load_explicit(&images_n, memory_order_acquire);
}

const struct image *images_get(size_t i)
{
    return i < images_count() ? &images_tab[i] : NULL;
}

size_t images_past_limit(void)
{
    return images_over;
}

const struct image *images_find_text(uint64_t pc)
{
    size_t n = images_count();
    for (size_t i = 0; i < n; i++) {
        const struct image *im = &images_tab[i];
        if (!im->unloaded && pc - im->text < im->text_size) return im;
    }
    return NULL;
}

void images_build_id_hex(const struct image *im, char *out, size_t out_size)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (size_t i = 0; i < im->build_id_len && o + 2 < out_size; i++) {
        out[o++] = hex[im->build_id[i] >> 4];
        out[o++] = hex[im->build_id[i] & 15];
    }
    if (out_size) out[o < out_size ? o : out_size - 1] = 0;
}

/* fork: no fork inside a refresh (loader_fork.h). */
__attribute__((constructor(101))) static void images_init(void)
{
    loader_fork_guard(&images_mu);
}

/* A fork child's images are its parent's, less those the parent had unloaded: the same
 * mappings and the same loader counters, so nothing is described again inside fork
 * (each image a dl_iterate_phdr visit, its build-id notes, the executable's readlink
 * of /proc/self/exe). Only a table that was full is read anew. */
void images_reset(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    images_mu = fresh;
    size_t n = atomic_load(&images_n), kept = 0;
    for (size_t i = 0; i < n; i++)
        if (!images_tab[i].unloaded) images_tab[kept++] = images_tab[i];
    atomic_store(&images_n, kept);
    if (images_over) images_adds = images_subs = ~0ull;
    images_over = 0;
}

/* ====================== dlclose: record before unload ====================== */

#include "runtime/interpose.h"

/* An image that is loaded and unloaded between two refreshes would otherwise leave no
 * trace; refresh first (only when a profiler reads the table at all). */
KESTREL_INTERPOSE int dlclose(void *handle)
{
    if (images_tab) images_refresh();
    return REAL(dlclose)(handle);
}
