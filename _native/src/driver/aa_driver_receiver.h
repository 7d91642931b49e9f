/*
 * The receiver agent: reads the receive channel endpoints (DATA, PAD, heartbeats, SETUP, RTTM),
 * inserts data into the publication images, runs their loss detection and sends their status
 * messages and NAKs. It runs on its own thread (DEDICATED), with the sender (SHARED_NETWORK) or
 * inside the one driver duty cycle (SHARED, INVOKER). The conductor hands it endpoints, streams
 * and images through its command queue and owns their memory; the receiver asks the conductor for
 * new images through the conductor's queue, never blocks, and, when it lets go of an image, sets
 * its has_receiver_released flag (of an endpoint, counts a removal) so the conductor may free it.
 */
#ifndef AA_DRIVER_RECEIVER_H
#define AA_DRIVER_RECEIVER_H

#include <stdint.h>
#include <stdbool.h>

#include "driver/aa_driver_context.h"
#include "concurrent/aa_command_queue.h"
#include "media/aa_media_services.h"
#include "media/aa_udp_transport.h"

/* Datagrams read per poll; each buffer takes the largest datagram (an MTU is at most 65504). */
#define AA_DRIVER_RECEIVER_BATCH 16
#define AA_DRIVER_RECEIVER_BUFFER_LENGTH AA_UDP_MAX_DATAGRAM_LENGTH
/* How often timed-out pending sessions are swept. */
#define AA_DRIVER_RECEIVER_SESSION_SWEEP_INTERVAL_NS (100 * 1000 * 1000LL)

struct aa_publication_image_stct;
struct aa_receive_channel_endpoint_stct;
struct aa_receive_destination_stct;

typedef struct aa_driver_receiver_stct
{
    aa_driver_context_t *ctx;
    const aa_media_services_t *services;
    aa_command_queue_t commands;
    int64_t cycle_threshold_ns;
    int64_t now_ns;
    /* The start of the last duty cycle whose poll read every socket to its end (written release,
     * read by the conductor): what was sent before it has been seen, so an image's silence is judged
     * up to it, not up to the conductor's clock (a stalled or backlogged receiver has not yet read
     * what arrived; docs/architecture.md, "Image liveness"). */
    int64_t caught_up_ns;
    int64_t time_of_last_sweep_ns;
    int64_t next_reresolution_check_ns;
    int keepalive_datagrams;    /* of the last poll: heartbeats and RTT measurements, not work */

    struct aa_receive_channel_endpoint_stct **endpoints;
    size_t endpoints_count;
    size_t endpoints_capacity;
    struct aa_publication_image_stct **images;
    size_t images_count;
    size_t images_capacity;
    aa_udp_transport_poller_t poller;
    aa_udp_datagram_t datagrams[AA_DRIVER_RECEIVER_BATCH];
    uint8_t *buffers;
}
aa_driver_receiver_t;

int aa_driver_receiver_init(
    aa_driver_receiver_t *receiver, aa_driver_context_t *ctx, const aa_media_services_t *services);
int aa_driver_receiver_do_work(void *state);
void aa_driver_receiver_on_close(void *state);

/* Conductor side ("proxy"): queue a command for the receiver. -1 (error set) when the queue is full. */
int aa_driver_receiver_proxy_add_endpoint(
    aa_driver_receiver_t *receiver, struct aa_receive_channel_endpoint_stct *endpoint);
int aa_driver_receiver_proxy_remove_endpoint(
    aa_driver_receiver_t *receiver, struct aa_receive_channel_endpoint_stct *endpoint);
int aa_driver_receiver_proxy_add_subscription(
    aa_driver_receiver_t *receiver, struct aa_receive_channel_endpoint_stct *endpoint, int32_t stream_id);
/* Response channels: a response subscription learnt its session; add_stream: its stream joins the endpoint
 * (the first time); then SETUP is elicited from the session at the endpoint's control=. */
int aa_driver_receiver_proxy_response_session(
    aa_driver_receiver_t *receiver, struct aa_receive_channel_endpoint_stct *endpoint, int32_t stream_id,
    int32_t session_id, bool add_stream);
int aa_driver_receiver_proxy_remove_subscription(
    aa_driver_receiver_t *receiver, struct aa_receive_channel_endpoint_stct *endpoint, int32_t stream_id);
int aa_driver_receiver_proxy_add_image(aa_driver_receiver_t *receiver, struct aa_publication_image_stct *image);
int aa_driver_receiver_proxy_remove_image(aa_driver_receiver_t *receiver, struct aa_publication_image_stct *image);
/* Multi-destination subscriptions: a destination's transport joins or leaves its endpoint; once
 * removed, the receiver sets its has_receiver_released. */
int aa_driver_receiver_proxy_add_destination(
    aa_driver_receiver_t *receiver, struct aa_receive_channel_endpoint_stct *endpoint,
    struct aa_receive_destination_stct *destination);
int aa_driver_receiver_proxy_remove_destination(
    aa_driver_receiver_t *receiver, struct aa_receive_channel_endpoint_stct *endpoint,
    struct aa_receive_destination_stct *destination);

/* Re-resolution (reference 8.3): the endpoint's control= address becomes address. */
int aa_driver_receiver_proxy_set_control_address(
    aa_driver_receiver_t *receiver, struct aa_receive_channel_endpoint_stct *endpoint, const struct sockaddr_storage *address);

#endif
