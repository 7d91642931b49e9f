/*
 * The conductor's destination commands (reference 7.3, 9.3): ADD_DESTINATION and REMOVE_DESTINATION
 * name a publication by its registration id and a destination channel (aeron:udp?endpoint=host:port).
 * Only a manual multi-destination-cast publication (control-mode=manual) takes them; the destination
 * is resolved here (a name lookup blocks the conductor, as for any channel), checked against the
 * endpoint's list of manual destinations, and handed to the sender, which owns the destination table.
 * ADD_RCV_DESTINATION and REMOVE_RCV_DESTINATION (multi-destination subscriptions) are answered with
 * an error naming what to do instead.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "aa_driver_conductor_private.h"
#include "../util/aa_error.h"

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

/* A destination is aeron:udp?endpoint=host:port (unicast, a port above 0) and nothing else. */
static int aa_conductor_parse_destination(
    aa_driver_conductor_t *conductor, const char *destination, struct sockaddr_storage *address)
{
    aa_uri_t uri;
    if (aa_uri_parse(destination, &uri) < 0)
    {
        AA_APPEND_ERR("destination %s (a destination is aeron:udp?endpoint=host:port)", destination);
        return -1;
    }
    if (AA_URI_MEDIA_UDP != uri.media || uri.is_spy || NULL == aa_uri_find_param(&uri, "endpoint"))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "destination %s: a destination is aeron:udp?endpoint=host:port (the receiver's address)", destination);
        return -1;
    }
    for (size_t i = 0; i < uri.params_count; i++)
    {
        if (0 != strcmp(uri.params[i].key, "endpoint"))
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "destination %s: parameter %s= is not applied to a destination; give only endpoint=host:port (the "
                "publication's channel carries its other parameters)", destination, uri.params[i].key);
            return -1;
        }
    }
    aa_driver_context_t *ctx = conductor->ctx;
    aa_udp_channel_defaults_t defaults =
    {
        (int32_t)ctx->socket_so_rcvbuf, (int32_t)ctx->socket_so_sndbuf, ctx->socket_multicast_ttl,
        conductor->name_resolver
    };
    aa_udp_channel_t *udp = NULL;
    if (aa_udp_channel_parse(&udp, destination, &defaults) < 0)
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
    aa_driver_conductor_t *conductor, bool is_add, const aa_destination_command_t *command, const char *destination)
{
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
            command->registration_id, pub->channel,
            endpoint->is_mdc ? " (a control-mode=dynamic publication takes its destinations from the receivers' status "
            "messages)" : "");
        return -1;
    }
    struct sockaddr_storage address;
    if (aa_conductor_parse_destination(conductor, destination, &address) < 0)
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
                destination, command->registration_id, pub->channel);
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
        return 0;
    }
    if (0 == aa_send_channel_endpoint_manual_destination_remove(endpoint, &address))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "remove_destination: %s is not a destination of publication %" PRId64 " on %s; remove only what "
            "add_destination added", destination, command->registration_id, pub->channel);
        return -1;
    }
    if (aa_driver_sender_proxy_remove_destination(conductor->sender, endpoint, &address) < 0)
    {
        aa_send_channel_endpoint_manual_destination_add(endpoint, &address);
        return -1;
    }
    return 0;
}

int aa_conductor_on_destination_command(
    aa_driver_conductor_t *conductor, int32_t msg_type_id, const aa_destination_command_t *command,
    const char *destination, int64_t now_ns)
{
    (void)now_ns;
    int rc;
    switch (msg_type_id)
    {
        case AA_COMMAND_ADD_DESTINATION:
        case AA_COMMAND_REMOVE_DESTINATION:
            rc = aa_conductor_on_publication_destination(
                conductor, AA_COMMAND_ADD_DESTINATION == msg_type_id, command, destination);
            break;
        default:
            AA_SET_ERR(AA_ERROR_CODE_NOT_SUPPORTED, "%s",
                "multi-destination subscriptions (add_destination on a subscription) are not supported by this driver "
                "yet; subscribe to each channel with its own subscription instead");
            rc = -1;
            break;
    }
    if (0 == rc)
    {
        aa_conductor_on_operation_success(conductor, command->correlated.correlation_id);
    }
    return rc;
}
