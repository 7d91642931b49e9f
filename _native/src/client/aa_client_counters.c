/*
 * Counters a client adds (ADD_COUNTER / REMOVE_COUNTER, reference 9.3), and what the client reads of
 * its channels' status counters. The driver allocates the record (type, key, label; registration id =
 * the command's correlation id, owner id = the client id) and frees it on REMOVE_COUNTER, client close
 * or client timeout, answering ON_UNAVAILABLE_COUNTER; the value is written in place in the CnC file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/aa_client.h"
#include "aeron_async.h"
#include "protocols/aa_control_protocol.h"
#include "util/aa_clock.h"
#include "util/aa_error.h"

/* ADD_COUNTER and ADD_STATIC_COUNTER: the fixed header (header_length bytes, correlated fields filled in by
 * aa_client_registration_send), then the key and label as Aeron's. */
static int64_t aa_client_send_counter_command(
    aa_client_t *client, int32_t command_type, uint8_t *buffer, size_t header_length, int32_t type_id,
    const uint8_t *key, size_t key_length, const char *label, size_t label_length)
{
    if (key_length > AA_COUNTER_KEY_MAX_LENGTH || (key_length > 0 && NULL == key))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "a counter key is at most %d bytes, got %zu",
            AA_COUNTER_KEY_MAX_LENGTH, key_length);
        return -1;
    }
    if (label_length > AA_COUNTER_LABEL_MAX_LENGTH || (label_length > 0 && NULL == label))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "a counter label is at most %d bytes, got %zu",
            AA_COUNTER_LABEL_MAX_LENGTH, label_length);
        return -1;
    }
    size_t offset = header_length;
    int32_t length32 = (int32_t)key_length;
    memcpy(buffer + offset, &length32, sizeof(length32));
    offset += sizeof(length32);
    if (key_length > 0)
    {
        memcpy(buffer + offset, key, key_length);
    }
    size_t padded = AA_ALIGN(key_length, sizeof(int32_t));
    memset(buffer + offset + key_length, 0, padded - key_length);
    offset += padded;
    length32 = (int32_t)label_length;
    memcpy(buffer + offset, &length32, sizeof(length32));
    offset += sizeof(length32);
    if (label_length > 0)
    {
        memcpy(buffer + offset, label, label_length);
    }
    offset += label_length;

    int64_t correlation_id = aa_client_registration_begin(client);
    if (correlation_id < 0)
    {
        return -1;
    }
    return aa_client_registration_send(client, correlation_id, command_type, buffer, offset, type_id, NULL);
}

#define AA_COUNTER_COMMAND_MAX_LENGTH \
    (sizeof(aa_static_counter_command_t) + 2 * sizeof(int32_t) + AA_COUNTER_KEY_MAX_LENGTH + 4 + AA_COUNTER_LABEL_MAX_LENGTH)

int64_t aa_client_async_add_counter(
    aa_client_t *client, int32_t type_id, const uint8_t *key, size_t key_length, const char *label, size_t label_length)
{
    uint8_t buffer[AA_COUNTER_COMMAND_MAX_LENGTH];
    aa_counter_command_t *command = (aa_counter_command_t *)buffer;
    command->type_id = type_id;
    return aa_client_send_counter_command(
        client, AA_COMMAND_ADD_COUNTER, buffer, sizeof(*command), type_id, key, key_length, label, label_length);
}

int64_t aa_client_async_add_static_counter(
    aa_client_t *client, int32_t type_id, const uint8_t *key, size_t key_length, const char *label, size_t label_length,
    int64_t registration_id)
{
    uint8_t buffer[AA_COUNTER_COMMAND_MAX_LENGTH];
    aa_static_counter_command_t *command = (aa_static_counter_command_t *)buffer;
    command->registration_id = registration_id;
    command->type_id = type_id;
    /* aa_client_registration_send keeps registration_id with the registration, for the counter */
    return aa_client_send_counter_command(
        client, AA_COMMAND_ADD_STATIC_COUNTER, buffer, sizeof(*command), type_id, key, key_length, label, label_length);
}

int aa_client_async_add_counter_poll(aa_client_t *client, int64_t correlation_id, aa_counter_t **counter)
{
    return aa_client_async_poll(client, correlation_id, (void **)counter);
}

/* ON_COUNTER_READY and ON_STATIC_COUNTER: the counter of a registration of this client (command_type). */
static void aa_client_on_counter_answer(
    aa_client_t *client, const uint8_t *buffer, size_t length, int32_t command_type, const char *what)
{
    const aa_counter_update_t *response = (const aa_counter_update_t *)buffer;
    if (length < sizeof(*response) || !aa_client_counter_id_valid(client, response->counter_id))
    {
        char message[200];
        snprintf(message, sizeof(message), "an %s response of %zu bytes naming counter %d (the counters "
            "buffer holds 0..%d)", what, length, length < sizeof(*response) ? -1 : response->counter_id,
            client->counters.max_counter_id);
        aa_client_driver_corrupt(client, message);
        return;
    }
    aa_registration_t *r = aa_client_find_registration(client, response->correlation_id);
    if (NULL == r || 0 != r->status || command_type != r->type)
    {
        return; /* another client's counter */
    }
    aa_counter_t *counter = calloc(1, sizeof(aa_counter_t));
    if (NULL == counter || AA_GROW(client, added_counters) < 0)
    {
        free(counter);
        aa_client_registration_failed(r, AA_ERROR_CODE_GENERIC_ERROR, "out of memory", 13);
        return;
    }
    counter->client = client;
    counter->is_static = AA_COMMAND_ADD_STATIC_COUNTER == command_type;
    counter->registration_id = counter->is_static ? r->static_registration_id : response->correlation_id;
    counter->counter_id = response->counter_id;
    counter->type_id = r->stream_id;
    counter->value = aa_counters_reader_addr(&client->counters, response->counter_id);
    client->added_counters[client->added_counters_count++] = counter;
    r->resource = counter;
    r->status = 1;
}

void aa_client_on_counter_ready(aa_client_t *client, const uint8_t *buffer, size_t length)
{
    aa_client_on_counter_answer(client, buffer, length, AA_COMMAND_ADD_COUNTER, "ON_COUNTER_READY");
}

void aa_client_on_static_counter(aa_client_t *client, const uint8_t *buffer, size_t length)
{
    aa_client_on_counter_answer(client, buffer, length, AA_COMMAND_ADD_STATIC_COUNTER, "ON_STATIC_COUNTER");
}

int64_t aa_client_async_next_session_id(aa_client_t *client, int32_t stream_id)
{
    aa_next_session_id_command_t command;
    memset(&command, 0, sizeof(command));
    command.stream_id = stream_id;
    int64_t correlation_id = aa_client_registration_begin(client);
    if (correlation_id < 0)
    {
        return -1;
    }
    return aa_client_registration_send(
        client, correlation_id, AA_COMMAND_GET_NEXT_AVAILABLE_SESSION_ID, &command, sizeof(command), stream_id, NULL);
}

void aa_client_on_next_session_id(aa_client_t *client, const uint8_t *buffer, size_t length)
{
    const aa_next_session_id_response_t *response = (const aa_next_session_id_response_t *)buffer;
    if (length < sizeof(*response))
    {
        char message[200];
        snprintf(message, sizeof(message), "an ON_NEXT_AVAILABLE_SESSION_ID response of %zu bytes, shorter than its "
            "%zu bytes", length, sizeof(*response));
        aa_client_driver_corrupt(client, message);
        return;
    }
    aa_registration_t *r = aa_client_find_registration(client, response->correlation_id);
    if (NULL == r || 0 != r->status || AA_COMMAND_GET_NEXT_AVAILABLE_SESSION_ID != r->type)
    {
        return; /* another client's request */
    }
    r->session_id = response->next_session_id;
    r->status = 1;
}

void aa_client_on_unavailable_counter(aa_client_t *client, const uint8_t *buffer, size_t length)
{
    const aa_counter_update_t *response = (const aa_counter_update_t *)buffer;
    if (length < sizeof(*response))
    {
        char message[200];
        snprintf(message, sizeof(message), "an ON_UNAVAILABLE_COUNTER response of %zu bytes, shorter than its %zu-byte "
            "header", length, sizeof(*response));
        aa_client_driver_corrupt(client, message);
        return;
    }
    for (size_t i = 0; i < client->added_counters_count; i++)
    {
        aa_counter_t *counter = client->added_counters[i];
        if (counter->registration_id == response->correlation_id)
        {
            aa_put_int32_release(&counter->is_closed, 1);
            return;
        }
    }
}

int32_t aa_counter_id(aa_counter_t *counter)
{
    return counter->counter_id;
}

int64_t aa_counter_registration_id(aa_counter_t *counter)
{
    return counter->registration_id;
}

bool aa_counter_is_closed(aa_counter_t *counter)
{
    return 0 != aa_get_int32_acquire(&counter->is_closed);
}

int64_t aa_counter_get(aa_counter_t *counter)
{
    return aa_get_int64_acquire(counter->value);
}

static int aa_counter_check_open(aa_counter_t *counter)
{
    if (0 != aa_get_int32_acquire(&counter->is_closed))
    {
        aa_client_t *client = counter->client;
        if (AA_CLIENT_STATE_ACTIVE != aa_get_int32_acquire(&client->state))
        {
            aa_client_set_error_from_state(client);
        }
        else
        {
            AA_SET_ERR(AA_ERROR_CODE_CLOSED, "counter %d (registration %" PRId64 ") was freed by the media driver; "
                "add a new one", counter->counter_id, counter->registration_id);
        }
        return -1;
    }
    return 0;
}

int aa_counter_set(aa_counter_t *counter, int64_t value)
{
    if (aa_counter_check_open(counter) < 0)
    {
        return -1;
    }
    aa_put_int64_release(counter->value, value);
    return 0;
}

int aa_counter_get_and_add(aa_counter_t *counter, int64_t delta, int64_t *previous)
{
    if (aa_counter_check_open(counter) < 0)
    {
        return -1;
    }
    *previous = aa_get_and_add_int64(counter->value, delta);
    return 0;
}

int aa_counter_close(aa_counter_t *counter)
{
    aa_client_t *client = counter->client;
    pthread_mutex_lock(&client->lock);
    aa_put_int32_release(&counter->is_closed, 1);
    for (size_t i = 0; i < client->added_counters_count; i++)
    {
        if (client->added_counters[i] == counter)
        {
            client->added_counters[i] = client->added_counters[--client->added_counters_count];
            if (AA_CLIENT_STATE_ACTIVE == client->state && !counter->is_static)
            {
                aa_client_send_remove(client, AA_COMMAND_REMOVE_COUNTER, counter->registration_id);
            }
            if (aa_client_linger(client, counter, AA_LINGER_COUNTER) < 0)
            {
                client->added_counters[client->added_counters_count++] = counter; /* freed with the client instead */
            }
            break;
        }
    }
    pthread_mutex_unlock(&client->lock);
    return 0;
}

int32_t aa_publication_channel_status_id(aa_publication_t *pub)
{
    return pub->channel_status_id;
}

int32_t aa_subscription_channel_status_id(aa_subscription_t *sub)
{
    return sub->channel_status_id;
}

int64_t aa_client_counter_value(aa_client_t *client, int32_t counter_id)
{
    if (counter_id < 0 || counter_id > client->counters.max_counter_id)
    {
        return 0;
    }
    return aa_get_int64_acquire(aa_counters_reader_addr(&client->counters, counter_id));
}
