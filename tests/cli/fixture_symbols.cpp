// A program that records addresses of its own code as a raw CPU profile (FORMATS.md
// §1), with the source lines each must symbolize to, so the symbolizer's rules can be
// checked without the runtime: a return address inside an inlined call, a C++
// method, a function's entry as a leaf. Usage: fixture_symbols OUT.json
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <elf.h>
#include <link.h>
#include <climits>
#include <unistd.h>

static void *ra[2];

extern "C" __attribute__((noinline)) void grab(int slot)
{
    ra[slot] = __builtin_return_address(0);
    __asm__ volatile("" ::: "memory");
}

// Each line_* constant is the line of the call just above it.
static inline __attribute__((always_inline)) void inl_helper()
{
    grab(0);
    __asm__ volatile("" ::: "memory");
}
static const int line_inl = __LINE__ - 3;

__attribute__((noinline)) void outer_c()
{
    inl_helper();
    __asm__ volatile("" ::: "memory");
}
static const int line_outer = __LINE__ - 3;

namespace ns {
struct K {
    __attribute__((noinline)) int method(int x)
    {
        grab(1);
        __asm__ volatile("" ::: "memory");
        return x + VARIANT;
    }
};
} // namespace ns
static const int line_method = __LINE__ - 6;

extern "C" __attribute__((noinline)) int leaf_fn(int x)
{
    return x * 3 + VARIANT;
}

struct self_image {
    uintptr_t slide, base, text, text_size;
    char build_id[80];
};

static int find_self(struct dl_phdr_info *info, size_t, void *data)
{
    auto *im = static_cast<self_image *>(data);
    if (info->dlpi_name[0]) return 0; // the main program has an empty name
    im->slide = info->dlpi_addr;
    im->base = UINTPTR_MAX;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && info->dlpi_addr + ph->p_vaddr < im->base)
            im->base = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            im->text = info->dlpi_addr + ph->p_vaddr;
            im->text_size = ph->p_memsz;
        }
        if (ph->p_type != PT_NOTE) continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            auto *nh = (const ElfW(Nhdr) *)p;
            const char *desc = p + sizeof *nh + ((nh->n_namesz + 3) & ~3u);
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(p + sizeof *nh, "GNU", 4))
                for (unsigned k = 0; k < nh->n_descsz && k < 32; k++)
                    snprintf(im->build_id + 2 * k, 3, "%02x", (unsigned char)desc[k]);
            p = desc + ((nh->n_descsz + 3) & ~3u);
        }
    }
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    outer_c();
    ns::K k;
    volatile int r = k.method(2);
    (void)r;
    self_image im = {};
    dl_iterate_phdr(find_self, &im);
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 1;
    exe[n] = 0;
    FILE *f = fopen(argv[1], "w");
    if (!f) return 1;
    uintptr_t leaf = (uintptr_t)&leaf_fn;
    fprintf(f,
            "{\"version\":1,\"pid\":%d,\"exe\":\"%s\",\"rate_hz\":997,\"platform\":\"linux-x86_64\","
            "\"start_unix_ns\":1,\"end_unix_ns\":2,"
            "\"images\":[{\"path\":\"%s\",\"base\":%lu,\"slide\":%lu,\"text\":%lu,\"text_size\":%lu,"
            "\"arch\":\"x86_64\",\"build_id\":\"%s\"}],"
            "\"threads\":[{\"fiber\":0,\"label\":\"main\"}],"
            "\"stacks\":[[%lu,%lu],[%lu,%lu]],"
            "\"samples\":[[1,0,0,0],[2,0,1,0]],\"dropped\":0,"
            "\"expect\":{\"inl\":%d,\"outer\":%d,\"method\":%d}}\n",
            (int)getpid(), exe, exe, (unsigned long)im.base, (unsigned long)im.slide,
            (unsigned long)im.text, (unsigned long)im.text_size, im.build_id, (unsigned long)leaf,
            (unsigned long)(uintptr_t)ra[0], (unsigned long)leaf, (unsigned long)(uintptr_t)ra[1],
            line_inl, line_outer, line_method);
    return fclose(f) ? 1 : 0;
}
