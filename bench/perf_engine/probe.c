/* What this kernel lets a process do with perf_event_open on its own threads: the
 * facts the perf engine's design rests on. Prints one line per question. */
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int popen_ev(struct perf_event_attr *a, pid_t tid)
{
    return (int)syscall(SYS_perf_event_open, a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static void attr_clock(struct perf_event_attr *a, int excl_kernel)
{
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    a->type = PERF_TYPE_SOFTWARE;
    a->config = PERF_COUNT_SW_TASK_CLOCK;
    a->sample_period = 1000000;
    a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
    a->exclude_kernel = excl_kernel;
    a->exclude_hv = 1;
    a->exclude_callchain_kernel = 1;
    a->sample_id_all = 1;
    a->use_clockid = 1;
    a->clockid = CLOCK_MONOTONIC;
    a->context_switch = 1;
    a->disabled = 1;
}

static volatile pid_t other_tid;
static volatile int stop;
static void *idle_thread(void *p)
{
    (void)p;
    other_tid = (pid_t)syscall(SYS_gettid);
    while (!stop)
        usleep(1000);
    return NULL;
}

static volatile uint64_t sink;
static void spin_ms(int ms)
{
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    for (;;) {
        for (int i = 0; i < 10000; i++)
            sink += (uint64_t)i * i;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
        if ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) >= ms * 1000000L) break;
    }
}

int main(void)
{
    pid_t me = (pid_t)syscall(SYS_gettid);
    struct perf_event_attr a;
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    int par = -9;
    if (f) {
        if (fscanf(f, "%d", &par) != 1) par = -9;
        fclose(f);
    }
    printf("perf_event_paranoid=%d euid=%d\n", par, (int)geteuid());

    attr_clock(&a, 1);
    int fd1 = popen_ev(&a, me);
    printf("task-clock exclude_kernel=1 on own tid: %s\n", fd1 >= 0 ? "ok" : strerror(errno));
    if (fd1 < 0) return 1;
    attr_clock(&a, 0);
    int fd0 = popen_ev(&a, me);
    printf("task-clock exclude_kernel=0 on own tid: %s\n", fd0 >= 0 ? "ok" : strerror(errno));

    pthread_t th;
    pthread_create(&th, NULL, idle_thread, NULL);
    while (!other_tid)
        usleep(100);
    attr_clock(&a, 1);
    int fdo = popen_ev(&a, other_tid);
    printf("task-clock on another thread of the process: %s\n", fdo >= 0 ? "ok" : strerror(errno));

    long pg = sysconf(_SC_PAGESIZE);
    size_t len = (size_t)pg * (1 + 8);
    void *ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd1, 0);
    printf("mmap 8 data pages: %s\n", ring != MAP_FAILED ? "ok" : strerror(errno));
    if (ring == MAP_FAILED) return 1;
    int r = ioctl(fdo, PERF_EVENT_IOC_SET_OUTPUT, fd1);
    printf("SET_OUTPUT from another thread's (cpu=-1) event into this ring: %s\n",
           r == 0 ? "ok" : strerror(errno));

    struct perf_event_attr cs;
    memset(&cs, 0, sizeof cs);
    cs.size = sizeof cs;
    cs.type = PERF_TYPE_SOFTWARE;
    cs.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
    cs.sample_period = 1;
    cs.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
    cs.exclude_kernel = 1;
    cs.exclude_callchain_kernel = 1;
    cs.sample_id_all = 1;
    cs.use_clockid = 1;
    cs.clockid = CLOCK_MONOTONIC;
    cs.disabled = 1;
    int fcs1 = popen_ev(&cs, me);
    cs.exclude_kernel = 0;
    int fcs0 = popen_ev(&cs, me);
    printf("context-switches exclude_kernel=0: %s\n", fcs0 >= 0 ? "ok" : strerror(errno));
    r = fcs0 >= 0 ? ioctl(fcs0, PERF_EVENT_IOC_SET_OUTPUT, fd1) : -1;
    printf("SET_OUTPUT same thread's switch event into its clock ring: %s\n",
           r == 0 ? "ok" : strerror(errno));

    ioctl(fd1, PERF_EVENT_IOC_ENABLE, 0);
    if (fcs0 >= 0) ioctl(fcs0, PERF_EVENT_IOC_ENABLE, 0);
    if (fcs1 >= 0) ioctl(fcs1, PERF_EVENT_IOC_ENABLE, 0);
    for (int i = 0; i < 5; i++) {
        spin_ms(4);
        usleep(2000);
    }
    ioctl(fd1, PERF_EVENT_IOC_DISABLE, 0);
    if (fcs0 >= 0) ioctl(fcs0, PERF_EVENT_IOC_DISABLE, 0);

    struct perf_event_mmap_page *mp = ring;
    uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
    unsigned char *data = (unsigned char *)ring + mp->data_offset;
    uint64_t size = mp->data_size;
    int n_sample = 0, n_switch_out = 0, n_switch_in = 0, n_other = 0, n_cs = 0;
    uint64_t pos = mp->data_tail;
    while (pos + sizeof(struct perf_event_header) <= head) {
        struct perf_event_header h;
        memcpy(&h, data + (pos % size), sizeof h); /* fine for a probe: 8 pages, no wrap */
        if (h.type == PERF_RECORD_SAMPLE) {
            /* tid pid, time, nr, ips: a period-1 sample is a context switch sample */
            uint64_t w[3];
            memcpy(w, data + (pos % size) + 8, sizeof w);
            (void)w;
            n_sample++;
        } else if (h.type == PERF_RECORD_SWITCH) {
            if (h.misc & PERF_RECORD_MISC_SWITCH_OUT)
                n_switch_out++;
            else
                n_switch_in++;
        } else
            n_other++;
        pos += h.size;
    }
    (void)n_cs;
    printf("after 5x(4 ms busy + 2 ms sleep) at 1 kHz: %d samples (clock + switch), "
           "%d SWITCH out, %d SWITCH in, %d other records; data_size=%llu\n",
           n_sample, n_switch_out, n_switch_in, n_other, (unsigned long long)size);
    printf("context-switches exclude_kernel=1 opened: %s (it would never fire: the "
           "switch happens in the kernel)\n",
           fcs1 >= 0 ? "yes" : "no");
    stop = 1;
    pthread_join(th, NULL);
    return 0;
}
