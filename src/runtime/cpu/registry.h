/* registry — the threads the CPU profiler samples: a table of slots, and the table of
 * thread records (one per registration) that the raw file's `threads` lists. Both are
 * mapped a block at a time as threads register (rtblocks.h), and so are the engines'
 * per-slot tables (registry_add_table): a program of a few threads pays for a block of
 * each, not for 16,384 threads.
 *
 * Slot life: FREE -> ACTIVE (registry_register, on the thread itself) -> DRAINING
 * (registry_unregister, on the thread itself, or its exit) -> FREE (registry_release,
 * on the engine thread once it drained what the thread left buffered). `gen` is bumped
 * at every register and unregister, so (slot, gen) names one registration. All state
 * changes happen under the registry mutex; register and unregister hold it with every
 * signal blocked, so a signal handler never finds its own thread holding it. The engine
 * thread holds it while it signals threads, so a thread that unregistered is never
 * signalled afterwards. Lock order: registry, then anything else.
 *
 * Signal handlers: registry_self() (reads initial-exec TLS). Inside malloc: nothing. */
#ifndef KESTREL_REGISTRY_H
#define KESTREL_REGISTRY_H
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define REGISTRY_SLOTS 16384 /* threads registered at one time */
#define REGISTRY_THREADS_MAX                                                                       \
    65536 /* thread records in one profile; the last one is                                        \
             "(other threads)", shared past the limit */
#define REGISTRY_LABEL_MAX 32
#define REGISTRY_NAME_MAX 16

enum reg_state { REG_FREE = 0, REG_ACTIVE, REG_DRAINING };

struct reg_slot {
    _Atomic uint32_t state; /* enum reg_state */
    _Atomic uint32_t gen;   /* registrations and unregistrations so far */
    pid_t tid;              /* kernel thread id */
    uint32_t index;         /* this slot's number (the engines' tables' index) */
    uint32_t thread_index;  /* row of the threads table (raw file's thread_index) */
    uint64_t stack_lo;      /* stack bounds [lo, hi) taken at registration */
    uint64_t stack_hi;
    uint8_t rooted; /* its outermost frame is kestrel's root function (unwind.h): a
                     * walk that ends anywhere else was cut short */
    clockid_t cpu_clock; /* this thread's CPU-time clock */
    _Atomic uint32_t in_call; /* written by the thread: how deep it is in the blocking
                                 calls the signal engine wraps (blocking.c), 0 outside */
    /* Owned by the engine thread while the slot is not FREE: */
    uint64_t cpu_last_ns; /* CPU clock at this thread's previous sample */
    uint64_t cpu_seen_ns; /* CPU clock at the engine's previous look */
    int32_t wait_stack;   /* interned stack of the current blocking episode, -1 none */
    uint32_t wait_thread1; /* its thread record + 1 when it blocked on a fiber's stack
                            * (fibers.h), 0: the slot's own */
    uint64_t wait_key[3]; /* that episode: syscall number, SP, PC */
};

/* One registration as the raw file lists it. */
struct reg_thread {
    int64_t fiber;                  /* fiber id given at registration */
    pid_t tid;                      /* 0 for the shared "(other threads)" record */
    uint8_t sampled;                /* the engine gave it a sample */
    char label[REGISTRY_LABEL_MAX]; /* "main", "thread", or the caller's label */
    char name[REGISTRY_NAME_MAX];   /* thread name (comm) when last seen */
};

extern __thread struct reg_slot *registry_self_slot;
extern __thread uint32_t registry_self_gen;

/* The calling thread's slot if it is registered now; NULL otherwise. */
static inline struct reg_slot *registry_self(void)
{
    struct reg_slot *s = registry_self_slot;
    if (s && atomic_load_explicit(&s->gen, memory_order_relaxed) == registry_self_gen &&
        atomic_load_explicit(&s->state, memory_order_relaxed) == REG_ACTIVE)
        return s;
    return NULL;
}

/* Sets up empty tables (mapped as threads register). Forgets the tables added
 * by registry_add_table. 0 or -errno. */
int registry_open(void);
/* An engine's table of one entry per slot: from now until the next registry_open,
 * every registration first maps the block of its slot in it (a registration that
 * cannot is refused and counted as past the limit), so that the entry of any slot
 * that is not FREE is mapped. The blocks of slots used before are mapped now.
 * 0 or -ENOMEM. */
struct rtblocks;
int registry_add_table(struct rtblocks *t);
/* Forgets every registration (threads' TLS goes stale) and the thread records. */
void registry_close(void);

/* Registers the calling thread with stack bounds [lo, hi). A thread already registered
 * is first unregistered (a new record, a new label). Returns the slot, or NULL when
 * the registry is closed or full (counted). */
struct reg_slot *registry_register(int64_t fiber, const char *label, uint64_t lo, uint64_t hi);
/* Unregisters the calling thread (its name is kept in its record); 0 or -ENOENT. */
int registry_unregister(void);
/* Engine thread, with the registry locked: a DRAINING slot becomes FREE. */
void registry_release(struct reg_slot *s);

void registry_lock(void);
void registry_unlock(void);
/* Slot i (below REGISTRY_SLOTS), or NULL when its block was never mapped (no thread
 * ever took a slot of it); walk the slots with the registry locked. */
struct reg_slot *registry_slot(size_t i);
static inline size_t registry_slot_index(const struct reg_slot *s)
{
    return s->index;
}
/* With the registry locked: the first slot index >= i that is not FREE, or
 * REGISTRY_SLOTS. Walk: for (i = registry_next_used(0); i < REGISTRY_SLOTS;
 * i = registry_next_used(i + 1)). */
size_t registry_next_used(size_t i);
/* One past the highest slot index ever registered (at any time, locked or not): no
 * slot from there on was ever used, in this session or an earlier one. */
size_t registry_slots_hi(void);

/* The thread records: how many, and one of them. */
size_t registry_thread_count(void);
struct reg_thread *registry_thread(size_t i);
/* Registrations that shared the "(other threads)" record (past REGISTRY_THREADS_MAX). */
uint64_t registry_threads_past_limit(void);
/* Threads that found no free slot (past REGISTRY_SLOTS alive at once), or could not
 * even try to register; and the most slots in use at once. */
uint64_t registry_live_past_limit(void);
size_t registry_live_max(void);
/* Counts a thread that could not even try to register (e.g. no trampoline was free
 * when pthread_create wrapped it): it goes unsampled, but not uncounted. */
void registry_count_past_limit(void);
/* A thread record of its own for a fiber that thread `tid` runs (fibers.h): its
 * index, or -ENOSPC past REGISTRY_THREADS_MAX - 1. Engine thread. */
long registry_thread_add(pid_t tid, int64_t fiber, const char *label);
/* Reads the name of a live thread from /proc into its record (engine thread). */
void registry_read_name(struct reg_thread *t);

/* In a fork child: everything is forgotten without touching the mutex. */
void registry_forget_after_fork(void);
#endif
