/* What the process maps that the dynamic loader does not report: the executable
 * mappings of /proc/self/maps outside every image's text (a program's text mapped a
 * second time, as V8 does with its builtins; anonymous executable memory of a JIT),
 * and the vdso's own bytes, which no file on disk holds. The raw profile's writer
 * records both at exit so the CLI can name their frames.
 *
 * Signal handlers: nothing here. Inside malloc: everything (open and read of /proc,
 * the table one mmap'd array, the maps read through a buffer on the stack). */
#ifndef KESTREL_MAPS_H
#define KESTREL_MAPS_H
#include <stddef.h>
#include <stdint.h>

#include "runtime/images.h"

struct maps_entry {
    uint64_t start, end;       /* [start, end) */
    uint64_t offset;           /* file offset of start; 0 for anonymous memory */
    char path[IMAGE_PATH_MAX]; /* "" for anonymous memory */
};

#define MAPS_MAX 512 /* unreported mappings kept; past it, counted */

/* Re-reads /proc/self/maps (at most every MAPS_REFRESH_NS unless forced) and keeps
 * every executable mapping that no loaded image's text overlaps, except the kernel's
 * [vdso] and [vsyscall] (the vdso is an image): a JIT or V8 may unmap its code before
 * the process ends, so the table keeps what was seen during the run. Serialised by
 * a mutex; called from maps_refresh_all(). */
#define MAPS_REFRESH_NS (200ull * 1000 * 1000)
void maps_refresh(int force);

/* The main thread's stack mapping ([stack]) at the last read: 0, or -ENOENT. */
int maps_stack_range(uint64_t *lo, uint64_t *hi);

/* The mappings kept so far, each once; and how many did not fit. */
size_t maps_count(void);
const struct maps_entry *maps_get(size_t i);
size_t maps_past_limit(void);

/* In a fork child: keeps the parent's table and the time it was read (maps.c). */
void maps_after_fork_child(void);

/* What a description of the process's code needs: the loader's images
 * (images_refresh(), whose value it returns), then the executable mappings the
 * loader does not report, while they exist; and both taken over in a fork child. */
int maps_refresh_all(void);
void maps_after_fork_child_all(void);

/* The vdso's ELF image as it is mapped (it is its whole file: headers, sections,
 * symbols), and its size; NULL when the process has none or its extent is not inside
 * its mapping. */
const void *maps_vdso(size_t *size);
/* Writes "/tmp/perf-<pid>.map" into path and returns 1 when that file exists: the
 * map a JIT writes of the code it generates (perf's convention: node
 * --perf-basic-prof, Java's perf-map-agent, python -X perf, LuaJIT, .NET). The CLI
 * reads it; 0 when there is none. */
int maps_perf_map(int pid, char *path, size_t size);
#endif
