/*
 * Logs in memory for the native tests, as the driver makes them (docs/architecture.md, How a message flows (IPC)):
 *
 * - test_log_new: a zeroed, page-aligned log of params' term length and page size, mapped into log
 *   and its metadata filled from params; the caller frees the memory it returns.
 * - test_image_t: a client image (client/aa_client.h) over such a log, with its subscriber position,
 *   for the fragment polls; test_image_append writes a message to its first term as a publisher does.
 */
#ifndef AA_TEST_LOG_H
#define AA_TEST_LOG_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aa_test.h"
#include "client/aa_client.h"
#include "logbuffer/aa_logbuffer.h"
#include "logbuffer/aa_term.h"

static inline uint8_t *test_log_new(aa_mapped_log_t *log, const aa_logbuffer_init_params_t *params)
{
    size_t length = aa_logbuffer_compute_log_length(params->term_length, params->page_size);
    uint8_t *memory = aligned_alloc((size_t)params->page_size, length);
    AA_CHECK(NULL != memory);
    memset(memory, 0, length);
    aa_mapped_log_init(log, memory, length, params->term_length);
    aa_logbuffer_metadata_init(log, params);
    return memory;
}

#define TEST_IMAGE_TERM_LENGTH (64 * 1024)
#define TEST_IMAGE_INITIAL_TERM_ID 5
#define TEST_IMAGE_STREAM_ID 22
#define TEST_IMAGE_MAX_PAYLOAD 1376

typedef struct test_image_stct
{
    aa_mapped_log_t log;
    uint8_t *memory;
    aa_image_t image;
    int64_t subscriber_position;
}
test_image_t;

static inline void test_image_init(test_image_t *t, int32_t session_id)
{
    memset(t, 0, sizeof(*t));
    aa_logbuffer_init_params_t params =
    {
        .correlation_id = 7, .initial_term_id = TEST_IMAGE_INITIAL_TERM_ID, .active_term_id = TEST_IMAGE_INITIAL_TERM_ID,
        .term_offset = 0, .term_length = TEST_IMAGE_TERM_LENGTH, .mtu_length = TEST_IMAGE_MAX_PAYLOAD + AA_DATA_HEADER_LENGTH,
        .page_size = 4096, .session_id = session_id, .stream_id = TEST_IMAGE_STREAM_ID,
        .publication_window_length = TEST_IMAGE_TERM_LENGTH / 2, .max_resend = 16,
    };
    t->memory = test_log_new(&t->log, &params);
    t->image.log = t->log;
    t->image.session_id = session_id;
    t->image.stream_id = TEST_IMAGE_STREAM_ID;
    t->image.term_length = TEST_IMAGE_TERM_LENGTH;
    t->image.position_bits_to_shift = aa_position_bits_to_shift(TEST_IMAGE_TERM_LENGTH);
    t->image.initial_term_id = TEST_IMAGE_INITIAL_TERM_ID;
    t->image.subscriber_position = &t->subscriber_position;
}

static inline void test_image_free(test_image_t *t)
{
    free(t->memory);
}

/* Appends a message to term 0, fragmented above the maximum payload: the resulting tail offset, or a
 * value <= 0 when it tripped the term end (padding written). */
static inline int32_t test_image_append(test_image_t *t, const uint8_t *data, size_t length, int64_t reserved_value)
{
    aa_iovec_t iov = { .base = data, .length = length };
    int32_t term_id;
    volatile int64_t *tail = &t->log.metadata->term_tail_counters[0];
    return length > TEST_IMAGE_MAX_PAYLOAD ?
        aa_term_appender_append_fragmented(t->log.term_buffers[0], TEST_IMAGE_TERM_LENGTH, tail,
            t->log.metadata->default_header, &iov, 1, length, TEST_IMAGE_MAX_PAYLOAD, reserved_value, &term_id) :
        aa_term_appender_append_unfragmented(t->log.term_buffers[0], TEST_IMAGE_TERM_LENGTH, tail,
            t->log.metadata->default_header, &iov, 1, length, reserved_value, &term_id);
}

#endif
