/*
 * The conductor's clients (heartbeat counters, liveness, removal with everything they own) and the
 * stream and channel-status counters every resource allocates.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "driver/aa_driver_conductor_private.h"
#include "util/aa_error.h"

/* ---- counters ---- */

int32_t aa_conductor_allocate_stream_counter(
    aa_driver_conductor_t *conductor, int32_t type_id, const char *name, int64_t registration_id,
    int32_t session_id, int32_t stream_id, const char *channel, int64_t now_ms)
{
    uint8_t key[AA_COUNTER_KEY_MAX_LENGTH];
    memset(key, 0, sizeof(key));
    size_t channel_length = strlen(channel);
    size_t key_channel_max = sizeof(key) - 20;
    size_t key_channel_length = channel_length < key_channel_max ? channel_length : key_channel_max;
    int32_t key_channel_length32 = (int32_t)key_channel_length;
    memcpy(key, &registration_id, 8);
    memcpy(key + 8, &session_id, 4);
    memcpy(key + 12, &stream_id, 4);
    memcpy(key + 16, &key_channel_length32, 4);
    memcpy(key + 20, channel, key_channel_length);

    char label[AA_COUNTER_LABEL_MAX_LENGTH];
    int label_length = snprintf(
        label, sizeof(label), "%s: %" PRId64 " %" PRId32 " %" PRId32 " %s",
        name, registration_id, session_id, stream_id, channel);
    label_length = label_length < (int)sizeof(label) ? label_length : (int)sizeof(label) - 1;

    int32_t id = aa_counters_manager_allocate(
        &conductor->counters, now_ms, type_id, key, 20 + key_channel_length, label, (size_t)label_length);
    if (id >= 0)
    {
        aa_counter_set_registration_id(&conductor->counters, id, registration_id);
    }
    return id;
}

int32_t aa_conductor_allocate_subscriber_position(
    aa_driver_conductor_t *conductor, const aa_subscription_link_t *link, int32_t session_id, int32_t stream_id,
    int64_t join_position, int64_t now_ms, volatile int64_t **value)
{
    int32_t counter_id = aa_conductor_allocate_stream_counter(
        conductor, AA_COUNTER_TYPE_SUBSCRIBER_POSITION, "sub-pos", link->registration_id, session_id, stream_id,
        link->channel, now_ms);
    if (counter_id < 0)
    {
        aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR, aa_errmsg());
        return -1;
    }
    char suffix[48];
    int suffix_length = snprintf(suffix, sizeof(suffix), " @%" PRId64, join_position);
    aa_counters_manager_append_to_label(&conductor->counters, counter_id, suffix, (size_t)suffix_length);
    *value = aa_counters_manager_addr(&conductor->counters, counter_id);
    aa_put_int64_release(*value, join_position);
    return counter_id;
}

void aa_conductor_link_log_reader(
    aa_driver_conductor_t *conductor, const aa_conductor_log_reader_t *reader, const aa_subscription_link_t *link,
    int64_t join_position, int64_t now_ns, int64_t now_ms)
{
    volatile int64_t *value;
    int32_t counter_id = aa_conductor_allocate_subscriber_position(
        conductor, link, reader->session_id, reader->stream_id, join_position, now_ms, &value);
    if (counter_id < 0)
    {
        return;
    }
    if (reader->add(reader->owner, link, counter_id, value, now_ns) < 0)
    {
        aa_conductor_free_counter(conductor, counter_id, now_ms);
        char message[96];
        snprintf(message, sizeof(message), "out of memory adding a %s", reader->what);
        aa_driver_conductor_log_error(conductor, ENOMEM, message);
        return;
    }
    aa_conductor_send_available_image(
        conductor, reader->correlation_id, reader->session_id, reader->stream_id, link->registration_id, counter_id,
        reader->log_path, reader->source_identity);
}

void aa_conductor_remove_log(aa_driver_conductor_t *conductor, size_t mapped_length, const char *log_path)
{
    conductor->bytes_mapped -= (int64_t)mapped_length;
    aa_put_int64_release(conductor->system_counters[AA_SYSTEM_COUNTER_BYTES_CURRENTLY_MAPPED], conductor->bytes_mapped);
    if ('\0' != log_path[0] && unlink(log_path) < 0 && ENOENT != errno)
    {
        aa_driver_conductor_count(conductor, AA_SYSTEM_COUNTER_FREE_FAILS, 1);
    }
}

void aa_conductor_free_counter(aa_driver_conductor_t *conductor, int32_t id, int64_t now_ms)
{
    if (id >= 0)
    {
        aa_counters_manager_free(&conductor->counters, now_ms, id);
    }
}

/* snd-channel / rcv-channel: the endpoint status (reference 3), keyed by the channel. */
int32_t aa_conductor_allocate_channel_status_counter(
    aa_driver_conductor_t *conductor, int32_t type_id, const char *name, const char *channel,
    int64_t registration_id, int64_t now_ms)
{
    uint8_t key[AA_COUNTER_KEY_MAX_LENGTH];
    memset(key, 0, sizeof(key));
    size_t channel_length = strlen(channel);
    size_t key_channel_max = sizeof(key) - sizeof(int32_t);
    size_t key_channel_length = channel_length < key_channel_max ? channel_length : key_channel_max;
    int32_t key_channel_length32 = (int32_t)key_channel_length;
    memcpy(key, &key_channel_length32, sizeof(key_channel_length32));
    memcpy(key + sizeof(int32_t), channel, key_channel_length);

    char label[AA_COUNTER_LABEL_MAX_LENGTH];
    int label_length = snprintf(label, sizeof(label), "%s: %s", name, channel);
    label_length = label_length < (int)sizeof(label) ? label_length : (int)sizeof(label) - 1;
    int32_t id = aa_counters_manager_allocate(
        &conductor->counters, now_ms, type_id, key, sizeof(int32_t) + key_channel_length, label, (size_t)label_length);
    if (id >= 0)
    {
        aa_counter_set_registration_id(&conductor->counters, id, registration_id);
    }
    return id;
}

/* ---- counters clients add ---- */

static void aa_conductor_free_counter_link_at(aa_driver_conductor_t *conductor, size_t index, int64_t now_ms)
{
    aa_counter_link_t link = conductor->counter_links[index];
    conductor->counter_links[index] = conductor->counter_links[--conductor->counter_links_count];
    aa_conductor_free_counter(conductor, link.counter_id, now_ms);
    aa_counter_update_t response = { .correlation_id = link.registration_id, .counter_id = link.counter_id };
    aa_conductor_transmit(conductor, AA_RESPONSE_ON_UNAVAILABLE_COUNTER, &response, sizeof(response));
}

/* The key and label after a counter command's fixed header (ADD_COUNTER, ADD_STATIC_COUNTER): int32 key
 * length, the key, padding to 4 bytes, int32 label length, the label. 0, or -1 (MALFORMED_COMMAND). */
static int aa_conductor_counter_key_and_label(
    const uint8_t *buffer, size_t length, size_t header_length, const char *what, const uint8_t **key,
    int32_t *key_length, const char **label, int32_t *label_length)
{
    size_t offset = header_length;
    if (length < offset + sizeof(int32_t))
    {
        goto malformed;
    }
    memcpy(key_length, buffer + offset, sizeof(*key_length));
    offset += sizeof(int32_t);
    if (*key_length < 0 || *key_length > AA_COUNTER_KEY_MAX_LENGTH || length < offset + (size_t)*key_length)
    {
        goto malformed;
    }
    *key = buffer + offset;
    offset += AA_ALIGN((size_t)*key_length, sizeof(int32_t));
    if (length < offset + sizeof(int32_t))
    {
        goto malformed;
    }
    memcpy(label_length, buffer + offset, sizeof(*label_length));
    offset += sizeof(int32_t);
    if (*label_length < 0 || *label_length > AA_COUNTER_LABEL_MAX_LENGTH || length < offset + (size_t)*label_length)
    {
        goto malformed;
    }
    *label = (const char *)buffer + offset;
    return 0;

malformed:
    AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "malformed %s command (%zu bytes): key at most %d bytes, "
        "label at most %d", what, length, AA_COUNTER_KEY_MAX_LENGTH, AA_COUNTER_LABEL_MAX_LENGTH);
    return -1;
}

int aa_conductor_on_add_counter(aa_driver_conductor_t *conductor, const uint8_t *buffer, size_t length, int64_t now_ms)
{
    const aa_counter_command_t *command = (const aa_counter_command_t *)buffer;
    const uint8_t *key = NULL;
    const char *label = NULL;
    int32_t key_length = 0, label_length = 0;
    if (length < sizeof(*command) || aa_conductor_counter_key_and_label(
        buffer, length, sizeof(*command), "add counter", &key, &key_length, &label, &label_length) < 0)
    {
        if (length < sizeof(*command))
        {
            AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "malformed add counter command (%zu bytes)", length);
        }
        return -1;
    }

    if (AA_ARRAY_ENSURE(conductor->counter_links, aa_counter_link_t) < 0)
    {
        return -1;
    }
    int32_t id = aa_counters_manager_allocate(
        &conductor->counters, now_ms, command->type_id, key, (size_t)key_length, label, (size_t)label_length);
    if (id < 0)
    {
        return -1;
    }
    aa_counter_set_registration_id(&conductor->counters, id, command->correlated.correlation_id);
    aa_counter_set_owner_id(&conductor->counters, id, command->correlated.client_id);
    aa_counter_link_t *link = &conductor->counter_links[conductor->counter_links_count++];
    link->registration_id = command->correlated.correlation_id;
    link->client_id = command->correlated.client_id;
    link->counter_id = id;
    aa_counter_update_t response = { .correlation_id = link->registration_id, .counter_id = id };
    aa_conductor_transmit(conductor, AA_RESPONSE_ON_COUNTER_READY, &response, sizeof(response));
    return 0;
}

/* ADD_STATIC_COUNTER, as Aeron's aeron_driver_conductor_on_add_static_counter: the counter of this type id
 * and registration id if one is allocated (any client's, from any earlier command), else a new one with
 * that registration id and owner id -1 (Aeron's null value): no client owns it, so it outlives the client
 * that added it (no REMOVE_COUNTER, client close or timeout frees it; it goes with the driver). A
 * client's own counter (ADD_COUNTER) with that type and registration id is an error, in Aeron's words. */
int aa_conductor_on_add_static_counter(
    aa_driver_conductor_t *conductor, const uint8_t *buffer, size_t length, int64_t now_ms)
{
    const aa_static_counter_command_t *command = (const aa_static_counter_command_t *)buffer;
    const uint8_t *key = NULL;
    const char *label = NULL;
    int32_t key_length = 0, label_length = 0;
    if (length < sizeof(*command) || aa_conductor_counter_key_and_label(
        buffer, length, sizeof(*command), "add static counter", &key, &key_length, &label, &label_length) < 0)
    {
        if (length < sizeof(*command))
        {
            AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "malformed add static counter command (%zu bytes)", length);
        }
        return -1;
    }
    aa_counters_reader_t reader;
    aa_counters_reader_init(&reader, conductor->counters.metadata, conductor->counters.metadata_length,
        conductor->counters.values, conductor->counters.values_length);
    int32_t id = aa_counters_reader_find_by_type_id_and_registration_id(
        &reader, command->type_id, command->registration_id);
    if (AA_NULL_COUNTER_ID != id)
    {
        if (AA_COUNTER_STATIC_OWNER_ID != aa_counters_reader_counter_owner_id(&reader, id))
        {
            AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR,
                "cannot add static counter, because a non-static counter exists (counterId=%" PRId32 ") for typeId=%"
                PRId32 " and registrationId=%" PRId64 "; give the static counter another registration id",
                id, command->type_id, command->registration_id);
            return -1;
        }
    }
    else
    {
        id = aa_counters_manager_allocate(
            &conductor->counters, now_ms, command->type_id, key, (size_t)key_length, label, (size_t)label_length);
        if (id < 0)
        {
            return -1;
        }
        aa_counter_set_registration_id(&conductor->counters, id, command->registration_id);
        aa_counter_set_owner_id(&conductor->counters, id, AA_COUNTER_STATIC_OWNER_ID);
    }
    aa_counter_update_t response = { .correlation_id = command->correlated.correlation_id, .counter_id = id };
    aa_conductor_transmit(conductor, AA_RESPONSE_ON_STATIC_COUNTER, &response, sizeof(response));
    return 0;
}

int aa_conductor_on_remove_counter(aa_driver_conductor_t *conductor, const aa_remove_command_t *command, int64_t now_ms)
{
    for (size_t i = 0; i < conductor->counter_links_count; i++)
    {
        aa_counter_link_t *link = &conductor->counter_links[i];
        if (link->registration_id == command->registration_id && link->client_id == command->correlated.client_id)
        {
            aa_conductor_on_operation_success(conductor, command->correlated.correlation_id);
            aa_conductor_free_counter_link_at(conductor, i, now_ms);
            return 0;
        }
    }
    AA_SET_ERR(AA_ERROR_CODE_UNKNOWN_COUNTER, "unknown counter registration %" PRId64 " of client %" PRId64,
        command->registration_id, command->correlated.client_id);
    return -1;
}

/* ---- clients ---- */

aa_driver_client_t *aa_conductor_find_client(aa_driver_conductor_t *conductor, int64_t client_id)
{
    for (size_t i = 0; i < conductor->clients_count; i++)
    {
        if (conductor->clients[i].client_id == client_id)
        {
            return &conductor->clients[i];
        }
    }
    return NULL;
}

aa_driver_client_t *aa_conductor_get_or_add_client(aa_driver_conductor_t *conductor, int64_t client_id, int64_t now_ms)
{
    aa_driver_client_t *client = aa_conductor_find_client(conductor, client_id);
    if (NULL != client)
    {
        return client;
    }
    if (AA_ARRAY_ENSURE(conductor->clients, aa_driver_client_t) < 0)
    {
        return NULL;
    }
    uint8_t key[8];
    memcpy(key, &client_id, sizeof(client_id));
    char label[64];
    int label_length = snprintf(label, sizeof(label), "client-heartbeat: %" PRId64, client_id);
    int32_t id = aa_counters_manager_allocate(
        &conductor->counters, now_ms, AA_COUNTER_TYPE_CLIENT_HEARTBEAT, key, sizeof(key), label, (size_t)label_length);
    if (id < 0)
    {
        return NULL;
    }
    aa_counter_set_registration_id(&conductor->counters, id, client_id);
    volatile int64_t *heartbeat = aa_counters_manager_addr(&conductor->counters, id);
    aa_put_int64_release(heartbeat, now_ms);

    client = &conductor->clients[conductor->clients_count++];
    client->client_id = client_id;
    client->heartbeat_counter_id = id;
    client->heartbeat = heartbeat;
    return client;
}

void aa_conductor_remove_client_at(
    aa_driver_conductor_t *conductor, size_t index, bool timed_out, int64_t now_ns, int64_t now_ms)
{
    int64_t client_id = conductor->clients[index].client_id;
    for (size_t i = conductor->publication_links_count; i-- > 0;)
    {
        if (conductor->publication_links[i].client_id == client_id)
        {
            aa_conductor_remove_publication_link_at(conductor, i, now_ns);
        }
    }
    for (size_t i = conductor->subscription_links_count; i-- > 0;)
    {
        if (conductor->subscription_links[i].client_id == client_id)
        {
            aa_conductor_remove_subscription_link_at(conductor, i, now_ns, now_ms);
        }
    }
    for (size_t i = conductor->counter_links_count; i-- > 0;)
    {
        if (conductor->counter_links[i].client_id == client_id)
        {
            aa_conductor_free_counter_link_at(conductor, i, now_ms);
        }
    }
    aa_conductor_free_counter(conductor, conductor->clients[index].heartbeat_counter_id, now_ms);
    conductor->clients[index] = conductor->clients[--conductor->clients_count];
    if (timed_out)
    {
        aa_client_timeout_t response = { .client_id = client_id };
        aa_conductor_transmit(conductor, AA_RESPONSE_ON_CLIENT_TIMEOUT, &response, sizeof(response));
        aa_get_and_add_int64(conductor->system_counters[AA_SYSTEM_COUNTER_CLIENT_TIMEOUTS], 1);
    }
}

/* ---- liveness ---- */

void aa_conductor_check_clients(aa_driver_conductor_t *conductor, int64_t now_ns, int64_t now_ms)
{
    int64_t timeout_ms = conductor->ctx->client_liveness_timeout_ns / 1000000;
    for (size_t i = conductor->clients_count; i-- > 0;)
    {
        int64_t last = aa_get_int64_acquire(conductor->clients[i].heartbeat);
        if (now_ms > last + timeout_ms)
        {
            char message[128];
            snprintf(message, sizeof(message), "client %" PRId64 " timed out after %" PRId64 " ms without a heartbeat",
                conductor->clients[i].client_id, now_ms - last);
            aa_distinct_error_log_record(&conductor->error_log, now_ms, AA_ERROR_CODE_GENERIC_ERROR, message);
            aa_conductor_remove_client_at(conductor, i, true, now_ns, now_ms);
        }
    }
}
