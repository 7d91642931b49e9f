/*
 * Publication images: the receiving side of a network publication, one per (receive channel
 * endpoint, session, stream). A log buffer under images/ that the receiver rebuilds from DATA
 * datagrams and that subscribers read exactly like an IPC log.
 *
 * Who owns what:
 * - The conductor creates the log and the counters (rcv-hwm, rcv-pos, one sub-pos per
 *   subscription), links and unlinks subscribers, publishes the minimum and maximum subscriber
 *   positions for the receiver every duty cycle, and walks the lifecycle ACTIVE -> DRAINING
 *   (end of stream, liveness timeout or no subscribers) -> LINGER (images unavailable to
 *   clients, receiver asked to let go) -> freed once the receiver released it.
 * - The receiver inserts datagrams at their position (header word written last) after the
 *   receiver window's over-/under-run checks, moves rcv-hwm, and every duty cycle runs the loss
 *   detector over the rebuild term (rcv-pos, NAKs or, unreliable, gap fills; each NAK or gap fill is
 *   a loss observation in the driver's loss report, see aa_loss_reporter.h), schedules and sends
 *   status messages (SM cadence of reference 4.2, the EOS flag while draining), cleans the terms
 *   behind the slowest subscriber and writes the end-of-stream position once an EOS heartbeat was
 *   seen and everything before it arrived.
 * The fields they share are read and written with atomics.
 */
#ifndef AA_PUBLICATION_IMAGE_H
#define AA_PUBLICATION_IMAGE_H

#include <stdint.h>
#include <stdbool.h>
#include <limits.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "media/aa_ipc_publication.h"
#include "media/aa_media_services.h"
#include "media/aa_stream_log_ids.h"
#include "media/aa_udp_channel.h"
#include "logbuffer/aa_logbuffer.h"
#include "util/aa_fs.h"
#include "protocols/aa_congestion_control.h"
#include "protocols/aa_loss_detector.h"
#include "protocols/aa_receiver_window.h"
#include "protocols/aa_control_protocol.h"

struct aa_receive_channel_endpoint_stct;
struct aa_udp_transport_stct;

/* Multi-destination subscriptions: the transports an image's frames come on (reference 7.3). */
#define AA_PUBLICATION_IMAGE_MAX_CONNECTIONS 8

typedef struct aa_publication_image_connection_stct
{
    struct aa_udp_transport_stct *transport;
    struct sockaddr_storage control_address;   /* where the frames on it came from */
    socklen_t control_address_length;
    int64_t time_of_last_frame_ns;
    bool is_end_of_stream;   /* an EOS heartbeat came on it */
}
aa_publication_image_connection_t;

typedef enum aa_publication_image_state_enum
{
    AA_PUBLICATION_IMAGE_STATE_ACTIVE,
    AA_PUBLICATION_IMAGE_STATE_DRAINING,
    AA_PUBLICATION_IMAGE_STATE_LINGER
}
aa_publication_image_state_t;

typedef struct aa_publication_image_params_stct
{
    int64_t correlation_id;
    aa_stream_log_ids_t ids;   /* session, stream, initial term, term and MTU lengths */
    int32_t active_term_id;
    int32_t term_offset;
    int32_t window_length;
    int64_t status_message_timeout_ns;
    int64_t nak_delay_ns;
    int32_t nak_retry_delay_ratio;
    bool is_reliable;
    /* Group semantics (multicast, or group=true): every NAK delay drawn at random from
     * [0, nak_multicast_max_backoff_ns) shaped for nak_multicast_group_size receivers (reference 4.3),
     * from a generator seeded with nak_delay_seed; nak_delay_ns and the ratio are then unused. */
    bool is_group;
    int64_t nak_multicast_max_backoff_ns;
    int32_t nak_multicast_group_size;
    uint64_t nak_delay_seed;
    /* The channel the loss report names the image's stream by (copied; NULL = none). */
    const char *channel;
    /* The flags of the SETUP it was created from (SEND_RESPONSE: a request asking for a response channel). */
    uint8_t setup_flags;
}
aa_publication_image_params_t;

/* response_session_id when no RSP_SETUP is to be sent (Aeron's null value, reference wave3 1.1). */
#define AA_PUBLICATION_IMAGE_NULL_RESPONSE_SESSION_ID ((int64_t)(uint64_t)0xF000000000000000ULL)

typedef struct aa_publication_image_stct
{
    /* Set by the conductor before the receiver sees the image, then read-only. */
    int64_t correlation_id;
    aa_stream_log_ids_t ids;   /* session, stream, initial term, term and MTU lengths */
    int32_t position_bits_to_shift;
    int32_t window_length;
    int64_t join_position;
    bool is_reliable;
    bool is_group;
    uint8_t setup_flags;      /* of its SETUP: AA_SETUP_HEADER_SEND_RESPONSE_FLAG asks for a response channel */
    char log_path[PATH_MAX];
    char source_identity[AA_UDP_ADDRESS_FORMAT_MAX_LENGTH];
    char *channel;   /* for the loss report: the first subscription's channel (heap; NULL = none) */
    aa_mapped_file_t mapped;
    aa_mapped_log_t log;
    struct aa_receive_channel_endpoint_stct *endpoint;
    struct sockaddr_storage control_address;   /* where status messages and NAKs go: the source (multicast: the control group) */
    socklen_t control_address_length;
    /* the address its SETUP came from: the only one its frames are taken from (multi-destination
     * subscriptions excepted; docs/security.md, Network: receivers) */
    struct sockaddr_storage source_address;
    const aa_media_services_t *services;  /* counters, error log, pre-faulting */

    int32_t rcv_hwm_counter_id;
    int32_t rcv_pos_counter_id;
    volatile int64_t *rcv_hwm;
    volatile int64_t *rcv_pos;

    /* Congestion control (cc=): created by the conductor with the image, then driven by the receiver
     * (the window of every SM, RTT measurement). Its per-image counters (cubic: rcv-cc-cubic-rtt and
     * rcv-cc-cubic-wnd) are the conductor's to free; -1 where none. */
    aa_congestion_control_t congestion_control;
    int32_t cc_counter_ids[AA_CONGESTION_CONTROL_COUNTERS_MAX];

    /* Conductor -> receiver. */
    volatile int64_t min_subscriber_position;
    volatile int64_t max_subscriber_position;
    volatile int32_t is_draining;
    /* Response channels (docs/architecture.md, "Response channels"): the session of the response publication
     * linked to this image, sent to the requester in RSP_SETUP with every status message while it is in
     * the int32 range; AA_PUBLICATION_IMAGE_NULL_RESPONSE_SESSION_ID before the link and once the response
     * publication has its receiver. */
    volatile int64_t response_session_id;
    /* Receiver -> conductor. */
    volatile int64_t time_of_last_packet_ns;
    volatile int32_t is_end_of_stream;
    volatile int32_t is_revoked;   /* its publication was revoked (aeron-wave3.md 4.1): no drain */
    /* Conductor -> receiver: rejected (aeron-wave3.md 4.2); the reason is written once, before the flag. */
    volatile int32_t is_rejected;
    int32_t reject_reason_length;
    char reject_reason[AA_REJECT_IMAGE_REASON_MAX_LENGTH + 1];
    volatile int32_t has_receiver_released;

    /* Receiver only. */
    aa_receiver_window_t window;
    aa_loss_detector_t loss_detector;
    int64_t hwm_position;
    int64_t rebuild_position;
    int64_t clean_position;
    bool has_end_of_stream_heartbeat;
    int64_t end_of_stream_position;
    int64_t last_response_session_id;   /* the response session RSP_SETUP went out for (a new one: at once) */
    /* the image's entry in the driver's loss report: its offset, or AA_LOSS_REPORT_NO_ENTRY before the
     * first loss, AA_LOSS_REPORT_FULL when the report had no room for it */
    int64_t loss_report_offset;
    /* multi-destination: status messages and NAKs go back over each (none: the endpoint's socket) */
    aa_publication_image_connection_t connections[AA_PUBLICATION_IMAGE_MAX_CONNECTIONS];
    size_t connections_count;
    int32_t frame_connection;   /* the connection the frame being inserted came on; -1: none */

    /* Conductor only. */
    aa_publication_image_state_t state;
    int64_t time_of_last_state_change_ns;
    aa_subscriber_position_t *subscribers;
    size_t subscribers_count;
    size_t subscribers_capacity;
    /* its untethered subscribers' timeouts: the receive endpoint's channel's (aeron-wave3.md 5) */
    aa_untethered_timeouts_t untethered;
}
aa_publication_image_t;

/* Receiver, per datagram: whether address is the image's source (address and port; no call, no
 * allocation). */
static inline bool aa_publication_image_is_from_source(const aa_publication_image_t *image, const struct sockaddr_storage *address)
{
    const struct sockaddr_storage *source = &image->source_address;
    if (AF_INET == address->ss_family)
    {
        const struct sockaddr_in *a4 = (const struct sockaddr_in *)address;
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)source;
        return AF_INET == source->ss_family && a4->sin_port == s4->sin_port && a4->sin_addr.s_addr == s4->sin_addr.s_addr;
    }
    if (AF_INET6 == address->ss_family)
    {
        const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)address;
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)source;
        return AF_INET6 == source->ss_family && a6->sin6_port == s6->sin6_port &&
            0 == memcmp(&a6->sin6_addr, &s6->sin6_addr, sizeof(a6->sin6_addr));
    }
    return false;
}

/* Conductor: fills the image around an already mapped and initialised log (counters are set
 * afterwards), builds the receiver window and the loss detector. */
int aa_publication_image_init(
    aa_publication_image_t *image, const aa_publication_image_params_t *params, int64_t now_ns,
    const aa_media_services_t *services);
/* Conductor: frees the subscribers array, the mapping and the image (the caller unlinks the file). */
void aa_publication_image_free(aa_publication_image_t *image);

/* Conductor: subscribers. */
int aa_publication_image_add_subscriber(
    aa_publication_image_t *image, int64_t subscription_registration_id, int64_t client_id, int32_t counter_id,
    volatile int64_t *value, bool is_tether, int64_t now_ns);
/* Removes and returns the subscriber's counter id (or -1 if none matched). */
int32_t aa_publication_image_remove_subscriber(aa_publication_image_t *image, int64_t subscription_registration_id);
aa_subscriber_position_t *aa_publication_image_find_subscriber(
    aa_publication_image_t *image, int64_t subscription_registration_id);
/* Where a new (or rejoining untethered) subscriber starts: the slowest active subscriber, at most rcv-pos. */
int64_t aa_publication_image_join_position(aa_publication_image_t *image);
/* Conductor, every duty cycle: publishes the subscriber positions for the receiver (resting untethered
 * subscribers left out). Returns work. */
int aa_publication_image_update_subscriber_positions(aa_publication_image_t *image);
/* Conductor: every active subscriber has read everything received so far. */
bool aa_publication_image_is_drained(aa_publication_image_t *image);

/* Receiver: a DATA, PAD or heartbeat datagram of this session (classified, fits the term). */
void aa_publication_image_insert_packet(
    aa_publication_image_t *image, const uint8_t *buffer, size_t length, bool is_heartbeat, int64_t now_ns);
/* Receiver, multi-destination: a frame of this image arrived on transport from address (a new
 * transport becomes a connection; more than AA_PUBLICATION_IMAGE_MAX_CONNECTIONS are not answered),
 * called before the frame is inserted. The stream ends (EOS, a revoke) once an EOS heartbeat came on
 * every live connection (aeron-wave3.md 4.1; aeron-protocol.md 4.6, "Image side").
 * A destination removed takes its connection with it. */
void aa_publication_image_on_connection_frame(
    aa_publication_image_t *image, struct aa_udp_transport_stct *transport, const struct sockaddr_storage *address,
    socklen_t address_length, int64_t now_ns);
void aa_publication_image_remove_connection(aa_publication_image_t *image, struct aa_udp_transport_stct *transport);

/* Receiver, every duty cycle: loss detection and NAKs, rcv-pos, congestion control (the window of
 * the next SM, an SM forced on loss, RTT measurement frames), status messages, cleaning and the end
 * of stream. Returns the work count. */
int aa_publication_image_track_rebuild(aa_publication_image_t *image, int64_t now_ns);
/* Whether the image's SETUP asked for a response channel. */
static inline bool aa_publication_image_has_send_response_setup(const aa_publication_image_t *image)
{
    return 0 != (image->setup_flags & AA_SETUP_HEADER_SEND_RESPONSE_FLAG);
}

/* Receiver: the answer (flags 0) to an RTT measurement this image sent: rtt = now - echo - delta. */
void aa_publication_image_on_rttm_reply(
    aa_publication_image_t *image, int64_t echo_timestamp_ns, int64_t reception_delta_ns, int64_t now_ns);

/* Conductor: REJECT_IMAGE (aeron-wave3.md 4.2). From now on the receiver drops every packet of the
 * image (so it reaches its liveness timeout) and sends an ERR frame (IMAGE_REJECTED, the reason)
 * instead of each status message, to every connection's control address. A second reject keeps the
 * first reason. reason_length: at most AA_REJECT_IMAGE_REASON_MAX_LENGTH. */
void aa_publication_image_reject(aa_publication_image_t *image, const char *reason, size_t reason_length);

#endif
