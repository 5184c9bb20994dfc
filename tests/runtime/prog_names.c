/* Strings that are not UTF-8, as programs make them: names its main thread with the
 * bytes of argv[2] given in hex (prctl keeps 15 of them), dlopens the library argv[1]
 * (whose directory may have any bytes in its name) and spends 300 ms of CPU in its
 * function names_burn, after its function names_alloc kept 4 MiB. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    char name[16] = "";
    for (size_t i = 0; i < 15 && argv[2][2 * i] && argv[2][2 * i + 1]; i++) {
        char hex[3] = {argv[2][2 * i], argv[2][2 * i + 1], 0};
        name[i] = (char)strtoul(hex, NULL, 16);
    }
    prctl(PR_SET_NAME, name);
    void *lib = dlopen(argv[1], RTLD_NOW);
    void (*burn)(unsigned) = lib ? (void (*)(unsigned))dlsym(lib, "names_burn") : NULL;
    void (*alloc)(void) = lib ? (void (*)(void))dlsym(lib, "names_alloc") : NULL;
    if (!burn || !alloc) {
        fprintf(stderr, "prog_names: %s\n", dlerror());
        return 1;
    }
    alloc();
    burn(300000);
    return 0;
}
