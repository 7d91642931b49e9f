/*
 * Distinct error log (reference 9.2): records of length i32 @0, observation count i32 @4,
 * last observation epoch-ms i64 @8, first observation epoch-ms i64 @16, then the text; 8-aligned.
 * Repeats of the same (code, text) only bump the count and the last timestamp. Length is written
 * last with release semantics, so readers in other processes never see half a record.
 */
#ifndef AA_ERROR_LOG_H
#define AA_ERROR_LOG_H

#include <stdint.h>
#include <stddef.h>
#include <pthread.h>

#define AA_ERROR_LOG_LENGTH_OFFSET 0
#define AA_ERROR_LOG_OBSERVATION_COUNT_OFFSET 4
#define AA_ERROR_LOG_LAST_OBSERVATION_TIMESTAMP_OFFSET 8
#define AA_ERROR_LOG_FIRST_OBSERVATION_TIMESTAMP_OFFSET 16
#define AA_ERROR_LOG_ENCODED_ERROR_OFFSET 24
#define AA_ERROR_LOG_RECORD_ALIGNMENT 8

typedef struct aa_distinct_observation_stct
{
    int32_t error_code;
    size_t offset;          /* record offset in the buffer */
    size_t description_length;
    char *description;
}
aa_distinct_observation_t;

typedef struct aa_distinct_error_log_stct
{
    uint8_t *buffer;
    size_t capacity;
    size_t next_offset;
    aa_distinct_observation_t *observations;
    size_t observations_count;
    size_t observations_capacity;
    pthread_mutex_t mutex;
}
aa_distinct_error_log_t;

int aa_distinct_error_log_init(aa_distinct_error_log_t *log, uint8_t *buffer, size_t length);
void aa_distinct_error_log_close(aa_distinct_error_log_t *log);

/* Thread-safe. Returns 0, or -1 when the log is full (the observation is then dropped). */
int aa_distinct_error_log_record(aa_distinct_error_log_t *log, int64_t timestamp_ms, int32_t error_code, const char *description);

typedef void (*aa_error_log_reader_func_t)(
    int32_t observation_count, int64_t first_observation_timestamp, int64_t last_observation_timestamp,
    const char *error, size_t error_length, void *clientd);

/* Reads records whose last observation is at or after since_ms; returns how many were read. */
size_t aa_error_log_read(const uint8_t *buffer, size_t length, aa_error_log_reader_func_t func, void *clientd, int64_t since_ms);

#endif
