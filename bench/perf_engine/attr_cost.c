/* What each piece of the perf engine's event configuration costs the sampled thread,
 * beside the configuration `perf record -g` uses, in two workloads:
 *
 *   busy    one thread computing, sampled at HZ: the kernel's cost per sample
 *   switch  two threads on one CPU passing a token through a pipe: every pass is a
 *           blocking switch out and back in, the cost per context switch
 *
 * Each configuration opens its events on the measured threads (as the engine does),
 * a third thread drains the rings every 20 ms, and the measured threads' own CPU
 * clocks are read. Configurations are interleaved in short slices, round after
 * round; each figure is the median over the rounds, so that a load that changes
 * slowly on a shared machine falls on every configuration alike.
 *
 *   attr_cost [rounds]        prints two Markdown tables */
#include "runtime/cpu/perf_ring.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define HZ 10000
#define PAGES 64
#define BUSY_ITERS 60000000ull /* about 60 ms of work */
#define PASSES 4000            /* token passes per switch slice */
#define MAXR 41

#define ST_KESTREL                                                                                 \
    (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN)
#define ST_PERF                                                                                    \
    (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN |                 \
     PERF_SAMPLE_PERIOD)

struct config {
    const char *name;
    int events;           /* 0: unprofiled */
    uint64_t config;      /* PERF_COUNT_SW_TASK_CLOCK or _CPU_CLOCK */
    uint64_t sample_type; /* of the clock event */
    int exclude_kernel;
    int callchain_kernel; /* kernel frames too, as perf record -g asks */
    int clockid;          /* use_clockid CLOCK_MONOTONIC */
    int switch_records;   /* context_switch */
    int switch_samples;   /* a second event sampling every context switch */
    uint16_t max_stack;   /* sample_max_stack, 0 = the system's */
    int inherit;          /* per-CPU events opened before the threads, inherited by them */
};

static const struct config configs[] = {
    {"unprofiled", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"perf record -g (cpu-clock, IP TID TIME CALLCHAIN PERIOD, kernel chains)", 1,
     PERF_COUNT_SW_CPU_CLOCK, ST_PERF, 0, 1, 0, 0, 0, 0, 0},
    {"kestrel: task-clock, IDENTIFIER TID TIME CALLCHAIN, user chains", 1, PERF_COUNT_SW_TASK_CLOCK,
     ST_KESTREL, 0, 0, 0, 0, 0, 0, 0},
    {"  + use_clockid MONOTONIC", 1, PERF_COUNT_SW_TASK_CLOCK, ST_KESTREL, 0, 0, 1, 0, 0, 0, 0},
    {"  + context_switch records", 1, PERF_COUNT_SW_TASK_CLOCK, ST_KESTREL, 0, 0, 1, 1, 0, 0, 0},
    {"  + switch samples (the privileged engine)", 2, PERF_COUNT_SW_TASK_CLOCK, ST_KESTREL, 0, 0, 1,
     1, 1, 0, 0},
    {"  same, exclude_kernel (no switch sample fires)", 2, PERF_COUNT_SW_TASK_CLOCK, ST_KESTREL, 1,
     0, 1, 1, 1, 0, 0},
    {"perf record -g running a command (the same, per-CPU events the threads inherit)", 1,
     PERF_COUNT_SW_CPU_CLOCK, ST_PERF, 0, 1, 0, 0, 0, 0, 1},
    {"kestrel, per-CPU events the threads inherit (+ clockid, switch records and samples)", 2,
     PERF_COUNT_SW_TASK_CLOCK, ST_KESTREL, 0, 0, 1, 1, 1, 0, 1},
};
#define NCFG (sizeof configs / sizeof configs[0])

/* ============================================================== events, rings ==== */

#define MAXCPU 64

/* A configuration's events on one thread (one set), or on every CPU for the threads
 * that inherit them (one set per CPU). */
struct probe {
    size_t n;
    struct {
        int fd, fd_cs;
        void *map;
        struct perf_ring ring;
    } ev[MAXCPU];
    uint64_t samples, lost;
};

static size_t map_len(void)
{
    return (size_t)sysconf(_SC_PAGESIZE) * (PAGES + 1);
}

static int ev_open(struct perf_event_attr *a, pid_t tid, int cpu)
{
    return (int)syscall(SYS_perf_event_open, a, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Opens c's events on thread tid; inherited ones on the calling thread, enabled, one
 * set per CPU, before it creates the threads that inherit them. */
static void probe_open(struct probe *p, const struct config *c, pid_t tid)
{
    memset(p, 0, sizeof *p);
    if (!c->events) return;
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = c->config;
    a.sample_period = 1000000000ull / HZ;
    a.sample_type = c->sample_type;
    a.exclude_kernel = c->exclude_kernel;
    a.exclude_hv = 1;
    a.exclude_callchain_kernel = !c->callchain_kernel;
    a.sample_max_stack = c->max_stack;
    a.sample_id_all = 1;
    a.use_clockid = c->clockid;
    a.clockid = CLOCK_MONOTONIC;
    a.context_switch = c->switch_records;
    a.disabled = !c->inherit;
    a.inherit = a.inherit_thread = (unsigned)c->inherit;
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    p->n = c->inherit ? (size_t)(ncpu < MAXCPU ? ncpu : MAXCPU) : 1;
    long pg = sysconf(_SC_PAGESIZE);
    for (size_t k = 0; k < p->n; k++) {
        struct perf_event_attr e = a;
        int cpu = c->inherit ? (int)k : -1;
        p->ev[k].fd = ev_open(&e, c->inherit ? 0 : tid, cpu);
        p->ev[k].fd_cs = -1;
        if (p->ev[k].fd < 0) {
            fprintf(stderr, "attr_cost: %s: perf_event_open: %s\n", c->name, strerror(errno));
            exit(1);
        }
        p->ev[k].map = mmap(NULL, map_len(), PROT_READ | PROT_WRITE, MAP_SHARED, p->ev[k].fd, 0);
        if (p->ev[k].map == MAP_FAILED) {
            fprintf(stderr, "attr_cost: mmap: %s\n", strerror(errno));
            exit(1);
        }
        perf_ring_init(&p->ev[k].ring, p->ev[k].map, (uint64_t)pg, PAGES, a.sample_type, 0);
        if (c->switch_samples) {
            e.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
            e.sample_period = 1;
            e.context_switch = 0;
            p->ev[k].fd_cs = ev_open(&e, c->inherit ? 0 : tid, cpu);
            if (p->ev[k].fd_cs < 0 ||
                ioctl(p->ev[k].fd_cs, PERF_EVENT_IOC_SET_OUTPUT, p->ev[k].fd) != 0) {
                fprintf(stderr, "attr_cost: switch event: %s\n", strerror(errno));
                exit(1);
            }
        }
    }
}

static void probe_enable(struct probe *p, unsigned long req)
{
    for (size_t k = 0; k < p->n; k++) {
        ioctl(p->ev[k].fd, req, 0);
        if (p->ev[k].fd_cs >= 0) ioctl(p->ev[k].fd_cs, req, 0);
    }
}

static void count(const struct perf_rec *r, void *ctx)
{
    struct probe *p = ctx;
    if (r->kind == PERF_REC_SAMPLE) p->samples++;
    if (r->kind == PERF_REC_LOST) p->lost += r->lost;
}

static void probe_drain(struct probe *p)
{
    static unsigned char scratch[PERF_RING_SCRATCH] __attribute__((aligned(8)));
    for (size_t k = 0; k < p->n; k++)
        perf_ring_drain(&p->ev[k].ring, count, p, scratch);
}

static void probe_close(struct probe *p)
{
    for (size_t k = 0; k < p->n; k++) {
        munmap(p->ev[k].map, map_len());
        if (p->ev[k].fd_cs >= 0) close(p->ev[k].fd_cs);
        close(p->ev[k].fd);
    }
}

/* ================================================================== drainer ==== */

static struct probe *volatile drain_set[2];
static volatile int drain_stop;

static void *drainer(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 20000000};
    while (!drain_stop) {
        nanosleep(&ts, NULL);
        for (int i = 0; i < 2; i++)
            if (drain_set[i]) probe_drain(drain_set[i]);
    }
    return NULL;
}

/* ================================================================ workloads ==== */

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static volatile uint64_t sink;
__attribute__((noinline)) static uint64_t busy(uint64_t n, int depth)
{
    if (depth > 0) return busy(n, depth - 1) + 1;
    uint64_t x = 1;
    for (uint64_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + i;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

/* One busy slice on the calling thread; its CPU ns, samples in *samples. */
static uint64_t slice_busy(const struct config *c, uint64_t *samples)
{
    struct probe p;
    probe_open(&p, c, (pid_t)syscall(SYS_gettid));
    drain_set[0] = &p;
    uint64_t t0 = thread_cpu_ns();
    probe_enable(&p, PERF_EVENT_IOC_ENABLE);
    sink += busy(BUSY_ITERS, 8);
    probe_enable(&p, PERF_EVENT_IOC_DISABLE);
    uint64_t t = thread_cpu_ns() - t0;
    drain_set[0] = NULL;
    probe_drain(&p);
    *samples = p.samples;
    probe_close(&p);
    return t;
}

struct partner {
    int in, out; /* pipe ends: read the token from in, write it to out */
    const struct config *c;
    struct probe p;
    pid_t tid;
    volatile int ready;
    uint64_t cpu_ns;
};

static void pin_cpu0(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    sched_setaffinity(0, sizeof set, &set);
}

static uint64_t pass_tokens(int in, int out, int first)
{
    char b = 0;
    uint64_t t0 = thread_cpu_ns();
    for (int i = 0; i < PASSES; i++) {
        if (first && write(out, &b, 1) != 1) exit(1);
        if (read(in, &b, 1) != 1) exit(1);
        if (!first && write(out, &b, 1) != 1) exit(1);
    }
    return thread_cpu_ns() - t0;
}

static void *partner_main(void *arg)
{
    struct partner *q = arg;
    pin_cpu0();
    q->tid = (pid_t)syscall(SYS_gettid);
    q->ready = 1;
    while (q->ready != 2)
        sched_yield();
    q->cpu_ns = pass_tokens(q->in, q->out, 0);
    return NULL;
}

/* One switch slice: two threads on CPU 0; the CPU ns of both per pass. */
static double slice_switch(const struct config *c)
{
    int ab[2], ba[2];
    if (pipe(ab) || pipe(ba)) exit(1);
    struct partner q = {.in = ab[0], .out = ba[1], .c = c};
    pthread_t th;
    struct probe mine;
    memset(&q.p, 0, sizeof q.p);
    if (c->inherit) /* before the partner exists, which inherits them */
        probe_open(&mine, c, 0);
    pthread_create(&th, NULL, partner_main, &q);
    while (!q.ready)
        sched_yield();
    if (!c->inherit) {
        probe_open(&mine, c, (pid_t)syscall(SYS_gettid));
        probe_open(&q.p, c, q.tid);
    }
    drain_set[0] = &mine;
    drain_set[1] = &q.p;
    probe_enable(&mine, PERF_EVENT_IOC_ENABLE);
    probe_enable(&q.p, PERF_EVENT_IOC_ENABLE);
    q.ready = 2;
    uint64_t t = pass_tokens(ba[0], ab[1], 1);
    pthread_join(th, NULL);
    probe_enable(&mine, PERF_EVENT_IOC_DISABLE);
    probe_enable(&q.p, PERF_EVENT_IOC_DISABLE);
    drain_set[0] = drain_set[1] = NULL;
    probe_close(&mine);
    probe_close(&q.p);
    close(ab[0]);
    close(ab[1]);
    close(ba[0]);
    close(ba[1]);
    return (double)(t + q.cpu_ns) / PASSES;
}

/* ==================================================================== main ==== */

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
    double s[MAXR];
    memcpy(s, v, (size_t)n * sizeof *v);
    qsort(s, (size_t)n, sizeof *s, cmp);
    return s[n / 2];
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 11;
    if (rounds < 1 || rounds > MAXR) rounds = 11;
    pthread_t dt;
    pthread_create(&dt, NULL, drainer, NULL); /* free to run on either CPU */
    pin_cpu0();
    static double busy_ns[NCFG][MAXR], busy_n[NCFG][MAXR], sw_ns[NCFG][MAXR];
    for (int r = 0; r < rounds; r++)
        for (size_t i = 0; i < NCFG; i++) {
            size_t k = (i + (size_t)r) % NCFG; /* rotate the order every round */
            uint64_t n;
            busy_ns[k][r] = (double)slice_busy(&configs[k], &n);
            busy_n[k][r] = (double)n;
            sw_ns[k][r] = slice_switch(&configs[k]);
        }
    drain_stop = 1;
    pthread_join(dt, NULL);

    double b0 = median(busy_ns[0], rounds), s0 = median(sw_ns[0], rounds);
    printf("| sampled at %d Hz, %d rounds | samples | busy thread's CPU | µs per sample |\n"
           "|---|---|---|---|\n",
           HZ, rounds);
    for (size_t k = 1; k < NCFG; k++) {
        double d[MAXR];
        for (int r = 0; r < rounds; r++)
            d[r] = (busy_ns[k][r] - b0) / (busy_n[k][r] ? busy_n[k][r] : 1) / 1000;
        printf("| %s | %.0f | %+.2f%% | %.2f |\n", configs[k].name, median(busy_n[k], rounds),
               100 * (median(busy_ns[k], rounds) - b0) / b0, median(d, rounds));
    }
    printf("\n| two threads passing a token on one CPU | CPU per pass (both threads) | µs per "
           "pass over unprofiled |\n|---|---|---|\n");
    for (size_t k = 0; k < NCFG; k++)
        printf("| %s | %.2f µs | %+.2f |\n", configs[k].name, median(sw_ns[k], rounds) / 1000,
               (median(sw_ns[k], rounds) - s0) / 1000);
    return 0;
}
