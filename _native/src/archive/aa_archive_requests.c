/*
 * The archive's requests: start/stop/extend recording, replay (bounded, live), stop replays,
 * truncate, purge, listings and positions; and the conductor's side of recordings and replays
 * (starting them on the recorder or replayer, finishing them when those let go).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "archive/aa_archive_conductor.h"
#include "archive/aa_archive_listings.h"
#include "archive/aa_archive_replication.h"
#include "aeron_async.h"
#include "archive/aa_archive_segment.h"
#include "archive/aa_archive_segments_mgmt.h"
#include "archive/aa_archive_replay_tokens.h"
#include "protocols/aa_udp_protocol.h"
#include "concurrent/aa_atomic.h"
#include "logbuffer/aa_logbuffer.h"
#include "util/aa_array.h"
#include "util/aa_error.h"

#define AA_NULL_POSITION (-1)
#define AA_REPLAY_LENGTH_FOLLOW (-1)
#define AA_REPLAY_LENGTH_CURRENT_END (-2)

static bool aa_is_udp(const char *channel)
{
    return 0 == strncmp(channel, "aeron:udp", 9);
}

aa_archive_recording_t *aa_archive_find_active_recording(aa_archive_conductor_t *c, int64_t recording_id)
{
    for (size_t i = 0; i < c->recording_count; i++)
    {
        if (c->recordings[i]->recording_id == recording_id)
        {
            return c->recordings[i];
        }
    }
    return NULL;
}

static int aa_count_replays_of(aa_archive_conductor_t *c, int64_t recording_id)
{
    int n = 0;
    for (size_t i = 0; i < c->replay_count; i++)
    {
        if (c->replays[i]->recording_id == recording_id)
        {
            n++;
        }
    }
    return n;
}

/* A VALID recording's descriptor (its var fields point into the catalog's mapping: valid until
 * the next recording is added). */
bool aa_archive_find_descriptor(aa_archive_conductor_t *c, int64_t recording_id, aa_archive_recording_descriptor_t *d)
{
    aa_archive_catalog_entry_t entry;
    if (recording_id < 0 || 1 != aa_archive_catalog_find(c->catalog, recording_id, &entry) ||
        AA_ARCHIVE_RECORDING_VALID != entry.state)
    {
        return false;
    }
    *d = entry.fields;
    return true;
}

int64_t aa_archive_next_recording_id(aa_archive_conductor_t *c)
{
    aa_archive_catalog_info_t info;
    aa_archive_catalog_info(c->catalog, &info);
    return info.next_recording_id;
}

/* The recorded position of a recording: its recorder's while active, else its stop position. */
int64_t aa_archive_recorded_position(aa_archive_conductor_t *c, const aa_archive_recording_descriptor_t *d)
{
    aa_archive_recording_t *r = aa_archive_find_active_recording(c, d->recording_id);
    if (NULL != r)
    {
        return aa_get_int64_acquire(&r->position);
    }
    return -1 == d->stop_position ? d->start_position : d->stop_position;
}

/* ---- start, stop and extend recording ---- */

static aa_archive_recording_subscription_t *aa_find_subscription_by_channel(
    aa_archive_conductor_t *c, const char *stripped, int32_t stream_id)
{
    for (size_t i = 0; i < c->subscription_count; i++)
    {
        aa_archive_recording_subscription_t *rs = c->subscriptions[i];
        if (!rs->stop_requested && rs->stream_id == stream_id && 0 == strcmp(rs->stripped_channel, stripped))
        {
            return rs;
        }
    }
    return NULL;
}

static int aa_storage_check(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id)
{
    struct statvfs vfs;
    if (0 == statvfs(c->archive->ctx.archive_dir, &vfs))
    {
        int64_t usable = (int64_t)vfs.f_bavail * (int64_t)vfs.f_frsize;
        if (usable < c->archive->ctx.low_storage_space_threshold)
        {
            aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_STORAGE_SPACE,
                "low storage: %" PRId64 " bytes free in %s, under the threshold of %" PRId64 " bytes; free space or lower "
                "AERON_ARCHIVE_LOW_STORAGE_SPACE_THRESHOLD", usable, c->archive->ctx.archive_dir,
                c->archive->ctx.low_storage_space_threshold);
            return -1;
        }
    }
    return 0;
}

static void aa_start_recording(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    const aa_archive_var_t *channel_var, int32_t stream_id, int32_t source_location, bool auto_stop,
    int64_t extend_recording_id)
{
    if (AA_ARCHIVE_SOURCE_LOCAL != source_location && AA_ARCHIVE_SOURCE_REMOTE != source_location)
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC,
            "unknown source location %d; use LOCAL (0) or REMOTE (1)", source_location);
        return;
    }
    if ((int32_t)c->recording_count >= c->archive->ctx.max_concurrent_recordings)
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_MAX_RECORDINGS,
            "max concurrent recordings reached (%d); stop one or raise AERON_ARCHIVE_MAX_CONCURRENT_RECORDINGS",
            c->archive->ctx.max_concurrent_recordings);
        return;
    }
    if (aa_storage_check(c, s, correlation_id) < 0)
    {
        return;
    }
    char *original = aa_archive_var_strdup(channel_var);
    char *stripped = NULL != original ? aa_archive_strip_channel(original) : NULL;
    aa_archive_recording_subscription_t *rs = calloc(1, sizeof(*rs));
    size_t sub_length = NULL != original ? strlen(original) + 16 : 0;
    char *subscribe = NULL != original ? malloc(sub_length) : NULL;
    if (NULL == original || NULL == stripped || NULL == rs || NULL == subscribe ||
        aa_array_ensure_capacity((void **)&c->subscriptions, &c->subscription_capacity, c->subscription_count,
            sizeof(*c->subscriptions)) < 0)
    {
        free(original);
        free(stripped);
        free(rs);
        free(subscribe);
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC, "%s", "out of memory");
        return;
    }
    if (NULL != aa_find_subscription_by_channel(c, stripped, stream_id))
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_ACTIVE_SUBSCRIPTION,
            "a recording subscription for %s stream %d already exists; stop it first", stripped, stream_id);
        free(original);
        free(stripped);
        free(rs);
        free(subscribe);
        return;
    }
    if (AA_ARCHIVE_SOURCE_LOCAL == source_location && aa_is_udp(original))
    {
        snprintf(subscribe, sub_length, "aeron-spy:%s", original);
    }
    else
    {
        snprintf(subscribe, sub_length, "%s", original);
    }
    rs->original_channel = original;
    rs->stripped_channel = stripped;
    rs->subscribe_channel = subscribe;
    rs->stream_id = stream_id;
    rs->auto_stop = auto_stop;
    rs->extend_recording_id = extend_recording_id;
    rs->control_session_id = s->id;
    rs->correlation_id = correlation_id;
    rs->stop_reply_correlation_id = -1;
    rs->subscription_id = -1;
    rs->async_id = aa_client_async_add_subscription(c->client, subscribe, stream_id);
    if (rs->async_id < 0)
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC, "could not subscribe to %s stream %d: %s",
            original, stream_id, aa_errmsg());
        free(original);
        free(stripped);
        free(rs);
        free(subscribe);
        return;
    }
    c->subscriptions[c->subscription_count++] = rs;
}

/* Stops a recording subscription's recordings; the OK of the request (s, correlation_id, relevant_id)
 * goes once they have stopped and the catalog holds their stop positions (the conductor's duty cycle
 * sends it as it lets the subscription go: aa_archive_lifecycles.c), or now when another stop
 * request already waits for that. */
static void aa_stop_subscription(aa_archive_conductor_t *c, aa_archive_recording_subscription_t *rs,
    aa_archive_control_session_t *s, int64_t correlation_id, int64_t relevant_id)
{
    if (rs->stop_reply_correlation_id >= 0)
    {
        aa_archive_send_ok(c, s, correlation_id, relevant_id);
    }
    else
    {
        rs->stop_reply_session_id = s->id;
        rs->stop_reply_correlation_id = correlation_id;
        rs->stop_reply_relevant_id = relevant_id;
    }
    rs->stop_requested = true;
    for (size_t i = 0; i < c->recording_count; i++)
    {
        if (c->recordings[i]->subscription_id == rs->subscription_id)
        {
            aa_put_int32_release(&c->recordings[i]->work.stop_requested, 1);
        }
    }
}

static void aa_on_stop_recording(aa_archive_conductor_t *c, aa_archive_control_session_t *s,
    const aa_archive_stop_recording_request_t *req)
{
    char *original = aa_archive_var_strdup(&req->channel);
    char *stripped = NULL != original ? aa_archive_strip_channel(original) : NULL;
    aa_archive_recording_subscription_t *rs = NULL != stripped ?
        aa_find_subscription_by_channel(c, stripped, req->stream_id) : NULL;
    if (NULL == rs)
    {
        aa_archive_send_error(c, s, req->correlation_id, AA_ARCHIVE_ERROR_UNKNOWN_SUBSCRIPTION,
            "no recording subscription for %s stream %d", NULL != original ? original : "?", req->stream_id);
    }
    else
    {
        aa_stop_subscription(c, rs, s, req->correlation_id, 0);
    }
    free(original);
    free(stripped);
}

static void aa_on_stop_recording_subscription(aa_archive_conductor_t *c, aa_archive_control_session_t *s,
    int64_t correlation_id, int64_t subscription_id)
{
    for (size_t i = 0; i < c->subscription_count; i++)
    {
        aa_archive_recording_subscription_t *rs = c->subscriptions[i];
        if (rs->subscription_id == subscription_id && !rs->stop_requested)
        {
            aa_stop_subscription(c, rs, s, correlation_id, 0);
            return;
        }
    }
    aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_UNKNOWN_SUBSCRIPTION,
        "no recording subscription with id %" PRId64, subscription_id);
}

/* The descriptor of a recording, or false once the session was told the recording is unknown. */
static bool aa_find_descriptor_or_refuse(aa_archive_conductor_t *c, aa_archive_control_session_t *s,
    int64_t correlation_id, int64_t recording_id, aa_archive_recording_descriptor_t *d)
{
    if (!aa_archive_find_descriptor(c, recording_id, d))
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_UNKNOWN_RECORDING, "unknown recording id %" PRId64,
            recording_id);
        return false;
    }
    return true;
}

/* Truncating and purging need a stopped recording: true once the session was told it is being
 * recorded (doing: "truncating", "purging"). */
static bool aa_refuse_while_recorded(aa_archive_conductor_t *c, aa_archive_control_session_t *s,
    int64_t correlation_id, int64_t recording_id, int64_t stop_position, const char *doing)
{
    if (NULL != aa_archive_find_active_recording(c, recording_id) || -1 == stop_position)
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_ACTIVE_RECORDING,
            "recording %" PRId64 " is being recorded; stop it before %s it", recording_id, doing);
        return true;
    }
    return false;
}

/* ... and no replay of it: true once the session was told it is being replayed. */
static bool aa_refuse_while_replayed(aa_archive_conductor_t *c, aa_archive_control_session_t *s,
    int64_t correlation_id, int64_t recording_id, const char *doing)
{
    if (aa_count_replays_of(c, recording_id) > 0)
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC,
            "recording %" PRId64 " is being replayed; stop its replays before %s it", recording_id, doing);
        return true;
    }
    return false;
}

static void aa_on_stop_recording_by_identity(aa_archive_conductor_t *c, aa_archive_control_session_t *s,
    int64_t correlation_id, int64_t recording_id)
{
    aa_archive_recording_descriptor_t d;
    if (!aa_find_descriptor_or_refuse(c, s, correlation_id, recording_id, &d))
    {
        return;
    }
    aa_archive_recording_t *r = aa_archive_find_active_recording(c, recording_id);
    if (NULL == r)
    {
        aa_archive_send_ok(c, s, correlation_id, 0);
        return;
    }
    bool replied = false;
    for (size_t i = 0; i < c->subscription_count; i++)
    {
        if (c->subscriptions[i]->subscription_id == r->subscription_id && !replied)
        {
            aa_stop_subscription(c, c->subscriptions[i], s, correlation_id, 1);
            replied = true;
        }
    }
    aa_put_int32_release(&r->work.stop_requested, 1);
    if (!replied)
    {
        aa_archive_send_ok(c, s, correlation_id, 1);
    }
}

static void aa_on_extend(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    int64_t recording_id, const aa_archive_var_t *channel, int32_t stream_id, int32_t source_location, bool auto_stop)
{
    aa_archive_recording_descriptor_t d;
    if (!aa_find_descriptor_or_refuse(c, s, correlation_id, recording_id, &d))
    {
        return;
    }
    if (NULL != aa_archive_find_active_recording(c, recording_id))
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_ACTIVE_RECORDING,
            "recording %" PRId64 " is being recorded; it can be extended once it has stopped", recording_id);
        return;
    }
    if (d.stream_id != stream_id)
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_INVALID_EXTENSION,
            "recording %" PRId64 " is of stream %d, not %d", recording_id, d.stream_id, stream_id);
        return;
    }
    aa_start_recording(c, s, correlation_id, channel, stream_id, source_location, auto_stop, recording_id);
}

void aa_archive_extend_recording(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    int64_t recording_id, const aa_archive_var_t *channel, int32_t stream_id, int32_t source_location, bool auto_stop)
{
    aa_on_extend(c, s, correlation_id, recording_id, channel, stream_id, source_location, auto_stop);
}

/* ---- replay ---- */

/* A position a replay or truncation may start at: 32-aligned, within the recording, and (below
 * the recorded end) the start of a frame whose header names its own term offset. */
static int aa_check_position(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    const aa_archive_recording_descriptor_t *d, int64_t position, int64_t recorded, bool allow_end)
{
    if (0 != (position & (AA_LOGBUFFER_FRAME_ALIGNMENT - 1)) || position < d->start_position ||
        position > recorded || (!allow_end && position == recorded && -1 != d->stop_position))
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_INVALID_POSITION,
            "position %" PRId64 " is not in recording %" PRId64 ": it must be a multiple of 32 from the start position %"
            PRId64 " %s the recorded position %" PRId64, position, d->recording_id, d->start_position,
            allow_end ? "up to" : "and below", recorded);
        return -1;
    }
    if (position < recorded)
    {
        int rc = aa_archive_segment_frame_at(c->archive->ctx.archive_dir, d->recording_id, d->start_position, position,
            d->initial_term_id, d->term_buffer_length, d->segment_file_length, d->stream_id);
        if (rc < 0)
        {
            aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC, "reading recording %" PRId64 ": %s",
                d->recording_id, aa_errmsg());
            return -1;
        }
        if (0 == rc)
        {
            aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_INVALID_POSITION,
                "position %" PRId64 " of recording %" PRId64 " is not the start of a frame; use a position the archive "
                "or a subscriber reported (a message's end position)", position, d->recording_id);
            return -1;
        }
    }
    return 0;
}

static void aa_on_replay(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    int64_t recording_id, int64_t position, int64_t length, int32_t bound_counter_id, int32_t stream_id,
    int32_t file_io_max_length, const aa_archive_var_t *channel_var)
{
    aa_archive_recording_descriptor_t d;
    if (!aa_archive_find_descriptor(c, recording_id, &d))
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_UNKNOWN_RECORDING,
            "unknown recording id %" PRId64 "; list the recordings to find their ids", recording_id);
        return;
    }
    /* a replay over a response channel: only with a replay token, from the client's publication whose
     * image names its replay subscription (aa_archive_replay_tokens.h) */
    int64_t response_correlation_id = -1;
    if (channel_var->length > 0 && NULL != memmem(channel_var->data, channel_var->length, "control-mode=response", 21))
    {
        if (NULL == c->request_image || c->request_image == s->image)
        {
            aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC, "%s", "a replay over a response "
                "channel (control-mode=response) needs a replay token: ask for one (ReplayTokenRequest), then send the "
                "replay with it on a publication to the control channel with response-correlation-id=<the registration "
                "id of the replay's subscription>");
            return;
        }
        response_correlation_id = c->request_image->correlation_id;
    }
    if ((int32_t)c->replay_count >= c->archive->ctx.max_concurrent_replays)
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_MAX_REPLAYS,
            "max concurrent replays reached (%d); stop one or raise AERON_ARCHIVE_MAX_CONCURRENT_REPLAYS",
            c->archive->ctx.max_concurrent_replays);
        return;
    }
    if (c->archive->ctx.max_replays_per_session > 0)
    {
        int32_t own = 0;
        for (size_t i = 0; i < c->replay_count; i++)
        {
            own += c->replays[i]->control_session_id == s->id;
        }
        if (own >= c->archive->ctx.max_replays_per_session)
        {
            aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_MAX_REPLAYS,
                "max concurrent replays of this control session reached (%d); stop one of its replays or raise "
                "AERON_ARCHIVE_MAX_REPLAYS_PER_SESSION", c->archive->ctx.max_replays_per_session);
            return;
        }
    }
    aa_archive_recording_t *active = aa_archive_find_active_recording(c, recording_id);
    int64_t recorded = aa_archive_recorded_position(c, &d);
    if (-1 == position)
    {
        position = d.start_position;
    }
    if (aa_check_position(c, s, correlation_id, &d, position, recorded, NULL != active) < 0)
    {
        return;
    }
    if (-1 != d.stop_position && position == d.stop_position)
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_EMPTY_RECORDING,
            "recording %" PRId64 " has nothing to replay from %" PRId64 " (its stop position)", recording_id, position);
        return;
    }
    int64_t end;
    if (AA_REPLAY_LENGTH_FOLLOW == length || INT64_MAX == length)
    {
        end = NULL != active ? INT64_MAX : recorded;
    }
    else if (AA_REPLAY_LENGTH_CURRENT_END == length)
    {
        end = recorded;
    }
    else if (length < 0)
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC,
            "replay length %" PRId64 " is not valid; use a length >= 0, -1 (all, following a live recording) or -2 "
            "(up to the current end)", length);
        return;
    }
    else
    {
        end = position + length;
        if (NULL == active && end > recorded)
        {
            end = recorded;
        }
    }
    char *channel = aa_archive_var_strdup(channel_var);
    aa_archive_replay_t *r = calloc(1, sizeof(*r));
    int32_t buffer_length = (int32_t)c->archive->ctx.file_io_max_length;
    if (file_io_max_length > 0 && file_io_max_length < buffer_length && file_io_max_length >= d.mtu_length)
    {
        buffer_length = file_io_max_length;
    }
    if (NULL == channel || NULL == r ||
        aa_array_ensure_capacity((void **)&c->replays, &c->replay_capacity, c->replay_count, sizeof(*c->replays)) < 0)
    {
        free(channel);
        free(r);
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC, "%s", "out of memory");
        return;
    }
    int32_t term_id = aa_compute_term_id_from_position(position, aa_position_bits_to_shift(d.term_buffer_length),
        d.initial_term_id);
    int32_t term_offset = (int32_t)(position & (d.term_buffer_length - 1));
    size_t pub_length = strlen(channel) + 256;
    char *pub_channel = malloc(pub_length);
    if (NULL == pub_channel)
    {
        free(channel);
        free(r);
        return;
    }
    /* the replay linger unless the replay channel gives one (as Aeron: a replication's live merge asks linger=0) */
    char linger[48] = "";
    if (NULL == strstr(channel, "linger="))
    {
        snprintf(linger, sizeof(linger), "|linger=%" PRId64 "ns", c->archive->ctx.replay_linger_timeout_ns);
    }
    int n = snprintf(pub_channel, pub_length, "%s%cinit-term-id=%d|term-id=%d|term-offset=%d|term-length=%d|mtu=%d%s",
        channel, NULL != strchr(channel, '?') ? '|' : '?', d.initial_term_id, term_id, term_offset,
        d.term_buffer_length, d.mtu_length, linger);
    if (response_correlation_id >= 0)
    {
        snprintf(pub_channel + n, pub_length - (size_t)n, "|response-correlation-id=%" PRId64, response_correlation_id);
    }
    r->work.do_work = aa_archive_replay_do_work;
    r->work.session = r;
    r->control_session_id = s->id;
    r->correlation_id = correlation_id;
    r->recording_id = recording_id;
    r->position = position;
    r->end_position = end;
    r->live_counter_id = NULL != active ? active->rec_pos_id : -1;
    r->bound_counter_id = bound_counter_id;
    r->stop_position = NULL != active ? -1 : recorded;
    r->initial_term_id = d.initial_term_id;
    r->term_length = d.term_buffer_length;
    r->segment_length = d.segment_file_length;
    r->stream_id = stream_id;
    r->start_term_base = d.start_position - (d.start_position & (d.term_buffer_length - 1));
    r->checksum = c->archive->ctx.replay_checksum;
    r->segment_fd = -1;
    r->segment_base = -1;
    r->buffer_length = buffer_length;
    r->replay_session_id = -1;
    snprintf(r->archive_dir, sizeof(r->archive_dir), "%s", c->archive->ctx.archive_dir);
    r->async_id = aa_client_async_add_publication(c->client, pub_channel, stream_id, true);
    if (r->async_id < 0)
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC,
            "could not publish the replay on %s stream %d: %s", channel, stream_id, aa_errmsg());
        free(channel);
        free(pub_channel);
        free(r);
        return;
    }
    free(channel);
    free(pub_channel);
    c->replays[c->replay_count++] = r;
}

static void aa_on_stop_replay(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    int64_t replay_session_id)
{
    for (size_t i = 0; i < c->replay_count; i++)
    {
        if (c->replays[i]->replay_session_id == replay_session_id)
        {
            aa_put_int32_release(&c->replays[i]->work.stop_requested, 1);
            aa_archive_send_ok(c, s, correlation_id, 0);
            return;
        }
    }
    aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_UNKNOWN_REPLAY,
        "no active replay with session id %" PRId64, replay_session_id);
}

static void aa_stop_replays_of(aa_archive_conductor_t *c, int64_t recording_id)
{
    for (size_t i = 0; i < c->replay_count; i++)
    {
        if (-1 == recording_id || c->replays[i]->recording_id == recording_id)
        {
            aa_put_int32_release(&c->replays[i]->work.stop_requested, 1);
        }
    }
}

/* ---- truncate and purge ---- */

/* Truncation on disk: the segment holding position keeps what is before it (the rest zeroed, so a
 * recovery scan ends there), later segments are deleted; at the start position, all of them. */
static int aa_truncate_segments(aa_archive_conductor_t *c, const aa_archive_recording_descriptor_t *d, int64_t position)
{
    const char *dir = c->archive->ctx.archive_dir;
    int32_t sync = c->archive->ctx.file_sync_level;
    if (position == d->start_position)
    {
        return aa_archive_segment_delete_from(dir, d->recording_id, INT64_MIN, sync) < 0 ? -1 : 0;
    }
    int64_t base = aa_archive_segment_base_position(d->start_position, position, d->term_buffer_length,
        d->segment_file_length);
    int64_t offset = position - base;
    if (0 == offset)
    {
        return aa_archive_segment_delete_from(dir, d->recording_id, base, sync) < 0 ? -1 : 0;
    }
    if (aa_archive_segment_delete_from(dir, d->recording_id, base + d->segment_file_length, sync) < 0)
    {
        return -1;
    }
    int fd = aa_archive_segment_open(dir, d->recording_id, base, d->segment_file_length, 0, sync);
    if (fd < 0)
    {
        return -1;
    }
    int64_t end = d->stop_position - base < d->segment_file_length ? d->stop_position - base : d->segment_file_length;
    int rc = end > offset ? aa_archive_segment_erase(fd, offset, end - offset, sync) : 0;
    close(fd);
    return rc;
}

static void aa_on_truncate(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    int64_t recording_id, int64_t position)
{
    aa_archive_recording_descriptor_t d;
    if (!aa_find_descriptor_or_refuse(c, s, correlation_id, recording_id, &d))
    {
        return;
    }
    if (aa_refuse_while_recorded(c, s, correlation_id, recording_id, d.stop_position, "truncating"))
    {
        return;
    }
    if (aa_check_position(c, s, correlation_id, &d, position, d.stop_position, true) < 0)
    {
        return;
    }
    if (aa_refuse_while_replayed(c, s, correlation_id, recording_id, "truncating"))
    {
        return;
    }
    /* the catalog first, then the files (docs/security.md, Disks): a crash or a failure in between
     * leaves a catalog that claims nothing the files no longer hold, only bytes past its stop
     * position that nothing reads (as Aeron's truncateRecording orders it) */
    if (aa_archive_catalog_update_stop(c->catalog, recording_id, position, aa_archive_now_ms(c)) < 0)
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC, "truncating recording %" PRId64 ": %s",
            recording_id, aa_errmsg());
        return;
    }
    if (aa_truncate_segments(c, &d, position) < 0)
    {
        char message[1024];
        snprintf(message, sizeof(message), "truncating recording %" PRId64 ": the catalog now stops it at %" PRId64
            " but its segment files past that could not all be removed (%s); nothing reads them, delete them from %s "
            "when the cause is fixed", recording_id, position, aa_errmsg(), c->archive->ctx.archive_dir);
        aa_archive_log_error(c->archive, AA_ERROR_CODE_GENERIC_ERROR, "%s", message);
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC, "%s", message);
        return;
    }
    aa_archive_send_ok(c, s, correlation_id, 0);
    aa_archive_send_signal(c, s->id, correlation_id, recording_id, -1, position, AA_ARCHIVE_SIGNAL_DELETE);
}

static void aa_on_purge(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    int64_t recording_id)
{
    aa_archive_recording_descriptor_t d;
    if (!aa_find_descriptor_or_refuse(c, s, correlation_id, recording_id, &d))
    {
        return;
    }
    if (aa_refuse_while_recorded(c, s, correlation_id, recording_id, d.stop_position, "purging"))
    {
        return;
    }
    if (aa_refuse_while_replayed(c, s, correlation_id, recording_id, "purging"))
    {
        return;
    }
    if (aa_archive_catalog_change_state(c->catalog, recording_id, AA_ARCHIVE_RECORDING_DELETED) < 0)
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC, "purging recording %" PRId64 ": %s",
            recording_id, aa_errmsg());
        return;
    }
    int32_t deleted = aa_archive_segment_delete_from(c->archive->ctx.archive_dir, recording_id, INT64_MIN,
        c->archive->ctx.file_sync_level);
    if (deleted < 0)
    {
        aa_archive_log_error(c->archive, AA_ERROR_CODE_GENERIC_ERROR, "purge of recording %" PRId64 ": %s", recording_id,
            aa_errmsg());
        deleted = 0;
    }
    aa_archive_send_ok(c, s, correlation_id, deleted); /* the segment files deleted */
    aa_archive_send_signal(c, s->id, correlation_id, recording_id, -1, d.stop_position, AA_ARCHIVE_SIGNAL_DELETE);
}

/* ---- positions ---- */

static void aa_on_position(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    int64_t recording_id, int32_t template_id)
{
    aa_archive_recording_descriptor_t d;
    if (!aa_find_descriptor_or_refuse(c, s, correlation_id, recording_id, &d))
    {
        return;
    }
    aa_archive_recording_t *active = aa_archive_find_active_recording(c, recording_id);
    int64_t value;
    switch (template_id)
    {
        case AA_ARCHIVE_TEMPLATE_RECORDING_POSITION_REQUEST:
            value = NULL != active ? aa_get_int64_acquire(&active->position) : AA_NULL_POSITION;
            break;
        case AA_ARCHIVE_TEMPLATE_STOP_POSITION_REQUEST:
            value = NULL != active ? AA_NULL_POSITION : d.stop_position;
            break;
        case AA_ARCHIVE_TEMPLATE_START_POSITION_REQUEST:
            value = d.start_position;
            break;
        default: /* MaxRecordedPosition */
            value = aa_archive_recorded_position(c, &d);
            break;
    }
    aa_archive_send_ok(c, s, correlation_id, value);
}

/* Why a request is refused, per request type (docs/architecture.md, "Replays over response channels"). */
static const char *aa_unsupported_reason(int32_t template_id)
{
    switch (template_id)
    {
        case AA_ARCHIVE_TEMPLATE_UPDATE_CHANNEL_REQUEST:
            return " (channel updates are not implemented)";
        default:
            return "";
    }
}

void aa_archive_on_request(aa_archive_conductor_t *c, aa_archive_control_session_t *s, const aa_archive_message_t *msg)
{
    switch (msg->template_id)
    {
        case AA_ARCHIVE_TEMPLATE_START_RECORDING_REQUEST:
        {
            const aa_archive_start_recording_request_t *r = &msg->start_recording_request;
            aa_start_recording(c, s, r->correlation_id, &r->channel, r->stream_id, r->source_location, false, -1);
            break;
        }
        case AA_ARCHIVE_TEMPLATE_START_RECORDING_REQUEST2:
        {
            const aa_archive_start_recording_request2_t *r = &msg->start_recording_request2;
            aa_start_recording(c, s, r->correlation_id, &r->channel, r->stream_id, r->source_location,
                AA_ARCHIVE_TRUE == r->auto_stop, -1);
            break;
        }
        case AA_ARCHIVE_TEMPLATE_STOP_RECORDING_REQUEST:
            aa_on_stop_recording(c, s, &msg->stop_recording_request);
            break;
        case AA_ARCHIVE_TEMPLATE_STOP_RECORDING_SUBSCRIPTION_REQUEST:
            aa_on_stop_recording_subscription(c, s, msg->stop_recording_subscription_request.correlation_id,
                msg->stop_recording_subscription_request.subscription_id);
            break;
        case AA_ARCHIVE_TEMPLATE_STOP_RECORDING_BY_IDENTITY_REQUEST:
            aa_on_stop_recording_by_identity(c, s, msg->stop_recording_by_identity_request.correlation_id,
                msg->stop_recording_by_identity_request.recording_id);
            break;
        case AA_ARCHIVE_TEMPLATE_EXTEND_RECORDING_REQUEST:
        {
            const aa_archive_extend_recording_request_t *r = &msg->extend_recording_request;
            aa_on_extend(c, s, r->correlation_id, r->recording_id, &r->channel, r->stream_id, r->source_location, false);
            break;
        }
        case AA_ARCHIVE_TEMPLATE_EXTEND_RECORDING_REQUEST2:
        {
            const aa_archive_extend_recording_request2_t *r = &msg->extend_recording_request2;
            aa_on_extend(c, s, r->correlation_id, r->recording_id, &r->channel, r->stream_id, r->source_location,
                AA_ARCHIVE_TRUE == r->auto_stop);
            break;
        }
        case AA_ARCHIVE_TEMPLATE_REPLAY_REQUEST:
        {
            const aa_archive_replay_request_t *r = &msg->replay_request;
            aa_on_replay(c, s, r->correlation_id, r->recording_id, r->position, r->length, -1, r->replay_stream_id,
                r->file_io_max_length, &r->replay_channel);
            break;
        }
        case AA_ARCHIVE_TEMPLATE_BOUNDED_REPLAY_REQUEST:
        {
            const aa_archive_bounded_replay_request_t *r = &msg->bounded_replay_request;
            aa_on_replay(c, s, r->correlation_id, r->recording_id, r->position, r->length, r->limit_counter_id,
                r->replay_stream_id, r->file_io_max_length, &r->replay_channel);
            break;
        }
        case AA_ARCHIVE_TEMPLATE_STOP_REPLAY_REQUEST:
            aa_on_stop_replay(c, s, msg->stop_replay_request.correlation_id, msg->stop_replay_request.replay_session_id);
            break;
        case AA_ARCHIVE_TEMPLATE_STOP_ALL_REPLAYS_REQUEST:
            aa_stop_replays_of(c, msg->stop_all_replays_request.recording_id);
            aa_archive_send_ok(c, s, msg->stop_all_replays_request.correlation_id, 0);
            break;
        case AA_ARCHIVE_TEMPLATE_LIST_RECORDINGS_REQUEST:
            aa_archive_on_list_recordings(c, s, msg->list_recordings_request.correlation_id,
                msg->list_recordings_request.from_recording_id, msg->list_recordings_request.record_count, false, 0, NULL);
            break;
        case AA_ARCHIVE_TEMPLATE_LIST_RECORDINGS_FOR_URI_REQUEST:
        {
            const aa_archive_list_recordings_for_uri_request_t *r = &msg->list_recordings_for_uri_request;
            aa_archive_on_list_recordings(c, s, r->correlation_id, r->from_recording_id, r->record_count, true,
                r->stream_id, &r->channel);
            break;
        }
        case AA_ARCHIVE_TEMPLATE_LIST_RECORDING_REQUEST:
        {
            const aa_archive_list_recording_request_t *r = &msg->list_recording_request;
            aa_archive_recording_descriptor_t d;
            if (aa_archive_find_descriptor(c, r->recording_id, &d))
            {
                aa_archive_send_descriptor(c, s, r->correlation_id, r->recording_id);
            }
            else
            {
                aa_archive_send_response(c, s, r->correlation_id, r->recording_id, AA_ARCHIVE_RESPONSE_RECORDING_UNKNOWN,
                    NULL);
            }
            break;
        }
        case AA_ARCHIVE_TEMPLATE_FIND_LAST_MATCHING_RECORDING_REQUEST:
            aa_archive_on_find_last_matching(c, s, &msg->find_last_matching_recording_request);
            break;
        case AA_ARCHIVE_TEMPLATE_LIST_RECORDING_SUBSCRIPTIONS_REQUEST:
            aa_archive_on_list_recording_subscriptions(c, s, &msg->list_recording_subscriptions_request);
            break;
        case AA_ARCHIVE_TEMPLATE_RECORDING_POSITION_REQUEST:
            aa_on_position(c, s, msg->recording_position_request.correlation_id,
                msg->recording_position_request.recording_id, msg->template_id);
            break;
        case AA_ARCHIVE_TEMPLATE_STOP_POSITION_REQUEST:
            aa_on_position(c, s, msg->stop_position_request.correlation_id, msg->stop_position_request.recording_id,
                msg->template_id);
            break;
        case AA_ARCHIVE_TEMPLATE_START_POSITION_REQUEST:
            aa_on_position(c, s, msg->start_position_request.correlation_id, msg->start_position_request.recording_id,
                msg->template_id);
            break;
        case AA_ARCHIVE_TEMPLATE_MAX_RECORDED_POSITION_REQUEST:
            aa_on_position(c, s, msg->max_recorded_position_request.correlation_id,
                msg->max_recorded_position_request.recording_id, msg->template_id);
            break;
        case AA_ARCHIVE_TEMPLATE_ARCHIVE_ID_REQUEST:
            aa_archive_send_ok(c, s, msg->archive_id_request.correlation_id, c->archive->archive_id);
            break;
        case AA_ARCHIVE_TEMPLATE_TRUNCATE_RECORDING_REQUEST:
            aa_on_truncate(c, s, msg->truncate_recording_request.correlation_id,
                msg->truncate_recording_request.recording_id, msg->truncate_recording_request.position);
            break;
        case AA_ARCHIVE_TEMPLATE_PURGE_RECORDING_REQUEST:
            aa_on_purge(c, s, msg->purge_recording_request.correlation_id, msg->purge_recording_request.recording_id);
            break;
        case AA_ARCHIVE_TEMPLATE_REPLICATE_REQUEST:
        case AA_ARCHIVE_TEMPLATE_TAGGED_REPLICATE_REQUEST:
        case AA_ARCHIVE_TEMPLATE_REPLICATE_REQUEST2:
        case AA_ARCHIVE_TEMPLATE_STOP_REPLICATION_REQUEST:
            aa_archive_on_replication_request(c, s, msg);
            break;
        case AA_ARCHIVE_TEMPLATE_REPLAY_TOKEN_REQUEST:
            aa_archive_on_replay_token_request(c, s, msg->replay_token_request.correlation_id,
                msg->replay_token_request.recording_id);
            break;
        case AA_ARCHIVE_TEMPLATE_DETACH_SEGMENTS_REQUEST:
        case AA_ARCHIVE_TEMPLATE_DELETE_DETACHED_SEGMENTS_REQUEST:
        case AA_ARCHIVE_TEMPLATE_PURGE_SEGMENTS_REQUEST:
        case AA_ARCHIVE_TEMPLATE_ATTACH_SEGMENTS_REQUEST:
        case AA_ARCHIVE_TEMPLATE_MIGRATE_SEGMENTS_REQUEST:
            aa_archive_on_segments_request(c, s, msg);
            break;
        default:
        {
            /* every request starts with controlSessionId, correlationId: the codecs keep that layout */
            int64_t correlation_id = msg->keep_alive_request.correlation_id;
            const char *name = aa_archive_template_name(msg->template_id);
            aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC, "%s (template %d) is not supported "
                "by this archive%s", NULL != name ? name : "unknown request", msg->template_id,
                aa_unsupported_reason(msg->template_id));
            break;
        }
    }
}
