#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "media/aa_receive_channel_endpoint.h"
#include "protocols/aa_udp_frames.h"
#include "protocols/aa_receiver_window.h"
#include "logbuffer/aa_logbuffer.h"
#include "media/aa_media_services.h"
#include "util/aa_error.h"
#include "util/aa_array.h"

static int64_t aa_receive_channel_endpoint_new_receiver_id(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t z = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ ((uint64_t)getpid() << 16) ^ (uint64_t)rand();
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return (int64_t)(z ^ (z >> 31));
}

int aa_receive_channel_endpoint_create(
    aa_receive_channel_endpoint_t **out, aa_udp_channel_t *channel, const aa_receive_channel_endpoint_params_t *params,
    const aa_loss_generator_settings_t *loss, const aa_media_services_t *services)
{
    *out = NULL;
    aa_receive_channel_endpoint_t *endpoint = calloc(1, sizeof(aa_receive_channel_endpoint_t));
    if (NULL == endpoint)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory creating a receive channel endpoint");
        return -1;
    }
    endpoint->is_multi_destination = AA_UDP_CHANNEL_CONTROL_MODE_MANUAL == channel->control_mode;
    if (endpoint->is_multi_destination)
    {
        endpoint->transport.fd = -1;   /* no socket of its own: its destinations have one each */
    }
    else if (aa_loss_generator_transport_open(
        &endpoint->transport, &endpoint->loss_bindings, channel, AA_UDP_TRANSPORT_ROLE_RECEIVE, loss) < 0)
    {
        AA_APPEND_ERR("opening the receive socket of %s", channel->canonical_form);
        free(endpoint);
        return -1;
    }
    endpoint->transport.clientd = endpoint;
    endpoint->channel = channel;
    endpoint->params = *params;
    endpoint->services = services;
    endpoint->receiver_id = aa_receive_channel_endpoint_new_receiver_id();
    endpoint->has_receive_timestamps = aa_udp_channel_has_receive_timestamps(channel);
    endpoint->timestamp_clock = aa_timestamps_realtime_ns;
    endpoint->is_response = AA_UDP_CHANNEL_CONTROL_MODE_RESPONSE == channel->control_mode;
    if (channel->has_explicit_control && !channel->is_multicast && !endpoint->is_multi_destination)
    {
        aa_uri_address_t parts;
        const char *value = aa_uri_find_param(&channel->uri, "control");
        endpoint->is_control_named = NULL != value && 0 == aa_uri_parse_address("control", value, false, false, &parts) &&
            !aa_name_resolver_is_literal(parts.host);
    }
    endpoint->status_counter_id = -1;
    endpoint->local_sockaddr_counter_id = -1;
    *out = endpoint;
    return 0;
}

void aa_receive_channel_endpoint_delete(aa_receive_channel_endpoint_t *endpoint)
{
    if (NULL != endpoint)
    {
        aa_loss_generator_transport_close(&endpoint->transport, endpoint->loss_bindings);
        aa_udp_channel_delete(endpoint->channel);
        for (size_t i = 0; i < endpoint->conductor_destinations_count; i++)
        {
            aa_receive_destination_delete(endpoint->conductor_destinations[i]);
        }
        for (size_t i = 0; i < endpoint->removed_destinations_count; i++)
        {
            aa_receive_destination_delete(endpoint->removed_destinations[i]);
        }
        free(endpoint->conductor_destinations);
        free(endpoint->removed_destinations);
        free(endpoint->destinations);
        free(endpoint->streams);
        free(endpoint->sessions);
        free(endpoint);
    }
}

/* ---- multi-destination subscriptions ---- */

int aa_receive_destination_create(
    aa_receive_destination_t **out, aa_receive_channel_endpoint_t *endpoint, aa_udp_channel_t *channel,
    const aa_loss_generator_settings_t *loss)
{
    *out = NULL;
    aa_receive_destination_t *destination = calloc(1, sizeof(aa_receive_destination_t));
    if (NULL == destination)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory creating a receive destination");
        return -1;
    }
    /* the kernel's timestamps are the subscription channel's to ask for, on every destination's socket */
    channel->media_rcv_timestamp_offset = endpoint->channel->media_rcv_timestamp_offset;
    if (aa_loss_generator_transport_open(
        &destination->transport, &destination->loss_bindings, channel, AA_UDP_TRANSPORT_ROLE_RECEIVE, loss) < 0)
    {
        AA_APPEND_ERR("opening the receive socket of destination %s", channel->canonical_form);
        free(destination);
        return -1;
    }
    destination->transport.clientd = endpoint;
    destination->channel = channel;
    destination->local_sockaddr_counter_id = -1;
    *out = destination;
    return 0;
}

void aa_receive_destination_delete(aa_receive_destination_t *destination)
{
    if (NULL != destination)
    {
        aa_loss_generator_transport_close(&destination->transport, destination->loss_bindings);
        aa_udp_channel_delete(destination->channel);
        free(destination);
    }
}

int aa_receive_channel_endpoint_add_destination(aa_receive_channel_endpoint_t *endpoint, aa_receive_destination_t *destination)
{
    if (aa_array_ensure_capacity((void **)&endpoint->destinations, &endpoint->destinations_capacity,
        endpoint->destinations_count, sizeof(*endpoint->destinations)) < 0)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory adding a receive destination");
        return -1;
    }
    endpoint->destinations[endpoint->destinations_count++] = destination;
    return 0;
}

void aa_receive_channel_endpoint_remove_destination(
    aa_receive_channel_endpoint_t *endpoint, aa_receive_destination_t *destination)
{
    for (size_t i = 0; i < endpoint->destinations_count; i++)
    {
        if (endpoint->destinations[i] == destination)
        {
            endpoint->destinations[i] = endpoint->destinations[--endpoint->destinations_count];
            break;
        }
    }
    for (size_t i = 0; i < endpoint->sessions_count; i++)
    {
        aa_receive_session_t *session = &endpoint->sessions[i];
        if (session->setup_transport == &destination->transport)
        {
            session->setup_transport = NULL;
        }
        if (NULL != session->image)
        {
            aa_publication_image_remove_connection(session->image, &destination->transport);
        }
    }
}

/* ---- streams and sessions (receiver) ---- */

static aa_receive_stream_t *aa_receive_channel_endpoint_find_stream(aa_receive_channel_endpoint_t *endpoint, int32_t stream_id)
{
    for (size_t i = 0; i < endpoint->streams_count; i++)
    {
        if (endpoint->streams[i].stream_id == stream_id)
        {
            return &endpoint->streams[i];
        }
    }
    return NULL;
}

int aa_receive_channel_endpoint_add_stream(aa_receive_channel_endpoint_t *endpoint, int32_t stream_id)
{
    aa_receive_stream_t *stream = aa_receive_channel_endpoint_find_stream(endpoint, stream_id);
    if (NULL != stream)
    {
        stream->refcnt++;
        return 0;
    }
    if (endpoint->streams_count == endpoint->streams_capacity)
    {
        size_t capacity = 0 == endpoint->streams_capacity ? 4 : endpoint->streams_capacity * 2;
        aa_receive_stream_t *grown = realloc(endpoint->streams, capacity * sizeof(*grown));
        if (NULL == grown)
        {
            AA_SET_ERR(ENOMEM, "%s", "out of memory adding a stream to a receive channel endpoint");
            return -1;
        }
        endpoint->streams = grown;
        endpoint->streams_capacity = capacity;
    }
    memset(&endpoint->streams[endpoint->streams_count], 0, sizeof(aa_receive_stream_t));
    endpoint->streams[endpoint->streams_count].stream_id = stream_id;
    endpoint->streams[endpoint->streams_count].refcnt = 1;
    endpoint->streams_count++;
    return 0;
}

static void aa_receive_channel_endpoint_remove_session_at(aa_receive_channel_endpoint_t *endpoint, size_t index)
{
    endpoint->sessions[index] = endpoint->sessions[--endpoint->sessions_count];
}

void aa_receive_channel_endpoint_remove_stream(aa_receive_channel_endpoint_t *endpoint, int32_t stream_id)
{
    aa_receive_stream_t *stream = aa_receive_channel_endpoint_find_stream(endpoint, stream_id);
    if (NULL == stream || --stream->refcnt > 0)
    {
        return;
    }
    *stream = endpoint->streams[--endpoint->streams_count];
    for (size_t i = endpoint->sessions_count; i-- > 0;)
    {
        aa_receive_session_t *session = &endpoint->sessions[i];
        if (session->stream_id == stream_id && AA_RECEIVE_SESSION_ACTIVE != session->state)
        {
            aa_receive_channel_endpoint_remove_session_at(endpoint, i);
        }
    }
}

static aa_receive_session_t *aa_receive_channel_endpoint_find_session(
    aa_receive_channel_endpoint_t *endpoint, int32_t session_id, int32_t stream_id)
{
    for (size_t i = 0; i < endpoint->sessions_count; i++)
    {
        aa_receive_session_t *session = &endpoint->sessions[i];
        if (session->session_id == session_id && session->stream_id == stream_id)
        {
            return session;
        }
    }
    return NULL;
}

static aa_receive_session_t *aa_receive_channel_endpoint_get_or_add_session(
    aa_receive_channel_endpoint_t *endpoint, int32_t session_id, int32_t stream_id)
{
    aa_receive_session_t *session = aa_receive_channel_endpoint_find_session(endpoint, session_id, stream_id);
    if (NULL != session)
    {
        return session;
    }
    if (endpoint->sessions_count == endpoint->sessions_capacity)
    {
        size_t capacity = 0 == endpoint->sessions_capacity ? 8 : endpoint->sessions_capacity * 2;
        aa_receive_session_t *grown = realloc(endpoint->sessions, capacity * sizeof(*grown));
        if (NULL == grown)
        {
            AA_SET_ERR(ENOMEM, "%s", "out of memory tracking a session on a receive channel endpoint");
            return NULL;
        }
        endpoint->sessions = grown;
        endpoint->sessions_capacity = capacity;
    }
    session = &endpoint->sessions[endpoint->sessions_count++];
    memset(session, 0, sizeof(*session));
    session->session_id = session_id;
    session->stream_id = stream_id;
    return session;
}

int aa_receive_channel_endpoint_add_image(aa_receive_channel_endpoint_t *endpoint, aa_publication_image_t *image)
{
    aa_receive_session_t *session =
        aa_receive_channel_endpoint_get_or_add_session(endpoint, image->ids.session_id, image->ids.stream_id);
    if (NULL == session)
    {
        return -1;
    }
    session->state = AA_RECEIVE_SESSION_ACTIVE;
    session->image = image;
    if (endpoint->is_multi_destination && NULL != session->setup_transport)
    {
        aa_publication_image_on_connection_frame(image, session->setup_transport, &image->control_address,
            image->control_address_length, aa_get_int64_volatile(&image->time_of_last_packet_ns));
    }
    return 0;
}

void aa_receive_channel_endpoint_remove_image(
    aa_receive_channel_endpoint_t *endpoint, aa_publication_image_t *image, int64_t now_ns)
{
    aa_receive_session_t *session =
        aa_receive_channel_endpoint_find_session(endpoint, image->ids.session_id, image->ids.stream_id);
    if (NULL != session && session->image == image)
    {
        session->state = AA_RECEIVE_SESSION_COOL_DOWN;
        session->image = NULL;
        /* a rejected image's publisher may come back at once as a new image: reject is not permanent
         * (aeron-wave3.md 4.2, the cool-down lifted on LINGER) */
        session->expiry_ns = 1 == aa_get_int32_acquire(&image->is_rejected) ? now_ns : now_ns + AA_RECEIVE_SESSION_COOL_DOWN_NS;
    }
}

void aa_receive_channel_endpoint_expire_sessions(aa_receive_channel_endpoint_t *endpoint, int64_t now_ns)
{
    for (size_t i = endpoint->sessions_count; i-- > 0;)
    {
        aa_receive_session_t *session = &endpoint->sessions[i];
        if (AA_RECEIVE_SESSION_ACTIVE != session->state && now_ns >= session->expiry_ns)
        {
            aa_receive_channel_endpoint_remove_session_at(endpoint, i);
        }
    }
}

/* ---- dispatch (receiver) ---- */

bool aa_receive_channel_endpoint_image_is_group(const aa_receive_channel_endpoint_t *endpoint, uint8_t setup_flags)
{
    switch (endpoint->params.group)
    {
        case AA_RECEIVE_GROUP_TRUE:
            return true;
        case AA_RECEIVE_GROUP_FALSE:
            return false;
        default:
            return endpoint->channel->is_multicast || 0 != (setup_flags & AA_SETUP_HEADER_GROUP_FLAG);
    }
}

void aa_receive_channel_endpoint_control_address(
    const aa_receive_channel_endpoint_t *endpoint, const struct sockaddr_storage *source, socklen_t source_length,
    struct sockaddr_storage *address, socklen_t *address_length)
{
    if (endpoint->channel->is_multicast)
    {
        *address = endpoint->channel->remote_control;
        *address_length = aa_udp_address_length(address);
        return;
    }
    if (endpoint->channel->has_explicit_control)
    {
        /* multi-destination-cast receiver: the publisher's control address */
        *address = endpoint->channel->local_control;
        *address_length = aa_udp_address_length(address);
        return;
    }
    *address = *source;
    *address_length = source_length;
}

int aa_receive_channel_endpoint_send_to(
    aa_receive_channel_endpoint_t *endpoint, const uint8_t *buffer, size_t length, const struct sockaddr_storage *address,
    socklen_t address_length)
{
    if (endpoint->is_multi_destination)
    {
        return 0;   /* no socket of its own: it answers over the transport a frame came on */
    }
    return aa_receive_channel_endpoint_send_on(endpoint, &endpoint->transport, buffer, length, address, address_length);
}

int aa_receive_channel_endpoint_send_on(
    aa_receive_channel_endpoint_t *endpoint, aa_udp_transport_t *transport, const uint8_t *buffer, size_t length,
    const struct sockaddr_storage *address, socklen_t address_length)
{
    aa_udp_datagram_t datagram;
    memset(&datagram, 0, sizeof(datagram));
    datagram.buffer = (uint8_t *)buffer;
    datagram.length = length;
    datagram.address = *address;
    datagram.addr_len = address_length;
    int sent = aa_udp_transport_send(transport, &datagram, 1);
    if (sent < 0)
    {
        aa_media_services_log_error(endpoint->services, AA_ERROR_CODE_CHANNEL_ENDPOINT_ERROR, aa_errmsg());
        return 0;
    }
    if (1 == sent)
    {
        aa_media_services_count(endpoint->services, AA_SYSTEM_COUNTER_BYTES_SENT, (int64_t)length);
    }
    else
    {
        aa_media_services_count(endpoint->services, AA_SYSTEM_COUNTER_SHORT_SENDS, 1);
    }
    return sent;
}

static int aa_receive_channel_endpoint_send_setup_request(
    aa_receive_channel_endpoint_t *endpoint, aa_udp_transport_t *transport, int32_t session_id, int32_t stream_id,
    const struct sockaddr_storage *address, socklen_t address_length)
{
    uint8_t frame[AA_STATUS_MESSAGE_WITH_GROUP_TAG_LENGTH];
    int32_t length = aa_udp_frame_encode_status_message(
        frame, sizeof(frame), AA_STATUS_MESSAGE_HEADER_SEND_SETUP_FLAG, session_id, stream_id, 0, 0, 0,
        endpoint->receiver_id, endpoint->params.has_group_tag ? &endpoint->params.group_tag : NULL);
    if (length > 0 && 1 == aa_receive_channel_endpoint_send_on(endpoint, transport, frame, (size_t)length, address, address_length))
    {
        aa_media_services_count(endpoint->services, AA_SYSTEM_COUNTER_STATUS_MESSAGES_SENT, 1);
        return 1;
    }
    return 0;
}

int aa_receive_channel_endpoint_elicit_setups(aa_receive_channel_endpoint_t *endpoint, int64_t now_ns)
{
    if (!endpoint->channel->has_explicit_control || endpoint->channel->is_multicast || endpoint->is_multi_destination ||
        endpoint->is_response)
    {
        return 0;
    }
    int sent = 0;
    for (size_t i = 0; i < endpoint->streams_count; i++)
    {
        aa_receive_stream_t *stream = &endpoint->streams[i];
        if (stream->has_elicited_setup && now_ns < stream->time_of_last_setup_elicit_ns + AA_RECEIVE_PENDING_SETUP_TIMEOUT_NS)
        {
            continue;
        }
        bool has_image = false;
        for (size_t j = 0; j < endpoint->sessions_count && !has_image; j++)
        {
            has_image = endpoint->sessions[j].stream_id == stream->stream_id &&
                AA_RECEIVE_SESSION_ACTIVE == endpoint->sessions[j].state;
        }
        stream->has_elicited_setup = true;
        stream->time_of_last_setup_elicit_ns = now_ns;
        if (!has_image)
        {
            sent += aa_receive_channel_endpoint_send_setup_request(
                endpoint, &endpoint->transport, 0, stream->stream_id, &endpoint->channel->local_control,
                aa_udp_address_length(&endpoint->channel->local_control));
        }
    }
    return sent;
}

int aa_receive_channel_endpoint_elicit_setup(aa_receive_channel_endpoint_t *endpoint, int32_t stream_id, int32_t session_id)
{
    if (!endpoint->channel->has_explicit_control || endpoint->is_multi_destination)
    {
        return 0;
    }
    return aa_receive_channel_endpoint_send_setup_request(
        endpoint, &endpoint->transport, session_id, stream_id, &endpoint->channel->local_control,
        aa_udp_address_length(&endpoint->channel->local_control));
}

static bool aa_receive_channel_endpoint_is_waiting(const aa_receive_session_t *session, int64_t now_ns)
{
    return NULL != session && AA_RECEIVE_SESSION_ACTIVE != session->state && now_ns < session->expiry_ns;
}

static void aa_receive_channel_endpoint_on_data(
    aa_receive_channel_endpoint_t *endpoint, aa_udp_transport_t *transport, aa_udp_datagram_t *datagram, bool is_heartbeat,
    int64_t now_ns)
{
    aa_data_header_t header;
    memcpy(&header, datagram->buffer, sizeof(header));
    aa_receive_session_t *session =
        aa_receive_channel_endpoint_find_session(endpoint, header.session_id, header.stream_id);
    if (NULL != session && AA_RECEIVE_SESSION_ACTIVE == session->state)
    {
        aa_publication_image_t *image = session->image;
        if (!aa_udp_frame_data_fits_term(datagram->buffer, datagram->length, image->ids.term_length))
        {
            aa_media_services_count(endpoint->services, AA_SYSTEM_COUNTER_INVALID_PACKETS, 1);
            return;
        }
        if (endpoint->is_multi_destination)
        {
            aa_publication_image_on_connection_frame(image, transport, &datagram->address, datagram->addr_len, now_ns);
        }
        else if (!aa_publication_image_is_from_source(image, &datagram->address))
        {
            aa_media_services_count(endpoint->services, AA_SYSTEM_COUNTER_FRAMES_FROM_ANOTHER_SOURCE, 1);
            return;
        }
        if (endpoint->has_receive_timestamps && !is_heartbeat)
        {
            aa_timestamps_stamp_received(datagram->buffer, datagram->length,
                endpoint->channel->channel_rcv_timestamp_offset, endpoint->timestamp_clock,
                endpoint->timestamp_clock_clientd, endpoint->channel->media_rcv_timestamp_offset,
                0 != datagram->media_rcv_timestamp_ns, datagram->media_rcv_timestamp_ns);
        }
        aa_publication_image_insert_packet(image, datagram->buffer, datagram->length, is_heartbeat, now_ns);
        return;
    }
    /* A frame that reaches no image is dropped and counted as an invalid packet: a session this receiver
     * has no image for, or a stream nobody here subscribes to. On a subscribed stream it is also the
     * protocol's late-join signal, so the first one asks the source for SETUP (below); the frames that
     * arrive while the image is being created are counted too, which is why a late joiner on a busy
     * stream sees a few. */
    aa_media_services_count(endpoint->services, AA_SYSTEM_COUNTER_INVALID_PACKETS, 1);
    if (NULL == aa_receive_channel_endpoint_find_stream(endpoint, header.stream_id) ||
        aa_receive_channel_endpoint_is_waiting(session, now_ns) ||
        aa_udp_data_flags_is_end_of_stream(header.frame_header.flags))
    {
        return;
    }

    /* Late join or a lost SETUP: ask the source for one (reference 4.1), for a bounded number of
     * sessions at once (docs/security.md, Network: receivers). */
    if (NULL == session && endpoint->params.max_images > 0 &&
        endpoint->sessions_count >= 2 * (size_t)endpoint->params.max_images)
    {
        return;
    }
    session = aa_receive_channel_endpoint_get_or_add_session(endpoint, header.session_id, header.stream_id);
    if (NULL == session)
    {
        aa_media_services_log_error(endpoint->services, ENOMEM, aa_errmsg());
        return;
    }
    session->state = AA_RECEIVE_SESSION_PENDING_SETUP;
    session->image = NULL;
    session->expiry_ns = now_ns + AA_RECEIVE_PENDING_SETUP_TIMEOUT_NS;
    struct sockaddr_storage control;
    socklen_t control_length;
    aa_receive_channel_endpoint_control_address(endpoint, &datagram->address, datagram->addr_len, &control, &control_length);
    aa_receive_channel_endpoint_send_setup_request(
        endpoint, transport, header.session_id, header.stream_id, &control, control_length);
}

/* A SETUP whose stream could never be imaged, whatever this driver's settings: a term length that is
 * no log's, an MTU no sender can have, a position that is no position of the stream. */
static bool aa_receive_channel_endpoint_setup_is_malformed(const aa_setup_header_t *setup)
{
    int32_t term_count = (int32_t)((uint32_t)setup->active_term_id - (uint32_t)setup->initial_term_id);
    return aa_logbuffer_check_term_length(setup->term_length) < 0 ||
        setup->mtu <= AA_MTU_LENGTH_MIN_EXCLUSIVE || setup->mtu > AA_MTU_LENGTH_MAX ||
        0 != (setup->mtu % AA_LOGBUFFER_FRAME_ALIGNMENT) ||
        term_count < 0 || setup->term_offset < 0 || setup->term_offset > setup->term_length ||
        0 != (setup->term_offset % AA_LOGBUFFER_FRAME_ALIGNMENT);
}

/* A SETUP refused (docs/security.md, Network: receivers): counted, and logged at most once a second,
 * in words that stay the same for one source and reason, so the distinct error log keeps one entry
 * per source and reason with its count. */
static void aa_receive_channel_endpoint_refuse_setup(
    aa_receive_channel_endpoint_t *endpoint, const aa_udp_datagram_t *datagram, int counter, const char *reason,
    int64_t now_ns)
{
    aa_media_services_count(endpoint->services, counter, 1);
    if (now_ns < endpoint->time_of_next_refusal_log_ns)
    {
        return;
    }
    endpoint->time_of_next_refusal_log_ns = now_ns + AA_RECEIVE_REFUSAL_LOG_INTERVAL_NS;
    char source[AA_UDP_ADDRESS_FORMAT_MAX_LENGTH];
    if (aa_udp_address_format(source, sizeof(source), &datagram->address) < 0)
    {
        snprintf(source, sizeof(source), "%s", "unknown");
    }
    char message[768];
    snprintf(message, sizeof(message), "receive channel %s: SETUP from %s refused: %s",
        endpoint->channel->canonical_form, source, reason);
    aa_media_services_log_error(endpoint->services, AA_ERROR_CODE_IMAGE_REJECTED, message);
}

/* Whether one more session of stream_id may get an image (besides except, the one asking). */
static bool aa_receive_channel_endpoint_has_room(
    aa_receive_channel_endpoint_t *endpoint, const aa_receive_session_t *except, int32_t stream_id, char *reason,
    size_t reason_length)
{
    int32_t max_images = endpoint->params.max_images;
    int32_t max_of_stream = endpoint->params.max_sessions_per_stream;
    if (max_images <= 0 && max_of_stream <= 0)
    {
        return true;
    }
    int32_t images = 0;
    int32_t of_stream = 0;
    for (size_t i = 0; i < endpoint->sessions_count; i++)
    {
        const aa_receive_session_t *session = &endpoint->sessions[i];
        if (session != except &&
            (AA_RECEIVE_SESSION_ACTIVE == session->state || AA_RECEIVE_SESSION_INITIALISING == session->state))
        {
            images++;
            of_stream += session->stream_id == stream_id ? 1 : 0;
        }
    }
    if (max_images > 0 && images >= max_images)
    {
        snprintf(reason, reason_length,
            "the endpoint holds %" PRId32 " images, its limit; raise AERON_RECEIVER_MAX_IMAGES if these are real "
            "publishers", max_images);
        return false;
    }
    if (max_of_stream > 0 && of_stream >= max_of_stream)
    {
        snprintf(reason, reason_length,
            "stream %" PRId32 " holds %" PRId32 " images, its limit; raise AERON_RECEIVER_MAX_SESSIONS_PER_STREAM if "
            "these are real publishers", stream_id, max_of_stream);
        return false;
    }
    return true;
}

static void aa_receive_channel_endpoint_on_setup(
    aa_receive_channel_endpoint_t *endpoint, aa_udp_transport_t *transport, aa_udp_datagram_t *datagram, int64_t now_ns)
{
    aa_setup_header_t setup;
    if (aa_udp_frame_decode_setup(datagram->buffer, datagram->length, &setup) < 0 ||
        aa_receive_channel_endpoint_setup_is_malformed(&setup))
    {
        aa_media_services_count(endpoint->services, AA_SYSTEM_COUNTER_INVALID_PACKETS, 1);
        return;
    }
    if (NULL == aa_receive_channel_endpoint_find_stream(endpoint, setup.stream_id))
    {
        return;
    }
    aa_receive_session_t *session = aa_receive_channel_endpoint_find_session(endpoint, setup.session_id, setup.stream_id);
    if (NULL != session && AA_RECEIVE_SESSION_ACTIVE == session->state)
    {
        /* the image keeps the source it was set up from */
        if (!endpoint->is_multi_destination && !aa_publication_image_is_from_source(session->image, &datagram->address))
        {
            aa_media_services_count(endpoint->services, AA_SYSTEM_COUNTER_FRAMES_FROM_ANOTHER_SOURCE, 1);
        }
        return;
    }
    if (NULL != session && AA_RECEIVE_SESSION_PENDING_SETUP != session->state && now_ns < session->expiry_ns)
    {
        return;
    }
    char reason[256];
    if (endpoint->params.max_term_length > 0 && setup.term_length > endpoint->params.max_term_length)
    {
        snprintf(reason, sizeof(reason),
            "its term length is above the receiver maximum %" PRId32 "; raise AERON_RECEIVER_MAX_TERM_LENGTH (up to "
            "1g) if the publisher's term-length is meant", endpoint->params.max_term_length);
        aa_receive_channel_endpoint_refuse_setup(
            endpoint, datagram, AA_SYSTEM_COUNTER_SETUPS_REFUSED_TERM_LENGTH, reason, now_ns);
        return;
    }
    if (!aa_receive_channel_endpoint_has_room(endpoint, session, setup.stream_id, reason, sizeof(reason)))
    {
        aa_receive_channel_endpoint_refuse_setup(
            endpoint, datagram, AA_SYSTEM_COUNTER_SETUPS_REFUSED_IMAGE_LIMIT, reason, now_ns);
        return;
    }
    session = aa_receive_channel_endpoint_get_or_add_session(endpoint, setup.session_id, setup.stream_id);
    if (NULL == session)
    {
        aa_media_services_log_error(endpoint->services, ENOMEM, aa_errmsg());
        return;
    }
    session->state = AA_RECEIVE_SESSION_INITIALISING;
    session->image = NULL;
    session->setup_transport = transport;
    session->expiry_ns = now_ns + AA_RECEIVE_PENDING_SETUP_TIMEOUT_NS;
    aa_media_services_request_image(
        endpoint->services, endpoint, &setup, &datagram->address, datagram->addr_len);
}

static void aa_receive_channel_endpoint_on_rttm(
    aa_receive_channel_endpoint_t *endpoint, aa_udp_transport_t *transport, aa_udp_datagram_t *datagram, int64_t now_ns)
{
    aa_rttm_header_t rttm;
    if (aa_udp_frame_decode_rttm(datagram->buffer, datagram->length, &rttm) < 0 ||
        (0 != rttm.receiver_id && endpoint->receiver_id != rttm.receiver_id))
    {
        return;
    }
    if (0 == (rttm.frame_header.flags & AA_RTTM_HEADER_REPLY_FLAG))
    {
        aa_receive_session_t *session = aa_receive_channel_endpoint_find_session(endpoint, rttm.session_id, rttm.stream_id);
        if (NULL != session && AA_RECEIVE_SESSION_ACTIVE == session->state)
        {
            if (!endpoint->is_multi_destination && !aa_publication_image_is_from_source(session->image, &datagram->address))
            {
                aa_media_services_count(endpoint->services, AA_SYSTEM_COUNTER_FRAMES_FROM_ANOTHER_SOURCE, 1);
                return;
            }
            aa_publication_image_on_rttm_reply(session->image, rttm.echo_timestamp, rttm.reception_delta, now_ns);
        }
        return;
    }
    uint8_t frame[AA_RTTM_HEADER_LENGTH];
    int32_t length = aa_udp_frame_encode_rttm_reply(frame, sizeof(frame), &rttm);
    if (length > 0)
    {
        struct sockaddr_storage control;
        socklen_t control_length;
        aa_receive_channel_endpoint_control_address(
            endpoint, &datagram->address, datagram->addr_len, &control, &control_length);
        aa_receive_channel_endpoint_send_on(endpoint, transport, frame, (size_t)length, &control, control_length);
    }
}

bool aa_receive_channel_endpoint_on_datagram(
    aa_receive_channel_endpoint_t *endpoint, aa_udp_datagram_t *datagram, int64_t now_ns)
{
    return aa_receive_channel_endpoint_on_transport_datagram(endpoint, &endpoint->transport, datagram, now_ns);
}

bool aa_receive_channel_endpoint_on_transport_datagram(
    aa_receive_channel_endpoint_t *endpoint, aa_udp_transport_t *transport, aa_udp_datagram_t *datagram, int64_t now_ns)
{
    endpoint->time_of_last_activity_ns = now_ns;    /* DATA, SETUP, RTTM (anything from the publisher) */
    aa_media_services_count(endpoint->services, AA_SYSTEM_COUNTER_BYTES_RECEIVED, (int64_t)datagram->length);
    aa_udp_frame_kind_t kind = aa_udp_frame_classify(datagram->buffer, datagram->length);
    switch (kind)
    {
        case AA_UDP_FRAME_DATA:
        case AA_UDP_FRAME_PAD:
            aa_receive_channel_endpoint_on_data(endpoint, transport, datagram, false, now_ns);
            break;
        case AA_UDP_FRAME_HEARTBEAT:
            aa_receive_channel_endpoint_on_data(endpoint, transport, datagram, true, now_ns);
            break;
        case AA_UDP_FRAME_SETUP:
            aa_receive_channel_endpoint_on_setup(endpoint, transport, datagram, now_ns);
            break;
        case AA_UDP_FRAME_RTTM:
            aa_receive_channel_endpoint_on_rttm(endpoint, transport, datagram, now_ns);
            break;
        default:
            if (aa_udp_frame_kind_is_invalid(kind))
            {
                aa_media_services_count(endpoint->services, AA_SYSTEM_COUNTER_INVALID_PACKETS, 1);
            }
            break;
    }
    return AA_UDP_FRAME_HEARTBEAT != kind && AA_UDP_FRAME_RTTM != kind;
}

int aa_receive_channel_endpoint_check_re_resolution(aa_receive_channel_endpoint_t *endpoint, int64_t now_ns)
{
    if (!endpoint->is_control_named || now_ns <= endpoint->time_of_last_activity_ns + AA_RECEIVE_DESTINATION_TIMEOUT_NS)
    {
        return 0;
    }
    endpoint->time_of_last_activity_ns = now_ns;    /* asked again after another timeout at the earliest */
    aa_media_services_request_re_resolution(endpoint->services, false, endpoint, &endpoint->channel->local_control);
    return 1;
}

void aa_receive_channel_endpoint_set_control_address(
    aa_receive_channel_endpoint_t *endpoint, const struct sockaddr_storage *address, int64_t now_ns)
{
    endpoint->channel->local_control = *address;
    endpoint->transport.destination = *address;
    endpoint->transport.has_destination = true;
    endpoint->time_of_last_activity_ns = now_ns;
    for (size_t i = 0; i < endpoint->streams_count; i++)
    {
        endpoint->streams[i].has_elicited_setup = false;    /* ask the moved publisher for a SETUP at once */
    }
}
