#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "concurrent/aa_error_log.h"
#include "concurrent/aa_atomic.h"
#include "util/aa_error.h"

int aa_distinct_error_log_init(aa_distinct_error_log_t *log, uint8_t *buffer, size_t length)
{
    memset(log, 0, sizeof(*log));
    log->buffer = buffer;
    log->capacity = length;
    if (0 != pthread_mutex_init(&log->mutex, NULL))
    {
        AA_SET_ERR(errno, "%s", "could not initialise the error log mutex");
        return -1;
    }
    return 0;
}

void aa_distinct_error_log_close(aa_distinct_error_log_t *log)
{
    for (size_t i = 0; i < log->observations_count; i++)
    {
        free(log->observations[i].description);
    }
    free(log->observations);
    log->observations = NULL;
    log->observations_count = 0;
    log->observations_capacity = 0;
    pthread_mutex_destroy(&log->mutex);
}

int aa_distinct_error_log_record(aa_distinct_error_log_t *log, int64_t timestamp_ms, int32_t error_code, const char *description)
{
    size_t description_length = strlen(description);
    pthread_mutex_lock(&log->mutex);
    for (size_t i = 0; i < log->observations_count; i++)
    {
        aa_distinct_observation_t *o = &log->observations[i];
        if (o->error_code == error_code && o->description_length == description_length &&
            0 == memcmp(o->description, description, description_length))
        {
            uint8_t *record = log->buffer + o->offset;
            aa_get_and_add_int32((volatile int32_t *)(record + AA_ERROR_LOG_OBSERVATION_COUNT_OFFSET), 1);
            aa_put_int64_release((volatile int64_t *)(record + AA_ERROR_LOG_LAST_OBSERVATION_TIMESTAMP_OFFSET), timestamp_ms);
            pthread_mutex_unlock(&log->mutex);
            return 0;
        }
    }
    size_t length = AA_ERROR_LOG_ENCODED_ERROR_OFFSET + description_length;
    size_t aligned = AA_ALIGN(length, AA_ERROR_LOG_RECORD_ALIGNMENT);
    if (log->next_offset + aligned > log->capacity)
    {
        pthread_mutex_unlock(&log->mutex);
        return -1;
    }
    if (log->observations_count == log->observations_capacity)
    {
        size_t capacity = 0 == log->observations_capacity ? 16 : log->observations_capacity * 2;
        aa_distinct_observation_t *grown = realloc(log->observations, capacity * sizeof(*grown));
        if (NULL == grown)
        {
            pthread_mutex_unlock(&log->mutex);
            return -1;
        }
        log->observations = grown;
        log->observations_capacity = capacity;
    }
    char *copy = strdup(description);
    if (NULL == copy)
    {
        pthread_mutex_unlock(&log->mutex);
        return -1;
    }
    size_t offset = log->next_offset;
    uint8_t *record = log->buffer + offset;
    memcpy(record + AA_ERROR_LOG_ENCODED_ERROR_OFFSET, description, description_length);
    *(int64_t *)(record + AA_ERROR_LOG_FIRST_OBSERVATION_TIMESTAMP_OFFSET) = timestamp_ms;
    aa_put_int64_volatile((volatile int64_t *)(record + AA_ERROR_LOG_LAST_OBSERVATION_TIMESTAMP_OFFSET), timestamp_ms);
    aa_put_int32_volatile((volatile int32_t *)(record + AA_ERROR_LOG_OBSERVATION_COUNT_OFFSET), 1);
    aa_put_int32_release((volatile int32_t *)(record + AA_ERROR_LOG_LENGTH_OFFSET), (int32_t)length);
    log->next_offset = offset + aligned;

    aa_distinct_observation_t *o = &log->observations[log->observations_count++];
    o->error_code = error_code;
    o->offset = offset;
    o->description_length = description_length;
    o->description = copy;
    pthread_mutex_unlock(&log->mutex);
    return 0;
}

size_t aa_error_log_read(const uint8_t *buffer, size_t length, aa_error_log_reader_func_t func, void *clientd, int64_t since_ms)
{
    size_t count = 0;
    size_t offset = 0;
    while (offset + AA_ERROR_LOG_ENCODED_ERROR_OFFSET <= length)
    {
        int32_t record_length = aa_get_int32_acquire((const volatile int32_t *)(buffer + offset + AA_ERROR_LOG_LENGTH_OFFSET));
        if (record_length <= AA_ERROR_LOG_ENCODED_ERROR_OFFSET || offset + (size_t)record_length > length)
        {
            break;
        }
        int64_t last = aa_get_int64_volatile(
            (const volatile int64_t *)(buffer + offset + AA_ERROR_LOG_LAST_OBSERVATION_TIMESTAMP_OFFSET));
        if (last >= since_ms)
        {
            count++;
            func(aa_get_int32_volatile((const volatile int32_t *)(buffer + offset + AA_ERROR_LOG_OBSERVATION_COUNT_OFFSET)),
                *(const int64_t *)(buffer + offset + AA_ERROR_LOG_FIRST_OBSERVATION_TIMESTAMP_OFFSET), last,
                (const char *)(buffer + offset + AA_ERROR_LOG_ENCODED_ERROR_OFFSET),
                (size_t)record_length - AA_ERROR_LOG_ENCODED_ERROR_OFFSET, clientd);
        }
        offset += AA_ALIGN((size_t)record_length, AA_ERROR_LOG_RECORD_ALIGNMENT);
    }
    return count;
}
