/* rawout.c — the raw CPU profile of an attached target (rawout.h). */
#include "attach/rawout.h"
#include "common/utf8.h"
#include "runtime/arch/arch.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

/* A JSON string: well-formed UTF-8 as it is, any other byte of 0x80 or more as the code
 * point of its value (docs/raw-format.md, "Strings that are not UTF-8"). Returns 1
 * when it wrote such a byte, for the `<key>_bytes` flag. */
static int jstr(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    int bytes = 0;
    fputc('"', f);
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        size_t k = c >= 0x80 ? utf8_seq_len(p + i, n - i) : 1;
        if (c >= 0x80 && k) {
            fwrite(p + i, 1, k, f);
            i += k;
            continue;
        }
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c >= 0x80)
            fprintf(f, "\\u%04x", c), bytes |= c >= 0x80;
        else
            fputc(c, f);
        i++;
    }
    fputc('"', f);
    return bytes;
}

static void jfield(FILE *f, const char *key, const char *v)
{
    fprintf(f, "\"%s\":", key);
    if (jstr(f, v)) fprintf(f, ",\"%s_bytes\":true", key);
}

static void base64(FILE *f, const unsigned char *b, size_t n)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    fputc('"', f);
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)b[i] << 16 | (i + 1 < n ? (uint32_t)b[i + 1] << 8 : 0) |
                     (i + 2 < n ? b[i + 2] : 0);
        fputc(a[v >> 18 & 63], f);
        fputc(a[v >> 12 & 63], f);
        fputc(i + 1 < n ? a[v >> 6 & 63] : '=', f);
        fputc(i + 2 < n ? a[v & 63] : '=', f);
    }
    fputc('"', f);
}

/* This process's vdso: the same bytes as every process's on this kernel. */
static const unsigned char *vdso_bytes(size_t *len)
{
    const unsigned char *v = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
    *len = 0;
    if (!v) return NULL;
    const Elf64_Ehdr *e = (const Elf64_Ehdr *)v;
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(v + e->e_phoff);
    for (int i = 0; i < e->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > *len)
            *len = ph[i].p_offset + ph[i].p_filesz;
    return v;
}

static void images(FILE *f, const struct target *t)
{
    fputs("\"images\":[", f);
    for (size_t i = 0; i < t->n_img; i++) {
        const struct target_image *im = &t->img[i];
        fputs(i ? ",\n{" : "\n{", f);
        const char *path = im->vdso ? "linux-vdso.so.1" : im->file ? im->file : im->path;
        jfield(f, "path", path);
        fprintf(f, ",\"base\":%llu,\"slide\":%llu,\"text\":%llu,\"text_size\":%llu,\"arch\":\"%s\"",
                (unsigned long long)im->base, (unsigned long long)im->slide,
                (unsigned long long)im->text, (unsigned long long)im->text_size, ARCH_NAME);
        if (im->build_id[0]) fprintf(f, ",\"build_id\":\"%s\"", im->build_id);
        if (im->unloaded) fputs(",\"unloaded\":true", f);
        if (!im->slide_known)
            fprintf(f, ",\"source\":\"maps\",\"offset\":%llu", (unsigned long long)im->offset);
        if (im->vdso) {
            size_t n;
            const unsigned char *v = vdso_bytes(&n);
            if (v) fputs(",\"elf\":", f), base64(f, v, n);
        }
        fputc('}', f);
    }
    fputs("],\n", f);
}

static void body(FILE *f, const struct target *t, const struct rawout_meta *m)
{
    static const char *stop_names[UNWIND_STOPS] = UNWIND_STOP_NAMES;
    fprintf(f, "{\"version\":1,\"pid\":%d,\"ppid\":%d,", (int)t->pid, (int)t->ppid);
    jfield(f, "exe", t->exe);
    if (t->argc) {
        fputs(",\"cmdline\":[", f);
        int bytes = 0;
        for (size_t i = 0; i < t->argc; i++) {
            if (i) fputc(',', f);
            bytes |= jstr(f, t->argv[i]);
        }
        fputc(']', f);
        if (bytes) fputs(",\"cmdline_bytes\":true", f);
    }
    fprintf(f, ",\"rate_hz\":%u,\"requested_hz\":%u,\"engine\":\"perf\",\"unwind\":\"%s\"",
            m->rate_hz, m->requested_hz, m->unwind);
    fputs(",\"engine_stats\":{", f);
    for (size_t i = 0; i < m->n_stats; i++)
        fprintf(f, "%s\"%s\":%llu", i ? "," : "", m->stat_names[i],
                (unsigned long long)m->stat_values[i]);
    fprintf(f,
            "%s\"stack_copies\":%llu,\"stacks_copy_short\":%llu,\"stacks_read_on\":%llu,"
            "\"stacks_read_changed\":%llu,\"stack_read_bytes\":%llu,\"waits_without_stack\":%llu}",
            m->n_stats ? "," : "", (unsigned long long)t->copies,
            (unsigned long long)t->copy_short, (unsigned long long)t->resumed.walks,
            (unsigned long long)t->resumed.changed, (unsigned long long)t->resumed.bytes,
            (unsigned long long)t->waits_unknown);
    if (m->n_notes) {
        fputs(",\"engine_notes\":[", f);
        for (size_t i = 0; i < m->n_notes; i++) {
            if (i) fputc(',', f);
            jstr(f, m->notes[i]);
        }
        fputc(']', f);
    }
    fprintf(f, ",\"platform\":\"linux-%s\",\n\"start_unix_ns\":%llu,\"end_unix_ns\":%llu",
            ARCH_NAME, (unsigned long long)m->start_unix_ns, (unsigned long long)m->end_unix_ns);
    if (t->perf_map) fputs(",\n", f), jfield(f, "perf_map", t->perf_map);
    fputs(",\n", f);
    images(f, t);
    fputs("\"threads\":[", f);
    for (size_t i = 0; i < t->n_thr; i++) {
        const struct target_thread *th = &t->thr[i];
        fprintf(f, "%s{\"fiber\":0,", i ? ",\n" : "\n");
        jfield(f, "label", th->tid == t->pid ? "main" : th->name);
        fprintf(f, ",\"tid\":%d,", (int)th->tid);
        jfield(f, "name", th->name);
        fputc('}', f);
    }
    fputs("],\n\"stacks\":[", f);
    for (size_t i = 0; i < t->n_stk; i++) {
        fputs(i ? ",\n[" : "\n[", f);
        for (uint32_t k = 0; k < t->stk[i].len; k++)
            fprintf(f, k ? ",%llu" : "%llu", (unsigned long long)t->words[t->stk[i].off + k]);
        fputc(']', f);
    }
    fputs("],\n\"stack_ends\":[", f);
    for (size_t i = 0; i < t->n_stk; i++) fprintf(f, i ? ",%u" : "%u", t->stk[i].stop);
    fputs("],\n\"samples\":[", f);
    for (size_t i = 0; i < t->n_rows; i++) {
        const struct target_row *r = &t->rows[i];
        fprintf(f, "%s[%llu,%u,%d,%u,%llu]", i ? ",\n" : "\n", (unsigned long long)r->t_ns,
                r->thread, r->stack, r->state, (unsigned long long)r->cpu_ns);
    }
    fprintf(f, "],\n\"other_stack\":-1,\"walks_cut_short\":%llu,\"walk_stops\":{",
            (unsigned long long)t->cut_short);
    for (int i = 0; i < UNWIND_STOPS; i++)
        fprintf(f, "%s\"%s\":%llu", i ? "," : "", stop_names[i], (unsigned long long)t->stops[i]);
    fprintf(f, "},\n\"dropped\":%llu}\n", (unsigned long long)m->dropped);
}

int rawout_write(const char *path, const struct target *t, const struct rawout_meta *m)
{
    char tmp[4200];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid()) >= sizeof tmp)
        return -ENAMETOOLONG;
    FILE *f = fopen(tmp, "we");
    if (!f) return -errno;
    setvbuf(f, NULL, _IOFBF, 1 << 16);
    body(f, t, m);
    int err = ferror(f) ? EIO : 0;
    if (fclose(f) && !err) err = errno;
    if (!err && rename(tmp, path)) err = errno;
    if (err) unlink(tmp);
    return -err;
}
