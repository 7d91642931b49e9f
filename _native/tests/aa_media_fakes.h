/*
 * Test doubles for unit tests of the media layer (publications, images, channel endpoints) and the
 * sender and receiver agents, without a conductor or sockets:
 *
 * - fake_services_t: the media services (aa_media_services.h) with system counters the test reads,
 *   and the errors, forgotten mappings and image requests recorded for it to inspect.
 * - fake_wire_t: transport bindings (aa_udp_transport.h) that keep what is sent in a list and deliver
 *   what the test puts in an inbox; no file descriptor, so the poller asks them on every poll. One
 *   per transport: pass &wire->bindings as the inner bindings of the loss generator settings an
 *   endpoint is created with, then move datagrams between wires (fake_wire_forward).
 *
 * A test drives time itself: the media objects take now_ns from their caller; the sender and receiver
 * read their driver context's clock, set to a test clock (ctx.clock = aa_test_clock(&test_clock),
 * aa_clock.h) that only aa_test_clock_advance moves.
 */
#ifndef AA_MEDIA_FAKES_H
#define AA_MEDIA_FAKES_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "aa_test.h"
#include "aa_test_log.h"
#include "media/aa_loss_generator.h"
#include "media/aa_media_services.h"
#include "media/aa_network_publication.h"
#include "media/aa_publication_image.h"
#include "media/aa_udp_channel.h"
#include "media/aa_udp_transport.h"
#include "protocols/aa_retransmit_handler.h"
#include "util/aa_error.h"

/* ---- media services ---- */

typedef struct fake_services_stct
{
    int64_t counter_values[AA_SYSTEM_COUNTER_COUNT];
    volatile int64_t *counters[AA_SYSTEM_COUNTER_COUNT];
    aa_media_services_t services;

    int errors;
    int32_t last_error_code;
    char last_error[512];
    int forgotten_mappings;

    int image_requests;
    int publication_errors;                   /* on_publication_error calls, the last one below */
    aa_publication_error_t last_publication_error;
    char last_publication_error_text[1024];
    struct aa_receive_channel_endpoint_stct *last_request_endpoint;
    aa_setup_header_t last_request_setup;
    struct sockaddr_storage last_request_source;

    /* response channels: the sender's events */
    int response_setups;
    int64_t last_response_correlation_id;
    int32_t last_response_session_id;
    int responses_connected;
}
fake_services_t;

static inline void fake_services_log_error(void *clientd, int32_t code, const char *message)
{
    fake_services_t *fake = clientd;
    fake->errors++;
    fake->last_error_code = code;
    snprintf(fake->last_error, sizeof(fake->last_error), "%s", message);
    aa_get_and_add_int64(fake->counters[AA_SYSTEM_COUNTER_ERRORS], 1);
}

static inline void fake_services_forget_mapping(void *clientd, const aa_mapped_file_t *mapped)
{
    (void)mapped;
    ((fake_services_t *)clientd)->forgotten_mappings++;
}

static inline void fake_services_request_image(
    void *clientd, struct aa_receive_channel_endpoint_stct *endpoint, const aa_setup_header_t *setup,
    const struct sockaddr_storage *source, socklen_t source_length)
{
    (void)source_length;
    fake_services_t *fake = clientd;
    fake->image_requests++;
    fake->last_request_endpoint = endpoint;
    fake->last_request_setup = *setup;
    fake->last_request_source = *source;
}

static inline void fake_services_on_publication_error(
    void *clientd, const aa_publication_error_t *error, const uint8_t *text)
{
    fake_services_t *fake = clientd;
    fake->publication_errors++;
    fake->last_publication_error = *error;
    size_t length = (size_t)error->error_message_length < sizeof(fake->last_publication_error_text) - 1 ?
        (size_t)error->error_message_length : sizeof(fake->last_publication_error_text) - 1;
    memcpy(fake->last_publication_error_text, text, length);
    fake->last_publication_error_text[length] = '\0';
}

static inline void fake_services_response_setup(void *clientd, int64_t response_correlation_id, int32_t response_session_id)
{
    fake_services_t *fake = clientd;
    fake->response_setups++;
    fake->last_response_correlation_id = response_correlation_id;
    fake->last_response_session_id = response_session_id;
}

static inline void fake_services_response_connected(void *clientd, int64_t response_correlation_id)
{
    fake_services_t *fake = clientd;
    fake->responses_connected++;
    fake->last_response_correlation_id = response_correlation_id;
}

static inline void fake_services_init(fake_services_t *fake)
{
    memset(fake, 0, sizeof(*fake));
    for (int i = 0; i < AA_SYSTEM_COUNTER_COUNT; i++)
    {
        fake->counters[i] = &fake->counter_values[i];
    }
    fake->services.system_counters = fake->counters;
    fake->services.clientd = fake;
    fake->services.log_error = fake_services_log_error;
    fake->services.forget_mapping = fake_services_forget_mapping;
    fake->services.request_image = fake_services_request_image;
    fake->services.on_publication_error = fake_services_on_publication_error;
    fake->services.response_setup = fake_services_response_setup;
    fake->services.response_connected = fake_services_response_connected;
}

static inline int64_t fake_count(const fake_services_t *fake, int counter)
{
    return aa_get_int64_volatile(&fake->counter_values[counter]);
}

/* ---- transports ---- */

#define FAKE_WIRE_CAPACITY 256
#define FAKE_WIRE_DATAGRAM_LENGTH 2048

typedef struct fake_datagram_stct
{
    uint8_t data[FAKE_WIRE_DATAGRAM_LENGTH];
    size_t length;
    struct sockaddr_storage address;  /* sent: the destination (family 0: the default); inbox: the source */
    socklen_t addr_len;
}
fake_datagram_t;

typedef struct fake_wire_stct
{
    aa_udp_transport_bindings_t bindings;
    aa_udp_transport_t *transport;    /* the transport opened through these bindings */
    fake_datagram_t sent[FAKE_WIRE_CAPACITY];
    size_t sent_count;
    fake_datagram_t inbox[FAKE_WIRE_CAPACITY];
    size_t inbox_count;
    size_t send_room;                 /* datagrams one send call takes (the rest: EAGAIN) */
    bool fail_sends;                  /* sends fail as a socket error would */
    int send_calls;
}
fake_wire_t;

static inline int fake_wire_init_func(
    const aa_udp_transport_bindings_t *self, aa_udp_transport_t *transport, const aa_udp_transport_params_t *params)
{
    fake_wire_t *wire = self->state;
    wire->transport = transport;
    transport->fd = -1;
    transport->bound_address = params->bind_address;
    transport->destination = params->destination;
    transport->has_destination = 0 != params->destination.ss_family;
    transport->socket_rcvbuf_length = params->socket_rcvbuf_length;
    transport->socket_sndbuf_length = params->socket_sndbuf_length;
    return 0;
}

static inline int fake_wire_close_func(const aa_udp_transport_bindings_t *self, aa_udp_transport_t *transport)
{
    (void)transport;
    ((fake_wire_t *)self->state)->transport = NULL;
    return 0;
}

static inline int fake_wire_send_func(
    const aa_udp_transport_bindings_t *self, aa_udp_transport_t *transport, aa_udp_datagram_t *datagrams, size_t count)
{
    (void)transport;
    fake_wire_t *wire = self->state;
    wire->send_calls++;
    if (wire->fail_sends)
    {
        AA_SET_ERR(ENETUNREACH, "%s", "fake wire: sendmmsg failed: Network is unreachable");
        return -1;
    }
    size_t taken = count < wire->send_room ? count : wire->send_room;
    for (size_t i = 0; i < taken; i++)
    {
        AA_CHECK(wire->sent_count < FAKE_WIRE_CAPACITY);
        AA_CHECK(datagrams[i].length <= FAKE_WIRE_DATAGRAM_LENGTH);
        fake_datagram_t *d = &wire->sent[wire->sent_count++];
        memcpy(d->data, datagrams[i].buffer, datagrams[i].length);
        d->length = datagrams[i].length;
        d->address = datagrams[i].address;
        d->addr_len = datagrams[i].addr_len;
    }
    return (int)taken;
}

static inline int fake_wire_recv_func(
    const aa_udp_transport_bindings_t *self, aa_udp_transport_t *transport, aa_udp_datagram_t *datagrams, size_t count,
    aa_udp_transport_recv_handler_t handler, void *clientd)
{
    fake_wire_t *wire = self->state;
    size_t delivered = 0;
    while (delivered < count && delivered < wire->inbox_count)
    {
        fake_datagram_t *d = &wire->inbox[delivered];
        aa_udp_datagram_t *datagram = &datagrams[delivered];
        AA_CHECK(d->length <= datagram->capacity);
        memcpy(datagram->buffer, d->data, d->length);
        datagram->length = d->length;
        datagram->address = d->address;
        datagram->addr_len = d->addr_len;
        handler(clientd, transport, datagram);
        delivered++;
    }
    memmove(wire->inbox, wire->inbox + delivered, (wire->inbox_count - delivered) * sizeof(fake_datagram_t));
    wire->inbox_count -= delivered;
    return (int)delivered;
}

static inline void fake_wire_init(fake_wire_t *wire)
{
    memset(wire, 0, sizeof(*wire));
    wire->bindings = (aa_udp_transport_bindings_t)
    {
        "fake", fake_wire_init_func, fake_wire_close_func, fake_wire_send_func, fake_wire_recv_func, wire
    };
    wire->send_room = SIZE_MAX;
}

/* ---- one channel endpoint's world ---- */

/* Fake services, one fake wire, the transport settings that send on it without a loss generator,
 * and the channel parsed from a URI: what a test creates one send or receive channel endpoint from.
 * Initialised in place (the wire's bindings point at it). */
typedef struct fake_media_stct
{
    fake_services_t services;
    fake_wire_t wire;
    aa_loss_generator_settings_t transports;
    aa_udp_channel_t *channel;
}
fake_media_t;

static inline void fake_media_init(fake_media_t *media, const char *uri)
{
    fake_services_init(&media->services);
    fake_wire_init(&media->wire);
    media->transports = (aa_loss_generator_settings_t){ NULL, NULL, 0, &media->wire.bindings };
    media->channel = NULL;
    AA_CHECK(0 == aa_udp_channel_parse(&media->channel, uri, NULL));
}

/* A datagram as a transport hands one over: length bytes at frame, from an IPv4 source (NULL: no
 * address). */
static inline aa_udp_datagram_t fake_datagram(uint8_t *frame, int32_t length, const struct sockaddr_storage *source)
{
    aa_udp_datagram_t datagram;
    memset(&datagram, 0, sizeof(datagram));
    datagram.buffer = frame;
    datagram.length = (size_t)length;
    if (NULL != source)
    {
        datagram.address = *source;
        datagram.addr_len = sizeof(struct sockaddr_in);
    }
    return datagram;
}

/* Puts a datagram from source into the wire's inbox (received on the next poll or recv). */
static inline void fake_wire_put(fake_wire_t *wire, const void *buffer, size_t length, const struct sockaddr_storage *source)
{
    AA_CHECK(wire->inbox_count < FAKE_WIRE_CAPACITY && length <= FAKE_WIRE_DATAGRAM_LENGTH);
    fake_datagram_t *d = &wire->inbox[wire->inbox_count++];
    memcpy(d->data, buffer, length);
    d->length = length;
    d->address = *source;
    d->addr_len = AF_INET6 == source->ss_family ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

/* Moves everything sent on `from` into the inbox of `to`, as coming from `source`; returns how many. */
static inline size_t fake_wire_forward(fake_wire_t *from, fake_wire_t *to, const struct sockaddr_storage *source)
{
    size_t count = from->sent_count;
    for (size_t i = 0; i < count; i++)
    {
        fake_wire_put(to, from->sent[i].data, from->sent[i].length, source);
    }
    from->sent_count = 0;
    return count;
}

/* The type of the i-th datagram sent (its first frame header's type), or -1. */
static inline int fake_wire_sent_type(const fake_wire_t *wire, size_t i)
{
    if (i >= wire->sent_count || wire->sent[i].length < 8)
    {
        return -1;
    }
    uint16_t type;
    memcpy(&type, wire->sent[i].data + 6, sizeof(type));
    return type;
}

/* How many datagrams of a frame type were sent. */
static inline size_t fake_wire_count_type(const fake_wire_t *wire, int type)
{
    size_t n = 0;
    for (size_t i = 0; i < wire->sent_count; i++)
    {
        n += fake_wire_sent_type(wire, i) == type ? 1 : 0;
    }
    return n;
}

/* ---- logs, as the conductor maps them for a new publication or image ---- */

#define FAKE_LOG_PAGE_SIZE 4096

/* The position counters of a network publication, held by the test in place of the conductor's. */
typedef struct fake_publication_positions_stct
{
    volatile int64_t pub_lmt, pub_pos, snd_pos, snd_lmt, snd_bpe;
}
fake_publication_positions_t;

/* Points the publication at the test's counters and makes it ACTIVE, as the conductor does before
 * the sender sees it. */
static inline void fake_publication_activate(aa_network_publication_t *pub, fake_publication_positions_t *positions)
{
    pub->pub_lmt = &positions->pub_lmt;
    pub->pub_pos = &positions->pub_pos;
    pub->snd_pos = &positions->snd_pos;
    pub->snd_lmt = &positions->snd_lmt;
    pub->snd_bpe = &positions->snd_bpe;
    pub->state = AA_NETWORK_PUBLICATION_STATE_ACTIVE;
}

/* A log in memory for a network publication made from params; the caller frees what it returns. */
static inline uint8_t *fake_publication_log(aa_network_publication_t *pub, const aa_network_publication_params_t *params)
{
    aa_logbuffer_init_params_t log_params =
    {
        .correlation_id = params->registration_id, .session_id = params->ids.session_id, .stream_id = params->ids.stream_id,
        .initial_term_id = params->ids.initial_term_id, .active_term_id = params->ids.initial_term_id,
        .term_length = params->ids.term_length, .mtu_length = params->ids.mtu_length, .page_size = FAKE_LOG_PAGE_SIZE,
        .publication_window_length = (int32_t)params->term_window_length, .signal_eos = params->signal_eos,
        .max_resend = AA_MAX_RESEND_DEFAULT,
    };
    return test_log_new(&pub->log, &log_params);
}

/* A log in memory for an image made from params; the caller frees what it returns. */
static inline uint8_t *fake_image_log(aa_publication_image_t *image, const aa_publication_image_params_t *params)
{
    aa_logbuffer_init_params_t log_params =
    {
        .correlation_id = params->correlation_id, .session_id = params->ids.session_id, .stream_id = params->ids.stream_id,
        .initial_term_id = params->ids.initial_term_id, .active_term_id = params->active_term_id,
        .term_offset = params->term_offset, .term_length = params->ids.term_length, .mtu_length = params->ids.mtu_length,
        .page_size = FAKE_LOG_PAGE_SIZE, .receiver_window_length = params->window_length,
        .reliable = params->is_reliable, .signal_eos = true, .max_resend = AA_MAX_RESEND_DEFAULT,
    };
    return test_log_new(&image->log, &log_params);
}

#endif
