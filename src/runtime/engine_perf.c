/* engine_perf — the signal-free CPU engine: the kernel samples, the runtime drains.
 *
 * Per registered thread, one self-monitoring perf event counts the thread's CPU time
 * (PERF_COUNT_SW_TASK_CLOCK) and, every 1/hz seconds of it, writes a sample with the
 * thread's user callchain into an mmap ring; the same event writes PERF_RECORD_SWITCH
 * records (context_switch), which give each thread's exact off-CPU intervals. Where
 * the kernel allows exclude_kernel=0 (privileged users), a second event samples every
 * context switch with the user callchain of the thread that leaves the CPU: the
 * blocking stack of each waiting episode, taken by the kernel at the moment it
 * begins. That event writes into the first one's ring (PERF_EVENT_IOC_SET_OUTPUT; the
 * kernel refuses to share a per-thread ring across threads, so rings stay per
 * thread). The engine's own thread drains every ring into the sink, periodically and
 * whenever a ring is half full, and turns off-CPU intervals into waiting samples on
 * the 1/hz grid. No signal is ever sent to the program.
 *
 * A thread preempted while runnable is off the CPU but not waiting: its interval gives
 * no samples. Without the switch event (unprivileged), a waiting episode still in
 * progress at a drain gets its stack as the signal engine's does (waitstack_sample:
 * /proc/self/task/<tid>/syscall and the thread's own stack memory); one that began
 * and ended between two drains is given the thread's last stack read that way (before
 * any, its last on-CPU stack), and its samples are counted in the raw file's
 * engine_stats.waits_guessed.
 *
 * Threads: check() and start() on the session's starting thread; thread_start() and
 * thread_stop() on the registering thread (open, then disable its events); everything
 * else, drains included, on the engine thread. Signal handlers: nothing here runs in
 * one. Inside malloc: nothing. */
#include "runtime/engine.h"
#include "lifecycle.h"
#include "runtime/heap_guard.h"
#include "runtime/images.h"
#include "runtime/interpose.h"
#include "runtime/perf_ring.h"
#include "runtime/rtmem.h"
#include "runtime/sink.h"
#include "runtime/unwind.h"
#include "runtime/waitstack.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Drain periods. Without switch samples, a waiting episode's stack is read from /proc
 * at a drain while it lasts, so drains come often. With them, a drain only empties
 * the rings, and each ring also wakes the engine thread when half full: the wake-ups,
 * tens of microseconds each here, are then few. */
#define DRAIN_MS 20
#define DRAIN_MS_SWITCH 500
#define IMAGES_NS 500000000ull /* between two image refreshes */
#define DRAINING_WAKE 32       /* exited threads whose events wait to be closed: drain now */
#define PEND_MAX 64            /* waiting intervals a thread keeps until its first stack */
#define RING_PAGES_MIN 8
#define RING_PAGES_MAX 128
#define SAMPLE_TYPE                                                                                \
    (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN)

/* ================================================================ per thread ==== */

/* The perf state of one registry slot. `ready` hands the slot from the registering
 * thread (which fills the rest, then sets it with release) to the engine thread (which
 * reads it with acquire, and clears it once it closed the events of a DRAINING slot).
 * Everything below `ready` belongs to the engine thread while ready is set. */
struct pslot {
    _Atomic int ready;       /* events open, ring mapped */
    _Atomic int stopped;     /* thread_stop() disabled the events, counted in draining */
    int fd;                  /* task clock: samples and SWITCH records; owns the ring */
    int fd_cs;               /* context-switch samples into fd's ring, or -1 */
    uint64_t id_cs;          /* the identifier of fd_cs's samples */
    void *map;               /* the ring: one metadata page + data pages */
    size_t map_len;          /* bytes mapped */
    struct perf_ring ring;   /* reader over map */
    int off_cpu;             /* a SWITCH_OUT not yet followed by its SWITCH_IN */
    int waiting;             /* that switch-out was voluntary: the thread blocked */
    uint64_t off_from;       /* first instant of the off-CPU interval not yet sampled */
    int guessed;             /* the episode's stack is a guess (no switch sample) */
    int32_t last_wait_stack; /* the last blocking stack read from /proc, -1 none */
    size_t npend;            /* waiting intervals kept until a stack is known */
    struct {
        uint64_t from, to;
    } pend[PEND_MAX];
    uint64_t cs_time; /* time of the last context-switch sample */
    uint16_t cs_n;    /* its frames */
    uint16_t last_n;  /* frames of the last on-CPU sample */
    uint64_t cs_frames[UNWIND_MAX_DEPTH];
    uint64_t last_frames[UNWIND_MAX_DEPTH];
};

struct perf_engine {
    struct engine_config cfg;
    uint64_t period_ns;                 /* sample period in the thread's CPU ns, = 1e9 / hz */
    int privileged;                     /* exclude_kernel=0 allowed: switch stacks, kernel time */
    size_t ring_pages;                  /* data pages per ring */
    long page;                          /* page size */
    struct pslot *slots;                /* REGISTRY_SLOTS entries, mmap'd */
    unsigned char *scratch;             /* PERF_RING_SCRATCH bytes for records that wrap */
    pthread_t thread;                   /* the engine thread */
    int epfd;                           /* epoll: the rings' watermark wake-ups and wakefd */
    int wakefd;                         /* eventfd: wakes the engine thread early */
    _Atomic int stopping;               /* stop() asked the engine thread to finish */
    _Atomic unsigned draining;          /* slots of exited threads not yet closed */
    _Atomic uint64_t threads_unsampled; /* threads whose events could not be opened */
    uint64_t bad_bytes;                 /* ring bytes skipped as malformed */
    uint64_t waits_guessed;             /* waiting samples given an earlier episode's stack */
};

static struct perf_engine pe;

static int perf_open(struct perf_event_attr *a, pid_t tid)
{
    return (int)syscall(SYS_perf_event_open, a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* The sampling event: the thread's CPU time, a user callchain every period. */
static void attr_clock(struct perf_event_attr *a, uint64_t period, int kernel)
{
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    a->type = PERF_TYPE_SOFTWARE;
    a->config = PERF_COUNT_SW_TASK_CLOCK;
    a->sample_period = period;
    a->sample_type = SAMPLE_TYPE;
    /* With kernel time counted, time spent in system calls is sampled too, at the
     * user call site, as a signal would see it on the way back. */
    a->exclude_kernel = !kernel;
    a->exclude_hv = 1;
    a->exclude_callchain_kernel = 1;
    a->sample_id_all = 1;
    a->use_clockid = 1;
    a->clockid = CLOCK_MONOTONIC; /* the sink's clock */
    a->context_switch = 1;
    a->disabled = 1;
}

/* The switch event: fires as the thread leaves the CPU, in the kernel, hence only
 * with exclude_kernel=0. */
static void attr_switch(struct perf_event_attr *a)
{
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    a->type = PERF_TYPE_SOFTWARE;
    a->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
    a->sample_period = 1;
    a->sample_type = SAMPLE_TYPE;
    a->exclude_hv = 1;
    a->exclude_callchain_kernel = 1;
    a->sample_id_all = 1;
    a->use_clockid = 1;
    a->clockid = CLOCK_MONOTONIC;
    a->disabled = 1;
}

static void pslot_close(struct pslot *p)
{
    /* (A fork child shares the parent's epoll set: it never reaches here with it.) */
    if (p->fd >= 0 && pe.epfd >= 0) epoll_ctl(pe.epfd, EPOLL_CTL_DEL, p->fd, NULL);
    if (p->map) munmap(p->map, p->map_len);
    if (p->fd_cs >= 0) close(p->fd_cs);
    if (p->fd >= 0) close(p->fd);
    p->map = NULL;
    p->fd = p->fd_cs = -1;
}

/* Opens the events of thread `tid` into p. 0 or -errno. */
static int pslot_open(struct pslot *p, pid_t tid)
{
    struct perf_event_attr a;
    p->fd = p->fd_cs = -1;
    p->map = NULL;
    attr_clock(&a, pe.period_ns, pe.privileged);
    p->fd = perf_open(&a, tid);
    if (p->fd < 0) return -errno;
    /* An unprivileged user's locked ring memory is limited (perf_event_mlock_kb, then
     * RLIMIT_MEMLOCK): a smaller ring drains at the same pace and loses more at worst. */
    int err = 0;
    for (size_t pages = pe.ring_pages; pages >= 1; pages /= 2) {
        p->map_len = (size_t)pe.page * (pages + 1);
        p->map = mmap(NULL, p->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
        if (p->map != MAP_FAILED) {
            perf_ring_init(&p->ring, p->map, (uint64_t)pe.page, pages, SAMPLE_TYPE, 0);
            break;
        }
        err = -errno;
        p->map = NULL;
    }
    if (!p->map) {
        pslot_close(p);
        return err;
    }
    if (pe.privileged) {
        attr_switch(&a);
        p->fd_cs = perf_open(&a, tid);
        if (p->fd_cs >= 0 && (ioctl(p->fd_cs, PERF_EVENT_IOC_SET_OUTPUT, p->fd) != 0 ||
                              ioctl(p->fd_cs, PERF_EVENT_IOC_ID, &p->id_cs) != 0)) {
            close(p->fd_cs);
            p->fd_cs = -1;
        }
    }
    atomic_store(&p->stopped, 0);
    p->off_cpu = p->waiting = p->guessed = 0;
    p->last_wait_stack = -1;
    p->npend = 0;
    p->cs_n = p->last_n = 0;
    p->cs_time = 0;
    if (ioctl(p->fd, PERF_EVENT_IOC_ENABLE, 0) != 0 ||
        (p->fd_cs >= 0 && ioctl(p->fd_cs, PERF_EVENT_IOC_ENABLE, 0) != 0)) {
        err = -errno;
        pslot_close(p);
        return err;
    }
    /* The kernel wakes pollers each time the ring fills past half (its default
     * watermark). Edge-triggered: the hang-up of an exited thread's event is reported
     * once, not at every wait. Without it, the periodic drains still run. */
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.u64 = 0};
    epoll_ctl(pe.epfd, EPOLL_CTL_ADD, p->fd, &ev);
    return 0;
}

/* ================================================================== draining ==== */

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Waiting samples for the part [from, to) of an off-CPU interval: one per point of
 * the 1/hz grid that starts at the session's start, as the signal engine's tick would
 * have taken them. The episode's stack is interned once, at its first sample. */
static uint64_t first_grid_point(uint64_t from)
{
    uint64_t t0 = pe.cfg.start_mono_ns, P = pe.period_ns;
    return from > t0 ? t0 + (from - t0 + P - 1) / P * P : t0;
}

static void emit_waiting(struct reg_slot *s, struct pslot *p, uint64_t from, uint64_t to)
{
    /* No blocking stack of this thread known yet: keep the interval until a later
     * drain reads one from /proc (its last on-CPU stack is a poorer guess). */
    if (p->guessed && p->last_wait_stack < 0 && p->npend < PEND_MAX) {
        p->pend[p->npend].from = from;
        p->pend[p->npend++].to = to;
        return;
    }
    for (uint64_t t = first_grid_point(from); t < to; t += pe.period_ns) {
        if (p->guessed) {
            pe.waits_guessed++;
            if (s->wait_stack < 0) s->wait_stack = p->last_wait_stack;
        }
        if (s->wait_stack >= 0) {
            sink_add_interned(s, t, 0, SINK_WAITING, s->wait_stack);
            continue;
        }
        const uint64_t *frames = p->guessed ? p->last_frames : p->cs_frames;
        uint16_t n = p->guessed ? p->last_n : p->cs_n;
        struct sink_sample ss = {.slot = s,
                                 .t_ns = t,
                                 .state = SINK_WAITING,
                                 .stop = UNWIND_NOT_WALKED,
                                 .nframes = n,
                                 .frames = frames};
        s->wait_stack = sink_add(&ss);
    }
}

/* The kept intervals, with the stack known now (empty if still none): a new episode,
 * then the in-progress one's stack back. */
static void flush_pending(struct reg_slot *s, struct pslot *p)
{
    int32_t keep = s->wait_stack;
    int guessed = p->guessed;
    size_t n = p->npend;
    p->npend = PEND_MAX; /* nothing is kept again while flushing */
    p->guessed = 1;
    for (size_t i = 0; i < n; i++) {
        s->wait_stack = -1;
        emit_waiting(s, p, p->pend[i].from, p->pend[i].to);
    }
    p->npend = 0;
    p->guessed = guessed;
    s->wait_stack = keep;
}

struct drain_ctx {
    struct reg_slot *s;
    struct pslot *p;
};

static void on_record(const struct perf_rec *r, void *arg)
{
    struct drain_ctx *c = arg;
    struct reg_slot *s = c->s;
    struct pslot *p = c->p;
    switch (r->kind) {
    case PERF_REC_SAMPLE:
        if (p->fd_cs >= 0 && r->id == p->id_cs) {
            p->cs_time = r->time;
            p->cs_n =
                (uint16_t)perf_callchain_user(r->ips, r->n_ips, p->cs_frames, UNWIND_MAX_DEPTH);
        } else {
            p->last_n =
                (uint16_t)perf_callchain_user(r->ips, r->n_ips, p->last_frames, UNWIND_MAX_DEPTH);
            struct sink_sample ss = {.slot = s,
                                     .t_ns = r->time,
                                     .cpu_ns = pe.period_ns,
                                     .state = SINK_ON_CPU,
                                     .stop = UNWIND_NOT_WALKED,
                                     .nframes = p->last_n,
                                     .frames = p->last_frames};
            sink_add(&ss);
        }
        break;
    case PERF_REC_SWITCH_OUT:
        p->off_cpu = 1;
        p->off_from = r->time;
        /* A preempted thread still wants the CPU: that is not a wait of the program. */
        p->waiting = !r->preempt;
        s->wait_stack = -1;
        /* The switch sample is written just before its SWITCH record; an older one
         * belongs to an earlier switch whose record was lost. */
        p->guessed = !(p->fd_cs >= 0 && p->cs_n && p->cs_time <= r->time &&
                       r->time - p->cs_time < pe.period_ns);
        break;
    case PERF_REC_SWITCH_IN:
        if (p->off_cpu && p->waiting) emit_waiting(s, p, p->off_from, r->time);
        p->off_cpu = 0;
        break;
    case PERF_REC_LOST:
        sink_drop(r->lost);
        break;
    case PERF_REC_THROTTLE:
    case PERF_REC_OTHER:
        break;
    }
}

/* Drains one thread's ring; a thread still blocked gets its waiting samples up to now. */
static void drain_slot(struct reg_slot *s, struct pslot *p, uint64_t now)
{
    struct drain_ctx c = {s, p};
    if (perf_ring_drain(&p->ring, on_record, &c, pe.scratch) < 0) {
        pe.bad_bytes += p->ring.bad;
        p->ring.bad = 0;
    }
    if (p->off_cpu && p->waiting) {
        /* Without the kernel's switch stack, a thread still blocked has its stack read
         * the signal engine's way, without waking it; waitstack_sample adds the
         * episode's first sample and leaves its interned stack for the rest. */
        uint64_t first = first_grid_point(p->off_from);
        if (p->guessed && s->wait_stack < 0 && first < now &&
            atomic_load(&s->state) == REG_ACTIVE && waitstack_sample(s, first, 0) == 1 &&
            s->wait_stack >= 0) {
            p->guessed = 0;
            p->last_wait_stack = s->wait_stack;
            p->off_from = first + 1;
            flush_pending(s, p);
        }
        emit_waiting(s, p, p->off_from, now);
        p->off_from = now > p->off_from ? now : p->off_from;
    }
}

/* final: the session ends, every kept interval goes out with what is known. */
static void drain_all(int final)
{
    uint64_t now = mono_ns();
    registry_lock();
    struct reg_slot *slots = registry_slots();
    for (size_t i = registry_next_used(0); i < REGISTRY_SLOTS; i = registry_next_used(i + 1)) {
        struct reg_slot *s = &slots[i];
        uint32_t st = atomic_load(&s->state);
        if (st == REG_FREE) continue;
        struct pslot *p = &pe.slots[i];
        int ready = atomic_load_explicit(&p->ready, memory_order_acquire);
        if (ready) drain_slot(s, p, now);
        if (ready && (final || st == REG_DRAINING)) flush_pending(s, p);
        if (st == REG_DRAINING) {
            if (atomic_load_explicit(&p->ready, memory_order_acquire)) {
                pslot_close(p);
                atomic_store_explicit(&p->ready, 0, memory_order_release);
                if (atomic_exchange(&p->stopped, 0)) atomic_fetch_sub(&pe.draining, 1);
            }
            registry_release(s);
        }
    }
    registry_unlock();
}

static void wake_engine(void)
{
    eventfd_write(pe.wakefd, 1);
}

static void *engine_main(void *arg)
{
    (void)arg;
    heap_ignore_enter(); /* for life: what this thread allocates is not the program's */
    const uint64_t period_ns = (pe.privileged ? DRAIN_MS_SWITCH : DRAIN_MS) * 1000000ull;
    uint64_t next = mono_ns() + period_ns, images_at = mono_ns() + IMAGES_NS;
    while (!atomic_load(&pe.stopping)) {
        struct epoll_event ev[8];
        uint64_t now = mono_ns();
        int ms = next > now ? (int)((next - now + 999999) / 1000000) : 0;
        int n = epoll_wait(pe.epfd, ev, 8, ms);
        for (int i = 0; i < n; i++) /* the counter only wakes; reset it */
            if (ev[i].data.u64 == 1) {
                eventfd_t v;
                eventfd_read(pe.wakefd, &v);
            }
        drain_all(0);
        now = mono_ns();
        if (now >= next) next = now + period_ns;
        if (now >= images_at) {
            images_refresh();
            images_at = now + IMAGES_NS;
        }
    }
    drain_all(1);
    images_refresh();
    if (pe.cfg.on_stopped) pe.cfg.on_stopped();
    return NULL;
}

/* ================================================================ interface ==== */

static int perf_check(const char **why)
{
    struct perf_event_attr a;
    attr_clock(&a, 1000000, 0);
    int fd = perf_open(&a, 0);
    if (fd < 0) {
        int e = errno;
        switch (e) {
        case EACCES:
        case EPERM:
            *why = "perf_event_open refused (EACCES/EPERM: perf_event_paranoid, or a "
                   "seccomp filter)";
            break;
        case ENOSYS:
            *why = "perf_event_open is not available (ENOSYS)";
            break;
        default:
            *why = "perf_event_open failed for a task-clock event";
            break;
        }
        return -e;
    }
    close(fd);
    return 0;
}

static void perf_close_fds(void)
{
    if (pe.wakefd >= 0) close(pe.wakefd);
    if (pe.epfd >= 0) close(pe.epfd);
    pe.wakefd = pe.epfd = -1;
}

static int perf_start(const struct engine_config *cfg)
{
    memset(&pe, 0, sizeof pe);
    pe.epfd = pe.wakefd = -1;
    pe.cfg = *cfg;
    pe.period_ns = 1000000000ull / (cfg->hz ? cfg->hz : 997);
    pe.page = sysconf(_SC_PAGESIZE);
    /* Room for about two short drain periods of deep-stacked samples at this rate;
     * past half of it, the ring wakes the engine thread. */
    uint64_t want = (uint64_t)cfg->hz * DRAIN_MS * 2 / 1000 * 512 / (uint64_t)pe.page;
    pe.ring_pages = RING_PAGES_MIN;
    while (pe.ring_pages < want && pe.ring_pages < RING_PAGES_MAX)
        pe.ring_pages *= 2;
    struct perf_event_attr a;
    attr_clock(&a, pe.period_ns, 1);
    int fd = perf_open(&a, 0);
    pe.privileged = fd >= 0;
    if (fd >= 0) close(fd);
    pe.slots = rtmem_alloc(sizeof(struct pslot) * REGISTRY_SLOTS);
    pe.scratch = rtmem_alloc(PERF_RING_SCRATCH);
    if (!pe.slots || !pe.scratch) {
        rtmem_free(pe.slots, sizeof(struct pslot) * REGISTRY_SLOTS);
        rtmem_free(pe.scratch, PERF_RING_SCRATCH);
        return -ENOMEM;
    }
    pe.epfd = epoll_create1(EPOLL_CLOEXEC);
    pe.wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 1};
    if (pe.epfd < 0 || pe.wakefd < 0 || epoll_ctl(pe.epfd, EPOLL_CTL_ADD, pe.wakefd, &ev) != 0) {
        int err = -errno;
        perf_close_fds();
        rtmem_free(pe.slots, sizeof(struct pslot) * REGISTRY_SLOTS);
        rtmem_free(pe.scratch, PERF_RING_SCRATCH);
        return err;
    }
    /* The engine thread is the runtime's own: made through the real pthread_create
     * (never registered) with every signal blocked. */
    lifecycle_threads_coming();
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, 256 * 1024);
    heap_ignore_enter(); /* glibc allocates inside pthread_create: not the program's */
    int rc = REAL(pthread_create)(&pe.thread, &at, engine_main, NULL);
    heap_ignore_leave();
    pthread_attr_destroy(&at);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0) pthread_setname_np(pe.thread, "kestrel-perf");
    if (rc != 0) {
        perf_close_fds();
        rtmem_free(pe.slots, sizeof(struct pslot) * REGISTRY_SLOTS);
        rtmem_free(pe.scratch, PERF_RING_SCRATCH);
        return -rc;
    }
    return 0;
}

static int perf_thread_start(struct reg_slot *s)
{
    struct pslot *p = &pe.slots[registry_slot_index(s)];
    int rc = pslot_open(p, s->tid);
    if (rc < 0) {
        atomic_fetch_add(&pe.threads_unsampled, 1);
        return rc;
    }
    atomic_store_explicit(&p->ready, 1, memory_order_release);
    return 0;
}

/* Stops the counting now; the engine thread drains what is left and closes. */
static void perf_thread_stop(struct reg_slot *s)
{
    struct pslot *p = &pe.slots[registry_slot_index(s)];
    if (!atomic_load_explicit(&p->ready, memory_order_acquire)) return;
    ioctl(p->fd, PERF_EVENT_IOC_DISABLE, 0);
    if (p->fd_cs >= 0) ioctl(p->fd_cs, PERF_EVENT_IOC_DISABLE, 0);
    /* Between drains, exited threads keep their descriptors and rings: past a few,
     * the engine thread is asked to close them now. */
    if (!atomic_exchange(&p->stopped, 1) && atomic_fetch_add(&pe.draining, 1) + 1 == DRAINING_WAKE)
        wake_engine();
}

static void perf_stop(void)
{
    atomic_store(&pe.stopping, 1);
    wake_engine();
    pthread_join(pe.thread, NULL);
    for (size_t i = 0; i < REGISTRY_SLOTS; i++)
        if (atomic_load(&pe.slots[i].ready)) {
            pslot_close(&pe.slots[i]);
            atomic_store(&pe.slots[i].ready, 0);
        }
    perf_close_fds();
}

/* Only this thread exists: the parent's rings are dropped unread. */
static void perf_after_fork_child(void)
{
    if (!pe.slots) return;
    perf_close_fds(); /* the epoll set is the parent's too: closed before any slot */
    for (size_t i = 0; i < REGISTRY_SLOTS; i++)
        if (atomic_load(&pe.slots[i].ready)) {
            pslot_close(&pe.slots[i]);
            atomic_store(&pe.slots[i].ready, 0);
        }
    rtmem_free(pe.slots, sizeof(struct pslot) * REGISTRY_SLOTS);
    rtmem_free(pe.scratch, PERF_RING_SCRATCH);
    pe.slots = NULL;
    pe.scratch = NULL;
}

/* The raw file's engine_stats: what this kernel allowed, and what was lost or guessed. */
static size_t perf_stats(struct engine_stat *out, size_t max)
{
    const struct engine_stat all[] = {
        {"switch_stacks", (uint64_t)pe.privileged}, /* the kernel sampled each switch */
        {"kernel_time", (uint64_t)pe.privileged},   /* time in system calls was sampled */
        {"ring_pages", pe.ring_pages},
        {"threads_unsampled", atomic_load(&pe.threads_unsampled)},
        {"waits_guessed", pe.waits_guessed},
        {"bad_ring_bytes", pe.bad_bytes},
    };
    size_t n = sizeof all / sizeof all[0];
    n = n < max ? n : max;
    memcpy(out, all, n * sizeof *out);
    return n;
}

const struct engine engine_perf = {
    .name = "perf",
    .check = perf_check,
    .start = perf_start,
    .thread_start = perf_thread_start,
    .thread_stop = perf_thread_stop,
    .stop = perf_stop,
    .after_fork_child = perf_after_fork_child,
    .stats = perf_stats,
};
