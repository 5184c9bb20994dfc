/* Four threads allocating at their own sites: each site has its thread's label and
 * the bytes that thread allocated there, within the sampling's tolerance, and no
 * other thread's. Two threads of one name allocating at one site say the same thing
 * and are one sample. */
#include <pthread.h>

#include "heap/heap_test.h"

#define INTERVAL 65536.0
#define SZ 4096
#define PER_THREAD 4096 /* blocks of SZ: 16 MiB kept per thread */

static void *blocks[6][PER_THREAD];

NOINLINE void *site_t0(void)
{
    return SITE(malloc(SZ));
}
NOINLINE void *site_t1(void)
{
    return SITE(malloc(SZ));
}
NOINLINE void *site_t2(void)
{
    return SITE(malloc(SZ));
}
NOINLINE void *site_t3(void)
{
    return SITE(malloc(SZ));
}
NOINLINE void *site_twin(void)
{
    return SITE(malloc(SZ));
}

static void *(*const sites[6])(void) = {site_t0, site_t1, site_t2, site_t3, site_twin, site_twin};
static const char *const names[6] = {"alloc-0", "alloc-1", "alloc-2", "alloc-3", "twin", "twin"};

static void *worker(void *arg)
{
    int k = (int)(intptr_t)arg;
    pthread_setname_np(pthread_self(), names[k]);
    for (int i = 0; i < PER_THREAD; i++)
        blocks[k][i] = sites[k]();
    return NULL;
}

int main(void)
{
    CHECK(kestrel_heap_start((size_t)INTERVAL) == 0);
    pthread_t t[6];
    for (int k = 0; k < 6; k++)
        pthread_create(&t[k], NULL, worker, (void *)(intptr_t)k);
    for (int k = 0; k < 6; k++)
        pthread_join(t[k], NULL);
    struct profile *p = heap_snapshot(1);
    CHECK(p != NULL);
    if (!p) return check_exit();

    double bytes = PER_THREAD * (double)SZ, tol = heap_tolerance(bytes, INTERVAL, SZ);
    static const char *const site_names[4] = {"site_t0", "site_t1", "site_t2", "site_t3"};
    for (int k = 0; k < 4; k++) {
        CHECK_NEAR(heap_sum(p, INUSE_SPACE, site_names[k], names[k]), bytes, tol);
        /* the site's bytes are all this thread's, the thread's all this site's */
        CHECK(heap_sum(p, ALLOC_SPACE, site_names[k], NULL) ==
              heap_sum(p, ALLOC_SPACE, site_names[k], names[k]));
        CHECK(heap_sum(p, ALLOC_SPACE, NULL, names[k]) ==
              heap_sum(p, ALLOC_SPACE, site_names[k], names[k]));
    }
    size_t twins = 0;
    for (size_t i = 0; i < p->n_samples; i++)
        twins += !strcmp(heap_site(p, i), "site_twin") && !strcmp(heap_thread(p, i), "twin");
    CHECKF(twins == 1, "%zu samples for two threads named twin at one site", twins);
    CHECK_NEAR(heap_sum(p, INUSE_SPACE, "site_twin", "twin"), 2 * bytes,
               heap_tolerance(2 * bytes, INTERVAL, SZ));
    profile_free(p);
    return check_exit();
}
