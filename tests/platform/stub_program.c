/* A small program that calls kestrel's API as a portable program does, built for
 * Windows and for Wasm against the inactive stub (-DWITH_KESTREL), and without kestrel
 * for each and natively. The stub builds check the value each function of kestrel.h
 * returns and name on stderr every one that is not its "Inactive:" value (exit 1).
 * Every build does the same work, prints the same lines and writes the same file
 * (result.txt in the current directory), which tests/platform/test_stub_*.sh compare
 * with the native build's. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#ifdef WITH_KESTREL
#include "kestrel.h"

static int failures;

static void expect(const char *call, int got, int want)
{
    if (got == want) return;
    fprintf(stderr, "stub_program: %s returned %d, expected %d\n", call, got, want);
    failures++;
}
#define EXPECT(call, want) expect(#call, (call), (want))

/* An error must leave the caller's *data and *size as they were. */
static void *sentinel_data = &failures;
#define SENTINEL_SIZE ((size_t)12345)

static void expect_untouched(const char *call, void *data, size_t size)
{
    if (data == sentinel_data && size == SENTINEL_SIZE) return;
    fprintf(stderr, "stub_program: %s changed *data or *size\n", call);
    failures++;
}

static void profile_begin(void)
{
    EXPECT(kestrel_profile_start(0), -ENOTSUP);
    EXPECT(kestrel_profile_start(997), -ENOTSUP);
    EXPECT(kestrel_profile_start(5), -ENOTSUP);
    EXPECT(kestrel_profile_is_running(), 0);
    EXPECT(kestrel_thread_register(7, "worker"), 0);
    EXPECT(kestrel_thread_register(0, NULL), 0);
    static char fiber_stack[4096];
    EXPECT(kestrel_fiber_register(fiber_stack, sizeof fiber_stack, 3, "fiber"), 0);
    EXPECT(kestrel_fiber_unregister(fiber_stack), 0);
    EXPECT(kestrel_heap_start(0), -ENOTSUP);
    EXPECT(kestrel_heap_start(KESTREL_HEAP_INTERVAL_DEFAULT), -ENOTSUP);
    EXPECT(kestrel_heap_start(1), -ENOTSUP);
    EXPECT(kestrel_heap_is_running(), 0);
}

static void profile_end(void)
{
    void *data = sentinel_data;
    size_t size = SENTINEL_SIZE;
    EXPECT(kestrel_heap_profile(&data, &size), -ESRCH);
    expect_untouched("kestrel_heap_profile(&data, &size)", data, size);
    EXPECT(kestrel_heap_profile(NULL, &size), -EINVAL);
    EXPECT(kestrel_heap_profile(&data, NULL), -EINVAL);
    EXPECT(kestrel_heap_stop(&data, &size), -ESRCH);
    expect_untouched("kestrel_heap_stop(&data, &size)", data, size);
    EXPECT(kestrel_heap_stop(NULL, NULL), -ESRCH);
    EXPECT(kestrel_heap_stop(&data, NULL), -EINVAL);
    EXPECT(kestrel_heap_is_running(), 0);
    EXPECT(kestrel_thread_unregister(), 0);
    EXPECT(kestrel_profile_stop("cpu.raw.json"), -ESRCH);
    EXPECT(kestrel_profile_stop(""), -EINVAL);
    EXPECT(kestrel_profile_stop(NULL), -EINVAL);
    EXPECT(kestrel_profile_is_running(), 0);
}
#else
static int failures;
static void profile_begin(void) {}
static void profile_end(void) {}
#endif

/* The program's own work: the primes below 20000 by a sieve, and a checksum. */
static unsigned char composite[20000];

int main(void)
{
    profile_begin();
    unsigned count = 0;
    uint32_t sum = 0;
    for (unsigned i = 2; i < sizeof composite; i++) {
        if (composite[i]) continue;
        count++;
        sum = sum * 31u + i;
        for (unsigned j = i * 2; j < sizeof composite; j += i)
            composite[j] = 1;
    }
    printf("primes below %u: %u\n", (unsigned)sizeof composite, count);
    printf("checksum: %08x\n", (unsigned)sum);
    FILE *f = fopen("result.txt", "w");
    if (!f || fprintf(f, "%u %08x\n", count, (unsigned)sum) < 0 || fclose(f) != 0) {
        perror("stub_program: result.txt");
        return 2;
    }
    profile_end();
    return failures ? 1 : 0;
}
