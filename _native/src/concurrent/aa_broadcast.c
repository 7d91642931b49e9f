#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "concurrent/aa_broadcast.h"
#include "concurrent/aa_atomic.h"
#include "util/aa_error.h"

#define AA_BC_LENGTH_AT(buffer, offset) ((volatile int32_t *)((buffer) + (offset)))
#define AA_BC_TYPE_AT(buffer, offset) ((volatile int32_t *)((buffer) + (offset) + sizeof(int32_t)))

/* Checks a broadcast buffer's length and points at the counters of its trailer, after capacity bytes
 * of records. */
static int aa_broadcast_map(
    void *buffer, size_t length, size_t *capacity, volatile int64_t **tail_intent, volatile int64_t **tail,
    volatile int64_t **latest)
{
    if (NULL == buffer || length <= AA_BROADCAST_BUFFER_TRAILER_LENGTH ||
        !AA_IS_POWER_OF_TWO(length - AA_BROADCAST_BUFFER_TRAILER_LENGTH))
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "broadcast buffer capacity must be a power of two (plus a %d-byte trailer), got %zu",
            AA_BROADCAST_BUFFER_TRAILER_LENGTH, length - AA_BROADCAST_BUFFER_TRAILER_LENGTH);
        return -1;
    }
    *capacity = length - AA_BROADCAST_BUFFER_TRAILER_LENGTH;
    uint8_t *trailer = (uint8_t *)buffer + *capacity;
    *tail_intent = (volatile int64_t *)(trailer + AA_BROADCAST_TAIL_INTENT_COUNTER_OFFSET);
    *tail = (volatile int64_t *)(trailer + AA_BROADCAST_TAIL_COUNTER_OFFSET);
    *latest = (volatile int64_t *)(trailer + AA_BROADCAST_LATEST_COUNTER_OFFSET);
    return 0;
}

int aa_broadcast_transmitter_init(aa_broadcast_transmitter_t *t, void *buffer, size_t length)
{
    if (aa_broadcast_map(buffer, length, &t->capacity, &t->tail_intent, &t->tail, &t->latest) < 0)
    {
        return -1;
    }
    t->buffer = buffer;
    t->max_message_length = t->capacity / 8;
    return 0;
}

int aa_broadcast_transmitter_transmit(aa_broadcast_transmitter_t *t, int32_t msg_type_id, const void *msg, size_t length)
{
    if (length > t->max_message_length || msg_type_id < 1)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "broadcast message of %zu bytes (type %d) exceeds %zu or has a bad type",
            length, msg_type_id, t->max_message_length);
        return -1;
    }
    int64_t current_tail = aa_get_int64_volatile(t->tail);
    size_t record_offset = (size_t)current_tail & (t->capacity - 1);
    size_t record_length = length + AA_RB_RECORD_HEADER_LENGTH;
    size_t aligned_record_length = AA_ALIGN(record_length, AA_RB_ALIGNMENT);
    int64_t new_tail = current_tail + (int64_t)aligned_record_length;
    size_t to_end_of_buffer = t->capacity - record_offset;

    if (to_end_of_buffer < aligned_record_length)
    {
        aa_put_int64_release(t->tail_intent, new_tail + (int64_t)to_end_of_buffer);
        aa_release_fence();
        aa_put_int32_volatile(AA_BC_TYPE_AT(t->buffer, record_offset), AA_RB_PADDING_MSG_TYPE_ID);
        aa_put_int32_volatile(AA_BC_LENGTH_AT(t->buffer, record_offset), (int32_t)to_end_of_buffer);
        current_tail += (int64_t)to_end_of_buffer;
        record_offset = 0;
    }
    else
    {
        aa_put_int64_release(t->tail_intent, new_tail);
        aa_release_fence();
    }
    aa_put_int32_volatile(AA_BC_LENGTH_AT(t->buffer, record_offset), (int32_t)record_length);
    aa_put_int32_volatile(AA_BC_TYPE_AT(t->buffer, record_offset), msg_type_id);
    memcpy(t->buffer + record_offset + AA_RB_RECORD_HEADER_LENGTH, msg, length);
    aa_put_int64_release(t->latest, current_tail);
    aa_put_int64_release(t->tail, current_tail + (int64_t)aligned_record_length);
    return 0;
}

int aa_broadcast_receiver_init(aa_broadcast_receiver_t *r, void *buffer, size_t length)
{
    if (aa_broadcast_map(buffer, length, &r->capacity, &r->tail_intent, &r->tail, &r->latest) < 0)
    {
        return -1;
    }
    r->buffer = buffer;
    r->mask = r->capacity - 1;
    r->cursor = aa_get_int64_acquire(r->tail);
    r->next_record = r->cursor;
    r->record_offset = (size_t)r->cursor & r->mask;
    r->lapped_count = 0;
    r->scratch_capacity = r->capacity / 8;
    r->scratch = malloc(r->scratch_capacity);
    if (NULL == r->scratch)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory for the broadcast receiver scratch buffer");
        return -1;
    }
    return 0;
}

void aa_broadcast_receiver_close(aa_broadcast_receiver_t *r)
{
    free(r->scratch);
    r->scratch = NULL;
}

static inline bool aa_broadcast_receiver_validate_at(aa_broadcast_receiver_t *r, int64_t cursor)
{
    return (cursor + (int64_t)r->capacity) > aa_get_int64_acquire(r->tail_intent);
}

/* What the receiver found where a record should be and no transmitter of ours writes one (docs/
 * security.md, "The CnC file"): NULL when the record at offset (of a cursor not yet lapped) can be
 * true. A record never crosses the buffer's end (the transmitter pads to it), a padding record fills
 * to the end, and none is longer than a transmitter may send. */
static const char *aa_broadcast_record_fault(aa_broadcast_receiver_t *r, size_t offset, int32_t length, int32_t type)
{
    if (length < AA_RB_RECORD_HEADER_LENGTH)
    {
        return "a record shorter than its 8-byte header";
    }
    if (AA_ALIGN((size_t)length, AA_RB_ALIGNMENT) > r->capacity - offset)
    {
        return "a record that crosses the buffer's end";
    }
    if (AA_RB_PADDING_MSG_TYPE_ID == type)
    {
        return (size_t)length != r->capacity - offset ? "a padding record that does not fill to the buffer's end" : NULL;
    }
    if (type < 1)
    {
        return "a record of a type below 1 that is not padding";
    }
    if ((size_t)length - AA_RB_RECORD_HEADER_LENGTH > r->scratch_capacity)
    {
        return "a record longer than a transmitter may send (an eighth of the capacity)";
    }
    return NULL;
}

static int aa_broadcast_receiver_corrupt(aa_broadcast_receiver_t *r, const char *fault, int32_t length, int32_t type)
{
    AA_SET_ERR(AA_ERROR_CODE_DRIVER_CORRUPT,
        "the to-clients buffer of the media driver's CnC file holds %s (length %d, type %d, at position %" PRId64 "): "
        "the CnC file was written by something other than the driver", fault, length, type, r->cursor);
    return -1;
}

/* The next record: 1 when r->record_offset and r->cursor point at it, 0 when there is none, -1 when
 * what is there cannot be a record (error set). */
static int aa_broadcast_receiver_receive_next(aa_broadcast_receiver_t *r)
{
    int64_t tail = aa_get_int64_acquire(r->tail);
    int64_t cursor = r->next_record;
    if (tail <= cursor)
    {
        return 0;
    }
    size_t record_offset = (size_t)cursor & r->mask;
    if (!aa_broadcast_receiver_validate_at(r, cursor))
    {
        r->lapped_count++;
        cursor = aa_get_int64_acquire(r->latest);
        record_offset = (size_t)cursor & r->mask;
    }
    r->cursor = cursor;
    int32_t length = aa_get_int32_volatile(AA_BC_LENGTH_AT(r->buffer, record_offset));
    int32_t type = aa_get_int32_volatile(AA_BC_TYPE_AT(r->buffer, record_offset));
    const char *fault = aa_broadcast_record_fault(r, record_offset, length, type);
    if (NULL != fault)
    {
        aa_acquire_fence();
        if (!aa_broadcast_receiver_validate_at(r, cursor))
        {
            r->lapped_count++;    /* overwritten while read: start again from the latest */
            r->next_record = aa_get_int64_acquire(r->latest);
            return 0;
        }
        return aa_broadcast_receiver_corrupt(r, fault, length, type);
    }
    r->next_record = cursor + (int64_t)AA_ALIGN((size_t)length, AA_RB_ALIGNMENT);
    if (AA_RB_PADDING_MSG_TYPE_ID == type)
    {
        record_offset = 0;
        r->cursor = r->next_record;
        length = aa_get_int32_volatile(AA_BC_LENGTH_AT(r->buffer, 0));
        type = aa_get_int32_volatile(AA_BC_TYPE_AT(r->buffer, 0));
        fault = AA_RB_PADDING_MSG_TYPE_ID == type ? "a padding record at the buffer's start" :
            aa_broadcast_record_fault(r, 0, length, type);
        if (NULL != fault)
        {
            aa_acquire_fence();
            if (!aa_broadcast_receiver_validate_at(r, r->cursor))
            {
                r->lapped_count++;
                r->next_record = aa_get_int64_acquire(r->latest);
                return 0;
            }
            return aa_broadcast_receiver_corrupt(r, fault, length, type);
        }
        r->next_record += (int64_t)AA_ALIGN((size_t)length, AA_RB_ALIGNMENT);
    }
    r->record_offset = record_offset;
    return 1;
}

int aa_broadcast_receiver_receive(aa_broadcast_receiver_t *r, aa_rb_handler_t handler, void *clientd)
{
    int received = 0;
    int rc;
    while (received < 16 && (rc = aa_broadcast_receiver_receive_next(r)) != 0)
    {
        if (rc < 0)
        {
            return -1;
        }
        int32_t record_length = aa_get_int32_volatile(AA_BC_LENGTH_AT(r->buffer, r->record_offset));
        int32_t msg_type_id = aa_get_int32_volatile(AA_BC_TYPE_AT(r->buffer, r->record_offset));
        if (NULL != aa_broadcast_record_fault(r, r->record_offset, record_length, msg_type_id) ||
            AA_RB_PADDING_MSG_TYPE_ID == msg_type_id)
        {
            /* changed since receive_next looked: lapped (checked below), or written by someone else */
            aa_acquire_fence();
            if (!aa_broadcast_receiver_validate_at(r, r->cursor))
            {
                r->lapped_count++;
                r->next_record = aa_get_int64_acquire(r->latest);
                continue;
            }
            return aa_broadcast_receiver_corrupt(r, "a record that changed while it was read", record_length, msg_type_id);
        }
        size_t length = (size_t)record_length - AA_RB_RECORD_HEADER_LENGTH;
        memcpy(r->scratch, r->buffer + r->record_offset + AA_RB_RECORD_HEADER_LENGTH, length);
        aa_acquire_fence();
        if (!aa_broadcast_receiver_validate_at(r, r->cursor))
        {
            r->lapped_count++;
            r->next_record = aa_get_int64_acquire(r->latest);
            continue;
        }
        handler(msg_type_id, r->scratch, length, clientd);
        received++;
    }
    return received;
}
