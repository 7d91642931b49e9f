/*
 * The driver conductor: the agent that owns every resource. It reads client commands from the
 * to-driver ring buffer, answers on the to-clients broadcast buffer, creates log buffers,
 * counters, UDP channel endpoints (sockets) and images, drives publication limits, hands network
 * resources to the sender and receiver through their command queues, and runs the timers (client
 * liveness, linger, unblock, untethered subscribers). Blocking work (file and socket creation,
 * name lookups) happens here only.
 */
#ifndef AA_DRIVER_CONDUCTOR_H
#define AA_DRIVER_CONDUCTOR_H

#include <stdint.h>
#include <stdbool.h>

#include "protocols/aa_cnc.h"
#include "driver/aa_driver_context.h"
#include "driver/aa_driver_receiver.h"
#include "driver/aa_driver_sender.h"
#include "concurrent/aa_system_counters.h"
#include "concurrent/aa_broadcast.h"
#include "concurrent/aa_command_queue.h"
#include "concurrent/aa_counters.h"
#include "concurrent/aa_error_log.h"
#include "concurrent/aa_loss_reporter.h"
#include "concurrent/aa_mpsc_rb.h"
#include "strategy/aa_flow_control_proxy.h"
#include "util/aa_fs.h"
#include "util/aa_prefault.h"
#include "media/aa_ipc_publication.h"
#include "media/aa_media_services.h"
#include "resolver/aa_name_resolutions.h"
#include "media/aa_network_publication.h"
#include "media/aa_publication_image.h"
#include "media/aa_receive_channel_endpoint.h"
#include "media/aa_send_channel_endpoint.h"
#include "uri/aa_uri.h"

typedef struct aa_driver_client_stct
{
    int64_t client_id;
    int32_t heartbeat_counter_id;
    volatile int64_t *heartbeat;
}
aa_driver_client_t;

/* A client's registration of a publication: one of publication (IPC) and network_publication is set. */
typedef struct aa_publication_link_stct
{
    int64_t registration_id;
    int64_t client_id;
    aa_ipc_publication_t *publication;
    aa_network_publication_t *network_publication;
}
aa_publication_link_t;

/* A counter a client added (ADD_COUNTER): freed on REMOVE_COUNTER or with its client. */
typedef struct aa_counter_link_stct
{
    int64_t registration_id;
    int64_t client_id;
    int32_t counter_id;
}
aa_counter_link_t;

typedef struct aa_subscription_link_stct
{
    int64_t registration_id;
    int64_t client_id;
    int32_t stream_id;
    bool has_session_id;
    int32_t session_id;
    /* control-mode=response: matches nothing until a response session is learnt (then has_session_id, and
     * is_response cleared, as Aeron's C driver does; reference wave3 1.1) */
    bool is_response;
    bool is_receiver_subscribed;                /* UDP: the receiver has its stream (a response one: once learnt) */
    bool is_tether;
    bool is_sparse;
    char *channel;
    aa_receive_channel_endpoint_t *endpoint;    /* UDP subscriptions; NULL for IPC and spies */
    aa_udp_channel_t *spy_channel;              /* spies (aeron-spy:): the UDP channel spied on */
}
aa_subscription_link_t;

/* A manual MDC destination added by name (re-resolved when it falls silent). */
typedef struct aa_named_destination_stct
{
    aa_send_channel_endpoint_t *endpoint;
    struct sockaddr_storage address;
    char value[AA_URI_MAX_VALUE_LENGTH];
}
aa_named_destination_t;

/* The longest error a channel's parsing gives (the channel, the accepted forms). */
#define AA_COMMAND_CHANNEL_ERROR_LENGTH 8192

/* A client command's channel (ADD_PUBLICATION, ADD_SUBSCRIPTION, the destination commands), parsed
 * once, when the command is taken: every step after reads uri (docs/architecture.md, "Channels:
 * parsed once"), and a command waiting for its names carries it. One that does not parse keeps its
 * error, which the command reports where it checks its channel (aa_conductor_channel_uri). */
typedef struct aa_command_channel_stct
{
    char text[AA_URI_MAX_LENGTH + 1];     /* as the command carries it */
    bool is_parsed;
    int32_t parse_errcode;
    char parse_error[AA_COMMAND_CHANNEL_ERROR_LENGTH];
    aa_uri_t uri;
}
aa_command_channel_t;

#define AA_DECLARE_ARRAY(type, name) type *name; size_t name##_count; size_t name##_capacity

typedef struct aa_driver_conductor_stct
{
    aa_driver_context_t *ctx;
    aa_mapped_file_t cnc_file;
    aa_cnc_metadata_t *cnc;
    aa_mpsc_rb_t to_driver;
    aa_broadcast_transmitter_t to_clients;
    aa_counters_manager_t counters;
    aa_distinct_error_log_t error_log;
    volatile int64_t *system_counters[AA_SYSTEM_COUNTER_COUNT];
    /* What the media objects, the sender and the receiver use of the conductor (aa_media_services.h). */
    aa_media_services_t services;
    /* Where the flow control strategies written in Python queue their events (services'
     * flow_control_proxy_host); a worker of aeron_async drains it. */
    aa_flow_control_proxy_host_t flow_control_proxy_host;
    aa_driver_sender_t *sender;
    aa_driver_receiver_t *receiver;
    aa_command_queue_t commands;         /* from the receiver */
    aa_name_resolver_t *name_resolver;   /* host names of UDP channels (ctx name_resolver_supplier) */
    aa_name_resolver_context_t name_resolver_context;  /* what the resolver was given (lives as long) */
    aa_driver_resolver_options_t driver_resolver_options; /* the resolver options it points at */
    aa_name_resolutions_t name_resolutions;            /* <aeron_dir>/name-resolutions.dat */
    /* <aeron_dir>/loss-report.dat (aa_loss_reporter.h): mapped and unmapped here, written by the
     * receiver alone (services' loss_reporter). */
    aa_mapped_file_t loss_report_file;
    aa_loss_reporter_t loss_reporter;
    struct aa_name_resolver_executor_stct *name_resolver_executor;  /* lookups off the conductor */
    aa_name_resolver_t answers_resolver;    /* hands out the executor's answers to a command run again */
    struct aa_name_resolution_request_stct *replaying;  /* the command being run again, or NULL */
    bool replaying_allows_placeholder;
    bool replaying_used_placeholder;
    aa_command_queue_t sender_commands;     /* from the sender (re-resolution requests, publication errors, response channel events) */
    aa_command_channel_t command_channel;   /* the channel of the command being taken */
    int64_t next_reresolution_check_ns;

    AA_DECLARE_ARRAY(aa_driver_client_t, clients);
    AA_DECLARE_ARRAY(aa_ipc_publication_t *, ipc_publications);
    AA_DECLARE_ARRAY(aa_network_publication_t *, network_publications);
    AA_DECLARE_ARRAY(aa_send_channel_endpoint_t *, send_endpoints);
    AA_DECLARE_ARRAY(aa_publication_image_t *, images);
    AA_DECLARE_ARRAY(aa_receive_channel_endpoint_t *, receive_endpoints);
    AA_DECLARE_ARRAY(aa_publication_link_t, publication_links);
    AA_DECLARE_ARRAY(aa_subscription_link_t, subscription_links);
    AA_DECLARE_ARRAY(aa_counter_link_t, counter_links);
    AA_DECLARE_ARRAY(struct aa_name_resolution_request_stct *, pending_resolutions);  /* submitted or waiting */
    AA_DECLARE_ARRAY(aa_send_channel_endpoint_t *, unresolved_endpoints);  /* endpoint= not resolved yet */
    AA_DECLARE_ARRAY(aa_named_destination_t, named_destinations);

    int64_t next_timer_ns;
    int64_t last_command_consumer_position;
    int64_t time_of_last_command_progress_ns;
    int64_t last_heartbeat_ms;
    int64_t last_cycle_ns;
    int32_t next_session_id;
    int64_t bytes_mapped;
    /* new logs populated a chunk per duty cycle (ahead of the stream), so that neither the receiver
     * writing an image, the sender reading a publication nor cleaning takes page faults */
    aa_prefault_t prefault;
    uint8_t response[AA_RB_RECORD_HEADER_LENGTH + 8192];
    /* set (release) when a TERMINATE_DRIVER request was accepted (aa_driver_control.c) */
    volatile int32_t termination_requested;
}
aa_driver_conductor_t;

int aa_driver_conductor_init(
    aa_driver_conductor_t *conductor, aa_driver_context_t *ctx, aa_driver_sender_t *sender, aa_driver_receiver_t *receiver);
int aa_driver_conductor_do_work(void *state);
void aa_driver_conductor_on_close(void *state);

/* Records an error in the distinct error log and counts it (any driver thread). */
void aa_driver_conductor_log_error(aa_driver_conductor_t *conductor, int32_t code, const char *message);
/* A client command refused as malformed: counted in "Invalid client commands", logged with the client's id. */
void aa_driver_conductor_log_invalid_command(
    aa_driver_conductor_t *conductor, int32_t code, int64_t client_id, bool has_client_id, const char *what);

/* TERMINATE_DRIVER (aa_driver_control.c): validates the request; sets termination_requested or
 * records the refusal in the error log. */
void aa_driver_conductor_on_terminate_driver(aa_driver_conductor_t *conductor, const void *buffer, size_t length);

/* Counts an increment of a system counter (any driver thread). */
static inline void aa_driver_conductor_count(aa_driver_conductor_t *conductor, int counter, int64_t delta)
{
    aa_get_and_add_int64(conductor->system_counters[counter], delta);
}

#endif
