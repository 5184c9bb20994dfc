/* The program the viewer's browser tests profile with `kestrel record --heap`: a main
 * thread with two hot functions, a worker that sleeps (waiting samples) and computes,
 * one function whose symbol is markup, and heap blocks of which a part stays in use. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile double sink;
static void *kept[256];

/* The symbol is `"<img src=x onerror=alert(1)>"`: the viewer must show it as text. */
__attribute__((noinline)) void markup_named(long n) __asm__("\"<img src=x onerror=alert(1)>\"");

__attribute__((noinline)) static void hot_loop(long n)
{
    for (long i = 0; i < n; i++)
        sink += i * 0.5;
}

__attribute__((noinline)) static void cold_path(long n)
{
    for (long i = 0; i < n; i++)
        sink -= i * 0.25;
}

__attribute__((noinline)) void markup_named(long n)
{
    for (long i = 0; i < n; i++)
        sink += i * 0.125;
}

/* 64 KiB blocks: 256 kept (16 MiB in use at exit), 768 freed at once. */
__attribute__((noinline)) static void churn_heap(void)
{
    for (int i = 0; i < 1024; i++) {
        char *p = malloc(64 << 10);
        if (!p) abort();
        memset(p, i, 64 << 10);
        if (i % 4 == 0)
            kept[i / 4] = p;
        else
            free(p);
    }
}

static void *worker(void *arg)
{
    (void)arg;
    for (int k = 0; k < 4; k++) {
        struct timespec ts = {0, 60 * 1000 * 1000};
        nanosleep(&ts, NULL);
        hot_loop(8 * 1000 * 1000);
    }
    return NULL;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL)) return 1;
    churn_heap();
    for (int k = 0; k < 4; k++) {
        hot_loop(24 * 1000 * 1000);
        cold_path(10 * 1000 * 1000);
        markup_named(8 * 1000 * 1000);
    }
    pthread_join(t, NULL);
    return sink == 42.0;
}
