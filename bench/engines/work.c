/* Fixed work for the engine benchmark: T threads, each doing the same number of
 * units of one linear primitive split over three functions in the ratio 1:2:3, so the
 * true shares of CPU time are 1/6, 2/6 and 3/6 by construction.
 *
 *   work THREADS UNITS OUT.json
 *
 * OUT.json: this process's CPU time at the end of main (the profiler's final file
 * writing excluded), each thread's CPU time and tid, and the address range of each
 * function (each lives in a section of its own) so that a raw profile's leaf
 * addresses can be attributed without a symbolizer. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ITERS_PER_UNIT 1000000

#define WORK_FN(name)                                                                              \
    __attribute__((noinline, section(#name))) static uint64_t name(uint64_t units)                 \
    {                                                                                              \
        uint64_t x = units;                                                                        \
        for (uint64_t i = 0; i < units * ITERS_PER_UNIT; i++) {                                    \
            x = x * 6364136223846793005ull + i;                                                    \
            __asm__ volatile("" : "+r"(x)); /* one dependent step per iteration */                 \
        }                                                                                          \
        return x;                                                                                  \
    }                                                                                              \
    extern const char __start_##name[], __stop_##name[];
WORK_FN(work_a)
WORK_FN(work_b)
WORK_FN(work_c)

struct th {
    pthread_t t;
    long units;
    pid_t tid;
    uint64_t cpu_ns;
    uint64_t sink;
};

static void *run(void *p)
{
    struct th *t = p;
    t->tid = (pid_t)syscall(SYS_gettid);
    for (long u = 0; u < t->units; u += 6) {
        t->sink += work_a(1);
        t->sink += work_b(2);
        t->sink += work_c(3);
    }
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    t->cpu_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: work THREADS UNITS OUT.json\n");
        return 2;
    }
    int n = atoi(argv[1]);
    long units = atol(argv[2]);
    if (n < 1 || n > 64 || units < 6) {
        fprintf(stderr, "work: bad arguments\n");
        return 2;
    }
    struct th th[64] = {0};
    for (int i = 0; i < n; i++) {
        th[i].units = units;
        if (pthread_create(&th[i].t, NULL, run, &th[i]) != 0) {
            perror("work: pthread_create");
            return 1;
        }
    }
    uint64_t sink = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(th[i].t, NULL);
        sink += th[i].sink;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    FILE *f = fopen(argv[3], "w");
    if (!f) {
        perror("work: output");
        return 1;
    }
    fprintf(f, "{\"cpu_s\":%.6f,\"maxrss_kb\":%ld,\"sink\":%llu,\"threads\":[",
            ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
                (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6,
            ru.ru_maxrss, (unsigned long long)(sink & 1));
    for (int i = 0; i < n; i++)
        fprintf(f, "%s{\"tid\":%d,\"cpu_ns\":%llu}", i ? "," : "", (int)th[i].tid,
                (unsigned long long)th[i].cpu_ns);
    fprintf(
        f,
        "],\"ranges\":{\"work_a\":[%llu,%llu],\"work_b\":[%llu,%llu],"
        "\"work_c\":[%llu,%llu]}}\n",
        (unsigned long long)(uintptr_t)__start_work_a, (unsigned long long)(uintptr_t)__stop_work_a,
        (unsigned long long)(uintptr_t)__start_work_b, (unsigned long long)(uintptr_t)__stop_work_b,
        (unsigned long long)(uintptr_t)__start_work_c,
        (unsigned long long)(uintptr_t)__stop_work_c);
    return fclose(f) != 0;
}
