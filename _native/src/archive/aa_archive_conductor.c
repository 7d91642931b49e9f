/*
 * The archive conductor: control sessions (Aeron's protocol: AuthConnect, the authenticator's
 * Challenge / ChallengeResponse rounds, OK with the session id or AUTHENTICATION_REJECTED,
 * Ping/KeepAlive, CloseSession, 5 s timeouts; each request authorised by the session's role), every
 * request, the catalog, and the lifecycles of recording subscriptions, recordings and replays
 * (whose I/O the recorder and replayer run).
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
#include "archive/aa_archive_replication.h"
#include "aeron_async.h"
#include "archive/aa_archive_segment.h"
#include "archive/aa_archive_segments_mgmt.h"
#include "archive/aa_archive_replay_tokens.h"
#include "concurrent/aa_atomic.h"
#include "logbuffer/aa_logbuffer.h"
#include "util/aa_array.h"
#include "util/aa_error.h"
#include "util/aa_parse.h"

#define AA_CONTROL_FRAGMENT_LIMIT 10
#define AA_AUTH_RESEND_NS (200 * 1000000LL)
/* sessions a cap refused that are still sending their error: beyond, a connect is dropped (logged) */
#define AA_MAX_REFUSED_SESSIONS 16
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

bool aa_archive_channel_param(const char *channel, const char *key, char *value, size_t length)
{
    const char *q = strchr(channel, '?');
    size_t key_length = strlen(key);
    for (const char *p = NULL == q ? NULL : q + 1; NULL != p && '\0' != *p;)
    {
        const char *end = strchr(p, '|');
        size_t item = NULL == end ? strlen(p) : (size_t)(end - p);
        if (item > key_length && '=' == p[key_length] && 0 == strncmp(p, key, key_length))
        {
            snprintf(value, length, "%.*s", (int)(item - key_length - 1), p + key_length + 1);
            return true;
        }
        p = NULL == end ? NULL : end + 1;
    }
    return false;
}

/* The response channel as the archive publishes on it (docs/security.md, "The archive"): the
 * client's channel with Aeron's control term length (64 KiB) unless it asks for another, which may
 * not exceed AERON_ARCHIVE_MAX_RESPONSE_TERM_LENGTH (else *refusal says why and the channel gets
 * the archive's term length, so the refusal still reaches the client), and always the archive's
 * sparse setting (a client cannot make the archive allocate whole logs). */
static int aa_response_channel(aa_archive_conductor_t *c, const char *channel, char *out, size_t length,
    char *refusal, size_t refusal_length)
{
    const aa_archive_context_t *ctx = &c->archive->ctx;
    char term[64];
    bool has_term = aa_archive_channel_param(channel, "term-length", term, sizeof(term));
    bool refused = false;
    refusal[0] = '\0';
    if (has_term)
    {
        int64_t term_length = aa_parse_size(term);
        if (term_length < 0 || term_length > ctx->max_response_term_length)
        {
            snprintf(refusal, refusal_length,
                "response channel term-length=%s is over the archive's limit of %" PRId64 " bytes "
                "(AERON_ARCHIVE_MAX_RESPONSE_TERM_LENGTH); leave term-length out of the response channel (the archive "
                "uses %" PRId64 ") or ask for at most that", term, ctx->max_response_term_length,
                ctx->control_term_buffer_length);
            refused = true;
        }
    }
    const char *q = strchr(channel, '?');
    size_t n = NULL == q ? strlen(channel) : (size_t)(q - channel);
    if (n >= length)
    {
        return -1;
    }
    memcpy(out, channel, n);
    char sep = '?';
    for (const char *p = NULL == q ? NULL : q + 1; NULL != p && '\0' != *p;)
    {
        const char *end = strchr(p, '|');
        size_t item = NULL == end ? strlen(p) : (size_t)(end - p);
        bool drop = (item >= 7 && 0 == strncmp(p, "sparse=", 7)) ||
            (refused && item >= 12 && 0 == strncmp(p, "term-length=", 12));
        if (!drop && item > 0)
        {
            if (n + item + 2 >= length)
            {
                return -1;
            }
            out[n++] = sep;
            memcpy(out + n, p, item);
            n += item;
            sep = '|';
        }
        p = NULL == end ? NULL : end + 1;
    }
    int w = snprintf(out + n, length - n, "%s%csparse=%s", "", sep, ctx->control_term_buffer_sparse ? "true" : "false");
    n += (size_t)w;
    if (n < length && (!has_term || refused))
    {
        w = snprintf(out + n, length - n, "|term-length=%" PRId64, ctx->control_term_buffer_length);
        n += (size_t)w;
    }
    if (n < length && NULL != strstr(channel, "control-mode=response") && NULL != c->request_image)
    {
        /* a response channel (reference aeron-wave3.md 6.2): the driver links it to the client's
         * subscription through the request image's correlation id */
        w = snprintf(out + n, length - n, "|response-correlation-id=%" PRId64, c->request_image->correlation_id);
        n += (size_t)w;
    }
    return n < length ? 0 : -1;
}

/* ---- the session proxy an authenticator decides through (archive/aa_archive_auth.h) ---- */

struct aa_archive_session_proxy_stct
{
    aa_archive_conductor_t *conductor;
    aa_archive_control_session_t *session;
};

int64_t aa_archive_session_proxy_id(aa_archive_session_proxy_t *proxy)
{
    return proxy->session->id;
}

bool aa_archive_session_proxy_challenge(aa_archive_session_proxy_t *proxy, const uint8_t *data, size_t length)
{
    aa_archive_control_session_t *s = proxy->session;
    aa_archive_message_t msg;
    memset(&msg, 0, sizeof(msg));
    msg.template_id = AA_ARCHIVE_TEMPLATE_CHALLENGE;
    msg.challenge.control_session_id = s->id;
    msg.challenge.correlation_id = s->correlation_id;
    msg.challenge.encoded_challenge.data = data;
    msg.challenge.encoded_challenge.length = (uint32_t)length;
    aa_archive_session_send(proxy->conductor, s, &msg);
    s->state = AA_CONTROL_SESSION_CHALLENGED;
    s->deadline_ns = aa_archive_now_ns(proxy->conductor) + proxy->conductor->archive->ctx.connect_timeout_ns;
    return 0 == s->queue_length;
}

bool aa_archive_session_proxy_authenticate(aa_archive_session_proxy_t *proxy, const char *principal, int32_t role)
{
    aa_archive_control_session_t *s = proxy->session;
    snprintf(s->principal, sizeof(s->principal), "%s", principal);
    s->role = role;
    s->state = AA_CONTROL_SESSION_AUTHENTICATED;
    s->resend_ns = aa_archive_now_ns(proxy->conductor) + AA_AUTH_RESEND_NS;
    aa_archive_send_ok(proxy->conductor, s, s->correlation_id, s->id);
    return 0 == s->queue_length;
}

void aa_archive_session_proxy_reject(aa_archive_session_proxy_t *proxy)
{
    aa_archive_control_session_t *s = proxy->session;
    s->state = AA_CONTROL_SESSION_REJECTED;
    s->resend_ns = aa_archive_now_ns(proxy->conductor); /* the error goes out at once, then every 200 ms */
}

static void aa_on_auth_connect(aa_archive_conductor_t *c, const aa_archive_auth_connect_request_t *req)
{
    const aa_archive_context_t *ctx = &c->archive->ctx;
    int32_t live = 0, refused = 0;
    for (size_t i = 0; i < c->session_count; i++)
    {
        int32_t state = c->sessions[i]->state;
        refused += AA_CONTROL_SESSION_REFUSED == state;
        live += AA_CONTROL_SESSION_REFUSED != state && AA_CONTROL_SESSION_DONE != state;
    }
    char refusal[512];
    refusal[0] = '\0';
    if (live >= ctx->max_control_sessions)
    {
        if (refused >= AA_MAX_REFUSED_SESSIONS)
        {
            aa_archive_log_error(c->archive, AA_ERROR_CODE_RESOURCE_TEMPORARILY_UNAVAILABLE,
                "a connect was dropped: %d control sessions (AERON_ARCHIVE_MAX_CONTROL_SESSIONS) and %d refusals are "
                "open; raise the limit if these clients are legitimate", live, refused);
            return;
        }
        snprintf(refusal, sizeof(refusal),
            "too many control sessions: the archive runs %d (AERON_ARCHIVE_MAX_CONTROL_SESSIONS); close sessions "
            "that are done, or raise AERON_ARCHIVE_MAX_CONTROL_SESSIONS", live);
    }
    char *channel = aa_archive_var_strdup(&req->response_channel);
    char publish_channel[AA_ARCHIVE_CHANNEL_MAX * 2];
    char channel_refusal[512];
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
    s->correlation_id = req->correlation_id;
    s->client_version = req->version;
    s->response_channel = channel;
    s->response_stream_id = req->response_stream_id;
    s->deadline_ns = aa_archive_now_ns(c) + ctx->connect_timeout_ns;
    s->publication_async = -1;
    s->role = -1;
    c->sessions[c->session_count++] = s;
    int rc = aa_response_channel(c, channel, publish_channel, sizeof(publish_channel), channel_refusal,
        sizeof(channel_refusal));
    if ('\0' == refusal[0] && '\0' != channel_refusal[0])
    {
        snprintf(refusal, sizeof(refusal), "%s", channel_refusal);
    }
    if ('\0' != refusal[0])
    {
        s->refusal = strdup(refusal);
        s->state = AA_CONTROL_SESSION_REFUSED;
        aa_archive_log_error(c->archive, AA_ERROR_CODE_RESOURCE_TEMPORARILY_UNAVAILABLE,
            "control session %" PRId64 " refused: %s", s->id, refusal);
    }
    if (rc < 0 ||
        (s->publication_async = aa_client_async_add_publication(c->client, publish_channel, req->response_stream_id,
            true)) < 0)
    {
        aa_archive_log_error(c->archive, AA_ERROR_CODE_INVALID_CHANNEL,
            "control session %" PRId64 ": could not publish responses on %s stream %" PRId32 ": %s", s->id, channel,
            req->response_stream_id, rc < 0 ? "the channel is too long" : aa_errmsg());
        s->state = AA_CONTROL_SESSION_DONE;
        return;
    }
    if (AA_CONTROL_SESSION_CONNECTING == s->state)
    {
        /* Aeron calls the authenticator at once, with the credentials (empty, never absent) */
        c->authenticator.on_connect_request(c->authenticator.state, s->id, req->encoded_credentials.data,
            req->encoded_credentials.length, aa_archive_now_ms(c));
    }
}

static void aa_session_close(aa_archive_conductor_t *c, aa_archive_control_session_t *s)
{
    if (AA_CONTROL_SESSION_DONE != s->state && AA_CONTROL_SESSION_REFUSED != s->state)
    {
        c->authenticator.on_session_closed(c->authenticator.state, s->id);
    }
    s->state = AA_CONTROL_SESSION_DONE;
    if (NULL != s->publication)
    {
        aa_publication_close(s->publication);
        s->publication = NULL;
    }
}

static const char *aa_session_state_name(int32_t state)
{
    static const char *const names[] = { "CONNECTING", "ACTIVE", "DONE", "CONNECTED", "CHALLENGED", "AUTHENTICATED",
        "REJECTED", "REFUSED" };
    return state >= 0 && state < 8 ? names[state] : "?";
}

/* CONNECTING: the response publication added and connected; then CONNECTED (or, refused by a cap,
 * the refusal sent and the session closed). */
static int aa_session_connecting(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t now_ns)
{
    int work = 0;
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
        if (AA_CONTROL_SESSION_REFUSED == s->state)
        {
            aa_archive_send_error(c, s, s->connect_correlation_id, AA_ARCHIVE_ERROR_GENERIC, "%s", s->refusal);
            aa_session_flush(c, s);
            aa_session_close(c, s);
            return 1;
        }
        s->state = AA_CONTROL_SESSION_CONNECTED;
        s->deadline_ns = now_ns + c->archive->ctx.connect_timeout_ns;
        s->resend_ns = now_ns;
        s->next_ping_ns = now_ns + c->archive->ctx.session_liveness_check_interval_ns;
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

/* CONNECTED, CHALLENGED, AUTHENTICATED, REJECTED (reference aeron-wave3.md 6.2). */
static int aa_session_authenticating(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t now_ns)
{
    aa_archive_session_proxy_t proxy = { c, s };
    int64_t now_ms = aa_archive_now_ms(c);
    bool step = now_ns >= s->resend_ns;
    if (step)
    {
        s->resend_ns = now_ns + AA_AUTH_RESEND_NS;
    }
    switch (s->state)
    {
        case AA_CONTROL_SESSION_CONNECTED:
            if (!step)
            {
                break;
            }
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
            c->authenticator.on_connected_session(c->authenticator.state, &proxy, now_ms);
            return 1;
        case AA_CONTROL_SESSION_CHALLENGED:
            c->authenticator.on_challenged_session(c->authenticator.state, &proxy, now_ms);
            break;
        case AA_CONTROL_SESSION_AUTHENTICATED:
            if (step)
            {
                aa_archive_send_ok(c, s, s->correlation_id, s->id);
                return 1;
            }
            return 0; /* the authenticator cleared the deadline: the first request makes it ACTIVE */
        case AA_CONTROL_SESSION_REJECTED:
            if (step)
            {
                aa_archive_send_error(c, s, s->correlation_id, AA_ARCHIVE_ERROR_AUTHENTICATION_REJECTED, "%s",
                    "authentication rejected");
            }
            break;
        default:
            break;
    }
    if (AA_CONTROL_SESSION_AUTHENTICATED != s->state && now_ns > s->deadline_ns)
    {
        aa_archive_log_error(c->archive, AA_ERROR_CODE_TIMEOUT,
            "control session %" PRId64 " (response channel %s): failed to establish initial connection: state=%s",
            s->id, s->response_channel, aa_session_state_name(s->state));
        aa_session_flush(c, s);
        aa_session_close(c, s);
        return 1;
    }
    return step ? 1 : 0;
}

static int aa_session_do_work(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t now_ns)
{
    int work = 0;
    if (AA_CONTROL_SESSION_CONNECTING == s->state || AA_CONTROL_SESSION_REFUSED == s->state)
    {
        return aa_session_connecting(c, s, now_ns);
    }
    if (AA_CONTROL_SESSION_DONE == s->state)
    {
        return 0;
    }
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
    if (AA_CONTROL_SESSION_ACTIVE != s->state)
    {
        return work + aa_session_authenticating(c, s, now_ns);
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
    return work;
}

static void aa_session_free(aa_archive_control_session_t *s)
{
    free(s->refusal);
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
    if (NULL != s && s->image != fragment->image && AA_CONTROL_SESSION_ACTIVE == s->state &&
        aa_archive_replay_by_token(c, s, &msg))
    {
        return AA_POLL_CONTINUE; /* a replay over a response channel, with its token */
    }
    /* Aeron finds a ChallengeResponse's session without the image check; this archive keeps it, so
     * only the client that opened the session can answer its challenge (docs/security.md, "The archive") */
    if (NULL == s || s->image != fragment->image || AA_CONTROL_SESSION_REFUSED == s->state)
    {
        return AA_POLL_CONTINUE; /* not a session of this image: dropped, as Aeron does */
    }
    if (AA_ARCHIVE_TEMPLATE_CHALLENGE_RESPONSE == msg.template_id)
    {
        if (AA_CONTROL_SESSION_CHALLENGED == s->state)
        {
            s->correlation_id = msg.challenge_response.correlation_id;
            c->authenticator.on_challenge_response(c->authenticator.state, s->id,
                msg.challenge_response.encoded_credentials.data, msg.challenge_response.encoded_credentials.length,
                aa_archive_now_ms(c));
        }
        return AA_POLL_CONTINUE;
    }
    if (AA_ARCHIVE_TEMPLATE_CLOSE_SESSION_REQUEST == msg.template_id)
    {
        aa_session_close(c, s);
        return AA_POLL_CONTINUE;
    }
    if (AA_CONTROL_SESSION_AUTHENTICATED == s->state)
    {
        /* the first request of any kind makes the session ACTIVE, and is then handled */
        s->state = AA_CONTROL_SESSION_ACTIVE;
        s->next_ping_ns = aa_archive_now_ns(c) + c->archive->ctx.session_liveness_check_interval_ns;
    }
    if (AA_CONTROL_SESSION_ACTIVE != s->state)
    {
        return AA_POLL_CONTINUE; /* requests before authentication are dropped, as Aeron does */
    }
    if (!aa_archive_role_allows(s->role, msg.template_id))
    {
        /* every request starts with controlSessionId, correlationId: the codecs keep that layout */
        const char *name = aa_archive_template_name(msg.template_id);
        aa_archive_send_error(c, s, msg.keep_alive_request.correlation_id, AA_ARCHIVE_ERROR_UNAUTHORISED_ACTION,
            "unauthorised action: %s for principal '%s' (role %s); it needs the role %s: connect with the credentials "
            "of such a principal, or give this one that role in the archive's credentials",
            NULL != name ? name : "this request", s->principal, aa_archive_role_name(s->role),
            aa_archive_roles_allowing(msg.template_id));
        return AA_POLL_CONTINUE;
    }
    if (AA_ARCHIVE_TEMPLATE_KEEP_ALIVE_REQUEST == msg.template_id)
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
    work += aa_archive_replications_do_work(c, now_ns);
    work += aa_archive_conductor_check_recordings(c);
    work += aa_archive_conductor_check_replays(c);
    work += aa_archive_segments_do_work(c, now_ns);
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
    if (aa_archive_authenticator_create(&c->authenticator, &archive->ctx) < 0)
    {
        aa_archive_catalog_close(c->catalog);
        free(c);
        return -1;
    }
    if (archive->ctx.control_channel_enabled && 0 == strcmp(c->authenticator.name, "allow-all"))
    {
        aa_archive_log_error(c->archive, AA_ERROR_CODE_CONFIGURATION,
            "the control channel %s accepts every client with every request (AERON_ARCHIVE_AUTHENTICATOR=allow-all, "
            "Aeron's default): set AERON_ARCHIVE_AUTHENTICATOR=credentials with AERON_ARCHIVE_CREDENTIALS_FILE, or keep "
            "the channel on a network only trusted clients reach", archive->ctx.control_channel);
    }
    c->local_control_async = aa_client_async_add_subscription(
        c->client, archive->ctx.local_control_channel, archive->ctx.local_control_stream_id);
    if (c->local_control_async < 0)
    {
        AA_APPEND_ERR("the local control channel %s", archive->ctx.local_control_channel);
        aa_archive_authenticator_close(&c->authenticator);
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
            aa_archive_authenticator_close(&c->authenticator);
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
    aa_archive_replications_close(c);
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
    aa_archive_segments_close(c);
    aa_archive_replay_tokens_close(c);
    aa_archive_authenticator_close(&c->authenticator);
    aa_archive_catalog_close(c->catalog);
    free(c->scratch);
    free(c);
}

/* ---- a Python authenticator's thread (aeron_async.h; docs/security.md, "The archive") ---- */

int aa_archive_auth_poll(aa_archive_t *archive, aa_archive_auth_event_t *event, int64_t timeout_ms)
{
    return aa_archive_authenticator_poll(&archive->conductor->authenticator, event, timeout_ms);
}

int aa_archive_auth_answer(aa_archive_t *archive, int64_t session_id, int32_t decision, const uint8_t *data,
    size_t length, int32_t role)
{
    return aa_archive_authenticator_answer(&archive->conductor->authenticator, session_id, decision, data, length, role);
}
