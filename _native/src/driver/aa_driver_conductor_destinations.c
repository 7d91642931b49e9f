/*
 * The conductor's destination commands (reference 7.3, 9.3): ADD_DESTINATION and REMOVE_DESTINATION
 * name a publication by its registration id and a destination channel (aeron:udp?endpoint=host:port).
 * Only a manual multi-destination-cast publication (control-mode=manual) takes them; the destination
 * is resolved here (from the command's parsed channel, with the executor's answers), checked against
 * the endpoint's list of manual destinations, and handed to the sender, which owns the destination
 * table.
 * ADD_RCV_DESTINATION and REMOVE_RCV_DESTINATION name a subscription on aeron:udp?control-mode=manual
 * (a multi-destination subscription) and a channel to receive on (aeron:udp?endpoint=host:port): the
 * conductor opens its socket and hands it to the receiver; a removed one is freed once the receiver let
 * go of it (aa_conductor_free_released_destinations).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "driver/aa_driver_conductor_private.h"
#include "util/aa_error.h"

static aa_network_publication_t *aa_conductor_find_network_publication(
    aa_driver_conductor_t *conductor, int64_t registration_id)
{
    for (size_t i = 0; i < conductor->network_publications_count; i++)
    {
        aa_network_publication_t *pub = conductor->network_publications[i];
        if (pub->registration_id == registration_id && AA_NETWORK_PUBLICATION_STATE_ACTIVE == pub->state)
        {
            return pub;
        }
    }
    return NULL;
}

static bool aa_conductor_is_ipc_publication(aa_driver_conductor_t *conductor, int64_t registration_id)
{
    for (size_t i = 0; i < conductor->ipc_publications_count; i++)
    {
        if (conductor->ipc_publications[i]->registration_id == registration_id)
        {
            return true;
        }
    }
    return false;
}

/* Keys a destination may not carry: they belong to the publication's or subscription's own channel (Aeron's
 * AERON_DRIVER_CONDUCTOR_INVALID_DESTINATION_KEYS and its words, reference wave3 1.4). */
static int aa_conductor_check_destination_keys(const aa_uri_t *uri)
{
    static const char *const invalid_keys[] = { "response-correlation-id", "mtu", "rcv-wnd", "so-rcvbuf", "so-sndbuf" };
    for (size_t i = 0; i < sizeof(invalid_keys) / sizeof(invalid_keys[0]); i++)
    {
        if (NULL != aa_uri_find_param(uri, invalid_keys[i]))
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "destinations must not contain the key: %s channel=%s. Give it on the channel of the publication or "
                "subscription instead", invalid_keys[i], uri->text);
            return -1;
        }
    }
    if (aa_uri_is_response_control_mode(uri))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "destinations may not specify control-mode=response. A response channel has no destinations "
            "(destination %s)", uri->text);
        return -1;
    }
    return 0;
}

/* The destination's parsed channel, or NULL with its parse error (or a key a destination may not carry),
 * naming what a destination is. */
static const aa_uri_t *aa_conductor_destination_uri(const aa_command_channel_t *destination)
{
    const aa_uri_t *uri = aa_conductor_channel_uri(destination);
    if (NULL == uri)
    {
        AA_APPEND_ERR("destination %s (a destination is aeron:udp?endpoint=host:port)", destination->text);
        return NULL;
    }
    return aa_conductor_check_destination_keys(uri) < 0 ? NULL : uri;
}

/* A destination is aeron:udp?endpoint=host:port (unicast, a port above 0) and nothing else. */
static int aa_conductor_destination_address(
    aa_driver_conductor_t *conductor, const aa_uri_t *uri, struct sockaddr_storage *address)
{
    const char *destination = uri->text;
    if (AA_URI_MEDIA_UDP != uri->media || uri->is_spy || NULL == aa_uri_find_param(uri, "endpoint"))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "destination %s: a destination is aeron:udp?endpoint=host:port (the receiver's address)", destination);
        return -1;
    }
    if (aa_conductor_check_destination_keys(uri) < 0)
    {
        return -1;
    }
    for (size_t i = 0; i < uri->params_count; i++)
    {
        if (0 != strcmp(uri->params[i].key, "endpoint"))
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "destination %s: parameter %s= is not applied to a destination; give only endpoint=host:port (the "
                "publication's channel carries its other parameters)", destination, uri->params[i].key);
            return -1;
        }
    }
    aa_driver_context_t *ctx = conductor->ctx;
    aa_udp_channel_defaults_t defaults =
    {
        (int32_t)ctx->socket_so_rcvbuf, (int32_t)ctx->socket_so_sndbuf, ctx->socket_multicast_ttl,
        &conductor->answers_resolver    /* the executor's answers: the conductor never blocks on a name */
    };
    aa_udp_channel_t *udp = NULL;
    if (aa_udp_channel_from_uri(&udp, uri, &defaults) < 0)
    {
        AA_APPEND_ERR("%s", "destination");
        return -1;
    }
    int rc = 0;
    if (udp->is_multicast)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "destination %s: a multi-destination-cast destination is a unicast address; use a multicast channel for a "
            "group", destination);
        rc = -1;
    }
    else if (0 == aa_udp_address_port(&udp->remote_data) || aa_udp_address_is_wildcard(&udp->remote_data))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "destination %s: give the receiver's address and port (endpoint=host:port, not a wildcard address, a port "
            "above 0)", destination);
        rc = -1;
    }
    else
    {
        *address = udp->remote_data;
    }
    aa_udp_channel_delete(udp);
    return rc;
}

static int aa_conductor_on_publication_destination(
    aa_driver_conductor_t *conductor, bool is_add, const aa_destination_command_t *command,
    const aa_command_channel_t *channel)
{
    const char *destination = channel->text;
    const char *verb = is_add ? "add_destination" : "remove_destination";
    aa_network_publication_t *pub = aa_conductor_find_network_publication(conductor, command->registration_id);
    if (NULL == pub)
    {
        if (aa_conductor_is_ipc_publication(conductor, command->registration_id))
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "%s: publication %" PRId64 " is an aeron:ipc publication, which has no destinations; destinations are "
                "for multi-destination-cast publications (aeron:udp?control-mode=manual)", verb, command->registration_id);
            return -1;
        }
        AA_SET_ERR(AA_ERROR_CODE_UNKNOWN_PUBLICATION, "%s: unknown publication registration id %" PRId64, verb,
            command->registration_id);
        return -1;
    }
    aa_send_channel_endpoint_t *endpoint = pub->endpoint;
    if (!endpoint->is_mdc || !endpoint->destinations.is_manual)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "%s: publication %" PRId64 " on %s is not a manual multi-destination-cast publication; add the publication "
            "with control-mode=manual (e.g. aeron:udp?control-mode=manual) to give it destinations%s", verb,
            command->registration_id, pub->channel->text,
            endpoint->is_mdc ? " (a control-mode=dynamic publication takes its destinations from the receivers' status "
            "messages)" : "");
        return -1;
    }
    const aa_uri_t *uri = aa_conductor_destination_uri(channel);
    struct sockaddr_storage address;
    if (NULL == uri || aa_conductor_destination_address(conductor, uri, &address) < 0)
    {
        return -1;
    }
    if (is_add)
    {
        if (aa_send_channel_endpoint_manual_destination_remove(endpoint, &address) > 0)
        {
            aa_send_channel_endpoint_manual_destination_add(endpoint, &address);
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "add_destination: %s is already a destination of publication %" PRId64 " on %s; remove it first",
                destination, command->registration_id, pub->channel->text);
            return -1;
        }
        if (aa_send_channel_endpoint_manual_destination_add(endpoint, &address) < 0)
        {
            return -1;
        }
        if (aa_driver_sender_proxy_add_destination(
            conductor->sender, endpoint, &address, aa_udp_address_length(&address), command->correlated.correlation_id) < 0)
        {
            aa_send_channel_endpoint_manual_destination_remove(endpoint, &address);
            return -1;
        }
        aa_conductor_resolution_on_destination(conductor, endpoint, &address, uri, true);
        return 0;
    }
    if (0 == aa_send_channel_endpoint_manual_destination_remove(endpoint, &address))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "remove_destination: %s is not a destination of publication %" PRId64 " on %s; remove only what "
            "add_destination added", destination, command->registration_id, pub->channel->text);
        return -1;
    }
    if (aa_driver_sender_proxy_remove_destination(conductor->sender, endpoint, &address) < 0)
    {
        aa_send_channel_endpoint_manual_destination_add(endpoint, &address);
        return -1;
    }
    aa_conductor_resolution_on_destination(conductor, endpoint, &address, uri, false);
    return 0;
}

static aa_subscription_link_t *aa_conductor_find_subscription_link(
    aa_driver_conductor_t *conductor, int64_t registration_id, int64_t client_id)
{
    for (size_t i = 0; i < conductor->subscription_links_count; i++)
    {
        aa_subscription_link_t *link = &conductor->subscription_links[i];
        if (link->registration_id == registration_id && link->client_id == client_id)
        {
            return link;
        }
    }
    return NULL;
}

static int aa_conductor_on_subscription_destination(
    aa_driver_conductor_t *conductor, bool is_add, const aa_destination_command_t *command,
    const aa_command_channel_t *channel, int64_t now_ms)
{
    const char *destination = channel->text;
    const char *verb = is_add ? "add_destination" : "remove_destination";
    aa_subscription_link_t *link =
        aa_conductor_find_subscription_link(conductor, command->registration_id, command->correlated.client_id);
    if (NULL == link)
    {
        AA_SET_ERR(AA_ERROR_CODE_UNKNOWN_SUBSCRIPTION, "%s: unknown subscription registration id %" PRId64, verb,
            command->registration_id);
        return -1;
    }
    aa_receive_channel_endpoint_t *endpoint = link->endpoint;
    if (NULL == endpoint || !endpoint->is_multi_destination)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "%s: subscription %" PRId64 " on %s is not a multi-destination subscription; subscribe with "
            "aeron:udp?control-mode=manual to give it destinations", verb, command->registration_id, link->channel);
        return -1;
    }
    const aa_uri_t *uri = aa_conductor_destination_uri(channel);
    if (NULL == uri)
    {
        return -1;
    }
    if (AA_URI_MEDIA_UDP != uri->media || uri->is_spy)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "destination %s: a subscription's destination is aeron:udp?endpoint=host:port (the address to receive on)",
            destination);
        return -1;
    }
    if (aa_conductor_check_destination_keys(uri) < 0 || aa_channel_check_applied(uri, false) < 0)
    {
        return -1;
    }
    aa_udp_channel_t *udp = NULL;
    if (aa_conductor_udp_channel(conductor, uri, false, &udp) < 0)
    {
        return -1;
    }
    if (udp->is_multicast)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "destination %s: multicast destinations of a multi-destination subscription are not supported by this "
            "driver yet; add a unicast endpoint=host:port, or subscribe to the group with its own subscription",
            destination);
        aa_udp_channel_delete(udp);
        return -1;
    }
    if (AA_UDP_CHANNEL_CONTROL_MODE_NONE != udp->control_mode || udp->has_explicit_control)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "destination %s: a subscription's destination is aeron:udp?endpoint=host:port; control= and control-mode= "
            "are not applied to it", destination);
        aa_udp_channel_delete(udp);
        return -1;
    }
    aa_receive_destination_t *existing = NULL;
    size_t index = 0;
    for (size_t i = 0; i < endpoint->conductor_destinations_count; i++)
    {
        if (aa_udp_address_equals(&endpoint->conductor_destinations[i]->channel->remote_data, &udp->remote_data))
        {
            existing = endpoint->conductor_destinations[i];
            index = i;
        }
    }
    if (!is_add)
    {
        aa_udp_channel_delete(udp);
        if (NULL == existing)
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "remove_destination: %s is not a destination of subscription %" PRId64 " on %s; remove only what "
                "add_destination added", destination, command->registration_id, link->channel);
            return -1;
        }
        if (AA_ARRAY_ENSURE(endpoint->removed_destinations, aa_receive_destination_t *) < 0 ||
            aa_driver_receiver_proxy_remove_destination(conductor->receiver, endpoint, existing) < 0)
        {
            return -1;
        }
        endpoint->conductor_destinations[index] =
            endpoint->conductor_destinations[--endpoint->conductor_destinations_count];
        endpoint->removed_destinations[endpoint->removed_destinations_count++] = existing;
        aa_conductor_free_counter(conductor, existing->local_sockaddr_counter_id, now_ms);
        existing->local_sockaddr_counter_id = -1;
        return 0;
    }
    if (NULL != existing)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "add_destination: %s is already a destination of subscription %" PRId64 " on %s; remove it first",
            destination, command->registration_id, link->channel);
        aa_udp_channel_delete(udp);
        return -1;
    }
    if (AA_ARRAY_ENSURE(endpoint->conductor_destinations, aa_receive_destination_t *) < 0)
    {
        aa_udp_channel_delete(udp);
        return -1;
    }
    aa_receive_destination_t *created = NULL;
    aa_loss_generator_settings_t loss =
    {
        &conductor->ctx->udp_receive_loss, &conductor->ctx->udp_send_loss, (uint64_t)conductor->ctx->udp_loss_seed
    };
    if (aa_receive_destination_create(&created, endpoint, udp, &loss) < 0)
    {
        aa_udp_channel_delete(udp);
        return -1;
    }
    created->local_sockaddr_counter_id = aa_conductor_allocate_local_sockaddr_counter(
        conductor, "rcv-local-sockaddr", endpoint->status_counter_id, &created->transport.bound_address,
        command->correlated.correlation_id, now_ms);
    if (created->local_sockaddr_counter_id < 0 ||
        aa_driver_receiver_proxy_add_destination(conductor->receiver, endpoint, created) < 0)
    {
        aa_conductor_free_counter(conductor, created->local_sockaddr_counter_id, now_ms);
        aa_receive_destination_delete(created);
        return -1;
    }
    endpoint->conductor_destinations[endpoint->conductor_destinations_count++] = created;
    return 0;
}

void aa_conductor_free_released_destinations(aa_receive_channel_endpoint_t *endpoint)
{
    for (size_t i = endpoint->removed_destinations_count; i-- > 0;)
    {
        aa_receive_destination_t *destination = endpoint->removed_destinations[i];
        if (1 == aa_get_int32_acquire(&destination->has_receiver_released))
        {
            endpoint->removed_destinations[i] = endpoint->removed_destinations[--endpoint->removed_destinations_count];
            aa_receive_destination_delete(destination);
        }
    }
}

int aa_conductor_on_destination_command(
    aa_driver_conductor_t *conductor, int32_t msg_type_id, const aa_destination_command_t *command,
    const aa_command_channel_t *destination, int64_t now_ms)
{
    int rc;
    switch (msg_type_id)
    {
        case AA_COMMAND_ADD_DESTINATION:
        case AA_COMMAND_REMOVE_DESTINATION:
            rc = aa_conductor_on_publication_destination(
                conductor, AA_COMMAND_ADD_DESTINATION == msg_type_id, command, destination);
            break;
        default:
            rc = aa_conductor_on_subscription_destination(
                conductor, AA_COMMAND_ADD_RCV_DESTINATION == msg_type_id, command, destination, now_ms);
            break;
    }
    if (0 == rc)
    {
        aa_conductor_on_operation_success(conductor, command->correlated.correlation_id);
    }
    return rc;
}
