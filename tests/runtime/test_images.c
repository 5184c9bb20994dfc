/* The image table: the executable (with the build id readelf reports), the dynamic
 * loader, text spans that contain the code they claim, and an image loaded and
 * unloaded with dlopen/dlclose still listed, marked unloaded. */
#include "check.h"
#include "runtime/arch/arch.h"
#include "runtime/images.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const struct image *find_path(const char *needle)
{
    for (size_t i = 0; i < images_count(); i++)
        if (strstr(images_get(i)->path, needle)) return images_get(i);
    return NULL;
}

int main(void)
{
    int n = images_refresh();
    CHECKF(n >= 3, "%d images", n);

    char exe[1024] = {0};
    CHECK(readlink("/proc/self/exe", exe, sizeof(exe) - 1) > 0);
    const struct image *me = images_find_text((uint64_t)(uintptr_t)&main);
    CHECK(me != NULL);
    if (me) {
        CHECKF(strcmp(me->path, exe) == 0, "%s vs %s", me->path, exe);
        CHECKF(strcmp(me->arch, ARCH_NAME) == 0, "arch %s", me->arch); /* the build's */
        CHECK(me->base <= me->text && (uint64_t)(uintptr_t)&main - me->text < me->text_size);
        char hex[2 * IMAGE_BUILD_ID_MAX + 1];
        images_build_id_hex(me, hex, sizeof(hex));
        char cmd[1200], line[512], want[200] = "";
        snprintf(cmd, sizeof(cmd), "readelf -n '%s'", exe);
        FILE *p = popen(cmd, "r");
        while (p && fgets(line, sizeof(line), p))
            if (sscanf(line, " Build ID: %199s", want) == 1) break;
        if (p) pclose(p);
        CHECKF(want[0] && strcmp(hex, want) == 0, "build id %s, readelf says %s", hex, want);
    }

    /* libc: its text contains printf; the loader is listed. */
    const struct image *libc = images_find_text((uint64_t)(uintptr_t)&printf);
    CHECK(libc && strstr(libc->path, "libc.so"));
    CHECK(libc && libc->build_id_len == 20);
    CHECK(find_path("ld-linux") != NULL);

    /* An image loaded then unloaded stays known: zlib, or where there is none (an
     * arm64 sysroot) glibc's libresolv. */
    const char *lib = "libz.so", *file = "libz.so.1";
    void *h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!h) h = dlopen(file = "libresolv.so.2", RTLD_NOW | RTLD_LOCAL), lib = "libresolv.so";
    CHECKF(h != NULL, "dlopen %s", file);
    images_refresh();
    const struct image *z = find_path(lib);
    CHECK(z && !z->unloaded && z->text_size > 0);
    if (h) dlclose(h);
    images_refresh();
    z = find_path(lib);
    CHECK(z && z->unloaded);
    return check_exit();
}
