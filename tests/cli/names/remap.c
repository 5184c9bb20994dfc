/* Code that runs where the loader never put it: the program's own text mapped a
 * second time from its file at an offset (as V8 maps its builtins), and a copy in
 * anonymous executable memory named by a /tmp/perf-PID.map line (as a JIT names its
 * code). kestrel must name `spin` in the first and `jit_spin` in the second. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A leaf with no calls and no data: it runs the same wherever its bytes are. */
__attribute__((noinline, aligned(64))) unsigned long spin(unsigned long n)
{
    unsigned long x = 1;
    for (unsigned long i = 0; i < n; i++)
        x = x * 2862933555777941757ul + 3037000493ul + (x >> 29);
    return x;
}

struct where {
    uintptr_t addr;
    long offset; /* -1 until found */
};

static int find_offset(struct dl_phdr_info *i, size_t size, void *data)
{
    (void)size;
    struct where *w = data;
    for (int k = 0; k < i->dlpi_phnum; k++) {
        const ElfW(Phdr) *ph = &i->dlpi_phdr[k];
        uintptr_t lo = i->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && w->addr >= lo && w->addr < lo + ph->p_memsz) {
            w->offset = (long)(w->addr - lo + ph->p_offset);
            return 1;
        }
    }
    return 0;
}

/* fn's offset in its file, from the program headers. */
static long file_offset_of(void *fn)
{
    struct where w = {(uintptr_t)fn, -1};
    dl_iterate_phdr(find_offset, &w);
    return w.offset;
}

int main(int argc, char **argv)
{
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 400000000ul;
    long page = sysconf(_SC_PAGESIZE), off = file_offset_of((void *)spin);
    int fd = open("/proc/self/exe", O_RDONLY);
    if (off < 0 || fd < 0) return perror("remap"), 1;
    long floor = off & ~(page - 1);
    char *text = mmap(NULL, 2 * page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, floor);
    char *jit =
        mmap(NULL, page, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (text == MAP_FAILED || jit == MAP_FAILED) return perror("mmap"), 1;
    unsigned long (*remapped)(unsigned long) =
        (unsigned long (*)(unsigned long))(text + off - floor);
    memcpy(jit, (void *)spin, 256);
    unsigned long (*copied)(unsigned long) = (unsigned long (*)(unsigned long))jit;
    char map[64];
    snprintf(map, sizeof map, "/tmp/perf-%d.map", getpid());
    FILE *f = fopen(map, "w");
    if (!f) return perror(map), 1;
    fprintf(f, "%lx 100 jit_spin\n", (unsigned long)(uintptr_t)jit);
    fclose(f);
    unsigned long a = remapped(n), b = copied(n);
    printf("%s\n", a == b && a == spin(1000) - spin(1000) + a ? "same" : "different");
    return 0;
}
