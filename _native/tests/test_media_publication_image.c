/* The publication image and its receive channel endpoint, through a fake wire and fake media
 * services, with time moved by hand: SETUP asking for an image, late joiners asked for SETUP, data
 * rebuilt into the log, status messages and their cadence, gaps NAKed after the NAK delay (or filled
 * when unreliable) and each of those recorded in the loss report, end of stream, window over-runs and
 * the endpoint's session expiry; the endpoint's bounds on images and term lengths, and frames taken
 * only from an image's source. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "aa_media_fakes.h"
#include "media/aa_publication_image.h"
#include "media/aa_receive_channel_endpoint.h"
#include "protocols/aa_udp_frames.h"

#define TERM_LENGTH (64 * 1024)
#define MTU 1408
#define SESSION_ID 9
#define STREAM_ID 2002
#define INITIAL_TERM_ID 500
#define WINDOW (32 * 1024)
#define MS (1000 * 1000LL)
#define T0 (1000 * 1000 * MS)
#define NAK_DELAY_NS (1 * MS)
#define NAK_RETRY_RATIO 10
#define SM_TIMEOUT_NS (200 * MS)

typedef struct fixture_stct
{
    fake_media_t media;   /* services, wire, the endpoint's transports and channel */
    aa_receive_channel_endpoint_t *endpoint;
    aa_publication_image_t *image;
    uint8_t *memory;
    volatile int64_t rcv_hwm;
    volatile int64_t rcv_pos;
    volatile int64_t sub_pos;
    struct sockaddr_storage source;
}
fixture_t;

/* An endpoint with the given bounds (0: none) on what it takes from the network. */
static void fixture_init_bounded_endpoint(fixture_t *f, int32_t max_images, int32_t max_of_stream, int32_t max_term_length)
{
    memset(f, 0, sizeof(*f));
    fake_media_init(&f->media, "aeron:udp?endpoint=127.0.0.1:40457");
    aa_receive_channel_endpoint_params_t params =
    {
        .window_length = WINDOW, .nak_delay_ns = NAK_DELAY_NS, .is_reliable = true, .max_images = max_images,
        .max_sessions_per_stream = max_of_stream, .max_term_length = max_term_length,
    };
    AA_CHECK(0 == aa_receive_channel_endpoint_create(
        &f->endpoint, f->media.channel, &params, &f->media.transports, &f->media.services.services));
    AA_CHECK(f->media.wire.transport == &f->endpoint->transport);
    AA_CHECK(0 == aa_receive_channel_endpoint_add_stream(f->endpoint, STREAM_ID));

    f->source = test_ipv4_address("10.0.0.1", 5000);
}

static void fixture_init_endpoint(fixture_t *f)
{
    fixture_init_bounded_endpoint(f, 0, 0, 0);
}

/* An image as the conductor makes one, at position 0, with one subscriber at 0. */
static void fixture_add_image(fixture_t *f, bool is_reliable, int64_t now_ns)
{
    f->image = calloc(1, sizeof(aa_publication_image_t));
    AA_CHECK(NULL != f->image);
    aa_publication_image_params_t params =
    {
        .correlation_id = 5,
        .ids = { SESSION_ID, STREAM_ID, INITIAL_TERM_ID, TERM_LENGTH, MTU },
        .active_term_id = INITIAL_TERM_ID,
        .term_offset = 0,
        .window_length = WINDOW,
        .status_message_timeout_ns = SM_TIMEOUT_NS,
        .nak_delay_ns = NAK_DELAY_NS,
        .nak_retry_delay_ratio = NAK_RETRY_RATIO,
        .is_reliable = is_reliable,
    };
    AA_CHECK(0 == aa_publication_image_init(f->image, &params, now_ns, &f->media.services.services));
    f->memory = fake_image_log(f->image, &params);
    f->image->endpoint = f->endpoint;
    f->image->control_address = f->source;
    f->image->control_address_length = sizeof(struct sockaddr_in);
    f->image->source_address = f->source;
    f->image->rcv_hwm = &f->rcv_hwm;
    f->image->rcv_pos = &f->rcv_pos;
    AA_CHECK(0 == aa_publication_image_add_subscriber(f->image, 77, 1, 3, &f->sub_pos, true, now_ns));
    AA_CHECK(0 == aa_receive_channel_endpoint_add_image(f->endpoint, f->image));
}

static void fixture_close(fixture_t *f)
{
    aa_receive_channel_endpoint_delete(f->endpoint);
    if (NULL != f->image)
    {
        aa_publication_image_free(f->image);
        AA_CHECK_EQ(f->media.services.forgotten_mappings, 0);   /* never mapped by the driver */
    }
    free(f->memory);
}

static bool receive_from(fixture_t *f, const struct sockaddr_storage *source, uint8_t *frame, int32_t length, int64_t now_ns)
{
    AA_CHECK(length > 0);
    aa_udp_datagram_t datagram = fake_datagram(frame, length, source);
    return aa_receive_channel_endpoint_on_datagram(f->endpoint, &datagram, now_ns);
}

static bool receive(fixture_t *f, uint8_t *frame, int32_t length, int64_t now_ns)
{
    return receive_from(f, &f->source, frame, length, now_ns);
}

static void receive_setup(fixture_t *f, int32_t session_id, int32_t stream_id, int32_t term_length, int64_t now_ns)
{
    uint8_t frame[AA_SETUP_HEADER_LENGTH];
    int32_t length = aa_udp_frame_encode_setup(
        frame, sizeof(frame), 0, 0, session_id, stream_id, INITIAL_TERM_ID, INITIAL_TERM_ID, term_length, MTU, 0);
    receive(f, frame, length, now_ns);
}

/* A 100-byte message (a 160-byte frame) at term_offset, filled with fill, from source. */
static void receive_data_from(
    fixture_t *f, const struct sockaddr_storage *source, int32_t session_id, int32_t term_offset, uint8_t fill, int64_t now_ns)
{
    uint8_t payload[100];
    memset(payload, fill, sizeof(payload));
    uint8_t frame[256];
    int32_t length = aa_udp_frame_encode_data(
        frame, sizeof(frame), AA_DATA_HEADER_UNFRAGMENTED, term_offset, session_id, STREAM_ID, INITIAL_TERM_ID, 0,
        payload, sizeof(payload));
    AA_CHECK_EQ(length, 160);
    receive_from(f, source, frame, 132, now_ns);
}

/* A 100-byte message (a 160-byte frame) at term_offset, filled with fill. */
static void receive_data(fixture_t *f, int32_t session_id, int32_t term_offset, uint8_t fill, int64_t now_ns)
{
    uint8_t payload[100];
    memset(payload, fill, sizeof(payload));
    uint8_t frame[256];
    int32_t length = aa_udp_frame_encode_data(
        frame, sizeof(frame), AA_DATA_HEADER_UNFRAGMENTED, term_offset, session_id, STREAM_ID, INITIAL_TERM_ID, 0,
        payload, sizeof(payload));
    AA_CHECK_EQ(length, 160);
    receive(f, frame, 132, now_ns);
}

static void receive_heartbeat(fixture_t *f, int32_t term_offset, bool end_of_stream, int64_t now_ns)
{
    uint8_t frame[AA_DATA_HEADER_LENGTH];
    int32_t length = aa_udp_frame_encode_heartbeat(
        frame, sizeof(frame), term_offset, SESSION_ID, STREAM_ID, INITIAL_TERM_ID, end_of_stream);
    AA_CHECK(!receive(f, frame, length, now_ns));   /* a keepalive: no work */
}

static aa_status_message_header_t sent_sm(const fixture_t *f, size_t i)
{
    aa_udp_status_message_t sm;
    AA_CHECK_EQ(fake_wire_sent_type(&f->media.wire, i), AA_HDR_TYPE_SM);
    AA_CHECK(0 == aa_udp_frame_decode_status_message(f->media.wire.sent[i].data, f->media.wire.sent[i].length, &sm));
    AA_CHECK(aa_udp_address_equals(&f->media.wire.sent[i].address, &f->source));
    return sm.header;
}

static aa_nak_header_t sent_nak(const fixture_t *f, size_t i)
{
    aa_nak_header_t nak;
    AA_CHECK_EQ(fake_wire_sent_type(&f->media.wire, i), AA_HDR_TYPE_NAK);
    AA_CHECK(0 == aa_udp_frame_decode_nak(f->media.wire.sent[i].data, f->media.wire.sent[i].length, &nak));
    AA_CHECK(aa_udp_address_equals(&f->media.wire.sent[i].address, &f->source));
    return nak;
}

/* ---- the endpoint ---- */

/* Frames at 0 and 320 of term 0 arrive at T0 + 1 ms: a gap of 160 bytes at 160, seen at T0 + 2 ms. */
static void receive_a_gap(fixture_t *f)
{
    receive_data(f, SESSION_ID, 0, 'a', T0 + 1 * MS);
    receive_data(f, SESSION_ID, 320, 'c', T0 + 1 * MS);
    aa_publication_image_track_rebuild(f->image, T0 + 2 * MS);
    AA_CHECK_EQ(f->rcv_pos, 160);
}

/* A reliable or unreliable image, nothing of its start left on the wire, then the gap above. */
static void fixture_init_with_a_gap(fixture_t *f, bool is_reliable)
{
    fixture_init_endpoint(f);
    fixture_add_image(f, is_reliable, T0);
    aa_publication_image_track_rebuild(f->image, T0);
    f->media.wire.sent_count = 0;
    receive_a_gap(f);
}

static void should_ask_for_an_image_once_per_setup_of_a_subscribed_stream(void)
{
    fixture_t f;
    fixture_init_endpoint(&f);

    receive_setup(&f, SESSION_ID, STREAM_ID + 1, TERM_LENGTH, T0);
    AA_CHECK_EQ(f.media.services.image_requests, 0);

    receive_setup(&f, SESSION_ID, STREAM_ID, TERM_LENGTH, T0);
    AA_CHECK_EQ(f.media.services.image_requests, 1);
    AA_CHECK(f.media.services.last_request_endpoint == f.endpoint);
    AA_CHECK_EQ(f.media.services.last_request_setup.session_id, SESSION_ID);
    AA_CHECK_EQ(f.media.services.last_request_setup.stream_id, STREAM_ID);
    AA_CHECK_EQ(f.media.services.last_request_setup.term_length, TERM_LENGTH);
    AA_CHECK_EQ(f.media.services.last_request_setup.mtu, MTU);
    AA_CHECK(aa_udp_address_equals(&f.media.services.last_request_source, &f.source));

    /* the session is initialising for 1 s: repeated SETUPs do not ask again until then */
    receive_setup(&f, SESSION_ID, STREAM_ID, TERM_LENGTH, T0 + 999 * MS);
    AA_CHECK_EQ(f.media.services.image_requests, 1);
    receive_setup(&f, SESSION_ID, STREAM_ID, TERM_LENGTH, T0 + 1000 * MS);
    AA_CHECK_EQ(f.media.services.image_requests, 2);

    /* a SETUP no image could be made of is an invalid packet */
    receive_setup(&f, SESSION_ID + 1, STREAM_ID, 1000, T0 + 1001 * MS);
    AA_CHECK_EQ(f.media.services.image_requests, 2);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_INVALID_PACKETS), 1);
    fixture_close(&f);
}

static void should_ask_an_unknown_session_for_setup_once_per_second(void)
{
    fixture_t f;
    fixture_init_endpoint(&f);

    receive_data(&f, SESSION_ID, 0, 'a', T0);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_INVALID_PACKETS), 1);
    AA_CHECK_EQ(f.media.wire.sent_count, 1);
    aa_status_message_header_t sm = sent_sm(&f, 0);
    AA_CHECK(0 != (sm.frame_header.flags & AA_STATUS_MESSAGE_HEADER_SEND_SETUP_FLAG));
    AA_CHECK_EQ(sm.session_id, SESSION_ID);
    AA_CHECK_EQ(sm.stream_id, STREAM_ID);
    AA_CHECK_EQ(sm.receiver_id, f.endpoint->receiver_id);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_STATUS_MESSAGES_SENT), 1);

    receive_data(&f, SESSION_ID, 160, 'b', T0 + 999 * MS);
    AA_CHECK_EQ(f.media.wire.sent_count, 1);
    receive_data(&f, SESSION_ID, 320, 'c', T0 + 1000 * MS);
    AA_CHECK_EQ(f.media.wire.sent_count, 2);

    /* the pending session is forgotten once its second is up */
    AA_CHECK_EQ(f.endpoint->sessions_count, 1);
    aa_receive_channel_endpoint_expire_sessions(f.endpoint, T0 + 1999 * MS);
    AA_CHECK_EQ(f.endpoint->sessions_count, 1);
    aa_receive_channel_endpoint_expire_sessions(f.endpoint, T0 + 2000 * MS);
    AA_CHECK_EQ(f.endpoint->sessions_count, 0);

    /* nobody subscribes to this stream: dropped and counted, no SETUP asked for */
    uint8_t frame[256];
    uint8_t payload[4] = { 0 };
    int32_t length = aa_udp_frame_encode_data(
        frame, sizeof(frame), AA_DATA_HEADER_UNFRAGMENTED, 0, SESSION_ID, STREAM_ID + 1, INITIAL_TERM_ID, 0,
        payload, sizeof(payload));
    receive(&f, frame, length, T0 + 3000 * MS);
    AA_CHECK_EQ(f.media.wire.sent_count, 2);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_INVALID_PACKETS), 4);
    fixture_close(&f);
}

/* Multicast (reference 4.1, 7.2): control frames of a group go to the control group whatever the
 * source, and group= decides whether images get group semantics (infer: multicast or a SETUP with
 * the GROUP flag). */
static void should_send_control_frames_of_a_group_to_the_control_group(void)
{
    fake_media_t m;
    fake_media_init(&m, "aeron:udp?endpoint=224.0.1.1:40457");
    aa_receive_channel_endpoint_params_t params = { .window_length = WINDOW, .nak_delay_ns = NAK_DELAY_NS, .is_reliable = true };
    aa_receive_channel_endpoint_t *endpoint = NULL;
    AA_CHECK(0 == aa_receive_channel_endpoint_create(&endpoint, m.channel, &params, &m.transports, &m.services.services));
    AA_CHECK(0 == aa_receive_channel_endpoint_add_stream(endpoint, STREAM_ID));

    uint8_t frame[256];
    uint8_t payload[4] = { 0 };
    int32_t length = aa_udp_frame_encode_data(
        frame, sizeof(frame), AA_DATA_HEADER_UNFRAGMENTED, 0, SESSION_ID, STREAM_ID, INITIAL_TERM_ID, 0,
        payload, sizeof(payload));
    struct sockaddr_storage source = test_ipv4_address("10.0.0.1", 5000);
    aa_udp_datagram_t datagram = fake_datagram(frame, length, &source);
    aa_receive_channel_endpoint_on_datagram(endpoint, &datagram, T0);
    AA_CHECK_EQ(m.wire.sent_count, 1);   /* the SETUP request, to the control group */
    char text[AA_UDP_ADDRESS_FORMAT_MAX_LENGTH];
    aa_udp_address_format(text, sizeof(text), &m.wire.sent[0].address);
    AA_CHECK(0 == strcmp(text, "224.0.1.2:40457"));

    struct sockaddr_storage control;
    socklen_t control_length = 0;
    aa_receive_channel_endpoint_control_address(endpoint, &datagram.address, datagram.addr_len, &control, &control_length);
    AA_CHECK(aa_udp_address_equals(&control, &m.channel->remote_control));
    AA_CHECK_EQ(control_length, sizeof(struct sockaddr_in));

    AA_CHECK(aa_receive_channel_endpoint_image_is_group(endpoint, 0));
    endpoint->params.group = AA_RECEIVE_GROUP_FALSE;
    AA_CHECK(!aa_receive_channel_endpoint_image_is_group(endpoint, AA_SETUP_HEADER_GROUP_FLAG));
    aa_receive_channel_endpoint_delete(endpoint);

    /* unicast: the source, and a group only when the SETUP says so (or group=true) */
    AA_CHECK(0 == aa_udp_channel_parse(&m.channel, "aeron:udp?endpoint=127.0.0.1:40457", NULL));
    AA_CHECK(0 == aa_receive_channel_endpoint_create(&endpoint, m.channel, &params, &m.transports, &m.services.services));
    aa_receive_channel_endpoint_control_address(endpoint, &datagram.address, datagram.addr_len, &control, &control_length);
    AA_CHECK(aa_udp_address_equals(&control, &datagram.address));
    AA_CHECK(!aa_receive_channel_endpoint_image_is_group(endpoint, 0));
    AA_CHECK(aa_receive_channel_endpoint_image_is_group(endpoint, AA_SETUP_HEADER_GROUP_FLAG));
    endpoint->params.group = AA_RECEIVE_GROUP_TRUE;
    AA_CHECK(aa_receive_channel_endpoint_image_is_group(endpoint, 0));
    aa_receive_channel_endpoint_delete(endpoint);
}

/* gtag= (or AERON_RECEIVER_GROUP_TAG): every SM of the endpoint is 44 bytes with the tag at 36,
 * the SETUP requests too; without it they are 36 bytes (reference 1.6). */
static void should_send_the_group_tag_in_every_status_message(void)
{
    fixture_t f;
    fixture_init_endpoint(&f);
    receive_data(&f, SESSION_ID, 0, 'a', T0);
    AA_CHECK_EQ(f.media.wire.sent_count, 1);
    AA_CHECK_EQ(f.media.wire.sent[0].length, 36);
    fixture_close(&f);

    fixture_init_endpoint(&f);
    f.endpoint->params.has_group_tag = true;
    f.endpoint->params.group_tag = -1001;
    receive_data(&f, SESSION_ID, 0, 'a', T0);
    AA_CHECK_EQ(f.media.wire.sent_count, 1);
    AA_CHECK_EQ(f.media.wire.sent[0].length, 44);
    aa_udp_status_message_t sm;
    AA_CHECK_EQ(aa_udp_frame_decode_status_message(f.media.wire.sent[0].data, f.media.wire.sent[0].length, &sm), 0);
    AA_CHECK(sm.has_group_tag && 0 != (sm.header.frame_header.flags & AA_STATUS_MESSAGE_HEADER_SEND_SETUP_FLAG));
    AA_CHECK_EQ(sm.header.frame_header.frame_length, 44);
    int64_t tag;
    memcpy(&tag, f.media.wire.sent[0].data + 36, sizeof(tag));
    AA_CHECK_EQ(tag, -1001);

    aa_receive_channel_endpoint_expire_sessions(f.endpoint, T0 + 2000 * MS);
    fixture_add_image(&f, true, T0 + 2000 * MS);
    aa_publication_image_track_rebuild(f.image, T0 + 2000 * MS);
    AA_CHECK_EQ(f.media.wire.sent_count, 2);
    AA_CHECK_EQ(f.media.wire.sent[1].length, 44);
    AA_CHECK_EQ(aa_udp_frame_decode_status_message(f.media.wire.sent[1].data, f.media.wire.sent[1].length, &sm), 0);
    AA_CHECK(sm.has_group_tag && -1001 == sm.group_tag && 0 == sm.header.frame_header.flags);
    AA_CHECK_EQ(sm.header.receiver_window, WINDOW);
    fixture_close(&f);
}

/* ---- the image ---- */

static void should_rebuild_data_and_send_status_messages_on_their_cadence(void)
{
    fixture_t f;
    fixture_init_endpoint(&f);
    fixture_add_image(&f, true, T0);

    /* the first status message goes at once, at the join position, with the window */
    aa_publication_image_track_rebuild(f.image, T0);
    AA_CHECK_EQ(f.media.wire.sent_count, 1);
    aa_status_message_header_t sm = sent_sm(&f, 0);
    AA_CHECK_EQ(sm.frame_header.flags, 0);
    AA_CHECK_EQ(sm.session_id, SESSION_ID);
    AA_CHECK_EQ(sm.stream_id, STREAM_ID);
    AA_CHECK_EQ(sm.consumption_term_id, INITIAL_TERM_ID);
    AA_CHECK_EQ(sm.consumption_term_offset, 0);
    AA_CHECK_EQ(sm.receiver_window, WINDOW);
    AA_CHECK_EQ(sm.receiver_id, f.endpoint->receiver_id);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_STATUS_MESSAGES_SENT), 1);

    receive_data(&f, SESSION_ID, 0, 'a', T0 + 1 * MS);
    receive_data(&f, SESSION_ID, 160, 'b', T0 + 2 * MS);
    AA_CHECK_EQ(f.rcv_hwm, 160 + 132);   /* the end of the last datagram */
    AA_CHECK_EQ(f.image->time_of_last_packet_ns, T0 + 2 * MS);
    AA_CHECK_EQ(f.rcv_pos, 0);
    AA_CHECK(aa_publication_image_track_rebuild(f.image, T0 + 3 * MS) > 0);
    AA_CHECK_EQ(f.rcv_pos, 320);
    AA_CHECK_EQ(aa_frame_length_volatile(f.image->log.term_buffers[0], 160), 132);
    AA_CHECK_EQ(f.image->log.term_buffers[0][160 + AA_DATA_HEADER_LENGTH], 'b');
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_BYTES_RECEIVED), 2 * 132);

    /* a duplicate leaves the log as it is */
    receive_data(&f, SESSION_ID, 160, 'x', T0 + 4 * MS);
    AA_CHECK_EQ(f.image->log.term_buffers[0][160 + AA_DATA_HEADER_LENGTH], 'b');

    /* then one every 200 ms (at the scheduled position: a new one is scheduled only once the
     * subscriber has moved window/4 past it) */
    f.sub_pos = 320;
    AA_CHECK_EQ(aa_publication_image_update_subscriber_positions(f.image), 1);
    aa_publication_image_track_rebuild(f.image, T0 + SM_TIMEOUT_NS - 1);
    AA_CHECK_EQ(f.media.wire.sent_count, 1);
    aa_publication_image_track_rebuild(f.image, T0 + SM_TIMEOUT_NS);
    AA_CHECK_EQ(f.media.wire.sent_count, 2);
    sm = sent_sm(&f, 1);
    AA_CHECK_EQ(sm.consumption_term_offset, 0);
    AA_CHECK(aa_publication_image_is_drained(f.image));

    /* data beyond the window past the last status message is an over-run, dropped */
    receive_data(&f, SESSION_ID, WINDOW / 2 + TERM_LENGTH / 2, 'z', T0 + 300 * MS);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_FLOW_CONTROL_OVER_RUNS), 1);
    AA_CHECK_EQ(f.rcv_hwm, 160 + 132);
    fixture_close(&f);
}

static void should_nak_a_gap_after_the_nak_delay_and_again_after_the_retry_delay(void)
{
    fixture_t f;
    fixture_init_with_a_gap(&f, true);
    int64_t t = T0 + 2 * MS;
    AA_CHECK_EQ(fake_wire_count_type(&f.media.wire, AA_HDR_TYPE_NAK), 0);

    aa_publication_image_track_rebuild(f.image, t + NAK_DELAY_NS - 1);
    AA_CHECK_EQ(fake_wire_count_type(&f.media.wire, AA_HDR_TYPE_NAK), 0);
    aa_publication_image_track_rebuild(f.image, t + NAK_DELAY_NS);
    AA_CHECK_EQ(f.media.wire.sent_count, 1);
    aa_nak_header_t nak = sent_nak(&f, 0);
    AA_CHECK_EQ(nak.session_id, SESSION_ID);
    AA_CHECK_EQ(nak.stream_id, STREAM_ID);
    AA_CHECK_EQ(nak.term_id, INITIAL_TERM_ID);
    AA_CHECK_EQ(nak.term_offset, 160);
    AA_CHECK_EQ(nak.length, 160);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_NAK_MESSAGES_SENT), 1);

    /* still open: again after the retry delay (delay x ratio) */
    int64_t retry = t + NAK_DELAY_NS + NAK_DELAY_NS * NAK_RETRY_RATIO;
    aa_publication_image_track_rebuild(f.image, retry - 1);
    AA_CHECK_EQ(fake_wire_count_type(&f.media.wire, AA_HDR_TYPE_NAK), 1);
    aa_publication_image_track_rebuild(f.image, retry);
    AA_CHECK_EQ(fake_wire_count_type(&f.media.wire, AA_HDR_TYPE_NAK), 2);

    /* the retransmit fills it: rcv-pos moves past everything, no more NAKs */
    receive_data(&f, SESSION_ID, 160, 'b', retry + 1);
    aa_publication_image_track_rebuild(f.image, retry + 2);
    AA_CHECK_EQ(f.rcv_pos, 480);
    aa_publication_image_track_rebuild(f.image, retry + 100 * MS);
    AA_CHECK_EQ(fake_wire_count_type(&f.media.wire, AA_HDR_TYPE_NAK), 2);
    fixture_close(&f);
}

static void should_fill_a_gap_with_padding_when_unreliable(void)
{
    fixture_t f;
    fixture_init_with_a_gap(&f, false);
    int64_t t = T0 + 2 * MS;
    aa_publication_image_track_rebuild(f.image, t + NAK_DELAY_NS);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_LOSS_GAP_FILLS), 1);
    AA_CHECK_EQ(fake_wire_count_type(&f.media.wire, AA_HDR_TYPE_NAK), 0);
    AA_CHECK(aa_frame_is_padding(f.image->log.term_buffers[0], 160));
    aa_publication_image_track_rebuild(f.image, t + NAK_DELAY_NS + 1);
    AA_CHECK_EQ(f.rcv_pos, 480);
    fixture_close(&f);
}

/* ---- the loss report ---- */

#define EPOCH_MS 1700000000000LL

typedef struct loss_fixture_stct
{
    fixture_t f;
    aa_test_clock_t test_clock;
    aa_clock_t clock;
    aa_loss_reporter_t reporter;
    uint8_t *buffer;
}
loss_fixture_t;

/* An image with a loss report of capacity bytes, its channel and source named, a gap of 160 bytes
 * at 160 seen at T0 + 2 ms. */
static void loss_fixture_init(loss_fixture_t *lf, bool is_reliable, size_t capacity)
{
    fixture_t *f = &lf->f;
    fixture_init_endpoint(f);
    lf->buffer = aligned_alloc(64, capacity);
    AA_CHECK(NULL != lf->buffer);
    memset(lf->buffer, 0, capacity);
    AA_CHECK_EQ(aa_loss_reporter_init(&lf->reporter, lf->buffer, capacity), 0);
    aa_test_clock_init(&lf->test_clock, T0, EPOCH_MS);
    lf->clock = aa_test_clock(&lf->test_clock);
    f->media.services.services.loss_reporter = &lf->reporter;
    f->media.services.services.clock = &lf->clock;
    fixture_add_image(f, is_reliable, T0);
    f->image->channel = strdup("aeron:udp?endpoint=127.0.0.1:40457|alias=loss");
    AA_CHECK(NULL != f->image->channel);
    snprintf(f->image->source_identity, sizeof(f->image->source_identity), "%s", "10.0.0.1:5000");
    aa_publication_image_track_rebuild(f->image, T0);
    receive_a_gap(f);
}

static void loss_fixture_close(loss_fixture_t *lf)
{
    fixture_close(&lf->f);
    free(lf->buffer);
}

typedef struct one_entry_stct
{
    aa_loss_report_entry_t entry;
    char channel[128];
    char source[64];
    size_t count;
}
one_entry_t;

static void read_one(void *clientd, const aa_loss_report_entry_t *entry)
{
    one_entry_t *one = clientd;
    one->entry = *entry;
    snprintf(one->channel, sizeof(one->channel), "%.*s", (int)entry->channel_length, entry->channel);
    snprintf(one->source, sizeof(one->source), "%.*s", (int)entry->source_length, entry->source);
    one->count++;
}

static one_entry_t read_report(const loss_fixture_t *lf)
{
    one_entry_t one;
    memset(&one, 0, sizeof(one));
    aa_loss_report_read(lf->buffer, lf->reporter.capacity, read_one, &one);
    return one;
}

static void should_report_every_nak_of_a_gap_as_a_loss_observation(void)
{
    loss_fixture_t lf;
    loss_fixture_init(&lf, true, 4096);
    fixture_t *f = &lf.f;
    AA_CHECK_EQ(read_report(&lf).count, 0);   /* seen, not yet NAKed: no loss observed */

    int64_t t = T0 + 2 * MS + NAK_DELAY_NS;
    aa_test_clock_advance(&lf.test_clock, 3 * MS);
    aa_publication_image_track_rebuild(f->image, t);
    one_entry_t one = read_report(&lf);
    AA_CHECK_EQ(one.count, 1);
    AA_CHECK_EQ(one.entry.observation_count, 1);
    AA_CHECK_EQ(one.entry.total_bytes_lost, 160);
    AA_CHECK_EQ(one.entry.first_observation_timestamp, EPOCH_MS + 3);
    AA_CHECK_EQ(one.entry.last_observation_timestamp, EPOCH_MS + 3);
    AA_CHECK_EQ(one.entry.session_id, SESSION_ID);
    AA_CHECK_EQ(one.entry.stream_id, STREAM_ID);
    AA_CHECK(0 == strcmp(one.channel, "aeron:udp?endpoint=127.0.0.1:40457|alias=loss"));
    AA_CHECK(0 == strcmp(one.source, "10.0.0.1:5000"));

    /* the retry NAK of the same gap is another observation of it, its bytes counted again (as Aeron) */
    int64_t retry = t + NAK_DELAY_NS * NAK_RETRY_RATIO;
    aa_test_clock_advance(&lf.test_clock, 10 * MS);
    aa_publication_image_track_rebuild(f->image, retry);
    one = read_report(&lf);
    AA_CHECK_EQ(one.count, 1);
    AA_CHECK_EQ(one.entry.observation_count, 2);
    AA_CHECK_EQ(one.entry.total_bytes_lost, 320);
    AA_CHECK_EQ(one.entry.first_observation_timestamp, EPOCH_MS + 3);
    AA_CHECK_EQ(one.entry.last_observation_timestamp, EPOCH_MS + 13);
    AA_CHECK_EQ(fake_count(&f->media.services, AA_SYSTEM_COUNTER_NAK_MESSAGES_SENT), one.entry.observation_count);

    /* repaired: no more observations */
    receive_data(f, SESSION_ID, 160, 'b', retry + 1);
    aa_publication_image_track_rebuild(f->image, retry + 100 * MS);
    AA_CHECK_EQ(read_report(&lf).entry.observation_count, 2);
    AA_CHECK_EQ(f->media.services.errors, 0);
    loss_fixture_close(&lf);
}

static void should_report_a_gap_fill_as_a_loss_observation(void)
{
    loss_fixture_t lf;
    loss_fixture_init(&lf, false, 4096);
    aa_publication_image_track_rebuild(lf.f.image, T0 + 2 * MS + NAK_DELAY_NS);
    one_entry_t one = read_report(&lf);
    AA_CHECK_EQ(one.entry.observation_count, 1);
    AA_CHECK_EQ(one.entry.total_bytes_lost, 160);
    AA_CHECK_EQ(fake_count(&lf.f.media.services, AA_SYSTEM_COUNTER_LOSS_GAP_FILLS), 1);
    AA_CHECK_EQ(fake_count(&lf.f.media.services, AA_SYSTEM_COUNTER_NAK_MESSAGES_SENT), 0);
    loss_fixture_close(&lf);
}

static void should_log_once_and_keep_nakking_when_the_report_is_full(void)
{
    loss_fixture_t lf;
    loss_fixture_init(&lf, true, 64);   /* 48 + channel + source does not fit */
    fixture_t *f = &lf.f;
    int64_t t = T0 + 2 * MS + NAK_DELAY_NS;
    aa_publication_image_track_rebuild(f->image, t);
    aa_publication_image_track_rebuild(f->image, t + NAK_DELAY_NS * NAK_RETRY_RATIO);
    AA_CHECK_EQ(read_report(&lf).count, 0);
    AA_CHECK_EQ(f->image->loss_report_offset, AA_LOSS_REPORT_FULL);
    AA_CHECK_EQ(f->media.services.errors, 1);
    AA_CHECK(NULL != strstr(f->media.services.last_error, "AERON_LOSS_REPORT_BUFFER_LENGTH"));
    AA_CHECK_EQ(fake_count(&f->media.services, AA_SYSTEM_COUNTER_NAK_MESSAGES_SENT), 2);
    loss_fixture_close(&lf);
}

static void should_end_the_stream_once_everything_before_the_eos_heartbeat_arrived(void)
{
    fixture_t f;
    fixture_init_endpoint(&f);
    fixture_add_image(&f, true, T0);
    aa_publication_image_track_rebuild(f.image, T0);

    receive_data(&f, SESSION_ID, 0, 'a', T0 + 1 * MS);
    receive_heartbeat(&f, 320, true, T0 + 2 * MS);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_HEARTBEATS_RECEIVED), 1);
    AA_CHECK_EQ(f.rcv_hwm, 320);
    aa_publication_image_track_rebuild(f.image, T0 + 3 * MS);
    AA_CHECK_EQ(f.image->is_end_of_stream, 0);
    AA_CHECK_EQ(aa_logbuffer_end_of_stream_position(f.image->log.metadata), INT64_MAX);

    receive_data(&f, SESSION_ID, 160, 'b', T0 + 4 * MS);
    aa_publication_image_track_rebuild(f.image, T0 + 5 * MS);
    AA_CHECK_EQ(f.rcv_pos, 320);
    AA_CHECK_EQ(f.image->is_end_of_stream, 1);
    AA_CHECK_EQ(aa_logbuffer_end_of_stream_position(f.image->log.metadata), 320);

    /* while the conductor drains the image, its status messages carry the EOS flag */
    f.media.wire.sent_count = 0;
    aa_put_int32_release(&f.image->is_draining, 1);
    aa_publication_image_track_rebuild(f.image, T0 + 5 * MS + SM_TIMEOUT_NS);
    AA_CHECK_EQ(f.media.wire.sent_count, 1);
    AA_CHECK(0 != (sent_sm(&f, 0).frame_header.flags & AA_STATUS_MESSAGE_HEADER_EOS_FLAG));
    fixture_close(&f);
}

static void should_cool_a_removed_image_session_down_for_a_second(void)
{
    fixture_t f;
    fixture_init_endpoint(&f);
    fixture_add_image(&f, true, T0);
    aa_receive_channel_endpoint_remove_image(f.endpoint, f.image, T0 + 10 * MS);
    f.media.wire.sent_count = 0;

    /* stray data and SETUPs of the session are ignored while it cools down */
    receive_data(&f, SESSION_ID, 0, 'a', T0 + 20 * MS);
    receive_setup(&f, SESSION_ID, STREAM_ID, TERM_LENGTH, T0 + 20 * MS);
    AA_CHECK_EQ(f.media.wire.sent_count, 0);
    AA_CHECK_EQ(f.media.services.image_requests, 0);
    AA_CHECK_EQ(f.rcv_hwm, 0);

    receive_setup(&f, SESSION_ID, STREAM_ID, TERM_LENGTH, T0 + 1010 * MS);
    AA_CHECK_EQ(f.media.services.image_requests, 1);
    fixture_close(&f);
}

/* ---- revoked publications and rejected images (aeron-wave3.md 4.1, 4.2) ---- */

/* A heartbeat with EOS and REVOKED (0xF0) ends the stream there at once: the log reads revoked with
 * that end, the image is at end of stream (so the conductor lingers it without a drain), it is
 * counted, and the gap before it is never NAKed. */
static void should_end_a_revoked_stream_at_once_without_naks(void)
{
    fixture_t f;
    fixture_init_with_a_gap(&f, true);
    uint8_t frame[AA_DATA_HEADER_LENGTH];
    int32_t length = aa_udp_frame_encode_heartbeat(frame, sizeof(frame), 480, SESSION_ID, STREAM_ID, INITIAL_TERM_ID, true);
    frame[5] |= AA_DATA_HEADER_REVOKED_FLAG;
    AA_CHECK_EQ(frame[5], 0xF0);
    receive(&f, frame, length, T0 + 2 * MS);

    AA_CHECK(aa_logbuffer_is_publication_revoked(f.image->log.metadata));
    AA_CHECK_EQ(aa_logbuffer_end_of_stream_position(f.image->log.metadata), 480);
    AA_CHECK_EQ(f.image->is_revoked, 1);
    AA_CHECK_EQ(f.image->is_end_of_stream, 1);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_PUBLICATION_IMAGES_REVOKED), 1);
    receive(&f, frame, length, T0 + 3 * MS);   /* counted once */
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_PUBLICATION_IMAGES_REVOKED), 1);

    f.media.wire.sent_count = 0;
    aa_publication_image_track_rebuild(f.image, T0 + 10 * MS);
    aa_publication_image_track_rebuild(f.image, T0 + 100 * MS);
    AA_CHECK_EQ(fake_wire_count_type(&f.media.wire, AA_HDR_TYPE_NAK), 0);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_NAK_MESSAGES_SENT), 0);
    fixture_close(&f);
}

/* Rejected: every later packet is dropped (heartbeats too), each status message becomes an ERR frame
 * (IMAGE_REJECTED, the reason) to the image's control address, and the session's cool-down is lifted
 * when the image goes, so the publisher may come back as a new image. */
static void should_send_error_frames_instead_of_status_messages_once_rejected(void)
{
    fixture_t f;
    fixture_init_endpoint(&f);
    fixture_add_image(&f, true, T0);
    aa_publication_image_track_rebuild(f.image, T0);
    receive_data(&f, SESSION_ID, 0, 'a', T0 + 1 * MS);
    AA_CHECK_EQ(f.rcv_hwm, 132);

    int64_t sms_before = fake_count(&f.media.services, AA_SYSTEM_COUNTER_STATUS_MESSAGES_SENT);
    aa_publication_image_reject(f.image, "not for us", strlen("not for us"));
    aa_publication_image_reject(f.image, "second reason", strlen("second reason"));   /* the first stays */
    receive_data(&f, SESSION_ID, 160, 'b', T0 + 2 * MS);
    receive_heartbeat(&f, 320, false, T0 + 2 * MS);
    AA_CHECK_EQ(f.rcv_hwm, 132);
    AA_CHECK_EQ(f.image->time_of_last_packet_ns, T0 + 1 * MS);   /* so it reaches its liveness timeout */

    f.media.wire.sent_count = 0;
    aa_publication_image_track_rebuild(f.image, T0 + 2 * MS + SM_TIMEOUT_NS);
    AA_CHECK_EQ(f.media.wire.sent_count, 1);
    AA_CHECK_EQ(fake_wire_sent_type(&f.media.wire, 0), AA_HDR_TYPE_ERR);
    AA_CHECK(aa_udp_address_equals(&f.media.wire.sent[0].address, &f.source));
    aa_udp_error_t error;
    AA_CHECK(0 == aa_udp_frame_decode_error(f.media.wire.sent[0].data, f.media.wire.sent[0].length, &error));
    AA_CHECK_EQ(error.header.error_code, AA_ERROR_CODE_IMAGE_REJECTED);
    AA_CHECK_EQ(error.header.session_id, SESSION_ID);
    AA_CHECK_EQ(error.text_length, strlen("not for us"));
    AA_CHECK(0 == memcmp(error.text, "not for us", error.text_length));
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_ERROR_FRAMES_SENT), 1);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_STATUS_MESSAGES_SENT), sms_before);

    aa_receive_channel_endpoint_remove_image(f.endpoint, f.image, T0 + 3 * SM_TIMEOUT_NS);
    receive_setup(&f, SESSION_ID, STREAM_ID, TERM_LENGTH, T0 + 3 * SM_TIMEOUT_NS + 1 * MS);
    AA_CHECK_EQ(f.media.services.image_requests, 1);
    fixture_close(&f);
}

/* ---- bounds on what the network may ask for (docs/security.md, Network: receivers) ---- */

/* Sessions beyond the endpoint's or a stream's image limit are refused: no image requested, each
 * refusal counted, logged at most once a second; a slot frees when its session goes. */
static void should_refuse_setups_beyond_the_image_limits(void)
{
    fixture_t f;
    fixture_init_bounded_endpoint(&f, 3, 2, 0);
    AA_CHECK(0 == aa_receive_channel_endpoint_add_stream(f.endpoint, STREAM_ID + 1));

    receive_setup(&f, 1, STREAM_ID, TERM_LENGTH, T0);
    receive_setup(&f, 2, STREAM_ID, TERM_LENGTH, T0);
    AA_CHECK_EQ(f.media.services.image_requests, 2);
    /* a third session of the stream is over its limit of 2 */
    receive_setup(&f, 3, STREAM_ID, TERM_LENGTH, T0);
    AA_CHECK_EQ(f.media.services.image_requests, 2);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_SETUPS_REFUSED_IMAGE_LIMIT), 1);
    AA_CHECK_EQ(f.media.services.errors, 1);
    AA_CHECK_EQ(f.media.services.last_error_code, AA_ERROR_CODE_IMAGE_REJECTED);
    AA_CHECK(NULL != strstr(f.media.services.last_error, "SETUP from 10.0.0.1:5000 refused"));
    AA_CHECK(NULL != strstr(f.media.services.last_error, "AERON_RECEIVER_MAX_SESSIONS_PER_STREAM"));
    /* the other stream has room until the endpoint's limit of 3 */
    receive_setup(&f, 4, STREAM_ID + 1, TERM_LENGTH, T0);
    AA_CHECK_EQ(f.media.services.image_requests, 3);
    for (int32_t session_id = 5; session_id < 305; session_id++)
    {
        receive_setup(&f, session_id, STREAM_ID + (session_id & 1), TERM_LENGTH, T0 + 500 * MS);
    }
    AA_CHECK_EQ(f.media.services.image_requests, 3);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_SETUPS_REFUSED_IMAGE_LIMIT), 301);
    AA_CHECK_EQ(f.media.services.errors, 1);                 /* logged once a second, not per SETUP */
    AA_CHECK_EQ(f.endpoint->sessions_count, 3);              /* a refused session is not tracked */
    receive_setup(&f, 400, STREAM_ID + 1, TERM_LENGTH, T0 + 1000 * MS);
    AA_CHECK_EQ(f.media.services.errors, 2);
    AA_CHECK(NULL != strstr(f.media.services.last_error, "AERON_RECEIVER_MAX_IMAGES"));

    /* the initialising sessions the conductor never made images of expire, and their room with them */
    aa_receive_channel_endpoint_expire_sessions(f.endpoint, T0 + 1000 * MS);
    AA_CHECK_EQ(f.endpoint->sessions_count, 0);
    receive_setup(&f, 500, STREAM_ID, TERM_LENGTH, T0 + 1001 * MS);
    AA_CHECK_EQ(f.media.services.image_requests, 4);

    /* data of unknown sessions asks for SETUP for at most twice the image limit of sessions at once */
    f.media.wire.sent_count = 0;
    for (int32_t session_id = 600; session_id < 700; session_id++)
    {
        receive_data(&f, session_id, 0, 'a', T0 + 1002 * MS);
    }
    AA_CHECK_EQ(f.endpoint->sessions_count, 6);
    AA_CHECK_EQ(fake_wire_count_type(&f.media.wire, AA_HDR_TYPE_SM), 5);
    fixture_close(&f);
}

/* A SETUP asking for a term longer than the maximum is refused and counted; as long is fine. */
static void should_refuse_a_setup_whose_term_is_longer_than_the_maximum(void)
{
    fixture_t f;
    fixture_init_bounded_endpoint(&f, 0, 0, 4 * TERM_LENGTH);

    receive_setup(&f, 1, STREAM_ID, 1024 * 1024 * 1024, T0);
    receive_setup(&f, 2, STREAM_ID, 8 * TERM_LENGTH, T0);
    AA_CHECK_EQ(f.media.services.image_requests, 0);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_SETUPS_REFUSED_TERM_LENGTH), 2);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_INVALID_PACKETS), 0);
    AA_CHECK_EQ(f.media.services.errors, 1);
    AA_CHECK(NULL != strstr(f.media.services.last_error, "term length is above the receiver maximum 262144"));
    AA_CHECK_EQ(f.endpoint->sessions_count, 0);

    receive_setup(&f, 3, STREAM_ID, 4 * TERM_LENGTH, T0);
    AA_CHECK_EQ(f.media.services.image_requests, 1);
    AA_CHECK_EQ(f.media.services.last_request_setup.term_length, 4 * TERM_LENGTH);
    fixture_close(&f);
}

/* An image takes DATA, heartbeats, SETUPs and RTT replies of its session only from its SETUP's
 * address: from another port or host they are dropped and counted, and write nothing. */
static void should_take_frames_of_an_image_only_from_its_source(void)
{
    fixture_t f;
    fixture_init_endpoint(&f);
    fixture_add_image(&f, true, T0);
    const struct sockaddr_storage other_port = test_ipv4_address("10.0.0.1", 5001);
    const struct sockaddr_storage other_host = test_ipv4_address("10.0.0.2", 5000);
    uint8_t *term = f.image->log.term_buffers[0];

    receive_data(&f, SESSION_ID, 0, 'a', T0 + 1 * MS);
    AA_CHECK_EQ(f.rcv_hwm, 132);
    receive_data_from(&f, &other_port, SESSION_ID, 160, 'x', T0 + 2 * MS);
    receive_data_from(&f, &other_host, SESSION_ID, 160, 'y', T0 + 2 * MS);
    AA_CHECK_EQ(f.rcv_hwm, 132);
    AA_CHECK_EQ(aa_frame_length_volatile(term, 160), 0);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_FRAMES_FROM_ANOTHER_SOURCE), 2);

    /* a heartbeat from elsewhere keeps nothing alive; an end of stream from elsewhere ends nothing */
    uint8_t frame[AA_RTTM_HEADER_LENGTH];
    int32_t length = aa_udp_frame_encode_heartbeat(frame, sizeof(frame), 160, SESSION_ID, STREAM_ID, INITIAL_TERM_ID, true);
    receive_from(&f, &other_port, frame, length, T0 + 3 * MS);
    AA_CHECK_EQ(f.image->time_of_last_packet_ns, T0 + 1 * MS);
    AA_CHECK(!f.image->has_end_of_stream_heartbeat);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_HEARTBEATS_RECEIVED), 0);
    /* nor does an RTT reply, or a SETUP of the session (the image keeps its source) */
    length = aa_udp_frame_encode_rttm(frame, sizeof(frame), 0, SESSION_ID, STREAM_ID, T0, 0, 0);
    receive_from(&f, &other_host, frame, length, T0 + 3 * MS);
    uint8_t setup[AA_SETUP_HEADER_LENGTH];
    length = aa_udp_frame_encode_setup(
        setup, sizeof(setup), 0, 0, SESSION_ID, STREAM_ID, INITIAL_TERM_ID, INITIAL_TERM_ID, TERM_LENGTH, MTU, 0);
    receive_from(&f, &other_host, setup, length, T0 + 3 * MS);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_FRAMES_FROM_ANOTHER_SOURCE), 5);
    AA_CHECK_EQ(f.media.services.image_requests, 0);
    AA_CHECK(f.endpoint->sessions[0].image == f.image);

    /* the source's own frame still lands where the dropped ones would have */
    receive_data(&f, SESSION_ID, 160, 'b', T0 + 4 * MS);
    AA_CHECK_EQ(f.rcv_hwm, 292);
    AA_CHECK_EQ(term[160 + AA_DATA_HEADER_LENGTH], 'b');
    AA_CHECK_EQ(f.image->time_of_last_packet_ns, T0 + 4 * MS);
    fixture_close(&f);
}

static struct sockaddr_storage ipv6_address(const char *ip, uint16_t port)
{
    struct sockaddr_storage address;
    memset(&address, 0, sizeof(address));
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&address;
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
    AA_CHECK(1 == inet_pton(AF_INET6, ip, &in6->sin6_addr));
    return address;
}

/* The per-datagram source compare: family, address and port, IPv4 and IPv6 alike. */
static void should_compare_an_image_source_by_family_address_and_port(void)
{
    aa_publication_image_t image;
    memset(&image, 0, sizeof(image));
    image.source_address = test_ipv4_address("10.0.0.1", 5000);
    struct sockaddr_storage same = test_ipv4_address("10.0.0.1", 5000);
    struct sockaddr_storage port = test_ipv4_address("10.0.0.1", 5001);
    struct sockaddr_storage host = test_ipv4_address("10.0.0.2", 5000);
    struct sockaddr_storage v6 = ipv6_address("::ffff:10.0.0.1", 5000);
    AA_CHECK(aa_publication_image_is_from_source(&image, &same));
    AA_CHECK(!aa_publication_image_is_from_source(&image, &port));
    AA_CHECK(!aa_publication_image_is_from_source(&image, &host));
    AA_CHECK(!aa_publication_image_is_from_source(&image, &v6));

    image.source_address = ipv6_address("fd00::1", 5000);
    struct sockaddr_storage v6_same = ipv6_address("fd00::1", 5000);
    struct sockaddr_storage v6_port = ipv6_address("fd00::1", 5001);
    struct sockaddr_storage v6_host = ipv6_address("fd00::2", 5000);
    AA_CHECK(aa_publication_image_is_from_source(&image, &v6_same));
    AA_CHECK(!aa_publication_image_is_from_source(&image, &v6_port));
    AA_CHECK(!aa_publication_image_is_from_source(&image, &v6_host));
    AA_CHECK(!aa_publication_image_is_from_source(&image, &same));

    struct sockaddr_storage none;
    memset(&none, 0, sizeof(none));
    AA_CHECK(!aa_publication_image_is_from_source(&image, &none));
}

/* cc=cubic on an image: the SM window comes from cubic, a new gap cuts it and forces an SM, RTT
 * measurement frames go out with the REPLY flag and their answers (for this receiver id, or 0) set
 * the RTT counter. */
static void should_window_sms_with_cubic_and_measure_the_rtt_with_rttm_frames(void)
{
    fixture_t f;
    fixture_init_endpoint(&f);
    fixture_add_image(&f, true, T0);
    volatile int64_t counters[2] = { -1, -1 };
    aa_congestion_control_choice_t choice;
    AA_CHECK(0 == aa_congestion_control_select("cubic,measure-rtt:true", &choice));
    aa_congestion_control_params_t params =
    {
        .term_length = TERM_LENGTH, .mtu_length = MTU, .initial_window_length = WINDOW,
        .counters = { &counters[0], &counters[1] },
    };
    AA_CHECK(0 == aa_congestion_control_create(&f.image->congestion_control, &choice, &params, T0));
    AA_CHECK_EQ(counters[1], 10 * MTU);

    /* first SM: cubic's 10 MTUs; and an RTTM asking for a reply, stamped with our clock */
    aa_publication_image_track_rebuild(f.image, T0);
    AA_CHECK_EQ(f.media.wire.sent_count, 2);
    AA_CHECK_EQ(sent_sm(&f, 0).receiver_window, 10 * MTU);
    AA_CHECK_EQ(fake_wire_sent_type(&f.media.wire, 1), AA_HDR_TYPE_RTTM);
    aa_rttm_header_t rttm;
    AA_CHECK(0 == aa_udp_frame_decode_rttm(f.media.wire.sent[1].data, f.media.wire.sent[1].length, &rttm));
    AA_CHECK_EQ(rttm.frame_header.flags, AA_RTTM_HEADER_REPLY_FLAG);
    AA_CHECK_EQ(rttm.session_id, SESSION_ID);
    AA_CHECK_EQ(rttm.stream_id, STREAM_ID);
    AA_CHECK_EQ(rttm.echo_timestamp, T0);
    AA_CHECK_EQ(rttm.reception_delta, 0);
    AA_CHECK_EQ(rttm.receiver_id, f.endpoint->receiver_id);
    AA_CHECK(aa_udp_address_equals(&f.media.wire.sent[1].address, &f.source));

    /* the sender's answer (flags 0, echo, delta): rtt = now - echo - delta */
    uint8_t reply[AA_RTTM_HEADER_LENGTH];
    int32_t length = aa_udp_frame_encode_rttm(reply, sizeof(reply), 0, SESSION_ID, STREAM_ID, T0, 0, 0);
    AA_CHECK(!receive(&f, reply, length, T0 + 3 * MS));   /* receiver id 0 is accepted; no work */
    AA_CHECK_EQ(counters[0], 3 * MS);
    length = aa_udp_frame_encode_rttm(
        reply, sizeof(reply), 0, SESSION_ID, STREAM_ID, T0, 1 * MS, f.endpoint->receiver_id);
    receive(&f, reply, length, T0 + 5 * MS);
    AA_CHECK_EQ(counters[0], 4 * MS);
    length = aa_udp_frame_encode_rttm(
        reply, sizeof(reply), 0, SESSION_ID, STREAM_ID, T0, 0, f.endpoint->receiver_id + 1);
    receive(&f, reply, length, T0 + 9 * MS);                 /* another receiver's: ignored */
    AA_CHECK_EQ(counters[0], 4 * MS);
    AA_CHECK_EQ(f.media.wire.sent_count, 2);                      /* answers are not answered */

    /* a gap: cubic grows first (w_max = 23 = 32 KiB / MTU), then cuts on the loss and forces an SM */
    f.media.wire.sent_count = 0;
    receive_data(&f, SESSION_ID, 0, 'a', T0 + 10 * MS);
    aa_publication_image_track_rebuild(f.image, T0 + 10 * MS);
    int32_t before = (int32_t)counters[1];
    AA_CHECK(before > 10 * MTU);
    size_t sent_before = f.media.wire.sent_count;
    receive_data(&f, SESSION_ID, 320, 'c', T0 + 10 * MS + 1);
    aa_publication_image_track_rebuild(f.image, T0 + 10 * MS + 2);
    AA_CHECK_EQ(counters[1], (int32_t)(before / MTU * 0.8) * MTU);
    AA_CHECK_EQ(f.media.wire.sent_count, sent_before + 1);
    AA_CHECK_EQ(sent_sm(&f, sent_before).receiver_window, counters[1]);

    /* the next RTTM after 4 x max(rtt, initial rtt) = 16 ms from the last answer */
    f.media.wire.sent_count = 0;
    aa_publication_image_track_rebuild(f.image, T0 + 21 * MS);
    AA_CHECK_EQ(fake_wire_count_type(&f.media.wire, AA_HDR_TYPE_RTTM), 0);
    aa_publication_image_track_rebuild(f.image, T0 + 21 * MS + 1);
    AA_CHECK_EQ(fake_wire_count_type(&f.media.wire, AA_HDR_TYPE_RTTM), 1);
    fixture_close(&f);
}

/* Response channels (docs/architecture.md, "Response channels"): once a response publication is linked, the
 * image sends RSP_SETUP to the request's source at once and then with every status message; it stops when
 * the conductor nulls the session again. */
static void should_send_response_setup_while_a_response_session_is_set(void)
{
    fixture_t f;
    fixture_init_endpoint(&f);
    fixture_add_image(&f, true, T0);
    aa_publication_image_track_rebuild(f.image, T0);
    AA_CHECK_EQ(fake_wire_count_type(&f.media.wire, AA_HDR_TYPE_RSP_SETUP), 0);

    aa_put_int64_release(&f.image->response_session_id, 321);
    aa_publication_image_track_rebuild(f.image, T0 + MS);
    AA_CHECK_EQ(fake_wire_count_type(&f.media.wire, AA_HDR_TYPE_RSP_SETUP), 1);
    const fake_datagram_t *sent = &f.media.wire.sent[f.media.wire.sent_count - 1];
    aa_response_setup_header_t rsp;
    AA_CHECK(0 == aa_udp_frame_decode_response_setup(sent->data, sent->length, &rsp));
    AA_CHECK_EQ(rsp.session_id, SESSION_ID);
    AA_CHECK_EQ(rsp.stream_id, STREAM_ID);
    AA_CHECK_EQ(rsp.response_session_id, 321);
    AA_CHECK(aa_udp_address_equals(&sent->address, &f.source));

    /* then with the status messages, every SM timeout */
    aa_publication_image_track_rebuild(f.image, T0 + 2 * MS);
    AA_CHECK_EQ(fake_wire_count_type(&f.media.wire, AA_HDR_TYPE_RSP_SETUP), 1);
    aa_publication_image_track_rebuild(f.image, T0 + MS + SM_TIMEOUT_NS + MS);
    AA_CHECK_EQ(fake_wire_count_type(&f.media.wire, AA_HDR_TYPE_RSP_SETUP), 2);

    /* the response publication has its receiver: no more */
    aa_put_int64_release(&f.image->response_session_id, AA_PUBLICATION_IMAGE_NULL_RESPONSE_SESSION_ID);
    aa_publication_image_track_rebuild(f.image, T0 + 3 * SM_TIMEOUT_NS);
    aa_publication_image_track_rebuild(f.image, T0 + 5 * SM_TIMEOUT_NS);
    AA_CHECK_EQ(fake_wire_count_type(&f.media.wire, AA_HDR_TYPE_RSP_SETUP), 2);
    fixture_close(&f);
}

int main(void)
{
    AA_RUN(should_ask_for_an_image_once_per_setup_of_a_subscribed_stream);
    AA_RUN(should_ask_an_unknown_session_for_setup_once_per_second);
    AA_RUN(should_send_control_frames_of_a_group_to_the_control_group);
    AA_RUN(should_send_the_group_tag_in_every_status_message);
    AA_RUN(should_rebuild_data_and_send_status_messages_on_their_cadence);
    AA_RUN(should_nak_a_gap_after_the_nak_delay_and_again_after_the_retry_delay);
    AA_RUN(should_fill_a_gap_with_padding_when_unreliable);
    AA_RUN(should_report_every_nak_of_a_gap_as_a_loss_observation);
    AA_RUN(should_report_a_gap_fill_as_a_loss_observation);
    AA_RUN(should_log_once_and_keep_nakking_when_the_report_is_full);
    AA_RUN(should_end_the_stream_once_everything_before_the_eos_heartbeat_arrived);
    AA_RUN(should_cool_a_removed_image_session_down_for_a_second);
    AA_RUN(should_end_a_revoked_stream_at_once_without_naks);
    AA_RUN(should_send_error_frames_instead_of_status_messages_once_rejected);
    AA_RUN(should_window_sms_with_cubic_and_measure_the_rtt_with_rttm_frames);
    AA_RUN(should_refuse_setups_beyond_the_image_limits);
    AA_RUN(should_refuse_a_setup_whose_term_is_longer_than_the_maximum);
    AA_RUN(should_take_frames_of_an_image_only_from_its_source);
    AA_RUN(should_compare_an_image_source_by_family_address_and_port);
    AA_RUN(should_send_response_setup_while_a_response_session_is_set);
    return 0;
}
