/* engine_perf — the signal-free CPU engine: the kernel samples, the runtime drains.
 *
 * Per registered thread, one self-monitoring perf event counts the thread's CPU time
 * (PERF_COUNT_SW_TASK_CLOCK) and, every 1/hz seconds of it, writes a sample with the
 * thread's user callchain into an mmap ring; the same event writes PERF_RECORD_SWITCH
 * records (context_switch), which give each thread's exact off-CPU intervals. Where
 * the kernel allows exclude_kernel=0 (privileged users), a second event samples every
 * context switch with the user callchain of the thread that leaves the CPU: the
 * blocking stack of each waiting episode, taken by the kernel at the moment it
 * begins. That event writes into the first one's ring (PERF_EVENT_IOC_SET_OUTPUT).
 *
 * Where the kernel has inherit_thread (5.13), the events are opened once, on the
 * thread that starts the session as it creates its first thread (until then it has
 * events of its own, whose ring starts small: most processes of a build never make a
 * thread, and the kernel clears every ring's pages), one per CPU, inherited by every
 * thread it (and its threads, and theirs) creates from then on, as `perf record` does for a command: one
 * ring per CPU, whatever the number of threads, and — what matters most — a switch
 * between two threads of the program leaves the events in place (the kernel swaps
 * two equivalent contexts), where per-thread events are scheduled out and in, timer
 * and all, at every switch (about 10 µs a switch in a VM here). The records of a ring
 * are demultiplexed by thread id, and the rings merged in time order: a thread that
 * blocks on one CPU wakes up on another. A thread registered without inheriting them
 * (one that existed before the session and registers itself) gets events of its own,
 * with a ring of its own, as every thread does where inherit_thread is missing.
 * Threads created by covered threads but never registered (a raw clone, the
 * runtime's own) are sampled by the kernel and their samples dropped, counted. The
 * price, perf record's too: a CPU's sampling clock runs on across two swapped
 * threads, so a thread's sample count is its CPU time over the period only on
 * average; totals are exact (docs/perf-engine.md has the figures).
 *
 * With CFI unwinding (KESTREL_PROFILE_UNWIND other than fp), samples carry the user
 * registers and a copy of the top of the user stack instead of the kernel's callchain,
 * and the engine thread walks each copy as it drains it (unwind/step.h), going on over
 * the thread's stack past the copy's end where its frames are still there
 * (unwind/resume.h); a sample on a fiber's stack is walked within it (fibers.h).
 *
 * The engine's own thread drains every ring into the sink, periodically and whenever
 * a ring is half full, and turns off-CPU intervals into waiting samples on the 1/hz
 * grid. No signal is ever sent to the program.
 *
 * A thread preempted while runnable is off the CPU but not waiting: its interval gives
 * no samples. Without the switch event (unprivileged), a waiting episode still in
 * progress at a drain gets its stack as the signal engine's does (waitstack_sample:
 * /proc/self/task/<tid>/syscall and the thread's own stack memory); one that began
 * and ended between two drains is given the thread's last stack read that way (before
 * any, its last on-CPU stack), and its samples are counted in the raw file's
 * engine_stats.waits_guessed.
 *
 * Unprivileged, the kernel forces exclude_kernel: a period that ends while the thread
 * is in a system call gives no sample, and a system-call-heavy program loses most of
 * its CPU time. At each drain, the CPU time of a thread's clock that its samples do not
 * stand for (past one period and what is still on its way) is charged to the thread's
 * last on-CPU stack, one sample per period: the total is the thread's CPU time, the
 * stack a guess (engine_stats.kernel_samples_guessed; `auto` takes the signal engine
 * there instead).
 *
 * Threads: check() and start() on the session's starting thread; thread_start() and
 * thread_stop() on the registering thread (open, then disable its events);
 * thread_creating() and thread_created() on a creating and a created thread (whether
 * the new thread inherits the per-CPU events; the starting thread opens them at its
 * first thread and moves onto them); everything else, drains included, on
 * the engine thread. Signal handlers: nothing here runs in one. Inside malloc:
 * nothing. */
#include "runtime/arch/arch.h"
#include "runtime/cpu/engine.h"
#include "runtime/fibers.h"
#include "runtime/lifecycle.h"
#include "runtime/rtthread.h"
#include "runtime/images.h"
#include "runtime/maps.h"
#include "runtime/interpose.h"
#include "runtime/cpu/perf_ring.h"
#include "runtime/cpu/losses.h"
#include "runtime/rtfd.h"
#include "runtime/rtown.h"
#include "runtime/rtmem.h"
#include "runtime/rtblocks.h"
#include "runtime/cpu/sink.h"
#include "runtime/unwind/unwind.h"
#include "runtime/cpu/waitstack.h"
#include "runtime/rtclock.h"
#include "runtime/unwind/resume.h"
#include "runtime/unwind/step.h"
#include "runtime/unwind/table.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
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
/* The session's starting thread's ring, until it has held SMALL_WAKE records of the
 * largest size (samples with stack copies, or switch samples): room for SMALL_ROOM in
 * all, the rest while the engine thread comes to grow it. */
#define SMALL_WAKE 4
#define SMALL_ROOM 15
#define EV_SMALL 1    /* events_open: a ring that starts small, to grow */
#define EV_DISABLED 2 /* ... left disabled */
/* Per-CPU rings are merged in time order up to this long before the drain began: a
 * record the kernel stamped earlier can still be on its way into a ring. */
#define CUT_NS 2000000ull
#define TIDMAP (REGISTRY_SLOTS * 2) /* tid -> slot, open addressing: at most half full */
#define SAMPLE_TYPE                                                                                \
    (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN)
/* With CFI unwinding, the kernel copies the user registers and the top of the user
 * stack at each sample instead of walking frame pointers; the engine thread walks the
 * copy as it drains (unwind/step.h) and the copy goes no further. The size is what
 * the stacks of the programs measured need (docs/unwind.md); a walk that reaches the
 * copy's end before the thread's top is counted (`stacks_copy_short`). */
#define SAMPLE_TYPE_CFI                                                                            \
    (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER |         \
     PERF_SAMPLE_STACK_USER)
/* The copy: the most the kernel takes (a record's size is 16 bits): clang's parser
 * stacks are 20-130 KiB deep, and the part past a copy changes before the drain in one
 * walk of five (a 16 KiB copy left 19% of clang's samples cut, a 64 KiB one 1%). Where
 * the rings' locked memory is limited (no CAP_IPC_LOCK), the copy is the largest whose
 * rings of RING_RECORDS_MIN copies each fit in what this process may lock
 * (perf_lock_budget), down to 16 KiB. */
#define STACK_COPY_MAX 65000
#define STACK_COPY_LIMITED 16384
#define RING_RECORDS_MIN 16
/* A switch sample's copy: a blocked thread's stack, walked on past the copy over the
 * thread's stack where its frames are still there (unwind/resume.h). The kernel writes
 * the whole copy at every context switch, a program blocking tens of thousands of times
 * a second: at 65000 bytes a 4 MiB ring held 64 switches, and while the engine thread
 * waited for a CPU the kernel lost 90% of them, their waits' stacks guessed (a socket-pair
 * server as root: 2,100-2,900 of 3,500 waiting samples); at 8 KiB (perf record's dwarf
 * default) nearly none are lost, and the program pays an eighth of the copying. */
#define STACK_COPY_SWITCH 8192
/* Past the copy, the walk goes on over the thread's stack as it is at the drain
 * (unwind/resume.h), read in pieces of this size. */
#define STACK_READ (64u << 10)
/* The frame pointer, stack pointer, pc (and link register) of arch.h. */
#define REGS_MASK ARCH_PERF_REGS_MASK
#define RING_PAGES_MAX_CFI 1024 /* 4 MiB: 64 of the largest copies */
#define CPU_RING_FP_S 4         /* seconds of frame-pointer samples a CPU's ring holds */

/* ================================================================ per thread ==== */

/* A task-clock event, the switch event writing into its ring when privileged, and
 * the ring: a thread's own, or one CPU's for the threads that inherit them. */
struct pevents {
    struct rtfd fd;        /* task clock: samples and SWITCH records; owns the ring */
    struct rtfd fd_cs;     /* context-switch samples into fd's ring, or fd -1 */
    uint64_t id_cs;        /* the identifier of fd_cs's samples */
    void *map;             /* the ring: one metadata page + data pages */
    size_t map_len;        /* bytes mapped */
    size_t pages;          /* its data pages */
    int small;             /* a first ring, small, that ring_grow() replaces */
    struct perf_ring ring; /* reader over map */
    /* A CPU's switch samples have a ring of their own: a program that blocks tens of
     * thousands of times a second fills a ring with them (each with its stack copy),
     * and sharing one, the kernel then lost the on-CPU samples with them. */
    void *map_cs;             /* NULL: fd_cs writes into fd's ring */
    size_t map_cs_len;
    struct perf_ring ring_cs;
};

/* The perf state of one registry slot. `ready` hands the slot from the registering
 * thread (which fills the rest, then sets it with release) to the engine thread (which
 * reads it with acquire, and clears it once it closed the events of a DRAINING slot).
 * Everything below `ready` belongs to the engine thread while ready is set. */
struct pslot {
    _Atomic int ready;        /* events open, ring mapped */
    _Atomic int stopped;      /* thread_stop() disabled the events, counted in draining */
    int inherited;            /* sampled by the per-CPU events: no fd, no ring of its own */
    _Atomic int moving;       /* its own events disabled at move_ns, the per-CPU events
                                 sample it from then: the engine thread drains and closes
                                 its own ring, then makes it inherited */
    uint64_t move_ns;
    _Atomic int evlock;       /* held while the events' descriptors are used or replaced
                                 from two threads: the thread (stop, move), and the engine
                                 thread (ring_grow) */
    uint64_t start_ns;        /* inherited: its records count from here ... */
    _Atomic uint64_t stop_ns; /* ... to here (UINT64_MAX while registered) */
    int has_cs;               /* switch samples arrive for this thread */
    struct pevents ev;        /* its own events (not inherited) */
    int off_cpu;              /* a SWITCH_OUT not yet followed by its SWITCH_IN */
    int waiting;              /* that switch-out was voluntary: the thread blocked */
    uint64_t off_from;        /* first instant of the off-CPU interval not yet sampled */
    int guessed;              /* the episode's stack is a guess (no switch sample) */
    int cs_own;               /* the last switch sample was in kestrel's own work */
    int own_wait;             /* the thread is off the CPU inside kestrel's own work */
    int32_t last_wait_stack;  /* the last blocking stack read from /proc, -1 none */
    uint32_t last_wait_thread1; /* its thread record + 1 (a fiber's, fibers.h), 0 own */
    uint32_t cs_thread1;      /* the same, of the last switch sample's stack */
    uint32_t last_thread1;    /* the same, of the last on-CPU sample's stack */
    size_t npend;             /* waiting intervals kept until a stack is known */
    struct {
        uint64_t from, to;
    } pend[PEND_MAX];
    uint64_t cpu_start_ns;        /* its CPU clock at registration ... */
    _Atomic uint64_t cpu_end_ns;  /* ... and when it stopped (0 while registered) */
    uint64_t samples;             /* on-CPU samples it was given */
    uint64_t filled;              /* ... of them, for time no kernel sample stood for */
    /* Privileged: the CPU time a context switch costs the thread outside its task clock
     * (the kernel stops and starts the sampling timer there), charged at each switch
     * sample to its stack, at the rate measured over the switches so far. */
    uint64_t switches;            /* switch samples with a stack */
    uint64_t switch_ns;           /* CPU ns a switch costs outside the clock, measured */
    uint64_t switch_debt;         /* ns accrued at switches, not yet a whole period */
    uint64_t cpu_seen;            /* its CPU clock at the drain's start, 0: not read */
    uint64_t cs_time; /* time of the last context-switch sample */
    uint16_t cs_n;    /* its frames */
    uint16_t last_n;  /* frames of the last on-CPU sample */
    uint8_t cs_stop, last_stop; /* how the kernel's walks of the two ended */
    uint64_t cs_frames[UNWIND_MAX_DEPTH];
    uint64_t last_frames[UNWIND_MAX_DEPTH];
};

/* The events of one CPU, inherited by the covered threads: the same pair as a
 * thread's own, and the ring both write into. */
struct pcpu {
    struct pevents ev;
    uint64_t next_time; /* the time of the record at the ring's cursor, during a merge */
    int has_next;       /* ... there is one (never, for a CPU without events) */
    uint64_t next_time_cs; /* the same for its switch samples' ring */
    int has_next_cs;
};

struct perf_engine {
    struct engine_config cfg;
    uint64_t period_ns;                 /* sample period in the thread's CPU ns, = 1e9 / hz */
    int privileged;                     /* exclude_kernel=0 allowed: switch stacks, kernel time */
    size_t ring_pages;                  /* data pages per ring */
    size_t ring_pages_most;             /* the most pages of any ring (ring_pages_cap) */
    long page;                          /* page size */
    unsigned char *scratch;             /* PERF_RING_SCRATCH bytes for records that wrap */
    pthread_t thread;                   /* the engine thread */
    int thread_up;                      /* ... is running: joined at stop */
    int own_table;                      /* it has a descriptor table of its own (below) */
    _Atomic int handoff;                /* ... and ends, for one that shares the program's */
    struct rtfd epfd;                   /* epoll: the rings' watermark wake-ups and wakefd */
    struct rtfd wakefd;                 /* eventfd: wakes the engine thread early */
    _Atomic int stopping;               /* stop() asked the engine thread to finish */
    _Atomic unsigned draining;          /* slots of exited threads not yet closed */
    _Atomic uint64_t threads_unsampled; /* threads whose events could not be opened */
    uint64_t bad_bytes;                 /* ring bytes skipped as malformed */
    uint64_t waits_guessed;             /* waiting samples given an earlier episode's stack */
    uint32_t gen;                       /* this session's number, never 0 */
    _Atomic int cpus_ready;             /* per-CPU events open: the engine thread drains them */
    int cpus_cs;                        /* ... with switch samples */
    size_t ncpu;                        /* entries of cpus (every configured CPU), 0: none */
    size_t cpu_ring_pages;              /* data pages per CPU's ring */
    struct pcpu *cpus;                  /* fd -1 for a CPU that is offline */
    size_t cpus_len;                    /* bytes of cpus */
    uint64_t unregistered;              /* samples of threads not registered, dropped */
    uint64_t threads_cpu_ns;            /* CPU time of the registrations that ended ... */
    uint64_t threads_sampled_ns;        /* ... and what their on-CPU samples stand for */
    uint64_t threads_ended;             /* those registrations */
    uint64_t threads_no_sample;         /* ... that used CPU and got no sample */
    uint64_t kernel_filled;             /* samples for CPU time the kernel did not sample */
    uint64_t switch_filled;             /* privileged: samples for switches' time outside the
                                           clock, at the switch samples' stacks */
    uint64_t lost_records;              /* records the kernel lost (a ring was full) */
    uint64_t throttles;                 /* times the kernel throttled an event's sampling */
    uint64_t cs_lost;                   /* switch samples the kernel lost (ring full) */
    uint64_t cs_seen;                   /* ... and those read, of registered threads */
    struct losses unsampled;            /* CPU ns without samples, by thread record */
    int cfi;                            /* samples carry registers and a stack copy */
    uint64_t sample_type;               /* SAMPLE_TYPE or SAMPLE_TYPE_CFI */
    uint64_t copy_short;                /* walks that reached the copy's end, not the top */
    uint64_t copy_bytes;                /* bytes of stack the kernel copied, in all */
    uint64_t copies;                    /* samples with a copy */
    uint64_t depth_max;                 /* the deepest stack seen: thread's top - sp */
    uint32_t copy_size;                 /* bytes of stack the kernel copies a sample */
    struct uw_resume_stats resumed;     /* walks that went on past their copy */
    void *read_buf;                     /* 2 * STACK_READ bytes for them, or NULL */
    uint32_t *tm_tid;                   /* TIDMAP tids (0 empty) ... */
    uint16_t *tm_slot;                  /* ... and their slots */
    int cpus_tried;                     /* the per-CPU events were asked for */
    pthread_t starter;                  /* the thread that started the session: it opens the
                                           per-CPU events when it first creates a thread (not
                                           a thread-local: a thread's static TLS is taken from
                                           its stack, and programs run threads of 16 KiB) */
    uint64_t rings_grown;               /* small rings that grew to ring_pages */
    size_t small_pages;                 /* data pages of a ring that starts small, 0: none */
    size_t cpu_ring_cap;                /* the most data pages a CPU's ring may have where
                                           locked memory is limited (SIZE_MAX: not) */
    uint32_t small_wake;                /* ... grown once it held this many bytes */
};

static struct perf_engine pe;
/* The threads' state, one per registry slot, mapped a block at a time as threads
 * register (registry_add_table). No signal handler reads it: a fork child unmaps it. */
RTBLOCKS(pe_slots, struct pslot, REGISTRY_SLOTS, 64);

/* Slot i's state; NULL only for a slot no thread took while this engine ran. */
static struct pslot *ps(size_t i)
{
    return rtblocks_at(&pe_slots, i);
}
static uint32_t pe_sessions;         /* sessions so far: the next one's gen */
static __thread uint32_t pe_covered; /* the gen whose per-CPU events this thread inherits:
                                        pe.gen when this thread is sampled through them */


static uint64_t thread_cpu_ns(clockid_t c)
{
    struct timespec ts;
    if (clock_gettime(c, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int perf_open(struct perf_event_attr *a, pid_t tid, int cpu)
{
    return (int)syscall(SYS_perf_event_open, a, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* The sampling event: the thread's CPU time, a user callchain every period. */
static void attr_clock(struct perf_event_attr *a, uint64_t period, int kernel, int inherit)
{
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    a->type = PERF_TYPE_SOFTWARE;
    a->config = PERF_COUNT_SW_TASK_CLOCK;
    a->sample_period = period;
    a->sample_type = pe.sample_type;
    if (pe.cfi) {
        a->sample_regs_user = REGS_MASK;
        a->sample_stack_user = pe.copy_size;
    }
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
    a->inherit = a->inherit_thread = (unsigned)inherit; /* threads only, never a fork child */
}

static uint32_t switch_copy_size(void)
{
    return pe.copy_size < STACK_COPY_SWITCH ? pe.copy_size : STACK_COPY_SWITCH;
}

/* The switch event: fires as the thread leaves the CPU, in the kernel, hence only
 * with exclude_kernel=0. */
static void attr_switch(struct perf_event_attr *a, int inherit)
{
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    a->type = PERF_TYPE_SOFTWARE;
    a->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
    a->sample_period = 1;
    a->sample_type = pe.sample_type;
    if (pe.cfi) {
        a->sample_regs_user = REGS_MASK;
        a->sample_stack_user = switch_copy_size();
    }
    a->exclude_hv = 1;
    a->exclude_callchain_kernel = 1;
    a->sample_id_all = 1;
    a->use_clockid = 1;
    a->clockid = CLOCK_MONOTONIC;
    a->disabled = 1;
    a->inherit = a->inherit_thread = (unsigned)inherit;
}

/* A descriptor the program closed or replaced is left alone (rtfd.h); the ring's
 * mapping holds the event on its own until it is unmapped. */
static void events_close(struct pevents *e)
{
    /* (A fork child shares the parent's epoll set: it never reaches here with it.) */
    if (e->fd.fd >= 0 && rtfd_ok(&pe.epfd) && rtfd_ok(&e->fd))
        epoll_ctl(pe.epfd.fd, EPOLL_CTL_DEL, e->fd.fd, NULL);
    if (e->map) munmap(e->map, e->map_len);
    if (e->map_cs) munmap(e->map_cs, e->map_cs_len);
    e->map_cs = NULL;
    rtfd_close(&e->fd_cs);
    rtfd_close(&e->fd);
    e->map = NULL;
}

/* A CPU's switch event's own ring, as large as its clock's (smaller where locked
 * memory is short). 0 or -1. */
static int cs_ring_map(struct pevents *e, size_t ring_pages)
{
    for (size_t pages = ring_pages; pages >= 1; pages /= 2) {
        e->map_cs_len = (size_t)pe.page * (pages + 1);
        e->map_cs = mmap(NULL, e->map_cs_len, PROT_READ | PROT_WRITE, MAP_SHARED, e->fd_cs.fd, 0);
        if (e->map_cs != MAP_FAILED) {
            perf_ring_init(&e->ring_cs, e->map_cs, (uint64_t)pe.page, pages, pe.sample_type,
                           pe.cfi ? REGS_MASK : 0);
            struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.u64 = 0};
            if (rtfd_ok(&pe.epfd)) epoll_ctl(pe.epfd.fd, EPOLL_CTL_ADD, e->fd_cs.fd, &ev);
            return 0;
        }
    }
    e->map_cs = NULL;
    return -1;
}

/* Opens, maps and enables the events of thread `tid` (0: the caller) on `cpu` (-1:
 * any), inherited by the threads it creates or not. 0 or -errno. */
static int events_open(struct pevents *e, pid_t tid, int cpu, int inherit, size_t ring_pages,
                       int flags)
{
    struct perf_event_attr a;
    e->fd.fd = e->fd_cs.fd = -1;
    e->map = e->map_cs = NULL;
    e->small = (flags & EV_SMALL) && pe.small_pages && cpu < 0;
    if (e->small) ring_pages = pe.small_pages;
    attr_clock(&a, pe.period_ns, pe.privileged, inherit);
    int fd = perf_open(&a, tid, cpu);
    if (fd < 0) return -errno;
    int err = rtfd_adopt(&e->fd, fd, 1);
    if (err < 0) return err;
    /* A thread's own ring can start small (a process of a few ms fills none of a
     * full one, and the kernel clears every page mapped): the engine thread replaces
     * it once it has held pe.small_wake bytes (ring_grow). An unprivileged user's
     * locked ring memory is limited (perf_event_mlock_kb, then RLIMIT_MEMLOCK): a
     * smaller ring drains at the same pace and loses more at worst. */
    err = 0;
    for (size_t pages = ring_pages; pages >= 1; pages /= 2) {
        e->map_len = (size_t)pe.page * (pages + 1);
        e->map = mmap(NULL, e->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, e->fd.fd, 0);
        if (e->map != MAP_FAILED) {
            e->pages = pages;
            perf_ring_init(&e->ring, e->map, (uint64_t)pe.page, pages, pe.sample_type,
                           pe.cfi ? REGS_MASK : 0);
            break;
        }
        err = -errno;
        e->map = NULL;
    }
    if (!e->map) {
        events_close(e);
        return err;
    }
    if (pe.privileged) {
        attr_switch(&a, inherit);
        if (rtfd_adopt(&e->fd_cs, perf_open(&a, tid, cpu), 1) >= 0 &&
            ((cpu >= 0 ? cs_ring_map(e, ring_pages) : ioctl(e->fd_cs.fd, PERF_EVENT_IOC_SET_OUTPUT,
                                                            e->fd.fd)) != 0 ||
             ioctl(e->fd_cs.fd, PERF_EVENT_IOC_ID, &e->id_cs) != 0))
            rtfd_close(&e->fd_cs);
    }
    if (flags & EV_DISABLED) goto added;
    if (ioctl(e->fd.fd, PERF_EVENT_IOC_ENABLE, 0) != 0 ||
        (e->fd_cs.fd >= 0 && ioctl(e->fd_cs.fd, PERF_EVENT_IOC_ENABLE, 0) != 0)) {
        err = -errno;
        events_close(e);
        return err;
    }
    /* The kernel wakes pollers each time the ring fills past half (its default
     * watermark). Edge-triggered: the hang-up of an exited thread's event is reported
     * once, not at every wait. Without it, the periodic drains still run. */
added:;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.u64 = 0};
    if (rtfd_ok(&pe.epfd)) epoll_ctl(pe.epfd.fd, EPOLL_CTL_ADD, e->fd.fd, &ev);
    return 0;
}

static void slot_lock(struct pslot *p)
{
    while (atomic_exchange_explicit(&p->evlock, 1, memory_order_acquire))
        sched_yield();
}

static void slot_unlock(struct pslot *p)
{
    atomic_store_explicit(&p->evlock, 0, memory_order_release);
}

static int events_ioctl(struct pevents *e, unsigned long req)
{
    int reached = rtfd_ok(&e->fd) && ioctl(e->fd.fd, req, 0) == 0;
    if (e->fd_cs.fd >= 0 && rtfd_ok(&e->fd_cs)) ioctl(e->fd_cs.fd, req, 0);
    return reached;
}

/* A small first ring that held pe.small_wake bytes is replaced, with its events: new
 * ones are opened with a ring of ring_pages, the old ones disabled, the new enabled
 * (a few microseconds unsampled), the old ring read to its end and closed. An event
 * cannot write into another ring once it has mapped its own, and an event whose only
 * holder is its descriptor would end with it if the program closed it (a mapping
 * holds it). On the engine thread, after the slot's drain, the old ring read with
 * the same `ctx`; on failure the small ring stays. */
static void count_bad(struct perf_ring *r);

static void ring_grow(struct pslot *p, pid_t tid, perf_ring_fn fn, void *ctx)
{
    struct pevents *e = &p->ev;
    struct perf_event_mmap_page *m = e->map;
    if (!e->small || !m || __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE) < pe.small_wake)
        return;
    e->small = 0; /* once, whatever comes */
    struct pevents n;
    if (events_open(&n, tid, -1, 0, pe.ring_pages, EV_DISABLED) != 0) return;
    slot_lock(p);
    if (atomic_load(&p->cpu_end_ns) || atomic_load(&p->moving)) { /* stopped, moved */
        slot_unlock(p);
        events_close(&n);
        return;
    }
    events_ioctl(e, PERF_EVENT_IOC_DISABLE);
    struct pevents old = *e;
    *e = n;
    events_ioctl(e, PERF_EVENT_IOC_ENABLE);
    slot_unlock(p);
    perf_ring_drain(&old.ring, fn, ctx, pe.scratch);
    count_bad(&old.ring);
    events_close(&old);
    pe.rings_grown++;
}

/* A registration's state, before its first record. */
static void pslot_reset(struct pslot *p, int inherited, int has_cs)
{
    atomic_store(&p->stopped, 0);
    p->inherited = inherited;
    p->has_cs = has_cs;
    p->start_ns = rt_clock_ns(CLOCK_MONOTONIC);
    p->stop_ns = UINT64_MAX;
    p->off_cpu = p->waiting = p->guessed = 0;
    p->last_wait_stack = -1;
    p->last_wait_thread1 = p->cs_thread1 = p->last_thread1 = 0;
    p->npend = 0;
    p->cs_n = p->last_n = 0;
    p->cs_time = 0;
    p->cpu_start_ns = thread_cpu_ns(CLOCK_THREAD_CPUTIME_ID); /* on the thread itself */
    atomic_store(&p->cpu_end_ns, 0);
    p->samples = 0;
    p->filled = 0;
    p->switches = p->switch_ns = p->switch_debt = p->cpu_seen = 0;
}

/* A registration's CPU time against its samples. The kernel samples a thread's CPU time
 * in whole periods, each event's count starting afresh in a new thread: the part of the
 * last period a thread used before it ended is never sampled, which is all of the CPU
 * time of a thread shorter than one period. Per thread the inherited clock can give a
 * thread a period another one began; the sums are exact. */
static void account_cpu(const struct reg_slot *s, struct pslot *p, uint64_t end_ns)
{
    uint64_t cpu = end_ns > p->cpu_start_ns ? end_ns - p->cpu_start_ns : 0;
    /* Past one period (the part of its last one every thread leaves unsampled). */
    uint64_t sampled = p->samples * pe.period_ns;
    if (cpu > sampled + pe.period_ns) losses_add(&pe.unsampled, s->thread_index, cpu - sampled);
    pe.threads_cpu_ns += cpu;
    pe.threads_sampled_ns += p->samples * pe.period_ns;
    pe.threads_ended++;
    pe.threads_no_sample += cpu && !p->samples;
}

/* One on-CPU sample at the last switch sample's stack, for time a switch cost. */
static void switch_sample(struct reg_slot *s, struct pslot *p, uint64_t t_ns)
{
    struct sink_sample ss = {.slot = s,
                             .thread1 = p->cs_thread1,
                             .t_ns = t_ns,
                             .cpu_ns = pe.period_ns,
                             .state = SINK_ON_CPU,
                             .stop = p->cs_stop,
                             .nframes = p->cs_n,
                             .frames = p->cs_frames};
    sink_add(&ss);
    p->samples++;
    p->filled++;
    pe.switch_filled++;
}

/* A switch sample with its stack: the thread is in the kernel's context switch, whose
 * cost to the thread's CPU clock the task clock does not see in part (the kernel
 * stops the event's timer before and starts it after; in a virtual machine, programming
 * the timer is a trap to the hypervisor, several microseconds a switch to or from an
 * idle CPU). That time is charged here, where it was spent, at the rate measured. */
static void switch_accrue(struct reg_slot *s, struct pslot *p, uint64_t t_ns)
{
    p->switches++;
    p->switch_debt += p->switch_ns;
    while (p->switch_debt >= pe.period_ns) {
        p->switch_debt -= pe.period_ns;
        switch_sample(s, p, t_ns);
    }
}

/* Privileged: the part of the thread's CPU clock no sample stands for (past `slack`)
 * is what its switches cost outside the task clock: charged at the last switch's
 * stack, and the rate a switch costs measured again for the next ones. A thread with
 * no switch sample yet is left as it is (its loss counted, account_cpu). */
static void fill_switch_time(struct reg_slot *s, struct pslot *p, uint64_t cpu_now,
                             uint64_t slack, uint64_t t_ns)
{
    /* Once the kernel lost records, the time without samples is theirs too, of threads
     * no record names: it stays unsampled and said so (the lost-records note); the
     * switches go on being charged at the rate measured before. */
    if (pe.lost_records || !p->cs_n || !p->switches || cpu_now <= p->cpu_start_ns) return;
    uint64_t cpu = cpu_now - p->cpu_start_ns;
    while (p->samples * pe.period_ns + slack + pe.period_ns <= cpu)
        switch_sample(s, p, t_ns);
    /* Three quarters of the rate measured: a charge at a switch cannot be taken back
     * where the switches cost less later; the fill above gives the rest. */
    uint64_t kernel = (p->samples - p->filled) * pe.period_ns;
    p->switch_ns = cpu > kernel + slack ? (cpu - kernel - slack) / p->switches * 3 / 4 : 0;
}

/* Unprivileged (exclude_kernel forced): the part of the thread's CPU clock, up to
 * cpu_now, that its samples do not stand for, charged one period at a time to its
 * last on-CPU stack. `slack` is left unsampled: the period in progress, and samples
 * still on their way into a ring. */
static void fill_kernel_time(struct reg_slot *s, struct pslot *p, uint64_t cpu_now,
                             uint64_t slack, uint64_t t_ns)
{
    if (pe.privileged) {
        fill_switch_time(s, p, cpu_now, slack, t_ns);
        return;
    }
    if (!p->last_n || cpu_now <= p->cpu_start_ns) return;
    uint64_t cpu = cpu_now - p->cpu_start_ns;
    while (p->samples * pe.period_ns + slack + pe.period_ns <= cpu) {
        struct sink_sample ss = {.slot = s,
                                 .t_ns = t_ns,
                                 .cpu_ns = pe.period_ns,
                                 .state = SINK_ON_CPU,
                                 .stop = p->last_stop,
                                 .nframes = p->last_n,
                                 .frames = p->last_frames,
                                 .guessed = 1,
                                 .thread1 = p->last_thread1};
        sink_add(&ss);
        p->samples++;
        p->filled++;
        pe.kernel_filled++;
    }
}

/* ================================================================== draining ==== */

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
        if (p->guessed) { /* the last stack read, or a walk's, marked a guess */
            pe.waits_guessed++;
            if (s->wait_stack < 0) {
                s->wait_stack = p->last_wait_stack;
                s->wait_thread1 = p->last_wait_thread1;
            }
            s->wait_stack = sink_guessed_twin(s->wait_stack);
        }
        if (s->wait_stack >= 0) {
            sink_add_interned_to(sink_thread_of(s, s->wait_thread1), t, 0, SINK_WAITING,
                                 s->wait_stack);
            continue;
        }
        const uint64_t *frames = p->guessed ? p->last_frames : p->cs_frames;
        uint16_t n = p->guessed ? p->last_n : p->cs_n;
        struct sink_sample ss = {.slot = s,
                                 .t_ns = t,
                                 .state = SINK_WAITING,
                                 .stop = p->guessed ? p->last_stop : p->cs_stop,
                                 .nframes = n,
                                 .frames = frames,
                                 .guessed = (uint8_t)p->guessed,
                                 .thread1 = p->guessed ? p->last_thread1 : p->cs_thread1};
        s->wait_stack = sink_add(&ss);
        s->wait_thread1 = ss.thread1;
    }
}

/* The kept intervals, with the stack known now (empty if still none): a new episode,
 * then the in-progress one's stack back. */
static void flush_pending(struct reg_slot *s, struct pslot *p)
{
    int32_t keep = s->wait_stack;
    uint32_t keep1 = s->wait_thread1;
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
    s->wait_thread1 = keep1;
}

/* The kernel's user callchain of a sample, and how its walk ended. The kernel follows
 * the frame-pointer chain until a frame record cannot be read (a zero or bad frame
 * pointer: it does not say which) or its depth limit; it stores a zero return address
 * as it is. Past that, the sink checks every frame (execmap.h): a return address into
 * kestrel's root function is the root, one in no executable mapping a cut, and an end
 * elsewhere in a thread whose root is known a cut too. */
#define PERF_KERNEL_MAX_STACK 127 /* perf_event_max_stack's default */
static uint16_t perf_chain(const struct perf_rec *r, uint64_t *out, uint8_t *stop)
{
    size_t n = perf_callchain_user(r->ips, r->n_ips, out, UNWIND_MAX_DEPTH);
    *stop = n >= PERF_KERNEL_MAX_STACK ? UNWIND_CUT_DEPTH : UNWIND_END_ZERO;
    for (size_t k = 1; k < n; k++)
        if (out[k] == 0) {
            n = k;
            *stop = UNWIND_END_ZERO;
            break;
        }
    return (uint16_t)n;
}

struct drain_ctx {
    struct reg_slot *s;
    struct pslot *p;
    uint64_t id_cs; /* the identifier of switch samples in the ring being drained */
};

/* The thread's stack as it is now, for a walk that went past its copy. */
static long perf_read_stack(void *arg, uint64_t addr, void *buf, size_t len)
{
    (void)arg;
    struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
    ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    return got < 0 ? -errno : (long)got;
}

/* A sample's user frames: the kernel's callchain, or a walk of its stack copy; *fiber
 * the fiber it ran on (fiber_find's key), 0 for the thread's own stack. */
static uint16_t sample_frames(const struct reg_slot *s, const struct perf_rec *r, uint64_t *out,
                              uint8_t *stop, uint64_t *fiber)
{
    *fiber = 0;
    if (!pe.cfi) return perf_chain(r, out, stop);
    if (!r->abi || !r->regs) { /* a kernel thread's sample, or no user registers */
        *stop = UNWIND_CUT_RANGE;
        return 0;
    }
    struct arch_regs ar;
    arch_perf_regs(r->regs, &ar);
    uint64_t sp = ar.sp;
    uint64_t top = sp + r->stack_size;
    /* The walk stops at the thread's registered top, as the signal engine's does; a
     * stack outside the thread's bounds (a fiber's) is walked as far as it goes. */
    int in_bounds = sp >= s->stack_lo && sp < s->stack_hi;
    uint64_t stack_top = s->stack_hi, f_lo;
    /* A fiber made since the maps were read: read them again and look once more (the
     * drain is on the thread that reads them; the signal handler cannot). */
    if (!in_bounds &&
        (fiber_find(sp, s->stack_lo, s->stack_hi, &f_lo, &stack_top, fiber) ||
         (fiber_maps_refresh_since(r->time) &&
          fiber_find(sp, s->stack_lo, s->stack_hi, &f_lo, &stack_top, fiber))))
        in_bounds = 1;
    uint64_t hi = in_bounds && stack_top < top ? stack_top : top;
    struct uw_stack m = {sp, hi, (intptr_t)r->stack - (intptr_t)sp, UW_DIRECT_NONE, NULL};
    struct uw_regs regs = {.pc = ar.pc, .sp = sp, .fp = ar.fp, .interrupted = 1, .lr = ar.lr};
    /* Past the copy, on over the thread's stack (its frames that are still there). */
    if (!pe.read_buf) pe.read_buf = rtmem_alloc(2 * (size_t)STACK_READ);
    struct uw_source src = {pe.read_buf ? perf_read_stack : NULL,
                            NULL,
                            in_bounds ? stack_top : 0,
                            {pe.read_buf, (char *)pe.read_buf + STACK_READ},
                            STACK_READ};
    enum unwind_stop st;
    size_t n = uw_walk_resume(uw_mode_current(), regs, &m, &src, out, UNWIND_MAX_DEPTH, &st,
                              &pe.resumed);
    pe.copies++;
    pe.copy_bytes += r->stack_size;
    if (in_bounds && !*fiber && s->stack_hi - sp > pe.depth_max) pe.depth_max = s->stack_hi - sp;
    if (st == UNWIND_CUT_COPY_END) pe.copy_short++;
    *stop = (uint8_t)st;
    return (uint16_t)n;
}

static void on_record(const struct perf_rec *r, void *arg)
{
    struct drain_ctx *c = arg;
    struct reg_slot *s = c->s;
    struct pslot *p = c->p;
    /* A thread's own ring after its stop, where the stop could not disable its events
     * (they were in the engine thread's own table): not its time any more. */
    if (!p->inherited && r->kind != PERF_REC_LOST && r->kind != PERF_REC_THROTTLE &&
        r->time > atomic_load(&p->stop_ns))
        return;
    switch (r->kind) {
    case PERF_REC_SAMPLE:
        if (p->has_cs && r->id == c->id_cs) {
            pe.cs_seen++;
            p->cs_time = r->time;
            /* Blocked inside kestrel's own work (a heap sample's mmap): not the
             * program's wait (rtown.h); its time is counted with the own samples. */
            p->cs_own = rtown_sample_regs(r->abi ? r->regs : NULL);
            uint64_t fiber;
            p->cs_n = sample_frames(s, r, p->cs_frames, &p->cs_stop, &fiber);
            p->cs_thread1 = fiber ? fiber_thread(s->tid, fiber) : 0;
            if (p->cs_n && !p->cs_own) switch_accrue(s, p, r->time);
        } else if (rtown_sample_regs(r->abi ? r->regs : NULL)) {
            /* kestrel's own work on this thread (rtown.h): counted, not the program's */
        } else {
            uint64_t fiber;
            p->last_n = sample_frames(s, r, p->last_frames, &p->last_stop, &fiber);
            p->last_thread1 = fiber ? fiber_thread(s->tid, fiber) : 0;
            struct sink_sample ss = {.slot = s,
                                     .thread1 = p->last_thread1,
                                     .t_ns = r->time,
                                     .cpu_ns = pe.period_ns,
                                     .state = SINK_ON_CPU,
                                     .stop = p->last_stop,
                                     .nframes = p->last_n,
                                     .frames = p->last_frames};
            sink_add(&ss);
            p->samples++;
        }
        break;
    case PERF_REC_SWITCH_OUT:
        p->off_cpu = 1;
        p->off_from = r->time;
        /* A preempted thread still wants the CPU: that is not a wait of the program. */
        p->own_wait = p->has_cs && p->cs_own && p->cs_time <= r->time &&
                      r->time - p->cs_time < pe.period_ns;
        p->waiting = !r->preempt && !p->own_wait;
        s->wait_stack = -1;
        s->wait_thread1 = 0;
        /* The switch sample is written just before its SWITCH record; an older one
         * belongs to an earlier switch whose record was lost. */
        p->guessed =
            !(p->has_cs && p->cs_n && p->cs_time <= r->time && r->time - p->cs_time < pe.period_ns);
        break;
    case PERF_REC_SWITCH_IN:
        if (p->off_cpu && p->waiting) emit_waiting(s, p, p->off_from, r->time);
        if (p->off_cpu && p->own_wait && r->time > p->off_from)
            rtown_add((r->time - p->off_from) / pe.period_ns);
        p->own_wait = 0;
        p->off_cpu = 0;
        break;
    case PERF_REC_LOST:
        sink_drop(r->lost);
        pe.lost_records += r->lost;
        break;
    case PERF_REC_THROTTLE:
        pe.throttles += r->throttled;
        break;
    case PERF_REC_OTHER:
        break;
    }
}

/* A thread still blocked gets its waiting samples up to `upto`. */
static void settle_waiting(struct reg_slot *s, struct pslot *p, uint64_t upto)
{
    if (!p->off_cpu || !p->waiting) return;
    /* Without the kernel's switch stack, a thread still blocked has its stack read the
     * signal engine's way, without waking it; waitstack_sample adds the episode's first
     * sample and leaves its interned stack for the rest. */
    uint64_t first = first_grid_point(p->off_from);
    if (p->guessed && s->wait_stack < 0 && first < upto && atomic_load(&s->state) == REG_ACTIVE &&
        waitstack_sample(s, first, 0) == 1 && s->wait_stack >= 0) {
        p->guessed = 0;
        p->last_wait_stack = s->wait_stack;
        p->last_wait_thread1 = s->wait_thread1;
        p->off_from = first + 1;
        flush_pending(s, p);
    }
    emit_waiting(s, p, p->off_from, upto);
    p->off_from = upto > p->off_from ? upto : p->off_from;
}

static void count_bad(struct perf_ring *r)
{
    pe.bad_bytes += r->bad;
    r->bad = 0;
}

/* ---- the per-CPU rings: records of many threads, merged in time order ---------- */

static size_t tm_hash(uint32_t tid)
{
    return (tid * 2654435761u) & (TIDMAP - 1);
}

/* The tid -> slot map of the inherited registrations, rebuilt at each drain. */
static void tm_build(void)
{
    memset(pe.tm_tid, 0, TIDMAP * sizeof *pe.tm_tid);
    for (size_t i = registry_next_used(0); i < REGISTRY_SLOTS; i = registry_next_used(i + 1)) {
        struct pslot *p = ps(i);
        if (atomic_load(&registry_slot(i)->state) == REG_FREE || !p->inherited ||
            !atomic_load_explicit(&p->ready, memory_order_acquire))
            continue;
        size_t h = tm_hash((uint32_t)registry_slot(i)->tid);
        while (pe.tm_tid[h])
            h = (h + 1) & (TIDMAP - 1);
        pe.tm_tid[h] = (uint32_t)registry_slot(i)->tid;
        pe.tm_slot[h] = (uint16_t)i;
    }
}

/* The registration of thread `tid` at time t (a tid can be reused: two registrations
 * of one tid never overlap in time), or -1. */
static long tm_find(uint32_t tid, uint64_t t)
{
    for (size_t h = tm_hash(tid); pe.tm_tid[h]; h = (h + 1) & (TIDMAP - 1)) {
        struct pslot *p = ps(pe.tm_slot[h]);
        if (pe.tm_tid[h] == tid && t >= p->start_ns && t <= p->stop_ns) return pe.tm_slot[h];
    }
    return -1;
}

struct cpu_ctx {
    uint64_t id_cs;
    int cs_ring; /* the records are of a switch samples' ring */
};

static void on_cpu_record(const struct perf_rec *r, void *arg)
{
    struct cpu_ctx *cc = arg;
    if (r->kind == PERF_REC_LOST) {
        /* Lost switch samples only make the waiting stacks of their episodes guesses. */
        if (cc->cs_ring) {
            pe.cs_lost += r->lost;
        } else {
            sink_drop(r->lost);
            pe.lost_records += r->lost;
        }
        return;
    }
    long i = tm_find(r->tid, r->time);
    if (i < 0) {
        pe.unregistered += r->kind == PERF_REC_SAMPLE && r->id != cc->id_cs;
        return;
    }
    struct drain_ctx c = {registry_slot(i), ps(i), cc->id_cs};
    on_record(r, &c);
}

/* Every CPU ring's records stamped up to `cut`, oldest first. */
static void drain_cpus(uint64_t cut)
{
    for (size_t k = 0; k < pe.ncpu; k++) {
        struct pcpu *c = &pe.cpus[k];
        c->has_next = c->has_next_cs = 0;
        if (!c->ev.map) continue;
        perf_ring_begin(&c->ev.ring);
        c->has_next = perf_ring_peek_time(&c->ev.ring, &c->next_time);
        if (!c->ev.map_cs) continue;
        perf_ring_begin(&c->ev.ring_cs);
        c->has_next_cs = perf_ring_peek_time(&c->ev.ring_cs, &c->next_time_cs);
    }
    for (;;) {
        /* The oldest record of every ring; at equal times a switch sample first, as it
         * is written before its SWITCH record. */
        struct pcpu *min = NULL;
        int min_cs = 0;
        uint64_t min_t = 0;
        for (size_t k = 0; k < pe.ncpu; k++) {
            struct pcpu *c = &pe.cpus[k];
            if (c->has_next_cs && c->next_time_cs <= cut && (!min || c->next_time_cs <= min_t))
                min = c, min_cs = 1, min_t = c->next_time_cs;
            if (c->has_next && c->next_time <= cut && (!min || c->next_time < min_t))
                min = c, min_cs = 0, min_t = c->next_time;
        }
        if (!min) break;
        struct cpu_ctx cc = {min->ev.id_cs, min_cs};
        if (min_cs) {
            perf_ring_take(&min->ev.ring_cs, on_cpu_record, &cc, pe.scratch);
            min->has_next_cs = perf_ring_peek_time(&min->ev.ring_cs, &min->next_time_cs);
        } else {
            perf_ring_take(&min->ev.ring, on_cpu_record, &cc, pe.scratch);
            min->has_next = perf_ring_peek_time(&min->ev.ring, &min->next_time);
        }
    }
    for (size_t k = 0; k < pe.ncpu; k++) {
        struct pcpu *c = &pe.cpus[k];
        if (!c->ev.map) continue;
        perf_ring_end(&c->ev.ring);
        count_bad(&c->ev.ring);
        if (!c->ev.map_cs) continue;
        perf_ring_end(&c->ev.ring_cs);
        count_bad(&c->ev.ring_cs);
    }
}

/* final: the session ends, every kept interval goes out with what is known. */
static void drain_all(int final)
{
    registry_lock();
    /* Each thread's CPU clock is read before the cut: the samples up to the cut then
     * stand for all of it but the slack. Read after a long drain (tens of thousands of
     * switch samples), it held time whose samples were not read yet. */
    for (size_t i = registry_next_used(0); i < REGISTRY_SLOTS; i = registry_next_used(i + 1))
        if (atomic_load(&registry_slot(i)->state) == REG_ACTIVE &&
            atomic_load_explicit(&ps(i)->ready, memory_order_acquire))
            ps(i)->cpu_seen = thread_cpu_ns(registry_slot(i)->cpu_clock);
    uint64_t now = rt_clock_ns(CLOCK_MONOTONIC);
    uint64_t cut = final ? UINT64_MAX : now - CUT_NS;
    /* The per-CPU events first (a thread that moved to them did so before they were
     * ready), then the moved threads' own rings, all older than their per-CPU records. */
    int cpus_ready = atomic_load_explicit(&pe.cpus_ready, memory_order_acquire);
    for (size_t i = registry_next_used(0); cpus_ready && i < REGISTRY_SLOTS;
         i = registry_next_used(i + 1)) {
        struct pslot *p = ps(i);
        if (atomic_load(&registry_slot(i)->state) == REG_FREE ||
            !atomic_load_explicit(&p->ready, memory_order_acquire) ||
            !atomic_load_explicit(&p->moving, memory_order_acquire))
            continue;
        struct drain_ctx c = {registry_slot(i), p, p->ev.id_cs};
        perf_ring_drain(&p->ev.ring, on_record, &c, pe.scratch);
        count_bad(&p->ev.ring);
        slot_lock(p); /* the thread's stop may look at them */
        events_close(&p->ev);
        p->inherited = 1;
        p->has_cs = pe.cpus_cs;
        p->start_ns = p->move_ns;
        atomic_store(&p->moving, 0);
        slot_unlock(p);
    }
    if (cpus_ready) {
        tm_build();
        drain_cpus(cut);
    }
    for (size_t i = registry_next_used(0); i < REGISTRY_SLOTS; i = registry_next_used(i + 1)) {
        struct reg_slot *s = registry_slot(i);
        uint32_t st = atomic_load(&s->state);
        if (st == REG_FREE) continue;
        struct pslot *p = ps(i);
        int ready = atomic_load_explicit(&p->ready, memory_order_acquire);
        if (ready) {
            /* An inherited thread's records up to the cut are in; its own ring, all. */
            if (!p->inherited && !atomic_load(&p->moving)) {
                struct drain_ctx c = {s, p, p->ev.id_cs};
                perf_ring_drain(&p->ev.ring, on_record, &c, pe.scratch);
                count_bad(&p->ev.ring);
                if (st == REG_ACTIVE) ring_grow(p, s->tid, on_record, &c);
            }
            settle_waiting(s, p, p->inherited && cut < now ? cut : now);
            if (st == REG_ACTIVE && p->cpu_seen)
                fill_kernel_time(s, p, p->cpu_seen,
                                 final ? 0 : pe.period_ns + (p->inherited ? CUT_NS : 0),
                                 p->inherited && cut < now ? cut : now);
            /* A thread that left waits until every record up to its leaving was read. */
            if (st == REG_DRAINING && p->inherited && p->stop_ns > cut) continue;
            if (final || st == REG_DRAINING) flush_pending(s, p);
        }
        if (st == REG_DRAINING) {
            if (ready) {
                fill_kernel_time(s, p, atomic_load(&p->cpu_end_ns), pe.period_ns, now);
                account_cpu(s, p, atomic_load(&p->cpu_end_ns));
                events_close(&p->ev);
                atomic_store_explicit(&p->ready, 0, memory_order_release);
                if (atomic_exchange(&p->stopped, 0)) atomic_fetch_sub(&pe.draining, 1);
            }
            registry_release(s);
        }
    }
    registry_unlock();
}

/* The engine thread's own descriptor table. In a program of one thread, the engine
 * thread is the only other one, and a table the two share makes every system call of
 * the program on a descriptor dearer (rtthread.h, RT_OWN_FDS). So there the engine
 * thread starts with a table of its own: the program's thread opens its events, the
 * epoll set and the eventfd in the program's table, as anywhere, and the engine thread
 * uses copies of them (rtfd.h imports them at their first use); the ring it grows is
 * in its own table alone, and the program's thread, which then cannot disable it,
 * marks its stop in time instead (on_record). When the program makes its first thread,
 * it shares its table from then on anyway: the creating thread asks the engine thread
 * to end (handoff_drain: the starting thread's own ring read to its end and its events
 * closed), and starts one that shares the table, with the per-CPU events
 * (own_table_end). */

/* The engine thread's last drain before its handoff. */
static void handoff_drain(void)
{
    drain_all(0);
    registry_lock();
    for (size_t i = registry_next_used(0); i < REGISTRY_SLOTS; i = registry_next_used(i + 1)) {
        struct reg_slot *s = registry_slot(i);
        struct pslot *p = ps(i);
        if (atomic_load(&s->state) == REG_FREE ||
            !atomic_load_explicit(&p->ready, memory_order_acquire) || p->inherited)
            continue;
        slot_lock(p);
        events_ioctl(&p->ev, PERF_EVENT_IOC_DISABLE);
        struct drain_ctx c = {s, p, p->ev.id_cs};
        perf_ring_drain(&p->ev.ring, on_record, &c, pe.scratch);
        count_bad(&p->ev.ring);
        events_close(&p->ev);
        slot_unlock(p);
    }
    registry_unlock();
}

static void wake_engine(void)
{
    if (rtfd_ok(&pe.wakefd)) eventfd_write(pe.wakefd.fd, 1);
}

static void *engine_main(void *arg)
{
    (void)arg;
    uint64_t period_ns = (pe.privileged ? DRAIN_MS_SWITCH : DRAIN_MS) * 1000000ull;
    uint64_t next = rt_clock_ns(CLOCK_MONOTONIC) + period_ns, images_at = rt_clock_ns(CLOCK_MONOTONIC) + IMAGES_NS;
    if (pe.cfi) uw_tables_refresh(); /* the images, before the first drain walks a copy */
    while (!atomic_load(&pe.stopping) && !atomic_load(&pe.handoff)) {
        struct epoll_event ev[8];
        uint64_t now = rt_clock_ns(CLOCK_MONOTONIC);
        int ms = next > now ? (int)((next - now + 999999) / 1000000) : 0;
        int n = 0;
        /* Without its epoll set or its eventfd (the program closed them), the thread
         * wakes on the short period alone: no ring wakes it, nor stop(). */
        if (!rtfd_ok(&pe.epfd) || !rtfd_ok(&pe.wakefd)) {
            period_ns = DRAIN_MS * 1000000ull;
            if (ms > DRAIN_MS) ms = DRAIN_MS;
        }
        if (pe.epfd.fd >= 0) {
            n = epoll_wait(pe.epfd.fd, ev, 8, ms);
        } else {
            struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
            nanosleep(&ts, NULL);
        }
        for (int i = 0; i < n; i++) /* the counter only wakes; reset it */
            if (ev[i].data.u64 == 1 && rtfd_ok(&pe.wakefd)) {
                eventfd_t v;
                eventfd_read(pe.wakefd.fd, &v);
            }
        fiber_maps_refresh(0); /* one atomic load unless a walk missed a fiber's stack */
        if (pe.cfi) {
            uw_tables_refresh(); /* a look at the loader's counters, mostly */
            uw_tables_build(0);  /* the tables walks needed often enough */
        }
        drain_all(0);
        now = rt_clock_ns(CLOCK_MONOTONIC);
        if (now >= next) next = now + period_ns;
        if (now >= images_at) {
            maps_refresh_all();
            images_at = now + IMAGES_NS;
        }
        if (pe.cfg.on_period) pe.cfg.on_period(now);
    }
    if (atomic_load(&pe.handoff) && !atomic_load(&pe.stopping)) {
        handoff_drain();
        return NULL;
    }
    drain_all(1);
    /* Threads still registered: their CPU time so far. */
    registry_lock();
    for (size_t i = registry_next_used(0); i < REGISTRY_SLOTS;
         i = registry_next_used(i + 1))
        if (atomic_load(&registry_slot(i)->state) == REG_ACTIVE &&
            atomic_load_explicit(&ps(i)->ready, memory_order_acquire))
            account_cpu(registry_slot(i), ps(i), thread_cpu_ns(registry_slot(i)->cpu_clock));
    registry_unlock();
    maps_refresh_all();
    if (pe.cfg.on_stopped) pe.cfg.on_stopped();
    return NULL;
}

/* ================================================================ interface ==== */

/* Whether this kernel lets the engine count time in system calls (exclude_kernel=0:
 * root, CAP_PERFMON, or perf_event_paranoid <= 1). Asked by `auto` (twice) and by
 * start(): probed once per process image and user, each probe an event opened and
 * freed (about 11 us here, paid by every process of a tree); a fork child or a
 * process that changed user probes again. */
static struct {
    int known;   /* kernel_time was probed */
    uid_t euid;  /* ... as this user */
    pid_t pid;   /* ... in this process */
    int kernel_time;
} pe_probe;

static int perf_kernel_time(void)
{
    uid_t euid = geteuid();
    pid_t pid = lifecycle_pid();
    if (pe_probe.known && pe_probe.euid == euid && pe_probe.pid == pid)
        return pe_probe.kernel_time;
    struct perf_event_attr a;
    attr_clock(&a, 1000000, 1, 0);
    a.sample_type = SAMPLE_TYPE;
    int fd = perf_open(&a, 0, -1);
    if (fd >= 0) close(fd);
    pe_probe.kernel_time = fd >= 0;
    pe_probe.euid = euid;
    pe_probe.pid = pid;
    pe_probe.known = 1;
    return pe_probe.kernel_time;
}

static int perf_check(const char **why)
{
    struct perf_event_attr a;
    attr_clock(&a, 1000000, 0, 0);
    int fd = perf_open(&a, 0, -1);
    if (fd < 0) {
        int e = errno;
        switch (e) {
        case EACCES:
        case EPERM:
            *why = "perf_event_open refused (EACCES/EPERM: perf_event_paranoid, or a "
                   "seccomp filter)";
            break;
        case ENOSYS:
            *why = "perf_event_open is not available (ENOSYS: a kernel without perf events, "
                   "or an emulator such as qemu-user)";
            break;
        default:
            *why = "perf_event_open failed for a task-clock event";
            break;
        }
        return -e;
    }
    close(fd);
    /* The kernel checks the user registers asked for against its own architecture's
     * numbering. One that rejects this architecture's is another architecture's: the
     * program runs in an emulator (qemu-user), and the kernel would sample the
     * emulator's thread, not the program's code. */
    a.sample_type |= PERF_SAMPLE_REGS_USER;
    a.sample_regs_user = REGS_MASK;
    fd = perf_open(&a, 0, -1);
    if (fd < 0 && errno == EINVAL) {
        *why = "perf_event_open rejects the registers of " ARCH_NAME
               ": the kernel is another architecture's (an emulator such as qemu-user), "
               "whose samples would be of the emulator, not of this program";
        return -ENOTSUP;
    }
    if (fd >= 0) close(fd);
    return 0;
}

/* Closes every CPU's events (their inherited copies in the threads go with them). */
static void cpus_close(void)
{
    atomic_store(&pe.cpus_ready, 0);
    for (size_t k = 0; k < pe.ncpu; k++)
        events_close(&pe.cpus[k].ev);
    rtmem_free(pe.cpus, pe.cpus_len);
    pe.cpus = NULL;
    pe.ncpu = 0;
}

static size_t ring_pages_cap(size_t most);

/* The per-CPU events, inherited by the threads the calling thread creates from now
 * on; a CPU that is offline has none. 0, or -errno and nothing open. */
static int cpus_open(void)
{
    long n = sysconf(_SC_NPROCESSORS_CONF);
    if (n < 1) return -ENODEV;
    pe.ncpu = (size_t)n;
    pe.cpus_len = pe.ncpu * sizeof *pe.cpus;
    if (!(pe.cpus = rtmem_alloc(pe.cpus_len))) return -ENOMEM;
    /* A ring takes the samples of every thread on its CPU, and their switch records.
     * A CPU runs one thread at a time, so its samples come at the rate of one thread:
     * with stack copies (16 KiB a sample) the switch records (tens of bytes) need no
     * room of their own, and the ring is a thread's. Every process pays for its rings
     * at start (the kernel clears their pages: the largest part of what a process of
     * a few ms pays, BENCHMARKS.md "Process trees"). With frame pointers (samples of
     * up to a KiB) a CPU's ring holds CPU_RING_FP_S seconds of samples and switch
     * records, in no more than the stack copies' ring: the engine thread is one of the
     * program's runnable threads, and among 10,000 of them it waited seconds for a CPU
     * (a ring of 64 KiB lost 86,731 records of 10,000 threads of 2 ms, one of 4 MiB
     * none). */
    size_t most = pe.cfi ? pe.ring_pages_most : ring_pages_cap(RING_PAGES_MAX_CFI);
    size_t cpu_pages = pe.ring_pages;
    if (!pe.cfi) {
        uint64_t want = (uint64_t)pe.cfg.hz * CPU_RING_FP_S * 1024 / (uint64_t)pe.page;
        while (cpu_pages < want && cpu_pages < most)
            cpu_pages *= 2;
    }
    if (most > pe.cpu_ring_cap) most = pe.cpu_ring_cap; /* locked memory is limited */
    pe.cpu_ring_pages = cpu_pages < most ? cpu_pages : most;
    size_t opened = 0;
    for (size_t k = 0; k < pe.ncpu; k++) {
        int rc = events_open(&pe.cpus[k].ev, 0, (int)k, 1, pe.cpu_ring_pages, EV_DISABLED);
        if (rc == -ENODEV) continue; /* offline */
        if (rc < 0) {
            cpus_close();
            return rc;
        }
        opened++;
        pe.cpus_cs |= pe.cpus[k].ev.fd_cs.fd >= 0;
    }
    if (!opened) {
        cpus_close();
        return -ENODEV;
    }
    return 0;
}

/* Starts the per-CPU events cpus_open() left disabled. */
static void cpus_enable(void)
{
    for (size_t k = 0; k < pe.ncpu; k++) {
        struct pevents *e = &pe.cpus[k].ev;
        if (e->fd.fd < 0) continue;
        ioctl(e->fd.fd, PERF_EVENT_IOC_ENABLE, 0);
        if (e->fd_cs.fd >= 0) ioctl(e->fd_cs.fd, PERF_EVENT_IOC_ENABLE, 0);
    }
}

static void perf_free(void)
{
    rtblocks_free(&pe_slots);
    rtmem_free(pe.scratch, PERF_RING_SCRATCH);
    rtmem_free(pe.tm_tid, TIDMAP * sizeof *pe.tm_tid);
    rtmem_free(pe.tm_slot, TIDMAP * sizeof *pe.tm_slot);
    rtmem_free(pe.read_buf, 2 * (size_t)STACK_READ);
    pe.read_buf = NULL;
    pe.scratch = NULL;
    pe.tm_tid = NULL;
    pe.tm_slot = NULL;
}

static void perf_close_fds(void)
{
    rtfd_close(&pe.wakefd);
    rtfd_close(&pe.epfd);
}

/* Whether this process may lock memory without limit (CAP_IPC_LOCK effective): the
 * rings of large stack copies are then never refused or shrunk. capget, one system
 * call where reading /proc/self/status took an open, a read and a close. */
static int perf_can_lock(void)
{
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct d[2];
    if (syscall(SYS_capget, &h, d) != 0) return 0;
    return (int)((d[0].effective >> CAP_IPC_LOCK) & 1);
}

/* An online number from a /proc or /sys file, or `dflt`. */
static uint64_t read_number(const char *path, uint64_t dflt)
{
    char buf[64];
    struct rtfd once;
    int fd = rtfd_open_once(&once, path);
    if (fd < 0) return dflt;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    rtfd_close(&once);
    if (n <= 0) return dflt;
    buf[n] = 0;
    return strtoull(buf, NULL, 10);
}

/* Bytes of rings this process may lock, UINT64_MAX: no limit. The kernel charges a
 * ring to the user's share first (perf_event_mlock_kb per online CPU, which every
 * process of the user draws from: half of it is counted on), then to the process's
 * own RLIMIT_MEMLOCK (8 MiB by default on Debian). */
static uint64_t perf_lock_budget(void)
{
    struct rlimit rl;
    if (perf_can_lock() || getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return UINT64_MAX;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t user = read_number("/proc/sys/kernel/perf_event_mlock_kb", 516) * 1024 *
                    (uint64_t)(cpus > 0 ? cpus : 1);
    return (uint64_t)rl.rlim_cur + user / 2;
}

/* The copy size and ring sizes where locked memory is limited: the rings that may be
 * mapped at once are the starting thread's own and, once it makes a thread, each
 * CPU's clock and switch rings. Each CPU's ring gets an equal part of the budget; the
 * own ring what they leave (a program of one thread keeps its ring as large as
 * root's). */
static void perf_fit_budget(uint64_t budget, size_t *cpu_cap)
{
    long n = sysconf(_SC_NPROCESSORS_CONF);
    uint64_t rings = 2 * (uint64_t)(n > 0 ? n : 1) + 1, part = budget / rings;
    *cpu_cap = SIZE_MAX;
    if (budget == UINT64_MAX) {
        pe.copy_size = STACK_COPY_MAX;
        return;
    }
    pe.copy_size = STACK_COPY_MAX;
    if ((uint64_t)(pe.copy_size + 128) * RING_RECORDS_MIN > part) pe.copy_size = 32768;
    if ((uint64_t)(pe.copy_size + 128) * RING_RECORDS_MIN > part) pe.copy_size = STACK_COPY_LIMITED;
    size_t pages = 1;
    while ((pages * 2 + 1) * (uint64_t)pe.page <= part)
        pages *= 2;
    *cpu_cap = pages;
}

/* The most data pages a ring may have: `most`, or under an address-space limit
 * (RLIMIT_AS, which counts the rings' mappings) what keeps the rings of every CPU (two
 * each) and of a few threads within a 64th of it. A smaller ring is drained as
 * often; at high rates it may drop samples (counted), where a larger one would take
 * room the program can use. */
static size_t ring_pages_cap(size_t most)
{
    struct rlimit r;
    long n = sysconf(_SC_NPROCESSORS_CONF);
    if (getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return most;
    uint64_t rings = 2 * (uint64_t)(n > 0 ? n : 1) + 4;
    uint64_t room = (uint64_t)r.rlim_cur / 64 / rings / (uint64_t)pe.page;
    size_t cap = RING_PAGES_MIN;
    while (cap * 2 <= room && cap * 2 <= most)
        cap *= 2;
    return cap;
}

static int perf_start(const struct engine_config *cfg)
{
    /* The buffers stay mapped from one session to the next (every slot is not ready
     * between two): a new mapping per session was never unmapped, 3.3 MB of address
     * space a session. */
    struct perf_engine kept = {
        .scratch = pe.scratch, .tm_tid = pe.tm_tid, .tm_slot = pe.tm_slot,
        .read_buf = pe.read_buf};
    pe = kept;
    pe.epfd.fd = pe.wakefd.fd = -1;
    rtfd_lost_reset();
    pe.cfg = *cfg;
    pe.gen = ++pe_sessions ? pe_sessions : ++pe_sessions;
    pe.period_ns = 1000000000ull / (cfg->hz ? cfg->hz : 997);
    pe.page = sysconf(_SC_PAGESIZE);
    pe.cfi = uw_mode_current() != UW_MODE_FP && REGS_MASK != 0;
    pe.sample_type = pe.cfi ? SAMPLE_TYPE_CFI : SAMPLE_TYPE;
    uint64_t budget = perf_lock_budget();
    perf_fit_budget(budget, &pe.cpu_ring_cap);
    /* Room for about two short drain periods of deep-stacked samples (or stack
     * copies) at this rate; past half of it, the ring wakes the engine thread. */
    uint64_t per = pe.cfi ? pe.copy_size + 128 : 512;
    uint64_t want = (uint64_t)cfg->hz * DRAIN_MS * 2 / 1000 * per / (uint64_t)pe.page;
    size_t most = ring_pages_cap(pe.cfi ? RING_PAGES_MAX_CFI : RING_PAGES_MAX);
    pe.ring_pages_most = most;
    pe.ring_pages = RING_PAGES_MIN;
    while (pe.ring_pages < want && pe.ring_pages < most)
        pe.ring_pages *= 2;
    /* The own ring: what the CPUs' rings leave of the budget. */
    if (budget != UINT64_MAX) {
        long ncpu = sysconf(_SC_NPROCESSORS_CONF);
        size_t cpu_pages = pe.ring_pages < pe.cpu_ring_cap ? pe.ring_pages : pe.cpu_ring_cap;
        uint64_t cpus = 2 * (uint64_t)(ncpu > 0 ? ncpu : 1) * (cpu_pages + 1) * (uint64_t)pe.page;
        uint64_t left = budget > cpus ? budget - cpus : 0;
        while (pe.ring_pages > 1 && (pe.ring_pages + 1) * (uint64_t)pe.page > left)
            pe.ring_pages /= 2;
    }
    /* A process of a few ms fills no full ring, and the kernel clears every page
     * mapped (BENCHMARKS.md "Process trees"): its first ring is small. */
    pe.small_pages = RING_PAGES_MIN;
    while (pe.small_pages * (uint64_t)pe.page < SMALL_ROOM * per)
        pe.small_pages *= 2;
    pe.small_wake = (uint32_t)(SMALL_WAKE * per);
    if (pe.small_pages * 2 > pe.ring_pages) pe.small_pages = 0;
    pe.privileged = perf_kernel_time();
    if (!pe.scratch) pe.scratch = rtmem_alloc(PERF_RING_SCRATCH);
    if (!pe.tm_tid) pe.tm_tid = rtmem_alloc(TIDMAP * sizeof *pe.tm_tid);
    if (!pe.tm_slot) pe.tm_slot = rtmem_alloc(TIDMAP * sizeof *pe.tm_slot);
    if (registry_add_table(&pe_slots) != 0 || !pe.scratch || !pe.tm_tid || !pe.tm_slot) {
        perf_free();
        return -ENOMEM;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 1};
    int err = rtfd_adopt(&pe.epfd, epoll_create1(EPOLL_CLOEXEC), 0);
    if (err >= 0) err = rtfd_adopt(&pe.wakefd, eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), 0);
    if (err >= 0 && epoll_ctl(pe.epfd.fd, EPOLL_CTL_ADD, pe.wakefd.fd, &ev) != 0) err = -errno;
    if (err < 0) {
        perf_close_fds();
        perf_free();
        return err;
    }
    /* The engine thread is the runtime's own: made through the real pthread_create
     * (never registered) with every signal blocked, before the per-CPU events exist
     * (so that it does not inherit them); with a descriptor table of its own while the
     * program has one thread (handoff_drain). */
    lifecycle_threads_coming();
    pe.own_table = rt_thread_program_threads() == 1;
    int rc = rt_thread_spawn(&pe.thread, "kestrel-perf", 256 * 1024,
                             pe.own_table ? RT_OWN_FDS : 0, engine_main, NULL);
    if (rc != 0) {
        perf_close_fds();
        perf_free();
        return -rc;
    }
    pe.thread_up = 1;
    /* The per-CPU events wait for this thread's first thread (perf_thread_creating):
     * most processes of a build never make one, and each CPU's ring costs them its
     * clearing. */
    pe.starter = pthread_self();
    return 0;
}

static int perf_thread_start(struct reg_slot *s)
{
    struct pslot *p = ps(registry_slot_index(s));
    if (pe_covered == pe.gen) {
        p->ev.fd.fd = p->ev.fd_cs.fd = -1;
        p->ev.map = NULL;
        pslot_reset(p, 1, pe.cpus_cs);
    } else {
        atomic_store(&p->moving, 0);
        atomic_store(&p->evlock, 0);
        int rc = events_open(&p->ev, s->tid, -1, 0, pe.ring_pages,
                             pthread_equal(pe.starter, pthread_self()) ? EV_SMALL : 0);
        if (rc < 0) {
            atomic_fetch_add(&pe.threads_unsampled, 1);
            return rc;
        }
        pslot_reset(p, 0, p->ev.fd_cs.fd >= 0);
    }
    atomic_store_explicit(&p->ready, 1, memory_order_release);
    return 0;
}

/* Stops the counting now; the engine thread drains what is left and closes. An
 * inherited thread's events stay until it exits; its records after now are dropped. */
static void perf_thread_stop(struct reg_slot *s)
{
    struct pslot *p = ps(registry_slot_index(s));
    if (!atomic_load_explicit(&p->ready, memory_order_acquire)) return;
    atomic_store(&p->cpu_end_ns, thread_cpu_ns(CLOCK_THREAD_CPUTIME_ID));
    slot_lock(p);
    if (p->inherited || atomic_load(&p->moving) || !events_ioctl(&p->ev, PERF_EVENT_IOC_DISABLE))
        p->stop_ns = rt_clock_ns(CLOCK_MONOTONIC);
    slot_unlock(p);
    rtfd_close_deferred();
    /* Between drains, exited threads keep their descriptors and rings: past a few,
     * the engine thread is asked to close them now. */
    if (!atomic_exchange(&p->stopped, 1) && atomic_fetch_add(&pe.draining, 1) + 1 == DRAINING_WAKE)
        wake_engine();
}

/* The session's starting thread moves from its own events to the per-CPU ones as it
 * makes its first thread: they are opened disabled, its own events disabled at T, the
 * per-CPU ones enabled; the engine thread reads its own ring to its end before any
 * per-CPU record (drain_all). Without per-CPU events (a kernel before 5.13 has no
 * inherit_thread), it keeps its own, and every thread opens its own at registration. */
static void cpus_start_here(void)
{
    pe.cpus_tried = 1;
    if (cpus_open() != 0) return;
    struct reg_slot *s = registry_self();
    struct pslot *p = s ? ps(registry_slot_index(s)) : NULL;
    if (p && atomic_load_explicit(&p->ready, memory_order_acquire) && !p->inherited) {
        slot_lock(p);
        events_ioctl(&p->ev, PERF_EVENT_IOC_DISABLE);
        p->move_ns = rt_clock_ns(CLOCK_MONOTONIC);
        atomic_store_explicit(&p->moving, 1, memory_order_release);
        slot_unlock(p);
    }
    cpus_enable();
    pe_covered = pe.gen;
    atomic_store_explicit(&pe.cpus_ready, 1, memory_order_release);
    wake_engine(); /* its own events closed now, not at the next periodic drain */
}

/* The program makes its first thread: the engine thread with a table of its own ends
 * (handoff_drain) and one that shares the program's starts; the starting thread moves
 * to the per-CPU events, or where they cannot be opened, to events of its own again. */
static void own_table_end(void)
{
    pe.own_table = 0;
    pe.cpus_tried = 1;
    int cpus = cpus_open() == 0;
    atomic_store(&pe.handoff, 1);
    wake_engine();
    if (pe.thread_up) pthread_join(pe.thread, NULL);
    pe.thread_up = 0;
    atomic_store(&pe.handoff, 0);
    rtfd_close_deferred();
    struct reg_slot *s = registry_self();
    struct pslot *p = s ? ps(registry_slot_index(s)) : NULL;
    if (p && atomic_load_explicit(&p->ready, memory_order_acquire) && !p->inherited) {
        if (cpus) {
            p->inherited = 1;
            p->has_cs = pe.cpus_cs;
            p->start_ns = rt_clock_ns(CLOCK_MONOTONIC);
        } else if (events_open(&p->ev, s->tid, -1, 0, pe.ring_pages, 0) != 0) {
            atomic_fetch_add(&pe.threads_unsampled, 1);
        }
    }
    if (cpus) {
        cpus_enable();
        pe_covered = pe.gen;
        atomic_store_explicit(&pe.cpus_ready, 1, memory_order_release);
    }
    if (rt_thread_spawn(&pe.thread, "kestrel-perf", 256 * 1024, 0, engine_main, NULL) == 0)
        pe.thread_up = 1;
}

/* A thread created now inherits the per-CPU events if its creator has them. */
static uint32_t perf_thread_creating(void)
{
    if (pe.own_table && pthread_equal(pe.starter, pthread_self()))
        own_table_end();
    else if (pe_covered != pe.gen && !pe.cpus_tried && pthread_equal(pe.starter, pthread_self()))
        cpus_start_here();
    return pe_covered == pe.gen ? pe.gen : 0;
}

static void perf_thread_created(uint32_t token)
{
    pe_covered = token;
}

/* Every thread's own events and every CPU's. */
static void events_close_all(void)
{
    for (size_t i = 0, hi = registry_slots_hi(); i < hi; i++)
        if (atomic_load(&ps(i)->ready)) {
            events_close(&ps(i)->ev);
            atomic_store(&ps(i)->ready, 0);
        }
    cpus_close();
}

static void perf_stop(void)
{
    atomic_store(&pe.stopping, 1);
    wake_engine();
    if (pe.thread_up) pthread_join(pe.thread, NULL);
    pe.thread_up = 0;
    rtfd_close_deferred();
    events_close_all();
    perf_close_fds();
}

/* Only this thread exists: the parent's rings are dropped unread. */
static void perf_after_fork_child(void)
{
    pe.thread_up = pe.own_table = 0;
    rtfd_close_deferred();
    perf_close_fds(); /* the epoll set is the parent's too: closed before any slot */
    events_close_all();
    pe_covered = 0;
    perf_free();
}

static uint64_t perf_unsampled(void)
{
    return pe.threads_cpu_ns > pe.threads_sampled_ns ? pe.threads_cpu_ns - pe.threads_sampled_ns
                                                     : 0;
}

/* What the profile lacks, in sentences: CPU time of threads no sample stands for (past
 * 5% of the threads' total and 10 ms: every thread leaves part of a period unsampled),
 * and descriptors the program took. */
static size_t perf_notes(const char **out, size_t max)
{
    static char cpu[256], fds[160];
    size_t n = 0;
    /* CPU time without samples; the note on lost records says it when there were. */
    uint64_t dropped = sink_counts()->dropped;
    uint64_t lost = dropped ? 0 : perf_unsampled();
    if (n < max && lost > 10000000ull && lost * 20 > pe.threads_cpu_ns) {
        snprintf(cpu, sizeof cpu,
                 "%.1f ms of the threads' %.1f ms of CPU time (%.0f%%) has no sample: the "
                 "kernel samples each thread's CPU time in whole periods of %.3f ms, so "
                 "short-lived threads lose theirs; %llu of %llu threads had none",
                 (double)lost / 1e6, (double)pe.threads_cpu_ns / 1e6,
                 100.0 * (double)lost / (double)pe.threads_cpu_ns, (double)pe.period_ns / 1e6,
                 (unsigned long long)pe.threads_no_sample,
                 (unsigned long long)pe.threads_ended);
        out[n++] = cpu;
    }
    static char lostmsg[640], guessed[320];
    if (n < max && dropped) {
        char who[200];
        losses_text(&pe.unsampled, who, sizeof who, 1e6, "ms");
        snprintf(lostmsg, sizeof lostmsg,
                 "the kernel lost %llu records (on-CPU samples and context switches): a CPU's "
                 "ring was full before the engine thread drained it (it waited for a CPU); "
                 "%.1f ms of the threads' %.1f ms of CPU time (%.1f%%) has no sample and is "
                 "left out of the CPU total%s%s",
                 (unsigned long long)dropped, (double)perf_unsampled() / 1e6,
                 (double)pe.threads_cpu_ns / 1e6,
                 100.0 * (double)perf_unsampled() /
                     (double)(pe.threads_cpu_ns ? pe.threads_cpu_ns : 1),
                 *who ? "; threads with most: " : "", who);
        out[n++] = lostmsg;
    }
    /* Waiting samples whose stack is an earlier episode's: said, with why. */
    if (n < max && pe.waits_guessed) {
        snprintf(guessed, sizeof guessed,
                 "%llu waiting samples have a guessed stack (the thread's last blocking stack "
                 "read earlier): %s",
                 (unsigned long long)pe.waits_guessed,
                 pe.privileged ? "their switch samples were lost (switch_samples_lost)"
                               : "without the kernel's switch samples (unprivileged), an "
                                 "episode that began and ended between two looks is not seen");
        out[n++] = guessed;
    }
    static char sw[400];
    uint64_t sw_ns = pe.switch_filled * pe.period_ns;
    if (n < max && pe.switch_filled) {
        snprintf(sw, sizeof sw,
                 "%.1f ms of CPU time (%.0f%% of the threads') went in context switches "
                 "outside the kernel's sampling clock (the kernel stops and starts the "
                 "sampling events' timers at each switch, which a virtual machine makes "
                 "costly): charged at the stacks the threads switched from",
                 (double)sw_ns / 1e6,
                 pe.threads_cpu_ns ? 100.0 * (double)sw_ns / (double)pe.threads_cpu_ns : 0.0);
        out[n++] = sw;
    }
    static char kern[320];
    uint64_t kern_ns = pe.kernel_filled * pe.period_ns;
    if (n < max && pe.kernel_filled) {
        snprintf(kern, sizeof kern,
                 "%.1f ms of CPU time (%.0f%% of the threads') went in system calls, which "
                 "the kernel does not let this user sample (exclude_kernel): charged to each "
                 "thread's last on-CPU stack, a guess (the signal engine samples it at the "
                 "call's stack)",
                 (double)kern_ns / 1e6,
                 pe.threads_cpu_ns ? 100.0 * (double)kern_ns / (double)pe.threads_cpu_ns : 0.0);
        out[n++] = kern;
    }
    if (n < max && rtfd_lost()) {
        snprintf(fds, sizeof fds,
                 "the program closed or replaced %llu of the perf engine's descriptors; "
                 "they were left alone",
                 (unsigned long long)rtfd_lost());
        out[n++] = fds;
    }
    return n;
}

/* The fewest data pages a CPU's clock ring (cs 0) or switch ring (1) got: smaller than
 * asked where an unprivileged user's locked memory ran short (perf_event_mlock_kb). */
static uint64_t ring_pages_mapped(int cs)
{
    uint64_t least = 0;
    for (size_t k = 0; k < pe.ncpu; k++) {
        size_t len = cs ? pe.cpus[k].ev.map_cs_len : pe.cpus[k].ev.map_len;
        if (!(cs ? pe.cpus[k].ev.map_cs : pe.cpus[k].ev.map)) continue;
        uint64_t pages = len / (size_t)pe.page - 1;
        if (!least || pages < least) least = pages;
    }
    return least;
}

/* The raw file's engine_stats: what this kernel allowed, and what was lost or guessed. */
static size_t perf_stats(struct engine_stat *out, size_t max)
{
    /* Every descriptor still held is checked now: the count covers the ones the program
     * took since their last use. */
    rtfd_held(&pe.epfd);
    rtfd_held(&pe.wakefd);
    for (size_t k = 0; k < pe.ncpu; k++) {
        rtfd_held(&pe.cpus[k].ev.fd);
        rtfd_held(&pe.cpus[k].ev.fd_cs);
    }

    for (size_t i = 0, hi = registry_slots_hi(); i < hi; i++)
        if (atomic_load_explicit(&ps(i)->ready, memory_order_acquire)) {
            rtfd_held(&ps(i)->ev.fd);
            rtfd_held(&ps(i)->ev.fd_cs);
        }
    const struct engine_stat all[] = {
        {"switch_stacks", (uint64_t)pe.privileged}, /* the kernel sampled each switch */
        {"kernel_time", (uint64_t)pe.privileged},   /* time in system calls was sampled */
        {"ring_pages", pe.ring_pages},
        {"cpu_rings", pe.ncpu}, /* 0: every thread had a ring of its own */
        {"cpu_ring_pages", pe.ncpu ? pe.cpu_ring_pages : 0},
        {"cpu_ring_pages_mapped", ring_pages_mapped(0)}, /* less where locked memory is short */
        {"switch_ring_pages_mapped", ring_pages_mapped(1)},
        {"rings_grown", pe.rings_grown}, /* small rings grown to ring_pages */
        {"samples_unregistered", pe.unregistered},
        {"threads_unsampled", atomic_load(&pe.threads_unsampled)},
        {"waits_guessed", pe.waits_guessed},
        {"kernel_samples_guessed", pe.kernel_filled}, /* time the kernel did not sample */
        {"throttled", pe.throttles},          /* the kernel paused an event's sampling */
        {"switch_samples", pe.cs_seen},      /* read, of the registered threads */
        {"switch_samples_lost", pe.cs_lost}, /* their episodes' stacks guessed */
        {"switch_samples_charged", pe.switch_filled}, /* switches' time outside the clock */
        {"bad_ring_bytes", pe.bad_bytes},
        {"fds_lost", rtfd_lost()}, /* descriptors the program closed or replaced */
        {"threads_cpu_ns", pe.threads_cpu_ns}, /* the registered threads' CPU time */
        {"cpu_unsampled_ns", perf_unsampled()}, /* ... that no sample stands for */
        {"threads_without_samples", pe.threads_no_sample},
        {"stack_copies", pe.copies},            /* samples walked from a stack copy */
        {"stack_copy_bytes", pe.copy_bytes},    /* bytes the kernel copied for them */
        {"stacks_copy_short", pe.copy_short},   /* walks that reached the copy's end */
        {"stack_depth_max", pe.depth_max},      /* bytes from the deepest sp to the top */
        {"stack_copy_size", pe.cfi ? pe.copy_size : 0}, /* bytes asked of the kernel a sample */
        {"switch_copy_size", pe.cfi && pe.privileged ? switch_copy_size() : 0}, /* a switch's */
        {"stacks_read_on", pe.resumed.walks},   /* walks that went on past their copy */
        {"stacks_read_changed", pe.resumed.changed}, /* ... cut: the stack had changed */
        {"stack_read_bytes", pe.resumed.bytes},      /* bytes of stack read for them */
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
    .thread_creating = perf_thread_creating,
    .thread_created = perf_thread_created,
    .stop = perf_stop,
    .after_fork_child = perf_after_fork_child,
    .stats = perf_stats,
    .notes = perf_notes,
    .kernel_time = perf_kernel_time,
};
