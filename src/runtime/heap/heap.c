/* malloc, free, calloc, realloc, reallocarray, posix_memalign, aligned_alloc, memalign,
 * valloc, pvalloc and malloc_usable_size, interposed in front of whatever allocator
 * comes next (glibc's, or a preloaded jemalloc or tcmalloc), found with RTLD_NEXT; or,
 * when an allocator comes before the runtime (heap_shadowed), that allocator's, for
 * what it lacks.
 *
 * Every function here runs inside malloc by definition; none runs in a signal
 * handler of ours but heap_handler_enter/leave, which the trampoline around the
 * program's own handlers calls (sigwrap.c): thread-local stores only. The cost of an allocation that is not sampled is a thread-local
 * subtract and compare (heap_count); a free of a block that is not sampled costs the
 * two compares of heap_region_has. Each function keeps the contract of the one it
 * replaces: alignment, errno, NULL, size 0, calloc overflow -> ENOMEM.
 *
 * Until dlsym answers (it may allocate itself) allocations are served from the
 * runtime's region, so `free` recognises them like sampled blocks. */
#include "runtime/arch/arch.h"
#include "runtime/heap/heap.h"
#include "runtime/interpose.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FRAME() ((uintptr_t)__builtin_frame_address(0))

__thread struct heap_tls heap_tls = {.slot = -1};

/* ===== the next allocator ===== */

static void *boot_malloc(size_t n);
static void boot_free(void *p);
static void *boot_calloc(size_t a, size_t b);
static void *boot_realloc(void *p, size_t n);
static int boot_posix_memalign(void **pp, size_t align, size_t n);
static void *boot_aligned_alloc(size_t align, size_t n);
static void *boot_memalign(size_t align, size_t n);
static size_t boot_usable(void *p);

/* Until resolved, each pointer is a function that resolves all of them first. */
struct heap_next heap_next = {boot_malloc,         boot_free,          boot_calloc,   boot_realloc,
                              boot_posix_memalign, boot_aligned_alloc, boot_memalign, boot_usable};
static void *(*next_valloc)(size_t);
static void *(*next_pvalloc)(size_t);
static int heap_resolved;
static __thread int heap_resolving; /* this thread is inside dlsym */

/* The runtime's own definitions, whatever the program's lookup finds first. */
extern __typeof__(malloc) heap_own_malloc __attribute__((alias("malloc"), copy(malloc)));
extern __typeof__(free) heap_own_free __attribute__((alias("free"), copy(free)));
extern __typeof__(calloc) heap_own_calloc __attribute__((alias("calloc"), copy(calloc)));
extern __typeof__(realloc) heap_own_realloc __attribute__((alias("realloc"), copy(realloc)));
extern __typeof__(posix_memalign) heap_own_posix_memalign __attribute__((alias("posix_memalign"), copy(posix_memalign)));
extern __typeof__(aligned_alloc) heap_own_aligned_alloc __attribute__((alias("aligned_alloc"), copy(aligned_alloc)));
extern __typeof__(memalign) heap_own_memalign __attribute__((alias("memalign"), copy(memalign)));
extern __typeof__(malloc_usable_size) heap_own_usable __attribute__((alias("malloc_usable_size"), copy(malloc_usable_size)));
extern __typeof__(valloc) heap_own_valloc __attribute__((alias("valloc"), copy(valloc)));
extern __typeof__(pvalloc) heap_own_pvalloc __attribute__((alias("pvalloc"), copy(pvalloc)));

const char *heap_shadowed;

/* The next definition of `name`. When an allocator comes before the runtime in the
 * lookup order (preloaded first, or defined by the executable), the program calls it
 * directly and only what it lacks reaches the runtime (reallocarray, pvalloc...): the
 * "next" of those is then that allocator's, never libc's, which would be handed its
 * blocks; NULL where it lacks one too (the fallbacks below derive it). */
static void *heap_sym(const char *name, void *own)
{
    if (!heap_shadowed) return dlsym(RTLD_NEXT, name);
    void *f = dlsym(RTLD_DEFAULT, name);
    return f == own ? NULL : f;
}

/* The object of the first definition of malloc in the lookup order when it is not the
 * runtime's, else NULL. Objects are looked up in the order they were loaded, which is the
 * lookup order for those before the runtime (the executable, then what was preloaded or
 * is needed before it). dlsym(RTLD_DEFAULT) cannot tell: when the executable takes
 * malloc's address (python3), it answers the executable's PLT entry, which jumps to
 * whichever definition comes first. */
static const char *heap_first_malloc(void)
{
    Dl_info info;
    struct link_map *self = NULL;
    if (!dladdr1((void *)heap_own_malloc, &info, (void **)&self, RTLD_DL_LINKMAP) || !self)
        return NULL;
    struct link_map *l = self;
    while (l->l_prev)
        l = l->l_prev;
    for (; l && l != self; l = l->l_next) {
        int exe = !l->l_prev;
        /* The vdso (no path): asked, it would fail, and a failed dlsym allocates. */
        if (!exe && (!l->l_name || !strchr(l->l_name, '/'))) continue;
        void *h = exe ? NULL : dlopen(l->l_name, RTLD_LAZY | RTLD_NOLOAD);
        void *f = exe ? dlsym(RTLD_DEFAULT, "malloc") : h ? dlsym(h, "malloc") : NULL;
        /* A definition in l itself: not one of its dependencies', nor l's PLT entry
         * (an undefined symbol whose value is that entry). */
        struct link_map *def = NULL;
        const ElfW(Sym) *sym = NULL;
        int defines = f && dladdr1(f, &info, (void **)&def, RTLD_DL_LINKMAP) && def == l &&
                      dladdr1(f, &info, (void **)&sym, RTLD_DL_SYMENT) && sym &&
                      sym->st_shndx != SHN_UNDEF && info.dli_saddr == f;
        if (h) dlclose(h);
        if (defines) return exe ? "the executable" : l->l_name;
    }
    return NULL;
}

/* Returns 1 once heap_next points at the next allocator, 0 while that is not known
 * (a dlsym that allocates is in progress on this thread, or there is none). */
static int heap_resolve(void)
{
    if (__atomic_load_n(&heap_resolved, __ATOMIC_ACQUIRE)) return 1;
    if (heap_resolving) return 0;
    heap_resolving = 1;
    heap_shadowed = heap_first_malloc();
    struct heap_next n;
    n.malloc = (void *(*)(size_t))heap_sym("malloc", heap_own_malloc);
    n.free = (void (*)(void *))heap_sym("free", heap_own_free);
    n.calloc = (void *(*)(size_t, size_t))heap_sym("calloc", heap_own_calloc);
    n.realloc = (void *(*)(void *, size_t))heap_sym("realloc", heap_own_realloc);
    n.posix_memalign =
        (int (*)(void **, size_t, size_t))heap_sym("posix_memalign", heap_own_posix_memalign);
    n.aligned_alloc = (void *(*)(size_t, size_t))heap_sym("aligned_alloc", heap_own_aligned_alloc);
    n.memalign = (void *(*)(size_t, size_t))heap_sym("memalign", heap_own_memalign);
    n.malloc_usable_size = (size_t(*)(void *))heap_sym("malloc_usable_size", heap_own_usable);
    void *(*va)(size_t) = (void *(*)(size_t))heap_sym("valloc", heap_own_valloc);
    void *(*pva)(size_t) = (void *(*)(size_t))heap_sym("pvalloc", heap_own_pvalloc);
    heap_resolving = 0;
    if (!n.malloc || !n.free || !n.calloc || !n.realloc || n.malloc == heap_own_malloc) return 0;
    /* Optional ones fall back to what every allocator has. */
    if (!n.memalign) n.memalign = boot_memalign;
    if (!n.aligned_alloc) n.aligned_alloc = n.memalign;
    if (!n.posix_memalign) n.posix_memalign = boot_posix_memalign;
    if (!n.malloc_usable_size) n.malloc_usable_size = NULL;
    next_valloc = va;
    next_pvalloc = pva;
    heap_next = n;
    __atomic_store_n(&heap_resolved, 1, __ATOMIC_RELEASE);
    return 1;
}

__attribute__((constructor(101))) static void heap_resolve_early(void)
{
    heap_resolve();
}

/* While nothing is resolved: the region, with a header that says "no session". */
static void *boot_alloc(size_t n, size_t align, int zero)
{
    void *p = heap_region_alloc(n, align < 16 ? 16 : align);
    if (!p) {
        errno = ENOMEM;
        return NULL;
    }
    if (zero) memset(p, 0, n);
    return p;
}

static void *boot_malloc(size_t n)
{
    return heap_resolve() ? heap_next.malloc(n) : boot_alloc(n, 16, 0);
}
static void boot_free(void *p)
{
    if (heap_region_has(p))
        heap_region_release(p);
    else if (heap_resolve())
        heap_next.free(p);
}
static void *boot_calloc(size_t a, size_t b)
{
    size_t n;
    if (__builtin_mul_overflow(a, b, &n)) {
        errno = ENOMEM;
        return NULL;
    }
    return heap_resolve() ? heap_next.calloc(a, b) : boot_alloc(n, 16, 1);
}
static void *boot_realloc(void *p, size_t n)
{
    if (heap_resolve()) return heap_next.realloc(p, n);
    void *q = boot_alloc(n, 16, 0);
    if (q && p && heap_region_has(p)) {
        size_t old = heap_block_of(p)->size;
        memcpy(q, p, old < n ? old : n);
        heap_region_release(p);
    }
    return q;
}
/* Also the fallback of an allocator without posix_memalign: through memalign. */
static int boot_posix_memalign(void **pp, size_t align, size_t n)
{
    if (heap_resolve() && heap_next.posix_memalign != boot_posix_memalign)
        return heap_next.posix_memalign(pp, align, n);
    if (align < sizeof(void *) || (align & (align - 1))) return EINVAL;
    int saved = errno;
    void *p = heap_resolved ? heap_next.memalign(align, n) : boot_alloc(n, align, 0);
    int err = p ? 0 : errno;
    errno = saved;
    if (!p) return err ? err : ENOMEM;
    *pp = p;
    return 0;
}
static void *boot_aligned_alloc(size_t align, size_t n)
{
    return heap_resolve() ? heap_next.aligned_alloc(align, n) : boot_alloc(n, align, 0);
}
/* Also the fallback of an allocator without memalign: posix_memalign's rules. */
static void *boot_memalign(size_t align, size_t n)
{
    if (heap_resolve() && heap_next.memalign != boot_memalign) return heap_next.memalign(align, n);
    if (align < 16) align = 16;
    while (align & (align - 1))
        align += align & -align;
    if (heap_resolved) {
        void *p = NULL;
        int err = heap_next.posix_memalign(&p, align, n);
        if (err) errno = err;
        return p;
    }
    return boot_alloc(n, align, 0);
}
static size_t boot_usable(void *p)
{
    if (heap_region_has(p)) return heap_region_usable(p);
    return heap_resolve() && heap_next.malloc_usable_size ? heap_next.malloc_usable_size(p) : 0;
}

/* ===== the countdown ===== */

void heap_ignore_enter(void)
{
    struct heap_tls *t = &heap_tls;
    if (t->ignore++ == 0) {
        t->saved_left = __atomic_load_n(&t->left, __ATOMIC_RELAXED);
        __atomic_store_n(&t->left, HEAP_LEFT_IDLE, __ATOMIC_RELAXED);
    }
}

void heap_ignore_leave(void)
{
    struct heap_tls *t = &heap_tls;
    if (--t->ignore == 0) __atomic_store_n(&t->left, t->saved_left, __ATOMIC_RELAXED);
}

/* A program's signal handler: `left` is 0 meanwhile, so that every allocation takes
 * the slow path, where heap_handler_alloc serves it. */
void heap_handler_enter(unsigned long frame)
{
    struct heap_tls *t = &heap_tls;
    if (t->in_handler++ == 0) {
        t->handler_frame = frame;
        t->handler_left = __atomic_load_n(&t->left, __ATOMIC_RELAXED);
        __atomic_store_n(&t->left, 0, __ATOMIC_RELAXED);
    }
}

int heap_handler_depth(void)
{
    struct heap_tls *t = &heap_tls;
    if (t->in_handler && (uintptr_t)__builtin_frame_address(0) > t->handler_frame) {
        t->in_handler = 0; /* left by a jump */
        __atomic_store_n(&t->left, t->handler_left, __ATOMIC_RELAXED);
    }
    return t->in_handler;
}

void heap_handler_leave(void)
{
    struct heap_tls *t = &heap_tls;
    if (t->in_handler > 0 && --t->in_handler == 0)
        __atomic_store_n(&t->left, t->handler_left, __ATOMIC_RELAXED);
}

/* An allocation inside a program's signal handler: a block of the region (header
 * "no session", so free and realloc know it), or NULL for the next allocator when
 * this thread holds a lock of the profiler (it was interrupted inside the profiler,
 * hence not inside the next allocator) or the handler was left by a jump (this frame
 * lies above the trampoline's: the handler's own frames are all below it). */
static void *heap_handler_alloc(size_t n, size_t align)
{
    struct heap_tls *t = &heap_tls;
    if ((uintptr_t)__builtin_frame_address(0) > t->handler_frame) {
        t->in_handler = 0;
        __atomic_store_n(&t->left, t->handler_left, __ATOMIC_RELAXED);
        return NULL;
    }
    if (t->locks) return NULL;
    return heap_region_alloc(n ? n : 1, align < 16 ? 16 : align);
}

/* xorshift64, seeded per thread from its state's address and the clock. */
static uint64_t heap_random(struct heap_tls *t)
{
    if (!t->rng) {
        uint64_t s = (uint64_t)(uintptr_t)t * 0x9e3779b97f4a7c15ull;
        s ^= arch_cycles();
        t->rng = s ? s : 1;
    }
    uint64_t x = t->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    t->rng = x;
    return x;
}

/* ln(u) for u in (0, 1], without libm: u = m * 2^e with m in [1/sqrt2, sqrt2), and
 * ln m = 2 atanh(s), s = (m-1)/(m+1), |s| < 0.172, as a series in s^2 (seven terms:
 * error below 1e-12, far below what a sampling distance needs). */
static double heap_ln(double u)
{
    union {
        double d;
        uint64_t b;
    } v = {.d = u};
    int e = (int)((v.b >> 52) & 0x7ff) - 1023;
    v.b = (v.b & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
    if (v.d > 1.4142135623730951) {
        v.d *= 0.5;
        e++;
    }
    double s = (v.d - 1) / (v.d + 1), s2 = s * s;
    double series =
        1 +
        s2 * (1. / 3 + s2 * (1. / 5 + s2 * (1. / 7 + s2 * (1. / 9 + s2 * (1. / 11 + s2 / 13)))));
    return 2 * s * series + e * 0.69314718055994530942;
}

/* The bytes to the next sample: exponential with mean `heap_interval`, capped at
 * heap_certain (4.6 times it), so that a block that long or longer always finds the
 * countdown at most its size, and one draw cannot make a thread blind for long. */
static int64_t heap_draw(struct heap_tls *t)
{
    int64_t mean = __atomic_load_n(&heap_interval, __ATOMIC_RELAXED);
    double u = (double)((heap_random(t) >> 11) + 1) * 0x1p-53; /* (0, 1] */
    double d = -heap_ln(u) * (double)mean, cap = (double)mean * HEAP_CERTAIN_X10 / 10;
    if (d > cap) d = cap;
    return d < 1 ? 1 : (int64_t)d;
}

/* The draws one allocation may use up: an allocation below heap_certain needs about
 * 5.6 on average, so this bound is never met in practice; it keeps every allocation's
 * cost independent of its size whatever the draws are. */
#define HEAP_DRAWS_MAX 64

/* The slow path: the countdown of this thread reached 0 (or was reset). Returns the
 * weight of a sample to take on this allocation of n bytes, or 0. Its cost does not
 * depend on n. */
static int64_t heap_slow(size_t n)
{
    struct heap_tls *t = &heap_tls;
    if (__builtin_expect(heap_probe_owner == t, 0)) { /* heap_new.c asks: reached */
        heap_probe_hit = 1;
        return 0;
    }
    if (t->ignore) { /* a reset arrived while ignoring: honour it at the leave */
        t->saved_left = 0;
        __atomic_store_n(&t->left, HEAP_LEFT_IDLE, __ATOMIC_RELAXED);
        return 0;
    }
    if (t->exited || heap_resolving) {
        __atomic_store_n(&t->left, HEAP_LEFT_IDLE, __ATOMIC_RELAXED);
        return 0;
    }
    if (t->locks) {
        /* A signal handler allocates while this thread is inside the profiler, holding
         * one of its locks: no sample now (it would wait for that lock forever); the
         * next allocation takes the point. */
        __atomic_store_n(&t->left, 0, __ATOMIC_RELAXED);
        return 0;
    }
    if (t->slot == -1) heap_thread_register(t);
    if (!__atomic_load_n(&heap_active, __ATOMIC_ACQUIRE)) {
        /* A thread that could not be registered is not reached by a start: it
         * looks again every smallest interval's worth of bytes. */
        int64_t idle = t->slot >= 0 ? HEAP_LEFT_IDLE : HEAP_INTERVAL_MIN;
        __atomic_store_n(&t->left, idle, __ATOMIC_RELAXED);
        return 0;
    }
    uint32_t gen = __atomic_load_n(&heap_gen, __ATOMIC_ACQUIRE);
    /* The countdown as it was before this allocation (the fast path took n off it). */
    uint64_t prior = (uint64_t)__atomic_load_n(&t->left, __ATOMIC_RELAXED) + n;
    if (t->gen != gen) { /* a new session: this thread's stream starts here */
        t->gen = gen;
        /* The first point's gap reaches back past the start by one more draw, as it
         * would in a stream sampled forever (memoryless both ways): without it the
         * bytes early in a session, or in a thread, would read low by one interval's
         * worth in all, and a thread that allocates less than an interval would read
         * a fraction of its bytes. */
        prior = (uint64_t)heap_draw(t);
        t->drawn = (int64_t)prior + heap_draw(t);
    }
    if (n >= (uint64_t)__atomic_load_n(&heap_certain, __ATOMIC_RELAXED)) {
        /* Sampled for sure, at its size, outside the count: the countdown goes on as
         * if the block had not been asked for, so the points of the smaller blocks
         * stay a Poisson process of their own and both estimates stay unbiased. A
         * request beyond PTRDIFF_MAX no allocator serves: nothing to count. */
        __atomic_store_n(&t->left, (int64_t)prior, __ATOMIC_RELAXED);
        return n <= PTRDIFF_MAX ? (int64_t)n : 0;
    }
    int64_t left = (int64_t)prior - (int64_t)n;
    if (left > 0) {
        __atomic_store_n(&t->left, left, __ATOMIC_RELAXED);
        return 0;
    }
    /* Sample points fall on the thread's byte stream as a Poisson process, and each
     * one weighs the bytes since the point before it: the draw that just ran out. An
     * allocation may hold several points (it weighs all their gaps), and the next
     * countdown runs from the last of them, inside this allocation, not from its end:
     * so each allocation of s bytes reads s on average, and the weights add up to
     * every byte before the last point. */
    int64_t weight = 0;
    int draws = 0;
    do {
        weight += t->drawn;
        t->drawn = heap_draw(t);
        left += t->drawn;
    } while (left <= 0 && ++draws < HEAP_DRAWS_MAX);
    if (left <= 0) left = t->drawn;
    __atomic_store_n(&t->left, left, __ATOMIC_RELAXED);
    return weight;
}

/* A sampled block of n bytes, or NULL to allocate it the normal way. Kept out of
 * line: inlined, it would make every interposed function set up a frame and save
 * registers before its fast path. */
__attribute__((noinline, cold)) void *heap_try_sample(size_t n, size_t align, int zero, uintptr_t fp)
{
    if (heap_tls.in_handler) {
        void *p = heap_handler_alloc(n, align);
        if (p && zero) memset(p, 0, n);
        if (heap_tls.in_handler) { /* still inside: the next one comes here too */
            __atomic_store_n(&heap_tls.left, 0, __ATOMIC_RELAXED);
            return p;
        }
    }
    if (!n) return NULL;
    int64_t w = heap_slow(n);
    return w ? heap_sample(&heap_tls, n, align, zero, fp, w) : NULL;
}

/* The slow path of an allocation that cannot be sampled: the countdown moves on. */
__attribute__((noinline, cold)) static void *heap_skip(size_t n)
{
    int64_t w = heap_slow(n);
    (void)w;
    return NULL;
}

/* ===== the interposed functions ===== */

static inline void *heap_malloc_at(size_t n, uintptr_t fp)
{
    if (heap_count(n)) {
        void *p = heap_try_sample(n, 16, 0, fp);
        if (p) return p;
    }
    return heap_next.malloc(n);
}

KESTREL_INTERPOSE void *malloc(size_t n)
{
    return heap_malloc_at(n, FRAME());
}

KESTREL_INTERPOSE void free(void *p)
{
    if (heap_region_has(p))
        heap_sampled_free(p);
    else
        heap_next.free(p);
}

/* ENOMEM and NULL, out of line so that the fast paths around it need no frame. */
__attribute__((noinline, cold)) static void *heap_enomem(void)
{
    errno = ENOMEM;
    return NULL;
}

/* calloc's slow path, out of line so that its fast path keeps a and b in place. */
__attribute__((noinline, cold)) static void *heap_calloc_slow(size_t a, size_t b, size_t n,
                                                              uintptr_t fp)
{
    void *p = heap_try_sample(n, 16, 1, fp);
    return p ? p : heap_next.calloc(a, b);
}

KESTREL_INTERPOSE void *calloc(size_t a, size_t b)
{
    size_t n;
    if (__builtin_mul_overflow(a, b, &n)) return heap_enomem();
    if (heap_count(n)) return heap_calloc_slow(a, b, n, FRAME());
    return heap_next.calloc(a, b);
}

/* What the next allocator does with realloc(p, 0): 1 when it frees p and returns
 * NULL (glibc), 0 when it returns a new minimal block (jemalloc's default). Asked
 * once, the first time a sampled block is reallocated to 0 bytes. */
static int heap_realloc_zero_frees(void)
{
    static int answer = -1;
    if (answer < 0) {
        heap_ignore_enter();
        void *q = heap_next.malloc(1), *r = q ? heap_next.realloc(q, 0) : NULL;
        if (r) heap_next.free(r);
        answer = q && !r;
        heap_ignore_leave();
    }
    return answer;
}

static void *heap_realloc_region(void *p, size_t n, uintptr_t fp)
{
    if (n == 0 && heap_realloc_zero_frees()) {
        free(p);
        return NULL;
    }
    if (heap_resize_certain(p, n, fp)) return p;
    void *q = heap_malloc_at(n, fp);
    if (!q) return NULL; /* errno is the next allocator's; p is untouched */
    size_t old = heap_block_of(p)->size;
    memcpy(q, p, old < n ? old : n);
    free(p);
    return q;
}

static inline void *heap_realloc_at(void *p, size_t n, uintptr_t fp)
{
    if (!p) return heap_malloc_at(n, fp);
    if (heap_region_has(p)) return heap_realloc_region(p, n, fp);
    /* The block moves into the region when this realloc is the sample; the old
     * size is only known through malloc_usable_size. */
    if (heap_count(n)) {
        void *q = heap_next.malloc_usable_size ? heap_try_sample(n, 16, 0, fp) : heap_skip(n);
        if (q) {
            size_t old = heap_next.malloc_usable_size(p);
            memcpy(q, p, old < n ? old : n);
            heap_next.free(p);
            return q;
        }
    }
    return heap_next.realloc(p, n);
}

KESTREL_INTERPOSE void *realloc(void *p, size_t n)
{
    return heap_realloc_at(p, n, FRAME());
}

KESTREL_INTERPOSE void *reallocarray(void *p, size_t a, size_t b)
{
    size_t n;
    if (__builtin_mul_overflow(a, b, &n)) return heap_enomem();
    return heap_realloc_at(p, n, FRAME());
}

static inline int heap_pow2(size_t a)
{
    return a && !(a & (a - 1));
}

KESTREL_INTERPOSE int posix_memalign(void **pp, size_t align, size_t n)
{
    if (heap_pow2(align) && align >= sizeof(void *) && heap_count(n)) {
        void *p = heap_try_sample(n, align, 0, FRAME());
        if (p) {
            *pp = p;
            return 0;
        }
    }
    return heap_next.posix_memalign(pp, align, n);
}

/* Alignments that are not a power of two go to the next allocator untouched, so
 * they are accepted or refused exactly as it would. */
KESTREL_INTERPOSE void *aligned_alloc(size_t align, size_t n)
{
    if (heap_pow2(align) && heap_count(n)) {
        void *p = heap_try_sample(n, align, 0, FRAME());
        if (p) return p;
    }
    return heap_next.aligned_alloc(align, n);
}

KESTREL_INTERPOSE void *memalign(size_t align, size_t n)
{
    if (heap_pow2(align) && heap_count(n)) {
        void *p = heap_try_sample(n, align, 0, FRAME());
        if (p) return p;
    }
    return heap_next.memalign(align, n);
}

KESTREL_INTERPOSE void *valloc(size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (heap_count(n)) {
        void *p = heap_try_sample(n, page, 0, FRAME());
        if (p) return p;
    }
    return next_valloc ? next_valloc(n) : heap_next.memalign(page, n);
}

KESTREL_INTERPOSE void *pvalloc(size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t rounded = n ? (n + page - 1) & ~(page - 1) : page;
    if (rounded < n) { /* overflow */
        errno = ENOMEM;
        return NULL;
    }
    if (heap_count(rounded)) {
        void *p = heap_try_sample(rounded, page, 0, FRAME());
        if (p) return p;
    }
    return next_pvalloc ? next_pvalloc(n) : heap_next.memalign(page, rounded);
}

KESTREL_INTERPOSE size_t malloc_usable_size(void *p)
{
    if (heap_region_has(p)) return heap_region_usable(p);
    if (!p || !heap_next.malloc_usable_size) return 0;
    return heap_next.malloc_usable_size(p);
}
