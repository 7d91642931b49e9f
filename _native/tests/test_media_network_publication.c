/* The network publication and its send channel endpoint, through a fake wire and fake media
 * services, with time moved by hand: SETUP until the first status message, status messages moving
 * the sender limit, data up to it, heartbeats after 100 ms idle, NAKs and retransmits (only for
 * receivers, within their window and budget), end of stream, the connection timeout, and the endpoint's dispatch and counters. */
#include <stdlib.h>
#include <string.h>

#include "aa_media_fakes.h"
#include "media/aa_network_publication.h"
#include "media/aa_send_channel_endpoint.h"
#include "protocols/aa_udp_frames.h"
#include "logbuffer/aa_term.h"

#define TERM_LENGTH (64 * 1024)
#define MTU 1408
#define SESSION_ID 7
#define STREAM_ID 1001
#define INITIAL_TERM_ID 100
#define MS (1000 * 1000LL)
#define T0 (1000 * 1000 * MS)
#define CONNECTION_TIMEOUT_NS (5000 * MS)
#define RECEIVER_WINDOW (32 * 1024)

typedef struct fixture_stct
{
    fake_media_t media;   /* services, wire, the endpoint's transports and channel */
    aa_send_channel_endpoint_t *endpoint;
    aa_network_publication_t *pub;
    uint8_t *memory;
    fake_publication_positions_t positions;
}
fixture_t;

/* The fc= value of the publication the fixture makes (NULL: the unicast or multicast default). */
static const char *fixture_fc = NULL;
/* Response channels: the publication's response-correlation-id= and control-mode=response. */
static int64_t fixture_response_correlation_id = -1;
static bool fixture_is_response = false;

/* A unicast publication, or (max_resend > 0) a multicast one with group semantics and that pool. */
static void fixture_init_channel(fixture_t *f, int64_t retransmit_delay_ns, const char *uri, int32_t max_resend)
{
    memset(f, 0, sizeof(*f));
    fake_media_init(&f->media, uri);
    const bool is_group = f->media.channel->is_multicast;
    const int32_t ttl = f->media.channel->multicast_ttl;
    AA_CHECK(0 == aa_send_channel_endpoint_create(
        &f->endpoint, f->media.channel, &f->media.transports, &f->media.services.services));
    AA_CHECK(f->media.wire.transport == &f->endpoint->transport);

    f->pub = calloc(1, sizeof(aa_network_publication_t));
    AA_CHECK(NULL != f->pub);
    aa_network_publication_params_t params =
    {
        .registration_id = 1,
        .ids = { SESSION_ID, STREAM_ID, INITIAL_TERM_ID, TERM_LENGTH, MTU },
        .term_window_length = TERM_LENGTH / 2,
        .linger_timeout_ns = 5000 * MS,
        .unblock_timeout_ns = 15000 * MS,
        .connection_timeout_ns = CONNECTION_TIMEOUT_NS,
        .retransmit_delay_ns = retransmit_delay_ns,
        .retransmit_linger_ns = 10 * MS,
        .is_exclusive = false,
        .signal_eos = true,
        .has_group_semantics = is_group,
        .max_resend = max_resend,
        .multicast_ttl = ttl,
        .response_correlation_id = fixture_response_correlation_id,
        .is_response = fixture_is_response,
    };
    /* fixture_fc, else unicast or the multicast default (max) */
    AA_CHECK(0 == aa_flow_control_strategy_select(is_group, fixture_fc, NULL, &params.flow_control));
    AA_CHECK(0 == aa_network_publication_init(f->pub, &params, &f->media.services.services));
    f->pub->endpoint = f->endpoint;

    f->memory = fake_publication_log(f->pub, &params);

    fake_publication_activate(f->pub, &f->positions);
    AA_CHECK(0 == aa_send_channel_endpoint_add_publication(f->endpoint, f->pub));
    aa_network_publication_on_added_to_sender(f->pub, T0);
}

static void fixture_init(fixture_t *f, int64_t retransmit_delay_ns)
{
    fixture_init_channel(f, retransmit_delay_ns, "aeron:udp?endpoint=127.0.0.1:40456", 0);
}

static void fixture_close(fixture_t *f)
{
    aa_send_channel_endpoint_remove_publication(f->endpoint, f->pub);
    aa_send_channel_endpoint_delete(f->endpoint);
    aa_network_publication_free(f->pub);
    free(f->memory);
}

/* Appends one unfragmented message of `length` bytes filled with `fill`. */
static void append(fixture_t *f, size_t length, uint8_t fill)
{
    uint8_t payload[1024];
    AA_CHECK(length <= sizeof(payload));
    memset(payload, fill, length);
    aa_iovec_t iov = { payload, length };
    int32_t index = aa_index_by_term_count(aa_logbuffer_active_term_count(f->pub->log.metadata));
    int32_t term_id = 0;
    AA_CHECK(aa_term_appender_append_unfragmented(
        f->pub->log.term_buffers[index], TERM_LENGTH, &f->pub->log.metadata->term_tail_counters[index],
        f->pub->log.metadata->default_header, &iov, 1, length, 0, &term_id) > 0);
}

/* A control frame from source, through the endpoint's dispatch. Returns what it returns. */
static bool receive_from(fixture_t *f, const struct sockaddr_storage *source, uint8_t *frame, int32_t length, int64_t now_ns)
{
    AA_CHECK(length > 0);
    aa_udp_datagram_t datagram = fake_datagram(frame, length, source);
    return aa_send_channel_endpoint_on_datagram(f->endpoint, &datagram, now_ns);
}

/* A control frame from the receiver (127.0.0.1:40457). */
static bool receive(fixture_t *f, uint8_t *frame, int32_t length, int64_t now_ns)
{
    struct sockaddr_storage receiver = test_ipv4_address("127.0.0.1", 40457);
    return receive_from(f, &receiver, frame, length, now_ns);
}

static bool receive_sm(fixture_t *f, uint8_t flags, int32_t session_id, int64_t position, int32_t window, int64_t now_ns)
{
    uint8_t frame[AA_STATUS_MESSAGE_HEADER_LENGTH];
    int32_t bits = f->pub->position_bits_to_shift;
    int32_t length = aa_udp_frame_encode_status_message(
        frame, sizeof(frame), flags, session_id, STREAM_ID,
        aa_compute_term_id_from_position(position, bits, INITIAL_TERM_ID),
        aa_compute_term_offset_from_position(position, bits), window, 42, NULL);
    return receive(f, frame, length, now_ns);
}

static void receive_nak(fixture_t *f, int32_t term_offset, int32_t length, int64_t now_ns)
{
    uint8_t frame[AA_NAK_HEADER_LENGTH];
    int32_t frame_length = aa_udp_frame_encode_nak(
        frame, sizeof(frame), SESSION_ID, STREAM_ID, INITIAL_TERM_ID, term_offset, length);
    receive(f, frame, frame_length, now_ns);
}

static aa_data_header_t sent_data_header(const fixture_t *f, size_t i)
{
    aa_data_header_t header;
    AA_CHECK(i < f->media.wire.sent_count && f->media.wire.sent[i].length >= sizeof(header));
    memcpy(&header, f->media.wire.sent[i].data, sizeof(header));
    return header;
}

/* An SM from receiver `receiver_id` of `length` bytes (36; 44 with the tag; other lengths malformed). */
static bool receive_sm_from(
    fixture_t *f, int64_t receiver_id, uint8_t flags, int64_t position, size_t length, int64_t tag, int64_t now_ns)
{
    uint8_t frame[64];
    memset(frame, 0, sizeof(frame));
    int32_t bits = f->pub->position_bits_to_shift;
    AA_CHECK(aa_udp_frame_encode_status_message(
        frame, sizeof(frame), flags, SESSION_ID, STREAM_ID, aa_compute_term_id_from_position(position, bits, INITIAL_TERM_ID),
        aa_compute_term_offset_from_position(position, bits), RECEIVER_WINDOW, receiver_id, &tag) == 44);
    int32_t frame_length = (int32_t)length;
    memcpy(frame, &frame_length, sizeof(frame_length));
    return receive(f, frame, frame_length, now_ns);
}

/* ---- tests ---- */

/* A publication whose SETUP went out at T0 and whose receiver's first status message (position 0,
 * the receiver window) arrived at sm_time: connected, nothing sent yet. */
static void fixture_init_connected(fixture_t *f, int64_t retransmit_delay_ns, int64_t sm_time)
{
    fixture_init(f, retransmit_delay_ns);
    aa_network_publication_send(f->pub, T0);
    AA_CHECK(receive_sm(f, 0, SESSION_ID, 0, RECEIVER_WINDOW, sm_time));
}

static void should_send_setup_at_once_then_every_100ms_until_a_status_message(void)
{
    fixture_t f;
    fixture_init(&f, 0);

    aa_network_publication_send(f.pub, T0);
    AA_CHECK_EQ(f.media.wire.sent_count, 1);
    AA_CHECK_EQ(fake_wire_sent_type(&f.media.wire, 0), AA_HDR_TYPE_SETUP);
    aa_setup_header_t setup;
    AA_CHECK(0 == aa_udp_frame_decode_setup(f.media.wire.sent[0].data, f.media.wire.sent[0].length, &setup));
    AA_CHECK_EQ(setup.session_id, SESSION_ID);
    AA_CHECK_EQ(setup.stream_id, STREAM_ID);
    AA_CHECK_EQ(setup.initial_term_id, INITIAL_TERM_ID);
    AA_CHECK_EQ(setup.active_term_id, INITIAL_TERM_ID);
    AA_CHECK_EQ(setup.term_offset, 0);
    AA_CHECK_EQ(setup.term_length, TERM_LENGTH);
    AA_CHECK_EQ(setup.mtu, MTU);
    AA_CHECK_EQ(f.media.wire.sent[0].addr_len, 0);   /* to the channel's endpoint */

    aa_network_publication_send(f.pub, T0 + 99 * MS);
    AA_CHECK_EQ(fake_wire_count_type(&f.media.wire, AA_HDR_TYPE_SETUP), 1);
    aa_network_publication_send(f.pub, T0 + 100 * MS);
    AA_CHECK_EQ(fake_wire_count_type(&f.media.wire, AA_HDR_TYPE_SETUP), 2);
    aa_network_publication_send(f.pub, T0 + 150 * MS);
    AA_CHECK_EQ(fake_wire_count_type(&f.media.wire, AA_HDR_TYPE_SETUP), 2);

    /* no heartbeats before the first status message, however long */
    aa_network_publication_send(f.pub, T0 + 190 * MS);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_HEARTBEATS_SENT), 0);

    AA_CHECK(receive_sm(&f, 0, SESSION_ID, 0, RECEIVER_WINDOW, T0 + 199 * MS));
    aa_network_publication_send(f.pub, T0 + 1000 * MS);
    AA_CHECK_EQ(fake_wire_count_type(&f.media.wire, AA_HDR_TYPE_SETUP), 2);

    /* a status message asking for SETUP brings one at the next 100 ms tick */
    AA_CHECK(receive_sm(&f, AA_STATUS_MESSAGE_HEADER_SEND_SETUP_FLAG, SESSION_ID, 0, 0, T0 + 1001 * MS));
    aa_network_publication_send(f.pub, T0 + 1002 * MS);
    AA_CHECK_EQ(fake_wire_count_type(&f.media.wire, AA_HDR_TYPE_SETUP), 3);
    fixture_close(&f);
}

static void should_move_the_sender_limit_on_status_messages_and_send_up_to_it(void)
{
    fixture_t f;
    fixture_init(&f, 0);
    aa_network_publication_send(f.pub, T0);
    f.media.wire.sent_count = 0;
    int64_t setup_bytes = fake_count(&f.media.services, AA_SYSTEM_COUNTER_BYTES_SENT);
    AA_CHECK_EQ(setup_bytes, AA_SETUP_HEADER_LENGTH);

    /* a window too small for the next frame: nothing goes, the sender counts itself limited once */
    AA_CHECK(receive_sm(&f, 0, SESSION_ID, 0, 100, T0 + 1 * MS));
    AA_CHECK_EQ(f.positions.snd_lmt, 100);
    AA_CHECK(aa_logbuffer_is_connected(f.pub->log.metadata));
    AA_CHECK_EQ(f.pub->log.metadata->active_transport_count, 1);
    append(&f, 100, 'a');
    AA_CHECK_EQ(aa_network_publication_send(f.pub, T0 + 2 * MS), 0);
    AA_CHECK_EQ(aa_network_publication_send(f.pub, T0 + 3 * MS), 0);
    AA_CHECK_EQ(fake_wire_count_type(&f.media.wire, AA_HDR_TYPE_DATA), 0);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_SENDER_FLOW_CONTROL_LIMITS), 1);
    AA_CHECK_EQ(f.positions.snd_bpe, 1);

    AA_CHECK(receive_sm(&f, 0, SESSION_ID, 0, RECEIVER_WINDOW, T0 + 4 * MS));
    AA_CHECK_EQ(f.positions.snd_lmt, RECEIVER_WINDOW);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_STATUS_MESSAGES_RECEIVED), 2);
    /* the same status message again changes nothing: a keepalive, no work */
    AA_CHECK(!receive_sm(&f, 0, SESSION_ID, 0, RECEIVER_WINDOW, T0 + 5 * MS));

    append(&f, 100, 'b');
    append(&f, 100, 'c');
    int sent = aa_network_publication_send(f.pub, T0 + 6 * MS);
    AA_CHECK_EQ(sent, 3 * 160);   /* three 132-byte frames, 32-byte aligned, in one datagram */
    AA_CHECK_EQ(f.media.wire.sent_count, 1);
    AA_CHECK_EQ(fake_wire_sent_type(&f.media.wire, 0), AA_HDR_TYPE_DATA);
    AA_CHECK_EQ(f.media.wire.sent[0].length, 3 * 160);
    AA_CHECK_EQ(f.media.wire.sent[0].data[AA_DATA_HEADER_LENGTH], 'a');
    AA_CHECK_EQ(f.media.wire.sent[0].data[2 * 160 + AA_DATA_HEADER_LENGTH], 'c');
    AA_CHECK_EQ(f.positions.snd_pos, 3 * 160);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_BYTES_SENT) - setup_bytes, 3 * 160);
    AA_CHECK_EQ(f.positions.snd_bpe, 1);

    /* the receiver consumed it all: the limit follows, and the conductor's publisher limit with it */
    AA_CHECK(receive_sm(&f, 0, SESSION_ID, 3 * 160, RECEIVER_WINDOW, T0 + 7 * MS));
    AA_CHECK_EQ(f.positions.snd_lmt, 3 * 160 + RECEIVER_WINDOW);
    AA_CHECK_EQ(aa_network_publication_update_pub_pos_and_lmt(f.pub), 1);
    AA_CHECK_EQ(f.positions.pub_lmt, 3 * 160 + TERM_LENGTH / 2);
    AA_CHECK_EQ(f.positions.pub_pos, 3 * 160);
    AA_CHECK_EQ(aa_network_publication_update_pub_pos_and_lmt(f.pub), 0);
    fixture_close(&f);
}

static void should_send_a_heartbeat_after_100ms_without_data(void)
{
    fixture_t f;
    fixture_init_connected(&f, 0, T0 + 10 * MS);
    append(&f, 100, 'a');
    int64_t data_time = T0 + 20 * MS;
    AA_CHECK(aa_network_publication_send(f.pub, data_time) > 0);
    f.media.wire.sent_count = 0;

    AA_CHECK_EQ(aa_network_publication_send(f.pub, data_time + 99 * MS), 0);
    AA_CHECK_EQ(f.media.wire.sent_count, 0);
    /* a heartbeat is sent but is no work */
    AA_CHECK_EQ(aa_network_publication_send(f.pub, data_time + 100 * MS), 0);
    AA_CHECK_EQ(f.media.wire.sent_count, 1);
    aa_data_header_t heartbeat = sent_data_header(&f, 0);
    AA_CHECK_EQ(heartbeat.frame_header.type, AA_HDR_TYPE_DATA);
    AA_CHECK_EQ(heartbeat.frame_header.frame_length, 0);
    AA_CHECK_EQ(heartbeat.term_offset, 160);
    AA_CHECK_EQ(heartbeat.term_id, INITIAL_TERM_ID);
    AA_CHECK(!aa_udp_data_flags_is_end_of_stream(heartbeat.frame_header.flags));
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_HEARTBEATS_SENT), 1);

    /* the next one 100 ms after that one */
    aa_network_publication_send(f.pub, data_time + 199 * MS);
    AA_CHECK_EQ(f.media.wire.sent_count, 1);
    aa_network_publication_send(f.pub, data_time + 200 * MS);
    AA_CHECK_EQ(f.media.wire.sent_count, 2);
    fixture_close(&f);
}

/* Revoked (aeron-wave3.md 4.1): the stream ends at the producer position at once, the log reads not
 * connected, and heartbeats carry EOS and REVOKED (0xF0) even on an eos=false channel. */
static void should_end_a_revoked_stream_with_revoked_heartbeats(void)
{
    fixture_t f;
    fixture_init_connected(&f, 0, T0 + 10 * MS);
    f.pub->signal_eos = false;
    append(&f, 100, 'a');
    int64_t data_time = T0 + 20 * MS;
    AA_CHECK(aa_network_publication_send(f.pub, data_time) > 0);
    AA_CHECK(aa_logbuffer_is_connected(f.pub->log.metadata));

    aa_network_publication_revoke(f.pub, data_time + 1 * MS);
    AA_CHECK_EQ(f.pub->state, AA_NETWORK_PUBLICATION_STATE_LINGER);
    AA_CHECK_EQ(aa_logbuffer_end_of_stream_position(f.pub->log.metadata), 160);
    AA_CHECK_EQ(*f.pub->pub_lmt, 160);
    AA_CHECK(!aa_logbuffer_is_connected(f.pub->log.metadata));
    f.media.wire.sent_count = 0;
    aa_network_publication_send(f.pub, data_time + 100 * MS);
    AA_CHECK_EQ(f.media.wire.sent_count, 1);
    aa_data_header_t heartbeat = sent_data_header(&f, 0);
    AA_CHECK_EQ(heartbeat.frame_header.flags, 0xF0);
    AA_CHECK_EQ(heartbeat.term_offset, 160);
    receive_sm(&f, 0, SESSION_ID, 160, RECEIVER_WINDOW, data_time + 101 * MS);
    AA_CHECK(!aa_logbuffer_is_connected(f.pub->log.metadata));   /* status messages do not connect it again */
    fixture_close(&f);
}

static void should_retransmit_what_a_nak_asks_for_once_per_linger(void)
{
    fixture_t f;
    fixture_init_connected(&f, 0, T0 + 1 * MS);
    for (int i = 0; i < 4; i++)
    {
        append(&f, 100, (uint8_t)('a' + i));
    }
    AA_CHECK_EQ(aa_network_publication_send(f.pub, T0 + 2 * MS), 4 * 160);
    f.media.wire.sent_count = 0;

    /* frames 1 and 2 lost: resent at once (unicast delay 0), unchanged */
    int64_t t = T0 + 3 * MS;
    receive_nak(&f, 160, 320, t);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_NAK_MESSAGES_RECEIVED), 1);
    AA_CHECK_EQ(f.media.wire.sent_count, 1);
    AA_CHECK_EQ(f.media.wire.sent[0].length, 320);
    aa_data_header_t header = sent_data_header(&f, 0);
    AA_CHECK_EQ(header.term_offset, 160);
    AA_CHECK_EQ(f.media.wire.sent[0].data[AA_DATA_HEADER_LENGTH], 'b');
    AA_CHECK_EQ(f.media.wire.sent[0].data[160 + AA_DATA_HEADER_LENGTH], 'c');
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_RETRANSMITS_SENT), 1);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_RETRANSMITTED_BYTES), 320);

    /* the same NAK within the linger (10 ms) is a duplicate; after it, it is served again */
    receive_nak(&f, 160, 320, t + 5 * MS);
    AA_CHECK_EQ(f.media.wire.sent_count, 1);
    aa_network_publication_send(f.pub, t + 11 * MS);
    receive_nak(&f, 160, 320, t + 11 * MS);
    AA_CHECK_EQ(f.media.wire.sent_count, 2);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_RETRANSMITS_SENT), 2);

    /* a NAK beyond what was sent resends nothing; a malformed one is an invalid packet */
    receive_nak(&f, 4 * 160, 160, t + 30 * MS);
    AA_CHECK_EQ(f.media.wire.sent_count, 2);
    receive_nak(&f, TERM_LENGTH, 32, t + 31 * MS);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_INVALID_PACKETS), 1);
    fixture_close(&f);
}

static void should_delay_a_retransmit_by_the_configured_delay(void)
{
    fixture_t f;
    fixture_init_connected(&f, 20 * MS, T0 + 1 * MS);
    append(&f, 100, 'a');
    append(&f, 100, 'b');
    aa_network_publication_send(f.pub, T0 + 2 * MS);
    f.media.wire.sent_count = 0;

    int64_t t = T0 + 10 * MS;
    receive_nak(&f, 0, 160, t);
    AA_CHECK_EQ(f.media.wire.sent_count, 0);
    aa_network_publication_send(f.pub, t + 19 * MS);
    AA_CHECK_EQ(f.media.wire.sent_count, 0);
    aa_network_publication_send(f.pub, t + 20 * MS);
    AA_CHECK_EQ(f.media.wire.sent_count, 1);
    AA_CHECK_EQ(sent_data_header(&f, 0).term_offset, 0);
    AA_CHECK_EQ(f.media.wire.sent[0].length, 160);
    fixture_close(&f);
}

static void should_flag_end_of_stream_in_heartbeats_once_drained(void)
{
    fixture_t f;
    fixture_init_connected(&f, 0, T0 + 1 * MS);
    append(&f, 100, 'a');
    int64_t t = T0 + 2 * MS;
    aa_network_publication_send(f.pub, t);

    aa_network_publication_begin_draining(f.pub, t);
    AA_CHECK_EQ(f.pub->state, AA_NETWORK_PUBLICATION_STATE_DRAINING);
    AA_CHECK_EQ(f.positions.pub_lmt, 160);
    AA_CHECK_EQ(aa_logbuffer_end_of_stream_position(f.pub->log.metadata), 160);
    AA_CHECK(aa_network_publication_is_drained(f.pub));
    AA_CHECK_EQ(f.pub->is_end_of_stream, 1);

    f.media.wire.sent_count = 0;
    aa_network_publication_send(f.pub, t + 100 * MS);
    AA_CHECK_EQ(f.media.wire.sent_count, 1);
    aa_data_header_t heartbeat = sent_data_header(&f, 0);
    AA_CHECK_EQ(heartbeat.frame_header.frame_length, 0);
    AA_CHECK_EQ(heartbeat.term_offset, 160);
    AA_CHECK(aa_udp_data_flags_is_end_of_stream(heartbeat.frame_header.flags));

    /* the receiver's EOS status message tells the conductor it may stop lingering */
    AA_CHECK_EQ(f.pub->has_received_unicast_eos, 0);
    AA_CHECK(receive_sm(&f, AA_STATUS_MESSAGE_HEADER_EOS_FLAG, SESSION_ID, 160, RECEIVER_WINDOW, t + 101 * MS));
    AA_CHECK_EQ(f.pub->has_received_unicast_eos, 1);
    fixture_close(&f);
}

static void should_disconnect_when_no_status_message_came_for_the_connection_timeout(void)
{
    fixture_t f;
    fixture_init(&f, 0);
    aa_network_publication_send(f.pub, T0);
    int64_t t = T0 + 1 * MS;
    AA_CHECK(receive_sm(&f, 0, SESSION_ID, 0, RECEIVER_WINDOW, t));
    AA_CHECK(aa_logbuffer_is_connected(f.pub->log.metadata));

    aa_network_publication_send(f.pub, t + CONNECTION_TIMEOUT_NS);
    AA_CHECK(aa_logbuffer_is_connected(f.pub->log.metadata));
    aa_network_publication_send(f.pub, t + CONNECTION_TIMEOUT_NS + 1);
    AA_CHECK(!aa_logbuffer_is_connected(f.pub->log.metadata));
    AA_CHECK_EQ(f.pub->log.metadata->active_transport_count, 0);
    /* the conductor then holds the publisher at the sender position */
    f.positions.pub_lmt = 1000;
    AA_CHECK_EQ(aa_network_publication_update_pub_pos_and_lmt(f.pub), 1);
    AA_CHECK_EQ(f.positions.pub_lmt, 0);

    /* a status message reconnects it */
    AA_CHECK(receive_sm(&f, 0, SESSION_ID, 0, RECEIVER_WINDOW, t + CONNECTION_TIMEOUT_NS + 2));
    AA_CHECK(aa_logbuffer_is_connected(f.pub->log.metadata));
    fixture_close(&f);
}

static void should_connect_only_with_the_group_min_size_of_receivers_and_count_them(void)
{
    fixture_t f;
    volatile int64_t fc_receivers = -1;
    fixture_fc = "min,g:/2,t:1s";
    fixture_init(&f, 0);
    fixture_fc = NULL;
    AA_CHECK(f.pub->flow_control->tracks_receivers && 0 == strcmp(f.pub->flow_control->name, "min"));
    AA_CHECK_EQ(f.pub->flow_control->max_retransmission_length(f.pub->flow_control->state, TERM_LENGTH), 16 * RECEIVER_WINDOW);
    f.pub->flow_control->receivers_counter = &fc_receivers;
    aa_network_publication_send(f.pub, T0);

    /* one receiver: tracked, but not connected, and the limit stays at the sender position */
    receive_sm_from(&f, 1, 0, 0, 36, 0, T0 + 1 * MS);
    aa_network_publication_send(f.pub, T0 + 2 * MS);
    AA_CHECK_EQ(fc_receivers, 1);
    AA_CHECK(!aa_logbuffer_is_connected(f.pub->log.metadata));
    AA_CHECK_EQ(f.positions.snd_lmt, 0);
    /* the second: connected, limit = the slower + window */
    AA_CHECK(receive_sm_from(&f, 2, 0, 0, 44, 5, T0 + 3 * MS));
    AA_CHECK_EQ(fc_receivers, 2);
    AA_CHECK(aa_logbuffer_is_connected(f.pub->log.metadata));
    AA_CHECK_EQ(f.positions.snd_lmt, RECEIVER_WINDOW);

    /* an SM whose extra length is no group tag is logged, and counts as an untagged SM */
    AA_CHECK_EQ(f.media.services.errors, 0);
    receive_sm_from(&f, 1, 0, 1024, 40, 0, T0 + 4 * MS);
    AA_CHECK_EQ(f.media.services.errors, 1);
    AA_CHECK(NULL != strstr(f.media.services.last_error, "status message of 40 bytes from receiver 1"));
    AA_CHECK_EQ(fc_receivers, 2);

    /* the same ERR from an address that never sent a status message changes nothing (docs/security.md,
     * Network: senders) */
    uint8_t err[64];
    int32_t err_length = aa_udp_frame_encode_error(err, sizeof(err), SESSION_ID, STREAM_ID, 2, NULL, 13, "no", 2);
    struct sockaddr_storage stranger = test_ipv4_address("127.0.0.9", 40457);
    receive_from(&f, &stranger, err, err_length, T0 + 5 * MS);
    aa_network_publication_send(f.pub, T0 + 5 * MS);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_ERROR_FRAMES_NOT_FROM_A_RECEIVER), 1);
    AA_CHECK_EQ(fc_receivers, 2);
    AA_CHECK(aa_logbuffer_is_connected(f.pub->log.metadata));

    AA_CHECK_EQ(f.media.services.publication_errors, 0);

    /* receiver 2 rejects the image (ERR with its id): gone at the next idle, not connected any more;
     * its clients hear of it once (ON_PUBLICATION_ERROR, aeron-wave3.md 4.2), not at every ERR */
    receive(&f, err, err_length, T0 + 5 * MS);
    AA_CHECK_EQ(f.media.services.publication_errors, 1);
    AA_CHECK_EQ(f.media.services.last_publication_error.registration_id, 1);
    AA_CHECK_EQ(f.media.services.last_publication_error.receiver_id, 2);
    AA_CHECK_EQ(f.media.services.last_publication_error.group_tag, -1);
    AA_CHECK_EQ(f.media.services.last_publication_error.session_id, SESSION_ID);
    AA_CHECK_EQ(f.media.services.last_publication_error.error_code, 13);
    AA_CHECK_EQ(f.media.services.last_publication_error.address_type, AA_PUBLICATION_ERROR_ADDRESS_TYPE_IPV4);
    AA_CHECK(0 == strcmp(f.media.services.last_publication_error_text, "no"));
    receive(&f, err, err_length, T0 + 5 * MS);
    AA_CHECK_EQ(f.media.services.publication_errors, 1);
    aa_network_publication_send(f.pub, T0 + 6 * MS);
    AA_CHECK_EQ(fc_receivers, 1);
    AA_CHECK(!aa_logbuffer_is_connected(f.pub->log.metadata));
    /* it comes back; then receiver 1 falls silent past t:1s */
    receive_sm_from(&f, 2, 0, 2048, 36, 0, T0 + 7 * MS);
    AA_CHECK(aa_logbuffer_is_connected(f.pub->log.metadata));
    receive_sm_from(&f, 2, 0, 2048, 36, 0, T0 + 900 * MS);
    aa_network_publication_send(f.pub, T0 + 1004 * MS + 1);
    AA_CHECK_EQ(fc_receivers, 1);
    AA_CHECK(!aa_logbuffer_is_connected(f.pub->log.metadata));
    fixture_close(&f);
}

static void should_dispatch_by_session_and_count_what_the_endpoint_sees(void)
{
    fixture_t f;
    fixture_init(&f, 0);
    aa_network_publication_send(f.pub, T0);

    /* another session's status message is counted, not applied: the window stays closed */
    AA_CHECK(receive_sm(&f, 0, SESSION_ID + 1, 0, RECEIVER_WINDOW, T0 + 1 * MS));
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_STATUS_MESSAGES_RECEIVED), 1);
    AA_CHECK_EQ(f.positions.snd_lmt, 0);
    AA_CHECK(!aa_logbuffer_is_connected(f.pub->log.metadata));
    append(&f, 100, 'a');
    AA_CHECK_EQ(aa_network_publication_send(f.pub, T0 + 1 * MS), 0);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_SENDER_FLOW_CONTROL_LIMITS), 1);
    AA_CHECK_EQ(f.positions.snd_bpe, 1);

    /* a datagram too short for a frame is an invalid packet; its bytes are counted received */
    uint8_t junk[5] = { 1, 2, 3, 4, 5 };
    receive(&f, junk, sizeof(junk), T0 + 2 * MS);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_INVALID_PACKETS), 1);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_BYTES_RECEIVED), AA_STATUS_MESSAGE_HEADER_LENGTH + 5);

    /* a socket that takes nothing: a short send, the data stays for the next cycle */
    AA_CHECK(receive_sm(&f, 0, SESSION_ID, 0, RECEIVER_WINDOW, T0 + 3 * MS));
    f.media.wire.send_room = 0;
    AA_CHECK_EQ(aa_network_publication_send(f.pub, T0 + 4 * MS), 0);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_SHORT_SENDS), 1);
    AA_CHECK_EQ(f.positions.snd_pos, 0);
    f.media.wire.send_room = SIZE_MAX;
    AA_CHECK_EQ(aa_network_publication_send(f.pub, T0 + 5 * MS), 160);
    AA_CHECK_EQ(f.positions.snd_pos, 160);

    /* a socket error is logged through the services, named as a channel endpoint error */
    f.media.wire.fail_sends = true;
    append(&f, 100, 'b');
    AA_CHECK_EQ(aa_network_publication_send(f.pub, T0 + 6 * MS), 0);
    AA_CHECK_EQ(f.media.services.errors, 1);
    AA_CHECK_EQ(f.media.services.last_error_code, AA_ERROR_CODE_CHANNEL_ENDPOINT_ERROR);
    AA_CHECK(NULL != strstr(f.media.services.last_error, "Network is unreachable"));
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_ERRORS), f.media.services.errors);
    fixture_close(&f);
}

/* Multicast (reference 1.5, 4.4, 5): SETUP carries the GROUP flag and the channel's TTL; NAKs for
 * different ranges each take an action from the max-resend pool and are resent to the group (the
 * default destination); with the pool busy a NAK is dropped and counted; RTTM replies go to the group. */
static void should_serve_a_group_with_a_retransmit_pool(void)
{
    fixture_t f;
    fixture_init_channel(&f, 0, "aeron:udp?endpoint=224.0.1.1:40456|ttl=3", 2);
    AA_CHECK(0 == strcmp(f.pub->flow_control->name, "max"));
    aa_network_publication_send(f.pub, T0);
    AA_CHECK_EQ(fake_wire_sent_type(&f.media.wire, 0), AA_HDR_TYPE_SETUP);
    aa_setup_header_t setup;
    AA_CHECK(0 == aa_udp_frame_decode_setup(f.media.wire.sent[0].data, f.media.wire.sent[0].length, &setup));
    AA_CHECK_EQ(setup.frame_header.flags, AA_SETUP_HEADER_GROUP_FLAG);
    AA_CHECK_EQ(setup.ttl, 3);
    AA_CHECK_EQ(f.media.wire.sent[0].address.ss_family, 0);   /* to the data group */

    AA_CHECK(receive_sm(&f, 0, SESSION_ID, 0, RECEIVER_WINDOW, T0 + 1 * MS));
    for (int i = 0; i < 4; i++)
    {
        append(&f, 100, (uint8_t)('a' + i));
    }
    AA_CHECK_EQ(aa_network_publication_send(f.pub, T0 + 2 * MS), 4 * 160);
    f.media.wire.sent_count = 0;

    int64_t t = T0 + 3 * MS;
    receive_nak(&f, 0, 160, t);         /* two receivers lost different frames: both resent */
    receive_nak(&f, 320, 160, t);
    AA_CHECK_EQ(f.media.wire.sent_count, 2);
    AA_CHECK_EQ(sent_data_header(&f, 0).term_offset, 0);
    AA_CHECK_EQ(sent_data_header(&f, 1).term_offset, 320);
    AA_CHECK_EQ(f.media.wire.sent[1].address.ss_family, 0);
    receive_nak(&f, 320, 160, t + 1 * MS);   /* a third receiver's NAK for a range resent: lingering, ignored */
    AA_CHECK_EQ(f.media.wire.sent_count, 2);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_RETRANSMIT_OVERFLOW), 0);
    receive_nak(&f, 160, 160, t + 2 * MS);   /* both actions busy: dropped and counted */
    AA_CHECK_EQ(f.media.wire.sent_count, 2);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_RETRANSMIT_OVERFLOW), 1);
    aa_network_publication_send(f.pub, t + 11 * MS);   /* the linger is over: the pool is free again */
    receive_nak(&f, 160, 160, t + 11 * MS);
    AA_CHECK_EQ(f.media.wire.sent_count, 3);
    AA_CHECK_EQ(sent_data_header(&f, 2).term_offset, 160);

    uint8_t rttm[AA_RTTM_HEADER_LENGTH];
    memset(rttm, 0, sizeof(rttm));
    aa_frame_header_t *header = (aa_frame_header_t *)rttm;
    header->frame_length = AA_RTTM_HEADER_LENGTH;
    header->flags = AA_RTTM_HEADER_REPLY_FLAG;
    header->type = AA_HDR_TYPE_RTTM;
    memcpy(rttm + 8, &(int32_t){ SESSION_ID }, sizeof(int32_t));
    memcpy(rttm + 12, &(int32_t){ STREAM_ID }, sizeof(int32_t));
    aa_udp_datagram_t datagram;
    memset(&datagram, 0, sizeof(datagram));
    datagram.buffer = rttm;
    datagram.length = sizeof(rttm);
    datagram.address.ss_family = AF_INET;
    datagram.addr_len = sizeof(struct sockaddr_in);
    aa_send_channel_endpoint_on_datagram(f.endpoint, &datagram, t + 12 * MS);
    AA_CHECK_EQ(f.media.wire.sent_count, 4);
    AA_CHECK_EQ(fake_wire_sent_type(&f.media.wire, 3), AA_HDR_TYPE_RTTM);
    AA_CHECK_EQ(f.media.wire.sent[3].addr_len, 0);   /* to the data group, where the receivers listen */
    fixture_close(&f);
}

static void receive_nak_from(fixture_t *f, const struct sockaddr_storage *source, int32_t term_offset, int32_t length, int64_t now_ns)
{
    uint8_t frame[AA_NAK_HEADER_LENGTH];
    int32_t frame_length = aa_udp_frame_encode_nak(
        frame, sizeof(frame), SESSION_ID, STREAM_ID, INITIAL_TERM_ID, term_offset, length);
    receive_from(f, source, frame, frame_length, now_ns);
}

/* docs/security.md, Network: senders: NAKs only from a receiver, only from what it reported to
 * snd-pos, within its window per linger; each refusal counted. */
static void should_honour_naks_only_from_receivers_within_their_window_and_budget(void)
{
    fixture_t f;
    fixture_init_connected(&f, 0, T0 + 1 * MS);
    for (int i = 0; i < 30; i++)
    {
        append(&f, 1000, (uint8_t)('a' + i));   /* frames of 1056 bytes */
    }
    for (int i = 0; i < 10; i++)
    {
        aa_network_publication_send(f.pub, T0 + 2 * MS);
    }
    AA_CHECK_EQ(aa_get_int64_volatile(f.pub->snd_pos), 30 * 1056);
    f.media.wire.sent_count = 0;
    struct sockaddr_storage stranger = test_ipv4_address("127.0.0.1", 40999);
    struct sockaddr_storage receiver = test_ipv4_address("127.0.0.1", 40457);
    int64_t t = T0 + 3 * MS;

    /* a stranger's NAK: nothing resent, counted */
    receive_nak_from(&f, &stranger, 0, 4096, t);
    AA_CHECK_EQ(f.media.wire.sent_count, 0);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_NAKS_NOT_FROM_A_RECEIVER), 1);

    /* the receiver reports 10 frames consumed (and an 8 KiB window): a NAK from 0 is served from there */
    const int32_t window = 8 * 1024;
    receive_sm(&f, 0, SESSION_ID, 10 * 1056, window, t);
    receive_nak_from(&f, &receiver, 0, 2 * 1056 + 10 * 1056, t);
    AA_CHECK_EQ(f.media.wire.sent_count, 2);
    AA_CHECK_EQ(sent_data_header(&f, 0).term_offset, 10 * 1056);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_RETRANSMITTED_BYTES), 2 * 1056);
    /* below what it reported: refused, counted */
    receive_nak_from(&f, &receiver, 0, 1056, t + 1);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_NAKS_OUTSIDE_RECEIVER_WINDOW), 1);
    /* an offset inside a frame: its payload is never sent as if it were frames */
    f.media.wire.sent_count = 0;
    receive_nak_from(&f, &receiver, 14 * 1056 + 64, 4096, t + 2);
    AA_CHECK_EQ(f.media.wire.sent_count, 0);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_INVALID_PACKETS), 1);

    /* a storm of large, shifted and alternating ranges for 100 ms: at most the receiver's window
     * per linger (10 ms) is resent */
    int64_t before = fake_count(&f.media.services, AA_SYSTEM_COUNTER_RETRANSMITTED_BYTES);
    int64_t start = t + 11 * MS;
    int64_t duration = 100 * MS;
    for (int64_t now = start, i = 0; now < start + duration; now += 50 * 1000, i++)
    {
        f.media.wire.sent_count = 0;
        int32_t offset = (int32_t)((i % 3) * 1056 * 7 + (i % 2) * 32 * 11);
        receive_nak_from(&f, &receiver, offset, 0 == i % 2 ? INT32_MAX : 20 * 1056, now);
        receive_nak_from(&f, &stranger, offset, INT32_MAX, now);
        aa_network_publication_send(f.pub, now);
    }
    int64_t resent = fake_count(&f.media.services, AA_SYSTEM_COUNTER_RETRANSMITTED_BYTES) - before;
    AA_CHECK(resent > 0);
    AA_CHECK(resent <= window * (duration / (10 * MS) + 1));
    AA_CHECK(fake_count(&f.media.services, AA_SYSTEM_COUNTER_NAKS_OVER_RETRANSMIT_BUDGET) > 0);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_NAKS_NOT_FROM_A_RECEIVER), 1 + duration / (50 * 1000));

    /* silent for the connection timeout: no longer a receiver */
    f.media.wire.sent_count = 0;
    int64_t later = t + CONNECTION_TIMEOUT_NS + 1;
    receive_nak_from(&f, &receiver, 20 * 1056, 1056, later);
    AA_CHECK_EQ(f.media.wire.sent_count, 0);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_NAKS_NOT_FROM_A_RECEIVER), 2 + duration / (50 * 1000));
    fixture_close(&f);
}

/* ---- response channels (docs/architecture.md, "Response channels") ---- */

static void should_ask_for_a_response_channel_in_setup_and_raise_response_setup_only_from_a_receiver(void)
{
    fixture_t f;
    fixture_response_correlation_id = 77;
    fixture_init(&f, 0);
    fixture_response_correlation_id = -1;
    aa_network_publication_send(f.pub, T0);
    aa_setup_header_t setup;
    AA_CHECK(0 == aa_udp_frame_decode_setup(f.media.wire.sent[0].data, f.media.wire.sent[0].length, &setup));
    AA_CHECK_EQ(setup.frame_header.flags, AA_SETUP_HEADER_SEND_RESPONSE_FLAG);

    /* RSP_SETUP from an address that sent no status message: refused and counted */
    uint8_t frame[AA_RESPONSE_SETUP_HEADER_LENGTH];
    int32_t length = aa_udp_frame_encode_response_setup(frame, sizeof(frame), SESSION_ID, STREAM_ID, 4242);
    struct sockaddr_storage stranger = test_ipv4_address("127.0.0.1", 50000);
    receive_from(&f, &stranger, frame, length, T0 + MS);
    AA_CHECK_EQ(f.media.services.response_setups, 0);
    AA_CHECK_EQ(fake_count(&f.media.services, AA_SYSTEM_COUNTER_RESPONSE_SETUPS_NOT_FROM_A_RECEIVER), 1);

    /* from the receiver (the request's image sends both): the conductor learns the response session */
    AA_CHECK(receive_sm(&f, 0, SESSION_ID, 0, RECEIVER_WINDOW, T0 + 2 * MS));
    receive(&f, frame, length, T0 + 3 * MS);
    AA_CHECK_EQ(f.media.services.response_setups, 1);
    AA_CHECK_EQ(f.media.services.last_response_correlation_id, 77);
    AA_CHECK_EQ(f.media.services.last_response_session_id, 4242);
    /* a request publication is no response publication: its receiver raises nothing */
    AA_CHECK_EQ(f.media.services.responses_connected, 0);
    fixture_close(&f);
}

static void should_send_a_response_publication_only_to_where_its_first_status_message_came_from(void)
{
    fixture_t f;
    fixture_response_correlation_id = 55;
    fixture_is_response = true;
    fixture_init_channel(&f, 0, "aeron:udp?control-mode=response|control=127.0.0.1:40456", 0);
    fixture_response_correlation_id = -1;
    fixture_is_response = false;

    /* no address yet: no SETUP, however long */
    aa_network_publication_send(f.pub, T0);
    aa_network_publication_send(f.pub, T0 + 500 * MS);
    AA_CHECK_EQ(f.media.wire.sent_count, 0);

    /* the requester's SEND_SETUP status message (through a NAT: the translated address) */
    struct sockaddr_storage translated = test_ipv4_address("10.9.8.7", 61000);
    uint8_t frame[AA_STATUS_MESSAGE_HEADER_LENGTH];
    int32_t length = aa_udp_frame_encode_status_message(
        frame, sizeof(frame), AA_STATUS_MESSAGE_HEADER_SEND_SETUP_FLAG, SESSION_ID, STREAM_ID, 0, 0, 0, 42, NULL);
    AA_CHECK(receive_from(&f, &translated, frame, length, T0 + 501 * MS));
    aa_network_publication_send(f.pub, T0 + 502 * MS);
    AA_CHECK_EQ(fake_wire_count_type(&f.media.wire, AA_HDR_TYPE_SETUP), 1);
    AA_CHECK(aa_udp_address_equals(&f.media.wire.sent[0].address, &translated));
    aa_setup_header_t setup;
    AA_CHECK(0 == aa_udp_frame_decode_setup(f.media.wire.sent[0].data, f.media.wire.sent[0].length, &setup));
    AA_CHECK_EQ(setup.frame_header.flags, 0);   /* a response asks for no response */

    /* the first status message giving it a receiver: the requester's image exists */
    length = aa_udp_frame_encode_status_message(
        frame, sizeof(frame), 0, SESSION_ID, STREAM_ID, INITIAL_TERM_ID, 0, RECEIVER_WINDOW, 42, NULL);
    AA_CHECK(receive_from(&f, &translated, frame, length, T0 + 503 * MS));
    AA_CHECK_EQ(f.media.services.responses_connected, 1);
    AA_CHECK_EQ(f.media.services.last_response_correlation_id, 55);
    receive_from(&f, &translated, frame, length, T0 + 504 * MS);   /* a keepalive */
    AA_CHECK_EQ(f.media.services.responses_connected, 1);   /* once */

    /* data goes to the learnt address too, never to another that sends status messages later */
    append(&f, 100, 0x5A);
    struct sockaddr_storage other = test_ipv4_address("10.9.8.6", 61001);
    receive_from(&f, &other, frame, length, T0 + 505 * MS);
    f.media.wire.sent_count = 0;
    aa_network_publication_send(f.pub, T0 + 506 * MS);
    AA_CHECK_EQ(fake_wire_count_type(&f.media.wire, AA_HDR_TYPE_DATA), 1);
    AA_CHECK(aa_udp_address_equals(&f.media.wire.sent[0].address, &translated));
    fixture_close(&f);
}

int main(void)
{
    AA_RUN(should_send_setup_at_once_then_every_100ms_until_a_status_message);
    AA_RUN(should_move_the_sender_limit_on_status_messages_and_send_up_to_it);
    AA_RUN(should_send_a_heartbeat_after_100ms_without_data);
    AA_RUN(should_retransmit_what_a_nak_asks_for_once_per_linger);
    AA_RUN(should_delay_a_retransmit_by_the_configured_delay);
    AA_RUN(should_flag_end_of_stream_in_heartbeats_once_drained);
    AA_RUN(should_disconnect_when_no_status_message_came_for_the_connection_timeout);
    AA_RUN(should_connect_only_with_the_group_min_size_of_receivers_and_count_them);
    AA_RUN(should_end_a_revoked_stream_with_revoked_heartbeats);
    AA_RUN(should_dispatch_by_session_and_count_what_the_endpoint_sees);
    AA_RUN(should_serve_a_group_with_a_retransmit_pool);
    AA_RUN(should_honour_naks_only_from_receivers_within_their_window_and_budget);
    AA_RUN(should_ask_for_a_response_channel_in_setup_and_raise_response_setup_only_from_a_receiver);
    AA_RUN(should_send_a_response_publication_only_to_where_its_first_status_message_came_from);
    return 0;
}
