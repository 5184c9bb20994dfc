/* The perf ring reader and record parser on hand-made rings (records wrapped around
 * the ring's end, truncated, malformed, lost) and on a real self-monitoring event. */
#include "check.h"
#include "runtime/cpu/perf_ring.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define DATA_PAGES 1
#define ST (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN)

/* ---- a fake ring: the test plays the kernel's part ---------------------------- */

static _Alignas(PAGE) unsigned char mapping[PAGE * (1 + DATA_PAGES)];
static _Alignas(8) unsigned char scratch[PERF_RING_SCRATCH];
static struct perf_ring ring;

static struct perf_event_mmap_page *meta(void)
{
    return (struct perf_event_mmap_page *)(void *)mapping;
}

/* Empties the ring and puts both counters at `start` (any value: they only grow). */
static void ring_reset(uint64_t start, uint64_t st, uint64_t regs_mask)
{
    memset(mapping, 0xAA, sizeof mapping);
    perf_ring_init(&ring, mapping, PAGE, DATA_PAGES, st, regs_mask);
    meta()->data_head = start;
    meta()->data_tail = start;
}

/* Appends n bytes at the head, wrapping as the kernel does, and publishes them. */
static void ring_put(const void *rec, size_t n)
{
    uint64_t head = meta()->data_head;
    for (size_t i = 0; i < n; i++)
        mapping[PAGE + ((head + i) & (PAGE * DATA_PAGES - 1))] = ((const unsigned char *)rec)[i];
    meta()->data_head = head + n;
}

/* A sample record in words: header, identifier, pid|tid, time, nr, ips. */
static size_t make_sample(uint64_t *w, uint64_t id, uint32_t tid, uint64_t time,
                          const uint64_t *ips, uint64_t n)
{
    size_t k = 1;
    w[k++] = id;
    w[k++] = (uint64_t)tid << 32 | 77;
    w[k++] = time;
    w[k++] = n;
    for (uint64_t i = 0; i < n; i++)
        w[k++] = ips[i];
    struct perf_event_header h = {PERF_RECORD_SAMPLE, 0, (uint16_t)(k * 8)};
    memcpy(&w[0], &h, 8);
    return k * 8;
}

static size_t make_switch(uint64_t *w, int out, int preempt, uint32_t tid, uint64_t time,
                          uint64_t id)
{
    uint16_t misc = (out ? PERF_RECORD_MISC_SWITCH_OUT : 0) |
                    (preempt ? PERF_RECORD_MISC_SWITCH_OUT_PREEMPT : 0);
    struct perf_event_header h = {PERF_RECORD_SWITCH, misc, 32};
    memcpy(&w[0], &h, 8);
    w[1] = (uint64_t)tid << 32 | 77;
    w[2] = time;
    w[3] = id;
    return 32;
}

/* ---- what the drain saw ------------------------------------------------------- */

#define MAXREC 64
static struct perf_rec seen[MAXREC];
static uint64_t seen_ips[MAXREC][16];
static size_t seen_nips[MAXREC];
static int nseen;

static void collect(const struct perf_rec *r, void *ctx)
{
    (void)ctx;
    if (nseen >= MAXREC) return;
    seen[nseen] = *r;
    seen_nips[nseen] = perf_callchain_user(r->ips, r->n_ips, seen_ips[nseen], 16);
    nseen++;
}

static long drain(void)
{
    nseen = 0;
    return perf_ring_drain(&ring, collect, NULL, scratch);
}

/* ---- cases -------------------------------------------------------------------- */

static void test_samples_and_markers(void)
{
    uint64_t w[64];
    const uint64_t ips[] = {(uint64_t)PERF_CONTEXT_USER, 0x401000, 0x401234, 0x402000};
    ring_reset(0, ST, 0);
    ring_put(w, make_sample(w, 9, 1234, 555, ips, 4));
    ring_put(w, make_switch(w, 1, 0, 1234, 600, 9));
    ring_put(w, make_switch(w, 0, 0, 1234, 900, 9));
    CHECK(drain() == 3);
    CHECK(nseen == 3);
    CHECK(seen[0].kind == PERF_REC_SAMPLE && seen[0].id == 9 && seen[0].tid == 1234 &&
          seen[0].pid == 77 && seen[0].time == 555);
    CHECK(seen_nips[0] == 3 && seen_ips[0][0] == 0x401000 && seen_ips[0][2] == 0x402000);
    CHECK(seen[1].kind == PERF_REC_SWITCH_OUT && seen[1].time == 600 && !seen[1].preempt &&
          seen[1].tid == 1234 && seen[1].id == 9);
    CHECK(seen[2].kind == PERF_REC_SWITCH_IN && seen[2].time == 900);
    CHECK(meta()->data_tail == meta()->data_head);
    CHECK(ring.bad == 0);
    CHECK(drain() == 0); /* nothing new */
}

static void test_kernel_frames_skipped(void)
{
    const uint64_t ips[] = {(uint64_t)PERF_CONTEXT_KERNEL,
                            0xffffffff81000000ull,
                            0xffffffff81000010ull,
                            (uint64_t)PERF_CONTEXT_USER,
                            0x1000,
                            0x2000};
    uint64_t out[8];
    CHECK(perf_callchain_user(ips, 6, out, 8) == 2 && out[0] == 0x1000 && out[1] == 0x2000);
    CHECK(perf_callchain_user(ips, 6, out, 1) == 1 && out[0] == 0x1000);
}

/* A record that straddles the ring's end comes out whole, at every 8-byte offset and
 * with counters far past one lap. */
static void test_wrapped(void)
{
    uint64_t w[64];
    uint64_t ips[12];
    for (int i = 0; i < 12; i++)
        ips[i] = 0x500000 + (uint64_t)i * 16;
    for (uint64_t back = 8; back <= 120; back += 8) {
        uint64_t start = 3ull * PAGE * DATA_PAGES - back;
        ring_reset(start, ST, 0);
        size_t n = make_sample(w, 5, 42, 1000 + back, ips, 12);
        ring_put(w, n);
        ring_put(w, make_switch(w, 1, 1, 42, 2000, 5));
        long got = drain();
        CHECKF(got == 2, "back=%llu got=%ld", (unsigned long long)back, got);
        CHECK(seen[0].kind == PERF_REC_SAMPLE && seen[0].time == 1000 + back);
        CHECK(seen_nips[0] == 12 && seen_ips[0][0] == 0x500000 && seen_ips[0][11] == ips[11]);
        CHECK(seen[1].kind == PERF_REC_SWITCH_OUT && seen[1].preempt && seen[1].time == 2000);
        CHECK(meta()->data_tail == start + n + 32);
    }
}

/* The drain in steps that merges per-CPU rings: each record's time before it is
 * parsed (samples and switch records, also across the ring's end), records past a cut
 * left for later, and only what was taken released to the kernel. */
static void test_steps(void)
{
    uint64_t w[64];
    const uint64_t ips[] = {0x401000, 0x402000};
    for (uint64_t back = 8; back <= 64; back += 8) {
        uint64_t start = 2ull * PAGE * DATA_PAGES - back;
        ring_reset(start, ST, 0);
        size_t n = make_sample(w, 5, 42, 1000, ips, 2);
        ring_put(w, n);
        ring_put(w, make_switch(w, 1, 0, 42, 2000, 5));
        ring_put(w, make_switch(w, 0, 0, 42, 3000, 5));
        uint64_t t = 0;
        nseen = 0;
        perf_ring_begin(&ring);
        CHECK(perf_ring_peek_time(&ring, &t) == 1 && t == 1000);
        CHECK(perf_ring_peek_time(&ring, &t) == 1 && t == 1000); /* peeking moves nothing */
        CHECK(perf_ring_take(&ring, collect, NULL, scratch) == 1);
        CHECKF(perf_ring_peek_time(&ring, &t) == 1 && t == 2000, "back=%llu t=%llu",
               (unsigned long long)back, (unsigned long long)t);
        CHECK(perf_ring_take(&ring, collect, NULL, scratch) == 1);
        CHECK(perf_ring_peek_time(&ring, &t) == 1 && t == 3000); /* past a cut: left */
        perf_ring_end(&ring);
        CHECK(meta()->data_tail == start + n + 32);
        CHECK(nseen == 2 && seen[0].time == 1000 && seen[1].kind == PERF_REC_SWITCH_OUT);
        perf_ring_begin(&ring); /* the next drain starts with it */
        CHECK(perf_ring_peek_time(&ring, &t) == 1 && t == 3000);
        CHECK(perf_ring_take(&ring, collect, NULL, scratch) == 1 && seen[2].time == 3000);
        CHECK(perf_ring_peek_time(&ring, &t) == 0 && perf_ring_take(&ring, collect, NULL, scratch) == 0);
        perf_ring_end(&ring);
        CHECK(meta()->data_tail == meta()->data_head && ring.bad == 0);
    }
    /* A record too short to hold its time is malformed: the rest is skipped, counted. */
    ring_reset(0, ST, 0);
    struct perf_event_header h = {PERF_RECORD_SWITCH, 0, 16};
    memcpy(&w[0], &h, 8);
    w[1] = 0;
    ring_put(w, 16);
    uint64_t t;
    perf_ring_begin(&ring);
    CHECK(perf_ring_peek_time(&ring, &t) == 0 && ring.bad == 16);
    perf_ring_end(&ring);
    CHECK(meta()->data_tail == meta()->data_head);
}

/* Bytes published that do not hold the record the header announces. */
static void test_truncated(void)
{
    uint64_t w[64];
    const uint64_t ips[] = {0x401000, 0x402000, 0x403000};
    ring_reset(100 * 8, ST, 0);
    size_t n = make_sample(w, 1, 7, 10, ips, 3);
    ring_put(w, n);
    ring_put(w, n - 16); /* the second copy is cut short */
    CHECK(drain() == -EBADMSG);
    CHECK(nseen == 1 && seen[0].time == 10);
    CHECK(ring.bad == n - 16);
    CHECK(meta()->data_tail == meta()->data_head); /* skipped, never re-read */
}

/* A callchain count larger than the record: must not be read past. */
static void test_callchain_too_long(void)
{
    uint64_t w[64];
    const uint64_t ips[] = {0x401000, 0x402000};
    ring_reset(0, ST, 0);
    size_t n = make_sample(w, 1, 7, 10, ips, 2);
    w[4] = 1u << 20; /* nr */
    ring_put(w, n);
    CHECK(drain() == -EBADMSG && nseen == 0 && ring.bad == n);
    ring_reset(0, ST, 0);
    w[4] = 3; /* one word more than there is */
    ring_put(w, n);
    CHECK(drain() == -EBADMSG && nseen == 0);
}

static void test_bad_headers(void)
{
    uint64_t w[8] = {0};
    struct perf_event_header h = {PERF_RECORD_SAMPLE, 0, 4};
    ring_reset(0, ST, 0);
    memcpy(w, &h, 8);
    ring_put(w, 16);
    CHECK(drain() == -EBADMSG && ring.bad == 16);

    h.size = 20; /* not a multiple of 8 */
    ring_reset(0, ST, 0);
    memcpy(w, &h, 8);
    ring_put(w, 24);
    CHECK(drain() == -EBADMSG);

    /* Counters claiming more unread bytes than the ring holds. */
    ring_reset(0, ST, 0);
    meta()->data_head = 2 * PAGE * DATA_PAGES;
    CHECK(drain() == -EBADMSG && ring.bad == 2 * PAGE * DATA_PAGES);
    CHECK(meta()->data_tail == meta()->data_head);

    /* A switch record too short for its sample_id trailer. */
    ring_reset(0, ST, 0);
    struct perf_event_header s = {PERF_RECORD_SWITCH, 0, 16};
    memcpy(w, &s, 8);
    ring_put(w, 16);
    CHECK(drain() == -EBADMSG);
}

static void test_lost_throttle_other(void)
{
    uint64_t w[16];
    struct perf_event_header h = {PERF_RECORD_LOST, 0, 48};
    ring_reset(0, ST, 0);
    memcpy(w, &h, 8);
    w[1] = 9;  /* id */
    w[2] = 17; /* lost */
    w[3] = (uint64_t)5 << 32 | 5;
    w[4] = 4444; /* time */
    w[5] = 9;
    ring_put(w, 48);
    struct perf_event_header t = {PERF_RECORD_THROTTLE, 0, 48};
    memcpy(w, &t, 8);
    w[1] = 5000;
    w[2] = 9;
    ring_put(w, 48);
    struct perf_event_header o = {PERF_RECORD_MMAP2, 0, 40}; /* skipped whole */
    memcpy(w, &o, 8);
    ring_put(w, 40);
    struct perf_event_header ls = {PERF_RECORD_LOST_SAMPLES, 0, 40};
    memcpy(w, &ls, 8);
    w[1] = 3;
    w[2] = (uint64_t)5 << 32 | 5;
    w[3] = 6000;
    w[4] = 9;
    ring_put(w, 40);
    const uint64_t ips[] = {0x1000};
    ring_put(w, make_sample(w, 9, 5, 7000, ips, 1));
    CHECK(drain() == 5);
    CHECK(seen[0].kind == PERF_REC_LOST && seen[0].lost == 17 && seen[0].time == 4444 &&
          seen[0].tid == 5);
    CHECK(seen[1].kind == PERF_REC_THROTTLE && seen[1].throttled && seen[1].time == 5000);
    CHECK(seen[2].kind == PERF_REC_OTHER);
    CHECK(seen[3].kind == PERF_REC_LOST && seen[3].lost == 3 && seen[3].time == 6000);
    CHECK(seen[4].kind == PERF_REC_SAMPLE && seen[4].time == 7000 && seen_ips[4][0] == 0x1000);
}

/* Registers and a copy of the user stack, with dyn_size checked against size. */
static void test_regs_and_stack(void)
{
    uint64_t st = ST | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    uint64_t w[32];
    size_t k = 1;
    w[k++] = 3;                       /* id */
    w[k++] = (uint64_t)8 << 32 | 8;   /* pid, tid */
    w[k++] = 99;                      /* time */
    w[k++] = 1;                       /* nr */
    w[k++] = 0x1000;                  /* ip */
    w[k++] = PERF_SAMPLE_REGS_ABI_64; /* abi */
    w[k++] = 0x7ffd0000;              /* two registers: bp, sp */
    w[k++] = 0x7ffc0000;
    w[k++] = 16; /* stack size */
    w[k++] = 0x1111;
    w[k++] = 0x2222;
    w[k++] = 8; /* dyn_size */
    struct perf_event_header h = {PERF_RECORD_SAMPLE, 0, (uint16_t)(k * 8)};
    memcpy(w, &h, 8);
    ring_reset(0, st, 0x3);
    ring_put(w, k * 8);
    CHECK(drain() == 1);
    CHECK(seen[0].abi == PERF_SAMPLE_REGS_ABI_64 && seen[0].regs && seen[0].regs[1] == 0x7ffc0000);
    uint64_t first = 0;
    if (seen[0].stack) memcpy(&first, seen[0].stack, 8);
    CHECK(seen[0].stack_size == 8 && first == 0x1111);

    w[k - 1] = 24; /* dyn_size larger than the copy */
    ring_reset(0, st, 0x3);
    ring_put(w, k * 8);
    CHECK(drain() == -EBADMSG && nseen == 0);
}

/* perf record's own layout: IP before TID, PERIOD after TIME. */
static void test_ip_and_period(void)
{
    uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
                  PERF_SAMPLE_CALLCHAIN;
    uint64_t w[8] = {0, 0x401234, (uint64_t)5 << 32 | 5, 4242, 100000, 1, 0x401234};
    struct perf_event_header h = {PERF_RECORD_SAMPLE, 0, 7 * 8};
    memcpy(w, &h, 8);
    ring_reset(0, st, 0);
    ring_put(w, 7 * 8);
    CHECK(drain() == 1);
    CHECK(seen[0].ip == 0x401234 && seen[0].tid == 5 && seen[0].time == 4242 &&
          seen[0].period == 100000 && seen_nips[0] == 1 && seen_ips[0][0] == 0x401234);
}

/* ---- a real event on this thread ---------------------------------------------- */

__attribute__((noinline, section("kestrel_spin"))) static uint64_t spin(uint64_t n)
{
    uint64_t x = 1;
    for (uint64_t i = 0; i < n; i++)
        x = x * 6364136223846793005ull + i;
    return x;
}
extern const char __start_kestrel_spin[], __stop_kestrel_spin[];

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int real_samples, real_in_spin, real_wrong_tid, real_switches;
static void real_collect(const struct perf_rec *r, void *ctx)
{
    uint64_t ips[8];
    if (r->kind == PERF_REC_SWITCH_OUT || r->kind == PERF_REC_SWITCH_IN) real_switches++;
    if (r->kind != PERF_REC_SAMPLE) return;
    real_samples++;
    if ((pid_t)r->tid != *(pid_t *)ctx) real_wrong_tid++;
    size_t n = perf_callchain_user(r->ips, r->n_ips, ips, 8);
    if (n && ips[0] >= (uint64_t)__start_kestrel_spin && ips[0] < (uint64_t)__stop_kestrel_spin)
        real_in_spin++;
}

static void test_real_event(void)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = 1000000; /* 1 ms of this thread's CPU time */
    a.sample_type = ST;
    a.exclude_kernel = 1;
    a.exclude_callchain_kernel = 1;
    a.sample_id_all = 1;
    a.context_switch = 1;
    a.disabled = 1;
    pid_t tid = (pid_t)syscall(SYS_gettid);
    int fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "perf_event_open refused here (%s): real-event case skipped\n",
                strerror(errno));
        return;
    }
    size_t pages = 64;
    void *m = mmap(NULL, PAGE * (pages + 1), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(m != MAP_FAILED);
    if (m == MAP_FAILED) return;
    struct perf_ring r;
    perf_ring_init(&r, m, PAGE, pages, ST, 0);
    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    uint64_t t0 = thread_cpu_ns();
    volatile uint64_t sink = 0;
    /* 200 ms of CPU in slices, with a sleep after each so that switches happen and
     * the ring is drained while the event runs. */
    while (thread_cpu_ns() - t0 < 200000000ull) {
        sink += spin(2000000);
        usleep(1000);
        perf_ring_drain(&r, real_collect, &tid, scratch);
    }
    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    uint64_t cpu_ms = (thread_cpu_ns() - t0) / 1000000;
    /* The event's own clock: the kernel's hrtimer that takes the samples runs while the
     * thread is scheduled in, and on a virtual machine that includes time the host stole,
     * which CLOCK_THREAD_CPUTIME_ID leaves out. One sample per ms of this clock at most. */
    uint64_t event_ns = 0;
    CHECK(read(fd, &event_ns, sizeof event_ns) == (ssize_t)sizeof event_ns);
    uint64_t event_ms = event_ns / 1000000;
    CHECK(perf_ring_drain(&r, real_collect, &tid, scratch) >= 0);
    fprintf(stderr,
            "real event: %d samples over %llu ms of CPU (%llu ms of the event's clock), "
            "%d in spin(), %d switches\n",
            real_samples, (unsigned long long)cpu_ms, (unsigned long long)event_ms,
            real_in_spin, real_switches);
    /* One sample per ms of user CPU; the time spent in the kernel (usleep, the drain's
     * clock reads) is not sampled with exclude_kernel, hence the lower bound. */
    CHECK(real_samples >= (int)(cpu_ms * 8 / 10));
    CHECK(real_samples <= (int)event_ms + 2);
    CHECK(real_wrong_tid == 0);
    CHECK(real_in_spin >= real_samples * 8 / 10);
    CHECK(real_switches >= 2 * 20); /* at least one sleep per 10 ms of CPU: out and in */
    CHECK(r.bad == 0);
    munmap(m, PAGE * (pages + 1));
    close(fd);
}

int main(void)
{
    test_samples_and_markers();
    test_kernel_frames_skipped();
    test_wrapped();
    test_steps();
    test_truncated();
    test_callchain_too_long();
    test_bad_headers();
    test_lost_throttle_other();
    test_regs_and_stack();
    test_ip_and_period();
    test_real_event();
    return check_exit();
}
