/*
 * The subscription message path: whole messages, reassembled here, copied into a caller-owned
 * buffer in one call; no allocation in steady state (reassembly buffers grow to the largest
 * message seen). The fragment-handler polls (a handler per fragment, in place) are aa_image_poll.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/aa_client.h"
#include "aeron_async.h"
#include "util/aa_error.h"

static inline aa_image_list_t *aa_subscription_image_list(aa_subscription_t *sub)
{
    return __atomic_load_n(&sub->images, __ATOMIC_ACQUIRE);
}

int64_t aa_image_position(aa_image_t *image)
{
    if (aa_get_int32_acquire(&image->is_closed))
    {
        return image->final_position;
    }
    return aa_get_int64_acquire(image->subscriber_position);
}

bool aa_image_is_closed(aa_image_t *image)
{
    return 0 != aa_get_int32_acquire(&image->is_closed);
}

bool aa_image_is_end_of_stream(aa_image_t *image)
{
    if (aa_get_int32_acquire(&image->is_closed))
    {
        return true;
    }
    return aa_image_position(image) >= aa_logbuffer_end_of_stream_position(image->log.metadata);
}

int64_t aa_image_end_of_stream_position(aa_image_t *image)
{
    if (aa_get_int32_acquire(&image->is_closed))
    {
        return image->closed_end_of_stream_position; /* its log may be unmapped by now */
    }
    return aa_logbuffer_end_of_stream_position(image->log.metadata);
}

bool aa_image_is_publication_revoked(aa_image_t *image)
{
    if (aa_get_int32_acquire(&image->is_closed))
    {
        return image->closed_is_publication_revoked; /* its log may be unmapped by now */
    }
    return aa_logbuffer_is_publication_revoked(image->log.metadata);
}

void aa_image_describe(aa_image_t *image, aa_image_info_t *info)
{
    info->correlation_id = image->correlation_id;
    info->session_id = image->session_id;
    info->stream_id = image->stream_id;
    info->term_length = image->term_length;
    info->mtu_length = image->mtu_length; /* not from the log: it is unmapped a while after the image closes */
    info->initial_term_id = image->initial_term_id;
    info->join_position = image->join_position;
    info->subscriber_position_id = image->subscriber_position_id;
    snprintf(info->source_identity, sizeof(info->source_identity), "%s", image->source_identity);
}

/* Where the subscriber reads next: its term buffer, the term's begin position and the offset. */
static inline const uint8_t *aa_image_read_start(aa_image_t *image, int64_t *term_begin_position, int32_t *term_offset)
{
    int64_t position = aa_get_int64_volatile(image->subscriber_position);
    *term_offset = (int32_t)(position & (image->term_length - 1));
    *term_begin_position = position - *term_offset;
    return image->log.term_buffers[aa_index_by_position(position, image->position_bits_to_shift)];
}

static int aa_image_assembly_reserve(aa_image_t *image, size_t needed)
{
    if (needed <= image->assembly_capacity)
    {
        return 0;
    }
    size_t capacity = image->assembly_capacity < 4096 ? 4096 : image->assembly_capacity;
    while (capacity < needed)
    {
        capacity *= 2;
    }
    uint8_t *grown = realloc(image->assembly, capacity);
    if (NULL == grown)
    {
        return -1;
    }
    image->assembly = grown;
    image->assembly_capacity = capacity;
    return 0;
}

/* Reads whole messages from one image into out. Stops before a fragment whose completed message
 * would not fit; returns the messages delivered, or -2 with *required set when even an empty
 * buffer is too small for the next message. */
int32_t aa_image_poll_messages(
    aa_image_t *image, uint8_t *out, size_t out_capacity, size_t *out_used, aa_message_t *messages,
    int32_t max_messages, int32_t fragment_limit, size_t *required)
{
    if (aa_get_int32_acquire(&image->is_closed) || max_messages <= 0)
    {
        return 0;
    }
    int64_t term_begin_position;
    int32_t term_offset;
    const uint8_t *term_buffer = aa_image_read_start(image, &term_begin_position, &term_offset);
    int32_t delivered = 0;
    int32_t fragments = 0;
    int32_t offset = term_offset;
    size_t used = *out_used;
    int32_t result = 0;

    while (delivered < max_messages && fragments < fragment_limit && offset < image->term_length)
    {
        int32_t frame_length = aa_frame_length_volatile(term_buffer, offset);
        if (frame_length <= 0)
        {
            break;
        }
        int32_t frame_offset = offset;
        int32_t next_offset = offset + AA_ALIGN(frame_length, AA_LOGBUFFER_FRAME_ALIGNMENT);
        if (aa_frame_is_padding(term_buffer, frame_offset))
        {
            offset = next_offset;
            continue;
        }
        const aa_data_header_t *header = (const aa_data_header_t *)(term_buffer + frame_offset);
        const uint8_t *payload = term_buffer + frame_offset + AA_DATA_HEADER_LENGTH;
        size_t payload_length = (size_t)(frame_length - AA_DATA_HEADER_LENGTH);
        uint8_t flags = header->frame_header.flags;
        const uint8_t *message = NULL;
        size_t message_length = 0;
        int64_t reserved_value = header->reserved_value;

        if (AA_DATA_HEADER_UNFRAGMENTED == (flags & AA_DATA_HEADER_UNFRAGMENTED))
        {
            message = payload;
            message_length = payload_length;
        }
        else if (flags & AA_DATA_HEADER_BEGIN_FLAG)
        {
            if (aa_image_assembly_reserve(image, payload_length) < 0)
            {
                AA_SET_ERR(ENOMEM, "%s", "out of memory reassembling a message");
                result = -1;
                break;
            }
            memcpy(image->assembly, payload, payload_length);
            image->assembly_length = payload_length;
            image->assembly_next_offset = next_offset;
            image->assembly_reserved_value = reserved_value;
            image->assembling = true;
        }
        else if (image->assembling && frame_offset == image->assembly_next_offset)
        {
            size_t total = image->assembly_length + payload_length;
            if (flags & AA_DATA_HEADER_END_FLAG)
            {
                if (total > out_capacity)
                {
                    *required = total;
                    result = -2;
                    break;
                }
                if (used + total > out_capacity)
                {
                    break;
                }
                memcpy(out + used, image->assembly, image->assembly_length);
                memcpy(out + used + image->assembly_length, payload, payload_length);
                aa_message_t *m = &messages[delivered++];
                m->offset = (int64_t)used;
                m->length = (int64_t)total;
                m->position = term_begin_position + next_offset;
                m->reserved_value = image->assembly_reserved_value;
                m->session_id = image->session_id;
                m->stream_id = image->stream_id;
                m->image = image;
                used += AA_ALIGN(total, 8);
                image->assembling = false;
                image->assembly_length = 0;
            }
            else
            {
                if (aa_image_assembly_reserve(image, total) < 0)
                {
                    AA_SET_ERR(ENOMEM, "%s", "out of memory reassembling a message");
                    result = -1;
                    break;
                }
                memcpy(image->assembly + image->assembly_length, payload, payload_length);
                image->assembly_length = total;
                image->assembly_next_offset = next_offset;
            }
        }
        else
        {
            image->assembling = false;
            image->assembly_length = 0;
        }

        if (NULL != message)
        {
            if (message_length > out_capacity)
            {
                *required = message_length;
                result = -2;
                break;
            }
            if (used + message_length > out_capacity)
            {
                break;
            }
            memcpy(out + used, message, message_length);
            aa_message_t *m = &messages[delivered++];
            m->offset = (int64_t)used;
            m->length = (int64_t)message_length;
            m->position = term_begin_position + next_offset;
            m->reserved_value = reserved_value;
            m->session_id = image->session_id;
            m->stream_id = image->stream_id;
            m->image = image;
            used += AA_ALIGN(message_length, 8);
        }
        offset = next_offset;
        fragments++;
    }

    if (offset > term_offset)
    {
        aa_put_int64_release(image->subscriber_position, term_begin_position + offset);
    }
    *out_used = used;
    return result < 0 && 0 == delivered ? result : delivered;
}

int32_t aa_subscription_poll_messages(
    aa_subscription_t *sub, uint8_t *out, size_t out_capacity, aa_message_t *messages, int32_t max_messages,
    int32_t fragment_limit, size_t *required)
{
    size_t start;
    aa_image_list_t *list = aa_subscription_poll_order(sub, &start);
    if (NULL == list)
    {
        return 0;
    }
    size_t count = list->count;
    size_t used = 0;
    int32_t total = 0;
    int32_t fragments_left = fragment_limit;
    for (size_t i = 0; i < count && total < max_messages; i++)
    {
        aa_image_t *image = list->images[(start + i) % count];
        int32_t n = aa_image_poll_messages(
            image, out, out_capacity, &used, messages + total, max_messages - total, fragments_left, required);
        if (n < 0)
        {
            return total > 0 ? total : n;
        }
        total += n;
    }
    return total;
}

int32_t aa_subscription_image_count(aa_subscription_t *sub)
{
    return (int32_t)aa_subscription_image_list(sub)->count;
}

int32_t aa_subscription_images(aa_subscription_t *sub, aa_image_t **out, int32_t max)
{
    aa_image_list_t *list = aa_subscription_image_list(sub);
    int32_t n = (int32_t)list->count < max ? (int32_t)list->count : max;
    for (int32_t i = 0; i < n; i++)
    {
        out[i] = list->images[i];
    }
    return n;
}

bool aa_subscription_is_connected(aa_subscription_t *sub)
{
    aa_image_list_t *list = aa_subscription_image_list(sub);
    for (size_t i = 0; i < list->count; i++)
    {
        if (!aa_get_int32_acquire(&list->images[i]->is_closed))
        {
            return true;
        }
    }
    return false;
}

bool aa_subscription_is_closed(aa_subscription_t *sub)
{
    return 0 != aa_get_int32_acquire(&sub->is_closed);
}

int32_t aa_subscription_take_image_events(aa_subscription_t *sub, aa_image_event_t *out, int32_t max)
{
    if (!aa_subscription_has_image_events(sub))
    {
        return 0;
    }
    /* under the client lock: the conductor may be growing the ring (only on image events) */
    aa_client_t *client = sub->client;
    pthread_mutex_lock(&client->lock);
    int64_t head = sub->events_head;
    int64_t tail = sub->events_tail;
    int32_t n = 0;
    while (head < tail && n < max)
    {
        out[n++] = sub->events[(size_t)head & (sub->events_capacity - 1)];
        head++;
    }
    aa_put_int64_release(&sub->events_head, head);
    pthread_mutex_unlock(&client->lock);
    return n;
}

bool aa_subscription_has_image_events(aa_subscription_t *sub)
{
    return aa_get_int64_acquire(&sub->events_tail) != sub->events_head;
}
