/* profile_state — whether a CPU session samples, with which engine and which signal:
 * the part of the session (session.c, which alone changes it) that the thread and
 * blocking-call wrappers read (threads.c, blocking.c), so that they need nothing else
 * of the session.
 *
 * Signal handlers: profile_active() and profile_signal() (atomic loads).
 * Inside malloc: nothing. */
#ifndef KESTREL_PROFILE_STATE_H
#define KESTREL_PROFILE_STATE_H
#include "runtime/cpu/engine.h"

/* A session is sampling: pthread_create wraps new threads, blocking calls mask the
 * engine's signal. */
int profile_active(void);
/* The signal the running engine sends to threads, 0 when it sends none. */
int profile_signal(void);
/* The running session's engine (valid while profile_active()). */
const struct engine *profile_engine(void);
/* The running session's rate in Hz, 0 when none runs (session.c). */
unsigned profile_hz(void);

/* session.c: the engine e started (its signal is signo when it sends one) ... */
void profile_state_started(const struct engine *e, int signo);
/* ... is being stopped: no new thread is wrapped, though its signal may still come ... */
void profile_state_stopping(void);
/* ... and has stopped: no signal of its can arrive any more. */
void profile_state_stopped(void);
#endif
