#include <stdbool.h>
#include <string.h>

#include "logbuffer/aa_frame.h"
#include "media/aa_timestamps.h"

void aa_timestamps_set_timestamp(uint8_t *frame, int32_t frame_length, int32_t offset, int64_t timestamp_ns)
{
    if (AA_UDP_CHANNEL_TIMESTAMP_RESERVED == offset)
    {
        memcpy(frame + offsetof(aa_data_header_t, reserved_value), &timestamp_ns, sizeof(timestamp_ns));
        return;
    }
    int64_t body_length = (int64_t)frame_length - AA_DATA_HEADER_LENGTH;
    if (offset >= 0 && (int64_t)offset + (int64_t)sizeof(timestamp_ns) <= body_length)
    {
        memcpy(frame + AA_DATA_HEADER_LENGTH + offset, &timestamp_ns, sizeof(timestamp_ns));
    }
}

void aa_timestamps_stamp_sent(uint8_t *datagram, size_t length, int32_t offset, int64_t timestamp_ns)
{
    aa_frame_header_t header;
    if (length < (size_t)AA_DATA_HEADER_LENGTH)
    {
        return;
    }
    memcpy(&header, datagram, sizeof(header));
    if (AA_HDR_TYPE_DATA == header.type && header.frame_length > 0 && (size_t)header.frame_length <= length)
    {
        aa_timestamps_set_timestamp(datagram, header.frame_length, offset, timestamp_ns);
    }
}

void aa_timestamps_stamp_received(
    uint8_t *datagram, size_t length, int32_t channel_offset, aa_timestamps_clock_t clock, void *clock_clientd,
    int32_t media_offset, bool has_media_timestamp, int64_t media_timestamp_ns)
{
    bool has_channel_timestamp = false;
    int64_t channel_timestamp_ns = 0;
    size_t offset = 0;
    while (offset + (size_t)AA_DATA_HEADER_LENGTH <= length)
    {
        aa_frame_header_t header;
        memcpy(&header, datagram + offset, sizeof(header));
        if (header.frame_length <= 0 || (AA_HDR_TYPE_DATA != header.type && AA_HDR_TYPE_PAD != header.type))
        {
            return;
        }
        uint8_t *frame = datagram + offset;
        if (AA_HDR_TYPE_DATA == header.type && 0 != (header.flags & AA_DATA_HEADER_BEGIN_FLAG) &&
            offset + (size_t)header.frame_length <= length)
        {
            if (has_media_timestamp && AA_UDP_CHANNEL_TIMESTAMP_OFF != media_offset)
            {
                aa_timestamps_set_timestamp(frame, header.frame_length, media_offset, media_timestamp_ns);
            }
            if (AA_UDP_CHANNEL_TIMESTAMP_OFF != channel_offset)
            {
                if (!has_channel_timestamp)
                {
                    channel_timestamp_ns = clock(clock_clientd);
                    has_channel_timestamp = true;
                }
                aa_timestamps_set_timestamp(frame, header.frame_length, channel_offset, channel_timestamp_ns);
            }
        }
        offset += ((size_t)header.frame_length + 31) & ~(size_t)31;
    }
}
