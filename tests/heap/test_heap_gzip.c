/* The runtime's gzip writer (no zlib in the runtime) against zlib's reader: empty,
 * one byte, incompressible, highly repetitive and pprof-like inputs, across sizes
 * that cross the 32 KiB window and the 258-byte match limit, come back byte for
 * byte with a valid CRC and length; repetitive input gets smaller. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "check.h"
#include "runtime/heap/heap.h"

static int roundtrip(const uint8_t *p, size_t n, size_t *packed)
{
    struct pb_buf gz = {0};
    if (heap_gzip(p, n, &gz)) return 0;
    *packed = gz.len;
    uint8_t *back = malloc(n + 1);
    z_stream z;
    memset(&z, 0, sizeof z);
    int ok = inflateInit2(&z, 16 + MAX_WBITS) == Z_OK;
    z.next_in = gz.data;
    z.avail_in = (uInt)gz.len;
    z.next_out = back;
    z.avail_out = (uInt)(n + 1);
    ok = ok && inflate(&z, Z_FINISH) == Z_STREAM_END && z.total_out == n && !memcmp(back, p, n);
    inflateEnd(&z);
    free(back);
    pb_buf_free(&gz);
    return ok;
}

int main(void)
{
    size_t sizes[] = {0, 1, 2, 3, 257, 258, 259, 4096, 32767, 32768, 32769, 100000, 1 << 20};
    uint8_t *buf = malloc(1 << 20);
    uint64_t x = 88172645463325252ull;
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t n = sizes[s], packed;
        for (size_t i = 0; i < n; i++) { /* incompressible */
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            buf[i] = (uint8_t)x;
        }
        CHECKF(roundtrip(buf, n, &packed), "random %zu", n);
        memset(buf, 'a', n); /* one long run */
        CHECKF(roundtrip(buf, n, &packed), "run %zu", n);
        if (n >= 4096) CHECKF(packed < n / 50, "run %zu packed to %zu", n, packed);
        for (size_t i = 0; i < n; i++) /* records that repeat with small changes */
            buf[i] = (uint8_t)("\x22\x0c\x0a\x03\x01\x02\x03\x12\x05\x80\x80\x02\x01"[i % 13] +
                               (i / 4099) % 3);
        CHECKF(roundtrip(buf, n, &packed), "records %zu", n);
        if (n >= 4096) CHECKF(packed < n / 4, "records %zu packed to %zu", n, packed);
    }
    free(buf);
    return check_exit();
}
