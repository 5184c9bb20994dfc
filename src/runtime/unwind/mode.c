/* mode.c — the unwind mode of this process (KESTREL_PROFILE_UNWIND=fp|cfi|auto), read
 * once when the library loads, for the CPU engines, the heap profiler and the waiting
 * stacks alike.
 *
 * Signal handlers: uw_mode_current() (one relaxed load). Inside malloc: the same. */
#include "runtime/unwind/step.h"
#include "runtime/rtsay.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static _Atomic int uw_mode_v = UW_MODE_AUTO;

int uw_mode_current(void)
{
    return atomic_load_explicit(&uw_mode_v, memory_order_relaxed);
}

void uw_mode_set(int mode)
{
    atomic_store_explicit(&uw_mode_v, mode, memory_order_relaxed);
}

/* Before the sessions' constructors, which start engines that read the mode. */
__attribute__((constructor(101))) static void uw_mode_init(void)
{
    const char *v = getenv("KESTREL_PROFILE_UNWIND");
    if (!v || !*v) return;
    int m = uw_mode_parse(v);
    if (m < 0) {
        rtsay("kestrel: KESTREL_PROFILE_UNWIND=%s: not fp, cfi or auto; using auto", v);
        return;
    }
    uw_mode_set(m);
}
