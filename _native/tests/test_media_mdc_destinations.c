/*
 * Multi-destination-cast destinations: the destination table (dynamic add, refresh, move and timeout
 * with the test's clock; manual add and remove, no timeout; several expiring at once) and a send
 * channel endpoint that fans every datagram out to its destinations over a fake wire.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "aa_media_fakes.h"
#include "../../media/aa_send_channel_endpoint.h"
#include "../../media/aa_udp_destination_tracker.h"
#include "../../protocols/aa_udp_frames.h"

#define MS (1000 * 1000LL)

static struct sockaddr_storage address_of(const char *ip, uint16_t port)
{
    struct sockaddr_storage address;
    memset(&address, 0, sizeof(address));
    struct sockaddr_in *in = (struct sockaddr_in *)&address;
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    AA_CHECK(1 == inet_pton(AF_INET, ip, &in->sin_addr));
    return address;
}

static const socklen_t IN_LENGTH = sizeof(struct sockaddr_in);

static void should_add_dynamic_destinations_on_first_status_message_and_refresh_them(void)
{
    aa_udp_destination_tracker_t tracker;
    aa_udp_destination_tracker_init(&tracker, false, 0);
    AA_CHECK_EQ(tracker.destination_timeout_ns, AA_UDP_DESTINATION_TIMEOUT_DEFAULT_NS);
    struct sockaddr_storage a = address_of("10.0.0.1", 40001);
    struct sockaddr_storage b = address_of("10.0.0.2", 40002);

    AA_CHECK_EQ(1, aa_udp_destination_tracker_on_status_message(&tracker, 11, &a, IN_LENGTH, 0));
    AA_CHECK_EQ(0, aa_udp_destination_tracker_on_status_message(&tracker, 11, &a, IN_LENGTH, 100 * MS));
    AA_CHECK_EQ(1, aa_udp_destination_tracker_on_status_message(&tracker, 22, &b, IN_LENGTH, 200 * MS));
    AA_CHECK_EQ(2, tracker.count);
    AA_CHECK_EQ(100 * MS, tracker.destinations[0].time_of_last_activity_ns);
    AA_CHECK_EQ(22, tracker.destinations[1].receiver_id);

    /* a known receiver whose status messages now come from elsewhere is sent to there */
    struct sockaddr_storage moved = address_of("10.0.0.3", 40003);
    AA_CHECK_EQ(0, aa_udp_destination_tracker_on_status_message(&tracker, 11, &moved, IN_LENGTH, 300 * MS));
    AA_CHECK_EQ(2, tracker.count);
    AA_CHECK(aa_udp_address_equals(&tracker.destinations[0].address, &moved));
    aa_udp_destination_tracker_close(&tracker);
}

static void should_drop_dynamic_destinations_after_the_timeout_without_a_status_message(void)
{
    aa_udp_destination_tracker_t tracker;
    aa_udp_destination_tracker_init(&tracker, false, 1000 * MS);
    struct sockaddr_storage a = address_of("10.0.0.1", 40001);
    struct sockaddr_storage b = address_of("10.0.0.2", 40002);
    struct sockaddr_storage c = address_of("10.0.0.3", 40003);
    aa_udp_destination_tracker_on_status_message(&tracker, 1, &a, IN_LENGTH, 0);
    aa_udp_destination_tracker_on_status_message(&tracker, 2, &b, IN_LENGTH, 0);
    aa_udp_destination_tracker_on_status_message(&tracker, 3, &c, IN_LENGTH, 0);

    /* b keeps sending status messages, a and c go quiet */
    aa_udp_destination_tracker_on_status_message(&tracker, 2, &b, IN_LENGTH, 900 * MS);
    AA_CHECK_EQ(0, aa_udp_destination_tracker_check_timeouts(&tracker, 1000 * MS));
    AA_CHECK_EQ(3, tracker.count);

    /* two expire at once, on either side of the live one: the live one stays (reference 12, item 2) */
    AA_CHECK_EQ(2, aa_udp_destination_tracker_check_timeouts(&tracker, 1001 * MS));
    AA_CHECK_EQ(1, tracker.count);
    AA_CHECK_EQ(2, tracker.destinations[0].receiver_id);
    AA_CHECK(aa_udp_address_equals(&tracker.destinations[0].address, &b));

    AA_CHECK_EQ(1, aa_udp_destination_tracker_check_timeouts(&tracker, 1901 * MS));
    AA_CHECK_EQ(0, tracker.count);

    /* a receiver that comes back is a new destination */
    AA_CHECK_EQ(1, aa_udp_destination_tracker_on_status_message(&tracker, 1, &a, IN_LENGTH, 2000 * MS));
    aa_udp_destination_tracker_close(&tracker);
}

static void should_keep_manual_destinations_until_removed(void)
{
    aa_udp_destination_tracker_t tracker;
    aa_udp_destination_tracker_init(&tracker, true, 1000 * MS);
    struct sockaddr_storage a = address_of("10.0.0.1", 40001);
    struct sockaddr_storage b = address_of("10.0.0.2", 40002);
    struct sockaddr_storage stranger = address_of("10.0.0.9", 40009);
    AA_CHECK_EQ(0, aa_udp_destination_tracker_add(&tracker, &a, IN_LENGTH, 7, 0));
    AA_CHECK_EQ(0, aa_udp_destination_tracker_add(&tracker, &b, IN_LENGTH, 8, 0));
    AA_CHECK_EQ(0, aa_udp_destination_tracker_add(&tracker, &a, IN_LENGTH, 9, 10));   /* not twice */
    AA_CHECK_EQ(2, tracker.count);

    /* status messages refresh (and name the receiver) but never add; nothing times out */
    AA_CHECK_EQ(0, aa_udp_destination_tracker_on_status_message(&tracker, 55, &a, IN_LENGTH, 50 * MS));
    AA_CHECK(tracker.destinations[0].has_receiver_id);
    AA_CHECK_EQ(55, tracker.destinations[0].receiver_id);
    AA_CHECK_EQ(0, aa_udp_destination_tracker_on_status_message(&tracker, 56, &stranger, IN_LENGTH, 50 * MS));
    AA_CHECK_EQ(2, tracker.count);
    AA_CHECK_EQ(0, aa_udp_destination_tracker_check_timeouts(&tracker, 3600 * 1000 * MS));
    AA_CHECK_EQ(2, tracker.count);

    AA_CHECK_EQ(1, aa_udp_destination_tracker_remove(&tracker, &a));
    AA_CHECK_EQ(0, aa_udp_destination_tracker_remove(&tracker, &a));
    AA_CHECK_EQ(1, tracker.count);
    AA_CHECK(aa_udp_address_equals(&tracker.destinations[0].address, &b));
    aa_udp_destination_tracker_close(&tracker);
}

static int32_t encode_sm(uint8_t *frame, int64_t receiver_id)
{
    return aa_udp_frame_encode_status_message(
        frame, AA_STATUS_MESSAGE_HEADER_LENGTH, 0, 1234, 10, 0, 0, 128 * 1024, receiver_id, NULL);
}

static void should_send_every_datagram_to_every_dynamic_destination_until_it_times_out(void)
{
    fake_services_t services;
    fake_wire_t wire;
    fake_services_init(&services);
    fake_wire_init(&wire);
    aa_udp_channel_t *channel = NULL;
    AA_CHECK(0 == aa_udp_channel_parse(&channel, "aeron:udp?control=127.0.0.1:40456|control-mode=dynamic", NULL));
    aa_loss_generator_settings_t transports = { NULL, NULL, 0, &wire.bindings };
    aa_send_channel_endpoint_t *endpoint = NULL;
    AA_CHECK(0 == aa_send_channel_endpoint_create(&endpoint, channel, &transports, &services.services));
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
    AA_CHECK_EQ(0, wire.sent_count);

    struct sockaddr_storage r1 = address_of("127.0.0.1", 41001);
    struct sockaddr_storage r2 = address_of("127.0.0.1", 41002);
    uint8_t sm[AA_STATUS_MESSAGE_HEADER_LENGTH];
    encode_sm(sm, 101);
    aa_udp_datagram_t in = { .buffer = sm, .length = sizeof(sm), .address = r1, .addr_len = IN_LENGTH };
    aa_send_channel_endpoint_on_datagram(endpoint, &in, 0);
    encode_sm(sm, 202);
    in.address = r2;
    aa_send_channel_endpoint_on_datagram(endpoint, &in, 100 * MS);
    AA_CHECK_EQ(2, endpoint->destinations.count);

    AA_CHECK_EQ(2, aa_send_channel_endpoint_send(endpoint, datagrams, 2));
    AA_CHECK_EQ(4, wire.sent_count);
    AA_CHECK_EQ(2, wire.send_calls - 0);   /* one batch per destination */
    AA_CHECK(aa_udp_address_equals(&wire.sent[0].address, &r1));
    AA_CHECK(aa_udp_address_equals(&wire.sent[1].address, &r1));
    AA_CHECK(aa_udp_address_equals(&wire.sent[2].address, &r2));
    AA_CHECK_EQ(64, wire.sent[3].length);
    AA_CHECK_EQ(0, datagrams[0].addr_len);   /* the caller's batch is left as it was */
    AA_CHECK_EQ(96 * 2, fake_count(&services, AA_SYSTEM_COUNTER_BYTES_SENT));

    /* a datagram with its own address (an RTT reply) goes there only */
    datagrams[0].address = r2;
    datagrams[0].addr_len = IN_LENGTH;
    AA_CHECK_EQ(1, aa_send_channel_endpoint_send(endpoint, datagrams, 1));
    AA_CHECK_EQ(5, wire.sent_count);
    datagrams[0].addr_len = 0;

    /* r1 went quiet: dropped after the timeout; r2's status messages keep it */
    in.address = r2;
    aa_send_channel_endpoint_on_datagram(endpoint, &in, 450 * MS);
    AA_CHECK_EQ(0, aa_send_channel_endpoint_check_destinations(endpoint, 500 * MS));
    AA_CHECK_EQ(1, aa_send_channel_endpoint_check_destinations(endpoint, 501 * MS));
    wire.sent_count = 0;
    AA_CHECK_EQ(2, aa_send_channel_endpoint_send(endpoint, datagrams, 2));
    AA_CHECK_EQ(2, wire.sent_count);
    AA_CHECK(aa_udp_address_equals(&wire.sent[0].address, &r2));

    /* a destination whose socket takes only part of the batch: the least taken counts as sent */
    in.address = r1;
    encode_sm(sm, 101);
    aa_send_channel_endpoint_on_datagram(endpoint, &in, 600 * MS);
    wire.send_room = 1;
    AA_CHECK_EQ(1, aa_send_channel_endpoint_send(endpoint, datagrams, 2));

    aa_send_channel_endpoint_delete(endpoint);
}

static void should_not_track_destinations_on_a_plain_unicast_endpoint(void)
{
    fake_services_t services;
    fake_wire_t wire;
    fake_services_init(&services);
    fake_wire_init(&wire);
    aa_udp_channel_t *channel = NULL;
    AA_CHECK(0 == aa_udp_channel_parse(&channel, "aeron:udp?endpoint=127.0.0.1:40457", NULL));
    aa_loss_generator_settings_t transports = { NULL, NULL, 0, &wire.bindings };
    aa_send_channel_endpoint_t *endpoint = NULL;
    AA_CHECK(0 == aa_send_channel_endpoint_create(&endpoint, channel, &transports, &services.services));
    AA_CHECK(!endpoint->is_mdc);
    uint8_t sm[AA_STATUS_MESSAGE_HEADER_LENGTH];
    encode_sm(sm, 101);
    aa_udp_datagram_t in = { .buffer = sm, .length = sizeof(sm), .address = address_of("127.0.0.1", 41001), .addr_len = IN_LENGTH };
    aa_send_channel_endpoint_on_datagram(endpoint, &in, 0);
    AA_CHECK_EQ(0, endpoint->destinations.count);
    uint8_t payload[32] = { 0 };
    aa_udp_datagram_t datagram = { .buffer = payload, .length = 32 };
    AA_CHECK_EQ(1, aa_send_channel_endpoint_send(endpoint, &datagram, 1));
    AA_CHECK_EQ(1, wire.sent_count);
    AA_CHECK_EQ(0, wire.sent[0].addr_len);   /* the transport's own destination */
    aa_send_channel_endpoint_delete(endpoint);
}

int main(void)
{
    AA_RUN(should_add_dynamic_destinations_on_first_status_message_and_refresh_them);
    AA_RUN(should_drop_dynamic_destinations_after_the_timeout_without_a_status_message);
    AA_RUN(should_keep_manual_destinations_until_removed);
    AA_RUN(should_send_every_datagram_to_every_dynamic_destination_until_it_times_out);
    AA_RUN(should_not_track_destinations_on_a_plain_unicast_endpoint);
    return 0;
}
