/* sink — where every engine's samples go: stack interning (a bounded hash table of
 * leaf-first stacks) and the sample rows of the raw file, with the counts that say how
 * full each table got and what went past its limit. Engine-agnostic: the signal engine
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
    uint64_t samples_past_limit;  /* samples past SINK_SAMPLES_MAX, counted only */
    uint64_t past_limit_cpu_ns;   /* their CPU ns */
};

/* Opens an empty sink for a session started at mono_start_ns. 0 or -errno. */
int sink_open(uint64_t mono_start_ns);
void sink_close(void);

/* Interns the sample's stack and appends its row. Returns the stack index (for reuse
 * by later samples of the same waiting episode) or -1 if the row could not be kept. */
int32_t sink_add(const struct sink_sample *s);
/* Appends a row for an already-interned stack. */
void sink_add_interned(struct reg_slot *slot, uint64_t t_ns, uint64_t cpu_ns, int state,
                       int32_t stack);
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
/* Index of the "(other stacks)" bucket, -1 while unused. */
int32_t sink_other_stack(void);

/* In a fork child: forgets the parent's tables (unmapped, nothing waited on). */
void sink_forget_after_fork(void);
#endif
