/*
 * The archive conductor: control sessions (Aeron's protocol: AuthConnect -> OK with the session
 * id, Ping/KeepAlive, CloseSession, 5 s timeouts), every request, the catalog, and the lifecycles
 * of recording subscriptions, recordings and replays (whose I/O the recorder and replayer run).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "archive/aa_archive_conductor.h"
#include "aeron_async.h"
#include "archive/aa_archive_segment.h"
#include "concurrent/aa_atomic.h"
#include "logbuffer/aa_logbuffer.h"
#include "util/aa_array.h"
#include "util/aa_error.h"

#define AA_CONTROL_FRAGMENT_LIMIT 10
#define AA_PROTOCOL_MAJOR(v) (((v) >> 16) & 0xFF)

int64_t aa_archive_now_ns(aa_archive_conductor_t *c)
{
    return aa_clock_nano_time(&c->archive->clock);
}

int64_t aa_archive_now_ms(aa_archive_conductor_t *c)
{
    return aa_clock_epoch_time(&c->archive->clock);
}

char *aa_archive_var_strdup(const aa_archive_var_t *var)
{
    char *s = malloc((size_t)var->length + 1);
    if (NULL != s)
    {
        memcpy(s, var->data, var->length);
        s[var->length] = '\0';
    }
    return s;
}

/* ---- responses ---- */

static int aa_session_enqueue(aa_archive_conductor_t *c, aa_archive_control_session_t *s, const uint8_t *msg, size_t length)
{
    size_t need = s->queue_length + 4 + length;
    if (need > s->queue_capacity)
    {
        size_t cap = s->queue_capacity ? s->queue_capacity : 4096;
        while (cap < need)
        {
            cap *= 2;
        }
        uint8_t *grown = realloc(s->queue, cap);
        if (NULL == grown)
        {
            return -1;
        }
        s->queue = grown;
        s->queue_capacity = cap;
    }
    if (0 == s->queue_length)
    {
        s->queue_since_ns = aa_archive_now_ns(c);
    }
    int32_t len = (int32_t)length;
    memcpy(s->queue + s->queue_length, &len, 4);
    memcpy(s->queue + s->queue_length + 4, msg, length);
    s->queue_length = need;
    return 0;
}

static int aa_session_flush(aa_archive_conductor_t *c, aa_archive_control_session_t *s)
{
    size_t offset = 0;
    int sent = 0;
    while (offset < s->queue_length)
    {
        int32_t len;
        memcpy(&len, s->queue + offset, 4);
        int64_t rc = aa_publication_offer(s->publication, s->queue + offset + 4, (size_t)len, 0);
        if (rc < 0)
        {
            break;
        }
        offset += 4 + (size_t)len;
        sent++;
    }
    if (offset > 0)
    {
        memmove(s->queue, s->queue + offset, s->queue_length - offset);
        s->queue_length -= offset;
        s->queue_since_ns = aa_archive_now_ns(c);
    }
    return sent;
}

void aa_archive_session_send_bytes(aa_archive_conductor_t *c, aa_archive_control_session_t *s, const uint8_t *msg,
    size_t length)
{
    if (NULL == s->publication || AA_CONTROL_SESSION_DONE == s->state)
    {
        return;
    }
    if (0 == s->queue_length && aa_publication_offer(s->publication, msg, length, 0) > 0)
    {
        return;
    }
    aa_session_enqueue(c, s, msg, length);
}

/* Encode msg and send it on the session's response publication, queueing what it refuses. */
void aa_archive_session_send(aa_archive_conductor_t *c, aa_archive_control_session_t *s, const aa_archive_message_t *msg)
{
    if (NULL == s->publication || AA_CONTROL_SESSION_DONE == s->state)
    {
        return;
    }
    int64_t length = aa_archive_encoded_length(msg);
    if (length < 0)
    {
        aa_archive_log_error(c->archive, AA_ERROR_CODE_GENERIC_ERROR, "could not encode a response: %s", aa_errmsg());
        return;
    }
    if ((size_t)length > c->scratch_capacity)
    {
        uint8_t *grown = realloc(c->scratch, (size_t)length);
        if (NULL == grown)
        {
            return;
        }
        c->scratch = grown;
        c->scratch_capacity = (size_t)length;
    }
    aa_archive_encode(c->scratch, c->scratch_capacity, msg);
    if (0 == s->queue_length && aa_publication_offer(s->publication, c->scratch, (size_t)length, 0) > 0)
    {
        return;
    }
    aa_session_enqueue(c, s, c->scratch, (size_t)length);
}

void aa_archive_send_response(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    int64_t relevant_id, int32_t code, const char *error)
{
    aa_archive_message_t msg;
    memset(&msg, 0, sizeof(msg));
    msg.template_id = AA_ARCHIVE_TEMPLATE_CONTROL_RESPONSE;
    msg.control_response.control_session_id = s->id;
    msg.control_response.correlation_id = correlation_id;
    msg.control_response.relevant_id = relevant_id;
    msg.control_response.code = code;
    msg.control_response.version = AA_ARCHIVE_PROTOCOL_SEMANTIC_VERSION;
    if (NULL != error)
    {
        msg.control_response.error_message.data = (const uint8_t *)error;
        msg.control_response.error_message.length = (uint32_t)strlen(error);
    }
    aa_archive_session_send(c, s, &msg);
}

void aa_archive_send_ok(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id, int64_t relevant_id)
{
    aa_archive_send_response(c, s, correlation_id, relevant_id, AA_ARCHIVE_RESPONSE_OK, NULL);
}

void aa_archive_send_error(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    int64_t error_code, const char *fmt, ...)
{
    char text[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(text, sizeof(text), fmt, args);
    va_end(args);
    aa_archive_send_response(c, s, correlation_id, error_code, AA_ARCHIVE_RESPONSE_ERROR, text);
}

aa_archive_control_session_t *aa_archive_find_session(aa_archive_conductor_t *c, int64_t id)
{
    for (size_t i = 0; i < c->session_count; i++)
    {
        if (c->sessions[i]->id == id && AA_CONTROL_SESSION_DONE != c->sessions[i]->state)
        {
            return c->sessions[i];
        }
    }
    return NULL;
}

void aa_archive_send_signal(aa_archive_conductor_t *c, int64_t control_session_id, int64_t correlation_id,
    int64_t recording_id, int64_t subscription_id, int64_t position, int32_t signal)
{
    aa_archive_control_session_t *s = aa_archive_find_session(c, control_session_id);
    if (NULL == s)
    {
        return;
    }
    aa_archive_message_t msg;
    memset(&msg, 0, sizeof(msg));
    msg.template_id = AA_ARCHIVE_TEMPLATE_RECORDING_SIGNAL_EVENT;
    msg.recording_signal_event.control_session_id = s->id;
    msg.recording_signal_event.correlation_id = correlation_id;
    msg.recording_signal_event.recording_id = recording_id;
    msg.recording_signal_event.subscription_id = subscription_id;
    msg.recording_signal_event.position = position;
    msg.recording_signal_event.signal = signal;
    aa_archive_session_send(c, s, &msg);
}


/* ---- control sessions ---- */

/* The response channel as the archive publishes on it: Aeron's control term length (64 KiB) and
 * sparse file unless the client's channel says otherwise. */
static int aa_response_channel(aa_archive_conductor_t *c, const char *channel, char *out, size_t length)
{
    const aa_archive_context_t *ctx = &c->archive->ctx;
    int n = snprintf(out, length, "%s", channel);
    bool has_params = NULL != strchr(channel, '?');
    if (NULL == strstr(channel, "term-length="))
    {
        n += snprintf(out + n, length > (size_t)n ? length - (size_t)n : 0, "%cterm-length=%" PRId64,
            has_params ? '|' : '?', ctx->control_term_buffer_length);
        has_params = true;
    }
    if (NULL == strstr(channel, "sparse="))
    {
        n += snprintf(out + n, length > (size_t)n ? length - (size_t)n : 0, "%csparse=%s",
            has_params ? '|' : '?', ctx->control_term_buffer_sparse ? "true" : "false");
    }
    return (size_t)n < length ? 0 : -1;
}

static void aa_on_auth_connect(aa_archive_conductor_t *c, const aa_archive_auth_connect_request_t *req)
{
    char *channel = aa_archive_var_strdup(&req->response_channel);
    char publish_channel[AA_ARCHIVE_CHANNEL_MAX * 2];
    aa_archive_control_session_t *s = calloc(1, sizeof(*s));
    if (NULL == channel || NULL == s ||
        aa_array_ensure_capacity((void **)&c->sessions, &c->session_capacity, c->session_count, sizeof(*c->sessions)) < 0)
    {
        free(channel);
        free(s);
        aa_archive_log_error(c->archive, AA_ERROR_CODE_GENERIC_ERROR, "%s", "out of memory for a control session");
        return;
    }
    s->id = c->next_session_id++;
    s->state = AA_CONTROL_SESSION_CONNECTING;
    s->image = c->request_image;
    s->connect_correlation_id = req->correlation_id;
    s->client_version = req->version;
    s->response_channel = channel;
    s->response_stream_id = req->response_stream_id;
    s->deadline_ns = aa_archive_now_ns(c) + c->archive->ctx.connect_timeout_ns;
    s->publication_async = -1;
    c->sessions[c->session_count++] = s;
    if (aa_response_channel(c, channel, publish_channel, sizeof(publish_channel)) < 0 ||
        (s->publication_async = aa_client_async_add_publication(c->client, publish_channel, req->response_stream_id,
            true)) < 0)
    {
        aa_archive_log_error(c->archive, AA_ERROR_CODE_INVALID_CHANNEL,
            "control session %" PRId64 ": could not publish responses on %s stream %" PRId32 ": %s", s->id, channel,
            req->response_stream_id, aa_errmsg());
        s->state = AA_CONTROL_SESSION_DONE;
    }
}

static void aa_session_close(aa_archive_conductor_t *c, aa_archive_control_session_t *s)
{
    s->state = AA_CONTROL_SESSION_DONE;
    if (NULL != s->publication)
    {
        aa_publication_close(s->publication);
        s->publication = NULL;
    }
}

static int aa_session_do_work(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t now_ns)
{
    int work = 0;
    if (AA_CONTROL_SESSION_CONNECTING == s->state)
    {
        if (NULL == s->publication && s->publication_async >= 0)
        {
            aa_publication_t *pub = NULL;
            int rc = aa_client_async_add_publication_poll(c->client, s->publication_async, &pub);
            if (rc < 0)
            {
                aa_archive_log_error(c->archive, AA_ERROR_CODE_INVALID_CHANNEL,
                    "control session %" PRId64 ": could not publish responses on %s: %s", s->id, s->response_channel,
                    aa_errmsg());
                s->publication_async = -1;
                aa_session_close(c, s);
                return 1;
            }
            if (1 == rc)
            {
                s->publication = pub;
                s->publication_async = -1;
                work++;
            }
        }
        if (NULL != s->publication && aa_publication_is_connected(s->publication))
        {
            s->state = AA_CONTROL_SESSION_ACTIVE;
            s->next_ping_ns = now_ns + c->archive->ctx.session_liveness_check_interval_ns;
            if (0 != s->client_version && AA_PROTOCOL_MAJOR(s->client_version) != AA_ARCHIVE_PROTOCOL_MAJOR_VERSION)
            {
                aa_archive_send_error(c, s, s->connect_correlation_id, AA_ARCHIVE_ERROR_GENERIC,
                    "client protocol version %d.%d.%d is not compatible with the archive's %d.x; use a client of "
                    "major version %d", AA_PROTOCOL_MAJOR(s->client_version), (s->client_version >> 8) & 0xFF,
                    s->client_version & 0xFF, AA_ARCHIVE_PROTOCOL_MAJOR_VERSION, AA_ARCHIVE_PROTOCOL_MAJOR_VERSION);
                aa_session_flush(c, s);
                aa_session_close(c, s);
                return 1;
            }
            /* the default authenticator accepts everyone */
            aa_archive_send_ok(c, s, s->connect_correlation_id, s->id);
            return work + 1;
        }
        if (now_ns > s->deadline_ns)
        {
            aa_archive_log_error(c->archive, AA_ERROR_CODE_TIMEOUT,
                "control session %" PRId64 ": no subscriber on the response channel %s stream %" PRId32 " within %" PRId64
                " ms; the client must subscribe to its response channel before connecting", s->id, s->response_channel,
                s->response_stream_id, c->archive->ctx.connect_timeout_ns / 1000000);
            aa_session_close(c, s);
            return 1;
        }
        return work;
    }
    if (AA_CONTROL_SESSION_ACTIVE == s->state)
    {
        if (s->queue_length > 0)
        {
            work += aa_session_flush(c, s);
            if (s->queue_length > 0 && now_ns - s->queue_since_ns > c->archive->ctx.connect_timeout_ns)
            {
                aa_archive_log_error(c->archive, AA_ERROR_CODE_TIMEOUT,
                    "control session %" PRId64 ": a response stayed unsent for %" PRId64 " ms; session closed", s->id,
                    c->archive->ctx.connect_timeout_ns / 1000000);
                aa_session_close(c, s);
                return 1;
            }
        }
        if (!aa_publication_is_connected(s->publication) || aa_publication_is_closed(s->publication))
        {
            aa_session_close(c, s);
            return 1;
        }
        if (now_ns >= s->next_ping_ns)
        {
            s->next_ping_ns = now_ns + c->archive->ctx.session_liveness_check_interval_ns;
            if (0 == s->queue_length)
            {
                aa_archive_message_t msg;
                memset(&msg, 0, sizeof(msg));
                msg.template_id = AA_ARCHIVE_TEMPLATE_PING;
                msg.ping.control_session_id = s->id;
                uint8_t buffer[64];
                int64_t length = aa_archive_encode(buffer, sizeof(buffer), &msg);
                if (length > 0)
                {
                    aa_publication_offer(s->publication, buffer, (size_t)length, 0);
                }
            }
            work++;
        }
    }
    return work;
}

static void aa_session_free(aa_archive_control_session_t *s)
{
    free(s->queue);
    free(s->response_channel);
    free(s);
}

static int aa_sessions_do_work(aa_archive_conductor_t *c, int64_t now_ns)
{
    int work = 0;
    for (size_t i = 0; i < c->session_count;)
    {
        aa_archive_control_session_t *s = c->sessions[i];
        work += aa_session_do_work(c, s, now_ns);
        if (AA_CONTROL_SESSION_DONE == s->state)
        {
            if (s->publication_async >= 0)
            {
                /* still being added: wait for it, then close it */
                aa_publication_t *pub = NULL;
                int rc = aa_client_async_add_publication_poll(c->client, s->publication_async, &pub);
                if (0 == rc)
                {
                    i++;
                    continue;
                }
                if (1 == rc)
                {
                    aa_publication_close(pub);
                }
                s->publication_async = -1;
            }
            c->sessions[i] = c->sessions[--c->session_count];
            aa_session_free(s);
            continue;
        }
        i++;
    }
    return work;
}

/* ---- requests ---- */

static int aa_control_handler(void *clientd, const aa_poll_fragment_t *fragment)
{
    aa_archive_conductor_t *c = clientd;
    const uint8_t *frame = fragment->frame;
    uint8_t flags = frame[5];
    const uint8_t *payload = frame + AA_DATA_HEADER_LENGTH;
    size_t length = (size_t)fragment->frame_length - AA_DATA_HEADER_LENGTH;
    if ((flags & 0xC0) != 0xC0)
    {
        aa_archive_log_error(c->archive, AA_ERROR_CODE_MALFORMED_COMMAND, "%s",
            "a fragmented control request was dropped (control requests fit one frame)");
        return AA_POLL_CONTINUE;
    }
    aa_archive_message_t msg;
    if (aa_archive_decode(payload, length, &msg) < 0)
    {
        aa_archive_log_error(c->archive, AA_ERROR_CODE_MALFORMED_COMMAND, "control request dropped: %s", aa_errmsg());
        /* answer when it names an active session of this image, so the client learns what was wrong */
        if (length >= AA_ARCHIVE_MESSAGE_HEADER_LENGTH + 16)
        {
            aa_archive_header_t header;
            aa_archive_decode_header(payload, length, &header);
            int64_t session_id, correlation_id;
            memcpy(&session_id, payload + AA_ARCHIVE_MESSAGE_HEADER_LENGTH, 8);
            memcpy(&correlation_id, payload + AA_ARCHIVE_MESSAGE_HEADER_LENGTH + 8, 8);
            aa_archive_control_session_t *s = aa_archive_find_session(c, session_id);
            if (NULL != s && s->image == fragment->image && AA_CONTROL_SESSION_ACTIVE == s->state &&
                AA_ARCHIVE_TEMPLATE_AUTH_CONNECT_REQUEST != header.template_id)
            {
                aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC,
                    "malformed or unknown control message (template %d, schema %d, version %d): %s", header.template_id,
                    header.schema_id, header.version, aa_errmsg());
            }
        }
        return AA_POLL_CONTINUE;
    }
    c->request_image = fragment->image;
    if (AA_ARCHIVE_TEMPLATE_AUTH_CONNECT_REQUEST == msg.template_id)
    {
        aa_on_auth_connect(c, &msg.auth_connect_request);
        return AA_POLL_CONTINUE;
    }
    /* every other request starts with the control session id */
    int64_t session_id;
    memcpy(&session_id, payload + AA_ARCHIVE_MESSAGE_HEADER_LENGTH, 8);
    aa_archive_control_session_t *s = aa_archive_find_session(c, session_id);
    if (NULL == s || s->image != fragment->image)
    {
        return AA_POLL_CONTINUE; /* not a session of this image: dropped, as Aeron does */
    }
    if (AA_ARCHIVE_TEMPLATE_CLOSE_SESSION_REQUEST == msg.template_id)
    {
        aa_session_close(c, s);
        return AA_POLL_CONTINUE;
    }
    if (AA_ARCHIVE_TEMPLATE_KEEP_ALIVE_REQUEST == msg.template_id)
    {
        return AA_POLL_CONTINUE;
    }
    if (AA_CONTROL_SESSION_ACTIVE != s->state)
    {
        return AA_POLL_CONTINUE;
    }
    aa_archive_on_request(c, s, &msg);
    return AA_POLL_CONTINUE;
}

/* Until the client has added a control subscription: polls its addition, logging a failure. */
static void aa_control_subscription_poll_added(
    aa_archive_conductor_t *c, int64_t *async_id, aa_subscription_t **subscription, const char *what)
{
    if (NULL == *subscription && *async_id >= 0)
    {
        int rc = aa_client_async_add_subscription_poll(c->client, *async_id, subscription);
        if (rc < 0)
        {
            aa_archive_log_error(c->archive, AA_ERROR_CODE_INVALID_CHANNEL, "%s: %s", what, aa_errmsg());
        }
        if (0 != rc)
        {
            *async_id = -1;
        }
    }
}

static int aa_control_subscriptions_do_work(aa_archive_conductor_t *c)
{
    int work = 0;
    aa_control_subscription_poll_added(c, &c->local_control_async, &c->local_control, "local control channel");
    aa_control_subscription_poll_added(c, &c->udp_control_async, &c->udp_control, "control channel");
    if (NULL != c->local_control)
    {
        work += aa_subscription_controlled_poll(c->local_control, aa_control_handler, c, AA_CONTROL_FRAGMENT_LIMIT);
    }
    if (NULL != c->udp_control)
    {
        work += aa_subscription_controlled_poll(c->udp_control, aa_control_handler, c, AA_CONTROL_FRAGMENT_LIMIT);
    }
    return work;
}

/* ---- the agent ---- */

int aa_archive_conductor_do_work(void *state)
{
    aa_archive_conductor_t *c = state;
    int work = aa_client_do_work(c->client);
    if (work < 0)
    {
        work = 0;
    }
    int64_t now_ns = aa_archive_now_ns(c);
    aa_archive_update_activity(c->archive, aa_archive_now_ms(c));
    work += aa_control_subscriptions_do_work(c);
    work += aa_sessions_do_work(c, now_ns);
    work += aa_archive_conductor_check_recordings(c);
    work += aa_archive_conductor_check_replays(c);
    return work;
}

int aa_archive_conductor_create(aa_archive_conductor_t **out, aa_archive_t *archive)
{
    aa_archive_conductor_t *c = calloc(1, sizeof(*c));
    if (NULL == c)
    {
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "%s", "out of memory");
        return -1;
    }
    c->archive = archive;
    c->client = archive->client;
    c->local_control_async = -1;
    c->udp_control_async = -1;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    /* control session ids: unique within a run, and unlikely to repeat one of an earlier run */
    c->next_session_id = ((int64_t)(ts.tv_nsec & 0x7FFFF) << 12) + 1;
    if (aa_archive_catalog_open(&c->catalog, archive->ctx.archive_dir, archive->ctx.catalog_capacity,
        archive->ctx.catalog_file_sync_level, archive->ctx.record_checksum, AA_ARCHIVE_CATALOG_CREATE) < 0)
    {
        AA_APPEND_ERR("could not open the archive catalog in %s", archive->ctx.archive_dir);
        free(c);
        return -1;
    }
    if (aa_archive_recover(c) < 0)
    {
        aa_archive_catalog_close(c->catalog);
        free(c);
        return -1;
    }
    c->local_control_async = aa_client_async_add_subscription(
        c->client, archive->ctx.local_control_channel, archive->ctx.local_control_stream_id);
    if (c->local_control_async < 0)
    {
        AA_APPEND_ERR("the local control channel %s", archive->ctx.local_control_channel);
        aa_archive_catalog_close(c->catalog);
        free(c);
        return -1;
    }
    if (archive->ctx.control_channel_enabled)
    {
        c->udp_control_async = aa_client_async_add_subscription(
            c->client, archive->ctx.control_channel, archive->ctx.control_stream_id);
        if (c->udp_control_async < 0)
        {
            AA_APPEND_ERR("the control channel %s", archive->ctx.control_channel);
            aa_archive_catalog_close(c->catalog);
            free(c);
            return -1;
        }
    }
    *out = c;
    return 0;
}

void aa_archive_conductor_close(aa_archive_conductor_t *c)
{
    aa_archive_conductor_close_all(c);
    /* requests stop first (clients see their control publications lose the archive), then the
     * sessions' response publications close */
    if (NULL != c->local_control)
    {
        aa_subscription_close(c->local_control);
    }
    if (NULL != c->udp_control)
    {
        aa_subscription_close(c->udp_control);
    }
    for (size_t i = 0; i < c->session_count; i++)
    {
        aa_session_close(c, c->sessions[i]);
        aa_session_free(c->sessions[i]);
    }
    free(c->sessions);
    aa_archive_catalog_close(c->catalog);
    free(c->scratch);
    free(c);
}
