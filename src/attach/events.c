/* events.c — perf events on other processes' threads, one ring per CPU (events.h). */
#include "attach/events.h"
#include "runtime/arch/arch.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SAMPLE_TYPE                                                                                \
    (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER |         \
     PERF_SAMPLE_STACK_USER)

static int perf_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
    return (int)syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Whether kestrel's locked memory is unlimited (CAP_IPC_LOCK), as the rings of larger
 * copies need. */
static int can_lock(void)
{
    char line[256];
    unsigned long long eff = 0;
    FILE *f = fopen("/proc/self/status", "re");
    if (!f) return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "CapEff: %llx", &eff) == 1) break;
    fclose(f);
    return (int)((eff >> 14) & 1);
}

static void attr_common(const struct events *e, struct perf_event_attr *a)
{
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    a->type = PERF_TYPE_SOFTWARE;
    a->sample_type = SAMPLE_TYPE;
    a->sample_regs_user = ARCH_PERF_REGS_MASK;
    a->sample_stack_user = e->copy;
    a->exclude_hv = 1;
    a->exclude_callchain_kernel = 1;
    a->sample_id_all = 1;
    a->use_clockid = 1;
    a->clockid = CLOCK_MONOTONIC;
    a->inherit = 1;
    a->inherit_thread = e->children ? 0 : 1;
    a->disabled = a->enable_on_exec = (unsigned)e->on_exec;
    /* Woken every WAKE_US of samples on a CPU, not at every record: the part of a deep
     * stack past the copy is read at the drain, and changes the longer it waits. */
    a->watermark = 1;
    a->wakeup_watermark = e->wakeup_bytes;
}

static void attr_clock(const struct events *e, struct perf_event_attr *a, int kernel)
{
    attr_common(e, a);
    /* A thread's CPU time; per CPU for the whole machine, the CPU's time. */
    a->config = e->no_switch ? PERF_COUNT_SW_CPU_CLOCK : PERF_COUNT_SW_TASK_CLOCK;
    a->sample_period = e->period_ns;
    a->exclude_kernel = !kernel;
    a->context_switch = !e->no_switch;
}

static void attr_switch(const struct events *e, struct perf_event_attr *a)
{
    attr_common(e, a);
    a->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
    a->sample_period = 1;
}

int events_init(struct events *e, unsigned hz, int children, int all)
{
    memset(e, 0, sizeof *e);
    e->hz = hz;
    e->children = children;
    e->no_switch = all;
    e->period_ns = 1000000000ull / hz;
    /* The whole machine's samples share each CPU's ring: they keep the smaller copy. */
    e->copy = !all && can_lock() ? EVENTS_STACK_COPY : EVENTS_STACK_COPY_LIMITED;
    long n = sysconf(_SC_NPROCESSORS_CONF);
    e->ncpu = n > 0 ? (int)n : 1;
    e->rings = calloc((size_t)e->ncpu, sizeof *e->rings);
    if (!e->rings) return -ENOMEM;
    for (int i = 0; i < e->ncpu; i++) e->rings[i].fd = -1;
    /* Data pages per CPU: two 40 ms periods of full stack copies at the rate (the whole
     * machine: 200 ms, every process's samples on one CPU's ring), within 64..1024
     * pages. */
    uint64_t bytes = (uint64_t)hz * (e->copy + 256) * (all ? 40 : 8) / 100;
    uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE), pages = 64;
    while (pages * pg < bytes && pages < 1024) pages *= 2;
    e->ring_pages = pages;
    /* A ring wakes kestrel once it holds WAKE_US of samples (at least a page): clang's
     * frames past a 16 KiB copy had changed by the drain in 18% of the walks that read
     * on when woken at half a ring (60 ms of samples at 997 Hz), 10% at 5 ms, 1% at 1. */
    uint64_t wake = (uint64_t)hz * (e->copy + 256) * WAKE_US / 1000000;
    if (wake < pg) wake = pg;
    if (wake > pages * pg / 2) wake = pages * pg / 2;
    e->wakeup_bytes = (uint32_t)wake;
    /* Kernel-side events (switch samples, time in system calls): tried on ourselves. */
    struct perf_event_attr a;
    attr_switch(e, &a);
    a.inherit = a.inherit_thread = 0;
    int fd = perf_open(&a, 0, -1);
    e->kernel = fd >= 0;
    if (fd >= 0) close(fd);
    return 0;
}

static int keep_fd(struct events *e, int fd)
{
    if (e->n_fds == e->cap_fds) {
        size_t c = e->cap_fds ? 2 * e->cap_fds : 64;
        int *p = realloc(e->fds, c * sizeof *p);
        if (!p) return -ENOMEM;
        e->fds = p, e->cap_fds = c;
    }
    e->fds[e->n_fds++] = fd;
    return 0;
}

/* fd's output: the CPU's ring, made by the first event there. */
static int attach_ring(struct events *e, int cpu, int fd)
{
    struct events_ring *r = &e->rings[cpu];
    if (r->fd >= 0) return ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) ? -errno : 0;
    uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
    for (uint64_t pages = e->ring_pages; pages >= 1; pages /= 2) {
        size_t len = (size_t)((pages + 1) * pg);
        void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) continue;
        r->fd = fd, r->map = m, r->len = len;
        perf_ring_init(&r->ring, m, pg, pages, SAMPLE_TYPE, ARCH_PERF_REGS_MASK);
        return 0;
    }
    return -errno;
}

static int open_one(struct events *e, struct perf_event_attr *a, pid_t pid, int cpu, int is_switch)
{
    int fd = perf_open(a, pid, cpu);
    if (fd < 0) return -errno;
    int rc = attach_ring(e, cpu, fd);
    if (!rc) rc = keep_fd(e, fd);
    if (rc) {
        close(fd);
        return rc;
    }
    if (is_switch) {
        uint64_t id;
        if (ioctl(fd, PERF_EVENT_IOC_ID, &id) == 0) {
            if (e->n_switch == e->cap_switch) {
                size_t c = e->cap_switch ? 2 * e->cap_switch : 64;
                uint64_t *p = realloc(e->switch_ids, c * sizeof *p);
                if (!p) return -ENOMEM;
                e->switch_ids = p, e->cap_switch = c;
            }
            e->switch_ids[e->n_switch++] = id;
        }
    }
    return 0;
}

static int open_on(struct events *e, pid_t pid, int cpu)
{
    struct perf_event_attr a;
    attr_clock(e, &a, e->kernel);
    int rc = open_one(e, &a, pid, cpu, 0);
    if (rc == -EACCES && e->kernel) { /* allowed on ourselves, not on this process */
        attr_clock(e, &a, 0);
        rc = open_one(e, &a, pid, cpu, 0);
    }
    if (rc || !e->kernel || e->no_switch) return rc;
    attr_switch(e, &a);
    open_one(e, &a, pid, cpu, 1); /* without it, waiting stacks are not known */
    return 0;
}

int events_open_thread(struct events *e, pid_t tid)
{
    for (int cpu = 0; cpu < e->ncpu; cpu++) {
        int rc = open_on(e, tid, cpu);
        /* A CPU that is offline refuses (ENODEV): sampled nowhere there anyway. */
        if (rc == -ENODEV) continue;
        if (rc) return rc;
    }
    return 0;
}

int events_open_all(struct events *e)
{
    int opened = 0, err = 0;
    for (int cpu = 0; cpu < e->ncpu; cpu++) {
        int rc = open_on(e, -1, cpu);
        if (rc == 0)
            opened++;
        else if (rc != -ENODEV)
            err = rc;
    }
    return opened ? 0 : err ? err : -ENODEV;
}

int events_is_switch(const struct events *e, uint64_t id)
{
    for (size_t i = 0; i < e->n_switch; i++)
        if (e->switch_ids[i] == id) return 1;
    return 0;
}

void events_close(struct events *e)
{
    for (size_t i = 0; i < e->n_fds; i++) close(e->fds[i]);
    for (int i = 0; e->rings && i < e->ncpu; i++)
        if (e->rings[i].map) munmap(e->rings[i].map, e->rings[i].len);
    free(e->fds);
    free(e->rings);
    free(e->switch_ids);
    memset(e, 0, sizeof *e);
}
