/* The profile model: the one in-memory form every reader fills (raw CPU JSON v1,
 * pprof) and every writer, the symbolizer and the aggregation read.
 *
 * Rules that tie the fields together:
 * - Frames and stacks are interned: two equal frames (every field equal) have one
 *   index, two equal stacks (same frame indices in the same order) have one index.
 * - A stack lists frame indices LEAF FIRST: frames[0] is where the sample was taken,
 *   frames[depth-1] the outermost caller (FORMATS.md §1 order). Writers that want
 *   root-first (speedscope, folded) walk it backwards.
 * - Before symbolization a frame stands for one raw address: `address` is the PC
 *   as recorded (not adjusted), `name` is its hex form "0x..." and `symbolized` is
 *   0. The symbolizer replaces such a frame by one or more frames (one per inlined
 *   call, innermost first; all but the outermost have `inlined` = 1) and rebuilds
 *   the stacks. `name` is never NULL, so a writer never has to choose a fallback.
 * - Every sample carries one value per sample type, in sample_types order:
 *   profile_values(p, i)[k]. Sample i's thread and stack index the tables below.
 * - Strings (names, paths) are owned by the profile and live until profile_free.
 *
 * Not thread-safe; one profile is built by one reader and then only read. */
#ifndef KESTREL_PROFILE_H
#define KESTREL_PROFILE_H
#include <stddef.h>
#include <stdint.h>

#define PROFILE_MAX_SAMPLE_TYPES 16
#define PROFILE_MAX_DEPTH 4096 /* a deeper stack is bad input */

/* The root-side frame under which a stack whose walk was cut short sits (its
 * outermost frame: image -1, symbolized), so that every writer shows the cut. */
#define PROFILE_INCOMPLETE_FRAME "[incomplete stack]"
/* The frame under which a stack the runtime did not walk for its samples sits (a
 * wait or system-call time given an earlier stack of the thread: the raw file's
 * `stacks_guessed`), just inside PROFILE_INCOMPLETE_FRAME when the stack has both. */
#define PROFILE_GUESSED_FRAME "[guessed stack]"
/* The start of the pprof comment that says a profile records how its walks ended
 * (the runtime's heap profile writes it, and so does the CLI's pprof writer). */
#define PROFILE_WALKS_COMMENT "stack walks:"
/* How many walk-end codes (the runtime's enum unwind_stop) meta counts. */
#define PROFILE_STACK_ENDS 32

enum profile_state { PROFILE_RUNNING = 0, PROFILE_WAITING = 1, PROFILE_NSTATES = 2 };

enum profile_kind { PROFILE_CPU = 0, PROFILE_HEAP = 1 };

struct profile_sample_type {
    char *type; /* "samples", "cpu", "inuse_space", ... */
    char *unit; /* "count", "nanoseconds", "bytes" */
};

struct profile_thread {
    char *label;     /* "main", "worker", a registered label; never NULL */
    int32_t process; /* index into processes; -1 when the profile has none */
    int64_t fiber; /* fiber id of a registered fiber; 0 for an ordinary thread */
    int64_t tid;   /* kernel thread id; -1 when unknown */
    char *name;    /* the thread's name at its last sample; NULL when unknown */
};

struct profile_frame {
    char *name;         /* function (demangled) or "0x..." when unresolved; never NULL */
    char *raw_name;     /* the symbol as the object file spells it (mangled, with Rust's
                           hash) when name is its demangled form; NULL otherwise */
    char *file;         /* source file; NULL when unknown */
    int32_t line;       /* 1-based; 0 when unknown */
    int32_t column;     /* 1-based; 0 when unknown */
    int32_t image;      /* index into images, -1 when no image holds the address */
    uint64_t address;   /* the PC as recorded (unadjusted) */
    uint8_t inlined;    /* 1: this call was inlined into the next frame (its caller) */
    uint8_t symbolized; /* 1: name (and file/line if known) come from debug info */
    uint8_t from_debug; /* 1: file and line were read by the symbolizer from the debug
                           info of the frame's image, not taken from the input */
};

struct profile_stack {
    uint32_t *frames; /* leaf first */
    uint32_t depth;
};

struct profile_sample {
    uint32_t thread; /* index into threads */
    uint32_t stack;  /* index into stacks */
    uint8_t state;   /* enum profile_state */
    int64_t time_ns; /* since start_unix_ns; -1 when the input has no times (pprof) */
};

/* A process the profile holds: one per raw profile, or one per pid of a process tree
 * (profile_merge): an exec chain of one pid is one process whose program changed. */
struct profile_process {
    int64_t pid;           /* -1 when unknown */
    int64_t ppid;          /* the parent when it started; -1 when unknown */
    char *name;            /* the program as invoked (argv[0]'s base name); never NULL */
    char *exe;             /* the file its last image ran; NULL when unknown */
    char *chain;           /* its programs in exec order, "sh → python3"; NULL for one */
    char *cmdline;         /* its arguments, space-separated; NULL when unknown */
    int64_t start_unix_ns; /* 0 when unknown */
    int64_t end_unix_ns;
};

/* An image that was mapped into the profiled process: the executable, a shared
 * library, the dynamic loader (FORMATS.md §1 `images`, pprof mappings). */
struct profile_image {
    char *path;           /* as recorded; never NULL ("" when unknown) */
    char *build_id;       /* lowercase hex; NULL when not recorded */
    char *arch;           /* "x86_64", ...; NULL when unknown */
    uint64_t base;        /* where the ELF header is mapped; 0 when unknown (pprof) */
    uint64_t slide;       /* load bias: runtime address - ELF virtual address */
    uint64_t text;        /* start of the executable span (pprof: mapping start) */
    uint64_t text_size;   /* its length; 0 when unknown */
    uint64_t text_offset; /* file offset of `text` (pprof: mapping offset) */
    char *elf;            /* base64 of the image's ELF bytes when no file holds them
                             (the vdso); NULL otherwise */
    uint8_t slide_known;  /* 0: slide must be derived from the file (pprof, and images
                             found in /proc/self/maps at text_offset) */
    uint8_t is_main;      /* 1 for the profiled executable */
    /* Whether its code keeps frame pointers, by its CFI (fpcheck.h): the symbolizer
     * looks at the images where cut walks end. */
    uint8_t fp_checked;   /* 1: fp_permille was read from the file */
    int16_t fp_permille;  /* per mille of its functions that keep one; -1 not told */
};

/* How full a table of the runtime got and what went past its limit. */
struct profile_table {
    char *name; /* "stacks", "stack_words", "strings", ... */
    uint64_t used;
    uint64_t limit;
    uint64_t past; /* what could not be kept (counted in an aggregate instead) */
};

/* What the run itself reported about itself (FORMATS.md §1, pprof comments). */
struct profile_meta {
    int64_t pid;           /* -1 when unknown */
    int64_t ppid;          /* the parent's pid; -1 when unknown */
    int64_t exec_gen;      /* execs of profiled images before this one; 0 unknown */
    char *exe;             /* NULL when unknown */
    char *platform;        /* "linux-x86_64"; NULL when unknown */
    double rate_hz;        /* achieved sampling rate; 0 when unknown */
    double requested_hz;   /* 0 when not recorded */
    int64_t start_unix_ns; /* 0 when unknown */
    int64_t end_unix_ns;   /* 0 when unknown */
    char *engine;          /* "perf" or "signal"; NULL when not recorded */
    char *perf_map;        /* the JIT's /tmp/perf-PID.map the run left; NULL when none */
    uint64_t dropped;      /* samples the runtime could not keep */
    uint64_t runtime_samples; /* samples of kestrel's own work, left out (engine_stats) */
    uint64_t truncated;    /* walks cut short by a failed check */
    /* Samples by how their stack's walk ended (enum unwind_stop; stack_ends of the raw
     * file), when the input said so (ends_known). */
    uint8_t ends_known;
    uint64_t end_samples[PROFILE_STACK_ENDS];
    uint64_t end_running[PROFILE_STACK_ENDS]; /* the same, of the running samples */
    /* A long run's samples past the runtime's row table are counted per (stack,
     * thread, state) without times: they are samples with time_ns -1, after every
     * timed one, and the time order ends at timed_end_ns (since start_unix_ns). */
    uint64_t untimed_samples; /* how many samples have no time for that reason; 0: none */
    int64_t timed_end_ns;     /* valid when untimed_samples > 0 */
    struct profile_table *tables;
    size_t n_tables;
    char **comments; /* free text (pprof `comment`) */
    size_t n_comments;
};

struct profile_hash; /* the interning tables (profile.c) */

struct profile {
    enum profile_kind kind;
    char *source; /* the path the profile was read from, for messages */

    struct profile_sample_type sample_types[PROFILE_MAX_SAMPLE_TYPES];
    size_t n_sample_types;
    size_t default_type; /* index of the type a report shows unless told otherwise */
    struct profile_sample_type period_type; /* pprof period_type; NULLs when none */
    int64_t period; /* ns between samples (CPU) or the mean interval (heap) */

    struct profile_thread *threads;
    size_t n_threads;
    struct profile_frame *frames;
    size_t n_frames;
    struct profile_stack *stacks;
    size_t n_stacks;
    struct profile_sample *samples;
    size_t n_samples;
    int64_t *values; /* n_samples * n_sample_types, row-major */
    struct profile_image *images;
    size_t n_images;
    struct profile_process *processes; /* the order they started in */
    size_t n_processes;

    struct profile_meta meta;

    /* Private: capacities and hash tables. */
    size_t cap_threads, cap_frames, cap_stacks, cap_samples, cap_images, cap_processes;
    struct profile_hash *hash;
};

/* NULL when memory runs out. */
struct profile *profile_new(enum profile_kind kind);
void profile_free(struct profile *p);

/* Copies strings. Returns the new index, or -1 when memory runs out. */
int profile_add_sample_type(struct profile *p, const char *type, const char *unit);
int64_t profile_add_thread(struct profile *p, const char *label, int64_t fiber, int64_t tid,
                           const char *name);
int64_t profile_add_image(struct profile *p, const struct profile_image *im);
/* Copies the strings of pr (name NULL reads as "?"). Returns the new index or -1. */
int64_t profile_add_process(struct profile *p, const struct profile_process *pr);
/* "gzip [1234]": a process's name for roots and labels, into buf. */
const char *profile_process_label(const struct profile *p, int32_t process, char *buf,
                                  size_t size);
/* Interns a frame (strings copied); returns its index or -1. */
int64_t profile_intern_frame(struct profile *p, const struct profile_frame *f);
/* p's own copy of s, kept once however often it is asked for (frames' names and
 * files are such copies); NULL for NULL or when memory runs out. Valid until the
 * frames are replaced or freed. */
char *profile_intern_string(struct profile *p, const char *s);
/* profile_intern_frame for a frame whose name and file are already p's own copies:
 * they are not looked up again (the symbolizer interns tens of thousands of frames
 * with the same few thousand strings). */
int64_t profile_intern_frame_owned(struct profile *p, const struct profile_frame *f);
/* 1 when a and b are one frame: every field equal, strings (p's own) by address. */
int profile_frame_equal(const struct profile_frame *a, const struct profile_frame *b);
/* Appends a frame the caller knows p does not hold (no frame equal to it in every
 * field; strings p's own, as for profile_intern_frame_owned) without looking it up:
 * the symbolizer knows, since all the frames of one address come from it at once.
 * Returns its index or -1. */
int64_t profile_append_frame(struct profile *p, const struct profile_frame *f);
/* Makes room for `frames` frames and `stacks` stacks in all, so interning that many
 * allocates no more. Returns 0 or -1. */
int profile_reserve(struct profile *p, size_t frames, size_t stacks);
/* Interns a leaf-first stack of frame indices; returns its index or -1. */
int64_t profile_intern_stack(struct profile *p, const uint32_t *frames, uint32_t depth);
/* Appends a sample; values has n_sample_types entries. Returns 0 or -1. */
int profile_add_sample(struct profile *p, uint32_t thread, uint32_t stack, int state,
                       int64_t time_ns, const int64_t *values);
int profile_add_table(struct profile *p, const char *name, uint64_t used, uint64_t limit,
                      uint64_t past);
int profile_add_comment(struct profile *p, const char *text);

/* An unresolved frame for a raw address: name "0x<hex>", image found by
 * profile_image_of. Returns its index or -1. */
int64_t profile_intern_address(struct profile *p, uint64_t address);

/* The image holding addr: the one whose executable range [text, text+text_size)
 * contains it; only for images with no range (text_size 0) the one with the greatest
 * base at or below it. -1 when none. */
int profile_image_of(const struct profile *p, uint64_t addr);

static inline int64_t *profile_values(const struct profile *p, size_t sample)
{
    return p->values + sample * p->n_sample_types;
}

/* The sample type named `type` ("inuse_space", "cpu"...); -1 when absent. */
int profile_find_sample_type(const struct profile *p, const char *type);

/* Checks the invariants above (every index in range, no NULL name, depth bounded,
 * each sample type's values add up within 64 bits, so no sum of any of them can
 * overflow).
 * Readers call it before handing a profile out; tests call it too. Returns 0 when
 * sound, else -1 with a one-line reason in why. */
int profile_check(const struct profile *p, char *why, size_t why_size);

/* Stack st's root-side marks: 1 when it sits under PROFILE_GUESSED_FRAME; *cut 1 when
 * under PROFILE_INCOMPLETE_FRAME; *last the depth of its frames below the marks (the
 * outermost real frame is frames[*last - 1]). */
int profile_stack_marks(const struct profile *p, const struct profile_stack *st, int *cut,
                        uint32_t *last);

/* Wall time of the run in ns (end - start), or 0 when unknown. */
int64_t profile_wall_ns(const struct profile *p);

/* Replaces p's frames and stacks by those interned in `with` (the symbolizer's
 * output), which is left empty: `map[i]` is the new index of old stack i. Samples are
 * renumbered; the old tables are freed. */
void profile_replace_stacks(struct profile *p, struct profile *with, const uint32_t *map);
#endif
