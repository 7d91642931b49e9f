/*
 * Replication between archives, the source's side (reference aeron-wave3.md 7): the client of the
 * source archive each replication is (its control publication and response subscription,
 * AuthConnect with the request's credentials and no challenge, requests and their answers), the
 * channels it builds, and the requests that start (Replicate, TaggedReplicate, Replicate2) and stop
 * (StopReplication) replications. Non-blocking: adds and answers are polled by the state machine
 * (aa_archive_replication.c).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "archive/aa_archive_replication_session.h"
#include "aeron_async.h"
#include "concurrent/aa_counters.h"
#include "protocols/aa_udp_protocol.h"
#include "util/aa_array.h"
#include "util/aa_error.h"

static aa_archive_replications_t *aa_repls(aa_archive_conductor_t *c)
{
    if (NULL == c->replications)
    {
        c->replications = calloc(1, sizeof(*c->replications));
        if (NULL != c->replications)
        {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            c->replications->next_id = ((int64_t)(ts.tv_nsec & 0x7FFFF) << 20) + 1;
        }
    }
    return c->replications;
}

static void aa_repl_var_copy(char *out, size_t capacity, const aa_archive_var_t *var)
{
    size_t n = var->length < capacity - 1 ? var->length : capacity - 1;
    if (n > 0)
    {
        memcpy(out, var->data, n);
    }
    out[n] = '\0';
}

/* channel without its parameter key, then with "key=value" items of extra appended ('|'-separated). */
void aa_repl_channel(char *out, size_t capacity, const char *channel, const char *drop, const char *extra)
{
    const char *q = strchr(channel, '?');
    size_t used = (size_t)snprintf(out, capacity, "%.*s", (int)(NULL == q ? strlen(channel) : (size_t)(q - channel)),
        channel);
    char sep = '?';
    size_t drop_length = NULL == drop ? 0 : strlen(drop);
    for (const char *p = NULL == q ? NULL : q + 1; NULL != p && '\0' != *p && used < capacity;)
    {
        const char *end = strchr(p, '|');
        size_t item = NULL == end ? strlen(p) : (size_t)(end - p);
        if (!(drop_length > 0 && item > drop_length && '=' == p[drop_length] && 0 == strncmp(p, drop, drop_length)))
        {
            used += (size_t)snprintf(out + used, capacity - used, "%c%.*s", sep, (int)item, p);
            sep = '|';
        }
        p = NULL == end ? NULL : end + 1;
    }
    if (NULL != extra && '\0' != extra[0] && used < capacity)
    {
        snprintf(out + used, capacity - used, "%c%s", sep, extra);
    }
}

static bool aa_repl_response_mode(const char *channel)
{
    char mode[32];
    return aa_archive_channel_param(channel, "control-mode", mode, sizeof(mode)) && 0 == strcmp(mode, "response");
}

void aa_repl_fail(aa_archive_conductor_t *c, aa_archive_replication_t *r, int64_t code, const char *fmt, ...)
{
    char text[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(text, sizeof(text), fmt, args);
    va_end(args);
    aa_archive_log_error(c->archive, AA_ERROR_CODE_GENERIC_ERROR, "replication %" PRId64 ": %s", r->replication_id, text);
    aa_archive_control_session_t *s = aa_archive_find_session(c, r->control_session_id);
    if (NULL != s)
    {
        aa_archive_send_error(c, s, r->replication_id, code, "%s", text);
    }
    r->state = AA_REPL_DONE;
}

/* The address ("host:port") a channel endpoint bound, read from the driver's local-sockaddr counters
 * keyed by its status counter (as Aeron's LocalSocketAddressStatus); false until it is ACTIVE. */
static bool aa_repl_bound_address(aa_archive_conductor_t *c, aa_archive_replication_t *r, int32_t status_id,
    char *out, size_t capacity)
{
    if (status_id < 0 || aa_client_counter_value(c->client, status_id) != AA_REPL_CHANNEL_STATUS_ACTIVE)
    {
        return false;
    }
    if (NULL == r->cnc && aa_cnc_reader_open(&r->cnc, c->archive->ctx.aeron_dir) < 0)
    {
        r->cnc = NULL;
        return false;
    }
    aa_counter_info_t info;
    for (int32_t id = aa_cnc_reader_next_counter(r->cnc, 0, &info); id >= 0;
        id = aa_cnc_reader_next_counter(r->cnc, id + 1, &info))
    {
        int32_t key_status, length;
        if (AA_COUNTER_TYPE_LOCAL_SOCKADDR != info.type_id || info.key_length < 8)
        {
            continue;
        }
        memcpy(&key_status, info.key, 4);
        memcpy(&length, info.key + 4, 4);
        if (key_status == status_id && AA_REPL_CHANNEL_STATUS_ACTIVE == info.value && length > 0 &&
            length <= info.key_length - 8)
        {
            snprintf(out, capacity, "%.*s", (int)length, (const char *)info.key + 8);
            return true;
        }
    }
    return false;
}

/* An endpoint given with port 0 is replaced by the one bound; true once known. */
bool aa_repl_resolve_endpoint(aa_archive_conductor_t *c, aa_archive_replication_t *r, const char *endpoint,
    int32_t status_id, char *out, size_t capacity)
{
    size_t n = strlen(endpoint);
    if (n < 2 || 0 != strcmp(endpoint + n - 2, ":0"))
    {
        snprintf(out, capacity, "%s", endpoint);
        return true;
    }
    return aa_repl_bound_address(c, r, status_id, out, capacity);
}

bool aa_repl_offer(aa_archive_conductor_t *c, aa_archive_replication_t *r, aa_archive_message_t *msg,
    int64_t correlation_id)
{
    uint8_t buffer[4096];
    int64_t length = aa_archive_encode(buffer, sizeof(buffer), msg);
    if (length < 0 || NULL == r->request)
    {
        return false;
    }
    if (aa_publication_offer(r->request, buffer, (size_t)length, 0) < 0)
    {
        return false;
    }
    r->awaiting = correlation_id;
    r->answered = false;
    r->sent = true;
    r->deadline_ns = aa_archive_now_ns(c) + c->archive->ctx.connect_timeout_ns * 2;
    return true;
}

static int aa_repl_response_handler(void *clientd, const aa_poll_fragment_t *fragment)
{
    aa_archive_replication_t *r = clientd;
    const uint8_t *frame = fragment->frame;
    if ((frame[5] & 0xC0) != 0xC0)
    {
        return AA_POLL_CONTINUE;
    }
    aa_archive_message_t msg;
    if (aa_archive_decode(frame + AA_DATA_HEADER_LENGTH, (size_t)fragment->frame_length - AA_DATA_HEADER_LENGTH,
        &msg) < 0)
    {
        return AA_POLL_CONTINUE;
    }
    if (AA_ARCHIVE_TEMPLATE_CONTROL_RESPONSE == msg.template_id && msg.control_response.correlation_id == r->awaiting &&
        r->awaiting >= 0 && !r->answered)
    {
        r->answered = true;
        r->code = msg.control_response.code;
        r->relevant_id = msg.control_response.relevant_id;
        aa_repl_var_copy(r->answer_error, sizeof(r->answer_error), &msg.control_response.error_message);
        if (r->src_session_id < 0)
        {
            r->src_session_id = msg.control_response.control_session_id;
        }
    }
    else if (AA_ARCHIVE_TEMPLATE_CHALLENGE == msg.template_id && msg.challenge.correlation_id == r->awaiting)
    {
        r->answered = true;
        r->challenged = true;
    }
    else if (AA_ARCHIVE_TEMPLATE_RECORDING_DESCRIPTOR == msg.template_id &&
        msg.recording_descriptor.correlation_id == r->awaiting && r->awaiting >= 0 && !r->answered)
    {
        r->answered = true;
        r->has_descriptor = true;
        r->code = AA_ARCHIVE_RESPONSE_OK;
        r->src = msg.recording_descriptor;
        aa_repl_var_copy(r->src_stripped, sizeof(r->src_stripped), &msg.recording_descriptor.stripped_channel);
        aa_repl_var_copy(r->src_original, sizeof(r->src_original), &msg.recording_descriptor.original_channel);
        aa_repl_var_copy(r->src_identity, sizeof(r->src_identity), &msg.recording_descriptor.source_identity);
        r->src.stripped_channel.data = (const uint8_t *)r->src_stripped;
        r->src.stripped_channel.length = (uint32_t)strlen(r->src_stripped);
        r->src.original_channel.data = (const uint8_t *)r->src_original;
        r->src.original_channel.length = (uint32_t)strlen(r->src_original);
        r->src.source_identity.data = (const uint8_t *)r->src_identity;
        r->src.source_identity.length = (uint32_t)strlen(r->src_identity);
    }
    return AA_POLL_CONTINUE;
}

/* A request with one id (ListRecording, RecordingPosition, StopPosition, StopReplay) to the source. */
bool aa_repl_send_id_request(aa_archive_conductor_t *c, aa_archive_replication_t *r, int32_t template_id,
    int64_t value)
{
    aa_archive_message_t msg;
    memset(&msg, 0, sizeof(msg));
    msg.template_id = template_id;
    int64_t correlation_id = r->next_correlation_id++;
    switch (template_id)
    {
        case AA_ARCHIVE_TEMPLATE_LIST_RECORDING_REQUEST:
            msg.list_recording_request.control_session_id = r->src_session_id;
            msg.list_recording_request.correlation_id = correlation_id;
            msg.list_recording_request.recording_id = value;
            break;
        case AA_ARCHIVE_TEMPLATE_RECORDING_POSITION_REQUEST:
            msg.recording_position_request.control_session_id = r->src_session_id;
            msg.recording_position_request.correlation_id = correlation_id;
            msg.recording_position_request.recording_id = value;
            break;
        case AA_ARCHIVE_TEMPLATE_STOP_POSITION_REQUEST:
            msg.stop_position_request.control_session_id = r->src_session_id;
            msg.stop_position_request.correlation_id = correlation_id;
            msg.stop_position_request.recording_id = value;
            break;
        case AA_ARCHIVE_TEMPLATE_STOP_REPLAY_REQUEST:
            msg.stop_replay_request.control_session_id = r->src_session_id;
            msg.stop_replay_request.correlation_id = correlation_id;
            msg.stop_replay_request.replay_session_id = value;
            break;
        default:
            msg.keep_alive_request.control_session_id = r->src_session_id;
            msg.keep_alive_request.correlation_id = correlation_id;
            break;
    }
    return aa_repl_offer(c, r, &msg, correlation_id);
}

/* The answer to the awaited request: 1 answered, 0 not yet, -1 timed out (the replication failed). */
int aa_repl_await(aa_archive_conductor_t *c, aa_archive_replication_t *r, int64_t now_ns, const char *what)
{
    if (r->answered)
    {
        r->sent = false;
        r->awaiting = -1;
        return 1;
    }
    if (now_ns > r->deadline_ns)
    {
        aa_repl_fail(c, r, AA_ARCHIVE_ERROR_GENERIC, "the source archive on %s stream %d did not answer %s in time; "
            "check that it runs and reaches this archive, then replicate again", r->src_control_channel,
            r->src_control_stream_id, what);
        return -1;
    }
    return 0;
}

bool aa_repl_source_gone(aa_archive_replication_t *r)
{
    return NULL == r->request || !aa_publication_is_connected(r->request) || aa_publication_is_closed(r->request) ||
        NULL == r->response || 0 == aa_subscription_image_count(r->response);
}

void aa_repl_release_source(aa_archive_replication_t *r)
{
    if (NULL != r->request)
    {
        aa_publication_close(r->request);
        r->request = NULL;
    }
    if (NULL != r->response)
    {
        aa_subscription_close(r->response);
        r->response = NULL;
    }
    if (NULL != r->cnc)
    {
        aa_cnc_reader_close(r->cnc);
        r->cnc = NULL;
    }
}

int aa_repl_poll_responses(aa_archive_replication_t *r)
{
    return NULL == r->response ? 0 : aa_subscription_controlled_poll(r->response, aa_repl_response_handler, r, 10);
}

int aa_repl_connect(aa_archive_conductor_t *c, aa_archive_replication_t *r, int64_t now_ns)
{
    if (r->response_async < 0 && NULL == r->response)
    {
        r->response_async = aa_client_async_add_subscription(c->client, r->response_channel, AA_REPL_RESPONSE_STREAM_ID);
        r->request_async = aa_client_async_add_publication(c->client, r->src_control_channel, r->src_control_stream_id,
            true);
        if (r->response_async < 0 || r->request_async < 0)
        {
            aa_repl_fail(c, r, AA_ARCHIVE_ERROR_REPLICATION_CONNECTION_FAILURE, "could not connect to the source archive "
                "on %s stream %d: %s", r->src_control_channel, r->src_control_stream_id, aa_errmsg());
            return 1;
        }
        r->deadline_ns = now_ns + c->archive->ctx.connect_timeout_ns * 2;
        return 1;
    }
    int work = 0;
    if (NULL == r->response && r->response_async >= 0)
    {
        int rc = aa_client_async_add_subscription_poll(c->client, r->response_async, &r->response);
        if (rc < 0)
        {
            r->response_async = -1;
            aa_repl_fail(c, r, AA_ARCHIVE_ERROR_REPLICATION_CONNECTION_FAILURE, "could not subscribe to the source "
                "archive's responses on %s: %s", r->response_channel, aa_errmsg());
            return 1;
        }
        work += rc;
    }
    if (NULL == r->request && r->request_async >= 0)
    {
        int rc = aa_client_async_add_publication_poll(c->client, r->request_async, &r->request);
        if (rc < 0)
        {
            r->request_async = -1;
            aa_repl_fail(c, r, AA_ARCHIVE_ERROR_REPLICATION_CONNECTION_FAILURE, "could not publish to the source "
                "archive on %s stream %d: %s", r->src_control_channel, r->src_control_stream_id, aa_errmsg());
            return 1;
        }
        work += rc;
    }
    char endpoint[AA_ARCHIVE_CHANNEL_MAX], bound[AA_ARCHIVE_CHANNEL_MAX];
    if (NULL != r->response && NULL != r->request && aa_publication_is_connected(r->request) &&
        aa_archive_channel_param(r->response_channel, "endpoint", endpoint, sizeof(endpoint)) &&
        aa_repl_resolve_endpoint(c, r, endpoint, aa_subscription_channel_status_id(r->response), bound, sizeof(bound)))
    {
        char extra[AA_ARCHIVE_CHANNEL_MAX + 16];
        snprintf(extra, sizeof(extra), "endpoint=%s", bound);
        char channel[AA_ARCHIVE_CHANNEL_MAX];
        aa_repl_channel(channel, sizeof(channel), r->response_channel, "endpoint", extra);
        aa_archive_message_t msg;
        memset(&msg, 0, sizeof(msg));
        msg.template_id = AA_ARCHIVE_TEMPLATE_AUTH_CONNECT_REQUEST;
        int64_t correlation_id = r->next_correlation_id++;
        msg.auth_connect_request.correlation_id = correlation_id;
        msg.auth_connect_request.response_stream_id = AA_REPL_RESPONSE_STREAM_ID;
        msg.auth_connect_request.version = AA_ARCHIVE_PROTOCOL_SEMANTIC_VERSION;
        msg.auth_connect_request.response_channel.data = (const uint8_t *)channel;
        msg.auth_connect_request.response_channel.length = (uint32_t)strlen(channel);
        msg.auth_connect_request.encoded_credentials.data = r->credentials;
        msg.auth_connect_request.encoded_credentials.length = r->credentials_length;
        static const char info[] = "name=aeron-async-archive-replication";
        msg.auth_connect_request.client_info.data = (const uint8_t *)info;
        msg.auth_connect_request.client_info.length = (uint32_t)strlen(info);
        if (aa_repl_offer(c, r, &msg, correlation_id))
        {
            r->state = AA_REPL_AWAIT_CONNECT;
            return 1;
        }
    }
    if (now_ns > r->deadline_ns)
    {
        aa_repl_fail(c, r, AA_ARCHIVE_ERROR_REPLICATION_CONNECTION_FAILURE, "could not connect to the source archive on "
            "%s stream %d (responses on %s) in time: check that it runs, that its control channel is reachable from "
            "here and this archive's response endpoint from there", r->src_control_channel, r->src_control_stream_id,
            r->response_channel);
        return 1;
    }
    return work;
}

static void aa_on_replicate(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    const aa_archive_replicate_request2_t *req)
{
    const aa_archive_context_t *ctx = &c->archive->ctx;
    aa_archive_replications_t *reps = aa_repls(c);
    aa_archive_replication_t *r = calloc(1, sizeof(*r));
    if (NULL == reps || NULL == r ||
        aa_array_ensure_capacity((void **)&reps->items, &reps->capacity, reps->count, sizeof(*reps->items)) < 0)
    {
        free(r);
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC, "%s", "out of memory");
        return;
    }
    aa_repl_var_copy(r->src_control_channel, sizeof(r->src_control_channel), &req->src_control_channel);
    aa_repl_var_copy(r->live_destination, sizeof(r->live_destination), &req->live_destination);
    aa_repl_var_copy(r->replication_channel, sizeof(r->replication_channel), &req->replication_channel);
    aa_repl_var_copy(r->response_channel, sizeof(r->response_channel), &req->src_response_channel);
    if (req->encoded_credentials.length > sizeof(r->credentials))
    {
        free(r);
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC, "replication credentials of %u bytes are "
            "over the %zu this archive takes", req->encoded_credentials.length, sizeof(r->credentials));
        return;
    }
    if (req->encoded_credentials.length > 0)
    {
        memcpy(r->credentials, req->encoded_credentials.data, req->encoded_credentials.length);
    }
    r->credentials_length = req->encoded_credentials.length;
    r->tagged = -1 != req->channel_tag_id || -1 != req->subscription_tag_id;
    r->live_merge = '\0' != r->live_destination[0];
    const char *refusal = NULL;
    int64_t code = AA_ARCHIVE_ERROR_GENERIC;
    char text[512];
    aa_archive_recording_descriptor_t d;
    if ('\0' != r->response_channel[0] && aa_repl_response_mode(r->response_channel))
    {
        refusal = r->live_merge ? "response channels can't be used with live destinations" :
            r->tagged ? "response channels can't be used with tagged replication" :
            "replication over a response channel (control-mode=response) is not supported by this archive's "
            "replication session: give a src response channel with an endpoint";
    }
    else if (-1 != req->dst_recording_id && !aa_archive_find_descriptor(c, req->dst_recording_id, &d))
    {
        code = AA_ARCHIVE_ERROR_UNKNOWN_RECORDING;
        snprintf(text, sizeof(text), "unknown recording id %" PRId64, req->dst_recording_id);
        refusal = text;
    }
    else if (-1 != req->dst_recording_id &&
        (NULL != aa_archive_find_active_recording(c, req->dst_recording_id) || -1 == d.stop_position))
    {
        code = AA_ARCHIVE_ERROR_ACTIVE_RECORDING;
        snprintf(text, sizeof(text), "cannot replicate to active recording %" PRId64, req->dst_recording_id);
        refusal = text;
    }
    else if ('\0' == r->replication_channel[0] && '\0' == ctx->replication_channel[0])
    {
        refusal = "no replication channel: give one in the request or set AERON_ARCHIVE_REPLICATION_CHANNEL "
            "(aeron.archive.replication.channel) on this archive, e.g. aeron:udp?endpoint=<this host>:0";
    }
    else if ('\0' == r->src_control_channel[0])
    {
        refusal = "no source control channel: give the source archive's control channel, e.g. "
            "aeron:udp?endpoint=<source host>:8010";
    }
    if (NULL != refusal)
    {
        free(r);
        aa_archive_send_error(c, s, correlation_id, code, "%s", refusal);
        return;
    }
    if ('\0' == r->replication_channel[0])
    {
        snprintf(r->replication_channel, sizeof(r->replication_channel), "%s", ctx->replication_channel);
    }
    if ('\0' == r->response_channel[0])
    {
        /* Aeron's archive client default: aeron:udp?endpoint=<control host>:0 (this archive's control channel host,
         * or the replication channel's when it has none) */
        char endpoint[AA_ARCHIVE_CHANNEL_MAX] = "localhost:0";
        if (!(ctx->control_channel_enabled && aa_archive_channel_param(ctx->control_channel, "endpoint", endpoint,
            sizeof(endpoint))))
        {
            aa_archive_channel_param(r->replication_channel, "endpoint", endpoint, sizeof(endpoint));
        }
        char *colon = strrchr(endpoint, ':');
        if (NULL != colon)
        {
            *colon = '\0';
        }
        snprintf(r->response_channel, sizeof(r->response_channel), "aeron:udp?endpoint=%s:0", endpoint);
    }
    r->replication_id = reps->next_id++;
    r->control_session_id = s->id;
    r->state = AA_REPL_CONNECT;
    r->src_recording_id = req->src_recording_id;
    r->dst_recording_id = req->dst_recording_id;
    r->stop_position = req->stop_position;
    r->channel_tag_id = req->channel_tag_id;
    r->subscription_tag_id = req->subscription_tag_id;
    r->src_control_stream_id = req->src_control_stream_id;
    r->file_io_max_length = req->file_io_max_length;
    r->replication_session_id = req->replication_session_id;
    r->response_async = -1;
    r->request_async = -1;
    r->src_session_id = -1;
    r->next_correlation_id = ((int64_t)(r->replication_id & 0xFFFFF) << 24) + 1;
    r->awaiting = -1;
    r->recording_subscription_id = -1;
    r->replay_session_id = -1;
    r->destination_async = -1;
    r->src_recording_position = -1;
    r->target_position = -1;
    r->position = -1;
    reps->items[reps->count++] = r;
    aa_archive_send_ok(c, s, correlation_id, r->replication_id);
}

void aa_archive_on_replication_request(
    aa_archive_conductor_t *c, aa_archive_control_session_t *s, const aa_archive_message_t *msg)
{
    aa_archive_replicate_request2_t req;
    memset(&req, 0, sizeof(req));
    req.stop_position = -1;
    req.channel_tag_id = -1;
    req.subscription_tag_id = -1;
    req.file_io_max_length = -1;
    req.replication_session_id = -1;
    switch (msg->template_id)
    {
        case AA_ARCHIVE_TEMPLATE_REPLICATE_REQUEST:
            req.correlation_id = msg->replicate_request.correlation_id;
            req.src_recording_id = msg->replicate_request.src_recording_id;
            req.dst_recording_id = msg->replicate_request.dst_recording_id;
            req.src_control_stream_id = msg->replicate_request.src_control_stream_id;
            req.src_control_channel = msg->replicate_request.src_control_channel;
            req.live_destination = msg->replicate_request.live_destination;
            break;
        case AA_ARCHIVE_TEMPLATE_TAGGED_REPLICATE_REQUEST:
            req.correlation_id = msg->tagged_replicate_request.correlation_id;
            req.src_recording_id = msg->tagged_replicate_request.src_recording_id;
            req.dst_recording_id = msg->tagged_replicate_request.dst_recording_id;
            req.channel_tag_id = msg->tagged_replicate_request.channel_tag_id;
            req.subscription_tag_id = msg->tagged_replicate_request.subscription_tag_id;
            req.src_control_stream_id = msg->tagged_replicate_request.src_control_stream_id;
            req.src_control_channel = msg->tagged_replicate_request.src_control_channel;
            req.live_destination = msg->tagged_replicate_request.live_destination;
            break;
        case AA_ARCHIVE_TEMPLATE_REPLICATE_REQUEST2:
            req = msg->replicate_request2;
            break;
        default: /* StopReplication */
        {
            int64_t correlation_id = msg->stop_replication_request.correlation_id;
            int64_t id = msg->stop_replication_request.replication_id;
            aa_archive_replications_t *reps = c->replications;
            for (size_t i = 0; NULL != reps && i < reps->count; i++)
            {
                if (reps->items[i]->replication_id == id && reps->items[i]->state < AA_REPL_DONE)
                {
                    reps->items[i]->stop_requested = true;
                    aa_archive_send_ok(c, s, correlation_id, 0);
                    return;
                }
            }
            aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_UNKNOWN_REPLICATION,
                "unknown replication id %" PRId64, id);
            return;
        }
    }
    aa_on_replicate(c, s, req.correlation_id, &req);
}

