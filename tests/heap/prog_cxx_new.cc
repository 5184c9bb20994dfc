// Every form of C++ operator new, each from a function of its own, each deleted by a
// matching form of operator delete (plain, sized, aligned, sized aligned, nothrow):
// built three times, against glibc's malloc, tcmalloc and jemalloc (tests/heap/rules.mk),
// and profiled through KESTREL_HEAP by tests/heap/test_heap_cxx_new.sh. Each site asks
// for MiB mebibytes in blocks of 1..8 KiB (a fixed sequence), freed at once, except
// keep_aligned, whose blocks (std::align_val_t 4096) stay allocated to the end. Prints
// "<site> <bytes> <rounded>" for each site: the bytes it asked for, and the same with
// each block rounded up to a multiple of its alignment (what libstdc++'s aligned
// operator new asks of aligned_alloc).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

static const size_t MiB = 1 << 20;
static size_t total = 64 * MiB;
static unsigned rng = 12345;
static void *volatile sink;
static size_t rounded; // the bytes of the last site, each block rounded to its alignment

static size_t next_size()
{
    rng = rng * 1103515245u + 12345u;
    return 1024 + (rng >> 8) % 7168;
}

static size_t round_up(size_t n, size_t align)
{
    return (n + align - 1) & ~(align - 1);
}

#define SITE(name, align, alloc, release)                                                          \
    __attribute__((noinline)) static size_t name()                                                 \
    {                                                                                              \
        size_t done = 0;                                                                           \
        rounded = 0;                                                                               \
        while (done < total) {                                                                     \
            size_t n = next_size();                                                                \
            void *p = alloc;                                                                       \
            sink = p;                                                                              \
            release;                                                                               \
            done += n;                                                                             \
            rounded += round_up(n, align);                                                         \
        }                                                                                          \
        return done;                                                                               \
    }

static const std::align_val_t A64{64};
SITE(site_new, 1, operator new(n), operator delete(p))
SITE(site_new_array, 1, operator new[](n), operator delete[](p, n))
SITE(site_new_nothrow, 1, operator new(n, std::nothrow), operator delete(p, std::nothrow))
SITE(site_new_array_nothrow, 1, operator new[](n, std::nothrow), operator delete[](p))
SITE(site_new_aligned, 64, operator new(n, A64), operator delete(p, n, A64))
SITE(site_new_array_aligned, 64, operator new[](n, A64), operator delete[](p, A64))
SITE(site_new_aligned_nothrow, 64, operator new(n, A64, std::nothrow),
     operator delete(p, A64, std::nothrow))
SITE(site_new_array_aligned_nothrow, 64, operator new[](n, A64, std::nothrow),
     operator delete[](p, n, A64))

static void *kept[1 << 16];
__attribute__((noinline)) static size_t keep_aligned()
{
    size_t done = 0;
    rounded = 0;
    for (unsigned i = 0; done < total && i < sizeof kept / sizeof kept[0]; i++) {
        size_t n = next_size();
        kept[i] = operator new(n, std::align_val_t{4096});
        done += n;
        rounded += round_up(n, 4096);
    }
    return done;
}

#define REPORT(site)                                                                               \
    do {                                                                                           \
        size_t asked = site();                                                                     \
        std::printf(#site " %zu %zu\n", asked, rounded);                                          \
    } while (0)

// With "oom": what each form does with a request no allocator serves, as the standard says:
// the new_handler is called, then bad_alloc is thrown, or nullptr for nothrow.
static int handler_calls;
static void handler()
{
    handler_calls++;
    std::set_new_handler(nullptr);
}

static int oom()
{
    const size_t huge = (size_t)1 << 62;
    std::set_new_handler(handler);
    try {
        sink = operator new(huge);
        std::printf("new: no exception\n");
    } catch (const std::bad_alloc &) {
        std::printf("new: bad_alloc after %d new_handler call\n", handler_calls);
    }
    try {
        sink = operator new[](huge, std::align_val_t{64});
        std::printf("aligned new[]: no exception\n");
    } catch (const std::bad_alloc &) {
        std::printf("aligned new[]: bad_alloc\n");
    }
    std::printf("nothrow new: %s\n", operator new(huge, std::nothrow) ? "a block" : "null");
    std::printf("aligned nothrow new[]: %s\n",
                operator new[](huge, std::align_val_t{64}, std::nothrow) ? "a block" : "null");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !std::strcmp(argv[1], "oom")) return oom();
    if (argc > 1) total = (size_t)atol(argv[1]) * MiB;
    REPORT(site_new);
    REPORT(site_new_array);
    REPORT(site_new_nothrow);
    REPORT(site_new_array_nothrow);
    REPORT(site_new_aligned);
    REPORT(site_new_array_aligned);
    REPORT(site_new_aligned_nothrow);
    REPORT(site_new_array_aligned_nothrow);
    REPORT(keep_aligned);
    return 0;
}
