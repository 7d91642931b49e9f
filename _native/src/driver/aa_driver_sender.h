/*
 * The sender agent: transmits the network publications of the send channel endpoints (SETUP,
 * DATA from the log up to the sender limit, heartbeats, retransmits) and reads their control
 * frames (status messages, NAKs, RTT measurements). It runs on its own thread (DEDICATED), with
 * the receiver (SHARED_NETWORK) or inside the one driver duty cycle (SHARED, INVOKER). The
 * conductor hands it publications and endpoints through its command queue and owns their memory;
 * the sender never blocks (no name lookups, no file or socket creation) and, when it lets go of a
 * publication or an endpoint, sets its has_sender_released flag so the conductor may free it.
 */
#ifndef AA_DRIVER_SENDER_H
#define AA_DRIVER_SENDER_H

#include <stdint.h>
#include <stdbool.h>

#include "driver/aa_driver_context.h"
#include "concurrent/aa_command_queue.h"
#include "media/aa_media_services.h"
#include "media/aa_udp_transport.h"

/* Control datagrams read per poll, and the room for each (status messages, NAKs and RTTMs are small). */
#define AA_DRIVER_SENDER_CONTROL_BATCH 16
#define AA_DRIVER_SENDER_CONTROL_BUFFER_LENGTH 4096

struct aa_network_publication_stct;
struct aa_send_channel_endpoint_stct;

typedef struct aa_driver_sender_stct
{
    aa_driver_context_t *ctx;
    const aa_media_services_t *services;
    aa_command_queue_t commands;
    int64_t cycle_threshold_ns;
    int64_t status_message_poll_timeout_ns;
    int32_t send_to_status_poll_ratio;
    int32_t duty_cycle_counter;
    int64_t time_of_last_control_poll_ns;
    int64_t now_ns;
    int64_t next_reresolution_check_ns;
    int keepalive_datagrams;    /* of the last poll: status messages that changed nothing, RTT measurements */
    size_t round_robin_index;

    struct aa_network_publication_stct **publications;
    size_t publications_count;
    size_t publications_capacity;
    struct aa_send_channel_endpoint_stct **mdc_endpoints;   /* whose destinations may time out */
    size_t mdc_endpoints_count;
    size_t mdc_endpoints_capacity;
    aa_udp_transport_poller_t poller;
    aa_udp_datagram_t control_datagrams[AA_DRIVER_SENDER_CONTROL_BATCH];
    uint8_t *control_buffers;
}
aa_driver_sender_t;

int aa_driver_sender_init(aa_driver_sender_t *sender, aa_driver_context_t *ctx, const aa_media_services_t *services);
int aa_driver_sender_do_work(void *state);
void aa_driver_sender_on_close(void *state);

/* Conductor side ("proxy"): queue a command for the sender. -1 (error set) when the queue is full. */
int aa_driver_sender_proxy_add_endpoint(aa_driver_sender_t *sender, struct aa_send_channel_endpoint_stct *endpoint);
int aa_driver_sender_proxy_remove_endpoint(aa_driver_sender_t *sender, struct aa_send_channel_endpoint_stct *endpoint);
int aa_driver_sender_proxy_add_publication(aa_driver_sender_t *sender, struct aa_network_publication_stct *pub);
int aa_driver_sender_proxy_remove_publication(aa_driver_sender_t *sender, struct aa_network_publication_stct *pub);
/* Manual multi-destination-cast: the sender adds or removes a destination of an endpoint. */
int aa_driver_sender_proxy_add_destination(
    aa_driver_sender_t *sender, struct aa_send_channel_endpoint_stct *endpoint, const struct sockaddr_storage *address,
    socklen_t address_length, int64_t registration_id);
int aa_driver_sender_proxy_remove_destination(
    aa_driver_sender_t *sender, struct aa_send_channel_endpoint_stct *endpoint, const struct sockaddr_storage *address);

/* Re-resolution (reference 8.3): the endpoint's unicast destination becomes address; manual MDC: the
 * destination at old_address moves to address. */
int aa_driver_sender_proxy_set_destination(
    aa_driver_sender_t *sender, struct aa_send_channel_endpoint_stct *endpoint, const struct sockaddr_storage *old_address,
    const struct sockaddr_storage *address);

#endif
