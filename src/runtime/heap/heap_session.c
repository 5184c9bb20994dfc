/* The heap profiler's session: the public API (kestrel_heap_*), activation by
 * KESTREL_HEAP, taking a sample on the slow path of an allocation, the free of a
 * sampled block, and the file written at exit, before exec and before a fatal
 * signal's default action (the lifecycle client).
 *
 * One session per process. Two locks: heap_api_lock orders start, profile, stop and
 * the flush; heap_lock guards the tables and is the only one taken inside malloc
 * (heap_sample, heap_sampled_free), never while another lock of the profiler is held
 * except the region's, which is taken after it. heap_sample and heap_sampled_free run
 * inside malloc, a sample's work (the walk, the bucket) on a side stack of the
 * runtime's (heap_side.c); heap_flush (and what it calls) may run in a fatal signal's
 * handler of a single-threaded process (see heap_client). */
#include "runtime/heap/heap.h"
#include "runtime/lifecycle.h"
#include "runtime/rtclock.h"
#include "runtime/unwind/execmap.h"
#include "runtime/rtsay.h"
#include "runtime/outfile.h"
#include "runtime/unwind/step.h"
#include "runtime/unwind/table.h"
#include "kestrel.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

uint32_t heap_gen;
int heap_active;
int64_t heap_interval = HEAP_INTERVAL_DEFAULT;
int64_t heap_certain = HEAP_INTERVAL_DEFAULT / 10 * HEAP_CERTAIN_X10;

static heap_mutex_t heap_api_lock = HEAP_MUTEX_INIT;
static heap_mutex_t heap_lock = HEAP_MUTEX_INIT;

static struct heap_table heap_table; /* the running session's; under heap_lock */
static struct heap_pprof_info heap_info;
static struct execmap heap_exec; /* executable memory, for the stacks (under heap_lock) */

static char heap_path[4096]; /* KESTREL_HEAP, when set */
static char heap_exec_file[4096 + 64]; /* written before an exec that then failed */
static int heap_path_set;
static unsigned heap_seq; /* files written with a default name */
static int heap_client_registered;


/* Takes a lock; a patient caller waits, an impatient one (a fatal signal's flush,
 * whose thread may be stopped holding it) gives up after about 200 ms. */
static int heap_take(heap_mutex_t *m, int patient)
{
    if (patient) {
        heap_mutex_lock(m);
        return 0;
    }
    for (int i = 0; i < 200; i++) {
        if (!heap_mutex_trylock(m)) return 0;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return EDEADLK;
}

/* The objects a sample of `weight` bytes stands for, on an allocation of `size`. */
static int64_t heap_objects(int64_t weight, uint64_t size)
{
    int64_t o = (int64_t)(((uint64_t)weight + size / 2) / size);
    return o ? o : 1;
}

/* ===== inside malloc ===== */

/* The allocating thread's stack into pcs, and its name refreshed. The name is a
 * system call away: read at a thread's first sample and every 32nd, so a thread that
 * renames itself is labelled anew within 32 samples. */
static size_t heap_stack_of(struct heap_tls *t, uintptr_t fp, uintptr_t *pcs, uint8_t *walk_stop)
{
    size_t depth = heap_stack_walk(fp, pcs, HEAP_STACK_MAX, walk_stop);
    if (!(t->samples++ & 31)) {
        char name[17] = "";
        prctl(PR_GET_NAME, name);
        memcpy(t->name, name, sizeof t->name);
        t->name_gen = 0;
    }
    return depth;
}

/* Under heap_lock: the bucket of this stack and thread in the running session. */
static uint32_t heap_bucket_of(struct heap_tls *t, uintptr_t *pcs, size_t depth, uint8_t walk_stop)
{
    if (t->name_gen != heap_gen) { /* interned once per name and session */
        t->name_id = heap_table_string(&heap_table, t->name, strnlen(t->name, sizeof t->name));
        t->name_gen = heap_gen;
    }
    /* Frames past one in no executable mapping are data (execmap.h); the map is the
     * session's, read under its lock. The heap knows no thread's root frame, only
     * kestrel's root functions. */
    enum unwind_stop stop = (enum unwind_stop)walk_stop;
    depth = execmap_trim(&heap_exec, (const uint64_t *)pcs, depth, 0, &stop);
    heap_info.stops[stop < UNWIND_STOPS ? stop : UNWIND_NOT_WALKED]++;
    return heap_table_bucket(&heap_table, pcs, (uint32_t)depth, stop, t->name_id);
}

/* One sample's work on the stack it runs on (a side stack, heap_side.c): what the
 * caller asks, and what the work found. */
struct heap_work {
    struct heap_tls *t; /* the allocating thread's */
    uintptr_t fp;       /* the interposed function's frame record */
    size_t size, align; /* the request (heap_resize_certain: its new size) */
    int64_t weight;     /* the bytes the sample stands for */
    void *block;        /* heap_resize_certain's block; heap_sample's, from the region */
    int full;           /* heap_sample: the region had no room, the session still runs */
    int done;           /* heap_resize_certain: the block moved to this call's site */
};

/* Runs the work on a side stack, or on this thread's own when none is free. */
static void heap_work_run(struct heap_work *w, void (*fn)(void *))
{
    if (heap_side_run(w->t, fn, w) != 0) fn(w);
}

static void heap_sample_work(void *arg)
{
    struct heap_work *w = arg;
    struct heap_tls *t = w->t;
    uintptr_t pcs[HEAP_STACK_MAX];
    uint8_t walk_stop;
    size_t depth = heap_stack_of(t, w->fp, pcs, &walk_stop);
    void *p = heap_region_alloc(w->size, w->align);
    int64_t objects = heap_objects(w->weight, w->size);
    w->block = NULL;
    heap_mutex_lock(&heap_lock);
    if (!heap_active || t->gen != heap_gen) { /* the session ended meanwhile */
        heap_mutex_unlock(&heap_lock);
        if (p) heap_region_release(p);
        return;
    }
    if (!p) {
        heap_mutex_unlock(&heap_lock);
        w->full = 1;
        return;
    }
    uint32_t bucket = heap_bucket_of(t, pcs, depth, walk_stop);
    struct heap_bucket *b = &heap_table.buckets[bucket];
    b->alloc_objects += objects;
    b->alloc_bytes += w->weight;
    b->inuse_objects += objects;
    b->inuse_bytes += w->weight;
    heap_info.samples++;
    struct heap_block *h = heap_block_of(p);
    h->gen = heap_gen;
    h->bucket = bucket;
    h->weight = w->weight;
    heap_mutex_unlock(&heap_lock);
    w->block = p;
}

void *heap_sample(struct heap_tls *t, size_t size, size_t align, int zero, uintptr_t fp,
                  int64_t weight)
{
    int saved = errno;
    heap_ignore_enter();
    struct heap_work w = {.t = t, .fp = fp, .size = size, .align = align, .weight = weight};
    heap_work_run(&w, heap_sample_work);
    void *p = w.block;
    if (w.full) {
        /* No room in the region: the next allocator serves it (on this stack: its own
         * use of it is what the program has without the profiler), and the bytes are
         * counted as lost if it could (a request it refuses was never memory). */
        p = align <= 16 ? zero ? heap_next.calloc(1, size) : heap_next.malloc(size)
                        : heap_next.memalign(align, size);
        if (p) {
            heap_mutex_lock(&heap_lock);
            if (heap_active && t->gen == heap_gen) {
                heap_info.lost_objects += (uint64_t)heap_objects(weight, size);
                heap_info.lost_bytes += (uint64_t)weight;
            }
            heap_mutex_unlock(&heap_lock);
        }
    } else if (p && zero) {
        memset(p, 0, size);
    }
    heap_ignore_leave();
    errno = saved;
    return p;
}

static void heap_resize_work(void *arg)
{
    struct heap_work *w = arg;
    struct heap_tls *t = w->t;
    struct heap_block *h = heap_block_of(w->block);
    uintptr_t pcs[HEAP_STACK_MAX];
    uint8_t walk_stop;
    size_t depth = heap_stack_of(t, w->fp, pcs, &walk_stop);
    heap_mutex_lock(&heap_lock);
    if (heap_active && h->gen == heap_gen) {
        struct heap_bucket *old = &heap_table.buckets[h->bucket];
        old->inuse_objects -= 1;
        old->inuse_bytes -= h->weight;
        uint32_t bucket = heap_bucket_of(t, pcs, depth, walk_stop);
        struct heap_bucket *b = &heap_table.buckets[bucket];
        b->alloc_objects += 1;
        b->alloc_bytes += (int64_t)w->size;
        b->inuse_objects += 1;
        b->inuse_bytes += (int64_t)w->size;
        heap_info.samples++;
        h->bucket = bucket;
        h->weight = (int64_t)w->size;
        h->size = w->size;
        w->done = 1;
    }
    heap_mutex_unlock(&heap_lock);
}

int heap_resize_certain(void *p, size_t n, uintptr_t fp)
{
    struct heap_tls *t = &heap_tls;
    struct heap_block *h = heap_block_of(p);
    if (t->locks || t->ignore || n < (uint64_t)__atomic_load_n(&heap_certain, __ATOMIC_RELAXED) ||
        n > heap_region_usable(p) || h->gen != __atomic_load_n(&heap_gen, __ATOMIC_ACQUIRE) ||
        h->weight != (int64_t)h->size || !__atomic_load_n(&heap_active, __ATOMIC_ACQUIRE))
        return 0;
    int saved = errno;
    heap_ignore_enter();
    struct heap_work w = {.t = t, .fp = fp, .size = n, .block = p};
    heap_work_run(&w, heap_resize_work);
    heap_ignore_leave();
    errno = saved;
    return w.done;
}

/* A region block freed by a signal handler while its thread held a lock of the
 * profiler: kept on the thread's list until that lock's release (heap_mutex_unlock). A
 * nested handler may push too, hence the compare-and-swap. */
static void heap_defer_free(void *p)
{
    void *head = __atomic_load_n(&heap_tls.deferred, __ATOMIC_RELAXED);
    do
        *(void **)p = head;
    while (!__atomic_compare_exchange_n(&heap_tls.deferred, &head, p, 1, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED));
}

/* Runs fn(arg), kestrel's own work on a program's thread, on a side stack: a CPU sample
 * taken meanwhile is known for kestrel's (rtown.h). On this stack when none is free, or
 * when this thread already runs on one. */
static void heap_own_run(void (*fn)(void *), void *arg)
{
    if (heap_tls.side || heap_side_run(&heap_tls, fn, arg)) fn(arg);
}

void heap_free_deferred(void)
{
    void *p = __atomic_exchange_n(&heap_tls.deferred, NULL, __ATOMIC_RELAXED);
    while (p) {
        void *next = *(void **)p;
        heap_sampled_free(p);
        p = next;
    }
}

static void heap_sampled_free_work(void *p)
{
    struct heap_block *h = heap_block_of(p);
    if (h->gen && h->gen == __atomic_load_n(&heap_gen, __ATOMIC_ACQUIRE) &&
        __atomic_load_n(&heap_active, __ATOMIC_ACQUIRE)) {
        /* A free from inside the profiler's own sampling on this thread (a signal
         * handler) must not wait for the lock this thread may hold. */
        int locked = 1;
        if (heap_tls.ignore)
            locked = !heap_mutex_trylock(&heap_lock);
        else
            heap_mutex_lock(&heap_lock);
        if (locked) {
            if (heap_active && h->gen == heap_gen) {
                struct heap_bucket *b = &heap_table.buckets[h->bucket];
                b->inuse_objects -= heap_objects(h->weight, h->size);
                b->inuse_bytes -= h->weight;
            }
            heap_mutex_unlock(&heap_lock);
        }
    }
    heap_region_release(p);
}

void heap_sampled_free(void *p)
{
    if (heap_tls.locks)
        heap_defer_free(p);
    else
        heap_own_run(heap_sampled_free_work, p);
}

/* ===== sessions ===== */

static void heap_flush(enum lifecycle_event ev);
static void heap_after_fork_child(void);
/* Its flush may run in a fatal signal's handler (a single-threaded process): it
 * allocates only with mmap, formats with snprintf (integers and strings: no malloc),
 * writes with system calls and takes only the heap's own locks, each held under
 * lifecycle_hold. The images it lists come from dl_iterate_phdr, whose loader lock is
 * recursive. */
static const struct lifecycle_client heap_client = {.name = "heap",
                                                    .flush = heap_flush,
                                                    .after_fork_child = heap_after_fork_child,
                                                    .flush_in_handler = 1};

static void heap_build_tables(void *arg)
{
    (void)arg;
    uw_tables_refresh();
    uw_tables_build(1);
}

static int heap_start_locked(int64_t interval)
{
    if (heap_active) return -EBUSY;
    if (heap_shadowed) return -ENOTSUP;
    if (heap_region_init()) return -ENOMEM;
    struct heap_limits lim;
    heap_limits_from_env(&lim);
    struct heap_table tb;
    int rc = heap_table_init(&tb, &lim);
    if (rc) return rc;
    heap_new_probe();
    if (!heap_client_registered && lifecycle_register(&heap_client) == 0)
        heap_client_registered = 1;
    /* The unwind tables of what is mapped now, built before the first sample: malloc
     * cannot build one (the loader's lock) and a heap session has no thread of its
     * own to build them later. A heap session alone builds no more: an image dlopen'd
     * later is walked by frame pointer unless a CPU session runs (its engine
     * refreshes and builds). */
    if (uw_mode_current() != UW_MODE_FP) heap_own_run(heap_build_tables, NULL);
    heap_mutex_lock(&heap_lock);
    heap_table = tb;
    memset(&heap_info, 0, sizeof heap_info);
    heap_info.interval = interval;
    heap_info.start_ns = rt_clock_ns(CLOCK_REALTIME);
    __atomic_store_n(&heap_interval, interval, __ATOMIC_RELAXED);
    __atomic_store_n(&heap_certain, interval * HEAP_CERTAIN_X10 / 10, __ATOMIC_RELAXED);
    uint32_t gen = heap_gen + 1 ? heap_gen + 1 : 1;
    __atomic_store_n(&heap_gen, gen, __ATOMIC_RELEASE);
    __atomic_store_n(&heap_active, 1, __ATOMIC_RELEASE);
    heap_mutex_unlock(&heap_lock);
    heap_thread_reset_all();
    heap_tls.saved_left = 0; /* this thread too, once it stops ignoring */
    return 0;
}

/* Encodes the running session into `out` (gzip'd pprof); with `stop`, ends it.
 * The caller holds heap_api_lock and a session runs. */
static int heap_encode(int stop, struct pb_buf *out, int patient, int alloc_default)
{
    struct heap_bucket *copy = NULL;
    size_t copy_size = 0;
    if (!stop) { /* profile(): the counters as of now, while the session goes on */
        copy_size = ((heap_table.max.stacks + 1) * sizeof *copy + 4095) & ~(size_t)4095;
        copy = mmap(NULL, copy_size, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (copy == MAP_FAILED) return -ENOMEM;
    }
    if (heap_take(&heap_lock, patient)) {
        if (copy) munmap(copy, copy_size);
        return -EDEADLK;
    }
    struct heap_table snap = heap_table;
    struct heap_pprof_info info = heap_info;
    if (stop)
        __atomic_store_n(&heap_active, 0, __ATOMIC_RELEASE);
    else
        memcpy(copy, snap.buckets, snap.nbuckets * sizeof *copy);
    if (copy) snap.buckets = copy;
    heap_mutex_unlock(&heap_lock);
    info.end_ns = rt_clock_ns(CLOCK_REALTIME);
    info.alloc_default = alloc_default;
    int rc = out ? heap_pprof_write(&snap, &info, out) : 0;
    if (copy) munmap(copy, copy_size);
    if (stop) heap_table_free(&heap_table); /* nothing reads it once inactive */
    return rc;
}

/* The profile into a block of the next allocator, which the caller frees. */
static int heap_hand_over(const struct pb_buf *gz, void **data, size_t *size)
{
    void *p = heap_next.malloc(gz->len);
    if (!p) return -ENOMEM;
    memcpy(p, gz->data, gz->len);
    *data = p;
    *size = gz->len;
    return 0;
}

KESTREL_API int kestrel_heap_start(size_t interval)
{
    if (interval == 0) interval = HEAP_INTERVAL_DEFAULT;
    if (interval < HEAP_INTERVAL_MIN || interval > (size_t)HEAP_INTERVAL_MAX) return -EINVAL;
    heap_ignore_enter();
    heap_mutex_lock(&heap_api_lock);
    int rc = heap_start_locked((int64_t)interval);
    heap_mutex_unlock(&heap_api_lock);
    heap_ignore_leave();
    return rc;
}

static int heap_read(int stop, void **data, size_t *size)
{
    heap_ignore_enter();
    heap_mutex_lock(&heap_api_lock);
    int rc = -ESRCH;
    if (heap_active) {
        struct pb_buf gz = {0};
        rc = heap_encode(stop, data ? &gz : NULL, 1, 0);
        if (!rc && data) rc = heap_hand_over(&gz, data, size);
        pb_buf_free(&gz);
    }
    heap_mutex_unlock(&heap_api_lock);
    heap_ignore_leave();
    return rc;
}

int heap_profile_pprof(int alloc_default, struct pb_buf *out)
{
    heap_ignore_enter();
    heap_mutex_lock(&heap_api_lock);
    int rc = heap_active ? heap_encode(0, out, 1, alloc_default) : -ESRCH;
    heap_mutex_unlock(&heap_api_lock);
    heap_ignore_leave();
    return rc;
}

KESTREL_API int kestrel_heap_profile(void **data, size_t *size)
{
    if (!data || !size) return -EINVAL;
    return heap_read(0, data, size);
}

KESTREL_API int kestrel_heap_stop(void **data, size_t *size)
{
    if (data && !size) return -EINVAL;
    return heap_read(1, data, size);
}

KESTREL_API int kestrel_heap_is_running(void)
{
    return __atomic_load_n(&heap_active, __ATOMIC_ACQUIRE);
}

/* ===== the file ===== */

/* Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm): the default
 * name needs a date, and localtime may allocate. */
static void heap_civil(int64_t days, int *y, int *m, int *d)
{
    days += 719468;
    int64_t era = (days >= 0 ? days : days - 146096) / 146097;
    int64_t doe = days - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = (int)(yoe + era * 400 + (*m <= 2));
}

/* KESTREL_HEAP as a file name: a directory (or empty: the current one) gets the
 * default name of FORMATS.md §2, in UTC; otherwise %p becomes the pid. An image that
 * an exec started (generation g > 0) must not overwrite the file of the image before
 * it in the same pid: its default name has g where the first image has 0, and %p
 * becomes <pid>.<g>. A path without %p is the owner's (lifecycle_owner); any other
 * process of the tree appends .<pid>. */
static int heap_file_name(char *out, size_t n)
{
    const char *p = heap_path;
    size_t len = strlen(p);
    struct stat st;
    int pid = lifecycle_pid();
    unsigned gen = lifecycle_image_generation();
    if (!len || p[len - 1] == '/' || (stat(p, &st) == 0 && S_ISDIR(st.st_mode))) {
        int64_t secs = (int64_t)(rt_clock_ns(CLOCK_REALTIME) / 1000000000ull);
        int y, mo, d;
        heap_civil(secs / 86400, &y, &mo, &d);
        int64_t s = secs % 86400;
        int w = snprintf(out, n, "%s%sHeap.%04d%02d%02d.%02d%02d%02d.%d.%u.%03u.pb.gz", p,
                         len && p[len - 1] != '/' ? "/" : "", y, mo, d, (int)(s / 3600),
                         (int)(s / 60 % 60), (int)(s % 60), pid, gen, ++heap_seq);
        return w > 0 && (size_t)w < n ? 0 : -ENAMETOOLONG;
    }
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        int w = p[i] == '%' && p[i + 1] == 'p' ? (gen ? snprintf(out + o, n - o, "%d.%u", pid, gen)
                                                      : snprintf(out + o, n - o, "%d", pid))
                                               : snprintf(out + o, n - o, "%c", p[i]);
        if (w < 0 || (size_t)w >= n - o) return -ENAMETOOLONG;
        o += (size_t)w;
        i += p[i] == '%' && p[i + 1] == 'p';
    }
    /* No %p: the path is the owner's; any other process of the tree adds its pid. */
    if (!strstr(p, "%p") && !lifecycle_owner()) {
        int w = snprintf(out + o, n - o, ".%d", pid);
        if (w < 0 || (size_t)w >= n - o) return -ENAMETOOLONG;
    }
    return 0;
}

/* Written to a temporary name and renamed, so a reader never sees half a file (a
 * device or a FIFO is written in place: outfile.h). The file's name goes to `path`
 * (for the message of a failure). */
static int heap_write_file(const struct pb_buf *gz, char *path, size_t path_size)
{
    int rc = heap_file_name(path, path_size);
    if (rc) return rc;
    struct outfile f;
    rc = outfile_open(&f, path, lifecycle_pid());
    if (rc) return rc;
    size_t off = 0;
    while (off < gz->len && !rc) {
        ssize_t w = write(f.fd, gz->data + off, gz->len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0)
            rc = w < 0 ? -errno : -ENOSPC; /* a full disk, said as such */
        else
            off += (size_t)w;
    }
    rc = outfile_commit(&f, rc);
    if (!rc && heap_exec_file[0] && strcmp(heap_exec_file, path)) unlink(heap_exec_file);
    heap_exec_file[0] = 0; /* the file before the exec is superseded by this one */
    return rc;
}

/* ===== process life ===== */

static void heap_flush_work(void *arg)
{
    enum lifecycle_event ev = *(enum lifecycle_event *)arg;
    int patient = ev != LIFECYCLE_SIGNAL;
    int saved = errno;
    heap_ignore_enter();
    if (heap_path_set && !heap_take(&heap_api_lock, patient)) {
        if (heap_active) {
            struct pb_buf gz = {0};
            char path[sizeof heap_path + 64] = "";
            /* Before an exec the session goes on: if the exec fails, it is written
             * again, whole, at the image's end, and the file of the exec is removed
             * then if its name differs (a default name counts up). */
            int rc = heap_encode(ev != LIFECYCLE_EXEC, &gz, patient, 0);
            if (!rc) rc = heap_write_file(&gz, path, sizeof path);
            if (!rc && ev == LIFECYCLE_EXEC) snprintf(heap_exec_file, sizeof heap_exec_file, "%s", path);
            if (rc)
                rtsay("kestrel: heap profile: cannot write %s: %s", *path ? path : heap_path,
                      rtsay_errno(rc));
            pb_buf_free(&gz);
        }
        heap_mutex_unlock(&heap_api_lock);
    }
    heap_ignore_leave();
    errno = saved;
}

/* On a side stack, as kestrel's own work (the file is written on the program's thread). */
static void heap_flush(enum lifecycle_event ev)
{
    heap_own_run(heap_flush_work, &ev);
}

/* Only this thread exists: the parent's session is not the child's, and the parent's
 * sampled blocks are released by their frees without counting. A session that
 * KESTREL_HEAP started goes on in the child as a session of its own, written to the
 * child's file at its end, as an exec'd process's is: a prefork server's workers are
 * heap-profiled too. */
static int heap_fork_handlers;     /* of a fork child's two, how many have run */
static int64_t heap_fork_interval; /* the session to start again in it, 0 none */

void heap_fork_child_done(void)
{
    if (++heap_fork_handlers < 2) return;
    heap_fork_handlers = 0;
    int64_t interval = heap_fork_interval;
    heap_fork_interval = 0;
    if (interval) {
        int rc = kestrel_heap_start((size_t)interval);
        if (rc) rtsay("kestrel: heap profile: cannot start in a fork child: %s", rtsay_errno(rc));
    }
}

static void heap_after_fork_child(void)
{
    heap_fork_interval = heap_active && heap_path_set ? heap_info.interval : 0;
    heap_api_lock = (heap_mutex_t)HEAP_MUTEX_INIT;
    heap_lock = (heap_mutex_t)HEAP_MUTEX_INIT;
    heap_table_forget(&heap_table); /* not mapped here: MADV_DONTFORK */
    __atomic_store_n(&heap_active, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&heap_gen, heap_gen + 1 ? heap_gen + 1 : 1, __ATOMIC_RELEASE);
    heap_exec_file[0] = 0; /* the parent's */
    heap_fork_child_done();
}

static void heap_die(const char *what, const char *why)
{
    rtsay("kestrel: heap profile: %s: %s", what, why);
    _exit(1);
}

/* KESTREL_HEAP=<path> starts a session before the program runs; if it cannot start,
 * the process says why and exits 1 rather than run unprofiled. A bad
 * KESTREL_HEAP_INTERVAL is said and replaced by the default. */
__attribute__((constructor)) static void heap_from_env(void)
{
    const char *p = getenv("KESTREL_HEAP");
    if (!p) return;
    /* Relative to where the process started: it may change directory meanwhile. */
    size_t at = 0;
    if (p[0] != '/' && getcwd(heap_path, sizeof heap_path - 2)) {
        at = strlen(heap_path);
        heap_path[at++] = '/';
    }
    if (at + strlen(p) >= sizeof heap_path - 1) heap_die("KESTREL_HEAP", "path too long");
    strcpy(heap_path + at, p);
    heap_path_set = 1;
    if (!strstr(heap_path, "%p")) lifecycle_claim_owner();
    size_t interval = 0;
    const char *iv = getenv("KESTREL_HEAP_INTERVAL");
    if (iv && *iv) {
        /* As the CPU settings: a bad value is one line and the default, never a
         * program stopped before it ran. */
        char *end;
        errno = 0;
        unsigned long long v = strtoull(iv, &end, 10);
        if (*end || errno || *iv == '-' || v < HEAP_INTERVAL_MIN || v > (uint64_t)HEAP_INTERVAL_MAX)
            rtsay("kestrel: KESTREL_HEAP_INTERVAL=%s: not a number of bytes from %d to %lld; "
                  "using %d",
                  iv, HEAP_INTERVAL_MIN, (long long)HEAP_INTERVAL_MAX, HEAP_INTERVAL_DEFAULT);
        else
            interval = (size_t)v;
    }
    int rc = kestrel_heap_start(interval);
    if (rc == -ENOTSUP) {
        char why[400];
        snprintf(why, sizeof why,
                 "malloc comes from %s, found before libkestrel.so: the program's allocations "
                 "never reach kestrel; list libkestrel.so first in LD_PRELOAD",
                 heap_shadowed);
        heap_die("cannot start", why);
    }
    if (rc) heap_die("cannot start", strerror(-rc));
}
