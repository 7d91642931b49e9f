/*
 * Multi-destination-cast destinations: the destination table (dynamic add, refresh, move and timeout
 * with the test's clock; manual add and remove, no timeout; several expiring at once), a send
 * channel endpoint that fans every datagram out to its destinations over a fake wire, a dynamic MDC
 * receiver eliciting SETUP from the control address, and a multi-destination subscription's endpoint
 * taking one session's frames from two transports into one image (each frame once), answering
 * over both, and ending its stream (EOS, revoke) once every live connection is at end of stream.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "aa_media_fakes.h"
#include "media/aa_send_channel_endpoint.h"
#include "media/aa_receive_channel_endpoint.h"
#include "media/aa_publication_image.h"
#include "media/aa_udp_destination_tracker.h"
#include "protocols/aa_udp_frames.h"

#define MS (1000 * 1000LL)

static const socklen_t IN_LENGTH = sizeof(struct sockaddr_in);

static void should_add_dynamic_destinations_on_first_status_message_and_refresh_them(void)
{
    aa_udp_destination_tracker_t tracker;
    aa_udp_destination_tracker_init(&tracker, false, 0);
    AA_CHECK_EQ(tracker.destination_timeout_ns, AA_UDP_DESTINATION_TIMEOUT_DEFAULT_NS);
    struct sockaddr_storage a = test_ipv4_address("10.0.0.1", 40001);
    struct sockaddr_storage b = test_ipv4_address("10.0.0.2", 40002);

    AA_CHECK_EQ(1, aa_udp_destination_tracker_on_status_message(&tracker, 11, &a, IN_LENGTH, 0));
    AA_CHECK_EQ(0, aa_udp_destination_tracker_on_status_message(&tracker, 11, &a, IN_LENGTH, 100 * MS));
    AA_CHECK_EQ(1, aa_udp_destination_tracker_on_status_message(&tracker, 22, &b, IN_LENGTH, 200 * MS));
    AA_CHECK_EQ(2, tracker.count);
    AA_CHECK_EQ(100 * MS, tracker.destinations[0].time_of_last_activity_ns);
    AA_CHECK_EQ(22, tracker.destinations[1].receiver_id);

    /* a known receiver whose status messages now come from elsewhere is sent to there */
    struct sockaddr_storage moved = test_ipv4_address("10.0.0.3", 40003);
    AA_CHECK_EQ(0, aa_udp_destination_tracker_on_status_message(&tracker, 11, &moved, IN_LENGTH, 300 * MS));
    AA_CHECK_EQ(2, tracker.count);
    AA_CHECK(aa_udp_address_equals(&tracker.destinations[0].address, &moved));
    aa_udp_destination_tracker_close(&tracker);
}

/* A tracker with a 1 s destination timeout, and the addresses of receivers a, b and c and of a
 * stranger. */
typedef struct tracker_fixture_stct
{
    aa_udp_destination_tracker_t tracker;
    struct sockaddr_storage a, b, c, stranger;
}
tracker_fixture_t;

static void tracker_fixture_init(tracker_fixture_t *f, bool is_manual)
{
    aa_udp_destination_tracker_init(&f->tracker, is_manual, 1000 * MS);
    f->a = test_ipv4_address("10.0.0.1", 40001);
    f->b = test_ipv4_address("10.0.0.2", 40002);
    f->c = test_ipv4_address("10.0.0.3", 40003);
    f->stranger = test_ipv4_address("10.0.0.9", 40009);
}

static void should_drop_dynamic_destinations_after_the_timeout_without_a_status_message(void)
{
    tracker_fixture_t f;
    tracker_fixture_init(&f, false);
    aa_udp_destination_tracker_on_status_message(&f.tracker, 1, &f.a, IN_LENGTH, 0);
    aa_udp_destination_tracker_on_status_message(&f.tracker, 2, &f.b, IN_LENGTH, 0);
    aa_udp_destination_tracker_on_status_message(&f.tracker, 3, &f.c, IN_LENGTH, 0);

    /* b keeps sending status messages, a and c go quiet */
    aa_udp_destination_tracker_on_status_message(&f.tracker, 2, &f.b, IN_LENGTH, 900 * MS);
    AA_CHECK_EQ(0, aa_udp_destination_tracker_check_timeouts(&f.tracker, 1000 * MS));
    AA_CHECK_EQ(3, f.tracker.count);

    /* two expire at once, on either side of the live one: the live one stays (reference 12, item 2) */
    AA_CHECK_EQ(2, aa_udp_destination_tracker_check_timeouts(&f.tracker, 1001 * MS));
    AA_CHECK_EQ(1, f.tracker.count);
    AA_CHECK_EQ(2, f.tracker.destinations[0].receiver_id);
    AA_CHECK(aa_udp_address_equals(&f.tracker.destinations[0].address, &f.b));

    AA_CHECK_EQ(1, aa_udp_destination_tracker_check_timeouts(&f.tracker, 1901 * MS));
    AA_CHECK_EQ(0, f.tracker.count);

    /* a receiver that comes back is a new destination */
    AA_CHECK_EQ(1, aa_udp_destination_tracker_on_status_message(&f.tracker, 1, &f.a, IN_LENGTH, 2000 * MS));
    aa_udp_destination_tracker_close(&f.tracker);
}

static void should_keep_manual_destinations_until_removed(void)
{
    tracker_fixture_t f;
    tracker_fixture_init(&f, true);
    AA_CHECK_EQ(0, aa_udp_destination_tracker_add(&f.tracker, &f.a, IN_LENGTH, 7, 0));
    AA_CHECK_EQ(0, aa_udp_destination_tracker_add(&f.tracker, &f.b, IN_LENGTH, 8, 0));
    AA_CHECK_EQ(0, aa_udp_destination_tracker_add(&f.tracker, &f.a, IN_LENGTH, 9, 10));   /* not twice */
    AA_CHECK_EQ(2, f.tracker.count);

    /* status messages refresh (and name the receiver) but never add; nothing times out */
    AA_CHECK_EQ(0, aa_udp_destination_tracker_on_status_message(&f.tracker, 55, &f.a, IN_LENGTH, 50 * MS));
    AA_CHECK(f.tracker.destinations[0].has_receiver_id);
    AA_CHECK_EQ(55, f.tracker.destinations[0].receiver_id);
    AA_CHECK_EQ(0, aa_udp_destination_tracker_on_status_message(&f.tracker, 56, &f.stranger, IN_LENGTH, 50 * MS));
    AA_CHECK_EQ(2, f.tracker.count);
    AA_CHECK_EQ(0, aa_udp_destination_tracker_check_timeouts(&f.tracker, 3600 * 1000 * MS));
    AA_CHECK_EQ(2, f.tracker.count);

    AA_CHECK_EQ(1, aa_udp_destination_tracker_remove(&f.tracker, &f.a));
    AA_CHECK_EQ(0, aa_udp_destination_tracker_remove(&f.tracker, &f.a));
    AA_CHECK_EQ(1, f.tracker.count);
    AA_CHECK(aa_udp_address_equals(&f.tracker.destinations[0].address, &f.b));
    aa_udp_destination_tracker_close(&f.tracker);
}

static int32_t encode_sm(uint8_t *frame, int64_t receiver_id)
{
    return aa_udp_frame_encode_status_message(
        frame, AA_STATUS_MESSAGE_HEADER_LENGTH, 0, 1234, 10, 0, 0, 128 * 1024, receiver_id, NULL);
}

static void should_send_every_datagram_to_every_dynamic_destination_until_it_times_out(void)
{
    fake_media_t m;
    fake_media_init(&m, "aeron:udp?control=127.0.0.1:40456|control-mode=dynamic");
    aa_send_channel_endpoint_t *endpoint = NULL;
    AA_CHECK(0 == aa_send_channel_endpoint_create(&endpoint, m.channel, &m.transports, &m.services.services));
    AA_CHECK(endpoint->is_mdc);
    AA_CHECK(!endpoint->destinations.is_manual);
    endpoint->destinations.destination_timeout_ns = 500 * MS;

    uint8_t payload[64] = { 0 };
    aa_udp_datagram_t datagrams[2];
    memset(datagrams, 0, sizeof(datagrams));
    datagrams[0].buffer = payload;
    datagrams[0].length = 32;
    datagrams[1].buffer = payload;
    datagrams[1].length = 64;

    /* no destination yet: the batch counts as sent, nothing leaves */
    AA_CHECK_EQ(2, aa_send_channel_endpoint_send(endpoint, datagrams, 2));
    AA_CHECK_EQ(0, m.wire.sent_count);

    struct sockaddr_storage r1 = test_ipv4_address("127.0.0.1", 41001);
    struct sockaddr_storage r2 = test_ipv4_address("127.0.0.1", 41002);
    uint8_t sm[AA_STATUS_MESSAGE_HEADER_LENGTH];
    encode_sm(sm, 101);
    aa_udp_datagram_t in = { .buffer = sm, .length = sizeof(sm), .address = r1, .addr_len = IN_LENGTH };
    aa_send_channel_endpoint_on_datagram(endpoint, &in, 0);
    encode_sm(sm, 202);
    in.address = r2;
    aa_send_channel_endpoint_on_datagram(endpoint, &in, 100 * MS);
    AA_CHECK_EQ(2, endpoint->destinations.count);

    AA_CHECK_EQ(2, aa_send_channel_endpoint_send(endpoint, datagrams, 2));
    AA_CHECK_EQ(4, m.wire.sent_count);
    AA_CHECK_EQ(2, m.wire.send_calls - 0);   /* one batch per destination */
    AA_CHECK(aa_udp_address_equals(&m.wire.sent[0].address, &r1));
    AA_CHECK(aa_udp_address_equals(&m.wire.sent[1].address, &r1));
    AA_CHECK(aa_udp_address_equals(&m.wire.sent[2].address, &r2));
    AA_CHECK_EQ(64, m.wire.sent[3].length);
    AA_CHECK_EQ(0, datagrams[0].addr_len);   /* the caller's batch is left as it was */
    AA_CHECK_EQ(96 * 2, fake_count(&m.services, AA_SYSTEM_COUNTER_BYTES_SENT));

    /* a datagram with its own address (an RTT reply) goes there only */
    datagrams[0].address = r2;
    datagrams[0].addr_len = IN_LENGTH;
    AA_CHECK_EQ(1, aa_send_channel_endpoint_send(endpoint, datagrams, 1));
    AA_CHECK_EQ(5, m.wire.sent_count);
    datagrams[0].addr_len = 0;

    /* r1 went quiet: dropped after the timeout; r2's status messages keep it */
    in.address = r2;
    aa_send_channel_endpoint_on_datagram(endpoint, &in, 450 * MS);
    AA_CHECK_EQ(0, aa_send_channel_endpoint_check_destinations(endpoint, 500 * MS));
    AA_CHECK_EQ(1, aa_send_channel_endpoint_check_destinations(endpoint, 501 * MS));
    m.wire.sent_count = 0;
    AA_CHECK_EQ(2, aa_send_channel_endpoint_send(endpoint, datagrams, 2));
    AA_CHECK_EQ(2, m.wire.sent_count);
    AA_CHECK(aa_udp_address_equals(&m.wire.sent[0].address, &r2));

    /* a destination whose socket takes only part of the batch: the least taken counts as sent */
    in.address = r1;
    encode_sm(sm, 101);
    aa_send_channel_endpoint_on_datagram(endpoint, &in, 600 * MS);
    m.wire.send_room = 1;
    AA_CHECK_EQ(1, aa_send_channel_endpoint_send(endpoint, datagrams, 2));

    aa_send_channel_endpoint_delete(endpoint);
}

static void should_not_track_destinations_on_a_plain_unicast_endpoint(void)
{
    fake_media_t m;
    fake_media_init(&m, "aeron:udp?endpoint=127.0.0.1:40457");
    aa_send_channel_endpoint_t *endpoint = NULL;
    AA_CHECK(0 == aa_send_channel_endpoint_create(&endpoint, m.channel, &m.transports, &m.services.services));
    AA_CHECK(!endpoint->is_mdc);
    uint8_t sm[AA_STATUS_MESSAGE_HEADER_LENGTH];
    encode_sm(sm, 101);
    aa_udp_datagram_t in = { .buffer = sm, .length = sizeof(sm), .address = test_ipv4_address("127.0.0.1", 41001), .addr_len = IN_LENGTH };
    aa_send_channel_endpoint_on_datagram(endpoint, &in, 0);
    AA_CHECK_EQ(0, endpoint->destinations.count);
    uint8_t payload[32] = { 0 };
    aa_udp_datagram_t datagram = { .buffer = payload, .length = 32 };
    AA_CHECK_EQ(1, aa_send_channel_endpoint_send(endpoint, &datagram, 1));
    AA_CHECK_EQ(1, m.wire.sent_count);
    AA_CHECK_EQ(0, m.wire.sent[0].addr_len);   /* the transport's own destination */
    aa_send_channel_endpoint_delete(endpoint);
}


static void should_elicit_setup_from_the_control_address_until_the_stream_has_an_image(void)
{
    fake_media_t m;
    fake_media_init(&m, "aeron:udp?endpoint=127.0.0.1:41010|control=127.0.0.1:40456");
    aa_receive_channel_endpoint_params_t params = { .window_length = 32 * 1024, .nak_delay_ns = MS, .is_reliable = true };
    aa_receive_channel_endpoint_t *endpoint = NULL;
    AA_CHECK(0 == aa_receive_channel_endpoint_create(&endpoint, m.channel, &params, &m.transports, &m.services.services));
    AA_CHECK_EQ(0, aa_receive_channel_endpoint_elicit_setups(endpoint, 0));   /* no stream yet */
    AA_CHECK(0 == aa_receive_channel_endpoint_add_stream(endpoint, 10));

    struct sockaddr_storage control = test_ipv4_address("127.0.0.1", 40456);
    AA_CHECK_EQ(1, aa_receive_channel_endpoint_elicit_setups(endpoint, 0));
    AA_CHECK_EQ(1, m.wire.sent_count);
    AA_CHECK_EQ(AA_HDR_TYPE_SM, fake_wire_sent_type(&m.wire, 0));
    aa_udp_status_message_t sm;
    AA_CHECK(0 == aa_udp_frame_decode_status_message(m.wire.sent[0].data, m.wire.sent[0].length, &sm));
    AA_CHECK(0 != (sm.header.frame_header.flags & AA_STATUS_MESSAGE_HEADER_SEND_SETUP_FLAG));
    AA_CHECK_EQ(0, sm.header.session_id);
    AA_CHECK_EQ(10, sm.header.stream_id);
    AA_CHECK_EQ(endpoint->receiver_id, sm.header.receiver_id);
    AA_CHECK(aa_udp_address_equals(&m.wire.sent[0].address, &control));

    /* again after the pending-setup timeout, not before */
    AA_CHECK_EQ(0, aa_receive_channel_endpoint_elicit_setups(endpoint, AA_RECEIVE_PENDING_SETUP_TIMEOUT_NS - 1));
    AA_CHECK_EQ(1, aa_receive_channel_endpoint_elicit_setups(endpoint, AA_RECEIVE_PENDING_SETUP_TIMEOUT_NS));
    AA_CHECK_EQ(2, m.wire.sent_count);

    /* a SETUP arriving from the publisher asks for an image; the image's control address is the
     * publisher's control address whatever the source */
    uint8_t setup[AA_SETUP_HEADER_LENGTH];
    int32_t length = aa_udp_frame_encode_setup(setup, sizeof(setup), AA_SETUP_HEADER_GROUP_FLAG, 0, 77, 10, 5, 5,
        64 * 1024, 1408, 0);
    aa_udp_datagram_t in = { .buffer = setup, .length = (size_t)length, .address = test_ipv4_address("127.0.0.1", 49999),
        .addr_len = IN_LENGTH };
    aa_receive_channel_endpoint_on_datagram(endpoint, &in, AA_RECEIVE_PENDING_SETUP_TIMEOUT_NS + 1);
    AA_CHECK_EQ(1, m.services.image_requests);
    struct sockaddr_storage image_control;
    socklen_t image_control_length;
    aa_receive_channel_endpoint_control_address(endpoint, &in.address, in.addr_len, &image_control, &image_control_length);
    AA_CHECK(aa_udp_address_equals(&image_control, &control));
    aa_receive_channel_endpoint_delete(endpoint);
}

/* A response subscription's endpoint (docs/architecture.md, "Response channels"): no SEND_SETUP per stream; once
 * its session is learnt, one SEND_SETUP for that session to control=, and the response's SETUP asks for an image
 * whose status messages go to control= too. */
static void should_elicit_setup_for_a_response_session_only(void)
{
    fake_media_t m;
    fake_media_init(&m, "aeron:udp?control-mode=response|control=127.0.0.1:40456");
    aa_receive_channel_endpoint_params_t params = { .window_length = 32 * 1024, .nak_delay_ns = MS, .is_reliable = true };
    aa_receive_channel_endpoint_t *endpoint = NULL;
    AA_CHECK(0 == aa_receive_channel_endpoint_create(&endpoint, m.channel, &params, &m.transports, &m.services.services));
    AA_CHECK(endpoint->is_response);
    AA_CHECK(0 == aa_receive_channel_endpoint_add_stream(endpoint, 10));
    AA_CHECK_EQ(0, aa_receive_channel_endpoint_elicit_setups(endpoint, 0));
    AA_CHECK_EQ(0, m.wire.sent_count);

    struct sockaddr_storage control = test_ipv4_address("127.0.0.1", 40456);
    AA_CHECK_EQ(1, aa_receive_channel_endpoint_elicit_setup(endpoint, 10, 4242));
    AA_CHECK_EQ(1, m.wire.sent_count);
    aa_udp_status_message_t sm;
    AA_CHECK(0 == aa_udp_frame_decode_status_message(m.wire.sent[0].data, m.wire.sent[0].length, &sm));
    AA_CHECK_EQ(AA_STATUS_MESSAGE_HEADER_SEND_SETUP_FLAG, sm.header.frame_header.flags);
    AA_CHECK_EQ(4242, sm.header.session_id);
    AA_CHECK_EQ(10, sm.header.stream_id);
    AA_CHECK_EQ(0, sm.header.consumption_term_id);
    AA_CHECK_EQ(0, sm.header.consumption_term_offset);
    AA_CHECK_EQ(0, sm.header.receiver_window);
    AA_CHECK(aa_udp_address_equals(&m.wire.sent[0].address, &control));

    uint8_t setup[AA_SETUP_HEADER_LENGTH];
    int32_t length = aa_udp_frame_encode_setup(setup, sizeof(setup), 0, 0, 4242, 10, 5, 5, 64 * 1024, 1408, 0);
    aa_udp_datagram_t in = { .buffer = setup, .length = (size_t)length, .address = control, .addr_len = IN_LENGTH };
    aa_receive_channel_endpoint_on_datagram(endpoint, &in, 1);
    AA_CHECK_EQ(1, m.services.image_requests);
    AA_CHECK_EQ(4242, m.services.last_request_setup.session_id);
    aa_receive_channel_endpoint_delete(endpoint);
}

#define MDS_TERM_LENGTH (64 * 1024)

static void mds_receive(aa_receive_channel_endpoint_t *endpoint, aa_receive_destination_t *destination,
    const struct sockaddr_storage *source, uint8_t *frame, size_t length, int64_t now_ns)
{
    aa_udp_datagram_t datagram = { .buffer = frame, .length = length, .address = *source, .addr_len = IN_LENGTH };
    aa_receive_channel_endpoint_on_transport_datagram(endpoint, &destination->transport, &datagram, now_ns);
}

/* A multi-destination subscription's endpoint with two destinations (wire1, wire2), and the image of
 * session 77 stream 10 whose publisher's SETUP came over both (from source1 and source2). */
typedef struct mds_fixture_stct
{
    fake_services_t services;
    fake_wire_t own, wire1, wire2;
    aa_receive_channel_endpoint_t *endpoint;
    aa_receive_destination_t *d1, *d2;
    struct sockaddr_storage source1, source2;
    aa_publication_image_t *image;
    uint8_t *memory;
    volatile int64_t rcv_hwm, rcv_pos, sub_pos;
}
mds_fixture_t;

static void mds_fixture_init(mds_fixture_t *f)
{
    memset(f, 0, sizeof(*f));
    fake_services_init(&f->services);
    fake_wire_init(&f->own);
    fake_wire_init(&f->wire1);
    fake_wire_init(&f->wire2);
    aa_udp_channel_t *channel = NULL;
    AA_CHECK(0 == aa_udp_channel_parse(&channel, "aeron:udp?control-mode=manual", NULL));
    aa_receive_channel_endpoint_params_t params = { .window_length = 32 * 1024, .nak_delay_ns = MS, .is_reliable = true };
    aa_loss_generator_settings_t own_transports = { NULL, NULL, 0, &f->own.bindings };
    AA_CHECK(0 == aa_receive_channel_endpoint_create(&f->endpoint, channel, &params, &own_transports, &f->services.services));
    aa_receive_channel_endpoint_t *endpoint = f->endpoint;
    AA_CHECK(endpoint->is_multi_destination);
    AA_CHECK(NULL == f->own.transport);    /* no socket of its own */
    AA_CHECK(0 == aa_receive_channel_endpoint_add_stream(endpoint, 10));

    aa_udp_channel_t *c1 = NULL;
    aa_udp_channel_t *c2 = NULL;
    AA_CHECK(0 == aa_udp_channel_parse(&c1, "aeron:udp?endpoint=127.0.0.1:41001", NULL));
    AA_CHECK(0 == aa_udp_channel_parse(&c2, "aeron:udp?endpoint=127.0.0.1:41002", NULL));
    aa_loss_generator_settings_t t1 = { NULL, NULL, 0, &f->wire1.bindings };
    aa_loss_generator_settings_t t2 = { NULL, NULL, 0, &f->wire2.bindings };
    AA_CHECK(0 == aa_receive_destination_create(&f->d1, endpoint, c1, &t1));
    AA_CHECK(0 == aa_receive_destination_create(&f->d2, endpoint, c2, &t2));
    AA_CHECK(f->d1->transport.clientd == endpoint);
    AA_CHECK(0 == aa_receive_channel_endpoint_add_destination(endpoint, f->d1));
    AA_CHECK(0 == aa_receive_channel_endpoint_add_destination(endpoint, f->d2));
    /* the conductor owns them: freed with the endpoint */
    endpoint->conductor_destinations = calloc(2, sizeof(aa_receive_destination_t *));
    AA_CHECK(NULL != endpoint->conductor_destinations);
    endpoint->conductor_destinations[0] = f->d1;
    endpoint->conductor_destinations[1] = f->d2;
    endpoint->conductor_destinations_count = 2;
    endpoint->conductor_destinations_capacity = 2;

    /* the publisher's SETUP over the first destination asks for an image */
    f->source1 = test_ipv4_address("127.0.0.1", 40456);
    f->source2 = test_ipv4_address("127.0.0.2", 40456);
    uint8_t setup[AA_SETUP_HEADER_LENGTH];
    int32_t setup_length = aa_udp_frame_encode_setup(setup, sizeof(setup), AA_SETUP_HEADER_GROUP_FLAG, 0, 77, 10, 5, 5,
        MDS_TERM_LENGTH, 1408, 0);
    mds_receive(endpoint, f->d1, &f->source1, setup, (size_t)setup_length, 0);
    mds_receive(endpoint, f->d2, &f->source2, setup, (size_t)setup_length, 0);
    AA_CHECK_EQ(1, f->services.image_requests);

    /* the image, as the conductor makes one */
    f->image = calloc(1, sizeof(aa_publication_image_t));
    AA_CHECK(NULL != f->image);
    aa_publication_image_t *image = f->image;
    aa_publication_image_params_t image_params =
    {
        .correlation_id = 5, .ids.session_id = 77, .ids.stream_id = 10, .ids.initial_term_id = 5, .active_term_id = 5,
        .term_offset = 0, .ids.term_length = MDS_TERM_LENGTH, .ids.mtu_length = 1408, .window_length = 32 * 1024,
        .status_message_timeout_ns = 200 * MS, .nak_delay_ns = MS, .nak_retry_delay_ratio = 10, .is_reliable = true,
    };
    AA_CHECK(0 == aa_publication_image_init(image, &image_params, 0, &f->services.services));
    f->memory = fake_image_log(image, &image_params);
    image->endpoint = endpoint;
    image->control_address = f->source1;
    image->control_address_length = IN_LENGTH;
    image->source_address = f->source1;
    image->rcv_hwm = &f->rcv_hwm;
    image->rcv_pos = &f->rcv_pos;
    AA_CHECK(0 == aa_publication_image_add_subscriber(image, 99, 1, 3, &f->sub_pos, true, 0));
    AA_CHECK(0 == aa_receive_channel_endpoint_add_image(endpoint, image));
    AA_CHECK_EQ(1, image->connections_count);   /* the transport its SETUP came on */
}

static void mds_fixture_close(mds_fixture_t *f)
{
    aa_receive_channel_endpoint_delete(f->endpoint);
    aa_publication_image_free(f->image);
    free(f->memory);
}

static void should_take_one_session_from_two_destinations_into_one_image_and_answer_over_both(void)
{
    mds_fixture_t fixture;
    mds_fixture_init(&fixture);
    aa_receive_channel_endpoint_t *endpoint = fixture.endpoint;
    aa_publication_image_t *image = fixture.image;
    aa_receive_destination_t *d1 = fixture.d1, *d2 = fixture.d2;
    const struct sockaddr_storage source1 = fixture.source1, source2 = fixture.source2;
    fake_wire_t *wire1 = &fixture.wire1, *wire2 = &fixture.wire2;

    /* the same frames arrive over both destinations; the second copy of each is not written again */
    uint8_t payload[100];
    uint8_t frame[256];
    for (int32_t i = 0; i < 3; i++)
    {
        memset(payload, 'a' + i, sizeof(payload));
        int32_t length = aa_udp_frame_encode_data(
            frame, sizeof(frame), AA_DATA_HEADER_UNFRAGMENTED, i * 160, 77, 10, 5, 0, payload, sizeof(payload));
        AA_CHECK_EQ(160, length);
        mds_receive(endpoint, d1, &source1, frame, 132, MS);
        memset(frame + AA_DATA_HEADER_LENGTH, 'z', 4);   /* a copy that differs would show if rewritten */
        mds_receive(endpoint, d2, &source2, frame, 132, MS);
    }
    AA_CHECK_EQ(2, image->connections_count);
    uint8_t *term = image->log.term_buffers[0];
    for (int32_t i = 0; i < 3; i++)
    {
        AA_CHECK_EQ(132, aa_frame_length_volatile(term, i * 160));
        AA_CHECK_EQ('a' + i, term[i * 160 + AA_DATA_HEADER_LENGTH]);
    }

    /* status messages go back over both transports, each to the address its frames came from */
    aa_publication_image_track_rebuild(image, 1000 * MS);
    AA_CHECK_EQ(480, fixture.rcv_pos);
    AA_CHECK_EQ(1, fake_wire_count_type(wire1, AA_HDR_TYPE_SM));
    AA_CHECK_EQ(1, fake_wire_count_type(wire2, AA_HDR_TYPE_SM));
    AA_CHECK(aa_udp_address_equals(&wire1->sent[wire1->sent_count - 1].address, &source1));
    AA_CHECK(aa_udp_address_equals(&wire2->sent[wire2->sent_count - 1].address, &source2));

    /* a removed destination takes its connection with it */
    aa_receive_channel_endpoint_remove_destination(endpoint, d2);
    AA_CHECK_EQ(1, endpoint->destinations_count);
    AA_CHECK_EQ(1, image->connections_count);
    aa_publication_image_track_rebuild(image, 2000 * MS);
    AA_CHECK_EQ(2, fake_wire_count_type(wire1, AA_HDR_TYPE_SM));
    AA_CHECK_EQ(1, fake_wire_count_type(wire2, AA_HDR_TYPE_SM));

    mds_fixture_close(&fixture);
}

/* A revoked publication's heartbeats (EOS and REVOKED) come over every destination: the image's stream
 * ends once every connection is at EOS (aeron-wave3.md 4.1), not at the first. */
static void should_end_a_revoked_stream_once_every_connection_is_at_end_of_stream(void)
{
    mds_fixture_t f;
    mds_fixture_init(&f);
    uint8_t payload[100] = { 0 };
    uint8_t frame[256];
    int32_t length = aa_udp_frame_encode_data(
        frame, sizeof(frame), AA_DATA_HEADER_UNFRAGMENTED, 0, 77, 10, 5, 0, payload, sizeof(payload));
    mds_receive(f.endpoint, f.d1, &f.source1, frame, (size_t)length, MS);
    mds_receive(f.endpoint, f.d2, &f.source2, frame, (size_t)length, MS);
    AA_CHECK_EQ(2, f.image->connections_count);

    uint8_t heartbeat[AA_DATA_HEADER_LENGTH];
    AA_CHECK_EQ(AA_DATA_HEADER_LENGTH, aa_udp_frame_encode_heartbeat(heartbeat, sizeof(heartbeat), 160, 77, 10, 5, true));
    heartbeat[5] |= AA_DATA_HEADER_REVOKED_FLAG;
    mds_receive(f.endpoint, f.d1, &f.source1, heartbeat, sizeof(heartbeat), 2 * MS);
    AA_CHECK_EQ(0, f.image->is_revoked);
    AA_CHECK_EQ(0, f.image->is_end_of_stream);
    AA_CHECK(!f.image->has_end_of_stream_heartbeat);
    AA_CHECK_EQ(0, fake_count(&f.services, AA_SYSTEM_COUNTER_PUBLICATION_IMAGES_REVOKED));
    mds_receive(f.endpoint, f.d1, &f.source1, heartbeat, sizeof(heartbeat), 3 * MS);   /* again: still one */
    AA_CHECK_EQ(0, f.image->is_revoked);

    mds_receive(f.endpoint, f.d2, &f.source2, heartbeat, sizeof(heartbeat), 4 * MS);
    AA_CHECK_EQ(1, f.image->is_revoked);
    AA_CHECK_EQ(1, f.image->is_end_of_stream);
    AA_CHECK(aa_logbuffer_is_publication_revoked(f.image->log.metadata));
    AA_CHECK_EQ(160, f.image->log.metadata->end_of_stream_position);
    AA_CHECK_EQ(1, fake_count(&f.services, AA_SYSTEM_COUNTER_PUBLICATION_IMAGES_REVOKED));
    mds_fixture_close(&f);
}

/* A destination gone silent is not waited for: an EOS over the live one ends the stream. */
static void should_not_wait_for_a_silent_connection_to_end_the_stream(void)
{
    mds_fixture_t f;
    mds_fixture_init(&f);
    uint8_t payload[100] = { 0 };
    uint8_t frame[256];
    int32_t length = aa_udp_frame_encode_data(
        frame, sizeof(frame), AA_DATA_HEADER_UNFRAGMENTED, 0, 77, 10, 5, 0, payload, sizeof(payload));
    mds_receive(f.endpoint, f.d1, &f.source1, frame, (size_t)length, MS);
    mds_receive(f.endpoint, f.d2, &f.source2, frame, (size_t)length, MS);
    uint8_t heartbeat[AA_DATA_HEADER_LENGTH];
    AA_CHECK_EQ(AA_DATA_HEADER_LENGTH, aa_udp_frame_encode_heartbeat(heartbeat, sizeof(heartbeat), 160, 77, 10, 5, true));
    const int64_t later = MS + AA_RECEIVE_DESTINATION_TIMEOUT_NS;
    mds_receive(f.endpoint, f.d1, &f.source1, heartbeat, sizeof(heartbeat), later);
    AA_CHECK(!f.image->has_end_of_stream_heartbeat);   /* the other one is still live, just */
    mds_receive(f.endpoint, f.d1, &f.source1, heartbeat, sizeof(heartbeat), later + 1);
    AA_CHECK(f.image->has_end_of_stream_heartbeat);
    AA_CHECK_EQ(0, f.image->is_revoked);
    mds_fixture_close(&f);
}

/* docs/security.md, Network: senders: dynamic destinations are capped; a newcomer beyond the cap is
 * refused (and counted by the endpoint, whose publication never sees its SM) until one expires. */
static void should_refuse_dynamic_destinations_beyond_the_cap(void)
{
    tracker_fixture_t f;
    tracker_fixture_init(&f, false);
    AA_CHECK_EQ(AA_UDP_DESTINATION_MAX_DYNAMIC_DEFAULT, (int)f.tracker.max_dynamic);
    f.tracker.max_dynamic = 2;
    AA_CHECK_EQ(1, aa_udp_destination_tracker_on_status_message(&f.tracker, 1, &f.a, IN_LENGTH, 0));
    AA_CHECK_EQ(1, aa_udp_destination_tracker_on_status_message(&f.tracker, 2, &f.b, IN_LENGTH, 0));
    AA_CHECK_EQ(AA_UDP_DESTINATION_REFUSED, aa_udp_destination_tracker_on_status_message(&f.tracker, 3, &f.c, IN_LENGTH, 10 * MS));
    AA_CHECK_EQ(2, f.tracker.count);
    /* the known ones keep refreshing */
    AA_CHECK_EQ(0, aa_udp_destination_tracker_on_status_message(&f.tracker, 2, &f.b, IN_LENGTH, 600 * MS));
    /* a expired (1 s): its place is free for c */
    AA_CHECK_EQ(1, aa_udp_destination_tracker_on_status_message(&f.tracker, 3, &f.c, IN_LENGTH, 1001 * MS));
    AA_CHECK_EQ(2, f.tracker.count);
    AA_CHECK_EQ(AA_UDP_DESTINATION_REFUSED, aa_udp_destination_tracker_on_status_message(&f.tracker, 1, &f.a, IN_LENGTH, 1002 * MS));
    aa_udp_destination_tracker_close(&f.tracker);

    fake_media_t m;
    fake_media_init(&m, "aeron:udp?control=127.0.0.1:40456|control-mode=dynamic");
    aa_send_channel_endpoint_t *endpoint = NULL;
    AA_CHECK(0 == aa_send_channel_endpoint_create(&endpoint, m.channel, &m.transports, &m.services.services));
    endpoint->destinations.max_dynamic = 1;
    uint8_t sm[AA_STATUS_MESSAGE_HEADER_LENGTH];
    encode_sm(sm, 101);
    aa_udp_datagram_t in = { .buffer = sm, .length = sizeof(sm), .address = f.a, .addr_len = IN_LENGTH };
    aa_send_channel_endpoint_on_datagram(endpoint, &in, 0);
    encode_sm(sm, 202);
    in.address = f.b;
    AA_CHECK(!aa_send_channel_endpoint_on_datagram(endpoint, &in, 1 * MS));
    AA_CHECK_EQ(1, endpoint->destinations.count);
    AA_CHECK_EQ(1, fake_count(&m.services, AA_SYSTEM_COUNTER_MDC_DESTINATIONS_REFUSED));
    AA_CHECK_EQ(2, fake_count(&m.services, AA_SYSTEM_COUNTER_STATUS_MESSAGES_RECEIVED));
    aa_send_channel_endpoint_delete(endpoint);
}

int main(void)
{
    AA_RUN(should_end_a_revoked_stream_once_every_connection_is_at_end_of_stream);
    AA_RUN(should_not_wait_for_a_silent_connection_to_end_the_stream);
    AA_RUN(should_refuse_dynamic_destinations_beyond_the_cap);
    AA_RUN(should_add_dynamic_destinations_on_first_status_message_and_refresh_them);
    AA_RUN(should_drop_dynamic_destinations_after_the_timeout_without_a_status_message);
    AA_RUN(should_keep_manual_destinations_until_removed);
    AA_RUN(should_send_every_datagram_to_every_dynamic_destination_until_it_times_out);
    AA_RUN(should_not_track_destinations_on_a_plain_unicast_endpoint);
    AA_RUN(should_elicit_setup_from_the_control_address_until_the_stream_has_an_image);
    AA_RUN(should_elicit_setup_for_a_response_session_only);
    AA_RUN(should_take_one_session_from_two_destinations_into_one_image_and_answer_over_both);
    return 0;
}
