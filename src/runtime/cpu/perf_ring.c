/* Reading a perf_event mmap ring and parsing its records (see perf_ring.h).
 *
 * Signal handlers: nothing here runs in one. Inside malloc: everything may (no
 * allocation, no lock, no system call). */
#include "runtime/cpu/perf_ring.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

/* ===================================================================== ring ==== */

void perf_ring_init(struct perf_ring *r, void *mapping, uint64_t page_size, uint64_t data_pages,
                    uint64_t sample_type, uint64_t regs_mask)
{
    memset(r, 0, sizeof *r);
    r->meta = mapping;
    r->data = (const unsigned char *)mapping + page_size;
    r->size = data_pages * page_size;
    r->sample_type = sample_type;
    r->n_regs_user = (uint32_t)__builtin_popcountll(regs_mask);
}

/* Copies n bytes that start at ring offset off, wrapping at the end. */
static void ring_copy(const struct perf_ring *r, uint64_t off, void *dst, size_t n)
{
    uint64_t first = r->size - off;
    if (first >= n) {
        memcpy(dst, r->data + off, n);
    } else {
        memcpy(dst, r->data + off, first);
        memcpy((unsigned char *)dst + first, r->data, n - first);
    }
}

/* A malformed record or counter: the rest of what the kernel wrote is skipped. */
static void ring_bad(struct perf_ring *r)
{
    r->bad += r->head - r->tail;
    r->tail = r->head;
}

void perf_ring_begin(struct perf_ring *r)
{
    struct perf_event_mmap_page *m = r->meta;
    /* Acquire pairs with the kernel's release of data_head: the bytes before head are
     * complete once we see it. */
    r->head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
    r->tail = m->data_tail;
    /* The kernel never overwrites unread bytes (we map read-write), so more than one
     * ring of unread data means the counters themselves are wrong. */
    if (r->head - r->tail > r->size || (r->tail & 7)) ring_bad(r);
}

/* The header of the record at the cursor: 1, or 0 when none is left. */
static int ring_header(struct perf_ring *r, struct perf_event_header *h)
{
    if (r->head - r->tail < sizeof *h) return 0;
    ring_copy(r, r->tail & (r->size - 1), h, sizeof *h);
    if (h->size < sizeof *h || (h->size & 7) || h->size > r->head - r->tail) {
        ring_bad(r);
        return 0;
    }
    return 1;
}

int perf_ring_peek_time(struct perf_ring *r, uint64_t *time)
{
    struct perf_event_header h;
    if (!ring_header(r, &h)) return 0;
    uint64_t st = r->sample_type, at;
    if (h.type == PERF_RECORD_SAMPLE)
        at = 8 * (1 + !!(st & PERF_SAMPLE_IDENTIFIER) + !!(st & PERF_SAMPLE_IP) +
                  !!(st & PERF_SAMPLE_TID));
    else /* the sample_id trailer: ..., TIME, IDENTIFIER */
        at = h.size - 8 * (1 + !!(st & PERF_SAMPLE_IDENTIFIER));
    if (!(st & PERF_SAMPLE_TIME) || at < sizeof h || at + 8 > h.size) {
        ring_bad(r);
        return 0;
    }
    ring_copy(r, (r->tail + at) & (r->size - 1), time, 8);
    return 1;
}

int perf_ring_take(struct perf_ring *r, perf_ring_fn fn, void *ctx,
                   unsigned char scratch[PERF_RING_SCRATCH])
{
    struct perf_event_header h;
    if (!ring_header(r, &h)) return 0;
    uint64_t off = r->tail & (r->size - 1);
    const unsigned char *p = r->data + off;
    if (off + h.size > r->size) {
        ring_copy(r, off, scratch, h.size);
        p = scratch;
    }
    struct perf_rec rec;
    if (perf_rec_parse(p, h.size, r->sample_type, r->n_regs_user, &rec) < 0) {
        ring_bad(r);
        return 0;
    }
    fn(&rec, ctx);
    r->tail += h.size;
    return 1;
}

void perf_ring_end(struct perf_ring *r)
{
    struct perf_event_mmap_page *m = r->meta;
    /* Release: our reads of the records happen before the kernel may reuse them. */
    __atomic_store_n(&m->data_tail, r->tail, __ATOMIC_RELEASE);
}

long perf_ring_drain(struct perf_ring *r, perf_ring_fn fn, void *ctx,
                     unsigned char scratch[PERF_RING_SCRATCH])
{
    uint64_t bad = r->bad;
    long n = 0;
    perf_ring_begin(r);
    while (perf_ring_take(r, fn, ctx, scratch))
        n++;
    perf_ring_end(r);
    return r->bad != bad ? -EBADMSG : n;
}

/* =================================================================== records ==== */

/* A bounds-checked cursor over one record. */
struct cur {
    const unsigned char *p, *end;
    int err;
};

static uint64_t cur_u64(struct cur *c)
{
    uint64_t v = 0;
    if (c->err || c->end - c->p < 8) {
        c->err = 1;
        return 0;
    }
    memcpy(&v, c->p, 8);
    c->p += 8;
    return v;
}

/* n 64-bit words in place: records start 8-aligned in the ring and in scratch. */
static const uint64_t *cur_words(struct cur *c, uint64_t n)
{
    if (c->err || (uint64_t)(c->end - c->p) / 8 < n) {
        c->err = 1;
        return NULL;
    }
    const uint64_t *w = (const uint64_t *)(const void *)c->p;
    c->p += n * 8;
    return w;
}

/* The sample_id trailer of non-sample records (sample_id_all): the fields kestrel
 * asks for, in the kernel's order: TID, TIME, ..., IDENTIFIER last. */
static void parse_trailer(struct cur *c, uint64_t st, struct perf_rec *out)
{
    size_t words =
        !!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_IDENTIFIER);
    if ((size_t)(c->end - c->p) < words * 8) {
        c->err = 1;
        return;
    }
    c->p = c->end - words * 8;
    if (st & PERF_SAMPLE_TID) {
        uint64_t v = cur_u64(c);
        out->pid = (uint32_t)v;
        out->tid = (uint32_t)(v >> 32);
    }
    if (st & PERF_SAMPLE_TIME) out->time = cur_u64(c);
    if (st & PERF_SAMPLE_IDENTIFIER) out->id = cur_u64(c);
}

static void parse_sample(struct cur *c, uint64_t st, uint32_t n_regs, struct perf_rec *out)
{
    if (st & PERF_SAMPLE_IDENTIFIER) out->id = cur_u64(c);
    if (st & PERF_SAMPLE_IP) out->ip = cur_u64(c);
    if (st & PERF_SAMPLE_TID) {
        uint64_t v = cur_u64(c);
        out->pid = (uint32_t)v;
        out->tid = (uint32_t)(v >> 32);
    }
    if (st & PERF_SAMPLE_TIME) out->time = cur_u64(c);
    if (st & PERF_SAMPLE_PERIOD) out->period = cur_u64(c);
    if (st & PERF_SAMPLE_CALLCHAIN) {
        out->n_ips = cur_u64(c);
        out->ips = cur_words(c, out->n_ips);
    }
    if (st & PERF_SAMPLE_REGS_USER) {
        out->abi = cur_u64(c);
        if (out->abi != PERF_SAMPLE_REGS_ABI_NONE) out->regs = cur_words(c, n_regs);
    }
    if (st & PERF_SAMPLE_STACK_USER) {
        uint64_t size = cur_u64(c);
        if (size) {
            const uint64_t *w = cur_words(c, (size + 7) / 8);
            uint64_t dyn = cur_u64(c);
            if (!c->err && dyn > size) c->err = 1;
            out->stack = (const unsigned char *)w;
            out->stack_size = dyn;
        }
    }
}

int perf_rec_parse(const unsigned char *p, size_t size, uint64_t sample_type, uint32_t n_regs_user,
                   struct perf_rec *out)
{
    struct perf_event_header h;
    memset(out, 0, sizeof *out);
    if (size < sizeof h || (sample_type & ~(uint64_t)PERF_RING_SAMPLE_TYPES)) return -EBADMSG;
    memcpy(&h, p, sizeof h);
    if (h.size != size) return -EBADMSG;
    struct cur c = {p + sizeof h, p + size, 0};

    switch (h.type) {
    case PERF_RECORD_SAMPLE:
        out->kind = PERF_REC_SAMPLE;
        parse_sample(&c, sample_type, n_regs_user, out);
        break;
    case PERF_RECORD_SWITCH:
        out->kind =
            (h.misc & PERF_RECORD_MISC_SWITCH_OUT) ? PERF_REC_SWITCH_OUT : PERF_REC_SWITCH_IN;
        out->preempt = !!(h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
        parse_trailer(&c, sample_type, out);
        break;
    case PERF_RECORD_LOST: {
        out->kind = PERF_REC_LOST;
        uint64_t id = cur_u64(&c);
        out->lost = cur_u64(&c);
        parse_trailer(&c, sample_type, out);
        out->id = id;
        break;
    }
    case PERF_RECORD_LOST_SAMPLES:
        out->kind = PERF_REC_LOST;
        out->lost = cur_u64(&c);
        parse_trailer(&c, sample_type, out);
        break;
    case PERF_RECORD_THROTTLE:
    case PERF_RECORD_UNTHROTTLE:
        out->kind = PERF_REC_THROTTLE;
        out->throttled = h.type == PERF_RECORD_THROTTLE;
        out->time = cur_u64(&c);
        out->id = cur_u64(&c);
        break;
    default:
        out->kind = PERF_REC_OTHER;
        break;
    }
    return c.err ? -EBADMSG : 0;
}

size_t perf_callchain_user(const uint64_t *ips, uint64_t n, uint64_t *out, size_t max)
{
    size_t k = 0;
    int user = 1; /* a chain without a context marker is taken as user frames */
    for (uint64_t i = 0; i < n && k < max; i++) {
        if (ips[i] >= (uint64_t)PERF_CONTEXT_MAX) {
            user = ips[i] == (uint64_t)PERF_CONTEXT_USER;
            continue;
        }
        if (user) out[k++] = ips[i];
    }
    return k;
}
