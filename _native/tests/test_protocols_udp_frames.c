/* UDP frame codecs: golden byte vectors written out by hand from the reference tables (section 1),
 * compared byte for byte with the encoders and decoded back; malformed datagrams rejected. */
#include <string.h>

#include "aa_test.h"
#include "protocols/aa_udp_frames.h"
#include "logbuffer/aa_logbuffer.h"
#include "util/aa_error.h"

static void check_bytes(const char *what, const uint8_t *actual, const uint8_t *expected, size_t length)
{
    for (size_t i = 0; i < length; i++)
    {
        if (actual[i] != expected[i])
        {
            fprintf(stderr, "%s: byte %zu is 0x%02x, expected 0x%02x\n", what, i, actual[i], expected[i]);
            exit(1);
        }
    }
}

/* Encodes into a buffer at an odd address too, so no encoder or decoder may assume alignment. */
static uint8_t g_storage[2048 + 1];
static uint8_t *const g_buf = g_storage + 1;

static void should_encode_and_decode_data_frame(void)
{
    static const uint8_t golden[64] =
    {
        0x25, 0x00, 0x00, 0x00,  /* frame_length 37 = 32 + 5, not padded */
        0x00, 0xC0, 0x01, 0x00,  /* version 0, flags B|E, type DATA */
        0x00, 0x10, 0x00, 0x00,  /* term_offset 4096 */
        0x44, 0x33, 0x22, 0x11,  /* session_id 0x11223344 */
        0x0A, 0x00, 0x00, 0x00,  /* stream_id 10 */
        0xFE, 0xFF, 0xFF, 0xFF,  /* term_id -2 */
        0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,  /* reserved_value 0x0102030405060708 */
        'h', 'e', 'l', 'l', 'o',
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0  /* to 64 */
    };
    memset(g_buf, 0xAA, 128);
    int32_t n = aa_udp_frame_encode_data(
        g_buf, 128, 0xC0, 4096, 0x11223344, 10, -2, 0x0102030405060708LL, (const uint8_t *)"hello", 5);
    AA_CHECK_EQ(n, 64);
    check_bytes("DATA", g_buf, golden, sizeof(golden));
    AA_CHECK_EQ(g_buf[64], 0xAA);

    AA_CHECK_EQ(aa_udp_frame_classify(golden, sizeof(golden)), AA_UDP_FRAME_DATA);
    aa_data_header_t h;
    AA_CHECK_EQ(aa_udp_frame_decode_data_header(g_buf, 64, &h), 0);
    AA_CHECK_EQ(h.frame_header.frame_length, 37);
    AA_CHECK_EQ(h.frame_header.version, 0);
    AA_CHECK_EQ(h.frame_header.flags, 0xC0);
    AA_CHECK_EQ(h.frame_header.type, AA_HDR_TYPE_DATA);
    AA_CHECK_EQ(h.term_offset, 4096);
    AA_CHECK_EQ(h.session_id, 0x11223344);
    AA_CHECK_EQ(h.stream_id, 10);
    AA_CHECK_EQ(h.term_id, -2);
    AA_CHECK_EQ(h.reserved_value, 0x0102030405060708LL);
    AA_CHECK(!aa_udp_data_flags_is_end_of_stream(h.frame_header.flags));

    /* A payload that is already a multiple of 32 gets no padding; a B-only fragment keeps its flags. */
    uint8_t payload[32];
    memset(payload, 0x5A, sizeof(payload));
    n = aa_udp_frame_encode_data(g_buf, 64, 0x80, 0, 1, 2, 3, 0, payload, sizeof(payload));
    AA_CHECK_EQ(n, 64);
    AA_CHECK_EQ(g_buf[0], 64);
    AA_CHECK_EQ(g_buf[5], 0x80);
    AA_CHECK_EQ(g_buf[63], 0x5A);
    /* Not enough room for the padded length. */
    AA_CHECK_EQ(aa_udp_frame_encode_data(g_buf, 63, 0xC0, 0, 1, 2, 3, 0, payload, sizeof(payload)), -1);
    AA_CHECK_EQ(aa_errcode(), AA_ERROR_CODE_INVALID_ARGUMENT);
    AA_CHECK_EQ(aa_udp_frame_encode_data(g_buf, 2048, 0xC0, 0, 1, 2, 3, 0, payload, 65504), -1);
}

static void should_not_take_an_empty_message_for_a_heartbeat(void)
{
    static const uint8_t golden[32] =
    {
        0x20, 0x00, 0x00, 0x00,  /* frame_length 32: an empty message */
        0x00, 0xC0, 0x01, 0x00,
        0x20, 0x00, 0x00, 0x00,  /* term_offset 32 */
        0x01, 0x00, 0x00, 0x00,
        0x02, 0x00, 0x00, 0x00,
        0x03, 0x00, 0x00, 0x00,
        0, 0, 0, 0, 0, 0, 0, 0
    };
    int32_t n = aa_udp_frame_encode_data(g_buf, 32, 0xC0, 32, 1, 2, 3, 0, NULL, 0);
    AA_CHECK_EQ(n, 32);
    check_bytes("empty DATA", g_buf, golden, sizeof(golden));
    AA_CHECK_EQ(aa_udp_frame_classify(golden, 32), AA_UDP_FRAME_DATA);
    AA_CHECK(!aa_udp_frame_is_heartbeat(golden, 32));
}

static void should_encode_and_decode_heartbeat(void)
{
    static const uint8_t golden[32] =
    {
        0x00, 0x00, 0x00, 0x00,  /* frame_length 0 marks a heartbeat */
        0x00, 0xC0, 0x01, 0x00,  /* flags B|E, type DATA */
        0x00, 0x20, 0x00, 0x00,  /* term_offset 8192: the sender position */
        0x07, 0x00, 0x00, 0x00,  /* session_id 7 */
        0x09, 0x00, 0x00, 0x00,  /* stream_id 9 */
        0x05, 0x00, 0x00, 0x00,  /* term_id 5 */
        0, 0, 0, 0, 0, 0, 0, 0   /* reserved_value 0 */
    };
    AA_CHECK_EQ(aa_udp_frame_encode_heartbeat(g_buf, 32, 8192, 7, 9, 5, false), 32);
    check_bytes("heartbeat", g_buf, golden, sizeof(golden));
    AA_CHECK_EQ(aa_udp_frame_classify(golden, 32), AA_UDP_FRAME_HEARTBEAT);
    AA_CHECK(aa_udp_frame_is_heartbeat(g_buf, 32));

    /* End of stream: flags 0xE0 (B|E|S). */
    uint8_t eos[32];
    memcpy(eos, golden, sizeof(eos));
    eos[5] = 0xE0;
    AA_CHECK_EQ(aa_udp_frame_encode_heartbeat(g_buf, 32, 8192, 7, 9, 5, true), 32);
    check_bytes("EOS heartbeat", g_buf, eos, sizeof(eos));
    aa_data_header_t h;
    AA_CHECK_EQ(aa_udp_frame_decode_data_header(g_buf, 32, &h), 0);
    AA_CHECK(aa_udp_data_flags_is_end_of_stream(h.frame_header.flags));
    /* Accept the S bit on its own (C semantics). */
    AA_CHECK(aa_udp_data_flags_is_end_of_stream(0x20));
    AA_CHECK_EQ(aa_udp_frame_classify(eos, 32), AA_UDP_FRAME_HEARTBEAT);

    /* frame_length 0 in anything but a 32-byte datagram is not a heartbeat and not valid. */
    uint8_t longer[64] = { 0 };
    memcpy(longer, golden, 32);
    AA_CHECK_EQ(aa_udp_frame_classify(longer, 64), AA_UDP_FRAME_INVALID_LENGTH);
    AA_CHECK(!aa_udp_frame_is_heartbeat(longer, 64));
    AA_CHECK_EQ(aa_udp_frame_encode_heartbeat(g_buf, 31, 0, 0, 0, 0, false), -1);
}

static void should_encode_and_decode_pad(void)
{
    static const uint8_t golden[32] =
    {
        0x00, 0x01, 0x00, 0x00,  /* frame_length 256: the whole padded region */
        0x00, 0xC0, 0x00, 0x00,  /* flags from the default header, type PAD */
        0x00, 0xFF, 0x00, 0x00,  /* term_offset 65280 */
        0x01, 0x00, 0x00, 0x00,
        0x02, 0x00, 0x00, 0x00,
        0x03, 0x00, 0x00, 0x00,
        0, 0, 0, 0, 0, 0, 0, 0
    };
    AA_CHECK_EQ(aa_udp_frame_encode_pad(g_buf, 32, 65280, 1, 2, 3, 256), 32);
    check_bytes("PAD", g_buf, golden, sizeof(golden));
    AA_CHECK_EQ(aa_udp_frame_classify(golden, 32), AA_UDP_FRAME_PAD);
    aa_data_header_t h;
    AA_CHECK_EQ(aa_udp_frame_decode_data_header(golden, 32, &h), 0);
    AA_CHECK_EQ(h.frame_header.type, AA_HDR_TYPE_PAD);
    AA_CHECK_EQ(h.frame_header.frame_length, 256);
    AA_CHECK_EQ(h.term_offset, 65280);

    /* The padded region must fit in the receiving term. */
    AA_CHECK(aa_udp_frame_data_fits_term(golden, 32, 65536));
    AA_CHECK(!aa_udp_frame_data_fits_term(golden, 32, 65280 + 128));

    AA_CHECK_EQ(aa_udp_frame_encode_pad(g_buf, 32, 0, 1, 2, 3, 48), -1);
    AA_CHECK_EQ(aa_udp_frame_encode_pad(g_buf, 32, 0, 1, 2, 3, 0), -1);
    AA_CHECK_EQ(aa_udp_frame_encode_pad(g_buf, 31, 0, 1, 2, 3, 32), -1);
}

static void should_classify_data_batches(void)
{
    /* Frames as they sit in a term: "abc" (37 -> 64), 40 bytes (72 -> 96), then a PAD header. */
    uint8_t batch[192];
    memset(batch, 0xEE, sizeof(batch));
    uint8_t payload[40];
    memset(payload, 0x11, sizeof(payload));
    int32_t offset = 1024;
    int32_t n1 = aa_udp_frame_encode_data(batch, sizeof(batch), 0xC0, offset, 5, 6, 7, 0, (const uint8_t *)"abc", 3);
    int32_t n2 = aa_udp_frame_encode_data(batch + n1, sizeof(batch) - (size_t)n1, 0xC0, offset + n1, 5, 6, 7, 0, payload, 40);
    AA_CHECK_EQ(n1, 64);
    AA_CHECK_EQ(n2, 96);
    AA_CHECK_EQ(aa_udp_frame_classify(batch, 160), AA_UDP_FRAME_DATA);
    int32_t n3 = aa_udp_frame_encode_pad(batch + 160, 32, offset + 160, 5, 6, 7, 65536 - (offset + 160));
    AA_CHECK_EQ(n3, 32);
    AA_CHECK_EQ(aa_udp_frame_classify(batch, 192), AA_UDP_FRAME_DATA);
    AA_CHECK(aa_udp_frame_data_fits_term(batch, 192, 65536));
    AA_CHECK(!aa_udp_frame_data_fits_term(batch, 192, 65536 - 32));

    /* A last frame sent without its alignment padding is still a valid frame. */
    AA_CHECK_EQ(aa_udp_frame_classify(batch, 64 + 72), AA_UDP_FRAME_DATA);
    /* ... but a cut frame, or a stub shorter than a header after a frame, is not. */
    AA_CHECK_EQ(aa_udp_frame_classify(batch, 64 + 71), AA_UDP_FRAME_INVALID_LENGTH);
    AA_CHECK_EQ(aa_udp_frame_classify(batch, 64 + 16), AA_UDP_FRAME_INVALID_LENGTH);

    /* A second frame with a bad version, an unfinished (0 / negative) length or a foreign type. */
    uint8_t bad[160];
    memcpy(bad, batch, sizeof(bad));
    bad[64 + 4] = 1;
    AA_CHECK_EQ(aa_udp_frame_classify(bad, 160), AA_UDP_FRAME_INVALID_VERSION);
    memcpy(bad, batch, sizeof(bad));
    memset(bad + 64, 0, 4);
    AA_CHECK_EQ(aa_udp_frame_classify(bad, 160), AA_UDP_FRAME_INVALID_LENGTH);
    memcpy(bad, batch, sizeof(bad));
    memset(bad + 64, 0xFF, 4);
    AA_CHECK_EQ(aa_udp_frame_classify(bad, 160), AA_UDP_FRAME_INVALID_LENGTH);
    memcpy(bad, batch, sizeof(bad));
    bad[64 + 6] = AA_HDR_TYPE_NAK;
    AA_CHECK_EQ(aa_udp_frame_classify(bad, 160), AA_UDP_FRAME_INVALID_LENGTH);

    /* First frame claims more than the datagram holds, or less than a header. */
    memcpy(bad, batch, sizeof(bad));
    bad[0] = 65;
    AA_CHECK_EQ(aa_udp_frame_classify(bad, 64), AA_UDP_FRAME_INVALID_LENGTH);
    bad[0] = 31;
    AA_CHECK_EQ(aa_udp_frame_classify(bad, 64), AA_UDP_FRAME_INVALID_LENGTH);

    /* Term bounds: misaligned or negative offsets, or running past the term end. */
    memcpy(bad, batch, sizeof(bad));
    AA_CHECK(aa_udp_frame_data_fits_term(bad, 160, 1024 + 160));
    AA_CHECK(!aa_udp_frame_data_fits_term(bad, 160, 1024 + 159));
    bad[8] = 0x10;
    AA_CHECK(!aa_udp_frame_data_fits_term(bad, 160, 65536));
    memset(bad + 8, 0xFF, 4);
    AA_CHECK(!aa_udp_frame_data_fits_term(bad, 160, 65536));
    uint8_t hb[32];
    aa_udp_frame_encode_heartbeat(hb, 32, 65536 - 32, 1, 2, 3, false);
    AA_CHECK(aa_udp_frame_data_fits_term(hb, 32, 65536));
}

static void should_encode_and_decode_setup(void)
{
    static const uint8_t golden[40] =
    {
        0x28, 0x00, 0x00, 0x00,  /* frame_length 40 */
        0x00, 0x40, 0x05, 0x00,  /* flags GROUP, type SETUP */
        0x00, 0x04, 0x00, 0x00,  /* term_offset 1024 */
        0xEF, 0xBE, 0xAD, 0xDE,  /* session_id 0xDEADBEEF */
        0xE9, 0x03, 0x00, 0x00,  /* stream_id 1001 */
        0xFF, 0xFF, 0xFF, 0x7F,  /* initial_term_id INT32_MAX */
        0x00, 0x00, 0x00, 0x80,  /* active_term_id INT32_MIN (wrapped) */
        0x00, 0x00, 0x00, 0x01,  /* term_length 16 MiB */
        0x80, 0x05, 0x00, 0x00,  /* mtu 1408 */
        0x00, 0x00, 0x00, 0x00   /* ttl 0 */
    };
    int32_t n = aa_udp_frame_encode_setup(
        g_buf, 40, AA_SETUP_HEADER_GROUP_FLAG, 1024, (int32_t)0xDEADBEEF, 1001, INT32_MAX, INT32_MIN, 16 * 1024 * 1024,
        1408, 0);
    AA_CHECK_EQ(n, 40);
    check_bytes("SETUP", g_buf, golden, sizeof(golden));
    AA_CHECK_EQ(aa_udp_frame_classify(golden, 40), AA_UDP_FRAME_SETUP);
    aa_setup_header_t s;
    AA_CHECK_EQ(aa_udp_frame_decode_setup(golden, 40, &s), 0);
    AA_CHECK_EQ(s.frame_header.flags, AA_SETUP_HEADER_GROUP_FLAG);
    AA_CHECK_EQ(s.term_offset, 1024);
    AA_CHECK_EQ(s.session_id, (int32_t)0xDEADBEEF);
    AA_CHECK_EQ(s.stream_id, 1001);
    AA_CHECK_EQ(s.initial_term_id, INT32_MAX);
    AA_CHECK_EQ(s.active_term_id, INT32_MIN);
    AA_CHECK_EQ(s.term_length, 16 * 1024 * 1024);
    AA_CHECK_EQ(s.mtu, 1408);
    AA_CHECK_EQ(s.ttl, 0);

    AA_CHECK_EQ(aa_udp_frame_classify(golden, 39), AA_UDP_FRAME_INVALID_LENGTH);
    AA_CHECK_EQ(aa_udp_frame_decode_setup(golden, 39, &s), -1);
    AA_CHECK_EQ(aa_udp_frame_encode_setup(g_buf, 39, 0, 0, 0, 0, 0, 0, 0, 0, 0), -1);
}

static void should_encode_and_decode_status_message(void)
{
    static const uint8_t golden[36] =
    {
        0x24, 0x00, 0x00, 0x00,  /* frame_length 36 */
        0x00, 0x00, 0x03, 0x00,  /* flags 0, type SM */
        0x04, 0x03, 0x02, 0x01,  /* session_id 0x01020304 */
        0x0A, 0x00, 0x00, 0x00,  /* stream_id 10 */
        0x64, 0x00, 0x00, 0x00,  /* consumption_term_id 100 */
        0x00, 0x00, 0x02, 0x00,  /* consumption_term_offset 131072 */
        0x00, 0x00, 0x02, 0x00,  /* receiver_window 128 KiB */
        0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11   /* receiver_id at 28, only 4-byte aligned */
    };
    int32_t n = aa_udp_frame_encode_status_message(g_buf, 36, 0, 0x01020304, 10, 100, 131072, 131072, 0x1122334455667788LL, NULL);
    AA_CHECK_EQ(n, 36);
    check_bytes("SM", g_buf, golden, sizeof(golden));
    aa_udp_status_message_t sm;
    AA_CHECK_EQ(aa_udp_frame_classify(golden, 36), AA_UDP_FRAME_SM);
    AA_CHECK_EQ(aa_udp_frame_decode_status_message(golden, 36, &sm), 0);
    AA_CHECK_EQ(sm.header.session_id, 0x01020304);
    AA_CHECK_EQ(sm.header.stream_id, 10);
    AA_CHECK_EQ(sm.header.consumption_term_id, 100);
    AA_CHECK_EQ(sm.header.consumption_term_offset, 131072);
    AA_CHECK_EQ(sm.header.receiver_window, 131072);
    AA_CHECK_EQ(sm.header.receiver_id, 0x1122334455667788LL);
    AA_CHECK(!sm.has_group_tag);

    static const uint8_t tagged[44] =
    {
        0x2C, 0x00, 0x00, 0x00,  /* frame_length 44 */
        0x00, 0x40, 0x03, 0x00,  /* flags EOS */
        0x04, 0x03, 0x02, 0x01,
        0x0A, 0x00, 0x00, 0x00,
        0x64, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x02, 0x00,
        0x00, 0x00, 0x02, 0x00,
        0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
        0x11, 0x10, 0x0F, 0x0E, 0x0D, 0x0C, 0x0B, 0x0A   /* group_tag 0x0A0B0C0D0E0F1011 at 36 */
    };
    int64_t tag = 0x0A0B0C0D0E0F1011LL;
    n = aa_udp_frame_encode_status_message(
        g_buf, 44, AA_STATUS_MESSAGE_HEADER_EOS_FLAG, 0x01020304, 10, 100, 131072, 131072, 0x1122334455667788LL, &tag);
    AA_CHECK_EQ(n, 44);
    check_bytes("SM with group tag", g_buf, tagged, sizeof(tagged));
    AA_CHECK_EQ(aa_udp_frame_decode_status_message(tagged, 44, &sm), 0);
    AA_CHECK(sm.has_group_tag);
    AA_CHECK_EQ(sm.group_tag, tag);
    AA_CHECK_EQ(sm.header.frame_header.flags, AA_STATUS_MESSAGE_HEADER_EOS_FLAG);
    AA_CHECK_EQ(aa_udp_frame_encode_status_message(g_buf, 43, 0, 0, 0, 0, 0, 0, 0, &tag), -1);

    /* SEND_SETUP: flag 0x80 with term id, offset and window all 0. */
    static const uint8_t send_setup[36] =
    {
        0x24, 0x00, 0x00, 0x00,
        0x00, 0x80, 0x03, 0x00,
        0x04, 0x03, 0x02, 0x01,
        0x0A, 0x00, 0x00, 0x00,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11
    };
    n = aa_udp_frame_encode_status_message(
        g_buf, 36, AA_STATUS_MESSAGE_HEADER_SEND_SETUP_FLAG, 0x01020304, 10, 0, 0, 0, 0x1122334455667788LL, NULL);
    check_bytes("SM SEND_SETUP", g_buf, send_setup, sizeof(send_setup));

    /* A datagram shorter than frame_length is dropped (1.12); an extra length other than 8 is "no tag". */
    AA_CHECK_EQ(aa_udp_frame_classify(tagged, 40), AA_UDP_FRAME_INVALID_LENGTH);
    AA_CHECK_EQ(aa_udp_frame_classify(golden, 35), AA_UDP_FRAME_INVALID_LENGTH);
    uint8_t odd[40];
    memcpy(odd, tagged, 40);
    odd[0] = 40;
    AA_CHECK_EQ(aa_udp_frame_decode_status_message(odd, 40, &sm), 0);
    AA_CHECK(!sm.has_group_tag);
    odd[0] = 20;
    AA_CHECK_EQ(aa_udp_frame_classify(odd, 40), AA_UDP_FRAME_INVALID_LENGTH);
}

static void should_encode_and_decode_nak(void)
{
    static const uint8_t golden[28] =
    {
        0x1C, 0x00, 0x00, 0x00,  /* frame_length 28 */
        0x00, 0x00, 0x02, 0x00,  /* flags 0, type NAK */
        0x55, 0x00, 0x00, 0x00,  /* session_id */
        0x66, 0x00, 0x00, 0x00,  /* stream_id */
        0x77, 0x00, 0x00, 0x00,  /* term_id comes first in a NAK ... */
        0x40, 0x12, 0x00, 0x00,  /* ... then term_offset 4672 */
        0x80, 0x05, 0x00, 0x00   /* length 1408 */
    };
    AA_CHECK_EQ(aa_udp_frame_encode_nak(g_buf, 28, 0x55, 0x66, 0x77, 4672, 1408), 28);
    check_bytes("NAK", g_buf, golden, sizeof(golden));
    AA_CHECK_EQ(aa_udp_frame_classify(golden, 28), AA_UDP_FRAME_NAK);
    aa_nak_header_t nak;
    AA_CHECK_EQ(aa_udp_frame_decode_nak(g_buf, 28, &nak), 0);
    AA_CHECK_EQ(nak.session_id, 0x55);
    AA_CHECK_EQ(nak.stream_id, 0x66);
    AA_CHECK_EQ(nak.term_id, 0x77);
    AA_CHECK_EQ(nak.term_offset, 4672);
    AA_CHECK_EQ(nak.length, 1408);
    AA_CHECK_EQ(aa_udp_frame_classify(golden, 27), AA_UDP_FRAME_INVALID_LENGTH);
    AA_CHECK_EQ(aa_udp_frame_decode_nak(golden, 27, &nak), -1);
    AA_CHECK_EQ(aa_udp_frame_encode_nak(g_buf, 27, 0, 0, 0, 0, 0), -1);
}

static void should_encode_and_decode_rttm(void)
{
    static const uint8_t golden[40] =
    {
        0x28, 0x00, 0x00, 0x00,  /* frame_length 40 */
        0x00, 0x80, 0x06, 0x00,  /* flags REPLY ("please reply"), type RTTM */
        0x01, 0x00, 0x00, 0x00,
        0x02, 0x00, 0x00, 0x00,
        0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,  /* echo_timestamp 0x100000002 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* reception_delta 0 */
        0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF   /* receiver_id -2 */
    };
    AA_CHECK_EQ(aa_udp_frame_encode_rttm(g_buf, 40, AA_RTTM_HEADER_REPLY_FLAG, 1, 2, 0x100000002LL, 0, -2), 40);
    check_bytes("RTTM", g_buf, golden, sizeof(golden));
    AA_CHECK_EQ(aa_udp_frame_classify(golden, 40), AA_UDP_FRAME_RTTM);
    aa_rttm_header_t rttm;
    AA_CHECK_EQ(aa_udp_frame_decode_rttm(golden, 40, &rttm), 0);
    AA_CHECK_EQ(rttm.frame_header.flags, AA_RTTM_HEADER_REPLY_FLAG);
    AA_CHECK_EQ(rttm.echo_timestamp, 0x100000002LL);
    AA_CHECK_EQ(rttm.reception_delta, 0);
    AA_CHECK_EQ(rttm.receiver_id, -2);

    /* The answer: flags 0, echo and receiver id copied, reception_delta 0. */
    static const uint8_t reply[40] =
    {
        0x28, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x06, 0x00,
        0x01, 0x00, 0x00, 0x00,
        0x02, 0x00, 0x00, 0x00,
        0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF
    };
    rttm.reception_delta = 12345;
    AA_CHECK_EQ(aa_udp_frame_encode_rttm_reply(g_buf, 40, &rttm), 40);
    check_bytes("RTTM reply", g_buf, reply, sizeof(reply));
    AA_CHECK_EQ(aa_udp_frame_classify(golden, 39), AA_UDP_FRAME_INVALID_LENGTH);
}

static void should_encode_and_decode_error(void)
{
    static const uint8_t golden[48] =
    {
        0x30, 0x00, 0x00, 0x00,  /* frame_length 48 = 40 + 8, not padded */
        0x00, 0x08, 0x04, 0x00,  /* flags HAS_GROUP_TAG, type ERR */
        0x03, 0x00, 0x00, 0x00,  /* session_id */
        0x04, 0x00, 0x00, 0x00,  /* stream_id */
        0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,  /* receiver_id */
        0x77, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* group_tag 0x77 */
        0x0D, 0x00, 0x00, 0x00,  /* error_code 13 IMAGE_REJECTED */
        0x08, 0x00, 0x00, 0x00,  /* error_length 8 */
        'r', 'e', 'j', 'e', 'c', 't', 'e', 'd'
    };
    int64_t tag = 0x77;
    int32_t n = aa_udp_frame_encode_error(
        g_buf, 48, 3, 4, 0x0102030405060708LL, &tag, AA_ERROR_CODE_IMAGE_REJECTED, "rejected", 8);
    AA_CHECK_EQ(n, 48);
    check_bytes("ERR", g_buf, golden, sizeof(golden));
    AA_CHECK_EQ(aa_udp_frame_classify(golden, 48), AA_UDP_FRAME_ERR);
    aa_udp_error_t err;
    AA_CHECK_EQ(aa_udp_frame_decode_error(golden, 48, &err), 0);
    AA_CHECK(err.has_group_tag);
    AA_CHECK_EQ(err.header.group_tag, 0x77);
    AA_CHECK_EQ(err.header.receiver_id, 0x0102030405060708LL);
    AA_CHECK_EQ(err.header.error_code, 13);
    AA_CHECK_EQ(err.text_length, 8);
    AA_CHECK(0 == memcmp(err.text, "rejected", 8));

    /* Without a tag: flags 0 and a zero group_tag field. */
    static const uint8_t untagged[44] =
    {
        0x2C, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x04, 0x00,
        0x03, 0x00, 0x00, 0x00,
        0x04, 0x00, 0x00, 0x00,
        0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
        0, 0, 0, 0, 0, 0, 0, 0,
        0x0B, 0x00, 0x00, 0x00,  /* error_code 11 */
        0x04, 0x00, 0x00, 0x00,
        'o', 'o', 'p', 's'
    };
    n = aa_udp_frame_encode_error(g_buf, 64, 3, 4, 0x0102030405060708LL, NULL, 11, "oops", 4);
    AA_CHECK_EQ(n, 44);
    check_bytes("ERR without tag", g_buf, untagged, sizeof(untagged));
    AA_CHECK_EQ(aa_udp_frame_decode_error(untagged, 44, &err), 0);
    AA_CHECK(!err.has_group_tag);

    /* Text is capped at 1023 bytes. */
    char text[1500];
    memset(text, 'x', sizeof(text));
    n = aa_udp_frame_encode_error(g_buf, 2048, 1, 2, 3, NULL, 11, text, sizeof(text));
    AA_CHECK_EQ(n, 40 + 1023);
    AA_CHECK_EQ(aa_udp_frame_decode_error(g_buf, (size_t)n, &err), 0);
    AA_CHECK_EQ(err.text_length, 1023);
    AA_CHECK_EQ(aa_udp_frame_encode_error(g_buf, 47, 3, 4, 0, NULL, 11, "rejected", 8), -1);

    /* Malformed: datagram shorter than frame_length, or error_length not fitting the frame. */
    uint8_t bad[48];
    memcpy(bad, golden, sizeof(bad));
    AA_CHECK_EQ(aa_udp_frame_classify(bad, 47), AA_UDP_FRAME_INVALID_LENGTH);
    bad[36] = 9;
    AA_CHECK_EQ(aa_udp_frame_classify(bad, 48), AA_UDP_FRAME_INVALID_LENGTH);
    memset(bad + 36, 0xFF, 4);
    AA_CHECK_EQ(aa_udp_frame_classify(bad, 48), AA_UDP_FRAME_INVALID_LENGTH);
    AA_CHECK_EQ(aa_udp_frame_decode_error(bad, 48, &err), -1);
    AA_CHECK_EQ(aa_udp_frame_classify(golden, 39), AA_UDP_FRAME_INVALID_LENGTH);
}

static void should_encode_and_decode_response_setup(void)
{
    static const uint8_t golden[20] =
    {
        0x14, 0x00, 0x00, 0x00,  /* frame_length 20 */
        0x00, 0x00, 0x0B, 0x00,  /* type RSP_SETUP */
        0x09, 0x00, 0x00, 0x00,  /* session_id */
        0x0A, 0x00, 0x00, 0x00,  /* stream_id */
        0xFB, 0xFF, 0xFF, 0xFF   /* response_session_id -5 */
    };
    AA_CHECK_EQ(aa_udp_frame_encode_response_setup(g_buf, 20, 9, 10, -5), 20);
    check_bytes("RSP_SETUP", g_buf, golden, sizeof(golden));
    AA_CHECK_EQ(aa_udp_frame_classify(golden, 20), AA_UDP_FRAME_RSP_SETUP);
    aa_response_setup_header_t rsp;
    AA_CHECK_EQ(aa_udp_frame_decode_response_setup(golden, 20, &rsp), 0);
    AA_CHECK_EQ(rsp.session_id, 9);
    AA_CHECK_EQ(rsp.stream_id, 10);
    AA_CHECK_EQ(rsp.response_session_id, -5);
    AA_CHECK_EQ(aa_udp_frame_classify(golden, 19), AA_UDP_FRAME_INVALID_LENGTH);
    AA_CHECK_EQ(aa_udp_frame_encode_response_setup(g_buf, 19, 9, 10, -5), -1);
}

static void should_reject_short_and_wrong_version_and_ignore_unknown(void)
{
    uint8_t frame[64];
    AA_CHECK_EQ(aa_udp_frame_classify(NULL, 64), AA_UDP_FRAME_INVALID_SHORT);
    AA_CHECK_EQ(aa_udp_frame_encode_nak(frame, sizeof(frame), 1, 2, 3, 0, 32), 28);
    AA_CHECK_EQ(aa_udp_frame_classify(frame, 0), AA_UDP_FRAME_INVALID_SHORT);
    AA_CHECK_EQ(aa_udp_frame_classify(frame, 7), AA_UDP_FRAME_INVALID_SHORT);
    AA_CHECK(aa_udp_frame_kind_is_invalid(AA_UDP_FRAME_INVALID_SHORT));

    /* version != 0 is dropped for every type, before anything else is looked at. */
    const int16_t types[] =
    {
        AA_HDR_TYPE_PAD, AA_HDR_TYPE_DATA, AA_HDR_TYPE_NAK, AA_HDR_TYPE_SM, AA_HDR_TYPE_ERR, AA_HDR_TYPE_SETUP,
        AA_HDR_TYPE_RTTM, AA_HDR_TYPE_RES, AA_HDR_TYPE_RSP_SETUP
    };
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
    {
        memset(frame, 0, sizeof(frame));
        frame[0] = 64;
        frame[4] = 1;
        memcpy(frame + 6, &types[i], 2);
        AA_CHECK_EQ(aa_udp_frame_classify(frame, 64), AA_UDP_FRAME_INVALID_VERSION);
        frame[4] = 0xFF;
        AA_CHECK_EQ(aa_udp_frame_classify(frame, 64), AA_UDP_FRAME_INVALID_VERSION);
        AA_CHECK(aa_udp_frame_kind_is_invalid(aa_udp_frame_classify(frame, 64)));
        /* With version 0, 8 bytes are too short for every type's header or its frame_length. */
        frame[4] = 0;
        AA_CHECK_EQ(aa_udp_frame_classify(frame, 8), AA_UDP_FRAME_INVALID_LENGTH);
    }

    /* Unknown or unimplemented types are ignored, not counted. */
    const int16_t unknown[] = { AA_HDR_TYPE_ATS_DATA, AA_HDR_TYPE_ATS_SETUP, AA_HDR_TYPE_ATS_SM, 0x0C, 0x7FFF, AA_HDR_TYPE_EXT };
    for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
    {
        memset(frame, 0, sizeof(frame));
        frame[0] = 64;
        memcpy(frame + 6, &unknown[i], 2);
        AA_CHECK_EQ(aa_udp_frame_classify(frame, 64), AA_UDP_FRAME_UNKNOWN);
        AA_CHECK(!aa_udp_frame_kind_is_invalid(AA_UDP_FRAME_UNKNOWN));
    }

    /* Control frames whose frame_length is below their fixed size or beyond the datagram. */
    AA_CHECK_EQ(aa_udp_frame_encode_nak(frame, sizeof(frame), 1, 2, 3, 0, 32), 28);
    frame[0] = 20;
    AA_CHECK_EQ(aa_udp_frame_classify(frame, 28), AA_UDP_FRAME_INVALID_LENGTH);
    frame[0] = 29;
    AA_CHECK_EQ(aa_udp_frame_classify(frame, 28), AA_UDP_FRAME_INVALID_LENGTH);
    frame[0] = 28;
    AA_CHECK_EQ(aa_udp_frame_classify(frame, 28), AA_UDP_FRAME_NAK);

    /* Decoders refuse other kinds, with a message naming what was found. */
    aa_setup_header_t setup;
    AA_CHECK_EQ(aa_udp_frame_decode_setup(frame, 28, &setup), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "NAK"));
    aa_data_header_t data;
    AA_CHECK_EQ(aa_udp_frame_decode_data_header(frame, 28, &data), -1);

    AA_CHECK(0 == strcmp(aa_udp_frame_kind_name(AA_UDP_FRAME_HEARTBEAT), "HEARTBEAT"));
    AA_CHECK(0 == strcmp(aa_udp_frame_kind_name(AA_UDP_FRAME_INVALID_VERSION), "INVALID_VERSION"));
}

static void should_compute_positions_from_wire_term_ids(void)
{
    /* 64 KiB terms (16 bits): same results as aa_compute_position where that is defined ... */
    AA_CHECK_EQ(aa_udp_compute_position(5, 96, 16, 5), 96);
    AA_CHECK_EQ(aa_udp_compute_position(7, 96, 16, 5), 2 * 65536 + 96);
    AA_CHECK_EQ(aa_udp_compute_position(INT32_MIN, 32, 16, INT32_MAX), 65536 + 32);
    AA_CHECK_EQ(aa_compute_position(INT32_MIN, 32, 16, INT32_MAX), 65536 + 32);
    /* ... and negative, without undefined behaviour, for a term before the initial one. */
    AA_CHECK_EQ(aa_udp_compute_position(4, 32, 16, 5), -65536 + 32);
    AA_CHECK_EQ(aa_udp_compute_position(INT32_MAX, 0, 16, INT32_MIN), -65536);
    AA_CHECK_EQ(aa_udp_compute_position(INT32_MIN, 0, 30, 0), (int64_t)INT32_MIN * (1LL << 30));
}

int main(void)
{
    AA_RUN(should_compute_positions_from_wire_term_ids);
    AA_RUN(should_encode_and_decode_data_frame);
    AA_RUN(should_not_take_an_empty_message_for_a_heartbeat);
    AA_RUN(should_encode_and_decode_heartbeat);
    AA_RUN(should_encode_and_decode_pad);
    AA_RUN(should_classify_data_batches);
    AA_RUN(should_encode_and_decode_setup);
    AA_RUN(should_encode_and_decode_status_message);
    AA_RUN(should_encode_and_decode_nak);
    AA_RUN(should_encode_and_decode_rttm);
    AA_RUN(should_encode_and_decode_error);
    AA_RUN(should_encode_and_decode_response_setup);
    AA_RUN(should_reject_short_and_wrong_version_and_ignore_unknown);
    return 0;
}
