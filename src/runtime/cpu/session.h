/* profile — the CPU profiling session: activation from the environment
 * (KESTREL_PROFILE, KESTREL_PROFILE_HZ, KESTREL_PROFILE_ENGINE, KESTREL_PROFILE_SIGNAL)
 * or from kestrel_profile_start(), the engine it runs, the file it writes and when
 * (process life), and a fresh session in a fork child.
 *
 * Signal handlers: profile_active() and profile_signal() (atomic loads).
 * Inside malloc: nothing. */
#ifndef KESTREL_PROFILE_H
#define KESTREL_PROFILE_H
#include "runtime/cpu/engine.h"

/* A session is sampling: pthread_create wraps new threads, blocking calls mask the
 * engine's signal. */
int profile_active(void);
/* The signal the running engine sends to threads, 0 when it sends none. */
int profile_signal(void);
/* The running session's engine (valid while profile_active()). */
const struct engine *profile_engine(void);
#endif
