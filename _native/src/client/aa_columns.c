/*
 * Columnar polling: whole messages of one image written straight into column buffers (the data
 * bytes back to back with Arrow's int32 offsets, the messages' positions, each message's end as
 * Message.position (docs/spark.md, Reading), and reserved values), so a caller can wrap them as
 * Arrow arrays without an object per message. The Spark source (aeron_async/spark/) reads replays
 * through it.
 *
 * A message's fragments are copied one after the other into the data column, so a fragmented
 * message is reassembled in place, with no assembly buffer. The subscriber position is stored
 * only at message boundaries: a poll that stops inside a message (its bytes would not fit) drops
 * the part it copied and leaves the position at the message's first fragment, so the next poll
 * reads it again whole. Messages that start before from_position are skipped without a copy; the
 * poll is done once it stands at or past to_position outside a message (a term's end included).
 */
#include <inttypes.h>
#include <string.h>

#include "client/aa_client.h"
#include "aeron_async.h"
#include "util/aa_error.h"

static inline void aa_columns_store_position(aa_image_t *image, int64_t position)
{
    /* a closed image's counter may already belong to someone else: leave it */
    if (!aa_get_int32_acquire(&image->is_closed))
    {
        aa_put_int64_release(image->subscriber_position, position);
    }
}

int aa_columns_reset(aa_columns_t *columns)
{
    if (NULL == columns->data || NULL == columns->offsets || NULL == columns->positions ||
        NULL == columns->reserved_values || columns->row_capacity <= 0 || columns->data_capacity < 0 ||
        columns->data_capacity > INT32_MAX)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT,
            "columns need data, offsets (row_capacity + 1 entries), positions and reserved_values buffers, "
            "row_capacity > 0 and 0 <= data_capacity <= %d (Arrow's 32-bit offsets); got row_capacity %" PRId32
            ", data_capacity %" PRId64, INT32_MAX, columns->row_capacity, columns->data_capacity);
        return -1;
    }
    columns->rows = 0;
    columns->data_length = 0;
    columns->offsets[0] = 0;
    return 0;
}

int32_t aa_columns_poll(aa_image_t *image, aa_columns_t *columns)
{
    columns->required = 0;
    columns->full = columns->rows >= columns->row_capacity ? 1 : 0;
    if (columns->full || aa_get_int32_acquire(&image->is_closed))
    {
        return 0;
    }
    int64_t initial_position = aa_get_int64_volatile(image->subscriber_position);
    int32_t initial_offset = (int32_t)(initial_position & (image->term_length - 1));
    int64_t term_begin = initial_position - initial_offset;
    const uint8_t *term_buffer =
        image->log.term_buffers[aa_index_by_position(initial_position, image->position_bits_to_shift)];
    const int32_t rows_before = columns->rows;
    int32_t rows = columns->rows;
    int64_t data_length = columns->data_length;
    int64_t committed = initial_position; /* the last message boundary reached */
    int64_t message_start = 0;
    int64_t message_data_start = 0;
    int64_t reserved_value = 0;
    bool in_message = false;
    bool skipping = false;
    int32_t offset = initial_offset;
    int32_t result = 0;

    while (offset < image->term_length)
    {
        if (!in_message)
        {
            if (term_begin + offset >= columns->to_position)
            {
                columns->done = 1;
                break;
            }
            if (rows >= columns->row_capacity)
            {
                columns->full = 1;
                break;
            }
        }
        int32_t frame_length = aa_frame_length_volatile(term_buffer, offset);
        if (frame_length <= 0)
        {
            break;
        }
        int32_t frame_offset = offset;
        int32_t next_offset = offset + (int32_t)AA_ALIGN(frame_length, AA_LOGBUFFER_FRAME_ALIGNMENT);
        if (aa_frame_is_padding(term_buffer, frame_offset))
        {
            offset = next_offset;
            if (!in_message)
            {
                committed = term_begin + offset;
            }
            continue;
        }
        const aa_data_header_t *header = (const aa_data_header_t *)(term_buffer + frame_offset);
        uint8_t flags = header->frame_header.flags;
        int64_t payload_length = frame_length - AA_DATA_HEADER_LENGTH;
        if (flags & AA_DATA_HEADER_BEGIN_FLAG)
        {
            if (in_message)
            {
                data_length = message_data_start; /* an unfinished message (a torn stream): dropped */
            }
            in_message = true;
            message_start = term_begin + frame_offset;
            message_data_start = data_length;
            reserved_value = header->reserved_value;
            skipping = message_start < columns->from_position;
        }
        else if (!in_message)
        {
            /* the rest of a message whose first fragment came before this read began: not ours */
            offset = next_offset;
            committed = term_begin + offset;
            continue;
        }
        if (!skipping)
        {
            if (data_length + payload_length > columns->data_capacity)
            {
                if (0 == rows)
                {
                    /* not even alone: the caller gives a larger data buffer and polls again */
                    columns->required = data_length + payload_length;
                    result = -2;
                }
                else
                {
                    columns->full = 1;
                }
                break;
            }
            memcpy(columns->data + data_length, term_buffer + frame_offset + AA_DATA_HEADER_LENGTH,
                (size_t)payload_length);
            data_length += payload_length;
        }
        offset = next_offset;
        if (flags & AA_DATA_HEADER_END_FLAG)
        {
            in_message = false;
            committed = term_begin + offset;
            if (!skipping)
            {
                columns->positions[rows] = committed; /* the message's end, as a polled message's position */
                columns->reserved_values[rows] = reserved_value;
                columns->offsets[rows + 1] = (int32_t)data_length;
                rows++;
            }
        }
    }

    if (in_message)
    {
        data_length = message_data_start; /* read again whole by the next poll */
    }
    else if (offset >= image->term_length)
    {
        /* the term's end is a message boundary too: full and done hold there as between messages,
         * so a batch that fills up exactly at a term's end goes in this poll, not after the next */
        columns->full = rows >= columns->row_capacity ? 1 : 0;
        columns->done = term_begin + offset >= columns->to_position ? 1 : 0;
    }
    columns->rows = rows;
    columns->data_length = data_length;
    columns->position = committed;
    if (committed > initial_position)
    {
        aa_columns_store_position(image, committed);
    }
    return result < 0 ? result : rows - rows_before;
}
