/*
 * The conductor's publication images: created when the receiver sees a SETUP of a subscribed stream,
 * linked to the matching subscriptions, drained when their publisher goes or falls silent, and
 * freed once the receiver has let go of them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver/aa_driver_conductor_private.h"
#include "util/aa_clock.h"
#include "util/aa_error.h"

/* The receiver writes up to an image's high-water mark: its mapping is populated ahead of that. */
static int64_t aa_conductor_image_prefault_position(const void *image)
{
    return aa_get_int64_volatile(((const aa_publication_image_t *)image)->rcv_hwm);
}

bool aa_conductor_link_matches_image(const aa_subscription_link_t *link, const aa_publication_image_t *image)
{
    return link->endpoint == image->endpoint && link->stream_id == image->ids.stream_id &&
        aa_conductor_link_matches_session(link, image->ids.session_id);
}

/* Gives a subscription a sub-pos counter on an image at join_position and tells its client. */
static int aa_conductor_image_add_subscriber(
    void *image, const aa_subscription_link_t *link, int32_t counter_id, volatile int64_t *value, int64_t now_ns)
{
    return aa_publication_image_add_subscriber(
        image, link->registration_id, link->client_id, counter_id, value, link->is_tether, now_ns);
}

/* The channel a subscriber's image events name: its subscription's (the endpoint's while none matches). */
static const char *aa_conductor_image_subscriber_channel(
    aa_driver_conductor_t *conductor, const aa_publication_image_t *image, int64_t subscription_registration_id)
{
    for (size_t j = 0; j < conductor->subscription_links_count; j++)
    {
        if (conductor->subscription_links[j].registration_id == subscription_registration_id)
        {
            return conductor->subscription_links[j].channel;
        }
    }
    return image->endpoint->channel->canonical_form;
}

void aa_conductor_link_image_subscriber(
    aa_driver_conductor_t *conductor, aa_publication_image_t *image, aa_subscription_link_t *link,
    int64_t join_position, int64_t now_ns, int64_t now_ms)
{
    if (NULL != aa_publication_image_find_subscriber(image, link->registration_id))
    {
        return;
    }
    const aa_conductor_log_reader_t reader =
    {
        image, aa_conductor_image_add_subscriber, "subscriber to an image", image->correlation_id, image->ids.session_id,
        image->ids.stream_id, image->log_path, image->source_identity
    };
    aa_conductor_link_log_reader(conductor, &reader, link, join_position, now_ns, now_ms);
}

/* The image goes away: its subscribers are told, their counters freed, and the receiver asked to
 * let go of it (the conductor frees it once the receiver did). */
void aa_conductor_image_begin_linger(aa_driver_conductor_t *conductor, aa_publication_image_t *image, int64_t now_ns, int64_t now_ms)
{
    if (aa_driver_receiver_proxy_remove_image(conductor->receiver, image) < 0)
    {
        aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR, aa_errmsg());
        return; /* tried again on the next timer tick */
    }
    for (size_t i = 0; i < image->subscribers_count; i++)
    {
        aa_subscriber_position_t *s = &image->subscribers[i];
        if (AA_SUBSCRIBER_STATE_ACTIVE == s->state)   /* a dropped untethered one was told already */
        {
            aa_conductor_send_unavailable_image(conductor, image->correlation_id, s->subscription_registration_id,
                image->ids.stream_id, aa_conductor_image_subscriber_channel(conductor, image, s->subscription_registration_id));
        }
        aa_conductor_free_counter(conductor, s->counter_id, now_ms);
    }
    image->subscribers_count = 0;
    aa_put_int32_release(&image->is_draining, 1);
    image->state = AA_PUBLICATION_IMAGE_STATE_LINGER;
    image->time_of_last_state_change_ns = now_ns;
}

static void aa_conductor_image_begin_draining(aa_publication_image_t *image, int64_t now_ns)
{
    aa_put_int32_release(&image->is_draining, 1);
    image->state = AA_PUBLICATION_IMAGE_STATE_DRAINING;
    image->time_of_last_state_change_ns = now_ns;
}

static void aa_conductor_free_image(aa_driver_conductor_t *conductor, aa_publication_image_t *image, int64_t now_ms)
{
    aa_conductor_free_counter(conductor, image->rcv_hwm_counter_id, now_ms);
    aa_conductor_free_counter(conductor, image->rcv_pos_counter_id, now_ms);
    for (int i = 0; i < AA_CONGESTION_CONTROL_COUNTERS_MAX; i++)
    {
        aa_conductor_free_counter(conductor, image->cc_counter_ids[i], now_ms);
    }
    for (size_t i = 0; i < image->subscribers_count; i++)
    {
        aa_conductor_free_counter(conductor, image->subscribers[i].counter_id, now_ms);
    }
    aa_conductor_remove_log(conductor, image->mapped.length, image->log_path);
    if (NULL != image->endpoint)
    {
        image->endpoint->image_refs--;
    }
    aa_publication_image_free(image);
}

/* The image's congestion control instance, with the per-image counters the strategy asks for (cubic:
 * rcv-cc-cubic-rtt and rcv-cc-cubic-wnd, type 10, keyed like rcv-hwm). Returns 0, or -1 with the
 * error set (the caller frees the image, and with it what was allocated here). */
static int aa_conductor_create_image_congestion_control(
    aa_driver_conductor_t *conductor, aa_publication_image_t *image, const aa_congestion_control_choice_t *choice,
    aa_congestion_control_params_t *params, const char *channel, int64_t now_ns, int64_t now_ms)
{
    int count = aa_congestion_control_counters_count(choice);
    for (int i = 0; i < count; i++)
    {
        image->cc_counter_ids[i] = aa_conductor_allocate_stream_counter(
            conductor, AA_COUNTER_TYPE_PER_IMAGE, aa_congestion_control_counter_label(choice, i), image->correlation_id,
            image->ids.session_id, image->ids.stream_id, channel, now_ms);
        if (image->cc_counter_ids[i] < 0)
        {
            return -1;
        }
        params->counters[i] = aa_counters_manager_addr(&conductor->counters, image->cc_counter_ids[i]);
    }
    return aa_congestion_control_create(&image->congestion_control, choice, params, now_ns);
}

typedef struct aa_create_image_args_stct
{
    aa_receive_channel_endpoint_t *endpoint;
    aa_setup_header_t setup;
    struct sockaddr_storage source;
    socklen_t source_length;
}
aa_create_image_args_t;

static void aa_conductor_create_publication_image(aa_driver_conductor_t *conductor, const aa_create_image_args_t *args)
{
    aa_driver_context_t *ctx = conductor->ctx;
    aa_receive_channel_endpoint_t *endpoint = args->endpoint;
    const aa_setup_header_t *setup = &args->setup;
    int64_t now_ns = aa_clock_nano_time(&conductor->ctx->clock);
    int64_t now_ms = aa_clock_epoch_time(&conductor->ctx->clock);
    if (endpoint->is_closing)
    {
        return;
    }
    int32_t images_of_endpoint = 0;
    int32_t images_of_stream = 0;
    for (size_t i = 0; i < conductor->images_count; i++)
    {
        aa_publication_image_t *image = conductor->images[i];
        if (image->endpoint == endpoint && image->ids.session_id == setup->session_id &&
            image->ids.stream_id == setup->stream_id && AA_PUBLICATION_IMAGE_STATE_ACTIVE == image->state)
        {
            return;
        }
        if (image->endpoint == endpoint)
        {
            images_of_endpoint++;
            images_of_stream += image->ids.stream_id == setup->stream_id ? 1 : 0;
        }
    }
    /* The receiver refuses SETUPs beyond the limits; requests it queued before their sessions expired
     * are held to them here, lingering images included (docs/security.md, Network: receivers). */
    if ((endpoint->params.max_images > 0 && images_of_endpoint >= endpoint->params.max_images) ||
        (endpoint->params.max_sessions_per_stream > 0 && images_of_stream >= endpoint->params.max_sessions_per_stream))
    {
        aa_driver_conductor_count(conductor, AA_SYSTEM_COUNTER_SETUPS_REFUSED_IMAGE_LIMIT, 1);
        return;
    }
    const aa_subscription_link_t *first_link = NULL;
    for (size_t i = 0; i < conductor->subscription_links_count && NULL == first_link; i++)
    {
        aa_subscription_link_t *link = &conductor->subscription_links[i];
        if (link->endpoint == endpoint && link->stream_id == setup->stream_id &&
            aa_conductor_link_matches_session(link, setup->session_id))
        {
            first_link = link;
        }
    }
    if (NULL == first_link)
    {
        return;
    }
    /* the subscriptions of an endpoint agree on sparse= (checked when they are added) */
    const bool sparse = first_link->is_sparse;
    /* per stream: the channel that opened the receive endpoint sets them (aeron-wave3.md 5; checked then) */
    aa_untethered_timeouts_t untethered;
    if (aa_conductor_parse_untethered_timeouts(conductor, &endpoint->channel->uri, &untethered) < 0)
    {
        aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR, aa_errmsg());
        return;
    }

    char source[AA_UDP_ADDRESS_FORMAT_MAX_LENGTH];
    if (aa_udp_address_format(source, sizeof(source), &args->source) < 0)
    {
        snprintf(source, sizeof(source), "%s", "unknown");
    }
    int32_t window_length = 0;
    aa_congestion_control_choice_t congestion_control;
    aa_congestion_control_params_t cc_params =
    {
        .session_id = setup->session_id,
        .stream_id = setup->stream_id,
        .term_length = setup->term_length,
        .mtu_length = setup->mtu,
        .initial_window_length = endpoint->params.window_length,
        .socket_rcvbuf_length = endpoint->transport.socket_rcvbuf_length,
        .cubic =
        {
            .measure_rtt = ctx->cubic_congestion_control_measure_rtt,
            .tcp_mode = ctx->cubic_congestion_control_tcp_mode,
            .initial_rtt_ns = ctx->cubic_congestion_control_initial_rtt_ns,
        },
    };
    int32_t term_count = (int32_t)((uint32_t)setup->active_term_id - (uint32_t)setup->initial_term_id);
    if (aa_logbuffer_check_term_length(setup->term_length) < 0 ||
        aa_congestion_control_select(aa_uri_find_param(&endpoint->channel->uri, "cc"), &congestion_control) < 0 ||
        aa_congestion_control_initial_window_length(&congestion_control, &cc_params, &window_length) < 0 ||
        aa_receiver_window_validate_mtu(setup->mtu, window_length) < 0)
    {
        char message[512];
        snprintf(message, sizeof(message), "SETUP from %s for session %" PRId32 " stream %" PRId32 " rejected: %s",
            source, setup->session_id, setup->stream_id, aa_errmsg());
        aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR, message);
        return;
    }
    if (term_count < 0 || setup->term_offset < 0 || setup->term_offset > setup->term_length ||
        0 != (setup->term_offset % AA_LOGBUFFER_FRAME_ALIGNMENT))
    {
        char message[256];
        snprintf(message, sizeof(message),
            "SETUP from %s for session %" PRId32 " stream %" PRId32 " rejected: its position (term %" PRId32
            ", offset %" PRId32 ") is not a position of a stream starting at term %" PRId32,
            source, setup->session_id, setup->stream_id, setup->active_term_id, setup->term_offset,
            setup->initial_term_id);
        aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR, message);
        return;
    }
    if (AA_ARRAY_ENSURE(conductor->images, aa_publication_image_t *) < 0)
    {
        aa_driver_conductor_log_error(conductor, ENOMEM, aa_errmsg());
        return;
    }

    int64_t correlation_id = aa_mpsc_rb_next_correlation_id(&conductor->to_driver);
    aa_publication_image_t *image = calloc(1, sizeof(aa_publication_image_t));
    if (NULL == image)
    {
        aa_driver_conductor_log_error(conductor, ENOMEM, "out of memory creating an image");
        return;
    }
    image->rcv_hwm_counter_id = -1;
    image->rcv_pos_counter_id = -1;
    for (int i = 0; i < AA_CONGESTION_CONTROL_COUNTERS_MAX; i++)
    {
        image->cc_counter_ids[i] = -1;
    }
    /* the counters and the loss report name the stream by its first subscription's channel */
    const char *channel = endpoint->channel->canonical_form;
    for (size_t i = 0; i < conductor->subscription_links_count; i++)
    {
        if (conductor->subscription_links[i].endpoint == endpoint)
        {
            channel = conductor->subscription_links[i].channel;
            break;
        }
    }
    aa_publication_image_params_t params =
    {
        .correlation_id = correlation_id,
        .ids.session_id = setup->session_id,
        .ids.stream_id = setup->stream_id,
        .ids.initial_term_id = setup->initial_term_id,
        .active_term_id = setup->active_term_id,
        .term_offset = setup->term_offset,
        .ids.term_length = setup->term_length,
        .ids.mtu_length = setup->mtu,
        .window_length = window_length,
        .status_message_timeout_ns = ctx->status_message_timeout_ns,
        .nak_delay_ns = endpoint->params.nak_delay_ns,
        .nak_retry_delay_ratio = ctx->nak_unicast_retry_delay_ratio,
        .is_reliable = endpoint->params.is_reliable,
        .is_group = aa_receive_channel_endpoint_image_is_group(endpoint, setup->frame_header.flags),
        .nak_multicast_max_backoff_ns = ctx->nak_multicast_max_backoff_ns,
        .nak_multicast_group_size = ctx->nak_multicast_group_size,
        /* every receiver of a group draws different delays */
        .nak_delay_seed = (uint64_t)endpoint->receiver_id ^ ((uint64_t)correlation_id << 32) ^ (uint64_t)now_ns,
        .channel = channel,
        .setup_flags = setup->frame_header.flags,
    };
    aa_logbuffer_init_params_t log_params =
    {
        .correlation_id = correlation_id,
        .initial_term_id = setup->initial_term_id,
        .active_term_id = setup->active_term_id,
        .term_offset = setup->term_offset,
        .term_length = setup->term_length,
        .mtu_length = setup->mtu,
        .session_id = setup->session_id,
        .stream_id = setup->stream_id,
        .publication_window_length = 0,
        .receiver_window_length = window_length,
        .linger_timeout_ns = ctx->publication_linger_timeout_ns,
        .type = 2,
        .sparse = sparse,
        .tether = true,
        .reliable = endpoint->params.is_reliable,
        .signal_eos = true,
        .group = params.is_group,
        .spies_simulate_connection = false,
        .max_resend = AA_MAX_RESEND_DEFAULT,
        .untethered_window_limit_timeout_ns = untethered.window_limit_ns,
        .untethered_resting_timeout_ns = untethered.resting_ns,
        .untethered_linger_timeout_ns = untethered.linger_ns,
    };
    if (aa_publication_image_init(image, &params, now_ns, &conductor->services) < 0 ||
        aa_conductor_create_log(
            conductor, "images", &log_params, image->log_path, sizeof(image->log_path), &image->mapped, &image->log) < 0)
    {
        char message[512];
        snprintf(message, sizeof(message), "creating the image of session %" PRId32 " stream %" PRId32 " from %s: %s",
            setup->session_id, setup->stream_id, source, aa_errmsg());
        aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR, message);
        image->log_path[0] = '\0';
        aa_publication_image_free(image);
        return;
    }
    image->endpoint = endpoint;
    image->untethered = untethered;
    aa_receive_channel_endpoint_control_address(
        endpoint, &args->source, args->source_length, &image->control_address, &image->control_address_length);
    image->source_address = args->source;   /* its frames are taken from there alone */
    snprintf(image->source_identity, sizeof(image->source_identity), "%s", source);
    image->log.metadata->socket_rcvbuf_length = endpoint->transport.socket_rcvbuf_length;
    image->log.metadata->socket_sndbuf_length = endpoint->transport.socket_sndbuf_length;
    conductor->bytes_mapped += (int64_t)image->mapped.length;
    endpoint->image_refs++;

    image->rcv_hwm_counter_id = aa_conductor_allocate_stream_counter(
        conductor, AA_COUNTER_TYPE_RECEIVER_HWM, "rcv-hwm", correlation_id, setup->session_id, setup->stream_id,
        channel, now_ms);
    image->rcv_pos_counter_id = image->rcv_hwm_counter_id < 0 ? -1 : aa_conductor_allocate_stream_counter(
        conductor, AA_COUNTER_TYPE_RECEIVER_POSITION, "rcv-pos", correlation_id, setup->session_id, setup->stream_id,
        channel, now_ms);
    if (image->rcv_pos_counter_id < 0 ||
        aa_conductor_create_image_congestion_control(
            conductor, image, &congestion_control, &cc_params, channel, now_ns, now_ms) < 0 ||
        aa_driver_receiver_proxy_add_image(conductor->receiver, image) < 0)
    {
        aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR, aa_errmsg());
        aa_conductor_free_image(conductor, image, now_ms);
        return;
    }
    image->rcv_hwm = aa_counters_manager_addr(&conductor->counters, image->rcv_hwm_counter_id);
    image->rcv_pos = aa_counters_manager_addr(&conductor->counters, image->rcv_pos_counter_id);
    aa_put_int64_release(image->rcv_hwm, image->join_position);
    aa_put_int64_release(image->rcv_pos, image->join_position);
    conductor->images[conductor->images_count++] = image;
    aa_put_int64_release(conductor->system_counters[AA_SYSTEM_COUNTER_BYTES_CURRENTLY_MAPPED], conductor->bytes_mapped);
    if (image->mapped.allocated)
    {
        aa_prefault_add(&conductor->prefault, image->mapped.addr, image->ids.term_length, image->join_position,
            aa_conductor_image_prefault_position, image);
    }

    for (size_t i = 0; i < conductor->subscription_links_count; i++)
    {
        aa_subscription_link_t *link = &conductor->subscription_links[i];
        if (aa_conductor_link_matches_image(link, image))
        {
            aa_conductor_link_image_subscriber(conductor, image, link, image->join_position, now_ns, now_ms);
        }
    }
}

/* Runs on the conductor: the command the receiver queued. */
static void aa_conductor_on_create_publication_image(void *agent, const void *args)
{
    aa_conductor_create_publication_image(agent, args);
}

void aa_driver_conductor_proxy_create_publication_image(
    aa_driver_conductor_t *conductor, aa_receive_channel_endpoint_t *endpoint, const aa_setup_header_t *setup,
    const struct sockaddr_storage *source, socklen_t source_length)
{
    aa_create_image_args_t args;
    memset(&args, 0, sizeof(args));
    args.endpoint = endpoint;
    args.setup = *setup;
    args.source = *source;
    args.source_length = source_length;
    if (!aa_command_queue_offer(&conductor->commands, aa_conductor_on_create_publication_image, &args, sizeof(args)))
    {
        aa_driver_conductor_count(conductor, AA_SYSTEM_COUNTER_CONDUCTOR_PROXY_FAILS, 1);
        return;
    }
    aa_doorbell_ring(aa_cnc_doorbell(conductor->cnc)); /* the conductor may be sleeping deeply */
}


/* ---- timers ---- */

/* an untethered subscriber rejoins where the active ones are, at most rcv-pos (aeron-wave3.md 5) */
static int64_t aa_conductor_image_untethered_join_position(void *image)
{
    return aa_publication_image_join_position(image);
}

static void aa_conductor_image_subscriber_dropped(aa_driver_conductor_t *conductor, void *p, aa_subscriber_position_t *s)
{
    aa_publication_image_t *image = p;
    aa_conductor_send_unavailable_image(conductor, image->correlation_id, s->subscription_registration_id,
        image->ids.stream_id, aa_conductor_image_subscriber_channel(conductor, image, s->subscription_registration_id));
}

static void aa_conductor_image_subscriber_rejoined(aa_driver_conductor_t *conductor, void *p, aa_subscriber_position_t *s)
{
    aa_publication_image_t *image = p;
    aa_conductor_send_available_image(conductor, image->correlation_id, image->ids.session_id, image->ids.stream_id,
        s->subscription_registration_id, s->counter_id, image->log_path, image->source_identity);
}

static const aa_untethered_ops_t aa_conductor_image_untethered_ops =
{
    aa_conductor_image_untethered_join_position, aa_conductor_image_subscriber_dropped,
    aa_conductor_image_subscriber_rejoined
};

void aa_conductor_check_images(aa_driver_conductor_t *conductor, int64_t now_ns, int64_t now_ms)
{
    int64_t liveness_timeout_ns = conductor->ctx->image_liveness_timeout_ns;
    int64_t drain_linger_ns = 5 * conductor->ctx->status_message_timeout_ns;
    /* silence is judged up to what the receiver has read (docs/architecture.md, "Image liveness"): a
     * receiver stalled (a starved shared-mode driver, whose conductor runs first after the stall) or
     * backlogged has datagrams still to read; it lags the clock by one timeout at most, so that a
     * flood that never lets it catch up cannot keep dead images */
    int64_t heard_ns = NULL == conductor->receiver ? now_ns : aa_get_int64_acquire(&conductor->receiver->caught_up_ns);
    int64_t judged_ns = heard_ns > now_ns ? now_ns : heard_ns;
    if (judged_ns < now_ns - liveness_timeout_ns)
    {
        judged_ns = now_ns - liveness_timeout_ns;
    }
    for (size_t i = conductor->images_count; i-- > 0;)
    {
        aa_publication_image_t *image = conductor->images[i];
        switch (image->state)
        {
            case AA_PUBLICATION_IMAGE_STATE_ACTIVE:
                if (0 == image->subscribers_count || 1 == aa_get_int32_acquire(&image->is_end_of_stream) ||
                    judged_ns > aa_get_int64_acquire(&image->time_of_last_packet_ns) + liveness_timeout_ns)
                {
                    aa_conductor_image_begin_draining(image, now_ns);
                    break;
                }
                /* untethered subscribers: kept up when above the fastest one less the receiver window
                 * (a quarter of it spare), else dropped, rested and rejoined (aeron-wave3.md 5) */
                aa_conductor_check_untethered(conductor, image, image->subscribers, image->subscribers_count,
                    aa_get_int64_acquire(&image->max_subscriber_position), image->window_length, &image->untethered,
                    &aa_conductor_image_untethered_ops, now_ns);
                break;

            case AA_PUBLICATION_IMAGE_STATE_DRAINING:
                /* a revoked image does not wait for its subscribers to drain (aeron-wave3.md 4.1) */
                if (0 == image->subscribers_count || 1 == aa_get_int32_acquire(&image->is_revoked) ||
                    (aa_publication_image_is_drained(image) && now_ns > image->time_of_last_state_change_ns + drain_linger_ns) ||
                    now_ns > image->time_of_last_state_change_ns + liveness_timeout_ns)
                {
                    aa_conductor_image_begin_linger(conductor, image, now_ns, now_ms);
                }
                break;

            case AA_PUBLICATION_IMAGE_STATE_LINGER:
                if (1 == aa_get_int32_acquire(&image->has_receiver_released))
                {
                    conductor->images[i] = conductor->images[--conductor->images_count];
                    aa_conductor_free_image(conductor, image, now_ms);
                }
                break;
        }
    }
}
