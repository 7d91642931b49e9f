/*
 * Counters (reference 9.2): a values buffer of 128-byte records (value @0, registration_id @8,
 * owner_id @16, reference_id @24) and a metadata buffer of 512-byte records (state @0,
 * type_id @4, free_for_reuse_deadline @8, key (112 bytes) @16, label_length @128, label @132).
 * The driver conductor is the single allocator; any process may read.
 */
#ifndef AA_COUNTERS_H
#define AA_COUNTERS_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

#define AA_COUNTER_VALUE_LENGTH 128
#define AA_COUNTER_METADATA_LENGTH 512
#define AA_COUNTER_REGISTRATION_ID_OFFSET 8
#define AA_COUNTER_OWNER_ID_OFFSET 16
#define AA_COUNTER_REFERENCE_ID_OFFSET 24
#define AA_COUNTER_TYPE_ID_OFFSET 4
#define AA_COUNTER_FREE_FOR_REUSE_DEADLINE_OFFSET 8
#define AA_COUNTER_KEY_OFFSET 16
#define AA_COUNTER_KEY_MAX_LENGTH 112
#define AA_COUNTER_LABEL_LENGTH_OFFSET 128
#define AA_COUNTER_LABEL_OFFSET 132
#define AA_COUNTER_LABEL_MAX_LENGTH 380

#define AA_COUNTER_RECORD_UNUSED 0
#define AA_COUNTER_RECORD_ALLOCATED 1
#define AA_COUNTER_RECORD_RECLAIMED (-1)

#define AA_COUNTER_NOT_FREE_TO_REUSE INT64_MAX
#define AA_NULL_COUNTER_ID (-1)
/* The owner id of a static counter (ADD_STATIC_COUNTER): Aeron's null value, no client owns it. */
#define AA_COUNTER_STATIC_OWNER_ID (-1)

/* Counter type ids (reference 3). */
#define AA_COUNTER_TYPE_SYSTEM 0
#define AA_COUNTER_TYPE_PUBLISHER_LIMIT 1
#define AA_COUNTER_TYPE_SENDER_POSITION 2
#define AA_COUNTER_TYPE_RECEIVER_HWM 3
#define AA_COUNTER_TYPE_SUBSCRIBER_POSITION 4
#define AA_COUNTER_TYPE_RECEIVER_POSITION 5
#define AA_COUNTER_TYPE_SEND_CHANNEL_STATUS 6
#define AA_COUNTER_TYPE_RECEIVE_CHANNEL_STATUS 7
#define AA_COUNTER_TYPE_SENDER_LIMIT 9
#define AA_COUNTER_TYPE_PER_IMAGE 10    /* congestion control's: rcv-cc-cubic-rtt, rcv-cc-cubic-wnd (C's type 10) */
#define AA_COUNTER_TYPE_CLIENT_HEARTBEAT 11
#define AA_COUNTER_TYPE_PUBLISHER_POSITION 12
#define AA_COUNTER_TYPE_SENDER_BPE 13
#define AA_COUNTER_TYPE_LOCAL_SOCKADDR 14
#define AA_COUNTER_TYPE_FC_RECEIVERS 17   /* fc-receivers: receivers tracked by min/tagged flow control */

typedef struct aa_counters_manager_stct
{
    uint8_t *values;
    size_t values_length;
    uint8_t *metadata;
    size_t metadata_length;
    int32_t max_counter_id;
    int32_t id_high_water_mark;
    int64_t free_to_reuse_timeout_ms;
    int32_t *free_list;
    int32_t free_list_length;
}
aa_counters_manager_t;

int aa_counters_manager_init(
    aa_counters_manager_t *m, uint8_t *metadata, size_t metadata_length, uint8_t *values, size_t values_length,
    int64_t free_to_reuse_timeout_ms);
void aa_counters_manager_close(aa_counters_manager_t *m);

/* Allocates a counter (value zeroed) and returns its id, or -1 when none is free (error set).
 * `now_ms` decides whether freed counters are past their reuse deadline. */
int32_t aa_counters_manager_allocate(
    aa_counters_manager_t *m, int64_t now_ms, int32_t type_id, const uint8_t *key, size_t key_length,
    const char *label, size_t label_length);
void aa_counters_manager_free(aa_counters_manager_t *m, int64_t now_ms, int32_t counter_id);

void aa_counter_set_registration_id(aa_counters_manager_t *m, int32_t counter_id, int64_t registration_id);
void aa_counter_set_owner_id(aa_counters_manager_t *m, int32_t counter_id, int64_t owner_id);
void aa_counter_set_reference_id(aa_counters_manager_t *m, int32_t counter_id, int64_t reference_id);

static inline volatile int64_t *aa_counters_manager_addr(aa_counters_manager_t *m, int32_t counter_id)
{
    return (volatile int64_t *)(m->values + (size_t)counter_id * AA_COUNTER_VALUE_LENGTH);
}

/* Append to a counter's label (e.g. the channel after the publication is created). */
void aa_counters_manager_append_to_label(aa_counters_manager_t *m, int32_t counter_id, const char *text, size_t length);

typedef struct aa_counters_reader_stct
{
    uint8_t *values;
    size_t values_length;
    uint8_t *metadata;
    size_t metadata_length;
    int32_t max_counter_id;
}
aa_counters_reader_t;

void aa_counters_reader_init(
    aa_counters_reader_t *r, uint8_t *metadata, size_t metadata_length, uint8_t *values, size_t values_length);

static inline volatile int64_t *aa_counters_reader_addr(aa_counters_reader_t *r, int32_t counter_id)
{
    return (volatile int64_t *)(r->values + (size_t)counter_id * AA_COUNTER_VALUE_LENGTH);
}

int32_t aa_counters_reader_counter_state(aa_counters_reader_t *r, int32_t counter_id);
int32_t aa_counters_reader_counter_type_id(aa_counters_reader_t *r, int32_t counter_id);
int64_t aa_counters_reader_counter_registration_id(aa_counters_reader_t *r, int32_t counter_id);
int64_t aa_counters_reader_counter_owner_id(aa_counters_reader_t *r, int32_t counter_id);
/* Copies the label (NUL-terminated) into buf; returns the label length. */
int32_t aa_counters_reader_counter_label(aa_counters_reader_t *r, int32_t counter_id, char *buf, size_t buf_length);

typedef void (*aa_counters_foreach_func_t)(
    int64_t value, int32_t id, int32_t type_id, const uint8_t *key, size_t key_length, const char *label,
    size_t label_length, void *clientd);

/* Visit every allocated counter, stopping at the first unused record. */
void aa_counters_reader_foreach(aa_counters_reader_t *r, aa_counters_foreach_func_t func, void *clientd);

/* The id of the allocated counter with this type id and registration id, or -1. */
int32_t aa_counters_reader_find_by_type_id_and_registration_id(
    aa_counters_reader_t *r, int32_t type_id, int64_t registration_id);

/* Channel endpoint status values, the status counters of send and receive channel endpoints and resolvers (reference 3: snd-channel / rcv-channel). */
#define AA_CHANNEL_ENDPOINT_STATUS_INITIALIZING 0
#define AA_CHANNEL_ENDPOINT_STATUS_ACTIVE 1
#define AA_CHANNEL_ENDPOINT_STATUS_CLOSING 2
#define AA_CHANNEL_ENDPOINT_STATUS_ERRORED (-1)

#endif
