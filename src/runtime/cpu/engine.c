/* engine.c — picks the CPU sampling engine (engine.h).
 * Signal handlers: nothing. Inside malloc: nothing. */
#include "runtime/cpu/engine.h"

#include <string.h>

const struct engine *engine_choose(const char *want, const char **why)
{
    const struct engine *perf = &engine_perf;
    *why = NULL;
    if (want && *want && strcmp(want, "auto") != 0 && strcmp(want, "perf") != 0 &&
        strcmp(want, "signal") != 0) {
        *why = "unknown engine (auto, perf or signal)";
        return NULL;
    }
    int auto_ = !want || !*want || strcmp(want, "auto") == 0;
    if (auto_ || strcmp(want, "perf") == 0) {
        if (perf->check(why) == 0)
            return perf;
        if (!auto_) return NULL;
    }
    const char *sig_why = NULL;
    if (engine_signal.check(&sig_why) != 0) {
        *why = sig_why;
        return NULL;
    }
    return &engine_signal;
}
