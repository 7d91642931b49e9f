/* Archive SBE codecs: messages laid out by hand from the reference tables (aeron-archive-codecs.md)
 * compared byte for byte with the encoders and decoded back; SBE's version rules; every truncation
 * and random corruption of a message rejected or decoded without reading outside the buffer (ASan
 * checks that: each message is decoded from an exactly-sized heap copy). */
#include <stdlib.h>
#include <string.h>

#include "aa_test.h"
#include "protocols/aa_archive_codecs.h"
#include "util/aa_error.h"

static uint8_t g_buf[4096];

static size_t header(uint8_t *p, uint16_t block, uint16_t template_id, uint16_t schema, uint16_t version)
{
    test_put16(p, block);
    test_put16(p + 2, template_id);
    test_put16(p + 4, schema);
    test_put16(p + 6, version);
    return 8;
}

static size_t var(uint8_t *p, const char *s)
{
    uint32_t n = (uint32_t)strlen(s);
    memcpy(p, &n, 4);
    memcpy(p + 4, s, n);
    return 4 + n;
}

static aa_archive_var_t str(const char *s)
{
    aa_archive_var_t v = { (const uint8_t *)s, (uint32_t)strlen(s) };
    return v;
}

static void check_var(aa_archive_var_t v, const char *expected)
{
    AA_CHECK_EQ(v.length, strlen(expected));
    AA_CHECK(0 == memcmp(v.data, expected, v.length));
}

/* decodes from an exact heap copy so that any read past the end is an ASan error */
static int64_t decode_copy(const uint8_t *bytes, size_t length, aa_archive_message_t *msg, uint8_t **copy)
{
    *copy = malloc(length > 0 ? length : 1);
    memcpy(*copy, bytes, length);
    return aa_archive_decode(*copy, length, msg);
}

static void should_encode_control_response_as_laid_out(void)
{
    uint8_t golden[128] = { 0 };
    size_t n = header(golden, 32, 1, 101, 14);
    test_put64(golden + n, 7);
    test_put64(golden + n + 8, -3);
    test_put64(golden + n + 16, 16);
    test_put32(golden + n + 24, 1);
    test_put32(golden + n + 28, 68608);
    n += 32;
    n += var(golden + n, "position 33 is not on a frame boundary");

    aa_archive_message_t msg = { .template_id = AA_ARCHIVE_TEMPLATE_CONTROL_RESPONSE };
    msg.control_response.control_session_id = 7;
    msg.control_response.correlation_id = -3;
    msg.control_response.relevant_id = AA_ARCHIVE_ERROR_INVALID_POSITION;
    msg.control_response.code = AA_ARCHIVE_RESPONSE_ERROR;
    msg.control_response.version = AA_ARCHIVE_PROTOCOL_SEMANTIC_VERSION;
    msg.control_response.error_message = str("position 33 is not on a frame boundary");
    AA_CHECK_EQ(aa_archive_encoded_length(&msg), (int64_t)n);
    memset(g_buf, 0xAA, sizeof(g_buf));
    AA_CHECK_EQ(aa_archive_encode(g_buf, sizeof(g_buf), &msg), (int64_t)n);
    AA_CHECK(0 == memcmp(g_buf, golden, n));
    AA_CHECK_EQ(g_buf[n], 0xAA);
    /* one byte too small: refused, nothing past capacity written */
    memset(g_buf, 0xAA, sizeof(g_buf));
    AA_CHECK_EQ(aa_archive_encode(g_buf, n - 1, &msg), -1);
    AA_CHECK_EQ(aa_errcode(), AA_ERROR_CODE_INVALID_ARGUMENT);
    AA_CHECK_EQ(g_buf[n - 1], 0xAA);

    aa_archive_message_t out;
    uint8_t *copy;
    AA_CHECK_EQ(decode_copy(golden, n, &out, &copy), (int64_t)n);
    AA_CHECK_EQ(out.template_id, 1);
    AA_CHECK_EQ(out.schema_id, 101);
    AA_CHECK_EQ(out.block_length, 32);
    AA_CHECK_EQ(out.version, 14);
    AA_CHECK_EQ(out.control_response.control_session_id, 7);
    AA_CHECK_EQ(out.control_response.correlation_id, -3);
    AA_CHECK_EQ(out.control_response.relevant_id, 16);
    AA_CHECK_EQ(out.control_response.code, 1);
    AA_CHECK_EQ(out.control_response.version, 68608);
    check_var(out.control_response.error_message, "position 33 is not on a frame boundary");
    AA_CHECK(out.control_response.error_message.data == copy + 44);
    free(copy);
}

static void should_encode_auth_connect_with_three_var_fields(void)
{
    uint8_t golden[128] = { 0 };
    size_t n = header(golden, 16, 58, 101, 14);
    test_put64(golden + n, 99);
    test_put32(golden + n + 8, 20);
    test_put32(golden + n + 12, 68608);
    n += 16;
    n += var(golden + n, "aeron:udp?endpoint=localhost:0");
    n += var(golden + n, "");
    n += var(golden + n, "py");

    aa_archive_message_t msg = { .template_id = AA_ARCHIVE_TEMPLATE_AUTH_CONNECT_REQUEST };
    msg.auth_connect_request.correlation_id = 99;
    msg.auth_connect_request.response_stream_id = 20;
    msg.auth_connect_request.version = AA_ARCHIVE_PROTOCOL_SEMANTIC_VERSION;
    msg.auth_connect_request.response_channel = str("aeron:udp?endpoint=localhost:0");
    msg.auth_connect_request.client_info = str("py");
    AA_CHECK_EQ(aa_archive_encode(g_buf, sizeof(g_buf), &msg), (int64_t)n);
    AA_CHECK(0 == memcmp(g_buf, golden, n));

    aa_archive_message_t out;
    uint8_t *copy;
    AA_CHECK_EQ(decode_copy(golden, n, &out, &copy), (int64_t)n);
    check_var(out.auth_connect_request.response_channel, "aeron:udp?endpoint=localhost:0");
    AA_CHECK_EQ(out.auth_connect_request.encoded_credentials.length, 0);
    check_var(out.auth_connect_request.client_info, "py");
    free(copy);

    /* version 11 predates clientInfo (since 12): the message ends after the credentials */
    test_put16(golden + 6, 11);
    size_t n11 = n - 6;
    AA_CHECK_EQ(decode_copy(golden, n11, &out, &copy), (int64_t)n11);
    AA_CHECK_EQ(out.auth_connect_request.client_info.length, 0);
    AA_CHECK(NULL == out.auth_connect_request.client_info.data);
    free(copy);
}

static void should_apply_sbe_version_rules_to_replay_request(void)
{
    /* a version 6 ReplayRequest (before fileIoMaxLength v7 and replayToken v10): block 44 */
    uint8_t golden[128] = { 0 };
    size_t n = header(golden, 44, 6, 101, 6);
    test_put64(golden + n, 1);
    test_put64(golden + n + 8, 2);
    test_put64(golden + n + 16, 3);
    test_put64(golden + n + 24, 4096);
    test_put64(golden + n + 32, -1);
    test_put32(golden + n + 40, 1001);
    n += 44;
    n += var(golden + n, "aeron:ipc");

    aa_archive_message_t out;
    uint8_t *copy;
    AA_CHECK_EQ(decode_copy(golden, n, &out, &copy), (int64_t)n);
    AA_CHECK_EQ(out.replay_request.recording_id, 3);
    AA_CHECK_EQ(out.replay_request.position, 4096);
    AA_CHECK_EQ(out.replay_request.length, -1);
    AA_CHECK_EQ(out.replay_request.replay_stream_id, 1001);
    AA_CHECK_EQ(out.replay_request.file_io_max_length, INT32_MIN);
    AA_CHECK_EQ(out.replay_request.replay_token, INT64_MIN);
    check_var(out.replay_request.replay_channel, "aeron:ipc");
    free(copy);

    /* the same short block claiming version 14 lacks fields that version has: malformed */
    test_put16(golden + 6, 14);
    AA_CHECK_EQ(decode_copy(golden, n, &out, &copy), -1);
    AA_CHECK_EQ(aa_errcode(), AA_ERROR_CODE_MALFORMED_COMMAND);
    AA_CHECK(NULL != strstr(aa_errmsg(), "fileIoMaxLength"));
    free(copy);

    /* a longer block from a newer schema: the extra bytes are skipped, var data read after them */
    uint8_t longer[128] = { 0 };
    size_t m = header(longer, 64, 6, 101, 15);
    test_put64(longer + m + 16, 5);
    test_put32(longer + m + 44, 65536);
    test_put64(longer + m + 48, 77);
    memset(longer + m + 56, 0xEE, 8);
    m += 64;
    m += var(longer + m, "aeron:ipc?x=1");
    AA_CHECK_EQ(decode_copy(longer, m, &out, &copy), (int64_t)m);
    AA_CHECK_EQ(out.replay_request.recording_id, 5);
    AA_CHECK_EQ(out.replay_request.file_io_max_length, 65536);
    AA_CHECK_EQ(out.replay_request.replay_token, 77);
    check_var(out.replay_request.replay_channel, "aeron:ipc?x=1");
    free(copy);
}

static void should_encode_recording_signal_and_mark_file_header(void)
{
    uint8_t golden[256] = { 0 };
    size_t n = header(golden, 44, 24, 101, 14);
    test_put64(golden + n, 1);
    test_put64(golden + n + 8, 2);
    test_put64(golden + n + 16, 3);
    test_put64(golden + n + 24, 4);
    test_put64(golden + n + 32, 5);
    test_put32(golden + n + 40, AA_ARCHIVE_SIGNAL_DELETE);
    n += 44;
    aa_archive_message_t msg = { .template_id = AA_ARCHIVE_TEMPLATE_RECORDING_SIGNAL_EVENT };
    msg.recording_signal_event.control_session_id = 1;
    msg.recording_signal_event.correlation_id = 2;
    msg.recording_signal_event.recording_id = 3;
    msg.recording_signal_event.subscription_id = 4;
    msg.recording_signal_event.position = 5;
    msg.recording_signal_event.signal = AA_ARCHIVE_SIGNAL_DELETE;
    AA_CHECK_EQ(aa_archive_encode(g_buf, sizeof(g_buf), &msg), (int64_t)n);
    AA_CHECK(0 == memcmp(g_buf, golden, n));

    /* MarkFileHeader: schema 100 v2, explicit offsets with zeroed pads */
    memset(golden, 0, sizeof(golden));
    n = header(golden, 128, 200, 100, 2);
    test_put32(golden + n, 1);
    test_put64(golden + n + 8, 1000);
    test_put64(golden + n + 16, 999);
    test_put64(golden + n + 24, 4242);
    test_put32(golden + n + 32, 10);
    test_put32(golden + n + 36, 10);
    test_put32(golden + n + 40, 30);
    test_put32(golden + n + 44, 8192);
    test_put32(golden + n + 48, 1048576);
    test_put64(golden + n + 56, -1);
    n += 128;
    n += var(golden + n, "aeron:udp?endpoint=localhost:8010");
    n += var(golden + n, "aeron:ipc?term-length=64k");
    n += var(golden + n, "");
    n += var(golden + n, "/dev/shm/aeron");
    memset(&msg, 0x5A, sizeof(msg));
    msg.template_id = AA_ARCHIVE_TEMPLATE_MARK_FILE_HEADER;
    aa_archive_mark_file_header_t *h = &msg.mark_file_header;
    h->version = 1;
    h->activity_timestamp = 1000;
    h->start_timestamp = 999;
    h->pid = 4242;
    h->control_stream_id = 10;
    h->local_control_stream_id = 10;
    h->events_stream_id = 30;
    h->header_length = 8192;
    h->error_buffer_length = 1048576;
    h->archive_id = -1;
    h->control_channel = str("aeron:udp?endpoint=localhost:8010");
    h->local_control_channel = str("aeron:ipc?term-length=64k");
    h->events_channel.data = NULL;
    h->events_channel.length = 0;
    h->aeron_directory = str("/dev/shm/aeron");
    AA_CHECK_EQ(aa_archive_encode(g_buf, sizeof(g_buf), &msg), (int64_t)n);
    AA_CHECK(0 == memcmp(g_buf, golden, n));
    /* the file offsets of the fields the archive updates in place */
    int64_t at;
    memcpy(&at, g_buf + AA_ARCHIVE_MARK_FILE_ACTIVITY_TIMESTAMP_OFFSET, 8);
    AA_CHECK_EQ(at, 1000);
    memcpy(&at, g_buf + AA_ARCHIVE_MARK_FILE_START_TIMESTAMP_OFFSET, 8);
    AA_CHECK_EQ(at, 999);
    memcpy(&at, g_buf + AA_ARCHIVE_MARK_FILE_PID_OFFSET, 8);
    AA_CHECK_EQ(at, 4242);
    memcpy(&at, g_buf + AA_ARCHIVE_MARK_FILE_ARCHIVE_ID_OFFSET, 8);
    AA_CHECK_EQ(at, -1);
    int32_t version;
    memcpy(&version, g_buf + AA_ARCHIVE_MARK_FILE_VERSION_OFFSET, 4);
    AA_CHECK_EQ(version, 1);
    AA_CHECK((size_t)n <= AA_ARCHIVE_MARK_FILE_HEADER_LENGTH);
    aa_archive_message_t out;
    uint8_t *copy;
    AA_CHECK_EQ(decode_copy(golden, n, &out, &copy), (int64_t)n);
    AA_CHECK_EQ(out.mark_file_header.archive_id, -1);
    check_var(out.mark_file_header.aeron_directory, "/dev/shm/aeron");
    free(copy);
    /* schema 101 claimed for template 200: refused */
    test_put16(golden + 4, 101);
    AA_CHECK_EQ(decode_copy(golden, n, &out, &copy), -1);
    free(copy);
}

static void should_reject_unknown_templates_and_bad_lengths(void)
{
    aa_archive_message_t out;
    uint8_t bytes[64] = { 0 };
    uint8_t *copy;
    header(bytes, 8, 2, 101, 14); /* ConnectRequest: removed in v14 */
    AA_CHECK_EQ(decode_copy(bytes, 16, &out, &copy), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "unknown archive message template id 2"));
    free(copy);
    header(bytes, 8, 106, 101, 14); /* Ping */
    AA_CHECK_EQ(decode_copy(bytes, 16, &out, &copy), 16);
    free(copy);
    header(bytes, 9, 106, 101, 14); /* block past the end */
    AA_CHECK_EQ(decode_copy(bytes, 16, &out, &copy), -1);
    free(copy);
    AA_CHECK_EQ(decode_copy(bytes, 7, &out, &copy), -1);
    free(copy);
    /* a var length past the end, and one over 2^30 */
    size_t n = header(bytes, 20, 5, 101, 14) + 20;
    test_put32(bytes + n, 5);
    memcpy(bytes + n + 4, "abcd", 4);
    AA_CHECK_EQ(decode_copy(bytes, n + 8, &out, &copy), -1);
    free(copy);
    test_put32(bytes + n, 4);
    AA_CHECK_EQ(decode_copy(bytes, n + 8, &out, &copy), (int64_t)(n + 8));
    free(copy);
    test_put32(bytes + n, (int32_t)0x80000000u);
    AA_CHECK_EQ(decode_copy(bytes, n + 8, &out, &copy), -1);
    free(copy);
    /* encoders refuse unknown templates and var fields with no data */
    aa_archive_message_t msg = { .template_id = 2 };
    AA_CHECK_EQ(aa_archive_encode(g_buf, sizeof(g_buf), &msg), -1);
    msg.template_id = AA_ARCHIVE_TEMPLATE_STOP_RECORDING_REQUEST;
    msg.stop_recording_request.channel.length = 3;
    AA_CHECK_EQ(aa_archive_encode(g_buf, sizeof(g_buf), &msg), -1);
    AA_CHECK_EQ(aa_archive_encoded_length(&msg), -1);
}

static uint64_t g_rng = 0x9E3779B97F4A7C15ULL;

static uint64_t next_random(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

/* every template: encode with random fields and vars, decode back equal; every truncation fails;
 * random byte flips decode or fail, never touching bytes outside the message (ASan) */
static void should_round_trip_every_template_and_survive_corruption(void)
{
    static const char *const strings[] = { "", "aeron:ipc", "aeron:udp?endpoint=localhost:40123|mtu=1408" };
    int32_t templates = 0;
    for (int32_t id = 0; id < 300; id++)
    {
        if (NULL == aa_archive_template_name(id))
        {
            continue;
        }
        templates++;
        aa_archive_message_t msg;
        uint8_t *raw = (uint8_t *)&msg;
        for (size_t i = 0; i < sizeof(msg); i++)
        {
            raw[i] = (uint8_t)next_random();
        }
        msg.template_id = id;
        /* the var fields: every aa_archive_var_t of the struct is found by decoding an encoding of
         * zero-length vars; set them through a decode of a message with known strings instead */
        uint8_t built[512];
        size_t n = header(built, (uint16_t)aa_archive_template_block_length(id), (uint16_t)id,
            (uint16_t)aa_archive_template_schema_id(id), 200 == id ? 2 : 14);
        for (int32_t i = 0; i < aa_archive_template_block_length(id); i++)
        {
            built[n++] = (uint8_t)next_random();
        }
        for (int32_t v = 0; v < aa_archive_template_var_count(id); v++)
        {
            n += var(built + n, strings[next_random() % 3]);
        }
        aa_archive_message_t decoded;
        AA_CHECK_EQ(aa_archive_decode(built, n, &decoded), (int64_t)n);
        /* re-encoding gives the same bytes, except explicit pads, which encoders zero */
        AA_CHECK_EQ(aa_archive_encode(g_buf, sizeof(g_buf), &decoded), (int64_t)n);
        aa_archive_message_t again;
        AA_CHECK_EQ(aa_archive_decode(g_buf, n, &again), (int64_t)n);
        AA_CHECK(0 == memcmp(g_buf + 8 + aa_archive_template_block_length(id), built + 8 + aa_archive_template_block_length(id),
            n - 8 - (size_t)aa_archive_template_block_length(id)));

        for (size_t cut = 0; cut < n; cut++)
        {
            uint8_t *copy;
            int64_t r = decode_copy(built, cut, &decoded, &copy);
            /* only a message with a trailing empty var... can never end early: every var has a length */
            AA_CHECK_EQ(r, -1);
            free(copy);
        }
        for (int round = 0; round < 200; round++)
        {
            uint8_t mutated[512];
            memcpy(mutated, built, n);
            int flips = 1 + (int)(next_random() % 4);
            for (int f = 0; f < flips; f++)
            {
                mutated[next_random() % n] = (uint8_t)next_random();
            }
            size_t length = n - (next_random() % 2 ? 0 : next_random() % n);
            uint8_t *copy;
            int64_t r = decode_copy(mutated, length, &decoded, &copy);
            AA_CHECK(r == -1 || (r >= 8 && (size_t)r <= length));
            free(copy);
        }
    }
    AA_CHECK_EQ(templates, 50);
}

static void should_name_codes_and_signals(void)
{
    AA_CHECK(0 == strcmp(aa_archive_response_code_name(AA_ARCHIVE_RESPONSE_RECORDING_UNKNOWN), "RECORDING_UNKNOWN"));
    AA_CHECK(0 == strcmp(aa_archive_error_code_name(AA_ARCHIVE_ERROR_INVALID_POSITION), "INVALID_POSITION"));
    AA_CHECK(0 == strcmp(aa_archive_signal_name(AA_ARCHIVE_SIGNAL_REPLICATE_END), "REPLICATE_END"));
    AA_CHECK(NULL == aa_archive_signal_name(8));
    AA_CHECK(NULL == aa_archive_error_code_name(-1));
    AA_CHECK(0 == strcmp(aa_archive_template_name(63), "StartRecordingRequest2"));
    AA_CHECK_EQ(aa_archive_template_block_length(18), 60);
}

int main(void)
{
    AA_RUN(should_encode_control_response_as_laid_out);
    AA_RUN(should_encode_auth_connect_with_three_var_fields);
    AA_RUN(should_apply_sbe_version_rules_to_replay_request);
    AA_RUN(should_encode_recording_signal_and_mark_file_header);
    AA_RUN(should_reject_unknown_templates_and_bad_lengths);
    AA_RUN(should_round_trip_every_template_and_survive_corruption);
    AA_RUN(should_name_codes_and_signals);
    return 0;
}
