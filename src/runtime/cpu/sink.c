/* sink.c — stack interning and sample rows, fed by whichever engine runs (sink.h).
 *
 * Signal handlers: nothing. Inside malloc: nothing. One thread at a time (the engine
 * thread, then the writer after the engine stopped), so there is no lock — but for the
 * window, which the HTTP thread opens and closes under sink_win_mu. */
#include "runtime/cpu/sink.h"
#include "runtime/unwind/callsite.h"
#include "runtime/rtmem.h"
#include "runtime/unwind/execmap.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

#define SINK_HASH_SLOTS (SINK_STACKS_MAX * 2) /* load factor at most 1/2 */
/* Rows are backed a chunk at a time, ahead of their writing: one madvise instead of a
 * page fault every 256 rows. A fresh page cost about 5 µs here (a virtual machine); the
 * faults were a quarter of the engine thread's time at 10 kHz, and populating the
 * pages in bulk costs a third less. */
#define SINK_ROWS_CHUNK 2048

struct sink_stack {
    uint64_t hash;
    uint32_t off;  /* first word in sink_words */
    uint16_t len;  /* words */
    uint8_t stop;  /* enum unwind_stop: how its walk ended (part of its identity) */
    uint8_t guessed; /* 1: the engine gave these frames to samples it did not walk (a
                      * wait or system-call time charged to an earlier stack); part of
                      * its identity */
};
_Static_assert(UNWIND_MAX_DEPTH < 1u << 16, "a stack's length fits");

/* Rules: sink_hash[h] is 0 (empty) or 1 + an index into sink_stacks; the stack at
 * index sink_other (if >= 0) is "(other stacks)", empty, and never in the hash. Once
 * either table is full, new stacks go there; the table with the last free entry
 * keeps it for that bucket. */
/* The tables of words, rows and counts past the rows are mapped at a small size and
 * grow (mremap, doubling) up to their limits as they fill: reserving their limits at
 * start took 105 MiB of address space from every profiled process, which a program
 * under RLIMIT_AS then lacked. A table that cannot grow is full. */
struct sink_grow {
    size_t bytes; /* mapped */
    size_t max;   /* its limit */
};
static struct sink_grow sink_words_g, sink_rows_g, sink_agg_g;
#define SINK_WORDS_FIRST (64u << 10)  /* bytes mapped at the start */
#define SINK_ROWS_FIRST (128u << 10)
#define SINK_AGG_FIRST (64u << 10)

/* Makes *p hold `need` bytes (a table's entries so far and the next ones). 0, or -1
 * when it is at its limit or the mapping cannot grow. */
static int sink_grow(void **p, struct sink_grow *g, size_t need)
{
    if (need <= g->bytes) return 0;
    if (need > g->max) return -1;
    size_t to = g->bytes;
    while (to < need)
        to *= 2;
    if (to > g->max) to = g->max;
    void *q = mremap(*p, g->bytes, to, MREMAP_MAYMOVE);
    if (q == MAP_FAILED) return -1;
    *p = q;
    g->bytes = to;
    return 0;
}

static struct sink_stack *sink_stacks; /* SINK_STACKS_MAX */
static uint32_t *sink_hash;            /* SINK_HASH_SLOTS */
static uint64_t *sink_words;           /* SINK_WORDS_MAX at most (sink_words_g) */
static struct sink_row *sink_rowv;     /* SINK_SAMPLES_MAX at most (sink_rows_g) */
static struct sink_agg_entry *sink_aggv; /* SINK_AGG_MAX at most (sink_agg_g), past the rows */
static uint32_t *sink_agg_hash;          /* SINK_AGG_HASH: 0 empty, else 1 + index */
static size_t sink_rows_max = SINK_SAMPLES_MAX;
static struct sink_counts sink_n;
static int32_t sink_other = -1;
static uint64_t sink_start_ns;
static struct execmap sink_exec; /* what a return address may be (execmap.h) */

#define SINK_BYTES_STACKS (sizeof(struct sink_stack) * SINK_STACKS_MAX)
#define SINK_BYTES_HASH (sizeof(uint32_t) * SINK_HASH_SLOTS)
#define SINK_BYTES_WORDS (sizeof(uint64_t) * SINK_WORDS_MAX)
#define SINK_BYTES_ROWS (sizeof(struct sink_row) * SINK_SAMPLES_MAX)
#define SINK_AGG_HASH (SINK_AGG_MAX * 2)
#define SINK_BYTES_AGG (sizeof(struct sink_agg_entry) * SINK_AGG_MAX)
#define SINK_BYTES_AGG_HASH (sizeof(uint32_t) * SINK_AGG_HASH)

/* The tables are not in a fork child (rtmem_alloc_nofork): a fork copied the page
 * tables of whatever part of their 115 MiB the session had touched, the child unmapped
 * them again, and the parent's engine took a copy-on-write fault on each page it wrote
 * next. In the child they are forgotten, never unmapped. */
static void sink_release(int unmap)
{
    execmap_free(&sink_exec);
    if (unmap) {
        rtmem_free(sink_stacks, SINK_BYTES_STACKS);
        rtmem_free(sink_hash, SINK_BYTES_HASH);
        rtmem_free(sink_words, sink_words_g.bytes);
        rtmem_free(sink_rowv, sink_rows_g.bytes);
        rtmem_free(sink_aggv, sink_agg_g.bytes);
        rtmem_free(sink_agg_hash, SINK_BYTES_AGG_HASH);
    }
    sink_aggv = NULL;
    sink_agg_hash = NULL;
    sink_stacks = NULL;
    sink_hash = NULL;
    sink_words = NULL;
    sink_rowv = NULL;
}

static void sink_unmap(void)
{
    sink_release(1);
}

static void sink_window_session_changed(int ended);

int sink_open(uint64_t mono_start_ns, size_t rows_max)
{
    sink_window_session_changed(0);
    sink_unmap();
    sink_stacks = rtmem_alloc_nofork(SINK_BYTES_STACKS);
    sink_hash = rtmem_alloc_nofork(SINK_BYTES_HASH);
    sink_words_g = (struct sink_grow){SINK_WORDS_FIRST, SINK_BYTES_WORDS};
    sink_rows_g = (struct sink_grow){SINK_ROWS_FIRST, SINK_BYTES_ROWS};
    sink_agg_g = (struct sink_grow){SINK_AGG_FIRST, SINK_BYTES_AGG};
    sink_words = rtmem_alloc_nofork(sink_words_g.bytes);
    sink_rowv = rtmem_alloc_nofork(sink_rows_g.bytes);
    sink_aggv = rtmem_alloc_nofork(sink_agg_g.bytes);
    sink_agg_hash = rtmem_alloc_nofork(SINK_BYTES_AGG_HASH);
    memset(&sink_n, 0, sizeof(sink_n));
    sink_other = -1;
    sink_start_ns = mono_start_ns;
    sink_rows_max = rows_max < SINK_SAMPLES_MAX ? rows_max : SINK_SAMPLES_MAX;
    sink_n.rows_max = sink_rows_max;
    if (!sink_stacks || !sink_hash || !sink_words || !sink_rowv || !sink_aggv || !sink_agg_hash) {
        sink_unmap();
        return -ENOMEM;
    }
    return 0;
}

void sink_close(void)
{
    sink_window_session_changed(1);
    sink_unmap();
}

static void sink_window_forget(void);

void sink_forget_after_fork(void)
{
    sink_window_forget();
    sink_release(0);
    memset(&sink_n, 0, sizeof(sink_n));
}

static uint64_t sink_hash_words(const uint64_t *w, size_t n, unsigned stop, unsigned guessed)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n ^ ((uint64_t)stop << 56) ^ ((uint64_t)guessed << 48);
    for (size_t i = 0; i < n; i++) {
        h ^= w[i];
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return h;
}

static int32_t sink_other_bucket(void)
{
    if (sink_other < 0) {
        sink_other = (int32_t)sink_n.stacks++;
        sink_stacks[sink_other] = (struct sink_stack){0, 0, 0, UNWIND_NOT_WALKED, 0};
    }
    return sink_other;
}

/* The index of this stack, interned on first sight; "(other stacks)" past a limit. */
static int32_t sink_intern(const uint64_t *frames, size_t n, unsigned stop, unsigned guessed)
{
    uint64_t h = sink_hash_words(frames, n, stop, guessed);
    size_t mask = SINK_HASH_SLOTS - 1, i = h & mask;
    for (; sink_hash[i]; i = (i + 1) & mask) {
        const struct sink_stack *st = &sink_stacks[sink_hash[i] - 1];
        if (st->hash == h && st->len == n && st->stop == stop && st->guessed == guessed &&
            memcmp(&sink_words[st->off], frames, n * sizeof(uint64_t)) == 0)
            return (int32_t)(sink_hash[i] - 1);
    }
    if (sink_n.stacks >= SINK_STACKS_MAX - 1 || sink_n.words + n > SINK_WORDS_MAX ||
        sink_grow((void **)&sink_words, &sink_words_g, (sink_n.words + n) * sizeof(uint64_t))) {
        sink_n.other_stack_samples++;
        return sink_other_bucket();
    }
    uint32_t idx = (uint32_t)sink_n.stacks++;
    sink_stacks[idx] =
        (struct sink_stack){h, (uint32_t)sink_n.words, (uint16_t)n, (uint8_t)stop, (uint8_t)guessed};
    memcpy(&sink_words[sink_n.words], frames, n * sizeof(uint64_t));
    sink_n.words += n;
    sink_hash[i] = idx + 1;
    return (int32_t)idx;
}

/* ===== past the rows: counts per (stack, thread, state) ===== */

static void sink_count_past_rows(uint32_t thread, uint64_t cpu_ns, int state, int32_t stack)
{
    uint32_t stack1 = (uint32_t)(stack + 1);
    uint64_t h = ((uint64_t)stack1 * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)thread << 1 | (unsigned)state);
    h *= 0xff51afd7ed558ccdull;
    size_t mask = SINK_AGG_HASH - 1, i = (h >> 32) & mask;
    for (; sink_agg_hash[i]; i = (i + 1) & mask) {
        struct sink_agg_entry *e = &sink_aggv[sink_agg_hash[i] - 1];
        if (e->stack1 == stack1 && e->thread == thread && e->state == (uint32_t)state) {
            e->count++;
            e->cpu_ns += cpu_ns;
            sink_n.agg_samples++;
            sink_n.agg_cpu_ns += cpu_ns;
            return;
        }
    }
    if (sink_n.agg_entries >= SINK_AGG_MAX ||
        sink_grow((void **)&sink_aggv, &sink_agg_g,
                  (sink_n.agg_entries + 1) * sizeof(struct sink_agg_entry))) {
        sink_n.samples_past_limit++;
        sink_n.past_limit_cpu_ns += cpu_ns;
        return;
    }
    uint32_t idx = (uint32_t)sink_n.agg_entries++;
    sink_aggv[idx] = (struct sink_agg_entry){stack1, thread, (uint32_t)state, 0, 1, cpu_ns};
    sink_agg_hash[i] = idx + 1;
    sink_n.agg_samples++;
    sink_n.agg_cpu_ns += cpu_ns;
}

size_t sink_agg_count(void)
{
    return sink_n.agg_entries;
}

const struct sink_agg_entry *sink_agg(size_t i)
{
    return &sink_aggv[i];
}

static void sink_window_add(struct reg_thread *t, uint32_t thread, uint64_t t_ns, uint64_t cpu_ns,
                            int state, int32_t stack);
static _Atomic int sink_win_on; /* a window is open: the engine thread fills it */

/* A row of thread record `ti` (the slot's, or a fiber's of that thread). */
static void sink_add_row(uint32_t ti, uint64_t t_ns, uint64_t cpu_ns, int state, int32_t stack);

void sink_add_interned_to(uint32_t thread, uint64_t t_ns, uint64_t cpu_ns, int state,
                          int32_t stack)
{
    sink_add_row(thread, t_ns, cpu_ns, state, stack);
}

void sink_add_interned(struct reg_slot *slot, uint64_t t_ns, uint64_t cpu_ns, int state,
                       int32_t stack)
{
    sink_add_row(slot->thread_index, t_ns, cpu_ns, state, stack);
}

static void sink_add_row(uint32_t ti, uint64_t t_ns, uint64_t cpu_ns, int state, int32_t stack)
{
    if (!sink_rowv) return;
    struct reg_thread *t = registry_thread(ti);
    if (t && !t->sampled) {
        t->sampled = 1;
        registry_read_name(t);
    }
    if (atomic_load_explicit(&sink_win_on, memory_order_acquire))
        sink_window_add(t, ti, t_ns, cpu_ns, state, stack);
    uint64_t rel = t_ns > sink_start_ns ? t_ns - sink_start_ns : 0;
    if (sink_n.samples >= sink_rows_max ||
        sink_grow((void **)&sink_rowv, &sink_rows_g,
                  (sink_n.samples + 1) * sizeof(struct sink_row))) {
        /* The earliest of them: engines drain thread by thread, so rows may go on a
         * little past it, but no sample before it lacks a row. */
        if ((!sink_n.agg_samples && !sink_n.samples_past_limit) || rel < sink_n.timed_end_ns)
            sink_n.timed_end_ns = rel;
        sink_count_past_rows(ti, cpu_ns, state, stack);
        return;
    }
    if (sink_n.samples % SINK_ROWS_CHUNK == 0) { /* a kernel without it faults as before */
        size_t left = sink_rows_g.bytes - sink_n.samples * sizeof(struct sink_row);
        size_t want = SINK_ROWS_CHUNK * sizeof(struct sink_row);
        madvise(&sink_rowv[sink_n.samples], want < left ? want : left, MADV_POPULATE_WRITE);
    }
    sink_rowv[sink_n.samples++] = (struct sink_row){
        .t_rel_ns = rel < SINK_ROW_T_MAX ? rel : SINK_ROW_T_MAX,
        .cpu_ns = cpu_ns < SINK_ROW_CPU_MAX ? cpu_ns : SINK_ROW_CPU_MAX,
        .thread = ti,
        .stack1 = (uint32_t)(stack + 1),
        .state = (unsigned)state,
    };
}

int32_t sink_add(const struct sink_sample *s)
{
    if (!sink_rowv) return -1;
    enum unwind_stop stop = s->stop < UNWIND_STOPS ? (enum unwind_stop)s->stop : UNWIND_NOT_WALKED;
    size_t n = s->nframes > UNWIND_MAX_DEPTH ? UNWIND_MAX_DEPTH : s->nframes;
    /* A fiber's walk ends at the fiber's own outermost frame, not at the thread's. */
    n = execmap_trim(&sink_exec, s->frames, n, s->slot->rooted && !s->thread1, &stop);
    /* A fiber's outermost frame is the library's entry trampoline, whose return
     * address follows no call (callsite.h): the walk that stopped past it is whole. */
    if (s->thread1 && n >= 2 && unwind_cut_short(stop) && stop != UNWIND_CUT_DEPTH &&
        stop != UNWIND_CUT_COPY_END && uw_ra_follows_call(s->frames[n - 1]) == 0)
        stop = UNWIND_END_ZERO;
    sink_n.stops[stop]++;
    if (unwind_cut_short(stop)) sink_n.cut_short++;
    int32_t st = sink_intern(s->frames, n, stop, s->guessed != 0);
    sink_add_row(s->thread1 ? s->thread1 - 1 : s->slot->thread_index, s->t_ns, s->cpu_ns, s->state,
                 st);
    return st;
}

static void sink_window_drop(uint64_t n);

void sink_drop(uint64_t n)
{
    sink_n.dropped += n;
    if (atomic_load_explicit(&sink_win_on, memory_order_acquire)) sink_window_drop(n);
}

const struct sink_counts *sink_counts(void)
{
    return &sink_n;
}

size_t sink_row_count(void)
{
    return sink_n.samples;
}

const struct sink_row *sink_rows(void)
{
    return sink_rowv;
}

size_t sink_stack_count(void)
{
    return sink_n.stacks;
}

const uint64_t *sink_stack(size_t i, size_t *n)
{
    const struct sink_stack *st = &sink_stacks[i];
    *n = st->len;
    return &sink_words[st->off];
}

enum unwind_stop sink_stack_stop(size_t i)
{
    return (enum unwind_stop)sink_stacks[i].stop;
}

int sink_stack_guessed(size_t i)
{
    return sink_stacks[i].guessed;
}

int32_t sink_guessed_twin(int32_t stack)
{
    if (stack < 0 || (uint32_t)stack >= sink_n.stacks || stack == sink_other ||
        sink_stacks[stack].guessed)
        return stack;
    const struct sink_stack st = sink_stacks[stack];
    uint64_t frames[UNWIND_MAX_DEPTH]; /* growing the table may move it (mremap) */
    memcpy(frames, &sink_words[st.off], st.len * sizeof *frames);
    return sink_intern(frames, st.len, st.stop, 1);
}

int32_t sink_other_stack(void)
{
    return sink_other;
}

/* ============================== the window ============================== */

/* Rules: sink_win_on is 1 exactly while a window is open, and only changes under
 * sink_win_mu; the tables below belong to the open window (the engine thread writes
 * them under the mutex) and pass to the caller of sink_window_close(). The maps from
 * the session's stack and thread indices to the window's are reset when a session
 * starts or ends, since those indices are the session's. */
static pthread_mutex_t sink_win_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sink_window sink_win;   /* the open window */
static void *sink_win_map;            /* its tables, one mapping */
static size_t sink_win_map_size;
static uint32_t *sink_win_hash;       /* entries: 0 empty, else 1 + index */
static uint32_t *sink_win_stack_of;   /* session stack + 1 -> window stack + 1 */
static uint32_t *sink_win_thread_of;  /* session thread -> window thread + 1 */
static int sink_win_session;          /* a session is open */

#define SINK_WIN_HASH (SINK_WIN_ENTRIES * 2)

static size_t sink_win_bytes(void)
{
    size_t n = SINK_WIN_ENTRIES * sizeof(struct sink_agg_entry) +
               SINK_WIN_ENTRIES * sizeof(struct sink_win_stack) +
               SINK_WIN_WORDS * sizeof(uint64_t) + SINK_WIN_THREADS * sizeof(struct sink_win_thread) +
               SINK_WIN_HASH * sizeof(uint32_t) + (SINK_STACKS_MAX + 1) * sizeof(uint32_t) +
               REGISTRY_THREADS_MAX * sizeof(uint32_t);
    return (n + 4095) & ~(size_t)4095;
}

static void sink_win_maps_reset(void)
{
    memset(sink_win_stack_of, 0, (SINK_STACKS_MAX + 1) * sizeof(uint32_t));
    memset(sink_win_thread_of, 0, REGISTRY_THREADS_MAX * sizeof(uint32_t));
}

static void sink_window_session_changed(int ended)
{
    pthread_mutex_lock(&sink_win_mu);
    sink_win_session = !ended;
    if (atomic_load(&sink_win_on)) {
        sink_win_maps_reset();
        if (ended) sink_win.session_ended = 1;
    }
    pthread_mutex_unlock(&sink_win_mu);
}

static void sink_window_forget(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    sink_win_mu = fresh;
    atomic_store(&sink_win_on, 0);
    sink_win_session = 0;
    rtmem_free(sink_win_map, sink_win_map_size);
    sink_win_map = NULL;
}

int sink_window_open(uint64_t mono_now, unsigned hz, const char *engine)
{
    size_t size = sink_win_bytes();
    char *m = rtmem_alloc(size);
    if (!m) return -ENOMEM;
    pthread_mutex_lock(&sink_win_mu);
    int rc = !sink_win_session ? -ESRCH : atomic_load(&sink_win_on) ? -EBUSY : 0;
    if (rc) {
        pthread_mutex_unlock(&sink_win_mu);
        rtmem_free(m, size);
        return rc;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    sink_win = (struct sink_window){
        .start_mono_ns = mono_now,
        .end_mono_ns = UINT64_MAX,
        .start_real_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec,
        .hz = hz,
        .engine = engine,
    };
    sink_win_map = m;
    sink_win_map_size = size;
    sink_win.entries = (struct sink_agg_entry *)m;
    m += SINK_WIN_ENTRIES * sizeof(struct sink_agg_entry);
    sink_win.stacks = (struct sink_win_stack *)m;
    m += SINK_WIN_ENTRIES * sizeof(struct sink_win_stack);
    sink_win.words = (uint64_t *)m;
    m += SINK_WIN_WORDS * sizeof(uint64_t);
    sink_win.threads = (struct sink_win_thread *)m;
    m += SINK_WIN_THREADS * sizeof(struct sink_win_thread);
    sink_win_hash = (uint32_t *)m;
    m += SINK_WIN_HASH * sizeof(uint32_t);
    sink_win_stack_of = (uint32_t *)m;
    m += (SINK_STACKS_MAX + 1) * sizeof(uint32_t);
    sink_win_thread_of = (uint32_t *)m;
    atomic_store_explicit(&sink_win_on, 1, memory_order_release);
    pthread_mutex_unlock(&sink_win_mu);
    return 0;
}

int sink_window_close(struct sink_window *w)
{
    pthread_mutex_lock(&sink_win_mu);
    if (!atomic_load(&sink_win_on)) {
        pthread_mutex_unlock(&sink_win_mu);
        return -ESRCH;
    }
    atomic_store(&sink_win_on, 0);
    if (sink_win.end_mono_ns == UINT64_MAX) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        sink_win.end_mono_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    }
    *w = sink_win;
    sink_win_map = NULL; /* the mapping goes with *w: entries sit at its start */
    pthread_mutex_unlock(&sink_win_mu);
    return 0;
}

void sink_window_end_at(uint64_t mono_end)
{
    pthread_mutex_lock(&sink_win_mu);
    if (atomic_load(&sink_win_on)) sink_win.end_mono_ns = mono_end;
    pthread_mutex_unlock(&sink_win_mu);
}

void sink_window_free(struct sink_window *w)
{
    if (w->entries) rtmem_free(w->entries, sink_win_bytes());
    w->entries = NULL;
}

/* Engine thread. The window's stack for a session stack, copied on first sight;
 * 0 when the window's tables are full. */
static uint32_t sink_win_stack(int32_t stack)
{
    uint32_t *slot = &sink_win_stack_of[stack + 1];
    if (*slot) return *slot;
    size_t n = 0;
    const uint64_t *f = stack >= 0 && stack < (int32_t)sink_n.stacks ? sink_stack((size_t)stack, &n) : NULL;
    if (sink_win.n_stacks >= SINK_WIN_ENTRIES || sink_win.n_words + n > SINK_WIN_WORDS) return 0;
    struct sink_win_stack *ws = &sink_win.stacks[sink_win.n_stacks++];
    ws->off = (uint32_t)sink_win.n_words;
    ws->len = (uint32_t)n;
    ws->guessed = f ? sink_stacks[stack].guessed : 0;
    if (n) memcpy(&sink_win.words[ws->off], f, n * sizeof(uint64_t));
    sink_win.n_words += n;
    return *slot = (uint32_t)sink_win.n_stacks;
}

static uint32_t sink_win_thread(struct reg_thread *t, uint32_t thread)
{
    if (thread >= REGISTRY_THREADS_MAX) return 0;
    uint32_t *slot = &sink_win_thread_of[thread];
    if (*slot) return *slot;
    if (sink_win.n_threads >= SINK_WIN_THREADS) return 0;
    struct sink_win_thread *wt = &sink_win.threads[sink_win.n_threads++];
    if (t) {
        if (!t->name[0]) registry_read_name(t);
        wt->tid = t->tid;
        memcpy(wt->name, t->name, sizeof(wt->name));
        memcpy(wt->label, t->label, sizeof(wt->label));
        wt->name[sizeof(wt->name) - 1] = 0;
        wt->label[sizeof(wt->label) - 1] = 0;
    }
    return *slot = (uint32_t)sink_win.n_threads;
}

static void sink_window_add(struct reg_thread *t, uint32_t thread, uint64_t t_ns, uint64_t cpu_ns,
                            int state, int32_t stack)
{
    pthread_mutex_lock(&sink_win_mu);
    if (!atomic_load(&sink_win_on) || t_ns < sink_win.start_mono_ns ||
        t_ns >= sink_win.end_mono_ns)
        goto out;
    sink_win.samples++;
    sink_win.cpu_ns += cpu_ns;
    uint32_t ws = sink_win_stack(stack), wt = sink_win_thread(t, thread);
    if (!ws || !wt) {
        sink_win.lost++;
        goto out;
    }
    uint64_t h = ((uint64_t)ws * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)wt << 1 | (unsigned)state);
    h *= 0xff51afd7ed558ccdull;
    size_t mask = SINK_WIN_HASH - 1, i = (h >> 32) & mask;
    for (; sink_win_hash[i]; i = (i + 1) & mask) {
        struct sink_agg_entry *e = &sink_win.entries[sink_win_hash[i] - 1];
        if (e->stack1 == ws && e->thread == wt - 1 && e->state == (uint32_t)state) {
            e->count++;
            e->cpu_ns += cpu_ns;
            goto out;
        }
    }
    if (sink_win.n_entries >= SINK_WIN_ENTRIES) {
        sink_win.lost++;
        goto out;
    }
    sink_win.entries[sink_win.n_entries] =
        (struct sink_agg_entry){ws, wt - 1, (uint32_t)state, 0, 1, cpu_ns};
    sink_win_hash[i] = (uint32_t)++sink_win.n_entries;
out:
    pthread_mutex_unlock(&sink_win_mu);
}

static void sink_window_drop(uint64_t n)
{
    pthread_mutex_lock(&sink_win_mu);
    if (atomic_load(&sink_win_on)) sink_win.dropped += n;
    pthread_mutex_unlock(&sink_win_mu);
}
