/* Timestamps written into DATA frames (media/aa_timestamps.h; reference wave 3, section 3): where a stamp
 * goes (payload offset, the header's reserved value, skipped when it does not fit), which frames the
 * sender and the receiver stamp, one clock read per datagram; a send channel endpoint stamping in place
 * just before the datagram leaves, and a receive channel endpoint stamping before the copy into the image,
 * each with a test clock; endpoints whose channel asks for none leave frames as they are. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "aa_media_fakes.h"
#include "media/aa_publication_image.h"
#include "media/aa_receive_channel_endpoint.h"
#include "media/aa_send_channel_endpoint.h"
#include "media/aa_timestamps.h"
#include "protocols/aa_udp_frames.h"

#define SESSION_ID 9
#define STREAM_ID 2002
#define INITIAL_TERM_ID 500
#define TERM_LENGTH (64 * 1024)
#define MS (1000 * 1000LL)

typedef struct counting_clock_stct
{
    int64_t now_ns;
    int reads;
}
counting_clock_t;

static int64_t counting_clock_read(void *clientd)
{
    counting_clock_t *clock = clientd;
    clock->reads++;
    return clock->now_ns;
}

static int64_t read_int64(const uint8_t *at)
{
    int64_t value;
    memcpy(&value, at, sizeof(value));
    return value;
}

/* A DATA frame with a payload of payload_length bytes of fill at buffer; returns its aligned length. */
static int32_t put_data(uint8_t *buffer, size_t capacity, uint8_t flags, int32_t term_offset, size_t payload_length)
{
    uint8_t payload[512];
    memset(payload, 0xAB, sizeof(payload));
    int32_t length = aa_udp_frame_encode_data(
        buffer, capacity, flags, term_offset, SESSION_ID, STREAM_ID, INITIAL_TERM_ID, 0, payload, payload_length);
    AA_CHECK(length > 0);
    return length;
}

static void should_write_at_the_payload_offset_or_the_reserved_value_and_skip_what_does_not_fit(void)
{
    uint8_t frame[128];
    int32_t frame_length = AA_DATA_HEADER_LENGTH + 40;
    put_data(frame, sizeof(frame), AA_DATA_HEADER_UNFRAGMENTED, 0, 40);

    aa_timestamps_set_timestamp(frame, frame_length, 8, 0x1122334455667788LL);
    AA_CHECK_EQ(read_int64(frame + AA_DATA_HEADER_LENGTH + 8), 0x1122334455667788LL);
    AA_CHECK_EQ(frame[AA_DATA_HEADER_LENGTH + 7], 0xAB);
    AA_CHECK_EQ(frame[AA_DATA_HEADER_LENGTH + 16], 0xAB);

    aa_timestamps_set_timestamp(frame, frame_length, AA_UDP_CHANNEL_TIMESTAMP_RESERVED, 42);
    AA_CHECK_EQ(read_int64(frame + 24), 42);

    aa_timestamps_set_timestamp(frame, frame_length, 32, 7);     /* 32 + 8 == 40: the last 8 bytes */
    AA_CHECK_EQ(read_int64(frame + AA_DATA_HEADER_LENGTH + 32), 7);
    uint8_t before[128];
    memcpy(before, frame, sizeof(frame));
    aa_timestamps_set_timestamp(frame, frame_length, 33, 9);     /* would end past the payload */
    aa_timestamps_set_timestamp(frame, frame_length, AA_UDP_CHANNEL_TIMESTAMP_OFF, 9);
    AA_CHECK_EQ(memcmp(before, frame, sizeof(frame)), 0);
}

static void should_stamp_the_first_data_frame_of_a_sent_datagram_only(void)
{
    uint8_t datagram[512];
    memset(datagram, 0, sizeof(datagram));
    int32_t first = put_data(datagram, sizeof(datagram), AA_DATA_HEADER_BEGIN_FLAG, 0, 40);
    int32_t second = put_data(datagram + first, sizeof(datagram) - (size_t)first, AA_DATA_HEADER_UNFRAGMENTED, first, 40);
    aa_timestamps_stamp_sent(datagram, (size_t)(first + second), 0, 1000);
    AA_CHECK_EQ(read_int64(datagram + AA_DATA_HEADER_LENGTH), 1000);
    AA_CHECK_EQ(datagram[first + AA_DATA_HEADER_LENGTH], 0xAB);

    /* a heartbeat (frame_length 0) and a SETUP are left alone */
    uint8_t heartbeat[AA_DATA_HEADER_LENGTH];
    AA_CHECK(aa_udp_frame_encode_heartbeat(heartbeat, sizeof(heartbeat), 0, SESSION_ID, STREAM_ID, INITIAL_TERM_ID, false) > 0);
    uint8_t heartbeat_before[AA_DATA_HEADER_LENGTH];
    memcpy(heartbeat_before, heartbeat, sizeof(heartbeat));
    aa_timestamps_stamp_sent(heartbeat, sizeof(heartbeat), AA_UDP_CHANNEL_TIMESTAMP_RESERVED, 1000);
    AA_CHECK_EQ(memcmp(heartbeat, heartbeat_before, sizeof(heartbeat)), 0);
    uint8_t setup[AA_SETUP_HEADER_LENGTH];
    int32_t setup_length = aa_udp_frame_encode_setup(
        setup, sizeof(setup), 0, 0, SESSION_ID, STREAM_ID, INITIAL_TERM_ID, INITIAL_TERM_ID, TERM_LENGTH, 1408, 0);
    uint8_t setup_before[AA_SETUP_HEADER_LENGTH];
    memcpy(setup_before, setup, sizeof(setup));
    aa_timestamps_stamp_sent(setup, (size_t)setup_length, AA_UDP_CHANNEL_TIMESTAMP_RESERVED, 1000);
    AA_CHECK_EQ(memcmp(setup, setup_before, sizeof(setup)), 0);
}

static void should_stamp_every_beginning_data_frame_received_with_one_clock_read(void)
{
    uint8_t datagram[1024];
    memset(datagram, 0, sizeof(datagram));
    size_t at = 0;
    at += (size_t)put_data(datagram + at, sizeof(datagram) - at, AA_DATA_HEADER_UNFRAGMENTED, 0, 40);
    size_t middle = at;
    at += (size_t)put_data(datagram + at, sizeof(datagram) - at, AA_DATA_HEADER_END_FLAG, (int32_t)at, 40);
    size_t third = at;
    at += (size_t)put_data(datagram + at, sizeof(datagram) - at, AA_DATA_HEADER_BEGIN_FLAG, (int32_t)at, 40);
    counting_clock_t clock = { 5000, 0 };
    aa_timestamps_stamp_received(datagram, at, 0, counting_clock_read, &clock, 8, true, 4000);
    AA_CHECK_EQ(clock.reads, 1);
    AA_CHECK_EQ(read_int64(datagram + AA_DATA_HEADER_LENGTH), 5000);
    AA_CHECK_EQ(read_int64(datagram + AA_DATA_HEADER_LENGTH + 8), 4000);
    AA_CHECK_EQ(datagram[middle + AA_DATA_HEADER_LENGTH], 0xAB);       /* no B flag: not stamped */
    AA_CHECK_EQ(read_int64(datagram + third + AA_DATA_HEADER_LENGTH), 5000);
    AA_CHECK_EQ(read_int64(datagram + third + AA_DATA_HEADER_LENGTH + 8), 4000);

    /* a frame cut short by the datagram's end is not stamped, and a datagram with nothing to stamp reads no clock */
    uint8_t cut[256];
    memset(cut, 0, sizeof(cut));
    put_data(cut, sizeof(cut), AA_DATA_HEADER_UNFRAGMENTED, 0, 100);
    aa_timestamps_stamp_received(cut, 64, 0, counting_clock_read, &clock, AA_UDP_CHANNEL_TIMESTAMP_OFF, false, 0);
    AA_CHECK_EQ(clock.reads, 1);
    AA_CHECK_EQ(cut[AA_DATA_HEADER_LENGTH], 0xAB);
    /* no kernel time: the media offset is left alone */
    aa_timestamps_stamp_received(datagram, at, AA_UDP_CHANNEL_TIMESTAMP_OFF, counting_clock_read, &clock,
        AA_UDP_CHANNEL_TIMESTAMP_RESERVED, false, 0);
    AA_CHECK_EQ(read_int64(datagram + 24), 0);
    AA_CHECK_EQ(clock.reads, 1);
}

/* A send endpoint over a fake wire; datagram points at the "term buffer" the test holds. */
static void send_one(const char *uri, uint8_t *term, size_t length, counting_clock_t *clock, fake_media_t *m)
{
    fake_media_init(m, uri);
    aa_send_channel_endpoint_t *endpoint = NULL;
    AA_CHECK(0 == aa_send_channel_endpoint_create(&endpoint, m->channel, &m->transports, &m->services.services));
    endpoint->timestamp_clock = counting_clock_read;
    endpoint->timestamp_clock_clientd = clock;
    aa_udp_datagram_t datagram = fake_datagram(term, (int32_t)length, NULL);
    AA_CHECK_EQ(aa_send_channel_endpoint_send(endpoint, &datagram, 1), 1);
    aa_send_channel_endpoint_delete(endpoint);
}

static void should_stamp_in_place_just_before_sending_when_the_channel_asks(void)
{
    uint8_t term[256];
    memset(term, 0, sizeof(term));
    int32_t length = put_data(term, sizeof(term), AA_DATA_HEADER_UNFRAGMENTED, 0, 64);
    counting_clock_t clock = { 123456789, 0 };
    fake_media_t m;
    send_one("aeron:udp?endpoint=127.0.0.1:40456|channel-snd-ts-offset=16", term, (size_t)length, &clock, &m);
    AA_CHECK_EQ(clock.reads, 1);
    AA_CHECK_EQ(read_int64(term + AA_DATA_HEADER_LENGTH + 16), 123456789);            /* in the log itself */
    AA_CHECK_EQ(m.wire.sent_count, 1);
    AA_CHECK_EQ(read_int64(m.wire.sent[0].data + AA_DATA_HEADER_LENGTH + 16), 123456789);  /* and on the wire */

    clock.now_ns = 987654321;   /* a retransmit of the same frame is stamped again */
    send_one("aeron:udp?endpoint=127.0.0.1:40456|channel-snd-ts-offset=reserved", term, (size_t)length, &clock, &m);
    AA_CHECK_EQ(read_int64(term + 24), 987654321);

    uint8_t plain[256];
    memcpy(plain, term, sizeof(plain));
    send_one("aeron:udp?endpoint=127.0.0.1:40456", term, (size_t)length, &clock, &m);
    AA_CHECK_EQ(clock.reads, 2);
    AA_CHECK_EQ(memcmp(plain, term, sizeof(plain)), 0);
}

typedef struct receive_fixture_stct
{
    fake_media_t media;
    aa_receive_channel_endpoint_t *endpoint;
    aa_publication_image_t *image;
    uint8_t *memory;
    volatile int64_t rcv_hwm, rcv_pos, sub_pos;
    struct sockaddr_storage source;
    counting_clock_t clock;
}
receive_fixture_t;

static void receive_fixture_init(receive_fixture_t *f, const char *uri)
{
    memset(f, 0, sizeof(*f));
    fake_media_init(&f->media, uri);
    aa_receive_channel_endpoint_params_t params = { .window_length = 32 * 1024, .nak_delay_ns = MS, .is_reliable = true };
    AA_CHECK(0 == aa_receive_channel_endpoint_create(
        &f->endpoint, f->media.channel, &params, &f->media.transports, &f->media.services.services));
    f->clock.now_ns = 1700000000123456789LL;
    f->endpoint->timestamp_clock = counting_clock_read;
    f->endpoint->timestamp_clock_clientd = &f->clock;
    AA_CHECK(0 == aa_receive_channel_endpoint_add_stream(f->endpoint, STREAM_ID));
    f->source = test_ipv4_address("10.0.0.1", 5000);
    f->image = calloc(1, sizeof(aa_publication_image_t));
    AA_CHECK(NULL != f->image);
    aa_publication_image_params_t image_params =
    {
        .correlation_id = 5, .ids = { SESSION_ID, STREAM_ID, INITIAL_TERM_ID, TERM_LENGTH, 1408 },
        .active_term_id = INITIAL_TERM_ID, .window_length = 32 * 1024, .status_message_timeout_ns = 200 * MS,
        .nak_delay_ns = MS, .nak_retry_delay_ratio = 10, .is_reliable = true,
    };
    AA_CHECK(0 == aa_publication_image_init(f->image, &image_params, 0, &f->media.services.services));
    f->memory = fake_image_log(f->image, &image_params);
    f->image->endpoint = f->endpoint;
    f->image->control_address = f->source;
    f->image->control_address_length = sizeof(struct sockaddr_in);
    f->image->source_address = f->source;
    f->image->rcv_hwm = &f->rcv_hwm;
    f->image->rcv_pos = &f->rcv_pos;
    AA_CHECK(0 == aa_publication_image_add_subscriber(f->image, 77, 1, 3, &f->sub_pos, true, 0));
    AA_CHECK(0 == aa_receive_channel_endpoint_add_image(f->endpoint, f->image));
}

static void receive_fixture_close(receive_fixture_t *f)
{
    aa_receive_channel_endpoint_delete(f->endpoint);
    aa_publication_image_free(f->image);
    free(f->memory);
}

static void receive_one(receive_fixture_t *f, int64_t media_ns)
{
    uint8_t frame[256];
    memset(frame, 0, sizeof(frame));
    int32_t length = put_data(frame, sizeof(frame), AA_DATA_HEADER_UNFRAGMENTED, 0, 64);
    aa_udp_datagram_t datagram = fake_datagram(frame, length, &f->source);
    datagram.media_rcv_timestamp_ns = media_ns;
    aa_receive_channel_endpoint_on_datagram(f->endpoint, &datagram, MS);
}

static void should_stamp_received_frames_before_they_reach_the_image(void)
{
    receive_fixture_t f;
    receive_fixture_init(&f, "aeron:udp?endpoint=127.0.0.1:40457|channel-rcv-ts-offset=0|media-rcv-ts-offset=reserved");
    AA_CHECK(f.endpoint->has_receive_timestamps);
    receive_one(&f, 1700000000000000001LL);
    const uint8_t *term = f.image->log.term_buffers[0];
    AA_CHECK_EQ(aa_frame_length_volatile(term, 0), AA_DATA_HEADER_LENGTH + 64);
    AA_CHECK_EQ(read_int64(term + AA_DATA_HEADER_LENGTH), 1700000000123456789LL);
    AA_CHECK_EQ(read_int64(term + 24), 1700000000000000001LL);
    AA_CHECK_EQ(f.clock.reads, 1);
    receive_fixture_close(&f);

    receive_fixture_init(&f, "aeron:udp?endpoint=127.0.0.1:40457");
    AA_CHECK(!f.endpoint->has_receive_timestamps);
    receive_one(&f, 1700000000000000001LL);
    term = f.image->log.term_buffers[0];
    AA_CHECK_EQ(aa_frame_length_volatile(term, 0), AA_DATA_HEADER_LENGTH + 64);
    AA_CHECK_EQ(term[AA_DATA_HEADER_LENGTH], 0xAB);
    AA_CHECK_EQ(read_int64(term + 24), 0);
    AA_CHECK_EQ(f.clock.reads, 0);
    receive_fixture_close(&f);
}

int main(void)
{
    AA_RUN(should_write_at_the_payload_offset_or_the_reserved_value_and_skip_what_does_not_fit);
    AA_RUN(should_stamp_the_first_data_frame_of_a_sent_datagram_only);
    AA_RUN(should_stamp_every_beginning_data_frame_received_with_one_clock_read);
    AA_RUN(should_stamp_in_place_just_before_sending_when_the_channel_asks);
    AA_RUN(should_stamp_received_frames_before_they_reach_the_image);
    return 0;
}
