/* sink — where every engine's samples go: stack interning (a bounded hash table of
 * leaf-first stacks), the sample rows of the raw file, the counts per (stack, thread,
 * state) of the samples past the row table, and the counts that say how full each
 * table got and what went past its limit. Also the window: the samples of a span of
 * time counted per (stack, thread, state), which the HTTP endpoint's CPU profile is
 * cut from. Engine-agnostic: the signal engine
 * feeds it from its rings, the perf engine from the kernel's, both on their own
 * thread.
 *
 * One producer: everything here is called by the engine thread only (or, after the
 * engine stopped, by the writer). Signal handlers: nothing. Inside malloc: nothing. */
#ifndef KESTREL_SINK_H
#define KESTREL_SINK_H
#include "runtime/cpu/registry.h"
#include "runtime/unwind/unwind.h"

#include <stddef.h>
#include <stdint.h>

#define SINK_STACKS_MAX (1u << 16)  /* distinct stacks */
#define SINK_WORDS_MAX (1u << 22)   /* addresses in all stacks together */
#define SINK_SAMPLES_MAX (1u << 22) /* sample rows */
/* Past the rows, samples are counted per (stack, thread, state): a long run keeps every
 * sample's stack, thread and state, and loses only their time order. */
#define SINK_AGG_MAX (1u << 18) /* distinct (stack, thread, state) past the rows */

enum sink_state { SINK_ON_CPU = 0, SINK_WAITING = 1 };

struct sink_sample {
    struct reg_slot *slot;  /* the sampled thread's slot (gives its thread record) */
    uint64_t t_ns;          /* CLOCK_MONOTONIC time of the sample */
    uint64_t cpu_ns;        /* the thread's CPU ns since its previous sample */
    uint8_t state;          /* enum sink_state */
    uint8_t stop;           /* enum unwind_stop: how the walker's walk ended (the sink
                             * trims the frames to executable memory, execmap.h) */
    uint16_t nframes;       /* at most UNWIND_MAX_DEPTH */
    const uint64_t *frames; /* leaf-first; frames[0] is the precise PC */
    uint32_t thread1;       /* a fiber's thread record + 1 (fiber_thread), 0: the slot's */
    uint8_t guessed;        /* 1: frames the engine gave a sample it did not walk (an
                             * earlier stack of the thread's); a stack of its own */
};

/* One row of the raw file's `samples`, in 16 bytes: rows are most of the runtime's
 * memory, and each fresh page of them costs the engine thread a page fault. Times
 * saturate (78 hours since the start, 19.5 hours of CPU since a thread's previous
 * sample). */
#define SINK_ROW_T_MAX ((1ull << 48) - 1)
#define SINK_ROW_CPU_MAX ((1ull << 46) - 1)
struct sink_row {
    uint64_t t_rel_ns : 48; /* since the session's start */
    uint64_t thread : 16;   /* thread record index (REGISTRY_THREADS_MAX fits) */
    uint64_t cpu_ns : 46;   /* 5th column */
    uint64_t stack1 : 17;   /* interned stack + 1 (SINK_STACKS_MAX fits), 0 for none */
    uint64_t state : 1;     /* enum sink_state */
};
_Static_assert(REGISTRY_THREADS_MAX <= 1u << 16, "thread index fits a row");
_Static_assert(SINK_STACKS_MAX < 1u << 17, "stack index fits a row");

struct sink_counts {
    uint64_t samples;             /* rows kept */
    uint64_t stacks, words;       /* table fill */
    uint64_t dropped;             /* samples lost before the sink (ring full, kernel lost) */
    uint64_t cut_short;           /* walks that ended on a failed check */
    uint64_t stops[UNWIND_STOPS]; /* walks by how they ended */
    uint64_t other_stack_samples; /* samples whose stack went to "(other stacks)" */
    uint64_t rows_max;            /* the row table's limit (SINK_SAMPLES_MAX, or less) */
    uint64_t timed_end_ns;        /* t_rel_ns of the earliest sample that found no row */
    uint64_t agg_samples;         /* samples past the rows, counted per stack/thread/state */
    uint64_t agg_cpu_ns;          /* their CPU ns */
    uint64_t agg_entries;         /* distinct (stack, thread, state) among them */
    uint64_t samples_past_limit;  /* samples past the rows and the aggregate: counted only */
    uint64_t past_limit_cpu_ns;   /* their CPU ns */
};

/* One count past the row table: samples of one (stack, thread, state). */
struct sink_agg_entry {
    uint32_t stack1; /* interned stack + 1, 0 for none */
    uint32_t thread; /* thread record index */
    uint32_t state;  /* enum sink_state */
    uint32_t unused;
    uint64_t count;  /* samples */
    uint64_t cpu_ns; /* their CPU ns */
};

/* Opens an empty sink for a session started at mono_start_ns, keeping at most
 * rows_max rows (clamped to SINK_SAMPLES_MAX; 0 keeps none: a session that only
 * serves windows). 0 or -errno. */
int sink_open(uint64_t mono_start_ns, size_t rows_max);
void sink_close(void);

/* Interns the sample's stack and appends its row. Returns the stack index (for reuse
 * by later samples of the same waiting episode) or -1 if the row could not be kept. */
int32_t sink_add(const struct sink_sample *s);
/* Appends a row for an already-interned stack. */
void sink_add_interned(struct reg_slot *slot, uint64_t t_ns, uint64_t cpu_ns, int state,
                       int32_t stack);
/* The same, for thread record `thread` (a fiber's: fiber_thread() - 1). */
void sink_add_interned_to(uint32_t thread, uint64_t t_ns, uint64_t cpu_ns, int state,
                          int32_t stack);
/* The thread record a sample of slot s with sink_sample.thread1 `thread1` goes to. */
static inline uint32_t sink_thread_of(const struct reg_slot *s, uint32_t thread1)
{
    return thread1 ? thread1 - 1 : s->thread_index;
}
/* Counts samples that were lost before they reached the sink. */
void sink_drop(uint64_t n);

const struct sink_counts *sink_counts(void);
size_t sink_row_count(void);
const struct sink_row *sink_rows(void);
size_t sink_stack_count(void);
/* The i-th interned stack: its frames and how many. "(other stacks)" is empty. */
const uint64_t *sink_stack(size_t i, size_t *n);
/* How the i-th interned stack's walk ended. */
enum unwind_stop sink_stack_stop(size_t i);
/* 1 when the i-th interned stack is a guess (sink_sample.guessed). */
int sink_stack_guessed(size_t i);
/* The guessed twin of interned stack `stack` (the same frames and end, marked a
 * guess), interned on first need; itself when it is one already, or "(other
 * stacks)" or -1. */
int32_t sink_guessed_twin(int32_t stack);
/* Index of the "(other stacks)" bucket, -1 while unused. */
int32_t sink_other_stack(void);

/* The counts past the row table, in no particular order. */
size_t sink_agg_count(void);
const struct sink_agg_entry *sink_agg(size_t i);

/* ===== the window (HTTP thread: open, close; engine thread: fills it) =====
 * A window counts the samples that reach the sink between its open and its close, per
 * (stack, thread, state), in tables of its own: it holds copies of its stacks and of
 * its threads' names, so a session that ends meanwhile leaves it whole. One at a time;
 * the engine thread takes the window's mutex only while one is open. Memory: at most
 * SINK_WIN_ENTRIES entries, SINK_WIN_WORDS stack words, SINK_WIN_THREADS threads;
 * samples past them are counted in `lost`. A sample is the window's by the time it was
 * taken, not by when it reached the sink. */
#define SINK_WIN_ENTRIES (1u << 16)
#define SINK_WIN_WORDS (1u << 20)
#define SINK_WIN_THREADS 4096u

struct sink_win_thread {
    pid_t tid;
    char name[REGISTRY_NAME_MAX];   /* comm when first seen in the window */
    char label[REGISTRY_LABEL_MAX]; /* its registration's label */
};

struct sink_win_stack {
    uint32_t off, len; /* in words */
    uint32_t guessed;  /* 1: a guessed stack (sink_sample.guessed) */
};

struct sink_window {
    uint64_t start_mono_ns, end_mono_ns; /* CLOCK_MONOTONIC */
    uint64_t start_real_ns;              /* CLOCK_REALTIME at open */
    unsigned hz;                         /* the session's rate */
    const char *engine;                  /* its engine's name */
    size_t n_entries, n_stacks, n_words, n_threads;
    struct sink_agg_entry *entries; /* stack1 indexes stacks (+1), thread indexes threads */
    struct sink_win_stack *stacks;
    uint64_t *words;
    struct sink_win_thread *threads;
    uint64_t samples, cpu_ns; /* every sample of the window */
    uint64_t lost;            /* samples past the window's tables, counted only */
    uint64_t dropped;         /* samples the session lost before the sink meanwhile */
    int session_ended;        /* the session ended before the window closed */
};

/* Opens the window (mono_now: CLOCK_MONOTONIC). -ESRCH when no session runs, -EBUSY
 * when a window is open, -ENOMEM. */
int sink_window_open(uint64_t mono_now, unsigned hz, const char *engine);
/* Sets its end: samples taken from then on are not its own, though an engine may still
 * be draining samples taken before (the perf engine drains every 20 to 500 ms). */
void sink_window_end_at(uint64_t mono_end);
/* Closes it: *w holds what it counted until sink_window_free(w). -ESRCH when none. */
int sink_window_close(struct sink_window *w);
void sink_window_free(struct sink_window *w);

/* In a fork child: forgets the parent's tables (unmapped, nothing waited on). */
void sink_forget_after_fork(void);
#endif
