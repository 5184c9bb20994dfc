// Two fibers of boost.context (Debian's libboost-context-dev), neither registered with
// kestrel: fiber A on a protected_fixedsize_stack (mmap'd, with a guard page), fiber B
// on a fixedsize_stack (malloc'd). Each computes in a call chain of its own and
// resumes main. Built with frame pointers. Runs about argv[1] seconds (default 1.5);
// with argv[2] "sleep", fiber B also sleeps 2 ms (boost_b_wait) at each turn.
#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <time.h>

namespace ctx = boost::context;
static volatile uint64_t sink;
static int b_sleeps;

__attribute__((noinline)) static void boost_b_wait()
{
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, nullptr);
    __asm__ volatile("" ::: "memory"); // not a tail call: the frame stays
}

#define CHAIN(x, K)                                                                                \
    __attribute__((noinline)) static uint64_t x##_leaf(uint64_t n)                                 \
    {                                                                                              \
        uint64_t h = n;                                                                            \
        for (uint64_t i = 0; i < 200000; i++)                                                      \
            h = h * K + i;                                                                         \
        return h;                                                                                  \
    }                                                                                              \
    __attribute__((noinline)) static uint64_t x##_mid(uint64_t n) { return x##_leaf(n) ^ (K >> 9); }

CHAIN(boost_a, 6364136223846793005ull)
CHAIN(boost_b, 2862933555777941757ull)

__attribute__((noinline)) static ctx::fiber boost_a_main(ctx::fiber &&back)
{
    for (uint64_t k = 0;; k++) {
        sink += boost_a_mid(k);
        back = std::move(back).resume();
    }
    return std::move(back);
}

__attribute__((noinline)) static ctx::fiber boost_b_main(ctx::fiber &&back)
{
    for (uint64_t k = 0;; k++) {
        sink += boost_b_mid(k);
        if (b_sleeps) boost_b_wait();
        back = std::move(back).resume();
    }
    return std::move(back);
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 1.5;
    b_sleeps = argc > 2 && !strcmp(argv[2], "sleep");
    ctx::fiber a{std::allocator_arg, ctx::protected_fixedsize_stack(256 * 1024), boost_a_main};
    ctx::fiber b{std::allocator_arg, ctx::fixedsize_stack(256 * 1024), boost_b_main};
    auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
        a = std::move(a).resume();
        b = std::move(b).resume();
    }
    printf("%llu\n", (unsigned long long)sink);
    std::_Exit(0); // the fibers never finish: their stacks are not unwound
}
