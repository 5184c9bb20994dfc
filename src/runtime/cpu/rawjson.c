/* rawjson.c — the raw CPU profile writer (rawjson.h).
 *
 * Signal handlers: nothing. Inside malloc: nothing. */
#include "runtime/cpu/rawjson.h"
#include "common/utf8.h"
#include "runtime/arch/arch.h"
#include "runtime/images.h"
#include "runtime/maps.h"
#include "runtime/cpu/registry.h"
#include "runtime/rtmem.h"
#include "runtime/outfile.h"
#include "runtime/rtfd.h"
#include "runtime/rtthread.h"
#include "runtime/cpu/sink.h"
#include "runtime/unwind/step.h"
#include "runtime/unwind/table.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RJ_BUF (256u * 1024)

struct rj {
    int fd;
    struct rtfd *id; /* a streamed file: checked before every write (never the program's) */
    int err;         /* first -errno seen */
    char *buf;
    size_t len;
    uint64_t written; /* bytes written to fd */
};

static void rj_flush(struct rj *w)
{
    size_t off = 0;
    while (off < w->len && !w->err) {
        if (w->id && !rtfd_ok(w->id)) { /* closed or replaced by the program */
            w->err = -EBADF;
            break;
        }
        ssize_t n = write(w->fd, w->buf + off, w->len - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            w->err = n < 0 ? -errno : -EIO;
        else
            off += (size_t)n, w->written += (uint64_t)n;
    }
    w->len = 0;
}

static void rj_put(struct rj *w, const char *s, size_t n)
{
    if (w->len + n > RJ_BUF) rj_flush(w);
    if (n > RJ_BUF) { /* never happens for our pieces; keeps the buffer bounded */
        w->err = w->err ? w->err : -E2BIG;
        return;
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
}

static void rj_s(struct rj *w, const char *s)
{
    rj_put(w, s, strlen(s));
}

static void rj_u(struct rj *w, uint64_t v)
{
    char tmp[24];
    int i = sizeof(tmp);
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    rj_put(w, tmp + i, sizeof(tmp) - (size_t)i);
}

static void rj_i(struct rj *w, int64_t v)
{
    if (v < 0) {
        rj_s(w, "-");
        rj_u(w, (uint64_t)0 - (uint64_t)v);
    } else {
        rj_u(w, (uint64_t)v);
    }
}

/* A JSON string: quotes, backslashes and control characters escaped. A string that
 * is not valid UTF-8 (a path or a thread name is whatever bytes the program used) is
 * written reversibly: every byte of 0x80 or more as \u00XX, the code point of the
 * same value, so the file stays valid JSON; the caller then writes "<key>_bytes":true
 * beside it, and a reader maps U+0080..U+00FF back to bytes (docs/raw-format.md).
 * Returns 1 for such a string. */
static int rj_str(struct rj *w, const char *str)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str;
    size_t n = strlen(str);
    int bytes = !utf8_valid(str, n);
    rj_s(w, "\"");
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            rj_put(w, e, 2);
            i++;
        } else if (c < 0x20 || (bytes && c >= 0x80)) {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            rj_put(w, e, 6);
            i++;
        } else if (c < 0x80) {
            rj_put(w, (const char *)&s[i], 1);
            i++;
        } else {
            size_t l = utf8_seq_len(&s[i], n - i);
            rj_put(w, (const char *)&s[i], l);
            i += l;
        }
    }
    rj_s(w, "\"");
    return bytes;
}

/* "key":"value", and "key_bytes":true when the value is bytes (rj_str). */
static void rj_field(struct rj *w, const char *key, const char *value)
{
    rj_s(w, "\""), rj_s(w, key), rj_s(w, "\":");
    if (rj_str(w, value)) rj_s(w, ",\""), rj_s(w, key), rj_s(w, "_bytes\":true");
}

static void rj_key(struct rj *w, const char *k)
{
    rj_str(w, k);
    rj_s(w, ":");
}

/* ============================ the document ============================ */

/* bytes as base64 (RFC 4648), in a JSON string. */
static void rj_base64(struct rj *w, const uint8_t *b, size_t n)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    rj_s(w, "\"");
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)b[i] << 16 | (i + 1 < n ? (uint32_t)b[i + 1] << 8 : 0) |
                     (i + 2 < n ? b[i + 2] : 0);
        char q[4] = {abc[v >> 18], abc[(v >> 12) & 63], i + 1 < n ? abc[(v >> 6) & 63] : '=',
                     i + 2 < n ? abc[v & 63] : '='};
        rj_put(w, q, 4);
    }
    rj_s(w, "\"");
}

/* An executable mapping the loader did not report, as an image: its text is the
 * mapping, `offset` its file offset (the CLI derives the slide from the file);
 * a mapping of a file the loader did load carries that image's build id. */
static void rj_maps_image(struct rj *w, const struct maps_entry *e, int first)
{
    rj_s(w, first ? "\n{" : ",\n{");
    rj_key(w, "path"), rj_str(w, e->path);
    /* FORMATS.md §1's fields, for readers that know no more: where the file's start
     * would be, no slide. */
    rj_s(w, ",\"base\":"), rj_u(w, e->start >= e->offset ? e->start - e->offset : 0);
    rj_s(w, ",\"slide\":0");
    rj_s(w, ",\"text\":"), rj_u(w, e->start);
    rj_s(w, ",\"text_size\":"), rj_u(w, e->end - e->start);
    rj_s(w, ",\"offset\":"), rj_u(w, e->offset);
    rj_s(w, ",\"source\":\"maps\"");
    size_t n = images_count();
    const struct image *same = NULL;
    for (size_t i = 0; e->path[0] == '/' && i < n && !same; i++)
        if (!strcmp(images_get(i)->path, e->path)) same = images_get(i);
    rj_s(w, ",\"arch\":"), rj_str(w, same ? same->arch : "");
    if (same && same->build_id_len) {
        char bid[2 * IMAGE_BUILD_ID_MAX + 1];
        images_build_id_hex(same, bid, sizeof(bid));
        rj_s(w, ",\"build_id\":"), rj_str(w, bid);
    }
    rj_s(w, "}");
}

/* Images: the loader's from index `im0`, the other executable mappings from `mp0`
 * (a chunk writes those it has not written yet; a whole document, all of them). */
static void rj_images(struct rj *w, size_t im0, size_t mp0)
{
    rj_s(w, "\"images\":[");
    /* maps_vdso finds the vdso's mapping in the read the writer made before this */
    size_t vdso_size = 0;
    const void *vdso = maps_vdso(&vdso_size);
    size_t n = images_count();
    for (size_t i = im0; i < n; i++) {
        const struct image *im = images_get(i);
        char bid[2 * IMAGE_BUILD_ID_MAX + 1];
        images_build_id_hex(im, bid, sizeof(bid));
        rj_s(w, i > im0 ? ",\n{" : "\n{");
        rj_field(w, "path", im->path);
        rj_s(w, ",\"base\":"), rj_u(w, im->base);
        rj_s(w, ",\"slide\":"), rj_u(w, im->slide);
        rj_s(w, ",\"text\":"), rj_u(w, im->text);
        rj_s(w, ",\"text_size\":"), rj_u(w, im->text_size);
        rj_s(w, ",\"arch\":"), rj_str(w, im->arch);
        if (im->build_id_len) rj_s(w, ",\"build_id\":"), rj_str(w, bid);
        if (im->unloaded) rj_s(w, ",\"unloaded\":true");
        /* The vdso is in no file: its bytes (a few KiB) let the CLI read its symbols. */
        if (vdso && im->base == (uintptr_t)vdso)
            rj_s(w, ",\"elf\":"), rj_base64(w, (const uint8_t *)vdso, vdso_size);
        rj_s(w, "}");
    }
    for (size_t i = mp0; i < maps_count(); i++)
        rj_maps_image(w, maps_get(i), i == mp0 && n == im0);
    rj_s(w, "],\n");
}

/* Thread records [t0, n). */
static void rj_threads(struct rj *w, size_t t0, size_t n)
{
    rj_s(w, "\"threads\":[");
    for (size_t i = t0; i < n; i++) {
        struct reg_thread *t = registry_thread(i);
        rj_s(w, i > t0 ? ",\n{\"fiber\":" : "\n{\"fiber\":");
        rj_i(w, t->fiber);
        rj_s(w, ","), rj_field(w, "label", t->label);
        if (t->tid) {
            rj_s(w, ",\"tid\":"), rj_i(w, t->tid);
            rj_s(w, ","), rj_field(w, "name", t->name);
        }
        rj_s(w, "}");
    }
    rj_s(w, "],\n");
}

/* Interned stacks [s0, n). */
static void rj_stacks(struct rj *w, size_t s0, size_t n)
{
    rj_s(w, "\"stacks\":[");
    for (size_t i = s0; i < n; i++) {
        size_t len;
        const uint64_t *f = sink_stack(i, &len);
        rj_s(w, i > s0 ? ",\n[" : "\n[");
        for (size_t k = 0; k < len; k++) {
            if (k) rj_s(w, ",");
            rj_u(w, f[k]);
        }
        rj_s(w, "]");
    }
    rj_s(w, "],\n");
    /* How each stack's walk ended (enum unwind_stop), one small integer per stack. */
    rj_s(w, "\"stack_ends\":[");
    for (size_t i = s0; i < n; i++) {
        if (i > s0) rj_s(w, (i - s0) % 32 ? "," : ",\n");
        rj_u(w, (uint64_t)sink_stack_stop(i));
    }
    rj_s(w, "],\n");
    /* The stacks that are guesses, by index (few, and none in most profiles). */
    int any = 0;
    for (size_t i = s0; i < n; i++) {
        if (!sink_stack_guessed(i)) continue;
        rj_s(w, any ? "," : "\"stacks_guessed\":[");
        rj_u(w, i);
        any = 1;
    }
    if (any) rj_s(w, "],\n");
}

/* Sample rows [r0, n). */
static void rj_samples(struct rj *w, size_t r0, size_t n)
{
    rj_s(w, "\"samples\":[");
    const struct sink_row *r = sink_rows();
    for (size_t i = r0; i < n; i++) {
        rj_s(w, i > r0 ? ",\n[" : "\n[");
        rj_u(w, r[i].t_rel_ns), rj_s(w, ",");
        rj_u(w, r[i].thread), rj_s(w, ",");
        rj_i(w, (int32_t)r[i].stack1 - 1), rj_s(w, ",");
        rj_u(w, r[i].state), rj_s(w, ",");
        rj_u(w, r[i].cpu_ns), rj_s(w, "]");
    }
    rj_s(w, "],\n");
}

/* Past the row table: the samples counted per (stack, thread, state), and where the
 * timed rows end. */
static void rj_untimed(struct rj *w)
{
    const struct sink_counts *c = sink_counts();
    if (!c->agg_samples && !c->samples_past_limit) return;
    rj_s(w, "\"timed_end_ns\":"), rj_u(w, c->timed_end_ns);
    rj_s(w, ",\n\"untimed\":[");
    size_t n = sink_agg_count();
    for (size_t i = 0; i < n; i++) {
        const struct sink_agg_entry *e = sink_agg(i);
        rj_s(w, i ? ",\n[" : "\n[");
        rj_u(w, e->thread), rj_s(w, ",");
        rj_i(w, (int32_t)e->stack1 - 1), rj_s(w, ",");
        rj_u(w, e->state), rj_s(w, ",");
        rj_u(w, e->count), rj_s(w, ",");
        rj_u(w, e->cpu_ns), rj_s(w, "]");
    }
    rj_s(w, "],\n");
}

static void rj_pair(struct rj *w, const char *k, uint64_t used, uint64_t limit, int last)
{
    rj_key(w, k);
    rj_s(w, "["), rj_u(w, used), rj_s(w, ","), rj_u(w, limit), rj_s(w, last ? "]" : "],");
}

static void rj_counts(struct rj *w)
{
    static const char *stop_names[UNWIND_STOPS] = UNWIND_STOP_NAMES;
    const struct sink_counts *c = sink_counts();
    rj_s(w, "\"tables\":{");
    rj_pair(w, "stacks", c->stacks, SINK_STACKS_MAX, 0);
    rj_pair(w, "stack_words", c->words, SINK_WORDS_MAX, 0);
    rj_pair(w, "samples", c->samples, c->rows_max, 0);
    rj_pair(w, "untimed", c->agg_entries, SINK_AGG_MAX, 0);
    rj_pair(w, "threads", registry_thread_count(), REGISTRY_THREADS_MAX, 0);
    rj_pair(w, "threads_at_once", registry_live_max(), REGISTRY_SLOTS, 0);
    rj_pair(w, "images", images_count(), IMAGES_MAX, 0);
    rj_pair(w, "mappings", maps_count(), MAPS_MAX, 1);
    rj_s(w, "},\n\"past_limits\":{\"other_stacks_samples\":"), rj_u(w, c->other_stack_samples);
    rj_s(w, ",\"samples\":"), rj_u(w, c->samples_past_limit);
    rj_s(w, ",\"samples_cpu_ns\":"), rj_u(w, c->past_limit_cpu_ns);
    rj_s(w, ",\"threads\":"), rj_u(w, registry_threads_past_limit());
    rj_s(w, ",\"threads_at_once\":"), rj_u(w, registry_live_past_limit());
    rj_s(w, ",\"images\":"), rj_u(w, images_past_limit());
    rj_s(w, ",\"mappings\":"), rj_u(w, maps_past_limit());
    rj_s(w, "},\n\"other_stack\":"), rj_i(w, sink_other_stack());
    rj_s(w, ",\n\"walks_cut_short\":"), rj_u(w, c->cut_short);
    rj_s(w, ",\n\"walk_stops\":{");
    for (int i = 0; i < UNWIND_STOPS; i++) {
        if (i) rj_s(w, ",");
        rj_key(w, stop_names[i]);
        rj_u(w, c->stops[i]);
    }
    rj_s(w, "},\n");
}

/* The command line as the process shows it now (what ps shows), at most
 * RJ_CMDLINE_MAX bytes of it: names the process as it was invoked (a symlink's name,
 * not its target's). */
#define RJ_CMDLINE_MAX 4096
static void rj_cmdline(struct rj *w)
{
    char buf[RJ_CMDLINE_MAX];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    if (fd >= 0) close(fd);
    if (n <= 0) return;
    buf[n] = 0;
    rj_s(w, ",\"cmdline\":[");
    int bytes = 0;
    for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1) {
        if (i) rj_s(w, ",");
        bytes |= rj_str(w, buf + i);
    }
    rj_s(w, "]");
    if (bytes) rj_s(w, ",\"cmdline_bytes\":true");
}

/* What the process is and how it was sampled: known from the start, so a streamed
 * file's first chunk has it. */
static void rj_header(struct rj *w, const struct rawjson_meta *m)
{
    char exe[IMAGE_PATH_MAX] = "";
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = 0;
    rj_s(w, "\"version\":1,\"pid\":"), rj_i(w, m->pid);
    rj_s(w, ",\"ppid\":"), rj_i(w, m->ppid);
    rj_s(w, ",\"exec_gen\":"), rj_u(w, m->exec_gen);
    rj_s(w, ","), rj_field(w, "exe", exe);
    if (m->invoked && *m->invoked) rj_s(w, ","), rj_field(w, "invoked", m->invoked);
    rj_cmdline(w);
    rj_s(w, ",\"rate_hz\":"), rj_u(w, m->rate_hz);
    rj_s(w, ",\"requested_hz\":"), rj_u(w, m->requested_hz);
    rj_s(w, ",\"engine\":"), rj_str(w, m->engine);
    if (m->engine_fallback) rj_s(w, ",\"engine_fallback\":"), rj_str(w, m->engine_fallback);
    if (m->engine_choice) rj_s(w, ",\"engine_choice\":"), rj_str(w, m->engine_choice);
    rj_s(w, ",\"unwind\":"), rj_str(w, uw_mode_name(uw_mode_current()));
    rj_s(w, ",\"platform\":");
    rj_str(w, "linux-" ARCH_NAME);
    rj_s(w, ",\n\"start_unix_ns\":"), rj_u(w, m->start_unix_ns);
    char perf_map[64];
    if (maps_perf_map(m->pid, perf_map, sizeof(perf_map)))
        rj_s(w, ",\n\"perf_map\":"), rj_str(w, perf_map);
    rj_s(w, ",\n");
}

/* What only the end knows: the unwinder's tables, the engine's own counts and notes. */
static void rj_closing(struct rj *w, const struct rawjson_meta *m)
{
    struct uw_table_stats t;
    uw_table_stats(&t);
    rj_s(w, "\"unwind_tables\":{\"images\":"), rj_u(w, t.images);
    rj_s(w, ",\"images_without_cfi\":"), rj_u(w, t.images_nocfi);
    rj_s(w, ",\"images_past_limit\":"), rj_u(w, t.images_over);
    rj_s(w, ",\"rows\":"), rj_u(w, t.rows);
    rj_s(w, ",\"bytes\":"), rj_u(w, t.bytes);
    rj_s(w, ",\"bytes_limit\":"), rj_u(w, UW_TABLE_BYTES_MAX);
    rj_s(w, ",\"fdes\":"), rj_u(w, t.fdes);
    rj_s(w, ",\"fdes_rejected\":"), rj_u(w, t.fdes_bad);
    rj_s(w, ",\"rows_not_evaluated\":"), rj_u(w, t.rows_unsupported);
    rj_s(w, ",\"reused\":"), rj_u(w, t.reused);
    rj_s(w, ",\"images_mapped\":"), rj_u(w, t.mapped);
    rj_s(w, ",\"lookups_without_table\":"), rj_u(w, t.direct);
    rj_s(w, "}");
    if (m->n_engine_stats) {
        rj_s(w, ",\"engine_stats\":{");
        for (size_t i = 0; i < m->n_engine_stats; i++) {
            if (i) rj_s(w, ",");
            rj_key(w, m->engine_stats[i].name);
            rj_u(w, m->engine_stats[i].value);
        }
        rj_s(w, "}");
    }
    if (m->n_engine_notes) {
        rj_s(w, ",\"engine_notes\":[");
        for (size_t i = 0; i < m->n_engine_notes; i++) {
            if (i) rj_s(w, ",");
            rj_str(w, m->engine_notes[i]);
        }
        rj_s(w, "]");
    }
    rj_s(w, ",\n");
}

/* Where a chunk starts in each table, and where it ends. A whole document is the one
 * chunk from nothing to everything, with the header and the closing part. */
struct rj_range {
    size_t images, maps, threads, stacks, rows;
};

static void rj_now(struct rj_range *r)
{
    r->images = images_count();
    r->maps = maps_count();
    r->threads = registry_thread_count();
    r->stacks = sink_stack_count();
    r->rows = sink_row_count();
}

/* One object: a whole document (chunk < 0), or chunk number `chunk` of a streamed file
 * (docs/raw-format.md, "Streamed"): the header in chunk 0, the table entries of
 * [from, to), the counts so far in every chunk, the end's own in the closing one. */
static void rj_object(struct rj *w, const struct rawjson_meta *m, int chunk, int closing,
                      const struct rj_range *from, const struct rj_range *to)
{
    rj_s(w, "{");
    if (chunk >= 0) {
        rj_s(w, "\"chunk\":"), rj_u(w, (uint64_t)chunk);
        if (closing) rj_s(w, ",\"closing\":true");
        rj_s(w, chunk == 0 ? "," : ",\n");
    }
    if (chunk <= 0) rj_header(w, m);
    if (closing) rj_closing(w, m);
    rj_s(w, "\"end_unix_ns\":"), rj_u(w, m->end_unix_ns);
    rj_s(w, ",\n");
    if (chunk >= 0) {
        rj_s(w, "\"images_from\":"), rj_u(w, from->images + from->maps);
        rj_s(w, ",\"threads_from\":"), rj_u(w, from->threads);
        rj_s(w, ",\n");
    }
    rj_images(w, from->images, from->maps);
    /* Thread records: read under the registry's lock, which registering threads take. */
    registry_lock();
    rj_threads(w, from->threads, to->threads);
    registry_unlock();
    rj_stacks(w, from->stacks, to->stacks);
    rj_samples(w, from->rows, to->rows);
    if (closing) rj_untimed(w);
    rj_counts(w);
    rj_s(w, "\"dropped\":"), rj_u(w, sink_counts()->dropped);
    rj_s(w, "}\n");
}

int rawjson_write(const char *path, const struct rawjson_meta *m)
{
    struct outfile f;
    struct rj w = {.fd = -1};
    w.buf = rtmem_alloc(RJ_BUF);
    if (!w.buf) return -ENOMEM;
    int rc = outfile_open(&f, path, m->pid);
    if (rc) {
        rtmem_free(w.buf, RJ_BUF);
        return rc;
    }
    w.fd = f.fd;
    maps_refresh(1);
    struct rj_range none = {0}, all;
    rj_now(&all);
    rj_object(&w, m, -1, 1, &none, &all);
    rj_flush(&w);
    rtmem_free(w.buf, RJ_BUF);
    return outfile_commit(&f, w.err);
}

/* ================================ streamed ================================ */

int rawjson_stream_begin(struct rawjson_stream *s, const char *path)
{
    memset(s, 0, sizeof *s);
    s->id.fd = -1;
    if ((size_t)snprintf(s->path, sizeof s->path, "%s", path) >= sizeof s->path)
        return -ENAMETOOLONG;
    /* Only a regular file (or a path where nothing is yet) is written as it goes:
     * anything else (a device, a FIFO, a symlink) is written once, at the end. */
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) return -ENOTSUP;
    s->on = 1;
    return 0;
}

/* The stream's file, opened for this chunk alone: the runtime holds no descriptor
 * between chunks, so a program that counts on its descriptor limit has every one. The
 * first chunk creates it; later ones must find the same file. */
static int rj_stream_open(struct rawjson_stream *s)
{
    int fd = open(s->path, O_WRONLY | O_CLOEXEC | O_NOCTTY | (s->created ? 0 : O_CREAT | O_TRUNC),
                  0644);
    if (fd < 0) return -errno;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        (s->created && (st.st_dev != s->id.dev || st.st_ino != s->id.ino))) {
        close(fd);
        return -ESTALE; /* replaced by another file meanwhile */
    }
    if (lseek(fd, (off_t)s->size, SEEK_SET) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    s->id = (struct rtfd){.fd = fd, .dev = st.st_dev, .ino = st.st_ino, .type = S_IFREG,
                         .table = rt_thread_table()};
    return fd;
}

int rawjson_stream_chunk(struct rawjson_stream *s, const struct rawjson_meta *m, int closing)
{
    if (!s->on) return -ENOTSUP;
    struct rj w = {.fd = -1};
    if (!s->buf && !(s->buf = rtmem_alloc(RJ_BUF))) return -ENOMEM;
    w.buf = s->buf;
    int fd = rj_stream_open(s);
    if (fd < 0) return fd;
    w.fd = fd;
    w.id = &s->id;
    maps_refresh(1);
    struct rj_range from = {s->images, s->maps, s->threads, s->stacks, s->rows}, to;
    rj_now(&to);
    if (closing) /* the images and threads again, whole: unloaded images, final names */
        from.images = from.maps = from.threads = 0;
    rj_object(&w, m, (int)s->chunks, closing, &from, &to);
    rj_flush(&w);
    if (closing) {
        rtmem_free(s->buf, RJ_BUF);
        s->buf = NULL;
    }
    int err = w.err;
    if (rtfd_ok(&s->id)) { /* still the file opened above, not one of the program's */
        if (err) /* a chunk cut short (a full disk): taken back, tried again later */
            (void)!ftruncate(fd, (off_t)s->size);
        if (close(fd) != 0 && !err) err = -errno;
        if (err && !s->created) unlink(s->path); /* no file rather than an empty one */
    }
    s->id.fd = -1;
    if (err) return err;
    s->created = 1;
    s->size += w.written;
    s->chunks++;
    s->images = to.images, s->maps = to.maps, s->threads = to.threads;
    s->stacks = to.stacks, s->rows = to.rows;
    return 0;
}
