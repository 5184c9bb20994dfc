/* The in-process API without environment variables (test_api.py): kestrel_profile_start
 * and stop around a region of code, their errors before anything starts, thread
 * registration (a thread made before the session registers itself with its own fiber id
 * and label), a second session after the first, fifty more one after another, and a
 * path that cannot be written. Linked with libkestrel.a. Checks the API's return values
 * itself (its status); leaves in DIR the files test_api.py reads (first.json: a session
 * of one thread; region.json: the registered threads; second.json: the second session)
 * and prints what it measured of its own process for test_api.py to judge:
 *   faults N     pages faulted in by the session of one thread (the process's first)
 *   vm_grown N   KiB of address space 50 sessions added
 *   vm_grown_outliving N   ... 50 more, each with a thread that ends after it
 *   vm_grown_replacing N   ... 50 more, each with a thread that puts an alternate
 *                          signal stack of its own in place (as crash reporters do)
 * Usage: prog_api DIR */
#include "check.h"
#include "kestrel.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "burn.h"
#include "procself.h"

static volatile int go, stop_early;

/* Made before the session: registers itself once the session runs. */
static void *early(void *arg)
{
    (void)arg;
    while (!go)
        usleep(1000);
    CHECK(kestrel_thread_register(7, "worker7") == 0);
    burn_cpu_us(150000);
    CHECK(kestrel_thread_unregister() == 0);
    CHECK(kestrel_thread_unregister() == -ENOENT);
    return NULL;
}

static void *late(void *arg)
{
    (void)arg;
    burn_cpu_us(150000);
    return NULL;
}

static volatile int outliving_started, outliving_go;

/* Made during a session, sets an alternate signal stack of its own and ends. */
static void *replacing(void *arg)
{
    (void)arg;
    static char alt[64 * 1024];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
    stack_t off = {.ss_flags = SS_DISABLE};
    CHECK(sigaltstack(&ss, NULL) == 0);
    burn_cpu_us(2000);
    CHECK(sigaltstack(&off, NULL) == 0);
    return NULL;
}

/* Made during a session, ends after it: what the session gave it must come back. */
static void *outliving(void *arg)
{
    (void)arg;
    outliving_started = 1;
    while (!outliving_go)
        usleep(100);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: prog_api DIR\n");
        return 2;
    }
    /* The engine under test: the environment's, else the signal engine (auto would
     * pick perf where the kernel allows it). */
    setenv("KESTREL_PROFILE_ENGINE", "signal", 0);
    char first[4096], path[4096], path2[4096], loop[4096];
    snprintf(first, sizeof(first), "%s/first.json", argv[1]);
    snprintf(path, sizeof(path), "%s/region.json", argv[1]);
    snprintf(path2, sizeof(path2), "%s/second.json", argv[1]);
    snprintf(loop, sizeof(loop), "%s/loop.json", argv[1]);

    /* Inactive: everything is a no-op; wrong states and values are errors. */
    CHECK(kestrel_profile_is_running() == 0);
    CHECK(kestrel_thread_register(1, "x") == 0);
    CHECK(kestrel_thread_unregister() == 0);
    CHECK(kestrel_profile_stop(path) == -ESRCH);
    CHECK(kestrel_profile_start(5) == -EINVAL);
    CHECK(kestrel_profile_start(20000) == -EINVAL);
    CHECK(access(path, F_OK) != 0);

    /* A session touches the state of the threads it registered, not all it could
     * hold: the per-slot arrays of either engine span hundreds of pages each (1024
     * slots), which a session of two threads must not fault in, at start or stop
     * (test_api.py's bound). That a program making threads all its life keeps using
     * the lowest slots is test_registry's. */
    pthread_t e, l;
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    CHECK(kestrel_profile_start(997) == 0);
    pthread_create(&l, NULL, late, NULL);
    pthread_join(l, NULL);
    CHECK(kestrel_profile_stop(first) == 0);
    getrusage(RUSAGE_SELF, &ru1);
    printf("faults %ld\n", ru1.ru_minflt - ru0.ru_minflt);

    pthread_create(&e, NULL, early, NULL);
    int r = kestrel_profile_start(997);
    CHECKF(r == 0, "start: %d", r);
    CHECK(kestrel_profile_start(997) == -EBUSY);
    CHECK(kestrel_profile_is_running() == 1);
    CHECK(kestrel_profile_stop(NULL) == -EINVAL);
    CHECK(kestrel_profile_is_running() == 1);
    go = 1;
    pthread_create(&l, NULL, late, NULL);
    burn_cpu_us(200000);
    pthread_join(e, NULL);
    pthread_join(l, NULL);
    r = kestrel_profile_stop(path);
    CHECKF(r == 0, "stop: %d", r);
    CHECK(kestrel_profile_is_running() == 0);

    /* A second session writes a file of its own. */
    CHECK(kestrel_profile_start(0) == 0);
    burn_cpu_us(100000);
    CHECK(kestrel_profile_stop(path2) == 0);

    /* Sessions one after another, each to end with what it mapped. */
    long vm0 = proc_vmsize_kb();
    for (int i = 0; i < 50; i++) {
        CHECK(kestrel_profile_start(997) == 0);
        CHECK(kestrel_profile_stop(loop) == 0);
    }
    long vm1 = proc_vmsize_kb();
    CHECK(vm0 > 0 && vm1 > 0);
    printf("vm_grown %ld\n", vm1 - vm0);

    for (int i = 0; i < 50; i++) {
        CHECK(kestrel_profile_start(997) == 0);
        outliving_started = outliving_go = 0;
        pthread_create(&l, NULL, outliving, NULL);
        while (!outliving_started)
            usleep(100);
        CHECK(kestrel_profile_stop(loop) == 0);
        outliving_go = 1;
        pthread_join(l, NULL);
    }
    long vm2 = proc_vmsize_kb();
    printf("vm_grown_outliving %ld\n", vm2 - vm1);

    for (int i = 0; i < 50; i++) {
        CHECK(kestrel_profile_start(997) == 0);
        pthread_create(&l, NULL, replacing, NULL);
        pthread_join(l, NULL);
        CHECK(kestrel_profile_stop(loop) == 0);
    }
    long vm3 = proc_vmsize_kb();
    printf("vm_grown_replacing %ld\n", vm3 - vm2);

    /* A path that cannot be written: an error, and no file or temporary left. */
    CHECK(kestrel_profile_start(100) == 0);
    r = kestrel_profile_stop("/nonexistent-dir/x.json");
    CHECKF(r == -ENOENT, "stop to a missing directory: %d", r);
    CHECK(kestrel_profile_is_running() == 0);

    return check_exit();
}
