/*
 * The archive's listings (reference aeron-archive.md: ListRecordings, ListRecordingsForUri,
 * FindLastMatchingRecording, ListRecordingSubscriptions): descriptors sent from the catalog's bytes,
 * the channel matched as a substring as Aeron's archive matches it, a RECORDING_UNKNOWN or
 * SUBSCRIPTION_UNKNOWN response when fewer than asked were found. Called from the requests'
 * dispatch (aa_archive_requests.c).
 */
#include <string.h>

#include "archive/aa_archive_listings.h"

/* A RecordingDescriptor: the catalog's bytes verbatim, with this session's ids. */
void aa_archive_send_descriptor(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    int64_t recording_id)
{
    uint8_t buffer[8 + 80 + 3 * (4 + AA_ARCHIVE_CHANNEL_MAX) + 4096];
    int64_t length = aa_archive_catalog_encode_descriptor(c->catalog, recording_id, s->id, correlation_id, buffer,
        sizeof(buffer));
    if (length > 0)
    {
        aa_archive_session_send_bytes(c, s, buffer, (size_t)length);
    }
}

static bool aa_var_contains(const aa_archive_var_t *haystack, const aa_archive_var_t *needle)
{
    if (0 == needle->length)
    {
        return true;
    }
    if (needle->length > haystack->length)
    {
        return false;
    }
    for (uint32_t i = 0; i + needle->length <= haystack->length; i++)
    {
        if (0 == memcmp(haystack->data + i, needle->data, needle->length))
        {
            return true;
        }
    }
    return false;
}

void aa_archive_on_list_recordings(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    int64_t from, int32_t count, bool filter, int32_t stream_id, const aa_archive_var_t *channel)
{
    int64_t next = aa_archive_next_recording_id(c);
    int32_t sent = 0;
    int64_t id = from < 0 ? 0 : from;
    for (; id < next && sent < count; id++)
    {
        aa_archive_recording_descriptor_t d;
        if (!aa_archive_find_descriptor(c, id, &d))
        {
            continue;
        }
        if (filter && (d.stream_id != stream_id || !aa_var_contains(&d.original_channel, channel)))
        {
            continue;
        }
        aa_archive_send_descriptor(c, s, correlation_id, id);
        sent++;
    }
    if (sent < count)
    {
        aa_archive_send_response(c, s, correlation_id, id, AA_ARCHIVE_RESPONSE_RECORDING_UNKNOWN, NULL);
    }
}

void aa_archive_on_find_last_matching(aa_archive_conductor_t *c, aa_archive_control_session_t *s,
    const aa_archive_find_last_matching_recording_request_t *req)
{
    int64_t next = aa_archive_next_recording_id(c);
    for (int64_t id = next - 1; id >= req->min_recording_id && id >= 0; id--)
    {
        aa_archive_recording_descriptor_t d;
        /* session id -1 (Aeron's NULL_VALUE): any session */
        if (aa_archive_find_descriptor(c, id, &d) && (-1 == req->session_id || d.session_id == req->session_id) &&
            d.stream_id == req->stream_id &&
            aa_var_contains(&d.original_channel, &req->channel))
        {
            aa_archive_send_ok(c, s, req->correlation_id, id);
            return;
        }
    }
    aa_archive_send_ok(c, s, req->correlation_id, -1);
}

void aa_archive_on_list_recording_subscriptions(aa_archive_conductor_t *c, aa_archive_control_session_t *s,
    const aa_archive_list_recording_subscriptions_request_t *req)
{
    int32_t index = 0, sent = 0;
    for (size_t i = 0; i < c->subscription_count && sent < req->subscription_count; i++)
    {
        aa_archive_recording_subscription_t *rs = c->subscriptions[i];
        if (rs->stop_requested || rs->subscription_id < 0)
        {
            continue;
        }
        aa_archive_var_t stripped = { (const uint8_t *)rs->stripped_channel, (uint32_t)strlen(rs->stripped_channel) };
        aa_archive_var_t original = { (const uint8_t *)rs->original_channel, (uint32_t)strlen(rs->original_channel) };
        if ((AA_ARCHIVE_TRUE == req->apply_stream_id && rs->stream_id != req->stream_id) ||
            !(aa_var_contains(&stripped, &req->channel) || aa_var_contains(&original, &req->channel)))
        {
            continue;
        }
        if (index++ < req->pseudo_index)
        {
            continue;
        }
        aa_archive_message_t msg;
        memset(&msg, 0, sizeof(msg));
        msg.template_id = AA_ARCHIVE_TEMPLATE_RECORDING_SUBSCRIPTION_DESCRIPTOR;
        msg.recording_subscription_descriptor.control_session_id = s->id;
        msg.recording_subscription_descriptor.correlation_id = req->correlation_id;
        msg.recording_subscription_descriptor.subscription_id = rs->subscription_id;
        msg.recording_subscription_descriptor.stream_id = rs->stream_id;
        msg.recording_subscription_descriptor.stripped_channel = stripped;
        aa_archive_session_send(c, s, &msg);
        sent++;
    }
    if (sent < req->subscription_count)
    {
        aa_archive_send_response(c, s, req->correlation_id, index, AA_ARCHIVE_RESPONSE_SUBSCRIPTION_UNKNOWN, NULL);
    }
}
