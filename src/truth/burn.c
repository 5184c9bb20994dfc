/* The reference instance of the ground truth's primitive (see burn.h). */
#include "truth/burn.h"

#include <time.h>

volatile uint64_t burn_sink;

BURN_DEFINE(burn)

uint64_t burn_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
