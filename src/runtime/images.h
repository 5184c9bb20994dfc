/* The images (executable, shared libraries, the dynamic loader) mapped into this
 * process, as both profilers record them: the CPU profile's `images` (FORMATS.md §1)
 * and the heap profile's pprof mappings (FORMATS.md §2).
 *
 * The table is fixed-size and malloc-free. images_refresh() re-reads it through
 * dl_iterate_phdr when the loader's add/sub counters changed; an image unloaded
 * since is kept and marked (dlclose is interposed so that an image is recorded before
 * it goes away). Nothing here may run in a signal handler; everything may run inside
 * malloc. Readers need no lock: entries are only appended. */
#ifndef KESTREL_IMAGES_H
#define KESTREL_IMAGES_H
#include <stddef.h>
#include <stdint.h>

#define IMAGE_PATH_MAX 1024
#define IMAGE_BUILD_ID_MAX 64
#define IMAGES_MAX 1024

struct image {
    char path[IMAGE_PATH_MAX]; /* absolute path; the executable's from /proc/self/exe */
    uint64_t base;             /* where the ELF header is mapped (load base) */
    uint64_t slide;            /* dlpi_addr: relocation applied to the image */
    uint64_t text;             /* start of the span of PF_X PT_LOAD segments */
    uint64_t text_size;        /* its length; 0 when unknown */
    uint64_t text_offset;      /* file offset of that span's first byte */
    char arch[16];             /* "x86_64", "aarch64", "" when unknown */
    uint8_t
        build_id[IMAGE_BUILD_ID_MAX]; /* NT_GNU_BUILD_ID, from a PT_NOTE in a readable PT_LOAD */
    uint8_t build_id_len;             /* 0 when the image has none */
    uint8_t unloaded;                 /* 1 once the image left the process during the run */
};

/* Re-reads the loaded images if anything was loaded or unloaded since the last call
 * (and always on the first). Returns the number of images known, or -errno. */
int images_refresh(void);

/* The images known so far, loaded or not; valid until the next images_refresh(). */
size_t images_count(void);
const struct image *images_get(size_t i);

/* Images that could not be recorded because the table was full. */
size_t images_past_limit(void);

/* The loaded image whose executable span contains pc, or NULL. */
const struct image *images_find_text(uint64_t pc);

/* Lowercase hex of an image's build id into out (2*len+1 bytes); "" when none. */
void images_build_id_hex(const struct image *im, char *out, size_t out_size);

/* In a fork child: keeps the parent's images but those it had unloaded (images.c). */
void images_reset(void);
#endif
