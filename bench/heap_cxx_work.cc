// The C++ allocation loop of bench/heap_cxx_bench.sh: N new/delete pairs of 16..2048 B
// through a ring of 4,096 live blocks (every eighth one an aligned new of 64), built
// against glibc's malloc, tcmalloc and jemalloc (bench/heap.mk). Prints a checksum.
#include <cstdio>
#include <cstdlib>
#include <new>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    static void *ring[4096];
    static size_t size[4096];
    unsigned rng = 1;
    unsigned long sum = 0;
    for (long i = 0; i < n; i++) {
        unsigned k = (unsigned)i & 4095;
        if (ring[k]) {
            if (k & 7)
                operator delete(ring[k], size[k]);
            else
                operator delete(ring[k], size[k], std::align_val_t{64});
        }
        rng = rng * 1103515245u + 12345u;
        size_t s = 16 + (rng >> 8) % 2033;
        ring[k] = k & 7 ? operator new(s) : operator new(s, std::align_val_t{64});
        size[k] = s;
        static_cast<char *>(ring[k])[0] = (char)i;
        sum += s;
    }
    std::printf("%lu\n", sum);
    return 0;
}
