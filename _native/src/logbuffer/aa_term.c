#include <string.h>

#include "logbuffer/aa_term.h"

typedef struct aa_iov_cursor_stct
{
    const aa_iovec_t *iov;
    size_t iovcnt;
    size_t index;
    size_t offset;
}
aa_iov_cursor_t;

static inline void aa_iov_copy(aa_iov_cursor_t *c, uint8_t *dst, size_t length)
{
    while (length > 0 && c->index < c->iovcnt)
    {
        size_t available = c->iov[c->index].length - c->offset;
        size_t n = length < available ? length : available;
        memcpy(dst, c->iov[c->index].base + c->offset, n);
        dst += n;
        length -= n;
        c->offset += n;
        if (c->offset == c->iov[c->index].length)
        {
            c->index++;
            c->offset = 0;
        }
    }
}

/* Header with a negative length (frame in progress) and the fields from the default header. */
static inline void aa_header_write(
    uint8_t *term_buffer, int32_t offset, int32_t length, int32_t term_id, const uint8_t *default_header, int16_t type)
{
    aa_data_header_t *header = (aa_data_header_t *)(term_buffer + offset);
    const aa_data_header_t *def = (const aa_data_header_t *)default_header;
    aa_frame_length_ordered(term_buffer, offset, -length);
    aa_release_fence();
    header->frame_header.version = def->frame_header.version;
    header->frame_header.flags = def->frame_header.flags;
    header->frame_header.type = type;
    header->term_offset = offset;
    header->session_id = def->session_id;
    header->stream_id = def->stream_id;
    header->term_id = term_id;
}

static inline void aa_write_padding(uint8_t *term_buffer, int32_t offset, int32_t length, int32_t term_id, const uint8_t *default_header)
{
    aa_header_write(term_buffer, offset, length, term_id, default_header, AA_HDR_TYPE_PAD);
    aa_frame_length_ordered(term_buffer, offset, length);
}

static inline int32_t aa_handle_end_of_log(
    uint8_t *term_buffer, int64_t term_offset, int32_t term_length, int32_t term_id, const uint8_t *default_header)
{
    if (term_offset < term_length)
    {
        aa_write_padding(term_buffer, (int32_t)term_offset, (int32_t)(term_length - term_offset), term_id, default_header);
    }
    return AA_TERM_APPENDER_FAILED;
}

static inline void aa_write_frame(
    uint8_t *term_buffer, int32_t offset, int32_t term_id, const uint8_t *default_header, aa_iov_cursor_t *cursor,
    size_t payload_length, uint8_t flags, int64_t reserved_value)
{
    int32_t frame_length = (int32_t)payload_length + AA_DATA_HEADER_LENGTH;
    aa_header_write(term_buffer, offset, frame_length, term_id, default_header, AA_HDR_TYPE_DATA);
    aa_data_header_t *header = (aa_data_header_t *)(term_buffer + offset);
    header->frame_header.flags = flags;
    header->reserved_value = reserved_value;
    aa_iov_copy(cursor, term_buffer + offset + AA_DATA_HEADER_LENGTH, payload_length);
    aa_frame_length_ordered(term_buffer, offset, frame_length);
}

static void aa_write_fragments(
    uint8_t *term_buffer, int32_t term_offset, int32_t term_id, const uint8_t *default_header, const aa_iovec_t *iov,
    size_t iovcnt, size_t length, size_t max_payload_length, int64_t reserved_value)
{
    aa_iov_cursor_t cursor = { iov, iovcnt, 0, 0 };
    size_t remaining = length;
    int32_t offset = term_offset;
    uint8_t flags = AA_DATA_HEADER_BEGIN_FLAG;
    do
    {
        size_t bytes = remaining < max_payload_length ? remaining : max_payload_length;
        if (remaining <= max_payload_length)
        {
            flags |= AA_DATA_HEADER_END_FLAG;
        }
        aa_write_frame(term_buffer, offset, term_id, default_header, &cursor, bytes, flags, reserved_value);
        offset += (int32_t)AA_ALIGN(bytes + AA_DATA_HEADER_LENGTH, AA_LOGBUFFER_FRAME_ALIGNMENT);
        remaining -= bytes;
        flags = 0;
    }
    while (remaining > 0);
}

/* ---- concurrent ---- */

int32_t aa_term_appender_append_unfragmented(
    uint8_t *term_buffer, int32_t term_length, volatile int64_t *raw_tail, const uint8_t *default_header,
    const aa_iovec_t *iov, size_t iovcnt, size_t length, int64_t reserved_value, int32_t *term_id)
{
    int32_t aligned = (int32_t)AA_ALIGN(length + AA_DATA_HEADER_LENGTH, AA_LOGBUFFER_FRAME_ALIGNMENT);
    int64_t tail = aa_get_and_add_int64(raw_tail, aligned);
    int64_t term_offset = tail & 0xFFFFFFFFLL;
    *term_id = aa_term_id(tail);
    int64_t resulting_offset = term_offset + aligned;
    if (resulting_offset > term_length)
    {
        return aa_handle_end_of_log(term_buffer, term_offset, term_length, *term_id, default_header);
    }
    aa_iov_cursor_t cursor = { iov, iovcnt, 0, 0 };
    aa_write_frame(term_buffer, (int32_t)term_offset, *term_id, default_header, &cursor, length,
        AA_DATA_HEADER_UNFRAGMENTED, reserved_value);
    return (int32_t)resulting_offset;
}

int32_t aa_term_appender_append_fragmented(
    uint8_t *term_buffer, int32_t term_length, volatile int64_t *raw_tail, const uint8_t *default_header,
    const aa_iovec_t *iov, size_t iovcnt, size_t length, size_t max_payload_length, int64_t reserved_value,
    int32_t *term_id)
{
    int64_t required = aa_compute_fragmented_length(length, max_payload_length);
    int64_t tail = aa_get_and_add_int64(raw_tail, required);
    int64_t term_offset = tail & 0xFFFFFFFFLL;
    *term_id = aa_term_id(tail);
    int64_t resulting_offset = term_offset + required;
    if (resulting_offset > term_length)
    {
        return aa_handle_end_of_log(term_buffer, term_offset, term_length, *term_id, default_header);
    }
    aa_write_fragments(term_buffer, (int32_t)term_offset, *term_id, default_header, iov, iovcnt, length,
        max_payload_length, reserved_value);
    return (int32_t)resulting_offset;
}

int32_t aa_term_appender_claim(
    uint8_t *term_buffer, int32_t term_length, volatile int64_t *raw_tail, const uint8_t *default_header,
    size_t length, int32_t *term_id, int32_t *frame_offset)
{
    int32_t frame_length = (int32_t)length + AA_DATA_HEADER_LENGTH;
    int32_t aligned = (int32_t)AA_ALIGN(frame_length, AA_LOGBUFFER_FRAME_ALIGNMENT);
    int64_t tail = aa_get_and_add_int64(raw_tail, aligned);
    int64_t term_offset = tail & 0xFFFFFFFFLL;
    *term_id = aa_term_id(tail);
    int64_t resulting_offset = term_offset + aligned;
    if (resulting_offset > term_length)
    {
        return aa_handle_end_of_log(term_buffer, term_offset, term_length, *term_id, default_header);
    }
    aa_header_write(term_buffer, (int32_t)term_offset, frame_length, *term_id, default_header, AA_HDR_TYPE_DATA);
    aa_data_header_t *header = (aa_data_header_t *)(term_buffer + term_offset);
    header->frame_header.flags = AA_DATA_HEADER_UNFRAGMENTED;
    header->reserved_value = 0;
    *frame_offset = (int32_t)term_offset;
    return (int32_t)resulting_offset;
}

/* ---- exclusive ---- */

/* Reserve `required` bytes at term_offset: store the new tail, or at the end of the term pad what
 * is left, store a tail at the term's end, and return AA_TERM_APPENDER_FAILED. */
static inline int32_t aa_exclusive_reserve(
    uint8_t *term_buffer, int32_t term_length, volatile int64_t *raw_tail, int32_t term_id, int32_t term_offset,
    const uint8_t *default_header, int64_t required)
{
    int64_t resulting_offset = (int64_t)term_offset + required;
    if (resulting_offset > term_length)
    {
        aa_put_int64_release(raw_tail, aa_pack_tail(term_id, term_length));
        return aa_handle_end_of_log(term_buffer, term_offset, term_length, term_id, default_header);
    }
    aa_put_int64_release(raw_tail, aa_pack_tail(term_id, (int32_t)resulting_offset));
    return (int32_t)resulting_offset;
}

int32_t aa_exclusive_term_appender_append_unfragmented(
    uint8_t *term_buffer, int32_t term_length, volatile int64_t *raw_tail, int32_t term_id, int32_t term_offset,
    const uint8_t *default_header, const aa_iovec_t *iov, size_t iovcnt, size_t length, int64_t reserved_value)
{
    int32_t aligned = (int32_t)AA_ALIGN(length + AA_DATA_HEADER_LENGTH, AA_LOGBUFFER_FRAME_ALIGNMENT);
    int32_t resulting_offset = aa_exclusive_reserve(
        term_buffer, term_length, raw_tail, term_id, term_offset, default_header, aligned);
    if (resulting_offset < 0)
    {
        return resulting_offset;
    }
    aa_iov_cursor_t cursor = { iov, iovcnt, 0, 0 };
    aa_write_frame(term_buffer, term_offset, term_id, default_header, &cursor, length, AA_DATA_HEADER_UNFRAGMENTED,
        reserved_value);
    return resulting_offset;
}

int32_t aa_exclusive_term_appender_append_fragmented(
    uint8_t *term_buffer, int32_t term_length, volatile int64_t *raw_tail, int32_t term_id, int32_t term_offset,
    const uint8_t *default_header, const aa_iovec_t *iov, size_t iovcnt, size_t length, size_t max_payload_length,
    int64_t reserved_value)
{
    int64_t required = aa_compute_fragmented_length(length, max_payload_length);
    int32_t resulting_offset = aa_exclusive_reserve(
        term_buffer, term_length, raw_tail, term_id, term_offset, default_header, required);
    if (resulting_offset < 0)
    {
        return resulting_offset;
    }
    aa_write_fragments(term_buffer, term_offset, term_id, default_header, iov, iovcnt, length, max_payload_length,
        reserved_value);
    return resulting_offset;
}

/* Reserves one aligned frame of length payload bytes and writes its header, of type, with a negative
 * length: in progress until the caller commits it. */
static inline int32_t aa_exclusive_reserve_frame(
    uint8_t *term_buffer, int32_t term_length, volatile int64_t *raw_tail, int32_t term_id, int32_t term_offset,
    const uint8_t *default_header, size_t length, int16_t type)
{
    int32_t frame_length = (int32_t)length + AA_DATA_HEADER_LENGTH;
    int32_t resulting_offset = aa_exclusive_reserve(
        term_buffer, term_length, raw_tail, term_id, term_offset, default_header, AA_ALIGN(frame_length, AA_LOGBUFFER_FRAME_ALIGNMENT));
    if (resulting_offset >= 0)
    {
        aa_header_write(term_buffer, term_offset, frame_length, term_id, default_header, type);
    }
    return resulting_offset;
}

int32_t aa_exclusive_term_appender_claim(
    uint8_t *term_buffer, int32_t term_length, volatile int64_t *raw_tail, int32_t term_id, int32_t term_offset,
    const uint8_t *default_header, size_t length)
{
    int32_t resulting_offset = aa_exclusive_reserve_frame(
        term_buffer, term_length, raw_tail, term_id, term_offset, default_header, length, AA_HDR_TYPE_DATA);
    if (resulting_offset >= 0)
    {
        aa_data_header_t *header = (aa_data_header_t *)(term_buffer + term_offset);
        header->frame_header.flags = AA_DATA_HEADER_UNFRAGMENTED;
        header->reserved_value = 0;
    }
    return resulting_offset;
}

int32_t aa_exclusive_term_appender_append_padding(
    uint8_t *term_buffer, int32_t term_length, volatile int64_t *raw_tail, int32_t term_id, int32_t term_offset,
    const uint8_t *default_header, size_t length)
{
    int32_t resulting_offset = aa_exclusive_reserve_frame(
        term_buffer, term_length, raw_tail, term_id, term_offset, default_header, length, AA_HDR_TYPE_PAD);
    if (resulting_offset >= 0)
    {
        aa_frame_length_ordered(term_buffer, term_offset, (int32_t)length + AA_DATA_HEADER_LENGTH);
    }
    return resulting_offset;
}

void aa_term_claim_commit(uint8_t *term_buffer, int32_t frame_offset)
{
    int32_t length = aa_get_int32_volatile((volatile int32_t *)(term_buffer + frame_offset));
    aa_frame_length_ordered(term_buffer, frame_offset, -length);
}

void aa_term_claim_abort(uint8_t *term_buffer, int32_t frame_offset)
{
    int32_t length = aa_get_int32_volatile((volatile int32_t *)(term_buffer + frame_offset));
    ((aa_frame_header_t *)(term_buffer + frame_offset))->type = AA_HDR_TYPE_PAD;
    aa_frame_length_ordered(term_buffer, frame_offset, -length);
}

/* ---- reader ---- */

int32_t aa_term_reader_read(
    const uint8_t *term_buffer, int32_t term_offset, int32_t term_length, aa_fragment_handler_t handler, void *clientd,
    int32_t fragments_limit, int32_t *fragments_read)
{
    int32_t offset = term_offset;
    int32_t count = 0;
    while (count < fragments_limit && offset < term_length)
    {
        int32_t frame_length = aa_frame_length_volatile(term_buffer, offset);
        if (frame_length <= 0)
        {
            break;
        }
        int32_t frame_offset = offset;
        offset += AA_ALIGN(frame_length, AA_LOGBUFFER_FRAME_ALIGNMENT);
        if (!aa_frame_is_padding(term_buffer, frame_offset))
        {
            ++count;
            handler(clientd, term_buffer + frame_offset + AA_DATA_HEADER_LENGTH,
                (size_t)(frame_length - AA_DATA_HEADER_LENGTH), (const aa_data_header_t *)(term_buffer + frame_offset));
        }
    }
    *fragments_read = count;
    return offset;
}

/* ---- scanner ---- */

int32_t aa_term_scanner_scan_for_availability(
    const uint8_t *term_buffer, int32_t term_offset, int32_t max_length, int32_t term_length, int32_t *padding)
{
    int32_t available = 0;
    int32_t pad = 0;
    int32_t limit = term_length - term_offset < max_length ? term_length - term_offset : max_length;
    do
    {
        int32_t frame_offset = term_offset + available;
        if (frame_offset >= term_length)
        {
            break;
        }
        int32_t frame_length = aa_frame_length_volatile(term_buffer, frame_offset);
        if (frame_length <= 0)
        {
            break;
        }
        int32_t aligned = AA_ALIGN(frame_length, AA_LOGBUFFER_FRAME_ALIGNMENT);
        if (aa_frame_is_padding(term_buffer, frame_offset))
        {
            pad = aligned - AA_DATA_HEADER_LENGTH;
            aligned = AA_DATA_HEADER_LENGTH;
        }
        available += aligned;
        if (available > limit)
        {
            available -= aligned;
            pad = 0;
            break;
        }
    }
    while (0 == pad && available < limit);
    *padding = pad;
    return available;
}

/* ---- rebuilder ---- */

void aa_term_rebuilder_insert(uint8_t *term_buffer, int32_t term_offset, const uint8_t *packet, size_t length)
{
    uint8_t *dst = term_buffer + term_offset;
    if (length > (size_t)AA_DATA_HEADER_LENGTH)
    {
        memcpy(dst + AA_DATA_HEADER_LENGTH, packet + AA_DATA_HEADER_LENGTH, length - AA_DATA_HEADER_LENGTH);
    }
    const int64_t *src_words = (const int64_t *)packet;
    volatile int64_t *dst_words = (volatile int64_t *)dst;
    int64_t w3, w2, w1, w0;
    memcpy(&w3, packet + 24, 8);
    memcpy(&w2, packet + 16, 8);
    memcpy(&w1, packet + 8, 8);
    memcpy(&w0, packet, 8);
    (void)src_words;
    aa_put_int64_volatile(&dst_words[3], w3);
    aa_put_int64_volatile(&dst_words[2], w2);
    aa_put_int64_volatile(&dst_words[1], w1);
    aa_put_int64_release(&dst_words[0], w0);
}

/* ---- gap scanner ---- */

int32_t aa_term_gap_scanner_scan_for_gap(
    const uint8_t *term_buffer, int32_t term_id, int32_t rebuild_offset, int32_t limit_offset,
    aa_term_gap_handler_t handler, void *clientd)
{
    int32_t offset = rebuild_offset;
    while (offset < limit_offset)
    {
        int32_t frame_length = aa_frame_length_volatile(term_buffer, offset);
        if (frame_length <= 0)
        {
            break;
        }
        offset += AA_ALIGN(frame_length, AA_LOGBUFFER_FRAME_ALIGNMENT);
    }
    int32_t gap_begin_offset = offset;
    if (offset < limit_offset)
    {
        int32_t limit = limit_offset - AA_DATA_HEADER_LENGTH;
        while (offset < limit)
        {
            offset += AA_LOGBUFFER_FRAME_ALIGNMENT;
            if (0 != aa_frame_length_volatile(term_buffer, offset))
            {
                offset -= AA_LOGBUFFER_FRAME_ALIGNMENT;
                break;
            }
        }
        size_t gap_length = (size_t)(offset - gap_begin_offset) + AA_LOGBUFFER_FRAME_ALIGNMENT;
        handler(clientd, term_id, gap_begin_offset, gap_length);
    }
    return gap_begin_offset;
}

/* ---- unblocker ---- */

static bool aa_scan_back_to_confirm_zeroed(const uint8_t *term_buffer, int32_t from, int32_t limit)
{
    for (int32_t i = from - AA_LOGBUFFER_FRAME_ALIGNMENT; i >= limit; i -= AA_LOGBUFFER_FRAME_ALIGNMENT)
    {
        if (0 != aa_frame_length_volatile(term_buffer, i))
        {
            return false;
        }
    }
    return true;
}

static void aa_unblocker_pad(aa_logbuffer_metadata_t *metadata, uint8_t *term_buffer, int32_t offset, int32_t length, int32_t term_id)
{
    aa_write_padding(term_buffer, offset, length, term_id, metadata->default_header);
}

aa_term_unblocker_status_t aa_term_unblocker_unblock(
    aa_logbuffer_metadata_t *metadata, uint8_t *term_buffer, int32_t blocked_offset, int32_t tail_offset, int32_t term_id)
{
    aa_term_unblocker_status_t status = AA_TERM_UNBLOCKER_STATUS_NO_ACTION;
    int32_t term_length = metadata->term_length;
    int32_t frame_length = aa_frame_length_volatile(term_buffer, blocked_offset);
    if (frame_length < 0)
    {
        aa_unblocker_pad(metadata, term_buffer, blocked_offset, -frame_length, term_id);
        status = AA_TERM_UNBLOCKER_STATUS_UNBLOCKED;
    }
    else if (0 == frame_length)
    {
        int32_t current_offset = blocked_offset + AA_LOGBUFFER_FRAME_ALIGNMENT;
        while (current_offset < tail_offset)
        {
            frame_length = aa_frame_length_volatile(term_buffer, current_offset);
            if (0 != frame_length)
            {
                if (aa_scan_back_to_confirm_zeroed(term_buffer, current_offset, blocked_offset))
                {
                    aa_unblocker_pad(metadata, term_buffer, blocked_offset, current_offset - blocked_offset, term_id);
                    status = AA_TERM_UNBLOCKER_STATUS_UNBLOCKED;
                }
                break;
            }
            current_offset += AA_LOGBUFFER_FRAME_ALIGNMENT;
        }
        if (current_offset >= term_length && 0 == aa_frame_length_volatile(term_buffer, blocked_offset))
        {
            aa_unblocker_pad(metadata, term_buffer, blocked_offset, term_length - blocked_offset, term_id);
            int32_t term_count = (int32_t)((uint32_t)term_id - (uint32_t)metadata->initial_term_id);
            aa_logbuffer_rotate_log(metadata, term_count, term_id);
            status = AA_TERM_UNBLOCKER_STATUS_UNBLOCKED_TO_END;
        }
    }
    return status;
}

aa_term_unblocker_status_t aa_term_unblocker_unblock_at(
    const aa_mapped_log_t *log, int64_t blocked_position, int32_t initial_term_id, int32_t position_bits_to_shift)
{
    int32_t term_id = aa_compute_term_id_from_position(blocked_position, position_bits_to_shift, initial_term_id);
    int32_t blocked_offset = aa_compute_term_offset_from_position(blocked_position, position_bits_to_shift);
    int32_t index = aa_index_by_position(blocked_position, position_bits_to_shift);
    int64_t raw_tail = aa_get_int64_acquire(&log->metadata->term_tail_counters[index]);
    int32_t tail_offset = aa_term_id(raw_tail) == term_id ? aa_term_offset(raw_tail, log->term_length) : log->term_length;
    return aa_term_unblocker_unblock(log->metadata, log->term_buffers[index], blocked_offset, tail_offset, term_id);
}
