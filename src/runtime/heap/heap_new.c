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
 * The paths that pass are jumps to the next definition; where the next operator new is
 * called instead (after a failed malloc, with libstdc++ next, for its new_handler and
 * bad_alloc), the exception it throws crosses frames that have unwind tables (.eh_frame)
 * and nothing to clean up (tests/heap/test_heap_cxx_new.sh checks bad_alloc). */
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

/* How a form is served (heap_new_mode, heap_del_mode). A wrapper looks at one byte and
 * jumps: PASS to the next definition, anything else to its slow path, which is entered
 * by a jump too, so its frame stands where the wrapper's would (a sample's walk starts
 * there) and the wrapper needs none. */
enum {
    HM_UNKNOWN, /* not resolved yet */
    HM_PASS,    /* the next definition's, untouched */
    HM_MALLOC,  /* libstdc++'s: kestrel's malloc path (new), free (delete) */
    HM_COUNT,   /* an allocator's own: counted here, then the next definition's (new) */
};

static void *heap_new_next[HN_NEWS]; /* the next definitions, NULL until found */
static void *heap_del_next[HD_DELS];
static uint8_t heap_new_mode[HN_NEWS];
static uint8_t heap_del_mode[HD_DELS];
static int heap_new_probed;

struct heap_tls *heap_probe_owner;
int heap_probe_hit;

/* Finds the next definitions and how each form is served. Threads that race store the
 * same values. libstdc++'s operator new is malloc (aligned_alloc) until that fails, its
 * delete free: HM_MALLOC. A missing definition (none can be: only C++ code calls these)
 * is served by malloc and free too. */
__attribute__((noinline, cold)) static void heap_new_resolve(void)
{
    void *f = dlsym(RTLD_NEXT, heap_new_names[HN_NEW]);
    Dl_info info;
    int libstdcxx = 0;
    if (f && dladdr(f, &info) && info.dli_fname) {
        const char *base = strrchr(info.dli_fname, '/');
        base = base ? base + 1 : info.dli_fname;
        libstdcxx = !strncmp(base, "libstdc++.so", 12);
    }
    for (int i = 0; i < HN_NEWS; i++) {
        void *g = dlsym(RTLD_NEXT, heap_new_names[i]);
        __atomic_store_n(&heap_new_next[i], g, __ATOMIC_RELEASE);
        if (__atomic_load_n(&heap_new_mode[i], __ATOMIC_ACQUIRE) == HM_UNKNOWN)
            __atomic_store_n(&heap_new_mode[i], g && !libstdcxx ? HM_PASS : HM_MALLOC,
                             __ATOMIC_RELEASE);
    }
    for (int i = 0; i < HD_DELS; i++) {
        void *g = dlsym(RTLD_NEXT, heap_del_names[i]);
        __atomic_store_n(&heap_del_next[i], g, __ATOMIC_RELEASE);
        __atomic_store_n(&heap_del_mode[i], g && !libstdcxx ? HM_PASS : HM_MALLOC,
                         __ATOMIC_RELEASE);
    }
}

typedef void *(*new_fn)(size_t);
typedef void *(*new_nt_fn)(size_t, const void *);
typedef void *(*new_al_fn)(size_t, size_t);
typedef void *(*new_al_nt_fn)(size_t, size_t, const void *);

static const char heap_nothrow; /* std::nothrow_t is empty: its address is all it passes */

/* The next definition of form i, called with the arguments of its kind. */
static void *heap_new_call(int i, size_t n, size_t al, const void *nt)
{
    void *f = __atomic_load_n(&heap_new_next[i], __ATOMIC_ACQUIRE);
    if (!f) return NULL;
    switch (i) {
    case HN_NEW:
    case HN_NEW_ARRAY:
        return ((new_fn)f)(n);
    case HN_NEW_NT:
    case HN_NEW_ARRAY_NT:
        return ((new_nt_fn)f)(n, nt);
    case HN_NEW_AL:
    case HN_NEW_ARRAY_AL:
        return ((new_al_fn)f)(n, al);
    default:
        return ((new_al_nt_fn)f)(n, al, nt);
    }
}

void heap_new_probe(void)
{
    if (heap_new_probed || heap_shadowed) return;
    heap_new_probed = 1;
    heap_new_resolve();
    struct heap_tls *t = &heap_tls;
    int64_t left = __atomic_load_n(&t->left, __ATOMIC_RELAXED);
    for (int i = 0; i < HN_NEWS; i++) {
        if (heap_new_mode[i] != HM_PASS) continue;
        heap_probe_hit = 0;
        __atomic_store_n(&heap_probe_owner, t, __ATOMIC_RELAXED);
        __atomic_store_n(&t->left, 0, __ATOMIC_RELAXED); /* every allocation: slow path */
        void *p = heap_new_call(i, 24, 64, &heap_nothrow);
        __atomic_store_n(&heap_probe_owner, NULL, __ATOMIC_RELAXED);
        int counted = !heap_probe_hit;
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
        /* Set after the probe: meanwhile, calls the next definition makes to ours pass. */
        if (counted) __atomic_store_n(&heap_new_mode[i], HM_COUNT, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&t->left, left, __ATOMIC_RELAXED);
}

/* ===== operator new ===== */

static inline int heap_pow2(size_t a)
{
    return a && !(a & (a - 1));
}

/* Every form that does not pass: malloc's fast path and sample, at alignment `al` (16
 * for the forms without one); with libstdc++ next, malloc (aligned_alloc) itself, whose
 * NULL libstdc++'s new then handles (it asks malloc again: a request that failed counts
 * twice); else the next definition. Reached by a jump from the wrapper: its frame is
 * the interposed function's, whose return address is the allocation site. */
__attribute__((noinline)) static void *heap_new_slow(int i, size_t n, size_t al, const void *nt)
{
    uintptr_t fp = FRAME();
    int m = __atomic_load_n(&heap_new_mode[i], __ATOMIC_ACQUIRE);
    if (m == HM_UNKNOWN) {
        heap_new_resolve();
        m = __atomic_load_n(&heap_new_mode[i], __ATOMIC_ACQUIRE);
    }
    size_t align = i < HN_NEW_AL ? 16 : al < 16 ? 16 : al;
    if (heap_pow2(align)) {
        if (m == HM_MALLOC) {
            size_t k = n ? n : 1;
            void *p = NULL;
            if (heap_count(k)) p = heap_try_sample(k, align, 0, fp);
            if (!p) p = align <= 16 ? heap_next.malloc(k) : heap_next.aligned_alloc(align, k);
            if (p) return p;
        } else if (m == HM_COUNT && heap_count(n)) {
            void *p = heap_try_sample(n, align, 0, fp);
            if (p) return p;
        }
    }
    return heap_new_call(i, n, al, nt);
}

/* One byte's look, then the next definition (a jump); counted here, malloc's countdown
 * before it; with libstdc++ next, malloc's own fast path (a block of the sample, or the
 * next malloc or aligned_alloc) and libstdc++'s new only when that returned NULL;
 * anything else (not resolved, size 0) in heap_new_slow. `al` is 0 for the forms
 * without an alignment. */
#define HEAP_NEW(i, call, n, al, nt)                                                               \
    do {                                                                                           \
        int m_ = __atomic_load_n(&heap_new_mode[i], __ATOMIC_ACQUIRE);                             \
        if (__builtin_expect(m_ == HM_PASS, 1)) return call;                                       \
        if (m_ == HM_COUNT && (!(al) || heap_pow2(al))) {                                          \
            if (heap_count(n)) {                                                                   \
                void *p_ = heap_try_sample(n, (al) < 16 ? 16 : (al), 0, FRAME());                  \
                if (p_) return p_;                                                                 \
            }                                                                                      \
            return call;                                                                           \
        }                                                                                          \
        if (m_ == HM_MALLOC && n && (!(al) || heap_pow2(al))) {                                    \
            void *p_ = NULL;                                                                       \
            size_t a_ = (al) < 16 ? 16 : (al);                                                     \
            if (heap_count(n)) p_ = heap_try_sample(n, a_, 0, FRAME());                            \
            if (!p_) p_ = a_ <= 16 ? heap_next.malloc(n) : heap_next.aligned_alloc(a_, n);         \
            return p_ ? p_ : heap_new_call(i, n, al, nt);                                          \
        }                                                                                          \
        return heap_new_slow(i, n, al, nt);                                                        \
    } while (0)

KESTREL_INTERPOSE void *_Znwm(size_t n)
{
    HEAP_NEW(HN_NEW, ((new_fn)heap_new_next[HN_NEW])(n), n, 0, NULL);
}

KESTREL_INTERPOSE void *_Znam(size_t n)
{
    HEAP_NEW(HN_NEW_ARRAY, ((new_fn)heap_new_next[HN_NEW_ARRAY])(n), n, 0, NULL);
}

KESTREL_INTERPOSE void *_ZnwmRKSt9nothrow_t(size_t n, const void *nt)
{
    HEAP_NEW(HN_NEW_NT, ((new_nt_fn)heap_new_next[HN_NEW_NT])(n, nt), n, 0, nt);
}

KESTREL_INTERPOSE void *_ZnamRKSt9nothrow_t(size_t n, const void *nt)
{
    HEAP_NEW(HN_NEW_ARRAY_NT, ((new_nt_fn)heap_new_next[HN_NEW_ARRAY_NT])(n, nt), n, 0, nt);
}

/* An alignment that is not a power of two is the next definition's to refuse. */
KESTREL_INTERPOSE void *_ZnwmSt11align_val_t(size_t n, size_t al)
{
    HEAP_NEW(HN_NEW_AL, ((new_al_fn)heap_new_next[HN_NEW_AL])(n, al), n, al, NULL);
}

KESTREL_INTERPOSE void *_ZnamSt11align_val_t(size_t n, size_t al)
{
    HEAP_NEW(HN_NEW_ARRAY_AL, ((new_al_fn)heap_new_next[HN_NEW_ARRAY_AL])(n, al), n, al, NULL);
}

KESTREL_INTERPOSE void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t al, const void *nt)
{
    HEAP_NEW(HN_NEW_AL_NT, ((new_al_nt_fn)heap_new_next[HN_NEW_AL_NT])(n, al, nt), n, al, nt);
}

KESTREL_INTERPOSE void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t al, const void *nt)
{
    HEAP_NEW(HN_NEW_ARRAY_ALNT, ((new_al_nt_fn)heap_new_next[HN_NEW_ARRAY_ALNT])(n, al, nt), n,
             al, nt);
}

/* ===== operator delete ===== */

/* A block of the region is the profiler's whatever form deletes it; any other is
 * free's with libstdc++ next (all its forms are free), else the next definition's, with
 * the arguments it was given. Unresolved: resolved, then the same call again. */
#define HEAP_DELETE(i, self, p, type, ...)                                                         \
    do {                                                                                           \
        if (heap_region_has(p)) {                                                                  \
            heap_sampled_free(p);                                                                  \
            return;                                                                                \
        }                                                                                          \
        int m_ = __atomic_load_n(&heap_del_mode[i], __ATOMIC_ACQUIRE);                             \
        if (__builtin_expect(m_ == HM_PASS, 1)) {                                                  \
            ((type)heap_del_next[i])(__VA_ARGS__);                                                 \
        } else if (m_ == HM_MALLOC) {                                                              \
            heap_next.free(p);                                                                     \
        } else {                                                                                   \
            heap_new_resolve();                                                                    \
            self(__VA_ARGS__);                                                                     \
        }                                                                                          \
    } while (0)

typedef void (*del_fn)(void *);
typedef void (*del_sz_fn)(void *, size_t);
typedef void (*del_nt_fn)(void *, const void *);
typedef void (*del_sz_al_fn)(void *, size_t, size_t);
typedef void (*del_al_nt_fn)(void *, size_t, const void *);

KESTREL_INTERPOSE void _ZdlPv(void *p)
{
    HEAP_DELETE(HD_DEL, _ZdlPv, p, del_fn, p);
}
KESTREL_INTERPOSE void _ZdaPv(void *p)
{
    HEAP_DELETE(HD_DEL_ARRAY, _ZdaPv, p, del_fn, p);
}
KESTREL_INTERPOSE void _ZdlPvm(void *p, size_t n)
{
    HEAP_DELETE(HD_DEL_SIZED, _ZdlPvm, p, del_sz_fn, p, n);
}
KESTREL_INTERPOSE void _ZdaPvm(void *p, size_t n)
{
    HEAP_DELETE(HD_DEL_ARRAY_SIZED, _ZdaPvm, p, del_sz_fn, p, n);
}
KESTREL_INTERPOSE void _ZdlPvRKSt9nothrow_t(void *p, const void *nt)
{
    HEAP_DELETE(HD_DEL_NT, _ZdlPvRKSt9nothrow_t, p, del_nt_fn, p, nt);
}
KESTREL_INTERPOSE void _ZdaPvRKSt9nothrow_t(void *p, const void *nt)
{
    HEAP_DELETE(HD_DEL_ARRAY_NT, _ZdaPvRKSt9nothrow_t, p, del_nt_fn, p, nt);
}
KESTREL_INTERPOSE void _ZdlPvSt11align_val_t(void *p, size_t al)
{
    HEAP_DELETE(HD_DEL_AL, _ZdlPvSt11align_val_t, p, del_sz_fn, p, al);
}
KESTREL_INTERPOSE void _ZdaPvSt11align_val_t(void *p, size_t al)
{
    HEAP_DELETE(HD_DEL_ARRAY_AL, _ZdaPvSt11align_val_t, p, del_sz_fn, p, al);
}
KESTREL_INTERPOSE void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t al)
{
    HEAP_DELETE(HD_DEL_SIZED_AL, _ZdlPvmSt11align_val_t, p, del_sz_al_fn, p, n, al);
}
KESTREL_INTERPOSE void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t al)
{
    HEAP_DELETE(HD_DEL_ARRAY_SIZED_AL, _ZdaPvmSt11align_val_t, p, del_sz_al_fn, p, n, al);
}
KESTREL_INTERPOSE void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *nt)
{
    HEAP_DELETE(HD_DEL_AL_NT, _ZdlPvSt11align_val_tRKSt9nothrow_t, p, del_al_nt_fn, p, al, nt);
}
KESTREL_INTERPOSE void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *nt)
{
    HEAP_DELETE(HD_DEL_ARRAY_AL_NT, _ZdaPvSt11align_val_tRKSt9nothrow_t, p, del_al_nt_fn, p, al,
                nt);
}
