#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>

#include "aa_client.h"
#include "../../include/aeron_async.h"
#include "../../../protocols/aa_control_protocol.h"
#include "../uri/aa_uri.h"
#include "../util/aa_clock.h"
#include "../util/aa_error.h"

#define AA_CLIENT_KEEPALIVE_INTERVAL_NS (500 * 1000 * 1000LL)
#define AA_CLIENT_RESOURCE_LINGER_NS (3 * 1000 * 1000 * 1000LL)
#define AA_CLIENT_SERVICE_INTERVAL_NS (1 * 1000 * 1000LL)
#define AA_CLIENT_IDLE_SLEEP_NS (16 * 1000 * 1000LL)
#define AA_CLIENT_WAIT_CHECK_NS (1000 * 1000L)
#define AA_CLIENT_WAKE_SPIN_MIN_NS (10 * 1000LL)
/* Checks of the driver heartbeat are at most a sleep + a service interval apart, plus scheduling slack. */
#define AA_CLIENT_DRIVER_CHECK_MARGIN_MS (50LL)
/* A heartbeat this stale makes the conductor check whether the driver's process still exists. */
#define AA_CLIENT_DRIVER_PID_CHECK_AGE_MS (100LL)

static bool aa_unpark(volatile int32_t *parked, aa_client_t *client);

void aa_client_set_error_from_state(aa_client_t *client)
{
    int32_t state = aa_get_int32_acquire(&client->state);
    int code = AA_CLIENT_STATE_DRIVER_TIMEOUT == state ? AA_ERROR_CODE_DRIVER_TIMEOUT :
        AA_CLIENT_STATE_CLIENT_TIMEOUT == state ? AA_ERROR_CODE_CLIENT_TIMEOUT : AA_ERROR_CODE_CLOSED;
    AA_SET_ERR(code, "%s", '\0' != client->state_message[0] ? client->state_message : "the client is closed");
}

/* ---- lingering resources ---- */

/* Keep a new log mapping populated ahead of the stream (aa_prefault.h), so that the message path
 * never takes the page faults. */
static int64_t aa_client_publication_prefault_position(const void *pub)
{
    return aa_logbuffer_producer_position(&((aa_publication_t *)pub)->log);
}

static int64_t aa_client_image_prefault_position(const void *image)
{
    return aa_get_int64_volatile(((const aa_image_t *)image)->subscriber_position);
}

static void aa_client_free_image_mapping(aa_image_t *image)
{
    aa_prefault_remove(&image->subscription->client->prefault, image->mapped.addr);
    aa_unmap(&image->mapped);
    free(image->assembly);
    image->assembly = NULL;
    image->assembly_capacity = 0;
}

static void aa_client_free_subscription(aa_subscription_t *sub)
{
    aa_image_list_t *list = sub->images;
    if (NULL != list)
    {
        for (size_t i = 0; i < list->count; i++)
        {
            aa_client_free_image_mapping(list->images[i]);
            free(list->images[i]);
        }
        free(list);
    }
    for (size_t i = 0; i < sub->retired_count; i++)
    {
        aa_client_free_image_mapping(sub->retired[i]);
        free(sub->retired[i]);
    }
    free(sub->retired);
    free(sub->channel);
    free(sub);
}

static void aa_client_free_publication(aa_publication_t *pub)
{
    aa_prefault_remove(&pub->client->prefault, pub->mapped.addr);
    aa_unmap(&pub->mapped);
    free(pub->channel);
    free(pub);
}

static void aa_client_free_lingering(aa_lingering_t *l)
{
    switch (l->kind)
    {
        case AA_LINGER_PUBLICATION:
            aa_client_free_publication(l->resource);
            break;
        case AA_LINGER_IMAGE_LIST:
            free(l->resource);
            break;
        case AA_LINGER_IMAGE:
            aa_client_free_image_mapping(l->resource);
            break;
        case AA_LINGER_COUNTER:
            free(l->resource);
            break;
        case AA_LINGER_SUBSCRIPTION:
        {
            aa_subscription_t *sub = l->resource;
            aa_client_t *client = sub->client;
            for (size_t i = 0; i < client->lingering_count; i++)
            {
                aa_lingering_t *other = &client->lingering[i];
                if (AA_LINGER_IMAGE == other->kind && ((aa_image_t *)other->resource)->subscription == sub)
                {
                    other->kind = 0;
                }
            }
            aa_client_free_subscription(sub);
            break;
        }
        default:
            break;
    }
}

int aa_client_linger(aa_client_t *client, void *resource, int32_t kind)
{
    if (AA_GROW(client, lingering) < 0)
    {
        return -1;
    }
    aa_lingering_t *l = &client->lingering[client->lingering_count++];
    l->resource = resource;
    l->kind = kind;
    l->deadline_ns = aa_clock_nano_time(&client->clock) + client->resource_linger_ns;
    return 0;
}

/* ---- commands ---- */

int aa_client_send(aa_client_t *client, int32_t msg_type_id, const void *msg, size_t length)
{
    if (aa_mpsc_rb_write(&client->to_driver, msg_type_id, msg, length) < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_RESOURCE_TEMPORARILY_UNAVAILABLE,
            "could not send a command to the media driver at %s: its command buffer is full", client->aeron_dir);
        return -1;
    }
    aa_doorbell_ring(aa_cnc_doorbell(client->cnc));
    return 0;
}

int aa_client_send_remove(aa_client_t *client, int32_t msg_type_id, int64_t registration_id)
{
    aa_remove_command_t command = {
        .correlated = { .client_id = client->client_id, .correlation_id = aa_mpsc_rb_next_correlation_id(&client->to_driver) },
        .registration_id = registration_id,
    };
    return aa_client_send(client, msg_type_id, &command, sizeof(command));
}

aa_registration_t *aa_client_find_registration(aa_client_t *client, int64_t correlation_id)
{
    for (size_t i = 0; i < client->registrations_count; i++)
    {
        if (client->registrations[i].correlation_id == correlation_id)
        {
            return &client->registrations[i];
        }
    }
    return NULL;
}

static void aa_client_remove_registration(aa_client_t *client, aa_registration_t *r)
{
    free(r->error_message);
    free(r->channel);
    size_t index = (size_t)(r - client->registrations);
    client->registrations[index] = client->registrations[--client->registrations_count];
}

/* ---- responses ---- */

void aa_client_registration_failed(aa_registration_t *r, int32_t code, const char *message, size_t length)
{
    r->status = -1;
    r->error_code = code;
    free(r->error_message);
    r->error_message = strndup(message, length);
}

static void aa_client_on_publication_ready(aa_client_t *client, const uint8_t *buffer, size_t length, bool exclusive)
{
    const aa_publication_buffers_ready_t *response = (const aa_publication_buffers_ready_t *)buffer;
    if (length < sizeof(*response) || sizeof(*response) + (size_t)response->log_file_length > length)
    {
        return;
    }
    aa_registration_t *r = aa_client_find_registration(client, response->correlation_id);
    if (NULL == r || 0 != r->status)
    {
        return;
    }
    char path[PATH_MAX];
    size_t path_length = (size_t)response->log_file_length < sizeof(path) - 1 ? (size_t)response->log_file_length : sizeof(path) - 1;
    memcpy(path, buffer + sizeof(*response), path_length);
    path[path_length] = '\0';

    aa_publication_t *pub = calloc(1, sizeof(aa_publication_t));
    if (NULL == pub || aa_map_existing_file(&pub->mapped, path, 0) < 0 ||
        aa_mapped_log_wrap(&pub->log, pub->mapped.addr, pub->mapped.length) < 0)
    {
        const char *message = NULL == pub ? "out of memory" : aa_errmsg();
        if (NULL != pub)
        {
            aa_unmap(&pub->mapped);
        }
        free(pub);
        aa_client_registration_failed(r, AA_ERROR_CODE_GENERIC_ERROR, message, strlen(message));
        return;
    }
    pub->client = client;
    pub->notify_fd = -1;
    pub->registration_id = response->correlation_id;
    pub->original_registration_id = response->registration_id;
    pub->stream_id = response->stream_id;
    pub->session_id = response->session_id;
    pub->channel = r->channel;
    r->channel = NULL;
    pub->is_exclusive = exclusive;
    pub->position_limit_counter_id = response->position_limit_counter_id;
    pub->channel_status_id = response->channel_status_indicator_id;
    pub->position_limit = aa_counters_reader_addr(&client->counters, response->position_limit_counter_id);
    pub->term_length = pub->log.term_length;
    pub->max_message_length = aa_compute_max_message_length(pub->term_length);
    pub->max_payload_length = pub->log.metadata->mtu_length - AA_DATA_HEADER_LENGTH;
    pub->position_bits_to_shift = aa_position_bits_to_shift(pub->term_length);
    pub->initial_term_id = pub->log.metadata->initial_term_id;
    pub->max_possible_position = aa_max_possible_position(pub->term_length);
    if (exclusive)
    {
        int32_t term_count = aa_logbuffer_active_term_count(pub->log.metadata);
        int32_t index = aa_index_by_term_count(term_count);
        int64_t raw_tail = aa_get_int64_volatile(&pub->log.metadata->term_tail_counters[index]);
        pub->active_partition_index = index;
        pub->term_id = aa_term_id(raw_tail);
        pub->term_offset = aa_term_offset(raw_tail, pub->term_length);
        pub->term_begin_position = aa_compute_term_begin_position(pub->term_id, pub->position_bits_to_shift, pub->initial_term_id);
    }
    if (AA_GROW(client, publications) < 0)
    {
        aa_client_free_publication(pub);
        aa_client_registration_failed(r, AA_ERROR_CODE_GENERIC_ERROR, "out of memory", 13);
        return;
    }
    client->publications[client->publications_count++] = pub;
    if (pub->mapped.allocated)
    {
        aa_prefault_add(&client->prefault, pub->mapped.addr, pub->term_length, aa_logbuffer_producer_position(&pub->log),
            aa_client_publication_prefault_position, pub);
    }
    r->resource = pub;
    r->status = 1;
}

static aa_subscription_t *aa_client_find_subscription(aa_client_t *client, int64_t registration_id)
{
    for (size_t i = 0; i < client->subscriptions_count; i++)
    {
        if (client->subscriptions[i]->registration_id == registration_id)
        {
            return client->subscriptions[i];
        }
    }
    return NULL;
}

static void aa_client_on_subscription_ready(aa_client_t *client, const uint8_t *buffer, size_t length)
{
    const aa_subscription_ready_t *response = (const aa_subscription_ready_t *)buffer;
    if (length < sizeof(*response))
    {
        return;
    }
    aa_registration_t *r = aa_client_find_registration(client, response->correlation_id);
    if (NULL == r || 0 != r->status)
    {
        return;
    }
    aa_subscription_t *sub = calloc(1, sizeof(aa_subscription_t));
    aa_image_list_t *list = calloc(1, sizeof(aa_image_list_t));
    if (NULL == sub || NULL == list || AA_GROW(client, subscriptions) < 0)
    {
        free(sub);
        free(list);
        aa_client_registration_failed(r, AA_ERROR_CODE_GENERIC_ERROR, "out of memory", 13);
        return;
    }
    sub->client = client;
    sub->registration_id = response->correlation_id;
    sub->stream_id = r->stream_id;
    sub->channel = r->channel;
    sub->channel_status_id = response->channel_status_indicator_id;
    sub->notify_fd = -1;
    r->channel = NULL;
    sub->images = list;
    client->subscriptions[client->subscriptions_count++] = sub;
    r->resource = sub;
    r->status = 1;
}

static void aa_notify(int fd)
{
    if (fd >= 0)
    {
        uint64_t one = 1;
        ssize_t ignored = write(fd, &one, sizeof(one));
        (void)ignored;
    }
}

static void aa_subscription_push_event(aa_subscription_t *sub, int32_t type, aa_image_t *image)
{
    int64_t tail = sub->events_tail;
    if (tail - aa_get_int64_acquire(&sub->events_head) < AA_SUBSCRIPTION_EVENT_CAPACITY)
    {
        sub->events[tail % AA_SUBSCRIPTION_EVENT_CAPACITY].type = type;
        sub->events[tail % AA_SUBSCRIPTION_EVENT_CAPACITY].image = image;
        aa_put_int64_release(&sub->events_tail, tail + 1);
    }
    aa_notify(sub->notify_fd);
}

static void aa_client_on_available_image(aa_client_t *client, const uint8_t *buffer, size_t length)
{
    const aa_image_buffers_ready_t *response = (const aa_image_buffers_ready_t *)buffer;
    if (length < sizeof(*response) || sizeof(*response) + (size_t)response->log_file_length > length)
    {
        return;
    }
    aa_subscription_t *sub = aa_client_find_subscription(client, response->subscriber_registration_id);
    if (NULL == sub)
    {
        return;
    }
    aa_image_list_t *old_list = sub->images;
    for (size_t i = 0; i < old_list->count; i++)
    {
        if (old_list->images[i]->correlation_id == response->correlation_id)
        {
            return;
        }
    }
    char path[PATH_MAX];
    size_t path_length = (size_t)response->log_file_length < sizeof(path) - 1 ? (size_t)response->log_file_length : sizeof(path) - 1;
    memcpy(path, buffer + sizeof(*response), path_length);
    path[path_length] = '\0';

    aa_image_t *image = calloc(1, sizeof(aa_image_t));
    if (NULL == image)
    {
        return;
    }
    if (aa_map_existing_file(&image->mapped, path, 0) < 0 ||
        aa_mapped_log_wrap(&image->log, image->mapped.addr, image->mapped.length) < 0)
    {
        aa_unmap(&image->mapped);
        free(image);
        return;
    }
    size_t identity_offset = sizeof(*response) + AA_ALIGN((size_t)response->log_file_length, sizeof(int32_t));
    if (identity_offset + sizeof(int32_t) <= length)
    {
        int32_t identity_length;
        memcpy(&identity_length, buffer + identity_offset, sizeof(identity_length));
        if (identity_length > 0 && identity_offset + sizeof(int32_t) + (size_t)identity_length <= length)
        {
            size_t n = (size_t)identity_length < sizeof(image->source_identity) - 1 ?
                (size_t)identity_length : sizeof(image->source_identity) - 1;
            memcpy(image->source_identity, buffer + identity_offset + sizeof(int32_t), n);
            image->source_identity[n] = '\0';
        }
    }
    image->subscription = sub;
    image->correlation_id = response->correlation_id;
    image->session_id = response->session_id;
    image->stream_id = response->stream_id;
    image->subscriber_position_id = response->subscriber_position_id;
    image->subscriber_position = aa_counters_reader_addr(&client->counters, response->subscriber_position_id);
    image->term_length = image->log.term_length;
    image->position_bits_to_shift = aa_position_bits_to_shift(image->term_length);
    image->initial_term_id = image->log.metadata->initial_term_id;
    image->join_position = aa_get_int64_acquire(image->subscriber_position);
    image->final_position = image->join_position;

    aa_image_list_t *new_list = malloc(sizeof(aa_image_list_t) + (old_list->count + 1) * sizeof(aa_image_t *));
    if (NULL == new_list)
    {
        aa_client_free_image_mapping(image);
        free(image);
        return;
    }
    new_list->count = old_list->count + 1;
    memcpy(new_list->images, old_list->images, old_list->count * sizeof(aa_image_t *));
    new_list->images[old_list->count] = image;
    __atomic_store_n(&sub->images, new_list, __ATOMIC_RELEASE);
    aa_client_linger(client, old_list, AA_LINGER_IMAGE_LIST);
    if (image->mapped.allocated)
    {
        aa_prefault_add(&client->prefault, image->mapped.addr, image->term_length, image->join_position,
            aa_client_image_prefault_position, image);
    }
    aa_subscription_push_event(sub, AA_IMAGE_EVENT_AVAILABLE, image);
}

static void aa_client_retire_image(aa_client_t *client, aa_subscription_t *sub, aa_image_t *image)
{
    image->final_position = aa_get_int64_acquire(image->subscriber_position);
    aa_put_int32_release(&image->is_closed, 1);
    aa_unpark(&image->parked, client);
    if (0 == aa_array_ensure_capacity((void **)&sub->retired, &sub->retired_capacity, sub->retired_count, sizeof(aa_image_t *)))
    {
        sub->retired[sub->retired_count++] = image;
    }
    aa_client_linger(client, image, AA_LINGER_IMAGE);
}

static void aa_client_on_unavailable_image(aa_client_t *client, const uint8_t *buffer, size_t length)
{
    const aa_image_message_t *response = (const aa_image_message_t *)buffer;
    if (length < sizeof(*response))
    {
        return;
    }
    aa_subscription_t *sub = aa_client_find_subscription(client, response->subscription_registration_id);
    if (NULL == sub)
    {
        return;
    }
    aa_image_list_t *old_list = sub->images;
    for (size_t i = 0; i < old_list->count; i++)
    {
        aa_image_t *image = old_list->images[i];
        if (image->correlation_id == response->correlation_id)
        {
            aa_image_list_t *new_list = malloc(sizeof(aa_image_list_t) + old_list->count * sizeof(aa_image_t *));
            if (NULL == new_list)
            {
                return;
            }
            size_t n = 0;
            for (size_t j = 0; j < old_list->count; j++)
            {
                if (j != i)
                {
                    new_list->images[n++] = old_list->images[j];
                }
            }
            new_list->count = n;
            __atomic_store_n(&sub->images, new_list, __ATOMIC_RELEASE);
            aa_client_linger(client, old_list, AA_LINGER_IMAGE_LIST);
            aa_client_retire_image(client, sub, image);
            aa_subscription_push_event(sub, AA_IMAGE_EVENT_UNAVAILABLE, image);
            return;
        }
    }
}

static void aa_client_on_response(int32_t msg_type_id, const void *buffer, size_t length, void *clientd)
{
    aa_client_t *client = clientd;
    const uint8_t *b = buffer;
    switch (msg_type_id)
    {
        case AA_RESPONSE_ON_PUBLICATION_READY:
            aa_client_on_publication_ready(client, b, length, false);
            break;
        case AA_RESPONSE_ON_EXCLUSIVE_PUBLICATION_READY:
            aa_client_on_publication_ready(client, b, length, true);
            break;
        case AA_RESPONSE_ON_SUBSCRIPTION_READY:
            aa_client_on_subscription_ready(client, b, length);
            break;
        case AA_RESPONSE_ON_AVAILABLE_IMAGE:
            aa_client_on_available_image(client, b, length);
            break;
        case AA_RESPONSE_ON_UNAVAILABLE_IMAGE:
            aa_client_on_unavailable_image(client, b, length);
            break;
        case AA_RESPONSE_ON_COUNTER_READY:
            aa_client_on_counter_ready(client, b, length);
            break;
        case AA_RESPONSE_ON_UNAVAILABLE_COUNTER:
            aa_client_on_unavailable_counter(client, b, length);
            break;
        case AA_RESPONSE_ON_OPERATION_SUCCESS:
        {
            const aa_operation_succeeded_t *response = buffer;
            if (length >= sizeof(*response))
            {
                aa_registration_t *r = aa_client_find_registration(client, response->correlation_id);
                if (NULL != r && 0 == r->status)
                {
                    r->status = 1;
                }
            }
            break;
        }
        case AA_RESPONSE_ON_ERROR:
        {
            const aa_error_response_t *response = buffer;
            if (length >= sizeof(*response) && sizeof(*response) + (size_t)response->error_message_length <= length)
            {
                aa_registration_t *r = aa_client_find_registration(client, response->offending_command_correlation_id);
                if (NULL != r && 0 == r->status)
                {
                    aa_client_registration_failed(
                        r, response->error_code, (const char *)b + sizeof(*response), (size_t)response->error_message_length);
                }
            }
            break;
        }
        case AA_RESPONSE_ON_CLIENT_TIMEOUT:
        {
            const aa_client_timeout_t *response = buffer;
            if (length >= sizeof(*response) && response->client_id == client->client_id)
            {
                snprintf(client->state_message, sizeof(client->state_message),
                    "the media driver timed this client out (no heartbeat within its client liveness timeout); "
                    "reconnect to continue");
                aa_put_int32_release(&client->state, AA_CLIENT_STATE_CLIENT_TIMEOUT);
            }
            break;
        }
        default:
            break;
    }
}

/* ---- conductor duty cycle ---- */

static void aa_client_mark_all_closed(aa_client_t *client)
{
    for (size_t i = 0; i < client->publications_count; i++)
    {
        aa_put_int32_release(&client->publications[i]->is_closed, 1);
        aa_notify(client->publications[i]->notify_fd);
    }
    for (size_t i = 0; i < client->subscriptions_count; i++)
    {
        aa_subscription_t *sub = client->subscriptions[i];
        aa_put_int32_release(&sub->is_closed, 1);
        aa_notify(sub->notify_fd);
    }
    for (size_t i = 0; i < client->added_counters_count; i++)
    {
        aa_put_int32_release(&client->added_counters[i]->is_closed, 1);
    }
    for (size_t i = 0; i < client->registrations_count; i++)
    {
        aa_registration_t *r = &client->registrations[i];
        if (0 == r->status)
        {
            aa_client_registration_failed(r, AA_ERROR_CODE_DRIVER_TIMEOUT, client->state_message, strlen(client->state_message));
        }
    }
}

static void aa_client_keepalive(aa_client_t *client, int64_t now_ms)
{
    if (client->heartbeat_counter_id < 0)
    {
        client->heartbeat_counter_id = aa_counters_reader_find_by_type_id_and_registration_id(
            &client->counters, AA_COUNTER_TYPE_CLIENT_HEARTBEAT, client->client_id);
    }
    if (client->heartbeat_counter_id >= 0 &&
        AA_COUNTER_RECORD_ALLOCATED == aa_counters_reader_counter_state(&client->counters, client->heartbeat_counter_id) &&
        client->client_id == aa_counters_reader_counter_registration_id(&client->counters, client->heartbeat_counter_id))
    {
        aa_put_int64_release(aa_counters_reader_addr(&client->counters, client->heartbeat_counter_id), now_ms);
    }
    else
    {
        client->heartbeat_counter_id = -1;
        aa_correlated_command_t command = { .client_id = client->client_id, .correlation_id = 0 };
        aa_mpsc_rb_write(&client->to_driver, AA_COMMAND_CLIENT_KEEPALIVE, &command, sizeof(command));
    }
}

/* The state message for a client whose driver is gone, by what aa_cnc_driver_liveness found. */
static void aa_client_describe_lost_driver(aa_client_t *client, int liveness, int64_t age_ms)
{
    size_t size = sizeof(client->state_message);
    int64_t pid = client->cnc->pid;
    switch (liveness)
    {
        case AA_CNC_DRIVER_CLOSED:
            snprintf(client->state_message, size,
                "the media driver at %s (pid %" PRId64 ") has closed; start a driver again and reconnect",
                client->aeron_dir, pid);
            break;
        case AA_CNC_DRIVER_EXITED:
            snprintf(client->state_message, size,
                "the media driver at %s has exited without closing (pid %" PRId64 " no longer runs); "
                "start a driver again and reconnect", client->aeron_dir, pid);
            break;
        default:
            snprintf(client->state_message, size,
                "the media driver at %s has not answered for %" PRId64 " ms (driver timeout %" PRId64 " ms); "
                "it has stopped or hangs: restart it and reconnect", client->aeron_dir, age_ms,
                client->driver_timeout_ms);
            break;
    }
}

/* Housekeeping: keepalives, registration deadlines and freeing lingering resources are not counted
 * as work, so an idle conductor backs off fully; only a lost driver counts. */
static int aa_client_service(aa_client_t *client, int64_t now_ns)
{
    int64_t now_ms = aa_clock_epoch_time(&client->clock);
    int64_t heartbeat_ms = aa_mpsc_rb_consumer_heartbeat_time_value(&client->to_driver);
    /* Lost at once when the driver closed (it marks its CnC file so as its last act) or its process
     * is gone (checked once the heartbeat is a little stale, so a live driver costs no system call);
     * otherwise once the heartbeat is older than the driver timeout less the longest gap between two
     * checks (an idle conductor sleeps between them), so that waiters hear of a hung driver within
     * the driver timeout, not up to a sleep after it. A live driver's heartbeat is at most a deep
     * park (16 ms) old. */
    int64_t margin_ms = client->driver_timeout_ms / 4 < AA_CLIENT_DRIVER_CHECK_MARGIN_MS ?
        client->driver_timeout_ms / 4 : AA_CLIENT_DRIVER_CHECK_MARGIN_MS;
    int64_t age_ms = now_ms - heartbeat_ms;
    int liveness = AA_CNC_DRIVER_CLOSED_HEARTBEAT == heartbeat_ms || age_ms >= AA_CLIENT_DRIVER_PID_CHECK_AGE_MS ?
        aa_cnc_driver_liveness(client->cnc, heartbeat_ms, age_ms, client->driver_timeout_ms - margin_ms) :
        AA_CNC_DRIVER_ACTIVE;
    if (AA_CNC_DRIVER_ACTIVE != liveness)
    {
        aa_client_describe_lost_driver(client, liveness, age_ms);
        aa_put_int32_release(&client->state, AA_CLIENT_STATE_DRIVER_TIMEOUT);
        aa_client_mark_all_closed(client);
        return 1;
    }

    if (now_ns >= client->time_of_last_keepalive_ns + client->keepalive_interval_ns)
    {
        client->time_of_last_keepalive_ns = now_ns;
        aa_client_keepalive(client, now_ms);
    }

    for (size_t i = 0; i < client->registrations_count; i++)
    {
        aa_registration_t *r = &client->registrations[i];
        if (0 == r->status && now_ms > r->deadline_ms)
        {
            char message[512];
            int n = snprintf(message, sizeof(message),
                "no response from the media driver at %s within the driver timeout (%" PRId64 " ms)",
                client->aeron_dir, client->driver_timeout_ms);
            aa_client_registration_failed(r, AA_ERROR_CODE_DRIVER_TIMEOUT, message, (size_t)n);
        }
    }

    for (size_t i = client->lingering_count; i-- > 0;)
    {
        if (now_ns >= client->lingering[i].deadline_ns)
        {
            aa_client_free_lingering(&client->lingering[i]);
            client->lingering[i] = client->lingering[--client->lingering_count];
        }
    }
    return 0;
}

/* ---- parked async waiters ---- */

static bool aa_image_has_data(aa_image_t *image)
{
    int64_t position = aa_get_int64_acquire(image->subscriber_position);
    int32_t offset = (int32_t)(position & (image->term_length - 1));
    const uint8_t *term = image->log.term_buffers[aa_index_by_position(position, image->position_bits_to_shift)];
    return aa_frame_length_volatile(term, offset) > 0;
}

/* A whole-subscription waiter wakes for data on any image, an image event or closure; end of
 * stream alone is not news to it (the image stays at its end until it is removed, with an event). */
static bool aa_subscription_has_something(aa_subscription_t *sub, aa_image_list_t *list)
{
    if (aa_get_int32_acquire(&sub->is_closed) || aa_get_int64_acquire(&sub->events_tail) != sub->events_head)
    {
        return true;
    }
    for (size_t i = 0; i < list->count; i++)
    {
        aa_image_t *image = list->images[i];
        if (aa_get_int32_acquire(&image->is_closed) || aa_image_has_data(image))
        {
            return true;
        }
    }
    return false;
}

static bool aa_unpark(volatile int32_t *parked, aa_client_t *client)
{
    if (aa_cas_int32(parked, 1, 0))
    {
        aa_get_and_add_int32(&client->parked_count, -1);
        return true;
    }
    return false;
}

static int aa_client_check_waiters(aa_client_t *client)
{
    int work_count = 0;
    for (size_t i = 0; i < client->subscriptions_count; i++)
    {
        aa_subscription_t *sub = client->subscriptions[i];
        aa_image_list_t *list = __atomic_load_n(&sub->images, __ATOMIC_ACQUIRE);
        bool signal = false;
        if (aa_get_int32_acquire(&sub->parked) && aa_subscription_has_something(sub, list) &&
            aa_unpark(&sub->parked, client))
        {
            signal = true;
        }
        for (size_t j = 0; j < list->count; j++)
        {
            aa_image_t *image = list->images[j];
            if (aa_get_int32_acquire(&image->parked) &&
                (aa_image_is_end_of_stream(image) || aa_image_has_data(image) || aa_get_int32_acquire(&sub->is_closed)) &&
                aa_unpark(&image->parked, client))
            {
                signal = true;
            }
        }
        if (signal)
        {
            aa_notify(sub->notify_fd);
            work_count++;
        }
    }
    for (size_t i = 0; i < client->publications_count; i++)
    {
        aa_publication_t *pub = client->publications[i];
        if (aa_get_int32_acquire(&pub->parked) &&
            (aa_get_int32_acquire(&pub->is_closed) ||
             aa_get_int64_acquire(pub->position_limit) > aa_get_int64_acquire(&pub->parked_position)) &&
            aa_unpark(&pub->parked, client))
        {
            aa_notify(pub->notify_fd);
            work_count++;
        }
    }
    return work_count;
}

/* The wake spin adapts as the kernel's halt polling does, on the time from one wake-up to the next
 * (how long the conductor was without a waiter to wake): within the window, it was caught and the
 * window stays; longer, but within the maximum, a longer window would have caught it and the window
 * doubles (from AA_CLIENT_WAKE_SPIN_MIN_NS); longer than the maximum, the spinning was wasted and the
 * window halves (to 0 below AA_CLIENT_WAKE_SPIN_MIN_NS). So request/response exchanges keep their
 * CPUs awake, and sparse wake-ups cost no spinning after a few. */
static void aa_client_wake_spin_on_signal(aa_client_t *client)
{
    int64_t max_ns = __atomic_load_n(&client->wake_spin_max_ns, __ATOMIC_RELAXED);
    int64_t window_ns = __atomic_load_n(&client->wake_spin_ns, __ATOMIC_RELAXED);
    int64_t now_ns = aa_nano_clock();
    if (client->wake_spin_last_signal_ns > 0)
    {
        int64_t since_ns = now_ns - client->wake_spin_last_signal_ns;
        if (since_ns > max_ns)
        {
            window_ns = window_ns / 2 < AA_CLIENT_WAKE_SPIN_MIN_NS ? 0 : window_ns / 2;
        }
        else if (since_ns > window_ns)
        {
            window_ns = window_ns < AA_CLIENT_WAKE_SPIN_MIN_NS ? AA_CLIENT_WAKE_SPIN_MIN_NS : 2 * window_ns;
        }
    }
    window_ns = window_ns < max_ns ? window_ns : max_ns;
    __atomic_store_n(&client->wake_spin_ns, window_ns, __ATOMIC_RELAXED);
    client->wake_spin_last_signal_ns = now_ns;
    client->wake_spin_until_ns = window_ns > 0 ? now_ns + window_ns : 0;
}

int64_t aa_client_wake_spin_window_ns(aa_client_t *client)
{
    return __atomic_load_n(&client->wake_spin_ns, __ATOMIC_RELAXED);
}

bool aa_client_doorbells_watched(aa_client_t *client)
{
    return 0 != __atomic_load_n(&client->doorbells_watched, __ATOMIC_SEQ_CST);
}

void aa_client_set_wake_spin_ns(aa_client_t *client, int64_t max_ns)
{
    __atomic_store_n(&client->wake_spin_max_ns, max_ns > 0 ? max_ns : 0, __ATOMIC_RELAXED);
    __atomic_store_n(&client->wake_spin_ns, max_ns > 0 ? max_ns : 0, __ATOMIC_RELAXED); /* windows start there */
}

static void aa_client_wake(aa_client_t *client)
{
    __atomic_fetch_add(&client->wake_word, 1, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, &client->wake_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* After parking (counted first, so a conductor woken by the ring looks) and arming: the conductor
 * needs waking only when it does not already sleep on the doorbells of every async log. */
static void aa_client_parked(aa_client_t *client)
{
    if (!__atomic_load_n(&client->doorbells_watched, __ATOMIC_SEQ_CST))
    {
        aa_client_wake(client);
    }
}

void aa_subscription_set_notify_fd(aa_subscription_t *sub, int fd)
{
    pthread_mutex_lock(&sub->client->lock);
    sub->notify_fd = fd;
    pthread_mutex_unlock(&sub->client->lock);
    aa_client_wake(sub->client); /* its logs join the conductor's doorbell set */
}

void aa_subscription_park(aa_subscription_t *sub)
{
    if (aa_cas_int32(&sub->parked, 0, 1))
    {
        aa_get_and_add_int32(&sub->client->parked_count, 1);
        aa_image_list_t *list = __atomic_load_n(&sub->images, __ATOMIC_ACQUIRE);
        for (size_t i = 0; i < list->count; i++)
        {
            aa_doorbell_arm(aa_logbuffer_doorbell(list->images[i]->log.metadata));
        }
        aa_client_parked(sub->client);
    }
}

void aa_subscription_unpark(aa_subscription_t *sub)
{
    aa_unpark(&sub->parked, sub->client);
}

void aa_image_park(aa_image_t *image)
{
    if (aa_cas_int32(&image->parked, 0, 1))
    {
        aa_get_and_add_int32(&image->subscription->client->parked_count, 1);
        aa_doorbell_arm(aa_logbuffer_doorbell(image->log.metadata));
        aa_client_parked(image->subscription->client);
    }
}

void aa_image_unpark(aa_image_t *image)
{
    aa_unpark(&image->parked, image->subscription->client);
}

void aa_publication_set_notify_fd(aa_publication_t *pub, int fd)
{
    pthread_mutex_lock(&pub->client->lock);
    pub->notify_fd = fd;
    pthread_mutex_unlock(&pub->client->lock);
    aa_client_wake(pub->client);
}

void aa_publication_park(aa_publication_t *pub, int64_t position)
{
    aa_put_int64_release(&pub->parked_position, position);
    if (aa_cas_int32(&pub->parked, 0, 1))
    {
        aa_get_and_add_int32(&pub->client->parked_count, 1);
        aa_doorbell_arm(aa_logbuffer_doorbell(pub->log.metadata));
        aa_client_parked(pub->client);
    }
}

void aa_publication_unpark(aa_publication_t *pub)
{
    aa_unpark(&pub->parked, pub->client);
}

typedef struct aa_client_idle_state_stct
{
    aa_client_t *client;
    bool waitv_unsupported;
    aa_doorbell_set_t doorbells;
}
aa_client_idle_state_t;

/* Adds to the set the doorbell of every log an async waiter may wait on (a subscription's images, a
 * publication's log): armed where the waiter is parked, watched unarmed otherwise (skipped with
 * parked_only). False when the set is full. Under the client lock. */
static bool aa_client_add_doorbells(aa_client_t *client, aa_doorbell_set_t *doorbells, bool parked_only)
{
    for (size_t i = 0; i < client->subscriptions_count; i++)
    {
        aa_subscription_t *sub = client->subscriptions[i];
        if (sub->notify_fd < 0)
        {
            continue;
        }
        aa_image_list_t *list = sub->images;
        bool sub_parked = aa_get_int32_acquire(&sub->parked);
        for (size_t j = 0; j < list->count; j++)
        {
            aa_doorbell_t *doorbell = aa_logbuffer_doorbell(list->images[j]->log.metadata);
            bool parked = sub_parked || aa_get_int32_acquire(&list->images[j]->parked);
            if ((parked || !parked_only) &&
                !(parked ? aa_doorbell_set_add(doorbells, doorbell) : aa_doorbell_set_watch(doorbells, doorbell)))
            {
                return false;
            }
        }
    }
    for (size_t i = 0; i < client->publications_count; i++)
    {
        aa_publication_t *pub = client->publications[i];
        bool parked = aa_get_int32_acquire(&pub->parked);
        if (pub->notify_fd < 0 || (parked_only && !parked))
        {
            continue;
        }
        aa_doorbell_t *doorbell = aa_logbuffer_doorbell(pub->log.metadata);
        if (!(parked ? aa_doorbell_set_add(doorbells, doorbell) : aa_doorbell_set_watch(doorbells, doorbell)))
        {
            return false;
        }
    }
    return true;
}

/* Sleeps until the doorbell of a log an async waiter may wait on is rung, the conductor is woken,
 * or AA_CLIENT_IDLE_SLEEP_NS passes. Waiters arm their logs' doorbells as they park; the conductor
 * arms those of parked waiters again (a ring disarms, and a ring that woke it may not have been
 * what the waiter waits for) and watches the others unarmed. doorbells_watched says whether they
 * all fit in one futex_waitv; it is cleared while the set is built, so a waiter that parks meanwhile
 * wakes the conductor. If they do not all fit, the conductor sleeps on the parked waiters' doorbells
 * alone (parking then wakes it). Returns false when it could not wait that way: the parked waiters'
 * logs alone are more than 127, or the kernel has no futex_waitv. */
static bool aa_client_wait_on_doorbells(aa_client_idle_state_t *s, int32_t wake_word)
{
    aa_client_t *client = s->client;
    aa_doorbell_set_t *doorbells = &s->doorbells;
    aa_doorbell_set_clear(doorbells);
    aa_doorbell_set_add_word(doorbells, &client->wake_word, wake_word, false);

    pthread_mutex_lock(&client->lock);
    __atomic_store_n(&client->doorbells_watched, 0, __ATOMIC_SEQ_CST);
    bool all_fit = !s->waitv_unsupported && aa_client_add_doorbells(client, doorbells, false);
    bool parked_fit = all_fit;
    if (!all_fit && !s->waitv_unsupported)
    {
        aa_doorbell_set_clear(doorbells);
        aa_doorbell_set_add_word(doorbells, &client->wake_word, wake_word, false);
        parked_fit = aa_client_add_doorbells(client, doorbells, true);
    }
    __atomic_store_n(&client->doorbells_watched, all_fit ? 1 : 0, __ATOMIC_SEQ_CST);
    /* waiters whose data came before the set was built wait on no ring */
    int signalled = AA_CLIENT_STATE_ACTIVE == client->state && aa_get_int32_acquire(&client->parked_count) > 0 ?
        aa_client_check_waiters(client) : 0;
    pthread_mutex_unlock(&client->lock);
    if (!parked_fit)
    {
        return false;
    }
    if (signalled > 0)
    {
        return true;
    }
    if (aa_doorbell_set_wait(doorbells, AA_CLIENT_IDLE_SLEEP_NS) < 0)
    {
        s->waitv_unsupported = true;
        __atomic_store_n(&client->doorbells_watched, 0, __ATOMIC_SEQ_CST);
        return false;
    }
    return true;
}

/* Sleeps on the doorbells of the logs async waiters may wait on (publishers ring after appending,
 * the driver after moving a publisher limit; only when a parked waiter armed them), so a waiter
 * wakes at once and parking costs no system call. Where futex_waitv is missing (Linux < 5.16) or
 * parked waiters wait on more than 127 logs, it checks them every AA_CLIENT_WAIT_CHECK_NS and
 * otherwise sleeps 16 ms between duty cycles (reference 10), woken early when a waiter parks. */
static void aa_client_idle(void *state, int work_count)
{
    aa_client_idle_state_t *s = state;
    aa_client_t *client = s->client;
    if (work_count > 0)
    {
        return;
    }
    if (client->wake_spin_until_ns > 0)
    {
        int64_t now_ns = aa_nano_clock();
        if (now_ns < client->wake_spin_until_ns)
        {
            sched_yield();
            return;
        }
        client->wake_spin_until_ns = 0;
    }
    int32_t wake_word = __atomic_load_n(&client->wake_word, __ATOMIC_SEQ_CST);
    if (aa_client_wait_on_doorbells(s, wake_word))
    {
        return;
    }
    if (aa_get_int32_acquire(&client->parked_count) > 0)
    {
        struct timespec ts = { 0, AA_CLIENT_WAIT_CHECK_NS };
        nanosleep(&ts, NULL);
        return;
    }
    struct timespec timeout = { AA_CLIENT_IDLE_SLEEP_NS / 1000000000LL, AA_CLIENT_IDLE_SLEEP_NS % 1000000000LL };
    syscall(SYS_futex, &client->wake_word, FUTEX_WAIT_PRIVATE, wake_word, &timeout, NULL, 0);
}

static int aa_client_idle_init(void **state, const char *args)
{
    (void)state;
    (void)args;
    return 0;
}

int aa_client_do_work(aa_client_t *client)
{
    if (0 != pthread_mutex_trylock(&client->lock))
    {
        return 0;
    }
    int work_count = 0;
    if (AA_CLIENT_STATE_ACTIVE == client->state)
    {
        work_count += aa_broadcast_receiver_receive(&client->to_clients, aa_client_on_response, client);
        if (aa_get_int32_acquire(&client->parked_count) > 0)
        {
            int signalled = aa_client_check_waiters(client);
            if (signalled > 0)
            {
                aa_client_wake_spin_on_signal(client);
            }
            work_count += signalled;
        }
        if (AA_CLIENT_STATE_ACTIVE != client->state)
        {
            aa_client_mark_all_closed(client);
        }
        else
        {
            work_count += aa_prefault_do_work(&client->prefault);
            int64_t now_ns = aa_clock_nano_time(&client->clock);
            if (now_ns >= client->time_of_last_service_ns + AA_CLIENT_SERVICE_INTERVAL_NS)
            {
                client->time_of_last_service_ns = now_ns;
                work_count += aa_client_service(client, now_ns);
            }
        }
    }
    pthread_mutex_unlock(&client->lock);
    return work_count;
}

static int aa_client_agent_do_work(void *state)
{
    return aa_client_do_work(state);
}

static void aa_client_agent_on_close(void *state)
{
    (void)state;
}

/* ---- connect / close ---- */

int aa_client_connect(
    aa_client_t **out, const char *aeron_dir, int64_t driver_timeout_ms, bool use_invoker, const char *idle_strategy)
{
    return aa_client_connect_with_clock(out, aeron_dir, driver_timeout_ms, use_invoker, idle_strategy, NULL, NULL, NULL);
}

int aa_client_connect_with_clock(
    aa_client_t **out, const char *aeron_dir, int64_t driver_timeout_ms, bool use_invoker, const char *idle_strategy,
    aa_clock_func_t nano_time, aa_clock_func_t epoch_time, void *clientd)
{
    if ((NULL == nano_time) != (NULL == epoch_time))
    {
        AA_SET_ERR(EINVAL, "%s", "aa_client_connect_with_clock: give both nano_time and epoch_time, or neither for the "
            "system clocks");
        return -1;
    }
    aa_client_t *client = calloc(1, sizeof(aa_client_t));
    if (NULL == client)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory allocating the client");
        return -1;
    }
    client->clock = aa_clock_system();
    if (NULL != nano_time)
    {
        aa_clock_t clock = { nano_time, epoch_time, clientd };
        client->clock = clock;
    }
    if (NULL == aeron_dir || '\0' == aeron_dir[0])
    {
        aa_default_aeron_dir(client->aeron_dir, sizeof(client->aeron_dir));
    }
    else
    {
        snprintf(client->aeron_dir, sizeof(client->aeron_dir), "%s", aeron_dir);
    }
    client->driver_timeout_ms = driver_timeout_ms > 0 ? driver_timeout_ms : 10000;
    client->keepalive_interval_ns = AA_CLIENT_KEEPALIVE_INTERVAL_NS;
    client->resource_linger_ns = AA_CLIENT_RESOURCE_LINGER_NS;
    client->heartbeat_counter_id = -1;
    client->use_invoker = use_invoker;

    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", client->aeron_dir, AA_CNC_FILE);
    int64_t length = aa_file_length(path);
    if (length < AA_CNC_HEADER_LENGTH)
    {
        AA_SET_ERR(AA_ERROR_CODE_DRIVER_NOT_FOUND,
            "no media driver at %s (%s is missing); start one with `aeron-async driver` (AERON_DIR=%s), "
            "or launch an embedded one with aeron_async.MediaDriver.launch()", client->aeron_dir, path, client->aeron_dir);
        free(client);
        return -1;
    }
    if (aa_map_existing_file(&client->cnc_file, path, 0) < 0)
    {
        AA_APPEND_ERR("%s", "mapping the media driver's CnC file");
        free(client);
        return -1;
    }
    aa_cnc_metadata_t *cnc = (aa_cnc_metadata_t *)client->cnc_file.addr;
    int64_t deadline_ms = aa_epoch_clock() + client->driver_timeout_ms;
    int32_t version;
    while (AA_CNC_VERSION != (version = aa_get_int32_acquire(&cnc->cnc_version)))
    {
        if (0 != version || aa_epoch_clock() > deadline_ms)
        {
            AA_SET_ERR(AA_ERROR_CODE_DRIVER_NOT_FOUND,
                "the CnC file at %s has version %d.%d.%d; this client needs %d.%d.%d (a driver of another version, "
                "or one that never finished starting)", path, (version >> 16) & 0xff, (version >> 8) & 0xff,
                version & 0xff, AA_CNC_VERSION_MAJOR, AA_CNC_VERSION_MINOR, AA_CNC_VERSION_PATCH);
            aa_unmap(&client->cnc_file);
            free(client);
            return -1;
        }
        usleep(1000);
    }
    client->cnc = cnc;
    size_t needed = AA_CNC_HEADER_LENGTH + (size_t)cnc->to_driver_buffer_length + (size_t)cnc->to_clients_buffer_length +
        (size_t)cnc->counters_metadata_buffer_length + (size_t)cnc->counters_values_buffer_length +
        (size_t)cnc->error_log_buffer_length;
    if (needed > client->cnc_file.length ||
        aa_mpsc_rb_init(&client->to_driver, aa_cnc_to_driver_buffer(cnc), (size_t)cnc->to_driver_buffer_length) < 0 ||
        aa_broadcast_receiver_init(&client->to_clients, aa_cnc_to_clients_buffer(cnc), (size_t)cnc->to_clients_buffer_length) < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_DRIVER_NOT_FOUND, "the CnC file at %s is truncated or corrupt", path);
        aa_unmap(&client->cnc_file);
        free(client);
        return -1;
    }
    aa_counters_reader_init(
        &client->counters, aa_cnc_counters_metadata_buffer(cnc), (size_t)cnc->counters_metadata_buffer_length,
        aa_cnc_counters_values_buffer(cnc), (size_t)cnc->counters_values_buffer_length);

    int64_t heartbeat_ms = aa_mpsc_rb_consumer_heartbeat_time_value(&client->to_driver);
    int64_t age = aa_clock_epoch_time(&client->clock) - heartbeat_ms;
    int liveness = aa_cnc_driver_liveness(cnc, heartbeat_ms, age, client->driver_timeout_ms);
    if (AA_CNC_DRIVER_ACTIVE != liveness)
    {
        if (AA_CNC_DRIVER_CLOSED == liveness)
        {
            AA_SET_ERR(AA_ERROR_CODE_DRIVER_NOT_FOUND,
                "the media driver at %s has closed (pid %" PRId64 "); start one with `aeron-async driver`",
                client->aeron_dir, (int64_t)cnc->pid);
        }
        else if (AA_CNC_DRIVER_EXITED == liveness)
        {
            AA_SET_ERR(AA_ERROR_CODE_DRIVER_NOT_FOUND,
                "the media driver at %s is not running (pid %" PRId64 " exited without closing it); "
                "start one with `aeron-async driver`", client->aeron_dir, (int64_t)cnc->pid);
        }
        else
        {
            AA_SET_ERR(AA_ERROR_CODE_DRIVER_NOT_FOUND,
                "the media driver at %s is not running (its last heartbeat was %" PRId64 " ms ago, pid %" PRId64 "); "
                "start one with `aeron-async driver`", client->aeron_dir, age, (int64_t)cnc->pid);
        }
        aa_broadcast_receiver_close(&client->to_clients);
        aa_unmap(&client->cnc_file);
        free(client);
        return -1;
    }

    client->client_id = aa_mpsc_rb_next_correlation_id(&client->to_driver);
    client->wake_spin_max_ns = AA_CLIENT_WAKE_SPIN_DEFAULT_NS;
    client->wake_spin_ns = AA_CLIENT_WAKE_SPIN_DEFAULT_NS;
    pthread_mutex_init(&client->lock, NULL);
    client->time_of_last_keepalive_ns = aa_clock_nano_time(&client->clock);
    aa_correlated_command_t command = { .client_id = client->client_id, .correlation_id = 0 };
    if (aa_client_send(client, AA_COMMAND_CLIENT_KEEPALIVE, &command, sizeof(command)) < 0)
    {
        aa_broadcast_receiver_close(&client->to_clients);
        aa_unmap(&client->cnc_file);
        pthread_mutex_destroy(&client->lock);
        free(client);
        return -1;
    }


    if (!use_invoker)
    {
        aa_idle_strategy_t idle;
        int idle_rc = 0;
        if (NULL == idle_strategy || '\0' == idle_strategy[0])
        {
            aa_client_idle_state_t *state = calloc(1, sizeof(aa_client_idle_state_t));
            if (NULL == state)
            {
                AA_SET_ERR(ENOMEM, "%s", "out of memory");
                idle_rc = -1;
            }
            else
            {
                state->client = client;
                idle.name = "client";
                idle.idle = aa_client_idle;
                idle.init = aa_client_idle_init;
                idle.set_doorbell = NULL;
                idle.close = NULL;
                idle.state = state;
            }
        }
        else
        {
            idle_rc = aa_idle_strategy_load(&idle, idle_strategy);
        }
        if (idle_rc < 0 ||
            aa_agent_runner_init(&client->runner, "aeron-client", client, aa_client_agent_do_work, aa_client_agent_on_close, &idle) < 0 ||
            aa_agent_runner_start(&client->runner) < 0)
        {
            aa_broadcast_receiver_close(&client->to_clients);
            aa_unmap(&client->cnc_file);
            pthread_mutex_destroy(&client->lock);
            free(client);
            return -1;
        }
        client->runner_started = true;
    }
    *out = client;
    return 0;
}

int aa_client_close(aa_client_t *client)
{
    if (NULL == client)
    {
        return 0;
    }
    if (client->runner_started)
    {
        aa_agent_runner_close(&client->runner);
    }
    pthread_mutex_lock(&client->lock);
    if (AA_CLIENT_STATE_ACTIVE == client->state)
    {
        aa_correlated_command_t command = {
            .client_id = client->client_id, .correlation_id = aa_mpsc_rb_next_correlation_id(&client->to_driver) };
        aa_mpsc_rb_write(&client->to_driver, AA_COMMAND_CLIENT_CLOSE, &command, sizeof(command));
        aa_doorbell_ring(aa_cnc_doorbell(client->cnc));
    }
    aa_put_int32_release(&client->state, AA_CLIENT_STATE_CLOSED);
    for (size_t i = 0; i < client->lingering_count; i++)
    {
        aa_client_free_lingering(&client->lingering[i]);
    }
    for (size_t i = 0; i < client->publications_count; i++)
    {
        aa_client_free_publication(client->publications[i]);
    }
    for (size_t i = 0; i < client->subscriptions_count; i++)
    {
        aa_client_free_subscription(client->subscriptions[i]);
    }
    for (size_t i = 0; i < client->added_counters_count; i++)
    {
        free(client->added_counters[i]);
    }
    free(client->added_counters);
    for (size_t i = 0; i < client->registrations_count; i++)
    {
        free(client->registrations[i].error_message);
        free(client->registrations[i].channel);
    }
    aa_prefault_close(&client->prefault);
    free(client->lingering);
    free(client->publications);
    free(client->subscriptions);
    free(client->registrations);
    aa_broadcast_receiver_close(&client->to_clients);
    aa_unmap(&client->cnc_file);
    pthread_mutex_unlock(&client->lock);
    pthread_mutex_destroy(&client->lock);
    free(client);
    return 0;
}

int32_t aa_client_state(aa_client_t *client)
{
    return aa_get_int32_acquire(&client->state);
}

const char *aa_client_state_message(aa_client_t *client)
{
    return client->state_message;
}

int64_t aa_client_id(aa_client_t *client)
{
    return client->client_id;
}

const char *aa_client_aeron_dir(aa_client_t *client)
{
    return client->aeron_dir;
}

/* ---- registrations ---- */

int64_t aa_client_registration_begin(aa_client_t *client)
{
    pthread_mutex_lock(&client->lock);
    if (AA_CLIENT_STATE_ACTIVE != client->state)
    {
        aa_client_set_error_from_state(client);
        pthread_mutex_unlock(&client->lock);
        return -1;
    }
    if (AA_GROW(client, registrations) < 0)
    {
        pthread_mutex_unlock(&client->lock);
        return -1;
    }
    return aa_mpsc_rb_next_correlation_id(&client->to_driver);
}

int64_t aa_client_registration_commit(
    aa_client_t *client, int64_t correlation_id, int32_t type, int32_t stream_id, char *channel)
{
    aa_registration_t *r = &client->registrations[client->registrations_count++];
    memset(r, 0, sizeof(*r));
    r->correlation_id = correlation_id;
    r->type = type;
    r->stream_id = stream_id;
    r->channel = channel;
    r->deadline_ms = aa_clock_epoch_time(&client->clock) + client->driver_timeout_ms;
    pthread_mutex_unlock(&client->lock);
    return correlation_id;
}

static int64_t aa_client_async_add(
    aa_client_t *client, int32_t command_type, const char *channel, int32_t stream_id)
{
    aa_uri_t uri;
    if (aa_uri_parse(channel, &uri) < 0)
    {
        return -1;
    }
    size_t channel_length = strlen(channel);
    uint8_t buffer[sizeof(aa_subscription_command_t) + AA_URI_MAX_LENGTH];
    int64_t correlation_id = aa_client_registration_begin(client);
    if (correlation_id < 0)
    {
        return -1;
    }
    size_t length;
    if (AA_COMMAND_ADD_SUBSCRIPTION == command_type)
    {
        aa_subscription_command_t *command = (aa_subscription_command_t *)buffer;
        command->correlated.client_id = client->client_id;
        command->correlated.correlation_id = correlation_id;
        command->registration_correlation_id = -1;
        command->stream_id = stream_id;
        command->channel_length = (int32_t)channel_length;
        memcpy(buffer + sizeof(*command), channel, channel_length);
        length = sizeof(*command) + channel_length;
    }
    else
    {
        aa_publication_command_t *command = (aa_publication_command_t *)buffer;
        command->correlated.client_id = client->client_id;
        command->correlated.correlation_id = correlation_id;
        command->stream_id = stream_id;
        command->channel_length = (int32_t)channel_length;
        memcpy(buffer + sizeof(*command), channel, channel_length);
        length = sizeof(*command) + channel_length;
    }
    char *channel_copy = strdup(channel);
    if (NULL == channel_copy || aa_client_send(client, command_type, buffer, length) < 0)
    {
        free(channel_copy);
        pthread_mutex_unlock(&client->lock);
        return -1;
    }
    return aa_client_registration_commit(client, correlation_id, command_type, stream_id, channel_copy);
}

int aa_client_async_poll(aa_client_t *client, int64_t correlation_id, void **resource)
{
    if (client->use_invoker)
    {
        aa_client_do_work(client);
    }
    pthread_mutex_lock(&client->lock);
    aa_registration_t *r = aa_client_find_registration(client, correlation_id);
    if (NULL == r)
    {
        if (AA_CLIENT_STATE_ACTIVE != client->state)
        {
            aa_client_set_error_from_state(client);
        }
        else
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "unknown registration %" PRId64, correlation_id);
        }
        pthread_mutex_unlock(&client->lock);
        return -1;
    }
    int status = r->status;
    if (1 == status)
    {
        *resource = r->resource;
        aa_client_remove_registration(client, r);
    }
    else if (-1 == status)
    {
        AA_SET_ERR(r->error_code, "%s", NULL != r->error_message ? r->error_message : "registration failed");
        aa_client_remove_registration(client, r);
    }
    pthread_mutex_unlock(&client->lock);
    return status;
}

int64_t aa_client_async_add_publication(aa_client_t *client, const char *channel, int32_t stream_id, bool exclusive)
{
    return aa_client_async_add(
        client, exclusive ? AA_COMMAND_ADD_EXCLUSIVE_PUBLICATION : AA_COMMAND_ADD_PUBLICATION, channel, stream_id);
}

int aa_client_async_add_publication_poll(aa_client_t *client, int64_t correlation_id, aa_publication_t **publication)
{
    return aa_client_async_poll(client, correlation_id, (void **)publication);
}

int64_t aa_client_async_add_subscription(aa_client_t *client, const char *channel, int32_t stream_id)
{
    return aa_client_async_add(client, AA_COMMAND_ADD_SUBSCRIPTION, channel, stream_id);
}

int aa_client_async_add_subscription_poll(aa_client_t *client, int64_t correlation_id, aa_subscription_t **subscription)
{
    return aa_client_async_poll(client, correlation_id, (void **)subscription);
}

int aa_publication_close(aa_publication_t *pub)
{
    aa_client_t *client = pub->client;
    pthread_mutex_lock(&client->lock);
    aa_put_int32_release(&pub->is_closed, 1);
    aa_unpark(&pub->parked, client);
    for (size_t i = 0; i < client->publications_count; i++)
    {
        if (client->publications[i] == pub)
        {
            client->publications[i] = client->publications[--client->publications_count];
            if (AA_CLIENT_STATE_ACTIVE == client->state)
            {
                aa_client_send_remove(client, AA_COMMAND_REMOVE_PUBLICATION, pub->registration_id);
            }
            aa_client_linger(client, pub, AA_LINGER_PUBLICATION);
            break;
        }
    }
    pthread_mutex_unlock(&client->lock);
    return 0;
}

int aa_subscription_close(aa_subscription_t *sub)
{
    aa_client_t *client = sub->client;
    pthread_mutex_lock(&client->lock);
    aa_put_int32_release(&sub->is_closed, 1);
    aa_unpark(&sub->parked, client);
    for (size_t i = 0; i < client->subscriptions_count; i++)
    {
        if (client->subscriptions[i] == sub)
        {
            client->subscriptions[i] = client->subscriptions[--client->subscriptions_count];
            if (AA_CLIENT_STATE_ACTIVE == client->state)
            {
                aa_client_send_remove(client, AA_COMMAND_REMOVE_SUBSCRIPTION, sub->registration_id);
            }
            aa_image_list_t *list = sub->images;
            for (size_t j = 0; j < list->count; j++)
            {
                aa_put_int32_release(&list->images[j]->is_closed, 1);
                aa_unpark(&list->images[j]->parked, client);
            }
            aa_client_linger(client, sub, AA_LINGER_SUBSCRIPTION);
            break;
        }
    }
    pthread_mutex_unlock(&client->lock);
    return 0;
}
