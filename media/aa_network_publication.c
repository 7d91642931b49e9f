#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "media/aa_network_publication.h"
#include "media/aa_send_channel_endpoint.h"
#include "protocols/aa_udp_frames.h"
#include "media/aa_media_services.h"
#include "logbuffer/aa_term.h"
#include "util/aa_error.h"

/* Datagrams of one resend handed to the socket at once. */
#define AA_NETWORK_PUBLICATION_RESEND_BATCH 16

int aa_network_publication_init(
    aa_network_publication_t *pub, const aa_network_publication_params_t *params, const aa_media_services_t *services)
{
    pub->registration_id = params->registration_id;
    pub->ids = params->ids;
    pub->position_bits_to_shift = aa_position_bits_to_shift(params->ids.term_length);
    pub->is_exclusive = params->is_exclusive;
    pub->signal_eos = params->signal_eos;
    pub->spies_simulate_connection = params->spies_simulate_connection;
    pub->has_group_semantics = params->has_group_semantics;
    pub->multicast_ttl = params->multicast_ttl;
    pub->max_spy_position = INT64_MIN;
    pub->term_window_length = params->term_window_length;
    pub->linger_timeout_ns = params->linger_timeout_ns;
    pub->unblock_timeout_ns = params->unblock_timeout_ns;
    pub->connection_timeout_ns = params->connection_timeout_ns;
    pub->response_correlation_id = params->response_correlation_id;
    pub->is_response = params->is_response;
    pub->services = services;

    aa_flow_control_strategy_params_t fc_params;
    aa_flow_control_strategy_params_default(&fc_params);
    fc_params.registration_id = params->registration_id;
    fc_params.stream_id = params->ids.stream_id;
    fc_params.initial_term_id = params->ids.initial_term_id;
    fc_params.term_length = params->ids.term_length;
    fc_params.proxy_host = services->flow_control_proxy_host;
    fc_params.receiver_timeout_ns = params->flow_control_receiver_timeout_ns > 0 ?
        params->flow_control_receiver_timeout_ns : fc_params.receiver_timeout_ns;
    fc_params.group_min_size = params->flow_control_group_min_size;
    fc_params.group_tag = params->flow_control_group_tag;
    if (aa_flow_control_strategy_create(&pub->flow_control, &params->flow_control, &fc_params) < 0)
    {
        pub->flow_control = NULL;
        AA_APPEND_ERR("%s", "creating the publication's flow control");
        return -1;
    }

    aa_retransmit_handler_params_t rt_params;
    aa_retransmit_handler_params_default(&rt_params, params->ids.term_length, params->ids.initial_term_id);
    rt_params.delay_ns = params->retransmit_delay_ns;
    rt_params.linger_ns = params->retransmit_linger_ns;
    rt_params.has_group_semantics = params->has_group_semantics;
    rt_params.max_resend = params->max_resend;
    rt_params.max_retransmission_length =
        pub->flow_control->max_retransmission_length(pub->flow_control->state, params->ids.term_length);
    if (aa_retransmit_handler_init(&pub->retransmit_handler, &rt_params) < 0)
    {
        pub->flow_control->fini(pub->flow_control);
        pub->flow_control = NULL;
        AA_APPEND_ERR("%s", "creating the publication's retransmit handler");
        return -1;
    }
    aa_retransmit_receivers_init(&pub->retransmit_receivers,
        params->max_receivers > 0 ? (size_t)params->max_receivers : 0, params->connection_timeout_ns,
        params->retransmit_linger_ns, params->ids.term_length);
    return 0;
}

void aa_network_publication_free(aa_network_publication_t *pub)
{
    if (NULL != pub)
    {
        if (NULL != pub->flow_control)
        {
            pub->flow_control->fini(pub->flow_control);
        }
        aa_retransmit_handler_fini(&pub->retransmit_handler);
        aa_retransmit_receivers_close(&pub->retransmit_receivers);
        aa_media_services_forget_mapping(pub->services, &pub->mapped);
        aa_unmap(&pub->mapped);
        free(pub->spies);
        free(pub->channel);
        free(pub);
    }
}

int64_t aa_network_publication_producer_position(aa_network_publication_t *pub)
{
    return aa_logbuffer_producer_position(&pub->log);
}

/* ---- conductor ---- */

int aa_network_publication_update_pub_pos_and_lmt(aa_network_publication_t *pub)
{
    aa_put_int64_release(pub->pub_pos, aa_network_publication_producer_position(pub));
    int64_t snd_pos = aa_get_int64_acquire(pub->snd_pos);
    int64_t min_consumer_position = snd_pos;
    int64_t max_spy_position = INT64_MIN;
    for (size_t i = 0; i < pub->spies_count; i++)
    {
        aa_subscriber_position_t *spy = &pub->spies[i];
        if (AA_SUBSCRIBER_STATE_RESTING != spy->state)
        {
            int64_t position = aa_get_int64_acquire(spy->value);
            min_consumer_position = position < min_consumer_position ? position : min_consumer_position;
            max_spy_position = position > max_spy_position ? position : max_spy_position;
        }
    }
    if (max_spy_position != pub->max_spy_position)
    {
        aa_put_int64_release(&pub->max_spy_position, max_spy_position);
    }
    int32_t has_spies = INT64_MIN != max_spy_position ? 1 : 0;
    if (has_spies != pub->has_spies)
    {
        aa_put_int32_release(&pub->has_spies, has_spies);
    }
    if (AA_NETWORK_PUBLICATION_STATE_ACTIVE != pub->state)
    {
        return 0;
    }

    int work_count = 0;
    int64_t current_limit = aa_get_int64_volatile(pub->pub_lmt);
    if (aa_logbuffer_is_connected(pub->log.metadata))
    {
        int64_t max_position = aa_max_possible_position(pub->ids.term_length);
        int64_t proposed = min_consumer_position + pub->term_window_length;
        proposed = proposed < max_position ? proposed : max_position;
        if (proposed > current_limit)
        {
            aa_put_int64_release(pub->pub_lmt, proposed);
            aa_doorbell_ring(aa_logbuffer_doorbell(pub->log.metadata));
            work_count = 1;
        }
        aa_mapped_log_clean_to(
            &pub->log, &pub->clean_position, min_consumer_position - pub->ids.term_length,
            pub->ids.term_length, pub->position_bits_to_shift);
    }
    else if (current_limit > snd_pos)
    {
        aa_put_int64_release(pub->pub_lmt, snd_pos);
        work_count = 1;
    }
    return work_count;
}

bool aa_network_publication_check_for_blocked_publisher(aa_network_publication_t *pub, int64_t now_ns)
{
    int64_t producer_position = aa_network_publication_producer_position(pub);
    int64_t snd_pos = aa_get_int64_acquire(pub->snd_pos);
    if (producer_position <= snd_pos || snd_pos != pub->last_snd_pos)
    {
        pub->last_snd_pos = snd_pos;
        pub->time_of_last_snd_pos_change_ns = now_ns;
        return false;
    }
    return aa_publication_unblock_when_stuck(&pub->log, snd_pos, pub->ids.initial_term_id, pub->position_bits_to_shift,
        pub->unblock_timeout_ns, &pub->time_of_last_snd_pos_change_ns, now_ns);
}

void aa_network_publication_begin_draining(aa_network_publication_t *pub, int64_t now_ns)
{
    int64_t producer_position = aa_network_publication_producer_position(pub);
    pub->state = AA_NETWORK_PUBLICATION_STATE_DRAINING;
    pub->time_of_last_state_change_ns = now_ns;
    aa_logbuffer_end_stream_at(pub->log.metadata, pub->pub_lmt, producer_position);
    pub->last_snd_pos = INT64_MIN;
    pub->time_of_last_snd_pos_change_ns = now_ns;
}

void aa_network_publication_revoke(aa_network_publication_t *pub, int64_t now_ns)
{
    aa_logbuffer_end_stream_at(pub->log.metadata, pub->pub_lmt, aa_network_publication_producer_position(pub));
    aa_put_int32_release(&pub->is_revoked, 1);
    aa_put_int32_release(&pub->is_end_of_stream, 1);
    aa_logbuffer_set_connected(pub->log.metadata, false);
    pub->state = AA_NETWORK_PUBLICATION_STATE_LINGER;
    pub->time_of_last_state_change_ns = now_ns;
}

bool aa_network_publication_is_drained(aa_network_publication_t *pub)
{
    int64_t producer_position = aa_network_publication_producer_position(pub);
    int64_t snd_pos = aa_get_int64_acquire(pub->snd_pos);
    if (snd_pos >= producer_position || !aa_logbuffer_is_connected(pub->log.metadata))
    {
        aa_put_int32_release(&pub->is_end_of_stream, 1);
        return true;
    }
    return false;
}

/* ---- spies (conductor) ---- */

int64_t aa_network_publication_join_position(aa_network_publication_t *pub)
{
    int64_t position = aa_get_int64_acquire(pub->snd_pos);
    for (size_t i = 0; i < pub->spies_count; i++)
    {
        if (AA_SUBSCRIBER_STATE_RESTING != pub->spies[i].state)
        {
            int64_t p = aa_get_int64_acquire(pub->spies[i].value);
            position = p < position ? p : position;
        }
    }
    return position;
}

int aa_network_publication_add_spy(
    aa_network_publication_t *pub, int64_t subscription_registration_id, int64_t client_id, int32_t counter_id,
    volatile int64_t *value, bool is_tether, int64_t now_ns)
{
    return aa_subscriber_positions_add(
        &pub->spies, &pub->spies_count, &pub->spies_capacity, subscription_registration_id, client_id, counter_id,
        value, is_tether, now_ns);
}

aa_subscriber_position_t *aa_network_publication_find_spy(aa_network_publication_t *pub, int64_t subscription_registration_id)
{
    return aa_subscriber_positions_find(pub->spies, pub->spies_count, subscription_registration_id);
}

int32_t aa_network_publication_remove_spy(aa_network_publication_t *pub, int64_t subscription_registration_id)
{
    return aa_subscriber_positions_remove(pub->spies, &pub->spies_count, subscription_registration_id);
}

bool aa_network_publication_spies_finished_consuming(aa_network_publication_t *pub)
{
    int64_t producer_position = aa_network_publication_producer_position(pub);
    for (size_t i = 0; i < pub->spies_count; i++)
    {
        if (AA_SUBSCRIBER_STATE_RESTING != pub->spies[i].state && aa_get_int64_acquire(pub->spies[i].value) < producer_position)
        {
            return false;
        }
    }
    return true;
}

/* ---- sender ---- */

static void aa_network_publication_set_connected(aa_network_publication_t *pub, bool connected)
{
    if (connected != pub->is_connected)
    {
        pub->is_connected = connected;
        aa_put_int32_release(&pub->log.metadata->active_transport_count, connected ? 1 : 0);
        aa_logbuffer_set_connected(pub->log.metadata, connected);
        if (connected)
        {
            aa_doorbell_ring(aa_logbuffer_doorbell(pub->log.metadata));
        }
    }
}

/* Connected while it has receivers that its flow control counts as enough (the group min size of
 * min/tagged) or, with ssc, while spies read the log (Aeron's rule, reference 4.6). */
static void aa_network_publication_update_connected(aa_network_publication_t *pub)
{
    aa_flow_control_strategy_t *fc = pub->flow_control;
    /* a revoked publication is never connected again (aeron-wave3.md 4.1) */
    aa_network_publication_set_connected(pub, 0 == aa_get_int32_acquire(&pub->is_revoked) &&
        ((pub->has_receivers && fc->has_required_receivers(fc->state)) ||
        (pub->spies_simulate_connection && 1 == aa_get_int32_acquire(&pub->has_spies))));
}

/* Every datagram of the publication leaves here. A response publication sends to the address its first
 * status message came from, and before it has one sends nothing (as if lost: nobody listens yet). */
static int aa_network_publication_send_datagrams(aa_network_publication_t *pub, aa_udp_datagram_t *datagrams, size_t count)
{
    if (pub->is_response)
    {
        if (!pub->has_endpoint_address)
        {
            return 0;
        }
        for (size_t i = 0; i < count; i++)
        {
            datagrams[i].address = pub->endpoint_address;
            datagrams[i].addr_len = pub->endpoint_address_length;
        }
    }
    return aa_send_channel_endpoint_send(pub->endpoint, datagrams, count);
}

static int aa_network_publication_send_one(aa_network_publication_t *pub, uint8_t *buffer, size_t length)
{
    aa_udp_datagram_t datagram;
    memset(&datagram, 0, sizeof(datagram));
    datagram.buffer = buffer;
    datagram.length = length;
    return aa_network_publication_send_datagrams(pub, &datagram, 1);
}

static void aa_network_publication_setup_message_check(aa_network_publication_t *pub, int64_t now_ns, int64_t snd_pos)
{
    if (now_ns < pub->time_of_last_setup_ns + AA_NETWORK_PUBLICATION_SETUP_TIMEOUT_NS)
    {
        return;
    }
    if (pub->is_response && !pub->has_endpoint_address)
    {
        return;    /* a response publication learns where to send from its first status message */
    }
    uint8_t frame[AA_SETUP_HEADER_LENGTH];
    int32_t bits = pub->position_bits_to_shift;
    /* multicast and multi-destination-cast streams have group semantics: SETUP carries the GROUP flag; a
     * request (a response-correlation-id, not itself a response) asks for a response channel */
    uint8_t flags = (uint8_t)((pub->has_group_semantics ? AA_SETUP_HEADER_GROUP_FLAG : 0) |
        (!pub->is_response && AA_URI_RESPONSE_CORRELATION_ID_NONE != pub->response_correlation_id ?
        AA_SETUP_HEADER_SEND_RESPONSE_FLAG : 0));
    int32_t length = aa_udp_frame_encode_setup(
        frame, sizeof(frame), flags,
        aa_compute_term_offset_from_position(snd_pos, bits), pub->ids.session_id,
        pub->ids.stream_id, pub->ids.initial_term_id, aa_compute_term_id_from_position(snd_pos, bits, pub->ids.initial_term_id),
        pub->ids.term_length, pub->ids.mtu_length, pub->multicast_ttl);
    if (length > 0 && 1 == aa_network_publication_send_one(pub, frame, (size_t)length))
    {
        pub->time_of_last_setup_ns = now_ns;
        int64_t snd_lmt = aa_get_int64_volatile(pub->snd_lmt);
        int64_t new_lmt = pub->flow_control->on_setup(
            pub->flow_control->state, frame, (size_t)length, now_ns, snd_lmt, bits, snd_pos);
        if (new_lmt != snd_lmt)
        {
            aa_put_int64_release(pub->snd_lmt, new_lmt);
        }
    }
}

static int aa_network_publication_heartbeat_check(aa_network_publication_t *pub, int64_t now_ns, int64_t snd_pos)
{
    if (!pub->has_initial_connection ||
        now_ns < pub->time_of_last_data_or_heartbeat_ns + AA_NETWORK_PUBLICATION_HEARTBEAT_TIMEOUT_NS)
    {
        return 0;
    }
    uint8_t frame[AA_DATA_HEADER_LENGTH];
    int32_t bits = pub->position_bits_to_shift;
    /* a revoked stream's heartbeats carry EOS and REVOKED (flags 0xF0) whatever eos= says (aeron-wave3.md 4.1) */
    bool revoked = 1 == aa_get_int32_acquire(&pub->is_revoked);
    bool end_of_stream = revoked || (pub->signal_eos && 1 == aa_get_int32_acquire(&pub->is_end_of_stream));
    int32_t length = aa_udp_frame_encode_heartbeat(
        frame, sizeof(frame), aa_compute_term_offset_from_position(snd_pos, bits), pub->ids.session_id, pub->ids.stream_id,
        aa_compute_term_id_from_position(snd_pos, bits, pub->ids.initial_term_id), end_of_stream);
    if (length > 0 && revoked)
    {
        frame[5] |= AA_DATA_HEADER_REVOKED_FLAG;
    }
    if (length > 0 && 1 == aa_network_publication_send_one(pub, frame, (size_t)length))
    {
        aa_media_services_count(pub->services, AA_SYSTEM_COUNTER_HEARTBEATS_SENT, 1);
        pub->time_of_last_data_or_heartbeat_ns = now_ns;
        return length;
    }
    return 0;
}

/* Counts a sender back-pressure event (snd-bpe and the system counter) when the sender becomes
 * limited: data is waiting but the window is closed or too small for the next frame. */
static void aa_network_publication_track_limit(aa_network_publication_t *pub, bool limited)
{
    if (limited && !pub->is_flow_control_limited)
    {
        aa_put_int64_release(pub->snd_bpe, aa_get_int64_volatile(pub->snd_bpe) + 1);
        aa_media_services_count(pub->services, AA_SYSTEM_COUNTER_SENDER_FLOW_CONTROL_LIMITS, 1);
    }
    pub->is_flow_control_limited = limited;
}

static int aa_network_publication_send_data(aa_network_publication_t *pub, int64_t now_ns, int64_t snd_pos)
{
    int64_t snd_lmt = aa_get_int64_volatile(pub->snd_lmt);
    int32_t bits = pub->position_bits_to_shift;
    if (snd_pos >= snd_lmt)
    {
        aa_network_publication_track_limit(pub, aa_network_publication_producer_position(pub) > snd_pos);
        return 0;
    }

    aa_udp_datagram_t datagrams[AA_NETWORK_PUBLICATION_MAX_DATAGRAMS_PER_SEND];
    int64_t advances[AA_NETWORK_PUBLICATION_MAX_DATAGRAMS_PER_SEND];
    size_t count = 0;
    int64_t position = snd_pos;
    while (count < AA_NETWORK_PUBLICATION_MAX_DATAGRAMS_PER_SEND && position < snd_lmt)
    {
        int64_t window = snd_lmt - position;
        int32_t scan_limit = window < pub->ids.mtu_length ? (int32_t)window : pub->ids.mtu_length;
        int32_t term_offset = aa_compute_term_offset_from_position(position, bits);
        uint8_t *term_buffer = pub->log.term_buffers[aa_index_by_position(position, bits)];
        int32_t padding = 0;
        int32_t available = aa_term_scanner_scan_for_availability(
            term_buffer, term_offset, scan_limit, pub->ids.term_length, &padding);
        if (available <= 0)
        {
            break;
        }
        memset(&datagrams[count], 0, sizeof(datagrams[count]));
        datagrams[count].buffer = term_buffer + term_offset;
        datagrams[count].length = (size_t)available;
        advances[count] = available + padding;
        position += available + padding;
        count++;
    }
    if (0 == count)
    {
        /* Nothing fits: the next frame is committed but longer than the window left, or not written yet. */
        const uint8_t *term_buffer = pub->log.term_buffers[aa_index_by_position(snd_pos, bits)];
        aa_network_publication_track_limit(
            pub, aa_frame_length_volatile(term_buffer, aa_compute_term_offset_from_position(snd_pos, bits)) > 0);
        return 0;
    }
    aa_network_publication_track_limit(pub, false);

    int sent = aa_network_publication_send_datagrams(pub, datagrams, count);
    int bytes_sent = 0;
    for (int i = 0; i < sent; i++)
    {
        snd_pos += advances[i];
        bytes_sent += (int)datagrams[i].length;
    }
    if (sent > 0)
    {
        aa_put_int64_release(pub->snd_pos, snd_pos);
        pub->time_of_last_data_or_heartbeat_ns = now_ns;
    }
    return bytes_sent;
}

/* Whether a frame of this stream's term term_id starts at term_offset: its header says so (a NAK
 * naming an offset inside a frame would otherwise resend payload bytes as if they were frames). */
static bool aa_network_publication_is_frame_start(
    const aa_network_publication_t *pub, const uint8_t *term_buffer, int32_t term_id, int32_t term_offset)
{
    aa_data_header_t header;
    memcpy(&header, term_buffer + term_offset, sizeof(header));
    return header.term_offset == term_offset && header.term_id == term_id &&
        header.session_id == pub->ids.session_id && header.stream_id == pub->ids.stream_id;
}

static void aa_network_publication_resend(void *clientd, int32_t term_id, int32_t term_offset, size_t length)
{
    aa_network_publication_t *pub = clientd;
    uint8_t *term_buffer = pub->log.term_buffers[aa_index_by_term(pub->ids.initial_term_id, term_id)];
    if (!aa_network_publication_is_frame_start(pub, term_buffer, term_id, term_offset))
    {
        /* docs/security.md, Network: senders */
        aa_media_services_count(pub->services, AA_SYSTEM_COUNTER_INVALID_PACKETS, 1);
        return;
    }
    int64_t remaining = (int64_t)length;
    int32_t offset = term_offset;
    int64_t bytes_sent = 0;
    while (remaining > 0)
    {
        aa_udp_datagram_t datagrams[AA_NETWORK_PUBLICATION_RESEND_BATCH];
        size_t count = 0;
        int32_t batch_offset = offset;
        int64_t batch_remaining = remaining;
        while (count < AA_NETWORK_PUBLICATION_RESEND_BATCH && batch_remaining > 0 && batch_offset < pub->ids.term_length)
        {
            int32_t scan_limit = batch_remaining < pub->ids.mtu_length ? (int32_t)batch_remaining : pub->ids.mtu_length;
            int32_t padding = 0;
            int32_t available = aa_term_scanner_scan_for_availability(
                term_buffer, batch_offset, scan_limit, pub->ids.term_length, &padding);
            if (available <= 0)
            {
                break;
            }
            memset(&datagrams[count], 0, sizeof(datagrams[count]));
            datagrams[count].buffer = term_buffer + batch_offset;
            datagrams[count].length = (size_t)available;
            batch_offset += available + padding;
            batch_remaining -= available + padding;
            count++;
        }
        if (0 == count)
        {
            break;
        }
        int sent = aa_network_publication_send_datagrams(pub, datagrams, count);
        for (int i = 0; i < sent; i++)
        {
            bytes_sent += (int64_t)datagrams[i].length;
        }
        if (sent < (int)count)
        {
            break;
        }
        offset = batch_offset;
        remaining = batch_remaining;
    }
    if (bytes_sent > 0)
    {
        aa_media_services_count(pub->services, AA_SYSTEM_COUNTER_RETRANSMITS_SENT, 1);
        aa_media_services_count(pub->services, AA_SYSTEM_COUNTER_RETRANSMITTED_BYTES, bytes_sent);
    }
}

void aa_network_publication_on_added_to_sender(aa_network_publication_t *pub, int64_t now_ns)
{
    pub->time_of_last_setup_ns = now_ns - AA_NETWORK_PUBLICATION_SETUP_TIMEOUT_NS;
    pub->time_of_last_data_or_heartbeat_ns = now_ns;
    pub->time_of_last_status_message_ns = now_ns;
}

int aa_network_publication_send(aa_network_publication_t *pub, int64_t now_ns)
{
    int64_t snd_pos = aa_get_int64_volatile(pub->snd_pos);
    if (!pub->has_initial_connection || pub->is_setup_elicited)
    {
        aa_network_publication_setup_message_check(pub, now_ns, snd_pos);
    }
    int bytes_sent = aa_network_publication_send_data(pub, now_ns, snd_pos);
    if (0 == bytes_sent)
    {
        /* A heartbeat is sent but is no work: an idle publication must let the driver sleep deeply. */
        aa_network_publication_heartbeat_check(pub, now_ns, snd_pos);
        if (pub->spies_simulate_connection && !pub->has_receivers && 1 == aa_get_int32_acquire(&pub->has_spies))
        {
            /* nobody to send to: what the spies read counts as sent */
            int64_t spy_position = aa_get_int64_acquire(&pub->max_spy_position);
            if (spy_position > snd_pos)
            {
                aa_put_int64_release(pub->snd_pos, spy_position);
                aa_put_int64_release(pub->snd_lmt, spy_position);
            }
        }
    }
    snd_pos = aa_get_int64_volatile(pub->snd_pos);

    if (pub->has_receivers && now_ns > pub->time_of_last_status_message_ns + pub->connection_timeout_ns)
    {
        pub->has_receivers = false;
    }
    aa_retransmit_handler_process_timeouts(
        &pub->retransmit_handler, now_ns, snd_pos, aa_network_publication_resend, pub);
    int64_t snd_lmt = aa_get_int64_volatile(pub->snd_lmt);
    int64_t new_lmt = pub->flow_control->on_idle(
        pub->flow_control->state, now_ns, snd_lmt, snd_pos, 1 == aa_get_int32_volatile(&pub->is_end_of_stream));
    if (new_lmt != snd_lmt)
    {
        aa_put_int64_release(pub->snd_lmt, new_lmt);
    }
    /* after idle, which may have dropped receivers the strategy requires */
    aa_network_publication_update_connected(pub);
    return bytes_sent;
}

/* Reference 1.6: extra bytes other than an 8-byte group tag are logged, and the SM counts as untagged. */
static void aa_network_publication_log_malformed_tag(aa_network_publication_t *pub, const aa_udp_status_message_t *sm)
{
    char message[256];
    snprintf(message, sizeof(message),
        "status message of %" PRId32 " bytes from receiver %" PRId64 " (session %" PRId32 ", stream %" PRId32 "): "
        "only exactly 8 extra bytes (44 in all) carry a group tag, so flow control treats it as untagged",
        sm->header.frame_header.frame_length, sm->header.receiver_id, sm->header.session_id, sm->header.stream_id);
    aa_media_services_log_error(pub->services, AA_ERROR_CODE_GENERIC_ERROR, message);
}

/* docs/security.md, Network: senders: the receivers NAKs are honoured from. */
static void aa_network_publication_track_receiver(
    aa_network_publication_t *pub, const aa_udp_status_message_t *sm, const struct sockaddr_storage *source,
    socklen_t source_length, int64_t now_ns)
{
    int64_t position = aa_udp_compute_position(sm->header.consumption_term_id, sm->header.consumption_term_offset,
        pub->position_bits_to_shift, pub->ids.initial_term_id);
    aa_retransmit_receivers_sm_result_t result = aa_retransmit_receivers_on_status_message(
        &pub->retransmit_receivers, source, source_length, sm->header.receiver_id, position, sm->header.receiver_window,
        now_ns);
    if (AA_RETRANSMIT_RECEIVERS_REFUSED == result)
    {
        aa_media_services_count(pub->services, AA_SYSTEM_COUNTER_RECEIVERS_REFUSED, 1);
    }
    else if (AA_RETRANSMIT_RECEIVERS_NO_MEMORY == result)
    {
        aa_media_services_log_error(pub->services, ENOMEM, aa_errmsg());
    }
}

bool aa_network_publication_on_status_message(
    aa_network_publication_t *pub, const uint8_t *buffer, size_t length, const struct sockaddr_storage *source,
    socklen_t source_length, int64_t now_ns)
{
    aa_udp_status_message_t sm;
    if (aa_udp_frame_decode_status_message(buffer, length, &sm) < 0)
    {
        aa_media_services_count(pub->services, AA_SYSTEM_COUNTER_INVALID_PACKETS, 1);
        return false;
    }
    if (pub->is_response && !pub->has_endpoint_address)
    {
        /* reference wave3 1.2: the observed address, never resolved (behind a NAT, the translated one) */
        pub->endpoint_address = *source;
        pub->endpoint_address_length = source_length;
        pub->has_endpoint_address = true;
    }
    aa_flow_control_strategy_t *fc = pub->flow_control;
    if (NULL != fc->on_status_message_source)
    {
        fc->on_status_message_source(fc->state, source, source_length);
    }
    if (AA_STATUS_MESSAGE_HEADER_LENGTH != sm.header.frame_header.frame_length && !sm.has_group_tag)
    {
        aa_network_publication_log_malformed_tag(pub, &sm);
    }
    if (0 != (sm.header.frame_header.flags & AA_STATUS_MESSAGE_HEADER_SEND_SETUP_FLAG))
    {
        pub->is_setup_elicited = true;
        fc->on_trigger_send_setup(fc->state, buffer, length, now_ns);
        return true;
    }
    bool changed = !pub->has_receivers || pub->is_setup_elicited;
    int64_t snd_lmt = aa_get_int64_volatile(pub->snd_lmt);
    int64_t new_lmt = fc->on_status_message(
        fc->state, buffer, length, snd_lmt, pub->ids.initial_term_id, pub->position_bits_to_shift, now_ns);
    if (new_lmt != snd_lmt)
    {
        aa_put_int64_release(pub->snd_lmt, new_lmt);
        changed = true;
    }
    pub->time_of_last_status_message_ns = now_ns;
    aa_network_publication_track_receiver(pub, &sm, source, source_length, now_ns);
    pub->has_initial_connection = true;
    pub->is_setup_elicited = false;
    if (0 != (sm.header.frame_header.flags & AA_STATUS_MESSAGE_HEADER_EOS_FLAG))
    {
        changed = changed || 0 == aa_get_int32_volatile(&pub->has_received_unicast_eos);
        aa_put_int32_release(&pub->has_received_unicast_eos, 1);
    }
    bool was_connected = pub->is_connected;
    if (pub->is_response && !pub->has_receivers && AA_URI_RESPONSE_CORRELATION_ID_NONE < pub->response_correlation_id &&
        0 == (sm.header.frame_header.flags & AA_STATUS_MESSAGE_HEADER_EOS_FLAG))
    {
        /* the requester's image exists: its driver stops sending RSP_SETUP (reference wave3 1.2, step 9) */
        aa_media_services_response_connected(pub->services, pub->response_correlation_id);
    }
    pub->has_receivers = true;
    aa_network_publication_update_connected(pub);
    return changed || was_connected != pub->is_connected;
}

void aa_network_publication_on_nak(
    aa_network_publication_t *pub, const uint8_t *buffer, size_t length, const struct sockaddr_storage *source,
    socklen_t source_length, int64_t now_ns)
{
    (void)source_length;
    aa_nak_header_t nak;
    if (aa_udp_frame_decode_nak(buffer, length, &nak) < 0)
    {
        aa_media_services_count(pub->services, AA_SYSTEM_COUNTER_INVALID_PACKETS, 1);
        return;
    }
    /* docs/security.md, Network: senders */
    aa_retransmit_receiver_t *receiver = aa_retransmit_receivers_find(&pub->retransmit_receivers, source, now_ns);
    if (NULL == receiver)
    {
        aa_media_services_count(pub->services, AA_SYSTEM_COUNTER_NAKS_NOT_FROM_A_RECEIVER, 1);
        return;
    }
    aa_retransmit_nak_bounds_t bounds =
    {
        receiver->position, aa_retransmit_receivers_budget(&pub->retransmit_receivers, receiver, now_ns)
    };
    aa_retransmit_nak_armed_t armed = { 0, 0, false };
    aa_retransmit_nak_result_t result = aa_retransmit_handler_on_nak_bounded(
        &pub->retransmit_handler, nak.term_id, nak.term_offset, nak.length, aa_get_int64_volatile(pub->snd_pos),
        &bounds, now_ns, aa_network_publication_resend, pub, &armed);
    switch (result)
    {
        case AA_RETRANSMIT_NAK_INVALID:
            aa_media_services_count(pub->services, AA_SYSTEM_COUNTER_INVALID_PACKETS, 1);
            break;
        case AA_RETRANSMIT_NAK_POOL_OVERFLOW:
            aa_media_services_count(pub->services, AA_SYSTEM_COUNTER_RETRANSMIT_OVERFLOW, 1);
            break;
        case AA_RETRANSMIT_NAK_OUTSIDE_WINDOW:
            aa_media_services_count(pub->services, AA_SYSTEM_COUNTER_NAKS_OUTSIDE_RECEIVER_WINDOW, 1);
            break;
        case AA_RETRANSMIT_NAK_OVER_BUDGET:
            aa_media_services_count(pub->services, AA_SYSTEM_COUNTER_NAKS_OVER_RETRANSMIT_BUDGET, 1);
            break;
        case AA_RETRANSMIT_NAK_DELAYED:
        case AA_RETRANSMIT_NAK_RESENT:
            aa_retransmit_receivers_charge(receiver, armed.length);
            if (armed.is_budget_limited)
            {
                aa_media_services_count(pub->services, AA_SYSTEM_COUNTER_NAKS_OVER_RETRANSMIT_BUDGET, 1);
            }
            break;
        case AA_RETRANSMIT_NAK_DUPLICATE:
            break;
    }
}

void aa_network_publication_on_rttm(
    aa_network_publication_t *pub, const uint8_t *buffer, size_t length, const struct sockaddr_storage *source,
    socklen_t source_length)
{
    aa_rttm_header_t rttm;
    if (aa_udp_frame_decode_rttm(buffer, length, &rttm) < 0 ||
        0 == (rttm.frame_header.flags & AA_RTTM_HEADER_REPLY_FLAG))
    {
        return;
    }
    uint8_t frame[AA_RTTM_HEADER_LENGTH];
    int32_t frame_length = aa_udp_frame_encode_rttm_reply(frame, sizeof(frame), &rttm);
    if (frame_length > 0)
    {
        aa_udp_datagram_t datagram;
        memset(&datagram, 0, sizeof(datagram));
        datagram.buffer = frame;
        datagram.length = (size_t)frame_length;
        if (!pub->has_group_semantics || pub->endpoint->is_mdc)
        {
            /* multicast: receivers listen on the data group only, where the reply goes by default;
             * multi-destination-cast: to the one receiver that asked */
            datagram.address = *source;
            datagram.addr_len = source_length;
        }
        aa_send_channel_endpoint_send(pub->endpoint, &datagram, 1);
    }
}

void aa_network_publication_on_error(
    aa_network_publication_t *pub, const uint8_t *buffer, size_t length, const struct sockaddr_storage *source,
    int64_t now_ns)
{
    /* docs/security.md, Network: senders: an ERR frame makes flow control drop the receiver it names, so
     * only a receiver (an address that sent status messages) may send one */
    aa_retransmit_receiver_t *receiver = aa_retransmit_receivers_find(&pub->retransmit_receivers, source, now_ns);
    if (NULL == receiver)
    {
        aa_media_services_count(pub->services, AA_SYSTEM_COUNTER_ERROR_FRAMES_NOT_FROM_A_RECEIVER, 1);
        return;
    }
    pub->flow_control->on_error(pub->flow_control->state, buffer, length, now_ns);
    aa_udp_error_t error;
    if (receiver->has_reported_error || aa_udp_frame_decode_error(buffer, length, &error) < 0)
    {
        return;
    }
    /* the clients hear of a receiver's first ERR only (aeron-wave3.md 4.2) */
    receiver->has_reported_error = true;
    aa_publication_error_t message;
    memset(&message, 0, sizeof(message));
    message.registration_id = pub->registration_id;
    message.destination_registration_id = -1;
    message.session_id = error.header.session_id;
    message.stream_id = error.header.stream_id;
    message.receiver_id = error.header.receiver_id;
    message.group_tag = error.has_group_tag ? error.header.group_tag : -1;
    aa_publication_error_set_address(&message, source);
    message.error_code = error.header.error_code;
    message.error_message_length = (int32_t)error.text_length;
    aa_media_services_on_publication_error(pub->services, &message, error.text);
}
