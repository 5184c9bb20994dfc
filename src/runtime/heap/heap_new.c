/* C++ operator new and delete, every form (plain, nothrow, aligned, aligned nothrow;
 * arrays of each; sized and aligned deletes), interposed in front of the next
 * definition (libstdc++'s, or an allocator's such as tcmalloc's or jemalloc's).
 *
 * libstdc++'s operator new is malloc (aligned_alloc for the aligned forms) until that
 * fails, and its delete is free: with libstdc++ next, each form calls the profiler's
 * malloc path itself and libstdc++'s only after a failure, and delete calls free. Any
 * other next definition: an allocator that defines operator new serves it from its own
 * heap and malloc never sees it, so such forms are counted here, with malloc's countdown
 * and sampling; one that reaches the profiler's allocation functions passes straight
 * through, or its bytes would count twice. Which is which is found once, by calling
 * each form of the next operator new at a session's start (heap_new_probe): a form
 * counts here when that call reached no slow path of the profiler's. Until then (and
 * while no session ever ran) such forms pass through. A block sampled here comes from
 * the region, so every operator delete checks the region first, as free does.
 *
 * Every function here runs inside the program's allocations; none in a signal handler.
 * The pass-through paths are tail calls: an exception thrown by the next operator new
 * never crosses a frame of the runtime. */
#include "runtime/heap/heap.h"
#include "runtime/interpose.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#define FRAME() ((uintptr_t)__builtin_frame_address(0))

/* The forms of operator new, in the order of heap_new_names. */
enum {
    HN_NEW,           /* new(size_t) */
    HN_NEW_ARRAY,     /* new[](size_t) */
    HN_NEW_NT,        /* new(size_t, nothrow_t const&) */
    HN_NEW_ARRAY_NT,  /* new[](size_t, nothrow_t const&) */
    HN_NEW_AL,        /* new(size_t, align_val_t) */
    HN_NEW_ARRAY_AL,  /* new[](size_t, align_val_t) */
    HN_NEW_AL_NT,     /* new(size_t, align_val_t, nothrow_t const&) */
    HN_NEW_ARRAY_ALNT, /* new[](size_t, align_val_t, nothrow_t const&) */
    HN_NEWS
};
static const char *const heap_new_names[HN_NEWS] = {
    "_Znwm",
    "_Znam",
    "_ZnwmRKSt9nothrow_t",
    "_ZnamRKSt9nothrow_t",
    "_ZnwmSt11align_val_t",
    "_ZnamSt11align_val_t",
    "_ZnwmSt11align_val_tRKSt9nothrow_t",
    "_ZnamSt11align_val_tRKSt9nothrow_t",
};

/* The forms of operator delete. */
enum {
    HD_DEL,            /* delete(void*) */
    HD_DEL_ARRAY,      /* delete[](void*) */
    HD_DEL_SIZED,      /* delete(void*, size_t) */
    HD_DEL_ARRAY_SIZED, /* delete[](void*, size_t) */
    HD_DEL_NT,         /* delete(void*, nothrow_t const&) */
    HD_DEL_ARRAY_NT,   /* delete[](void*, nothrow_t const&) */
    HD_DEL_AL,         /* delete(void*, align_val_t) */
    HD_DEL_ARRAY_AL,   /* delete[](void*, align_val_t) */
    HD_DEL_SIZED_AL,   /* delete(void*, size_t, align_val_t) */
    HD_DEL_ARRAY_SIZED_AL, /* delete[](void*, size_t, align_val_t) */
    HD_DEL_AL_NT,      /* delete(void*, align_val_t, nothrow_t const&) */
    HD_DEL_ARRAY_AL_NT, /* delete[](void*, align_val_t, nothrow_t const&) */
    HD_DELS
};
static const char *const heap_del_names[HD_DELS] = {
    "_ZdlPv",
    "_ZdaPv",
    "_ZdlPvm",
    "_ZdaPvm",
    "_ZdlPvRKSt9nothrow_t",
    "_ZdaPvRKSt9nothrow_t",
    "_ZdlPvSt11align_val_t",
    "_ZdaPvSt11align_val_t",
    "_ZdlPvmSt11align_val_t",
    "_ZdaPvmSt11align_val_t",
    "_ZdlPvSt11align_val_tRKSt9nothrow_t",
    "_ZdaPvSt11align_val_tRKSt9nothrow_t",
};

static void *heap_new_next[HN_NEWS]; /* the next definitions, NULL until found */
static void *heap_del_next[HD_DELS];
static unsigned heap_new_counted; /* bit i: form i is counted here (heap_new_probe) */
/* The next operator new is libstdc++'s, which is malloc (aligned_alloc) until that fails:
 * kestrel calls its malloc itself, and libstdc++'s only for what follows a failure (the
 * new_handler, bad_alloc); its operator delete is free. One hop less each way. */
static int heap_new_libstdcxx;
static int heap_new_probed;

struct heap_tls *heap_probe_owner;
int heap_probe_hit;

/* Finds the next definitions (idempotent: threads that race store the same values). */
__attribute__((noinline, cold)) static void heap_new_resolve(void)
{
    for (int i = 0; i < HN_NEWS; i++)
        if (!__atomic_load_n(&heap_new_next[i], __ATOMIC_ACQUIRE))
            __atomic_store_n(&heap_new_next[i], dlsym(RTLD_NEXT, heap_new_names[i]),
                             __ATOMIC_RELEASE);
    for (int i = 0; i < HD_DELS; i++)
        if (!__atomic_load_n(&heap_del_next[i], __ATOMIC_ACQUIRE))
            __atomic_store_n(&heap_del_next[i], dlsym(RTLD_NEXT, heap_del_names[i]),
                             __ATOMIC_RELEASE);
    Dl_info info;
    void *f = heap_new_next[HN_NEW];
    if (f && dladdr(f, &info) && info.dli_fname) {
        const char *base = strrchr(info.dli_fname, '/');
        base = base ? base + 1 : info.dli_fname;
        if (!strncmp(base, "libstdc++.so", 12))
            __atomic_store_n(&heap_new_libstdcxx, 1, __ATOMIC_RELEASE);
    }
}

static inline void *heap_new_fn(int i)
{
    void *f = __atomic_load_n(&heap_new_next[i], __ATOMIC_ACQUIRE);
    if (__builtin_expect(!f, 0)) {
        heap_new_resolve();
        f = __atomic_load_n(&heap_new_next[i], __ATOMIC_ACQUIRE);
    }
    return f;
}

static inline void *heap_del_fn(int i)
{
    void *f = __atomic_load_n(&heap_del_next[i], __ATOMIC_ACQUIRE);
    if (__builtin_expect(!f, 0)) {
        heap_new_resolve();
        f = __atomic_load_n(&heap_del_next[i], __ATOMIC_ACQUIRE);
    }
    return f;
}

typedef void *(*new_fn)(size_t);
typedef void *(*new_nt_fn)(size_t, const void *);
typedef void *(*new_al_fn)(size_t, size_t);
typedef void *(*new_al_nt_fn)(size_t, size_t, const void *);

void heap_new_probe(void)
{
    if (heap_new_probed || heap_shadowed) return;
    heap_new_probed = 1;
    heap_new_resolve();
    struct heap_tls *t = &heap_tls;
    int64_t left = __atomic_load_n(&t->left, __ATOMIC_RELAXED);
    static const char nothrow; /* std::nothrow_t is empty: its address is all it passes */
    unsigned counted = 0;
    for (int i = 0; i < HN_NEWS; i++) {
        void *f = heap_new_next[i];
        if (!f) continue;
        heap_probe_hit = 0;
        __atomic_store_n(&heap_probe_owner, t, __ATOMIC_RELAXED);
        __atomic_store_n(&t->left, 0, __ATOMIC_RELAXED); /* every allocation: slow path */
        void *p;
        switch (i) {
        case HN_NEW:
        case HN_NEW_ARRAY:
            p = ((new_fn)f)(24);
            break;
        case HN_NEW_NT:
        case HN_NEW_ARRAY_NT:
            p = ((new_nt_fn)f)(24, &nothrow);
            break;
        case HN_NEW_AL:
        case HN_NEW_ARRAY_AL:
            p = ((new_al_fn)f)(24, 64);
            break;
        default:
            p = ((new_al_nt_fn)f)(24, 64, &nothrow);
            break;
        }
        __atomic_store_n(&heap_probe_owner, NULL, __ATOMIC_RELAXED);
        if (!heap_probe_hit) counted |= 1u << i;
        /* Given back through the matching next delete, the probe still on so that
         * nothing it reaches is counted. */
        __atomic_store_n(&heap_probe_owner, t, __ATOMIC_RELAXED);
        void *d = heap_del_next[i < HN_NEW_AL ? (i & 1) : HD_DEL_AL + (i & 1)];
        if (p && d) {
            if (i < HN_NEW_AL)
                ((void (*)(void *))d)(p);
            else
                ((void (*)(void *, size_t))d)(p, 64);
        }
        __atomic_store_n(&heap_probe_owner, NULL, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&t->left, left, __ATOMIC_RELAXED);
    __atomic_store_n(&heap_new_counted, counted, __ATOMIC_RELEASE);
}

static inline int heap_new_counts(int i)
{
    /* 0 while the probe runs: the calls the next definition makes to ours pass through. */
    return (__atomic_load_n(&heap_new_counted, __ATOMIC_RELAXED) >> i) & 1;
}

/* ===== operator new ===== */

/* Before the next definition, called by each form with its own arguments: with
 * libstdc++ behind, its malloc (aligned_alloc), whose NULL libstdc++'s new then handles
 * (it calls malloc again: a request that failed counts twice); a form counted here,
 * malloc's fast path and its sample (alignment `align`). */
#define HEAP_NEW_SAMPLE(i, n, align)                                                               \
    do {                                                                                           \
        if (__atomic_load_n(&heap_new_libstdcxx, __ATOMIC_RELAXED)) {                              \
            void *p_ = heap_new_malloc(n ? n : 1, align, FRAME());                                 \
            if (p_) return p_;                                                                     \
        } else if (heap_new_counts(i) && heap_count(n)) {                                          \
            void *p_ = heap_try_sample(n, align, 0, FRAME());                                      \
            if (p_) return p_;                                                                     \
        }                                                                                          \
    } while (0)

static inline void *heap_new_malloc(size_t n, size_t align, uintptr_t fp)
{
    if (heap_count(n)) {
        void *p = heap_try_sample(n, align, 0, fp);
        if (p) return p;
    }
    return align <= 16 ? heap_next.malloc(n) : heap_next.aligned_alloc(align, n);
}

static inline size_t heap_new_align(size_t al)
{
    return al < 16 ? 16 : al;
}
static inline int heap_pow2(size_t a)
{
    return a && !(a & (a - 1));
}

KESTREL_INTERPOSE void *_Znwm(size_t n)
{
    HEAP_NEW_SAMPLE(HN_NEW, n, 16);
    return ((new_fn)heap_new_fn(HN_NEW))(n);
}

KESTREL_INTERPOSE void *_Znam(size_t n)
{
    HEAP_NEW_SAMPLE(HN_NEW_ARRAY, n, 16);
    return ((new_fn)heap_new_fn(HN_NEW_ARRAY))(n);
}

KESTREL_INTERPOSE void *_ZnwmRKSt9nothrow_t(size_t n, const void *nt)
{
    HEAP_NEW_SAMPLE(HN_NEW_NT, n, 16);
    return ((new_nt_fn)heap_new_fn(HN_NEW_NT))(n, nt);
}

KESTREL_INTERPOSE void *_ZnamRKSt9nothrow_t(size_t n, const void *nt)
{
    HEAP_NEW_SAMPLE(HN_NEW_ARRAY_NT, n, 16);
    return ((new_nt_fn)heap_new_fn(HN_NEW_ARRAY_NT))(n, nt);
}

/* An alignment that is not a power of two is the next definition's to refuse. */
KESTREL_INTERPOSE void *_ZnwmSt11align_val_t(size_t n, size_t al)
{
    if (heap_pow2(al)) HEAP_NEW_SAMPLE(HN_NEW_AL, n, heap_new_align(al));
    return ((new_al_fn)heap_new_fn(HN_NEW_AL))(n, al);
}

KESTREL_INTERPOSE void *_ZnamSt11align_val_t(size_t n, size_t al)
{
    if (heap_pow2(al)) HEAP_NEW_SAMPLE(HN_NEW_ARRAY_AL, n, heap_new_align(al));
    return ((new_al_fn)heap_new_fn(HN_NEW_ARRAY_AL))(n, al);
}

KESTREL_INTERPOSE void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t al, const void *nt)
{
    if (heap_pow2(al)) HEAP_NEW_SAMPLE(HN_NEW_AL_NT, n, heap_new_align(al));
    return ((new_al_nt_fn)heap_new_fn(HN_NEW_AL_NT))(n, al, nt);
}

KESTREL_INTERPOSE void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t al, const void *nt)
{
    if (heap_pow2(al)) HEAP_NEW_SAMPLE(HN_NEW_ARRAY_ALNT, n, heap_new_align(al));
    return ((new_al_nt_fn)heap_new_fn(HN_NEW_ARRAY_ALNT))(n, al, nt);
}

/* ===== operator delete ===== */

/* A block of the region is the profiler's whatever form deletes it; any other is
 * free's with libstdc++ behind (all its forms are free), else the next definition's,
 * with the arguments it was given. With no next definition (none can be loaded: only
 * C++ code calls these), free. */
#define HEAP_DELETE(i, p, type, ...)                                                               \
    do {                                                                                           \
        if (heap_region_has(p)) {                                                                  \
            heap_sampled_free(p);                                                                  \
            return;                                                                                \
        }                                                                                          \
        if (__atomic_load_n(&heap_new_libstdcxx, __ATOMIC_RELAXED)) {                              \
            heap_next.free(p);                                                                     \
            return;                                                                                \
        }                                                                                          \
        void *f_ = heap_del_fn(i);                                                                 \
        if (f_)                                                                                    \
            ((type)f_)(__VA_ARGS__);                                                               \
        else                                                                                       \
            heap_next.free(p);                                                                     \
    } while (0)

typedef void (*del_fn)(void *);
typedef void (*del_sz_fn)(void *, size_t);
typedef void (*del_nt_fn)(void *, const void *);
typedef void (*del_sz_al_fn)(void *, size_t, size_t);
typedef void (*del_al_nt_fn)(void *, size_t, const void *);

KESTREL_INTERPOSE void _ZdlPv(void *p)
{
    HEAP_DELETE(HD_DEL, p, del_fn, p);
}
KESTREL_INTERPOSE void _ZdaPv(void *p)
{
    HEAP_DELETE(HD_DEL_ARRAY, p, del_fn, p);
}
KESTREL_INTERPOSE void _ZdlPvm(void *p, size_t n)
{
    HEAP_DELETE(HD_DEL_SIZED, p, del_sz_fn, p, n);
}
KESTREL_INTERPOSE void _ZdaPvm(void *p, size_t n)
{
    HEAP_DELETE(HD_DEL_ARRAY_SIZED, p, del_sz_fn, p, n);
}
KESTREL_INTERPOSE void _ZdlPvRKSt9nothrow_t(void *p, const void *nt)
{
    HEAP_DELETE(HD_DEL_NT, p, del_nt_fn, p, nt);
}
KESTREL_INTERPOSE void _ZdaPvRKSt9nothrow_t(void *p, const void *nt)
{
    HEAP_DELETE(HD_DEL_ARRAY_NT, p, del_nt_fn, p, nt);
}
KESTREL_INTERPOSE void _ZdlPvSt11align_val_t(void *p, size_t al)
{
    HEAP_DELETE(HD_DEL_AL, p, del_sz_fn, p, al);
}
KESTREL_INTERPOSE void _ZdaPvSt11align_val_t(void *p, size_t al)
{
    HEAP_DELETE(HD_DEL_ARRAY_AL, p, del_sz_fn, p, al);
}
KESTREL_INTERPOSE void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t al)
{
    HEAP_DELETE(HD_DEL_SIZED_AL, p, del_sz_al_fn, p, n, al);
}
KESTREL_INTERPOSE void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t al)
{
    HEAP_DELETE(HD_DEL_ARRAY_SIZED_AL, p, del_sz_al_fn, p, n, al);
}
KESTREL_INTERPOSE void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *nt)
{
    HEAP_DELETE(HD_DEL_AL_NT, p, del_al_nt_fn, p, al, nt);
}
KESTREL_INTERPOSE void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *nt)
{
    HEAP_DELETE(HD_DEL_ARRAY_AL_NT, p, del_al_nt_fn, p, al, nt);
}
