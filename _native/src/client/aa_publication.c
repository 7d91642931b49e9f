/* The publication message path: offer (concurrent and exclusive), vectored offer, try_claim. */
#include <inttypes.h>
#include <string.h>

#include "aeron_async.h"
#include "util/aa_error.h"

/* Not the message path: the offer could not go ahead. A deeply idle driver is rung so it moves the
 * publisher limit (or links a subscriber) without delay. */
static int64_t aa_publication_back_pressure_status(aa_publication_t *pub, int64_t position, size_t length)
{
    aa_doorbell_ring(aa_cnc_doorbell(pub->client->cnc));
    if (position + (int64_t)AA_ALIGN(length + AA_DATA_HEADER_LENGTH, AA_LOGBUFFER_FRAME_ALIGNMENT) >= pub->max_possible_position)
    {
        return AA_PUBLICATION_MAX_POSITION_EXCEEDED;
    }
    if (aa_logbuffer_is_connected(pub->log.metadata))
    {
        return AA_PUBLICATION_BACK_PRESSURED;
    }
    return AA_PUBLICATION_NOT_CONNECTED;
}

static int64_t aa_publication_message_too_long(aa_publication_t *pub, size_t length)
{
    AA_SET_ERR(AA_ERROR_CODE_MESSAGE_TOO_LONG,
        "message of %zu bytes exceeds the max message length of %" PRId32 " bytes for this publication "
        "(term-length %" PRId32 " / 8, at most 16 MiB); split the message or use a longer term-length",
        length, pub->max_message_length, pub->term_length);
    return AA_PUBLICATION_ERROR;
}

static int64_t aa_concurrent_publication_offerv(
    aa_publication_t *pub, const aa_iovec_t *iov, size_t iovcnt, size_t length, int64_t reserved_value)
{
    int64_t limit = aa_get_int64_acquire(pub->position_limit);
    int32_t term_count = aa_logbuffer_active_term_count(pub->log.metadata);
    int32_t index = aa_index_by_term_count(term_count);
    int64_t raw_tail = aa_get_int64_volatile(&pub->log.metadata->term_tail_counters[index]);
    int32_t term_id = aa_term_id(raw_tail);
    int32_t term_offset = aa_term_offset(raw_tail, pub->term_length);

    if (term_count != (int32_t)((uint32_t)term_id - (uint32_t)pub->initial_term_id))
    {
        return AA_PUBLICATION_ADMIN_ACTION;
    }
    int64_t term_begin_position = aa_compute_term_begin_position(term_id, pub->position_bits_to_shift, pub->initial_term_id);
    int64_t position = term_begin_position + term_offset;
    if (position >= limit)
    {
        return aa_publication_back_pressure_status(pub, position, length);
    }

    uint8_t *term_buffer = pub->log.term_buffers[index];
    const uint8_t *header = pub->log.metadata->default_header;
    int32_t appended_term_id = term_id;
    int32_t result = length <= (size_t)pub->max_payload_length ?
        aa_term_appender_append_unfragmented(
            term_buffer, pub->term_length, &pub->log.metadata->term_tail_counters[index], header, iov, iovcnt, length,
            reserved_value, &appended_term_id) :
        aa_term_appender_append_fragmented(
            term_buffer, pub->term_length, &pub->log.metadata->term_tail_counters[index], header, iov, iovcnt, length,
            (size_t)pub->max_payload_length, reserved_value, &appended_term_id);

    int64_t appended_begin = aa_compute_term_begin_position(appended_term_id, pub->position_bits_to_shift, pub->initial_term_id);
    if (result > 0)
    {
        aa_doorbell_ring_unfenced(aa_logbuffer_doorbell(pub->log.metadata));
        return appended_begin + result;
    }
    if (appended_begin + pub->term_length >= pub->max_possible_position)
    {
        return AA_PUBLICATION_MAX_POSITION_EXCEEDED;
    }
    aa_logbuffer_rotate_log(pub->log.metadata, term_count, appended_term_id);
    return AA_PUBLICATION_ADMIN_ACTION;
}

static int64_t aa_exclusive_publication_rotate(aa_publication_t *pub)
{
    if (pub->term_begin_position + pub->term_length >= pub->max_possible_position)
    {
        return AA_PUBLICATION_MAX_POSITION_EXCEEDED;
    }
    int32_t term_count = (int32_t)((uint32_t)pub->term_id - (uint32_t)pub->initial_term_id);
    aa_logbuffer_rotate_log(pub->log.metadata, term_count, pub->term_id);
    pub->term_id = (int32_t)((uint32_t)pub->term_id + 1);
    pub->term_offset = 0;
    pub->active_partition_index = aa_index_by_term_count((int64_t)term_count + 1);
    pub->term_begin_position += pub->term_length;
    return AA_PUBLICATION_ADMIN_ACTION;
}

static int64_t aa_exclusive_publication_offerv(
    aa_publication_t *pub, const aa_iovec_t *iov, size_t iovcnt, size_t length, int64_t reserved_value)
{
    int64_t limit = aa_get_int64_acquire(pub->position_limit);
    int64_t position = pub->term_begin_position + pub->term_offset;
    if (position >= limit)
    {
        return aa_publication_back_pressure_status(pub, position, length);
    }
    int32_t index = pub->active_partition_index;
    uint8_t *term_buffer = pub->log.term_buffers[index];
    const uint8_t *header = pub->log.metadata->default_header;
    volatile int64_t *tail = &pub->log.metadata->term_tail_counters[index];
    int32_t result = length <= (size_t)pub->max_payload_length ?
        aa_exclusive_term_appender_append_unfragmented(
            term_buffer, pub->term_length, tail, pub->term_id, pub->term_offset, header, iov, iovcnt, length, reserved_value) :
        aa_exclusive_term_appender_append_fragmented(
            term_buffer, pub->term_length, tail, pub->term_id, pub->term_offset, header, iov, iovcnt, length,
            (size_t)pub->max_payload_length, reserved_value);
    if (result > 0)
    {
        pub->term_offset = result;
        aa_doorbell_ring_unfenced(aa_logbuffer_doorbell(pub->log.metadata));
        return pub->term_begin_position + result;
    }
    return aa_exclusive_publication_rotate(pub);
}

int64_t aa_publication_offerv(aa_publication_t *pub, const aa_iovec_t *iov, size_t iovcnt, int64_t reserved_value)
{
    if (aa_get_int32_acquire(&pub->is_closed))
    {
        return AA_PUBLICATION_CLOSED;
    }
    size_t length = 0;
    for (size_t i = 0; i < iovcnt; i++)
    {
        length += iov[i].length;
    }
    if (length > (size_t)pub->max_message_length)
    {
        return aa_publication_message_too_long(pub, length);
    }
    return pub->is_exclusive ?
        aa_exclusive_publication_offerv(pub, iov, iovcnt, length, reserved_value) :
        aa_concurrent_publication_offerv(pub, iov, iovcnt, length, reserved_value);
}

int64_t aa_publication_offer(aa_publication_t *pub, const uint8_t *buffer, size_t length, int64_t reserved_value)
{
    aa_iovec_t iov = { .base = buffer, .length = length };
    return aa_publication_offerv(pub, &iov, 1, reserved_value);
}

/* Aeron's ExclusivePublication.offerBlock: whole frames already laid out for this publication's
 * current term and offset (their headers naming its session, stream and term), appended in one
 * copy; the first frame's length word is stored last, so a reader sees all or none. A padding
 * frame's 32-byte header alone pads the rest of the term. */
/* offer_block's checks of a block's first frame (header) against the publication: 0 and the bytes
 * the block moves the position by (a padding frame's header alone: to the term's end), or -1 with
 * the error set */
static int aa_publication_check_block(aa_publication_t *pub, const uint8_t *header, size_t length, int32_t *advance)
{
    int32_t frame_length, term_offset, session_id, stream_id, term_id;
    uint16_t type;
    memcpy(&frame_length, header, 4);
    memcpy(&type, header + 6, 2);
    memcpy(&term_offset, header + 8, 4);
    memcpy(&session_id, header + 12, 4);
    memcpy(&stream_id, header + 16, 4);
    memcpy(&term_id, header + 20, 4);
    if (term_offset != pub->term_offset || session_id != pub->session_id || stream_id != pub->stream_id ||
        term_id != pub->term_id || frame_length <= 0 || (size_t)pub->term_offset + length > (size_t)pub->term_length ||
        (AA_HDR_TYPE_PAD != type && AA_HDR_TYPE_DATA != type))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT,
            "block does not fit this publication: its first frame names term %d offset %d session %d stream %d "
            "(length %d, block %zu bytes); the publication is at term %d offset %d session %d stream %d, term length %d",
            term_id, term_offset, session_id, stream_id, frame_length, length, pub->term_id, pub->term_offset,
            pub->session_id, pub->stream_id, pub->term_length);
        return -1;
    }
    *advance = (int32_t)length;
    if (AA_HDR_TYPE_PAD == type && AA_DATA_HEADER_LENGTH == length)
    {
        /* a padding frame's header alone pads the rest of the term (as an archive stores it) */
        *advance = (int32_t)AA_ALIGN(frame_length, AA_LOGBUFFER_FRAME_ALIGNMENT);
        if (pub->term_offset + *advance != pub->term_length)
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT,
                "a padding frame of %d bytes at term offset %d does not end the term of %d bytes", frame_length,
                pub->term_offset, pub->term_length);
            return -1;
        }
    }
    return 0;
}

static int64_t aa_publication_check_block_length(aa_publication_t *pub, size_t length)
{
    if (aa_get_int32_acquire(&pub->is_closed))
    {
        return AA_PUBLICATION_CLOSED;
    }
    if (!pub->is_exclusive)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "%s",
            "offer_block needs an exclusive publication (add it with exclusive=true)");
        return AA_PUBLICATION_ERROR;
    }
    if (length < AA_DATA_HEADER_LENGTH || 0 != (length & (AA_LOGBUFFER_FRAME_ALIGNMENT - 1)))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT,
            "a block of %zu bytes is not whole frames (a multiple of 32 bytes, at least one 32-byte header)", length);
        return AA_PUBLICATION_ERROR;
    }
    return 0;
}

/* the block's bytes are in the term from its first frame's length word on (that word still 0):
 * store the length last, so a reader sees all of the block or none */
static int64_t aa_publication_publish_block(aa_publication_t *pub, int32_t frame_length, int32_t advance)
{
    uint8_t *term_buffer = pub->log.term_buffers[pub->active_partition_index];
    int32_t term_offset = pub->term_offset;
    pub->term_offset += advance;
    aa_put_int64_release(&pub->log.metadata->term_tail_counters[pub->active_partition_index],
        aa_pack_tail(pub->term_id, pub->term_offset));
    aa_frame_length_ordered(term_buffer, term_offset, frame_length);
    aa_doorbell_ring_unfenced(aa_logbuffer_doorbell(pub->log.metadata));
    int64_t result = pub->term_begin_position + pub->term_offset;
    if (pub->term_offset == pub->term_length)
    {
        aa_exclusive_publication_rotate(pub);
    }
    return result;
}

int64_t aa_publication_offer_block(aa_publication_t *pub, const uint8_t *block, size_t length)
{
    int64_t rc = aa_publication_check_block_length(pub, length);
    if (0 != rc)
    {
        return rc;
    }
    int64_t limit = aa_get_int64_acquire(pub->position_limit);
    int64_t position = pub->term_begin_position + pub->term_offset;
    if (position >= limit)
    {
        return aa_publication_back_pressure_status(pub, position, length - AA_DATA_HEADER_LENGTH);
    }
    int32_t advance;
    if (aa_publication_check_block(pub, block, length, &advance) < 0)
    {
        return AA_PUBLICATION_ERROR;
    }
    int32_t frame_length;
    memcpy(&frame_length, block, 4);
    uint8_t *term_buffer = pub->log.term_buffers[pub->active_partition_index];
    /* as Aeron's appendBlock: the first frame's length is 0 while the block is copied, then stored */
    aa_frame_length_ordered(term_buffer, pub->term_offset, 0);
    memcpy(term_buffer + pub->term_offset + 4, block + 4, length - 4);
    return aa_publication_publish_block(pub, frame_length, advance);
}

uint8_t *aa_publication_block_space(aa_publication_t *pub, int32_t *length, int64_t *status)
{
    *length = 0;
    *status = aa_publication_check_block_length(pub, AA_DATA_HEADER_LENGTH);
    if (0 != *status)
    {
        return NULL;
    }
    int64_t limit = aa_get_int64_acquire(pub->position_limit);
    int64_t position = pub->term_begin_position + pub->term_offset;
    int64_t room = limit - position;
    if (room < AA_DATA_HEADER_LENGTH)
    {
        *status = aa_publication_back_pressure_status(pub, position, 0);
        return NULL;
    }
    int32_t to_term_end = pub->term_length - pub->term_offset;
    *length = room < to_term_end ? (int32_t)room : to_term_end;
    return pub->log.term_buffers[pub->active_partition_index] + pub->term_offset;
}

int64_t aa_publication_commit_block(aa_publication_t *pub, const uint8_t *header, size_t length)
{
    int64_t rc = aa_publication_check_block_length(pub, length);
    if (0 != rc)
    {
        return rc;
    }
    int32_t advance;
    if (aa_publication_check_block(pub, header, length, &advance) < 0)
    {
        return AA_PUBLICATION_ERROR;
    }
    int32_t frame_length;
    memcpy(&frame_length, header, 4);
    uint8_t *term_buffer = pub->log.term_buffers[pub->active_partition_index];
    memcpy(term_buffer + pub->term_offset + 4, header + 4, AA_DATA_HEADER_LENGTH - 4);
    return aa_publication_publish_block(pub, frame_length, advance);
}

/* Smart batching at the language boundary: one call appends messages[0..count) in order, each
 * message its own frame (or fragments), and stops at the first one refused. A refusal by term
 * rotation (ADMIN_ACTION) is retried at once: the rotation is done by then. */
int64_t aa_publication_offer_batch(
    aa_publication_t *pub, const aa_iovec_t *messages, size_t count, int64_t reserved_value, size_t *accepted)
{
    int64_t result = 0;
    size_t i = 0;
    int admin_retries = 0;
    while (i < count)
    {
        int64_t rc = aa_publication_offerv(pub, &messages[i], 1, reserved_value);
        if (rc > 0)
        {
            result = rc;
            admin_retries = 0;
            i++;
            continue;
        }
        if (AA_PUBLICATION_ADMIN_ACTION == rc && admin_retries++ < 2)
        {
            continue;
        }
        if (0 == i)
        {
            result = rc;
        }
        break;
    }
    *accepted = i;
    return result;
}

int64_t aa_publication_try_claim(aa_publication_t *pub, size_t length, aa_buffer_claim_t *claim)
{
    if (aa_get_int32_acquire(&pub->is_closed))
    {
        return AA_PUBLICATION_CLOSED;
    }
    if (length > (size_t)pub->max_payload_length)
    {
        AA_SET_ERR(AA_ERROR_CODE_MESSAGE_TOO_LONG,
            "try_claim of %zu bytes exceeds the max payload length of %" PRId32 " bytes (mtu - 32); claims cannot be "
            "fragmented: use offer for longer messages", length, pub->max_payload_length);
        return AA_PUBLICATION_ERROR;
    }
    int64_t limit = aa_get_int64_acquire(pub->position_limit);
    int32_t index;
    int32_t term_id;
    int32_t frame_offset;
    int32_t result;
    int64_t begin;
    if (pub->is_exclusive)
    {
        int64_t position = pub->term_begin_position + pub->term_offset;
        if (position >= limit)
        {
            return aa_publication_back_pressure_status(pub, position, length);
        }
        index = pub->active_partition_index;
        frame_offset = pub->term_offset;
        result = aa_exclusive_term_appender_claim(
            pub->log.term_buffers[index], pub->term_length, &pub->log.metadata->term_tail_counters[index], pub->term_id,
            pub->term_offset, pub->log.metadata->default_header, length);
        if (result <= 0)
        {
            return aa_exclusive_publication_rotate(pub);
        }
        pub->term_offset = result;
        begin = pub->term_begin_position;
    }
    else
    {
        int32_t term_count = aa_logbuffer_active_term_count(pub->log.metadata);
        index = aa_index_by_term_count(term_count);
        int64_t raw_tail = aa_get_int64_volatile(&pub->log.metadata->term_tail_counters[index]);
        term_id = aa_term_id(raw_tail);
        if (term_count != (int32_t)((uint32_t)term_id - (uint32_t)pub->initial_term_id))
        {
            return AA_PUBLICATION_ADMIN_ACTION;
        }
        int64_t position = aa_compute_term_begin_position(term_id, pub->position_bits_to_shift, pub->initial_term_id) +
            aa_term_offset(raw_tail, pub->term_length);
        if (position >= limit)
        {
            return aa_publication_back_pressure_status(pub, position, length);
        }
        result = aa_term_appender_claim(
            pub->log.term_buffers[index], pub->term_length, &pub->log.metadata->term_tail_counters[index],
            pub->log.metadata->default_header, length, &term_id, &frame_offset);
        begin = aa_compute_term_begin_position(term_id, pub->position_bits_to_shift, pub->initial_term_id);
        if (result <= 0)
        {
            if (begin + pub->term_length >= pub->max_possible_position)
            {
                return AA_PUBLICATION_MAX_POSITION_EXCEEDED;
            }
            aa_logbuffer_rotate_log(pub->log.metadata, term_count, term_id);
            return AA_PUBLICATION_ADMIN_ACTION;
        }
    }
    claim->frame = pub->log.term_buffers[index] + frame_offset;
    claim->data = claim->frame + AA_DATA_HEADER_LENGTH;
    claim->length = length;
    claim->doorbell = aa_logbuffer_doorbell(pub->log.metadata);
    return begin + result;
}

void aa_buffer_claim_commit(aa_buffer_claim_t *claim)
{
    aa_term_claim_commit(claim->frame, 0);
    aa_doorbell_ring_unfenced((aa_doorbell_t *)claim->doorbell);
}

void aa_buffer_claim_abort(aa_buffer_claim_t *claim)
{
    aa_term_claim_abort(claim->frame, 0);
}

bool aa_publication_is_connected(aa_publication_t *pub)
{
    return !aa_get_int32_acquire(&pub->is_closed) && aa_logbuffer_is_connected(pub->log.metadata);
}

bool aa_publication_is_closed(aa_publication_t *pub)
{
    return 0 != aa_get_int32_acquire(&pub->is_closed);
}

int64_t aa_publication_position(aa_publication_t *pub)
{
    if (pub->is_exclusive)
    {
        return pub->term_begin_position + pub->term_offset;
    }
    return aa_logbuffer_producer_position(&pub->log);
}

int64_t aa_publication_position_limit(aa_publication_t *pub)
{
    return aa_get_int64_acquire(pub->position_limit);
}

void aa_publication_describe(
    aa_publication_t *pub, int64_t *registration_id, int32_t *session_id, int32_t *stream_id, int32_t *max_message_length,
    int32_t *max_payload_length, int32_t *term_length, int32_t *initial_term_id, int32_t *position_limit_counter_id)
{
    *registration_id = pub->registration_id;
    *session_id = pub->session_id;
    *stream_id = pub->stream_id;
    *max_message_length = pub->max_message_length;
    *max_payload_length = pub->max_payload_length;
    *term_length = pub->term_length;
    *initial_term_id = pub->initial_term_id;
    *position_limit_counter_id = pub->position_limit_counter_id;
}
