/* engine.c — picks the CPU sampling engine (engine.h).
 * Signal handlers: nothing. Inside malloc: nothing. */
#include "runtime/cpu/engine.h"
#include "runtime/rtfd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* The perf engine keeps descriptors for its whole run (an event per CPU or thread, its
 * epoll set, its eventfd: 6 on two CPUs). Above the soft descriptor limit they are out
 * of the program's reach (rtfd.h), where the hard limit leaves room. Where it does not,
 * each is a number the program can no longer open: a program whose descriptor limit is
 * up to ENGINE_PERF_NOFILE_CHECKED with no room above it (`ulimit -n 1024` sets both
 * limits) may count on each one, and `auto` then takes the signal engine, which keeps
 * none. Past that limit, no program is expected to reach it. */
#define ENGINE_PERF_MIN_NOFILE 1024 /* below it, the message says so */
#define ENGINE_PERF_NOFILE_CHECKED 16384

/* The sentence `auto` leaves in the raw file (engine_choice), in a buffer of ours. */
static char engine_choice_buf[320];

static const char *engine_paranoid(void)
{
    static char buf[64];
    char text[16];
    struct rtfd once;
    int fd = rtfd_open_once(&once, "/proc/sys/kernel/perf_event_paranoid");
    if (fd < 0) return "perf_event_paranoid unknown";
    ssize_t n = read(fd, text, sizeof text - 1);
    rtfd_close(&once);
    if (n <= 0) return "perf_event_paranoid unknown";
    text[n] = 0;
    snprintf(buf, sizeof buf, "perf_event_paranoid is %d", atoi(text));
    return buf;
}

const struct engine *engine_choose(const char *want, const char **why, const char **choice)
{
    const struct engine *perf = &engine_perf;
    *why = NULL;
    if (choice) *choice = NULL;
    if (want && *want && strcmp(want, "auto") != 0 && strcmp(want, "perf") != 0 &&
        strcmp(want, "signal") != 0) {
        *why = "unknown engine (auto, perf or signal)";
        return NULL;
    }
    int auto_ = !want || !*want || strcmp(want, "auto") == 0;
    const char *sig_why = NULL;
    struct rlimit nofile;
    int limited = auto_ && getrlimit(RLIMIT_NOFILE, &nofile) == 0 &&
                  nofile.rlim_cur != RLIM_INFINITY;
    int few_fds = limited && nofile.rlim_cur <= ENGINE_PERF_NOFILE_CHECKED &&
                  !rtfd_can_go_above();
    if (few_fds)
        *why = nofile.rlim_cur < ENGINE_PERF_MIN_NOFILE
                   ? "the descriptor limit (RLIMIT_NOFILE) is below 1024, and the perf engine "
                     "would keep descriptors the program may need"
                   : "the descriptor limit (RLIMIT_NOFILE) is its hard limit too, and the perf "
                     "engine would keep descriptors the program may need";
    if ((auto_ && !few_fds) || (!auto_ && strcmp(want, "perf") == 0)) {
        if (perf->check(why) == 0) {
            if (!auto_) return perf;
            /* Where the kernel forces exclude_kernel, perf events never fire in a system
             * call: the time there would have no sample. The signal engine's CPU-time
             * timers count it and take their samples at the call's user stack. */
            if (perf->kernel_time && !perf->kernel_time() &&
                engine_signal.check(&sig_why) == 0) {
                snprintf(engine_choice_buf, sizeof engine_choice_buf,
                         "auto chose the signal engine: the perf engine could not sample time "
                         "in system calls here (%s and no CAP_PERFMON: user mode only)",
                         engine_paranoid());
                if (choice) *choice = engine_choice_buf;
                return &engine_signal;
            }
            if (choice)
                *choice = !perf->kernel_time || perf->kernel_time()
                              ? "auto chose the perf engine: the kernel allows it to sample "
                                "time in system calls (exclude_kernel=0)"
                              : "auto chose the perf engine, which cannot sample time in "
                                "system calls here: the signal engine cannot run";
            return perf;
        }
        if (!auto_) return NULL;
    }
    if (engine_signal.check(&sig_why) != 0) {
        *why = sig_why;
        return NULL;
    }
    if (auto_ && choice) {
        snprintf(engine_choice_buf, sizeof engine_choice_buf,
                 "auto chose the signal engine: the perf engine is unavailable (%s)",
                 *why ? *why : "refused");
        *choice = engine_choice_buf;
    }
    return &engine_signal;
}
