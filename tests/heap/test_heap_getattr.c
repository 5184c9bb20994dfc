/* Threads whose first allocations are the ones glibc's pthread_getattr_np makes while
 * it holds the thread's own lock (the affinity mask it copies into the attributes).
 * The heap profiler samples one of them first, and must find the thread's stack
 * without calling pthread_getattr_np again inside it: that waited on the same lock
 * for ever (a thread of prog_smallstack hung so). Each thread's samples are there,
 * and their stacks go from the allocation through pthread_getattr_np to the loop
 * that called it. */
#include <pthread.h>

#include "heap/heap_test.h"

#define THREADS 4
#define CALLS 4000 /* about 30 sampled allocations per thread at 64 KiB */

NOINLINE void *getattr_loop(void *arg)
{
    (void)arg;
    for (int i = 0; i < CALLS; i++) {
        pthread_attr_t a;
        if (pthread_getattr_np(pthread_self(), &a) == 0) pthread_attr_destroy(&a);
    }
    __asm__ volatile("" ::: "memory");
    return NULL;
}

/* Whether some frame of sample i is the function `name`. */
static int holds(const struct profile *p, size_t i, const char *name)
{
    const struct profile_stack *st = &p->stacks[p->samples[i].stack];
    for (size_t k = 0; k < st->depth; k++) {
        Dl_info info;
        const struct profile_frame *f = &p->frames[st->frames[k]];
        if (dladdr((void *)(uintptr_t)f->address, &info) && info.dli_sname &&
            !strcmp(info.dli_sname, name))
            return 1;
    }
    return 0;
}

int main(void)
{
    CHECK(kestrel_heap_start(65536) == 0);
    pthread_t t[THREADS];
    for (int k = 0; k < THREADS; k++)
        CHECK(pthread_create(&t[k], NULL, getattr_loop, NULL) == 0);
    for (int k = 0; k < THREADS; k++)
        pthread_join(t[k], NULL);
    struct profile *p = heap_snapshot(1);
    CHECK(p != NULL);
    if (!p) return check_exit();
    size_t in_getattr = 0, whole = 0;
    for (size_t i = 0; i < p->n_samples; i++) {
        if (!holds(p, i, "pthread_getattr_np")) continue;
        in_getattr++;
        whole += holds(p, i, "getattr_loop");
    }
    fprintf(stderr, "%zu samples of %zu in pthread_getattr_np, %zu through getattr_loop\n",
            in_getattr, p->n_samples, whole);
    CHECKF(in_getattr >= 1, "%zu samples in pthread_getattr_np", in_getattr);
    CHECKF(whole == in_getattr, "%zu of %zu reach getattr_loop", whole, in_getattr);
    profile_free(p);
    return check_exit();
}
