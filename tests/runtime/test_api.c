/* The in-process API without environment variables: kestrel_profile_start/stop around
 * a region of code, their errors before anything starts, thread registration (a
 * thread made before the session registers itself with its own fiber id and label),
 * and a second session after the first. The raw files are checked with jansson. */
#include "check.h"
#include "kestrel.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
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

/* Samples per thread label in a raw file; -1 when the file is unreadable. */
static int samples_of(json_t *root, const char *label)
{
    json_t *threads = json_object_get(root, "threads"), *samples = json_object_get(root, "samples");
    int n = 0;
    size_t i;
    json_t *row;
    json_array_foreach(samples, i, row)
    {
        json_t *t = json_array_get(threads, (size_t)json_integer_value(json_array_get(row, 1)));
        if (json_integer_value(json_array_get(row, 3)) == 0 &&
            !strcmp(json_string_value(json_object_get(t, "label")), label))
            n++;
    }
    return n;
}

int main(void)
{
    /* The engine under test: the environment's, else the signal engine (auto would
     * pick perf where the kernel allows it). */
    setenv("KESTREL_PROFILE_ENGINE", "signal", 0);
    char dir[] = "/tmp/kestrel-api-XXXXXX", path[128], path2[128];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof(path), "%s/region.json", dir);
    snprintf(path2, sizeof(path2), "%s/second.json", dir);

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
     * (60-70 pages in all here, the process's first session, loaded or not; 899-1128
     * when every slot was touched). That a program making threads all its life keeps
     * using the lowest slots is test_registry's. */
    pthread_t e, l;
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    CHECK(kestrel_profile_start(997) == 0);
    pthread_create(&l, NULL, late, NULL);
    pthread_join(l, NULL);
    CHECK(kestrel_profile_stop(path2) == 0);
    getrusage(RUSAGE_SELF, &ru1);
    long faults = ru1.ru_minflt - ru0.ru_minflt;
    CHECKF(faults < 400, "a session of two threads faulted %ld pages in", faults);

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

    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    CHECKF(root != NULL, "%s: %s", path, err.text);
    if (root) {
        CHECK(json_integer_value(json_object_get(root, "version")) == 1);
        CHECK(json_integer_value(json_object_get(root, "rate_hz")) == 997);
        const char *want = getenv("KESTREL_PROFILE_ENGINE");
        const char *eng = json_string_value(json_object_get(root, "engine"));
        CHECKF(eng && (!strcmp(want, "auto") || !strcmp(want, eng)), "engine %s", eng);
        json_t *threads = json_object_get(root, "threads");
        CHECKF(json_array_size(threads) == 3, "%zu threads", json_array_size(threads));
        json_t *w = json_array_get(threads, 1);
        int m = samples_of(root, "main"), t = samples_of(root, "thread"),
            k = samples_of(root, "worker7");
        CHECKF(m > 100 && t > 60 && k > 60, "samples main %d thread %d worker7 %d", m, t, k);
        int fiber7 = 0;
        size_t i;
        json_array_foreach(threads, i, w) fiber7 |=
            json_integer_value(json_object_get(w, "fiber")) == 7;
        CHECK(fiber7);
        json_decref(root);
    }

    /* A second session writes a file of its own. */
    CHECK(kestrel_profile_start(0) == 0);
    burn_cpu_us(100000);
    CHECK(kestrel_profile_stop(path2) == 0);
    root = json_load_file(path2, 0, &err);
    CHECK(root && json_integer_value(json_object_get(root, "rate_hz")) == 997);
    CHECKF(root && samples_of(root, "main") > 20, "%d", root ? samples_of(root, "main") : -1);
    json_decref(root);

    /* Sessions one after another: each ends with what it mapped (the perf engine's
     * mapped 3.3 MB of slot state per session and kept it: 334 MB over 100). */
    long vm0 = proc_vmsize_kb();
    for (int i = 0; i < 50; i++) {
        CHECK(kestrel_profile_start(997) == 0);
        CHECK(kestrel_profile_stop(path2) == 0);
    }
    long grown = proc_vmsize_kb() - vm0;
    CHECKF(vm0 > 0 && grown < 4096, "50 sessions grew the address space by %ld KiB", grown);

    /* A path that cannot be written: an error, and no file or temporary left. */
    CHECK(kestrel_profile_start(100) == 0);
    r = kestrel_profile_stop("/nonexistent-dir/x.json");
    CHECKF(r == -ENOENT, "stop to a missing directory: %d", r);
    CHECK(kestrel_profile_is_running() == 0);

    char cmd[200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    return check_exit();
}
