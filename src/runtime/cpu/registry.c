/* registry.c — the thread registry (registry.h).
 *
 * Signal handlers: nothing here (registry_self() is inline in the header).
 * Inside malloc: nothing. */
#include "runtime/cpu/registry.h"
#include "runtime/rtblocks.h"
#include "runtime/rtfd.h"
#include "runtime/rtclock.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

__thread struct reg_slot *registry_self_slot __attribute__((tls_model("initial-exec")));
__thread uint32_t registry_self_gen __attribute__((tls_model("initial-exec")));

/* Rules: a slot's block, and the block of its slot in every added table, are mapped
 * before the slot first leaves FREE; the slots' blocks are never unmapped (a late
 * signal handler may read one). A record's block is mapped before reg_nthreads
 * counts it; the records are unmapped when the registry closes. reg_nthreads only
 * grows within a session and never past REGISTRY_THREADS_MAX; the last record is
 * shared by every registration past the limit. */
#define REG_BLOCK 64             /* slots a block: 6.5 KB of slots, and the engines' */
#define REG_RECORDS_BLOCK 1024   /* thread records a block: 64 KB */
#define REG_TABLES_MAX 4         /* tables added by the engines */
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
RTBLOCKS(reg_slots, struct reg_slot, REGISTRY_SLOTS, REG_BLOCK);
RTBLOCKS(reg_threads, struct reg_thread, REGISTRY_THREADS_MAX, REG_RECORDS_BLOCK);
static struct rtblocks *reg_tables[REG_TABLES_MAX]; /* registry_add_table's */
static size_t reg_ntables;
static _Atomic size_t reg_nthreads;    /* records handed out */
static uint64_t reg_past_limit;        /* see registry_threads_past_limit() */
static uint64_t reg_past_slots;        /* see registry_live_past_limit() */
static size_t reg_live, reg_live_max;  /* slots not FREE now, and at most */
static int reg_open;                   /* a session is using the registry */
/* Bit i set while slot i is not FREE (set and cleared under the mutex), so that the
 * engine thread's walks, many a second, skip the free slots without touching them. */
static uint64_t reg_used[REGISTRY_SLOTS / 64];
/* Slots at or past this index were never used since the array was mapped: neither
 * their pages nor those of the engines' per-slot state need be touched (the state of
 * 1024 slots spans hundreds of pages in each). */
static _Atomic size_t reg_slots_hi;

_Static_assert(REGISTRY_SLOTS % REG_BLOCK == 0, "whole blocks of slots");
_Static_assert(REGISTRY_THREADS_MAX % REG_RECORDS_BLOCK == 0, "whole blocks of records");

static struct reg_thread *reg_record(size_t i)
{
    return rtblocks_at(&reg_threads, i);
}

/* The thread records' claim (the count and the record it publishes): under reg_mu
 * for a registration, alone for a fiber's record, which the engine thread adds while
 * it may hold reg_mu (the signal engine drains under it). Order: reg_mu, then this. */
static pthread_mutex_t reg_rec_mu = PTHREAD_MUTEX_INITIALIZER;

/* Register and unregister run with every signal blocked: a handler must never find
 * its own thread inside the critical section. */
static void reg_enter(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, old);
    pthread_mutex_lock(&reg_mu);
}

static void reg_leave(const sigset_t *old)
{
    pthread_mutex_unlock(&reg_mu);
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* Every slot back to FREE with a new generation, so that no thread's TLS names a
 * registration any more. The slot array itself stays mapped for the life of the
 * process: a late signal handler may still read it. */
static void reg_invalidate_all(void)
{
    size_t hi = atomic_load(&reg_slots_hi);
    for (size_t i = 0; i < hi; i++) {
        struct reg_slot *s = registry_slot(i);
        if (!s) continue;
        atomic_fetch_add(&s->gen, 1);
        atomic_store(&s->state, REG_FREE);
    }
    memset(reg_used, 0, sizeof reg_used);
    reg_live = 0;
}

int registry_open(void)
{
    sigset_t old;
    reg_enter(&old);
    int r = 0;
    reg_ntables = 0;
    reg_invalidate_all();
    atomic_store(&reg_nthreads, 0);
    reg_past_limit = reg_past_slots = 0;
    reg_live_max = 0;
    reg_open = r == 0;
    reg_leave(&old);
    return r;
}

int registry_add_table(struct rtblocks *t)
{
    sigset_t old;
    reg_enter(&old);
    int r = reg_ntables < REG_TABLES_MAX ? 0 : -ENOSPC;
    for (size_t i = 0; i < reg_ntables; i++)
        if (reg_tables[i] == t) r = -EEXIST;
    if (r == 0) reg_tables[reg_ntables++] = t;
    for (size_t i = 0, hi = atomic_load(&reg_slots_hi); r >= 0 && i < hi; i += REG_BLOCK)
        if (registry_slot(i)) r = rtblocks_ensure(t, i);
    reg_leave(&old);
    return r == -EEXIST ? 0 : r;
}

void registry_close(void)
{
    sigset_t old;
    reg_enter(&old);
    reg_invalidate_all();
    reg_open = 0;
    atomic_store(&reg_nthreads, 0);
    rtblocks_free(&reg_threads);
    reg_leave(&old);
}

static void reg_copy(char *dst, size_t size, const char *src)
{
    size_t n = src ? strnlen(src, size - 1) : 0;
    memcpy(dst, src ? src : "", n);
    dst[n] = 0;
}

static void reg_self_name(struct reg_thread *t)
{
    char name[REGISTRY_NAME_MAX + 1] = "";
    prctl(PR_GET_NAME, name);
    reg_copy(t->name, sizeof(t->name), name);
}

/* Unregisters with the mutex held: the slot drains, the record keeps the name. */
static int reg_unregister_locked(void)
{
    struct reg_slot *s = registry_self_slot;
    if (!reg_open || !s || atomic_load(&s->gen) != registry_self_gen ||
        atomic_load(&s->state) != REG_ACTIVE)
        return -ENOENT;
    if (s->thread_index < REGISTRY_THREADS_MAX - 1) reg_self_name(reg_record(s->thread_index));
    atomic_fetch_add(&s->gen, 1);
    atomic_store(&s->state, REG_DRAINING);
    registry_self_slot = NULL;
    return 0;
}

struct reg_slot *registry_register(int64_t fiber, const char *label, uint64_t lo, uint64_t hi)
{
    sigset_t old;
    reg_enter(&old);
    struct reg_slot *s = NULL;
    if (!reg_open) goto out;
    reg_unregister_locked();
    /* The lowest free slot: the slots in use stay packed at the array's start, so
     * that a program making and ending threads all its life touches as many slots as
     * it ever ran threads at once, not all of them. */
    size_t si = REGISTRY_SLOTS;
    for (size_t w = 0; w < REGISTRY_SLOTS / 64 && si == REGISTRY_SLOTS; w++)
        if (~reg_used[w]) si = w * 64 + (size_t)__builtin_ctzll(~reg_used[w]);
    /* Its block, and the engines' blocks of it, mapped before it is used. */
    int mapped = si < REGISTRY_SLOTS && rtblocks_ensure(&reg_slots, si) == 0;
    for (size_t k = 0; mapped && k < reg_ntables; k++)
        mapped = rtblocks_ensure(reg_tables[k], si) == 0;
    pthread_mutex_lock(&reg_rec_mu);
    size_t ti = atomic_load(&reg_nthreads);
    if (ti >= REGISTRY_THREADS_MAX - 1) ti = REGISTRY_THREADS_MAX - 1;
    if (mapped) mapped = rtblocks_ensure(&reg_threads, ti) == 0;
    struct reg_thread *t = mapped ? reg_record(ti) : NULL;
    s = mapped ? registry_slot(si) : NULL;
    if (!s || !t) { /* no memory for its blocks */
        pthread_mutex_unlock(&reg_rec_mu);
        reg_past_slots++;
        s = NULL;
        goto out;
    }
    s->index = (uint32_t)si;
    if (ti == REGISTRY_THREADS_MAX - 1) {
        reg_past_limit++;
        t->fiber = -1;
        reg_copy(t->label, sizeof(t->label), "(other threads)");
    } else {
        memset(t, 0, sizeof(*t));
        t->fiber = fiber;
        t->tid = (pid_t)syscall(SYS_gettid);
        reg_copy(t->label, sizeof(t->label), label);
        reg_self_name(t);
        atomic_store(&reg_nthreads, ti + 1);
    }
    pthread_mutex_unlock(&reg_rec_mu);
    s->tid = (pid_t)syscall(SYS_gettid);
    s->thread_index = (uint32_t)ti;
    s->stack_lo = lo;
    s->stack_hi = hi;
    s->rooted = 0;
    atomic_store_explicit(&s->in_call, 0, memory_order_relaxed);
    s->cpu_clock = (clockid_t)((~(unsigned)s->tid << 3) | 6); /* per-thread, sched clock */
    s->cpu_last_ns = rt_clock_ns(s->cpu_clock);
    s->cpu_seen_ns = s->cpu_last_ns;
    s->wait_stack = -1;
    s->wait_thread1 = 0;
    memset(s->wait_key, 0, sizeof(s->wait_key));
    uint32_t gen = atomic_fetch_add(&s->gen, 1) + 1;
    atomic_store(&s->state, REG_ACTIVE);
    reg_used[si / 64] |= 1ull << (si % 64);
    if (++reg_live > reg_live_max) reg_live_max = reg_live;
    if (si >= atomic_load(&reg_slots_hi)) atomic_store(&reg_slots_hi, si + 1);
    registry_self_slot = s;
    registry_self_gen = gen;
out:
    reg_leave(&old);
    return s;
}

long registry_thread_add(pid_t tid, int64_t fiber, const char *label)
{
    pthread_mutex_lock(&reg_rec_mu);
    long rc = -ENOSPC;
    size_t ti = atomic_load(&reg_nthreads);
    struct reg_thread *t = NULL;
    if (reg_open && ti < REGISTRY_THREADS_MAX - 1 && rtblocks_ensure(&reg_threads, ti) == 0)
        t = reg_record(ti);
    if (t) {
        memset(t, 0, sizeof(*t));
        t->fiber = fiber;
        t->tid = tid;
        reg_copy(t->label, sizeof(t->label), label);
        atomic_store(&reg_nthreads, ti + 1);
        rc = (long)ti;
    }
    pthread_mutex_unlock(&reg_rec_mu);
    return rc;
}

int registry_unregister(void)
{
    sigset_t old;
    reg_enter(&old);
    int r = reg_unregister_locked();
    reg_leave(&old);
    return r;
}

void registry_release(struct reg_slot *s)
{
    if (atomic_load(&s->state) != REG_DRAINING) return;
    atomic_store(&s->state, REG_FREE);
    size_t si = registry_slot_index(s);
    reg_used[si / 64] &= ~(1ull << (si % 64));
    reg_live--;
}

size_t registry_next_used(size_t i)
{
    while (i < REGISTRY_SLOTS) { /* a bit is set only for a mapped slot */
        uint64_t w = reg_used[i / 64] >> (i % 64);
        if (w) return i + (size_t)__builtin_ctzll(w);
        i = (i / 64 + 1) * 64;
    }
    return REGISTRY_SLOTS;
}

size_t registry_slots_hi(void)
{
    return atomic_load(&reg_slots_hi);
}

void registry_lock(void)
{
    pthread_mutex_lock(&reg_mu);
}

void registry_unlock(void)
{
    pthread_mutex_unlock(&reg_mu);
}

struct reg_slot *registry_slot(size_t i)
{
    return rtblocks_at(&reg_slots, i);
}

size_t registry_thread_count(void)
{
    size_t n = atomic_load(&reg_nthreads);
    return reg_past_limit && n == REGISTRY_THREADS_MAX - 1 ? REGISTRY_THREADS_MAX : n;
}

struct reg_thread *registry_thread(size_t i)
{
    return reg_record(i);
}

uint64_t registry_threads_past_limit(void)
{
    return reg_past_limit;
}

uint64_t registry_live_past_limit(void)
{
    return reg_past_slots;
}

size_t registry_live_max(void)
{
    return reg_live_max;
}

void registry_count_past_limit(void)
{
    sigset_t old;
    reg_enter(&old);
    reg_past_slots++;
    reg_leave(&old);
}

void registry_read_name(struct reg_thread *t)
{
    if (!t->tid) return;
    char path[64], buf[REGISTRY_NAME_MAX + 2];
    snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)t->tid);
    struct rtfd once;
    int fd = rtfd_open_once(&once, path);
    if (fd < 0) return;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    rtfd_close(&once);
    if (n <= 0) return;
    buf[n] = 0;
    if (buf[n - 1] == '\n') buf[n - 1] = 0;
    reg_copy(t->name, sizeof(t->name), buf);
}

void registry_forget_after_fork(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    reg_mu = fresh;
    reg_rec_mu = fresh;
    reg_invalidate_all();
    reg_open = 0;
    reg_ntables = 0;
    rtblocks_free(&reg_threads);
    registry_self_slot = NULL;
    atomic_store(&reg_nthreads, 0);
}
