/* events — the perf events the attached host opens on other processes' threads (or on
 * every CPU for the whole machine), and their rings, one per CPU: every event on a CPU
 * writes into that CPU's ring (PERF_EVENT_IOC_SET_OUTPUT), as perf record does.
 *
 * Per thread and CPU, with `inherit`: the task clock (a sample every 1/hz of the
 * thread's CPU time: user registers and the top of the user stack, for the walker),
 * its PERF_RECORD_SWITCH records (off-CPU intervals), and where the kernel allows it
 * (exclude_kernel=0: root, CAP_PERFMON, perf_event_paranoid <= 1) a context-switch
 * event sampled at every switch, whose stack copy is the thread's blocking stack.
 * Threads the sampled threads create inherit the events (fork children too with
 * `children`). */
#ifndef KESTREL_ATTACH_EVENTS_H
#define KESTREL_ATTACH_EVENTS_H
#include "runtime/cpu/perf_ring.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Bytes of stack the kernel copies at each sample: for -p and --attach where the rings'
 * locked memory is not limited (CAP_IPC_LOCK: root), 32 KiB (clang++ -O2 attached: 0.2% of its walks
 * cut where its stack had changed past the copy by the drain, against 1.0-1.3% with
 * 16 KiB; docs/attach.md); else 16 KiB, of which the 516 KiB of perf_event_mlock_kb
 * hold a few drains, and for -a (every process's samples share one ring per CPU). -D
 * for a benchmark of other sizes. */
#ifndef EVENTS_STACK_COPY
#define EVENTS_STACK_COPY 32768
#endif
#define EVENTS_STACK_COPY_LIMITED 16384
#define WAKE_US 1000            /* a ring wakes kestrel at this much of samples (us) */

struct events_ring {
    int fd;       /* the first event opened on this CPU: owns the ring */
    void *map;
    size_t len;
    struct perf_ring ring;
};

struct events {
    int ncpu;
    unsigned hz;
    int children;              /* fork children inherit the events */
    int on_exec;               /* events start at the thread's next exec (--attach) */
    int no_switch;             /* no switch records or samples (the whole machine: every
                                  context switch's stack copy would flood the rings) */
    int kernel;                /* exclude_kernel=0 was allowed: switch samples too */
    uint64_t period_ns;
    uint32_t copy;             /* the stack copy's size: EVENTS_STACK_COPY or _LIMITED */
    uint32_t wakeup_bytes;     /* a ring wakes kestrel when it holds this much */
    struct events_ring *rings; /* ncpu */
    int *fds;                  /* every event's descriptor */
    size_t n_fds, cap_fds;
    uint64_t *switch_ids;      /* identifiers of the switch events' samples */
    size_t n_switch, cap_switch;
    uint64_t ring_pages;
};

/* Sets up for hz; probes whether kernel-side events are allowed. `all`: for the whole
 * machine (larger rings, no switch events). 0 or -errno. */
int events_init(struct events *e, unsigned hz, int children, int all);

/* Opens the events of one thread on every CPU. 0 or -errno (-ESRCH: the thread is
 * gone; -EACCES/-EPERM: refused). */
int events_open_thread(struct events *e, pid_t tid);

/* Opens the events of every process on every CPU (the whole machine). 0 or -errno. */
int events_open_all(struct events *e);

/* Whether a sample's identifier is a switch event's. */
int events_is_switch(const struct events *e, uint64_t id);

/* Closes every event and unmaps the rings. */
void events_close(struct events *e);
#endif
