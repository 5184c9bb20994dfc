/* prog_dlloop LIB LOOPLIB SECONDS [LOOPLIB2] — two threads dlopen and dlclose
 * LOOPLIB (the second LOOPLIB2 when given: then each library is mapped and unmapped
 * each time, nothing else holding it) in a loop, calling its lib_fill once a cycle (so
 * that stacks pass through it and its unwind table is needed), while the main thread
 * calls into LIB and through it into libc: the profiler's handler and drain walk
 * stacks while images come and go. Prints the number of open/close cycles. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *loop_lib[2];
static volatile int done;
static long cycles[2];

static void *looper(void *arg)
{
    long *n = arg;
    const char *lib = loop_lib[n - cycles];
    static unsigned char bufs[2][1 << 16]; /* about as long in lib_fill as in dlopen */
    unsigned char *buf = bufs[n - cycles];
    while (!done) {
        void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            exit(3);
        }
        void (*fill)(unsigned char *, size_t, int) =
            (void (*)(unsigned char *, size_t, int))dlsym(h, "lib_fill");
        if (!fill) exit(5);
        fill(buf, sizeof bufs[0], 2);
        dlclose(h);
        (*n)++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4) return 2;
    loop_lib[0] = argv[2];
    loop_lib[1] = argc > 4 ? argv[4] : argv[2];
    double secs = atof(argv[3]);
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) return 4;
    void (*fill)(unsigned char *, size_t, int) =
        (void (*)(unsigned char *, size_t, int))dlsym(h, "lib_fill");
    if (!fill) return 5;
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, looper, &cycles[i]);
    static unsigned char buf[1 << 16];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        fill(buf, sizeof buf, 1);
        clock_gettime(CLOCK_MONOTONIC, &t1);
    } while ((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9 < secs);
    done = 1;
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    printf("%ld\n", cycles[0] + cycles[1]);
    return 0;
}
