/* The heap profiler's bounded tables: buckets (one per distinct stack and thread
 * name), the words of their stacks, and interned strings (thread names). All of them
 * live in one mapping sized for the limits at session start (MAP_NORESERVE: pages are
 * only touched as entries are used), so reaching a limit allocates nothing: a stack
 * that finds no room goes to bucket 0, (other stacks), and a string to "(truncated)".
 *
 * At the default limits the mapping is about 13.8 MiB. Called under the session lock;
 * every function may run inside malloc, none in a signal handler. */
#include "runtime/heap/heap.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static const struct heap_limits heap_limits_max = {
    .stacks = 65536, .words = 1048576, .strings = 32768, .string_bytes = 1048576};

static size_t heap_table_bytes(const struct heap_limits *max);

static uint32_t heap_env_limit(const char *name, uint32_t max)
{
    const char *v = getenv(name);
    if (!v || !*v) return max;
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    if (*end || n == 0) return max;
    return n < max ? (uint32_t)n : max;
}

void heap_limits_from_env(struct heap_limits *l)
{
    *l = heap_limits_max;
    l->stacks = heap_env_limit("KESTREL_HEAP_MAX_STACKS", l->stacks);
    l->words = heap_env_limit("KESTREL_HEAP_MAX_STACK_WORDS", l->words);
    l->strings = heap_env_limit("KESTREL_HEAP_MAX_STRINGS", l->strings);
    /* Under an address-space limit the tables' mapping (13.8 MiB at the limits above)
     * takes at most its share (heap_as_share): every limit divided alike. */
    size_t share = heap_as_share();
    for (unsigned k = 0; share && k < 10 && heap_table_bytes(l) > share; k++) {
        l->stacks /= 2;
        l->words /= 2;
        l->strings /= 2;
        l->string_bytes /= 2;
    }
    if (l->strings < 2) l->strings = 2; /* "(truncated)" and one name */
}

static uint32_t heap_pow2_above(uint64_t n)
{
    uint32_t m = 16;
    while (m < n + n / 2)
        m *= 2;
    return m;
}

static size_t heap_page_round(size_t n)
{
    return (n + 4095) & ~(size_t)4095;
}

static uint64_t heap_mix(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

/* The tables' parts, page-rounded, for the limits `max`; returns their total. */
static size_t heap_table_parts(const struct heap_limits *max, size_t sz[6])
{
    uint32_t bucket_mask = heap_pow2_above(max->stacks) - 1;
    uint32_t string_mask = heap_pow2_above(max->strings) - 1;
    sz[0] = heap_page_round(((size_t)max->stacks + 1) * sizeof(struct heap_bucket));
    sz[1] = heap_page_round(((size_t)bucket_mask + 1) * sizeof(uint32_t));
    sz[2] = heap_page_round((size_t)max->words * sizeof(uintptr_t));
    sz[3] = heap_page_round((size_t)max->strings * sizeof(struct heap_string));
    sz[4] = heap_page_round(((size_t)string_mask + 1) * sizeof(uint32_t));
    sz[5] = heap_page_round(max->string_bytes);
    size_t total = 0;
    for (int i = 0; i < 6; i++)
        total += sz[i];
    return total;
}

static size_t heap_table_bytes(const struct heap_limits *max)
{
    size_t sz[6];
    return heap_table_parts(max, sz);
}

int heap_table_init(struct heap_table *tb, const struct heap_limits *max)
{
    memset(tb, 0, sizeof *tb);
    tb->max = *max;
    tb->bucket_mask = heap_pow2_above(max->stacks) - 1;
    tb->string_mask = heap_pow2_above(max->strings) - 1;
    size_t sz[6];
    size_t total = heap_table_parts(max, sz);
    char *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (m == MAP_FAILED) return -12; /* ENOMEM */
    /* A fork child starts with no session: it never gets the table (fork copies none of
     * its page tables, and the child has nothing to unmap). */
    madvise(m, total, MADV_DONTFORK);
    tb->map = m;
    tb->map_size = total;
    tb->buckets = (struct heap_bucket *)m;
    tb->bucket_index = (uint32_t *)(m += sz[0]);
    tb->words = (uintptr_t *)(m += sz[1]);
    tb->strings = (struct heap_string *)(m += sz[2]);
    tb->string_index = (uint32_t *)(m += sz[3]);
    tb->bytes = (m += sz[4]);
    tb->nbuckets = 1; /* (other stacks): depth 0, no thread */
    tb->buckets[0].thread = HEAP_NO_STRING;
    heap_table_string(tb, "(truncated)", 11);
    return 0;
}

void heap_table_free(struct heap_table *tb)
{
    if (tb->map) munmap(tb->map, tb->map_size);
    memset(tb, 0, sizeof *tb);
}

void heap_table_forget(struct heap_table *tb)
{
    memset(tb, 0, sizeof *tb);
}

uint32_t heap_table_string(struct heap_table *tb, const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    for (uint32_t i = (uint32_t)h & tb->string_mask;; i = (i + 1) & tb->string_mask) {
        uint32_t e = tb->string_index[i];
        if (!e) break;
        const struct heap_string *st = &tb->strings[e - 1];
        if (st->hash == h && st->len == len && !memcmp(tb->bytes + st->off, s, len)) return e - 1;
    }
    if (tb->nstrings >= tb->max.strings || len > tb->max.string_bytes - tb->nbytes) {
        tb->truncated_strings++;
        return HEAP_TRUNCATED;
    }
    uint32_t id = tb->nstrings;
    struct heap_string *st = &tb->strings[id];
    memcpy(tb->bytes + tb->nbytes, s, len);
    st->hash = h;
    st->off = tb->nbytes;
    st->len = (uint32_t)len;
    tb->nbytes += (uint32_t)len;
    tb->nstrings++;
    uint32_t i = (uint32_t)h & tb->string_mask;
    while (tb->string_index[i])
        i = (i + 1) & tb->string_mask;
    tb->string_index[i] = id + 1;
    return id;
}

uint32_t heap_table_bucket(struct heap_table *tb, const uintptr_t *pcs, uint32_t depth,
                           uint32_t stop, uint32_t thread)
{
    uint64_t h = heap_mix(depth | (uint64_t)stop << 32, thread);
    for (uint32_t i = 0; i < depth; i++)
        h = heap_mix(h, pcs[i]);
    uint32_t i = (uint32_t)h & tb->bucket_mask;
    for (;; i = (i + 1) & tb->bucket_mask) {
        uint32_t e = tb->bucket_index[i];
        if (!e) break;
        const struct heap_bucket *b = &tb->buckets[e - 1];
        if (b->hash == h && b->depth == depth && b->thread == thread && b->stop == stop &&
            !memcmp(tb->words + b->words, pcs, depth * sizeof *pcs))
            return e - 1;
    }
    if (tb->nbuckets - 1 >= tb->max.stacks || depth > tb->max.words - tb->nwords) return 0;
    uint32_t id = tb->nbuckets;
    struct heap_bucket *b = &tb->buckets[id];
    memcpy(tb->words + tb->nwords, pcs, depth * sizeof *pcs);
    b->hash = h;
    b->words = tb->nwords;
    b->depth = depth;
    b->thread = thread;
    b->stop = stop;
    tb->nwords += depth;
    tb->nbuckets++;
    tb->bucket_index[i] = id + 1; /* i is the empty slot the probe ended at */
    return id;
}
