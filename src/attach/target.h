/* target — one process the attached host samples: its images (read from /proc and
 * kept after it exits), its threads, and its profile as the raw file will hold it
 * (interned stacks, sample rows). */
#ifndef KESTREL_ATTACH_TARGET_H
#define KESTREL_ATTACH_TARGET_H
#include "attach/uwtab.h"
#include "runtime/unwind/resume.h"
#include "runtime/unwind/unwind.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* An image of the target: an executable file mapping, the vdso, or anonymous
 * executable memory (JIT code). */
struct target_image {
    char *path;           /* as the target's maps name it ("" anonymous) */
    char *file;           /* where kestrel reads it: path, or a copy in STEM.raw/images */
    uint64_t start, end;  /* the executable mapping */
    uint64_t offset;      /* its file offset */
    uint64_t base, slide; /* ELF header's address, relocation */
    uint64_t text, text_size;
    char build_id[129];   /* lowercase hex, "" none */
    int vdso, anon;       /* the vdso; anonymous memory */
    int slide_known;      /* from the file's program headers (else derived by the CLI) */
    int unloaded;         /* gone from maps at the last read */
    int seen;             /* in the maps being read */
    struct uwtab_file *uf; /* its CFI as kestrel reads it, NULL none */
};

struct target_thread {
    pid_t tid;
    char name[16];
    int off;             /* off the CPU since off_ns (a voluntary switch-out) */
    uint64_t off_ns;
    int32_t off_stack;   /* its stack, -1 unknown */
    int32_t cs_stack;    /* the stack of its last switch sample, -1 none */
    uint64_t cs_ns;
    uint64_t stack_lo, stack_hi; /* the mapping its sp was last found in, 0 none read */
};

struct target_row {
    uint64_t t_ns; /* since the recording's start */
    uint32_t thread;
    int32_t stack;
    uint8_t state;  /* 0 running, 1 waiting */
    uint64_t cpu_ns;
};

struct target {
    pid_t pid, ppid, nspid;
    int exited;          /* seen gone */
    char exe[4096];
    char **argv;         /* command line */
    size_t argc;
    struct target_image *img;
    size_t n_img, cap_img;
    struct uwtab_set uw;            /* the walker's view of its address space */
    uint64_t (*xr)[2];              /* executable ranges, sorted */
    size_t n_xr, cap_xr;
    uint64_t maps_ns;               /* CLOCK_MONOTONIC of the last maps read */
    char *perf_map;                 /* a copy of its JIT map, or NULL */
    struct target_thread *thr;
    size_t n_thr, cap_thr;
    /* stacks: words in one array; each stack (off, len, stop) */
    uint64_t *words;
    size_t n_words, cap_words;
    struct {
        uint32_t off, len;
        uint8_t stop;
    } *stk;
    size_t n_stk, cap_stk;
    uint32_t *hash; /* open addressing: stack index + 1, 0 empty */
    size_t hash_cap;
    struct target_row *rows;
    size_t n_rows, cap_rows;
    uint64_t stops[UNWIND_STOPS];
    uint64_t cut_short, copies, copy_short, waits_unknown, waits;
    struct uw_resume_stats resumed; /* walks that went on past their copy */
};

/* Makes the target of pid, reading its maps (images copied into images_dir when
 * kestrel cannot read them at their own path). NULL with errno set. */
struct target *target_new(pid_t pid, const char *images_dir);
void target_free(struct target *t);

/* Reads its maps again (new images added, gone ones marked unloaded). 0 or -errno
 * (-ENOENT, -ESRCH: the process is gone, what was known stays). */
int target_maps(struct target *t, const char *images_dir);

/* Whether addr is executable memory of the target as last read. */
int target_exec(const struct target *t, uint64_t addr);

/* The thread record of tid (made, with its name, when new); its index in *index. */
struct target_thread *target_thread(struct target *t, pid_t tid, uint32_t *index);

/* Interns a stack (leaf first) with how its walk ended; its index, or -1. */
int32_t target_stack(struct target *t, const uint64_t *frames, size_t n, int stop);

/* Appends a sample row. 0 or -1. */
int target_row(struct target *t, uint64_t t_ns, uint32_t thread, int32_t stack, int state,
               uint64_t cpu_ns);

/* Copies its JIT perf map (/tmp/perf-NSPID.map inside its root) into dir. */
void target_perf_map(struct target *t, const char *dir);
#endif
