/*
 * The conductor's response channels (docs/architecture.md, "Response channels"; reference wave3 1): the
 * checks Aeron makes with its error texts, a response publication linked to the image of the request it
 * answers (UDP) or to the requester's response subscription (IPC), and the sender's two events: an
 * RSP_SETUP for a request publication (the requester's response subscription learns its session) and a
 * response publication's first receiver (the image stops sending RSP_SETUP).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "driver/aa_driver_conductor_private.h"
#include "util/aa_error.h"

bool aa_conductor_link_matches_session(const aa_subscription_link_t *link, int32_t session_id)
{
    return link->has_session_id ? link->session_id == session_id : !link->is_response;
}

int aa_conductor_check_ipc_control_mode(const aa_uri_t *uri)
{
    const char *mode = aa_uri_find_param(uri, "control-mode");
    if (AA_URI_MEDIA_IPC == uri->media && NULL != mode && 0 != strcmp(mode, "response"))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel %s: control-mode=%s applies to aeron:udp; aeron:ipc takes control-mode=response only (a response "
            "channel)", uri->text, mode);
        return -1;
    }
    return 0;
}

int aa_conductor_check_clashing_subscription(
    aa_driver_conductor_t *conductor, const aa_subscription_link_t *link, const aa_receive_channel_endpoint_t *endpoint)
{
    for (size_t i = 0; i < conductor->subscription_links_count; i++)
    {
        /* as Aeron: only a subscription taking the same sessions (a response one that learnt its session no longer
         * does) */
        const aa_subscription_link_t *other = &conductor->subscription_links[i];
        if (other->endpoint == endpoint && other->stream_id == link->stream_id &&
            other->has_session_id == link->has_session_id &&
            (!link->has_session_id || other->session_id == link->session_id) && other->is_response != link->is_response)
        {
            /* Aeron's words, then ours */
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "option conflicts with existing subscription: isResponse=%s existingChannel=%s channel=%s. Give both the "
                "same control-mode", link->is_response ? "true" : "false", other->channel, link->channel);
            return -1;
        }
    }
    return 0;
}

int aa_conductor_resolve_response_publication(
    aa_driver_conductor_t *conductor, const aa_uri_t *uri, const aa_publication_params_t *params,
    aa_publication_image_t **image)
{
    *image = NULL;
    if (AA_URI_MEDIA_UDP != uri->media)
    {
        return 0;   /* reference wave3 1.3: for IPC nothing is checked */
    }
    const int64_t id = params->response_correlation_id;
    if (!params->is_response_control_mode)
    {
        if (id < 0)
        {
            return 0;
        }
        /* a request: its response subscription (a network subscription) must be on this driver */
        for (size_t i = 0; i < conductor->subscription_links_count; i++)
        {
            const aa_subscription_link_t *link = &conductor->subscription_links[i];
            if (link->registration_id == id && NULL != link->endpoint)
            {
                return 0;
            }
        }
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "unable to find response subscription for response-correlation-id=%" PRId64 "; add the response "
            "subscription (aeron:udp?control-mode=response|control=host:port) first and give its registration id "
            "(channel %s)", id, uri->text);
        return -1;
    }
    if (AA_URI_RESPONSE_CORRELATION_ID_NONE == id)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "control-mode=response was specified, but no response-correlation-id set; give the correlation id of the "
            "request's image (response-correlation-id=<image.correlation_id>), or prototype (channel %s)", uri->text);
        return -1;
    }
    if (AA_URI_RESPONSE_CORRELATION_ID_PROTOTYPE == id)
    {
        return 0;
    }
    for (size_t i = 0; i < conductor->images_count; i++)
    {
        aa_publication_image_t *candidate = conductor->images[i];
        if (candidate->correlation_id == id)
        {
            if (!aa_publication_image_has_send_response_setup(candidate))
            {
                AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                    "image.correlationId=%" PRId64 " did not request a response channel; its publication has no "
                    "response-correlation-id (channel %s)", id, uri->text);
                return -1;
            }
            *image = candidate;
            return 0;
        }
    }
    AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
        "image.correlationId=%" PRId64 " not found; give the correlation id of an image of this driver (channel %s)",
        id, uri->text);
    return -1;
}

void aa_conductor_link_response_image(aa_publication_image_t *image, int32_t session_id)
{
    /* the image's receiver sends RSP_SETUP at once, then with every status message (aa_publication_image.c) */
    aa_put_int64_release(&image->response_session_id, session_id);
}

void aa_conductor_update_ipc_response_subscription(aa_driver_conductor_t *conductor, const aa_ipc_publication_t *pub)
{
    if (pub->response_correlation_id < 0)
    {
        return;
    }
    int64_t subscription_id = AA_URI_RESPONSE_CORRELATION_ID_NONE;
    for (size_t i = 0; i < conductor->ipc_publications_count; i++)
    {
        const aa_ipc_publication_t *request = conductor->ipc_publications[i];
        if (request->registration_id == pub->response_correlation_id)
        {
            subscription_id = request->response_correlation_id;
            break;
        }
    }
    if (subscription_id < 0)
    {
        return;
    }
    for (size_t i = 0; i < conductor->subscription_links_count; i++)
    {
        aa_subscription_link_t *link = &conductor->subscription_links[i];
        if (link->registration_id == subscription_id && NULL == link->endpoint && NULL == link->spy_channel)
        {
            link->session_id = pub->session_id;
            link->has_session_id = true;
            link->is_response = false;
            return;
        }
    }
}

/* ---- the sender's events ---- */

typedef struct aa_response_event_args_stct
{
    int64_t response_correlation_id;
    int32_t response_session_id;
}
aa_response_event_args_t;

/* Reference wave3 1.2, step 7: the response subscription whose registration id the request carries takes the
 * session (once: it stays bound to the first it learns) and asks control= for SETUP. */
static void aa_conductor_on_response_setup(void *agent, const void *args)
{
    aa_driver_conductor_t *conductor = agent;
    const aa_response_event_args_t *a = args;
    for (size_t i = 0; i < conductor->subscription_links_count; i++)
    {
        aa_subscription_link_t *link = &conductor->subscription_links[i];
        if (link->registration_id != a->response_correlation_id || NULL == link->endpoint)
        {
            continue;
        }
        const bool is_new = !link->has_session_id;
        if (is_new)
        {
            link->session_id = a->response_session_id;
            link->has_session_id = true;
            link->is_response = false;
        }
        if (aa_driver_receiver_proxy_response_session(
            conductor->receiver, link->endpoint, link->stream_id, link->session_id, !link->is_receiver_subscribed) < 0)
        {
            aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR, aa_errmsg());
            return;    /* RSP_SETUP comes again with the next status message */
        }
        link->is_receiver_subscribed = true;
        return;
    }
}

/* Reference wave3 1.2, step 9: the requester's image exists, so RSP_SETUP stops. */
static void aa_conductor_on_response_connected(void *agent, const void *args)
{
    aa_driver_conductor_t *conductor = agent;
    const aa_response_event_args_t *a = args;
    for (size_t i = 0; i < conductor->images_count; i++)
    {
        aa_publication_image_t *image = conductor->images[i];
        if (image->correlation_id == a->response_correlation_id)
        {
            aa_put_int64_release(&image->response_session_id, AA_PUBLICATION_IMAGE_NULL_RESPONSE_SESSION_ID);
            return;
        }
    }
}

static void aa_conductor_offer_response_event(
    aa_driver_conductor_t *conductor, aa_command_func_t handler, int64_t response_correlation_id,
    int32_t response_session_id)
{
    aa_response_event_args_t args = { response_correlation_id, response_session_id };
    if (!aa_command_queue_offer(&conductor->sender_commands, handler, &args, sizeof(args)))
    {
        aa_driver_conductor_count(conductor, AA_SYSTEM_COUNTER_CONDUCTOR_PROXY_FAILS, 1);    /* it comes again */
        return;
    }
    aa_doorbell_ring(aa_cnc_doorbell(conductor->cnc));
}

void aa_conductor_services_response_setup(void *clientd, int64_t response_correlation_id, int32_t response_session_id)
{
    aa_conductor_offer_response_event(clientd, aa_conductor_on_response_setup, response_correlation_id, response_session_id);
}

void aa_conductor_services_response_connected(void *clientd, int64_t response_correlation_id)
{
    aa_conductor_offer_response_event(clientd, aa_conductor_on_response_connected, response_correlation_id, 0);
}
