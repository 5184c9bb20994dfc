/* The CPU session's on/off state (profile_state.h).
 * Signal handlers: profile_active(), profile_signal(). Inside malloc: nothing. */
#include "runtime/cpu/profile_state.h"
#include "runtime/cpu/sigown.h"

#include <stdatomic.h>
#include <stddef.h>

static _Atomic int ps_on;                 /* a session samples */
static _Atomic int ps_signo;              /* its engine's signal, 0 for none */
static const struct engine *ps_engine;    /* its engine, set before ps_on */

int profile_active(void)
{
    return atomic_load_explicit(&ps_on, memory_order_acquire);
}

int profile_signal(void)
{
    /* The signal engine's signal may move during the session (sigown.h). */
    return atomic_load_explicit(&ps_signo, memory_order_relaxed) ? sigown_current() : 0;
}

const struct engine *profile_engine(void)
{
    return ps_engine;
}

void profile_state_started(const struct engine *e, int signo)
{
    ps_engine = e;
    atomic_store(&ps_signo, e->uses_signal ? signo : 0);
    atomic_store_explicit(&ps_on, 1, memory_order_release);
}

void profile_state_stopping(void)
{
    atomic_store_explicit(&ps_on, 0, memory_order_release);
}

void profile_state_stopped(void)
{
    atomic_store(&ps_signo, 0);
}
