/* Reading a perf_event mmap ring: the consumer side of the kernel's ring buffer and a
 * parser for the records the perf engine asks for (samples, context switches, lost
 * records). Independent of the rest of the runtime so that it can be tested with
 * hand-made rings.
 *
 * Every length in a record is checked against the record's own size and the ring's
 * bytes before it is read: a record that does not fit ends the drain and the rest of
 * the ring is skipped and counted, never read past.
 *
 * Nothing here may run in a signal handler (the engine drains from its own thread);
 * everything may run inside malloc (no allocation, no lock). */
#ifndef KESTREL_PERF_RING_H
#define KESTREL_PERF_RING_H
#include <stddef.h>
#include <stdint.h>

/* The sample fields the parser understands, as PERF_SAMPLE_* bits. A ring's records
 * are parsed with the sample_type every event writing into it was opened with. */
#define PERF_RING_SAMPLE_TYPES                                                                     \
    (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |                \
     PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)

/* One mapped ring. `meta` is the first page (data_head written by the kernel,
 * data_tail by us); `data` is `size` bytes, a power of two. */
struct perf_ring {
    void *meta;                /* struct perf_event_mmap_page */
    const unsigned char *data; /* the data area, `size` bytes after meta's page */
    uint64_t size;             /* bytes in the data area, a power of two */
    uint64_t sample_type;      /* PERF_SAMPLE_* bits of the events writing here */
    uint32_t n_regs_user;      /* registers in sample_regs_user (popcount) */
    uint64_t bad;              /* bytes skipped because a record was malformed */
    uint64_t head, tail;       /* a drain in steps: the head it read, its cursor */
};

enum perf_rec_kind {
    PERF_REC_SAMPLE,     /* a sample: ips, tid, time, id */
    PERF_REC_SWITCH_OUT, /* the thread left the CPU (preempted: `preempt` set) */
    PERF_REC_SWITCH_IN,  /* the thread came back */
    PERF_REC_LOST,       /* `lost` records the kernel could not write */
    PERF_REC_THROTTLE,   /* the kernel throttled (1) or unthrottled (0) sampling */
    PERF_REC_OTHER,      /* any other record type, skipped whole */
};

/* One parsed record. Pointers point into the ring or into the caller's scratch and
 * are valid only during the callback. */
struct perf_rec {
    enum perf_rec_kind kind;
    uint32_t pid, tid;          /* when the sample type has PERF_SAMPLE_TID */
    uint64_t time;              /* when it has PERF_SAMPLE_TIME */
    uint64_t id;                /* when it has PERF_SAMPLE_IDENTIFIER */
    uint64_t ip;                /* when it has PERF_SAMPLE_IP (samples only) */
    uint64_t period;            /* when it has PERF_SAMPLE_PERIOD */
    uint64_t lost;              /* PERF_REC_LOST: records lost */
    int preempt;                /* PERF_REC_SWITCH_OUT: the thread was still runnable */
    int throttled;              /* PERF_REC_THROTTLE: 1 throttle, 0 unthrottle */
    const uint64_t *ips;        /* callchain entries as the kernel wrote them */
    uint64_t n_ips;             /* including PERF_CONTEXT_* markers */
    uint64_t abi;               /* PERF_SAMPLE_REGS_USER: PERF_SAMPLE_REGS_ABI_* */
    const uint64_t *regs;       /* n_regs_user registers when abi != 0 */
    const unsigned char *stack; /* PERF_SAMPLE_STACK_USER: bytes copied from the SP */
    uint64_t stack_size;        /* valid bytes at `stack` (dyn_size) */
};

typedef void (*perf_ring_fn)(const struct perf_rec *rec, void *ctx);

/* Largest record the kernel can write (the header's size is 16 bits); the scratch a
 * drain is given must hold one, for records that wrap around the ring's end. */
#define PERF_RING_SCRATCH 65536

/* Sets up a reader over a mapping of 1 + 2^k pages made by mmap() on the event's fd. */
void perf_ring_init(struct perf_ring *r, void *mapping, uint64_t page_size, uint64_t data_pages,
                    uint64_t sample_type, uint64_t regs_mask);

/* Parses every complete record between the ring's tail and head, calls fn for each,
 * then releases the bytes to the kernel. Returns the number of records or -EBADMSG if
 * a malformed record ended the drain (its bytes and the rest were skipped, counted in
 * r->bad). */
long perf_ring_drain(struct perf_ring *r, perf_ring_fn fn, void *ctx,
                     unsigned char scratch[PERF_RING_SCRATCH]);

/* A drain in steps, for merging several rings in time order: perf_ring_begin reads
 * the head; perf_ring_peek_time gives the time of the record at the cursor (1), or 0
 * when none is left (a malformed record ends the step drain as it ends a drain);
 * perf_ring_take parses that record, calls fn and moves past it (1; 0 when none);
 * perf_ring_end releases the bytes before the cursor to the kernel. Needs
 * PERF_SAMPLE_TIME. */
void perf_ring_begin(struct perf_ring *r);
int perf_ring_peek_time(struct perf_ring *r, uint64_t *time);
int perf_ring_take(struct perf_ring *r, perf_ring_fn fn, void *ctx,
                   unsigned char scratch[PERF_RING_SCRATCH]);
void perf_ring_end(struct perf_ring *r);

/* Parses one record of `size` bytes at p (already contiguous). Returns 0, or
 * -EBADMSG when a length inside it does not fit. */
int perf_rec_parse(const unsigned char *p, size_t size, uint64_t sample_type, uint32_t n_regs_user,
                   struct perf_rec *out);

/* Copies the user frames of a callchain, leaf first, into out (at most max): markers
 * are dropped and kernel frames (after PERF_CONTEXT_KERNEL, before the next
 * PERF_CONTEXT_USER) are skipped. Returns the number of frames written. */
size_t perf_callchain_user(const uint64_t *ips, uint64_t n, uint64_t *out, size_t max);
#endif
