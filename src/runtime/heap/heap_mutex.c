/* The contended half of the heap profiler's mutex (heap.h): sleep on the futex word
 * until the holder's unlock wakes one waiter. A thread that finds the lock taken marks
 * it 2, "waiters", so the unlock knows to wake; the woken one takes it as 2 again, as
 * it cannot know whether others still sleep (a spurious wake at worst).
 *
 * May run inside malloc; never in a signal handler. */
#include "runtime/heap/heap.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

void heap_mutex_wait(heap_mutex_t *m)
{
    while (__atomic_exchange_n(&m->word, 2, __ATOMIC_ACQUIRE) != 0)
        syscall(SYS_futex, &m->word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

void heap_mutex_wake(heap_mutex_t *m)
{
    syscall(SYS_futex, &m->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
