#include <string.h>

#include "concurrent/aa_mpsc_rb.h"
#include "concurrent/aa_atomic.h"
#include "util/aa_error.h"

#define AA_RB_LENGTH_AT(rb, index) ((volatile int32_t *)((rb)->buffer + (index)))
#define AA_RB_TYPE_AT(rb, index) ((volatile int32_t *)((rb)->buffer + (index) + sizeof(int32_t)))

int aa_mpsc_rb_init(aa_mpsc_rb_t *rb, void *buffer, size_t length)
{
    if (length <= AA_RB_TRAILER_LENGTH)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "ring buffer length %zu is not larger than its %d-byte trailer",
            length, AA_RB_TRAILER_LENGTH);
        return -1;
    }
    size_t capacity = length - AA_RB_TRAILER_LENGTH;
    if (!AA_IS_POWER_OF_TWO(capacity))
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "ring buffer capacity must be a power of two (plus a %d-byte trailer), got %zu", AA_RB_TRAILER_LENGTH, capacity);
        return -1;
    }
    uint8_t *b = buffer;
    rb->buffer = b;
    rb->capacity = capacity;
    rb->max_message_length = capacity / 8;
    rb->tail = (volatile int64_t *)(b + capacity + AA_RB_TAIL_POSITION_OFFSET);
    rb->head_cache = (volatile int64_t *)(b + capacity + AA_RB_HEAD_CACHE_POSITION_OFFSET);
    rb->head = (volatile int64_t *)(b + capacity + AA_RB_HEAD_POSITION_OFFSET);
    rb->correlation_counter = (volatile int64_t *)(b + capacity + AA_RB_CORRELATION_COUNTER_OFFSET);
    rb->consumer_heartbeat = (volatile int64_t *)(b + capacity + AA_RB_CONSUMER_HEARTBEAT_OFFSET);
    return 0;
}

static int32_t aa_mpsc_rb_claim_capacity(aa_mpsc_rb_t *rb, size_t required)
{
    const size_t mask = rb->capacity - 1;
    int64_t head = aa_get_int64_volatile(rb->head_cache);
    int64_t tail;
    size_t tail_index;
    size_t padding;
    do
    {
        tail = aa_get_int64_volatile(rb->tail);
        int64_t available = (int64_t)rb->capacity - (tail - head);
        if ((int64_t)required > available)
        {
            head = aa_get_int64_acquire(rb->head);
            if ((int64_t)required > (int64_t)rb->capacity - (tail - head))
            {
                return -1;
            }
            aa_put_int64_release(rb->head_cache, head);
        }
        padding = 0;
        tail_index = (size_t)tail & mask;
        size_t to_buffer_end = rb->capacity - tail_index;
        if (required > to_buffer_end)
        {
            size_t head_index = (size_t)head & mask;
            if (required > head_index)
            {
                head = aa_get_int64_acquire(rb->head);
                head_index = (size_t)head & mask;
                if (required > head_index)
                {
                    return -1;
                }
                aa_put_int64_release(rb->head_cache, head);
            }
            padding = to_buffer_end;
        }
    }
    while (!aa_cas_int64(rb->tail, tail, tail + (int64_t)required + (int64_t)padding));

    if (0 != padding)
    {
        aa_put_int32_volatile(AA_RB_TYPE_AT(rb, tail_index), AA_RB_PADDING_MSG_TYPE_ID);
        aa_put_int32_release(AA_RB_LENGTH_AT(rb, tail_index), (int32_t)padding);
        tail_index = 0;
    }
    return (int32_t)tail_index;
}

int32_t aa_mpsc_rb_try_claim(aa_mpsc_rb_t *rb, int32_t msg_type_id, size_t length)
{
    if (length > rb->max_message_length || msg_type_id < 1)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "ring buffer message of %zu bytes (type %d) exceeds %zu or has a bad type",
            length, msg_type_id, rb->max_message_length);
        return -1;
    }
    size_t record_length = length + AA_RB_RECORD_HEADER_LENGTH;
    int32_t index = aa_mpsc_rb_claim_capacity(rb, AA_ALIGN(record_length, AA_RB_ALIGNMENT));
    if (index < 0)
    {
        return -1;
    }
    aa_put_int32_release(AA_RB_LENGTH_AT(rb, index), -(int32_t)record_length);
    aa_put_int32_volatile(AA_RB_TYPE_AT(rb, index), msg_type_id);
    return index + AA_RB_RECORD_HEADER_LENGTH;
}

void aa_mpsc_rb_commit(aa_mpsc_rb_t *rb, int32_t index)
{
    int32_t record_index = index - AA_RB_RECORD_HEADER_LENGTH;
    int32_t length = aa_get_int32_volatile(AA_RB_LENGTH_AT(rb, record_index));
    aa_put_int32_release(AA_RB_LENGTH_AT(rb, record_index), -length);
}

void aa_mpsc_rb_abort(aa_mpsc_rb_t *rb, int32_t index)
{
    int32_t record_index = index - AA_RB_RECORD_HEADER_LENGTH;
    int32_t length = aa_get_int32_volatile(AA_RB_LENGTH_AT(rb, record_index));
    aa_put_int32_volatile(AA_RB_TYPE_AT(rb, record_index), AA_RB_PADDING_MSG_TYPE_ID);
    aa_put_int32_release(AA_RB_LENGTH_AT(rb, record_index), -length);
}

int aa_mpsc_rb_write(aa_mpsc_rb_t *rb, int32_t msg_type_id, const void *msg, size_t length)
{
    int32_t index = aa_mpsc_rb_try_claim(rb, msg_type_id, length);
    if (index < 0)
    {
        return -1;
    }
    memcpy(rb->buffer + index, msg, length);
    aa_mpsc_rb_commit(rb, index);
    return 0;
}

size_t aa_mpsc_rb_read(aa_mpsc_rb_t *rb, aa_rb_handler_t handler, void *clientd, size_t message_count_limit)
{
    const int64_t head = aa_get_int64_volatile(rb->head);
    const size_t head_index = (size_t)head & (rb->capacity - 1);
    const size_t contiguous_block_length = rb->capacity - head_index;
    size_t messages_read = 0;
    size_t bytes_read = 0;
    while (bytes_read < contiguous_block_length && messages_read < message_count_limit)
    {
        const size_t record_index = head_index + bytes_read;
        const int32_t record_length = aa_get_int32_acquire(AA_RB_LENGTH_AT(rb, record_index));
        if (record_length <= 0)
        {
            break;
        }
        bytes_read += AA_ALIGN((size_t)record_length, AA_RB_ALIGNMENT);
        const int32_t msg_type_id = aa_get_int32_volatile(AA_RB_TYPE_AT(rb, record_index));
        if (AA_RB_PADDING_MSG_TYPE_ID == msg_type_id)
        {
            continue;
        }
        ++messages_read;
        handler(msg_type_id, rb->buffer + record_index + AA_RB_RECORD_HEADER_LENGTH,
            (size_t)record_length - AA_RB_RECORD_HEADER_LENGTH, clientd);
    }
    if (0 != bytes_read)
    {
        memset(rb->buffer + head_index, 0, bytes_read);
        aa_put_int64_release(rb->head, head + (int64_t)bytes_read);
    }
    return messages_read;
}

int64_t aa_mpsc_rb_next_correlation_id(aa_mpsc_rb_t *rb)
{
    return aa_get_and_add_int64(rb->correlation_counter, 1);
}

void aa_mpsc_rb_consumer_heartbeat_time(aa_mpsc_rb_t *rb, int64_t now_ms)
{
    aa_put_int64_release(rb->consumer_heartbeat, now_ms);
}

int64_t aa_mpsc_rb_consumer_heartbeat_time_value(aa_mpsc_rb_t *rb)
{
    return aa_get_int64_acquire(rb->consumer_heartbeat);
}

int64_t aa_mpsc_rb_producer_position(aa_mpsc_rb_t *rb)
{
    return aa_get_int64_acquire(rb->tail);
}

int64_t aa_mpsc_rb_consumer_position(aa_mpsc_rb_t *rb)
{
    return aa_get_int64_acquire(rb->head);
}

size_t aa_mpsc_rb_size(aa_mpsc_rb_t *rb)
{
    int64_t head_before;
    int64_t tail;
    int64_t head_after = aa_get_int64_acquire(rb->head);
    do
    {
        head_before = head_after;
        tail = aa_get_int64_acquire(rb->tail);
        head_after = aa_get_int64_acquire(rb->head);
    }
    while (head_after != head_before);
    return (size_t)(tail - head_after);
}

static bool aa_mpsc_rb_scan_back_to_confirm_still_zeroed(aa_mpsc_rb_t *rb, size_t from, size_t limit)
{
    for (size_t i = from - AA_RB_ALIGNMENT; i >= limit && i < rb->capacity; i -= AA_RB_ALIGNMENT)
    {
        if (0 != aa_get_int32_volatile(AA_RB_LENGTH_AT(rb, i)))
        {
            return false;
        }
        if (i == limit)
        {
            break;
        }
    }
    return true;
}

bool aa_mpsc_rb_unblock(aa_mpsc_rb_t *rb)
{
    const size_t mask = rb->capacity - 1;
    const size_t consumer_index = (size_t)aa_get_int64_volatile(rb->head) & mask;
    const size_t producer_index = (size_t)aa_get_int64_volatile(rb->tail) & mask;
    if (producer_index == consumer_index)
    {
        return false;
    }
    bool unblocked = false;
    int32_t length = aa_get_int32_volatile(AA_RB_LENGTH_AT(rb, consumer_index));
    if (length < 0)
    {
        aa_put_int32_volatile(AA_RB_TYPE_AT(rb, consumer_index), AA_RB_PADDING_MSG_TYPE_ID);
        aa_put_int32_release(AA_RB_LENGTH_AT(rb, consumer_index), -length);
        unblocked = true;
    }
    else if (0 == length)
    {
        const size_t limit = producer_index > consumer_index ? producer_index : rb->capacity;
        for (size_t i = consumer_index + AA_RB_ALIGNMENT; i < limit; i += AA_RB_ALIGNMENT)
        {
            if (0 != aa_get_int32_volatile(AA_RB_LENGTH_AT(rb, i)))
            {
                if (aa_mpsc_rb_scan_back_to_confirm_still_zeroed(rb, i, consumer_index))
                {
                    aa_put_int32_volatile(AA_RB_TYPE_AT(rb, consumer_index), AA_RB_PADDING_MSG_TYPE_ID);
                    aa_put_int32_release(AA_RB_LENGTH_AT(rb, consumer_index), (int32_t)(i - consumer_index));
                    unblocked = true;
                }
                break;
            }
        }
    }
    return unblocked;
}
