/* losses — the threads a loss hit most, for the notes that say what a profile lacks:
 * each engine tells it, per thread record, how much that thread lost (samples dropped,
 * CPU ns no sample stands for), and a note names the few with most.
 *
 * Engine thread only (and the session's start). Signal handlers, malloc: nothing. */
#ifndef KESTREL_LOSSES_H
#define KESTREL_LOSSES_H
#include <stddef.h>
#include <stdint.h>

#define LOSSES_SHOWN 3

struct losses {
    uint64_t total;                  /* everything counted */
    uint64_t threads;                /* thread records that lost anything */
    uint32_t who[LOSSES_SHOWN];      /* the thread records with most, most first */
    uint64_t amount[LOSSES_SHOWN];   /* ... and how much */
};

void losses_reset(struct losses *l);
/* Thread record `thread_index` lost `amount` more (one call per registration). */
void losses_add(struct losses *l, uint32_t thread_index, uint64_t amount);
/* "name (tid) 12 ms, name (tid) 3 ms" into buf: amounts divided by `scale` and
 * followed by `unit`. */
void losses_text(const struct losses *l, char *buf, size_t size, double scale, const char *unit);
#endif
