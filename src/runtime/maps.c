/* maps.c — executable mappings the loader does not report, and the vdso (maps.h).
 *
 * Signal handlers: nothing. Inside malloc: everything (no allocation but one mmap). */
#include "runtime/maps.h"
#include "runtime/rtfd.h"
#include "runtime/images.h"
#include "runtime/rtmem.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <sys/auxv.h>
#include <unistd.h>

#define MAPS_LINE_MAX (IMAGE_PATH_MAX + 128)

static uint64_t maps_hex(const char **s)
{
    uint64_t v = 0;
    for (;; (*s)++) {
        char c = **s;
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return v;
        v = v << 4 | (uint64_t)d;
    }
}

/* One line "start-end perms offset dev inode   path" into e and its permissions (the
 * path at *path, in the line); 0 when it does not read as one. */
static int maps_parse(char *line, struct maps_entry *e, char perms[5], const char **path)
{
    const char *s = line;
    e->start = maps_hex(&s);
    if (*s++ != '-') return 0;
    e->end = maps_hex(&s);
    if (*s++ != ' ' || strlen(s) < 5) return 0;
    memcpy(perms, s, 4);
    perms[4] = 0;
    s += 4;
    if (*s++ != ' ') return 0;
    e->offset = maps_hex(&s);
    for (int field = 0; field < 2; field++) { /* dev, inode */
        while (*s == ' ')
            s++;
        while (*s && *s != ' ')
            s++;
    }
    while (*s == ' ')
        s++;
    *path = s;
    return e->end > e->start;
}

static int maps_overlaps_image(const struct maps_entry *e)
{
    size_t n = images_count();
    for (size_t i = 0; i < n; i++) {
        const struct image *im = images_get(i);
        if (!im->unloaded && im->text_size && e->start < im->text + im->text_size &&
            e->end > im->text)
            return 1;
    }
    return 0;
}

/* Calls line_cb for every line of /proc/self/maps (NUL-terminated, no newline). */
static int maps_lines(int (*line_cb)(char *line, void *arg), void *arg)
{
    struct rtfd once;
    int fd = rtfd_open_once(&once, "/proc/self/maps");
    if (fd < 0) return -errno;
    char buf[2 * MAPS_LINE_MAX];
    size_t len = 0;
    int rc = 0;
    for (;;) {
        ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            rc = -errno;
            break;
        }
        len += (size_t)n;
        buf[len] = 0;
        char *line = buf, *nl;
        while ((nl = memchr(line, '\n', len - (size_t)(line - buf)))) {
            *nl = 0;
            line_cb(line, arg);
            line = nl + 1;
        }
        size_t rest = len - (size_t)(line - buf);
        if (n == 0) {
            if (rest) line_cb(line, arg);
            break;
        }
        if (rest == sizeof(buf) - 1) rest = 0; /* a line longer than any path: skip it */
        memmove(buf, line, rest);
        len = rest;
    }
    rtfd_close(&once);
    return rc;
}

static struct maps_entry *maps_tab; /* MAPS_MAX entries, mmap'd on first use */
static _Atomic size_t maps_n;       /* entries published */
static size_t maps_over;            /* mappings seen after the table was full */
static uint64_t maps_read_ns;       /* CLOCK_MONOTONIC of the last read */
static pthread_mutex_t maps_mu = PTHREAD_MUTEX_INITIALIZER;
/* The main stack's and the vdso's mappings at the last read, {0, 0} if none: what
 * the main thread's bounds and the vdso's bytes need, without another read. */
static _Atomic uint64_t maps_stack[2], maps_vdso_at[2];

static void maps_note(_Atomic uint64_t at[2], const struct maps_entry *e)
{
    atomic_store(&at[0], e->start);
    atomic_store(&at[1], e->end);
}

static int maps_keep_line(char *line, void *arg)
{
    (void)arg;
    struct maps_entry e;
    char perms[5];
    const char *path;
    if (!maps_parse(line, &e, perms, &path)) return 0;
    if (!strcmp(path, "[stack]")) maps_note(maps_stack, &e);
    if (!strcmp(path, "[vdso]") && perms[0] == 'r') maps_note(maps_vdso_at, &e);
    if (perms[2] != 'x') return 0;
    if (!strcmp(path, "[vdso]") || !strcmp(path, "[vsyscall]") || maps_overlaps_image(&e))
        return 0;
    if (path[0] != '/') path = "", e.offset = 0; /* anonymous memory, named or not */
    size_t n = atomic_load_explicit(&maps_n, memory_order_relaxed);
    for (size_t i = 0; i < n; i++)
        if (maps_tab[i].start == e.start && maps_tab[i].end == e.end &&
            maps_tab[i].offset == e.offset && !strcmp(maps_tab[i].path, path))
            return 0;
    if (n >= MAPS_MAX) {
        maps_over++;
        return 0;
    }
    size_t len = strnlen(path, sizeof(e.path) - 1);
    memcpy(e.path, path, len);
    e.path[len] = 0;
    maps_tab[n] = e;
    atomic_store_explicit(&maps_n, n + 1, memory_order_release);
    return 0;
}

void maps_refresh(int force)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    pthread_mutex_lock(&maps_mu);
    if (!maps_tab) maps_tab = rtmem_alloc(sizeof(struct maps_entry) * MAPS_MAX);
    if (maps_tab && (force || !maps_read_ns || now - maps_read_ns >= MAPS_REFRESH_NS)) {
        maps_read_ns = now;
        maps_lines(maps_keep_line, NULL);
    }
    pthread_mutex_unlock(&maps_mu);
}

int maps_stack_range(uint64_t *lo, uint64_t *hi)
{
    *lo = atomic_load(&maps_stack[0]);
    *hi = atomic_load(&maps_stack[1]);
    return *hi > *lo ? 0 : -ENOENT;
}

size_t maps_count(void)
{
    return atomic_load_explicit(&maps_n, memory_order_acquire);
}

const struct maps_entry *maps_get(size_t i)
{
    return i < maps_count() ? &maps_tab[i] : NULL;
}

size_t maps_past_limit(void)
{
    return maps_over;
}

/* A fork child has its parent's mappings: it keeps what the parent read, and when, so
 * that fork does not read /proc/self/maps again (8.6% of the CPU of a loop of profiled
 * forks, BENCHMARKS.md "Fork"). */
void maps_after_fork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    maps_mu = fresh;
}

/* ============================ the vdso ============================ */

struct maps_find {
    uint64_t addr, start, end;
};

static int maps_find_line(char *line, void *arg)
{
    struct maps_find *f = arg;
    struct maps_entry e;
    char perms[5];
    const char *path;
    if (maps_parse(line, &e, perms, &path) && perms[0] == 'r' && f->addr >= e.start &&
        f->addr < e.end)
        f->start = e.start, f->end = e.end;
    return 0;
}

const void *maps_vdso(size_t *size)
{
    uint64_t base = getauxval(AT_SYSINFO_EHDR);
    if (!base) return NULL;
    struct maps_find f = {base, atomic_load(&maps_vdso_at[0]), atomic_load(&maps_vdso_at[1])};
    /* The mapping seen at the last read, or one read now. */
    if (!(base >= f.start && base < f.end)) {
        f.start = f.end = 0;
        if (maps_lines(maps_find_line, &f) < 0) return NULL;
    }
    if (f.end < base + sizeof(ElfW(Ehdr))) return NULL;
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)(uintptr_t)base;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG)) return NULL;
    /* The file's extent: its segments' and its section headers' ends. */
    uint64_t end = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;
    if (eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(ElfW(Phdr)) > f.end - base) return NULL;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(uintptr_t)(base + eh->e_phoff);
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > end)
            end = ph[i].p_offset + ph[i].p_filesz;
    if (end > f.end - base) return NULL;
    *size = end;
    return eh;
}

/* ============================ JIT maps ============================ */

int maps_perf_map(int pid, char *path, size_t size)
{
    char digits[16];
    int n = 0;
    unsigned v = (unsigned)pid;
    do
        digits[n++] = (char)('0' + v % 10);
    while ((v /= 10) && n < (int)sizeof(digits));
    static const char pre[] = "/tmp/perf-", post[] = ".map";
    if (size < sizeof(pre) + (size_t)n + sizeof(post)) return 0;
    size_t o = sizeof(pre) - 1;
    memcpy(path, pre, o);
    while (n)
        path[o++] = digits[--n];
    memcpy(path + o, post, sizeof(post));
    return access(path, F_OK) == 0;
}

int maps_refresh_all(void)
{
    int r = images_refresh();
    maps_refresh(0);
    return r;
}

void maps_after_fork_child_all(void)
{
    images_reset();
    maps_after_fork_child();
}
