/* Sessions: the API's states and errors; a profile started after a thread already
 * allocated 32 MiB has only what came after; a second profile at 64 KiB after one at
 * 256 MiB sees what a thread allocates in it; a second session ignores the frees of
 * what the first one sampled; 200 sessions leave RSS where it was. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <unistd.h>

#include "heap/heap_test.h"

#define SZ 4096

NOINLINE void *site_before(void)
{
    return SITE(malloc(SZ));
}
NOINLINE void *site_after(void)
{
    return SITE(malloc(SZ));
}
NOINLINE void *site_first(void)
{
    return SITE(malloc(SZ));
}
NOINLINE void *site_second(void)
{
    return SITE(malloc(SZ));
}
NOINLINE void *site_old(void)
{
    return SITE(malloc(SZ));
}
NOINLINE void *site_new(void)
{
    return SITE(malloc(SZ));
}
NOINLINE void *site_loop(void)
{
    return SITE(malloc(SZ));
}

/* A thread that allocates in two phases, each when main says so. */
struct phases {
    sem_t go[2], done[2];
    void *(*site[2])(void);
    int n[2];
    void **keep;
};

static void *phased(void *arg)
{
    struct phases *ph = arg;
    pthread_setname_np(pthread_self(), "phased");
    int k = 0;
    for (int ph_i = 0; ph_i < 2; ph_i++) {
        sem_wait(&ph->go[ph_i]);
        for (int i = 0; i < ph->n[ph_i]; i++)
            ph->keep[k++] = ph->site[ph_i]();
        sem_post(&ph->done[ph_i]);
    }
    return NULL;
}

static void run_phases(struct phases *ph, size_t interval0, size_t interval1, int stop_between)
{
    pthread_t t;
    for (int i = 0; i < 2; i++) {
        sem_init(&ph->go[i], 0, 0);
        sem_init(&ph->done[i], 0, 0);
    }
    ph->keep = calloc((size_t)(ph->n[0] + ph->n[1]), sizeof(void *));
    pthread_create(&t, NULL, phased, ph);
    if (interval0) CHECK(kestrel_heap_start(interval0) == 0);
    sem_post(&ph->go[0]);
    sem_wait(&ph->done[0]);
    if (stop_between) CHECK(kestrel_heap_stop(NULL, NULL) == 0);
    CHECK(kestrel_heap_start(interval1) == 0);
    sem_post(&ph->go[1]);
    sem_wait(&ph->done[1]);
    pthread_join(t, NULL);
}

static void free_phases(struct phases *ph)
{
    for (int i = 0; i < ph->n[0] + ph->n[1]; i++)
        free(ph->keep[i]);
    free(ph->keep);
}

static void test_api(void)
{
    void *d;
    size_t n;
    CHECK(!kestrel_heap_is_running());
    CHECK(kestrel_heap_profile(&d, &n) == -ESRCH);
    CHECK(kestrel_heap_stop(&d, &n) == -ESRCH);
    CHECK(kestrel_heap_start(65535) == -EINVAL);
    CHECK(kestrel_heap_start((size_t)1 << 33) == -EINVAL);
    CHECK(!kestrel_heap_is_running());
    CHECK(kestrel_heap_start(0) == 0);
    CHECK(kestrel_heap_is_running());
    CHECK(kestrel_heap_start(65536) == -EBUSY);
    CHECK(kestrel_heap_profile(NULL, &n) == -EINVAL);
    CHECK(kestrel_heap_profile(&d, &n) == 0 && n > 0);
    free(d);
    struct profile *p = heap_snapshot(1);
    CHECK(p && p->period == KESTREL_HEAP_INTERVAL_DEFAULT);
    profile_free(p);
    CHECK(!kestrel_heap_is_running());
}

/* 32 MiB before the start, 16 MiB after: only the 16 MiB, none of it before. */
static void test_late_start(void)
{
    struct phases ph = {.site = {site_before, site_after}, .n = {8192, 4096}};
    run_phases(&ph, 0, 65536, 0);
    struct profile *p = heap_snapshot(1);
    CHECK(p != NULL);
    if (p) {
        double after = 4096.0 * SZ;
        CHECK(heap_sum(p, ALLOC_SPACE, "site_before", NULL) == 0);
        CHECK_NEAR(heap_sum(p, INUSE_SPACE, "site_after", "phased"), after,
                   heap_tolerance(after, 65536, SZ));
        CHECK_NEAR(heap_sum(p, ALLOC_SPACE, NULL, "phased"), after,
                   heap_tolerance(after, 65536, SZ));
        profile_free(p);
    }
    free_phases(&ph);
}

/* A thread that drew a distance of up to 4 GiB in a profile at 256 MiB starts over
 * with the next profile at 64 KiB. */
static void test_second_profile(void)
{
    struct phases ph = {.site = {site_first, site_second}, .n = {2048, 8192}};
    run_phases(&ph, (size_t)256 << 20, 65536, 1);
    struct profile *p = heap_snapshot(1);
    CHECK(p != NULL);
    if (p) {
        double second = 8192.0 * SZ;
        CHECK(heap_sum(p, ALLOC_SPACE, "site_first", NULL) == 0);
        CHECK_NEAR(heap_sum(p, INUSE_SPACE, "site_second", "phased"), second,
                   heap_tolerance(second, 65536, SZ));
        profile_free(p);
    }
    free_phases(&ph);
}

/* Blocks sampled by one session and freed in the next leave the next one's in-use
 * alone: it has what it allocated itself, and nothing negative. */
static void test_frees_of_first(void)
{
    enum { N = 4096 };
    static void *old[N], *nw[N / 2];
    CHECK(kestrel_heap_start(65536) == 0);
    for (int i = 0; i < N; i++)
        old[i] = site_old();
    CHECK(kestrel_heap_stop(NULL, NULL) == 0);
    CHECK(kestrel_heap_start(65536) == 0);
    for (int i = 0; i < N; i++)
        free(old[i]);
    for (int i = 0; i < N / 2; i++)
        nw[i] = site_new();
    struct profile *p = heap_snapshot(1);
    CHECK(p != NULL);
    if (p) {
        double want = N / 2 * (double)SZ;
        CHECK(heap_sum(p, ALLOC_SPACE, "site_old", NULL) == 0);
        CHECK_NEAR(heap_sum(p, INUSE_SPACE, "site_new", NULL), want,
                   heap_tolerance(want, 65536, SZ));
        for (size_t i = 0; i < p->n_samples; i++) {
            CHECK(p->values[i * 4 + INUSE_SPACE] >= 0);
            CHECK(p->values[i * 4 + INUSE_OBJECTS] >= 0);
        }
        profile_free(p);
    }
    for (int i = 0; i < N / 2; i++)
        free(nw[i]);
}

static double rss_mib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        fclose(f);
    }
    return (double)resident * (double)sysconf(_SC_PAGESIZE) / MiB;
}

/* Each session samples, is read and stopped: its tables are gone with it. */
static void test_many_sessions(void)
{
    enum { N = 1024 };
    static void *b[N];
    double base = 0;
    for (int s = 0; s < 200; s++) {
        if (s == 10) base = rss_mib();
        CHECK(kestrel_heap_start(65536) == 0);
        for (int i = 0; i < N; i++)
            b[i] = site_loop();
        void *d;
        size_t n;
        CHECK(kestrel_heap_profile(&d, &n) == 0);
        free(d);
        CHECK(kestrel_heap_stop(&d, &n) == 0);
        free(d);
        for (int i = 0; i < N; i++)
            free(b[i]);
    }
    double end = rss_mib();
    fprintf(stderr, "RSS after 10 sessions %.1f MiB, after 200 %.1f MiB\n", base, end);
    CHECKF(end - base < 2.0, "RSS grew from %.1f to %.1f MiB over 190 sessions", base, end);
}

int main(void)
{
    test_api();
    test_late_start();
    test_second_profile();
    test_frees_of_first();
    test_many_sessions();
    return check_exit();
}
