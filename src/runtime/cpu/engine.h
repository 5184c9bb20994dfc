/* engine — the one small interface every CPU sampling engine implements, one file
 * each (engine_signal.c, engine_perf.c), as async-profiler's engines are. The rest of
 * the runtime (registry, sink, waiting-thread stacks, raw writer, process life) does
 * not know which engine runs; KESTREL_PROFILE_ENGINE=auto|perf|signal picks one.
 *
 * Who calls what, on which thread:
 *
 *   check()          any normal thread, before start(); no side effects. 0 when the
 *                    engine can run here, else -errno and *why (a static string).
 *   start(cfg)       the thread starting the session (the process's constructor, or
 *                    kestrel_profile_start's caller), once per session, before any
 *                    thread is registered. Installs what the engine needs (signal
 *                    handler, perf events) and starts the engine's own thread. That
 *                    thread blocks every signal and is not registered.
 *   thread_start(s)  the thread that registers itself, right after its slot became
 *                    ACTIVE, without the registry lock. E.g. open its perf event. A
 *                    negative return leaves the thread registered but unsampled.
 *   thread_stop(s)   the thread unregistering itself (or exiting), before its slot
 *                    becomes DRAINING; signals blocked, registry not locked. It must
 *                    not wait for the engine thread.
 *   thread_begin(s)  optional; a thread the runtime's pthread_create trampoline started,
 *                    right after its thread_start(s), before the program's start
 *                    routine runs (not for the threads that existed at the session's
 *                    start, nor for those registering through the API).
 *   thread_creating()  optional; the thread calling pthread_create, just before.
 *                    Returns a token (0: nothing to pass) that the new thread hands
 *                    to thread_created(token) before it registers: e.g. whether the
 *                    kernel's events follow the creator into the new thread.
 *   stop()           the thread ending the session (exit, exec, a fatal signal's
 *                    flushing thread, kestrel_profile_stop); never in a signal
 *                    handler, never on the engine thread. It tells the engine thread
 *                    to finish and joins it. The engine thread's last acts: drain
 *                    everything still buffered into the sink, then call
 *                    cfg->on_stopped() (which writes the raw file) — so the file is
 *                    written by the engine's own thread — and return.
 *   after_fork_child()  in a fork child, before fork returns there: only the calling
 *                    thread exists and the engine thread is gone. Forget per-thread
 *                    state (close fds, drop rings) without waiting on any lock.
 *
 * The engine thread's duties each tick, in this order:
 *   registry_lock(); for each slot: drain its buffered samples into the sink
 *   (sink_add, sink_drop for losses); a DRAINING slot, once drained, goes back
 *   with registry_release(); ACTIVE threads whose CPU clock did not advance are
 *   waiting: waitstack_sample() gives them a waiting sample without waking them
 *   (never signal a thread blocked in a system call). registry_unlock().
 *   Call images_refresh() now and then so that loaded images are known.
 *   Only this thread calls sink_*; it may allocate (mmap) but never while it has a
 *   thread stopped.
 *
 * What may run in a signal handler: only code on the handler's path — registry_self(),
 * unwind_fp(), the engine's own SPSC ring push, clock_gettime, and atomics. No lock,
 * no allocation, no sink_*, errno saved and restored. The perf engine needs none. */
#ifndef KESTREL_ENGINE_H
#define KESTREL_ENGINE_H
#include "runtime/cpu/registry.h"

#include <stddef.h>
#include <stdint.h>

struct engine_config {
    unsigned hz;              /* sampling rate, 10..10000 */
    int signo;                /* the signal an engine that signals threads uses */
    uint64_t start_mono_ns;   /* session start, CLOCK_MONOTONIC */
    void (*on_stopped)(void); /* engine thread, after its final drain: writes the file */
    /* Optional; the engine thread, after each drain (at least every 20 ms): what the
     * session does as it goes (it writes a chunk of the file about once a second). */
    void (*on_period)(uint64_t now_mono_ns);
};

/* A count an engine reports in the raw file's `engine_stats` object. */
struct engine_stat {
    const char *name; /* a static string, the JSON key */
    uint64_t value;
};

struct engine {
    const char *name; /* the raw file's `engine`: "signal" or "perf" */
    int uses_signal;  /* interrupts threads with cfg->signo (blocking calls shield it) */
    int (*check)(const char **why);
    int (*start)(const struct engine_config *cfg);
    int (*thread_start)(struct reg_slot *s);
    void (*thread_stop)(struct reg_slot *s);
    void (*thread_begin)(struct reg_slot *s);
    uint32_t (*thread_creating)(void);
    void (*thread_created)(uint32_t token);
    void (*stop)(void);
    void (*after_fork_child)(void);
    /* Optional: the rate it samples at, when not cfg->hz (the signal engine's timers
     * fire at most once per kernel tick). */
    unsigned (*rate)(void);
    /* Optional: up to `max` counts for the raw file, on the engine thread at on_stopped
     * time. Returns how many it filled. */
    size_t (*stats)(struct engine_stat *out, size_t max);
    /* Optional: up to `max` sentences for the raw file's `engine_notes` (what the
     * profile lacks and why), in buffers of the engine's; same thread and time. */
    size_t (*notes)(const char **out, size_t max);
    /* Optional: whether the engine, as this kernel allows it, samples the time threads
     * spend in system calls (1), or user mode only (0). Called before start(). */
    int (*kernel_time)(void);
};

extern const struct engine engine_signal;
extern const struct engine engine_perf; /* a strong reference: libkestrel.a links it */

/* Picks the engine for `want` ("auto", "perf", "signal"; NULL = auto). Returns NULL
 * when the wanted engine cannot run; *why says why (also when auto fell back because
 * perf was refused). With auto, *choice (when not NULL) gets a sentence saying which
 * engine it chose and why; NULL otherwise. */
const struct engine *engine_choose(const char *want, const char **why, const char **choice);
#endif
