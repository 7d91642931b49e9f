/* Read-only view of a driver's CnC file for monitoring tools (stat, errors) in other processes. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aeron_async.h"
#include "client/aa_client.h"
#include "protocols/aa_control_protocol.h"
#include "concurrent/aa_error_log.h"
#include "util/aa_clock.h"
#include "util/aa_error.h"

struct aa_cnc_reader_stct
{
    aa_mapped_file_t file;
    aa_cnc_metadata_t *cnc;
    aa_counters_reader_t counters;
    aa_mpsc_rb_t to_driver;
};

int aa_cnc_reader_open(aa_cnc_reader_t **out, const char *aeron_dir)
{
    char dir[PATH_MAX];
    char path[PATH_MAX];
    if (NULL == aeron_dir || '\0' == aeron_dir[0])
    {
        aa_default_aeron_dir(dir, sizeof(dir));
    }
    else
    {
        snprintf(dir, sizeof(dir), "%s", aeron_dir);
    }
    snprintf(path, sizeof(path), "%s/%s", dir, AA_CNC_FILE);
    if (aa_file_length(path) < AA_CNC_HEADER_LENGTH)
    {
        AA_SET_ERR(AA_ERROR_CODE_DRIVER_NOT_FOUND, "no media driver at %s (%s is missing)", dir, path);
        return -1;
    }
    aa_cnc_reader_t *reader = calloc(1, sizeof(aa_cnc_reader_t));
    if (NULL == reader)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory");
        return -1;
    }
    if (aa_map_existing_file(&reader->file, path, 0) < 0)
    {
        free(reader);
        return -1;
    }
    aa_cnc_metadata_t *cnc = (aa_cnc_metadata_t *)reader->file.addr;
    if (AA_CNC_VERSION != aa_get_int32_acquire(&cnc->cnc_version))
    {
        AA_SET_ERR(AA_ERROR_CODE_DRIVER_NOT_FOUND, "CnC file %s is not ready or of another version", path);
        aa_unmap(&reader->file);
        free(reader);
        return -1;
    }
    const char *fault = aa_cnc_lengths_fault(cnc, reader->file.length);
    if (NULL != fault)
    {
        AA_SET_ERR(AA_ERROR_CODE_DRIVER_CORRUPT, "CnC file %s is corrupt: %s; restart the driver (it makes a new CnC "
            "file), and let only the driver's user (and its group) write the aeron directory", path, fault);
        aa_unmap(&reader->file);
        free(reader);
        return -1;
    }
    reader->cnc = cnc;
    aa_counters_reader_init(
        &reader->counters, aa_cnc_counters_metadata_buffer(cnc), (size_t)cnc->counters_metadata_buffer_length,
        aa_cnc_counters_values_buffer(cnc), (size_t)cnc->counters_values_buffer_length);
    aa_mpsc_rb_init(&reader->to_driver, aa_cnc_to_driver_buffer(cnc), (size_t)cnc->to_driver_buffer_length);
    *out = reader;
    return 0;
}

void aa_cnc_reader_close(aa_cnc_reader_t *reader)
{
    if (NULL != reader)
    {
        aa_unmap(&reader->file);
        free(reader);
    }
}

void aa_cnc_reader_info(aa_cnc_reader_t *reader, aa_cnc_info_t *info)
{
    const aa_cnc_metadata_t *cnc = reader->cnc;
    int64_t heartbeat_ms = aa_mpsc_rb_consumer_heartbeat_time_value(&reader->to_driver);
    *info = (aa_cnc_info_t)
    {
        .cnc_version = cnc->cnc_version,
        .to_driver_buffer_length = cnc->to_driver_buffer_length,
        .to_clients_buffer_length = cnc->to_clients_buffer_length,
        .counters_metadata_buffer_length = cnc->counters_metadata_buffer_length,
        .counters_values_buffer_length = cnc->counters_values_buffer_length,
        .error_log_buffer_length = cnc->error_log_buffer_length,
        .client_liveness_timeout_ns = cnc->client_liveness_timeout,
        .start_timestamp_ms = cnc->start_timestamp,
        .pid = cnc->pid,
        .driver_heartbeat_age_ms = AA_CNC_DRIVER_CLOSED_HEARTBEAT == heartbeat_ms ? -1 : aa_epoch_clock() - heartbeat_ms,
    };
}

/* Fills info; false when the counter's label length is one no driver writes (the label is then
 * reported empty). */
static bool aa_cnc_reader_fill_counter(aa_counters_reader_t *r, int32_t id, aa_counter_info_t *info)
{
    const uint8_t *metadata = r->metadata + (size_t)id * AA_COUNTER_METADATA_LENGTH;
    int32_t label_length = aa_get_int32_acquire((const volatile int32_t *)(metadata + AA_COUNTER_LABEL_LENGTH_OFFSET));
    info->id = id;
    info->type_id = aa_counters_reader_counter_type_id(r, id);
    info->value = aa_get_int64_acquire(aa_counters_reader_addr(r, id));
    info->registration_id = aa_counters_reader_counter_registration_id(r, id);
    info->owner_id = aa_counters_reader_counter_owner_id(r, id);
    info->key_length = AA_COUNTER_KEY_MAX_LENGTH;
    memcpy(info->key, metadata + AA_COUNTER_KEY_OFFSET, AA_COUNTER_KEY_MAX_LENGTH);
    info->label_length = aa_counters_reader_counter_label(r, id, info->label, sizeof(info->label));
    return label_length >= 0 && label_length <= AA_COUNTER_LABEL_MAX_LENGTH;
}

static int32_t aa_cnc_reader_corrupt_counter(aa_counters_reader_t *r, int32_t id)
{
    const uint8_t *metadata = r->metadata + (size_t)id * AA_COUNTER_METADATA_LENGTH;
    AA_SET_ERR(AA_ERROR_CODE_DRIVER_CORRUPT,
        "the media driver's CnC file is corrupt: counter %d has a label length of %d (a driver writes 0..%d); something "
        "other than the driver wrote the file: restart the driver, and let only the driver's user (and its group) write "
        "the aeron directory", id, *(const volatile int32_t *)(metadata + AA_COUNTER_LABEL_LENGTH_OFFSET),
        AA_COUNTER_LABEL_MAX_LENGTH);
    return -2;
}

int32_t aa_cnc_reader_next_counter(aa_cnc_reader_t *reader, int32_t from_id, aa_counter_info_t *info)
{
    aa_counters_reader_t *r = &reader->counters;
    for (int32_t id = from_id < 0 ? 0 : from_id; id <= r->max_counter_id; id++)
    {
        int32_t state = aa_counters_reader_counter_state(r, id);
        if (AA_COUNTER_RECORD_UNUSED == state)
        {
            return -1;
        }
        if (AA_COUNTER_RECORD_ALLOCATED != state)
        {
            continue;
        }
        bool sound = aa_cnc_reader_fill_counter(r, id, info);
        /* a counter freed while it was read is skipped, not reported half-updated */
        if (AA_COUNTER_RECORD_ALLOCATED == aa_counters_reader_counter_state(r, id))
        {
            return sound ? id : aa_cnc_reader_corrupt_counter(r, id);
        }
    }
    return -1;
}

int32_t aa_cnc_reader_counter(aa_cnc_reader_t *reader, int32_t counter_id, aa_counter_info_t *info)
{
    aa_counters_reader_t *r = &reader->counters;
    if (counter_id < 0 || counter_id > r->max_counter_id)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "counter id %d is outside 0..%d (the driver's counters buffer)",
            counter_id, r->max_counter_id);
        return -1;
    }
    int32_t state = aa_counters_reader_counter_state(r, counter_id);
    if (AA_COUNTER_RECORD_ALLOCATED != state)
    {
        return 0;
    }
    bool sound = aa_cnc_reader_fill_counter(r, counter_id, info);
    if (AA_COUNTER_RECORD_ALLOCATED != aa_counters_reader_counter_state(r, counter_id))
    {
        return 0;
    }
    return sound ? 1 : aa_cnc_reader_corrupt_counter(r, counter_id) + 1;
}

int32_t aa_cnc_reader_max_counter_id(aa_cnc_reader_t *reader)
{
    return reader->counters.max_counter_id;
}

int64_t aa_cnc_reader_counter_value(aa_cnc_reader_t *reader, int32_t counter_id)
{
    if (counter_id < 0 || counter_id > reader->counters.max_counter_id)
    {
        return 0;
    }
    return aa_get_int64_acquire(aa_counters_reader_addr(&reader->counters, counter_id));
}

int aa_error_log_next_record(const uint8_t *buffer, size_t capacity, size_t *offset, aa_error_record_t *record)
{
    size_t o = *offset;
    if (o + AA_ERROR_LOG_ENCODED_ERROR_OFFSET > capacity)
    {
        return 0;
    }
    int32_t length = aa_get_int32_acquire((const volatile int32_t *)(buffer + o + AA_ERROR_LOG_LENGTH_OFFSET));
    if (length <= AA_ERROR_LOG_ENCODED_ERROR_OFFSET || o + (size_t)length > capacity)
    {
        return 0;
    }
    record->observation_count = aa_get_int32_volatile((const volatile int32_t *)(buffer + o + AA_ERROR_LOG_OBSERVATION_COUNT_OFFSET));
    record->last_observation_ms = aa_get_int64_volatile(
        (const volatile int64_t *)(buffer + o + AA_ERROR_LOG_LAST_OBSERVATION_TIMESTAMP_OFFSET));
    record->first_observation_ms = *(const int64_t *)(buffer + o + AA_ERROR_LOG_FIRST_OBSERVATION_TIMESTAMP_OFFSET);
    record->text = (const char *)(buffer + o + AA_ERROR_LOG_ENCODED_ERROR_OFFSET);
    record->text_length = length - AA_ERROR_LOG_ENCODED_ERROR_OFFSET;
    *offset = o + AA_ALIGN((size_t)length, AA_ERROR_LOG_RECORD_ALIGNMENT);
    return 1;
}

int aa_cnc_reader_next_error(aa_cnc_reader_t *reader, size_t *offset, aa_error_record_t *record)
{
    return aa_error_log_next_record(
        aa_cnc_error_log_buffer(reader->cnc), (size_t)reader->cnc->error_log_buffer_length, offset, record);
}

/* ---- driver control (docs/architecture.md, "Operations"): TERMINATE_DRIVER from any process ---- */

int aa_cnc_reader_request_termination(aa_cnc_reader_t *reader, const uint8_t *token, size_t token_length)
{
    if (token_length > AA_TERMINATION_TOKEN_MAX_LENGTH || (token_length > 0 && NULL == token))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "a termination token is at most %d bytes, got %zu",
            AA_TERMINATION_TOKEN_MAX_LENGTH, token_length);
        return -1;
    }
    uint8_t message[sizeof(aa_terminate_driver_command_t) + AA_TERMINATION_TOKEN_MAX_LENGTH];
    aa_terminate_driver_command_t command;
    /* as Aeron's requester: no client of its own, so the client id is a fresh correlation id too */
    command.correlated.client_id = aa_mpsc_rb_next_correlation_id(&reader->to_driver);
    command.correlated.correlation_id = aa_mpsc_rb_next_correlation_id(&reader->to_driver);
    command.token_length = (int32_t)token_length;
    memcpy(message, &command, sizeof(command));
    if (token_length > 0)
    {
        memcpy(message + sizeof(command), token, token_length);
    }
    if (aa_mpsc_rb_write(&reader->to_driver, AA_COMMAND_TERMINATE_DRIVER, message, sizeof(command) + token_length) < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "%s",
            "could not write TERMINATE_DRIVER: the driver's command buffer is full; try again");
        return -1;
    }
    aa_doorbell_ring(aa_cnc_doorbell(reader->cnc)); /* a deeply idle driver wakes at once */
    return 0;
}
