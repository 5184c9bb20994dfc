/* The heap profile as pprof (profile.proto, FORMATS.md §2), unsymbolized and
 * gzip-wrapped: four sample types, period, a `thread` label, locations with addresses
 * in page-aligned mappings that carry build ids, and comments that say how full each
 * table is and what went past it.
 *
 * A sample is one bucket, and buckets are distinct by (stack, thread name), so two
 * samples never say the same thing. Addresses are call sites: the return address
 * minus one, which is inside the call instruction for any symbolizer. A stack whose
 * walk was cut short ends, on its root side, in a location whose function is
 * "[incomplete stack]" (as the CLI's raw reader marks CPU stacks), and a comment
 * counts the sampled allocations by how their walk ended.
 *
 * Works in mmap'd scratch (pbwire's buffers and its own maps), never malloc: it runs
 * while malloc is interposed. Not for a signal handler. */
#include "runtime/heap/heap.h"
#include "runtime/images.h"
#include "runtime/maps.h"
#include "runtime/pprof_enc.h"
#include "runtime/unwind/unwind.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static void pp_sample(struct pp_scratch *s, struct pb_buf *b, const uint64_t *locs, size_t n,
                      const struct heap_bucket *bk, int64_t thread_key, int64_t thread)
{
    uint64_t v[4] = {(uint64_t)bk->alloc_objects, (uint64_t)bk->alloc_bytes,
                     (uint64_t)bk->inuse_objects, (uint64_t)bk->inuse_bytes};
    size_t m = pb_begin(b, PROFILE_SAMPLE);
    pb_put_packed(b, SAMPLE_LOCATION_ID, locs, n);
    pb_put_packed(b, SAMPLE_VALUE, v, 4);
    if (thread >= 0) {
        size_t l = pb_begin(b, SAMPLE_LABEL);
        pb_put_int(b, LABEL_KEY, thread_key);
        pb_put_int(b, LABEL_STR, thread);
        pb_end(b, l);
    }
    pb_end(b, m);
    (void)s;
}

/* The (other stacks) sample: one location whose line names a function of that name. */
static void pp_other_stacks(struct pp_scratch *s, struct pb_buf *b, const struct heap_bucket *bk)
{
    int64_t name = pp_cstr(s, "(other stacks)");
    size_t m = pb_begin(b, PROFILE_FUNCTION);
    pb_put_uint(b, FUNCTION_ID, 1);
    pb_put_int(b, FUNCTION_NAME, name);
    pb_put_int(b, FUNCTION_SYSTEM_NAME, name);
    pb_end(b, m);
    uint64_t id = ++s->nloc;
    m = pb_begin(b, PROFILE_LOCATION);
    pb_put_uint(b, LOCATION_ID, id);
    size_t line = pb_begin(b, LOCATION_LINE);
    pb_put_uint(b, LINE_FUNCTION_ID, 1);
    pb_end(b, line);
    pb_end(b, m);
    pp_sample(s, b, &id, 1, bk, 0, -1);
}

/* The root-side location of a cut stack: function 2, "[incomplete stack]". */
static uint64_t pp_incomplete(struct pp_scratch *s, struct pb_buf *b)
{
    if (s->incomplete) return s->incomplete;
    int64_t name = pp_cstr(s, "[incomplete stack]");
    size_t m = pb_begin(b, PROFILE_FUNCTION);
    pb_put_uint(b, FUNCTION_ID, 2);
    pb_put_int(b, FUNCTION_NAME, name);
    pb_put_int(b, FUNCTION_SYSTEM_NAME, name);
    pb_end(b, m);
    s->incomplete = ++s->nloc;
    m = pb_begin(b, PROFILE_LOCATION);
    pb_put_uint(b, LOCATION_ID, s->incomplete);
    size_t line = pb_begin(b, LOCATION_LINE);
    pb_put_uint(b, LINE_FUNCTION_ID, 2);
    pb_end(b, line);
    pb_end(b, m);
    return s->incomplete;
}

static void pp_comments(struct pp_scratch *s, struct pb_buf *b, const struct heap_table *tb,
                        const struct heap_pprof_info *info)
{
    const struct heap_bucket *o = &tb->buckets[0];
    int64_t c[3];
    c[0] = pp_strf(s, "kestrel heap profile: %llu samples, interval %lld bytes",
                   (unsigned long long)info->samples, (long long)info->interval);
    c[1] = pp_strf(s, "stacks=%u/%u stack_words=%u/%u strings=%u/%u string_bytes=%u/%u",
                   tb->nbuckets - 1, tb->max.stacks, tb->nwords, tb->max.words, tb->nstrings,
                   tb->max.strings, tb->nbytes, tb->max.string_bytes);
    c[2] = pp_strf(s,
                   "past the limits: other_stacks_objects=%lld other_stacks_bytes=%lld "
                   "truncated_strings=%llu lost_objects=%llu lost_bytes=%llu",
                   (long long)o->alloc_objects, (long long)o->alloc_bytes,
                   (unsigned long long)tb->truncated_strings,
                   (unsigned long long)info->lost_objects, (unsigned long long)info->lost_bytes);
    for (int i = 0; i < 3; i++)
        pb_put_int(b, PROFILE_COMMENT, c[i]);
    /* "stack walks: N of M sampled allocations cut short (name=count ...)": the CLI
     * reads the prefix as "this profile says how its walks ended". */
    static const char *const names[UNWIND_STOPS] = UNWIND_STOP_NAMES;
    char by[512];
    size_t bo = 0;
    uint64_t cut = 0, all = 0;
    for (int k = 0; k < UNWIND_STOPS; k++) {
        all += info->stops[k];
        if (unwind_cut_short((enum unwind_stop)k)) cut += info->stops[k];
        if (info->stops[k] && bo < sizeof by)
            bo += (size_t)snprintf(by + bo, sizeof by - bo, " %s=%llu", names[k],
                                   (unsigned long long)info->stops[k]);
    }
    by[bo < sizeof by ? bo : sizeof by - 1] = 0;
    pb_put_int(b, PROFILE_COMMENT,
               pp_strf(s, "stack walks: %llu of %llu sampled allocations cut short (by how they "
                          "ended:%s)",
                       (unsigned long long)cut, (unsigned long long)all, bo ? by : " none"));
}

/* ===== the profile ===== */

int heap_pprof_write(const struct heap_table *tb, const struct heap_pprof_info *info,
                     struct pb_buf *out)
{
    struct pp_scratch s;
    if (maps_refresh_all() < 0) return -EIO;
    uint32_t max_str = tb->nstrings + 2 * (uint32_t)images_count() + 64;
    int rc = pp_scratch_init(&s, max_str);
    if (rc) return rc;
    struct pb_buf b = {0};
    pp_str(&s, "", 0);
    int64_t space = pp_cstr(&s, "space"), bytes = pp_cstr(&s, "bytes");
    int64_t count = pp_cstr(&s, "count");
    pp_value_type(&b, PROFILE_SAMPLE_TYPE, pp_cstr(&s, "alloc_objects"), count);
    pp_value_type(&b, PROFILE_SAMPLE_TYPE, pp_cstr(&s, "alloc_space"), bytes);
    pp_value_type(&b, PROFILE_SAMPLE_TYPE, pp_cstr(&s, "inuse_objects"), count);
    pp_value_type(&b, PROFILE_SAMPLE_TYPE, pp_cstr(&s, "inuse_space"), bytes);
    pp_value_type(&b, PROFILE_PERIOD_TYPE, space, bytes);
    pb_put_int(&b, PROFILE_PERIOD, info->interval);
    pb_put_int(&b, PROFILE_DEFAULT_SAMPLE_TYPE,
               pp_cstr(&s, info->alloc_default ? "alloc_space" : "inuse_space"));
    pb_put_int(&b, PROFILE_TIME_NANOS, (int64_t)info->start_ns);
    pb_put_int(&b, PROFILE_DURATION_NANOS, (int64_t)(info->end_ns - info->start_ns));

    int64_t thread_key = pp_cstr(&s, "thread");
    uint64_t locs[HEAP_STACK_MAX + 1];
    for (uint32_t i = 1; i < tb->nbuckets; i++) {
        const struct heap_bucket *bk = &tb->buckets[i];
        if (!bk->alloc_objects) continue;
        uint32_t depth = bk->depth < HEAP_STACK_MAX ? bk->depth : HEAP_STACK_MAX;
        for (uint32_t k = 0; k < depth; k++)
            locs[k] = pp_location(&s, &b, tb->words[bk->words + k] - 1);
        if (unwind_cut_short((enum unwind_stop)bk->stop)) locs[depth++] = pp_incomplete(&s, &b);
        int64_t thread = -1;
        if (bk->thread != HEAP_NO_STRING) {
            size_t len;
            const char *name = heap_table_str(tb, bk->thread, &len);
            thread = pp_str(&s, name, len);
        }
        pp_sample(&s, &b, locs, depth, bk, thread_key, thread);
    }
    if (tb->buckets[0].alloc_objects) pp_other_stacks(&s, &b, &tb->buckets[0]);
    pp_mappings(&s, &b);
    pp_comments(&s, &b, tb, info);
    return pp_finish(&s, &b, out);
}
