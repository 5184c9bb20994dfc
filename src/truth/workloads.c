/* The ground-truth workloads (workloads.h). Every function here that a profile must
 * name is an external, non-inlined symbol with a frame pointer. */
#include "truth/workloads.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "truth/burn.h"

BURN_DEFINE(share40)
BURN_DEFINE(share22)
BURN_DEFINE(share15)
BURN_DEFINE(share10)
BURN_DEFINE(share06)
BURN_DEFINE(share05)
BURN_DEFINE(share02)
BURN_DEFINE(main_half)
BURN_DEFINE(worker_half)
BURN_DEFINE(compute_rows)
BURN_DEFINE(oversub0)
BURN_DEFINE(oversub1)
BURN_DEFINE(oversub2)
BURN_DEFINE(oversub3)
BURN_DEFINE(oversub4)
BURN_DEFINE(oversub5)
BURN_DEFINE(oversub6)
BURN_DEFINE(oversub7)
BURN_DEFINE(busy_half)
BURN_DEFINE(napper_burn)

const struct workload_fn workload_shares[WORKLOAD_SHARES_N] = {
    {"share40", share40, 40}, {"share22", share22, 22}, {"share15", share15, 15},
    {"share10", share10, 10}, {"share06", share06, 6},  {"share05", share05, 5},
    {"share02", share02, 2},
};

void (*const workload_oversub[WORKLOAD_OVERSUB_MAX])(uint64_t) = {
    oversub0, oversub1, oversub2, oversub3, oversub4, oversub5, oversub6, oversub7,
};

/* The names of the workloads, NULL-terminated. */
static const char *const workload_names[] = {"shares", "worker", "memset", "oversub", "sleeper", NULL};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* --- shares ---------------------------------------------------------------------- */

static uint64_t xorshift(uint64_t *rng)
{
    *rng ^= *rng << 13, *rng ^= *rng >> 7, *rng ^= *rng << 17;
    return *rng;
}

/* Each round runs every function for its weight's units, in a new random order, cut
 * at a random point and rotated (the round starts inside one function, which finishes
 * at the round's end). A sampler whose period locks onto the round's length then
 * still lands on a uniformly random point of the round's work: each function is hit
 * in proportion to its units, whatever the phase. A new order alone is not enough: a
 * sample that always lands at the round's start would find each function there as
 * often as any other, whatever its weight.
 *
 * Every WORKLOAD_TIMED_EVERY-th round, each call is timed on the thread's CPU clock:
 * the CPU time per unit each function had in this very run, whatever the machine did
 * meanwhile (the truth the error table scores against). The report line gets each
 * function's estimated CPU ns over the whole run, as run_ns=a,b,... in table order. */
static void run_shares(uint64_t units, FILE *out)
{
    const uint64_t per = WORKLOAD_ROUND_UNITS / 100;
    uint64_t timed_ns[WORKLOAD_SHARES_N] = {0}, timed_units[WORKLOAD_SHARES_N] = {0};
    /* What a timed call costs beyond the call (the clock's own read), taken off each. */
    uint64_t clock_ns = UINT64_MAX;
    for (int k = 0; k < 64; k++) {
        uint64_t t0 = burn_thread_cpu_ns(), t1 = burn_thread_cpu_ns();
        if (t1 - t0 < clock_ns) clock_ns = t1 - t0;
    }
    uint64_t rounds = units / WORKLOAD_ROUND_UNITS + 1, rng = 0x9e3779b97f4a7c15ull, total = 0;
    unsigned order[WORKLOAD_SHARES_N];
    for (unsigned i = 0; i < WORKLOAD_SHARES_N; i++) {
        order[i] = i;
        total += workload_shares[i].weight * per;
    }
    for (uint64_t r = 0; r < rounds; r++) {
        for (unsigned i = WORKLOAD_SHARES_N - 1; i > 0; i--) {
            unsigned j = (unsigned)(xorshift(&rng) % (i + 1)), t = order[i];
            order[i] = order[j], order[j] = t;
        }
        uint64_t cut = xorshift(&rng) % total;
        int timed = r % WORKLOAD_TIMED_EVERY == 0;
        for (int pass = 0; pass < 2; pass++) { /* [cut, total), then [0, cut) */
            uint64_t lo = pass ? 0 : cut, hi = pass ? cut : total, at = 0;
            for (unsigned i = 0; i < WORKLOAD_SHARES_N; i++) {
                const struct workload_fn *f = &workload_shares[order[i]];
                uint64_t a = at > lo ? at : lo, end = at + f->weight * per;
                uint64_t b = end < hi ? end : hi;
                at = end;
                if (b <= a) continue;
                uint64_t t0 = timed ? burn_thread_cpu_ns() : 0;
                f->fn(b - a);
                if (!timed) continue;
                uint64_t t = burn_thread_cpu_ns() - t0;
                timed_ns[order[i]] += t > clock_ns ? t - clock_ns : 0;
                timed_units[order[i]] += b - a;
            }
        }
    }
    fprintf(out, " run_ns=");
    for (unsigned i = 0; i < WORKLOAD_SHARES_N; i++) {
        double per_unit = timed_units[i] ? (double)timed_ns[i] / (double)timed_units[i] : 0;
        fprintf(out, "%s%.0f", i ? "," : "",
                per_unit * (double)(workload_shares[i].weight * per) * (double)rounds);
    }
}

/* --- worker and oversub: threads of equal work --------------------------------------- */

struct spinner {
    void (*fn)(uint64_t units);
    uint64_t units;
    char name[16];
};

static void *spin_thread(void *arg)
{
    struct spinner *s = arg;
    prctl(PR_SET_NAME, s->name);
    /* Chunks of about a millisecond, so the threads run side by side to the end. */
    for (uint64_t done = 0; done < s->units; done += WORKLOAD_ROUND_UNITS)
        s->fn(WORKLOAD_ROUND_UNITS);
    return NULL;
}

static int run_threads(struct spinner *sp, unsigned n, int main_too)
{
    pthread_t tids[WORKLOAD_OVERSUB_MAX];
    unsigned started = 0;
    for (unsigned i = main_too ? 1 : 0; i < n; i++) {
        if (pthread_create(&tids[started], NULL, spin_thread, &sp[i])) break;
        started++;
    }
    if (main_too) spin_thread(&sp[0]);
    for (unsigned i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    return started == n - (main_too ? 1 : 0) ? 0 : -EAGAIN;
}

static int run_worker(uint64_t units)
{
    struct spinner sp[2] = {{main_half, units / 2, "main"}, {worker_half, units / 2, "worker"}};
    char keep[16] = "";
    prctl(PR_GET_NAME, keep);
    int rc = run_threads(sp, 2, 1);
    prctl(PR_SET_NAME, keep);
    return rc;
}

unsigned workload_oversub_threads(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1) cores = 1;
    return cores >= WORKLOAD_OVERSUB_MAX / 2 ? WORKLOAD_OVERSUB_MAX : 2 * (unsigned)cores;
}

static int run_oversub(uint64_t units, FILE *out)
{
    unsigned n = workload_oversub_threads();
    struct spinner sp[WORKLOAD_OVERSUB_MAX];
    for (unsigned i = 0; i < n; i++) {
        sp[i].fn = workload_oversub[i];
        sp[i].units = units / n;
        snprintf(sp[i].name, sizeof sp[i].name, "busy-%u", i);
    }
    fprintf(out, " threads=%u cores=%ld", n, sysconf(_SC_NPROCESSORS_ONLN));
    return run_threads(sp, n, 0);
}

/* --- memset: time inside a frame-pointer-less libc function -------------------------- */

static unsigned char *fill_buf;

/* Not a tail call (the barrier after it), so this frame is live while memset runs:
 * a frame-pointer walk from inside memset still skips it, which is the point. */
__attribute__((noinline, noclone)) void fill_buffers(uint64_t calls)
{
    static volatile size_t len = WORKLOAD_FILL_BYTES; /* not a constant: a real call */
    if (!fill_buf && !(fill_buf = malloc(WORKLOAD_FILL_BYTES))) return;
    for (uint64_t i = 0; i < calls; i++) {
        memset(fill_buf, (int)i, len);
        __asm__ volatile("" : : "r"(fill_buf) : "memory");
    }
}

static void run_memset(uint64_t units)
{
    for (uint64_t done = 0; done < units; done += WORKLOAD_MEMSET_COMPUTE) {
        compute_rows(WORKLOAD_MEMSET_COMPUTE);
        fill_buffers(WORKLOAD_MEMSET_FILLS);
    }
}

/* --- sleeper: half of a function's wall time off the CPU ----------------------------- */

static uint64_t napper_ns;

__attribute__((noinline, noclone)) void napper(uint64_t units)
{
    uint64_t t0 = now_ns();
    napper_burn(units);
    uint64_t burned = now_ns() - t0;
    struct timespec ts = {(time_t)(burned / 1000000000u), (long)(burned % 1000000000u)};
    while (nanosleep(&ts, &ts) && errno == EINTR) {
    }
    napper_ns += now_ns() - t0;
    __asm__ volatile("" ::: "memory");
}

static void run_sleeper(uint64_t units, FILE *out)
{
    /* The kernel's default 50 µs timer slack would stretch each 2 ms sleep by 2.5%. */
    prctl(PR_SET_TIMERSLACK, 1UL);
    const uint64_t chunk = 2 * WORKLOAD_ROUND_UNITS;
    uint64_t t0 = now_ns();
    for (uint64_t done = 0; done < units; done += 2 * chunk) {
        busy_half(chunk);
        napper(chunk);
    }
    uint64_t wall = now_ns() - t0;
    fprintf(out, " napper_wall_ns=%llu wall_ns=%llu", (unsigned long long)napper_ns,
            (unsigned long long)wall);
}

int workload_run(const char *name, uint64_t units, FILE *out)
{
    int rc = 0, known = 0;
    for (const char *const *n = workload_names; *n; n++)
        known |= !strcmp(*n, name);
    if (!known) return -EINVAL;
    fprintf(out, "workload %s units=%llu", name, (unsigned long long)units);
    if (!strcmp(name, "shares"))
        run_shares(units, out);
    else if (!strcmp(name, "worker"))
        rc = run_worker(units);
    else if (!strcmp(name, "memset"))
        run_memset(units);
    else if (!strcmp(name, "oversub"))
        rc = run_oversub(units, out);
    else
        run_sleeper(units, out);
    fprintf(out, "\n");
    fflush(out);
    return rc;
}
