/* target.c — one sampled process: its images from /proc/PID/maps and its profile's
 * tables (target.h). */
#include "attach/target.h"
#include "attach/proc.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    void *q = realloc(*p, c * size);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* ============================ images ============================ */

/* The ELF facts of an image file open at fd, mapped at start from file offset off. */
static int elf_facts(int fd, struct target_image *im)
{
    Elf64_Ehdr e;
    if (pread(fd, &e, sizeof e, 0) != (ssize_t)sizeof e || memcmp(e.e_ident, ELFMAG, SELFMAG) ||
        e.e_ident[EI_CLASS] != ELFCLASS64 || e.e_phentsize != sizeof(Elf64_Phdr) ||
        e.e_phnum == 0 || e.e_phnum > 256)
        return -1;
    Elf64_Phdr ph[256];
    size_t sz = e.e_phnum * sizeof(Elf64_Phdr);
    if (pread(fd, ph, sz, (off_t)e.e_phoff) != (ssize_t)sz) return -1;
    uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE), vlo = UINT64_MAX;
    int found = 0;
    for (int i = 0; i < e.e_phnum; i++) {
        if (ph[i].p_type != PT_LOAD) continue;
        if ((ph[i].p_vaddr & ~(pg - 1)) < vlo) vlo = ph[i].p_vaddr & ~(pg - 1);
        uint64_t o = ph[i].p_offset & ~(pg - 1);
        if (!found && im->offset >= o && im->offset < ph[i].p_offset + ph[i].p_filesz) {
            im->slide = im->start - ((ph[i].p_vaddr & ~(pg - 1)) + (im->offset - o));
            found = 1;
        }
    }
    if (!found) return -1;
    uint64_t tlo = UINT64_MAX, thi = 0;
    for (int i = 0; i < e.e_phnum; i++) {
        if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
            if (ph[i].p_vaddr < tlo) tlo = ph[i].p_vaddr;
            if (ph[i].p_vaddr + ph[i].p_memsz > thi) thi = ph[i].p_vaddr + ph[i].p_memsz;
        }
        if (ph[i].p_type == PT_NOTE && ph[i].p_filesz < 65536 && !im->build_id[0]) {
            unsigned char n[65536];
            size_t len = (size_t)ph[i].p_filesz;
            if (pread(fd, n, len, (off_t)ph[i].p_offset) != (ssize_t)len) continue;
            for (size_t at = 0; at + 12 <= len;) {
                uint32_t nsz, dsz, type;
                memcpy(&nsz, n + at, 4), memcpy(&dsz, n + at + 4, 4), memcpy(&type, n + at + 8, 4);
                size_t name = at + 12, desc = name + ((nsz + 3) & ~3u);
                if (desc + dsz > len) break;
                if (type == NT_GNU_BUILD_ID && nsz == 4 && !memcmp(n + name, "GNU", 4) && dsz <= 64) {
                    for (uint32_t k = 0; k < dsz; k++)
                        snprintf(im->build_id + 2 * k, 3, "%02x", n[desc + k]);
                    break;
                }
                at = desc + ((dsz + 3) & ~3u);
            }
        }
    }
    im->base = im->slide + vlo;
    if (thi > tlo) im->text = im->slide + tlo, im->text_size = thi - tlo;
    im->slide_known = 1;
    return 0;
}

/* A copy of the file open at fd in dir/<dev>-<ino>/<name>, kept once per file: the
 * path kestrel reads the image at when the target's own path names another file here
 * (another mount namespace, a deleted or replaced file). NULL when it cannot be made. */
static char *copy_file(int fd, const struct stat *sb, const char *dir, const char *path)
{
    if (!dir) return NULL;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char d[4096], out[4096 + 300];
    snprintf(d, sizeof d, "%s/%llx-%llu", dir, (unsigned long long)sb->st_dev,
             (unsigned long long)sb->st_ino);
    int n = snprintf(out, sizeof out, "%s/%.*s", d, (int)strcspn(base, " "), base);
    if (n <= 0 || (size_t)n >= sizeof out) return NULL;
    if (!access(out, R_OK)) return strdup(out);
    mkdir(dir, 0777);
    if (mkdir(d, 0777) && errno != EEXIST) return NULL;
    int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (o < 0) return NULL;
    char buf[65536];
    off_t at = 0;
    ssize_t got;
    int ok = 1;
    while ((got = pread(fd, buf, sizeof buf, at)) > 0) {
        if (write(o, buf, (size_t)got) != got) {
            ok = 0;
            break;
        }
        at += got;
    }
    if (close(o) || got < 0 || !ok) {
        unlink(out);
        return NULL;
    }
    return strdup(out);
}

/* The image of a file mapping: its file opened through the target's eyes
 * (/proc/PID/map_files, else its path under /proc/PID/root). */
static int image_file(struct target *t, struct target_image *im, const struct proc_map *m,
                      const char *dir)
{
    char p[4096 + 64];
    snprintf(p, sizeof p, "/proc/%d/map_files/%llx-%llx", (int)t->pid,
             (unsigned long long)m->start, (unsigned long long)m->end);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(p, sizeof p, "/proc/%d/root%s", (int)t->pid, m->path);
        char *del = strstr(p, " (deleted)");
        if (del && !del[10]) *del = 0;
        fd = open(p, O_RDONLY | O_CLOEXEC);
    }
    if (fd < 0) return -1;
    struct stat sb, own;
    if (fstat(fd, &sb) || elf_facts(fd, im)) {
        close(fd);
        return -1;
    }
    /* The path read here names the same file: symbolized from it. */
    if (!stat(m->path, &own) && own.st_dev == sb.st_dev && own.st_ino == sb.st_ino)
        im->file = strdup(m->path);
    else
        im->file = copy_file(fd, &sb, dir, m->path);
    im->uf = uwtab_file(fd, sb.st_dev, sb.st_ino);
    close(fd);
    return 0;
}

/* The vdso: the same code in every process of this kernel, so this process's own
 * bytes serve (nothing is read from the target). */
static void image_vdso(struct target_image *im)
{
    static const unsigned char *vdso;
    static size_t len;
    if (!vdso) {
        vdso = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
        if (!vdso) return;
        const Elf64_Ehdr *e = (const Elf64_Ehdr *)vdso;
        const Elf64_Phdr *ph = (const Elf64_Phdr *)(vdso + e->e_phoff);
        for (int i = 0; i < e->e_phnum; i++)
            if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > len)
                len = ph[i].p_offset + ph[i].p_filesz;
    }
    const Elf64_Ehdr *e = (const Elf64_Ehdr *)vdso;
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(vdso + e->e_phoff);
    im->slide = im->start;
    im->base = im->start;
    for (int i = 0; i < e->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X))
            im->text = im->start + ph[i].p_vaddr, im->text_size = ph[i].p_memsz;
    im->slide_known = 1;
    im->uf = uwtab_file_memory(vdso, len, im->start);
}

struct maps_pass {
    struct target *t;
    const char *dir;
    int err;
};

static int on_map(const struct proc_map *m, void *arg)
{
    struct maps_pass *mp = arg;
    struct target *t = mp->t;
    if (!m->exec) return 0;
    if (grow((void **)&t->xr, &t->cap_xr, t->n_xr + 1, sizeof *t->xr)) return -ENOMEM;
    t->xr[t->n_xr][0] = m->start;
    t->xr[t->n_xr][1] = m->end;
    t->n_xr++;
    if (m->path[0] == '[' && strcmp(m->path, "[vdso]")) return 0; /* [vsyscall] */
    for (size_t i = 0; i < t->n_img; i++) {
        struct target_image *o = &t->img[i];
        if (!o->unloaded && o->start == m->start && o->end == m->end && o->offset == m->offset &&
            !strcmp(o->path, m->path)) {
            o->seen = 1;
            return 0;
        }
    }
    if (grow((void **)&t->img, &t->cap_img, t->n_img + 1, sizeof *t->img)) return -ENOMEM;
    struct target_image *im = &t->img[t->n_img];
    memset(im, 0, sizeof *im);
    im->start = m->start, im->end = m->end, im->offset = m->offset;
    im->path = strdup(m->path);
    if (!im->path) return -ENOMEM;
    if (!strcmp(m->path, "[vdso]")) {
        im->vdso = 1;
        free(im->path);
        im->path = strdup("[vdso]");
        image_vdso(im);
    } else if (!m->path[0] || m->path[0] != '/') {
        im->anon = 1;
        im->base = m->start, im->text = m->start, im->text_size = m->end - m->start;
    } else if (image_file(t, im, m, mp->dir)) {
        /* Unreadable: its frames stay addresses; the CLI derives what it can. */
        im->base = m->start - m->offset;
        im->text = m->start, im->text_size = m->end - m->start;
    }
    im->seen = 1;
    t->n_img++;
    return 0;
}

int target_maps(struct target *t, const char *images_dir)
{
    for (size_t i = 0; i < t->n_img; i++) t->img[i].seen = 0;
    size_t keep_xr = t->n_xr, keep_cap = t->cap_xr;
    uint64_t(*old_xr)[2] = t->xr;
    t->xr = NULL;
    t->n_xr = t->cap_xr = 0;
    struct maps_pass mp = {t, images_dir, 0};
    int rc = proc_maps(t->pid, on_map, &mp);
    t->maps_ns = mono_ns();
    if (rc < 0 || t->n_xr == 0) {
        /* Gone (or nothing read): what was known stays. */
        free(t->xr);
        t->xr = old_xr;
        t->n_xr = keep_xr;
        t->cap_xr = keep_cap;
        for (size_t i = 0; i < t->n_img; i++) t->img[i].seen = !t->img[i].unloaded;
        return rc < 0 ? rc : -ESRCH;
    }
    free(old_xr);
    uwtab_set_free(&t->uw);
    for (size_t i = 0; i < t->n_img; i++) {
        struct target_image *im = &t->img[i];
        if (!im->seen) {
            im->unloaded = 1;
            continue;
        }
        uwtab_add(&t->uw, im->uf, im->start, im->end, im->slide);
    }
    return 0;
}

int target_exec(const struct target *t, uint64_t addr)
{
    for (size_t i = 0; i < t->n_xr; i++)
        if (addr >= t->xr[i][0] && addr < t->xr[i][1]) return 1;
    return 0;
}

/* ============================ the process ============================ */

struct target *target_new(pid_t pid, const char *images_dir)
{
    struct target *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->pid = pid;
    t->ppid = proc_ppid(pid, NULL);
    t->nspid = proc_nspid(pid);
    proc_exe(pid, t->exe, sizeof t->exe);
    proc_cmdline(pid, &t->argv, &t->argc);
    int rc = target_maps(t, images_dir);
    if (rc < 0) {
        target_free(t);
        errno = -rc;
        return NULL;
    }
    return t;
}

void target_free(struct target *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->n_img; i++) free(t->img[i].path), free(t->img[i].file);
    free(t->img);
    uwtab_set_free(&t->uw);
    free(t->xr);
    free(t->argv);
    free(t->perf_map);
    free(t->thr);
    free(t->words);
    free(t->stk);
    free(t->hash);
    free(t->rows);
    free(t);
}

struct target_thread *target_thread(struct target *t, pid_t tid, uint32_t *index)
{
    for (size_t i = 0; i < t->n_thr; i++)
        if (t->thr[i].tid == tid) {
            *index = (uint32_t)i;
            return &t->thr[i];
        }
    if (grow((void **)&t->thr, &t->cap_thr, t->n_thr + 1, sizeof *t->thr)) return NULL;
    struct target_thread *th = &t->thr[t->n_thr];
    memset(th, 0, sizeof *th);
    th->tid = tid;
    th->off_stack = th->cs_stack = -1;
    proc_comm(t->pid, tid, th->name, sizeof th->name);
    *index = (uint32_t)t->n_thr++;
    return th;
}

static uint64_t stack_hash(const uint64_t *f, size_t n, int stop)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)stop;
    for (size_t i = 0; i < n; i++) h = (h ^ f[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

int32_t target_stack(struct target *t, const uint64_t *f, size_t n, int stop)
{
    if (t->n_stk * 2 >= t->hash_cap) { /* rehash at half full */
        size_t cap = t->hash_cap ? t->hash_cap * 2 : 1024;
        uint32_t *h = calloc(cap, sizeof *h);
        if (!h) return -1;
        for (size_t i = 0; i < t->n_stk; i++) {
            uint64_t k = stack_hash(t->words + t->stk[i].off, t->stk[i].len, t->stk[i].stop);
            size_t j = k & (cap - 1);
            while (h[j]) j = (j + 1) & (cap - 1);
            h[j] = (uint32_t)i + 1;
        }
        free(t->hash);
        t->hash = h;
        t->hash_cap = cap;
    }
    size_t j = stack_hash(f, n, stop) & (t->hash_cap - 1);
    for (; t->hash[j]; j = (j + 1) & (t->hash_cap - 1)) {
        uint32_t i = t->hash[j] - 1;
        if (t->stk[i].len == n && t->stk[i].stop == stop &&
            !memcmp(t->words + t->stk[i].off, f, n * sizeof *f))
            return (int32_t)i;
    }
    if (grow((void **)&t->words, &t->cap_words, t->n_words + n, sizeof *t->words) ||
        grow((void **)&t->stk, &t->cap_stk, t->n_stk + 1, sizeof *t->stk))
        return -1;
    memcpy(t->words + t->n_words, f, n * sizeof *f);
    t->stk[t->n_stk].off = (uint32_t)t->n_words;
    t->stk[t->n_stk].len = (uint32_t)n;
    t->stk[t->n_stk].stop = (uint8_t)stop;
    t->n_words += n;
    t->hash[j] = (uint32_t)t->n_stk + 1;
    return (int32_t)t->n_stk++;
}

int target_row(struct target *t, uint64_t t_ns, uint32_t thread, int32_t stack, int state,
               uint64_t cpu_ns)
{
    if (grow((void **)&t->rows, &t->cap_rows, t->n_rows + 1, sizeof *t->rows)) return -1;
    t->rows[t->n_rows++] = (struct target_row){t_ns, thread, stack, (uint8_t)state, cpu_ns};
    return 0;
}

void target_perf_map(struct target *t, const char *dir)
{
    char src[128], dst[4096];
    snprintf(src, sizeof src, "/proc/%d/root/tmp/perf-%d.map", (int)t->pid, (int)t->nspid);
    int fd = open(src, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && t->nspid == t->pid) {
        snprintf(src, sizeof src, "/tmp/perf-%d.map", (int)t->pid);
        fd = open(src, O_RDONLY | O_CLOEXEC);
    }
    if (fd < 0) return;
    snprintf(dst, sizeof dst, "%s/%d.perf.map", dir, (int)t->pid);
    int o = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    char buf[65536];
    ssize_t got;
    int ok = o >= 0;
    while (ok && (got = read(fd, buf, sizeof buf)) > 0) ok = write(o, buf, (size_t)got) == got;
    close(fd);
    if (o >= 0 && close(o)) ok = 0;
    if (ok && !t->perf_map) t->perf_map = strdup(dst);
}
