/* session.c — the CPU profiling session and the public API of
 * include/kestrel.h for it.
 *
 * Signal handlers: nothing here (profile_state.c has what they read). Inside malloc:
 * nothing.
 *
 * A session runs from prof_start() to prof_stop(), both under prof_mu. The engine's
 * thread writes the file at the end of stop (prof_on_stopped). An environment session
 * (KESTREL_PROFILE) starts in this library's constructor and is written when the
 * process image ends: at exit to the path (with %p = pid), before exec to
 * "<path>.exec<N>" (N = the image's exec generation, 0 for the first), and a fork child
 * starts a session of its own. When the path has no %p, every process but the one
 * that started the tree's profile writes "<path>.<pid>" (lifecycle_owner), so that no
 * two processes write one file. A session started with kestrel_profile_start() is
 * written by kestrel_profile_stop() and discarded if the process ends first. */
#include "runtime/rtown.h"
#include "runtime/cpu/profile_state.h"
#include "runtime/images.h"
#include "runtime/maps.h"
#include "kestrel.h"
#include "runtime/lifecycle.h"
#include "runtime/cpu/rawjson.h"
#include "runtime/cpu/registry.h"
#include "runtime/cpu/sink.h"
#include "runtime/fibers.h"
#include "runtime/interpose.h"
#include "runtime/cpu/threads.h"
#include "runtime/rtclock.h"
#include "runtime/unwind/unwind.h"
#include "runtime/rtsay.h"
#include "runtime/cpu/sigown.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PROF_HZ_DEFAULT 997
#define PROF_HZ_MIN 10
#define PROF_HZ_MAX 10000
#define PROF_PATH_MAX 4096

static pthread_mutex_t prof_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int from_env; /* started by KESTREL_PROFILE */
    unsigned hz, requested_hz;
    const char *fallback; /* why auto did not pick perf */
    const char *choice;   /* what auto chose and why (engine_choice), NULL when not auto */
    uint64_t start_mono, start_real;
    int ppid;               /* the parent when the session started */
    const char *write_path; /* where on_stopped writes; NULL discards */
    int write_result;       /* rawjson_write's result */
    size_t rows_max;        /* the sink's row limit for this session */
    struct rawjson_stream stream; /* an environment session's file, written as it goes */
    uint64_t chunk_at;      /* CLOCK_MONOTONIC time of the next chunk */
    int chunk_said;         /* a failed chunk was said */
} prof;

/* A streamed file gets a chunk about this often (docs/raw-format.md, "Streamed"). */
#define PROF_CHUNK_NS 1000000000ull

/* The environment's settings, read once at start (getenv is not safe later on). */
static struct {
    int set;
    char tmpl[PROF_PATH_MAX];
    unsigned hz, requested_hz;
    int signo;
    char engine[16];
    int serve_only;  /* KESTREL_HTTP without KESTREL_PROFILE: samples only for windows */
    size_t rows_max; /* KESTREL_TEST_SAMPLE_ROWS, for tests of a long run: rows kept */
    char invoked[256]; /* argv[0] before main: what the image was invoked as */
} prof_env;

static int prof_client_registered;
static int (*prof_real_main)(int, char **, char **); /* the program's main, under prof_main */

/* The rate sampled at: the engine's own when it cannot reach the one asked for. */
unsigned profile_hz(void)
{
    if (!profile_active()) return 0;
    const struct engine *e = profile_engine();
    return e && e->rate ? e->rate() : prof.hz;
}

/* ============================== the session ============================== */

/* The file's description of the session; the engine's counts and notes (which an
 * engine gives at on_stopped time only) when `stats` is set. */
static void prof_meta(struct rawjson_meta *m, struct engine_stat *stats, const char **notes)
{
    const struct engine *e = profile_engine();
    size_t n_stats = 0;
    if (stats) { /* stats holds 32 */
        n_stats = e->stats ? e->stats(stats, 31) : 0;
        /* kestrel's own work on the program's threads, left out of its samples */
        stats[n_stats++] = (struct engine_stat){"runtime_samples", rtown_samples()};
    }
    *m = (struct rawjson_meta){
        .engine = e->name,
        .engine_fallback = prof.fallback,
        .engine_choice = prof.choice,
        .engine_stats = stats,
        .n_engine_stats = n_stats,
        .engine_notes = notes,
        .n_engine_notes = notes && e->notes ? e->notes(notes, 16) : 0,
        .rate_hz = e->rate ? e->rate() : prof.hz,
        .requested_hz = prof.requested_hz,
        .pid = lifecycle_pid(),
        .ppid = prof.ppid,
        .exec_gen = lifecycle_image_generation(),
        .invoked = prof_env.invoked,
        .start_unix_ns = prof.start_real,
        .end_unix_ns = rt_clock_ns(CLOCK_REALTIME),
    };
}

/* Engine thread, after each drain: a chunk of the streamed file about once a second.
 * One that cannot be written (no descriptor free, a full disk) is tried again at the
 * next, with everything since the last one written. */
static void prof_on_period(uint64_t now)
{
    if (!prof.stream.on || now < prof.chunk_at) return;
    prof.chunk_at = now + PROF_CHUNK_NS;
    struct rawjson_meta m;
    prof_meta(&m, NULL, NULL);
    int r = rawjson_stream_chunk(&prof.stream, &m, 0);
    if (r && !prof.chunk_said) {
        prof.chunk_said = 1;
        rtsay("kestrel: CPU profile: cannot write %s as the program runs: %s (tried again "
              "every second)", prof.stream.path, rtsay_errno(r));
    }
}

/* The session's end into `path`: the closing chunk of the streamed file (renamed to
 * path when it is another name, as before an exec), else the whole file. */
static int prof_write(const char *path, const struct rawjson_meta *m)
{
    if (!prof.stream.on) return rawjson_write(path, m);
    int r = rawjson_stream_chunk(&prof.stream, m, 1);
    if (r && !prof.stream.created) return rawjson_write(path, m); /* e.g. a descriptor at last */
    if (!r && strcmp(path, prof.stream.path) && rename(prof.stream.path, path) != 0) r = -errno;
    return r;
}

/* Engine thread, after its final drain. */
static void prof_on_stopped(void)
{
    registry_lock();
    for (size_t i = registry_next_used(0); i < REGISTRY_SLOTS;
         i = registry_next_used(i + 1)) { /* names of threads still alive */
        struct reg_slot *s = registry_slot(i);
        struct reg_thread *t = s ? registry_thread(s->thread_index) : NULL;
        if (t && atomic_load(&s->state) == REG_ACTIVE) registry_read_name(t);
    }
    registry_unlock();
    if (!prof.write_path) {
        prof.write_result = 0;
        return;
    }
    struct engine_stat stats[32];
    const char *notes[16];
    struct rawjson_meta m;
    prof_meta(&m, stats, notes);
    prof.write_result = prof_write(prof.write_path, &m);
}

/* Registers the calling thread as the session's first. */
static void prof_register_caller(uint64_t lo, uint64_t hi)
{
    int is_main = syscall(SYS_gettid) == lifecycle_pid();
    if (!hi && threads_bounds_from_maps(&lo, &hi) != 0) return;
    threads_register(is_main ? 0 : (int64_t)syscall(SYS_gettid), is_main ? "main" : "thread", lo,
                     hi);
    /* main() runs on prof_main's frame, when the program started through it. */
    struct reg_slot *s = registry_self();
    if (s && is_main && prof_real_main) s->rooted = 1;
}

static int prof_env_path(char *out, size_t size, const char *suffix, int not_owner);

/* With prof_mu held. */
static int prof_start(unsigned hz, unsigned requested_hz, const char *engine_want, int signo,
                      int from_env, uint64_t lo, uint64_t hi)
{
    const char *why = NULL, *choice = NULL;
    const struct engine *e = engine_choose(engine_want, &why, &choice);
    if (!e) {
        if (from_env)
            rtsay("kestrel: KESTREL_PROFILE_ENGINE=%s: %s; CPU profiling is off",
                    engine_want ? engine_want : "auto", why ? why : "unavailable");
        return -ENOTSUP;
    }
    /* auto fell back: say why once per process tree (a fork child starts over silently). */
    static int fallback_said;
    if (from_env && e == &engine_signal && choice && !fallback_said) {
        fallback_said = 1;
        rtsay("kestrel: %s", choice);
    }
    int r = threads_init();
    if (r == 0) r = registry_open();
    prof.start_mono = rt_clock_ns(CLOCK_MONOTONIC);
    prof.start_real = rt_clock_ns(CLOCK_REALTIME);
    prof.rows_max = !from_env ? SINK_SAMPLES_MAX : prof_env.serve_only ? 0 : prof_env.rows_max;
    if (r == 0) r = sink_open(prof.start_mono, prof.rows_max);
    fiber_session_reset();
    prof.ppid = (int)getppid();
    if (r != 0) return r;
    maps_refresh_all();
    prof.from_env = from_env;
    prof.hz = hz;
    prof.requested_hz = requested_hz;
    prof.fallback = why;
    prof.choice = choice;
    prof.write_path = NULL;
    prof.stream.on = 0;
    prof.chunk_said = 0;
    prof.chunk_at = prof.start_mono + PROF_CHUNK_NS;
    char path[PROF_PATH_MAX + 64];
    if (from_env && !prof_env.serve_only &&
        prof_env_path(path, sizeof(path), NULL, !lifecycle_owner()) == 0)
        rawjson_stream_begin(&prof.stream, path); /* else written whole at the end */
    struct engine_config cfg = {
        .hz = hz,
        .signo = signo,
        .start_mono_ns = prof.start_mono,
        .on_stopped = prof_on_stopped,
        .on_period = prof_on_period,
    };
    rtown_reset();
    r = e->start(&cfg);
    if (r != 0) {
        sink_close();
        registry_close();
        return r;
    }
    profile_state_started(e, signo);
    prof_register_caller(lo, hi);
    return 0;
}

/* With prof_mu held. Stops the engine, which writes `path` (NULL: nothing). */
static int prof_stop(const char *path)
{
    if (!profile_active()) return -ESRCH;
    prof.write_path = path;
    profile_state_stopping();
    profile_engine()->stop();
    profile_state_stopped();
    registry_close();
    sink_close();
    return prof.write_result;
}

/* ========================= the environment session ========================= */

/* The environment's path for this process image; `suffix` is appended. */
static int prof_env_path(char *out, size_t size, const char *suffix, int not_owner)
{
    size_t o = 0;
    int had_pid = 0;
    for (const char *p = prof_env.tmpl; *p && o + 24 < size; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            o += (size_t)snprintf(out + o, size - o, "%d", lifecycle_pid());
            p++;
            had_pid = 1;
        } else {
            out[o++] = *p;
        }
    }
    out[o] = 0;
    if (not_owner && !had_pid) snprintf(out + o, size - o, ".%d", lifecycle_pid());
    o = strlen(out);
    if (suffix && (size_t)snprintf(out + o, size - o, "%s", suffix) >= size - o)
        return -ENAMETOOLONG;
    return 0;
}


static int prof_stopped_for_exec; /* the environment session ended for an exec */

static void prof_flush(enum lifecycle_event ev)
{
    pthread_mutex_lock(&prof_mu);
    if (profile_active()) {
        prof_stopped_for_exec = ev == LIFECYCLE_EXEC && prof.from_env;
        char path[PROF_PATH_MAX + 64], suffix[32] = "";
        if (ev == LIFECYCLE_EXEC)
            snprintf(suffix, sizeof(suffix), ".exec%u", lifecycle_image_generation());
        if (prof.from_env && !prof_env.serve_only &&
            prof_env_path(path, sizeof(path), suffix, !lifecycle_owner()) == 0) {
            int r = prof_stop(path);
            if (r) rtsay("kestrel: CPU profile: cannot write %s: %s", path, rtsay_errno(r));
        } else
            prof_stop(NULL); /* an API session nobody stopped, or no usable path */
    }
    pthread_mutex_unlock(&prof_mu);
}

static void prof_after_fork_child(void)
{
    int restart = profile_active() && prof.from_env && !prof_env.serve_only; /* no server */
    uint64_t lo = 0, hi = 0;
    struct reg_slot *self = registry_self();
    if (self) { /* the forking thread keeps its stack */
        lo = self->stack_lo;
        hi = self->stack_hi;
    }
    const struct engine *e = profile_engine();
    if (e && e->after_fork_child) e->after_fork_child();
    registry_forget_after_fork();
    fiber_after_fork_child();
    sink_forget_after_fork();
    maps_after_fork_child_all();
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    prof_mu = fresh;
    profile_state_stopping();
    profile_state_stopped();
    if (restart) {
        prof_start(prof.hz, prof.requested_hz, prof_env.engine, prof_env.signo, 1, lo, hi);
    }
}

/* An exec that was not foreseen to fail failed: the file of the time before it is
 * written (<path>.exec<N>), and a session starts again for the rest of this image,
 * written at its end as usual. Only the thread that called exec is registered in it;
 * threads that already run are not sampled from then on (the engines register a
 * thread on that thread itself). */
static void prof_exec_failed(void)
{
    pthread_mutex_lock(&prof_mu);
    if (prof_stopped_for_exec && !profile_active())
        prof_start(prof.hz, prof.requested_hz, prof_env.engine, prof_env.signo, 1, 0, 0);
    prof_stopped_for_exec = 0;
    pthread_mutex_unlock(&prof_mu);
}

/* The exec about to happen starts a program the runtime cannot enter (a static or
 * set-user-ID one): this process's pid will leave no profile of it, so a note takes
 * its place, <path>.noprofile, which `kestrel record` lists in its report: the
 * program's name, a tab, the reason (docs/raw-format.md). */
static void prof_exec_unentered(const char *file, const char *why)
{
    pthread_mutex_lock(&prof_mu);
    char path[PROF_PATH_MAX + 64];
    if (profile_active() && prof.from_env && !prof_env.serve_only &&
        prof_env_path(path, sizeof(path), ".noprofile", !lifecycle_owner()) == 0) {
        const char *name = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
        char line[1024];
        int n = snprintf(line, sizeof line, "%s\t%s\n", name, why);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd >= 0) {
            ssize_t w = write(fd, line, n > 0 && (size_t)n < sizeof line ? (size_t)n : 0);
            (void)w; /* a note that cannot be written leaves the process unlisted */
            close(fd);
        }
    }
    pthread_mutex_unlock(&prof_mu);
}

static const struct lifecycle_client prof_client = {
    .name = "cpu",
    .flush = prof_flush,
    .after_fork_child = prof_after_fork_child,
    .exec_failed = prof_exec_failed,
    .exec_unentered = prof_exec_unentered,
};

static void prof_register_client(void)
{
    if (!prof_client_registered && lifecycle_register(&prof_client) == 0)
        prof_client_registered = 1;
}

/* KESTREL_PROFILE_HZ: clamped to 10..10000; anything else than a number is one line
 * on stderr and the default. */
static void prof_read_hz(void)
{
    const char *v = getenv("KESTREL_PROFILE_HZ");
    prof_env.hz = prof_env.requested_hz = PROF_HZ_DEFAULT;
    if (!v) return;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (end == v || *end || errno) {
        rtsay("kestrel: KESTREL_PROFILE_HZ=%s: not a number; using %d", v,
                PROF_HZ_DEFAULT);
        return;
    }
    prof_env.requested_hz = n < 0 ? 0 : n > 1000000000 ? 1000000000u : (unsigned)n;
    prof_env.hz = n < PROF_HZ_MIN ? PROF_HZ_MIN : n > PROF_HZ_MAX ? PROF_HZ_MAX : (unsigned)n;
}

/* KESTREL_PROFILE_SIGNAL: the signal engine's signal, SIGRTMAX-4 by default; anything
 * else than a usable signal is one line on stderr and the default. */
static int prof_read_signal(void)
{
    const char *v = getenv("KESTREL_PROFILE_SIGNAL");
    int sig = sigown_default();
    const char *why = NULL;
    if (v && *v && sigown_parse(v, &sig, &why) != 0) {
        sig = sigown_default();
        rtsay("kestrel: KESTREL_PROFILE_SIGNAL=%s: %s; using %d", v, why, sig);
    }
    return sig;
}

/* KESTREL_TEST_SAMPLE_ROWS: a smaller row table, so that a test reaches its end in
 * seconds rather than in the hours of a long run. */
static size_t prof_read_rows(void)
{
    const char *v = getenv("KESTREL_TEST_SAMPLE_ROWS");
    char *end;
    unsigned long long n = v ? strtoull(v, &end, 10) : 0;
    return v && end != v && !*end && n < SINK_SAMPLES_MAX ? (size_t)n : SINK_SAMPLES_MAX;
}

/* argv[0] as the kernel was given it, read before main runs: a server rewrites its
 * argv[0] into a status line ("nginx: worker process"), and its fork children inherit
 * what is read here, not the rewrite. */
static void prof_read_invoked(void)
{
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, prof_env.invoked, sizeof prof_env.invoked - 1) : -1;
    if (fd >= 0) close(fd);
    prof_env.invoked[n > 0 ? n : 0] = 0;
}

__attribute__((constructor)) static void prof_init(void)
{
    const char *path = getenv("KESTREL_PROFILE");
    const char *http = getenv("KESTREL_HTTP");
    /* The HTTP endpoint's CPU profile is a window of a session, and threads join a
     * session when they are made: a session started at the first request would miss
     * every thread already running. So KESTREL_HTTP alone samples from the start, as a
     * session that keeps no rows and writes no file. */
    prof_env.serve_only = (!path || !*path) && http && *http;
    if (prof_env.serve_only) path = "";
    else if (!path || !*path) return; /* inactive: no thread, no handler, no allocation */
    prof_env.rows_max = prof_read_rows();
    prof_read_invoked();
    /* A relative path is taken from the directory the process started in: the
     * program may change directory before its file is written. */
    size_t at = 0;
    if (*path && path[0] != '/' && getcwd(prof_env.tmpl, sizeof(prof_env.tmpl) - 1)) {
        at = strlen(prof_env.tmpl);
        prof_env.tmpl[at++] = '/';
    }
    if (at + strlen(path) >= sizeof(prof_env.tmpl)) {
        rtsay("kestrel: KESTREL_PROFILE: path too long; CPU profiling is off");
        return;
    }
    strcpy(prof_env.tmpl + at, path);
    if (!strstr(path, "%p")) lifecycle_claim_owner();
    prof_read_hz();
    prof_env.signo = prof_read_signal();
    const char *eng = getenv("KESTREL_PROFILE_ENGINE");
    snprintf(prof_env.engine, sizeof(prof_env.engine), "%s", eng && *eng ? eng : "auto");
    prof_env.set = 1;
    pthread_mutex_lock(&prof_mu);
    prof_register_client();
    prof_start(prof_env.hz, prof_env.requested_hz, prof_env.engine, prof_env.signo, 1, 0, 0);
    pthread_mutex_unlock(&prof_mu);
}

/* ============================== public API ============================== */

KESTREL_API int kestrel_profile_start(unsigned hz)
{
    if (hz == 0) hz = PROF_HZ_DEFAULT;
    if (hz < PROF_HZ_MIN || hz > PROF_HZ_MAX) return -EINVAL;
    pthread_mutex_lock(&prof_mu);
    int r = -EBUSY;
    if (!profile_active()) {
        const char *eng = getenv("KESTREL_PROFILE_ENGINE");
        prof_register_client();
        r = prof_start(hz, hz, eng && *eng ? eng : "auto", prof_read_signal(), 0, 0, 0);
    }
    pthread_mutex_unlock(&prof_mu);
    return r;
}

KESTREL_API int kestrel_profile_stop(const char *path)
{
    if (!path || !*path) return -EINVAL;
    pthread_mutex_lock(&prof_mu);
    int r = !profile_active() ? -ESRCH : prof.from_env ? -EBUSY : prof_stop(path);
    pthread_mutex_unlock(&prof_mu);
    return r;
}

KESTREL_API int kestrel_profile_is_running(void)
{
    return profile_active();
}

KESTREL_API int kestrel_thread_register(int64_t fiber_id, const char *label)
{
    if (!profile_active()) return 0;
    uint64_t lo, hi;
    int r = threads_bounds_from_maps(&lo, &hi);
    return r ? r : threads_register(fiber_id, label ? label : "thread", lo, hi);
}

KESTREL_API int kestrel_thread_unregister(void)
{
    if (!profile_active()) return 0;
    return threads_unregister();
}

/* ======================= the main thread's outermost frame ======================= */

/* main() is called through prof_main, whose frame record becomes the top of the
 * main thread's stack for the walker: the walk ends on prof_main's caller
 * (__libc_start_call_main), as perf record -g's does; glibc's code above it keeps no
 * frame pointer, so a walk that went on would read garbage and count as cut short. */
typedef int (*prof_main_fn)(int, char **, char **);
int __libc_start_main(prof_main_fn main, int argc, char **argv, void (*init)(void),
                      void (*fini)(void), void (*rtld_fini)(void), void *stack_end);


UNWIND_ROOT_FN static int prof_main(int argc, char **argv, char **envp)
{
    struct reg_slot *s = registry_self();
    uint64_t top = (uint64_t)(uintptr_t)__builtin_frame_address(0) + UNWIND_ROOT_RECORD;
    if (s && top > s->stack_lo && top <= s->stack_hi) s->stack_hi = top;
    if (s) s->rooted = 1;
    int r = prof_real_main(argc, argv, envp);
    __asm__ volatile("" ::: "memory"); /* keeps this frame: no tail call */
    return r;
}

KESTREL_INTERPOSE int __libc_start_main(prof_main_fn main, int argc, char **argv,
                                        void (*init)(void), void (*fini)(void),
                                        void (*rtld_fini)(void), void *stack_end)
{
    prof_real_main = main;
    return REAL(__libc_start_main)(prof_main, argc, argv, init, fini, rtld_fini, stack_end);
}
