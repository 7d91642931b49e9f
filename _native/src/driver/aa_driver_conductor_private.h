/*
 * The driver conductor's own files share this header; nothing outside aa_driver_conductor*.c includes
 * it. The conductor is split by resource:
 *
 *   aa_driver_conductor.c                the duty cycle, command dispatch, timers, responses to
 *                                        clients, log-buffer creation, init and close
 *   aa_driver_conductor_clients.c        clients (heartbeats, liveness, removal) and the stream and
 *                                        channel-status counters every resource allocates
 *   aa_driver_conductor_publications.c   ADD/REMOVE_PUBLICATION, top down (the path is described at
 *                                        aa_conductor_on_add_publication), what IPC and network
 *                                        publications share: channel parameters, sharing, session ids,
 *                                        the clients' links, the untethered-subscriber rule
 *   aa_driver_conductor_ipc_publications.c       IPC publications: creation, linking subscribers,
 *                                                untethered subscribers, drain, linger
 *   aa_driver_conductor_network_publications.c   network publications and spies: creation, linking
 *                                                spies, untethered spies, drain, linger
 *   aa_driver_conductor_endpoints.c      UDP channels (resolved from the parsed channel, checked for
 *                                        what this driver carries), the send and receive endpoints
 *   aa_driver_conductor_images.c         publication images: creation on a SETUP, linking, linger
 *   aa_driver_conductor_subscriptions.c  subscriptions and their links to publications and images
 *   aa_driver_conductor_reject.c         REJECT_IMAGE and ON_PUBLICATION_ERROR (aeron-wave3.md 4.2)
 *   aa_driver_conductor_responses.c      response channels: the checks, linking a response publication to
 *                                        its request's image or subscription, RSP_SETUP from the sender
 *   aa_driver_conductor_resolution.c     the name resolver, its executor, registrations waiting for
 *                                        a name, re-resolution and the resolutions table
 *
 * Everything here runs on the conductor thread, except aa_driver_conductor_proxy_create_publication_image
 * (the receiver's image request, queued to the conductor).
 */
#ifndef AA_DRIVER_CONDUCTOR_PRIVATE_H
#define AA_DRIVER_CONDUCTOR_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "driver/aa_driver_conductor.h"
#include "driver/aa_channel_support.h"
#include "protocols/aa_congestion_control.h"
#include "protocols/aa_control_protocol.h"
#include "logbuffer/aa_logbuffer.h"
#include "uri/aa_uri.h"
#include "util/aa_array.h"

#define AA_CHANNEL_STATUS_INDICATOR_NOT_ALLOCATED (-1)
/* The term length of a response-correlation-id=prototype publication unless term-length= says (reference wave3 1.4). */
#define AA_RESPONSE_PROTOTYPE_TERM_LENGTH (64 * 1024)

/* ---- responses to clients (aa_driver_conductor.c) ---- */

void aa_conductor_transmit(aa_driver_conductor_t *conductor, int32_t msg_type_id, const void *msg, size_t length);
void aa_conductor_on_operation_success(aa_driver_conductor_t *conductor, int64_t correlation_id);
void aa_conductor_send_available_image(
    aa_driver_conductor_t *conductor, int64_t correlation_id, int32_t session_id, int32_t stream_id,
    int64_t subscription_registration_id, int32_t position_counter_id, const char *log_path, const char *source_identity);
void aa_conductor_send_unavailable_image(
    aa_driver_conductor_t *conductor, int64_t correlation_id, int64_t subscription_registration_id, int32_t stream_id,
    const char *channel);
/* ON_PUBLICATION_ERROR (aeron-wave3.md 4.2): error's fields, then error_message_length bytes of text
 * (aa_driver_conductor_reject.c). */
void aa_conductor_send_publication_error(
    aa_driver_conductor_t *conductor, const aa_publication_error_t *error, const uint8_t *text);
/* The media services' on_publication_error (any driver thread): copied and queued to the conductor. */
void aa_conductor_services_on_publication_error(void *clientd, const aa_publication_error_t *error, const uint8_t *text);

/* ---- log buffers (aa_driver_conductor.c) ---- */

/* Creates the log buffer of a publication or an image: <aeron_dir>/<folder>/<correlation_id>.logbuffer
 * (folder "publications" or "images"), sized for params->term_length, checked against the usable
 * storage, created sparse or not as params->sparse says, mapped, and its metadata written. The
 * caller fills the stream's fields of params; the driver-wide ones (page size, untethered timeouts,
 * rejoin) are filled here from the context. On failure nothing is left on disk and *mapped is unset. */
int aa_conductor_create_log(
    aa_driver_conductor_t *conductor, const char *folder, aa_logbuffer_init_params_t *params, char *log_path,
    size_t log_path_length, aa_mapped_file_t *mapped, aa_mapped_log_t *log);

/* ---- counters and clients (aa_driver_conductor_clients.c) ---- */

/* A per-stream counter (pub-lmt, snd-pos, rcv-hwm, sub-pos, ...) keyed and labelled as Aeron does. */
int32_t aa_conductor_allocate_stream_counter(
    aa_driver_conductor_t *conductor, int32_t type_id, const char *name, int64_t registration_id,
    int32_t session_id, int32_t stream_id, const char *channel, int64_t now_ms);
/* sub-pos: a subscription's position on a stream it joins at join_position (labelled " @<position>",
 * set to it). Returns the counter id with *value its address, or -1 with the failure logged. */
int32_t aa_conductor_allocate_subscriber_position(
    aa_driver_conductor_t *conductor, const aa_subscription_link_t *link, int32_t session_id, int32_t stream_id,
    int64_t join_position, int64_t now_ms, volatile int64_t **value);
/* A log a subscription reads (an IPC publication's, a spy's network publication's, an image's):
 * where its available image points, and how a subscriber is added to its owner. */
typedef struct aa_conductor_log_reader_stct
{
    void *owner;
    /* adds the subscriber with its sub-pos counter; -1 when out of memory */
    int (*add)(void *owner, const aa_subscription_link_t *link, int32_t counter_id, volatile int64_t *value,
        int64_t now_ns);
    const char *what;           /* in the out-of-memory error: "adding a <what>" */
    int64_t correlation_id;
    int32_t session_id;
    int32_t stream_id;
    const char *log_path;
    const char *source_identity;
}
aa_conductor_log_reader_t;
/* Links a subscription to a log: a sub-pos at join_position, added by reader->add, then the client
 * told of the available image; failures are logged (nothing linked). */
void aa_conductor_link_log_reader(
    aa_driver_conductor_t *conductor, const aa_conductor_log_reader_t *reader, const aa_subscription_link_t *link,
    int64_t join_position, int64_t now_ns, int64_t now_ms);
/* A log is done with: its mapping no longer counted in BYTES_CURRENTLY_MAPPED, its file removed
 * (a failure counted in FREE_FAILS; an empty path is no file). */
void aa_conductor_remove_log(aa_driver_conductor_t *conductor, size_t mapped_length, const char *log_path);
/* snd-channel / rcv-channel: the endpoint status, keyed by the channel; its registration id is that of the
 * publication or subscription whose command created the endpoint (as Aeron's, so a client finds its
 * channel's status counter by type and registration id). */
int32_t aa_conductor_allocate_channel_status_counter(
    aa_driver_conductor_t *conductor, int32_t type_id, const char *name, const char *channel,
    int64_t registration_id, int64_t now_ms);
/* Frees a counter; a negative id (never allocated) is ignored. */
void aa_conductor_free_counter(aa_driver_conductor_t *conductor, int32_t id, int64_t now_ms);

aa_driver_client_t *aa_conductor_find_client(aa_driver_conductor_t *conductor, int64_t client_id);
aa_driver_client_t *aa_conductor_get_or_add_client(aa_driver_conductor_t *conductor, int64_t client_id, int64_t now_ms);
/* Removes a client with its publication and subscription links (timed_out: tells clients it timed out). */
void aa_conductor_remove_client_at(
    aa_driver_conductor_t *conductor, size_t index, bool timed_out, int64_t now_ns, int64_t now_ms);
void aa_conductor_check_clients(aa_driver_conductor_t *conductor, int64_t now_ns, int64_t now_ms);
/* ADD_COUNTER / REMOVE_COUNTER: counters owned by clients (the whole command, as received). */
int aa_conductor_on_add_counter(aa_driver_conductor_t *conductor, const uint8_t *buffer, size_t length, int64_t now_ms);
int aa_conductor_on_add_static_counter(
    aa_driver_conductor_t *conductor, const uint8_t *buffer, size_t length, int64_t now_ms);
int aa_conductor_on_remove_counter(aa_driver_conductor_t *conductor, const aa_remove_command_t *command, int64_t now_ms);

/* ---- publications, what IPC and network share (aa_driver_conductor_publications.c) ---- */

/* A publication's channel parameters (term length, mtu, position, session id, linger, window, ...),
 * read from its parsed channel with the driver's defaults. */
typedef struct aa_publication_params_stct
{
    int32_t term_length;
    int32_t mtu_length;
    bool has_position;
    int32_t initial_term_id;
    int32_t term_id;
    int32_t term_offset;
    bool has_session_id;
    int32_t session_id;
    bool is_session_id_from_tag;    /* session-id=tag:<n>: copied from that publication, so not checked for use */
    int64_t entity_tag;             /* tags=<channel tag>,<entity tag>; -1 when none (log metadata entity_tag) */
    int64_t linger_timeout_ns;
    int64_t term_window_length;
    bool sparse;
    bool signal_eos;
    bool tether;
    aa_flow_control_strategy_choice_t flow_control;  /* UDP; options point into the caller's URI */
    bool spies_simulate_connection;
    /* untethered-window-limit-timeout, -linger-timeout, -resting-timeout (aeron-wave3.md 5) */
    aa_untethered_timeouts_t untethered;
    /* UDP, set once the channel is resolved: multicast (group semantics), its max-resend= and ttl */
    bool has_group_semantics;
    int32_t max_resend;
    int32_t multicast_ttl;
    /* response channels: response-correlation-id= (-1 none, -2 prototype), control-mode=response */
    int64_t response_correlation_id;
    bool is_response_control_mode;
}
aa_publication_params_t;

/* The channel of a command, parsed when the command was taken (aa_driver_conductor.c): uri, or NULL with
 * the error its parsing gave. */
const aa_uri_t *aa_conductor_channel_uri(const aa_command_channel_t *channel);

/* ADD_PUBLICATION / ADD_EXCLUSIVE_PUBLICATION on its parsed channel: shares or creates the publication,
 * links the client and answers READY (the path, top down, at the definition). */
int aa_conductor_on_add_publication(
    aa_driver_conductor_t *conductor, const aa_publication_command_t *command, const aa_uri_t *uri, bool is_exclusive,
    int64_t now_ns, int64_t now_ms);
/* flags: REMOVE_PUBLICATION's (AA_REMOVE_PUBLICATION_FLAG_REVOKE), 0 when the command had none. */
int aa_conductor_on_remove_publication(
    aa_driver_conductor_t *conductor, const aa_remove_command_t *command, uint64_t flags, int64_t now_ns);
/* REJECT_IMAGE (aeron-wave3.md 4.2): the whole command as received; answers the client itself. */
int aa_conductor_on_reject_image(
    aa_driver_conductor_t *conductor, const uint8_t *buffer, size_t length, int64_t now_ns, int64_t now_ms);
void aa_conductor_remove_publication_link_at(aa_driver_conductor_t *conductor, size_t index, int64_t now_ns);
/* A client's link to an IPC (pub) or a network (network) publication, counted in its refcnt. */
int aa_conductor_add_publication_link(
    aa_driver_conductor_t *conductor, int64_t correlation_id, int64_t client_id, aa_ipc_publication_t *pub,
    aa_network_publication_t *network);
/* ON_PUBLICATION_READY or ON_EXCLUSIVE_PUBLICATION_READY. */
void aa_conductor_on_publication_ready(
    aa_driver_conductor_t *conductor, int64_t correlation_id, int64_t registration_id, int32_t session_id,
    int32_t stream_id, int32_t position_limit_counter_id, int32_t channel_status_indicator_id, const char *log_path,
    bool is_exclusive);
/* Where a session id must be unique (Aeron's scopes): among the stream's IPC publications, among its
 * network publications on one send endpoint, or among all its publications (a next session id request). */
typedef enum aa_session_scope_enum
{
    AA_SESSION_SCOPE_IPC,
    AA_SESSION_SCOPE_NETWORK,
    AA_SESSION_SCOPE_ALL
}
aa_session_scope_t;
/* Whether a publication of the stream in scope (endpoint: the send endpoint of AA_SESSION_SCOPE_NETWORK)
 * has the session id. */
bool aa_conductor_session_id_in_use(
    aa_driver_conductor_t *conductor, aa_session_scope_t scope, const aa_send_channel_endpoint_t *endpoint,
    int32_t stream_id, int32_t session_id);
/* The next session id not reserved and not in use in the scope (the driver's one counter moves on). */
int32_t aa_conductor_next_session_id(
    aa_driver_conductor_t *conductor, aa_session_scope_t scope, const aa_send_channel_endpoint_t *endpoint,
    int32_t stream_id);
/* -1 (INVALID_CHANNEL, Aeron's words) when the explicit session-id= of params is in use in the scope. */
int aa_conductor_check_session_clash(
    aa_driver_conductor_t *conductor, aa_session_scope_t scope, const aa_send_channel_endpoint_t *endpoint,
    int32_t stream_id, const aa_uri_t *uri, const aa_publication_params_t *params);
/* GET_NEXT_AVAILABLE_SESSION_ID: answers ON_NEXT_AVAILABLE_SESSION_ID. */
int aa_conductor_on_next_session_id(aa_driver_conductor_t *conductor, const uint8_t *buffer, size_t length);
int32_t aa_conductor_initial_term_id(const aa_publication_params_t *params, int64_t now_ns);
/* A zeroed publication (IPC or network) of `size` bytes with its own copy of uri, stored in its
 * `aa_uri_t *` field at channel_offset; NULL with the error set. */
void *aa_conductor_new_publication(size_t size, size_t channel_offset, const aa_uri_t *uri);
aa_logbuffer_init_params_t aa_conductor_publication_log_params(
    const aa_driver_conductor_t *conductor, const aa_publication_params_t *params, int64_t registration_id,
    int32_t session_id, int32_t stream_id, int32_t initial_term_id);

/* A stream's untethered timeouts (aeron-wave3.md 5) from a channel (a publication's; a network image's:
 * its receive endpoint's), else the driver's. Returns 0, or -1 (INVALID_CHANNEL) for a value not above
 * the driver's timer interval. */
int aa_conductor_parse_untethered_timeouts(
    aa_driver_conductor_t *conductor, const aa_uri_t *uri, aa_untethered_timeouts_t *timeouts);

/* What differs between an IPC publication's untethered subscribers, a network publication's untethered
 * spies and a network image's untethered subscribers. */
typedef struct aa_untethered_ops_stct
{
    int64_t (*join_position)(void *pub);
    /* after the state changed: the image went unavailable (LINGER), or came back (ACTIVE) */
    void (*dropped)(aa_driver_conductor_t *conductor, void *pub, aa_subscriber_position_t *s);
    void (*rejoined)(aa_driver_conductor_t *conductor, void *pub, aa_subscriber_position_t *s);
}
aa_untethered_ops_t;

/* Drops, rests and rejoins the untethered ones of subscribers (Aeron's rule, see the definition). */
void aa_conductor_check_untethered(
    aa_driver_conductor_t *conductor, void *pub, aa_subscriber_position_t *subscribers, size_t count,
    int64_t consumer_position, int64_t term_window_length, const aa_untethered_timeouts_t *timeouts,
    const aa_untethered_ops_t *ops, int64_t now_ns);

/* ---- IPC publications (aa_driver_conductor_ipc_publications.c) ---- */

/* A new IPC publication (log, pub-lmt and pub-pos counters, prefaulting; it keeps a copy of uri)
 * linked to the subscriptions of its stream, with no client link yet; NULL with the error set on
 * failure. */
aa_ipc_publication_t *aa_conductor_add_ipc_publication(
    aa_driver_conductor_t *conductor, int64_t registration_id, int32_t stream_id, const aa_uri_t *uri,
    const aa_publication_params_t *params, bool is_exclusive, int64_t now_ns, int64_t now_ms);
/* Links an IPC subscription to an IPC publication of its stream (a sub-pos counter, an image). */
void aa_conductor_link_subscriber(
    aa_driver_conductor_t *conductor, aa_ipc_publication_t *pub, aa_subscription_link_t *link,
    int64_t now_ns, int64_t now_ms);
void aa_conductor_check_publications(aa_driver_conductor_t *conductor, int64_t now_ns, int64_t now_ms);
/* REJECT_IMAGE of an IPC publication's image (aeron-wave3.md 4.2): the publisher is told
 * (ON_PUBLICATION_ERROR); unless it is cooling down already, every subscriber is unlinked (its image
 * unavailable, its position freed); a cool-down of image-liveness length starts (or restarts), after
 * which the matching subscriptions link again. */
void aa_conductor_ipc_publication_reject(
    aa_driver_conductor_t *conductor, aa_ipc_publication_t *pub, const char *reason, size_t reason_length,
    int64_t now_ns, int64_t now_ms);

/* ---- network publications and spies (aa_driver_conductor_network_publications.c) ---- */

/* A new network publication on the send endpoint of *udp's canonical form (an open one, or a new one
 * that takes *udp, NULL afterwards), with its log and counters (it keeps a copy of uri), handed to the
 * sender and linked to the spies of its channel, with no client link yet; NULL with the error set on
 * failure. */
aa_network_publication_t *aa_conductor_add_network_publication(
    aa_driver_conductor_t *conductor, int64_t registration_id, int32_t stream_id, const aa_uri_t *uri,
    const aa_publication_params_t *params, aa_udp_channel_t **udp, bool is_exclusive, int64_t now_ns, int64_t now_ms);
/* Links a spy subscription to a network publication of its channel and stream (a sub-pos counter,
 * an image of the publication's log); does nothing when they do not match or are linked already. */
void aa_conductor_link_spy(
    aa_driver_conductor_t *conductor, aa_network_publication_t *pub, aa_subscription_link_t *link,
    int64_t now_ns, int64_t now_ms);
void aa_conductor_check_network_publications(aa_driver_conductor_t *conductor, int64_t now_ns, int64_t now_ms);

/* ---- channels and endpoints (aa_driver_conductor_endpoints.c) ---- */

/* Resolves a parsed UDP channel (with the executor's answers: the conductor never waits for a name)
 * without parsing it again, and rejects what this driver does not carry. */
int aa_conductor_udp_channel(
    aa_driver_conductor_t *conductor, const aa_uri_t *uri, bool is_publication, aa_udp_channel_t **out);
/* The open send endpoint a channel shares: by its channel tag first, then by canonical form (reference
 * wave 3, section 2). Returns 0 with *found (NULL: none), or -1 (a tag's mismatch, an incomplete channel). */
int aa_conductor_find_send_endpoint(
    aa_driver_conductor_t *conductor, const aa_udp_channel_t *udp, aa_send_channel_endpoint_t **found);
/* The endpoints of a channel: the open one it shares (by tag, else canonical form; the channel must repeat
 * its settings and timestamp offsets), else a new one that takes *udp (NULL afterwards). */
aa_send_channel_endpoint_t *aa_conductor_get_or_create_send_endpoint(
    aa_driver_conductor_t *conductor, aa_udp_channel_t **udp, int64_t registration_id, int64_t now_ms);
void aa_conductor_release_send_endpoint(aa_driver_conductor_t *conductor, aa_send_channel_endpoint_t *endpoint);
aa_receive_channel_endpoint_t *aa_conductor_get_or_create_receive_endpoint(
    aa_driver_conductor_t *conductor, aa_udp_channel_t **udp, int64_t registration_id, int64_t now_ms);
void aa_conductor_release_receive_endpoint(
    aa_driver_conductor_t *conductor, aa_receive_channel_endpoint_t *endpoint, int64_t now_ns, int64_t now_ms);
void aa_conductor_check_send_endpoints(aa_driver_conductor_t *conductor, int64_t now_ms);
void aa_conductor_check_receive_endpoints(aa_driver_conductor_t *conductor, int64_t now_ns, int64_t now_ms);

/* ---- images (aa_driver_conductor_images.c) ---- */

bool aa_conductor_link_matches_image(const aa_subscription_link_t *link, const aa_publication_image_t *image);
void aa_conductor_link_image_subscriber(
    aa_driver_conductor_t *conductor, aa_publication_image_t *image, aa_subscription_link_t *link,
    int64_t join_position, int64_t now_ns, int64_t now_ms);
void aa_conductor_image_begin_linger(
    aa_driver_conductor_t *conductor, aa_publication_image_t *image, int64_t now_ns, int64_t now_ms);
void aa_conductor_check_images(aa_driver_conductor_t *conductor, int64_t now_ns, int64_t now_ms);
/* Receiver side ("proxy", the media services' request_image): a SETUP from an unknown session of a
 * subscribed stream asks for an image. Dropped (and counted) when the conductor's queue is full:
 * the SETUP comes again. */
void aa_driver_conductor_proxy_create_publication_image(
    aa_driver_conductor_t *conductor, aa_receive_channel_endpoint_t *endpoint, const aa_setup_header_t *setup,
    const struct sockaddr_storage *source, socklen_t source_length);

/* ---- response channels (aa_driver_conductor_responses.c; docs/architecture.md, "Response channels") ---- */

/* Whether a subscription takes a stream's session: its session-id when it has one, else any session unless it
 * is a response subscription still waiting for its session (Aeron's rule, reference wave3 1.1). */
bool aa_conductor_link_matches_session(const aa_subscription_link_t *link, int32_t session_id);
/* control-mode= on aeron:ipc: only response. Returns 0, or -1 naming the fix. */
int aa_conductor_check_ipc_control_mode(const aa_uri_t *uri);
/* A UDP subscription on an endpoint whose stream another subscription reads with the other response mode:
 * Aeron's "option conflicts with existing subscription: isResponse=...". */
int aa_conductor_check_clashing_subscription(
    aa_driver_conductor_t *conductor, const aa_subscription_link_t *link, const aa_receive_channel_endpoint_t *endpoint);
/* Before a network publication is found or created (reference wave3 1.2, steps 2 and 4): a request's response
 * subscription must exist on this driver; a response publication needs the image it answers (returned in
 * *image, NULL for a prototype). Returns 0, or -1 with Aeron's error text. */
int aa_conductor_resolve_response_publication(
    aa_driver_conductor_t *conductor, const aa_uri_t *uri, const aa_publication_params_t *params,
    aa_publication_image_t **image);
/* A response publication linked to its image: the image's receiver sends RSP_SETUP naming session_id. */
void aa_conductor_link_response_image(aa_publication_image_t *image, int32_t session_id);
/* A new IPC response publication (reference wave3 1.3): the response subscription of the request publication
 * whose registration id is its response correlation id takes its session. */
void aa_conductor_update_ipc_response_subscription(aa_driver_conductor_t *conductor, const aa_ipc_publication_t *pub);
/* The media services' response_setup and response_connected (the sender's, queued to the conductor). */
void aa_conductor_services_response_setup(void *clientd, int64_t response_correlation_id, int32_t response_session_id);
void aa_conductor_services_response_connected(void *clientd, int64_t response_correlation_id);

/* ---- subscriptions (aa_driver_conductor_subscriptions.c) ---- */

int aa_conductor_on_add_subscription(
    aa_driver_conductor_t *conductor, const aa_subscription_command_t *command, const aa_uri_t *uri, int64_t now_ns,
    int64_t now_ms);
int aa_conductor_on_remove_subscription(
    aa_driver_conductor_t *conductor, const aa_remove_command_t *command, int64_t now_ns, int64_t now_ms);
void aa_conductor_remove_subscription_link_at(
    aa_driver_conductor_t *conductor, size_t index, int64_t now_ns, int64_t now_ms);

/* aa_driver_conductor_destinations.c: ADD_DESTINATION / REMOVE_DESTINATION on manual
 * multi-destination-cast publications, ADD_RCV_DESTINATION / REMOVE_RCV_DESTINATION on
 * multi-destination subscriptions (destination: the command's channel, parsed when it was taken; a
 * parse error is reported once the publication or subscription is found). Answers the client itself
 * on success. */
int aa_conductor_on_destination_command(
    aa_driver_conductor_t *conductor, int32_t msg_type_id, const aa_destination_command_t *command,
    const aa_command_channel_t *destination, int64_t now_ms);
/* rcv-local-sockaddr / snd-local-sockaddr (type 14) of an endpoint (or a multi-destination
 * subscription's destination), keyed by the endpoint's status counter id; -1 on failure. */
int32_t aa_conductor_allocate_local_sockaddr_counter(
    aa_driver_conductor_t *conductor, const char *name, int32_t status_counter_id,
    const struct sockaddr_storage *bound, int64_t registration_id, int64_t now_ms);
/* Timer: frees the removed destinations of a multi-destination subscription the receiver let go of. */
void aa_conductor_free_released_destinations(aa_receive_channel_endpoint_t *endpoint);

/* ---- name resolution (aa_driver_conductor_resolution.c) ---- */

#define AA_RESOLUTION_KIND_COMMAND 1            /* a client command waiting for its names */
#define AA_RESOLUTION_KIND_FOLLOWER 2           /* a client command waiting behind another (not submitted) */
#define AA_RESOLUTION_KIND_SEND_ENDPOINT 3      /* re-resolution of a send endpoint's endpoint= */
#define AA_RESOLUTION_KIND_RECEIVE_CONTROL 4    /* re-resolution of a receive endpoint's control= */
#define AA_RESOLUTION_KIND_PENDING_ENDPOINT 5   /* endpoint= that did not resolve yet, retried */
#define AA_RESOLUTION_KIND_SEND_DESTINATION 6   /* re-resolution of a manual MDC destination added by name */

/* Manual MDC destinations were added or removed (destination: the command's parsed URI): those added by
 * name are re-resolved when they fall silent. */
void aa_conductor_resolution_on_destination(
    aa_driver_conductor_t *conductor, aa_send_channel_endpoint_t *endpoint, const struct sockaddr_storage *address,
    const aa_uri_t *destination, bool is_add);

/* Runs a client command again (aa_driver_conductor.c), as if it came from the to-driver buffer, with
 * the channel parsed when it came (NULL for a command without one). */
void aa_conductor_dispatch_command(
    aa_driver_conductor_t *conductor, int32_t msg_type_id, const void *buffer, size_t length,
    const aa_command_channel_t *channel);
/* Answers correlation_id with an error (and logs it). */
void aa_conductor_send_error(aa_driver_conductor_t *conductor, int64_t correlation_id, int32_t error_code, const char *message);

/* Takes a client command whose channel names a host (or that acts on a registration still waiting
 * for its names) for later, with a copy of its parsed channel: returns 1 when taken (the client is
 * answered later), 0 when the command runs now, -1 on error. registration_key: the registration a
 * removal or destination acts on; channel: NULL for a removal. */
int aa_conductor_resolution_defer(
    aa_driver_conductor_t *conductor, int32_t msg_type_id, const void *buffer, size_t length,
    const aa_command_channel_t *channel, int64_t registration_key);
/* media services: the sender (is_sender) or receiver asks for a re-resolution of endpoint's name. */
void aa_conductor_services_request_re_resolution(
    void *clientd, bool is_sender, void *endpoint, const struct sockaddr_storage *address);

/* Builds the driver's name resolver (with its context) and the resolutions table. */
int aa_conductor_resolution_init(aa_driver_conductor_t *conductor, int64_t now_ms);
void aa_conductor_resolution_close(aa_driver_conductor_t *conductor);
/* The resolver's periodic work; returns the work count. */
int aa_conductor_resolution_do_work(aa_driver_conductor_t *conductor, int64_t now_ns, int64_t now_ms);

#endif
