/* RES frames (reference 1.10): a golden frame written out by hand, compared byte for byte with the
 * encoder and decoded back; every bound checked against the bytes remaining; whole-frame validation.
 * (The Python suite adds golden frames built with struct and hypothesis-generated malformed ones.) */
#include <string.h>

#include "aa_test.h"
#include "aa_resolution_test.h"
#include "protocols/aa_resolution_frame.h"
#include "util/aa_error.h"

static uint8_t g_storage[256 + 1];
static uint8_t *const g_buf = g_storage + 1;   /* odd address: no alignment assumed */

static const uint8_t golden[64] =
{
    0x40, 0x00, 0x00, 0x00,  /* frame_length 64 */
    0x00, 0x00, 0x07, 0x00,  /* version 0, flags 0, type RES */
    /* entry 1 @8: IPv4, SELF, port 8050, age 0, 192.168.1.20, "node-a"; 14 + 6 = 20 -> 24 */
    0x01, 0x80, 0x72, 0x1F,
    0x00, 0x00, 0x00, 0x00,
    0xC0, 0xA8, 0x01, 0x14,
    0x06, 0x00,
    'n', 'o', 'd', 'e', '-', 'a',
    0x00, 0x00, 0x00, 0x00,
    /* entry 2 @32: IPv6, flags 0, port 40456, age 1500 ms, ::1, "b"; 26 + 1 = 27 -> 32 */
    0x02, 0x00, 0x08, 0x9E,
    0xDC, 0x05, 0x00, 0x00,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01,
    0x01, 0x00,
    'b',
    0x00, 0x00, 0x00, 0x00, 0x00
};

static const uint8_t ipv4[4] = { 192, 168, 1, 20 };
static const uint8_t ipv6[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };

static void should_encode_golden_frame(void)
{
    memset(g_buf, 0xAA, 128);
    AA_CHECK_EQ(aa_resolution_frame_begin(g_buf, 64), 8);
    aa_resolution_entry_t a = test_resolution_entry(AA_RESOLUTION_TYPE_NAME_TO_IP4, AA_RESOLUTION_FLAG_SELF, 8050, 0, ipv4, "node-a");
    aa_resolution_entry_t b = test_resolution_entry(AA_RESOLUTION_TYPE_NAME_TO_IP6, 0, 40456, 1500, ipv6, "b");
    AA_CHECK_EQ(aa_resolution_frame_append(g_buf, 64, &a), 32);
    AA_CHECK_EQ(aa_resolution_frame_append(g_buf, 64, &b), 64);
    AA_CHECK(0 == memcmp(g_buf, golden, sizeof(golden)));
    AA_CHECK_EQ(aa_resolution_entry_length(AA_RESOLUTION_TYPE_NAME_TO_IP4, 6), 24);
    AA_CHECK_EQ(aa_resolution_entry_length(AA_RESOLUTION_TYPE_NAME_TO_IP6, 1), 32);
    AA_CHECK_EQ(aa_resolution_entry_length(3, 1), -1);

    /* no room: the frame is left as it was */
    AA_CHECK_EQ(aa_resolution_frame_append(g_buf, 64, &a), -1);
    AA_CHECK_EQ(aa_errcode(), AA_ERROR_CODE_INVALID_ARGUMENT);
    AA_CHECK(0 == memcmp(g_buf, golden, sizeof(golden)));
    aa_resolution_entry_t bad = a;
    bad.res_type = 3;
    AA_CHECK_EQ(aa_resolution_frame_append(g_buf, 200, &bad), -1);
    bad = a;
    bad.name_length = 0;
    AA_CHECK_EQ(aa_resolution_frame_append(g_buf, 200, &bad), -1);
    bad = a;
    bad.name = (const uint8_t *)"a b";
    bad.name_length = 3;
    AA_CHECK_EQ(aa_resolution_frame_append(g_buf, 200, &bad), -1);
    bad = a;
    bad.udp_port = 0;
    AA_CHECK_EQ(aa_resolution_frame_append(g_buf, 200, &bad), -1);
    AA_CHECK(0 == memcmp(g_buf, golden, sizeof(golden)));
}

static void should_decode_golden_frame(void)
{
    AA_CHECK_EQ(aa_resolution_frame_validate(golden, 64), 2);
    AA_CHECK_EQ(aa_resolution_frame_validate(golden, 100 > 64 ? 64 : 100), 2);
    size_t offset = AA_RESOLUTION_FRAME_HEADER_LENGTH;
    aa_resolution_entry_t e;
    AA_CHECK_EQ(aa_resolution_frame_next(golden, 64, &offset, &e), 1);
    AA_CHECK_EQ(offset, 32);
    AA_CHECK_EQ(e.res_type, AA_RESOLUTION_TYPE_NAME_TO_IP4);
    AA_CHECK_EQ(e.res_flags, AA_RESOLUTION_FLAG_SELF);
    AA_CHECK_EQ(e.udp_port, 8050);
    AA_CHECK_EQ(e.age_in_ms, 0);
    AA_CHECK(0 == memcmp(e.address, ipv4, 4));
    AA_CHECK_EQ(e.name_length, 6);
    AA_CHECK(0 == memcmp(e.name, "node-a", 6));
    AA_CHECK_EQ(aa_resolution_frame_next(golden, 64, &offset, &e), 1);
    AA_CHECK_EQ(offset, 64);
    AA_CHECK_EQ(e.res_type, AA_RESOLUTION_TYPE_NAME_TO_IP6);
    AA_CHECK_EQ(e.udp_port, 40456);
    AA_CHECK_EQ(e.age_in_ms, 1500);
    AA_CHECK(0 == memcmp(e.address, ipv6, 16));
    AA_CHECK_EQ(e.name_length, 1);
    AA_CHECK_EQ(e.name[0], 'b');
    AA_CHECK_EQ(aa_resolution_frame_next(golden, 64, &offset, &e), 0);
}

static void expect_invalid(const uint8_t *frame, size_t length)
{
    AA_CHECK_EQ(aa_resolution_frame_validate(frame, length), -1);
    AA_CHECK_EQ(aa_errcode(), AA_ERROR_CODE_MALFORMED_COMMAND);
}

static void should_check_bounds_against_the_bytes_remaining(void)
{
    uint8_t bad[64];
    /* the frame ends inside entry 2's fixed part (the datagram is longer: C's bug would read on) */
    memcpy(bad, golden, sizeof(bad));
    bad[0] = 8 + 24 + 20;
    expect_invalid(bad, 64);
    size_t offset = 32;
    aa_resolution_entry_t e;
    AA_CHECK_EQ(aa_resolution_frame_next(bad, 64, &offset, &e), -1);
    /* entry 1's name runs past the frame */
    memcpy(bad, golden, sizeof(bad));
    bad[8 + 12] = 30;
    bad[0] = 32;
    expect_invalid(bad, 64);
    /* one byte changed: each refuses the whole frame (nothing of it reaches a cache) */
    static const struct
    {
        size_t index;
        uint8_t value;
    }
    corruptions[] =
    {
        { 8 + 13, 0x80 },   /* a negative name length */
        { 8 + 12, 0 },      /* a zero name length */
        { 8, 0x05 },        /* an unknown entry type */
        { 4, 1 },           /* an unknown version */
        { 6, 1 },           /* an unknown frame type */
        { 0, 72 },          /* frame_length beyond the datagram */
        { 0, 7 },           /* frame_length below the header */
        { 0, 60 },          /* the last entry's padding cut by frame_length */
        { 32 + 26, ' ' },   /* a bad second entry */
        { 15, 0x80 },       /* a negative age */
    };
    for (size_t i = 0; i < sizeof(corruptions) / sizeof(corruptions[0]); i++)
    {
        memcpy(bad, golden, sizeof(bad));
        bad[corruptions[i].index] = corruptions[i].value;
        expect_invalid(bad, 64);
    }
    /* a name length that is too long (513), port 0 */
    memcpy(bad, golden, sizeof(bad));
    bad[8 + 12] = 0x01;
    bad[8 + 13] = 0x02;
    expect_invalid(bad, 64);
    memcpy(bad, golden, sizeof(bad));
    bad[10] = 0;
    bad[11] = 0;
    expect_invalid(bad, 64);
    /* short datagrams */
    expect_invalid(golden, 7);
    expect_invalid(golden, 63);
    /* an empty frame is valid and has no entries */
    AA_CHECK_EQ(aa_resolution_frame_begin(g_buf, 8), 8);
    AA_CHECK_EQ(aa_resolution_frame_validate(g_buf, 8), 0);
    AA_CHECK_EQ(aa_resolution_frame_begin(g_buf, 7), -1);
}

int main(void)
{
    AA_RUN(should_encode_golden_frame);
    AA_RUN(should_decode_golden_frame);
    AA_RUN(should_check_bounds_against_the_bytes_remaining);
    return 0;
}
