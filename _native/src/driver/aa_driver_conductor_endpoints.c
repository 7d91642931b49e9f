/*
 * The conductor's UDP channels and endpoints: a command's parsed channel resolved (and rejected for
 * what this driver does not carry), and the send and receive channel endpoints (sockets) shared by
 * the publications and subscriptions of one channel (one canonical form), closed when the last one goes.
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "driver/aa_driver_conductor_private.h"
#include "util/aa_error.h"

/* Parameters that only multicast applies (reference 7.1, 7.2): on a unicast address they would be
 * ignored, so they are refused, naming the fix. (interface= is the local address of a unicast
 * publication; on a unicast subscription it is accepted as meant for the publishing end of a channel
 * string both ends share, as every publication parameter is.) */
static int aa_conductor_check_multicast_params(const aa_udp_channel_t *udp)
{
    if (udp->is_multicast)
    {
        return 0;
    }
    const bool is_mdc = AA_UDP_CHANNEL_CONTROL_MODE_DYNAMIC == udp->control_mode ||
        AA_UDP_CHANNEL_CONTROL_MODE_MANUAL == udp->control_mode;
    static const char *const multicast_only[] = { "ttl", "max-resend" };
    for (size_t i = 0; i < sizeof(multicast_only) / sizeof(multicast_only[0]); i++)
    {
        if (is_mdc && 0 == strcmp("max-resend", multicast_only[i]))
        {
            continue;   /* multi-destination-cast publications have group semantics too */
        }
        const char *value = aa_uri_find_param(&udp->uri, multicast_only[i]);
        if (NULL != value)
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "channel %s: %s=%s applies to multicast channels only, and endpoint=%s is a unicast address; remove "
                "%s=, or give a multicast group as the endpoint (224.0.0.0/4 or ff00::/8, e.g. endpoint=224.0.1.1:40456)",
                udp->uri.text, multicast_only[i], value, NULL != aa_uri_find_param(&udp->uri, "endpoint") ?
                aa_uri_find_param(&udp->uri, "endpoint") : "(none)", multicast_only[i]);
            return -1;
        }
    }
    return 0;
}

/* Resolves a parsed UDP channel (with the executor's answers, never waiting for a name) and rejects what
 * this driver does not carry. */
int aa_conductor_udp_channel(
    aa_driver_conductor_t *conductor, const aa_uri_t *uri, bool is_publication, aa_udp_channel_t **out)
{
    const char *channel = uri->text;
    aa_driver_context_t *ctx = conductor->ctx;
    aa_udp_channel_defaults_t defaults =
    {
        (int32_t)ctx->socket_so_rcvbuf, (int32_t)ctx->socket_so_sndbuf, ctx->socket_multicast_ttl,
        &conductor->answers_resolver    /* the executor's answers: the conductor never blocks on a name */
    };
    if (aa_udp_channel_from_uri(out, uri, &defaults) < 0)
    {
        return -1;
    }
    aa_udp_channel_t *udp = *out;
    /* endpoint= did not resolve yet and AERON_NAME_RESOLUTION_PENDING_ALLOWED let it wait: nothing is
     * sent until the conductor swaps its address in */
    udp->is_remote_unresolved = conductor->replaying_used_placeholder;
    if (aa_conductor_check_multicast_params(udp) < 0)
    {
        aa_udp_channel_delete(udp);
        *out = NULL;
        return -1;
    }
    const char *problem = NULL;
    const bool is_mdc = AA_UDP_CHANNEL_CONTROL_MODE_DYNAMIC == udp->control_mode ||
        AA_UDP_CHANNEL_CONTROL_MODE_MANUAL == udp->control_mode;
    const bool is_response = AA_UDP_CHANNEL_CONTROL_MODE_RESPONSE == udp->control_mode;
    if (!is_publication && udp->has_explicit_control && 0 == aa_udp_address_port(&udp->local_control))
    {
        /* Aeron's words, then ours */
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "control has port=0 for subscription: channel=%s. control= on a subscription is the publisher's control "
            "address (multi-destination-cast or response channel) and needs its port (control=host:port with a port "
            "above 0)", channel);
        aa_udp_channel_delete(udp);
        *out = NULL;
        return -1;
    }
    if (is_response && udp->is_multicast)
    {
        problem = "control-mode=response is for unicast channels; remove it, or use a unicast endpoint";
    }
    else if (udp->is_multicast && is_mdc)
    {
        problem = "control-mode= (multi-destination-cast) is for unicast channels; a multicast group reaches its "
            "receivers itself: remove control-mode=";
    }
    else if (!is_publication && AA_UDP_CHANNEL_CONTROL_MODE_MANUAL == udp->control_mode && udp->has_explicit_control)
    {
        /* endpoint= is accepted and, as by Aeron's C driver, only part of the channel's identity */
        problem = "a multi-destination subscription (control-mode=manual) receives on the destinations added to it "
            "(add_destination); remove control=";
    }
    else if (is_publication && AA_UDP_CHANNEL_CONTROL_MODE_DYNAMIC == udp->control_mode && !udp->has_explicit_control)
    {
        problem = "control-mode=dynamic needs control=host:port, the address the publication receives status "
            "messages on (e.g. control=10.0.0.1:40456|control-mode=dynamic)";
    }
    else if (is_publication && is_mdc && udp->has_explicit_endpoint)
    {
        problem = "a multi-destination-cast publication (control-mode=) sends to its destinations, not to endpoint=; "
            "remove endpoint= (dynamic: receivers subscribe with control=<this control address>; manual: "
            "add_destination)";
    }
    else if (is_publication && !is_mdc && !is_response && !udp->has_explicit_endpoint && !udp->has_tag &&
        udp->has_explicit_control)
    {
        /* Aeron's C driver's words first (wave3 1.4: a publication with control needs an endpoint or a
         * control-mode), as a real aeronmd answers them */
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "'control' parameter requires that either 'endpoint' or "
            "'control-mode' is specified, channel=%s. Add endpoint=host:port (the address to send to), or "
            "control-mode=dynamic, manual (multi-destination-cast) or response", channel);
        aa_udp_channel_delete(udp);
        *out = NULL;
        return -1;
    }
    else if (!is_mdc && !is_response && !udp->has_explicit_endpoint && !udp->has_tag)
    {
        problem = "a UDP channel needs endpoint=host:port (or, for multi-destination-cast, "
            "control=host:port|control-mode=dynamic or control-mode=manual on a publication; for a response "
            "channel, control-mode=response)";
    }
    if (NULL != problem)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "channel %s: %s", channel, problem);
        aa_udp_channel_delete(udp);
        *out = NULL;
        return -1;
    }
    /* a tagged channel may take the address of the endpoint its tag finds (checked when none does); a
     * response publication learns its peer from the first status message */
    if (is_publication && !is_mdc && !is_response && !udp->has_tag && 0 == aa_udp_address_port(&udp->remote_data))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel %s: a publication needs the port it sends to (endpoint=host:port with a port above 0)", channel);
        aa_udp_channel_delete(udp);
        *out = NULL;
        return -1;
    }
    return 0;
}

static aa_loss_generator_settings_t aa_conductor_loss_settings(aa_driver_conductor_t *conductor)
{
    aa_loss_generator_settings_t settings =
    {
        &conductor->ctx->udp_receive_loss, &conductor->ctx->udp_send_loss, (uint64_t)conductor->ctx->udp_loss_seed
    };
    return settings;
}

/* snd-local-sockaddr / rcv-local-sockaddr (type 14), as Aeron's LocalSocketAddressStatus: keyed by the
 * endpoint's status counter id, then the bound address ("host:port", the port the kernel picked for
 * port 0) as int32 length + ASCII; its value is the endpoint status (ACTIVE while bound). */
int32_t aa_conductor_allocate_local_sockaddr_counter(
    aa_driver_conductor_t *conductor, const char *name, int32_t status_counter_id,
    const struct sockaddr_storage *bound, int64_t registration_id, int64_t now_ms)
{
    char address[AA_COUNTER_KEY_MAX_LENGTH - 2 * sizeof(int32_t)] = "";
    int address_length = 0 == bound->ss_family ? 0 : aa_udp_address_format(address, sizeof(address), bound);
    if (address_length < 0)
    {
        return -1;
    }
    uint8_t key[AA_COUNTER_KEY_MAX_LENGTH];
    int32_t length32 = address_length;
    memcpy(key, &status_counter_id, sizeof(int32_t));
    memcpy(key + sizeof(int32_t), &length32, sizeof(int32_t));
    memcpy(key + 2 * sizeof(int32_t), address, (size_t)address_length);
    char label[AA_COUNTER_LABEL_MAX_LENGTH];
    int label_length = snprintf(label, sizeof(label), "%s: %" PRId32 " %s", name, status_counter_id, address);
    label_length = label_length < (int)sizeof(label) ? label_length : (int)sizeof(label) - 1;
    int32_t id = aa_counters_manager_allocate(&conductor->counters, now_ms, AA_COUNTER_TYPE_LOCAL_SOCKADDR, key,
        2 * sizeof(int32_t) + (size_t)address_length, label, (size_t)label_length);
    if (id >= 0)
    {
        aa_counter_set_registration_id(&conductor->counters, id, registration_id);
        aa_put_int64_release(aa_counters_manager_addr(&conductor->counters, id), AA_CHANNEL_ENDPOINT_STATUS_ACTIVE);
    }
    return id;
}

/* The open send endpoint a publication channel shares (reference wave 3, section 2; Aeron's
 * find_existing_send_channel_endpoint): a tagged channel first takes the endpoint with its tag (or
 * fails on a mismatched control mode or address); a tagged channel that finds none must be complete
 * enough to create one; otherwise the endpoint of the same canonical form, unless it carries another
 * tag. Returns 0 with *found (NULL: none), or -1. */
int aa_conductor_find_send_endpoint(
    aa_driver_conductor_t *conductor, const aa_udp_channel_t *udp, aa_send_channel_endpoint_t **found)
{
    *found = NULL;
    if (udp->has_tag)
    {
        for (size_t i = 0; i < conductor->send_endpoints_count; i++)
        {
            aa_send_channel_endpoint_t *endpoint = conductor->send_endpoints[i];
            bool matches = false;
            if (endpoint->is_closing)
            {
                continue;
            }
            if (aa_udp_channel_matches_tag(udp, endpoint->channel, &matches) < 0)
            {
                return -1;
            }
            if (matches)
            {
                *found = endpoint;
                return 0;
            }
        }
        if (!udp->has_explicit_control && AA_UDP_CHANNEL_CONTROL_MODE_MANUAL != udp->control_mode &&
            !udp->has_explicit_endpoint)
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "URI must have explicit control, endpoint, or be manual control-mode when original: channel=%s; no "
                "send endpoint has tag %" PRId64 " yet: add a publication with endpoint=host:port|tags=%" PRId64
                " first", udp->uri.text, udp->tag_id, udp->tag_id);
            return -1;
        }
    }
    for (size_t i = 0; i < conductor->send_endpoints_count; i++)
    {
        aa_send_channel_endpoint_t *endpoint = conductor->send_endpoints[i];
        if (!endpoint->is_closing && aa_udp_channel_equals(endpoint->channel, udp) &&
            !(endpoint->channel->has_tag && udp->has_tag && endpoint->channel->tag_id != udp->tag_id))
        {
            *found = endpoint;
            return 0;
        }
    }
    return 0;
}

/* A channel sharing an endpoint keeps its timestamp offsets (Aeron's words, then the fix). */
static int aa_conductor_check_timestamp_offset(
    const char *key, int32_t offset, int32_t existing, const aa_udp_channel_t *udp, const aa_udp_channel_t *endpoint)
{
    if (offset == existing)
    {
        return 0;
    }
    AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
        "option conflicts with existing subscription: %s=%" PRId32 " %s existingChannel=%s channel=%s; give both "
        "channels the same %s", key, offset, aa_udp_channel_timestamp_offset_info(offset), endpoint->uri.text,
        udp->uri.text, key);
    return -1;
}

/* The send endpoint of a channel: the open one aa_conductor_find_send_endpoint finds, else a new socket.
 * Takes ownership of *udp (NULL afterwards when the endpoint kept it). */
aa_send_channel_endpoint_t *aa_conductor_get_or_create_send_endpoint(
    aa_driver_conductor_t *conductor, aa_udp_channel_t **udp, int64_t registration_id, int64_t now_ms)
{
    const char *channel = (*udp)->uri.text;
    aa_send_channel_endpoint_t *found = NULL;
    if (aa_conductor_find_send_endpoint(conductor, *udp, &found) < 0)
    {
        return NULL;
    }
    if (NULL != found)
    {
        if (aa_conductor_check_timestamp_offset("channel-snd-ts-offset", (*udp)->channel_snd_timestamp_offset,
                found->channel->channel_snd_timestamp_offset, *udp, found->channel) < 0 ||
            aa_channel_check_shared(conductor->ctx, &(*udp)->uri, &found->channel->uri,
                found->channel->canonical_form, aa_channel_send_endpoint_keys, "send endpoint") < 0)
        {
            return NULL;
        }
        return found;
    }
    const bool is_mdc = AA_UDP_CHANNEL_CONTROL_MODE_DYNAMIC == (*udp)->control_mode ||
        AA_UDP_CHANNEL_CONTROL_MODE_MANUAL == (*udp)->control_mode;
    /* a response publication learns where it sends from its first status message (docs/architecture.md,
     * "Response channels") */
    const bool is_response = AA_UDP_CHANNEL_CONTROL_MODE_RESPONSE == (*udp)->control_mode;
    if (!is_mdc && !is_response && 0 == aa_udp_address_port(&(*udp)->remote_data))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel %s: a publication needs the port it sends to (endpoint=host:port with a port above 0)", channel);
        return NULL;
    }
    if (AA_ARRAY_ENSURE(conductor->send_endpoints, aa_send_channel_endpoint_t *) < 0)
    {
        return NULL;
    }
    aa_send_channel_endpoint_t *endpoint = NULL;
    aa_loss_generator_settings_t loss = aa_conductor_loss_settings(conductor);
    if (aa_send_channel_endpoint_create(&endpoint, *udp, &loss, &conductor->services) < 0)
    {
        return NULL;
    }
    *udp = NULL;
    endpoint->destinations.destination_timeout_ns = conductor->ctx->mdc_destination_timeout_ns;
    endpoint->destinations.max_dynamic = (size_t)conductor->ctx->mdc_max_destinations;
    endpoint->status_counter_id = aa_conductor_allocate_channel_status_counter(
        conductor, AA_COUNTER_TYPE_SEND_CHANNEL_STATUS, "snd-channel", channel, registration_id, now_ms);
    endpoint->local_sockaddr_counter_id = endpoint->status_counter_id < 0 ? -1 :
        aa_conductor_allocate_local_sockaddr_counter(conductor, "snd-local-sockaddr", endpoint->status_counter_id,
            &endpoint->transport.bound_address, registration_id, now_ms);
    if (endpoint->local_sockaddr_counter_id < 0 || aa_driver_sender_proxy_add_endpoint(conductor->sender, endpoint) < 0)
    {
        aa_conductor_free_counter(conductor, endpoint->local_sockaddr_counter_id, now_ms);
        aa_conductor_free_counter(conductor, endpoint->status_counter_id, now_ms);
        aa_send_channel_endpoint_delete(endpoint);
        return NULL;
    }
    endpoint->status = aa_counters_manager_addr(&conductor->counters, endpoint->status_counter_id);
    aa_put_int64_release(endpoint->status, AA_CHANNEL_ENDPOINT_STATUS_ACTIVE);
    conductor->send_endpoints[conductor->send_endpoints_count++] = endpoint;
    return endpoint;
}

/* An endpoint no publication uses any more: the sender lets go of it, then the timer frees it. */
void aa_conductor_release_send_endpoint(aa_driver_conductor_t *conductor, aa_send_channel_endpoint_t *endpoint)
{
    if (endpoint->refcnt > 0 || endpoint->is_closing)
    {
        return;
    }
    if (aa_driver_sender_proxy_remove_endpoint(conductor->sender, endpoint) < 0)
    {
        aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR, aa_errmsg());
        return; /* tried again on the next timer tick */
    }
    endpoint->is_closing = true;
    aa_put_int64_release(endpoint->status, AA_CHANNEL_ENDPOINT_STATUS_CLOSING);
    aa_put_int64_release(aa_counters_manager_addr(&conductor->counters, endpoint->local_sockaddr_counter_id),
        AA_CHANNEL_ENDPOINT_STATUS_CLOSING);
}

static int aa_conductor_sockaddr_port(const struct sockaddr_storage *address)
{
    return AF_INET == address->ss_family ? ntohs(((const struct sockaddr_in *)address)->sin_port) :
        AF_INET6 == address->ss_family ? ntohs(((const struct sockaddr_in6 *)address)->sin6_port) : -1;
}

/* A bind refused (EADDRINUSE) because this very driver's receive endpoint of another form of the
 * channel (`control=` added or dropped), whose last subscription closed just now, still holds the
 * port: the error says so, and when it will be free, instead of blaming another socket. */
static void aa_conductor_explain_own_closing_endpoint(aa_driver_conductor_t *conductor, const aa_udp_channel_t *udp)
{
    if (udp->is_multicast || NULL == strstr(aa_errmsg(), strerror(EADDRINUSE)))
    {
        return;
    }
    int port = aa_conductor_sockaddr_port(&udp->remote_data);
    for (size_t i = 0; i < conductor->receive_endpoints_count; i++)
    {
        aa_receive_channel_endpoint_t *endpoint = conductor->receive_endpoints[i];
        if (endpoint->is_closing && port > 0 && aa_conductor_sockaddr_port(&endpoint->transport.bound_address) == port)
        {
            AA_SET_ERR(AA_ERROR_CODE_CHANNEL_ENDPOINT_ERROR, "channel %s: its port %d is still held by this driver's "
                "own receive endpoint of %s, whose last subscription closed just now: the endpoint closes once its "
                "images have lingered and the receiver has let go of it, within about %" PRId64 " ms (twice the "
                "driver's timer interval, AERON_TIMER_INTERVAL); add the subscription again after that",
                udp->uri.text, port, endpoint->channel->canonical_form, 2 * conductor->ctx->timer_interval_ns / 1000000);
            return;
        }
    }
}

/* The receive endpoint a subscription channel shares, as aa_conductor_find_send_endpoint (Aeron's
 * find_existing_receive_channel_endpoint): by tag first, then by canonical form unless it carries another
 * tag. A closing endpoint is found too (its socket is still bound). */
static int aa_conductor_find_receive_endpoint(
    aa_driver_conductor_t *conductor, const aa_udp_channel_t *udp, aa_receive_channel_endpoint_t **found)
{
    *found = NULL;
    for (size_t i = 0; udp->has_tag && i < conductor->receive_endpoints_count; i++)
    {
        bool matches = false;
        if (aa_udp_channel_matches_tag(udp, conductor->receive_endpoints[i]->channel, &matches) < 0)
        {
            return -1;
        }
        if (matches)
        {
            *found = conductor->receive_endpoints[i];
            return 0;
        }
    }
    for (size_t i = 0; i < conductor->receive_endpoints_count; i++)
    {
        aa_receive_channel_endpoint_t *endpoint = conductor->receive_endpoints[i];
        if (aa_udp_channel_equals(endpoint->channel, udp) &&
            !(endpoint->channel->has_tag && udp->has_tag && endpoint->channel->tag_id != udp->tag_id))
        {
            *found = endpoint;
            return 0;
        }
    }
    return 0;
}

/* The receive endpoint of a subscription channel: the one aa_conductor_find_receive_endpoint finds, else a
 * new bound socket. Takes ownership of *udp (NULL afterwards when the endpoint kept it). */
aa_receive_channel_endpoint_t *aa_conductor_get_or_create_receive_endpoint(
    aa_driver_conductor_t *conductor, aa_udp_channel_t **udp, int64_t registration_id, int64_t now_ms)
{
    const char *channel = (*udp)->uri.text;
    aa_driver_context_t *ctx = conductor->ctx;
    aa_receive_channel_endpoint_t *found = NULL;
    if (aa_conductor_find_receive_endpoint(conductor, *udp, &found) < 0)
    {
        return NULL;
    }
    if (NULL != found)
    {
        aa_receive_channel_endpoint_t *endpoint = found;
        const aa_udp_channel_t *existing = endpoint->channel;
        if (aa_conductor_check_timestamp_offset("media-rcv-ts-offset", (*udp)->media_rcv_timestamp_offset,
                existing->media_rcv_timestamp_offset, *udp, existing) < 0 ||
            aa_conductor_check_timestamp_offset("channel-rcv-ts-offset", (*udp)->channel_rcv_timestamp_offset,
                existing->channel_rcv_timestamp_offset, *udp, existing) < 0 ||
            aa_channel_check_shared(conductor->ctx, &(*udp)->uri, &endpoint->channel->uri,
            endpoint->channel->canonical_form, aa_channel_receive_endpoint_keys, "receive endpoint") < 0)
        {
            return NULL;
        }
        if (endpoint->is_closing)
        {
            /* Closing, but its socket is still bound: take it back rather than fail to bind the
             * port again. The receiver gets it back after the removal (its queue is in order). */
            if (aa_driver_receiver_proxy_add_endpoint(conductor->receiver, endpoint) < 0)
            {
                return NULL;
            }
            endpoint->is_closing = false;
            aa_put_int64_release(endpoint->status, AA_CHANNEL_ENDPOINT_STATUS_ACTIVE);
            aa_put_int64_release(aa_counters_manager_addr(&conductor->counters, endpoint->local_sockaddr_counter_id),
                AA_CHANNEL_ENDPOINT_STATUS_ACTIVE);
        }
        return endpoint;
    }
    aa_receive_channel_endpoint_params_t params =
    {
        .window_length = (int32_t)ctx->rcv_initial_window_length,
        .nak_delay_ns = ctx->nak_unicast_delay_ns,
        .is_reliable = ctx->reliable_stream,
        .has_group_tag = ctx->has_receiver_group_tag,
        .group_tag = ctx->receiver_group_tag,
        .max_images = ctx->receiver_max_images,
        .max_sessions_per_stream = ctx->receiver_max_sessions_per_stream,
        .max_term_length = aa_driver_context_receiver_max_term_length(ctx),
    };
    int rc_gtag = aa_uri_get_int64(&(*udp)->uri, "gtag", &params.group_tag);
    if (rc_gtag < 0)
    {
        return NULL;
    }
    params.has_group_tag = params.has_group_tag || 1 == rc_gtag;
    if ((*udp)->receiver_window_length > 0)
    {
        params.window_length = (*udp)->receiver_window_length;
    }
    if (aa_uri_get_duration_ns(&(*udp)->uri, "nak-delay", &params.nak_delay_ns) < 0 ||
        aa_uri_get_bool(&(*udp)->uri, "reliable", &params.is_reliable) < 0)
    {
        return NULL;
    }
    const char *group = aa_uri_find_param(&(*udp)->uri, "group");   /* aa_uri checked: true, false or infer */
    params.group = NULL == group || 0 == strcmp(group, "infer") ? AA_RECEIVE_GROUP_INFER :
        (0 == strcmp(group, "true") ? AA_RECEIVE_GROUP_TRUE : AA_RECEIVE_GROUP_FALSE);
    if (aa_receiver_window_validate_initial(params.window_length, (*udp)->socket_rcvbuf_length) < 0)
    {
        AA_APPEND_ERR("channel %s: rcv-wnd", channel);
        return NULL;
    }
    if (AA_ARRAY_ENSURE(conductor->receive_endpoints, aa_receive_channel_endpoint_t *) < 0)
    {
        return NULL;
    }
    aa_receive_channel_endpoint_t *endpoint = NULL;
    aa_loss_generator_settings_t loss = aa_conductor_loss_settings(conductor);
    if (aa_receive_channel_endpoint_create(&endpoint, *udp, &params, &loss, &conductor->services) < 0)
    {
        aa_conductor_explain_own_closing_endpoint(conductor, *udp);
        return NULL;
    }
    *udp = NULL;
    endpoint->status_counter_id = aa_conductor_allocate_channel_status_counter(
        conductor, AA_COUNTER_TYPE_RECEIVE_CHANNEL_STATUS, "rcv-channel", channel, registration_id, now_ms);
    endpoint->local_sockaddr_counter_id = endpoint->status_counter_id < 0 ? -1 :
        aa_conductor_allocate_local_sockaddr_counter(conductor, "rcv-local-sockaddr", endpoint->status_counter_id,
            &endpoint->transport.bound_address, registration_id, now_ms);
    if (endpoint->local_sockaddr_counter_id < 0 ||
        aa_driver_receiver_proxy_add_endpoint(conductor->receiver, endpoint) < 0)
    {
        aa_conductor_free_counter(conductor, endpoint->local_sockaddr_counter_id, now_ms);
        aa_conductor_free_counter(conductor, endpoint->status_counter_id, now_ms);
        aa_receive_channel_endpoint_delete(endpoint);
        return NULL;
    }
    endpoint->status = aa_counters_manager_addr(&conductor->counters, endpoint->status_counter_id);
    aa_put_int64_release(endpoint->status, AA_CHANNEL_ENDPOINT_STATUS_ACTIVE);
    conductor->receive_endpoints[conductor->receive_endpoints_count++] = endpoint;
    return endpoint;
}

/* An endpoint no subscription uses any more: its images go, then the receiver lets go of it. */
void aa_conductor_release_receive_endpoint(
    aa_driver_conductor_t *conductor, aa_receive_channel_endpoint_t *endpoint, int64_t now_ns, int64_t now_ms)
{
    if (endpoint->refcnt > 0 || endpoint->is_closing)
    {
        return;
    }
    for (size_t i = 0; i < conductor->images_count; i++)
    {
        aa_publication_image_t *image = conductor->images[i];
        if (image->endpoint == endpoint && AA_PUBLICATION_IMAGE_STATE_LINGER != image->state)
        {
            aa_conductor_image_begin_linger(conductor, image, now_ns, now_ms);
            if (AA_PUBLICATION_IMAGE_STATE_LINGER != image->state)
            {
                return; /* tried again on the next timer tick */
            }
        }
    }
    if (aa_driver_receiver_proxy_remove_endpoint(conductor->receiver, endpoint) < 0)
    {
        aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR, aa_errmsg());
        return;
    }
    endpoint->conductor_removals++;
    endpoint->is_closing = true;
    aa_put_int64_release(endpoint->status, AA_CHANNEL_ENDPOINT_STATUS_CLOSING);
    aa_put_int64_release(aa_counters_manager_addr(&conductor->counters, endpoint->local_sockaddr_counter_id),
        AA_CHANNEL_ENDPOINT_STATUS_CLOSING);
}

/* ---- timers ---- */

void aa_conductor_check_send_endpoints(aa_driver_conductor_t *conductor, int64_t now_ms)
{
    for (size_t i = conductor->send_endpoints_count; i-- > 0;)
    {
        aa_send_channel_endpoint_t *endpoint = conductor->send_endpoints[i];
        if (!endpoint->is_closing)
        {
            aa_conductor_release_send_endpoint(conductor, endpoint);
        }
        else if (1 == aa_get_int32_acquire(&endpoint->has_sender_released))
        {
            aa_conductor_free_counter(conductor, endpoint->local_sockaddr_counter_id, now_ms);
            aa_conductor_free_counter(conductor, endpoint->status_counter_id, now_ms);
            conductor->send_endpoints[i] = conductor->send_endpoints[--conductor->send_endpoints_count];
            aa_send_channel_endpoint_delete(endpoint);
        }
    }
}

void aa_conductor_check_receive_endpoints(aa_driver_conductor_t *conductor, int64_t now_ns, int64_t now_ms)
{
    for (size_t i = conductor->receive_endpoints_count; i-- > 0;)
    {
        aa_receive_channel_endpoint_t *endpoint = conductor->receive_endpoints[i];
        aa_conductor_free_released_destinations(endpoint);
        if (!endpoint->is_closing)
        {
            aa_conductor_release_receive_endpoint(conductor, endpoint, now_ns, now_ms);
        }
        else if (endpoint->conductor_removals == aa_get_int32_acquire(&endpoint->receiver_removals) &&
            0 == endpoint->image_refs)
        {
            for (size_t j = 0; j < endpoint->conductor_destinations_count; j++)
            {
                aa_conductor_free_counter(conductor, endpoint->conductor_destinations[j]->local_sockaddr_counter_id, now_ms);
            }
            aa_conductor_free_counter(conductor, endpoint->local_sockaddr_counter_id, now_ms);
            aa_conductor_free_counter(conductor, endpoint->status_counter_id, now_ms);
            conductor->receive_endpoints[i] = conductor->receive_endpoints[--conductor->receive_endpoints_count];
            aa_receive_channel_endpoint_delete(endpoint);
        }
    }
}
