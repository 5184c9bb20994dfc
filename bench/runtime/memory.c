/* Eight threads for SECONDS of wall time, each alternating 5 ms of work and 5 ms of
 * sleep; at the end of main prints this process's peak and current resident memory
 * (VmHWM, VmRSS, KiB), taken before the profiler writes its file.
 *
 *   memory SECONDS */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double seconds;
static volatile uint64_t sink;

static uint64_t now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void step(int k)
{
    uint64_t end = now() + 5000000, x = (uint64_t)k;
    while (now() < end)
        for (int i = 0; i < 1000; i++)
            x = x * 6364136223846793005ull + (uint64_t)i;
    sink += x;
}

static void *worker(void *arg)
{
    uint64_t end = now() + (uint64_t)(seconds * 1e9);
    for (int k = (int)(intptr_t)arg; now() < end; k++) {
        step(k);
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static long status_kib(const char *key)
{
    char line[256];
    long v = -1;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, key, strlen(key)))
            v = atol(line + strlen(key));
    if (f)
        fclose(f);
    return v;
}

int main(int argc, char **argv)
{
    seconds = argc > 1 ? atof(argv[1]) : 60;
    pthread_t t[8];
    for (int i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < 8; i++)
        pthread_join(t[i], NULL);
    printf("hwm_kib %ld rss_kib %ld\n", status_kib("VmHWM:"), status_kib("VmRSS:"));
    return 0;
}
