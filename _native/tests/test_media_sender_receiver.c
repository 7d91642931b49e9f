/* The sender and receiver agents end to end over fake wires, with a test clock in their driver
 * context and the test playing the conductor (it hands them endpoints, the publication and, when the
 * receiver asks, the image): SETUP, image request, status messages, data, heartbeats, and the
 * publication's connection timeout reached by moving the clock, not by sleeping. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "aa_media_fakes.h"
#include "media/aa_network_publication.h"
#include "media/aa_publication_image.h"
#include "media/aa_receive_channel_endpoint.h"
#include "media/aa_send_channel_endpoint.h"
#include "protocols/aa_udp_frames.h"
#include "driver/aa_driver_context.h"
#include "driver/aa_driver_receiver.h"
#include "driver/aa_driver_sender.h"
#include "logbuffer/aa_term.h"

#define TERM_LENGTH (64 * 1024)
#define MTU 1408
#define SESSION_ID 11
#define STREAM_ID 3003
#define INITIAL_TERM_ID 7
#define WINDOW (32 * 1024)
#define MS (1000 * 1000LL)
#define T0 (1000 * 1000 * MS)

typedef struct world_stct
{
    aa_test_clock_t clock;
    aa_driver_context_t ctx;
    fake_services_t services;
    aa_driver_sender_t sender;
    aa_driver_receiver_t receiver;
    fake_wire_t send_wire;
    fake_wire_t receive_wire;
    struct sockaddr_storage sender_address;
    struct sockaddr_storage receiver_address;
    aa_send_channel_endpoint_t *send_endpoint;
    aa_receive_channel_endpoint_t *receive_endpoint;

    aa_network_publication_t *pub;
    uint8_t *pub_memory;
    fake_publication_positions_t positions;

    aa_publication_image_t *image;
    uint8_t *image_memory;
    volatile int64_t rcv_hwm, rcv_pos, sub_pos;
}
world_t;

static void world_init(world_t *w)
{
    memset(w, 0, sizeof(*w));
    aa_test_clock_init(&w->clock, T0, 1700000000000LL);
    AA_CHECK(0 == aa_driver_context_init(&w->ctx));
    w->ctx.threading_mode = AA_THREADING_MODE_SHARED;
    w->ctx.clock = aa_test_clock(&w->clock);
    fake_services_init(&w->services);
    AA_CHECK(0 == aa_driver_sender_init(&w->sender, &w->ctx, &w->services.services));
    AA_CHECK(0 == aa_driver_receiver_init(&w->receiver, &w->ctx, &w->services.services));
    fake_wire_init(&w->send_wire);
    fake_wire_init(&w->receive_wire);
    w->sender_address = test_ipv4_address("10.0.0.1", 6000);
    w->receiver_address = test_ipv4_address("10.0.0.2", 40458);

    aa_udp_channel_t *channel = NULL;
    AA_CHECK(0 == aa_udp_channel_parse(&channel, "aeron:udp?endpoint=10.0.0.2:40458", NULL));
    aa_loss_generator_settings_t send_transports = { NULL, NULL, 0, &w->send_wire.bindings };
    AA_CHECK(0 == aa_send_channel_endpoint_create(&w->send_endpoint, channel, &send_transports, &w->services.services));
    AA_CHECK(0 == aa_udp_channel_parse(&channel, "aeron:udp?endpoint=10.0.0.2:40458", NULL));
    aa_receive_channel_endpoint_params_t params = { .window_length = WINDOW, .nak_delay_ns = 100 * 1000, .is_reliable = true };
    aa_loss_generator_settings_t receive_transports = { NULL, NULL, 0, &w->receive_wire.bindings };
    AA_CHECK(0 == aa_receive_channel_endpoint_create(
        &w->receive_endpoint, channel, &params, &receive_transports, &w->services.services));

    w->pub = calloc(1, sizeof(aa_network_publication_t));
    AA_CHECK(NULL != w->pub);
    aa_network_publication_params_t pub_params =
    {
        .registration_id = 1, .ids = { SESSION_ID, STREAM_ID, INITIAL_TERM_ID, TERM_LENGTH, MTU },
        .term_window_length = TERM_LENGTH / 2,
        .linger_timeout_ns = w->ctx.publication_linger_timeout_ns,
        .unblock_timeout_ns = w->ctx.publication_unblock_timeout_ns,
        .connection_timeout_ns = w->ctx.publication_connection_timeout_ns,
        .retransmit_delay_ns = 0, .retransmit_linger_ns = 10 * MS, .signal_eos = true,
        .response_correlation_id = -1,
    };
    AA_CHECK(0 == aa_flow_control_strategy_select(false, NULL, NULL, &pub_params.flow_control));  /* unicast */
    AA_CHECK(0 == aa_network_publication_init(w->pub, &pub_params, &w->services.services));
    w->pub_memory = fake_publication_log(w->pub, &pub_params);
    w->pub->endpoint = w->send_endpoint;
    fake_publication_activate(w->pub, &w->positions);
}

static void world_close(world_t *w)
{
    aa_driver_sender_on_close(&w->sender);
    aa_driver_receiver_on_close(&w->receiver);
    aa_send_channel_endpoint_delete(w->send_endpoint);
    aa_receive_channel_endpoint_delete(w->receive_endpoint);
    aa_network_publication_free(w->pub);
    aa_publication_image_free(w->image);
    free(w->pub_memory);
    free(w->image_memory);
}

/* What the conductor does when the receiver asks for an image: create it, hand it over. */
static void conductor_create_image(world_t *w)
{
    AA_CHECK_EQ(w->services.image_requests, 1);
    const aa_setup_header_t *setup = &w->services.last_request_setup;
    w->image = calloc(1, sizeof(aa_publication_image_t));
    AA_CHECK(NULL != w->image);
    aa_publication_image_params_t params =
    {
        .correlation_id = 2, .ids.session_id = setup->session_id, .ids.stream_id = setup->stream_id,
        .ids.initial_term_id = setup->initial_term_id, .active_term_id = setup->active_term_id,
        .term_offset = setup->term_offset, .ids.term_length = setup->term_length, .ids.mtu_length = setup->mtu,
        .window_length = WINDOW, .status_message_timeout_ns = w->ctx.status_message_timeout_ns,
        .nak_delay_ns = 100 * 1000, .nak_retry_delay_ratio = 100, .is_reliable = true,
    };
    AA_CHECK(0 == aa_publication_image_init(
        w->image, &params, aa_clock_nano_time(&w->ctx.clock), &w->services.services));
    w->image_memory = fake_image_log(w->image, &params);
    w->image->endpoint = w->services.last_request_endpoint;
    w->image->control_address = w->services.last_request_source;
    w->image->control_address_length = sizeof(struct sockaddr_in);
    w->image->source_address = w->services.last_request_source;
    w->image->rcv_hwm = &w->rcv_hwm;
    w->image->rcv_pos = &w->rcv_pos;
    AA_CHECK(0 == aa_publication_image_add_subscriber(
        w->image, 9, 1, 4, &w->sub_pos, true, aa_clock_nano_time(&w->ctx.clock)));
    AA_CHECK(0 == aa_driver_receiver_proxy_add_image(&w->receiver, w->image));
}

static void append(world_t *w, size_t length, uint8_t fill)
{
    uint8_t payload[256];
    AA_CHECK(length <= sizeof(payload));
    memset(payload, fill, length);
    aa_iovec_t iov = { payload, length };
    int32_t term_id = 0;
    AA_CHECK(aa_term_appender_append_unfragmented(
        w->pub->log.term_buffers[0], TERM_LENGTH, &w->pub->log.metadata->term_tail_counters[0],
        w->pub->log.metadata->default_header, &iov, 1, length, 0, &term_id) > 0);
}

/* One duty cycle of each agent, with the datagrams of each carried across the wire. */
static void cycle(world_t *w)
{
    aa_driver_sender_do_work(&w->sender);
    fake_wire_forward(&w->send_wire, &w->receive_wire, &w->sender_address);
    aa_driver_receiver_do_work(&w->receiver);
    fake_wire_forward(&w->receive_wire, &w->send_wire, &w->receiver_address);
}

/* A world whose conductor has handed the endpoints, the publication and the subscription to the
 * sender and the receiver, as the driver's conductor does through their proxies. */
static void world_init_handed_over(world_t *w)
{
    world_init(w);
    AA_CHECK(0 == aa_driver_sender_proxy_add_endpoint(&w->sender, w->send_endpoint));
    AA_CHECK(0 == aa_driver_sender_proxy_add_publication(&w->sender, w->pub));
    AA_CHECK(0 == aa_driver_receiver_proxy_add_endpoint(&w->receiver, w->receive_endpoint));
    AA_CHECK(0 == aa_driver_receiver_proxy_add_subscription(&w->receiver, w->receive_endpoint, STREAM_ID));
}

static void should_connect_and_deliver_through_sender_and_receiver(void)
{
    world_t w;
    world_init_handed_over(&w);

    /* SETUP goes out at once; the receiver asks the conductor for an image */
    cycle(&w);
    AA_CHECK_EQ(w.services.image_requests, 1);
    AA_CHECK(w.services.last_request_endpoint == w.receive_endpoint);
    AA_CHECK_EQ(w.services.last_request_setup.session_id, SESSION_ID);
    AA_CHECK(aa_udp_address_equals(&w.services.last_request_source, &w.sender_address));
    AA_CHECK(!aa_logbuffer_is_connected(w.pub->log.metadata));

    /* the image's first status message connects the publication */
    conductor_create_image(&w);
    cycle(&w);
    cycle(&w);
    AA_CHECK(aa_logbuffer_is_connected(w.pub->log.metadata));
    AA_CHECK_EQ(w.positions.snd_lmt, WINDOW);
    AA_CHECK_EQ(fake_count(&w.services, AA_SYSTEM_COUNTER_STATUS_MESSAGES_RECEIVED), 1);

    /* data flows, and rcv-pos follows */
    append(&w, 100, 'a');
    append(&w, 200, 'b');
    cycle(&w);
    AA_CHECK_EQ(w.positions.snd_pos, 160 + 256);
    AA_CHECK_EQ(w.rcv_pos, 160 + 256);
    AA_CHECK_EQ(w.image->log.term_buffers[0][160 + AA_DATA_HEADER_LENGTH], 'b');

    /* nothing more within 100 ms: no heartbeat; at 100 ms one, which the image takes as a sign of life */
    aa_test_clock_advance(&w.clock, 99 * MS);
    cycle(&w);
    AA_CHECK_EQ(fake_count(&w.services, AA_SYSTEM_COUNTER_HEARTBEATS_SENT), 0);
    aa_test_clock_advance(&w.clock, 1 * MS);
    cycle(&w);
    AA_CHECK_EQ(fake_count(&w.services, AA_SYSTEM_COUNTER_HEARTBEATS_SENT), 1);
    AA_CHECK_EQ(fake_count(&w.services, AA_SYSTEM_COUNTER_HEARTBEATS_RECEIVED), 1);
    AA_CHECK_EQ(w.image->time_of_last_packet_ns, T0 + 100 * MS);

    /* time stands still inside a duty cycle: the agents measure their cycles with the same clock */
    AA_CHECK_EQ(fake_count(&w.services, AA_SYSTEM_COUNTER_SENDER_MAX_CYCLE_TIME), 0);
    AA_CHECK_EQ(fake_count(&w.services, AA_SYSTEM_COUNTER_RECEIVER_MAX_CYCLE_TIME), 0);
    world_close(&w);
}

static void should_disconnect_when_the_receiver_falls_silent_for_the_connection_timeout(void)
{
    world_t w;
    world_init_handed_over(&w);
    cycle(&w);
    conductor_create_image(&w);
    cycle(&w);
    cycle(&w);
    AA_CHECK(aa_logbuffer_is_connected(w.pub->log.metadata));

    /* the receiver keeps sending status messages (every 200 ms): still connected 10 s later */
    for (int i = 0; i < 50; i++)
    {
        aa_test_clock_advance(&w.clock, 200 * MS);
        cycle(&w);
    }
    AA_CHECK(aa_logbuffer_is_connected(w.pub->log.metadata));

    /* the receiver falls silent after the status message the sender reads now: the publication
     * disconnects once the connection timeout has passed since */
    aa_driver_sender_do_work(&w.sender);
    AA_CHECK_EQ(fake_count(&w.services, AA_SYSTEM_COUNTER_STATUS_MESSAGES_RECEIVED), 51);
    aa_test_clock_advance(&w.clock, w.ctx.publication_connection_timeout_ns);
    aa_driver_sender_do_work(&w.sender);
    AA_CHECK(aa_logbuffer_is_connected(w.pub->log.metadata));
    aa_test_clock_advance(&w.clock, 1);
    aa_driver_sender_do_work(&w.sender);
    AA_CHECK(!aa_logbuffer_is_connected(w.pub->log.metadata));
    AA_CHECK_EQ(w.pub->log.metadata->active_transport_count, 0);
    world_close(&w);
}

int main(void)
{
    AA_RUN(should_connect_and_deliver_through_sender_and_receiver);
    AA_RUN(should_disconnect_when_the_receiver_falls_silent_for_the_connection_timeout);
    return 0;
}
