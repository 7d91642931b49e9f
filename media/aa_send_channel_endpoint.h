/*
 * A send channel endpoint: the UDP socket that the network publications of one canonical channel
 * share. Their DATA, SETUP and heartbeats leave through it; status messages, NAKs, RTT
 * measurements and error frames come back to it and are dispatched by session and stream.
 *
 * The conductor opens it (socket creation is blocking work), hands it to the sender, counts the
 * publications using it and closes it after the sender released it. The publication list used for
 * dispatch belongs to the sender, which changes it only when running the conductor's commands.
 *
 * Multi-destination-cast (control-mode=dynamic or manual, reference 7.3): the socket binds the
 * control address (control=, else a free port) and everything the publications send with no address
 * of its own goes to every destination of the endpoint's destination tracker
 * (aa_udp_destination_tracker.h), one sendmmsg batch per destination. Status messages add and
 * refresh dynamic destinations; the sender drops the expired ones every duty cycle; the conductor
 * adds and removes manual ones through the sender's command queue and keeps its own list of them
 * (to answer a client at once, e.g. that a destination to remove is unknown).
 */
#ifndef AA_SEND_CHANNEL_ENDPOINT_H
#define AA_SEND_CHANNEL_ENDPOINT_H

#include <stdint.h>
#include <stdbool.h>

#include "media/aa_timestamps.h"
#include "media/aa_udp_channel.h"
#include "media/aa_udp_transport.h"
#include "media/aa_network_publication.h"
#include "media/aa_loss_generator.h"
#include "media/aa_media_services.h"
#include "media/aa_udp_destination_tracker.h"


/* A unicast endpoint named by host without a status message this long is resolved again (reference 8.3). */
#define AA_SEND_CHANNEL_ENDPOINT_DESTINATION_TIMEOUT_NS (5LL * 1000 * 1000 * 1000)

typedef struct aa_send_channel_endpoint_stct
{
    aa_udp_channel_t *channel;
    aa_udp_transport_t transport;
    aa_udp_transport_bindings_t *loss_bindings;
    int32_t status_counter_id;
    int32_t local_sockaddr_counter_id;   /* snd-local-sockaddr: the bound address */
    volatile int64_t *status;
    const aa_media_services_t *services;   /* counters, error log, pre-faulting */

    /* Set at creation, then read-only. */
    bool is_mdc;                          /* control-mode=dynamic or manual */
    bool is_endpoint_named;               /* unicast endpoint= names a host: re-resolved when silent */
    /* channel-snd-ts-offset= (media/aa_timestamps.h): every datagram is stamped just before it leaves;
     * the clock is CLOCK_REALTIME unless a test stands in */
    bool has_send_timestamps;
    aa_timestamps_clock_t timestamp_clock;
    void *timestamp_clock_clientd;

    /* Conductor only. */
    int32_t refcnt;
    bool is_closing;
    struct sockaddr_storage *manual_destinations;   /* what the conductor asked the sender to add */
    size_t manual_destinations_count;
    size_t manual_destinations_capacity;

    /* Set by the sender once it no longer uses the endpoint. */
    volatile int32_t has_sender_released;

    /* Sender only. */
    aa_network_publication_t **publications;
    size_t publications_count;
    size_t publications_capacity;
    aa_udp_destination_tracker_t destinations;
    int64_t time_of_last_sm_ns;           /* re-resolution: the last status message (or swap) */
}
aa_send_channel_endpoint_t;

/* Conductor: opens the socket for a (parsed) unicast channel; takes ownership of channel. Dynamic MDC
 * destinations time out after the default (5 s) and are at most the default count (64) unless the
 * conductor sets destinations.destination_timeout_ns and destinations.max_dynamic before the sender
 * sees the endpoint. An SM from a receiver refused by that cap goes no further (not to the publication). */
int aa_send_channel_endpoint_create(
    aa_send_channel_endpoint_t **endpoint, aa_udp_channel_t *channel, const aa_loss_generator_settings_t *loss,
    const aa_media_services_t *services);
/* Conductor: closes the socket and frees the endpoint (after the sender released it). */
void aa_send_channel_endpoint_delete(aa_send_channel_endpoint_t *endpoint);

/* Sender: the dispatch list. */
int aa_send_channel_endpoint_add_publication(aa_send_channel_endpoint_t *endpoint, aa_network_publication_t *pub);
void aa_send_channel_endpoint_remove_publication(aa_send_channel_endpoint_t *endpoint, aa_network_publication_t *pub);

/* Sender: a datagram received on the endpoint's socket. Returns false for a keepalive (a status
 * message that changed nothing, an RTT measurement): no work, so an idle driver may sleep deeply. */
bool aa_send_channel_endpoint_on_datagram(
    aa_send_channel_endpoint_t *endpoint, aa_udp_datagram_t *datagram, int64_t now_ns);

/* Sender, every duty cycle, MDC: drops the dynamic destinations whose timeout passed; returns how many. */
int aa_send_channel_endpoint_check_destinations(aa_send_channel_endpoint_t *endpoint, int64_t now_ns);

/* Conductor: the manual destinations it asked the sender for (adds -1: ENOMEM; removes: 1 removed, 0 unknown). */
int aa_send_channel_endpoint_manual_destination_add(aa_send_channel_endpoint_t *endpoint, const struct sockaddr_storage *address);
int aa_send_channel_endpoint_manual_destination_remove(
    aa_send_channel_endpoint_t *endpoint, const struct sockaddr_storage *address);

/* Sends datagrams (addr_len 0: to the channel's endpoint, or with MDC to every destination) in order; counts the bytes sent and,
 * when the socket takes only some (no room), a short send. Returns how many were sent, or -1 after
 * logging a socket error. */
/* Sender, every re-resolution check: a named unicast endpoint, or a manual MDC destination, without status messages for AA_SEND_CHANNEL_ENDPOINT_DESTINATION_TIMEOUT_NS
 * asks the conductor to resolve it again (services' request_re_resolution). Returns 1 when it asked. */
int aa_send_channel_endpoint_check_re_resolution(aa_send_channel_endpoint_t *endpoint, int64_t now_ns);
/* Sender: the conductor resolved the endpoint to a new address (or for the first time); manual MDC:
 * the destination at old_address moved to address. */
void aa_send_channel_endpoint_set_destination(
    aa_send_channel_endpoint_t *endpoint, const struct sockaddr_storage *old_address,
    const struct sockaddr_storage *address, int64_t now_ns);

int aa_send_channel_endpoint_send(aa_send_channel_endpoint_t *endpoint, aa_udp_datagram_t *datagrams, size_t count);

#endif
