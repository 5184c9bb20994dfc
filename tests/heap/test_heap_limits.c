/* Bounded tables. 64 distinct stacks (recursion of 64 depths) with the limit on
 * stacks lowered to 16 leave 16 stacks and one (other stacks) sample without a
 * thread label, whose bytes the comments count; the totals agree with a run without
 * the limit, which has no such sample. With the stack words lowered to 300, the
 * stacks that came first fill at most 300 words, every later one goes to (other
 * stacks), whose bytes the comments count, and the totals still agree. With strings
 * lowered to 2, a third thread name becomes "(truncated)" and the comments count it. */
#include <pthread.h>
#include <stdlib.h>

#include "heap/heap_test.h"

#define INTERVAL 65536.0
#define SZ 4096
#define DEPTHS 64
#define PER_DEPTH 64 /* 256 KiB per stack, 16 MiB in all */

static void *blocks[DEPTHS * PER_DEPTH];

NOINLINE void *deep(int d)
{
    if (d == 0) return SITE(malloc(SZ));
    return SITE(deep(d - 1));
}

static int64_t comment_value(const struct profile *p, const char *key)
{
    for (size_t i = 0; i < p->meta.n_comments; i++) {
        const char *c = strstr(p->meta.comments[i], key);
        if (c) return strtoll(c + strlen(key), NULL, 10);
    }
    return -1;
}

static const struct profile_table *table(const struct profile *p, const char *name)
{
    for (size_t i = 0; i < p->meta.n_tables; i++)
        if (!strcmp(p->meta.tables[i].name, name)) return &p->meta.tables[i];
    return NULL;
}

static int has_table(const struct profile *p, const char *name, uint64_t used, uint64_t limit)
{
    const struct profile_table *t = table(p, name);
    return t && t->used == used && t->limit == limit;
}

/* (other stacks) as the profile and its comments say it, against a run without limits. */
static void check_other(const struct profile *full, const struct profile *cut, double total)
{
    double other_bytes = heap_sum(cut, ALLOC_SPACE, "(other stacks)", NULL);
    CHECK(other_bytes > 0);
    CHECK(comment_value(cut, "other_stacks_bytes=") == (int64_t)other_bytes);
    CHECK(comment_value(cut, "other_stacks_objects=") ==
          (int64_t)heap_sum(cut, ALLOC_OBJECTS, "(other stacks)", NULL));
    /* Each total is every byte within 16 m (heap_test.h: the tail, the first gap). */
    CHECK_NEAR(heap_sum(full, ALLOC_SPACE, NULL, NULL), total, 16 * INTERVAL + 65536);
    CHECK_NEAR(heap_sum(cut, ALLOC_SPACE, NULL, NULL), total, 16 * INTERVAL + 65536);
    /* everything was freed: (other stacks) took its blocks' frees too */
    CHECK(heap_sum(cut, INUSE_SPACE, NULL, NULL) == 0);
    CHECK(heap_sum(cut, INUSE_OBJECTS, "(other stacks)", NULL) == 0);
}

static struct profile *run(void)
{
    CHECK(kestrel_heap_start((size_t)INTERVAL) == 0);
    for (int d = 0; d < DEPTHS; d++)
        for (int i = 0; i < PER_DEPTH; i++)
            blocks[d * PER_DEPTH + i] = deep(d);
    for (int i = 0; i < DEPTHS * PER_DEPTH; i++)
        free(blocks[i]);
    return heap_snapshot(1);
}

static void *named(void *arg)
{
    pthread_setname_np(pthread_self(), arg);
    for (int i = 0; i < 1024; i++)
        free(deep(0));
    return NULL;
}

int main(void)
{
    unsetenv("KESTREL_HEAP_MAX_STACKS");
    struct profile *full = run();
    setenv("KESTREL_HEAP_MAX_STACKS", "16", 1);
    struct profile *cut = run();
    unsetenv("KESTREL_HEAP_MAX_STACKS");
    setenv("KESTREL_HEAP_MAX_STACK_WORDS", "300", 1);
    struct profile *words = run();
    unsetenv("KESTREL_HEAP_MAX_STACK_WORDS");
    CHECK(full && cut && words);
    if (!full || !cut || !words) return check_exit();

    double total = (double)DEPTHS * PER_DEPTH * SZ;
    CHECK(heap_sum(full, ALLOC_SPACE, "(other stacks)", NULL) == 0);
    CHECKF(full->n_samples > 16, "%zu samples without a limit", full->n_samples);
    CHECK(comment_value(full, "other_stacks_bytes=") == 0);

    size_t other = 0, labelled = 0;
    for (size_t i = 0; i < cut->n_samples; i++) {
        int is_other = !strcmp(heap_site(cut, i), "(other stacks)");
        other += is_other;
        labelled += !is_other && !strcmp(heap_thread(cut, i), "test_heap_limit");
    }
    CHECKF(cut->n_samples == 17 && other == 1 && labelled == 16, "%zu samples, %zu other",
           cut->n_samples, other);
    CHECK(has_table(cut, "stacks", 16, 16));
    check_other(full, cut, total);

    /* Stack words: the stacks kept are the shallowest (recursion depth d came before
     * d + 1), their words are the table's count, and the next one would not fit. */
    const struct profile_table *w = table(words, "stack_words");
    CHECKF(w && w->limit == 300 && w->used <= 300, "stack_words %llu/%llu",
           w ? (unsigned long long)w->used : 0ull, w ? (unsigned long long)w->limit : 0ull);
    uint64_t kept_words = 0;
    size_t kept = 0, deepest = 0;
    for (size_t i = 0; i < words->n_samples; i++) {
        if (!strcmp(heap_site(words, i), "(other stacks)")) continue;
        size_t depth = words->stacks[words->samples[i].stack].depth;
        kept_words += depth;
        kept++;
        if (depth > deepest) deepest = depth;
    }
    CHECKF(w && kept_words == w->used, "%llu words in the kept stacks, the table says %llu",
           (unsigned long long)kept_words, w ? (unsigned long long)w->used : 0ull);
    CHECKF(kept > 1 && kept < DEPTHS, "%zu stacks kept", kept);
    /* The first stack refused is at least one frame deeper than the deepest kept, and
     * at most five (four depths in a row without a sample: each has 256 KiB at a
     * 64 KiB interval, so e^-4 each, 3e-7 for four). */
    CHECKF(kept_words + deepest + 5 > 300, "%llu words kept, room left for a %zu-frame stack",
           (unsigned long long)kept_words, deepest + 1);
    CHECK(has_table(words, "stacks", kept, 65536));
    check_other(full, words, total);
    profile_free(full);
    profile_free(cut);
    profile_free(words);

    setenv("KESTREL_HEAP_MAX_STRINGS", "2", 1);
    CHECK(kestrel_heap_start((size_t)INTERVAL) == 0);
    pthread_t t;
    const char *names[2] = {"first-name", "second-name"};
    for (int k = 0; k < 2; k++) {
        pthread_create(&t, NULL, named, (void *)names[k]);
        pthread_join(t, NULL);
    }
    struct profile *p = heap_snapshot(1);
    unsetenv("KESTREL_HEAP_MAX_STRINGS");
    CHECK(p != NULL);
    if (p) {
        /* One name fits beside "(truncated)": the first thread's, unless this thread
         * was sampled first (glibc allocates inside pthread_create: a few hundred
         * bytes, about one chance in a hundred at this interval); the second thread's
         * never. Every sample is labelled with the one name kept or "(truncated)". */
        char self[64] = "";
        pthread_getname_np(pthread_self(), self, sizeof self);
        const char *kept = heap_sum(p, ALLOC_SPACE, NULL, self) > 0 ? self : "first-name";
        CHECKF(heap_sum(p, ALLOC_SPACE, NULL, kept) > 0, "no sample labelled %s", kept);
        CHECK(heap_sum(p, ALLOC_SPACE, NULL, "second-name") == 0);
        CHECK(heap_sum(p, ALLOC_SPACE, NULL, kept) +
                  heap_sum(p, ALLOC_SPACE, NULL, "(truncated)") ==
              heap_sum(p, ALLOC_SPACE, NULL, NULL));
        CHECK(heap_sum(p, ALLOC_SPACE, NULL, "(truncated)") > 0);
        CHECK(comment_value(p, "truncated_strings=") > 0);
        profile_free(p);
    }
    return check_exit();
}
