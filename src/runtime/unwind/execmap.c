/* execmap.c — executable memory from /proc/self/maps and the image table (execmap.h).
 *
 * Signal handlers: nothing. Inside malloc: everything (no allocation). */
#include "runtime/unwind/execmap.h"
#include "runtime/rtfd.h"
#include "runtime/images.h"
#include "runtime/rtmem.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t em_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t em_hex(const char **p, const char *end)
{
    uint64_t v = 0;
    for (; *p < end; (*p)++) {
        char c = **p;
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) break;
        v = v * 16 + (uint64_t)d;
    }
    return v;
}

/* One line of maps: "start-end perms ...". Executable ranges are appended, merged with
 * the previous one when they touch (maps is sorted). */
static void em_line(struct execmap *m, const char *p, const char *end)
{
    uint64_t a = em_hex(&p, end);
    if (p >= end || *p != '-') return;
    p++;
    uint64_t b = em_hex(&p, end);
    if (end - p < 4 || p[0] != ' ' || p[3] != 'x' || b <= a) return;
    if (m->n && m->r[m->n - 1][1] == a) {
        m->r[m->n - 1][1] = b;
    } else if (m->n < EXECMAP_RANGES && (!m->n || m->r[m->n - 1][1] < a)) {
        m->r[m->n][0] = a;
        m->r[m->n][1] = b;
        m->n++;
    }
}

/* The ranges, then the read buffer, in one mapping of the map's own. The buffer is
 * not on the stack: the heap profiler reads maps inside malloc, on whichever thread
 * allocates, and a PTHREAD_STACK_MIN thread has no 4 KiB to spare there. */
#define EM_BUF 4096
#define EM_SIZE (sizeof(uint64_t[2]) * EXECMAP_RANGES + EM_BUF)

static int em_read(struct execmap *m)
{
    m->read_ns = em_now();
    if (!m->r && !(m->r = rtmem_alloc(EM_SIZE))) return -ENOMEM;
    struct rtfd once;
    int fd = rtfd_open_once(&once, "/proc/self/maps");
    if (fd < 0) return -errno;
    m->n = 0;
    char *buf = (char *)(m->r + EXECMAP_RANGES);
    const size_t size = EM_BUF;
    size_t have = 0;
    for (;;) {
        ssize_t got = read(fd, buf + have, size - have);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        have += (size_t)got;
        char *line = buf, *nl;
        while ((nl = memchr(line, '\n', (size_t)(buf + have - line)))) {
            em_line(m, line, nl);
            line = nl + 1;
        }
        have = (size_t)(buf + have - line);
        memmove(buf, line, have);
        if (have == size) have = 0; /* a line longer than the buffer: its path */
    }
    rtfd_close(&once);
    return 0;
}

static int em_in_ranges(const struct execmap *m, uint64_t addr)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (addr < m->r[mid][0])
            hi = mid;
        else if (addr >= m->r[mid][1])
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

static int em_in_images(uint64_t addr)
{
    size_t n = images_count();
    for (size_t i = 0; i < n; i++) {
        const struct image *im = images_get(i);
        if (addr - im->text < im->text_size) return 1;
    }
    return 0;
}

int execmap_has(struct execmap *m, uint64_t addr)
{
    /* The loader's images first: a process whose frames are all in them (most are)
     * never reads /proc/self/maps here. */
    if (m->r && em_in_ranges(m, addr)) return 1;
    if (em_in_images(addr)) return 1;
    if (m->read_ns && em_now() - m->read_ns < EXECMAP_REREAD_NS) return 0;
    em_read(m);
    return m->r && em_in_ranges(m, addr);
}

void execmap_free(struct execmap *m)
{
    rtmem_free(m->r, EM_SIZE);
    *m = (struct execmap){0};
}

size_t execmap_trim(struct execmap *m, const uint64_t *frames, size_t n, int rooted,
                    enum unwind_stop *stop)
{
    for (size_t k = 1; k < n; k++) {
        if (unwind_is_root_text(frames[k])) {
            /* and the root's caller, read from the root's own frame record */
            *stop = UNWIND_END_TOP;
            return k + 1 < n && execmap_has(m, frames[k + 1]) ? k + 2 : k + 1;
        }
        if (!execmap_has(m, frames[k])) {
            *stop = UNWIND_CUT_NO_EXEC;
            return k;
        }
    }
    if (rooted && *stop == UNWIND_END_ZERO) *stop = UNWIND_CUT_EARLY;
    if (rooted && *stop == UNWIND_END_TOP && !unwind_ends_at_root(frames, n))
        *stop = UNWIND_CUT_RANGE;
    return n;
}
