/*
 * The fragment-handler polls of Aeron's Image and Subscription: controlled (and plain) polls,
 * bounded polls, block polls, and moving the subscriber position.
 *
 * One read loop serves them all: the handler sees each DATA fragment in place in the log and
 * answers with an action (aa_poll_handler_t). Positions follow Aeron: what was read is stored
 * once, when the loop ends; COMMIT stores it at once; ABORT leaves its fragment for the next poll.
 * Nothing allocates, nothing locks; the handler runs on the polling thread.
 */
#include <inttypes.h>
#include <stdio.h>

#include "client/aa_client.h"
#include "aeron_async.h"
#include "util/aa_error.h"

#define AA_POLL_UNBOUNDED INT64_MAX

static inline void aa_image_store_position(aa_image_t *image, int64_t position)
{
    /* a closed image's counter may already belong to someone else: leave it */
    if (!aa_get_int32_acquire(&image->is_closed))
    {
        aa_put_int64_release(image->subscriber_position, position);
    }
}

/* Reads fragments of one image from its subscriber position until fragment_limit, the end of
 * the term, a frame not yet committed, limit_position or the handler's say. *stop is set to the
 * handler's AA_POLL_STOP or AA_POLL_CLOSED, which end a subscription's poll too. */
static int32_t aa_image_read(
    aa_image_t *image, aa_poll_handler_t handler, void *clientd, int64_t limit_position, int32_t fragment_limit,
    int *stop)
{
    if (fragment_limit <= 0 || aa_get_int32_acquire(&image->is_closed))
    {
        return 0;
    }
    int64_t initial_position = aa_get_int64_volatile(image->subscriber_position);
    if (initial_position >= limit_position)
    {
        return 0;
    }
    int32_t initial_offset = (int32_t)(initial_position & (image->term_length - 1));
    const uint8_t *term_buffer =
        image->log.term_buffers[aa_index_by_position(initial_position, image->position_bits_to_shift)];
    int64_t limit = limit_position - initial_position + initial_offset; /* no overflow: offset <= position */
    int32_t limit_offset = limit < image->term_length ? (int32_t)limit : image->term_length;
    aa_poll_fragment_t fragment =
    {
        .image = image,
        .initial_term_id = image->initial_term_id,
        .position_bits_to_shift = image->position_bits_to_shift,
    };
    int32_t offset = initial_offset;
    int32_t fragments_read = 0;

    while (fragments_read < fragment_limit && offset < limit_offset)
    {
        int32_t length = aa_frame_length_volatile(term_buffer, offset);
        if (length <= 0)
        {
            break;
        }
        int32_t frame_offset = offset;
        int32_t aligned_length = (int32_t)AA_ALIGN(length, AA_LOGBUFFER_FRAME_ALIGNMENT);
        offset += aligned_length;
        if (aa_frame_is_padding(term_buffer, frame_offset))
        {
            continue;
        }
        fragments_read++;
        fragment.frame = term_buffer + frame_offset;
        fragment.frame_length = length;
        int action = handler(clientd, &fragment);
        if (AA_POLL_CONTINUE == action)
        {
            continue;
        }
        if (AA_POLL_CLOSED == action)
        {
            /* the handler closed the subscription or its client: the image may be gone */
            *stop = action;
            return fragments_read;
        }
        if (AA_POLL_ABORT == action)
        {
            fragments_read--;
            offset -= aligned_length;
            break;
        }
        if (AA_POLL_BREAK == action)
        {
            break;
        }
        if (AA_POLL_STOP == action)
        {
            *stop = action;
            break;
        }
        if (AA_POLL_COMMIT == action)
        {
            initial_position += offset - initial_offset;
            initial_offset = offset;
            aa_image_store_position(image, initial_position);
        }
    }

    int64_t resulting_position = initial_position + (offset - initial_offset);
    if (resulting_position > initial_position)
    {
        aa_image_store_position(image, resulting_position);
    }
    return fragments_read;
}

int32_t aa_image_controlled_poll(aa_image_t *image, aa_poll_handler_t handler, void *clientd, int32_t fragment_limit)
{
    int stop = 0;
    return aa_image_read(image, handler, clientd, AA_POLL_UNBOUNDED, fragment_limit, &stop);
}

int32_t aa_image_bounded_controlled_poll(
    aa_image_t *image, aa_poll_handler_t handler, void *clientd, int64_t limit_position, int32_t fragment_limit)
{
    int stop = 0;
    return aa_image_read(image, handler, clientd, limit_position, fragment_limit, &stop);
}

int32_t aa_subscription_controlled_poll(
    aa_subscription_t *sub, aa_poll_handler_t handler, void *clientd, int32_t fragment_limit)
{
    size_t start;
    aa_image_list_t *list = aa_subscription_poll_order(sub, &start);
    if (NULL == list)
    {
        return 0;
    }
    size_t count = list->count;
    int32_t fragments_read = 0;
    int stop = 0;
    for (size_t i = 0; i < count && fragments_read < fragment_limit && 0 == stop; i++)
    {
        aa_image_t *image = list->images[(start + i) % count];
        fragments_read += aa_image_read(
            image, handler, clientd, AA_POLL_UNBOUNDED, fragment_limit - fragments_read, &stop);
    }
    return fragments_read;
}

/* ---- block polls ---- */

#define AA_SCAN_PREFETCH_MIN_FRAME 1024
#define AA_SCAN_PREFETCH_FRAMES 4

/* The end of the run of whole committed frames from term_offset, not past limit_offset; a padding
 * frame ends the run before it, or is the run when it comes first. */
static int32_t aa_term_block_scan(const uint8_t *term_buffer, int32_t term_offset, int32_t limit_offset)
{
    int32_t offset = term_offset;
    while (offset < limit_offset)
    {
        int32_t length = aa_frame_length_volatile(term_buffer, offset);
        if (length <= 0)
        {
            break;
        }
        int32_t aligned_length = (int32_t)AA_ALIGN(length, AA_LOGBUFFER_FRAME_ALIGNMENT);
        if (aa_frame_is_padding(term_buffer, offset))
        {
            if (term_offset == offset)
            {
                offset += aligned_length;
            }
            break;
        }
        if (offset + aligned_length > limit_offset)
        {
            break;
        }
        offset += aligned_length;
        /* long frames (1 KiB or more) cost a cache miss, and a TLB miss each page, on their header:
         * ask for the header a few frames on, guessing the same length (a wrong guess costs nothing) */
        if (aligned_length >= AA_SCAN_PREFETCH_MIN_FRAME &&
            offset + AA_SCAN_PREFETCH_FRAMES * aligned_length < limit_offset)
        {
            __builtin_prefetch(term_buffer + offset + AA_SCAN_PREFETCH_FRAMES * aligned_length);
        }
    }
    return offset;
}

static int64_t aa_image_block_read(
    aa_image_t *image, aa_block_handler_t handler, void *clientd, int32_t block_length_limit, int *stop)
{
    if (block_length_limit <= 0 || aa_get_int32_acquire(&image->is_closed))
    {
        return 0;
    }
    int64_t position = aa_get_int64_volatile(image->subscriber_position);
    int32_t offset = (int32_t)(position & (image->term_length - 1));
    int32_t limit_offset = block_length_limit < image->term_length - offset ?
        offset + block_length_limit : image->term_length;
    const uint8_t *term_buffer = image->log.term_buffers[aa_index_by_position(position, image->position_bits_to_shift)];
    int32_t resulting_offset = aa_term_block_scan(term_buffer, offset, limit_offset);
    int32_t length = resulting_offset - offset;
    if (length > 0)
    {
        int32_t term_id = ((const aa_data_header_t *)(term_buffer + offset))->term_id;
        int action = handler(clientd, term_buffer, image->term_length, offset, length, image->session_id, term_id);
        if (AA_POLL_CLOSED == action)
        {
            *stop = action;
            return length;
        }
        if (AA_POLL_STOP == action)
        {
            *stop = action;
        }
        aa_image_store_position(image, position + length);
    }
    return length;
}

int64_t aa_image_block_poll(aa_image_t *image, aa_block_handler_t handler, void *clientd, int32_t block_length_limit)
{
    int stop = 0;
    return aa_image_block_read(image, handler, clientd, block_length_limit, &stop);
}

int64_t aa_subscription_block_poll(
    aa_subscription_t *sub, aa_block_handler_t handler, void *clientd, int32_t block_length_limit)
{
    aa_image_list_t *list = __atomic_load_n(&sub->images, __ATOMIC_ACQUIRE);
    int64_t bytes = 0;
    int stop = 0;
    for (size_t i = 0; i < list->count && 0 == stop; i++)
    {
        bytes += aa_image_block_read(list->images[i], handler, clientd, block_length_limit, &stop);
    }
    return bytes;
}

/* ---- moving the subscriber position ---- */

/* Walks the committed frames from `from` towards `to` (from <= to): returns `to` when a frame
 * boundary lands on it, else the boundary where it stopped: before `to` at a frame not yet
 * committed (or one whose header does not name its own offset), past it when `to` is inside a frame. */
static int64_t aa_image_walk_frames(aa_image_t *image, int64_t from, int64_t to)
{
    int64_t position = from;
    while (position < to)
    {
        int32_t offset = (int32_t)(position & (image->term_length - 1));
        const uint8_t *term_buffer =
            image->log.term_buffers[aa_index_by_position(position, image->position_bits_to_shift)];
        int32_t length = aa_frame_length_volatile(term_buffer, offset);
        if (length <= 0 || ((const aa_data_header_t *)(term_buffer + offset))->term_offset != offset)
        {
            break;
        }
        position += AA_ALIGN(length, AA_LOGBUFFER_FRAME_ALIGNMENT);
    }
    return position;
}

int aa_image_set_position(aa_image_t *image, int64_t position)
{
    if (aa_get_int32_acquire(&image->is_closed))
    {
        AA_SET_ERR(AA_ERROR_CODE_CLOSED, "image (session %" PRId32 ") is closed: its position cannot be set",
            image->session_id);
        return -1;
    }
    int64_t current = aa_get_int64_volatile(image->subscriber_position);
    if (0 != (position & (AA_LOGBUFFER_FRAME_ALIGNMENT - 1)))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT,
            "position %" PRId64 " is not frame-aligned: frames start at multiples of %d (current position %" PRId64 ")",
            position, AA_LOGBUFFER_FRAME_ALIGNMENT, current);
        return -1;
    }
    int64_t high_water = current > image->rewind_high_water ? current : image->rewind_high_water;
    int64_t lowest = high_water - image->term_length;
    lowest = lowest > image->join_position ? lowest : image->join_position;
    int64_t term_end = (current - (current & (image->term_length - 1))) + image->term_length;
    if (position < lowest || position > term_end)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT,
            "position %" PRId64 " is out of range: the log holds this image's frames from %" PRId64
            " (at most a term behind the furthest position read, not before the join position) to the end of the "
            "current term at %" PRId64 " (current position %" PRId64 ")", position, lowest, term_end, current);
        return -1;
    }
    if (position > current)
    {
        int64_t reached = aa_image_walk_frames(image, current, position);
        if (reached != position)
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, reached < position ?
                "position %" PRId64 " is beyond the data received so far: frames reach %" PRId64 " (current position %"
                PRId64 ")" :
                "position %" PRId64 " is inside a frame: the nearest frame boundary after it is %" PRId64
                " (current position %" PRId64 ")", position, reached, current);
            return -1;
        }
    }
    else if (position < current)
    {
        int32_t offset = (int32_t)(position & (image->term_length - 1));
        const uint8_t *term_buffer =
            image->log.term_buffers[aa_index_by_position(position, image->position_bits_to_shift)];
        const aa_data_header_t *header = (const aa_data_header_t *)(term_buffer + offset);
        int32_t term_id =
            aa_compute_term_id_from_position(position, image->position_bits_to_shift, image->initial_term_id);
        if (aa_frame_length_volatile(term_buffer, offset) <= 0 || header->term_id != term_id ||
            aa_image_walk_frames(image, position, current) != current)
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT,
                "position %" PRId64 " is not the start of a frame this image still holds (current position %" PRId64
                ")", position, current);
            return -1;
        }
        image->rewind_high_water = high_water;
    }
    image->assembling = false;
    image->assembly_length = 0;
    aa_put_int64_release(image->subscriber_position, position);
    return 0;
}
