/* stub — libkestrel where kestrel has no profiler (Windows, Wasm): every public
 * function of kestrel.h, inactive. Each returns the value kestrel.h gives it as
 * "Inactive:", which is what the Linux runtime returns when nothing is being
 * profiled, except that the starts say -ENOTSUP: a caller that asked for a profile
 * learns there will be none. Nothing here reads the environment or prints, so
 * KESTREL_PROFILE and KESTREL_HEAP change nothing in a program built for these
 * platforms. No state: every function is safe anywhere, signal handlers included. */
#include <errno.h>

#include "kestrel.h"

/* ============================== CPU profiler ============================== */

KESTREL_API int kestrel_thread_register(int64_t fiber_id, const char *label)
{
    (void)fiber_id;
    (void)label;
    return 0;
}

KESTREL_API int kestrel_thread_unregister(void)
{
    return 0;
}

KESTREL_API int kestrel_fiber_register(const void *stack, size_t size, int64_t fiber_id,
                                       const char *label)
{
    (void)stack;
    (void)size;
    (void)fiber_id;
    (void)label;
    return 0;
}

KESTREL_API int kestrel_fiber_unregister(const void *stack)
{
    (void)stack;
    return 0;
}

KESTREL_API int kestrel_profile_start(unsigned hz)
{
    (void)hz;
    return -ENOTSUP;
}

KESTREL_API int kestrel_profile_stop(const char *path)
{
    return !path || !*path ? -EINVAL : -ESRCH;
}

KESTREL_API int kestrel_profile_is_running(void)
{
    return 0;
}

/* ============================== heap profiler ============================== */

KESTREL_API int kestrel_heap_start(size_t interval)
{
    (void)interval;
    return -ENOTSUP;
}

KESTREL_API int kestrel_heap_profile(void **data, size_t *size)
{
    return !data || !size ? -EINVAL : -ESRCH;
}

KESTREL_API int kestrel_heap_stop(void **data, size_t *size)
{
    return data && !size ? -EINVAL : -ESRCH;
}

KESTREL_API int kestrel_heap_is_running(void)
{
    return 0;
}
