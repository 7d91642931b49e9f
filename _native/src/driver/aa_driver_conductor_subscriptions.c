/*
 * The conductor's subscriptions: IPC subscriptions link to the IPC publications of their stream, UDP
 * subscriptions to a receive channel endpoint and the images on it, and spies (aeron-spy: + a UDP
 * channel) to this driver's network publications of that channel and stream, whose logs they read
 * in place.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "driver/aa_driver_conductor_private.h"
#include "util/aa_clock.h"
#include "util/aa_error.h"

/* Untethered timeouts are per stream, the receive endpoint's channel's (aeron-wave3.md 5): a subscription
 * naming one the endpoint it shares has otherwise is refused rather than silently overruled. */
static int aa_conductor_check_untethered_timeouts(
    aa_driver_conductor_t *conductor, const aa_uri_t *uri, const aa_receive_channel_endpoint_t *endpoint)
{
    aa_untethered_timeouts_t asked, applied;
    if (aa_conductor_parse_untethered_timeouts(conductor, uri, &asked) < 0 ||
        aa_conductor_parse_untethered_timeouts(conductor, &endpoint->channel->uri, &applied) < 0)
    {
        return -1;
    }
    static const struct { const char *param; size_t offset; } fields[] =
    {
        { "untethered-window-limit-timeout", offsetof(aa_untethered_timeouts_t, window_limit_ns) },
        { "untethered-linger-timeout", offsetof(aa_untethered_timeouts_t, linger_ns) },
        { "untethered-resting-timeout", offsetof(aa_untethered_timeouts_t, resting_ns) },
    };
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
    {
        const char *value = aa_uri_find_param(uri, fields[i].param);
        int64_t a = *(const int64_t *)((const uint8_t *)&asked + fields[i].offset);
        int64_t b = *(const int64_t *)((const uint8_t *)&applied + fields[i].offset);
        if (NULL != value && a != b)
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "channel %s: %s=%s differs from the %" PRId64 "ns of the receive endpoint it shares (channel %s): "
                "untethered timeouts are per stream, set by the channel of the subscription that opened the "
                "endpoint; give the same value or leave it out", uri->text, fields[i].param, value, b,
                endpoint->channel->uri.text);
            return -1;
        }
    }
    return 0;
}

static int aa_conductor_add_udp_subscription(
    aa_driver_conductor_t *conductor, aa_subscription_link_t *link, const aa_uri_t *uri, int64_t now_ms)
{
    aa_untethered_timeouts_t untethered;
    aa_udp_channel_t *udp = NULL;
    if (aa_conductor_parse_untethered_timeouts(conductor, uri, &untethered) < 0 ||
        aa_conductor_udp_channel(conductor, uri, false, &udp) < 0)
    {
        return -1;
    }
    aa_receive_channel_endpoint_t *endpoint = aa_conductor_get_or_create_receive_endpoint(
        conductor, &udp, link->registration_id, now_ms);
    aa_udp_channel_delete(udp);
    if (NULL == endpoint)
    {
        return -1;
    }
    /* a response subscription's stream reaches the receiver once its session is learnt (reference wave3 1.2) */
    const bool subscribe_now = !link->is_response || link->has_session_id;
    if (aa_conductor_check_clashing_subscription(conductor, link, endpoint) < 0 ||
        aa_conductor_check_untethered_timeouts(conductor, uri, endpoint) < 0 ||
        (subscribe_now && aa_driver_receiver_proxy_add_subscription(conductor->receiver, endpoint, link->stream_id) < 0))
    {
        aa_conductor_release_receive_endpoint(conductor, endpoint, aa_clock_nano_time(&conductor->ctx->clock), now_ms);
        return -1;
    }
    link->is_receiver_subscribed = subscribe_now;
    endpoint->refcnt++;
    link->endpoint = endpoint;
    return 0;
}

/* A spy's channel is resolved as a publication's would be: it matches the network publications whose
 * send endpoint has the same canonical form. */
static int aa_conductor_spy_channel(aa_driver_conductor_t *conductor, aa_subscription_link_t *link, const aa_uri_t *uri)
{
    if (AA_URI_MEDIA_UDP != uri->media)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel %s: a spy reads a network publication; spy on a UDP channel (aeron-spy:aeron:udp?endpoint=host:port), "
            "or subscribe to aeron:ipc directly", uri->text);
        return -1;
    }
    return aa_conductor_udp_channel(conductor, uri, true, &link->spy_channel);
}

/* ADD_SUBSCRIPTION on its channel, parsed when the command was taken (aa_driver_conductor.c). */
int aa_conductor_on_add_subscription(
    aa_driver_conductor_t *conductor, const aa_subscription_command_t *command, const aa_uri_t *uri, int64_t now_ns,
    int64_t now_ms)
{
    const char *channel = uri->text;
    if (aa_channel_check_applied(uri, false) < 0 || aa_conductor_check_ipc_control_mode(uri) < 0)
    {
        return -1;
    }
    bool tether = conductor->ctx->tether_subscriptions;
    bool sparse = conductor->ctx->term_buffer_sparse_file;
    int32_t session_id = 0;
    int rc_session = aa_uri_get_int32(uri, "session-id", &session_id);
    if (aa_uri_get_bool(uri, "tether", &tether) < 0 || aa_uri_get_bool(uri, "sparse", &sparse) < 0 || rc_session < 0)
    {
        return -1;
    }
    if (AA_ARRAY_ENSURE(conductor->subscription_links, aa_subscription_link_t) < 0)
    {
        return -1;
    }
    char *channel_copy = strdup(channel);
    if (NULL == channel_copy)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory adding a subscription");
        return -1;
    }
    aa_subscription_link_t link_value;
    memset(&link_value, 0, sizeof(link_value));
    link_value.registration_id = command->correlated.correlation_id;
    link_value.client_id = command->correlated.client_id;
    link_value.stream_id = command->stream_id;
    link_value.has_session_id = 1 == rc_session;
    link_value.session_id = session_id;
    link_value.is_response = aa_uri_is_response_control_mode(uri) && !uri->is_spy;
    link_value.is_tether = tether;
    link_value.is_sparse = sparse;
    link_value.channel = channel_copy;
    if (uri->is_spy ? aa_conductor_spy_channel(conductor, &link_value, uri) < 0 :
        AA_URI_MEDIA_UDP == uri->media && aa_conductor_add_udp_subscription(conductor, &link_value, uri, now_ms) < 0)
    {
        free(channel_copy);
        return -1;
    }
    aa_subscription_link_t *link = &conductor->subscription_links[conductor->subscription_links_count++];
    *link = link_value;

    aa_subscription_ready_t response = {
        .correlation_id = command->correlated.correlation_id,
        .channel_status_indicator_id =
            NULL != link->endpoint ? link->endpoint->status_counter_id : AA_CHANNEL_STATUS_INDICATOR_NOT_ALLOCATED,
    };
    aa_conductor_transmit(conductor, AA_RESPONSE_ON_SUBSCRIPTION_READY, &response, sizeof(response));

    if (NULL != link->spy_channel)
    {
        for (size_t i = 0; i < conductor->network_publications_count; i++)
        {
            aa_conductor_link_spy(conductor, conductor->network_publications[i], link, now_ns, now_ms);
        }
        return 0;
    }
    if (NULL != link->endpoint)
    {
        for (size_t i = 0; i < conductor->images_count; i++)
        {
            aa_publication_image_t *image = conductor->images[i];
            if (AA_PUBLICATION_IMAGE_STATE_ACTIVE == image->state && aa_conductor_link_matches_image(link, image))
            {
                aa_conductor_link_image_subscriber(
                    conductor, image, link, aa_publication_image_join_position(image), now_ns, now_ms);
            }
        }
        return 0;
    }
    for (size_t i = 0; i < conductor->ipc_publications_count; i++)
    {
        aa_ipc_publication_t *pub = conductor->ipc_publications[i];
        if (AA_IPC_PUBLICATION_STATE_ACTIVE == pub->state)
        {
            aa_conductor_link_subscriber(conductor, pub, link, now_ns, now_ms);
        }
    }
    return 0;
}

void aa_conductor_remove_subscription_link_at(
    aa_driver_conductor_t *conductor, size_t index, int64_t now_ns, int64_t now_ms)
{
    aa_subscription_link_t *link = &conductor->subscription_links[index];
    for (size_t i = 0; i < conductor->ipc_publications_count; i++)
    {
        int32_t counter_id = aa_ipc_publication_remove_subscriber(conductor->ipc_publications[i], link->registration_id);
        aa_conductor_free_counter(conductor, counter_id, now_ms);
    }
    if (NULL != link->spy_channel)
    {
        for (size_t i = 0; i < conductor->network_publications_count; i++)
        {
            int32_t counter_id = aa_network_publication_remove_spy(conductor->network_publications[i], link->registration_id);
            aa_conductor_free_counter(conductor, counter_id, now_ms);
        }
        aa_udp_channel_delete(link->spy_channel);
        link->spy_channel = NULL;
    }
    aa_receive_channel_endpoint_t *endpoint = link->endpoint;
    if (NULL != endpoint)
    {
        for (size_t i = 0; i < conductor->images_count; i++)
        {
            aa_publication_image_t *image = conductor->images[i];
            if (image->endpoint == endpoint)
            {
                int32_t counter_id = aa_publication_image_remove_subscriber(image, link->registration_id);
                aa_conductor_free_counter(conductor, counter_id, now_ms);
            }
        }
        if (link->is_receiver_subscribed &&
            aa_driver_receiver_proxy_remove_subscription(conductor->receiver, endpoint, link->stream_id) < 0)
        {
            aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR, aa_errmsg());
        }
        endpoint->refcnt--;
    }
    free(link->channel);
    conductor->subscription_links[index] = conductor->subscription_links[--conductor->subscription_links_count];
    if (NULL != endpoint)
    {
        aa_conductor_release_receive_endpoint(conductor, endpoint, now_ns, now_ms);
    }
}

int aa_conductor_on_remove_subscription(
    aa_driver_conductor_t *conductor, const aa_remove_command_t *command, int64_t now_ns, int64_t now_ms)
{
    for (size_t i = 0; i < conductor->subscription_links_count; i++)
    {
        aa_subscription_link_t *link = &conductor->subscription_links[i];
        if (link->registration_id == command->registration_id && link->client_id == command->correlated.client_id)
        {
            aa_conductor_remove_subscription_link_at(conductor, i, now_ns, now_ms);
            aa_conductor_on_operation_success(conductor, command->correlated.correlation_id);
            return 0;
        }
    }
    AA_SET_ERR(AA_ERROR_CODE_UNKNOWN_SUBSCRIPTION, "unknown subscription registration id %" PRId64, command->registration_id);
    return -1;
}
