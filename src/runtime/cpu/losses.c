/* losses.c — the threads a loss hit most (losses.h).
 * Signal handlers: nothing. Inside malloc: nothing. */
#include "runtime/cpu/losses.h"
#include "runtime/cpu/registry.h"

#include <stdio.h>
#include <string.h>

void losses_reset(struct losses *l)
{
    memset(l, 0, sizeof *l);
}

void losses_add(struct losses *l, uint32_t thread_index, uint64_t amount)
{
    if (!amount) return;
    l->total += amount;
    l->threads++;
    /* Insertion into the short list, most first (a registration is added once). */
    size_t filled = l->threads - 1 < LOSSES_SHOWN ? (size_t)l->threads - 1 : LOSSES_SHOWN;
    size_t at = filled;
    while (at > 0 && l->amount[at - 1] < amount)
        at--;
    if (at >= LOSSES_SHOWN) return;
    size_t move = (filled < LOSSES_SHOWN ? filled : LOSSES_SHOWN - 1) - at;
    memmove(&l->who[at + 1], &l->who[at], move * sizeof *l->who);
    memmove(&l->amount[at + 1], &l->amount[at], move * sizeof *l->amount);
    l->who[at] = thread_index;
    l->amount[at] = amount;
}

void losses_text(const struct losses *l, char *buf, size_t size, double scale, const char *unit)
{
    size_t o = 0;
    buf[0] = 0;
    for (size_t i = 0; i < LOSSES_SHOWN && i < l->threads && o < size; i++) {
        const struct reg_thread *t = registry_thread(l->who[i]);
        o += (size_t)snprintf(buf + o, size - o, "%s%s (%d) %.1f %s", i ? ", " : "",
                              t && t->name[0] ? t->name : t ? t->label : "?", t ? (int)t->tid : 0,
                              (double)l->amount[i] / scale, unit);
    }
}
