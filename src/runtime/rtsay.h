/* rtsay — the runtime's one line on stderr, for what a user must know (a profile that
 * could not be written, a setting that fell back to its default): formatted on the
 * stack, written with one write(2), errno kept. Errors are named by
 * strerrordesc_np, which neither allocates nor depends on the locale.
 * Signal handlers: rtsay and rtsay_errno (snprintf of integers and strings). */
#ifndef KESTREL_RTSAY_H
#define KESTREL_RTSAY_H
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((format(printf, 1, 2))) static inline void rtsay(const char *fmt, ...)
{
    int saved = errno;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n > 0) {
        size_t len = (size_t)n < sizeof line - 1 ? (size_t)n : sizeof line - 2;
        line[len++] = '\n';
        (void)!write(2, line, len);
    }
    errno = saved;
}

/* The text of a negative errno value. */
static inline const char *rtsay_errno(int neg)
{
    const char *s = strerrordesc_np(-neg);
    return s ? s : "unknown error";
}
#endif
