/* interpose — how the runtime replaces a libc function: it defines the function with
 * default visibility (the library is built with -fvisibility=hidden) and reaches the
 * real one through dlsym(RTLD_NEXT), resolved once. Works for the preloaded
 * libkestrel.so and for libkestrel.a linked into a dynamic executable.
 * Signal handlers: REAL() may run in one only after the pointer was resolved once. */
#ifndef KESTREL_INTERPOSE_H
#define KESTREL_INTERPOSE_H
#include <dlfcn.h>

#define KESTREL_INTERPOSE __attribute__((visibility("default")))

/* REAL(name) is the next definition of `name` (libc's), typed like the declaration. */
#define REAL(name)                                                                                 \
    ({                                                                                             \
        static __typeof__(&name) real_##name;                                                      \
        if (!real_##name) real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name);                \
        real_##name;                                                                               \
    })
#endif
