/* attach.c — a recording from outside: targets found, events opened, rings drained
 * until the duration ends, a signal comes or the targets end, then one raw profile per
 * process (attach.h).
 *
 * Order: the CPU rings are drained into one list of records, sorted by time, and a
 * record is acted on once every ring was read past it (2 ms): a thread that leaves one
 * CPU and comes back on another has its switch-out before its switch-in. A sample's
 * stack is walked as it is drained, with the target's images as last read. */
#include "attach/attach.h"
#include "attach/events.h"
#include "attach/proc.h"
#include "attach/rawout.h"
#include "attach/target.h"
#include "runtime/arch/arch.h"
#include "runtime/unwind/resume.h"
#include "runtime/unwind/step.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CUT_NS 2000000ull          /* records this close to a drain wait for the next */
#define MAPS_EVERY_NS 1000000000ull /* a live target's maps read again */
#define TASKS_SCANS 3               /* /proc/PID/task read again, for threads made meanwhile */
/* Past a full copy, the walk goes on over the thread's stack as it is at the drain
 * (runtime/unwind/resume.h), read in pieces of this size. */
#define STACK_READ (64u << 10)

enum pend_kind { P_CPU, P_SWITCH_SAMPLE, P_OUT, P_IN };

struct pend {
    uint64_t t;
    uint32_t target;
    pid_t tid;
    uint8_t kind;
    int32_t stack;
};

struct session {
    const struct attach_options *o;
    const char *raw_dir;
    char images_dir[4200];
    struct events ev;
    struct target **t;
    size_t n_t, cap_t;
    uint64_t start_mono, start_real, end_mono, end_real;
    uint64_t deadline; /* CLOCK_MONOTONIC end of --duration, 0 none: later records are not the recording's */
    struct pend *p;
    size_t n_p, cap_p;
    uint64_t dropped, unknown_pid, no_user;
    pid_t *opened; /* threads whose events are open */
    size_t n_opened;
    pid_t *skip;   /* processes that could not be read (kernel threads, ended): sorted */
    size_t n_skip, cap_skip;
    int read_refused; /* errno of a target whose memory process_vm_readv may not read, 0 */
    uint64_t frames[UNWIND_MAX_DEPTH];
    unsigned char read_buf[2][STACK_READ] __attribute__((aligned(8)));
};

static uint64_t clock_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ============================ targets ============================ */

static struct target *target_of(struct session *s, pid_t pid, uint32_t *index)
{
    for (size_t i = 0; i < s->n_t; i++)
        if (s->t[i]->pid == pid) {
            *index = (uint32_t)i;
            return s->t[i];
        }
    return NULL;
}

static struct target *target_add(struct session *s, pid_t pid, uint32_t *index)
{
    struct target *t = target_new(pid, s->images_dir);
    if (!t) return NULL;
    if (s->n_t == s->cap_t) {
        size_t c = s->cap_t ? 2 * s->cap_t : 16;
        void *q = realloc(s->t, c * sizeof *s->t);
        if (!q) return target_free(t), NULL;
        s->t = q, s->cap_t = c;
    }
    *index = (uint32_t)s->n_t;
    s->t[s->n_t++] = t;
    return t;
}

/* ============================ samples ============================ */

/* The first of frames[0..n) in no executable mapping of t as last read, or n. */
static size_t first_outside(const struct target *t, const uint64_t *f, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (!target_exec(t, f[k])) return k;
    return n;
}

/* Reads the target's stack (process_vm_readv: read only, the target goes on). */
static long read_target(void *arg, uint64_t addr, void *buf, size_t len)
{
    const struct target *t = arg;
    struct iovec l = {buf, len}, r = {(void *)(uintptr_t)addr, len};
    ssize_t got = process_vm_readv(t->pid, &l, 1, &r, 1, 0);
    return got < 0 ? -errno : (long)got;
}

/* The top of the stack sp lies in, for thread tid: the end of the target's mapping
 * that holds sp ([stack] for the main thread, the thread's own mapping for the
 * others), kept per thread and read again from /proc/PID/maps when sp leaves it.
 * 0 unknown. */
static uint64_t stack_top(struct target *t, pid_t tid, uint64_t sp)
{
    uint32_t thi;
    struct target_thread *th = tid ? target_thread(t, tid, &thi) : NULL;
    if (th && sp >= th->stack_lo && sp < th->stack_hi) return th->stack_hi;
    uint64_t lo, hi;
    if (t->exited || proc_mapping_at(t->pid, sp, &lo, &hi)) return 0;
    if (th) th->stack_lo = lo, th->stack_hi = hi;
    return hi;
}

/* Walks a copy of a stack (size bytes at `copy`, taken at sp) from regs with the
 * target's images; interns the stack. A walk that runs out of a full copy goes on over
 * thread tid's stack as it is now (uw_walk_resume, the runtime's perf engine's: it
 * carries on only where it finds the copy's last frames again). A frame outside every
 * executable mapping known, in a stack taken after the maps were last read (at
 * `when`), reads them again (a library mapped since: the loader's, right after exec)
 * and walks again. */
static int32_t walk_copy(struct session *s, struct target *t, pid_t tid, struct uw_regs regs,
                         const unsigned char *copy, uint64_t size, uint64_t when)
{
    struct uw_stack m = {regs.sp, regs.sp + size, (intptr_t)copy - (intptr_t)regs.sp,
                         UW_DIRECT_NONE, NULL};
    /* Only a full copy has more of the stack above it. */
    uint64_t top = size >= s->ev.copy ? stack_top(t, tid, regs.sp) : 0;
    struct uw_source src = {top > m.hi ? read_target : NULL,
                            t,
                            top > m.hi ? top : 0,
                            {s->read_buf[0], s->read_buf[1]},
                            STACK_READ};
    enum unwind_stop stop;
    size_t n;
    uint64_t resumed = t->resumed.walks;
    for (int pass = 0;; pass++) {
        resumed = t->resumed.walks;
        uwtab_use(&t->uw);
        n = uw_walk_resume(s->o->mode, regs, &m, &src, s->frames, UNWIND_MAX_DEPTH, &stop,
                           &t->resumed);
        uwtab_use(NULL);
        if (pass || t->exited || t->maps_ns >= when || first_outside(t, s->frames, n) == n)
            break;
        if (target_maps(t, s->images_dir) < 0) t->exited = 1;
    }
    t->copies++;
    /* Left a full copy and not read on past it (no stack to read, or the walk could
     * not be carried on): cut, the stack goes on above it. The kernel copies less only
     * where the stack's mapping ends. */
    if (stop == UNWIND_END_TOP && size >= s->ev.copy && t->resumed.walks == resumed &&
        (!top || regs.sp + size < top))
        stop = UNWIND_CUT_COPY_END;
    if (stop == UNWIND_CUT_COPY_END) t->copy_short++;
    /* A return address in no executable mapping: the walk ran through data. */
    size_t k = first_outside(t, s->frames, n);
    if (k > 0 && k < n) {
        n = k;
        stop = UNWIND_CUT_NO_EXEC;
    }
    t->stops[stop]++;
    if (unwind_cut_short(stop)) t->cut_short++;
    return target_stack(t, s->frames, n, (int)stop);
}

static int32_t sample_stack(struct session *s, struct target *t, const struct perf_rec *r)
{
    struct arch_regs ar;
    arch_perf_regs(r->regs, &ar);
    struct uw_regs regs = {.pc = ar.pc, .sp = ar.sp, .fp = ar.fp, .interrupted = 1, .lr = ar.lr};
    return walk_copy(s, t, (pid_t)r->tid, regs, r->stack, r->stack_size, r->time);
}

/* The stack of thread tid as it is now, if it is asleep in a system call: from the pc
 * and sp of /proc/PID/task/TID/syscall and a copy of its stack (process_vm_readv: read
 * only). The stack's index, or -1 (running, not in a system call, unreadable). */
static int32_t blocked_stack(struct session *s, struct target *t, pid_t tid)
{
    static unsigned char copy[EVENTS_STACK_COPY > EVENTS_STACK_COPY_LIMITED
                                  ? EVENTS_STACK_COPY
                                  : EVENTS_STACK_COPY_LIMITED];
    char path[96], buf[512], state = 0;
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)t->pid, (int)tid);
    FILE *f = fopen(path, "re");
    if (f) {
        if (fgets(buf, sizeof buf, f)) {
            char *r = strrchr(buf, ')');
            if (r && r[1] == ' ') state = r[2];
        }
        fclose(f);
    }
    if (state != 'S' && state != 'D') return -1;
    snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", (int)t->pid, (int)tid);
    f = fopen(path, "re");
    if (!f) return -1;
    unsigned long long v[9];
    long nr;
    int got = fgets(buf, sizeof buf, f)
                  ? sscanf(buf, "%ld %llx %llx %llx %llx %llx %llx %llx %llx", &nr, &v[0], &v[1],
                           &v[2], &v[3], &v[4], &v[5], &v[6], &v[7])
                  : 0;
    fclose(f);
    if (got != 9 || nr < 0) return -1; /* running, or not in a system call */
    uint64_t sp = v[6], pc = v[7], size = s->ev.copy;
    /* As the kernel copies: up to where the stack's mapping ends. */
    ssize_t n = -1;
    while (size >= 8) {
        struct iovec l = {copy, (size_t)size}, r = {(void *)(uintptr_t)sp, (size_t)size};
        n = process_vm_readv(t->pid, &l, 1, &r, 1, 0);
        if (n > 0) break;
        uint64_t to_page = 4096 - (sp & 4095);
        size = size > to_page && size - to_page >= 4096 ? ((size - to_page) & ~4095ull) + to_page
               : size > to_page                          ? to_page
                                                         : 0;
    }
    if (n <= 0) return -1;
    struct uw_regs regs = {.pc = pc, .sp = sp, .fp = 0, .interrupted = 1};
    return walk_copy(s, t, tid, regs, copy, (uint64_t)n, clock_ns(CLOCK_MONOTONIC));
}

/* A thread asleep in a system call as the recording starts: no switch will say where
 * it waits until it wakes, so its stack is read now (blocked_stack), and its off-CPU
 * interval begins at the start. A thread blocked through the whole recording has its
 * waiting samples so. */
static void asleep_at_start(struct session *s, struct target *t, pid_t tid)
{
    int32_t st = blocked_stack(s, t, tid);
    uint32_t thi;
    struct target_thread *th = target_thread(t, tid, &thi);
    if (!th || st < 0) return;
    th->off = 1;
    th->off_ns = s->start_mono;
    th->off_stack = st;
}

static int pend_push(struct session *s, struct pend p)
{
    if (s->n_p == s->cap_p) {
        size_t c = s->cap_p ? 2 * s->cap_p : 4096;
        void *q = realloc(s->p, c * sizeof *s->p);
        if (!q) return -1;
        s->p = q, s->cap_p = c;
    }
    s->p[s->n_p++] = p;
    return 0;
}

/* Processes not to be read again: a kernel thread has no maps, an ended one none left. */
static size_t skip_at(const struct session *s, pid_t pid)
{
    size_t lo = 0, hi = s->n_skip;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->skip[mid] < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int skipped(const struct session *s, pid_t pid)
{
    size_t k = skip_at(s, pid);
    return k < s->n_skip && s->skip[k] == pid;
}

static void skip_add(struct session *s, pid_t pid)
{
    if (s->n_skip == s->cap_skip) {
        size_t c = s->cap_skip ? 2 * s->cap_skip : 64;
        pid_t *q = realloc(s->skip, c * sizeof *q);
        if (!q) return;
        s->skip = q, s->cap_skip = c;
    }
    size_t k = skip_at(s, pid);
    memmove(&s->skip[k + 1], &s->skip[k], (s->n_skip - k) * sizeof *s->skip);
    s->skip[k] = pid;
    s->n_skip++;
}

static void on_record(const struct perf_rec *r, void *arg)
{
    struct session *s = arg;
    if (r->kind == PERF_REC_LOST) {
        s->dropped += r->lost;
        return;
    }
    if (r->kind != PERF_REC_SAMPLE && r->kind != PERF_REC_SWITCH_OUT &&
        r->kind != PERF_REC_SWITCH_IN)
        return;
    /* The idle task, and kestrel itself (the whole machine). */
    if (r->pid == 0 || (pid_t)r->pid == getpid()) return;
    uint32_t ti;
    struct target *t = target_of(s, (pid_t)r->pid, &ti);
    /* A process the events reached that is not known yet: a fork child (--children),
     * any process (-a). Read now, while it lives. */
    if (!t && (s->o->children || s->o->all) && !skipped(s, (pid_t)r->pid)) {
        t = target_add(s, (pid_t)r->pid, &ti);
        if (!t) skip_add(s, (pid_t)r->pid);
    }
    if (!t) {
        s->unknown_pid++;
        return;
    }
    struct pend p = {r->time, ti, (pid_t)r->tid, 0, -1};
    if (r->kind == PERF_REC_SAMPLE) {
        if (!r->abi || !r->regs) { /* in a kernel thread, or no user registers */
            s->no_user++;
            return;
        }
        p.kind = events_is_switch(&s->ev, r->id) ? P_SWITCH_SAMPLE : P_CPU;
        p.stack = sample_stack(s, t, r);
    } else if (r->kind == PERF_REC_SWITCH_OUT) {
        if (r->preempt) return; /* still runnable: not waiting */
        p.kind = P_OUT;
    } else {
        p.kind = P_IN;
    }
    pend_push(s, p);
}

static int pend_cmp(const void *a, const void *b)
{
    const struct pend *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* One waiting sample per point of the 1/hz grid from the start in [from, to). */
static void waits(struct session *s, struct target *t, uint32_t thi, struct target_thread *th,
                  uint64_t from, uint64_t to)
{
    uint64_t per = s->ev.period_ns;
    if (from < s->start_mono) from = s->start_mono;
    if (to <= from) return;
    uint64_t k = (from - s->start_mono + per - 1) / per;
    for (; s->start_mono + k * per < to; k++) {
        t->waits++;
        if (th->off_stack < 0) {
            t->waits_unknown++;
            continue;
        }
        target_row(t, k * per, thi, th->off_stack, 1, 0);
    }
}

/* Whether the records after p (sorted, every ring drained) hold p's thread's switch-in:
 * if not, the episode p begins is still under way. */
static int switched_in_since(const struct session *s, const struct pend *p)
{
    for (const struct pend *q = p + 1; q < s->p + s->n_p; q++)
        if (q->tid == p->tid && q->target == p->target && q->kind == P_IN) return 1;
    return 0;
}

static void act(struct session *s, const struct pend *p)
{
    if (s->deadline && p->t >= s->deadline) return;
    struct target *t = s->t[p->target];
    uint32_t thi;
    struct target_thread *th = target_thread(t, p->tid, &thi);
    if (!th) return;
    uint64_t rel = p->t > s->start_mono ? p->t - s->start_mono : 0;
    switch (p->kind) {
    case P_CPU:
        if (th->off) { /* its switch-in was lost: it runs */
            waits(s, t, thi, th, th->off_ns, p->t);
            th->off = 0;
        }
        if (p->stack >= 0) target_row(t, rel, thi, p->stack, 0, s->ev.period_ns);
        break;
    case P_SWITCH_SAMPLE:
        th->cs_stack = p->stack;
        th->cs_ns = p->t;
        break;
    case P_OUT:
        th->off = 1;
        th->off_ns = p->t;
        /* The switch sample comes just before its record. */
        th->off_stack = th->cs_stack >= 0 && th->cs_ns <= p->t && p->t - th->cs_ns < 1000000
                            ? th->cs_stack
                            : -1;
        /* No switch samples (an unprivileged user): an episode still under way when
         * drained has the stack it waits in read now, from /proc and the thread's
         * stack; one that ended before has none. */
        if (th->off_stack < 0 && !s->ev.kernel && !t->exited && !switched_in_since(s, p))
            th->off_stack = blocked_stack(s, t, p->tid);
        break;
    case P_IN:
        if (th->off) waits(s, t, thi, th, th->off_ns, p->t);
        th->off = 0;
        break;
    }
}

/* Drains every ring; acts on the records older than `upto` (every one with UINT64_MAX). */
static void drain(struct session *s, uint64_t upto)
{
    static unsigned char scratch[PERF_RING_SCRATCH];
    for (int c = 0; c < s->ev.ncpu; c++)
        if (s->ev.rings[c].map) perf_ring_drain(&s->ev.rings[c].ring, on_record, s, scratch);
    qsort(s->p, s->n_p, sizeof *s->p, pend_cmp);
    size_t i = 0;
    for (; i < s->n_p && s->p[i].t < upto; i++) act(s, &s->p[i]);
    memmove(s->p, s->p + i, (s->n_p - i) * sizeof *s->p);
    s->n_p -= i;
}

/* ============================ opening ============================ */

static int read_int(const char *path, int dflt)
{
    FILE *f = fopen(path, "re");
    int v = dflt;
    if (f) {
        if (fscanf(f, "%d", &v) != 1) v = dflt;
        fclose(f);
    }
    return v;
}

/* One line: why the kernel refused, and what to change. */
static void say_refused(pid_t pid, int err)
{
    int paranoid = read_int("/proc/sys/kernel/perf_event_paranoid", 2);
    char what[64];
    if (pid > 0)
        snprintf(what, sizeof what, "-p %d", (int)pid);
    else
        snprintf(what, sizeof what, "-a");
    if (err != EACCES && err != EPERM) {
        fprintf(stderr, "kestrel: %s: perf_event_open: %s\n", what, strerror(err));
        return;
    }
    uid_t owner = pid > 0 ? proc_uid(pid) : 0;
    if (pid > 0 && geteuid() != 0 && owner != geteuid())
        fprintf(stderr,
                "kestrel: %s: permission denied: the process belongs to another user (uid %u); "
                "run kestrel as root or as that user, or give it CAP_PERFMON and "
                "CAP_SYS_PTRACE\n",
                what, (unsigned)owner);
    else if (pid <= 0)
        fprintf(stderr,
                "kestrel: -a: permission denied: sampling every process needs root or "
                "CAP_PERFMON, or /proc/sys/kernel/perf_event_paranoid at -1 (it is %d)\n",
                paranoid);
    else
        fprintf(stderr,
                "kestrel: %s: permission denied: /proc/sys/kernel/perf_event_paranoid is %d "
                "(2 or less lets a user sample their own processes); or run kestrel as root "
                "or with CAP_PERFMON\n",
                what, paranoid);
}

/* Whether kestrel may read the target's memory (process_vm_readv, what the walks past
 * the kernel's stack copy and the stacks of threads asleep at the start need): the
 * kernel checks it as a ptrace attach, which Yama (kernel.yama.ptrace_scope) may refuse
 * where the perf events were allowed. Said once, with what to change; the recording
 * goes on with the copies alone. */
static void check_reads(struct session *s, const struct target *t, const char *what)
{
    if (s->read_refused || !t->n_img) return;
    uint64_t word;
    struct iovec l = {&word, sizeof word}, r = {(void *)(uintptr_t)t->img[0].start, sizeof word};
    if (process_vm_readv(t->pid, &l, 1, &r, 1, 0) >= 0 || (errno != EPERM && errno != EACCES))
        return;
    s->read_refused = errno;
    int scope = read_int("/proc/sys/kernel/yama/ptrace_scope", -1);
    /* Yama's 1 and 2 let CAP_SYS_PTRACE through: then something else refused. */
    if (scope == 1 || scope == 2) {
        unsigned long long eff = 0;
        char line[256];
        FILE *f = fopen("/proc/self/status", "re");
        while (f && fgets(line, sizeof line, f))
            if (sscanf(line, "CapEff: %llx", &eff) == 1) break;
        if (f) fclose(f);
        if (eff & (1ull << 19)) scope = 0; /* CAP_SYS_PTRACE */
    }
    char why[320];
    if (scope == 1)
        snprintf(why, sizeof why,
                 "/proc/sys/kernel/yama/ptrace_scope is 1 (only a process's ancestors may "
                 "read it); set it to 0 (sysctl kernel.yama.ptrace_scope=0), give kestrel "
                 "CAP_SYS_PTRACE, or start the program with kestrel record --attach --");
    else if (scope == 2)
        snprintf(why, sizeof why,
                 "/proc/sys/kernel/yama/ptrace_scope is 2 (only CAP_SYS_PTRACE may read "
                 "it); set it to 0 or 1 (sysctl kernel.yama.ptrace_scope=0), or run kestrel "
                 "as root");
    else if (scope >= 3)
        snprintf(why, sizeof why,
                 "/proc/sys/kernel/yama/ptrace_scope is %d (no process may read another's "
                 "memory, root included, until the next boot)",
                 scope);
    else
        snprintf(why, sizeof why,
                 "a security policy refused it (seccomp or a security module); kestrel "
                 "needs ptrace access to the process (root or CAP_SYS_PTRACE, where the "
                 "policy allows it)");
    fprintf(stderr,
            "kestrel: %s: reading its memory refused (process_vm_readv: %s): %s; "
            "meanwhile stacks deeper than the kernel's %u KiB copy are cut and threads "
            "asleep at the start have no waiting stack\n",
            what, strerror(s->read_refused), why, s->ev.copy / 1024);
}

int attach_check_pid(pid_t pid)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/%d", (int)pid);
    if (pid <= 0 || access(p, F_OK)) {
        fprintf(stderr, "kestrel: -p %d: no such process\n", (int)pid);
        return 1;
    }
    if (pid == getpid()) {
        fprintf(stderr, "kestrel: -p %d: that is kestrel itself\n", (int)pid);
        return 1;
    }
    int kthread = 0;
    proc_ppid(pid, &kthread);
    if (kthread) {
        char comm[32];
        proc_comm(pid, pid, comm, sizeof comm);
        fprintf(stderr, "kestrel: -p %d: %s is a kernel thread: it has no user code to sample\n",
                (int)pid, comm);
        return 1;
    }
    return 0;
}

/* Opens the events of every thread of pid, reading /proc/PID/task again until no new
 * thread appears (one made by a thread whose events were not open yet). 0, or -errno
 * of the first refusal. */
static int open_process(struct session *s, pid_t pid)
{
    int rc = 0, opened = 0;
    for (int scan = 0; scan < TASKS_SCANS && !rc; scan++) {
        pid_t *tids;
        size_t n;
        if (proc_tasks(pid, &tids, &n)) break;
        int fresh = 0;
        for (size_t i = 0; i < n && !rc; i++) {
            int seen = 0;
            for (size_t k = 0; k < s->n_opened && !seen; k++) seen = s->opened[k] == tids[i];
            if (seen) continue;
            fresh = 1;
            int e = events_open_thread(&s->ev, tids[i]);
            if (e == -ESRCH) continue; /* ended meanwhile */
            if (e) {
                rc = e;
                break;
            }
            opened++;
            pid_t *q = realloc(s->opened, (s->n_opened + 1) * sizeof *q);
            if (!q) {
                rc = -ENOMEM;
                break;
            }
            s->opened = q;
            s->opened[s->n_opened++] = tids[i];
        }
        free(tids);
        if (!fresh) break;
    }
    if (!rc && !opened && !s->n_opened) rc = -ESRCH;
    return rc;
}

/* ============================ the loop ============================ */

static volatile sig_atomic_t child_pid;

static void note(const char **notes, size_t *n, const char *s)
{
    notes[(*n)++] = s;
}

static int write_all(struct session *s)
{
    static const char *const names[] = {"attached", "switch_stacks", "kernel_time", "cpu_rings",
                                        "cpu_ring_pages", "samples_unregistered",
                                        "samples_without_user_regs", "recording_cpu_ns"};
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    uint64_t own = ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ull +
                   ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ull;
    uint64_t vals[] = {1,
                       (uint64_t)(s->ev.kernel && !s->ev.no_switch),
                       (uint64_t)s->ev.kernel,
                       (uint64_t)s->ev.ncpu,
                       s->ev.ring_pages,
                       s->unknown_pid,
                       s->no_user,
                       own};
    const char *notes[4];
    /* What the recording could not see, said in the report. */
    size_t n_notes = 0;
    if (s->ev.no_switch)
        note(notes, &n_notes,
             "waiting time is not sampled with -a: a stack copy at every context switch of "
             "the machine would flood the rings");
    else if (!s->ev.kernel)
        note(notes, &n_notes,
             "waiting time is sampled only where a thread still waited when kestrel read "
             "its stack from /proc (at the start, and at each drain, a few ms after it "
             "blocked): the kernel allows no context-switch samples here (root, CAP_PERFMON "
             "or perf_event_paranoid <= 1 would give every episode its stack)");
    if (s->read_refused)
        note(notes, &n_notes,
             "the processes' memory could not be read (process_vm_readv refused: "
             "kernel.yama.ptrace_scope or a security policy): stacks deeper than the "
             "kernel's copy are cut, threads asleep at the start have no waiting stack");
    int failed = 0;
    for (size_t i = 0; i < s->n_t; i++) {
        struct target *t = s->t[i];
        target_perf_map(t, s->raw_dir); /* an ended one's, where kestrel still sees it */
        /* A process reached only through -a or --children that never gave a sample is
         * left out. */
        if (!t->n_rows && (s->o->all || i >= s->o->n_pids + (s->o->argv ? 1 : 0))) continue;
        struct rawout_meta m = {s->o->hz,
                                s->o->hz,
                                uw_mode_name(s->o->mode),
                                s->start_real,
                                s->end_real,
                                names,
                                vals,
                                sizeof vals / sizeof *vals,
                                notes,
                                n_notes,
                                i == 0 ? s->dropped : 0};
        char path[4200];
        snprintf(path, sizeof path, "%s/%d.raw.json", s->raw_dir, (int)t->pid);
        int rc = rawout_write(path, t, &m);
        if (rc) {
            fprintf(stderr, "kestrel: %s: %s\n", path, strerror(-rc));
            failed = 1;
        }
    }
    return failed;
}

/* Starts argv stopped at a pipe before its exec, so that its events are open before
 * it runs its first instruction; nothing of kestrel is in it. */
static pid_t start_program(char **argv, int *go, int *err)
{
    int p[2], e[2];
    if (pipe2(p, O_CLOEXEC) || pipe2(e, O_CLOEXEC)) return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[1]);
        close(e[0]);
        char c;
        if (read(p[0], &c, 1) != 1) _exit(127);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGINT, SIG_DFL);
        signal(SIGQUIT, SIG_DFL);
        execvp(argv[0], argv);
        int x = errno;
        (void)!write(e[1], &x, sizeof x);
        _exit(x == ENOENT ? 127 : 126);
    }
    close(p[0]);
    close(e[1]);
    *go = p[1];
    *err = e[0];
    return pid;
}

static int pidfd_open_(pid_t pid)
{
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

int attach_record(const struct attach_options *o, const char *raw_dir, int *status)
{
    struct session *s = calloc(1, sizeof *s);
    if (!s) return 1;
    *status = -1;
    s->o = o;
    s->raw_dir = raw_dir;
    snprintf(s->images_dir, sizeof s->images_dir, "%s/images", raw_dir);
    /* Two events a thread on each CPU: raise the descriptors' soft limit to the hard. */
    struct rlimit rl;
    if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    int rc = events_init(&s->ev, o->hz, o->children, o->all);
    int failed = 0;
    /* SIGINT, SIGTERM, SIGHUP end the recording (--attach: the program gets ^C from the
     * terminal itself and ends; kestrel writes what it has). */
    sigset_t sigs, old;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGHUP);
    sigaddset(&sigs, SIGQUIT);
    sigprocmask(SIG_BLOCK, &sigs, &old);
    int sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
    int go = -1, errp = -1;
    pid_t child = 0;
    uint32_t ti;
    s->start_mono = clock_ns(CLOCK_MONOTONIC);
    s->start_real = clock_ns(CLOCK_REALTIME);
    if (rc) {
        fprintf(stderr, "kestrel: perf events: %s\n", strerror(-rc));
        failed = 1;
    } else if (o->argv) {
        child = start_program(o->argv, &go, &errp);
        if (child < 0) {
            fprintf(stderr, "kestrel: fork: %s\n", strerror(errno));
            failed = 1;
        } else {
            child_pid = child;
            s->ev.on_exec = 1; /* nothing of the child before its exec is sampled */
            int e = o->after_exec ? 0 : events_open_thread(&s->ev, child);
            if (e) {
                say_refused(child, -e);
                failed = 1;
                kill(child, SIGKILL); /* our own child, never started */
            }
            (void)!write(go, "g", 1);
            close(go);
            int x;
            ssize_t got;
            while ((got = read(errp, &x, sizeof x)) < 0 && errno == EINTR) {
            }
            close(errp);
            if (got == (ssize_t)sizeof x) {
                fprintf(stderr, "kestrel: %s: %s\n", o->argv[0], strerror(x));
                failed = 1;
            } else if (!failed && !target_add(s, child, &ti)) {
                /* After the exec: its images are the program's. */
                if (errno == EACCES || errno == EPERM)
                    fprintf(stderr,
                            "kestrel: %s: permission denied: it runs as another user since its "
                            "exec (set-user-ID or set-group-ID); run kestrel as root, or give it "
                            "CAP_PERFMON and CAP_SYS_PTRACE\n",
                            o->argv[0]);
                else
                    fprintf(stderr, "kestrel: %s: ended before it could be read\n", o->argv[0]);
                failed = 1;
            } else if (!failed) {
                /* Yama's ptrace_scope 1 lets kestrel, the program's parent, read it; 2
                 * and 3 do not. */
                check_reads(s, s->t[ti], o->argv[0]);
            }
            if (!failed && o->after_exec) {
                /* Its first milliseconds, before the events are open, are not sampled. */
                s->ev.on_exec = 0;
                int e2 = open_process(s, child);
                if (e2) say_refused(child, -e2), failed = 1;
            }
        }
    } else if (o->all) {
        int e = events_open_all(&s->ev);
        if (e) say_refused(0, -e), failed = 1;
    } else {
        for (size_t i = 0; i < o->n_pids && !failed; i++) {
            struct target *t = target_add(s, o->pids[i], &ti);
            int e = t ? open_process(s, o->pids[i]) : -errno;
            /* The episodes under way now are read from /proc; later ones have their
             * stacks from the switch samples (without them: from /proc at the drain). */
            char what[32];
            snprintf(what, sizeof what, "-p %d", (int)o->pids[i]);
            if (!e) check_reads(s, t, what);
            for (size_t k = 0; !e && k < s->n_opened; k++)
                if (proc_tgid(s->opened[k]) == o->pids[i]) asleep_at_start(s, t, s->opened[k]);
            if (e == -ESRCH || e == -ENOENT) {
                fprintf(stderr, "kestrel: -p %d: no such process (it ended)\n", (int)o->pids[i]);
                failed = 1;
            } else if (e) {
                say_refused(o->pids[i], -e);
                failed = 1;
            }
        }
    }
    /* Watch the targets' ends. */
    size_t n_watch = o->argv ? (child > 0) : o->all ? 0 : o->n_pids;
    struct pollfd *pf = calloc(1 + n_watch + (size_t)s->ev.ncpu, sizeof *pf);
    int *ended = calloc(n_watch + 1, sizeof *ended);
    uint64_t deadline = o->duration > 0 ? s->start_mono + (uint64_t)(o->duration * 1e9) : 0;
    s->deadline = deadline;
    if (!pf || !ended) failed = 1;
    if (!failed) {
        pf[0].fd = sfd, pf[0].events = POLLIN;
        for (size_t i = 0; i < n_watch; i++) {
            pf[1 + i].fd = pidfd_open_(o->argv ? child : o->pids[i]);
            pf[1 + i].events = POLLIN;
        }
        size_t nf = 1 + n_watch;
        for (int c = 0; c < s->ev.ncpu; c++)
            if (s->ev.rings[c].map) pf[nf].fd = s->ev.rings[c].fd, pf[nf++].events = POLLIN;
        int stop = 0, rescans = TASKS_SCANS;
        uint64_t next_scan = s->start_mono + 100000000ull;
        while (!stop) {
            uint64_t now = clock_ns(CLOCK_MONOTONIC);
            /* Without switch samples a waiting episode's stack is read at the drain
             * while it lasts: drains at least every 10 ms. */
            int timeout = s->ev.kernel || s->ev.no_switch ? 100 : 10;
            if (deadline) {
                if (now >= deadline) break;
                if ((deadline - now) / 1000000 < (uint64_t)timeout)
                    timeout = (int)((deadline - now) / 1000000) + 1;
            }
            poll(pf, nf, timeout);
            struct signalfd_siginfo si;
            if (pf[0].revents && read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
                if (!o->argv || si.ssi_signo == SIGTERM || si.ssi_signo == SIGHUP)
                    stop = 1;
                /* --attach: ^C and ^\ reach the program from the terminal; SIGTERM and
                 * SIGHUP sent to kestrel are meant for it. */
                if (o->argv && (si.ssi_signo == SIGTERM || si.ssi_signo == SIGHUP))
                    kill(child, (int)si.ssi_signo), stop = 0;
            }
            size_t alive = 0;
            for (size_t i = 0; i < n_watch; i++) {
                if (!ended[i] && pf[1 + i].fd >= 0 && (pf[1 + i].revents & POLLIN)) {
                    ended[i] = 1;
                    pf[1 + i].events = 0;
                }
                alive += !ended[i];
            }
            now = clock_ns(CLOCK_MONOTONIC);
            drain(s, now - CUT_NS);
            /* New libraries, JIT maps; threads made before their maker's events were
             * open (the first scans). */
            for (size_t i = 0; i < s->n_t; i++) {
                struct target *t = s->t[i];
                if (!t->exited && now - t->maps_ns > MAPS_EVERY_NS &&
                    target_maps(t, s->images_dir) < 0)
                    t->exited = 1;
            }
            if (rescans && now > next_scan && !o->all) {
                rescans--;
                next_scan = now + 300000000ull;
                for (size_t i = 0; i < o->n_pids && !o->argv; i++)
                    if (!ended[i]) open_process(s, o->pids[i]);
                if (o->argv && o->after_exec && !ended[0]) open_process(s, child);
            }
            if (n_watch && !alive) stop = 1;
        }
    }
    s->end_mono = clock_ns(CLOCK_MONOTONIC);
    s->end_real = clock_ns(CLOCK_REALTIME);
    if (deadline && s->end_mono > deadline) { /* a drain ran past it */
        s->end_real -= s->end_mono - deadline;
        s->end_mono = deadline;
    }
    if (!failed) {
        /* The events stop before the last drain: nothing comes after the end. */
        for (size_t i = 0; i < s->ev.n_fds; i++)
            ioctl(s->ev.fds[i], PERF_EVENT_IOC_DISABLE, 0);
        drain(s, UINT64_MAX);
        for (size_t i = 0; i < s->n_t; i++)
            for (size_t k = 0; k < s->t[i]->n_thr; k++) {
                struct target_thread *th = &s->t[i]->thr[k];
                if (th->off) waits(s, s->t[i], (uint32_t)k, th, th->off_ns, s->end_mono);
            }
        failed = write_all(s);
    }
    events_close(&s->ev);
    if (child > 0) {
        /* --attach: the program's end is kestrel's; a recording ended by a signal leaves
         * the program running as it would without kestrel. */
        int st;
        while (waitpid(child, &st, 0) < 0 && errno == EINTR) {
        }
        *status = st;
    }
    for (size_t i = 0; pf && i < n_watch; i++)
        if (pf[1 + i].fd >= 0) close(pf[1 + i].fd);
    free(pf);
    free(ended);
    if (sfd >= 0) close(sfd);
    sigprocmask(SIG_SETMASK, &old, NULL);
    for (size_t i = 0; i < s->n_t; i++) target_free(s->t[i]);
    free(s->t);
    free(s->p);
    free(s->opened);
    free(s->skip);
    free(s);
    return failed;
}

int attach_unwind_mode(const char *name)
{
    int m = name ? uw_mode_parse(name) : UW_MODE_AUTO;
    return m < 0 ? UW_MODE_AUTO : m;
}
