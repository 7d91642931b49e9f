#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "driver/aa_driver_sender.h"
#include "util/aa_clock.h"
#include "util/aa_error.h"
#include "util/aa_array.h"
#include "media/aa_network_publication.h"
#include "media/aa_send_channel_endpoint.h"

#define AA_SENDER_COMMAND_DRAIN_LIMIT 64

int aa_driver_sender_init(aa_driver_sender_t *sender, aa_driver_context_t *ctx, const aa_media_services_t *services)
{
    memset(sender, 0, sizeof(*sender));
    sender->ctx = ctx;
    sender->services = services;
    sender->cycle_threshold_ns = ctx->sender_cycle_threshold_ns;
    sender->status_message_poll_timeout_ns = ctx->status_message_timeout_ns / 2;
    sender->send_to_status_poll_ratio = ctx->send_to_status_poll_ratio;
    sender->poller.epoll_fd = -1;
    sender->control_buffers = malloc((size_t)AA_DRIVER_SENDER_CONTROL_BATCH * AA_DRIVER_SENDER_CONTROL_BUFFER_LENGTH);
    if (NULL == sender->control_buffers)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory allocating the sender's receive buffers");
        return -1;
    }
    for (size_t i = 0; i < AA_DRIVER_SENDER_CONTROL_BATCH; i++)
    {
        sender->control_datagrams[i].buffer = sender->control_buffers + i * AA_DRIVER_SENDER_CONTROL_BUFFER_LENGTH;
        sender->control_datagrams[i].capacity = AA_DRIVER_SENDER_CONTROL_BUFFER_LENGTH;
    }
    if (aa_udp_transport_poller_init(&sender->poller) < 0)
    {
        free(sender->control_buffers);
        sender->control_buffers = NULL;
        AA_APPEND_ERR("%s", "creating the sender's poller");
        return -1;
    }
    if (aa_command_queue_init(&sender->commands, AA_COMMAND_QUEUE_CAPACITY_DEFAULT) < 0)
    {
        aa_udp_transport_poller_close(&sender->poller);
        free(sender->control_buffers);
        sender->control_buffers = NULL;
        AA_APPEND_ERR("%s", "creating the sender's command queue");
        return -1;
    }
    return 0;
}

/* ---- commands ---- */

typedef struct aa_sender_endpoint_args_stct
{
    aa_send_channel_endpoint_t *endpoint;
}
aa_sender_endpoint_args_t;

typedef struct aa_sender_publication_args_stct
{
    aa_network_publication_t *publication;
}
aa_sender_publication_args_t;

typedef struct aa_sender_destination_args_stct
{
    aa_send_channel_endpoint_t *endpoint;
    struct sockaddr_storage address;
    socklen_t address_length;
    int64_t registration_id;
}
aa_sender_destination_args_t;

static void aa_driver_sender_log_error(aa_driver_sender_t *sender)
{
    aa_media_services_log_error(sender->services, AA_ERROR_CODE_GENERIC_ERROR, aa_errmsg());
}

static void aa_driver_sender_on_add_endpoint(void *agent, const void *args)
{
    aa_driver_sender_t *sender = agent;
    aa_send_channel_endpoint_t *endpoint = ((const aa_sender_endpoint_args_t *)args)->endpoint;
    endpoint->time_of_last_sm_ns = aa_clock_nano_time(&sender->ctx->clock);
    if (aa_udp_transport_poller_add(&sender->poller, &endpoint->transport) < 0)
    {
        aa_driver_sender_log_error(sender);
        aa_put_int64_release(endpoint->status, AA_CHANNEL_ENDPOINT_STATUS_ERRORED);
        return;
    }
    if (endpoint->is_mdc && !endpoint->destinations.is_manual)
    {
        if (AA_ARRAY_ENSURE(sender->mdc_endpoints, aa_send_channel_endpoint_t *) < 0)
        {
            aa_media_services_log_error(sender->services, ENOMEM,
                "out of memory tracking a multi-destination-cast endpoint: its destinations will not time out");
            return;
        }
        sender->mdc_endpoints[sender->mdc_endpoints_count++] = endpoint;
    }
}

static void aa_driver_sender_on_add_destination(void *agent, const void *args)
{
    aa_driver_sender_t *sender = agent;
    const aa_sender_destination_args_t *a = args;
    if (aa_udp_destination_tracker_add(&a->endpoint->destinations, &a->address, a->address_length, a->registration_id,
        aa_clock_nano_time(&sender->ctx->clock)) < 0)
    {
        aa_driver_sender_log_error(sender);
    }
}

static void aa_driver_sender_on_remove_destination(void *agent, const void *args)
{
    (void)agent;
    const aa_sender_destination_args_t *a = args;
    aa_udp_destination_tracker_remove(&a->endpoint->destinations, &a->address);
}

static void aa_driver_sender_on_remove_endpoint(void *agent, const void *args)
{
    aa_driver_sender_t *sender = agent;
    aa_send_channel_endpoint_t *endpoint = ((const aa_sender_endpoint_args_t *)args)->endpoint;
    if (aa_udp_transport_poller_remove(&sender->poller, &endpoint->transport) < 0)
    {
        aa_driver_sender_log_error(sender);
    }
    aa_array_remove(sender->mdc_endpoints, &sender->mdc_endpoints_count, sizeof(endpoint), &endpoint);
    aa_put_int32_release(&endpoint->has_sender_released, 1);
}

static void aa_driver_sender_on_add_publication(void *agent, const void *args)
{
    aa_driver_sender_t *sender = agent;
    aa_network_publication_t *pub = ((const aa_sender_publication_args_t *)args)->publication;
    if (sender->publications_count == sender->publications_capacity)
    {
        size_t capacity = 0 == sender->publications_capacity ? 8 : sender->publications_capacity * 2;
        aa_network_publication_t **grown = realloc(sender->publications, capacity * sizeof(*grown));
        if (NULL == grown)
        {
            aa_media_services_log_error(sender->services, ENOMEM, "out of memory adding a publication to the sender");
            return;
        }
        sender->publications = grown;
        sender->publications_capacity = capacity;
    }
    if (aa_send_channel_endpoint_add_publication(pub->endpoint, pub) < 0)
    {
        aa_driver_sender_log_error(sender);
        return;
    }
    sender->publications[sender->publications_count++] = pub;
    aa_network_publication_on_added_to_sender(pub, aa_clock_nano_time(&sender->ctx->clock));
}

static void aa_driver_sender_on_remove_publication(void *agent, const void *args)
{
    aa_driver_sender_t *sender = agent;
    aa_network_publication_t *pub = ((const aa_sender_publication_args_t *)args)->publication;
    aa_array_remove(sender->publications, &sender->publications_count, sizeof(pub), &pub);
    aa_send_channel_endpoint_remove_publication(pub->endpoint, pub);
    aa_put_int32_release(&pub->has_sender_released, 1);
}

static int aa_driver_sender_offer(aa_driver_sender_t *sender, aa_command_func_t func, const void *args, size_t length)
{
    bool has_own_thread = AA_THREADING_MODE_DEDICATED == sender->ctx->threading_mode ||
        AA_THREADING_MODE_SHARED_NETWORK == sender->ctx->threading_mode;
    while (!aa_command_queue_offer(&sender->commands, func, args, length))
    {
        aa_media_services_count(sender->services, AA_SYSTEM_COUNTER_SENDER_PROXY_FAILS, 1);
        if (!has_own_thread)
        {
            AA_SET_ERR(AA_ERROR_CODE_RESOURCE_TEMPORARILY_UNAVAILABLE, "%s", "the sender's command queue is full");
            return -1;
        }
        sched_yield();
    }
    return 0;
}

int aa_driver_sender_proxy_add_endpoint(aa_driver_sender_t *sender, aa_send_channel_endpoint_t *endpoint)
{
    aa_sender_endpoint_args_t args = { endpoint };
    return aa_driver_sender_offer(sender, aa_driver_sender_on_add_endpoint, &args, sizeof(args));
}

int aa_driver_sender_proxy_remove_endpoint(aa_driver_sender_t *sender, aa_send_channel_endpoint_t *endpoint)
{
    aa_sender_endpoint_args_t args = { endpoint };
    return aa_driver_sender_offer(sender, aa_driver_sender_on_remove_endpoint, &args, sizeof(args));
}

int aa_driver_sender_proxy_add_publication(aa_driver_sender_t *sender, aa_network_publication_t *pub)
{
    aa_sender_publication_args_t args = { pub };
    return aa_driver_sender_offer(sender, aa_driver_sender_on_add_publication, &args, sizeof(args));
}

int aa_driver_sender_proxy_remove_publication(aa_driver_sender_t *sender, aa_network_publication_t *pub)
{
    aa_sender_publication_args_t args = { pub };
    return aa_driver_sender_offer(sender, aa_driver_sender_on_remove_publication, &args, sizeof(args));
}

int aa_driver_sender_proxy_add_destination(
    aa_driver_sender_t *sender, aa_send_channel_endpoint_t *endpoint, const struct sockaddr_storage *address,
    socklen_t address_length, int64_t registration_id)
{
    aa_sender_destination_args_t args = { endpoint, *address, address_length, registration_id };
    return aa_driver_sender_offer(sender, aa_driver_sender_on_add_destination, &args, sizeof(args));
}

int aa_driver_sender_proxy_remove_destination(
    aa_driver_sender_t *sender, aa_send_channel_endpoint_t *endpoint, const struct sockaddr_storage *address)
{
    aa_sender_destination_args_t args = { endpoint, *address, 0, -1 };
    return aa_driver_sender_offer(sender, aa_driver_sender_on_remove_destination, &args, sizeof(args));
}

typedef struct aa_sender_set_destination_args_stct
{
    aa_send_channel_endpoint_t *endpoint;
    struct sockaddr_in6 old_address;    /* IPv4 or IPv6 (fits a command slot, unlike two sockaddr_storage) */
    struct sockaddr_in6 address;
}
aa_sender_set_destination_args_t;

static void aa_driver_sender_on_set_destination(void *agent, const void *args)
{
    aa_driver_sender_t *sender = agent;
    const aa_sender_set_destination_args_t *a = args;
    struct sockaddr_storage old_address;
    struct sockaddr_storage address;
    memset(&old_address, 0, sizeof(old_address));
    memset(&address, 0, sizeof(address));
    memcpy(&old_address, &a->old_address, sizeof(a->old_address));
    memcpy(&address, &a->address, sizeof(a->address));
    aa_send_channel_endpoint_set_destination(a->endpoint, &old_address, &address, aa_clock_nano_time(&sender->ctx->clock));
}

int aa_driver_sender_proxy_set_destination(
    aa_driver_sender_t *sender, aa_send_channel_endpoint_t *endpoint, const struct sockaddr_storage *old_address,
    const struct sockaddr_storage *address)
{
    aa_sender_set_destination_args_t args;
    memset(&args, 0, sizeof(args));
    args.endpoint = endpoint;
    memcpy(&args.old_address, old_address, aa_udp_address_length(old_address));
    memcpy(&args.address, address, aa_udp_address_length(address));
    return aa_driver_sender_offer(sender, aa_driver_sender_on_set_destination, &args, sizeof(args));
}

/* ---- duty cycle ---- */

static void aa_driver_sender_on_control_datagram(void *clientd, aa_udp_transport_t *transport, aa_udp_datagram_t *datagram)
{
    aa_driver_sender_t *sender = clientd;
    if (!aa_send_channel_endpoint_on_datagram(transport->clientd, datagram, sender->now_ns))
    {
        sender->keepalive_datagrams++;
    }
}

int aa_driver_sender_do_work(void *state)
{
    aa_driver_sender_t *sender = state;
    int64_t now_ns = aa_clock_nano_time(&sender->ctx->clock);
    sender->now_ns = now_ns;
    int work_count = aa_command_queue_drain(&sender->commands, sender, AA_SENDER_COMMAND_DRAIN_LIMIT);
    for (size_t i = 0; i < sender->mdc_endpoints_count; i++)
    {
        work_count += aa_send_channel_endpoint_check_destinations(sender->mdc_endpoints[i], now_ns);
    }

    int64_t interval_ns = sender->ctx->reresolution_check_interval_ns;
    if (interval_ns > 0 && now_ns >= sender->next_reresolution_check_ns)
    {
        sender->next_reresolution_check_ns = now_ns + interval_ns;
        for (size_t i = 0; i < sender->poller.transports_count; i++)
        {
            aa_send_channel_endpoint_check_re_resolution(sender->poller.transports[i]->clientd, now_ns);
        }
    }

    int bytes_sent = 0;
    size_t count = sender->publications_count;
    if (count > 0)
    {
        size_t start = sender->round_robin_index++ % count;
        for (size_t i = 0; i < count; i++)
        {
            bytes_sent += aa_network_publication_send(sender->publications[(start + i) % count], now_ns);
        }
    }
    work_count += bytes_sent;

    if (sender->poller.transports_count > 0 &&
        (0 == bytes_sent || ++sender->duty_cycle_counter >= sender->send_to_status_poll_ratio ||
        now_ns > sender->time_of_last_control_poll_ns + sender->status_message_poll_timeout_ns))
    {
        sender->keepalive_datagrams = 0;
        int polled = aa_udp_transport_poller_poll(
            &sender->poller, sender->control_datagrams, AA_DRIVER_SENDER_CONTROL_BATCH,
            aa_driver_sender_on_control_datagram, sender);
        if (polled < 0)
        {
            aa_driver_sender_log_error(sender);
        }
        else
        {
            work_count += polled - sender->keepalive_datagrams; /* status messages: no work of their own */
        }
        sender->duty_cycle_counter = 0;
        sender->time_of_last_control_poll_ns = now_ns;
    }

    aa_media_services_record_cycle(
        sender->services, aa_clock_nano_time(&sender->ctx->clock) - now_ns, sender->cycle_threshold_ns,
        AA_SYSTEM_COUNTER_SENDER_MAX_CYCLE_TIME, AA_SYSTEM_COUNTER_SENDER_CYCLE_TIME_THRESHOLD_EXCEEDED);
    return work_count;
}

void aa_driver_sender_on_close(void *state)
{
    aa_driver_sender_t *sender = state;
    aa_command_queue_close(&sender->commands);
    aa_udp_transport_poller_close(&sender->poller);
    AA_ARRAY_FREE(sender->publications);
    AA_ARRAY_FREE(sender->mdc_endpoints);
    free(sender->control_buffers);
    sender->control_buffers = NULL;
}
