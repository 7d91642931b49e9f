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
    rb->consumer_head = aa_get_int64_acquire(rb->head) & ~(int64_t)(AA_RB_ALIGNMENT - 1);
    rb->on_invalid = NULL;
    rb->on_invalid_clientd = NULL;
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

/* -length without overflow: the header is shared memory, and another writer of the file may have put
 * INT32_MIN there. */
static inline int32_t aa_rb_negate(int32_t length)
{
    return (int32_t)(0u - (uint32_t)length);
}

void aa_mpsc_rb_commit(aa_mpsc_rb_t *rb, int32_t index)
{
    int32_t record_index = index - AA_RB_RECORD_HEADER_LENGTH;
    int32_t length = aa_get_int32_volatile(AA_RB_LENGTH_AT(rb, record_index));
    aa_put_int32_release(AA_RB_LENGTH_AT(rb, record_index), aa_rb_negate(length));
}

void aa_mpsc_rb_abort(aa_mpsc_rb_t *rb, int32_t index)
{
    int32_t record_index = index - AA_RB_RECORD_HEADER_LENGTH;
    int32_t length = aa_get_int32_volatile(AA_RB_LENGTH_AT(rb, record_index));
    aa_put_int32_volatile(AA_RB_TYPE_AT(rb, record_index), AA_RB_PADDING_MSG_TYPE_ID);
    aa_put_int32_release(AA_RB_LENGTH_AT(rb, record_index), aa_rb_negate(length));
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

void aa_mpsc_rb_on_invalid(aa_mpsc_rb_t *rb, aa_rb_invalid_handler_t handler, void *clientd)
{
    rb->on_invalid = handler;
    rb->on_invalid_clientd = clientd;
}

static void aa_mpsc_rb_report_invalid(
    aa_mpsc_rb_t *rb, int64_t position, int32_t length, int32_t msg_type_id, int64_t skipped_bytes, const char *reason)
{
    if (NULL == rb->on_invalid)
    {
        return;
    }
    size_t index = (size_t)position & (rb->capacity - 1);
    int64_t client_id = AA_RB_NO_CLIENT_ID;
    if (length >= AA_RB_RECORD_HEADER_LENGTH + (int32_t)sizeof(int64_t) &&
        index + AA_RB_RECORD_HEADER_LENGTH + sizeof(int64_t) <= rb->capacity)
    {
        memcpy(&client_id, rb->buffer + index + AA_RB_RECORD_HEADER_LENGTH, sizeof(client_id));
    }
    aa_rb_invalid_record_t record =
    {
        .position = position,
        .length = length,
        .msg_type_id = msg_type_id,
        .client_id = client_id,
        .skipped_bytes = skipped_bytes,
        .reason = reason,
    };
    rb->on_invalid(&record, rb->on_invalid_clientd);
}

static void aa_mpsc_rb_zero(aa_mpsc_rb_t *rb, int64_t from, int64_t to)
{
    const size_t mask = rb->capacity - 1;
    while (from < to)
    {
        size_t index = (size_t)from & mask;
        size_t n = rb->capacity - index;
        if ((int64_t)n > to - from)
        {
            n = (size_t)(to - from);
        }
        memset(rb->buffer + index, 0, n);
        from += (int64_t)n;
    }
}

static void aa_mpsc_rb_advance_consumer(aa_mpsc_rb_t *rb, int64_t head)
{
    rb->consumer_head = head;
    aa_put_int64_release(rb->head, head);
}

static inline bool aa_mpsc_rb_tail_possible(aa_mpsc_rb_t *rb, int64_t head, int64_t tail)
{
    return 0 == (tail & (AA_RB_ALIGNMENT - 1)) && tail >= head && tail - head <= (int64_t)rb->capacity;
}

/* The header at the consumer's position is impossible, so where the next record starts is unknown;
 * what the producers claimed ends at the tail. With a tail that can be true (aligned, at most a
 * capacity ahead), skip to it and zero what is skipped: records claimed in between are lost with the
 * bad one (their clients' commands go unanswered and time out). With no claim at all (the tail is at
 * the bad header), the bytes are left over in free space: zero the header, with a CAS, so that a
 * producer claiming this place at the same time keeps its own. A tail that cannot be true has been
 * written by someone else: zero the records and take the tail back to the consumer's position. */
static int64_t aa_mpsc_rb_recover(aa_mpsc_rb_t *rb, int64_t tail, int32_t length, int32_t msg_type_id)
{
    const int64_t head = rb->consumer_head;
    const size_t index = (size_t)head & (rb->capacity - 1);
    if (aa_mpsc_rb_tail_possible(rb, head, tail))
    {
        if (tail == head)
        {
            volatile int64_t *header = (volatile int64_t *)(rb->buffer + index);
            int64_t seen = aa_get_int64_volatile(header);
            int32_t seen_length;
            memcpy(&seen_length, &seen, sizeof(seen_length));
            if (seen_length > 0 && aa_cas_int64(header, seen, 0))
            {
                aa_mpsc_rb_report_invalid(rb, head, length, msg_type_id, 0,
                    "a record header with no claim behind it (bytes left in free space): its header was cleared");
            }
            return 0;
        }
        aa_mpsc_rb_report_invalid(rb, head, length, msg_type_id, tail - head,
            "an impossible record header (a length below 8 bytes, past the buffer's end or past the producers' tail): "
            "the consumer skipped to the tail, dropping the commands claimed before it");
        aa_mpsc_rb_zero(rb, head, tail);
        aa_mpsc_rb_advance_consumer(rb, tail);
        return tail - head;
    }
    aa_mpsc_rb_report_invalid(rb, head, length, msg_type_id, 0,
        "an impossible producer tail (misaligned, behind the consumer or more than the capacity ahead): the buffer "
        "was cleared and the tail taken back to the consumer's position");
    aa_mpsc_rb_zero(rb, head, head + (int64_t)rb->capacity);
    if (aa_cas_int64(rb->tail, tail, head))
    {
        aa_put_int64_release(rb->head_cache, head);
    }
    return 0;
}

size_t aa_mpsc_rb_read(aa_mpsc_rb_t *rb, aa_rb_handler_t handler, void *clientd, size_t message_count_limit)
{
    const int64_t head = rb->consumer_head;
    if (aa_get_int64_volatile(rb->head) != head)
    {
        aa_put_int64_release(rb->head, head); /* the consumer's own: put back what another writer changed */
    }
    const int64_t tail_at_start = aa_get_int64_acquire(rb->tail);
    if (!aa_mpsc_rb_tail_possible(rb, head, tail_at_start))
    {
        aa_mpsc_rb_recover(rb, tail_at_start, 0, 0);
        return 1;
    }
    const size_t head_index = (size_t)head & (rb->capacity - 1);
    const size_t contiguous_block_length = rb->capacity - head_index;
    size_t messages_read = 0;
    size_t bytes_read = 0;
    bool impossible = false;
    int32_t impossible_length = 0;
    int32_t impossible_type = 0;
    int64_t tail = tail_at_start;
    while (bytes_read < contiguous_block_length && messages_read < message_count_limit)
    {
        const size_t record_index = head_index + bytes_read;
        const int32_t record_length = aa_get_int32_acquire(AA_RB_LENGTH_AT(rb, record_index));
        if (record_length <= 0)
        {
            break;
        }
        const size_t aligned_length = AA_ALIGN((size_t)record_length, AA_RB_ALIGNMENT);
        const int32_t msg_type_id = aa_get_int32_volatile(AA_RB_TYPE_AT(rb, record_index));
        /* a committed record's claim moved the tail before its length was stored (release), so the
         * tail read after the length covers it */
        const int64_t record_end = head + (int64_t)(bytes_read + aligned_length);
        if (record_end > tail)
        {
            tail = aa_get_int64_acquire(rb->tail);
        }
        if (record_length < AA_RB_RECORD_HEADER_LENGTH || aligned_length > contiguous_block_length - bytes_read ||
            record_end > tail)
        {
            impossible = true;
            impossible_length = record_length;
            impossible_type = msg_type_id;
            break;
        }
        bytes_read += aligned_length;
        if (AA_RB_PADDING_MSG_TYPE_ID == msg_type_id)
        {
            continue;
        }
        const size_t length = (size_t)record_length - AA_RB_RECORD_HEADER_LENGTH;
        if (msg_type_id < 1 || length > rb->max_message_length)
        {
            aa_mpsc_rb_report_invalid(rb, head + (int64_t)record_index - (int64_t)head_index, record_length, msg_type_id,
                (int64_t)aligned_length, msg_type_id < 1 ?
                "a record of a type below 1 that is not padding: skipped by its length" :
                "a record longer than a producer may write (an eighth of the capacity): skipped by its length");
            continue;
        }
        ++messages_read;
        handler(msg_type_id, rb->buffer + record_index + AA_RB_RECORD_HEADER_LENGTH, length, clientd);
    }
    if (0 != bytes_read)
    {
        memset(rb->buffer + head_index, 0, bytes_read);
        aa_mpsc_rb_advance_consumer(rb, head + (int64_t)bytes_read);
    }
    if (impossible)
    {
        messages_read += 0 != aa_mpsc_rb_recover(rb, aa_get_int64_acquire(rb->tail), impossible_length, impossible_type) ? 1 : 0;
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
    const size_t consumer_index = (size_t)rb->consumer_head & mask;
    const size_t producer_index = (size_t)aa_get_int64_volatile(rb->tail) & mask;
    if (producer_index == consumer_index)
    {
        return false;
    }
    bool unblocked = false;
    int32_t length = aa_get_int32_volatile(AA_RB_LENGTH_AT(rb, consumer_index));
    if (length < 0)
    {
        /* an impossible length (INT32_MIN, or past the tail) is the read's to skip once it is padding */
        aa_put_int32_volatile(AA_RB_TYPE_AT(rb, consumer_index), AA_RB_PADDING_MSG_TYPE_ID);
        aa_put_int32_release(AA_RB_LENGTH_AT(rb, consumer_index), INT32_MIN == length ? INT32_MAX : -length);
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
