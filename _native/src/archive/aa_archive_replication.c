/*
 * Replication between archives: Aeron's ReplicationSession (reference aeron-wave3.md 7.2) as a step
 * of the archive conductor's duty cycle: the state machine. This archive (the destination) is a
 * client of the source archive (aa_archive_replication_source.c): it lists the source recording,
 * asks its RecordingPosition when merging live, then a Replay of it to the replication channel,
 * which this archive records as an extension of the destination recording (a new one copies the
 * source's descriptor, start = stop = the source's start). Nothing here blocks: every step polls and
 * moves on (docs/architecture.md, "Replication").
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/aa_archive_replication_session.h"
#include "aeron_async.h"
#include "concurrent/aa_atomic.h"
#include "util/aa_error.h"

static void aa_repl_signal(aa_archive_conductor_t *c, aa_archive_replication_t *r, int64_t position, int32_t signal)
{
    aa_archive_send_signal(c, r->control_session_id, r->replication_id, r->dst_recording_id,
        r->recording_subscription_id, position, signal);
}

static aa_archive_recording_subscription_t *aa_repl_subscription(aa_archive_conductor_t *c, aa_archive_replication_t *r)
{
    for (size_t i = 0; r->recording_subscription_id >= 0 && i < c->subscription_count; i++)
    {
        aa_archive_recording_subscription_t *rs = c->subscriptions[i];
        if (rs->subscription_id == r->recording_subscription_id || rs->async_id == r->recording_subscription_id)
        {
            return rs;
        }
    }
    return NULL;
}

static aa_archive_recording_t *aa_repl_recording(aa_archive_conductor_t *c, aa_archive_replication_t *r)
{
    for (size_t i = 0; r->recording_subscription_id >= 0 && i < c->recording_count; i++)
    {
        if (c->recordings[i]->subscription_id == r->recording_subscription_id &&
            c->recordings[i]->recording_id == r->dst_recording_id)
        {
            return c->recordings[i];
        }
    }
    return NULL;
}

static int64_t aa_repl_dst_position(aa_archive_conductor_t *c, aa_archive_replication_t *r)
{
    aa_archive_recording_t *rec = aa_repl_recording(c, r);
    if (NULL != rec)
    {
        return aa_get_int64_acquire(&rec->position);
    }
    aa_archive_recording_descriptor_t d;
    if (aa_archive_find_descriptor(c, r->dst_recording_id, &d))
    {
        return aa_archive_recorded_position(c, &d);
    }
    return -1;
}

/* The new destination recording: the source's descriptor with start = stop = the source's start. */
static int aa_repl_new_recording(aa_archive_conductor_t *c, aa_archive_replication_t *r)
{
    aa_archive_recording_descriptor_t d = r->src;
    d.control_session_id = 0;
    d.correlation_id = 0;
    d.start_timestamp = aa_archive_now_ms(c);
    d.stop_timestamp = aa_archive_now_ms(c);
    d.stop_position = r->src.start_position;
    int64_t id = aa_archive_catalog_add(c->catalog, &d);
    if (id < 0)
    {
        bool no_space = AA_ERROR_CODE_STORAGE_SPACE == aa_errcode();
        aa_repl_fail(c, r, no_space ? AA_ARCHIVE_ERROR_STORAGE_SPACE : AA_ARCHIVE_ERROR_GENERIC,
            "could not add the replicated recording to the catalog: %s", aa_errmsg());
        return -1;
    }
    r->dst_recording_id = id;
    return 0;
}

static void aa_repl_on_descriptor(aa_archive_conductor_t *c, aa_archive_replication_t *r)
{
    if (!r->has_descriptor)
    {
        aa_repl_fail(c, r, AA_ARCHIVE_ERROR_UNKNOWN_RECORDING, "unknown src recording id %" PRId64 " (the source "
            "archive answered: %s)", r->src_recording_id, '\0' != r->answer_error[0] ? r->answer_error : "no recording");
        return;
    }
    if (r->file_io_max_length > 0 && r->file_io_max_length < r->src.mtu_length)
    {
        aa_repl_fail(c, r, AA_ARCHIVE_ERROR_GENERIC, "Replication fileIoMaxLength (%d) is less than than the recording "
            "mtuLength (%d)", r->file_io_max_length, r->src.mtu_length);
        return;
    }
    int64_t dst_stop;
    if (-1 == r->dst_recording_id)
    {
        if (aa_repl_new_recording(c, r) < 0)
        {
            return;
        }
        aa_repl_signal(c, r, r->src.start_position, AA_ARCHIVE_SIGNAL_REPLICATE);
        dst_stop = r->src.start_position;
        r->replay_position = r->src.start_position;
    }
    else
    {
        aa_archive_recording_descriptor_t d;
        if (!aa_archive_find_descriptor(c, r->dst_recording_id, &d))
        {
            aa_repl_fail(c, r, AA_ARCHIVE_ERROR_UNKNOWN_RECORDING, "unknown recording id %" PRId64, r->dst_recording_id);
            return;
        }
        dst_stop = d.stop_position;
        r->replay_position = d.start_position == d.stop_position ? r->src.start_position : d.stop_position;
        if (d.start_position == d.stop_position && d.stop_position != r->src.start_position)
        {
            aa_repl_fail(c, r, AA_ARCHIVE_ERROR_INVALID_EXTENSION, "the empty recording %" PRId64 " starts at %" PRId64
                ", the source recording %" PRId64 " at %" PRId64 "; replicate into a new recording (dst recording id "
                "-1)", d.recording_id, d.start_position, r->src_recording_id, r->src.start_position);
            return;
        }
    }
    r->position = dst_stop;
    if (r->src.start_position == r->src.stop_position || dst_stop == r->src.stop_position)
    {
        aa_repl_signal(c, r, dst_stop, AA_ARCHIVE_SIGNAL_SYNC);
        r->state = AA_REPL_DONE;
        return;
    }
    if (r->stop_position >= 0 && dst_stop >= r->stop_position)
    {
        r->state = AA_REPL_DONE; /* already up to the stop position asked for */
        return;
    }
    if (r->live_merge)
    {
        r->state = AA_REPL_SRC_RECORDING_POSITION;
        return;
    }
    r->state = AA_REPL_EXTEND;
}

static void aa_repl_extend(aa_archive_conductor_t *c, aa_archive_replication_t *r)
{
    aa_archive_control_session_t *s = aa_archive_find_session(c, r->control_session_id);
    if (NULL == s)
    {
        r->state = AA_REPL_DONE;
        return;
    }
    int32_t session = (r->replication_session_id != INT32_MIN && r->replication_session_id != -1 && !r->live_merge) ?
        r->replication_session_id : r->src.session_id;
    r->replay_stream_id = r->src.stream_id;
    char extra[256];
    char channel[AA_ARCHIVE_CHANNEL_MAX];
    char endpoint[AA_ARCHIVE_CHANNEL_MAX];
    if (!aa_archive_channel_param(r->replication_channel, "endpoint", endpoint, sizeof(endpoint)))
    {
        aa_repl_fail(c, r, AA_ARCHIVE_ERROR_GENERIC, "the replication channel %s has no endpoint: give one where this "
            "archive receives the replay, e.g. aeron:udp?endpoint=<this host>:0", r->replication_channel);
        return;
    }
    if (r->tagged || r->live_merge)
    {
        /* a multi-destination subscription (aeron-wave3.md 7.2, EXTEND): the replay and the live stream are
         * its destinations; a tag member of -1 takes the replication id */
        int64_t ch = -1 != r->channel_tag_id ? r->channel_tag_id : r->replication_id;
        int64_t sub = -1 != r->subscription_tag_id ? r->subscription_tag_id : r->replication_id;
        snprintf(extra, sizeof(extra), "session-id=%d|tags=%" PRId64 ",%" PRId64 "|control-mode=manual", session, ch, sub);
        aa_repl_channel(channel, sizeof(channel), r->replication_channel, "endpoint", extra);
    }
    else
    {
        snprintf(extra, sizeof(extra), "session-id=%d", session);
        aa_repl_channel(channel, sizeof(channel), r->replication_channel, "session-id", extra);
    }
    aa_archive_var_t var = { (const uint8_t *)channel, (uint32_t)strlen(channel) };
    size_t before = c->subscription_count;
    aa_archive_extend_recording(c, s, r->replication_id, r->dst_recording_id, &var, r->src.stream_id,
        AA_ARCHIVE_SOURCE_REMOTE, true);
    if (c->subscription_count == before + 1)
    {
        r->recording_subscription_id = c->subscriptions[before]->async_id;
        snprintf(r->replay_endpoint, sizeof(r->replay_endpoint), "%s", endpoint);
        r->state = AA_REPL_REPLAY;
        r->deadline_ns = aa_archive_now_ns(c) + c->archive->ctx.connect_timeout_ns * 2;
    }
    else
    {
        r->state = AA_REPL_DONE; /* the extension's error went to the requester with the replication id */
    }
}

/* REPLAY: once the recording subscription exists (and its replay destination, for an MDS) and its
 * endpoint is bound, the Replay goes to the source. 1: sent. */
static int aa_repl_replay(aa_archive_conductor_t *c, aa_archive_replication_t *r, int64_t now_ns)
{
    aa_archive_recording_subscription_t *rs = aa_repl_subscription(c, r);
    if (NULL == rs)
    {
        r->state = AA_REPL_DONE; /* its subscription failed: the error went to the requester */
        return 1;
    }
    if (NULL == rs->subscription)
    {
        return 0;
    }
    char endpoint[AA_ARCHIVE_CHANNEL_MAX];
    if (r->tagged || r->live_merge)
    {
        if (!r->replay_destination_added)
        {
            if (r->destination_async < 0)
            {
                snprintf(r->replay_destination, sizeof(r->replay_destination), "aeron:udp?endpoint=%s",
                    r->replay_endpoint);
                r->destination_async = aa_subscription_async_add_destination(rs->subscription, r->replay_destination);
                if (r->destination_async < 0)
                {
                    aa_repl_fail(c, r, AA_ARCHIVE_ERROR_GENERIC, "could not add the replay destination %s: %s",
                        r->replay_destination, aa_errmsg());
                    return 1;
                }
            }
            int rc = aa_client_async_destination_poll(c->client, r->destination_async);
            if (rc < 0)
            {
                aa_repl_fail(c, r, AA_ARCHIVE_ERROR_GENERIC, "could not add the replay destination %s: %s",
                    r->replay_endpoint, aa_errmsg());
                return 1;
            }
            if (0 == rc)
            {
                return 0;
            }
            r->destination_async = -1;
            r->replay_destination_added = true;
        }
    }
    if (!aa_repl_resolve_endpoint(c, r, r->replay_endpoint, aa_subscription_channel_status_id(rs->subscription),
        endpoint, sizeof(endpoint)))
    {
        if (now_ns > r->deadline_ns)
        {
            aa_repl_fail(c, r, AA_ARCHIVE_ERROR_GENERIC, "the replication channel's endpoint %s was not bound in time",
                r->replay_endpoint);
            return 1;
        }
        return 0;
    }
    snprintf(r->replay_endpoint, sizeof(r->replay_endpoint), "%s", endpoint);
    int32_t session = (r->replication_session_id != INT32_MIN && r->replication_session_id != -1 && !r->live_merge) ?
        r->replication_session_id : r->src.session_id;
    char extra[AA_ARCHIVE_CHANNEL_MAX + 96];
    snprintf(extra, sizeof(extra), "endpoint=%s|session-id=%d%s", endpoint, session,
        r->live_merge ? "|linger=0|eos=false" : "");
    char without_endpoint[AA_ARCHIVE_CHANNEL_MAX];
    aa_repl_channel(without_endpoint, sizeof(without_endpoint), r->replication_channel, "endpoint", NULL);
    char replay_channel[AA_ARCHIVE_CHANNEL_MAX];
    aa_repl_channel(replay_channel, sizeof(replay_channel), without_endpoint, "session-id", extra);
    aa_archive_message_t msg;
    memset(&msg, 0, sizeof(msg));
    msg.template_id = AA_ARCHIVE_TEMPLATE_REPLAY_REQUEST;
    int64_t correlation_id = r->next_correlation_id++;
    msg.replay_request.control_session_id = r->src_session_id;
    msg.replay_request.correlation_id = correlation_id;
    msg.replay_request.recording_id = r->src_recording_id;
    msg.replay_request.position = r->replay_position;
    msg.replay_request.length = (r->stop_position >= 0 && !r->live_merge) ? r->stop_position - r->replay_position :
        INT64_MAX;
    msg.replay_request.replay_stream_id = r->replay_stream_id;
    msg.replay_request.file_io_max_length = r->file_io_max_length > 0 ? r->file_io_max_length : -1;
    msg.replay_request.replay_token = -1;
    msg.replay_request.replay_channel.data = (const uint8_t *)replay_channel;
    msg.replay_request.replay_channel.length = (uint32_t)strlen(replay_channel);
    if (!aa_repl_offer(c, r, &msg, correlation_id))
    {
        return 0;
    }
    r->state = AA_REPL_AWAIT_IMAGE;
    return 1;
}

static void aa_repl_done_or_sync(aa_archive_conductor_t *c, aa_archive_replication_t *r, int64_t position)
{
    if (-1 != r->src.stop_position && position >= r->src.stop_position)
    {
        aa_repl_signal(c, r, position, AA_ARCHIVE_SIGNAL_SYNC);
    }
    r->state = AA_REPL_DONE;
}

/* REPLICATE / CATCHUP: follow the recording of the replay. */
static int aa_repl_follow(aa_archive_conductor_t *c, aa_archive_replication_t *r, int64_t now_ns)
{
    aa_archive_recording_t *rec = aa_repl_recording(c, r);
    if (NULL == rec)
    {
        int64_t position = aa_repl_dst_position(c, r);
        r->position = position;
        if ((-1 != r->src.stop_position && position >= r->src.stop_position) ||
            (r->stop_position >= 0 && position >= r->stop_position))
        {
            aa_repl_done_or_sync(c, r, position);
            return 1;
        }
        /* the replay's image went before the end: did the source end it, or go away? */
        r->replay_session_id = -1;
        r->state = AA_REPL_VERIFY_SOURCE;
        return 1;
    }
    int64_t position = aa_get_int64_acquire(&rec->position);
    int work = position != r->position;
    r->position = position;
    if ((-1 != r->src.stop_position && position >= r->src.stop_position) ||
        (r->stop_position >= 0 && position >= r->stop_position))
    {
        aa_repl_done_or_sync(c, r, position);
        return 1;
    }
    if (AA_REPL_CATCHUP == r->state && position >= r->src_recording_position)
    {
        r->state = AA_REPL_ATTEMPT_LIVE_JOIN;
        return 1;
    }
    if (aa_repl_source_gone(r))
    {
        r->state = AA_REPL_VERIFY_SOURCE;
        return 1;
    }
    (void)now_ns;
    return work;
}

/* ATTEMPT_LIVE_JOIN: the live destination goes in within the window of the source's recording
 * position; once the recording has reached the position read after that, the replay destination
 * goes and the recording continues on the live stream (MERGE). As this archive's replay-merge
 * (aeron_async/archive/replay_merge.py): the driver keeps no count of active transports, so the
 * replay is dropped once the recording has caught up with a source position read with live added. */
static int aa_repl_live_join(aa_archive_conductor_t *c, aa_archive_replication_t *r, int64_t now_ns)
{
    aa_archive_recording_subscription_t *rs = aa_repl_subscription(c, r);
    aa_archive_recording_t *rec = aa_repl_recording(c, r);
    if (NULL == rs || NULL == rs->subscription || NULL == rec)
    {
        return aa_repl_follow(c, r, now_ns);
    }
    int64_t position = aa_get_int64_acquire(&rec->position);
    r->position = position;
    if (r->destination_async >= 0)
    {
        int rc = aa_client_async_destination_poll(c->client, r->destination_async);
        if (rc < 0)
        {
            aa_repl_fail(c, r, AA_ARCHIVE_ERROR_GENERIC, "could not %s: %s", r->live_added ?
                "remove the replay destination" : "add the live destination", aa_errmsg());
            return 1;
        }
        if (0 == rc)
        {
            return 0;
        }
        r->destination_async = -1;
        if (!r->live_added)
        {
            r->live_added = true;
            r->target_position = -1; /* read again, now that live is in */
        }
        else
        {
            r->replay_removed = true;
            if (r->replay_session_id >= 0)
            {
                aa_repl_send_id_request(c, r, AA_ARCHIVE_TEMPLATE_STOP_REPLAY_REQUEST, r->replay_session_id);
                r->awaiting = -1; /* its answer is not awaited */
                r->sent = false;
                r->replay_session_id = -1;
            }
            r->merged = true;
            aa_repl_signal(c, r, position, AA_ARCHIVE_SIGNAL_MERGE);
            r->state = AA_REPL_DONE;
            return 1;
        }
    }
    if (!r->sent)
    {
        if (r->live_added && r->target_position >= 0 && position >= r->target_position)
        {
            r->destination_async = aa_subscription_async_remove_destination(rs->subscription, r->replay_destination);
            if (r->destination_async < 0)
            {
                aa_repl_fail(c, r, AA_ARCHIVE_ERROR_GENERIC, "could not remove the replay destination: %s", aa_errmsg());
            }
            return 1;
        }
        return aa_repl_send_id_request(c, r, AA_ARCHIVE_TEMPLATE_RECORDING_POSITION_REQUEST, r->src_recording_id) ? 1 : 0;
    }
    int rc = aa_repl_await(c, r, now_ns, "RecordingPosition");
    if (rc <= 0)
    {
        return rc < 0;
    }
    if (AA_ARCHIVE_RESPONSE_OK != r->code || r->relevant_id < 0)
    {
        aa_repl_fail(c, r, AA_ARCHIVE_ERROR_GENERIC, "%s", "cannot live merge without active source recording");
        return 1;
    }
    int64_t src_position = r->relevant_id;
    r->src_recording_position = src_position;
    if (!r->live_added)
    {
        int64_t window = r->src.term_buffer_length / 4 < AA_REPL_MAX_MERGE_WINDOW ? r->src.term_buffer_length / 4 :
            AA_REPL_MAX_MERGE_WINDOW;
        if (src_position - position <= window)
        {
            r->destination_async = aa_subscription_async_add_destination(rs->subscription, r->live_destination);
            if (r->destination_async < 0)
            {
                aa_repl_fail(c, r, AA_ARCHIVE_ERROR_GENERIC, "could not add the live destination %s: %s",
                    r->live_destination, aa_errmsg());
            }
        }
        else
        {
            r->state = AA_REPL_CATCHUP;
        }
    }
    else
    {
        r->target_position = src_position;
    }
    return 1;
}

/* DONE: the replay stops on the source, the recording subscription goes (unless merged), the source
 * client is closed; REPLICATE_END follows once the recording has stopped (its STOP first, as Aeron). */
static void aa_repl_close(aa_archive_conductor_t *c, aa_archive_replication_t *r, int64_t now_ns)
{
    if (r->replay_session_id >= 0 && NULL != r->request && aa_publication_is_connected(r->request))
    {
        aa_repl_send_id_request(c, r, AA_ARCHIVE_TEMPLATE_STOP_REPLAY_REQUEST, r->replay_session_id);
    }
    r->replay_session_id = -1;
    if (NULL != r->request && aa_publication_is_connected(r->request) && r->src_session_id >= 0)
    {
        aa_archive_message_t msg;
        memset(&msg, 0, sizeof(msg));
        msg.template_id = AA_ARCHIVE_TEMPLATE_CLOSE_SESSION_REQUEST;
        msg.close_session_request.control_session_id = r->src_session_id;
        uint8_t buffer[64];
        int64_t length = aa_archive_encode(buffer, sizeof(buffer), &msg);
        if (length > 0)
        {
            aa_publication_offer(r->request, buffer, (size_t)length, 0);
        }
    }
    aa_repl_release_source(r);
    aa_archive_recording_subscription_t *rs = aa_repl_subscription(c, r);
    if (NULL != rs && !r->merged)
    {
        rs->stop_requested = true;
        for (size_t i = 0; i < c->recording_count; i++)
        {
            if (c->recordings[i]->subscription_id == rs->subscription_id)
            {
                aa_put_int32_release(&c->recordings[i]->work.stop_requested, 1);
            }
        }
    }
    r->close_deadline_ns = now_ns + AA_REPL_CLOSE_WAIT_NS;
    r->state = AA_REPL_CLOSING;
}

static bool aa_repl_closed(aa_archive_conductor_t *c, aa_archive_replication_t *r, int64_t now_ns)
{
    if (!r->merged && NULL != aa_repl_recording(c, r) && now_ns < r->close_deadline_ns)
    {
        return false;
    }
    aa_repl_signal(c, r, aa_repl_dst_position(c, r), AA_ARCHIVE_SIGNAL_REPLICATE_END);
    return true;
}

static int aa_repl_step(aa_archive_conductor_t *c, aa_archive_replication_t *r, int64_t now_ns)
{
    int work = 0;
    if (NULL != r->response)
    {
        work += aa_repl_poll_responses(r);
    }
    if (r->stop_requested && r->state < AA_REPL_DONE)
    {
        r->state = AA_REPL_DONE;
    }
    if (r->src_session_id >= 0 && NULL != r->request && now_ns >= r->keep_alive_ns && r->state < AA_REPL_DONE &&
        !r->sent)
    {
        aa_archive_message_t msg;
        memset(&msg, 0, sizeof(msg));
        msg.template_id = AA_ARCHIVE_TEMPLATE_KEEP_ALIVE_REQUEST;
        msg.keep_alive_request.control_session_id = r->src_session_id;
        msg.keep_alive_request.correlation_id = r->next_correlation_id++;
        uint8_t buffer[64];
        int64_t length = aa_archive_encode(buffer, sizeof(buffer), &msg);
        if (length > 0)
        {
            aa_publication_offer(r->request, buffer, (size_t)length, 0);
        }
        r->keep_alive_ns = now_ns + AA_REPL_KEEP_ALIVE_NS;
    }
    int rc;
    switch (r->state)
    {
        case AA_REPL_CONNECT:
            return work + aa_repl_connect(c, r, now_ns);
        case AA_REPL_AWAIT_CONNECT:
            if (!r->answered && now_ns > r->deadline_ns)
            {
                aa_repl_fail(c, r, AA_ARCHIVE_ERROR_REPLICATION_CONNECTION_FAILURE, "the source archive on %s stream %d "
                    "did not answer the connect in time: check that its responses reach this archive on %s",
                    r->src_control_channel, r->src_control_stream_id, r->response_channel);
                return 1;
            }
            if (0 == aa_repl_await(c, r, now_ns, "the connect"))
            {
                return work;
            }
            if (r->challenged)
            {
                aa_repl_fail(c, r, AA_ARCHIVE_ERROR_REPLICATION_CONNECTION_FAILURE, "%s",
                    "Replication does not support challenge/response authentication");
                return 1;
            }
            if (AA_ARCHIVE_RESPONSE_OK != r->code)
            {
                aa_repl_fail(c, r, AA_ARCHIVE_ERROR_REPLICATION_CONNECTION_FAILURE, "the source archive on %s stream %d "
                    "refused the connect: %s", r->src_control_channel, r->src_control_stream_id, r->answer_error);
                return 1;
            }
            r->src_session_id = r->relevant_id;
            r->keep_alive_ns = now_ns + AA_REPL_KEEP_ALIVE_NS;
            r->state = AA_REPL_REPLICATE_DESCRIPTOR;
            return 1;
        case AA_REPL_REPLICATE_DESCRIPTOR:
            if (!r->sent)
            {
                return work + (aa_repl_send_id_request(c, r, AA_ARCHIVE_TEMPLATE_LIST_RECORDING_REQUEST,
                    r->src_recording_id) ? 1 : 0);
            }
            rc = aa_repl_await(c, r, now_ns, "ListRecording");
            if (1 == rc)
            {
                aa_repl_on_descriptor(c, r);
            }
            return work + (0 != rc);
        case AA_REPL_SRC_RECORDING_POSITION:
            if (!r->sent)
            {
                return work + (aa_repl_send_id_request(c, r, AA_ARCHIVE_TEMPLATE_RECORDING_POSITION_REQUEST,
                    r->src_recording_id) ? 1 : 0);
            }
            rc = aa_repl_await(c, r, now_ns, "RecordingPosition");
            if (1 == rc)
            {
                if (AA_ARCHIVE_RESPONSE_OK != r->code || r->relevant_id < 0)
                {
                    aa_repl_fail(c, r, AA_ARCHIVE_ERROR_GENERIC, "%s",
                        "cannot live merge without active source recording");
                }
                else
                {
                    r->src_recording_position = r->relevant_id;
                    r->state = AA_REPL_EXTEND;
                }
            }
            return work + (0 != rc);
        case AA_REPL_EXTEND:
            aa_repl_extend(c, r);
            return 1;
        case AA_REPL_REPLAY:
            return work + aa_repl_replay(c, r, now_ns);
        case AA_REPL_AWAIT_IMAGE:
            if (r->sent)
            {
                rc = aa_repl_await(c, r, now_ns, "Replay");
                if (1 == rc)
                {
                    if (AA_ARCHIVE_RESPONSE_OK != r->code)
                    {
                        aa_repl_fail(c, r, AA_ARCHIVE_ERROR_GENERIC, "the source archive refused the replay of recording "
                            "%" PRId64 " from %" PRId64 ": %s", r->src_recording_id, r->replay_position,
                            r->answer_error);
                        return 1;
                    }
                    r->replay_session_id = r->relevant_id;
                    r->deadline_ns = now_ns + c->archive->ctx.connect_timeout_ns * 2;
                }
                return work + (0 != rc);
            }
            if (NULL != aa_repl_recording(c, r))
            {
                r->recording_seen = true;
                r->state = r->live_merge ? AA_REPL_CATCHUP : AA_REPL_REPLICATE;
                return 1;
            }
            if (NULL == aa_repl_subscription(c, r))
            {
                r->state = AA_REPL_DONE; /* the extension failed (its error went to the requester) */
                return 1;
            }
            if (now_ns > r->deadline_ns)
            {
                aa_repl_fail(c, r, AA_ARCHIVE_ERROR_GENERIC, "the replay of recording %" PRId64 " from the source did "
                    "not reach this archive on %s in time: check that the source reaches this archive's replication "
                    "channel", r->src_recording_id, r->replay_endpoint);
                return 1;
            }
            return work;
        case AA_REPL_REPLICATE:
        case AA_REPL_CATCHUP:
            return work + aa_repl_follow(c, r, now_ns);
        case AA_REPL_ATTEMPT_LIVE_JOIN:
            return work + aa_repl_live_join(c, r, now_ns);
        case AA_REPL_VERIFY_SOURCE:
            /* the replay ended early: a source that still answers ended it (its recording stopped:
             * SYNC when this one got to its stop position); one that does not is gone, which is an
             * error naming where to resume */
            if (!aa_repl_source_gone(r) && !r->sent)
            {
                return work + (aa_repl_send_id_request(c, r, AA_ARCHIVE_TEMPLATE_STOP_POSITION_REQUEST,
                    r->src_recording_id) ? 1 : 0);
            }
            if (r->sent && !aa_repl_source_gone(r) && (r->answered || now_ns <= r->deadline_ns))
            {
                rc = aa_repl_await(c, r, now_ns, "StopPosition");
                if (1 == rc)
                {
                    if (NULL != aa_repl_recording(c, r))
                    {
                        r->state = r->live_merge ? AA_REPL_CATCHUP : AA_REPL_REPLICATE;
                    }
                    else
                    {
                        if (AA_ARCHIVE_RESPONSE_OK == r->code && r->relevant_id >= 0)
                        {
                            r->src.stop_position = r->relevant_id;
                        }
                        aa_repl_done_or_sync(c, r, aa_repl_dst_position(c, r));
                    }
                }
                return work + (0 != rc);
            }
            aa_repl_fail(c, r, AA_ARCHIVE_ERROR_GENERIC, "the source archive on %s stream %d went away: recording %"
                PRId64 " was replicated up to position %" PRId64 "; replicate again with dst recording id %" PRId64
                " to resume from there", r->src_control_channel, r->src_control_stream_id, r->src_recording_id,
                aa_repl_dst_position(c, r), r->dst_recording_id);
            return 1;
        case AA_REPL_DONE:
            aa_repl_close(c, r, now_ns);
            return 1;
        default:
            return work;
    }
}

void aa_archive_replications_on_recording_end(aa_archive_conductor_t *c, aa_archive_recording_t *recording)
{
    aa_archive_replications_t *reps = c->replications;
    for (size_t i = 0; NULL != reps && i < reps->count; i++)
    {
        aa_archive_replication_t *r = reps->items[i];
        if (r->recording_subscription_id == recording->subscription_id && r->dst_recording_id == recording->recording_id &&
            r->state >= AA_REPL_AWAIT_IMAGE && r->state <= AA_REPL_ATTEMPT_LIVE_JOIN)
        {
            int64_t position = aa_get_int64_acquire(&recording->position);
            r->position = position;
            if ((-1 != r->src.stop_position && position >= r->src.stop_position) ||
                (r->stop_position >= 0 && position >= r->stop_position))
            {
                aa_repl_done_or_sync(c, r, position);
            }
        }
    }
}

int aa_archive_replications_do_work(aa_archive_conductor_t *c, int64_t now_ns)
{
    aa_archive_replications_t *reps = c->replications;
    if (NULL == reps)
    {
        return 0;
    }
    int work = 0;
    for (size_t i = 0; i < reps->count;)
    {
        aa_archive_replication_t *r = reps->items[i];
        if (AA_REPL_CLOSING == r->state)
        {
            if (aa_repl_closed(c, r, now_ns))
            {
                reps->items[i] = reps->items[--reps->count];
                free(r);
                work++;
                continue;
            }
        }
        else
        {
            work += aa_repl_step(c, r, now_ns);
        }
        i++;
    }
    return work;
}

void aa_archive_replications_close(aa_archive_conductor_t *c)
{
    aa_archive_replications_t *reps = c->replications;
    if (NULL == reps)
    {
        return;
    }
    for (size_t i = 0; i < reps->count; i++)
    {
        aa_archive_replication_t *r = reps->items[i];
        aa_repl_release_source(r);
        aa_repl_signal(c, r, aa_repl_dst_position(c, r), AA_ARCHIVE_SIGNAL_REPLICATE_END);
        free(r);
    }
    free(reps->items);
    free(reps);
    c->replications = NULL;
}
