#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "media/aa_publication_image.h"
#include "media/aa_receive_channel_endpoint.h"
#include "protocols/aa_udp_frames.h"
#include "media/aa_media_services.h"
#include "logbuffer/aa_term.h"
#include "util/aa_error.h"

int aa_publication_image_init(
    aa_publication_image_t *image, const aa_publication_image_params_t *params, int64_t now_ns,
    const aa_media_services_t *services)
{
    image->correlation_id = params->correlation_id;
    image->ids = params->ids;
    image->position_bits_to_shift = aa_position_bits_to_shift(params->ids.term_length);
    image->window_length = params->window_length;
    image->congestion_control.window_length = params->window_length;   /* fixed until the conductor sets cc */
    image->is_reliable = params->is_reliable;
    image->services = services;
    image->join_position = aa_udp_compute_position(
        params->active_term_id, params->term_offset, image->position_bits_to_shift, params->ids.initial_term_id);

    image->is_group = params->is_group;
    image->setup_flags = params->setup_flags;
    image->response_session_id = AA_PUBLICATION_IMAGE_NULL_RESPONSE_SESSION_ID;
    image->frame_connection = -1;
    image->last_response_session_id = AA_PUBLICATION_IMAGE_NULL_RESPONSE_SESSION_ID;
    image->loss_report_offset = AA_LOSS_REPORT_NO_ENTRY;
    if (NULL != params->channel && NULL == (image->channel = strdup(params->channel)))
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory copying an image's channel");
        return -1;
    }
    aa_nak_delay_generator_t delay;
    int rc_delay = params->is_group ?
        aa_nak_delay_generator_init_optimal_multicast(
            &delay, params->nak_multicast_max_backoff_ns, params->nak_multicast_group_size, params->nak_delay_seed) :
        aa_nak_delay_generator_init_static(&delay, params->nak_delay_ns, params->nak_retry_delay_ratio);
    if (rc_delay < 0 ||
        aa_loss_detector_init(&image->loss_detector, &delay, params->ids.term_length, params->ids.initial_term_id) < 0 ||
        aa_receiver_window_init(
            &image->window, params->ids.term_length, params->ids.initial_term_id, params->window_length,
            params->status_message_timeout_ns, image->join_position, now_ns) < 0)
    {
        return -1;
    }
    image->hwm_position = image->join_position;
    image->rebuild_position = image->join_position;
    image->clean_position = image->join_position;
    image->min_subscriber_position = image->join_position;
    image->max_subscriber_position = image->join_position;
    image->time_of_last_packet_ns = now_ns;
    image->end_of_stream_position = INT64_MAX;
    image->state = AA_PUBLICATION_IMAGE_STATE_ACTIVE;
    image->time_of_last_state_change_ns = now_ns;
    return 0;
}

void aa_publication_image_free(aa_publication_image_t *image)
{
    if (NULL != image)
    {
        aa_congestion_control_delete(&image->congestion_control);
        aa_media_services_forget_mapping(image->services, &image->mapped);
        aa_unmap(&image->mapped);
        free(image->subscribers);
        free(image->channel);
        free(image);
    }
}

/* ---- conductor ---- */

int aa_publication_image_add_subscriber(
    aa_publication_image_t *image, int64_t subscription_registration_id, int64_t client_id, int32_t counter_id,
    volatile int64_t *value, bool is_tether, int64_t now_ns)
{
    return aa_subscriber_positions_add(
        &image->subscribers, &image->subscribers_count, &image->subscribers_capacity, subscription_registration_id,
        client_id, counter_id, value, is_tether, now_ns);
}

int32_t aa_publication_image_remove_subscriber(aa_publication_image_t *image, int64_t subscription_registration_id)
{
    return aa_subscriber_positions_remove(image->subscribers, &image->subscribers_count, subscription_registration_id);
}

aa_subscriber_position_t *aa_publication_image_find_subscriber(
    aa_publication_image_t *image, int64_t subscription_registration_id)
{
    return aa_subscriber_positions_find(image->subscribers, image->subscribers_count, subscription_registration_id);
}

int64_t aa_publication_image_join_position(aa_publication_image_t *image)
{
    /* the active subscribers' (a dropped untethered one is behind: it rejoins where the others are) */
    int64_t position = aa_get_int64_acquire(image->rcv_pos);
    for (size_t i = 0; i < image->subscribers_count; i++)
    {
        if (AA_SUBSCRIBER_STATE_ACTIVE == image->subscribers[i].state)
        {
            int64_t p = aa_get_int64_acquire(image->subscribers[i].value);
            position = p < position ? p : position;
        }
    }
    return position;
}

int aa_publication_image_update_subscriber_positions(aa_publication_image_t *image)
{
    if (0 == image->subscribers_count)
    {
        return 0;
    }
    /* A resting untethered subscriber no longer paces the stream; a lingering one still does
     * (aeron-wave3.md 5). With every one resting the stream runs on at what was received. */
    int64_t min_position = INT64_MAX;
    int64_t max_position = INT64_MIN;
    for (size_t i = 0; i < image->subscribers_count; i++)
    {
        if (AA_SUBSCRIBER_STATE_RESTING != image->subscribers[i].state)
        {
            int64_t p = aa_get_int64_acquire(image->subscribers[i].value);
            min_position = p < min_position ? p : min_position;
            max_position = p > max_position ? p : max_position;
        }
    }
    if (INT64_MAX == min_position)
    {
        min_position = aa_get_int64_acquire(image->rcv_pos);
        max_position = min_position;
    }
    int work_count = 0;
    if (min_position != aa_get_int64_volatile(&image->min_subscriber_position))
    {
        aa_put_int64_release(&image->min_subscriber_position, min_position);
        work_count = 1;
    }
    if (max_position != aa_get_int64_volatile(&image->max_subscriber_position))
    {
        aa_put_int64_release(&image->max_subscriber_position, max_position);
        work_count = 1;
    }
    return work_count;
}

bool aa_publication_image_is_drained(aa_publication_image_t *image)
{
    int64_t rcv_pos = aa_get_int64_acquire(image->rcv_pos);
    for (size_t i = 0; i < image->subscribers_count; i++)
    {
        if (AA_SUBSCRIBER_STATE_ACTIVE == image->subscribers[i].state &&
            aa_get_int64_acquire(image->subscribers[i].value) < rcv_pos)
        {
            return false;
        }
    }
    return true;
}

/* ---- receiver ---- */

void aa_publication_image_reject(aa_publication_image_t *image, const char *reason, size_t reason_length)
{
    if (0 != image->is_rejected)
    {
        return;
    }
    reason_length = reason_length < AA_REJECT_IMAGE_REASON_MAX_LENGTH ? reason_length : AA_REJECT_IMAGE_REASON_MAX_LENGTH;
    memcpy(image->reject_reason, reason, reason_length);
    image->reject_reason[reason_length] = '\0';
    image->reject_reason_length = (int32_t)reason_length;
    aa_put_int32_release(&image->is_rejected, 1);
}

/* An EOS heartbeat came (on the connection of the frame, for a multi-destination subscription): whether
 * every connection that is live (a frame within AA_RECEIVE_DESTINATION_TIMEOUT_NS) is at its end of
 * stream; an image from one source has one connection (aeron-wave3.md 4.1: "once all connections are
 * at EOS"). A connection gone silent is not waited for: the other ones' heartbeats keep the image live. */
static bool aa_publication_image_all_connections_at_eos(aa_publication_image_t *image, int64_t now_ns)
{
    if (0 == image->connections_count)
    {
        return true;
    }
    if (image->frame_connection >= 0 && (size_t)image->frame_connection < image->connections_count)
    {
        image->connections[image->frame_connection].is_end_of_stream = true;
    }
    for (size_t i = 0; i < image->connections_count; i++)
    {
        const aa_publication_image_connection_t *connection = &image->connections[i];
        if (!connection->is_end_of_stream && now_ns <= connection->time_of_last_frame_ns + AA_RECEIVE_DESTINATION_TIMEOUT_NS)
        {
            return false;
        }
    }
    return true;
}

void aa_publication_image_insert_packet(
    aa_publication_image_t *image, const uint8_t *buffer, size_t length, bool is_heartbeat, int64_t now_ns)
{
    if (1 == aa_get_int32_acquire(&image->is_rejected))
    {
        return;   /* rejected: every later packet is dropped, heartbeats too (aeron-wave3.md 4.2) */
    }
    aa_data_header_t header;
    memcpy(&header, buffer, sizeof(header));
    const aa_media_services_t *services = image->services;
    switch (aa_receiver_window_check_packet(&image->window, header.term_id, header.term_offset, (int32_t)length, is_heartbeat))
    {
        case AA_RECEIVER_WINDOW_ACCEPT:
            break;
        case AA_RECEIVER_WINDOW_OVERRUN:
            aa_media_services_count(services, AA_SYSTEM_COUNTER_FLOW_CONTROL_OVER_RUNS, 1);
            return;
        case AA_RECEIVER_WINDOW_UNDERRUN:
            aa_media_services_count(services, AA_SYSTEM_COUNTER_FLOW_CONTROL_UNDER_RUNS, 1);
            aa_put_int64_release(&image->time_of_last_packet_ns, now_ns);
            return;
        default:
            return;
    }

    int64_t position = aa_udp_compute_position(
        header.term_id, header.term_offset, image->position_bits_to_shift, image->ids.initial_term_id);
    int64_t proposed_hwm = position;
    if (is_heartbeat)
    {
        aa_media_services_count(services, AA_SYSTEM_COUNTER_HEARTBEATS_RECEIVED, 1);
        /* a revoked stream's heartbeats carry EOS too; either counts once every connection is at EOS */
        const bool is_end_of_stream = aa_udp_data_flags_is_end_of_stream(header.frame_header.flags) &&
            aa_publication_image_all_connections_at_eos(image, now_ns);
        if (is_end_of_stream && !image->has_end_of_stream_heartbeat)
        {
            image->has_end_of_stream_heartbeat = true;
            image->end_of_stream_position = position;
        }
        if (is_end_of_stream && aa_udp_data_flags_is_revoked(header.frame_header.flags) && 0 == image->is_revoked)
        {
            /* aeron-wave3.md 4.1: the stream ends here, now; what was not received is lost (no NAKs) */
            aa_logbuffer_set_publication_revoked(image->log.metadata);
            aa_put_int64_release(&image->log.metadata->end_of_stream_position, position);
            aa_put_int32_release(&image->is_revoked, 1);
            aa_put_int32_release(&image->is_end_of_stream, 1);
            aa_doorbell_ring(aa_logbuffer_doorbell(image->log.metadata));
            aa_media_services_count(services, AA_SYSTEM_COUNTER_PUBLICATION_IMAGES_REVOKED, 1);
        }
    }
    else
    {
        uint8_t *term_buffer = image->log.term_buffers[aa_index_by_position(position, image->position_bits_to_shift)];
        /* A frame already there (a duplicate, or a retransmit of what arrived meanwhile) stays as it is. */
        if (0 == aa_frame_length_volatile(term_buffer, header.term_offset))
        {
            aa_term_rebuilder_insert(term_buffer, header.term_offset, buffer, length);
            aa_doorbell_ring(aa_logbuffer_doorbell(image->log.metadata));
        }
        proposed_hwm = position + (int64_t)length;
    }
    if (proposed_hwm > image->hwm_position)
    {
        image->hwm_position = proposed_hwm;
        aa_put_int64_release(image->rcv_hwm, proposed_hwm);
    }
    aa_put_int64_release(&image->time_of_last_packet_ns, now_ns);
}

void aa_publication_image_on_connection_frame(
    aa_publication_image_t *image, struct aa_udp_transport_stct *transport, const struct sockaddr_storage *address,
    socklen_t address_length, int64_t now_ns)
{
    for (size_t i = 0; i < image->connections_count; i++)
    {
        aa_publication_image_connection_t *connection = &image->connections[i];
        if (connection->transport == transport)
        {
            image->frame_connection = (int32_t)i;
            connection->time_of_last_frame_ns = now_ns;
            if (!aa_udp_address_equals(&connection->control_address, address))
            {
                connection->control_address = *address;
                connection->control_address_length = address_length;
            }
            return;
        }
    }
    image->frame_connection = -1;
    if (image->connections_count < AA_PUBLICATION_IMAGE_MAX_CONNECTIONS)
    {
        image->frame_connection = (int32_t)image->connections_count;
        aa_publication_image_connection_t *connection = &image->connections[image->connections_count++];
        connection->transport = transport;
        connection->control_address = *address;
        connection->control_address_length = address_length;
        connection->time_of_last_frame_ns = now_ns;
        connection->is_end_of_stream = false;
    }
}

void aa_publication_image_remove_connection(aa_publication_image_t *image, struct aa_udp_transport_stct *transport)
{
    for (size_t i = 0; i < image->connections_count; i++)
    {
        if (image->connections[i].transport == transport)
        {
            image->connections[i] = image->connections[--image->connections_count];
            image->frame_connection = -1;
            return;
        }
    }
}

/* A status message or NAK: to the source over the endpoint's socket, or, for a multi-destination
 * subscription, over every transport the image's frames came on. Returns whether one was sent. */
static bool aa_publication_image_send_control(aa_publication_image_t *image, const uint8_t *frame, size_t length)
{
    if (0 == image->connections_count)
    {
        return 1 == aa_receive_channel_endpoint_send_to(
            image->endpoint, frame, length, &image->control_address, image->control_address_length);
    }
    bool sent = false;
    for (size_t i = 0; i < image->connections_count; i++)
    {
        const aa_publication_image_connection_t *connection = &image->connections[i];
        sent |= 1 == aa_receive_channel_endpoint_send_on(image->endpoint, connection->transport, frame, length,
            &connection->control_address, connection->control_address_length);
    }
    return sent;
}

static void aa_publication_image_send_nak(aa_publication_image_t *image, const aa_loss_detector_result_t *loss)
{
    uint8_t frame[AA_NAK_HEADER_LENGTH];
    int32_t length = aa_udp_frame_encode_nak(
        frame, sizeof(frame), image->ids.session_id, image->ids.stream_id, loss->term_id, loss->term_offset, loss->length);
    if (length > 0 && aa_publication_image_send_control(image, frame, (size_t)length))
    {
        aa_media_services_count(image->services, AA_SYSTEM_COUNTER_NAK_MESSAGES_SENT, 1);
    }
}

static void aa_publication_image_send_status_message(aa_publication_image_t *image, const aa_receiver_window_sm_t *sm)
{
    uint8_t frame[AA_STATUS_MESSAGE_WITH_GROUP_TAG_LENGTH];
    uint8_t flags = 1 == aa_get_int32_acquire(&image->is_draining) ? AA_STATUS_MESSAGE_HEADER_EOS_FLAG : 0;
    const aa_receive_channel_endpoint_params_t *endpoint_params = &image->endpoint->params;
    int32_t length = aa_udp_frame_encode_status_message(
        frame, sizeof(frame), flags, image->ids.session_id, image->ids.stream_id, sm->term_id, sm->term_offset,
        sm->window_length, image->endpoint->receiver_id,
        endpoint_params->has_group_tag ? &endpoint_params->group_tag : NULL);
    if (length > 0 && aa_publication_image_send_control(image, frame, (size_t)length))
    {
        aa_media_services_count(image->services, AA_SYSTEM_COUNTER_STATUS_MESSAGES_SENT, 1);
    }
}

/* A rejected image answers with an ERR frame where it would send a status message (aeron-wave3.md 4.2). */
static void aa_publication_image_send_error(aa_publication_image_t *image)
{
    uint8_t frame[AA_ERROR_HEADER_LENGTH + AA_REJECT_IMAGE_REASON_MAX_LENGTH];
    const aa_receive_channel_endpoint_params_t *endpoint_params = &image->endpoint->params;
    int32_t length = aa_udp_frame_encode_error(
        frame, sizeof(frame), image->ids.session_id, image->ids.stream_id, image->endpoint->receiver_id,
        endpoint_params->has_group_tag ? &endpoint_params->group_tag : NULL, AA_ERROR_CODE_IMAGE_REJECTED,
        image->reject_reason, (size_t)image->reject_reason_length);
    if (length > 0 && aa_publication_image_send_control(image, frame, (size_t)length))
    {
        aa_media_services_count(image->services, AA_SYSTEM_COUNTER_ERROR_FRAMES_SENT, 1);
    }
}

static bool aa_publication_image_is_response_session(int64_t response_session_id)
{
    return response_session_id >= INT32_MIN && response_session_id <= INT32_MAX;
}

/* RSP_SETUP to the requester (reference wave3 1.2, step 5): the request's source, over the transport(s) its
 * frames came on, i.e. where the status messages go. */
static void aa_publication_image_send_response_setup(aa_publication_image_t *image, int64_t response_session_id)
{
    uint8_t frame[AA_RESPONSE_SETUP_HEADER_LENGTH];
    int32_t length = aa_udp_frame_encode_response_setup(
        frame, sizeof(frame), image->ids.session_id, image->ids.stream_id, (int32_t)response_session_id);
    if (length > 0)
    {
        aa_publication_image_send_control(image, frame, (size_t)length);
    }
    image->last_response_session_id = response_session_id;
}

/* An RTT measurement asking for a reply (REPLY flag), stamped with the receiver's clock (reference 1.8). */
static void aa_publication_image_send_rttm(aa_publication_image_t *image, int64_t now_ns)
{
    uint8_t frame[AA_RTTM_HEADER_LENGTH];
    int32_t length = aa_udp_frame_encode_rttm(
        frame, sizeof(frame), AA_RTTM_HEADER_REPLY_FLAG, image->ids.session_id, image->ids.stream_id, now_ns, 0,
        image->endpoint->receiver_id);
    if (length > 0)
    {
        aa_publication_image_send_control(image, frame, (size_t)length);
    }
}

/* A loss observation (a NAK due or a gap filled, as Aeron's onGapDetected) in the driver's loss report:
 * the image's first creates its entry. Off the message path: only when a NAK timer fires. */
static void aa_publication_image_report_loss(aa_publication_image_t *image, int32_t length)
{
    const aa_media_services_t *services = image->services;
    aa_loss_reporter_t *reporter = services->loss_reporter;
    if (NULL == reporter || AA_LOSS_REPORT_FULL == image->loss_report_offset)
    {
        return;
    }
    int64_t now_ms = NULL != services->clock ? aa_clock_epoch_time(services->clock) : aa_epoch_clock();
    if (image->loss_report_offset >= 0)
    {
        aa_loss_reporter_record_observation(reporter, image->loss_report_offset, length, now_ms);
        return;
    }
    const char *channel = NULL != image->channel ? image->channel : "";
    int64_t offset = aa_loss_reporter_create_entry(
        reporter, length, now_ms, image->ids.session_id, image->ids.stream_id, channel, strlen(channel),
        image->source_identity, strlen(image->source_identity));
    if (offset < 0)
    {
        image->loss_report_offset = AA_LOSS_REPORT_FULL;
        char message[512];
        snprintf(message, sizeof(message), "the loss of session %" PRId32 " stream %" PRId32 " from %s is not reported: %s",
            image->ids.session_id, image->ids.stream_id, image->source_identity, aa_errmsg());
        aa_media_services_log_error(services, AA_ERROR_CODE_GENERIC_ERROR, message);
        return;
    }
    image->loss_report_offset = offset;
}

int aa_publication_image_track_rebuild(aa_publication_image_t *image, int64_t now_ns)
{
    int work_count = 0;
    int64_t min_subscriber_position = aa_get_int64_acquire(&image->min_subscriber_position);
    int64_t max_subscriber_position = aa_get_int64_acquire(&image->max_subscriber_position);
    int64_t rebuild_position = image->rebuild_position > max_subscriber_position ?
        image->rebuild_position : max_subscriber_position;

    aa_loss_detector_result_t loss;
    aa_loss_detector_scan(
        &image->loss_detector, (const uint8_t *const *)image->log.term_buffers, rebuild_position, image->hwm_position,
        now_ns, &loss);
    if (loss.rebuild_position > image->rebuild_position)
    {
        image->rebuild_position = loss.rebuild_position;
        aa_put_int64_release(image->rcv_pos, loss.rebuild_position);
        work_count++;
    }
    if (loss.send_nak)
    {
        aa_publication_image_report_loss(image, loss.length);
        if (1 == image->is_revoked)
        {
            /* a revoked stream is not repaired (aeron-wave3.md 4.1) */
        }
        else if (image->is_reliable)
        {
            aa_publication_image_send_nak(image, &loss);
        }
        else
        {
            uint8_t *term_buffer =
                image->log.term_buffers[aa_index_by_term(image->ids.initial_term_id, loss.term_id)];
            if (aa_loss_detector_fill_gap(
                term_buffer, loss.term_id, loss.term_offset, loss.length, image->ids.session_id, image->ids.stream_id))
            {
                aa_media_services_count(image->services, AA_SYSTEM_COUNTER_LOSS_GAP_FILLS, 1);
                aa_doorbell_ring(aa_logbuffer_doorbell(image->log.metadata));
            }
        }
        work_count++;
    }

    if (image->has_end_of_stream_heartbeat && 0 == image->is_end_of_stream &&
        image->rebuild_position >= image->end_of_stream_position)
    {
        aa_put_int64_release(&image->log.metadata->end_of_stream_position, image->end_of_stream_position);
        aa_put_int32_release(&image->is_end_of_stream, 1);
        aa_doorbell_ring(aa_logbuffer_doorbell(image->log.metadata));
        work_count++;
    }

    /* The window of the next SM comes from congestion control, told of a gap seen for the first time. */
    aa_congestion_control_rebuild_t rebuild =
    {
        .now_ns = now_ns,
        .new_consumption_position = min_subscriber_position,
        .last_sm_position = image->window.last_sm_position,
        .hwm_position = image->hwm_position,
        .starting_rebuild_position = rebuild_position,
        .ending_rebuild_position = image->rebuild_position,
        .loss_occurred = loss.new_gap,
    };
    bool force_sm = false;
    int32_t window_length = aa_congestion_control_on_track_rebuild(&image->congestion_control, &rebuild, &force_sm);
    if (aa_receiver_window_on_track_rebuild(&image->window, min_subscriber_position, window_length, force_sm))
    {
        aa_mapped_log_clean_to(
            &image->log, &image->clean_position, min_subscriber_position - image->ids.term_length,
            image->ids.term_length, image->position_bits_to_shift);
    }
    aa_receiver_window_sm_t sm;
    int64_t response_session_id = aa_get_int64_acquire(&image->response_session_id);
    if (aa_receiver_window_poll_sm(&image->window, now_ns, &sm))
    {
        if (1 == aa_get_int32_acquire(&image->is_rejected))
        {
            aa_publication_image_send_error(image);     /* a rejected image answers with ERR only */
        }
        else
        {
            aa_publication_image_send_status_message(image, &sm); /* feedback, no work of its own */
            if (aa_publication_image_is_response_session(response_session_id))
            {
                aa_publication_image_send_response_setup(image, response_session_id);
            }
        }
    }
    else if (aa_publication_image_is_response_session(response_session_id) &&
        response_session_id != image->last_response_session_id && 0 == aa_get_int32_acquire(&image->is_rejected))
    {
        aa_publication_image_send_response_setup(image, response_session_id);    /* a response publication linked now */
    }
    if (aa_congestion_control_should_measure_rtt(&image->congestion_control, now_ns))
    {
        aa_congestion_control_on_rttm_sent(&image->congestion_control, now_ns);
        aa_publication_image_send_rttm(image, now_ns);
    }
    return work_count;
}

void aa_publication_image_on_rttm_reply(
    aa_publication_image_t *image, int64_t echo_timestamp_ns, int64_t reception_delta_ns, int64_t now_ns)
{
    aa_congestion_control_on_rttm(&image->congestion_control, now_ns, now_ns - echo_timestamp_ns - reception_delta_ns);
}
