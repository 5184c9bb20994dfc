/* engine_signal.c — the signal engine. On-CPU samples come from a timer on each
 * registered thread's own CPU clock (timer_create, SIGEV_THREAD_ID): the kernel checks
 * it at its scheduler tick on the CPU the thread runs on, so the signal is taken right
 * where the tick found the thread, in its code or as the system call it was in returns.
 * A signal sent from another CPU reaches a running thread tens of microseconds later
 * on a virtual machine, and a server's worker has entered its next read or write by
 * then: its request handler's time was charged to its system calls (50% of the
 * samples in handle_request against 71% of its CPU time). The timers fire at most once
 * per kernel tick (250 Hz on Debian's kernels), so the engine samples at the lower of
 * the rate asked for and the tick rate; below the tick rate the handler keeps each
 * timer sample with the probability rate / tick rate.
 *
 * A sampler thread of the runtime's own wakes at that rate on absolute, jittered
 * deadlines and reads every thread's CPU clock. A thread asleep in a system call at
 * that moment gets a waiting sample, without any signal (waitstack); one that was
 * runnable and never ran since the last tick gets a signal it takes as it resumes, a
 * waiting sample. Each sample carries the CPU time its thread used since the sample
 * before. Where no timer can be made (seccomp, a thread the timers never reach) the
 * sampler signals each thread that ran instead (tgkill), and the sample's state is the
 * thread's at the tick, read from how late the signal came (sig_late).
 *
 * The handler walks its own stack into the thread's single-producer single-consumer
 * ring, which the sampler drains into the sink; a thread running on a fiber's stack is
 * walked within the fiber's bounds (fibers.h).
 *
 * The handler runs on an alternate signal stack of the runtime's (sig_alt_on), so that
 * a sample takes no room on the thread's own stack: the kernel's signal frame alone is
 * 3 KB on x86-64 with AVX-512 and 4.6 KB on aarch64 (a fixed 4 KiB of register
 * records), and a walk that reads an FDE adds 2 KB; a thread close to the end of its
 * stack would be made to overflow it by the profiler alone.
 *
 * Signal handlers: sig_handler() and what it calls — registry_self(), rtown_sample(),
 * uw_walk(), fiber_find(), blocking_interrupted(), clock_gettime, atomics;
 * sig_timers_quiet() (the
 * program's sigaction may run in its handler): atomics and timer_settime. No lock, no
 * allocation, errno preserved.
 * Inside malloc: nothing. */
#include "runtime/arch/arch.h"
#include "runtime/rtfd.h"
#include "runtime/rtsay.h"
#include "runtime/cpu/blocking.h"
#include "runtime/rtown.h"
#include "runtime/lifecycle.h"
#include "runtime/rtthread.h"
#include "runtime/cpu/engine.h"
#include "runtime/cpu/losses.h"
#include "runtime/fibers.h"
#include "runtime/images.h"
#include "runtime/maps.h"
#include "runtime/interpose.h"
#include "runtime/rtmem.h"
#include "runtime/rtblocks.h"
#include "runtime/rtstack.h"
#include "runtime/cpu/sink.h"
#include "runtime/unwind/unwind.h"
#include "runtime/cpu/waitstack.h"
#include "runtime/rtclock.h"
#include "runtime/unwind/step.h"
#include "runtime/unwind/table.h"
#include "runtime/cpu/sigown.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define SIG_RING 4                    /* samples buffered per thread between two ticks */
#define SIG_SPILL 512                 /* samples of full rings buffered for all threads */
#define SIG_JITTER_PCT 30             /* deadlines jittered uniformly by +-30% */
#define SIG_IMAGES_NS 128000000ull    /* between two image refreshes */
#define SIG_TABLES_NS 8000000ull      /* between two looks for new unwind tables: an image
                                         dlopen'd since is walked by frame pointer */
#define SIG_FINAL_WAIT_NS 20000000ull /* how long stop() waits for signals in flight */
#define SIG_STUCK_TICKS 3             /* ticks a running thread may leave its signal pending
                                         before the sampler asks whether it blocks it */
#define SIG_MASK_PROBE 64             /* ticks between two looks at a masked thread's mask */
#define SIG_TIMER_SILENT 32           /* ticks a thread may run without a timer sample
                                         before its timer is given up for signals */
#define SIG_W_SHIFT 16                /* sig_wait_weight's fixed point */
#define SIG_W_FRACTION ((1ull << SIG_W_SHIFT) - 1)
#define SIG_W_PRIOR 25.0              /* timer samples of the weight's prior */
#define SIG_SLEEP_OWED 8              /* sleep samples owed before they take the stack of
                                         the thread's last sleep */
#define SIG_TIMER_INTERVAL_NS 1000    /* far below a tick: the timer fires at every tick
                                         that finds its thread running */
/* The alternate signal stacks: one per thread that registered, kept by the thread
 * until it unregisters or exits (it may outlive its session, and its stack must not
 * be another thread's meanwhile). */
#define SIG_ALT_STACKS REGISTRY_SLOTS
#define SIG_ALT_SIZE (64 * 1024)

struct sig_entry {
    uint64_t t_ns;
    uint64_t cpu_ns;
    uint8_t state;
    uint8_t stop;
    uint8_t timer; /* taken from the thread's timer: the sampler attaches its CPU time */
    uint16_t n;
    uint64_t fiber; /* the fiber the thread ran on (fiber_find's key), 0 its own stack */
    uint64_t frames[UNWIND_MAX_DEPTH];
};

/* A slot's timer: NONE, or being made or deleted (BUSY: the one who set it owns the
 * timer until it stores the next state), ARMED, or QUIET (disarmed at a step aside,
 * to be deleted by the sampler). */
enum { SIG_T_NONE, SIG_T_BUSY, SIG_T_ARMED, SIG_T_QUIET };

/* One per registry slot. Rules: the handler (producer) writes e[head % SIG_RING] and
 * then publishes head; the sampler (consumer) reads up to head and publishes tail.
 * `pending` is set by the sampler before it signals the thread and cleared by the
 * handler after it read sig_cpu/sig_state; while it is set the thread is not signalled
 * again (the kernel would merge the signals anyway). `tstate` changes by
 * compare-and-swap only (sampler, the thread at its unregistration, a step aside). */
struct sig_ring {
    _Atomic uint32_t head;
    _Atomic uint32_t tail;
    _Atomic uint32_t pending; /* a signal is on its way */
    _Atomic uint32_t dropped; /* samples lost to a full ring, not yet counted */
    uint32_t owed;            /* ticks the thread sat runnable while the signal
                                 was pending: waiting samples the coming stack
                                 also stands for (sampler only) */
    uint32_t stuck;           /* ticks it ran with the signal pending (sampler only) */
    uint32_t masked;          /* it blocks the signal: not signalled (sampler only) */
    uint32_t masked_seen;     /* counted in sig_threads_masked (sampler only) */
    uint64_t cpu_start;       /* the thread's CPU clock at registration (sampler only) */
    _Atomic uint64_t cpu_end; /* ... when it unregistered, 0 before */
    uint64_t sig_cpu;         /* CPU ns the coming sample accounts for */
    uint64_t sig_sent_ns;     /* CLOCK_MONOTONIC when the signal was sent */
    uint64_t sig_clock_ns;    /* the thread's CPU clock then */
    uint8_t sig_state;        /* enum sink_state of the coming sample */
    _Atomic int tstate;       /* SIG_T_*: the thread's CPU-clock timer */
    timer_t timer;            /* ... its id while not NONE */
    int timer_sig;            /* ... the signal it raises */
    uint32_t timer_failed;    /* no timer for this registration: signalled instead */
    uint32_t silent;          /* ticks it ran with no timer sample (sampler only) */
    uint64_t cpu_acc;         /* CPU ns no sample carries yet (sampler only) */
    uint64_t timed_n;         /* timer samples of this registration (sampler only) */
    uint64_t wait_credit;     /* waiting samples owed, in 1 << SIG_W_SHIFT (sampler only) */
    uint64_t queued_last;     /* its run queue wait (schedstat) at the last look, ns */
    int64_t queued_acc;       /* ... waited since then and not yet sampled */
    int queued_known;         /* queued_last was read */
    uint64_t wall_last;       /* CLOCK_MONOTONIC at the last look, 0 none (sampler only) */
    int64_t asleep_acc;       /* ns off the CPU and off the run queue, not yet sampled */
    uint64_t asleep_credit;   /* waiting samples it owes its sleeps, in 1 << SIG_W_SHIFT */
    int32_t last_wait;        /* the interned stack it last slept with, -1 none */
    uint32_t last_wait_thread1; /* its thread record + 1 (a fiber's), 0 the slot's */
    uint64_t thin_rng;        /* xorshift64 of the handler's thinning (handler only) */
    _Atomic uint32_t spilled; /* samples it put in the spill pool, not yet drained */
    struct sig_entry e[SIG_RING];
};

/* One ring per slot, mapped a block at a time as threads register (registry_add_table),
 * never unmapped: a late handler may still write into one. */
RTBLOCKS(sig_rings, struct sig_ring, REGISTRY_SLOTS, 64);

/* The ring of slot i; NULL only for a slot no thread took while this engine ran.
 * Async-signal-safe. */
static struct sig_ring *sig_ring_of(size_t i)
{
    return rtblocks_at(&sig_rings, i);
}

/* A sample of a thread whose ring was full, kept in a pool all threads share: the
 * sampler thread waits for a CPU on a loaded machine, a thread of the program keeps
 * running meanwhile, and its timer's samples came faster than the ring of 4 was
 * drained (2,000 short threads: 8-19 samples lost a run once each thread was timed
 * from its start). `state` goes FREE -> WRITING (the handler that claimed it) -> READY
 * (published, with its slot) -> FREE (the sampler, once drained). */
enum { SIG_SP_FREE, SIG_SP_WRITING, SIG_SP_READY };
struct sig_spill {
    _Atomic uint32_t state;
    uint32_t slot; /* the registry slot it belongs to */
    struct sig_entry e;
};
static struct sig_spill *sig_spills; /* SIG_SPILL, mapped once, never unmapped */
static struct engine_config sig_cfg;
static _Atomic int sig_running;  /* the handler records only while set */
static _Atomic int sig_stopping; /* asks the sampler thread to finish */
static int sig_pid;              /* this process, for the handler's origin check */
static pthread_t sig_thread;
static uint64_t sig_rng;     /* xorshift64 state for the jitter */
static uint64_t sig_idle_ns; /* below this much CPU in a tick, ask /proc */
static uint64_t sig_threads_masked; /* threads found blocking the signal while running */
static uint64_t sig_cpu_unsampled;  /* CPU ns of threads that ran and could not be signalled,
                                       or ended between two ticks */
static uint64_t sig_threads_cpu;    /* CPU ns of the registrations, from start to end */
static int sig_timers;              /* on-CPU samples come from per-thread timers */
static int sig_sampler_only;        /* KESTREL_PROFILE_TRIGGER=sampler: no timers */
static unsigned sig_tick_hz;        /* the kernel's tick rate, 0 unknown */
static uint64_t sig_keep;           /* a timer sample is kept when rng < sig_keep (2^64 all) */
static unsigned sig_hz;             /* the rate sampled at: cfg.hz, or the tick's below it */
static uint64_t sig_threads_untimed; /* registrations signalled for want of a timer */
/* System calls the kernel refused (a seccomp filter, EPERM): named in the notes. */
static int sig_timer_errno;          /* timer_create/timer_settime's errno, 0 none */
static int sig_send_errno;           /* rt_tgsigqueueinfo's, other than a thread gone */
static uint64_t sig_sends_refused;   /* signals it refused */
static uint64_t sig_refused_cpu;     /* ... and the CPU ns they stood for */
static struct losses sig_dropped;    /* samples lost to a full ring, by thread record */
RTSTACK_POOL(sig_alts, SIG_ALT_STACKS, SIG_ALT_SIZE);
static pthread_key_t sig_alt_key; /* its destructor gives a thread's stack back */
static int sig_alt_key_made;

/* ============================ the handler ============================ */

/* Whether a signal taken as a wrapped call ended came late, to a thread that was not
 * on a CPU when it was sent: it ran for less than half the time since. It was asleep in
 * the call and waking, or waiting for a CPU to resume on, and its sample is taken where
 * it resumes, as the call ends: charged to that call, the time of a server's request
 * handler went to its read, write and epoll_wait. Outside a wrapped call the thread
 * takes the signal in the code it was running, where its CPU time went, late or not
 * (a thread preempted by the sampler's own wake-up takes it late too).
 * Async-signal-safe: clock reads. */
static int sig_late(const struct sig_ring *r, uint64_t now)
{
    if (now < r->sig_sent_ns) return 0;
    uint64_t gap = now - r->sig_sent_ns;
    uint64_t cpu = rt_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    uint64_t ran = cpu > r->sig_clock_ns ? cpu - r->sig_clock_ns : 0;
    return ran < gap / 2;
}

/* A free entry of the spill pool, claimed (WRITING), or NULL when all are taken. The
 * search starts at a place of the thread's own, so that threads spilling at once do
 * not contend for the same entries. Async-signal-safe: atomics. */
static struct sig_spill *sig_spill_claim(int tid)
{
    if (!sig_spills) return NULL;
    for (uint32_t k = 0, at = (uint32_t)tid * 37u; k < SIG_SPILL; k++) {
        struct sig_spill *sp = &sig_spills[(at + k) % SIG_SPILL];
        uint32_t e = SIG_SP_FREE;
        if (atomic_load_explicit(&sp->state, memory_order_relaxed) == SIG_SP_FREE &&
            atomic_compare_exchange_strong(&sp->state, &e, SIG_SP_WRITING))
            return sp;
    }
    return NULL;
}

static void sig_handler(int sig, siginfo_t *si, void *ucv)
{
    if (!sigown_is_ours(si)) { /* the program's own: what it set for it */
        sigown_foreign(sig, si, ucv);
        return;
    }
    int saved_errno = errno;
    /* A wrapped call it cut short resumes. */
    enum blocking_where where = blocking_interrupted(ucv);
    struct reg_slot *s = registry_self();
    int timer = si->si_code == SI_TIMER;
    if (s && atomic_load_explicit(&sig_running, memory_order_acquire)) {
        struct sig_ring *r = sig_ring_of(registry_slot_index(s));
        if (!r) goto out;
        struct sig_spill *sp = NULL;
        if (timer && sig_keep) { /* below the tick rate: one tick sample in tick/rate */
            r->thin_rng ^= r->thin_rng << 13;
            r->thin_rng ^= r->thin_rng >> 7;
            r->thin_rng ^= r->thin_rng << 17;
            if (r->thin_rng >= sig_keep) goto out;
        }
        uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
        uint32_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
        struct arch_regs ar;
        arch_uc_regs((const ucontext_t *)ucv, &ar);
        if (rtown_sample(ar.sp)) {
            /* kestrel's own work on this thread (rtown.h): counted, not the program's */
        } else if (h - t >= SIG_RING && !(sp = sig_spill_claim(s->tid))) {
            atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
        } else {
            struct sig_entry *e = sp ? &sp->e : &r->e[h % SIG_RING];
            e->t_ns = rt_clock_ns(CLOCK_MONOTONIC);
            /* The time and the state are read before the walk, which takes its own.
             * The signal found the thread asleep in a blocking call (it ran during the
             * tick, then slept): its stack is the sleep's. On-CPU, it would charge the
             * time of whatever ran before the sleep to the function that slept (a
             * half-sleeping function measured 64% of the CPU instead of 50%); it is a
             * waiting sample, its CPU still counted. So is one taken late as a wrapped
             * call ended (sig_late): counted as running, an epoll server's workers read
             * a running share of 0.70 against 0.28 of CPU/wall. */
            int waiting = !timer && (where == BLOCKING_ASLEEP ||
                                     (where == BLOCKING_IN_CALL && sig_late(r, e->t_ns)));
            enum unwind_stop stop = UNWIND_CUT_RANGE;
            /* The live stack, from the interrupted sp to the registered top; or to the
             * top of the fiber's stack the thread runs on. */
            uint64_t lo = s->stack_lo, hi = s->stack_hi;
            e->fiber = 0;
            if ((ar.sp < lo || ar.sp >= hi) &&
                fiber_find(ar.sp, s->stack_lo, s->stack_hi, &lo, &hi, &e->fiber))
                lo = ar.sp;
            struct uw_stack m = {ar.sp > lo ? ar.sp : lo, hi, 0, UW_DIRECT_LIVE, NULL};
            struct uw_regs regs = {.pc = ar.pc, .sp = ar.sp, .fp = ar.fp, .interrupted = 1,
                                   .lr = ar.lr};
            e->n = ar.pc ? (uint16_t)uw_walk(uw_mode_current(), regs, &m, e->frames,
                                             UNWIND_MAX_DEPTH, &stop)
                         : 0;
            e->stop = (uint8_t)stop;
            e->timer = (uint8_t)timer;
            /* A tick found the thread running: on-CPU, its CPU time the sampler's. */
            e->cpu_ns = timer ? 0 : r->sig_cpu;
            e->state = timer ? SINK_ON_CPU : waiting ? SINK_WAITING : r->sig_state;
            if (sp) {
                sp->slot = (uint32_t)registry_slot_index(s);
                atomic_store_explicit(&sp->state, SIG_SP_READY, memory_order_release);
                atomic_fetch_add_explicit(&r->spilled, 1, memory_order_release);
            } else {
                atomic_store_explicit(&r->head, h + 1, memory_order_release);
            }
        }
        if (!timer) atomic_store_explicit(&r->pending, 0, memory_order_release);
    }
out:
    errno = saved_errno;
}

/* ============================ the sampler ============================ */

/* One sample of the thread into the sink: 1 when a timer took it. */
static unsigned sig_drain_entry(struct reg_slot *s, struct sig_ring *r, const struct sig_entry *e)
{
    unsigned timed = 0;
    uint64_t cpu = e->cpu_ns;
    if (e->timer) { /* the CPU time since the sample before */
        cpu = r->cpu_acc;
        r->cpu_acc = 0;
        timed++;
    }
    struct sink_sample smp = {
        .slot = s,
        .t_ns = e->t_ns,
        .cpu_ns = cpu,
        .state = e->state,
        .stop = e->stop,
        .nframes = e->n,
        .frames = e->frames,
        .thread1 = e->fiber ? fiber_thread(s->tid, e->fiber) : 0,
    };
    int32_t st = sink_add(&smp);
    /* A preempted thread resumes exactly where the handler found it: the ticks it
     * spent runnable are waiting samples with that stack. */
    for (; r->owed && st >= 0; r->owed--)
        sink_add_interned_to(smp.thread1 ? smp.thread1 - 1 : s->thread_index, e->t_ns, 0,
                             SINK_WAITING, st);
    r->owed = 0;
    return timed;
}

/* Returns how many timer samples it took: its ring's, then those it spilled (newer). */
static unsigned sig_drain(struct reg_slot *s, struct sig_ring *r)
{
    uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint32_t h = atomic_load_explicit(&r->head, memory_order_acquire);
    unsigned timed = 0;
    for (; t != h; t++)
        timed += sig_drain_entry(s, r, &r->e[t % SIG_RING]);
    atomic_store_explicit(&r->tail, t, memory_order_release);
    if (atomic_exchange_explicit(&r->spilled, 0, memory_order_acquire)) {
        uint32_t slot = (uint32_t)registry_slot_index(s);
        for (size_t k = 0; k < SIG_SPILL; k++) {
            struct sig_spill *sp = &sig_spills[k];
            if (atomic_load_explicit(&sp->state, memory_order_acquire) != SIG_SP_READY ||
                sp->slot != slot)
                continue;
            timed += sig_drain_entry(s, r, &sp->e);
            atomic_store_explicit(&sp->state, SIG_SP_FREE, memory_order_release);
        }
    }
    uint32_t d = atomic_exchange_explicit(&r->dropped, 0, memory_order_relaxed);
    if (d) {
        sink_drop(d);
        losses_add(&sig_dropped, s->thread_index, d);
    }
    return timed;
}

/* ============================ the timers ============================ */

/* Deletes the slot's timer unless someone else holds it (BUSY). */
static void sig_timer_delete(struct sig_ring *r)
{
    for (int want = SIG_T_ARMED; want <= SIG_T_QUIET; want++) {
        int e = want;
        if (atomic_compare_exchange_strong(&r->tstate, &e, SIG_T_BUSY)) {
            timer_delete(r->timer);
            atomic_store(&r->tstate, SIG_T_NONE);
            return;
        }
    }
}

/* The step aside's hook: every armed timer disarmed. Async-signal-safe. */
static void sig_timers_quiet(void)
{
    size_t hi = registry_slots_hi();
    for (size_t i = 0; i < hi; i++) {
        struct sig_ring *r = sig_ring_of(i);
        int e = SIG_T_ARMED;
        if (!r) continue;
        if (!atomic_compare_exchange_strong(&r->tstate, &e, SIG_T_BUSY)) continue;
        struct itimerspec off;
        memset(&off, 0, sizeof off);
        timer_settime(r->timer, 0, &off, NULL);
        atomic_store(&r->tstate, SIG_T_QUIET);
    }
}

/* The slot's timer armed with the engine's current signal: 0, or -1 when the thread
 * has none (it is signalled instead). Sampler, registry locked. */
static int sig_timer_ensure(struct reg_slot *s, struct sig_ring *r)
{
    if (!sig_timers || r->timer_failed) return -1;
    int sig = sigown_current(), st = atomic_load(&r->tstate);
    if (st == SIG_T_ARMED && r->timer_sig == sig) return 0;
    if (st == SIG_T_ARMED || st == SIG_T_QUIET) sig_timer_delete(r);
    int e = SIG_T_NONE;
    if (!sig || !atomic_compare_exchange_strong(&r->tstate, &e, SIG_T_BUSY)) return -1;
    int err = sigown_timer_arm(s->cpu_clock, s->tid, SIG_TIMER_INTERVAL_NS, &r->timer,
                               &r->timer_sig);
    if (err) {
        if (err != -ESRCH && !sig_timer_errno) sig_timer_errno = -err;
        atomic_store(&r->tstate, SIG_T_NONE);
        r->timer_failed = 1;
        sig_threads_untimed++;
        return -1;
    }
    r->silent = 0;
    atomic_store(&r->tstate, SIG_T_ARMED);
    return 0;
}

/* A thread the runtime's trampoline started arms its own timer before the program's
 * start routine runs, so that a thread of a few ms is timed from its first
 * instruction: among 10,000 runnable threads the sampler waited seconds for a CPU and
 * armed the timers of threads of 2 ms after their work was done (174 of 10,000 had
 * on-CPU samples). The other threads (the session's starting thread, threads that
 * existed before it or register through the API) are armed at the sampler's tick, as
 * it then reads the writable mappings: such a thread may already run on a fiber's
 * stack, and a timer armed before the sampler's first look at the mappings gave
 * samples that no fiber's bounds were known for, walked within the thread's own and
 * rooted at it (prog_boost's fiber samples under main-0). A failure leaves the timer
 * to sig_timer_ensure, which counts it. On the new thread, before its start routine:
 * the same system calls as sig_timer_ensure. */
static void sig_thread_begin(struct reg_slot *s)
{
    struct sig_ring *r = sig_ring_of(registry_slot_index(s));
    int e = SIG_T_NONE;
    if (!r) return;
    if (!sig_timers || !atomic_load_explicit(&sig_running, memory_order_acquire) ||
        !sigown_current() || !atomic_compare_exchange_strong(&r->tstate, &e, SIG_T_BUSY))
        return;
    if (sigown_timer_arm(s->cpu_clock, s->tid, SIG_TIMER_INTERVAL_NS, &r->timer,
                         &r->timer_sig) != 0) {
        atomic_store(&r->tstate, SIG_T_NONE);
        return;
    }
    atomic_store(&r->tstate, SIG_T_ARMED);
}

/* The kernel's tick rate: the resolution of the coarse clock is one tick. 0 unknown. */
static unsigned sig_kernel_tick_hz(void)
{
    struct timespec res;
    if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) != 0 || res.tv_sec) return 0;
    if (res.tv_nsec < 100000 || res.tv_nsec > 100000000) return 0;
    return (unsigned)((1000000000L + res.tv_nsec / 2) / res.tv_nsec);
}

/* Whether this process can have a timer on a thread's CPU clock that signals that
 * thread (a seccomp filter may refuse it): tried on the sampler's own clock, never armed. */
static int sig_timers_work(void)
{
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = sigown_current();
    ev._sigev_un._tid = (int)syscall(SYS_gettid);
    timer_t t;
    if (!ev.sigev_signo) return 0;
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &t) != 0) {
        sig_timer_errno = errno;
        return 0;
    }
    timer_delete(t);
    return 1;
}

static void sig_send(struct reg_slot *s, struct sig_ring *r, uint64_t cpu_ns, uint64_t clock_ns,
                     int state)
{
    r->sig_cpu = cpu_ns;
    r->sig_clock_ns = clock_ns;
    r->sig_sent_ns = rt_clock_ns(CLOCK_MONOTONIC);
    r->sig_state = (uint8_t)state;
    r->stuck = 0;
    atomic_store_explicit(&r->pending, 1, memory_order_release);
    if (sigown_send(sig_pid, s->tid) != 0) { /* gone, refused, or no signal left to send */
        int e = errno;
        atomic_store(&r->pending, 0);
        sig_cpu_unsampled += cpu_ns;
        if (e == EPERM || e == EACCES) { /* refused, not a thread gone or no signal */
            sig_send_errno = e;
            sig_sends_refused++;
            sig_refused_cpu += cpu_ns;
        }
    }
}

/* The signals in flight were discarded (sigown_poll, sigown_discard): each thread's CPU
 * time they stood for goes back to its next sample. */
static void sig_forget_in_flight(void)
{
    for (size_t i = registry_next_used(0); i < REGISTRY_SLOTS; i = registry_next_used(i + 1)) {
        struct sig_ring *r = sig_ring_of(i);
        struct reg_slot *s = registry_slot(i);
        if (!r || !atomic_exchange(&r->pending, 0)) continue;
        if (s->cpu_last_ns >= r->sig_cpu) s->cpu_last_ns -= r->sig_cpu;
        r->owed = r->stuck = 0;
    }
}

/* A registration ends (or the session does, `end` being its CPU clock now): the CPU time
 * since its last sample, and a signal it never took, have no sample. */
static void sig_account(struct reg_slot *s, struct sig_ring *r, uint64_t end)
{
    if (atomic_exchange(&r->pending, 0)) sig_cpu_unsampled += r->sig_cpu;
    sig_cpu_unsampled += r->cpu_acc;
    r->cpu_acc = 0;
    if (end > s->cpu_last_ns) sig_cpu_unsampled += end - s->cpu_last_ns;
    if (end > r->cpu_start) sig_threads_cpu += end - r->cpu_start;
    s->cpu_last_ns = end > s->cpu_last_ns ? end : s->cpu_last_ns;
}

/* Whether thread `tid`, running in user space, blocks `sig` (/proc's SigBlk; a thread
 * inside a system call may block it for the call alone, as blocking.c does). */
static int sig_blocks(int tid, int sig)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", tid);
    struct rtfd once;
    int fd = rtfd_open_once(&once, path);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    rtfd_close(&once);
    if (n <= 0 || strncmp(buf, "running", 7) != 0) return 0;
    snprintf(path, sizeof path, "/proc/self/task/%d/status", tid);
    if ((fd = rtfd_open_once(&once, path)) < 0) return 0;
    n = read(fd, buf, sizeof buf - 1);
    rtfd_close(&once);
    if (n <= 0) return 0;
    buf[n] = 0;
    const char *p = strstr(buf, "\nSigBlk:");
    if (!p || sig < 1 || sig > 64) return 0;
    unsigned long long mask = strtoull(p + 9, NULL, 16);
    return (int)((mask >> (sig - 1)) & 1);
}

/* The waiting samples one waiting period of the thread stands for, in 1 << SIG_W_SHIFT:
 * its timer samples per period of its CPU time since it registered (`cpu` its clock
 * now), from a prior of one. */
static uint64_t sig_wait_weight(const struct sig_ring *r, uint64_t cpu_now, uint64_t period)
{
    double n = (double)r->timed_n + SIG_W_PRIOR;
    double cpu = (double)(cpu_now - r->cpu_start) + SIG_W_PRIOR * (double)period;
    return (uint64_t)(n * (double)period / cpu * (double)(1u << SIG_W_SHIFT));
}

/* The thread blocks the engine's signal: it is not signalled while it does, and the
 * instance pending for it is taken back (sigown_discard). */
static void sig_mark_masked(struct sig_ring *r)
{
    r->masked = 1;
    if (!r->masked_seen) sig_threads_masked++;
    r->masked_seen = 1;
    sigown_discard();
}

/* The time thread `tid` waited on a run queue, runnable and not running, in ns
 * (/proc/self/task/TID/schedstat, its second field); -1 unknown. */
static int64_t sig_queued_ns(int tid)
{
    char path[64], buf[128];
    snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", tid);
    struct rtfd once;
    int fd = rtfd_open_once(&once, path);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    rtfd_close(&once);
    if (n <= 0) return -1;
    buf[n] = 0;
    char *p = buf, *e;
    strtoull(p, &e, 10);
    if (e == p) return -1;
    unsigned long long q = strtoull(e, &p, 10);
    return p == e ? -1 : (int64_t)q;
}

/* A thread with a timer, at a tick: its running time is the timer's to sample, its
 * CPU time goes to its next sample.
 *
 * Its waiting samples are counted from its clocks, not from what it is doing at the
 * tick: the sampler's own wake-up comes sooner when a CPU is idle, that is when
 * threads sleep, and counting the threads found asleep then put a third more waiting
 * samples on an epoll server's workers than their time off the CPU. Since the last
 * look, the wall time less its CPU time is time off the CPU; the part it waited on a
 * run queue (schedstat) is one waiting sample per period, taken where it waited (a
 * signal it takes as it resumes, or the stack of the call it sleeps in now); the rest
 * it slept, one waiting sample per period with the stack of the call it sleeps in
 * (waitstack), given when the sampler finds it asleep, or the stack of its last sleep
 * when that takes long.
 *
 * How many ticks find a thread running, per second of its CPU time, depends on how it
 * runs: a loop is hit 250 times a second at 250 Hz, a thread that runs for 15 µs
 * between sleeps of 50 µs about 100 times on this machine's virtual CPUs, an epoll
 * server's worker 250 to 300 times. Its waiting samples are taken at the rate its
 * timer reaches (sig_wait_weight), so that its running share is its CPU time over its
 * wall time.
 *
 * A timer that brought nothing while the thread ran is blocked (the thread is masked,
 * as below) or never reaches it (it is signalled from then on). */
static void sig_tick_timed(struct reg_slot *s, struct sig_ring *r, uint64_t now, uint64_t cpu,
                           unsigned timed, uint64_t early)
{
    uint64_t delta = cpu > s->cpu_last_ns ? cpu - s->cpu_last_ns : 0;
    uint64_t period = 1000000000ull / sig_hz;
    uint64_t wall = rt_clock_ns(CLOCK_MONOTONIC);
    s->cpu_seen_ns = cpu;
    s->cpu_last_ns = cpu;
    r->cpu_acc += delta - early; /* `early` is in already, before the drain */
    r->timed_n += timed;
    r->silent = timed ? 0 : delta >= period / 2 ? r->silent + 1 : r->silent;
    if (r->silent >= SIG_TIMER_SILENT) {
        r->silent = 0;
        if (sig_blocks(s->tid, sigown_current())) {
            sig_timer_delete(r);
            sig_mark_masked(r);
        } else {
            r->timer_failed = 1;
            sig_threads_untimed++;
            sig_timer_delete(r);
        }
        sig_cpu_unsampled += r->cpu_acc;
        r->cpu_acc = 0;
        return;
    }
    uint64_t w = sig_wait_weight(r, cpu, period);
    /* Off the CPU since the last look: on a run queue, or asleep. A wait on the run
     * queue is counted in schedstat as it ends, when the thread gets a CPU: a thread
     * that did not run has nothing new there. */
    int64_t q = delta ? sig_queued_ns(s->tid) : -1;
    int64_t queued = 0;
    if (q >= 0 && r->queued_known && (uint64_t)q > r->queued_last)
        queued = (int64_t)((uint64_t)q - r->queued_last);
    if (q >= 0) {
        r->queued_last = (uint64_t)q;
        r->queued_known = 1;
    }
    if (r->wall_last) {
        int64_t off = (int64_t)(wall - r->wall_last) - (int64_t)delta;
        r->queued_acc += queued;
        r->asleep_acc += off - queued;
    }
    r->wall_last = wall;
    uint64_t pq = r->queued_acc > 0 ? (uint64_t)r->queued_acc / period : 0;
    r->queued_acc -= (int64_t)(pq * period);
    uint64_t ps = r->asleep_acc > 0 ? (uint64_t)r->asleep_acc / period : 0;
    r->asleep_acc -= (int64_t)(ps * period);
    r->wait_credit += pq * w;
    r->asleep_credit += ps * w;

    /* Owed samples of a thread asleep now take the stack of its call, those of its
     * waits on the run queue too; else its sleeps take the stack of its last one, and
     * its waits for a CPU a signal it takes as it resumes. */
    uint32_t nsl = (uint32_t)(r->asleep_credit >> SIG_W_SHIFT);
    uint32_t nq = (uint32_t)(r->wait_credit >> SIG_W_SHIFT);
    int asleep = nsl + nq && waitstack_sample_n(s, now, r->cpu_acc, nsl + nq) > 0;
    if (!asleep && delta) waitstack_episode_end(s);
    if (asleep) {
        r->cpu_acc = 0;
        r->last_wait = s->wait_stack;
        r->last_wait_thread1 = s->wait_thread1;
        r->asleep_credit &= SIG_W_FRACTION;
        r->wait_credit &= SIG_W_FRACTION;
        return;
    }
    if (nsl >= SIG_SLEEP_OWED) { /* its sleeps are too short to be found */
        r->asleep_credit &= SIG_W_FRACTION;
        if (r->last_wait >= 0)
            for (uint32_t k = 0; k < nsl; k++)
                sink_add_interned_to(sink_thread_of(s, r->last_wait_thread1), now, 0,
                                     SINK_WAITING, r->last_wait);
        else /* never found asleep: sampled where it resumes */
            nq += nsl;
    }
    if (!nq) return;
    r->wait_credit &= SIG_W_FRACTION;
    if (atomic_load_explicit(&r->pending, memory_order_acquire)) {
        r->owed += nq; /* it has not resumed to take the last one yet */
    } else {
        r->owed += nq - 1;
        sig_send(s, r, r->cpu_acc, cpu, SINK_WAITING);
        r->cpu_acc = 0;
    }
}

/* One tick: drain, release finished slots, sample every thread (sig_tick_timed, or a
 * signal to each thread that ran and a waiting sample of the others). The registry
 * stays locked, so nobody unregisters between the generation check and the tgkill. */
static void sig_tick(uint64_t now)
{
    registry_lock();
    if (sigown_poll()) sig_forget_in_flight(); /* the program took the signal */
    for (size_t i = registry_next_used(0); i < REGISTRY_SLOTS; i = registry_next_used(i + 1)) {
        struct reg_slot *s = registry_slot(i);
        uint32_t st = atomic_load(&s->state);
        struct sig_ring *r = sig_ring_of(i);
        if (st == REG_FREE || !r) continue;
        /* A thread with its timer: the CPU time it used since the last look goes to
         * the timer samples drained now. A thread that armed its own timer may have
         * taken its samples before the sampler first looked at it (a thread of 2 ms
         * that then waits): its CPU time came after them, and with none to follow was
         * counted as unsampled (7.1 of 20.0 s of 10,000 such threads in the profile). */
        uint64_t cpu = 0, early = 0;
        if (st == REG_ACTIVE && !r->masked && atomic_load(&r->tstate) == SIG_T_ARMED &&
            (cpu = rt_clock_ns(s->cpu_clock)) > s->cpu_last_ns) {
            early = cpu - s->cpu_last_ns;
            r->cpu_acc += early;
        }
        unsigned timed = sig_drain(s, r);
        if (st == REG_DRAINING) {
            sig_timer_delete(r);
            sig_account(s, r, atomic_load(&r->cpu_end));
            registry_release(s);
            continue;
        }
        if (!cpu) cpu = rt_clock_ns(s->cpu_clock);
        if (cpu == 0) { /* the thread is gone without unregistering */
            sig_timer_delete(r);
            continue;
        }
        if (!r->masked && sig_timer_ensure(s, r) == 0) {
            sig_tick_timed(s, r, now, cpu, timed, early);
            continue;
        }
        if (early) s->cpu_last_ns = cpu; /* its time is the timer samples' (cpu_acc) */
        uint64_t delta = cpu > s->cpu_last_ns ? cpu - s->cpu_last_ns : 0;
        int moved = cpu != s->cpu_seen_ns;
        s->cpu_seen_ns = cpu;
        if (r->masked) {
            /* It blocks the signal: waiting samples as usual, its CPU time counted
             * as unsampled, and now and then a look whether it still blocks it. */
            if (!(delta < sig_idle_ns && waitstack_sample(s, now, delta) != 0))
                sig_cpu_unsampled += delta;
            s->cpu_last_ns = cpu;
            if (++r->masked % SIG_MASK_PROBE == 0 && !sig_blocks(s->tid, sigown_current()))
                r->masked = 0;
            continue;
        }
        if (atomic_load_explicit(&r->pending, memory_order_acquire)) {
            /* Running with its signal pending: it blocks the signal (every signal,
             * often). Nothing is left pending for it to see; it is not signalled
             * again while it blocks it. */
            if (moved && ++r->stuck >= SIG_STUCK_TICKS && sig_blocks(s->tid, sigown_current())) {
                sig_mark_masked(r);
                sig_forget_in_flight();
                sig_cpu_unsampled += cpu - s->cpu_last_ns;
                s->cpu_last_ns = cpu;
                continue;
            }
            /* The last signal waits (blocked during a sleep, or the thread is not
             * scheduled); it will still give the sample of the tick it was sent for.
             * Meanwhile a thread that did not run since the last tick is sampled as
             * waiting; its CPU time is counted by its next on-CPU sample. */
            if (!moved && waitstack_sample(s, now, 0) == 0)
                r->owed++; /* runnable, not running: sampled when it resumes */
            continue;
        }
        /* A thread that ran little (or only to take our last signal), or that is inside
         * a wrapped blocking call, is asked about first: if it is blocked in a call now,
         * it is waiting and is not signalled (a server's worker asleep in epoll_wait). */
        if ((delta < sig_idle_ns || atomic_load_explicit(&s->in_call, memory_order_relaxed)) &&
            waitstack_sample(s, now, delta) != 0) {
            s->cpu_last_ns = cpu;
            continue;
        }
        waitstack_episode_end(s);
        sig_send(s, r, delta, cpu, delta ? SINK_ON_CPU : SINK_WAITING);
        s->cpu_last_ns = cpu;
    }
    registry_unlock();
}

static uint64_t sig_next_period(void)
{
    uint64_t period = 1000000000ull / sig_hz;
    sig_rng ^= sig_rng << 13;
    sig_rng ^= sig_rng >> 7;
    sig_rng ^= sig_rng << 17;
    /* uniform in [period * 0.7, period * 1.3] */
    uint64_t span = period * 2 * SIG_JITTER_PCT / 100;
    return period - span / 2 + (span ? sig_rng % (span + 1) : 0);
}

/* After the last tick: wait (bounded) for handlers of signals already sent. */
static void sig_final_drain(void)
{
    uint64_t deadline = rt_clock_ns(CLOCK_MONOTONIC) + SIG_FINAL_WAIT_NS;
    for (;;) {
        int busy = 0;
        registry_lock();
        for (size_t i = registry_next_used(0); i < REGISTRY_SLOTS; i = registry_next_used(i + 1)) {
            struct reg_slot *s = registry_slot(i);
            struct sig_ring *r = sig_ring_of(i);
            if (atomic_load(&s->state) == REG_FREE || !r) continue;
            sig_drain(s, r);
            busy |= atomic_load(&r->pending) && atomic_load(&s->state) == REG_ACTIVE;
        }
        if (!busy || rt_clock_ns(CLOCK_MONOTONIC) > deadline) {
            for (size_t i = 0; i < registry_slots_hi(); i++)
                if (sig_ring_of(i)) sig_timer_delete(sig_ring_of(i));
            for (size_t i = registry_next_used(0); i < REGISTRY_SLOTS;
                 i = registry_next_used(i + 1)) {
                struct reg_slot *s = registry_slot(i);
                struct sig_ring *r = sig_ring_of(i);
                if (!r) continue;
                if (atomic_load(&s->state) == REG_ACTIVE)
                    sig_account(s, r, rt_clock_ns(s->cpu_clock));
                else if (atomic_load(&s->state) == REG_DRAINING)
                    sig_account(s, r, atomic_load(&r->cpu_end));
            }
            registry_unlock();
            break;
        }
        registry_unlock();
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    atomic_store_explicit(&sig_running, 0, memory_order_release);
}

static void *sig_main(void *arg)
{
    (void)arg;
    /* The images, before the first tick: until they are registered, walks take the
     * frame pointer. Their tables are built once walks needed them (table.h). */
    int cfi = uw_mode_current() != UW_MODE_FP;
    if (cfi) uw_tables_refresh();
    uint64_t next = rt_clock_ns(CLOCK_MONOTONIC);
    uint64_t images_at = next + SIG_IMAGES_NS, tables_at = next + SIG_TABLES_NS;
    while (!atomic_load(&sig_stopping)) {
        next += sig_next_period();
        uint64_t now = rt_clock_ns(CLOCK_MONOTONIC);
        if (next + 1000000000ull / sig_hz < now)
            next = now; /* fell behind (suspended, overloaded): no burst of ticks */
        struct timespec ts = rt_timespec(next);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
        sig_tick(next);
        fiber_maps_refresh(0); /* one atomic load unless a walk missed a fiber's stack */
        if (next >= images_at) {
            maps_refresh_all();
            images_at = next + SIG_IMAGES_NS;
        }
        if (cfi && next >= tables_at) {
            uw_tables_refresh();
            tables_at = next + SIG_TABLES_NS;
        }
        if (cfi) uw_tables_build(0); /* one atomic load unless one is wanted */
        if (sig_cfg.on_period) sig_cfg.on_period(next);
    }
    sig_final_drain();
    maps_refresh_all();
    if (sig_cfg.on_stopped) sig_cfg.on_stopped();
    return NULL;
}

/* ============================ alternate stacks ============================ */

/* On the registering thread (`tid`): an alternate stack of the pool, unless the thread
 * has one already (one of its own, on which the handler then runs as SA_ONSTACK says;
 * or the pool's, kept from an earlier registration). Without one (the pool all taken),
 * the handler runs on the thread's stack. A stack is claimed in the thread's id, not
 * noted in thread-local memory, which glibc takes from each thread's stack; the pool
 * is filled from its start, so a lookup reads few entries. */
static void sig_alt_on(int tid)
{
    stack_t cur;
    if (sigaltstack(NULL, &cur) != 0 || !(cur.ss_flags & SS_DISABLE)) return;
    /* One it holds already (the program turned it off), or one left under its id by a
     * thread that ended without giving it back: an id is reused only once its thread
     * is gone. */
    int i = rtstack_held_by(&sig_alts, tid);
    if (i < 0 && (i = rtstack_claim(&sig_alts, 0, tid)) < 0) return;
    stack_t ss = {.ss_sp = sig_alts.s[i].lo, .ss_size = SIG_ALT_SIZE, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0) {
        rtstack_release(&sig_alts, i);
        return;
    }
    if (sig_alt_key_made) pthread_setspecific(sig_alt_key, (void *)1);
}

/* Thread `tid`'s stack back to the pool: at its unregistration, and at its end when it
 * outlived its session. Kept while the thread runs on it (a handler that
 * unregisters); given back too when the program put a stack of its own in its place. */
static void sig_alt_off(int tid)
{
    int i = rtstack_held_by(&sig_alts, tid);
    stack_t cur;
    if (i < 0 || sigaltstack(NULL, &cur) != 0) return;
    if (!(cur.ss_flags & SS_DISABLE) && cur.ss_sp == sig_alts.s[i].lo) {
        stack_t off = {.ss_flags = SS_DISABLE};
        if ((cur.ss_flags & SS_ONSTACK) || sigaltstack(&off, NULL) != 0) return;
    }
    rtstack_release(&sig_alts, i);
}

static void sig_alt_at_exit(void *v)
{
    (void)v;
    sig_alt_off((int)syscall(SYS_gettid));
}

/* Only the forking thread exists in the child, under another id: the stacks of the
 * others are free. */
static void sig_alt_after_fork_child(void)
{
    stack_t cur;
    int keep = sigaltstack(NULL, &cur) == 0 && !(cur.ss_flags & SS_DISABLE)
                   ? rtstack_index(&sig_alts, cur.ss_sp)
                   : -1;
    rtstack_after_fork_child(&sig_alts, keep, (int)syscall(SYS_gettid));
}

/* ============================ the interface ============================ */

/* KESTREL_PROFILE_TRIGGER=timers|sampler, read once when the library loads, before the
 * sessions' constructors. */
__attribute__((constructor(101))) static void sig_trigger_init(void)
{
    const char *v = getenv("KESTREL_PROFILE_TRIGGER");
    if (!v || !*v || !strcmp(v, "timers")) return;
    if (!strcmp(v, "sampler"))
        sig_sampler_only = 1;
    else
        rtsay("kestrel: KESTREL_PROFILE_TRIGGER=%s: not timers or sampler; using timers",
                v);
}

static int sig_check(const char **why)
{
    *why = NULL;
    return 0;
}

/* The rings of every slot ever used back to empty; the others are still as mapped
 * (zero), and left untouched: 1024 rings are thousands of pages. */
static void sig_rings_clear(void)
{
    rtblocks_clear(&sig_rings, registry_slots_hi());
    for (size_t k = 0; sig_spills && k < SIG_SPILL; k++)
        atomic_store(&sig_spills[k].state, SIG_SP_FREE);
}

static int sig_start(const struct engine_config *cfg)
{
    int added = registry_add_table(&sig_rings);
    if (added < 0) return added;
    if (!sig_spills) sig_spills = rtmem_alloc(sizeof(struct sig_spill) * SIG_SPILL);
    if (!sig_alt_key_made && pthread_key_create(&sig_alt_key, sig_alt_at_exit) == 0) {
        sig_alt_key_made = 1;
        pthread_atfork(NULL, NULL, sig_alt_after_fork_child);
    }
    sig_rings_clear();
    sig_cfg = *cfg;
    sig_pid = (int)syscall(SYS_getpid);
    sig_rng = cfg->start_mono_ns | 1;
    atomic_store(&sig_stopping, 0);

    sig_threads_masked = sig_cpu_unsampled = sig_threads_cpu = sig_threads_untimed = 0;
    sig_timer_errno = sig_send_errno = 0;
    sig_sends_refused = sig_refused_cpu = 0;
    losses_reset(&sig_dropped);
    int sig = sigown_claim(cfg->signo, sig_handler, sig_timers_quiet, cfg->start_mono_ns);
    if (sig < 0) return sig;
    sig_tick_hz = sig_kernel_tick_hz();
    sig_timers = !sig_sampler_only && sig_tick_hz && sig_timers_work();
    sig_hz = sig_timers && cfg->hz > sig_tick_hz ? sig_tick_hz : cfg->hz;
    /* 2^64 * hz / tick, 0 for all */
    sig_keep = sig_timers && sig_hz < sig_tick_hz
                   ? (uint64_t)((double)sig_hz / (double)sig_tick_hz * 18446744073709551616.0)
                   : 0;
    sig_idle_ns = 1000000000ull / sig_hz / 4;
    atomic_store_explicit(&sig_running, 1, memory_order_release);

    lifecycle_threads_coming();
    int r = rt_thread_spawn(&sig_thread, "kestrel-sampler", 256 * 1024, RT_OWN_FDS, sig_main,
                            NULL);
    if (r != 0) {
        atomic_store(&sig_running, 0);
        return -r;
    }
    return 0;
}

static void sig_stop(void)
{
    atomic_store(&sig_stopping, 1);
    pthread_join(sig_thread, NULL);
}

static int sig_thread_start(struct reg_slot *s)
{
    struct sig_ring *r = sig_ring_of(registry_slot_index(s));
    if (!r) return -ENOMEM;
    atomic_store(&r->pending, 0);
    r->owed = r->stuck = r->masked = r->masked_seen = r->timer_failed = r->silent = 0;
    r->cpu_acc = r->timed_n = r->wait_credit = 0;
    r->queued_last = 0;
    r->queued_acc = r->asleep_acc = 0;
    r->queued_known = 0;
    r->wall_last = r->asleep_credit = 0;
    r->last_wait = -1;
    r->last_wait_thread1 = 0;
    r->thin_rng = (uint64_t)s->tid * 0x9e3779b97f4a7c15ull | 1;
    r->cpu_start = s->cpu_last_ns; /* read at registration, just now */
    atomic_store(&r->cpu_end, 0);
    sig_alt_on(s->tid);
    return 0;
}

/* The sampler drains the ring before it frees the slot. */
static void sig_thread_stop(struct reg_slot *s)
{
    struct sig_ring *r = sig_ring_of(registry_slot_index(s));
    if (!r) return;
    sig_timer_delete(r); /* it runs on, unregistered: no more ticks of it */
    atomic_store(&r->cpu_end, rt_clock_ns(CLOCK_THREAD_CPUTIME_ID));
    sig_alt_off(s->tid);
}

/* The child has none of the parent's timers: their ids are forgotten, never deleted
 * (the child's own timers may get those numbers). */
static void sig_after_fork_child(void)
{
    atomic_store(&sig_running, 0);
    sig_rings_clear();
}

static unsigned sig_rate(void)
{
    return sig_hz;
}

/* The raw file's engine_stats and engine_notes: the signal used, what the program took,
 * and the CPU time no sample stands for. */
static size_t sig_stats(struct engine_stat *out, size_t max)
{
    const struct engine_stat all[] = {
        {"signal", (uint64_t)sigown_current()},  /* 0: none held at the end */
        {"signals_taken", sigown_taken()},        /* times the program took it */
        {"threads_masked", sig_threads_masked},   /* ran with the signal blocked */
        {"threads_cpu_ns", sig_threads_cpu},      /* the registered threads' CPU time */
        {"cpu_unsampled_ns", sig_cpu_unsampled}, /* ... that no sample stands for */
        {"tick_hz", sig_timers ? sig_tick_hz : 0}, /* the timers' limit; 0: no timers */
        {"threads_untimed", sig_threads_untimed},  /* signalled instead: no timer */
    };
    size_t n = sizeof all / sizeof all[0];
    n = n < max ? n : max;
    memcpy(out, all, n * sizeof *out);
    return n;
}

static size_t sig_notes(const char **out, size_t max)
{
    static char masked[200], cpu[256], rate[256], timers[256], sends[300], lost[420];
    size_t n = sigown_notes(out, max);
    if (n < max && sig_dropped.total) {
        char who[200];
        losses_text(&sig_dropped, who, sizeof who, 1, "samples");
        snprintf(lost, sizeof lost,
                 "%llu samples lost (%.2f%% of the samples): a thread's buffer of %d and the "
                 "threads' shared one of %d were full before the sampler thread drained "
                 "them (it waited for a CPU); %llu thread%s hit, most: %s",
                 (unsigned long long)sig_dropped.total,
                 100.0 * (double)sig_dropped.total /
                     (double)(sink_counts()->samples + sink_counts()->agg_samples +
                              sig_dropped.total),
                 SIG_RING, SIG_SPILL, (unsigned long long)sig_dropped.threads,
                 sig_dropped.threads == 1 ? "" : "s", who);
        out[n++] = lost;
    }
    /* Calls the kernel refused, by name: the cause of what follows from them. */
    if (n < max && sig_timer_errno && !sig_sampler_only) {
        snprintf(timers, sizeof timers,
                 "the kernel refused the threads' CPU-time timers (timer_create or "
                 "timer_settime: %s, a seccomp filter?): %s signalled by the sampler thread "
                 "instead, where a thread's CPU time since its last sample is charged to the "
                 "stack the signal finds",
                 strerrorname_np(sig_timer_errno) ? strerrorname_np(sig_timer_errno) : "error",
                 sig_timers ? "some threads were" : "threads were");
        out[n++] = timers;
    }
    if (n < max && sig_sends_refused) {
        snprintf(sends, sizeof sends,
                 "the kernel refused %llu of the engine's signals (rt_tgsigqueueinfo: %s, a "
                 "seccomp filter?): %.1f ms of CPU time has no sample",
                 (unsigned long long)sig_sends_refused,
                 strerrorname_np(sig_send_errno) ? strerrorname_np(sig_send_errno) : "error",
                 (double)sig_refused_cpu / 1e6);
        out[n++] = sends;
    }
    if (n < max && sig_timers && sig_hz < sig_cfg.hz) {
        snprintf(rate, sizeof rate,
                 "sampled at %u Hz, not the %u Hz asked for: the threads' CPU-time timers "
                 "fire at most once per kernel tick (%u Hz); the perf engine samples faster",
                 sig_hz, sig_cfg.hz, sig_tick_hz);
        out[n++] = rate;
    }
    uint64_t unexplained =
        sig_cpu_unsampled > sig_refused_cpu ? sig_cpu_unsampled - sig_refused_cpu : 0;
    if (n < max && sig_threads_cpu && unexplained > 10000000ull &&
        unexplained * 20 > sig_threads_cpu) {
        snprintf(cpu, sizeof cpu,
                 "%.1f ms of the threads' %.1f ms of CPU time (%.0f%%) has no sample: threads "
                 "that ended before the next tick, blocked the signal, or ran while no "
                 "signal was left",
                 (double)unexplained / 1e6, (double)sig_threads_cpu / 1e6,
                 100.0 * (double)unexplained / (double)(sig_threads_cpu ? sig_threads_cpu : 1));
        out[n++] = cpu;
    }
    if (sig_threads_masked && n < max) {
        snprintf(masked, sizeof masked,
                 "%llu thread%s ran with the signal engine's signal blocked: %.1f ms of CPU "
                 "time has no sample (the perf engine samples such threads)",
                 (unsigned long long)sig_threads_masked, sig_threads_masked == 1 ? "" : "s",
                 (double)sig_cpu_unsampled / 1e6);
        out[n++] = masked;
    }
    return n;
}

const struct engine engine_signal = {
    .name = "signal",
    .uses_signal = 1,
    .check = sig_check,
    .start = sig_start,
    .thread_start = sig_thread_start,
    .thread_stop = sig_thread_stop,
    .thread_begin = sig_thread_begin,
    .stop = sig_stop,
    .after_fork_child = sig_after_fork_child,
    .rate = sig_rate,
    .stats = sig_stats,
    .notes = sig_notes,
};
