/* What the perf engine pays per sample for the kernel's user callchain, for the user
 * registers (PERF_SAMPLE_REGS_USER) and per byte of user stack copied
 * (PERF_SAMPLE_STACK_USER): one busy thread sampled by a task-clock event at 4999 Hz,
 * drained every 20 ms by a second thread, against the same fixed work unprofiled.
 * The process's CPU time (both threads, user + system) is what is compared;
 * configurations are interleaved, each figure is a median over the rounds.
 *
 *   stack_cost [rounds]        prints a Markdown table */
#include "runtime/cpu/perf_ring.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define HZ 4999
#define PAGES 1024
#define WORK 400000000ull

struct config {
    const char *name;
    uint64_t sample_type;
    uint64_t regs; /* x86_64: bp=6 sp=7 ip=8 */
    uint32_t stack;
};

static const struct config configs[] = {
    {"unprofiled", 0, 0, 0},
    {"callchain",
     PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN, 0, 0},
    {"callchain + regs(bp,sp,ip)",
     PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN |
         PERF_SAMPLE_REGS_USER,
     (1u << 6) | (1u << 7) | (1u << 8), 0},
};
static const uint32_t stack_sizes[] = {512, 2048, 8192, 32768};

static volatile uint64_t sink;
__attribute__((noinline)) static uint64_t work(uint64_t n, int depth)
{
    if (depth > 0) return work(n, depth - 1) + 1;
    uint64_t x = 1;
    for (uint64_t i = 0; i < n; i++)
        x = x * 6364136223846793005ull + i;
    return x;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

struct drain {
    struct perf_ring ring;
    volatile int stop;
    uint64_t samples, bytes, lost;
    unsigned char *scratch;
};

static void count(const struct perf_rec *r, void *ctx)
{
    struct drain *d = ctx;
    if (r->kind == PERF_REC_SAMPLE) {
        d->samples++;
        d->bytes += r->stack_size;
    } else if (r->kind == PERF_REC_LOST) {
        d->lost += r->lost;
    }
}

static void *drainer(void *p)
{
    struct drain *d = p;
    struct timespec ts = {0, 20000000};
    while (!d->stop) {
        nanosleep(&ts, NULL);
        perf_ring_drain(&d->ring, count, d, d->scratch);
    }
    perf_ring_drain(&d->ring, count, d, d->scratch);
    return NULL;
}

/* One run; returns the process CPU seconds it took, and the samples and bytes seen. */
static double run(const struct config *c, uint32_t stack, uint64_t *samples, uint64_t *bytes)
{
    *samples = *bytes = 0;
    if (!c->sample_type) {
        double t0 = cpu_s();
        sink += work(WORK, 20);
        return cpu_s() - t0;
    }
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = 1000000000ull / HZ;
    a.sample_type = c->sample_type | (stack ? PERF_SAMPLE_STACK_USER : 0);
    a.sample_regs_user = c->regs;
    a.sample_stack_user = stack;
    a.exclude_kernel = 1;
    a.exclude_callchain_kernel = 1;
    a.sample_id_all = 1;
    a.disabled = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "stack_cost: perf_event_open: %s\n", strerror(errno));
        exit(1);
    }
    long pg = sysconf(_SC_PAGESIZE);
    void *m = mmap(NULL, (size_t)pg * (PAGES + 1), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        fprintf(stderr, "stack_cost: mmap: %s\n", strerror(errno));
        exit(1);
    }
    static unsigned char scratch[PERF_RING_SCRATCH] __attribute__((aligned(8)));
    struct drain d;
    memset(&d, 0, sizeof d);
    d.scratch = scratch;
    perf_ring_init(&d.ring, m, (uint64_t)pg, PAGES, a.sample_type, c->regs);
    pthread_t th;
    double t0 = cpu_s();
    pthread_create(&th, NULL, drainer, &d);
    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    sink += work(WORK, 20);
    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    d.stop = 1;
    pthread_join(th, NULL);
    double t = cpu_s() - t0;
    if (d.lost || d.ring.bad)
        fprintf(stderr, "stack_cost: %s/%u: %llu lost, %llu bad bytes\n", c->name, stack,
                (unsigned long long)d.lost, (unsigned long long)d.ring.bad);
    *samples = d.samples;
    *bytes = d.bytes;
    munmap(m, (size_t)pg * (PAGES + 1));
    close(fd);
    return t;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define NCFG (3 + 4)
#define MAXR 15

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    if (rounds < 1 || rounds > MAXR) rounds = 5;
    double t[NCFG][MAXR];
    double samples[NCFG][MAXR], bytes[NCFG][MAXR];
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < NCFG; k++) {
            const struct config *c = k < 3 ? &configs[k] : &configs[2];
            uint32_t stack = k < 3 ? 0 : stack_sizes[k - 3];
            uint64_t s, b;
            t[k][r] = run(c, stack, &s, &b);
            samples[k][r] = (double)s;
            bytes[k][r] = s ? (double)b / (double)s : 0;
        }
    }
    double base[MAXR];
    memcpy(base, t[0], sizeof base);
    qsort(base, (size_t)rounds, sizeof(double), cmp);
    double b0 = base[rounds / 2];
    printf("| sampled at %d Hz | samples | stack bytes/sample | overhead (process CPU) | "
           "µs per sample |\n|---|---|---|---|---|\n",
           HZ);
    for (int k = 1; k < NCFG; k++) {
        double o[MAXR], n[MAXR], by[MAXR];
        memcpy(o, t[k], sizeof o);
        memcpy(n, samples[k], sizeof n);
        memcpy(by, bytes[k], sizeof by);
        qsort(o, (size_t)rounds, sizeof(double), cmp);
        qsort(n, (size_t)rounds, sizeof(double), cmp);
        qsort(by, (size_t)rounds, sizeof(double), cmp);
        double over = o[rounds / 2] - b0;
        char name[64];
        if (k < 3)
            snprintf(name, sizeof name, "%s", configs[k].name);
        else
            snprintf(name, sizeof name, "+ stack %u B", stack_sizes[k - 3]);
        printf("| %s | %.0f | %.0f | %+.2f%% | %.2f |\n", name, n[rounds / 2], by[rounds / 2],
               100 * over / b0, 1e6 * over / n[rounds / 2]);
    }
    return 0;
}
