/* kestrel's minimal C test harness: CHECK records a failure with its location and
 * keeps going; check_exit() prints the count and returns the process status. */
#ifndef KESTREL_TESTS_CHECK_H
#define KESTREL_TESTS_CHECK_H
#include <stdio.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        check_count++;                                                                   \
        if (!(cond)) {                                                                   \
            check_failures++;                                                            \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);     \
        }                                                                                \
    } while (0)

#define CHECKF(cond, ...)                                                                \
    do {                                                                                 \
        check_count++;                                                                   \
        if (!(cond)) {                                                                   \
            check_failures++;                                                            \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);    \
            fprintf(stderr, __VA_ARGS__);                                                \
            fputc('\n', stderr);                                                         \
        }                                                                                \
    } while (0)

static inline int check_exit(void)
{
    fprintf(stderr, "%d checks, %d failed\n", check_count, check_failures);
    return check_failures ? 1 : 0;
}
#endif
