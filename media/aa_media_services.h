/*
 * What the media objects (IPC and network publications, publication images, send and receive
 * channel endpoints) and the sender and receiver agents use of the driver around them, as one
 * small interface: the system counters, the error log, the conductor's page pre-faulting, and image
 * requests. The driver conductor provides it (aa_driver_conductor_t.services); a unit test provides
 * its own, with counters it reads and an error log it inspects, so these objects are tested with
 * fake transports (aa_udp_transport_bindings_t) and no conductor (see _native/tests/aa_media_fakes.h).
 *
 * Counting is an atomic add on the counter itself (no call), as it happens per datagram; the rest
 * are calls through the table, made rarely.
 *
 * Threads: the counters and log_error may be used from any driver thread; forget_mapping runs on
 * the conductor (which alone frees these objects); request_image runs on the receiver, which must not
 * block: the conductor queues the request; the loss report is the receiver's to write.
 */
#ifndef AA_MEDIA_SERVICES_H
#define AA_MEDIA_SERVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include "concurrent/aa_atomic.h"
#include "concurrent/aa_loss_reporter.h"
#include "util/aa_clock.h"
#include "concurrent/aa_system_counters.h"
#include "util/aa_fs.h"
#include "protocols/aa_udp_protocol.h"
#include "protocols/aa_control_protocol.h"

struct aa_receive_channel_endpoint_stct;

typedef struct aa_media_services_stct
{
    /* AA_SYSTEM_COUNTER_COUNT counter addresses, indexed by aa_system_counter_t. */
    volatile int64_t *const *system_counters;
    /* Passed to every function below. */
    void *clientd;
    /* Records an error in the distinct error log and counts it in AA_SYSTEM_COUNTER_ERRORS. */
    void (*log_error)(void *clientd, int32_t code, const char *message);
    /* A log mapping is about to be unmapped: stop pre-faulting it. */
    void (*forget_mapping)(void *clientd, const aa_mapped_file_t *mapped);
    /* A SETUP from an unknown session of a subscribed stream asks for an image (dropped and counted
     * when the request cannot be queued: the SETUP comes again). */
    void (*request_image)(
        void *clientd, struct aa_receive_channel_endpoint_stct *endpoint, const aa_setup_header_t *setup,
        const struct sockaddr_storage *source, socklen_t source_length);
    /* A named endpoint= of a send channel endpoint (is_sender) or the control= of a receive channel
     * endpoint fell silent (reference 8.3): ask the conductor to resolve it again; address is the one
     * in use. Queued, never blocks; NULL where there is no conductor (unit tests). */
    void (*request_re_resolution)(void *clientd, bool is_sender, void *endpoint, const struct sockaddr_storage *address);
    /* An ERR frame from a receiver (or an IPC reject) for a publication: its clients are told
     * (ON_PUBLICATION_ERROR, aeron-wave3.md 4.2). Any driver thread; copied and queued to the
     * conductor, never blocks (dropped and counted when the queue is full); NULL where there is no
     * conductor (unit tests). */
    void (*on_publication_error)(void *clientd, const aa_publication_error_t *error, const uint8_t *text);
    /* Response channels (docs/architecture.md, "Response channels"), both from the sender and queued, never
     * blocking; NULL where there is no conductor (unit tests). A request publication whose response
     * correlation id is response_correlation_id got an RSP_SETUP naming response_session_id; a response
     * publication for the image with correlation id response_correlation_id got its first receiver. */
    void (*response_setup)(void *clientd, int64_t response_correlation_id, int32_t response_session_id);
    void (*response_connected)(void *clientd, int64_t response_correlation_id);
    /* The driver's host of flow control strategies that run off the sender (strategies written in
     * Python, _native/src/strategy/aa_flow_control_proxy.h), handed to flow control suppliers; NULL
     * where there is none (unit tests). */
    void *flow_control_proxy_host;
    /* The driver's loss report (<aeron_dir>/loss-report.dat), written by the receiver alone as it
     * detects loss, with timestamps from clock's epoch time; NULL where there is none (unit tests). */
    aa_loss_reporter_t *loss_reporter;
    const aa_clock_t *clock;
}
aa_media_services_t;

/* Counts an increment of a system counter (any driver thread). */
static inline void aa_media_services_count(const aa_media_services_t *services, int counter, int64_t delta)
{
    aa_get_and_add_int64(services->system_counters[counter], delta);
}

static inline void aa_media_services_log_error(const aa_media_services_t *services, int32_t code, const char *message)
{
    services->log_error(services->clientd, code, message);
}

/* For an object's free: a mapping never made (or an object never given services) is skipped. */
static inline void aa_media_services_forget_mapping(const aa_media_services_t *services, const aa_mapped_file_t *mapped)
{
    if (NULL != services && NULL != mapped->addr)
    {
        services->forget_mapping(services->clientd, mapped);
    }
}

static inline void aa_media_services_request_image(
    const aa_media_services_t *services, struct aa_receive_channel_endpoint_stct *endpoint, const aa_setup_header_t *setup,
    const struct sockaddr_storage *source, socklen_t source_length)
{
    services->request_image(services->clientd, endpoint, setup, source, source_length);
}

static inline void aa_media_services_request_re_resolution(
    const aa_media_services_t *services, bool is_sender, void *endpoint, const struct sockaddr_storage *address)
{
    if (NULL != services->request_re_resolution)
    {
        services->request_re_resolution(services->clientd, is_sender, endpoint, address);
    }
}

/* ON_PUBLICATION_ERROR's address: type (1 IPv4, 2 IPv6), port and the raw address bytes. */
static inline void aa_publication_error_set_address(aa_publication_error_t *message, const struct sockaddr_storage *address)
{
    if (AF_INET6 == address->ss_family)
    {
        const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)address;
        message->address_type = AA_PUBLICATION_ERROR_ADDRESS_TYPE_IPV6;
        message->address_port = ntohs(a6->sin6_port);
        memcpy(message->address, &a6->sin6_addr, 16);
    }
    else
    {
        const struct sockaddr_in *a4 = (const struct sockaddr_in *)address;
        message->address_type = AA_PUBLICATION_ERROR_ADDRESS_TYPE_IPV4;
        message->address_port = ntohs(a4->sin_port);
        memcpy(message->address, &a4->sin_addr, 4);
    }
}

static inline void aa_media_services_on_publication_error(
    const aa_media_services_t *services, const aa_publication_error_t *error, const uint8_t *text)
{
    if (NULL != services->on_publication_error)
    {
        services->on_publication_error(services->clientd, error, text);
    }
}

static inline void aa_media_services_response_setup(
    const aa_media_services_t *services, int64_t response_correlation_id, int32_t response_session_id)
{
    if (NULL != services->response_setup)
    {
        services->response_setup(services->clientd, response_correlation_id, response_session_id);
    }
}

static inline void aa_media_services_response_connected(const aa_media_services_t *services, int64_t response_correlation_id)
{
    if (NULL != services->response_connected)
    {
        services->response_connected(services->clientd, response_correlation_id);
    }
}

/* Records an agent's duty cycle time in its max-cycle-time and threshold-exceeded system counters. */
static inline void aa_media_services_record_cycle(
    const aa_media_services_t *services, int64_t cycle_ns, int64_t threshold_ns, int max_counter, int exceeded_counter)
{
    volatile int64_t *max_cycle = services->system_counters[max_counter];
    if (cycle_ns > aa_get_int64_volatile(max_cycle))
    {
        aa_put_int64_release(max_cycle, cycle_ns);
    }
    if (cycle_ns > threshold_ns)
    {
        aa_get_and_add_int64(services->system_counters[exceeded_counter], 1);
    }
}

#endif
