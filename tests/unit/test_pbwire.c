/* The protobuf wire code: round trips, nested lengths, and malformed input. */
#include <string.h>

#include "check.h"
#include "common/pbwire.h"

static void test_round_trip(void)
{
    struct pb_buf b = {0};
    pb_put_uint(&b, 1, 150);
    pb_put_string(&b, 2, "kestrel");
    size_t m = pb_begin(&b, 3);
    uint64_t vals[] = {1, 300, UINT64_MAX};
    pb_put_packed(&b, 1, vals, 3);
    pb_end(&b, m);
    pb_put_int(&b, 4, -2);
    CHECK(!b.failed);
    /* field 1 = 150 encodes as 08 96 01, the example of the protobuf docs */
    CHECK(b.len > 3 && b.data[0] == 0x08 && b.data[1] == 0x96 && b.data[2] == 0x01);

    struct pb_reader r;
    struct pb_field f;
    pb_reader_init(&r, b.data, b.len);
    CHECK(pb_next(&r, &f) && f.number == 1 && f.wire == PB_VARINT && f.value == 150);
    CHECK(pb_next(&r, &f) && f.number == 2 && f.len == 7 && !memcmp(f.ptr, "kestrel", 7));
    CHECK(pb_next(&r, &f) && f.number == 3 && f.wire == PB_LEN);
    struct pb_reader inner;
    struct pb_field g;
    pb_reader_init(&inner, f.ptr, f.len);
    CHECK(pb_next(&inner, &g) && g.number == 1);
    struct pb_reader packed;
    pb_reader_init(&packed, g.ptr, g.len);
    uint64_t v[4] = {0};
    int n = 0;
    while (n < 4 && pb_next_packed(&packed, &v[n])) n++;
    CHECK(n == 3 && v[0] == 1 && v[1] == 300 && v[2] == UINT64_MAX && !packed.err);
    CHECK(!pb_next(&inner, &g) && !inner.err);
    CHECK(pb_next(&r, &f) && f.number == 4 && (int64_t)f.value == -2);
    CHECK(!pb_next(&r, &f) && !r.err);
    pb_buf_free(&b);
}

static void test_large_buffer(void)
{
    struct pb_buf b = {0};
    for (int i = 0; i < 100000; i++) pb_put_uint(&b, 5, (uint64_t)i + 1);
    CHECK(!b.failed);
    struct pb_reader r;
    struct pb_field f;
    pb_reader_init(&r, b.data, b.len);
    uint64_t want = 1;
    int ok = 1;
    while (pb_next(&r, &f)) ok &= f.value == want++;
    CHECK(ok && want == 100001 && !r.err);
    pb_buf_free(&b);
}

static void test_malformed(void)
{
    struct pb_reader r;
    struct pb_field f;
    const uint8_t truncated_len[] = {0x12, 0x05, 'a', 'b'}; /* says 5 bytes, has 2 */
    pb_reader_init(&r, truncated_len, sizeof truncated_len);
    CHECK(!pb_next(&r, &f) && r.err);

    const uint8_t endless_varint[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff,
                                      0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    pb_reader_init(&r, endless_varint, sizeof endless_varint);
    CHECK(!pb_next(&r, &f) && r.err);

    const uint8_t group[] = {0x0b}; /* wire type 3, a group: not supported */
    pb_reader_init(&r, group, sizeof group);
    CHECK(!pb_next(&r, &f) && r.err);

    const uint8_t field_zero[] = {0x00, 0x01};
    pb_reader_init(&r, field_zero, sizeof field_zero);
    CHECK(!pb_next(&r, &f) && r.err);

    const uint8_t short_fixed[] = {0x09, 1, 2, 3};
    pb_reader_init(&r, short_fixed, sizeof short_fixed);
    CHECK(!pb_next(&r, &f) && r.err);
}

int main(void)
{
    test_round_trip();
    test_large_buffer();
    test_malformed();
    return check_exit();
}
