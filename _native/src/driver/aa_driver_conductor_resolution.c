/*
 * The conductor's name resolution (reference 8): the driver's resolver (built with its context)
 * and its periodic work, the executor that runs lookups off the conductor, client commands that
 * wait for a name, names that do not resolve yet (AERON_NAME_RESOLUTION_PENDING_ALLOWED),
 * re-resolution of silent endpoints and control addresses, and the resolutions table.
 *
 * A client command whose channel names a host (endpoint=, control=, interface= not an address
 * literal) is copied into a request, with its channel as parsed when it came, and its names go to the
 * executor; the conductor answers the client when the request comes back, by running the command
 * again on that parse with the "answers" resolver, which hands out what the executor found and never
 * blocks. A command by address runs at once.
 * Commands that act on a registration still waiting (a destination of a publication being added, a
 * removal) wait behind it, in order; a removal of a waiting registration cancels it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/aa_driver_conductor_private.h"
#include "util/aa_error.h"
#include "resolver/aa_name_resolver_executor.h"

/* How long closing the driver waits for a lookup in progress before leaving it to its thread. */
#define AA_RESOLUTION_EXECUTOR_CLOSE_TIMEOUT_NS (500LL * 1000 * 1000)

#define AA_PENDING_ALLOWED_HINT \
    "; set AERON_NAME_RESOLUTION_PENDING_ALLOWED=true (aeron.name.resolution.pending.allowed) to register channels " \
    "whose names do not resolve yet, not connected, and retry them"

/* ---- the answers resolver: what the executor found, for the command being run again ---- */

static aa_name_resolution_name_t *aa_conductor_answer(aa_driver_conductor_t *conductor, const char *key, const char *value)
{
    aa_name_resolution_request_t *request = conductor->replaying;
    if (NULL == request)
    {
        return NULL;
    }
    for (int32_t i = 0; i < request->names_count; i++)
    {
        aa_name_resolution_name_t *name = &request->names[i];
        if (0 == strcmp(name->key, key) && 0 == strcmp(name->value, value))
        {
            return name;
        }
    }
    return NULL;
}

static int aa_conductor_answers_lookup(
    void *state, const char *key, const char *value, bool is_re_lookup, char *out, size_t out_length)
{
    (void)is_re_lookup;
    aa_driver_conductor_t *conductor = state;
    aa_name_resolution_name_t *name = aa_conductor_answer(conductor, key, value);
    if (NULL == name)
    {
        AA_SET_ERR(AA_ERROR_CODE_UNKNOWN_HOST,
            "channel parameter %s=%s: the name was not resolved on the resolver executor (the conductor never resolves "
            "names itself)", key, value);
        return -1;
    }
    if (name->rc < 0)
    {
        if (!conductor->replaying_allows_placeholder || 0 != strcmp(key, "endpoint"))
        {
            AA_SET_ERR(name->errcode > 0 ? name->errcode : AA_ERROR_CODE_UNKNOWN_HOST, "%s", name->error);
            return -1;
        }
        /* not resolved yet: a wildcard placeholder the channel marks unresolved (nothing is sent to it) */
        aa_uri_address_t parts;
        if (aa_uri_parse_address(key, value, false, false, &parts) < 0)
        {
            return -1;
        }
        snprintf(out, out_length, "0.0.0.0:%d", parts.has_port ? parts.port : 0);
        conductor->replaying_used_placeholder = true;
        return 0;
    }
    if (aa_udp_address_format(out, out_length, &name->address) < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_UNKNOWN_HOST, "channel parameter %s=%s: cannot format its address", key, value);
        return -1;
    }
    return 0;
}

static int aa_conductor_answers_resolve(
    void *state, const char *key, const char *host, int family, bool is_re_resolution, struct sockaddr_storage *address)
{
    (void)state;
    (void)family;
    (void)is_re_resolution;
    (void)address;
    AA_SET_ERR(AA_ERROR_CODE_UNKNOWN_HOST, "channel parameter %s: host '%s' was not resolved on the resolver executor",
        key, host);
    return -1;
}

/* ---- lifecycle ---- */

static void aa_conductor_resolution_wake(void *clientd)
{
    aa_driver_conductor_t *conductor = clientd;
    aa_doorbell_ring(aa_cnc_doorbell(conductor->cnc));
}

int aa_conductor_resolution_init(aa_driver_conductor_t *conductor, int64_t now_ms)
{
    aa_driver_context_t *ctx = conductor->ctx;
    /* AERON_DRIVER_RESOLVER_INTERFACE makes "driver" the resolver (as Aeron's Java does) */
    const char *supplier = ctx->name_resolver_supplier;
    if ('\0' != ctx->driver_resolver_interface[0])
    {
        if (0 != strcmp(supplier, "default") && 0 != strcmp(supplier, "driver"))
        {
            AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "AERON_DRIVER_RESOLVER_INTERFACE turns the driver name resolver on, "
                "but AERON_NAME_RESOLVER_SUPPLIER chooses '%s': set one of them", supplier);
            return -1;
        }
        supplier = "driver";
    }
    aa_fs_access_t read_access = aa_driver_read_access(ctx);
    if (aa_name_resolutions_init(&conductor->name_resolutions, ctx->aeron_dir, &read_access, supplier, now_ms) < 0)
    {
        return -1;
    }
    aa_name_resolver_context_t *rc = &conductor->name_resolver_context;
    conductor->driver_resolver_options.name = ctx->driver_resolver_name;
    conductor->driver_resolver_options.interface = ctx->driver_resolver_interface;
    conductor->driver_resolver_options.bootstrap_neighbors = ctx->driver_resolver_bootstrap_neighbor;
    conductor->driver_resolver_options.allowed_networks = ctx->driver_resolver_allowed_networks;
    conductor->driver_resolver_options.hmac_key_file = ctx->driver_resolver_hmac_key_file;
    conductor->driver_resolver_options.cache_max_entries = ctx->driver_resolver_cache_max_entries;
    conductor->driver_resolver_options.neighbors_max = ctx->driver_resolver_neighbors_max;
    conductor->driver_resolver_options.gossip_rate_limit = ctx->driver_resolver_gossip_rate_limit;
    rc->driver_options = &conductor->driver_resolver_options;
    rc->counters = &conductor->counters;
    rc->system_counters = conductor->system_counters;
    rc->error_log = &conductor->error_log;
    rc->resolutions = &conductor->name_resolutions;
    rc->default_resolver = aa_name_resolver_default();
    rc->clock = &ctx->clock;
    if (aa_name_resolver_create(&conductor->name_resolver, supplier, ctx->name_resolver_init_args, rc) < 0)
    {
        aa_name_resolutions_close(&conductor->name_resolutions);
        return -1;
    }
    conductor->answers_resolver.name = conductor->name_resolver->name;
    conductor->answers_resolver.lookup = aa_conductor_answers_lookup;
    conductor->answers_resolver.resolve = aa_conductor_answers_resolve;
    conductor->answers_resolver.state = conductor;
    if (aa_command_queue_init(&conductor->sender_commands, AA_COMMAND_QUEUE_CAPACITY_DEFAULT) < 0 ||
        aa_name_resolver_executor_create(
            &conductor->name_resolver_executor, ctx->async_executor_threads, conductor->name_resolver,
            aa_conductor_resolution_wake, conductor) < 0)
    {
        aa_command_queue_close(&conductor->sender_commands);
        aa_name_resolver_close(conductor->name_resolver);
        conductor->name_resolver = NULL;
        aa_name_resolutions_close(&conductor->name_resolutions);
        return -1;
    }
    conductor->next_reresolution_check_ns = aa_clock_nano_time(&ctx->clock) + ctx->reresolution_check_interval_ns;
    return 0;
}

void aa_conductor_resolution_close(aa_driver_conductor_t *conductor)
{
    bool is_abandoned = false;
    if (NULL != conductor->name_resolver_executor)
    {
        is_abandoned = 1 == aa_name_resolver_executor_close(
            conductor->name_resolver_executor, AA_RESOLUTION_EXECUTOR_CLOSE_TIMEOUT_NS);
        conductor->name_resolver_executor = NULL;
    }
    for (size_t i = 0; i < conductor->pending_resolutions_count; i++)
    {
        aa_name_resolution_request_free(conductor->pending_resolutions[i]);
    }
    AA_ARRAY_FREE(conductor->pending_resolutions);
    AA_ARRAY_FREE(conductor->unresolved_endpoints);
    AA_ARRAY_FREE(conductor->named_destinations);
    if (!is_abandoned)    /* else a thread still inside the resolver keeps it (and it is leaked) */
    {
        aa_name_resolver_close(conductor->name_resolver);
    }
    conductor->name_resolver = NULL;
    if (NULL != conductor->sender_commands.commands)
    {
        aa_command_queue_close(&conductor->sender_commands);
    }
    aa_name_resolutions_close(&conductor->name_resolutions);
}

/* ---- requests ---- */

static aa_name_resolution_request_t *aa_conductor_new_request(int32_t kind, int64_t id)
{
    aa_name_resolution_request_t *request = calloc(1, sizeof(*request));
    if (NULL == request)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory queueing a name resolution");
        return NULL;
    }
    request->kind = kind;
    request->id = id;
    return request;
}

static int aa_conductor_track_request(aa_driver_conductor_t *conductor, aa_name_resolution_request_t *request)
{
    if (AA_ARRAY_ENSURE(conductor->pending_resolutions, aa_name_resolution_request_t *) < 0)
    {
        return -1;
    }
    conductor->pending_resolutions[conductor->pending_resolutions_count++] = request;
    return 0;
}

static void aa_conductor_untrack_request(aa_driver_conductor_t *conductor, aa_name_resolution_request_t *request)
{
    for (size_t i = 0; i < conductor->pending_resolutions_count; i++)
    {
        if (conductor->pending_resolutions[i] == request)
        {
            memmove(&conductor->pending_resolutions[i], &conductor->pending_resolutions[i + 1],
                (conductor->pending_resolutions_count - i - 1) * sizeof(conductor->pending_resolutions[0]));
            conductor->pending_resolutions_count--;
            return;
        }
    }
}

static int aa_conductor_submit(aa_driver_conductor_t *conductor, aa_name_resolution_request_t *request)
{
    if (aa_conductor_track_request(conductor, request) < 0)
    {
        return -1;
    }
    aa_name_resolver_executor_submit(conductor->name_resolver_executor, request);
    return 0;
}

/* The latest request (command or waiting command) on registration key, or NULL. */
static aa_name_resolution_request_t *aa_conductor_find_pending_command(aa_driver_conductor_t *conductor, int64_t key)
{
    for (size_t i = conductor->pending_resolutions_count; i > 0; i--)
    {
        aa_name_resolution_request_t *request = conductor->pending_resolutions[i - 1];
        if ((AA_RESOLUTION_KIND_COMMAND == request->kind || AA_RESOLUTION_KIND_FOLLOWER == request->kind) &&
            !request->is_cancelled && (request->id == key || request->registration_key == key))
        {
            return request;
        }
    }
    return NULL;
}

/* Adds to request the URI values of the parsed channel that name a host. Returns the number of names. */
static int aa_conductor_collect_names(const aa_command_channel_t *channel, aa_name_resolution_request_t *request)
{
    static const char *const keys[] = { "endpoint", "control", "interface" };
    const aa_uri_t *uri = &channel->uri;
    int family = AF_UNSPEC;
    if (channel->is_parsed && AA_URI_MEDIA_UDP == uri->media)
    {
        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
        {
            const char *value = aa_uri_find_param(uri, keys[k]);
            aa_uri_address_t parts;
            if (NULL == value || aa_uri_parse_address(keys[k], value, false, 2 == k, &parts) < 0)
            {
                continue;    /* absent, or malformed: the command fails at once, naming it */
            }
            if (aa_name_resolver_is_literal(parts.host))
            {
                struct in6_addr literal;
                if (AF_UNSPEC == family)
                {
                    family = 1 == inet_pton(AF_INET, parts.host, &literal) ? AF_INET : AF_INET6;
                }
                continue;
            }
            aa_name_resolution_name_t *name = &request->names[request->names_count++];
            snprintf(name->key, sizeof(name->key), "%s", keys[k]);
            snprintf(name->value, sizeof(name->value), "%s", value);
        }
        for (int32_t i = 0; i < request->names_count; i++)
        {
            request->names[i].family = family;
        }
    }
    return request->names_count;
}

/* The command and its parsed channel, kept until it runs again. */
static int aa_conductor_copy_command(
    aa_name_resolution_request_t *request, int32_t msg_type_id, const void *buffer, size_t length,
    const aa_command_channel_t *channel)
{
    request->command = malloc(length);
    request->channel = malloc(sizeof(aa_command_channel_t));
    if (NULL == request->command || NULL == request->channel)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory queueing a command that waits for a name");
        return -1;
    }
    memcpy(request->command, buffer, length);
    memcpy(request->channel, channel, sizeof(aa_command_channel_t));
    request->command_length = length;
    request->msg_type_id = msg_type_id;
    return 0;
}

int aa_conductor_resolution_defer(
    aa_driver_conductor_t *conductor, int32_t msg_type_id, const void *buffer, size_t length,
    const aa_command_channel_t *channel, int64_t registration_key)
{
    const aa_correlated_command_t *correlated = buffer;
    int64_t correlation_id = correlated->correlation_id;
    if (NULL != conductor->replaying && conductor->replaying->id == correlation_id)
    {
        return 0;    /* the command being run again with its answers */
    }
    if (AA_COMMAND_REMOVE_PUBLICATION == msg_type_id || AA_COMMAND_REMOVE_SUBSCRIPTION == msg_type_id)
    {
        aa_name_resolution_request_t *pending = aa_conductor_find_pending_command(conductor, registration_key);
        if (NULL == pending || pending->id != registration_key)
        {
            return 0;
        }
        pending->is_cancelled = true;    /* dropped when its answer comes back */
        aa_conductor_on_operation_success(conductor, correlation_id);
        return 1;
    }
    bool is_destination = AA_COMMAND_ADD_DESTINATION == msg_type_id || AA_COMMAND_REMOVE_DESTINATION == msg_type_id ||
        AA_COMMAND_ADD_RCV_DESTINATION == msg_type_id || AA_COMMAND_REMOVE_RCV_DESTINATION == msg_type_id;
    aa_name_resolution_request_t *request = aa_conductor_new_request(AA_RESOLUTION_KIND_COMMAND, correlation_id);
    if (NULL == request)
    {
        return -1;
    }
    request->client_id = correlated->client_id;
    request->registration_key = is_destination ? registration_key : correlation_id;
    aa_name_resolution_request_t *ahead = is_destination ?
        aa_conductor_find_pending_command(conductor, registration_key) : NULL;
    if (NULL != ahead)
    {
        request->kind = AA_RESOLUTION_KIND_FOLLOWER;
        request->depends_on = ahead->id;
        if (aa_conductor_copy_command(request, msg_type_id, buffer, length, channel) < 0 ||
            aa_conductor_track_request(conductor, request) < 0)
        {
            aa_name_resolution_request_free(request);
            return -1;
        }
        return 1;
    }
    if (0 == aa_conductor_collect_names(channel, request))
    {
        aa_name_resolution_request_free(request);
        return 0;
    }
    if (aa_conductor_copy_command(request, msg_type_id, buffer, length, channel) < 0 ||
        aa_conductor_submit(conductor, request) < 0)
    {
        aa_name_resolution_request_free(request);
        return -1;
    }
    return 1;
}

/* ---- answers ---- */

static void aa_conductor_record_answers(aa_driver_conductor_t *conductor, const aa_name_resolution_request_t *request, int64_t now_ms)
{
    for (int32_t i = 0; i < request->names_count; i++)
    {
        const aa_name_resolution_name_t *name = &request->names[i];
        if (0 == name->rc)
        {
            aa_name_resolutions_record(
                &conductor->name_resolutions, name->value, name->key, &name->address, conductor->name_resolver->name, now_ms);
        }
        else
        {
            aa_name_resolutions_record_failure(
                &conductor->name_resolutions, name->value, name->key, conductor->name_resolver->name, name->error, now_ms);
        }
    }
}

static const aa_name_resolution_name_t *aa_conductor_first_failure(const aa_name_resolution_request_t *request)
{
    for (int32_t i = 0; i < request->names_count; i++)
    {
        if (0 != request->names[i].rc)
        {
            return &request->names[i];
        }
    }
    return NULL;
}

/* Only a publication's endpoint= may wait for its name: the rest bind or join addresses. */
static bool aa_conductor_may_wait_for_name(const aa_name_resolution_request_t *request)
{
    if (AA_COMMAND_ADD_PUBLICATION != request->msg_type_id && AA_COMMAND_ADD_EXCLUSIVE_PUBLICATION != request->msg_type_id)
    {
        return false;
    }
    for (int32_t i = 0; i < request->names_count; i++)
    {
        if (0 != request->names[i].rc && 0 != strcmp(request->names[i].key, "endpoint"))
        {
            return false;
        }
    }
    return true;
}

static aa_send_channel_endpoint_t *aa_conductor_publication_endpoint(aa_driver_conductor_t *conductor, int64_t registration_id)
{
    for (size_t i = 0; i < conductor->publication_links_count; i++)
    {
        aa_publication_link_t *link = &conductor->publication_links[i];
        if (link->registration_id == registration_id && NULL != link->network_publication)
        {
            return link->network_publication->endpoint;
        }
    }
    return NULL;
}

static void aa_conductor_add_unresolved_endpoint(aa_driver_conductor_t *conductor, aa_send_channel_endpoint_t *endpoint)
{
    for (size_t i = 0; i < conductor->unresolved_endpoints_count; i++)
    {
        if (conductor->unresolved_endpoints[i] == endpoint)
        {
            return;
        }
    }
    if (AA_ARRAY_ENSURE(conductor->unresolved_endpoints, aa_send_channel_endpoint_t *) < 0)
    {
        aa_driver_conductor_log_error(conductor, aa_errcode(), aa_errmsg());
        return;
    }
    conductor->unresolved_endpoints[conductor->unresolved_endpoints_count++] = endpoint;
}

static void aa_conductor_remove_unresolved_endpoint(aa_driver_conductor_t *conductor, size_t index)
{
    conductor->unresolved_endpoints[index] = conductor->unresolved_endpoints[--conductor->unresolved_endpoints_count];
}

static bool aa_conductor_is_send_endpoint(aa_driver_conductor_t *conductor, const void *endpoint)
{
    for (size_t i = 0; i < conductor->send_endpoints_count; i++)
    {
        if (conductor->send_endpoints[i] == endpoint && !conductor->send_endpoints[i]->is_closing)
        {
            return true;
        }
    }
    return false;
}

static bool aa_conductor_is_receive_endpoint(aa_driver_conductor_t *conductor, const void *endpoint)
{
    for (size_t i = 0; i < conductor->receive_endpoints_count; i++)
    {
        if (conductor->receive_endpoints[i] == endpoint && !conductor->receive_endpoints[i]->is_closing)
        {
            return true;
        }
    }
    return false;
}

static void aa_conductor_dispatch_followers(aa_driver_conductor_t *conductor, int64_t id)
{
    size_t i = 0;
    while (i < conductor->pending_resolutions_count)
    {
        aa_name_resolution_request_t *follower = conductor->pending_resolutions[i];
        if (AA_RESOLUTION_KIND_FOLLOWER != follower->kind || follower->depends_on != id)
        {
            i++;
            continue;
        }
        aa_conductor_untrack_request(conductor, follower);
        int64_t follower_id = follower->id;
        if (NULL != aa_conductor_find_client(conductor, follower->client_id) && !follower->is_cancelled)
        {
            aa_conductor_dispatch_command(
                conductor, follower->msg_type_id, follower->command, follower->command_length, follower->channel);
        }
        aa_name_resolution_request_free(follower);
        aa_name_resolution_request_t *again = aa_conductor_find_pending_command(conductor, follower_id);
        if (NULL != again && again->id == follower_id)
        {
            /* it waits for its own names now: the rest wait behind it */
            for (size_t j = 0; j < conductor->pending_resolutions_count; j++)
            {
                aa_name_resolution_request_t *r = conductor->pending_resolutions[j];
                if (AA_RESOLUTION_KIND_FOLLOWER == r->kind && r->depends_on == id)
                {
                    r->depends_on = follower_id;
                }
            }
            return;
        }
        i = 0;
    }
}

static void aa_conductor_on_command_answer(aa_driver_conductor_t *conductor, aa_name_resolution_request_t *request, int64_t now_ms)
{
    aa_conductor_record_answers(conductor, request, now_ms);
    if (request->is_cancelled || NULL == aa_conductor_find_client(conductor, request->client_id))
    {
        return;
    }
    const aa_name_resolution_name_t *failure = aa_conductor_first_failure(request);
    bool placeholder = false;
    if (NULL != failure)
    {
        if (!conductor->ctx->name_resolution_pending_allowed || !aa_conductor_may_wait_for_name(request))
        {
            char message[AA_NAME_RESOLUTION_ERROR_LENGTH + 512];
            snprintf(message, sizeof(message), "%s%s", failure->error,
                AA_ERROR_CODE_UNKNOWN_HOST != failure->errcode ? "" :
                conductor->ctx->name_resolution_pending_allowed ?
                "; (AERON_NAME_RESOLUTION_PENDING_ALLOWED applies to a publication's endpoint= only: a subscription binds "
                "and joins its addresses, which must resolve)" : AA_PENDING_ALLOWED_HINT);
            aa_conductor_send_error(conductor, request->id,
                failure->errcode > 0 && failure->errcode <= 14 ? failure->errcode : AA_ERROR_CODE_UNKNOWN_HOST, message);
            return;
        }
        placeholder = true;
        aa_driver_conductor_log_error(conductor, failure->errcode, failure->error);
    }
    conductor->replaying = request;
    conductor->replaying_allows_placeholder = placeholder;
    conductor->replaying_used_placeholder = false;
    aa_conductor_dispatch_command(
        conductor, request->msg_type_id, request->command, request->command_length, request->channel);
    bool used_placeholder = conductor->replaying_used_placeholder;
    conductor->replaying = NULL;
    conductor->replaying_allows_placeholder = false;
    conductor->replaying_used_placeholder = false;
    if (used_placeholder)
    {
        aa_send_channel_endpoint_t *endpoint = aa_conductor_publication_endpoint(conductor, request->id);
        if (NULL != endpoint && !endpoint->transport.has_destination)
        {
            aa_conductor_add_unresolved_endpoint(conductor, endpoint);
        }
    }
}

/* ---- manual MDC destinations added by name ---- */

static aa_named_destination_t *aa_conductor_find_named_destination(
    aa_driver_conductor_t *conductor, const void *endpoint, const struct sockaddr_storage *address)
{
    for (size_t i = 0; i < conductor->named_destinations_count; i++)
    {
        aa_named_destination_t *d = &conductor->named_destinations[i];
        if (d->endpoint == endpoint && aa_udp_address_equals(&d->address, address))
        {
            return d;
        }
    }
    return NULL;
}

void aa_conductor_resolution_on_destination(
    aa_driver_conductor_t *conductor, aa_send_channel_endpoint_t *endpoint, const struct sockaddr_storage *address,
    const aa_uri_t *destination, bool is_add)
{
    aa_named_destination_t *known = aa_conductor_find_named_destination(conductor, endpoint, address);
    if (!is_add)
    {
        if (NULL != known)
        {
            *known = conductor->named_destinations[--conductor->named_destinations_count];
        }
        return;
    }
    aa_uri_address_t parts;
    const char *value = aa_uri_find_param(destination, "endpoint");
    if (NULL != value && 0 == aa_uri_parse_address("endpoint", value, false, false, &parts) &&
        !aa_name_resolver_is_literal(parts.host) && NULL == known &&
        AA_ARRAY_ENSURE(conductor->named_destinations, aa_named_destination_t) == 0)
    {
        aa_named_destination_t *d = &conductor->named_destinations[conductor->named_destinations_count++];
        d->endpoint = endpoint;
        d->address = *address;
        snprintf(d->value, sizeof(d->value), "%s", value);
    }
}

/* A named endpoint of a send endpoint or the control address of a receive endpoint. */
static void aa_conductor_on_address_answer(aa_driver_conductor_t *conductor, aa_name_resolution_request_t *request, int64_t now_ms)
{
    const aa_name_resolution_name_t *name = &request->names[0];
    bool is_send = AA_RESOLUTION_KIND_RECEIVE_CONTROL != request->kind;
    if (!(is_send ? aa_conductor_is_send_endpoint(conductor, request->subject) :
        aa_conductor_is_receive_endpoint(conductor, request->subject)))
    {
        return;    /* gone meanwhile */
    }
    if (0 != name->rc)
    {
        aa_name_resolutions_record_failure(
            &conductor->name_resolutions, name->value, name->key, conductor->name_resolver->name, name->error, now_ms);
        char message[AA_NAME_RESOLUTION_ERROR_LENGTH + 64];
        snprintf(message, sizeof(message), "%s (%s)", name->error,
            AA_RESOLUTION_KIND_PENDING_ENDPOINT == request->kind ? "not resolved yet, retried" : "re-resolution");
        aa_driver_conductor_log_error(conductor, name->errcode, message);
        return;
    }
    aa_name_resolutions_record(
        &conductor->name_resolutions, name->value, name->key, &name->address, conductor->name_resolver->name, now_ms);
    if (AA_RESOLUTION_KIND_PENDING_ENDPOINT == request->kind)
    {
        for (size_t i = 0; i < conductor->unresolved_endpoints_count; i++)
        {
            if (conductor->unresolved_endpoints[i] == request->subject)
            {
                aa_conductor_remove_unresolved_endpoint(conductor, i);
                break;
            }
        }
    }
    else if (aa_udp_address_equals(&name->address, &request->current))
    {
        return;    /* the same address: nothing to swap */
    }
    if (AA_RESOLUTION_KIND_SEND_DESTINATION == request->kind)
    {
        aa_named_destination_t *d = aa_conductor_find_named_destination(conductor, request->subject, &request->current);
        aa_send_channel_endpoint_t *endpoint = request->subject;
        if (NULL == d || 0 == aa_send_channel_endpoint_manual_destination_remove(endpoint, &request->current))
        {
            return;    /* removed meanwhile */
        }
        aa_send_channel_endpoint_manual_destination_add(endpoint, &name->address);
        d->address = name->address;
    }
    int rc = is_send ?
        aa_driver_sender_proxy_set_destination(conductor->sender, request->subject, &request->current, &name->address) :
        aa_driver_receiver_proxy_set_control_address(conductor->receiver, request->subject, &name->address);
    if (rc < 0)
    {
        aa_driver_conductor_log_error(conductor, aa_errcode(), aa_errmsg());
        return;
    }
    if (AA_RESOLUTION_KIND_PENDING_ENDPOINT != request->kind)
    {
        aa_driver_conductor_count(conductor, AA_SYSTEM_COUNTER_RESOLUTION_CHANGES, 1);
    }
}

static bool aa_conductor_address_in_flight(
    aa_driver_conductor_t *conductor, int32_t kind, const void *subject, const struct sockaddr_storage *current)
{
    for (size_t i = 0; i < conductor->pending_resolutions_count; i++)
    {
        const aa_name_resolution_request_t *r = conductor->pending_resolutions[i];
        if (r->kind == kind && r->subject == subject &&
            (AA_RESOLUTION_KIND_SEND_DESTINATION != kind || aa_udp_address_equals(&r->current, current)))
        {
            return true;
        }
    }
    return false;
}

static void aa_conductor_submit_address(
    aa_driver_conductor_t *conductor, int32_t kind, void *subject, const char *value, const char *key,
    const struct sockaddr_storage *current, bool is_re_resolution)
{
    if (NULL == value || aa_conductor_address_in_flight(conductor, kind, subject, current))
    {
        return;
    }
    aa_name_resolution_request_t *request = aa_conductor_new_request(kind, 0);
    if (NULL == request)
    {
        aa_driver_conductor_log_error(conductor, aa_errcode(), aa_errmsg());
        return;
    }
    request->subject = subject;
    request->is_re_resolution = is_re_resolution;
    request->current = *current;
    request->names_count = 1;
    snprintf(request->names[0].key, sizeof(request->names[0].key), "%s", key);
    snprintf(request->names[0].value, sizeof(request->names[0].value), "%s", value);
    request->names[0].family = AF_UNSPEC;
    if (aa_conductor_submit(conductor, request) < 0)
    {
        aa_name_resolution_request_free(request);
        aa_driver_conductor_log_error(conductor, aa_errcode(), aa_errmsg());
    }
}

/* ---- re-resolution requests from the sender and receiver (reference 8.3) ---- */

typedef struct aa_re_resolution_args_stct
{
    void *endpoint;
    struct sockaddr_storage address;
}
aa_re_resolution_args_t;

static void aa_conductor_on_send_re_resolution(void *agent, const void *args)
{
    aa_driver_conductor_t *conductor = agent;
    const aa_re_resolution_args_t *a = args;
    if (aa_conductor_is_send_endpoint(conductor, a->endpoint))
    {
        aa_send_channel_endpoint_t *endpoint = a->endpoint;
        if (endpoint->is_mdc)
        {
            const aa_named_destination_t *d = aa_conductor_find_named_destination(conductor, endpoint, &a->address);
            if (NULL != d)    /* a destination added by address is never re-resolved */
            {
                aa_conductor_submit_address(
                    conductor, AA_RESOLUTION_KIND_SEND_DESTINATION, endpoint, d->value, "endpoint", &a->address, true);
            }
            return;
        }
        aa_conductor_submit_address(conductor, AA_RESOLUTION_KIND_SEND_ENDPOINT, endpoint,
            aa_uri_find_param(&endpoint->channel->uri, "endpoint"), "endpoint", &a->address, true);
    }
}

static void aa_conductor_on_receive_re_resolution(void *agent, const void *args)
{
    aa_driver_conductor_t *conductor = agent;
    const aa_re_resolution_args_t *a = args;
    if (aa_conductor_is_receive_endpoint(conductor, a->endpoint))
    {
        aa_receive_channel_endpoint_t *endpoint = a->endpoint;
        aa_conductor_submit_address(conductor, AA_RESOLUTION_KIND_RECEIVE_CONTROL, endpoint,
            aa_uri_find_param(&endpoint->channel->uri, "control"), "control", &a->address, true);
    }
}

void aa_conductor_services_request_re_resolution(
    void *clientd, bool is_sender, void *endpoint, const struct sockaddr_storage *address)
{
    aa_driver_conductor_t *conductor = clientd;
    aa_re_resolution_args_t args = { .endpoint = endpoint, .address = *address };
    bool offered = is_sender ?
        aa_command_queue_offer(&conductor->sender_commands, aa_conductor_on_send_re_resolution, &args, sizeof(args)) :
        aa_command_queue_offer(&conductor->commands, aa_conductor_on_receive_re_resolution, &args, sizeof(args));
    if (!offered)
    {
        aa_driver_conductor_count(conductor, AA_SYSTEM_COUNTER_CONDUCTOR_PROXY_FAILS, 1);    /* asked again later */
    }
    else
    {
        aa_doorbell_ring(aa_cnc_doorbell(conductor->cnc));
    }
}

/* ---- the duty cycle ---- */

int aa_conductor_resolution_do_work(aa_driver_conductor_t *conductor, int64_t now_ns, int64_t now_ms)
{
    int work_count = aa_command_queue_drain(&conductor->sender_commands, conductor, 16);
    aa_name_resolution_request_t *answered = aa_name_resolver_executor_poll(conductor->name_resolver_executor);
    while (NULL != answered)
    {
        aa_name_resolution_request_t *request = answered;
        answered = request->next;
        request->next = NULL;
        aa_conductor_untrack_request(conductor, request);
        aa_media_services_record_cycle(
            &conductor->services, request->duration_ns, conductor->ctx->name_resolver_time_threshold_ns,
            AA_SYSTEM_COUNTER_NAME_RESOLVER_MAX_TIME, AA_SYSTEM_COUNTER_NAME_RESOLVER_TIME_THRESHOLD_EXCEEDED);
        if (AA_RESOLUTION_KIND_COMMAND == request->kind)
        {
            aa_conductor_on_command_answer(conductor, request, now_ms);
            aa_conductor_dispatch_followers(conductor, request->id);
        }
        else
        {
            aa_conductor_on_address_answer(conductor, request, now_ms);
        }
        aa_name_resolution_request_free(request);
        work_count++;
    }

    int64_t interval_ns = conductor->ctx->reresolution_check_interval_ns;
    if (interval_ns > 0 && now_ns >= conductor->next_reresolution_check_ns)
    {
        conductor->next_reresolution_check_ns = now_ns + interval_ns;
        size_t i = 0;
        while (i < conductor->unresolved_endpoints_count)
        {
            aa_send_channel_endpoint_t *endpoint = conductor->unresolved_endpoints[i];
            if (!aa_conductor_is_send_endpoint(conductor, endpoint))
            {
                aa_conductor_remove_unresolved_endpoint(conductor, i);
                continue;
            }
            struct sockaddr_storage none;
            memset(&none, 0, sizeof(none));
            aa_conductor_submit_address(conductor, AA_RESOLUTION_KIND_PENDING_ENDPOINT, endpoint,
                aa_uri_find_param(&endpoint->channel->uri, "endpoint"), "endpoint", &none, false);
            i++;
        }
    }

    aa_name_resolver_t *resolver = conductor->name_resolver;
    if (NULL != resolver && NULL != resolver->do_work)
    {
        int rc = resolver->do_work(resolver->state, now_ms);
        if (rc < 0)
        {
            AA_APPEND_ERR("name resolver '%s' periodic work", resolver->name);
            aa_driver_conductor_log_error(conductor, aa_errcode(), aa_errmsg());
        }
        else
        {
            work_count += rc;
        }
    }
    return work_count;
}
