/* Bounded tables. 64 distinct stacks (recursion of 64 depths) with the limit on
 * stacks lowered to 16 leave 16 stacks and one (other stacks) sample without a
 * thread label, whose bytes the comments count; the totals agree with a run without
 * the limit, which has no such sample. With strings lowered to 2, a third thread
 * name becomes "(truncated)" and the comments count it. */
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

static int has_table(const struct profile *p, const char *name, uint64_t used, uint64_t limit)
{
    for (size_t i = 0; i < p->meta.n_tables; i++)
        if (!strcmp(p->meta.tables[i].name, name))
            return p->meta.tables[i].used == used && p->meta.tables[i].limit == limit;
    return 0;
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
    CHECK(full && cut);
    if (!full || !cut) return check_exit();

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
    double other_bytes = heap_sum(cut, ALLOC_SPACE, "(other stacks)", NULL);
    CHECK(other_bytes > 0);
    CHECK(comment_value(cut, "other_stacks_bytes=") == (int64_t)other_bytes);
    CHECK(comment_value(cut, "other_stacks_objects=") ==
          (int64_t)heap_sum(cut, ALLOC_OBJECTS, "(other stacks)", NULL));
    /* Each total is every byte less one thread's unsampled tail (at most 16 m). */
    CHECK_NEAR(heap_sum(full, ALLOC_SPACE, NULL, NULL), total, 16 * INTERVAL + 65536);
    CHECK_NEAR(heap_sum(cut, ALLOC_SPACE, NULL, NULL), total, 16 * INTERVAL + 65536);
    /* everything was freed: (other stacks) took its blocks' frees too */
    CHECK(heap_sum(cut, INUSE_SPACE, NULL, NULL) == 0);
    CHECK(heap_sum(cut, INUSE_OBJECTS, "(other stacks)", NULL) == 0);
    profile_free(full);
    profile_free(cut);

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
        CHECK(heap_sum(p, ALLOC_SPACE, NULL, "first-name") > 0);
        CHECK(heap_sum(p, ALLOC_SPACE, NULL, "second-name") == 0);
        CHECK(heap_sum(p, ALLOC_SPACE, NULL, "(truncated)") > 0);
        CHECK(comment_value(p, "truncated_strings=") > 0);
        profile_free(p);
    }
    return check_exit();
}
