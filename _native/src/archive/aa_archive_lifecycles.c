/*
 * The archive conductor's side of recordings and replays: an image on a recording subscription
 * becomes a recording (catalog entry, rec-pos counter, START/EXTEND signal) handed to the
 * recorder; replays are handed to the replayer once their publication exists; sessions the
 * workers let go of are finished here (stop position, signals, closing client resources). Also
 * the crash recovery at start and closing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/aa_archive_conductor.h"
#include "archive/aa_archive_replication.h"
#include "aeron_async.h"
#include "archive/aa_archive_segment.h"
#include "concurrent/aa_atomic.h"
#include "logbuffer/aa_logbuffer.h"
#include "util/aa_array.h"
#include "util/aa_error.h"

#define AA_NULL_POSITION (-1)

void aa_archive_on_recording_image(aa_archive_conductor_t *c, aa_archive_recording_subscription_t *rs, aa_image_t *image)
{
    aa_image_info_t info;
    aa_image_describe(image, &info);
    aa_archive_control_session_t *s = aa_archive_find_session(c, rs->control_session_id);
    const aa_archive_context_t *ctx = &c->archive->ctx;
    int64_t join = aa_image_position(image);
    int32_t segment_length = (int32_t)(ctx->segment_file_length > info.term_length ?
        ctx->segment_file_length : info.term_length);
    int64_t recording_id;
    int64_t start_position = join;
    int32_t signal = AA_ARCHIVE_SIGNAL_START;
    if (rs->extend_recording_id >= 0)
    {
        aa_archive_recording_descriptor_t d;
        if (!aa_archive_find_descriptor(c, rs->extend_recording_id, &d) || NULL != aa_archive_find_active_recording(c, d.recording_id))
        {
            return;
        }
        if (d.initial_term_id != info.initial_term_id || d.term_buffer_length != info.term_length ||
            d.mtu_length != info.mtu_length || d.stop_position != join)
        {
            if (NULL != s)
            {
                aa_archive_send_error(c, s, rs->correlation_id, AA_ARCHIVE_ERROR_INVALID_EXTENSION,
                    "cannot extend recording %" PRId64 ": the image joins at %" PRId64 " with initial term id %d, term "
                    "length %d, mtu %d; the recording stopped at %" PRId64 " with %d, %d, %d (publish with "
                    "init-term-id, term-id and term-offset at its stop position)", d.recording_id, join,
                    info.initial_term_id, info.term_length, info.mtu_length, d.stop_position, d.initial_term_id,
                    d.term_buffer_length, d.mtu_length);
            }
            return;
        }
        recording_id = d.recording_id;
        start_position = d.start_position;
        segment_length = d.segment_file_length;
        if (aa_archive_catalog_extend(c->catalog, recording_id, rs->control_session_id, rs->correlation_id,
            info.session_id) < 0)
        {
            aa_archive_log_error(c->archive, AA_ERROR_CODE_GENERIC_ERROR, "extend recording %" PRId64 ": %s",
                recording_id, aa_errmsg());
            return;
        }
        signal = AA_ARCHIVE_SIGNAL_EXTEND;
    }
    else
    {
        aa_archive_recording_descriptor_t d;
        memset(&d, 0, sizeof(d));
        /* Aeron stores 0 for the control session and correlation ids (listings overwrite them) */
        d.start_timestamp = aa_archive_now_ms(c);
        d.stop_timestamp = AA_ARCHIVE_NULL_TIMESTAMP;
        d.start_position = join;
        d.stop_position = AA_NULL_POSITION;
        d.initial_term_id = info.initial_term_id;
        d.segment_file_length = segment_length;
        d.term_buffer_length = info.term_length;
        d.mtu_length = info.mtu_length;
        d.session_id = info.session_id;
        d.stream_id = info.stream_id;
        d.stripped_channel.data = (const uint8_t *)rs->stripped_channel;
        d.stripped_channel.length = (uint32_t)strlen(rs->stripped_channel);
        d.original_channel.data = (const uint8_t *)rs->original_channel;
        d.original_channel.length = (uint32_t)strlen(rs->original_channel);
        d.source_identity.data = (const uint8_t *)info.source_identity;
        d.source_identity.length = (uint32_t)strlen(info.source_identity);
        recording_id = aa_archive_catalog_add(c->catalog, &d);
        if (recording_id < 0)
        {
            /* a catalog that cannot grow on a full disk: the archive's STORAGE_SPACE (docs/security.md, Disks) */
            bool no_space = AA_ERROR_CODE_STORAGE_SPACE == aa_errcode();
            aa_archive_log_error(c->archive, no_space ? AA_ERROR_CODE_STORAGE_SPACE : AA_ERROR_CODE_GENERIC_ERROR,
                "could not add a recording to the catalog: %s", aa_errmsg());
            if (NULL != s)
            {
                aa_archive_send_error(c, s, rs->correlation_id,
                    no_space ? AA_ARCHIVE_ERROR_STORAGE_SPACE : AA_ARCHIVE_ERROR_GENERIC,
                    "could not add a recording to the catalog: %s", aa_errmsg());
            }
            return;
        }
    }
    aa_archive_recording_t *r = calloc(1, sizeof(*r));
    if (NULL == r ||
        aa_array_ensure_capacity((void **)&c->recordings, &c->recording_capacity, c->recording_count,
            sizeof(*c->recordings)) < 0)
    {
        free(r);
        return;
    }
    r->work.do_work = aa_archive_recording_do_work;
    r->work.session = r;
    r->recording_id = recording_id;
    r->subscription_id = rs->subscription_id;
    r->control_session_id = rs->control_session_id;
    r->correlation_id = rs->correlation_id;
    r->image = image;
    r->start_position = start_position;
    r->position = join;
    r->write_position = join;
    r->initial_term_id = info.initial_term_id;
    r->term_length = info.term_length;
    r->segment_length = segment_length;
    r->stream_id = info.stream_id;
    r->session_id = info.session_id;
    r->sync_level = ctx->file_sync_level;
    r->checksum = ctx->record_checksum;
    r->segment_fd = -1;
    r->segment_base = -1;
    r->start_term_base = start_position - (start_position & (info.term_length - 1));
    r->is_extension = AA_ARCHIVE_SIGNAL_EXTEND == signal;
    r->rec_pos_id = -1;
    snprintf(r->archive_dir, sizeof(r->archive_dir), "%s", ctx->archive_dir);
    /* rec-pos (type 100): key recordingId, sessionId, source identity, archiveId */
    uint8_t key[112];
    size_t src_len = strlen(info.source_identity);
    if (src_len > sizeof(key) - 24)
    {
        src_len = sizeof(key) - 24;
    }
    int32_t src_len32 = (int32_t)src_len;
    memcpy(key, &recording_id, 8);
    memcpy(key + 8, &info.session_id, 4);
    memcpy(key + 12, &src_len32, 4);
    memcpy(key + 16, info.source_identity, src_len);
    memcpy(key + 16 + src_len, &c->archive->archive_id, 8);
    char label[380];
    int label_length = snprintf(label, sizeof(label), "rec-pos: %" PRId64 " %d %d %s - archiveId=%" PRId64, recording_id,
        info.session_id, info.stream_id, rs->stripped_channel, c->archive->archive_id);
    if (label_length >= (int)sizeof(label))
    {
        label_length = (int)sizeof(label) - 1;
    }
    r->rec_pos_registration = aa_client_async_add_counter(c->client, AA_ARCHIVE_REC_POS_TYPE_ID, key, 24 + src_len,
        label, (size_t)label_length);
    if (r->rec_pos_registration < 0)
    {
        aa_archive_log_error(c->archive, AA_ERROR_CODE_GENERIC_ERROR, "rec-pos counter of recording %" PRId64 ": %s",
            recording_id, aa_errmsg());
        free(r);
        return;
    }
    c->recordings[c->recording_count++] = r;
    rs->recording_count++;
    aa_archive_send_signal(c, rs->control_session_id, rs->correlation_id, recording_id, rs->subscription_id,
        AA_ARCHIVE_SIGNAL_START == signal ? start_position : join, signal);
}

/* ---- the conductor's duty cycle over recordings and replays ---- */

static void aa_finish_recording(aa_archive_conductor_t *c, aa_archive_recording_t *r)
{
    aa_archive_recording_close_files(r); /* lets the syncer finish: the position is final after it */
    int64_t stop = aa_get_int64_acquire(&r->position);
    if (aa_archive_catalog_update_stop(c->catalog, r->recording_id, stop, aa_archive_now_ms(c)) < 0)
    {
        aa_archive_log_error(c->archive, AA_ERROR_CODE_GENERIC_ERROR, "recording %" PRId64 ": stop position %" PRId64
            " not written to the catalog: %s", r->recording_id, stop, aa_errmsg());
    }
    /* live replays end here: the stop position is set before rec-pos is let go */
    for (size_t i = 0; i < c->replay_count; i++)
    {
        if (c->replays[i]->recording_id == r->recording_id)
        {
            aa_put_int64_release(&c->replays[i]->stop_position, stop);
        }
    }
    if (NULL != r->rec_pos)
    {
        aa_counter_close(r->rec_pos);
    }
    aa_archive_control_session_t *s = aa_archive_find_session(c, r->control_session_id);
    if (0 != r->error_code && NULL != s)
    {
        aa_archive_send_error(c, s, r->correlation_id, AA_ERROR_CODE_STORAGE_SPACE == r->error_code ?
            AA_ARCHIVE_ERROR_STORAGE_SPACE : AA_ARCHIVE_ERROR_GENERIC, "%s", r->error);
    }
    aa_archive_send_signal(c, r->control_session_id, r->correlation_id, r->recording_id, r->subscription_id, stop,
        AA_ARCHIVE_SIGNAL_STOP);
    for (size_t i = 0; i < c->subscription_count; i++)
    {
        aa_archive_recording_subscription_t *rs = c->subscriptions[i];
        if (rs->subscription_id == r->subscription_id)
        {
            rs->recording_count--;
            if (rs->auto_stop || rs->extend_recording_id >= 0 || 0 != r->error_code)
            {
                rs->stop_requested = true;
            }
        }
    }
    free(r->checksum_buffer);
    free(r);
}

int aa_archive_conductor_check_recordings(aa_archive_conductor_t *c)
{
    int work = 0;
    for (size_t i = 0; i < c->subscription_count;)
    {
        aa_archive_recording_subscription_t *rs = c->subscriptions[i];
        if (NULL == rs->subscription && rs->async_id >= 0)
        {
            int rc = aa_client_async_add_subscription_poll(c->client, rs->async_id, &rs->subscription);
            aa_archive_control_session_t *s = aa_archive_find_session(c, rs->control_session_id);
            if (rc < 0)
            {
                if (NULL != s)
                {
                    aa_archive_send_error(c, s, rs->correlation_id, AA_ARCHIVE_ERROR_GENERIC,
                        "could not subscribe to %s stream %d: %s", rs->original_channel, rs->stream_id, aa_errmsg());
                }
                rs->async_id = -1;
                rs->stop_requested = true;
            }
            else if (1 == rc)
            {
                rs->subscription_id = rs->async_id;
                rs->async_id = -1;
                if (NULL != s)
                {
                    aa_archive_send_ok(c, s, rs->correlation_id, rs->subscription_id);
                }
            }
            work++;
        }
        if (NULL != rs->subscription && !rs->stop_requested)
        {
            aa_image_event_t events[16];
            int32_t n = aa_subscription_take_image_events(rs->subscription, events, 16);
            for (int32_t k = 0; k < n; k++)
            {
                if (AA_IMAGE_EVENT_AVAILABLE == events[k].type)
                {
                    aa_archive_on_recording_image(c, rs, events[k].image);
                }
            }
            work += n;
        }
        if (rs->stop_requested && 0 == rs->recording_count && rs->async_id < 0)
        {
            if (NULL != rs->subscription)
            {
                aa_subscription_close(rs->subscription);
            }
            aa_archive_control_session_t *stopper = rs->stop_reply_correlation_id >= 0 ?
                aa_archive_find_session(c, rs->stop_reply_session_id) : NULL;
            if (NULL != stopper) /* its recordings stopped: the catalog has their stop positions */
            {
                aa_archive_send_ok(c, stopper, rs->stop_reply_correlation_id, rs->stop_reply_relevant_id);
            }
            c->subscriptions[i] = c->subscriptions[--c->subscription_count];
            free(rs->original_channel);
            free(rs->stripped_channel);
            free(rs->subscribe_channel);
            free(rs);
            work++;
            continue;
        }
        i++;
    }
    for (size_t i = 0; i < c->recording_count;)
    {
        aa_archive_recording_t *r = c->recordings[i];
        if (!r->started)
        {
            if (NULL == r->rec_pos)
            {
                int rc = aa_client_async_add_counter_poll(c->client, r->rec_pos_registration, &r->rec_pos);
                if (rc < 0)
                {
                    snprintf(r->error, sizeof(r->error), "could not add its rec-pos counter: %s", aa_errmsg());
                    r->error_code = AA_ERROR_CODE_GENERIC_ERROR;
                    aa_archive_log_error(c->archive, AA_ERROR_CODE_GENERIC_ERROR, "recording %" PRId64 ": %s",
                        r->recording_id, r->error);
                    aa_put_int32_release(&r->work.state, AA_ARCHIVE_SESSION_DONE);
                    r->started = true;
                }
                else if (1 == rc)
                {
                    r->rec_pos_id = aa_counter_id(r->rec_pos);
                    aa_counter_set(r->rec_pos, r->position);
                    for (size_t k = 0; k < c->replay_count; k++)
                    {
                        if (c->replays[k]->recording_id == r->recording_id && c->replays[k]->live_counter_id < 0)
                        {
                            c->replays[k]->live_counter_id = r->rec_pos_id;
                        }
                    }
                    r->started = true;
                    if (aa_archive_worker_add(&c->archive->recorder, &r->work) < 0)
                    {
                        aa_put_int32_release(&r->work.state, AA_ARCHIVE_SESSION_DONE);
                    }
                }
                work++;
            }
        }
        if (r->started && AA_ARCHIVE_SESSION_DONE == aa_get_int32_acquire(&r->work.state))
        {
            c->recordings[i] = c->recordings[--c->recording_count];
            aa_archive_replications_on_recording_end(c, r);
            aa_finish_recording(c, r);
            work++;
            continue;
        }
        i++;
    }
    return work;
}

static void aa_free_replay(aa_archive_replay_t *r)
{
    aa_archive_replay_close_files(r);
    if (NULL != r->publication)
    {
        aa_publication_close(r->publication);
    }
    free(r);
}

int aa_archive_conductor_check_replays(aa_archive_conductor_t *c)
{
    int work = 0;
    for (size_t i = 0; i < c->replay_count;)
    {
        aa_archive_replay_t *r = c->replays[i];
        aa_archive_control_session_t *s = aa_archive_find_session(c, r->control_session_id);
        if (!r->started)
        {
            int rc = aa_client_async_add_publication_poll(c->client, r->async_id, &r->publication);
            if (0 == rc && !aa_get_int32_acquire(&r->work.stop_requested))
            {
                i++;
                continue;
            }
            work++;
            if (1 != rc)
            {
                if (rc < 0 && NULL != s)
                {
                    aa_archive_send_error(c, s, r->correlation_id, AA_ARCHIVE_ERROR_GENERIC,
                        "could not publish the replay: %s", aa_errmsg());
                }
                if (0 == rc)
                {
                    i++; /* stopped while being added: wait for the publication, then close it */
                    continue;
                }
                c->replays[i] = c->replays[--c->replay_count];
                aa_free_replay(r);
                continue;
            }
            int32_t pub_session_id, pub_stream_id, max_message, max_payload, term_length, initial_term_id, limit_id;
            int64_t registration_id;
            aa_publication_describe(r->publication, &registration_id, &pub_session_id, &pub_stream_id, &max_message,
                &max_payload, &term_length, &initial_term_id, &limit_id);
            r->session_id = pub_session_id;
            r->replay_session_id = (int64_t)((uint64_t)(++c->replay_counter) << 32) | (uint32_t)pub_session_id;
            r->connect_deadline_ns = aa_archive_now_ns(c) + c->archive->ctx.connect_timeout_ns;
            r->started = true;
            if (NULL != s)
            {
                aa_archive_send_ok(c, s, r->correlation_id, r->replay_session_id);
            }
            if (aa_get_int32_acquire(&r->work.stop_requested) || aa_archive_worker_add(&c->archive->replayer, &r->work) < 0)
            {
                c->replays[i] = c->replays[--c->replay_count];
                aa_free_replay(r);
                continue;
            }
        }
        if (AA_ARCHIVE_SESSION_DONE == aa_get_int32_acquire(&r->work.state))
        {
            if (0 != r->error_code && NULL != s)
            {
                aa_archive_send_error(c, s, r->correlation_id, r->error_code, "replay %" PRId64 ": %s",
                    r->replay_session_id, r->error);
            }
            c->replays[i] = c->replays[--c->replay_count];
            aa_free_replay(r);
            work++;
            continue;
        }
        i++;
    }
    return work;
}

/* Crash recovery: a VALID recording without a stop position was being recorded when the archive
 * stopped: its stop position is the end of the last whole frame in its last segment. */
int aa_archive_recover(aa_archive_conductor_t *c)
{
    int64_t next = aa_archive_next_recording_id(c);
    for (int64_t id = 0; id < next; id++)
    {
        aa_archive_recording_descriptor_t d;
        if (!aa_archive_find_descriptor(c, id, &d) || -1 != d.stop_position)
        {
            continue;
        }
        aa_archive_recovery_t recovery;
        if (aa_archive_segment_recover(c->archive->ctx.archive_dir, id, d.start_position, d.initial_term_id,
            d.term_buffer_length, d.segment_file_length, d.stream_id, c->archive->ctx.record_checksum, true,
            c->archive->ctx.file_sync_level, &recovery) < 0)
        {
            AA_APPEND_ERR("recovering the stop position of recording %" PRId64, id);
            return -1;
        }
        int64_t stop = recovery.stop_position;
        if (recovery.torn_frame)
        {
            aa_archive_log_error(c->archive, AA_ERROR_CODE_GENERIC_ERROR,
                "recovery of recording %" PRId64 ": the frame at %" PRId64 " (%d bytes) was cut short by the crash and "
                "is not part of the recording; its stop position is %" PRId64, id, recovery.torn_frame_position,
                recovery.torn_frame_length, stop);
        }
        if (aa_archive_catalog_update_stop(c->catalog, id, stop, aa_archive_now_ms(c)) < 0)
        {
            return -1;
        }
    }
    return 0;
}

/* Closing: stop every recording and replay, wait for nothing (the workers' threads are stopped
 * by now), write the recordings' stop positions. */
void aa_archive_conductor_close_all(aa_archive_conductor_t *c)
{
    while (c->recording_count > 0)
    {
        aa_archive_recording_t *r = c->recordings[--c->recording_count];
        aa_finish_recording(c, r);
    }
    free(c->recordings);
    c->recordings = NULL;
    while (c->replay_count > 0)
    {
        aa_free_replay(c->replays[--c->replay_count]);
    }
    free(c->replays);
    c->replays = NULL;
    for (size_t i = 0; i < c->subscription_count; i++)
    {
        aa_archive_recording_subscription_t *rs = c->subscriptions[i];
        if (NULL != rs->subscription)
        {
            aa_subscription_close(rs->subscription);
        }
        free(rs->original_channel);
        free(rs->stripped_channel);
        free(rs->subscribe_channel);
        free(rs);
    }
    free(c->subscriptions);
    c->subscriptions = NULL;
    c->subscription_count = 0;
}
