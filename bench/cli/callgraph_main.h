/* The driver of the generated call-graph program (gen_callgraph.py).
 *
 *   callgraph raw OUT.json [SAMPLES] [STACKS]   write a raw CPU profile: SAMPLES
 *       samples (default 1,000,000) over STACKS distinct stacks (default 50,000),
 *       each stack captured from this program's own frame-pointer chain
 *   callgraph spin SECONDS [THREADS]            run the paths for a sampler (perf) */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noipa))
#define DEPTH 6 /* base-8 digits per path: 8^6 > 50,000 */

static inline void barrier(void)
{
    __asm__ volatile("" ::: "memory");
}

NOINLINE void leaf(int fn);
extern void (*const roots[])(uint64_t, int);

static uintptr_t captured[64];
static int n_captured;
static uintptr_t top_frame; /* run_path's frame: the walk stops above it */
static volatile uint64_t sink;
static int capturing;

NOINLINE void leaf(int fn)
{
    if (!capturing) {
        for (int i = 0; i < 200; i++)
            sink += (uint64_t)i * (uint64_t)fn;
        return;
    }
    /* Frame 0 is a PC inside the leaf; then the return addresses of every caller, as
     * kestrel's signal handler walks them. */
    uintptr_t *fp = __builtin_frame_address(0);
    n_captured = 0;
    while (fp && (uintptr_t)fp <= top_frame && n_captured < 64) {
        captured[n_captured++] = fp[1];
        fp = (uintptr_t *)fp[0];
    }
}

NOINLINE void run_path(uint64_t path)
{
    top_frame = (uintptr_t)__builtin_frame_address(0);
    roots[path % 8](path / 8, DEPTH - 1);
    barrier();
}

static int image_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    FILE *out = arg;
    static int first = 1;
    char exe[4096] = "";
    const char *path = info->dlpi_name;
    if (!path[0]) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n > 0) exe[n] = 0;
        path = exe;
    }
    if (!path[0]) return 0;
    uint64_t text = 0, text_end = 0, low = UINT64_MAX;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        if (ph->p_vaddr < low) low = ph->p_vaddr;
        if (!(ph->p_flags & PF_X)) continue;
        uint64_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
        if (!text || s < text) text = s;
        if (e > text_end) text_end = e;
    }
    fprintf(out,
            "%s{\"path\":\"%s\",\"base\":%lu,\"slide\":%lu,\"text\":%lu,\"text_size\":%lu,"
            "\"arch\":\"x86_64\"}",
            first ? "" : ",", path,
            (unsigned long)(info->dlpi_addr + (low == UINT64_MAX ? 0 : low)),
            (unsigned long)info->dlpi_addr, (unsigned long)text, (unsigned long)(text_end - text));
    first = 0;
    return 0;
}

static uint64_t rng_state = 88172645463325252ULL;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return rng_state;
}

static int write_raw(const char *path, long samples, long stacks)
{
    FILE *out = fopen(path, "w");
    if (!out) return perror(path), 1;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long long start = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    long long period = 1003009; /* 997 Hz */
    char exe[4096] = "";
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    fprintf(out,
            "{\"version\":1,\"pid\":%d,\"exe\":\"%s\",\"rate_hz\":997,"
            "\"requested_hz\":997,\"platform\":\"linux-x86_64\",\"engine\":\"signal\","
            "\"start_unix_ns\":%lld,\"end_unix_ns\":%lld,\n\"images\":[",
            getpid(), exe, start, start + samples / 4 * period);
    dl_iterate_phdr(image_cb, out);
    fputs("],\n\"threads\":[{\"fiber\":0,\"label\":\"main\",\"tid\":1},{\"fiber\":0,\"label\":"
          "\"worker\",\"tid\":2},{\"fiber\":0,\"label\":\"worker\",\"tid\":3},{\"fiber\":1,"
          "\"label\":\"fiber\",\"tid\":4}],\n\"stacks\":[",
          out);
    capturing = 1;
    for (long s = 0; s < stacks; s++) {
        run_path((uint64_t)s * 7919 % (8 * 262144)); /* spread over every first digit */
        fputs(s ? ",\n[" : "\n[", out);
        for (int i = 0; i < n_captured; i++)
            fprintf(out, "%s%lu", i ? "," : "", captured[i]);
        fputc(']', out);
    }
    capturing = 0;
    fputs("],\n\"samples\":[", out);
    long long t[4] = {0};
    for (long i = 0; i < samples; i++) {
        /* Every stack once, then a skewed draw: a few stacks are hot, as in a profile. */
        long st = i < stacks ? i : (long)((rng() % (uint64_t)stacks) * (rng() % 1000) / 1000);
        int th = (int)(rng() % 4), state = rng() % 10 == 0;
        t[th] += period;
        fprintf(out, "%s[%lld,%d,%ld,%d,%lld]", i ? ",\n" : "\n", t[th], th, st, state,
                state ? 0LL : period - (long long)(rng() % 1000));
    }
    fputs("],\n\"dropped\":0}\n", out);
    return fclose(out) ? 1 : 0;
}

static double spin_seconds;

static void *spin(void *arg)
{
    (void)arg;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    uint64_t s = (uint64_t)(uintptr_t)arg;
    for (;;) {
        for (int k = 0; k < 1000; k++)
            run_path((s = s * 6364136223846793005ULL + 1) >> 40);
        clock_gettime(CLOCK_MONOTONIC, &b);
        if (b.tv_sec - a.tv_sec + (b.tv_nsec - a.tv_nsec) / 1e9 >= spin_seconds) break;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "raw"))
        return write_raw(argv[2], argc > 3 ? atol(argv[3]) : 1000000,
                         argc > 4 ? atol(argv[4]) : 50000);
    if (argc >= 3 && !strcmp(argv[1], "spin")) {
        spin_seconds = atof(argv[2]);
        int n = argc > 3 ? atoi(argv[3]) : 2;
        pthread_t t[16];
        for (int i = 1; i < n && i < 16; i++)
            pthread_create(&t[i], NULL, spin, (void *)(uintptr_t)i);
        spin(NULL);
        for (int i = 1; i < n && i < 16; i++)
            pthread_join(t[i], NULL);
        return 0;
    }
    fprintf(stderr, "usage: callgraph raw OUT.json [SAMPLES] [STACKS] | spin SECONDS [THREADS]\n");
    return 2;
}
