/* threads.c — thread registration and the pthread_create interposition (threads.h).
 *
 * Signal handlers: nothing. Inside malloc: nothing. The trampolines that carry a new
 * thread's start routine live in one mmap'd array (claimed with a compare-and-swap),
 * so creating a thread allocates nothing of ours. */
#include "runtime/cpu/threads.h"
#include "runtime/rtfd.h"
#include "runtime/interpose.h"
#include "runtime/lifecycle.h"
#include "runtime/maps.h"
#include "runtime/cpu/profile_state.h"
#include "runtime/cpu/registry.h"
#include "runtime/rtmem.h"
#include "runtime/unwind/unwind.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define THR_TRAMPOLINES REGISTRY_SLOTS /* threads being started at one time */
#define THR_MAIN_STACK_MAX (1ull << 30)

struct thr_tramp {
    _Atomic int used;
    void *(*fn)(void *);
    void *arg;
    size_t stacksize;
    uint32_t token; /* the engine's thread_creating() in the creator */
};

static struct thr_tramp *thr_tramps; /* THR_TRAMPOLINES, mapped once */
static pthread_key_t thr_key;
static int thr_key_made;
static size_t thr_default_stack; /* glibc's default stack size, read once */

static void thr_at_exit(void *v)
{
    (void)v;
    threads_unregister();
}

int threads_init(void)
{
    if (!thr_key_made) {
        if (pthread_key_create(&thr_key, thr_at_exit) != 0) return -EAGAIN;
        thr_key_made = 1;
    }
    pthread_attr_t def;
    if (!thr_default_stack && pthread_getattr_default_np(&def) == 0) {
        pthread_attr_getstacksize(&def, &thr_default_stack);
        pthread_attr_destroy(&def);
    }
    if (!thr_tramps && !(thr_tramps = rtmem_alloc(sizeof(struct thr_tramp) * THR_TRAMPOLINES)))
        return -ENOMEM;
    return 0;
}

int threads_register(int64_t fiber, const char *label, uint64_t lo, uint64_t hi)
{
    if (!profile_active()) return -ESRCH;
    struct reg_slot *s = registry_register(fiber, label, lo, hi);
    if (!s) return -EAGAIN;
    const struct engine *e = profile_engine();
    if (e && e->thread_start) e->thread_start(s);
    if (thr_key_made) pthread_setspecific(thr_key, (void *)1);
    return 0;
}

int threads_unregister(void)
{
    struct reg_slot *s = registry_self();
    if (!s) return -ENOENT;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    const struct engine *e = profile_engine();
    if (e && e->thread_stop && profile_active()) e->thread_stop(s);
    int r = registry_unregister();
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return r;
}

/* ======================= stack bounds ======================= */

static uint64_t thr_hex(const char **p)
{
    uint64_t v = 0;
    for (;; (*p)++) {
        char c = **p;
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return v;
        v = v * 16 + (uint64_t)d;
    }
}

/* The main stack grows down to its limit. */
static void thr_main_stack_low(uint64_t a, uint64_t b, uint64_t *lo)
{
    struct rlimit rl;
    uint64_t max = THR_MAIN_STACK_MAX;
    if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur < max) max = rl.rlim_cur;
    if (b - max < a) *lo = b - max;
}

int threads_bounds_from_maps(uint64_t *lo, uint64_t *hi)
{
    uint64_t sp = (uint64_t)(uintptr_t)__builtin_frame_address(0);
    uint64_t a, b;
    /* The main thread's stack, as the session's start read it (maps_refresh_all). */
    if (maps_stack_range(&a, &b) == 0 && sp >= a && sp < b) {
        *lo = a;
        *hi = b;
        thr_main_stack_low(a, b, lo);
        return 0;
    }
    struct rtfd once;
    int fd = rtfd_open_once(&once, "/proc/self/maps");
    if (fd < 0) return -errno;
    char buf[4096 + 256];
    size_t have = 0;
    int found = 0;
    for (;;) {
        ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
        if (n <= 0) break;
        have += (size_t)n;
        buf[have] = 0;
        char *line = buf, *nl;
        while ((nl = strchr(line, '\n'))) {
            const char *p = line;
            uint64_t a = thr_hex(&p);
            p++;
            uint64_t b = thr_hex(&p);
            if (sp >= a && sp < b) {
                *lo = a;
                *hi = b;
                found = 1;
                if (strstr(line, "[stack]") && nl > line) thr_main_stack_low(a, b, lo);
                break;
            }
            line = nl + 1;
        }
        if (found) break;
        have = (size_t)(buf + have - line);
        memmove(buf, line, have);
        if (have >= sizeof(buf) - 1) have = 0; /* a line longer than the buffer: skip it */
    }
    rtfd_close(&once);
    return found ? 0 : -ENOENT;
}

/* A glibc thread's descriptor (pthread_self()) sits right above its stack: it bounds
 * every frame of the thread. Checked for plausibility against the current SP. */
static int thr_bounds_glibc(size_t stacksize, uint64_t *lo, uint64_t *hi)
{
    uint64_t sp = (uint64_t)(uintptr_t)__builtin_frame_address(0);
    uint64_t self = (uint64_t)(uintptr_t)pthread_self();
    if (self <= sp || self - sp > stacksize + (1u << 16)) return -ENOENT;
    *hi = self;
    *lo = self > stacksize ? self - stacksize : 0;
    return 0;
}

/* ======================= pthread_create ======================= */

UNWIND_ROOT_FN static void *thr_start(void *arg)
{
    struct thr_tramp *t = arg;
    void *(*fn)(void *) = t->fn;
    void *fn_arg = t->arg;
    size_t ss = t->stacksize;
    uint32_t token = t->token;
    atomic_store(&t->used, 0);
    const struct engine *e = profile_engine();
    if (token && e && e->thread_created) e->thread_created(token);
    uint64_t lo, hi;
    if (profile_active() &&
        (thr_bounds_glibc(ss, &lo, &hi) == 0 || threads_bounds_from_maps(&lo, &hi) == 0)) {
        /* This frame's record is the top for the walker, which ends on its caller
         * (start_thread): glibc's start_thread keeps no frame pointer. */
        uint64_t top = (uint64_t)(uintptr_t)__builtin_frame_address(0) + UNWIND_ROOT_RECORD;
        if (top > lo && top <= hi) hi = top;
        threads_register((int64_t)syscall(SYS_gettid), "thread", lo, hi);
        struct reg_slot *s = registry_self();
        if (s) s->rooted = 1;
        if (s && e && e->thread_begin) e->thread_begin(s);
    }
    void *r = fn(fn_arg);
    __asm__ volatile("" ::: "memory"); /* keeps this frame: no tail call */
    return r;
}

KESTREL_INTERPOSE int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
                                     void *(*start)(void *), void *arg)
{
    lifecycle_threads_coming();
    if (!profile_active() || !thr_tramps) return REAL(pthread_create)(thread, attr, start, arg);
    struct thr_tramp *t = NULL;
    for (size_t i = 0; i < THR_TRAMPOLINES && !t; i++) {
        int idle = 0;
        if (atomic_compare_exchange_strong(&thr_tramps[i].used, &idle, 1)) t = &thr_tramps[i];
    }
    if (!t) { /* every trampoline in use: this thread goes unprofiled, counted */
        registry_count_past_limit();
        return REAL(pthread_create)(thread, attr, start, arg);
    }
    size_t ss = thr_default_stack;
    if (attr) pthread_attr_getstacksize(attr, &ss);
    t->fn = start;
    t->arg = arg;
    t->stacksize = ss ? ss : 8u << 20;
    const struct engine *e = profile_engine();
    t->token = e && e->thread_creating ? e->thread_creating() : 0;
    int r = REAL(pthread_create)(thread, attr, thr_start, t);
    if (r != 0) atomic_store(&t->used, 0);
    return r;
}

/* A thread made by a raw clone(), which no pthread_create wrapper sees, is not
 * registered; the perf engine still wants its creator's per-CPU events opened first,
 * so that its samples are counted (engine_stats.samples_unregistered), not unseen.
 * The optional arguments are passed on as they came: clone reads them by its flags. */
KESTREL_INTERPOSE int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    pid_t *ptid = va_arg(ap, pid_t *);
    void *tls = va_arg(ap, void *);
    pid_t *ctid = va_arg(ap, pid_t *);
    va_end(ap);
    const struct engine *e = (flags & CLONE_THREAD) && profile_active() ? profile_engine() : NULL;
    if (e && e->thread_creating) e->thread_creating();
    return REAL(clone)(fn, stack, flags, arg, ptid, tls, ctid);
}
