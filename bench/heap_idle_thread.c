/* Preloaded by the heap benchmark as a reference: one idle thread and nothing else.
 * A process with a second thread loses glibc malloc's single-thread fast path (its
 * arena locks are taken from then on); a running profile has such a thread (the
 * runtime's exit thread), so this row tells that cost from the profiler's own. */
#include <pthread.h>
#include <unistd.h>

static void *idle(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

__attribute__((constructor)) static void idle_start(void)
{
    pthread_t t;
    if (!pthread_create(&t, NULL, idle, NULL)) pthread_detach(t);
}
