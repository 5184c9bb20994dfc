/* sink.c — stack interning and sample rows, fed by whichever engine runs (sink.h).
 *
 * Signal handlers: nothing. Inside malloc: nothing. One thread at a time (the engine
 * thread, then the writer after the engine stopped), so there is no lock. */
#include "runtime/cpu/sink.h"
#include "runtime/rtmem.h"
#include "runtime/unwind/execmap.h"

#include <errno.h>
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
};
_Static_assert(UNWIND_MAX_DEPTH < 1u << 16, "a stack's length fits");

/* Rules: sink_hash[h] is 0 (empty) or 1 + an index into sink_stacks; the stack at
 * index sink_other (if >= 0) is "(other stacks)", empty, and never in the hash. Once
 * either table is full, new stacks go there; the table with the last free entry
 * keeps it for that bucket. */
static struct sink_stack *sink_stacks; /* SINK_STACKS_MAX */
static uint32_t *sink_hash;            /* SINK_HASH_SLOTS */
static uint64_t *sink_words;           /* SINK_WORDS_MAX */
static struct sink_row *sink_rowv;     /* SINK_SAMPLES_MAX */
static struct sink_counts sink_n;
static int32_t sink_other = -1;
static uint64_t sink_start_ns;
static struct execmap sink_exec; /* what a return address may be (execmap.h) */

#define SINK_BYTES_STACKS (sizeof(struct sink_stack) * SINK_STACKS_MAX)
#define SINK_BYTES_HASH (sizeof(uint32_t) * SINK_HASH_SLOTS)
#define SINK_BYTES_WORDS (sizeof(uint64_t) * SINK_WORDS_MAX)
#define SINK_BYTES_ROWS (sizeof(struct sink_row) * SINK_SAMPLES_MAX)

static void sink_unmap(void)
{
    execmap_free(&sink_exec);
    rtmem_free(sink_stacks, SINK_BYTES_STACKS);
    rtmem_free(sink_hash, SINK_BYTES_HASH);
    rtmem_free(sink_words, SINK_BYTES_WORDS);
    rtmem_free(sink_rowv, SINK_BYTES_ROWS);
    sink_stacks = NULL;
    sink_hash = NULL;
    sink_words = NULL;
    sink_rowv = NULL;
}

int sink_open(uint64_t mono_start_ns)
{
    sink_unmap();
    sink_stacks = rtmem_alloc(SINK_BYTES_STACKS);
    sink_hash = rtmem_alloc(SINK_BYTES_HASH);
    sink_words = rtmem_alloc(SINK_BYTES_WORDS);
    sink_rowv = rtmem_alloc(SINK_BYTES_ROWS);
    memset(&sink_n, 0, sizeof(sink_n));
    sink_other = -1;
    sink_start_ns = mono_start_ns;
    if (!sink_stacks || !sink_hash || !sink_words || !sink_rowv) {
        sink_unmap();
        return -ENOMEM;
    }
    return 0;
}

void sink_close(void)
{
    sink_unmap();
}

void sink_forget_after_fork(void)
{
    sink_unmap();
    memset(&sink_n, 0, sizeof(sink_n));
}

static uint64_t sink_hash_words(const uint64_t *w, size_t n, unsigned stop)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n ^ ((uint64_t)stop << 56);
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
        sink_stacks[sink_other] = (struct sink_stack){0, 0, 0, UNWIND_NOT_WALKED};
    }
    return sink_other;
}

/* The index of this stack, interned on first sight; "(other stacks)" past a limit. */
static int32_t sink_intern(const uint64_t *frames, size_t n, unsigned stop)
{
    uint64_t h = sink_hash_words(frames, n, stop);
    size_t mask = SINK_HASH_SLOTS - 1, i = h & mask;
    for (; sink_hash[i]; i = (i + 1) & mask) {
        const struct sink_stack *st = &sink_stacks[sink_hash[i] - 1];
        if (st->hash == h && st->len == n && st->stop == stop &&
            memcmp(&sink_words[st->off], frames, n * sizeof(uint64_t)) == 0)
            return (int32_t)(sink_hash[i] - 1);
    }
    if (sink_n.stacks >= SINK_STACKS_MAX - 1 || sink_n.words + n > SINK_WORDS_MAX) {
        sink_n.other_stack_samples++;
        return sink_other_bucket();
    }
    uint32_t idx = (uint32_t)sink_n.stacks++;
    sink_stacks[idx] = (struct sink_stack){h, (uint32_t)sink_n.words, (uint16_t)n, (uint8_t)stop};
    memcpy(&sink_words[sink_n.words], frames, n * sizeof(uint64_t));
    sink_n.words += n;
    sink_hash[i] = idx + 1;
    return (int32_t)idx;
}

void sink_add_interned(struct reg_slot *slot, uint64_t t_ns, uint64_t cpu_ns, int state,
                       int32_t stack)
{
    if (!sink_rowv) return;
    if (sink_n.samples >= SINK_SAMPLES_MAX) {
        sink_n.samples_past_limit++;
        sink_n.past_limit_cpu_ns += cpu_ns;
        return;
    }
    if (sink_n.samples % SINK_ROWS_CHUNK == 0) /* a kernel without it faults as before */
        madvise(&sink_rowv[sink_n.samples], SINK_ROWS_CHUNK * sizeof(struct sink_row),
                MADV_POPULATE_WRITE);
    struct reg_thread *t = registry_thread(slot->thread_index);
    if (t && !t->sampled) {
        t->sampled = 1;
        registry_read_name(t);
    }
    uint64_t rel = t_ns > sink_start_ns ? t_ns - sink_start_ns : 0;
    sink_rowv[sink_n.samples++] = (struct sink_row){
        .t_rel_ns = rel < SINK_ROW_T_MAX ? rel : SINK_ROW_T_MAX,
        .cpu_ns = cpu_ns < SINK_ROW_CPU_MAX ? cpu_ns : SINK_ROW_CPU_MAX,
        .thread = slot->thread_index,
        .stack1 = (uint32_t)(stack + 1),
        .state = (unsigned)state,
    };
}

int32_t sink_add(const struct sink_sample *s)
{
    if (!sink_rowv) return -1;
    enum unwind_stop stop = s->stop < UNWIND_STOPS ? (enum unwind_stop)s->stop : UNWIND_NOT_WALKED;
    size_t n = s->nframes > UNWIND_MAX_DEPTH ? UNWIND_MAX_DEPTH : s->nframes;
    n = execmap_trim(&sink_exec, s->frames, n, s->slot->rooted, &stop);
    sink_n.stops[stop]++;
    if (unwind_cut_short(stop)) sink_n.cut_short++;
    int32_t st = sink_intern(s->frames, n, stop);
    uint64_t before = sink_n.samples;
    sink_add_interned(s->slot, s->t_ns, s->cpu_ns, s->state, st);
    return sink_n.samples > before ? st : -1;
}

void sink_drop(uint64_t n)
{
    sink_n.dropped += n;
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

int32_t sink_other_stack(void)
{
    return sink_other;
}
