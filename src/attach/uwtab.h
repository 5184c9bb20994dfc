/* uwtab — the unwind tables of the attached host: the runtime's walker
 * (src/runtime/unwind/step.c, cfi.c) compiled into the CLI over another process's
 * images. table.h's interface, provided here instead of by the runtime's table.c: an
 * image is registered from /proc/PID/maps (not dl_iterate_phdr), its CFI read from a
 * copy of its file mapped into this process (struct cfi_mem's bias), its table built at
 * its first lookup (the CLI may take its time), shared by every process that maps the
 * same file. One process's images at a time are the walker's: uwtab_use() picks them.
 *
 * Nothing here runs in a signal handler; one thread (the recording's). */
#ifndef KESTREL_ATTACH_UWTAB_H
#define KESTREL_ATTACH_UWTAB_H
#include "runtime/unwind/table.h"

#include <sys/types.h>

/* A file's CFI as this process reads it: its readable PT_LOAD segments mapped here at
 * their relative addresses, its .eh_frame_hdr's address relative to the slide. */
struct uwtab_file;

/* The file open at fd (a copy of what the target maps; dev/ino identify it), mapped for
 * CFI reads; the same file asked again is found again. NULL when it has no usable
 * .eh_frame_hdr (walked by frame pointer) or cannot be mapped. */
struct uwtab_file *uwtab_file(int fd, dev_t dev, ino_t ino);

/* Memory already in this process (the vdso's bytes, read from the target): len bytes
 * whose first is the target's address `at`, an ELF image mapped at that address. */
struct uwtab_file *uwtab_file_memory(const void *bytes, size_t len, uint64_t at);

/* A set of images: one process's address space. */
struct uwtab_set {
    struct uw_image **im; /* sorted by lo, disjoint */
    size_t n, cap;
};

/* Adds a mapping of f (NULL: no CFI) at slide with executable span [lo, hi). 0 or -1. */
int uwtab_add(struct uwtab_set *s, struct uwtab_file *f, uint64_t lo, uint64_t hi,
              uint64_t slide);
void uwtab_set_free(struct uwtab_set *s);

/* The set the walker's lookups see from now on (NULL: none). */
void uwtab_use(const struct uwtab_set *s);
#endif
