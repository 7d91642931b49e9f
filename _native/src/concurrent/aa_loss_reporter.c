#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "concurrent/aa_loss_reporter.h"
#include "util/aa_error.h"

const char *aa_loss_report_file_name(void)
{
    return AA_LOSS_REPORT_FILE;
}

int aa_loss_reporter_init(aa_loss_reporter_t *reporter, uint8_t *buffer, size_t capacity)
{
    if (0 != ((uintptr_t)buffer % AA_LOSS_REPORT_ENTRY_ALIGNMENT))
    {
        AA_SET_ERR(EINVAL, "a loss report buffer must be %d-byte aligned", AA_LOSS_REPORT_ENTRY_ALIGNMENT);
        return -1;
    }
    reporter->buffer = buffer;
    reporter->capacity = capacity;
    reporter->next_record_offset = 0;
    return 0;
}

/* The fixed fields, the channel (length, bytes, padding to 4) and the source (length, bytes), as Aeron's;
 * aligned false: the unaligned form of earlier aeron_async files (no padding after the channel). */
static size_t aa_loss_report_entry_length(size_t channel_length, size_t source_length, bool aligned)
{
    return AA_LOSS_REPORT_CHANNEL_OFFSET + 2 * sizeof(int32_t) +
        (aligned ? AA_ALIGN(channel_length, sizeof(int32_t)) : channel_length) + source_length;
}

int64_t aa_loss_reporter_create_entry(
    aa_loss_reporter_t *reporter, int64_t bytes_lost, int64_t timestamp_ms, int32_t session_id, int32_t stream_id,
    const char *channel, size_t channel_length, const char *source, size_t source_length)
{
    size_t required = aa_loss_report_entry_length(channel_length, source_length, true);
    if (channel_length > INT32_MAX || source_length > INT32_MAX ||
        required > reporter->capacity - reporter->next_record_offset)
    {
        AA_SET_ERR(ENOMEM, "the loss report is full (%zu of %zu bytes used, %zu more needed); "
            "raise AERON_LOSS_REPORT_BUFFER_LENGTH", reporter->next_record_offset, reporter->capacity, required);
        return -1;
    }
    size_t offset = reporter->next_record_offset;
    uint8_t *entry = reporter->buffer + offset;
    int32_t lengths[2] = { (int32_t)channel_length, (int32_t)source_length };
    memcpy(entry + AA_LOSS_REPORT_TOTAL_BYTES_LOST_OFFSET, &bytes_lost, sizeof(bytes_lost));
    memcpy(entry + AA_LOSS_REPORT_FIRST_OBSERVATION_OFFSET, &timestamp_ms, sizeof(timestamp_ms));
    memcpy(entry + AA_LOSS_REPORT_LAST_OBSERVATION_OFFSET, &timestamp_ms, sizeof(timestamp_ms));
    memcpy(entry + AA_LOSS_REPORT_SESSION_ID_OFFSET, &session_id, sizeof(session_id));
    memcpy(entry + AA_LOSS_REPORT_STREAM_ID_OFFSET, &stream_id, sizeof(stream_id));
    uint8_t *p = entry + AA_LOSS_REPORT_CHANNEL_OFFSET;
    memcpy(p, &lengths[0], sizeof(int32_t));
    memcpy(p + sizeof(int32_t), channel, channel_length);
    memset(p + sizeof(int32_t) + channel_length, 0, AA_ALIGN(channel_length, sizeof(int32_t)) - channel_length);
    p += sizeof(int32_t) + AA_ALIGN(channel_length, sizeof(int32_t));
    memcpy(p, &lengths[1], sizeof(int32_t));
    memcpy(p + sizeof(int32_t), source, source_length);
    /* last: readers see the entry from here on */
    aa_put_int64_release((volatile int64_t *)(entry + AA_LOSS_REPORT_OBSERVATION_COUNT_OFFSET), 1);
    reporter->next_record_offset += AA_ALIGN(required, (size_t)AA_LOSS_REPORT_ENTRY_ALIGNMENT);
    return (int64_t)offset;
}

size_t aa_loss_report_read(const uint8_t *buffer, size_t capacity, aa_loss_report_entry_func_t func, void *clientd)
{
    size_t count = 0;
    size_t offset = 0;
    const size_t fixed = aa_loss_report_entry_length(0, 0, true);
    while (offset <= capacity && capacity - offset >= fixed)
    {
        const uint8_t *entry = buffer + offset;
        aa_loss_report_entry_t e;
        e.observation_count =
            aa_get_int64_acquire((const volatile int64_t *)(entry + AA_LOSS_REPORT_OBSERVATION_COUNT_OFFSET));
        if (e.observation_count <= 0)
        {
            break;
        }
        size_t room = capacity - offset - fixed;
        memcpy(&e.channel_length, entry + AA_LOSS_REPORT_CHANNEL_OFFSET, sizeof(int32_t));
        if (e.channel_length < 0 || (size_t)e.channel_length > room)
        {
            break;
        }
        const uint8_t *p = entry + AA_LOSS_REPORT_CHANNEL_OFFSET + sizeof(int32_t);
        e.channel = (const char *)p;
        /* Aeron's layout (the source's length 4-byte aligned after the channel), else the unaligned one */
        bool aligned = true;
        size_t padded = AA_ALIGN((size_t)e.channel_length, sizeof(int32_t));
        e.source_length = -1;
        if (padded <= room)
        {
            memcpy(&e.source_length, p + padded, sizeof(int32_t));
        }
        if (e.source_length < 0 || (size_t)e.source_length > room - padded)
        {
            aligned = false;
            padded = (size_t)e.channel_length;
            memcpy(&e.source_length, p + padded, sizeof(int32_t));
            if (e.source_length < 0 || (size_t)e.source_length > room - padded)
            {
                break;
            }
        }
        e.source = (const char *)(p + padded + sizeof(int32_t));
        memcpy(&e.total_bytes_lost, entry + AA_LOSS_REPORT_TOTAL_BYTES_LOST_OFFSET, sizeof(int64_t));
        memcpy(&e.first_observation_timestamp, entry + AA_LOSS_REPORT_FIRST_OBSERVATION_OFFSET, sizeof(int64_t));
        memcpy(&e.last_observation_timestamp, entry + AA_LOSS_REPORT_LAST_OBSERVATION_OFFSET, sizeof(int64_t));
        memcpy(&e.session_id, entry + AA_LOSS_REPORT_SESSION_ID_OFFSET, sizeof(int32_t));
        memcpy(&e.stream_id, entry + AA_LOSS_REPORT_STREAM_ID_OFFSET, sizeof(int32_t));
        func(clientd, &e);
        count++;
        offset += AA_ALIGN(
            aa_loss_report_entry_length((size_t)e.channel_length, (size_t)e.source_length, aligned),
            (size_t)AA_LOSS_REPORT_ENTRY_ALIGNMENT);
    }
    return count;
}
