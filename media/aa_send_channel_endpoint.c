#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "media/aa_send_channel_endpoint.h"
#include "protocols/aa_udp_frames.h"
#include "media/aa_media_services.h"
#include "util/aa_error.h"
#include "util/aa_array.h"

int aa_send_channel_endpoint_create(
    aa_send_channel_endpoint_t **out, aa_udp_channel_t *channel, const aa_loss_generator_settings_t *loss,
    const aa_media_services_t *services)
{
    *out = NULL;
    aa_send_channel_endpoint_t *endpoint = calloc(1, sizeof(aa_send_channel_endpoint_t));
    if (NULL == endpoint)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory creating a send channel endpoint");
        return -1;
    }
    if (aa_loss_generator_transport_open(
        &endpoint->transport, &endpoint->loss_bindings, channel, AA_UDP_TRANSPORT_ROLE_SEND, loss) < 0)
    {
        AA_APPEND_ERR("opening the send socket of %s", channel->canonical_form);
        free(endpoint);
        return -1;
    }
    endpoint->transport.clientd = endpoint;
    endpoint->channel = channel;
    endpoint->services = services;
    endpoint->status_counter_id = -1;
    endpoint->local_sockaddr_counter_id = -1;
    endpoint->is_mdc = AA_UDP_CHANNEL_CONTROL_MODE_DYNAMIC == channel->control_mode ||
        AA_UDP_CHANNEL_CONTROL_MODE_MANUAL == channel->control_mode;
    if (channel->has_explicit_endpoint && !channel->is_multicast && !endpoint->is_mdc)
    {
        aa_uri_address_t parts;
        const char *value = aa_uri_find_param(&channel->uri, "endpoint");
        endpoint->is_endpoint_named = NULL != value && 0 == aa_uri_parse_address("endpoint", value, false, false, &parts) &&
            !aa_name_resolver_is_literal(parts.host);
    }
    endpoint->has_send_timestamps = AA_UDP_CHANNEL_TIMESTAMP_OFF != channel->channel_snd_timestamp_offset;
    endpoint->timestamp_clock = aa_timestamps_realtime_ns;
    aa_udp_destination_tracker_init(&endpoint->destinations,
        AA_UDP_CHANNEL_CONTROL_MODE_MANUAL == channel->control_mode, 0);
    *out = endpoint;
    return 0;
}

void aa_send_channel_endpoint_delete(aa_send_channel_endpoint_t *endpoint)
{
    if (NULL != endpoint)
    {
        aa_loss_generator_transport_close(&endpoint->transport, endpoint->loss_bindings);
        aa_udp_channel_delete(endpoint->channel);
        free(endpoint->publications);
        free(endpoint->manual_destinations);
        aa_udp_destination_tracker_close(&endpoint->destinations);
        free(endpoint);
    }
}

int aa_send_channel_endpoint_add_publication(aa_send_channel_endpoint_t *endpoint, aa_network_publication_t *pub)
{
    if (endpoint->publications_count == endpoint->publications_capacity)
    {
        size_t capacity = 0 == endpoint->publications_capacity ? 4 : endpoint->publications_capacity * 2;
        aa_network_publication_t **grown = realloc(endpoint->publications, capacity * sizeof(*grown));
        if (NULL == grown)
        {
            AA_SET_ERR(ENOMEM, "%s", "out of memory adding a publication to its send channel endpoint");
            return -1;
        }
        endpoint->publications = grown;
        endpoint->publications_capacity = capacity;
    }
    endpoint->publications[endpoint->publications_count++] = pub;
    return 0;
}

void aa_send_channel_endpoint_remove_publication(aa_send_channel_endpoint_t *endpoint, aa_network_publication_t *pub)
{
    for (size_t i = 0; i < endpoint->publications_count; i++)
    {
        if (endpoint->publications[i] == pub)
        {
            endpoint->publications[i] = endpoint->publications[--endpoint->publications_count];
            return;
        }
    }
}

static aa_network_publication_t *aa_send_channel_endpoint_find(
    aa_send_channel_endpoint_t *endpoint, int32_t session_id, int32_t stream_id)
{
    for (size_t i = 0; i < endpoint->publications_count; i++)
    {
        aa_network_publication_t *pub = endpoint->publications[i];
        if (pub->ids.session_id == session_id && pub->ids.stream_id == stream_id)
        {
            return pub;
        }
    }
    return NULL;
}

/* RSP_SETUP (reference wave3 1.2, step 6): the server's receiver answers a request publication (one with a
 * response correlation id) with the session of its response publication. Taken only from a receiver of
 * the publication, an address its status messages came from (the server's receive endpoint sends both),
 * as NAKs and ERR frames are (docs/security.md, Network: senders). */
static void aa_send_channel_endpoint_on_response_setup(
    aa_send_channel_endpoint_t *endpoint, aa_network_publication_t *pub, const aa_udp_datagram_t *datagram, int64_t now_ns)
{
    aa_response_setup_header_t rsp;
    if (aa_udp_frame_decode_response_setup(datagram->buffer, datagram->length, &rsp) < 0)
    {
        aa_media_services_count(endpoint->services, AA_SYSTEM_COUNTER_INVALID_PACKETS, 1);
        return;
    }
    if (AA_URI_RESPONSE_CORRELATION_ID_NONE == pub->response_correlation_id)
    {
        return;
    }
    if (NULL == aa_retransmit_receivers_find(&pub->retransmit_receivers, &datagram->address, now_ns))
    {
        aa_media_services_count(endpoint->services, AA_SYSTEM_COUNTER_RESPONSE_SETUPS_NOT_FROM_A_RECEIVER, 1);
        return;
    }
    aa_media_services_response_setup(endpoint->services, pub->response_correlation_id, rsp.response_session_id);
}

bool aa_send_channel_endpoint_on_datagram(
    aa_send_channel_endpoint_t *endpoint, aa_udp_datagram_t *datagram, int64_t now_ns)
{
    const aa_media_services_t *services = endpoint->services;
    const uint8_t *buffer = datagram->buffer;
    size_t length = datagram->length;
    aa_media_services_count(services, AA_SYSTEM_COUNTER_BYTES_RECEIVED, (int64_t)length);
    aa_udp_frame_kind_t kind = aa_udp_frame_classify(buffer, length);
    if (aa_udp_frame_kind_is_invalid(kind))
    {
        aa_media_services_count(services, AA_SYSTEM_COUNTER_INVALID_PACKETS, 1);
        return true;
    }

    /* Every control frame a publication handles has the session and stream at offsets 8 and 12. */
    int32_t session_id;
    int32_t stream_id;
    switch (kind)
    {
        case AA_UDP_FRAME_SM:
        case AA_UDP_FRAME_NAK:
        case AA_UDP_FRAME_RTTM:
        case AA_UDP_FRAME_ERR:
        case AA_UDP_FRAME_RSP_SETUP:
            memcpy(&session_id, buffer + 8, sizeof(session_id));
            memcpy(&stream_id, buffer + 12, sizeof(stream_id));
            break;
        default:
            return true;
    }
    aa_network_publication_t *pub = aa_send_channel_endpoint_find(endpoint, session_id, stream_id);
    switch (kind)
    {
        case AA_UDP_FRAME_SM:
            aa_media_services_count(services, AA_SYSTEM_COUNTER_STATUS_MESSAGES_RECEIVED, 1);
            endpoint->time_of_last_sm_ns = now_ns;
            if (endpoint->is_mdc && length >= (size_t)AA_STATUS_MESSAGE_HEADER_LENGTH)
            {
                int64_t receiver_id;
                memcpy(&receiver_id, buffer + offsetof(aa_status_message_header_t, receiver_id), sizeof(receiver_id));
                int added = aa_udp_destination_tracker_on_status_message(
                    &endpoint->destinations, receiver_id, &datagram->address, datagram->addr_len, now_ns);
                if (added < 0)
                {
                    aa_media_services_log_error(services, ENOMEM, aa_errmsg());
                }
                else if (AA_UDP_DESTINATION_REFUSED == added)
                {
                    /* docs/security.md, Network: senders: neither a destination nor a receiver */
                    aa_media_services_count(services, AA_SYSTEM_COUNTER_MDC_DESTINATIONS_REFUSED, 1);
                    return false;
                }
                if (added > 0 && NULL == pub)
                {
                    return true;
                }
            }
            if (NULL != pub)
            {
                return aa_network_publication_on_status_message(
                    pub, buffer, length, &datagram->address, datagram->addr_len, now_ns);
            }
            break;
        case AA_UDP_FRAME_NAK:
            aa_media_services_count(services, AA_SYSTEM_COUNTER_NAK_MESSAGES_RECEIVED, 1);
            if (NULL != pub)
            {
                aa_network_publication_on_nak(pub, buffer, length, &datagram->address, datagram->addr_len, now_ns);
            }
            break;
        case AA_UDP_FRAME_RTTM:
            if (NULL != pub)
            {
                aa_network_publication_on_rttm(pub, buffer, length, &datagram->address, datagram->addr_len);
            }
            return false;
        case AA_UDP_FRAME_ERR:
            aa_media_services_count(services, AA_SYSTEM_COUNTER_ERROR_FRAMES_RECEIVED, 1);
            if (NULL != pub)
            {
                aa_network_publication_on_error(pub, buffer, length, &datagram->address, now_ns);
            }
            break;
        case AA_UDP_FRAME_RSP_SETUP:
            if (NULL != pub)
            {
                aa_send_channel_endpoint_on_response_setup(endpoint, pub, datagram, now_ns);
            }
            break;
        default:
            break;
    }
    return true;
}

int aa_send_channel_endpoint_check_destinations(aa_send_channel_endpoint_t *endpoint, int64_t now_ns)
{
    return endpoint->is_mdc ? aa_udp_destination_tracker_check_timeouts(&endpoint->destinations, now_ns) : 0;
}

int aa_send_channel_endpoint_manual_destination_add(aa_send_channel_endpoint_t *endpoint, const struct sockaddr_storage *address)
{
    if (aa_array_ensure_capacity((void **)&endpoint->manual_destinations, &endpoint->manual_destinations_capacity,
        endpoint->manual_destinations_count, sizeof(struct sockaddr_storage)) < 0)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory adding a destination");
        return -1;
    }
    endpoint->manual_destinations[endpoint->manual_destinations_count++] = *address;
    return 0;
}

int aa_send_channel_endpoint_manual_destination_remove(
    aa_send_channel_endpoint_t *endpoint, const struct sockaddr_storage *address)
{
    for (size_t i = 0; i < endpoint->manual_destinations_count; i++)
    {
        if (aa_udp_address_equals(&endpoint->manual_destinations[i], address))
        {
            endpoint->manual_destinations[i] = endpoint->manual_destinations[--endpoint->manual_destinations_count];
            return 1;
        }
    }
    return 0;
}

/* MDC: the same batch to every destination; what counts as sent is the least any destination took,
 * so a batch one socket send could not take whole is sent again (receivers drop the duplicates). */
static int aa_send_channel_endpoint_send_to_destinations(
    aa_send_channel_endpoint_t *endpoint, aa_udp_datagram_t *datagrams, size_t count)
{
    const aa_udp_destination_tracker_t *tracker = &endpoint->destinations;
    int least = (int)count;
    for (size_t d = 0; d < tracker->count; d++)
    {
        const aa_udp_destination_t *destination = &tracker->destinations[d];
        for (size_t i = 0; i < count; i++)
        {
            datagrams[i].address = destination->address;
            datagrams[i].addr_len = destination->address_length;
        }
        int sent = aa_udp_transport_send(&endpoint->transport, datagrams, count);
        if (sent < 0)
        {
            /* one destination's socket error (e.g. unreachable) must not stop the others */
            aa_media_services_log_error(endpoint->services, AA_ERROR_CODE_CHANNEL_ENDPOINT_ERROR, aa_errmsg());
            continue;
        }
        least = sent < least ? sent : least;
    }
    for (size_t i = 0; i < count; i++)
    {
        datagrams[i].addr_len = 0;
    }
    return least;
}

/* channel-snd-ts-offset: one clock read for the batch, written in place (in the term buffer for DATA) */
static void aa_send_channel_endpoint_apply_timestamps(
    aa_send_channel_endpoint_t *endpoint, aa_udp_datagram_t *datagrams, size_t count)
{
    int64_t now_ns = endpoint->timestamp_clock(endpoint->timestamp_clock_clientd);
    for (size_t i = 0; i < count; i++)
    {
        aa_timestamps_stamp_sent(
            datagrams[i].buffer, datagrams[i].length, endpoint->channel->channel_snd_timestamp_offset, now_ns);
    }
}

int aa_send_channel_endpoint_send(aa_send_channel_endpoint_t *endpoint, aa_udp_datagram_t *datagrams, size_t count)
{
    if (__builtin_expect(endpoint->has_send_timestamps, 0))
    {
        aa_send_channel_endpoint_apply_timestamps(endpoint, datagrams, count);
    }
    if (endpoint->is_mdc && count > 0 && 0 == datagrams[0].addr_len)
    {
        int sent = aa_send_channel_endpoint_send_to_destinations(endpoint, datagrams, count);
        int64_t bytes = 0;
        for (int i = 0; i < sent; i++)
        {
            bytes += (int64_t)datagrams[i].length;
        }
        if (bytes > 0 && endpoint->destinations.count > 0)
        {
            aa_media_services_count(endpoint->services, AA_SYSTEM_COUNTER_BYTES_SENT, bytes * (int64_t)endpoint->destinations.count);
        }
        if ((size_t)sent < count)
        {
            aa_media_services_count(endpoint->services, AA_SYSTEM_COUNTER_SHORT_SENDS, 1);
        }
        return sent;
    }
    if (count > 0 && !endpoint->transport.has_destination && 0 == datagrams[0].addr_len)
    {
        return (int)count;    /* endpoint= not resolved yet: nowhere to send, as if lost */
    }
    int sent = aa_udp_transport_send(&endpoint->transport, datagrams, count);
    if (sent < 0)
    {
        aa_media_services_log_error(endpoint->services, AA_ERROR_CODE_CHANNEL_ENDPOINT_ERROR, aa_errmsg());
        return -1;
    }
    int64_t bytes = 0;
    for (int i = 0; i < sent; i++)
    {
        bytes += (int64_t)datagrams[i].length;
    }
    if (bytes > 0)
    {
        aa_media_services_count(endpoint->services, AA_SYSTEM_COUNTER_BYTES_SENT, bytes);
    }
    if ((size_t)sent < count)
    {
        aa_media_services_count(endpoint->services, AA_SYSTEM_COUNTER_SHORT_SENDS, 1);
    }
    return sent;
}

int aa_send_channel_endpoint_check_re_resolution(aa_send_channel_endpoint_t *endpoint, int64_t now_ns)
{
    if (endpoint->is_mdc && endpoint->destinations.is_manual)
    {
        /* manual MDC: each destination without status messages for the timeout (the conductor knows
         * which were added by name and asks only for those) */
        int asked = 0;
        for (size_t i = 0; i < endpoint->destinations.count; i++)
        {
            aa_udp_destination_t *d = &endpoint->destinations.destinations[i];
            if (now_ns > d->time_of_last_activity_ns + AA_SEND_CHANNEL_ENDPOINT_DESTINATION_TIMEOUT_NS)
            {
                d->time_of_last_activity_ns = now_ns;
                aa_media_services_request_re_resolution(endpoint->services, true, endpoint, &d->address);
                asked++;
            }
        }
        return asked;
    }
    if (!endpoint->is_endpoint_named || now_ns <= endpoint->time_of_last_sm_ns + AA_SEND_CHANNEL_ENDPOINT_DESTINATION_TIMEOUT_NS)
    {
        return 0;
    }
    endpoint->time_of_last_sm_ns = now_ns;    /* asked again after another timeout at the earliest */
    aa_media_services_request_re_resolution(endpoint->services, true, endpoint, &endpoint->transport.destination);
    return 1;
}

void aa_send_channel_endpoint_set_destination(
    aa_send_channel_endpoint_t *endpoint, const struct sockaddr_storage *old_address,
    const struct sockaddr_storage *address, int64_t now_ns)
{
    if (endpoint->is_mdc)
    {
        aa_udp_destination_tracker_replace(&endpoint->destinations, old_address, address, now_ns);
        return;
    }
    endpoint->transport.destination = *address;
    endpoint->transport.has_destination = true;
    endpoint->time_of_last_sm_ns = now_ns;
}
