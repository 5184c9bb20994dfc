/* cpu_pprof.c — a CPU window as pprof (cpu_pprof.h), through the encoding the heap
 * profile uses (runtime/pprof_enc.h).
 *
 * Addresses: frame 0 is the sampled PC itself; every other frame is a return address,
 * written minus one so that it falls inside the call instruction for any symbolizer
 * (as the heap profile and Go's own profiles do).
 * Signal handlers: nothing. Inside malloc: nothing. */
#include "runtime/cpu/cpu_pprof.h"
#include "runtime/cpu/engine.h"
#include "runtime/cpu/profile_state.h"
#include "runtime/heap/heap.h"
#include "runtime/images.h"
#include "runtime/maps.h"
#include "runtime/pprof_enc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void cp_label_str(struct pb_buf *b, int64_t key, int64_t str)
{
    size_t l = pb_begin(b, SAMPLE_LABEL);
    pb_put_int(b, LABEL_KEY, key);
    pb_put_int(b, LABEL_STR, str);
    pb_end(b, l);
}

static void cp_label_num(struct pb_buf *b, int64_t key, int64_t num)
{
    size_t l = pb_begin(b, SAMPLE_LABEL);
    pb_put_int(b, LABEL_KEY, key);
    pb_put_int(b, LABEL_NUM, num);
    pb_end(b, l);
}

int cpu_pprof_write(const struct sink_window *w, int waiting, struct pb_buf *out)
{
    if (maps_refresh_all() < 0) return -EIO;
    struct pp_scratch s;
    uint32_t max_str = 2 * (uint32_t)w->n_threads + 2 * (uint32_t)images_count() + 64;
    int rc = pp_scratch_init(&s, max_str);
    if (rc) return rc;
    struct pb_buf b = {0};
    pp_str(&s, "", 0);
    int64_t cpu = pp_cstr(&s, "cpu"), ns = pp_cstr(&s, "nanoseconds");
    pp_value_type(&b, PROFILE_SAMPLE_TYPE, pp_cstr(&s, "samples"), pp_cstr(&s, "count"));
    pp_value_type(&b, PROFILE_SAMPLE_TYPE, cpu, ns);
    pp_value_type(&b, PROFILE_PERIOD_TYPE, cpu, ns);
    pb_put_int(&b, PROFILE_PERIOD, w->hz ? 1000000000ll / w->hz : 0);
    pb_put_int(&b, PROFILE_TIME_NANOS, (int64_t)w->start_real_ns);
    pb_put_int(&b, PROFILE_DURATION_NANOS, (int64_t)(w->end_mono_ns - w->start_mono_ns));

    int64_t k_thread = pp_cstr(&s, "thread"), k_tid = pp_cstr(&s, "tid");
    int64_t k_state = pp_cstr(&s, "state");
    int64_t running = pp_cstr(&s, "running"), waiting_s = pp_cstr(&s, "waiting");
    int64_t k_stack = pp_cstr(&s, "stack"), guessed = pp_cstr(&s, "guessed");
    uint64_t locs[UNWIND_MAX_DEPTH], kept = 0, kept_cpu = 0;
    for (size_t i = 0; i < w->n_entries; i++) {
        const struct sink_agg_entry *e = &w->entries[i];
        if (e->state == SINK_WAITING && !waiting) continue;
        const struct sink_win_stack *st = &w->stacks[e->stack1 - 1];
        size_t n = st->len < UNWIND_MAX_DEPTH ? st->len : UNWIND_MAX_DEPTH;
        for (size_t k = 0; k < n; k++) {
            uint64_t a = w->words[st->off + k];
            locs[k] = pp_location(&s, &b, k ? a - 1 : a);
        }
        if (!n) /* the "(other stacks)" bucket: one location, no address */
            locs[n++] = pp_location(&s, &b, 0);
        const struct sink_win_thread *t = &w->threads[e->thread];
        uint64_t v[2] = {e->count, e->cpu_ns};
        size_t m = pb_begin(&b, PROFILE_SAMPLE);
        pb_put_packed(&b, SAMPLE_LOCATION_ID, locs, n);
        pb_put_packed(&b, SAMPLE_VALUE, v, 2);
        cp_label_str(&b, k_thread, pp_cstr(&s, t->name[0] ? t->name : t->label));
        if (t->tid) cp_label_num(&b, k_tid, t->tid);
        cp_label_str(&b, k_state, e->state == SINK_WAITING ? waiting_s : running);
        /* A stack the engine did not walk for these samples (sink.h). */
        if (st->guessed) cp_label_str(&b, k_stack, guessed);
        pb_end(&b, m);
        kept += e->count;
        kept_cpu += e->cpu_ns;
    }
    pp_mappings(&s, &b);
    int64_t c[2];
    c[0] = pp_strf(&s, "kestrel CPU window: engine %s, %u Hz, %llu samples (%llu written), "
                       "%llu CPU ns written, %s samples",
                   w->engine ? w->engine : "?", w->hz, (unsigned long long)w->samples,
                   (unsigned long long)kept, (unsigned long long)kept_cpu,
                   waiting ? "running and waiting" : "running");
    c[1] = pp_strf(&s, "past the window's tables: %llu samples; dropped before the tables: %llu%s",
                   (unsigned long long)w->lost, (unsigned long long)w->dropped,
                   w->session_ended ? "; the session ended before the window did" : "");
    for (int i = 0; i < 2; i++)
        pb_put_int(&b, PROFILE_COMMENT, c[i]);
    /* What the session lacks so far and why (the program took the engine's signal, a
     * call was refused, ...): a scraped window with no sample must say why. */
    const struct engine *e = profile_engine();
    const char *notes[16];
    size_t nn = e && e->notes ? e->notes(notes, 16) : 0;
    for (size_t i = 0; i < nn; i++)
        pb_put_int(&b, PROFILE_COMMENT, pp_strf(&s, "engine: %s", notes[i]));
    pb_put_int(&b, PROFILE_DEFAULT_SAMPLE_TYPE, cpu);
    return pp_finish(&s, &b, out);
}
