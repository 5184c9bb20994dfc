/* The registry of every thread's countdown (struct heap_tls), so that a session
 * start reaches threads that are idle in the fast path: it stores 0 into their
 * countdown and each takes its slow path at its next allocation, where it sees the
 * new generation and starts over. A thread registers at its first allocation and
 * leaves through a pthread key destructor when it exits.
 *
 * Known limit: a start's store can race with the owner's own store of its countdown
 * (a few instructions wide); the owner then notices the session at its next natural
 * slow path instead. Every function here may run inside malloc; none in a signal
 * handler. */
#include "runtime/heap/heap.h"

#include <string.h>

#define HEAP_THREADS_MAX 4096

static struct heap_tls *heap_threads[HEAP_THREADS_MAX]; /* NULL = free slot */
static heap_mutex_t heap_threads_lock = HEAP_MUTEX_INIT;
static pthread_key_t heap_thread_key;
static int heap_thread_key_state; /* 0 not made, 1 made, -1 failed */

static void heap_thread_exit(void *arg)
{
    struct heap_tls *t = arg;
    heap_mutex_lock(&heap_threads_lock);
    if (t->slot >= 0) heap_threads[t->slot] = NULL;
    t->slot = -2;
    heap_mutex_unlock(&heap_threads_lock);
    t->exited = 1;
    __atomic_store_n(&t->left, HEAP_LEFT_IDLE, __ATOMIC_RELAXED);
}

void heap_thread_register(struct heap_tls *t)
{
    int slot = -2;
    heap_mutex_lock(&heap_threads_lock);
    if (heap_thread_key_state == 0)
        heap_thread_key_state = pthread_key_create(&heap_thread_key, heap_thread_exit) ? -1 : 1;
    for (int i = 0; i < HEAP_THREADS_MAX && heap_thread_key_state == 1; i++) {
        if (!heap_threads[i]) {
            heap_threads[i] = t;
            slot = i;
            break;
        }
    }
    t->slot = slot; /* -2: full, never retried */
    heap_mutex_unlock(&heap_threads_lock);
    if (slot >= 0) pthread_setspecific(heap_thread_key, t);
}

void heap_thread_reset_all(void)
{
    heap_mutex_lock(&heap_threads_lock);
    for (int i = 0; i < HEAP_THREADS_MAX; i++)
        if (heap_threads[i]) __atomic_store_n(&heap_threads[i]->left, 0, __ATOMIC_RELAXED);
    heap_mutex_unlock(&heap_threads_lock);
}

/* fork: the registry and the region must be consistent in the child whatever the
 * other threads were doing, so both locks are held across it. */
static void heap_fork_prepare(void)
{
    heap_mutex_lock(&heap_threads_lock);
    heap_region_fork(0);
}

static void heap_fork_parent(void)
{
    heap_region_fork(1);
    heap_mutex_unlock(&heap_threads_lock);
}

/* In the child only the calling thread exists. Its locks are made anew rather than
 * released, and so are their two holds (a signal deferred in the parent is the
 * parent's: lifecycle forgets it). */
static void heap_fork_child(void)
{
    heap_region_fork(2);
    heap_side_after_fork_child();
    heap_threads_lock = (heap_mutex_t)HEAP_MUTEX_INIT;
    lifecycle_forget_holds(2);
    heap_tls.locks -= 2;
    memset(heap_threads, 0, sizeof heap_threads);
    if (heap_tls.slot >= 0) heap_threads[heap_tls.slot] = &heap_tls;
    heap_fork_child_done();
}

__attribute__((constructor)) static void heap_thread_init(void)
{
    pthread_atfork(heap_fork_prepare, heap_fork_parent, heap_fork_child);
}
