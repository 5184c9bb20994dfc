/* The heap profiler's internal interfaces, shared by its files:
 *
 *   heap.c          malloc & co interposed; the per-thread countdown (the fast path)
 *   heap_thread.c   the registry of per-thread countdowns, so a start reaches every thread
 *   heap_new.c      C++ operator new and delete, every form
 *   heap_region.c   the runtime-owned region that sampled blocks (and bootstrap ones) live in
 *   heap_stack.c    the walk of the allocating thread's stack
 *   heap_side.c     the side stacks a sample runs on, off the allocating thread's stack
 *   heap_mutex.c    the contended half of the profiler's own mutex
 *   heap_table.c    bounded buckets, stack words and strings, with an (other stacks) bucket
 *   heap_session.c  the session: API, environment, sampling, lifecycle client, files
 *   heap_pprof.c    the unsymbolized pprof of a session (FORMATS.md §2)
 *   heap_gzip.c     its gzip, without zlib
 *
 * Nothing of the heap profiler runs in a signal handler of its own; everything here
 * may run inside malloc and therefore never calls malloc for its own data. */
#ifndef KESTREL_HEAP_H
#define KESTREL_HEAP_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/arch/arch.h"
#include "runtime/heap/heap_guard.h"
#include "runtime/lifecycle.h"
#include "common/pbwire.h"
#include "runtime/unwind/unwind.h"

/* Declared hidden, as the library defines them, so the fast paths read the globals
 * straight from their addresses rather than through the GOT. */
#pragma GCC visibility push(hidden)

#define HEAP_INTERVAL_DEFAULT (512 * 1024)
#define HEAP_INTERVAL_MIN (64 * 1024)
#define HEAP_INTERVAL_MAX ((int64_t)1 << 32)
#define HEAP_LEFT_IDLE ((int64_t)1 << 62) /* a countdown that never reaches 0 */
/* A block of at least HEAP_CERTAIN_X10 / 10 intervals holds a sample point with
 * probability 1 - e^-4.6 > 99%: it is sampled for sure, at its size (docs/heap.md). The
 * countdown's draws are capped at the same length, so such a block always reaches the
 * slow path. */
#define HEAP_CERTAIN_X10 46
#define HEAP_STACK_MAX 128

/* ===== per-thread state (initial-exec TLS) ===== */

/* `left` is the only field the fast path touches: malloc subtracts the size and
 * takes the slow path when it is no longer positive. Other threads store 0 into it
 * (relaxed atomics) to send a thread to its slow path at a session start; everything
 * else is the owner's. `left` stays in [0, 2^63): the fast path compares unsigned, so
 * a request of 2^63 bytes or more always reaches the slow path.
 *
 * `locks` > 0 means the thread is inside the profiler, holding one of its locks; an
 * allocation then (a signal handler that interrupted it) is not sampled, and a free
 * of a region block is deferred to `deferred`, given back at the last unlock. */
struct heap_tls {
    int64_t left;       /* bytes until this thread's next sample */
    int64_t drawn;      /* the interval drawn at the last sample or reset */
    int64_t saved_left; /* `left` while the thread ignores its own allocations */
    uint64_t rng;       /* xorshift64 state, 0 until seeded */
    uint64_t stack_hi;  /* top of this thread's stack; 0 unknown, 1 unknowable */
    uint32_t gen;       /* session generation `drawn` belongs to */
    int32_t slot;       /* index in the thread registry, -1 when not registered */
    int32_t ignore;     /* depth of heap_ignore_enter() */
    int32_t exited;     /* its key destructor ran: pass through from now on */
    int32_t locks;      /* locks of the heap profiler this thread holds */
    int32_t in_handler; /* depth of the program's signal handlers it runs (sigwrap.c) */
    void *deferred;     /* region blocks freed while it held one, linked by first word */
    uint64_t handler_frame; /* the outermost handler's trampoline frame */
    int64_t handler_left;   /* `left` when that handler began */
    uint32_t samples;   /* samples this thread took (for the name's refresh) */
    uint32_t name_id;   /* `name` interned in the table of session name_gen */
    uint32_t name_gen;  /* 0 when `name` changed since it was interned */
    char name[16];      /* its name as of its last refresh */
    struct heap_side *side; /* the side stack its sample runs on now (heap_side.c), NULL */
};
/* Every byte of it is taken from each thread's stack (glibc carves static TLS out of
 * it): 8 bytes more made a PTHREAD_STACK_MIN thread that had just enough overflow
 * (tests/runtime/test_small_stack.py). Its fields are ordered so that it has no hole. */
_Static_assert(sizeof(struct heap_tls) == 128, "heap_tls: 128 bytes, no hole");
extern __thread struct heap_tls heap_tls;

/* ===== locks (heap_mutex.c) ===== */

/* The heap profiler's mutex: a futex word, 0 free, 1 taken, 2 taken with waiters
 * (Drepper, "Futexes Are Tricky", mutex 3). Uncontended, its lock and its unlock are
 * one atomic instruction each, inline, where glibc's took about 55 instructions
 * together (callgrind), and a sample with its free takes four of them.
 * HEAP_MUTEX_INIT is its initial value; a fork child sets it anew.
 *
 * Every lock of the heap profiler is also held under lifecycle_hold: a fatal signal
 * that reaches a thread holding one waits for its release, so the signal's flush
 * (which takes them) never waits for a thread that cannot run. */
typedef struct {
    int word;
} heap_mutex_t;
/* clang-format off */
#define HEAP_MUTEX_INIT {0}
/* clang-format on */

void heap_mutex_wait(heap_mutex_t *m); /* the contended lock */
void heap_mutex_wake(heap_mutex_t *m); /* the unlock that found waiters */
void heap_free_deferred(void);         /* the frees a signal handler left */

static inline void heap_mutex_lock(heap_mutex_t *m)
{
    lifecycle_hold();
    heap_tls.locks++;
    __atomic_signal_fence(__ATOMIC_SEQ_CST); /* counted before the lock is taken */
    int free_ = 0;
    if (!__atomic_compare_exchange_n(&m->word, &free_, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        heap_mutex_wait(m);
}
static inline int heap_mutex_trylock(heap_mutex_t *m) /* 0 when taken, as pthread's */
{
    lifecycle_hold();
    heap_tls.locks++;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    int free_ = 0;
    if (__atomic_compare_exchange_n(&m->word, &free_, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        return 0;
    heap_tls.locks--;
    lifecycle_release();
    return 16; /* EBUSY */
}
static inline void heap_mutex_unlock(heap_mutex_t *m)
{
    if (__atomic_exchange_n(&m->word, 0, __ATOMIC_RELEASE) == 2) heap_mutex_wake(m);
    __atomic_signal_fence(__ATOMIC_SEQ_CST); /* the lock dropped before it is uncounted */
    if (--heap_tls.locks == 0 && __builtin_expect(heap_tls.deferred != NULL, 0))
        heap_free_deferred();
    lifecycle_release();
}

/* ===== the next allocator (heap.c) ===== */

struct heap_next {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    size_t (*malloc_usable_size)(void *);
};
extern struct heap_next heap_next;
/* The object whose malloc the program calls instead of the runtime's (an allocator
 * preloaded before libkestrel.so, or defined by the executable), or NULL. Set once
 * malloc is resolved; no session can start then: allocations are not seen. */
extern const char *heap_shadowed;

/* The slow path of an allocation of n bytes, reached when heap_count() says so: a
 * sampled block (from the region, or the next allocator's when the region is full), or
 * NULL to allocate it the normal way. fp is the interposed function's frame. */
void *heap_try_sample(size_t n, size_t align, int zero, uintptr_t fp);

/* The fast path: 1 when this allocation of n bytes must look at the slow path, i.e.
 * the countdown was at most n, compared unsigned: a request of 2^63 bytes or more,
 * beyond any allocator's limit, reaches the slow path too, which keeps `left` in
 * [0, 2^63). Where the architecture has it (x86_64), that is one subtraction in
 * place whose own flags decide (arch.h). */
static inline int heap_count(size_t n)
{
    int slow;
#if defined(ARCH_SUB_BELOW_OR_EQ)
    ARCH_SUB_BELOW_OR_EQ(heap_tls.left, n, slow);
#else
    uint64_t left = (uint64_t)__atomic_load_n(&heap_tls.left, __ATOMIC_RELAXED);
    __atomic_store_n(&heap_tls.left, (int64_t)(left - n), __ATOMIC_RELAXED);
    slow = left <= n;
#endif
    return __builtin_expect(slow, 0);
}

/* ===== C++ operator new and delete (heap_new.c) ===== */

/* While heap_new_probe() calls the next operator new on a thread, that thread's
 * heap_tls: every slow path it reaches sets heap_probe_hit instead of sampling. */
extern struct heap_tls *heap_probe_owner;
extern int heap_probe_hit;
/* Finds which forms of the next operator new serve memory without reaching malloc or
 * its siblings (an allocator that defines them, as tcmalloc and jemalloc do): kestrel's
 * operator new counts those itself, and passes the others through (libstdc++'s, whose
 * malloc it counts). At a session's start, under heap_api_lock. */
void heap_new_probe(void);

/* ===== thread registry (heap_thread.c) ===== */

void heap_thread_register(struct heap_tls *t);
/* Sends every registered thread to its slow path (a session started). */
void heap_thread_reset_all(void);

/* ===== region (heap_region.c) ===== */

/* The header in front of every block of the region. */
struct heap_block {
    uint32_t gen;       /* session generation that sampled it; 0 for a bootstrap block */
    uint32_t bucket;    /* its bucket in that session's table */
    int64_t weight;     /* bytes it stands for */
    uint64_t size;      /* bytes requested */
    uint32_t chunk_off; /* from the chunk's start to the user pointer */
    uint32_t cls;       /* chunk size class: 2^cls pages */
};

/* The region is [lo, lo + span). Until it is made, lo is 2^63 and span 0, and lo
 * stays a non-canonical address until span is set: p - lo, for any user address p,
 * is then at least 2^63 - 2^57, far beyond any span. So free's test is one subtract
 * and compare, needs no ordering between the two loads, and is false for NULL. */
extern uintptr_t heap_region_lo;
extern uintptr_t heap_region_span;
#define HEAP_REGION_NOWHERE ((uintptr_t)1 << 63)

static inline int heap_region_has(const void *p)
{
    /* Plain loads (each word is written once, atomically on every target) so the
     * compiler folds them into the subtract and the compare. */
    return (uintptr_t)p - heap_region_lo < heap_region_span;
}
static inline struct heap_block *heap_block_of(void *p)
{
    return (struct heap_block *)p - 1;
}

int heap_region_init(void);
/* The share of the program's address-space limit (RLIMIT_AS) the heap profiler may
 * reserve for one of its mappings (a 64th), or 0 when there is no limit. */
size_t heap_as_share(void);
/* A block of `size` bytes aligned to `align` (a power of two), or NULL. */
void *heap_region_alloc(size_t size, size_t align);
void heap_region_release(void *p);
size_t heap_region_usable(void *p);
/* Around fork: 0 before (lock), 1 in the parent (unlock), 2 in the child (reset). */
void heap_region_fork(int phase);

/* ===== stacks (heap_stack.c) ===== */

/* Return addresses from the frame record at `fp` (the interposed function's own)
 * outwards; frame 0 is the allocation site. Returns the depth; *stop says how the
 * walk ended (enum unwind_stop). Runs on the thread's stack or on its side stack. */
size_t heap_stack_walk(uintptr_t fp, uintptr_t *pcs, size_t max, uint8_t *stop);

/* ===== side stacks (heap_side.c) ===== */

/* A sample running on a side stack, in the frame of the call that switched. */
struct heap_side {
    int stack;             /* its stack in the pool */
    struct arch_regs regs; /* where the thread left its own stack: that frame's pc, sp, fp */
};

/* Runs fn(arg) on a side stack, t->side set meanwhile: 0, or -1 when every side stack
 * is taken (fn did not run; the caller runs it on its own stack). */
int heap_side_run(struct heap_tls *t, void (*fn)(void *), void *arg);
/* In a fork child: the side stacks of the threads that are gone are free again. */
void heap_side_after_fork_child(void);
/* A fork child's two handlers (heap_thread.c's locks made anew; the session's, through
 * lifecycle) run in an order pthread_atfork does not promise: each calls this once, and
 * the second restarts an environment session, when both locks and session are fresh. */
void heap_fork_child_done(void);

/* ===== bounded tables (heap_table.c) ===== */

/* A bucket is one distinct (stack, thread name): what a pprof sample says. Bucket 0
 * is (other stacks), made with the table, which takes every sample whose stack found
 * no room. Its counters are only touched under the session lock. */
struct heap_bucket {
    uint64_t hash;
    uint32_t words;  /* index of its first frame in the table's words */
    uint32_t depth;  /* frames, leaf first; 0 for (other stacks) */
    uint32_t thread; /* string id of the thread's name; HEAP_NO_STRING for none */
    uint32_t stop;   /* how its stack's walk ended (enum unwind_stop): part of its identity */
    int64_t alloc_objects, alloc_bytes, inuse_objects, inuse_bytes;
};

struct heap_string {
    uint64_t hash;
    uint32_t off, len; /* in the table's bytes */
};

#define HEAP_NO_STRING UINT32_MAX
#define HEAP_TRUNCATED 0 /* string 0 is "(truncated)": a name that found no room */

struct heap_limits {
    uint32_t stacks;       /* distinct stacks, (other stacks) not counted */
    uint32_t words;        /* frames of all of them */
    uint32_t strings;      /* interned strings */
    uint32_t string_bytes; /* their bytes */
};

/* Entries below the counts never change once written, so a snapshot of the counts
 * (and a copy of the buckets' counters) can be read while the session goes on. */
struct heap_table {
    struct heap_limits max;
    struct heap_bucket *buckets;
    uint32_t nbuckets;                   /* including (other stacks) */
    uint32_t *bucket_index, bucket_mask; /* open addressing, bucket + 1, 0 = empty */
    uintptr_t *words;
    uint32_t nwords;
    struct heap_string *strings;
    uint32_t nstrings;
    uint32_t *string_index, string_mask;
    char *bytes;
    uint32_t nbytes;
    uint64_t truncated_strings; /* names that became "(truncated)" */
    void *map;                  /* one mapping holds every array */
    size_t map_size;
};

/* The limits of FORMATS.md §2, lowered (never raised) by KESTREL_HEAP_MAX_STACKS,
 * KESTREL_HEAP_MAX_STACK_WORDS and KESTREL_HEAP_MAX_STRINGS. */
void heap_limits_from_env(struct heap_limits *l);
int heap_table_init(struct heap_table *tb, const struct heap_limits *max);
void heap_table_free(struct heap_table *tb);
/* In a fork child, where the table was never mapped (MADV_DONTFORK). */
void heap_table_forget(struct heap_table *tb);
uint32_t heap_table_string(struct heap_table *tb, const char *s, size_t len);
/* The bucket of (stack, how its walk ended, thread); 0, (other stacks), when a limit
 * is reached. */
uint32_t heap_table_bucket(struct heap_table *tb, const uintptr_t *pcs, uint32_t depth,
                           uint32_t stop, uint32_t thread);
static inline const char *heap_table_str(const struct heap_table *tb, uint32_t id, size_t *len)
{
    *len = tb->strings[id].len;
    return tb->bytes + tb->strings[id].off;
}

/* ===== pprof (heap_pprof.c) ===== */

struct heap_pprof_info {
    int64_t interval;
    uint64_t start_ns, end_ns;         /* CLOCK_REALTIME */
    uint64_t samples;                  /* samples taken */
    uint64_t lost_objects, lost_bytes; /* samples the region had no room for */
    uint64_t stops[UNWIND_STOPS];      /* samples by how their stack's walk ended */
    int alloc_default;                 /* default sample type alloc_space (Go's allocs) */
};

/* The gzip-compressed pprof of a table (its buckets already a snapshot) into out.
 * Returns 0 or -errno. */
int heap_pprof_write(const struct heap_table *tb, const struct heap_pprof_info *info,
                     struct pb_buf *out);

/* The running profile into `out` (gzip'd pprof), as kestrel_heap_profile() takes it;
 * with alloc_default its default sample type is alloc_space (Go's /debug/pprof/allocs),
 * else inuse_space. -ESRCH when no profile runs. */
int heap_profile_pprof(int alloc_default, struct pb_buf *out);

/* ===== gzip (heap_gzip.c) ===== */

/* Appends the gzip (deflate, fixed codes) of [p, p + n) to out. 0 or -1. */
int heap_gzip(const uint8_t *p, size_t n, struct pb_buf *out);

/* ===== session (heap_session.c) ===== */

extern uint32_t heap_gen; /* the running session's generation; 0 before the first */
extern int heap_active;   /* a session runs */
extern int64_t heap_interval;
extern int64_t heap_certain; /* the size from which a block is sampled for sure */

/* The slow path's sample: a block of `size` bytes from the region carrying this
 * thread's weight, or NULL when it cannot be sampled (then allocate normally). When
 * the region has no room, the block comes from the next allocator and the sample's
 * bytes are counted as lost, unless that allocator refuses the request too. */
void *heap_sample(struct heap_tls *t, size_t size, size_t align, int zero, uintptr_t fp,
                  int64_t weight);
/* realloc of a block sampled for sure, to a size that is still sampled for sure and
 * fits its chunk: the block stays, its size moves (from its old site to this call's).
 * 1 when done; 0 to move it as any other realloc. */
int heap_resize_certain(void *p, size_t n, uintptr_t fp);
/* A region block is freed: its weight leaves in-use if its session still runs. */
void heap_sampled_free(void *p);

#pragma GCC visibility pop
#endif
