/* rtclock — a clock read as nanoseconds, the one conversion the runtime uses.
 * Signal handlers and inside malloc: yes (clock_gettime is async-signal-safe). */
#ifndef KESTREL_RTCLOCK_H
#define KESTREL_RTCLOCK_H
#include <stdint.h>
#include <time.h>

/* Clock c in nanoseconds; 0 when it cannot be read (a thread's CPU clock after the
 * thread ended, say). */
static inline uint64_t rt_clock_ns(clockid_t c)
{
    struct timespec ts;
    if (clock_gettime(c, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline struct timespec rt_timespec(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
    return ts;
}
#endif
