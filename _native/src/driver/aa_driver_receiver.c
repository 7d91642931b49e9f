#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "driver/aa_driver_receiver.h"
#include "util/aa_array.h"
#include "util/aa_clock.h"
#include "util/aa_error.h"
#include "media/aa_publication_image.h"
#include "media/aa_receive_channel_endpoint.h"

#define AA_RECEIVER_COMMAND_DRAIN_LIMIT 64

int aa_driver_receiver_init(aa_driver_receiver_t *receiver, aa_driver_context_t *ctx, const aa_media_services_t *services)
{
    memset(receiver, 0, sizeof(*receiver));
    receiver->ctx = ctx;
    receiver->services = services;
    receiver->cycle_threshold_ns = ctx->receiver_cycle_threshold_ns;
    receiver->caught_up_ns = aa_clock_nano_time(&ctx->clock);
    receiver->poller.epoll_fd = -1;
    receiver->buffers = malloc((size_t)AA_DRIVER_RECEIVER_BATCH * AA_DRIVER_RECEIVER_BUFFER_LENGTH);
    if (NULL == receiver->buffers)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory allocating the receiver's buffers");
        return -1;
    }
    for (size_t i = 0; i < AA_DRIVER_RECEIVER_BATCH; i++)
    {
        receiver->datagrams[i].buffer = receiver->buffers + i * AA_DRIVER_RECEIVER_BUFFER_LENGTH;
        receiver->datagrams[i].capacity = AA_DRIVER_RECEIVER_BUFFER_LENGTH;
    }
    if (aa_udp_transport_poller_init(&receiver->poller) < 0)
    {
        free(receiver->buffers);
        receiver->buffers = NULL;
        AA_APPEND_ERR("%s", "creating the receiver's poller");
        return -1;
    }
    if (aa_command_queue_init(&receiver->commands, AA_COMMAND_QUEUE_CAPACITY_DEFAULT) < 0)
    {
        aa_udp_transport_poller_close(&receiver->poller);
        free(receiver->buffers);
        receiver->buffers = NULL;
        AA_APPEND_ERR("%s", "creating the receiver's command queue");
        return -1;
    }
    return 0;
}

/* ---- commands ---- */

typedef struct aa_receiver_endpoint_args_stct
{
    aa_receive_channel_endpoint_t *endpoint;
    int32_t stream_id;
}
aa_receiver_endpoint_args_t;

typedef struct aa_receiver_image_args_stct
{
    aa_publication_image_t *image;
}
aa_receiver_image_args_t;

static void aa_driver_receiver_log_error(aa_driver_receiver_t *receiver)
{
    aa_media_services_log_error(receiver->services, AA_ERROR_CODE_GENERIC_ERROR, aa_errmsg());
}

static void aa_driver_receiver_on_add_endpoint(void *agent, const void *args)
{
    aa_driver_receiver_t *receiver = agent;
    aa_receive_channel_endpoint_t *endpoint = ((const aa_receiver_endpoint_args_t *)args)->endpoint;
    if (AA_ARRAY_ENSURE(receiver->endpoints, aa_receive_channel_endpoint_t *) < 0 ||
        (!endpoint->is_multi_destination && aa_udp_transport_poller_add(&receiver->poller, &endpoint->transport) < 0))
    {
        aa_driver_receiver_log_error(receiver);
        aa_put_int64_release(endpoint->status, AA_CHANNEL_ENDPOINT_STATUS_ERRORED);
        return;
    }
    /* a multi-destination endpoint taken back while closing: its destinations are polled again */
    for (size_t i = 0; i < endpoint->destinations_count; i++)
    {
        if (aa_udp_transport_poller_add(&receiver->poller, &endpoint->destinations[i]->transport) < 0)
        {
            aa_driver_receiver_log_error(receiver);
        }
    }
    endpoint->time_of_last_activity_ns = aa_clock_nano_time(&receiver->ctx->clock);
    receiver->endpoints[receiver->endpoints_count++] = endpoint;
}

static void aa_driver_receiver_on_remove_endpoint(void *agent, const void *args)
{
    aa_driver_receiver_t *receiver = agent;
    aa_receive_channel_endpoint_t *endpoint = ((const aa_receiver_endpoint_args_t *)args)->endpoint;
    if (aa_array_remove(receiver->endpoints, &receiver->endpoints_count, sizeof(endpoint), &endpoint))
    {
        if (!endpoint->is_multi_destination && aa_udp_transport_poller_remove(&receiver->poller, &endpoint->transport) < 0)
        {
            aa_driver_receiver_log_error(receiver);
        }
        for (size_t j = 0; j < endpoint->destinations_count; j++)
        {
            if (aa_udp_transport_poller_remove(&receiver->poller, &endpoint->destinations[j]->transport) < 0)
            {
                aa_driver_receiver_log_error(receiver);
            }
        }
    }
    aa_get_and_add_int32(&endpoint->receiver_removals, 1);
}

static void aa_driver_receiver_on_add_subscription(void *agent, const void *args)
{
    aa_driver_receiver_t *receiver = agent;
    const aa_receiver_endpoint_args_t *a = args;
    if (aa_receive_channel_endpoint_add_stream(a->endpoint, a->stream_id) < 0)
    {
        aa_driver_receiver_log_error(receiver);
    }
}

typedef struct aa_receiver_session_args_stct
{
    aa_receive_channel_endpoint_t *endpoint;
    int32_t stream_id;
    int32_t session_id;
    bool add_stream;
}
aa_receiver_session_args_t;

/* Response channels (reference wave3 1.2, step 7): the response subscription's stream, now that its session is
 * known (add_stream), and a SETUP elicited from that session at control=. */
static void aa_driver_receiver_on_response_session(void *agent, const void *args)
{
    aa_driver_receiver_t *receiver = agent;
    const aa_receiver_session_args_t *a = args;
    if (a->add_stream && aa_receive_channel_endpoint_add_stream(a->endpoint, a->stream_id) < 0)
    {
        aa_driver_receiver_log_error(receiver);
        return;
    }
    aa_receive_channel_endpoint_elicit_setup(a->endpoint, a->stream_id, a->session_id);
}

static void aa_driver_receiver_on_remove_subscription(void *agent, const void *args)
{
    (void)agent;
    const aa_receiver_endpoint_args_t *a = args;
    aa_receive_channel_endpoint_remove_stream(a->endpoint, a->stream_id);
}

static void aa_driver_receiver_on_add_image(void *agent, const void *args)
{
    aa_driver_receiver_t *receiver = agent;
    aa_publication_image_t *image = ((const aa_receiver_image_args_t *)args)->image;
    if (AA_ARRAY_ENSURE(receiver->images, aa_publication_image_t *) < 0 ||
        aa_receive_channel_endpoint_add_image(image->endpoint, image) < 0)
    {
        aa_driver_receiver_log_error(receiver);
        return;
    }
    receiver->images[receiver->images_count++] = image;
}

static void aa_driver_receiver_on_remove_image(void *agent, const void *args)
{
    aa_driver_receiver_t *receiver = agent;
    aa_publication_image_t *image = ((const aa_receiver_image_args_t *)args)->image;
    aa_array_remove(receiver->images, &receiver->images_count, sizeof(image), &image);
    aa_receive_channel_endpoint_remove_image(image->endpoint, image, aa_clock_nano_time(&receiver->ctx->clock));
    aa_put_int32_release(&image->has_receiver_released, 1);
}

typedef struct aa_receiver_destination_args_stct
{
    aa_receive_channel_endpoint_t *endpoint;
    aa_receive_destination_t *destination;
}
aa_receiver_destination_args_t;

static bool aa_driver_receiver_is_polling(aa_driver_receiver_t *receiver, aa_receive_channel_endpoint_t *endpoint)
{
    for (size_t i = 0; i < receiver->endpoints_count; i++)
    {
        if (receiver->endpoints[i] == endpoint)
        {
            return true;
        }
    }
    return false;
}

static void aa_driver_receiver_on_add_destination(void *agent, const void *args)
{
    aa_driver_receiver_t *receiver = agent;
    const aa_receiver_destination_args_t *a = args;
    if (aa_receive_channel_endpoint_add_destination(a->endpoint, a->destination) < 0 ||
        (aa_driver_receiver_is_polling(receiver, a->endpoint) &&
        aa_udp_transport_poller_add(&receiver->poller, &a->destination->transport) < 0))
    {
        aa_driver_receiver_log_error(receiver);
    }
}

static void aa_driver_receiver_on_remove_destination(void *agent, const void *args)
{
    aa_driver_receiver_t *receiver = agent;
    const aa_receiver_destination_args_t *a = args;
    bool is_added = false;
    for (size_t i = 0; i < a->endpoint->destinations_count; i++)
    {
        is_added |= a->endpoint->destinations[i] == a->destination;
    }
    if (is_added && aa_driver_receiver_is_polling(receiver, a->endpoint) &&
        aa_udp_transport_poller_remove(&receiver->poller, &a->destination->transport) < 0)
    {
        aa_driver_receiver_log_error(receiver);
    }
    aa_receive_channel_endpoint_remove_destination(a->endpoint, a->destination);
    aa_put_int32_release(&a->destination->has_receiver_released, 1);
}

static int aa_driver_receiver_offer(aa_driver_receiver_t *receiver, aa_command_func_t func, const void *args, size_t length)
{
    bool has_own_thread = AA_THREADING_MODE_DEDICATED == receiver->ctx->threading_mode ||
        AA_THREADING_MODE_SHARED_NETWORK == receiver->ctx->threading_mode;
    while (!aa_command_queue_offer(&receiver->commands, func, args, length))
    {
        aa_media_services_count(receiver->services, AA_SYSTEM_COUNTER_RECEIVER_PROXY_FAILS, 1);
        if (!has_own_thread)
        {
            AA_SET_ERR(AA_ERROR_CODE_RESOURCE_TEMPORARILY_UNAVAILABLE, "%s", "the receiver's command queue is full");
            return -1;
        }
        sched_yield();
    }
    return 0;
}

typedef struct aa_receiver_set_control_args_stct
{
    aa_receive_channel_endpoint_t *endpoint;
    struct sockaddr_storage address;
}
aa_receiver_set_control_args_t;

static void aa_driver_receiver_on_set_control_address(void *agent, const void *args)
{
    aa_driver_receiver_t *receiver = agent;
    const aa_receiver_set_control_args_t *a = args;
    aa_receive_channel_endpoint_set_control_address(a->endpoint, &a->address, aa_clock_nano_time(&receiver->ctx->clock));
}

int aa_driver_receiver_proxy_set_control_address(
    aa_driver_receiver_t *receiver, aa_receive_channel_endpoint_t *endpoint, const struct sockaddr_storage *address)
{
    aa_receiver_set_control_args_t args = { endpoint, *address };
    return aa_driver_receiver_offer(receiver, aa_driver_receiver_on_set_control_address, &args, sizeof(args));
}

int aa_driver_receiver_proxy_add_endpoint(aa_driver_receiver_t *receiver, aa_receive_channel_endpoint_t *endpoint)
{
    aa_receiver_endpoint_args_t args = { endpoint, 0 };
    return aa_driver_receiver_offer(receiver, aa_driver_receiver_on_add_endpoint, &args, sizeof(args));
}

int aa_driver_receiver_proxy_remove_endpoint(aa_driver_receiver_t *receiver, aa_receive_channel_endpoint_t *endpoint)
{
    aa_receiver_endpoint_args_t args = { endpoint, 0 };
    return aa_driver_receiver_offer(receiver, aa_driver_receiver_on_remove_endpoint, &args, sizeof(args));
}

int aa_driver_receiver_proxy_add_subscription(
    aa_driver_receiver_t *receiver, aa_receive_channel_endpoint_t *endpoint, int32_t stream_id)
{
    aa_receiver_endpoint_args_t args = { endpoint, stream_id };
    return aa_driver_receiver_offer(receiver, aa_driver_receiver_on_add_subscription, &args, sizeof(args));
}

int aa_driver_receiver_proxy_response_session(
    aa_driver_receiver_t *receiver, aa_receive_channel_endpoint_t *endpoint, int32_t stream_id, int32_t session_id,
    bool add_stream)
{
    aa_receiver_session_args_t args = { endpoint, stream_id, session_id, add_stream };
    return aa_driver_receiver_offer(receiver, aa_driver_receiver_on_response_session, &args, sizeof(args));
}

int aa_driver_receiver_proxy_remove_subscription(
    aa_driver_receiver_t *receiver, aa_receive_channel_endpoint_t *endpoint, int32_t stream_id)
{
    aa_receiver_endpoint_args_t args = { endpoint, stream_id };
    return aa_driver_receiver_offer(receiver, aa_driver_receiver_on_remove_subscription, &args, sizeof(args));
}

int aa_driver_receiver_proxy_add_image(aa_driver_receiver_t *receiver, aa_publication_image_t *image)
{
    aa_receiver_image_args_t args = { image };
    return aa_driver_receiver_offer(receiver, aa_driver_receiver_on_add_image, &args, sizeof(args));
}

int aa_driver_receiver_proxy_remove_image(aa_driver_receiver_t *receiver, aa_publication_image_t *image)
{
    aa_receiver_image_args_t args = { image };
    return aa_driver_receiver_offer(receiver, aa_driver_receiver_on_remove_image, &args, sizeof(args));
}

int aa_driver_receiver_proxy_add_destination(
    aa_driver_receiver_t *receiver, aa_receive_channel_endpoint_t *endpoint, aa_receive_destination_t *destination)
{
    aa_receiver_destination_args_t args = { endpoint, destination };
    return aa_driver_receiver_offer(receiver, aa_driver_receiver_on_add_destination, &args, sizeof(args));
}

int aa_driver_receiver_proxy_remove_destination(
    aa_driver_receiver_t *receiver, aa_receive_channel_endpoint_t *endpoint, aa_receive_destination_t *destination)
{
    aa_receiver_destination_args_t args = { endpoint, destination };
    return aa_driver_receiver_offer(receiver, aa_driver_receiver_on_remove_destination, &args, sizeof(args));
}

/* ---- duty cycle ---- */

static void aa_driver_receiver_on_datagram(void *clientd, aa_udp_transport_t *transport, aa_udp_datagram_t *datagram)
{
    aa_driver_receiver_t *receiver = clientd;
    if (!aa_receive_channel_endpoint_on_transport_datagram(transport->clientd, transport, datagram, receiver->now_ns))
    {
        receiver->keepalive_datagrams++;
    }
}

int aa_driver_receiver_do_work(void *state)
{
    aa_driver_receiver_t *receiver = state;
    int64_t now_ns = aa_clock_nano_time(&receiver->ctx->clock);
    receiver->now_ns = now_ns;
    int work_count = aa_command_queue_drain(&receiver->commands, receiver, AA_RECEIVER_COMMAND_DRAIN_LIMIT);

    /* Keepalives (heartbeats every 100 ms, status messages every 200 ms) are no work: they must not
     * keep an idle driver from sleeping deeply. */
    if (receiver->poller.transports_count > 0)
    {
        receiver->keepalive_datagrams = 0;
        int polled = aa_udp_transport_poller_poll(
            &receiver->poller, receiver->datagrams, AA_DRIVER_RECEIVER_BATCH, aa_driver_receiver_on_datagram, receiver);
        if (polled < 0)
        {
            aa_driver_receiver_log_error(receiver);
        }
        else
        {
            work_count += polled - receiver->keepalive_datagrams;
        }
        if (receiver->poller.drained)
        {
            aa_put_int64_release(&receiver->caught_up_ns, now_ns);
        }
    }
    else
    {
        aa_put_int64_release(&receiver->caught_up_ns, now_ns);
    }

    for (size_t i = 0; i < receiver->images_count; i++)
    {
        work_count += aa_publication_image_track_rebuild(receiver->images[i], now_ns);
    }

    if (now_ns > receiver->time_of_last_sweep_ns + AA_DRIVER_RECEIVER_SESSION_SWEEP_INTERVAL_NS)
    {
        receiver->time_of_last_sweep_ns = now_ns;
        for (size_t i = 0; i < receiver->endpoints_count; i++)
        {
            aa_receive_channel_endpoint_expire_sessions(receiver->endpoints[i], now_ns);
        }
    }
    for (size_t i = 0; i < receiver->endpoints_count; i++)
    {
        work_count += aa_receive_channel_endpoint_elicit_setups(receiver->endpoints[i], now_ns);
    }
    int64_t interval_ns = receiver->ctx->reresolution_check_interval_ns;
    if (interval_ns > 0 && now_ns >= receiver->next_reresolution_check_ns)
    {
        receiver->next_reresolution_check_ns = now_ns + interval_ns;
        for (size_t i = 0; i < receiver->endpoints_count; i++)
        {
            aa_receive_channel_endpoint_check_re_resolution(receiver->endpoints[i], now_ns);
        }
    }

    aa_media_services_record_cycle(
        receiver->services, aa_clock_nano_time(&receiver->ctx->clock) - now_ns, receiver->cycle_threshold_ns,
        AA_SYSTEM_COUNTER_RECEIVER_MAX_CYCLE_TIME, AA_SYSTEM_COUNTER_RECEIVER_CYCLE_TIME_THRESHOLD_EXCEEDED);
    return work_count;
}

void aa_driver_receiver_on_close(void *state)
{
    aa_driver_receiver_t *receiver = state;
    aa_command_queue_close(&receiver->commands);
    aa_udp_transport_poller_close(&receiver->poller);
    AA_ARRAY_FREE(receiver->endpoints);
    AA_ARRAY_FREE(receiver->images);
    free(receiver->buffers);
    receiver->buffers = NULL;
}
