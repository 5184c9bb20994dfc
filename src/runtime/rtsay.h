/* rtsay — the runtime's one line for what a user must know (a profile that could not
 * be written, a setting that fell back to its default): formatted on the stack, written
 * with one write(2), errno kept. Errors are named by strerrordesc_np, which neither
 * allocates nor depends on the locale.
 *
 * Where the line goes: under `kestrel record`, KESTREL_MESSAGES names a file that kestrel
 * made (in STEM.raw/) and relays to the user, so that no byte from the runtime reaches a
 * descriptor of the program (its stderr may be a server's log); the line is appended to
 * it, opened and closed around the write, and names the process (pid and executable). A
 * line that cannot be appended is lost, never sent elsewhere. Without KESTREL_MESSAGES
 * (the runtime preloaded by hand), stderr.
 *
 * Signal handlers: rtsay and rtsay_errno (snprintf of integers and strings, open, write,
 * close, readlink). */
#ifndef KESTREL_RTSAY_H
#define KESTREL_RTSAY_H
#include <string.h>

__attribute__((format(printf, 1, 2))) void rtsay(const char *fmt, ...);

/* The text of a negative errno value. */
static inline const char *rtsay_errno(int neg)
{
    const char *s = strerrordesc_np(-neg);
    return s ? s : "unknown error";
}
#endif
