/* The profile model: interning, the image rules, the invariant check, and atomic
 * output (a failed writer leaves no file behind). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include "analysis/model/profile.h"
#include "analysis/writers/writers.h"
#include "check.h"

static void test_interning(void)
{
    struct profile *p = profile_new(PROFILE_CPU);
    CHECK(profile_add_sample_type(p, "samples", "count") == 0);
    struct profile_frame a = {.name = "main", .file = "a.c", .line = 3, .image = -1};
    struct profile_frame b = a;
    b.line = 4;
    int64_t fa = profile_intern_frame(p, &a), fb = profile_intern_frame(p, &b);
    CHECK(fa == 0 && fb == 1);
    CHECK(profile_intern_frame(p, &a) == fa);
    b.inlined = 1;
    CHECK(profile_intern_frame(p, &b) == 2);
    /* Many frames force the hash table to grow; every one must still be found. */
    for (uint64_t i = 0; i < 5000; i++)
        CHECK(profile_intern_address(p, 0x1000 + i) == (int64_t)(3 + i));
    for (uint64_t i = 0; i < 5000; i += 997)
        CHECK(profile_intern_address(p, 0x1000 + i) == (int64_t)(3 + i));
    CHECK(!strcmp(p->frames[3].name, "0x1000") && p->frames[3].symbolized == 0);
    uint32_t s1[] = {1, 0}, s2[] = {0, 1}, s3[] = {1};
    CHECK(profile_intern_stack(p, s1, 2) == 0);
    CHECK(profile_intern_stack(p, s2, 2) == 1);
    CHECK(profile_intern_stack(p, s3, 1) == 2);
    CHECK(profile_intern_stack(p, s1, 2) == 0);
    CHECK(profile_add_thread(p, "main", 0, 77, NULL) == 0);
    int64_t v = 1;
    for (int i = 0; i < 100; i++)
        CHECK(profile_add_sample(p, 0, i % 3, i & 1, i, &v) == 0);
    CHECK(p->n_samples == 100 && profile_values(p, 99)[0] == 1 && p->samples[98].stack == 2);
    /* Sample types are fixed once samples exist. */
    CHECK(profile_add_sample_type(p, "cpu", "nanoseconds") == -1);
    char why[128];
    CHECK(profile_check(p, why, sizeof why) == 0);
    p->samples[5].stack = 3;
    CHECK(profile_check(p, why, sizeof why) == -1 && strstr(why, "stack out of range"));
    p->samples[5].stack = 0;
    p->stacks[1].frames[1] = 99999;
    CHECK(profile_check(p, why, sizeof why) == -1 && strstr(why, "frame"));
    p->stacks[1].frames[1] = 0;
    CHECK(profile_check(p, why, sizeof why) == 0);
    /* Values whose magnitudes add up past 64 bits: a sum of some of them could
     * overflow in any writer. */
    profile_values(p, 0)[0] = INT64_MAX - 50;
    CHECK(profile_check(p, why, sizeof why) == -1 && strstr(why, "64 bits"));
    profile_values(p, 0)[0] = INT64_MAX - 99;
    CHECK(profile_check(p, why, sizeof why) == 0); /* 99 other samples of 1: fits */
    profile_values(p, 0)[0] = INT64_MIN;
    CHECK(profile_check(p, why, sizeof why) == -1);
    profile_free(p);
}

static void test_images(void)
{
    struct profile *p = profile_new(PROFILE_CPU);
    /* exe: ranged; lib: ranged above it; vdso-like image without a range. */
    struct profile_image exe = {
        .path = "/bin/x", .base = 0x400000, .text = 0x401000, .text_size = 0x1000};
    struct profile_image lib = {
        .path = "/lib/y.so", .base = 0x7f0000, .text = 0x7f1000, .text_size = 0x800};
    struct profile_image raw = {.path = "[z]", .base = 0x900000};
    profile_add_image(p, &exe);
    profile_add_image(p, &lib);
    profile_add_image(p, &raw);
    CHECK(profile_image_of(p, 0x401000) == 0);
    CHECK(profile_image_of(p, 0x401fff) == 0);
    /* Past the exe's text but above its base: a ranged image never claims it. */
    CHECK(profile_image_of(p, 0x402000) == -1);
    CHECK(profile_image_of(p, 0x7f1400) == 1);
    CHECK(profile_image_of(p, 0x7f0010) == -1); /* lib's headers, not its text */
    CHECK(profile_image_of(p, 0x900010) == 2);  /* base fallback for the unranged one */
    CHECK(profile_image_of(p, 0x3fffff) == -1);
    profile_free(p);
}

/* The rule of profile_image_of as a plain scan: the first image in order whose range
 * holds addr; else, of the images without a range, the greatest base at or below it
 * (the first of equal ones). */
static int image_of_by_scan(const struct profile *p, uint64_t addr)
{
    for (size_t i = 0; i < p->n_images; i++) {
        const struct profile_image *im = &p->images[i];
        if (im->text_size && addr >= im->text && addr - im->text < im->text_size) return (int)i;
    }
    int best = -1;
    for (size_t i = 0; i < p->n_images; i++) {
        const struct profile_image *im = &p->images[i];
        if (!im->text_size && im->base <= addr && (best < 0 || im->base > p->images[best].base))
            best = (int)i;
    }
    return best;
}

/* profile_image_of answers from an index: the same answers as the scan, for images
 * apart, overlapping, unranged with equal bases, and images added after a lookup. */
static void test_image_index(void)
{
    uint64_t seed = 42;
    for (int round = 0; round < 40; round++) {
        struct profile *p = profile_new(PROFILE_CPU);
        int overlapping = round % 2, mismatches = 0;
        for (int batch = 0; batch < 3; batch++) {
            for (int i = 0; i < 50; i++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                uint64_t r = seed >> 20;
                struct profile_image im = {.path = "x"};
                if (r % 4 == 0) {
                    im.base = (r >> 8) % 64 * 0x1000; /* unranged, bases often equal */
                } else if (overlapping) {
                    im.text = (r >> 8) % 256 * 0x100;
                    im.text_size = 0x100 + (r >> 16) % 0x800;
                } else {
                    im.text = ((uint64_t)(batch * 50 + i) * 0x1000) + 0x100000;
                    im.text_size = 0x100 + (r >> 16) % 0xe00;
                }
                CHECK(profile_add_image(p, &im) >= 0);
            }
            for (uint64_t a = 0; a < 0x200000; a += 0x101)
                mismatches += profile_image_of(p, a) != image_of_by_scan(p, a);
        }
        CHECKF(mismatches == 0, "round %d: %d addresses differ from the scan", round, mismatches);
        profile_free(p);
    }
}

static int ok_writer(const struct profile *p, const struct summary *s, FILE *out)
{
    (void)p, (void)s;
    return fputs("complete\n", out) < 0 ? -EIO : 0;
}

static int bad_writer(const struct profile *p, const struct summary *s, FILE *out)
{
    (void)p, (void)s;
    fputs("half of it", out);
    return -EINVAL;
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.' || strlen(e->d_name) > 2) n++;
    if (d) closedir(d);
    return n;
}

static void test_atomic(void)
{
    char dir[] = "/tmp/kestrel-atomic-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    struct writer good = {"t", ".t", ok_writer, 0}, bad = {"t", ".t", bad_writer, 0};
    CHECK(writer_write_file(&good, NULL, NULL, path) == 0);
    FILE *f = fopen(path, "r");
    char buf[64] = "";
    CHECK(f && fgets(buf, sizeof buf, f) && !strcmp(buf, "complete\n"));
    if (f) fclose(f);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0044) == 0044);
    /* A failing writer leaves the previous output intact and no temporary file. */
    CHECK(writer_write_file(&bad, NULL, NULL, path) == -EINVAL);
    f = fopen(path, "r");
    CHECK(f && fgets(buf, sizeof buf, f) && !strcmp(buf, "complete\n"));
    if (f) fclose(f);
    CHECK(count_entries(dir) == 1);
    unlink(path);
    CHECK(writer_write_file(&bad, NULL, NULL, path) == -EINVAL);
    CHECK(access(path, F_OK) != 0 && count_entries(dir) == 0);
    /* An unwritable directory is an error, not a crash. */
    CHECK(writer_write_file(&good, NULL, NULL, "/nonexistent-dir/x") == -ENOENT);
    rmdir(dir);
}

static void test_table(void)
{
    size_t n;
    const struct writer *const *w = writers_all(&n);
    for (size_t i = 0; i < n; i++) {
        CHECK(w[i]->format && w[i]->suffix && w[i]->write);
        CHECK(writers_find(w[i]->format) == w[i]);
    }
    CHECK(writers_find("no-such-format") == NULL);
}

int main(void)
{
    test_interning();
    test_images();
    test_image_index();
    test_atomic();
    test_table();
    return check_exit();
}
