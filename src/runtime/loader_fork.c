/* loader_fork.c — mutexes of the runtime's loader walks held across fork
 * (loader_fork.h).
 *
 * Signal handlers: nothing here. Inside malloc: nothing. The prepare, parent and child
 * handlers run inside fork(), on the forking thread. */
#include "runtime/loader_fork.h"

#include <time.h>

#define LF_MAX 4
#define LF_WAIT_S 2

static pthread_mutex_t *lf_mu[LF_MAX];
static int lf_held[LF_MAX];
static int lf_n;

static void lf_prepare(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += LF_WAIT_S;
    for (int i = 0; i < lf_n; i++)
        lf_held[i] = pthread_mutex_clocklock(lf_mu[i], CLOCK_MONOTONIC, &t) == 0;
}

static void lf_parent(void)
{
    for (int i = lf_n - 1; i >= 0; i--)
        if (lf_held[i]) pthread_mutex_unlock(lf_mu[i]);
}

/* Only the forking thread exists: a mutex it holds, or one a thread of the parent
 * held past the bound, is made anew. */
static void lf_child(void)
{
    for (int i = 0; i < lf_n; i++) {
        pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
        *lf_mu[i] = fresh;
    }
}

void loader_fork_guard(pthread_mutex_t *mu)
{
    if (lf_n == LF_MAX) return;
    lf_mu[lf_n++] = mu;
    if (lf_n == 1) pthread_atfork(lf_prepare, lf_parent, lf_child);
}
