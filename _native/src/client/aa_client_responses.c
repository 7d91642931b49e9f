/*
 * What the client conductor makes of the driver's responses (reference 9.3): publications and
 * subscriptions made ready, images made available and unavailable (each an event for the
 * subscription, with its notify fd written), operation successes, errors and client timeouts.
 * Counter responses are in aa_client_counters.c. Under the client lock.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "client/aa_client.h"
#include "aeron_async.h"
#include "protocols/aa_control_protocol.h"
#include "util/aa_clock.h"
#include "util/aa_error.h"

void aa_client_registration_failed(aa_registration_t *r, int32_t code, const char *message, size_t length)
{
    r->status = -1;
    r->error_code = code;
    free(r->error_message);
    r->error_message = strndup(message, length);
}

/* ---- checks at the record boundary (docs/security.md, "The CnC file") ----
 * A response of a known type is checked before any field is used: its fixed part within the record,
 * every length-prefixed field within it, every counter id within the counters buffer. One that fails
 * is no driver's: the client stops with AA_CLIENT_STATE_DRIVER_CORRUPT. Types this client does not
 * know are skipped, as Aeron's clients skip them (a newer driver may send more). */

static bool aa_response_too_short(aa_client_t *client, const char *what, size_t length, size_t needed)
{
    if (length >= needed)
    {
        return false;
    }
    char message[200];
    snprintf(message, sizeof(message), "an %s response of %zu bytes, shorter than its %zu-byte header", what, length, needed);
    aa_client_driver_corrupt(client, message);
    return true;
}

/* A length-prefixed field: its length read at offset, its bytes after it; false (the client stopped)
 * when either is outside the record. */
static bool aa_response_field(
    aa_client_t *client, const char *what, const char *field, const uint8_t *buffer, size_t length, size_t offset,
    int32_t *field_length)
{
    if (offset <= length && length - offset >= sizeof(int32_t))
    {
        memcpy(field_length, buffer + offset, sizeof(*field_length));
        if (*field_length >= 0 && (size_t)*field_length <= length - offset - sizeof(int32_t))
        {
            return true;
        }
    }
    else
    {
        *field_length = -1;
    }
    char message[200];
    snprintf(message, sizeof(message), "an %s response whose %s (length %d) lies outside its %zu bytes", what, field,
        *field_length, length);
    aa_client_driver_corrupt(client, message);
    return false;
}

static bool aa_response_counter(aa_client_t *client, const char *what, int32_t counter_id)
{
    if (aa_client_counter_id_valid(client, counter_id))
    {
        return true;
    }
    char message[200];
    snprintf(message, sizeof(message), "an %s response naming counter %d, outside the counters buffer (0..%d)", what,
        counter_id, client->counters.max_counter_id);
    aa_client_driver_corrupt(client, message);
    return false;
}

static void aa_client_on_publication_ready(aa_client_t *client, const uint8_t *buffer, size_t length, bool exclusive)
{
    const aa_publication_buffers_ready_t *response = (const aa_publication_buffers_ready_t *)buffer;
    int32_t log_file_length;
    if (aa_response_too_short(client, "ON_PUBLICATION_READY", length, sizeof(*response)) ||
        !aa_response_field(client, "ON_PUBLICATION_READY", "log file name", buffer, length,
            offsetof(aa_publication_buffers_ready_t, log_file_length), &log_file_length) ||
        !aa_response_counter(client, "ON_PUBLICATION_READY", response->position_limit_counter_id))
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
    if (aa_response_too_short(client, "ON_SUBSCRIPTION_READY", length, sizeof(*response)))
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

void aa_client_notify(int fd)
{
    if (fd >= 0)
    {
        uint64_t one = 1;
        ssize_t ignored = write(fd, &one, sizeof(one));
        (void)ignored;
    }
}

/* Room in the subscription's event ring for the events waiting, one more image's available event and
 * an unavailable event for every image then in the list (so an unavailable event always fits): grown
 * here, on an image event, never on the message path. Under the client lock. */
static int aa_subscription_reserve_events(aa_subscription_t *sub, size_t images_after)
{
    int64_t head = sub->events_head;
    int64_t tail = sub->events_tail;
    size_t needed = (size_t)(tail - head) + 1 + images_after;
    if (needed <= sub->events_capacity)
    {
        return 0;
    }
    size_t capacity = 0 == sub->events_capacity ? 16 : sub->events_capacity;
    while (capacity < needed)
    {
        capacity *= 2;
    }
    aa_image_event_t *grown = malloc(capacity * sizeof(aa_image_event_t));
    if (NULL == grown)
    {
        return -1;
    }
    for (int64_t i = head; i < tail; i++)
    {
        grown[(size_t)i & (capacity - 1)] = sub->events[(size_t)i & (sub->events_capacity - 1)];
    }
    free(sub->events);
    sub->events = grown;
    sub->events_capacity = capacity;
    return 0;
}

static void aa_subscription_push_event(aa_subscription_t *sub, int32_t type, aa_image_t *image)
{
    int64_t tail = sub->events_tail;
    aa_image_event_t *event = &sub->events[(size_t)tail & (sub->events_capacity - 1)];
    event->type = type;
    event->image = image;
    aa_put_int64_release(&sub->events_tail, tail + 1);
    aa_client_notify(sub->notify_fd);
}

static void aa_client_on_available_image(aa_client_t *client, const uint8_t *buffer, size_t length)
{
    const aa_image_buffers_ready_t *response = (const aa_image_buffers_ready_t *)buffer;
    int32_t log_file_length;
    int32_t identity_length = 0;
    if (aa_response_too_short(client, "ON_AVAILABLE_IMAGE", length, sizeof(*response)) ||
        !aa_response_field(client, "ON_AVAILABLE_IMAGE", "log file name", buffer, length,
            offsetof(aa_image_buffers_ready_t, log_file_length), &log_file_length) ||
        !aa_response_counter(client, "ON_AVAILABLE_IMAGE", response->subscriber_position_id))
    {
        return;
    }
    size_t identity_offset = sizeof(*response) + AA_ALIGN((size_t)log_file_length, sizeof(int32_t));
    if (identity_offset < length &&
        !aa_response_field(client, "ON_AVAILABLE_IMAGE", "source identity", buffer, length, identity_offset, &identity_length))
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

    if (aa_subscription_reserve_events(sub, old_list->count + 1) < 0)
    {
        return;
    }
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
    if (identity_length > 0)
    {
        size_t n = (size_t)identity_length < sizeof(image->source_identity) - 1 ?
            (size_t)identity_length : sizeof(image->source_identity) - 1;
        memcpy(image->source_identity, buffer + identity_offset + sizeof(int32_t), n);
        image->source_identity[n] = '\0';
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
    image->mtu_length = image->log.metadata->mtu_length;
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
    image->closed_end_of_stream_position = aa_logbuffer_end_of_stream_position(image->log.metadata);
    image->closed_is_publication_revoked = aa_logbuffer_is_publication_revoked(image->log.metadata);
    aa_put_int32_release(&image->is_closed, 1);
    aa_client_unpark(&image->parked, client);
    if (0 == aa_array_ensure_capacity((void **)&sub->retired, &sub->retired_capacity, sub->retired_count, sizeof(aa_image_t *)))
    {
        sub->retired[sub->retired_count++] = image;
    }
    aa_client_linger(client, image, AA_LINGER_IMAGE);
}

static void aa_client_on_unavailable_image(aa_client_t *client, const uint8_t *buffer, size_t length)
{
    const aa_image_message_t *response = (const aa_image_message_t *)buffer;
    int32_t channel_length;
    if (aa_response_too_short(client, "ON_UNAVAILABLE_IMAGE", length, sizeof(*response)) ||
        !aa_response_field(client, "ON_UNAVAILABLE_IMAGE", "channel", buffer, length,
            offsetof(aa_image_message_t, channel_length), &channel_length))
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

void aa_client_on_publication_error(aa_client_t *client, const uint8_t *buffer, size_t length)
{
    aa_publication_error_t message;
    int32_t text_length;
    if (aa_response_too_short(client, "ON_PUBLICATION_ERROR", length, sizeof(message)) ||
        !aa_response_field(client, "ON_PUBLICATION_ERROR", "error text", buffer, length,
            offsetof(aa_publication_error_t, error_message_length), &text_length))
    {
        return;
    }
    memcpy(&message, buffer, sizeof(message));
    bool ours = false;   /* only the errors of this client's publications, as Aeron's client */
    for (size_t i = 0; !ours && i < client->publications_count; i++)
    {
        ours = client->publications[i]->original_registration_id == message.registration_id;
    }
    if (!ours)
    {
        return;
    }
    if (NULL == client->publication_errors)
    {
        client->publication_errors = calloc(AA_PUBLICATION_ERRORS_KEPT, sizeof(aa_publication_error_info_t));
        if (NULL == client->publication_errors)
        {
            return;
        }
    }
    if (client->publication_errors_tail - client->publication_errors_head >= AA_PUBLICATION_ERRORS_KEPT)
    {
        client->publication_errors_head++;
        client->publication_errors_dropped++;
    }
    aa_publication_error_info_t *info =
        &client->publication_errors[client->publication_errors_tail % AA_PUBLICATION_ERRORS_KEPT];
    memset(info, 0, sizeof(*info));
    info->registration_id = message.registration_id;
    info->destination_registration_id = message.destination_registration_id;
    info->receiver_id = message.receiver_id;
    info->group_tag = message.group_tag;
    info->session_id = message.session_id;
    info->stream_id = message.stream_id;
    info->error_code = message.error_code;
    info->source_port = message.address_port;
    inet_ntop(AA_PUBLICATION_ERROR_ADDRESS_TYPE_IPV6 == message.address_type ? AF_INET6 : AF_INET,
        message.address, info->source_address, sizeof(info->source_address));
    size_t copy = (size_t)text_length < sizeof(info->error_text) - 1 ? (size_t)text_length : sizeof(info->error_text) - 1;
    memcpy(info->error_text, buffer + sizeof(message), copy);
    aa_put_int64_release(&client->publication_errors_tail, client->publication_errors_tail + 1);
}

void aa_client_on_response(int32_t msg_type_id, const void *buffer, size_t length, void *clientd)
{
    aa_client_t *client = clientd;
    const uint8_t *b = buffer;
    if (AA_CLIENT_STATE_ACTIVE != client->state)
    {
        return;    /* stopped by an earlier record of this receive */
    }
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
        case AA_RESPONSE_ON_STATIC_COUNTER:
            aa_client_on_static_counter(client, b, length);
            break;
        case AA_RESPONSE_ON_NEXT_AVAILABLE_SESSION_ID:
            aa_client_on_next_session_id(client, b, length);
            break;
        case AA_RESPONSE_ON_OPERATION_SUCCESS:
        {
            const aa_operation_succeeded_t *response = buffer;
            if (!aa_response_too_short(client, "ON_OPERATION_SUCCESS", length, sizeof(*response)))
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
            int32_t message_length;
            if (!aa_response_too_short(client, "ON_ERROR", length, sizeof(*response)) &&
                aa_response_field(client, "ON_ERROR", "message", b, length,
                    offsetof(aa_error_response_t, error_message_length), &message_length))
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
        case AA_RESPONSE_ON_PUBLICATION_ERROR:
            aa_client_on_publication_error(client, b, length);
            break;
        case AA_RESPONSE_ON_CLIENT_TIMEOUT:
        {
            const aa_client_timeout_t *response = buffer;
            if (!aa_response_too_short(client, "ON_CLIENT_TIMEOUT", length, sizeof(*response)) &&
                response->client_id == client->client_id)
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

int32_t aa_client_take_publication_errors(
    aa_client_t *client, aa_publication_error_info_t *out, int32_t max, int64_t *dropped)
{
    if (client->use_invoker)
    {
        aa_client_do_work(client);
    }
    pthread_mutex_lock(&client->lock);
    int32_t n = 0;
    while (client->publication_errors_head < client->publication_errors_tail && n < max)
    {
        out[n++] = client->publication_errors[client->publication_errors_head++ % AA_PUBLICATION_ERRORS_KEPT];
    }
    if (NULL != dropped)
    {
        *dropped = client->publication_errors_dropped;
    }
    client->publication_errors_dropped = 0;
    pthread_mutex_unlock(&client->lock);
    return n;
}
