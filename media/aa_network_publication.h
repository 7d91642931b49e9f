/*
 * Network publications (aeron:udp unicast): a log buffer that clients append to exactly as for
 * IPC, sent by the sender agent over a send channel endpoint.
 *
 * Who owns what:
 * - The conductor creates the log and the counters, moves the publisher limit (pub-lmt =
 *   snd-pos + window while connected, else snd-pos), samples pub-pos, cleans the terms behind
 *   snd-pos - termLength, unblocks a publisher that died mid-claim, and walks the lifecycle
 *   ACTIVE -> DRAINING -> LINGER -> DONE. It frees the publication once the sender released it.
 * - The sender sends SETUP every 100 ms until the first status message (or while one is elicited
 *   by a SEND_SETUP SM), then DATA scanned from the log in MTU-sized batches up to snd-lmt,
 *   heartbeats after 100 ms without data (with the end-of-stream flag once the conductor says the
 *   stream ended), and resends what NAKs ask for through the retransmit handler: only NAKs from a
 *   receiver (an address its status messages came from), only from that receiver's last reported
 *   position to snd-pos, within that receiver's retransmit budget (aa_retransmit_receivers.h;
 *   docs/security.md, Network: senders); refused NAKs are counted. It runs flow
 *   control on status messages (snd-lmt), and alone writes the log's is_connected: connected while
 *   it has receivers (a status message within the publication connection timeout) and its flow
 *   control has the receivers it requires (min/tagged: the group min size), or, with
 *   spies-simulate-connection (ssc), while spies read the log.
 * - Spies (aeron-spy: subscriptions, linked by the conductor) read the log in place, as IPC
 *   subscribers do, each with a sub-pos counter. As in Aeron, a spy that is not resting holds the
 *   publisher back whenever the publication is connected: pub-lmt = min(snd-pos, spies) + window.
 *   With ssc and no receivers the sender moves snd-pos up to the furthest spy (what spies read counts
 *   as sent), so the publication runs at its spies' pace.
 * Fields they share are read and written with atomics; the rest belongs to one of them.
 */
#ifndef AA_NETWORK_PUBLICATION_H
#define AA_NETWORK_PUBLICATION_H

#include <stdint.h>
#include <stdbool.h>
#include <limits.h>
#include <sys/socket.h>

#include "media/aa_media_services.h"
#include "media/aa_stream_log_ids.h"
#include "logbuffer/aa_logbuffer.h"
#include "uri/aa_uri.h"
#include "util/aa_fs.h"
#include "protocols/aa_flow_control.h"
#include "protocols/aa_retransmit_handler.h"
#include "protocols/aa_retransmit_receivers.h"
#include "media/aa_ipc_publication.h"   /* aa_subscriber_position_t: spies are tracked as IPC subscribers are */

/* Reference 4.1 and 4.6. */
#define AA_NETWORK_PUBLICATION_SETUP_TIMEOUT_NS (100 * 1000 * 1000LL)
#define AA_NETWORK_PUBLICATION_HEARTBEAT_TIMEOUT_NS (100 * 1000 * 1000LL)
/* Datagrams one publication sends per sender duty cycle. */
#define AA_NETWORK_PUBLICATION_MAX_DATAGRAMS_PER_SEND 4

struct aa_send_channel_endpoint_stct;

typedef enum aa_network_publication_state_enum
{
    AA_NETWORK_PUBLICATION_STATE_ACTIVE,
    AA_NETWORK_PUBLICATION_STATE_DRAINING,
    AA_NETWORK_PUBLICATION_STATE_LINGER,
    AA_NETWORK_PUBLICATION_STATE_DONE
}
aa_network_publication_state_t;

typedef struct aa_network_publication_params_stct
{
    int64_t registration_id;
    aa_stream_log_ids_t ids;   /* session, stream, initial term, term and MTU lengths */
    int64_t term_window_length;
    int64_t linger_timeout_ns;
    int64_t unblock_timeout_ns;
    int64_t connection_timeout_ns;
    int64_t retransmit_delay_ns;
    int64_t retransmit_linger_ns;
    /* Receivers tracked for NAKs (AERON_SENDER_MAX_RECEIVERS; 0: the default). */
    int32_t max_receivers;
    /* Multicast: a pool of max_resend retransmit actions, SETUP with the GROUP flag and ttl. */
    bool has_group_semantics;
    int32_t max_resend;
    int32_t multicast_ttl;
    bool is_exclusive;
    bool signal_eos;
    /* The channel's flow control (aa_flow_control_strategy_select); options point into the
     * caller's URI and need only outlive aa_network_publication_init. */
    aa_flow_control_strategy_choice_t flow_control;
    /* The driver's flow control defaults, for strategies whose channel gives no t: or g: option. */
    int64_t flow_control_receiver_timeout_ns;
    int32_t flow_control_group_min_size;
    int64_t flow_control_group_tag;
    bool spies_simulate_connection;
    /* Response channels (docs/architecture.md, "Response channels"): response-correlation-id= (-1 none, -2
     * prototype) and control-mode=response (the publication sends only to the address its first status
     * message came from). */
    int64_t response_correlation_id;
    bool is_response;
}
aa_network_publication_params_t;

typedef struct aa_network_publication_stct
{
    /* Set by the conductor before the sender sees the publication, then read-only. */
    int64_t registration_id;
    aa_stream_log_ids_t ids;   /* session, stream, initial term, term and MTU lengths */
    int32_t position_bits_to_shift;
    bool is_exclusive;
    bool signal_eos;
    bool spies_simulate_connection;
    bool has_group_semantics;
    int32_t multicast_ttl;
    int64_t term_window_length;
    int64_t linger_timeout_ns;
    int64_t unblock_timeout_ns;
    int64_t connection_timeout_ns;
    int64_t response_correlation_id;      /* -1: none; a request's SETUPs carry the SEND_RESPONSE flag */
    bool is_response;                     /* control-mode=response */
    aa_uri_t *channel;   /* the channel parsed when the publication was added (its own copy; text: as given) */
    char log_path[PATH_MAX];
    aa_mapped_file_t mapped;
    aa_mapped_log_t log;
    struct aa_send_channel_endpoint_stct *endpoint;
    const aa_media_services_t *services;   /* counters, error log, pre-faulting */

    int32_t pub_lmt_counter_id;
    int32_t pub_pos_counter_id;
    int32_t snd_pos_counter_id;
    int32_t snd_lmt_counter_id;
    int32_t snd_bpe_counter_id;
    int32_t fc_receivers_counter_id;      /* fc-receivers, for strategies that track receivers; else -1 */
    volatile int64_t *pub_lmt;
    volatile int64_t *pub_pos;
    volatile int64_t *snd_pos;
    volatile int64_t *snd_lmt;
    volatile int64_t *snd_bpe;

    /* Shared: the conductor sets is_end_of_stream, the sender sets the others. */
    volatile int32_t is_end_of_stream;
    volatile int32_t is_revoked;          /* with is_end_of_stream: heartbeats carry REVOKED too */
    volatile int32_t has_received_unicast_eos;
    volatile int32_t has_sender_released;

    /* Shared: the conductor publishes its spies for the sender every duty cycle. */
    volatile int32_t has_spies;           /* a spy that is not resting reads the log */
    volatile int64_t max_spy_position;    /* the furthest of them */

    /* Sender only. */
    aa_flow_control_strategy_t *flow_control;
    aa_retransmit_handler_t retransmit_handler;
    aa_retransmit_receivers_t retransmit_receivers;   /* who may NAK, and their budgets */
    bool has_initial_connection;
    bool is_setup_elicited;
    bool is_connected;                    /* what the log's is_connected says */
    bool has_receivers;                   /* a status message within the connection timeout */
    bool is_flow_control_limited;
    int64_t time_of_last_setup_ns;
    int64_t time_of_last_data_or_heartbeat_ns;
    int64_t time_of_last_status_message_ns;
    /* a response publication: where its first status message came from, the only address it sends to
     * (never resolved: behind a NAT it is the translated address; reference wave3 1.2) */
    bool has_endpoint_address;
    struct sockaddr_storage endpoint_address;
    socklen_t endpoint_address_length;

    /* Conductor only. */
    aa_network_publication_state_t state;
    int32_t refcnt;
    aa_untethered_timeouts_t untethered;   /* its spies' (aeron-wave3.md 5) */
    int64_t time_of_last_state_change_ns;
    int64_t clean_position;
    int64_t last_snd_pos;
    int64_t time_of_last_snd_pos_change_ns;
    aa_subscriber_position_t *spies;
    size_t spies_count;
    size_t spies_capacity;
}
aa_network_publication_t;

/* Conductor: fills the publication's fields from params around an already mapped and initialised
 * log, builds the flow control (params->flow_control) and the retransmit handler. Counters are set afterwards. */
int aa_network_publication_init(
    aa_network_publication_t *pub, const aa_network_publication_params_t *params,
    const aa_media_services_t *services);
/* Conductor: releases what init built and the mapping (the caller unlinks the file). */
void aa_network_publication_free(aa_network_publication_t *pub);

int64_t aa_network_publication_producer_position(aa_network_publication_t *pub);

/* Conductor, every duty cycle: pub-pos, pub-lmt and cleaning. Returns the work count. */
int aa_network_publication_update_pub_pos_and_lmt(aa_network_publication_t *pub);
/* Conductor, every timer tick: unblocks a publisher that died between claiming and committing;
 * returns true when it acted. */
bool aa_network_publication_check_for_blocked_publisher(aa_network_publication_t *pub, int64_t now_ns);
/* Conductor: the last client link went away. The publisher limit stops at the producer position. */
void aa_network_publication_begin_draining(aa_network_publication_t *pub, int64_t now_ns);
/* Conductor: a revoked publication (aeron-wave3.md 4.1) ends its stream at the producer position now:
 * the publisher limit stops there, the log reads not connected, the sender's heartbeats carry EOS and
 * REVOKED, and it goes straight to LINGER. */
void aa_network_publication_revoke(aa_network_publication_t *pub, int64_t now_ns);
/* Conductor, DRAINING: true once everything was sent (or nobody listens); then sets the
 * end-of-stream flag the sender puts into its heartbeats. */
bool aa_network_publication_is_drained(aa_network_publication_t *pub);

/* Conductor: spies. The join position is the slowest spy that is not resting, else snd-pos. */
int64_t aa_network_publication_join_position(aa_network_publication_t *pub);
int aa_network_publication_add_spy(
    aa_network_publication_t *pub, int64_t subscription_registration_id, int64_t client_id, int32_t counter_id,
    volatile int64_t *value, bool is_tether, int64_t now_ns);
/* Removes and returns the spy's counter id (or -1 if none matched). */
int32_t aa_network_publication_remove_spy(aa_network_publication_t *pub, int64_t subscription_registration_id);
aa_subscriber_position_t *aa_network_publication_find_spy(aa_network_publication_t *pub, int64_t subscription_registration_id);
/* Conductor, DRAINING: every spy that is not resting has read up to the producer position. */
bool aa_network_publication_spies_finished_consuming(aa_network_publication_t *pub);

/* Sender: the publication was handed over; SETUP goes out at once. */
void aa_network_publication_on_added_to_sender(aa_network_publication_t *pub, int64_t now_ns);

/* Sender: one duty cycle for this publication; returns the data bytes sent (work; heartbeats are not). */
int aa_network_publication_send(aa_network_publication_t *pub, int64_t now_ns);

/* Sender: control frames from the endpoint, already classified and addressed to this publication. */
/* Returns true when the status message changed something (the sender limit, the connection, a
 * SETUP asked for, end of stream), false for a keepalive that only confirms the receiver is there. */
/* source: where the SM came from (handed to the flow control's on_status_message_source). */
bool aa_network_publication_on_status_message(
    aa_network_publication_t *pub, const uint8_t *buffer, size_t length, const struct sockaddr_storage *source,
    socklen_t source_length, int64_t now_ns);
/* source: where the NAK came from (only a receiver's NAKs are honoured). */
void aa_network_publication_on_nak(
    aa_network_publication_t *pub, const uint8_t *buffer, size_t length, const struct sockaddr_storage *source,
    socklen_t source_length, int64_t now_ns);
void aa_network_publication_on_rttm(
    aa_network_publication_t *pub, const uint8_t *buffer, size_t length, const struct sockaddr_storage *source,
    socklen_t source_length);
/* source: where the ERR frame came from (only a receiver's are passed to flow control). */
void aa_network_publication_on_error(
    aa_network_publication_t *pub, const uint8_t *buffer, size_t length, const struct sockaddr_storage *source,
    int64_t now_ns);

#endif
