/*
 * A receive channel endpoint: the UDP socket bound to a subscription channel's endpoint, shared by
 * the subscriptions with the same canonical channel. DATA, PAD, heartbeats, SETUP and RTT
 * measurements arrive on it; status messages, NAKs and SETUP requests leave through it to the
 * sources.
 *
 * Dispatch (receiver thread): a datagram of an image's (session, stream) goes to the image. For a
 * subscribed stream, a SETUP from an unknown session asks the conductor for an image (the session
 * is then "initialising" for up to 1 s, so repeated SETUPs do not ask again), and data from an
 * unknown session without the end-of-stream flag elicits a SETUP with a SEND_SETUP status message
 * to its source (then "pending" for 1 s, reference 4.1). A session whose image was removed cools
 * down for 1 s, ignoring stray datagrams, before it may join again.
 *
 * Bounds on what the network may ask for (docs/security.md, Network: receivers): a SETUP is refused
 * (no image requested, counted, logged at most once a second) when its term is longer than
 * max_term_length, or when the endpoint already holds max_images initialising or active sessions, or
 * its stream max_sessions_per_stream. An image takes DATA, heartbeats and RTT replies only from the
 * address its SETUP came from (the image's source_address): frames of its session from any other
 * address are dropped and counted, and so is a SETUP of an active session from another address (as
 * in Aeron, a session's image keeps its source: a publisher that moved loses it after the image
 * liveness timeout, and its frames, no longer reaching an image, then elicit a SETUP from where it
 * is now). A multi-destination subscription is exempt: it takes one session from several sources by
 * design (a replay and the live stream). Data from unknown sessions elicits SETUPs for at most
 * 2 x max_images sessions tracked at once.
 *
 * Multi-destination-cast receiver (control=<publisher's control address>, reference 7.3): status
 * messages, NAKs and SETUP requests go to the control address instead of the source, and until a
 * subscribed stream has an image the endpoint sends a SEND_SETUP status message (session 0) there
 * at once and then every pending-setup timeout, so the publisher makes it a destination.
 *
 * Multi-destination subscription (control-mode=manual, reference 7.3): the endpoint has no socket of
 * its own but one per destination the application adds (aeron:udp?endpoint=host:port), each an
 * aa_receive_destination_t whose transport the receiver polls with the others. One image per session
 * takes the frames of every destination (a frame already in the log is not written again, so each is
 * delivered once); the image's status messages and NAKs go back over every transport its frames came
 * on, to the address they came from. The conductor opens and frees destinations; the receiver's
 * list of them changes only on the conductor's commands.
 *
 * The conductor opens it (socket creation is blocking work), counts the subscriptions and images
 * using it, and frees it after the receiver released it. The stream and session tables belong to
 * the receiver, which changes them only from its datagrams and the conductor's commands.
 */
#ifndef AA_RECEIVE_CHANNEL_ENDPOINT_H
#define AA_RECEIVE_CHANNEL_ENDPOINT_H

#include <stdint.h>
#include <stdbool.h>

#include "media/aa_timestamps.h"
#include "media/aa_udp_channel.h"
#include "media/aa_udp_transport.h"
#include "media/aa_loss_generator.h"
#include "media/aa_media_services.h"
#include "media/aa_publication_image.h"

/* Pending SETUP requests and initialising images expire after this (reference 11), and so does the
 * cool-down of a removed image's session. */
#define AA_RECEIVE_PENDING_SETUP_TIMEOUT_NS (1000 * 1000 * 1000LL)
#define AA_RECEIVE_SESSION_COOL_DOWN_NS (1000 * 1000 * 1000LL)
/* Refused SETUPs are logged at most this often per endpoint (every one is counted). */
#define AA_RECEIVE_REFUSAL_LOG_INTERVAL_NS (1000 * 1000 * 1000LL)
/* A control= named by host without DATA, SETUP or RTTM this long is resolved again (reference 8.3). */
#define AA_RECEIVE_DESTINATION_TIMEOUT_NS (5LL * 1000 * 1000 * 1000)


typedef enum aa_receive_session_state_enum
{
    AA_RECEIVE_SESSION_PENDING_SETUP,
    AA_RECEIVE_SESSION_INITIALISING,
    AA_RECEIVE_SESSION_ACTIVE,
    AA_RECEIVE_SESSION_COOL_DOWN
}
aa_receive_session_state_t;

/* One transport of a multi-destination subscription. */
typedef struct aa_receive_destination_stct
{
    aa_udp_channel_t *channel;
    aa_udp_transport_t transport;            /* clientd: the endpoint */
    aa_udp_transport_bindings_t *loss_bindings;
    volatile int32_t has_receiver_released;  /* set by the receiver once it let go of a removed one */
    int32_t local_sockaddr_counter_id;       /* conductor: rcv-local-sockaddr of its bound address, or -1 */
}
aa_receive_destination_t;

typedef struct aa_receive_session_stct
{
    int32_t session_id;
    int32_t stream_id;
    aa_receive_session_state_t state;
    aa_publication_image_t *image;
    int64_t expiry_ns;
    aa_udp_transport_t *setup_transport;     /* multi-destination: the transport its SETUP came on */
}
aa_receive_session_t;

typedef struct aa_receive_stream_stct
{
    int32_t stream_id;
    int32_t refcnt;
    int64_t time_of_last_setup_elicit_ns;   /* MDC receivers: the last SEND_SETUP to the control address */
    bool has_elicited_setup;
}
aa_receive_stream_t;

/* group= on a subscription (reference 7.2): infer (the default) treats an image as a group when the
 * channel is multicast or the SETUP carries the GROUP flag. */
typedef enum aa_receive_group_mode_enum
{
    AA_RECEIVE_GROUP_INFER,
    AA_RECEIVE_GROUP_TRUE,
    AA_RECEIVE_GROUP_FALSE
}
aa_receive_group_mode_t;

/* What the first subscription of the channel asked for; later ones share it. */
typedef struct aa_receive_channel_endpoint_params_stct
{
    int32_t window_length;
    int64_t nak_delay_ns;
    bool is_reliable;
    aa_receive_group_mode_t group;  /* group=: whether images get group semantics */
    /* gtag= or the driver's receiver group tag: every SM of the endpoint is then 44 bytes with it
     * (tagged flow control, reference 1.6 and 5) */
    bool has_group_tag;
    int64_t group_tag;
    /* What the endpoint takes from the network (docs/security.md, Network: receivers), from the
     * driver's options; 0 = no limit: images of the endpoint (initialising or active), images of one
     * stream, the longest term a SETUP may ask for. */
    int32_t max_images;
    int32_t max_sessions_per_stream;
    int32_t max_term_length;
}
aa_receive_channel_endpoint_params_t;

typedef struct aa_receive_channel_endpoint_stct
{
    aa_udp_channel_t *channel;
    aa_udp_transport_t transport;
    aa_udp_transport_bindings_t *loss_bindings;
    int64_t receiver_id;
    aa_receive_channel_endpoint_params_t params;
    int32_t status_counter_id;
    int32_t local_sockaddr_counter_id;   /* rcv-local-sockaddr: the bound address */
    volatile int64_t *status;
    const aa_media_services_t *services;

    /* Set at creation, then read-only. */
    bool is_multi_destination;           /* control-mode=manual: no socket of its own, destinations */
    bool is_control_named;               /* unicast control= names a host: re-resolved when silent */
    /* channel-rcv-ts-offset= or media-rcv-ts-offset= (media/aa_timestamps.h): DATA datagrams are stamped
     * before they are copied into the image; the clock is CLOCK_REALTIME unless a test stands in */
    bool has_receive_timestamps;
    aa_timestamps_clock_t timestamp_clock;
    void *timestamp_clock_clientd;
    /* control-mode=response: its streams are added per response session once learnt, and SETUP is elicited
     * from control= for that session (aa_receive_channel_endpoint_elicit_setup), never per stream */
    bool is_response;

    /* Conductor only. */
    int32_t refcnt;
    int32_t image_refs;
    bool is_closing;
    aa_receive_destination_t **conductor_destinations;   /* added and not removed */
    size_t conductor_destinations_count;
    size_t conductor_destinations_capacity;
    aa_receive_destination_t **removed_destinations;     /* freed once the receiver released them */
    size_t removed_destinations_count;
    size_t removed_destinations_capacity;

    /* removals the receiver has carried out; the conductor may free a closing endpoint once this
     * equals conductor_removals (an endpoint taken back while closing is removed more than once) */
    volatile int32_t receiver_removals;
    int32_t conductor_removals;

    /* Receiver only. */
    aa_receive_stream_t *streams;
    size_t streams_count;
    size_t streams_capacity;
    aa_receive_session_t *sessions;
    size_t sessions_count;
    size_t sessions_capacity;
    aa_receive_destination_t **destinations;
    size_t destinations_count;
    size_t destinations_capacity;
    int64_t time_of_last_activity_ns;    /* re-resolution: the last DATA, SETUP or RTTM (or swap) */
    int64_t time_of_next_refusal_log_ns; /* refused SETUPs are logged at most once a second */
}
aa_receive_channel_endpoint_t;

/* Conductor: binds the socket of a (parsed) unicast channel; takes ownership of channel. */
int aa_receive_channel_endpoint_create(
    aa_receive_channel_endpoint_t **endpoint, aa_udp_channel_t *channel, const aa_receive_channel_endpoint_params_t *params,
    const aa_loss_generator_settings_t *loss, const aa_media_services_t *services);
/* Conductor: closes the socket and frees the endpoint (after the receiver released it) with its destinations. */
void aa_receive_channel_endpoint_delete(aa_receive_channel_endpoint_t *endpoint);

/* Conductor: opens a destination's socket (a parsed unicast channel, ownership taken) for a
 * multi-destination endpoint; frees one (closing its socket). */
int aa_receive_destination_create(
    aa_receive_destination_t **destination, aa_receive_channel_endpoint_t *endpoint, aa_udp_channel_t *channel,
    const aa_loss_generator_settings_t *loss);
void aa_receive_destination_delete(aa_receive_destination_t *destination);

/* Receiver: a destination's transport joins or leaves the endpoint (the caller polls it); removing
 * one also forgets it in the endpoint's sessions and images. */
int aa_receive_channel_endpoint_add_destination(aa_receive_channel_endpoint_t *endpoint, aa_receive_destination_t *destination);
void aa_receive_channel_endpoint_remove_destination(
    aa_receive_channel_endpoint_t *endpoint, aa_receive_destination_t *destination);

/* Receiver: the subscribed streams (counted) and the images. */
int aa_receive_channel_endpoint_add_stream(aa_receive_channel_endpoint_t *endpoint, int32_t stream_id);
void aa_receive_channel_endpoint_remove_stream(aa_receive_channel_endpoint_t *endpoint, int32_t stream_id);
int aa_receive_channel_endpoint_add_image(aa_receive_channel_endpoint_t *endpoint, aa_publication_image_t *image);
void aa_receive_channel_endpoint_remove_image(
    aa_receive_channel_endpoint_t *endpoint, aa_publication_image_t *image, int64_t now_ns);
/* Receiver: forgets pending, initialising and cooled-down sessions whose time is up. */
void aa_receive_channel_endpoint_expire_sessions(aa_receive_channel_endpoint_t *endpoint, int64_t now_ns);

/* Receiver, every duty cycle: with an explicit control address, a SEND_SETUP status message there
 * for each subscribed stream without an image (at once, then every pending-setup timeout). Returns
 * how many were sent. */
int aa_receive_channel_endpoint_elicit_setups(aa_receive_channel_endpoint_t *endpoint, int64_t now_ns);

/* Receiver, response channels (reference wave3 1.2, step 7): a SEND_SETUP status message for the session
 * and stream to the control address (control=), which a response publication learns its address from.
 * Returns 1 when sent, 0 when not (no control=). */
int aa_receive_channel_endpoint_elicit_setup(aa_receive_channel_endpoint_t *endpoint, int32_t stream_id, int32_t session_id);

/* Receiver: a datagram received on the endpoint's socket. Returns false for a keepalive (a heartbeat,
 * an RTT measurement): no work, so an idle driver may sleep deeply. */
bool aa_receive_channel_endpoint_on_datagram(
    aa_receive_channel_endpoint_t *endpoint, aa_udp_datagram_t *datagram, int64_t now_ns);
/* The same for a datagram received on transport (the endpoint's own, or one of its destinations'). */
bool aa_receive_channel_endpoint_on_transport_datagram(
    aa_receive_channel_endpoint_t *endpoint, aa_udp_transport_t *transport, aa_udp_datagram_t *datagram, int64_t now_ns);

/* Whether an image of this endpoint created from a SETUP with these flags has group semantics. */
bool aa_receive_channel_endpoint_image_is_group(const aa_receive_channel_endpoint_t *endpoint, uint8_t setup_flags);

/* Where control frames (SMs, NAKs, RTTM replies) for a source go: multicast, the control group;
 * a multi-destination-cast receiver (control=), the publisher's control address; unicast, the source. */
void aa_receive_channel_endpoint_control_address(
    const aa_receive_channel_endpoint_t *endpoint, const struct sockaddr_storage *source, socklen_t source_length,
    struct sockaddr_storage *address, socklen_t *address_length);

/* Receiver: sends a control frame to address; counts bytes sent and short sends. 1 sent, 0 not. */
int aa_receive_channel_endpoint_send_to(
    aa_receive_channel_endpoint_t *endpoint, const uint8_t *buffer, size_t length, const struct sockaddr_storage *address,
    socklen_t address_length);
/* The same through one transport of the endpoint (its own or a destination's). */
int aa_receive_channel_endpoint_send_on(
    aa_receive_channel_endpoint_t *endpoint, aa_udp_transport_t *transport, const uint8_t *buffer, size_t length,
    const struct sockaddr_storage *address, socklen_t address_length);

/* Receiver: a named control= silent for AA_RECEIVE_DESTINATION_TIMEOUT_NS asks the conductor to
 * resolve it again. Returns 1 when it asked. */
int aa_receive_channel_endpoint_check_re_resolution(aa_receive_channel_endpoint_t *endpoint, int64_t now_ns);
/* Receiver: the conductor resolved control= to a new address. */
void aa_receive_channel_endpoint_set_control_address(
    aa_receive_channel_endpoint_t *endpoint, const struct sockaddr_storage *address, int64_t now_ns);

#endif
