/* fibers.c — the registry of fiber stacks, the writable mappings that hold the others,
 * and the thread records fibers get (fibers.h).
 *
 * Signal handlers: fiber_find() and what it calls (fiber_reg_find, fiber_map_find,
 * fiber_mapped: mincore). Inside malloc: nothing. */
#include "runtime/fibers.h"
#include "kestrel.h"
#include "runtime/cpu/registry.h"
#include "runtime/rtclock.h"
#include "runtime/rtfd.h"
#include "runtime/rtmem.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>


/* ===================================================== the registered fibers ==== */

/* An entry is free while lo is 0. A writer (under fib_mu) fills hi, id and label, then
 * bumps gen and publishes lo; unregistering clears lo and bumps gen. A reader takes an
 * entry only when gen reads the same before and after the rest, and lo is not 0. */
struct fib_entry {
    _Atomic uint64_t lo;   /* stack bounds [lo, hi) */
    _Atomic uint64_t hi;
    _Atomic uint32_t gen;  /* changes of this entry so far */
    int64_t id;            /* the fiber id given */
    char label[REGISTRY_LABEL_MAX];
};

static struct fib_entry fib_tab[FIBER_MAX];
static _Atomic size_t fib_hi;  /* entries [0, fib_hi) were ever used */
static _Atomic uint64_t fib_refused_n;
static pthread_mutex_t fib_mu = PTHREAD_MUTEX_INITIALIZER;

KESTREL_API int kestrel_fiber_register(const void *stack, size_t size, int64_t fiber_id,
                                       const char *label)
{
    uint64_t lo = (uint64_t)(uintptr_t)stack;
    if (!stack || size < 64 || lo + size < lo) return -EINVAL;
    pthread_mutex_lock(&fib_mu);
    size_t n = atomic_load(&fib_hi), i;
    for (i = 0; i < n; i++)
        if (atomic_load(&fib_tab[i].lo) == lo) break; /* registered again: replaced */
    if (i == n)
        for (i = 0; i < n && atomic_load(&fib_tab[i].lo); i++)
            ;
    if (i == FIBER_MAX) {
        pthread_mutex_unlock(&fib_mu);
        atomic_fetch_add(&fib_refused_n, 1);
        return -ENOSPC;
    }
    struct fib_entry *e = &fib_tab[i];
    atomic_fetch_add(&e->gen, 1); /* odd: being written */
    atomic_store(&e->lo, 0);
    atomic_store(&e->hi, lo + size);
    e->id = fiber_id;
    size_t l = label ? strnlen(label, sizeof e->label - 1) : 0;
    memcpy(e->label, label ? label : "", l);
    e->label[l] = 0;
    if (!l) memcpy(e->label, "fiber", 6);
    atomic_store(&e->lo, lo);
    atomic_fetch_add(&e->gen, 1);
    if (i == n) atomic_store(&fib_hi, n + 1);
    pthread_mutex_unlock(&fib_mu);
    return 0;
}

KESTREL_API int kestrel_fiber_unregister(const void *stack)
{
    uint64_t lo = (uint64_t)(uintptr_t)stack;
    int rc = -ENOENT;
    pthread_mutex_lock(&fib_mu);
    for (size_t i = 0, n = atomic_load(&fib_hi); lo && i < n; i++)
        if (atomic_load(&fib_tab[i].lo) == lo) {
            atomic_fetch_add(&fib_tab[i].gen, 1);
            atomic_store(&fib_tab[i].lo, 0);
            atomic_fetch_add(&fib_tab[i].gen, 1);
            rc = 0;
            break;
        }
    pthread_mutex_unlock(&fib_mu);
    return rc;
}

size_t fiber_count(void)
{
    size_t c = 0;
    for (size_t i = 0, n = atomic_load(&fib_hi); i < n; i++)
        c += atomic_load(&fib_tab[i].lo) != 0;
    return c;
}

uint64_t fiber_refused(void)
{
    return atomic_load(&fib_refused_n);
}

/* The registered fiber holding sp: its key (bit 63, gen, index), 0 none. */
static uint64_t fiber_reg_find(uint64_t sp, uint64_t *lo, uint64_t *hi)
{
    for (size_t i = 0, n = atomic_load_explicit(&fib_hi, memory_order_acquire); i < n; i++) {
        struct fib_entry *e = &fib_tab[i];
        uint64_t l = atomic_load_explicit(&e->lo, memory_order_acquire);
        if (!l || sp < l) continue;
        uint32_t g = atomic_load_explicit(&e->gen, memory_order_acquire);
        uint64_t h = atomic_load_explicit(&e->hi, memory_order_acquire);
        if (sp >= h || (g & 1) || atomic_load_explicit(&e->lo, memory_order_acquire) != l ||
            atomic_load_explicit(&e->gen, memory_order_acquire) != g)
            continue;
        *lo = l;
        *hi = h;
        return 1ull << 63 | (uint64_t)(g & 0x7fffffffu) << 32 | i;
    }
    return 0;
}

/* ================================================ the writable mappings ==== */

/* Two tables, one published (fm_pub) while the engine thread fills the other; fm_seq
 * changes at each publication, so a reader that saw it change retries nothing and
 * finds nothing (the next sample will).
 *
 * Each mapping is kept as the kernel lists it, never merged with its neighbours: an
 * unregistered fiber is named by the end of the mapping that holds its sp, which a
 * mapping made later below it and merged into it by the kernel (mmap places new
 * mappings downwards) does not move, where the start does. A walk may go on into the
 * private writable mappings adjacent above (a stack may span two), up to r[i][2]; a
 * shared one (a perf ring) is never a neighbour of a stack. */
struct fib_maps {
    size_t n;
    uint64_t r[FIBER_MAPS_MAX][3]; /* sorted [start, end), and the end of the run of
                                    * adjacent private writable mappings from start */
    uint8_t priv[FIBER_MAPS_MAX];  /* private (not MAP_SHARED) */
};
static struct fib_maps *fm_buf[2];
static _Atomic int fm_pub = -1;
static _Atomic uint32_t fm_seq;
static _Atomic int fm_stale = 1;
static uint64_t fm_read_ns;

/* The mapping holding sp: its end as the key, [*lo, *hi) the mapping and *run the end
 * of the adjacent private writable mappings above. */
static uint64_t fiber_map_find(uint64_t sp, uint64_t *lo, uint64_t *hi, uint64_t *run)
{
    uint32_t seq = atomic_load_explicit(&fm_seq, memory_order_acquire);
    int pub = atomic_load_explicit(&fm_pub, memory_order_acquire);
    if (pub < 0) return 0;
    const struct fib_maps *m = fm_buf[pub];
    size_t a = 0, b = m->n;
    while (a < b) { /* the first mapping whose end is above sp */
        size_t mid = (a + b) / 2;
        if (m->r[mid][1] <= sp) a = mid + 1;
        else b = mid;
    }
    if (a == m->n || m->r[a][0] > sp) return 0;
    uint64_t s = m->r[a][0], e = m->r[a][1], r = m->r[a][2];
    if (atomic_load_explicit(&fm_seq, memory_order_acquire) != seq) return 0;
    *lo = s;
    *hi = e;
    *run = r;
    return e;
}

static void fiber_maps_read(uint64_t now);

void fiber_maps_refresh(int force)
{
    uint64_t now = rt_clock_ns(CLOCK_MONOTONIC);
    if (!force && !atomic_load(&fm_stale)) return;
    if (fm_read_ns && now - fm_read_ns < 8000000ull) return;
    fiber_maps_read(now);
}

int fiber_maps_refresh_since(uint64_t t_ns)
{
    if (fm_read_ns && fm_read_ns >= t_ns) return 0;
    fiber_maps_read(rt_clock_ns(CLOCK_MONOTONIC));
    return 1;
}

static void fiber_maps_read(uint64_t now)
{
    fm_read_ns = now;
    atomic_store(&fm_stale, 0);
    if (!fm_buf[0]) {
        fm_buf[0] = rtmem_alloc(sizeof(struct fib_maps));
        fm_buf[1] = rtmem_alloc(sizeof(struct fib_maps));
        if (!fm_buf[0] || !fm_buf[1]) return;
    }
    int pub = atomic_load(&fm_pub);
    struct fib_maps *m = fm_buf[pub == 0 ? 1 : 0];
    m->n = 0;
    struct rtfd once;
    int fd = rtfd_open_once(&once, "/proc/self/maps");
    if (fd < 0) return;
    char buf[8192];
    size_t have = 0;
    for (;;) {
        ssize_t got = read(fd, buf + have, sizeof buf - 1 - have);
        if (got <= 0) break;
        have += (size_t)got;
        buf[have] = 0;
        char *line = buf, *nl;
        while ((nl = memchr(line, '\n', have - (size_t)(line - buf)))) {
            *nl = 0;
            unsigned long long s, e;
            char perm[5] = "";
            /* Readable, writable, not executable: where a stack can be. */
            if (sscanf(line, "%llx-%llx %4s", &s, &e, perm) == 3 && perm[0] == 'r' &&
                perm[1] == 'w' && perm[2] != 'x' && m->n < FIBER_MAPS_MAX) {
                m->r[m->n][0] = s;
                m->r[m->n][1] = e;
                m->r[m->n][2] = e;
                m->priv[m->n] = perm[3] == 'p';
                m->n++;
            }
            line = nl + 1;
        }
        have -= (size_t)(line - buf);
        memmove(buf, line, have);
        if (have == sizeof buf - 1) have = 0; /* a line too long: skipped */
    }
    rtfd_close(&once);
    for (size_t i = m->n; i-- > 1;) /* the runs of adjacent private mappings, downwards */
        if (m->priv[i] && m->priv[i - 1] && m->r[i - 1][1] == m->r[i][0])
            m->r[i - 1][2] = m->r[i][2];
    atomic_fetch_add(&fm_seq, 1);
    atomic_store_explicit(&fm_pub, pub == 0 ? 1 : 0, memory_order_release);
}

/* 1 when every page of [sp, top) is mapped: mincore fails with ENOMEM on a range that
 * holds an unmapped page. */
static int fiber_mapped(uint64_t sp, uint64_t top)
{
    const uint64_t pg = 4096;
    uint64_t p0 = sp & ~(pg - 1), p1 = (top + pg - 1) & ~(pg - 1);
    unsigned char vec[FIBER_WALK_MAX / 4096 + 2];
    return mincore((void *)(uintptr_t)p0, (size_t)(p1 - p0), vec) == 0;
}

int fiber_find(uint64_t sp, uint64_t own_lo, uint64_t own_hi, uint64_t *lo, uint64_t *hi,
               uint64_t *key)
{
    uint64_t l, h, run = 0, k = fiber_reg_find(sp, &l, &h);
    if (!k) {
        k = fiber_map_find(sp, &l, &h, &run);
        /* The mapping of the thread's own stack (sp below its registered bounds, a
         * stack grown past them): not a fiber. */
        if (k && l < own_hi && own_lo < h) return 0;
    }
    if (!k) {
        atomic_store_explicit(&fm_stale, 1, memory_order_relaxed);
        return 0;
    }
    /* Still mapped, every page the walk may read (a stack freed since the maps were
     * read is not read): the run of mappings above first, else the one holding sp
     * (a neighbour unmapped since is no part of the stack). */
    uint64_t top = run > h && run - sp > FIBER_WALK_MAX ? sp + FIBER_WALK_MAX : run;
    if (top <= h || !fiber_mapped(sp, top)) {
        top = h - sp > FIBER_WALK_MAX ? sp + FIBER_WALK_MAX : h;
        if (!fiber_mapped(sp, top)) {
            atomic_store_explicit(&fm_stale, 1, memory_order_relaxed);
            return 0;
        }
    }
    *lo = l;
    *hi = top;
    *key = k;
    return 1;
}


/* ==================================================== fibers' thread records ==== */

/* (tid, key) -> thread record + 1, open addressing; the engine thread's alone. */
struct fib_rec {
    uint64_t key;
    pid_t tid;
    uint32_t rec1;
};
static struct fib_rec *fr_tab; /* 2 * FIBER_THREADS_MAX entries */
static size_t fr_n;
static int64_t fr_next_id = 1; /* ids of unregistered fibers, per process */

void fiber_session_reset(void)
{
    if (fr_tab) memset(fr_tab, 0, 2 * FIBER_THREADS_MAX * sizeof *fr_tab);
    fr_n = 0;
}

uint32_t fiber_thread(pid_t tid, uint64_t key)
{
    if (!fr_tab && !(fr_tab = rtmem_alloc(2 * FIBER_THREADS_MAX * sizeof *fr_tab))) return 0;
    /* A registered fiber is its entry's index and generation; a key names it while it
     * stays registered, the end of its mapping (an unregistered fiber) for the session. */
    size_t mask = 2 * FIBER_THREADS_MAX - 1;
    size_t h = (size_t)((key * 0x9e3779b97f4a7c15ull) ^ (uint64_t)tid) & mask;
    for (;; h = (h + 1) & mask) {
        struct fib_rec *r = &fr_tab[h];
        if (r->rec1 && r->key == key && r->tid == tid) return r->rec1;
        if (!r->rec1) break;
    }
    if (fr_n >= FIBER_THREADS_MAX) return 0;
    int64_t id;
    char label[REGISTRY_LABEL_MAX] = "fiber";
    if (key >> 63) {
        struct fib_entry *e = &fib_tab[key & 0xffffffffu];
        uint32_t g = atomic_load(&e->gen);
        id = e->id;
        memcpy(label, e->label, sizeof label);
        label[sizeof label - 1] = 0;
        if ((g & 0x7fffffffu) != (uint32_t)(key >> 32 & 0x7fffffffu)) return 0; /* gone since */
    } else {
        id = fr_next_id++;
    }
    long rec = registry_thread_add(tid, id, label);
    if (rec < 0) return 0;
    fr_tab[h] = (struct fib_rec){key, tid, (uint32_t)rec + 1};
    fr_n++;
    return (uint32_t)rec + 1;
}

void fiber_after_fork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    fib_mu = fresh;
    fiber_session_reset();
    fr_next_id = 1;
}
