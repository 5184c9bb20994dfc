/* The profile model (profile.h): growable tables and the hash tables that intern
 * frames and stacks. */
#include "analysis/model/profile.h"
#include "analysis/model/intmap.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Open-addressing tables of indices (+1; 0 = empty), kept at most half full. Each
 * slot keeps its entry's hash: growing never hashes a frame's strings again, and a
 * probe compares strings only when the hashes agree. Entries appended without a
 * lookup (profile_append_frame) are indexed only when a lookup next needs them:
 * entries [0, used) are in the table. */
struct index_table {
    uint32_t *slots;
    uint64_t *hashes; /* per slot */
    size_t mask;      /* capacity - 1; capacity is a power of two */
    size_t used;
};

/* The frames' strings, each kept once: a profile's names and files repeat across
 * tens of thousands of frames (every address of a function has its name), and one
 * malloc per string was a large part of reading and symbolizing. Strings live in
 * chunks dropped whole with the frames; a set finds an equal string already kept. */
struct pool_chunk {
    struct pool_chunk *next;
    size_t used, size;
    _Alignas(8) char data[];
};

struct str_pool {
    struct pool_chunk *chunks;
    const char **slots; /* NULL = empty */
    uint64_t *hashes;   /* per slot */
    size_t mask, n;
};

/* One image in profile_image_of's index: its executable range, or its base. */
struct image_key {
    uint64_t lo, hi; /* [text, text + text_size), or [base, base] for an unranged image */
    uint32_t image;
};

struct profile_hash {
    struct index_table frames;
    struct index_table stacks;
    struct str_pool strings;  /* what frames[].name and .file point into */
    struct pool_chunk *words; /* what stacks[].frames point into */
    /* profile_image_of's index, built for the images there were (n_indexed) on first
     * use and again when there are more: a scan of every image per address made a
     * profile of 100,000 mappings and as many locations take minutes. */
    struct image_key *ranged;   /* sorted by (lo, image) */
    struct image_key *unranged; /* sorted by (base, image descending) */
    size_t n_ranged, n_unranged, n_indexed;
    int overlap; /* two ranges overlap: the first image in order wins, by a scan */
};

/* n bytes (a multiple of 4) from the chunks at *head; NULL when memory runs out.
 * Chunks double from 4 KiB to 1 MiB: a small profile (one of the thousands of
 * processes of a build, all held until they are merged) takes a few KiB, not 64. */
static void *chunk_alloc(struct pool_chunk **head, size_t n)
{
    struct pool_chunk *c = *head;
    if (!c || c->size - c->used < n) {
        size_t size = c ? (c->size < (1 << 20) ? 2 * c->size : c->size) : 4096;
        if (size < n) size = n;
        c = malloc(sizeof *c + size);
        if (!c) return NULL;
        *c = (struct pool_chunk){*head, 0, size};
        *head = c;
    }
    void *d = c->data + c->used;
    c->used += n;
    return d;
}

static void chunks_free(struct pool_chunk **head)
{
    while (*head) {
        struct pool_chunk *next = (*head)->next;
        free(*head);
        *head = next;
    }
}

/* ------------------------------------------------------------------ helpers */

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

static uint64_t hash_str(uint64_t h, const char *s)
{
    if (!s) return mix(h, 0x51);
    uint64_t x = 1469598103934665603ull;
    for (; *s; s++)
        x = (x ^ (unsigned char)*s) * 1099511628211ull;
    return mix(h, x);
}

/* The pool's copy of s (NULL stays NULL); NULL with *failed set when memory runs
 * out. */
static char *pool_intern(struct str_pool *sp, const char *s, int *failed)
{
    if (!s) return NULL;
    if ((sp->n + 1) * 2 > (sp->mask ? sp->mask + 1 : 0)) {
        size_t cap = sp->mask ? (sp->mask + 1) * 2 : 64;
        const char **slots = calloc(cap, sizeof *slots);
        uint64_t *hashes = malloc(cap * sizeof *hashes);
        if (!slots || !hashes) {
            free(slots), free(hashes);
            return *failed = 1, NULL;
        }
        for (size_t i = 0; sp->mask && i <= sp->mask; i++) {
            if (!sp->slots[i]) continue;
            size_t j = sp->hashes[i] & (cap - 1);
            while (slots[j])
                j = (j + 1) & (cap - 1);
            slots[j] = sp->slots[i], hashes[j] = sp->hashes[i];
        }
        free(sp->slots), free(sp->hashes);
        sp->slots = slots, sp->hashes = hashes, sp->mask = cap - 1;
    }
    uint64_t h = hash_str(0, s);
    size_t j = h & sp->mask;
    for (; sp->slots[j]; j = (j + 1) & sp->mask)
        if (sp->hashes[j] == h && !strcmp(sp->slots[j], s)) return (char *)sp->slots[j];
    size_t len = strlen(s) + 1;
    char *d = chunk_alloc(&sp->chunks, (len + 3) & ~(size_t)3);
    if (!d) return *failed = 1, NULL;
    memcpy(d, s, len);
    sp->slots[j] = d, sp->hashes[j] = h, sp->n++;
    return d;
}

static void pool_free(struct str_pool *sp)
{
    chunks_free(&sp->chunks);
    free(sp->slots), free(sp->hashes);
    *sp = (struct str_pool){0};
}

/* A frame whose strings are the pool's: equal strings are the same pointer. */
static uint64_t frame_hash(const struct profile_frame *f)
{
    uint64_t h = mix((uint64_t)(uintptr_t)f->name, (uint64_t)(uintptr_t)f->file);
    h = mix(h, (uint64_t)(uint32_t)f->line << 32 | (uint32_t)f->column);
    h = mix(h, (uint64_t)(uint32_t)f->image << 16 | f->inlined << 1 | f->symbolized);
    return mix(h, f->address);
}

int profile_frame_equal(const struct profile_frame *a, const struct profile_frame *b)
{
    return a->address == b->address && a->line == b->line && a->column == b->column &&
           a->image == b->image && a->inlined == b->inlined && a->symbolized == b->symbolized &&
           a->from_debug == b->from_debug &&
           a->name == b->name && a->file == b->file && a->raw_name == b->raw_name;
}

static uint64_t stack_hash(const uint32_t *frames, uint32_t depth)
{
    uint64_t h = depth;
    for (uint32_t i = 0; i < depth; i++)
        h = mix(h, frames[i]);
    return h;
}

/* Makes the table hold at least `need` entries at most half full: if it does not,
 * grows it (at least doubling it) and reinserts every index by its kept hash. */
static int table_grow(struct index_table *t, size_t need)
{
    if (need * 2 <= (t->mask ? t->mask + 1 : 0)) return 0; /* it already does */
    size_t cap = t->mask ? (t->mask + 1) * 2 : 64;
    while (cap < need * 2)
        cap *= 2;
    uint32_t *slots = calloc(cap, sizeof *slots);
    uint64_t *hashes = malloc(cap * sizeof *hashes);
    if (!slots || !hashes) {
        free(slots);
        free(hashes);
        return -1;
    }
    for (size_t i = 0; t->mask && i <= t->mask; i++) {
        uint32_t v = t->slots[i];
        if (!v) continue;
        size_t j = t->hashes[i] & (cap - 1);
        while (slots[j])
            j = (j + 1) & (cap - 1);
        slots[j] = v;
        hashes[j] = t->hashes[i];
    }
    free(t->slots);
    free(t->hashes);
    t->slots = slots;
    t->hashes = hashes;
    t->mask = cap - 1;
    return 0;
}

/* ------------------------------------------------------------------ lifetime */

struct profile *profile_new(enum profile_kind kind)
{
    struct profile *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->hash = calloc(1, sizeof *p->hash);
    if (!p->hash) {
        free(p);
        return NULL;
    }
    p->kind = kind;
    p->meta.pid = -1;
    p->meta.ppid = -1;
    return p;
}

static void free_frames_stacks(struct profile *p)
{
    free(p->frames);
    free(p->stacks);
    if (p->hash) {
        free(p->hash->frames.slots);
        free(p->hash->frames.hashes);
        free(p->hash->stacks.slots);
        free(p->hash->stacks.hashes);
        pool_free(&p->hash->strings);
        chunks_free(&p->hash->words);
    }
}

void profile_free(struct profile *p)
{
    if (!p) return;
    free_frames_stacks(p);
    if (p->hash) free(p->hash->ranged), free(p->hash->unranged);
    free(p->hash);
    for (size_t i = 0; i < p->n_sample_types; i++) {
        free(p->sample_types[i].type);
        free(p->sample_types[i].unit);
    }
    free(p->period_type.type);
    free(p->period_type.unit);
    for (size_t i = 0; i < p->n_threads; i++) {
        free(p->threads[i].label);
        free(p->threads[i].name);
    }
    free(p->threads);
    free(p->samples);
    free(p->values);
    for (size_t i = 0; i < p->n_images; i++) {
        free(p->images[i].path);
        free(p->images[i].build_id);
        free(p->images[i].arch);
        free(p->images[i].elf);
    }
    free(p->images);
    for (size_t i = 0; i < p->n_processes; i++) {
        free(p->processes[i].name);
        free(p->processes[i].exe);
        free(p->processes[i].chain);
        free(p->processes[i].cmdline);
    }
    free(p->processes);
    free(p->meta.exe);
    free(p->meta.platform);
    free(p->meta.engine);
    free(p->meta.perf_map);
    for (size_t i = 0; i < p->meta.n_tables; i++)
        free(p->meta.tables[i].name);
    free(p->meta.tables);
    for (size_t i = 0; i < p->meta.n_comments; i++)
        free(p->meta.comments[i]);
    free(p->meta.comments);
    free(p->source);
    free(p);
}

/* ------------------------------------------------------------------ adders */

int profile_add_sample_type(struct profile *p, const char *type, const char *unit)
{
    /* Values are stored per sample, so the types are fixed before the first sample. */
    if (p->n_sample_types >= PROFILE_MAX_SAMPLE_TYPES || p->n_samples) return -1;
    struct profile_sample_type *t = &p->sample_types[p->n_sample_types];
    t->type = strdup(type ? type : "");
    t->unit = strdup(unit ? unit : "");
    if (!t->type || !t->unit) {
        free(t->type);
        free(t->unit);
        t->type = t->unit = NULL;
        return -1;
    }
    return (int)p->n_sample_types++;
}

int profile_find_sample_type(const struct profile *p, const char *type)
{
    for (size_t i = 0; i < p->n_sample_types; i++)
        if (!strcmp(p->sample_types[i].type, type)) return (int)i;
    return -1;
}

int64_t profile_add_thread(struct profile *p, const char *label, int64_t fiber, int64_t tid,
                           const char *name)
{
    if (array_reserve((void **)&p->threads, &p->cap_threads, p->n_threads + 1, sizeof *p->threads))
        return -1;
    struct profile_thread *t = &p->threads[p->n_threads];
    t->label = strdup(label ? label : "");
    t->name = dup_or_null(name);
    if (!t->label || (name && !t->name)) {
        free(t->label);
        free(t->name);
        return -1;
    }
    t->fiber = fiber;
    t->tid = tid;
    t->process = -1;
    return (int64_t)p->n_threads++;
}

int64_t profile_add_process(struct profile *p, const struct profile_process *pr)
{
    if (array_reserve((void **)&p->processes, &p->cap_processes, p->n_processes + 1,
             sizeof *p->processes))
        return -1;
    struct profile_process *o = &p->processes[p->n_processes];
    *o = *pr;
    o->name = strdup(pr->name ? pr->name : "?");
    o->exe = dup_or_null(pr->exe);
    o->chain = dup_or_null(pr->chain);
    o->cmdline = dup_or_null(pr->cmdline);
    if (!o->name || (pr->exe && !o->exe) || (pr->chain && !o->chain) ||
        (pr->cmdline && !o->cmdline)) {
        free(o->name), free(o->exe), free(o->chain), free(o->cmdline);
        return -1;
    }
    return (int64_t)p->n_processes++;
}

const char *profile_process_label(const struct profile *p, int32_t process, char *buf,
                                  size_t size)
{
    if (process < 0 || (size_t)process >= p->n_processes) {
        snprintf(buf, size, "?");
        return buf;
    }
    const struct profile_process *pr = &p->processes[process];
    if (pr->pid >= 0)
        snprintf(buf, size, "%s [%lld]", pr->name, (long long)pr->pid);
    else
        snprintf(buf, size, "%s", pr->name);
    return buf;
}

int64_t profile_add_image(struct profile *p, const struct profile_image *im)
{
    if (array_reserve((void **)&p->images, &p->cap_images, p->n_images + 1, sizeof *p->images)) return -1;
    struct profile_image *d = &p->images[p->n_images];
    *d = *im;
    d->path = strdup(im->path ? im->path : "");
    d->build_id = dup_or_null(im->build_id);
    d->arch = dup_or_null(im->arch);
    d->elf = dup_or_null(im->elf);
    if (!d->path || (im->build_id && !d->build_id) || (im->arch && !d->arch) ||
        (im->elf && !d->elf)) {
        free(d->path);
        free(d->build_id);
        free(d->arch);
        free(d->elf);
        return -1;
    }
    return (int64_t)p->n_images++;
}

char *profile_intern_string(struct profile *p, const char *s)
{
    int failed = 0;
    return pool_intern(&p->hash->strings, s, &failed);
}

/* Puts frames appended without a lookup into the table. */
static int index_appended_frames(struct profile *p)
{
    struct index_table *t = &p->hash->frames;
    if (table_grow(t, p->n_frames + 1)) return -1;
    for (; t->used < p->n_frames; t->used++) {
        uint64_t h = frame_hash(&p->frames[t->used]);
        size_t j = h & t->mask;
        while (t->slots[j])
            j = (j + 1) & t->mask;
        t->slots[j] = (uint32_t)t->used + 1;
        t->hashes[j] = h;
    }
    return 0;
}

int64_t profile_append_frame(struct profile *p, const struct profile_frame *f)
{
    if (p->n_frames >= UINT32_MAX - 1) return -1;
    if (array_reserve((void **)&p->frames, &p->cap_frames, p->n_frames + 1, sizeof *p->frames)) return -1;
    p->frames[p->n_frames] = *f;
    return (int64_t)p->n_frames++;
}

int profile_reserve(struct profile *p, size_t frames, size_t stacks)
{
    struct index_table *t = &p->hash->stacks;
    if (array_reserve((void **)&p->frames, &p->cap_frames, frames, sizeof *p->frames) ||
        array_reserve((void **)&p->stacks, &p->cap_stacks, stacks, sizeof *p->stacks))
        return -1;
    return table_grow(t, stacks);
}

int64_t profile_intern_frame_owned(struct profile *p, const struct profile_frame *k)
{
    struct index_table *t = &p->hash->frames;
    if (t->used < p->n_frames && index_appended_frames(p)) return -1;
    if (table_grow(t, p->n_frames + 1)) return -1;
    uint64_t h = frame_hash(k);
    size_t j = h & t->mask;
    for (; t->slots[j]; j = (j + 1) & t->mask)
        if (t->hashes[j] == h && profile_frame_equal(&p->frames[t->slots[j] - 1], k))
            return t->slots[j] - 1;
    if (p->n_frames >= UINT32_MAX - 1) return -1;
    if (array_reserve((void **)&p->frames, &p->cap_frames, p->n_frames + 1, sizeof *p->frames)) return -1;
    p->frames[p->n_frames] = *k;
    t->slots[j] = (uint32_t)++p->n_frames;
    t->hashes[j] = h;
    t->used++;
    return (int64_t)p->n_frames - 1;
}

int64_t profile_intern_frame(struct profile *p, const struct profile_frame *f)
{
    int failed = 0;
    struct profile_frame k = *f;
    k.name = pool_intern(&p->hash->strings, f->name ? f->name : "", &failed);
    k.file = pool_intern(&p->hash->strings, f->file, &failed);
    k.raw_name = pool_intern(&p->hash->strings, f->raw_name, &failed);
    return failed ? -1 : profile_intern_frame_owned(p, &k);
}

int64_t profile_intern_address(struct profile *p, uint64_t address)
{
    char hex[24];
    snprintf(hex, sizeof hex, "0x%" PRIx64, address);
    struct profile_frame f = {
        .name = hex, .image = profile_image_of(p, address), .address = address};
    return profile_intern_frame(p, &f);
}

int64_t profile_intern_stack(struct profile *p, const uint32_t *frames, uint32_t depth)
{
    struct index_table *t = &p->hash->stacks;
    if (table_grow(t, p->n_stacks + 1)) return -1;
    uint64_t h = stack_hash(frames, depth);
    size_t j = h & t->mask;
    for (; t->slots[j]; j = (j + 1) & t->mask) {
        const struct profile_stack *s = &p->stacks[t->slots[j] - 1];
        if (t->hashes[j] == h && s->depth == depth &&
            !memcmp(s->frames, frames, depth * sizeof *frames))
            return t->slots[j] - 1;
    }
    if (p->n_stacks >= UINT32_MAX - 1) return -1;
    if (array_reserve((void **)&p->stacks, &p->cap_stacks, p->n_stacks + 1, sizeof *p->stacks)) return -1;
    struct profile_stack *d = &p->stacks[p->n_stacks];
    d->frames = chunk_alloc(&p->hash->words, (depth ? depth : 1) * sizeof *frames);
    if (!d->frames) return -1;
    memcpy(d->frames, frames, depth * sizeof *frames);
    d->depth = depth;
    t->slots[j] = (uint32_t)++p->n_stacks;
    t->hashes[j] = h;
    t->used++;
    return (int64_t)p->n_stacks - 1;
}

int profile_add_sample(struct profile *p, uint32_t thread, uint32_t stack, int state,
                       int64_t time_ns, const int64_t *values)
{
    size_t old = p->cap_samples;
    if (array_reserve((void **)&p->samples, &p->cap_samples, p->n_samples + 1, sizeof *p->samples))
        return -1;
    if (p->cap_samples != old && p->n_sample_types) {
        int64_t *v = realloc(p->values, p->cap_samples * p->n_sample_types * sizeof *v);
        if (!v) {
            p->cap_samples = old; /* keep samples and values the same capacity */
            return -1;
        }
        p->values = v;
    }
    struct profile_sample *s = &p->samples[p->n_samples];
    s->thread = thread;
    s->stack = stack;
    s->state = (uint8_t)state;
    s->time_ns = time_ns;
    memcpy(profile_values(p, p->n_samples), values, p->n_sample_types * sizeof *values);
    p->n_samples++;
    return 0;
}

int profile_add_table(struct profile *p, const char *name, uint64_t used, uint64_t limit,
                      uint64_t past)
{
    struct profile_table *t =
        realloc(p->meta.tables, (p->meta.n_tables + 1) * sizeof *p->meta.tables);
    if (!t) return -1;
    p->meta.tables = t;
    char *n = strdup(name);
    if (!n) return -1;
    t[p->meta.n_tables++] = (struct profile_table){n, used, limit, past};
    return 0;
}

int profile_add_comment(struct profile *p, const char *text)
{
    char **c = realloc(p->meta.comments, (p->meta.n_comments + 1) * sizeof *c);
    if (!c) return -1;
    p->meta.comments = c;
    if (!(c[p->meta.n_comments] = strdup(text))) return -1;
    p->meta.n_comments++;
    return 0;
}

/* ------------------------------------------------------------------ queries */

static int cmp_image_key(const void *a, const void *b)
{
    const struct image_key *x = a, *y = b;
    if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
    return x->image < y->image ? -1 : x->image > y->image;
}

/* Unranged images: by base, and among equal bases the lowest index last, so the last
 * key at or below an address is the one the scan would pick. */
static int cmp_base_key(const void *a, const void *b)
{
    const struct image_key *x = a, *y = b;
    if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
    return x->image > y->image ? -1 : x->image < y->image;
}

/* (Re)builds profile_image_of's index; -1 when memory runs out (the caller scans). */
static int image_index(const struct profile *p)
{
    struct profile_hash *h = p->hash;
    if (h->n_indexed == p->n_images && (h->ranged || h->unranged || !p->n_images)) return 0;
    free(h->ranged), free(h->unranged);
    h->ranged = malloc((p->n_images + 1) * sizeof *h->ranged);
    h->unranged = malloc((p->n_images + 1) * sizeof *h->unranged);
    h->n_ranged = h->n_unranged = h->n_indexed = 0;
    h->overlap = 0;
    if (!h->ranged || !h->unranged) {
        free(h->ranged), free(h->unranged);
        h->ranged = h->unranged = NULL;
        return -1;
    }
    for (size_t i = 0; i < p->n_images; i++) {
        const struct profile_image *im = &p->images[i];
        if (im->text_size)
            h->ranged[h->n_ranged++] =
                (struct image_key){im->text, im->text + im->text_size, (uint32_t)i};
        else
            h->unranged[h->n_unranged++] = (struct image_key){im->base, im->base, (uint32_t)i};
    }
    qsort(h->ranged, h->n_ranged, sizeof *h->ranged, cmp_image_key);
    qsort(h->unranged, h->n_unranged, sizeof *h->unranged, cmp_base_key);
    /* A range that wraps (hi < lo) is treated as overlapping too: the scan decides. */
    uint64_t end = 0;
    for (size_t i = 0; i < h->n_ranged; i++) {
        if ((i && h->ranged[i].lo < end) || h->ranged[i].hi < h->ranged[i].lo) h->overlap = 1;
        if (h->ranged[i].hi > end) end = h->ranged[i].hi;
    }
    h->n_indexed = p->n_images;
    return 0;
}

/* The last key whose lo is at or below addr; n when none. */
static size_t last_at_or_below(const struct image_key *k, size_t n, uint64_t addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (k[mid].lo <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? lo - 1 : n;
}

int profile_image_of(const struct profile *p, uint64_t addr)
{
    const struct profile_hash *h = p->hash;
    int indexed = h && !image_index(p);
    if (indexed && !h->overlap) {
        size_t k = last_at_or_below(h->ranged, h->n_ranged, addr);
        if (k < h->n_ranged && addr < h->ranged[k].hi) return (int)h->ranged[k].image;
    } else {
        for (size_t i = 0; i < p->n_images; i++) {
            const struct profile_image *im = &p->images[i];
            if (im->text_size && addr >= im->text && addr - im->text < im->text_size)
                return (int)i;
        }
    }
    /* Only images that say nothing about their executable range may claim an
     * address by base: a ranged image that does not contain it cannot hold it. */
    if (indexed) {
        size_t k = last_at_or_below(h->unranged, h->n_unranged, addr);
        return k < h->n_unranged ? (int)h->unranged[k].image : -1;
    }
    int best = -1;
    for (size_t i = 0; i < p->n_images; i++) {
        const struct profile_image *im = &p->images[i];
        if (im->text_size || im->base > addr) continue;
        if (best < 0 || im->base > p->images[best].base) best = (int)i;
    }
    return best;
}

int64_t profile_wall_ns(const struct profile *p)
{
    if (p->meta.start_unix_ns <= 0 || p->meta.end_unix_ns < p->meta.start_unix_ns) return 0;
    return p->meta.end_unix_ns - p->meta.start_unix_ns;
}

int profile_check(const struct profile *p, char *why, size_t why_size)
{
#define FAIL(...)                                                                                  \
    do {                                                                                           \
        snprintf(why, why_size, __VA_ARGS__);                                                      \
        return -1;                                                                                 \
    } while (0)
    if (!p->n_sample_types) FAIL("no sample types");
    if (p->default_type >= p->n_sample_types) FAIL("default sample type out of range");
    for (size_t i = 0; i < p->n_frames; i++) {
        const struct profile_frame *f = &p->frames[i];
        if (!f->name) FAIL("frame %zu has no name", i);
        if (f->image < -1 || (f->image >= 0 && (size_t)f->image >= p->n_images))
            FAIL("frame %zu: image %d out of range", i, f->image);
    }
    for (size_t i = 0; i < p->n_threads; i++)
        if (p->threads[i].process < -1 ||
            (p->threads[i].process >= 0 && (size_t)p->threads[i].process >= p->n_processes))
            FAIL("thread %zu: process %d out of range", i, p->threads[i].process);
    for (size_t i = 0; i < p->n_stacks; i++) {
        const struct profile_stack *s = &p->stacks[i];
        if (s->depth > PROFILE_MAX_DEPTH) FAIL("stack %zu is %u frames deep", i, s->depth);
        for (uint32_t k = 0; k < s->depth; k++)
            if (s->frames[k] >= p->n_frames) FAIL("stack %zu: frame %u out of range", i, k);
    }
    for (size_t i = 0; i < p->n_samples; i++) {
        const struct profile_sample *s = &p->samples[i];
        if (s->thread >= p->n_threads) FAIL("sample %zu: thread out of range", i);
        if (s->stack >= p->n_stacks) FAIL("sample %zu: stack out of range", i);
        if (s->state >= PROFILE_NSTATES) FAIL("sample %zu: unknown state %u", i, s->state);
    }
    /* Every writer and the aggregation may add up any subset of a type's values: the
     * sum of their magnitudes must fit, so no subset can overflow. */
    for (size_t k = 0; k < p->n_sample_types; k++) {
        uint64_t sum = 0;
        for (size_t i = 0; i < p->n_samples; i++) {
            int64_t v = profile_values(p, i)[k];
            uint64_t mag = v < 0 ? -(uint64_t)v : (uint64_t)v;
            if (__builtin_add_overflow(sum, mag, &sum) || sum > INT64_MAX)
                FAIL("%s values add up past 64 bits", p->sample_types[k].type);
        }
    }
    return 0;
#undef FAIL
}

/* ------------------------------------------------------------------ symbolizer */

void profile_replace_stacks(struct profile *p, struct profile *with, const uint32_t *map)
{
    free_frames_stacks(p);
    p->frames = with->frames;
    p->n_frames = with->n_frames;
    p->cap_frames = with->cap_frames;
    p->stacks = with->stacks;
    p->n_stacks = with->n_stacks;
    p->cap_stacks = with->cap_stacks;
    p->hash->frames = with->hash->frames;
    p->hash->stacks = with->hash->stacks;
    p->hash->strings = with->hash->strings;
    p->hash->words = with->hash->words;
    with->frames = NULL;
    with->stacks = NULL;
    with->n_frames = with->n_stacks = with->cap_frames = with->cap_stacks = 0;
    free(with->hash->ranged), free(with->hash->unranged); /* not p's images */
    memset(with->hash, 0, sizeof *with->hash);
    for (size_t i = 0; i < p->n_samples; i++)
        p->samples[i].stack = map[p->samples[i].stack];
}

static int profile_is_mark(const struct profile *p, uint32_t f, const char *name)
{
    return p->frames[f].image == -1 && !strcmp(p->frames[f].name, name);
}

int profile_stack_marks(const struct profile *p, const struct profile_stack *st, int *cut,
                        uint32_t *last)
{
    uint32_t d = st->depth;
    int c = d && profile_is_mark(p, st->frames[d - 1], PROFILE_INCOMPLETE_FRAME);
    d -= (uint32_t)c;
    int g = d && profile_is_mark(p, st->frames[d - 1], PROFILE_GUESSED_FRAME);
    d -= (uint32_t)g;
    if (cut) *cut = c;
    if (last) *last = d;
    return g;
}
