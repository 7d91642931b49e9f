/*
 * The JVM connector's reads of a remote archive (docs/spark.md, "The JVM connector"): a small
 * blocking archive control client over the project's C client, as aeron_async/spark/reader.py and
 * columns.py use aeron_async.archive from Python. Every wait is bounded by the session's timeout.
 *
 * remoteOpen(aeron dir, control channel, control stream, response channel, response stream, timeout s)
 *     a control session (its own client of the local driver; session-id'd control and response
 *     channels, AuthConnect with the client's credentials from the environment as the Python client
 *     sends them: AERON_ARCHIVE_CLIENT_CREDENTIALS, else the file AERON_ARCHIVE_CLIENT_CREDENTIALS_FILE
 *     names, else none): a handle
 * remoteList(session, recording id, channel, stream id)   the descriptors of one recording (id >= 0;
 *     none when the archive does not know it) or of a channel + stream (ListRecordingsForUri, paged):
 *     {long[] fields (Native.RECORDING_FIELDS a recording), String[] {original, stripped} channels}
 * remoteMaxRecordedPosition(session, recording id)
 * remoteFindLastMatchingRecording(session, min recording id, channel fragment, stream id, session id)
 *     the newest matching recording's id, -1 when none (the sink's durable=true wait, SinkWriter.java)
 * remoteReplayOpen(session, recording id, position, length, replay channel, replay stream, from, to)
 *     a replay of [position, position + length) read from `from` to `to` (message start positions)
 *     on a subscription of the replay channel with the replay's session id: a handle
 * remoteReplayPoll(replay, out, data, offsets, positions, reserved)   whole messages into the column
 *     buffers (aa_columns_poll) until they are full, the range is done, or data stops coming for a
 *     while with rows there; out = {rows, data bytes needed (a message larger than the data buffer,
 *     no rows), done, position where the replay ended before `to` (else -1)}
 * remoteReplayClose(replay)   StopReplay (the archive may have ended it already) and the subscription
 * remoteClose(session)        CloseSession, the publications, subscription and client
 *
 * Errors throw java.io.IOException with the Python client's texts (aeron_async/archive/_session.py).
 */
#include <errno.h>
#include <inttypes.h>
#include <jni.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aeron_async.h"
#include "util/aa_error.h"

#include "aa_spark_jni_client.h"

#define RESPONSE_CAPACITY (1 << 16)
#define RESPONSE_MESSAGES 64
#define LIST_PAGE 256
#define LINGER_MS 50
#define KEEP_ALIVE_MS 1000

typedef struct remote_stct
{
    aa_client_t *client;
    aa_publication_t *request;
    aa_subscription_t *response;
    int64_t session_id;
    int64_t correlation_id;
    int64_t timeout_ms;
    int64_t last_request_ms;
    char timeout_text[32];
    char control_channel[512];
    int32_t control_stream_id;
    char aeron_dir[512];
    uint8_t buffer[RESPONSE_CAPACITY];
    aa_message_t messages[RESPONSE_MESSAGES];
}
remote_t;

typedef struct replay_stct
{
    remote_t *remote;
    aa_subscription_t *subscription;
    aa_image_t *image;
    int64_t replay_session_id;
    int64_t recording_id;
    int64_t low, high;
    aa_columns_t columns;
}
replay_t;

static void throw_io(JNIEnv *env, const char *message)
{
    jclass type = (*env)->FindClass(env, "java/io/IOException");
    if (NULL != type)
    {
        (*env)->ThrowNew(env, type, message);
    }
}

static void throw_errmsg(JNIEnv *env)
{
    throw_io(env, aa_errmsg());
}

/* `channel` with `param=value` added ('|' after a '?', else '?') */
static void with_param(char *out, size_t capacity, const char *channel, const char *param, int64_t value)
{
    snprintf(out, capacity, "%s%c%s=%" PRId64, channel, NULL != strchr(channel, '?') ? '|' : '?', param, value);
}

static bool names_session_id(const char *channel)
{
    return NULL != strstr(channel, "?session-id=") || NULL != strstr(channel, "|session-id=");
}

/* a random session id for the control channels, as _channels.new_session_id */
static int32_t new_session_id(void)
{
    static bool seeded;
    if (!seeded)
    {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        srandom((unsigned)(ts.tv_nsec ^ ts.tv_sec ^ (long)getpid()));
        seeded = true;
    }
    return (int32_t)((1 << 16) + random() % ((1L << 31) - 1 - (1 << 16)));
}

/* sends msg (its correlation id set by the caller) within the timeout; -1 with the error set */
static int send_request(remote_t *r, const char *operation, aa_archive_message_t *msg)
{
    uint8_t buffer[2048];
    int64_t length = aa_archive_encode(buffer, sizeof(buffer), msg);
    if (length < 0)
    {
        return -1;
    }
    int64_t deadline = aa_spark_now_ms() + r->timeout_ms;
    while (true)
    {
        int64_t result = aa_publication_offer(r->request, buffer, (size_t)length, 0);
        if (result >= 0)
        {
            r->last_request_ms = aa_spark_now_ms();
            return 0;
        }
        bool listening = aa_publication_is_connected(r->request);
        if (!listening && r->session_id >= 0)
        {
            AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "%s: the archive's control session is gone (its control "
                "publication lost its subscriber): the archive stopped or closed the session", operation);
            return -1;
        }
        if (aa_spark_now_ms() >= deadline)
        {
            if (!listening)
            {
                AA_SET_ERR(AA_ERROR_CODE_TIMEOUT, "%s: no archive is listening on %s stream %" PRId32 " (nothing "
                    "connected within %s s): start one beside the driver at %s (aeron_async.archive.Archive.launch "
                    "or `aeron-async archive`), or give its control_channel and control_stream_id", operation,
                    r->control_channel, r->control_stream_id, r->timeout_text, r->aeron_dir);
            }
            else
            {
                AA_SET_ERR(AA_ERROR_CODE_TIMEOUT, "%s: the archive did not take the request within %s s (control "
                    "stream back-pressured: offer result %" PRId64 ")", operation, r->timeout_text, result);
            }
            return -1;
        }
        aa_spark_pause();
    }
}

static void keep_alive(remote_t *r)
{
    if (r->session_id < 0 || aa_spark_now_ms() - r->last_request_ms < KEEP_ALIVE_MS)
    {
        return;
    }
    aa_archive_message_t msg;
    memset(&msg, 0, sizeof(msg));
    msg.template_id = AA_ARCHIVE_TEMPLATE_KEEP_ALIVE_REQUEST;
    msg.keep_alive_request.control_session_id = r->session_id;
    msg.keep_alive_request.correlation_id = ++r->correlation_id;
    uint8_t buffer[64];
    int64_t length = aa_archive_encode(buffer, sizeof(buffer), &msg);
    if (length > 0 && aa_publication_offer(r->request, buffer, (size_t)length, 0) >= 0)
    {
        r->last_request_ms = aa_spark_now_ms();
    }
}

/* What an exchange collects: the ControlResponse answering it, and (listings) descriptors. */
typedef struct answer_stct
{
    bool answered;
    int64_t relevant_id;
    int32_t code;
    char error[512];
    /* descriptors: fields and channels, grown as they come */
    jlong *fields;
    char **channels;
    int32_t count;
    int32_t capacity;
    int32_t want;   /* descriptors that end a listing without a ControlResponse */
    int64_t last_id;
}
answer_t;

static int add_descriptor(answer_t *a, const aa_archive_recording_descriptor_t *d)
{
    if (a->count == a->capacity)
    {
        int32_t capacity = a->capacity < 16 ? 16 : 2 * a->capacity;
        jlong *fields = realloc(a->fields, sizeof(jlong) * 8 * (size_t)capacity);
        if (NULL == fields)
        {
            return -1;
        }
        a->fields = fields;
        char **channels = realloc(a->channels, sizeof(char *) * 2 * (size_t)capacity);
        if (NULL == channels)
        {
            return -1;
        }
        a->channels = channels;
        a->capacity = capacity;
    }
    jlong *f = a->fields + 8 * a->count;
    f[0] = d->recording_id;
    f[1] = d->start_position;
    f[2] = d->stop_position;
    f[3] = d->session_id;
    f[4] = d->stream_id;
    f[5] = d->term_buffer_length;
    f[6] = d->segment_file_length;
    f[7] = d->initial_term_id;
    const aa_archive_var_t *vars[2] = { &d->original_channel, &d->stripped_channel };
    for (int i = 0; i < 2; i++)
    {
        char *text = malloc(vars[i]->length + 1);
        if (NULL == text)
        {
            return -1;
        }
        memcpy(text, vars[i]->data, vars[i]->length);
        text[vars[i]->length] = '\0';
        a->channels[2 * a->count + i] = text;
    }
    a->count++;
    a->last_id = d->recording_id;
    return 0;
}

static void free_answer(answer_t *a)
{
    for (int32_t i = 0; i < 2 * a->count; i++)
    {
        free(a->channels[i]);
    }
    free(a->channels);
    free(a->fields);
}

/* polls the responses until the one with this correlation id (or `want` descriptors) came; -1 with
 * the error set on a timeout or a lost session */
static int await_answer(remote_t *r, const char *operation, int64_t correlation_id, answer_t *a)
{
    int64_t deadline = aa_spark_now_ms() + r->timeout_ms;
    int32_t before = a->count;
    while (true)
    {
        size_t required = 0;
        int32_t n = aa_subscription_poll_messages(r->response, r->buffer, sizeof(r->buffer), r->messages,
            RESPONSE_MESSAGES, RESPONSE_MESSAGES, &required);
        for (int32_t i = 0; i < n; i++)
        {
            aa_archive_message_t msg;
            if (aa_archive_decode(r->buffer + r->messages[i].offset, (size_t)r->messages[i].length, &msg) < 0)
            {
                continue;   /* a malformed response is skipped, as the Python client counts and skips it */
            }
            if (AA_ARCHIVE_TEMPLATE_CONTROL_RESPONSE == msg.template_id)
            {
                aa_archive_control_response_t *c = &msg.control_response;
                if (c->correlation_id != correlation_id ||
                    (r->session_id >= 0 && c->control_session_id != r->session_id))
                {
                    continue;
                }
                a->answered = true;
                a->relevant_id = c->relevant_id;
                a->code = c->code;
                snprintf(a->error, sizeof(a->error), "%.*s", (int)c->error_message.length,
                    (const char *)c->error_message.data);
            }
            else if (AA_ARCHIVE_TEMPLATE_CHALLENGE == msg.template_id &&
                msg.challenge.correlation_id == correlation_id)
            {
                /* as the Python client without an on_challenge handler (aeron_async/archive/_session.py) */
                AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "%s", "connect: the archive challenged the credentials and no "
                    "on_challenge handler was given: pass on_challenge=<function of the challenge bytes returning "
                    "credentials>");
                return -1;
            }
            else if (AA_ARCHIVE_TEMPLATE_RECORDING_DESCRIPTOR == msg.template_id)
            {
                aa_archive_recording_descriptor_t *d = &msg.recording_descriptor;
                if (d->correlation_id != correlation_id || d->control_session_id != r->session_id)
                {
                    continue;
                }
                if (add_descriptor(a, d) < 0)
                {
                    AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "%s: out of memory", operation);
                    return -1;
                }
                deadline = aa_spark_now_ms() + r->timeout_ms;
            }
        }
        if (a->answered || (a->want > 0 && a->count - before >= a->want))
        {
            return 0;
        }
        if (n < 0)
        {
            return -1;
        }
        if (0 == n)
        {
            if (aa_spark_now_ms() >= deadline)
            {
                AA_SET_ERR(AA_ERROR_CODE_TIMEOUT, "%s: no answer from the archive within %s s (correlation id %"
                    PRId64 "); raise the timeout, or check that the archive is running", operation, r->timeout_text,
                    correlation_id);
                return -1;
            }
            aa_spark_pause();
        }
    }
}

static int refused(const char *operation, const answer_t *a)
{
    AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "%s: the archive answered %s: %s", operation,
        NULL == aa_archive_response_code_name(a->code) ? "?" : aa_archive_response_code_name(a->code), a->error);
    return -1;
}

/* sends msg with a new correlation id and awaits its answer (an OK ControlResponse unless `listing`) */
static int exchange(remote_t *r, const char *operation, aa_archive_message_t *msg, int64_t *correlation,
    answer_t *a, bool listing)
{
    if (send_request(r, operation, msg) < 0 || await_answer(r, operation, *correlation, a) < 0)
    {
        return -1;
    }
    if (!listing && a->answered && AA_ARCHIVE_RESPONSE_OK != a->code)
    {
        return refused(operation, a);
    }
    return 0;
}

static void close_remote(remote_t *r)
{
    if (NULL == r)
    {
        return;
    }
    if (r->session_id >= 0 && NULL != r->request && aa_publication_is_connected(r->request))
    {
        aa_archive_message_t msg;
        memset(&msg, 0, sizeof(msg));
        msg.template_id = AA_ARCHIVE_TEMPLATE_CLOSE_SESSION_REQUEST;
        msg.close_session_request.control_session_id = r->session_id;
        uint8_t buffer[64];
        int64_t length = aa_archive_encode(buffer, sizeof(buffer), &msg);
        if (length > 0)
        {
            aa_publication_offer(r->request, buffer, (size_t)length, 0);
        }
    }
    if (NULL != r->request)
    {
        aa_publication_close(r->request);
    }
    if (NULL != r->response)
    {
        aa_subscription_close(r->response);
    }
    if (NULL != r->client)
    {
        aa_client_close(r->client);
    }
    free(r);
}

#define CREDENTIALS_ENV "AERON_ARCHIVE_CLIENT_CREDENTIALS"
#define CREDENTIALS_FILE_ENV "AERON_ARCHIVE_CLIENT_CREDENTIALS_FILE"
#define CREDENTIALS_FILE_MAX (1024 * 1024) /* as aeron_async/archive/auth.py's CREDENTIALS_FILE_MAX */

/* The client's credentials as aeron_async/archive/auth.py's credentials_from_environment reads
 * them: the variable's value, else the file's content (held to the rule of every file of secrets,
 * its last newline dropped), else none (*out NULL). -1 with the error set when the file is refused. */
static int credentials_from_environment(uint8_t **out, int64_t *length)
{
    *out = NULL;
    *length = 0;
    const char *value = getenv(CREDENTIALS_ENV);
    if (NULL != value && '\0' != value[0])
    {
        *length = (int64_t)strlen(value);
        *out = malloc((size_t)*length);
        if (NULL == *out)
        {
            AA_SET_ERR(ENOMEM, "connect: no memory for the credentials of %s", CREDENTIALS_ENV);
            return -1;
        }
        memcpy(*out, value, (size_t)*length);
        return 0;
    }
    const char *path = getenv(CREDENTIALS_FILE_ENV);
    if (NULL == path || '\0' == path[0])
    {
        return 0;
    }
    uint8_t *buffer = malloc(CREDENTIALS_FILE_MAX);
    if (NULL == buffer)
    {
        AA_SET_ERR(ENOMEM, "connect: no memory for the credentials file of %s", CREDENTIALS_FILE_ENV);
        return -1;
    }
    int64_t read = aa_secret_file_read(CREDENTIALS_FILE_ENV, path, buffer, CREDENTIALS_FILE_MAX);
    if (read < 0)
    {
        free(buffer);
        return -1;
    }
    if (read > 0 && '\n' == buffer[read - 1])
    {
        read--;
    }
    *out = buffer;
    *length = read;
    return 0;
}

static int open_remote(remote_t *r, const char *dir, const char *control, int32_t control_stream_id,
    const char *response, int32_t response_stream_id)
{
    const char *default_dir = getenv("AERON_DIR");
    snprintf(r->aeron_dir, sizeof(r->aeron_dir), "%s", NULL != dir ? dir : NULL != default_dir ? default_dir :
        "the default aeron directory");
    if (aa_client_connect(&r->client, dir, r->timeout_ms, false, NULL) < 0)
    {
        return -1;
    }
    char response_channel[1024], request_channel[1024];
    bool response_mode = NULL != strstr(response, "control-mode=response");
    snprintf(response_channel, sizeof(response_channel), "%s", response);
    if (!response_mode && !names_session_id(response))
    {
        with_param(response_channel, sizeof(response_channel), response, "session-id", new_session_id());
    }
    snprintf(request_channel, sizeof(request_channel), "%s", control);
    if (!response_mode && !names_session_id(control))
    {
        with_param(request_channel, sizeof(request_channel), control, "session-id", new_session_id());
    }
    int64_t registration_id;
    r->response = aa_spark_add_subscription(r->client, response_channel, response_stream_id, r->timeout_ms,
        &registration_id);
    if (NULL == r->response)
    {
        return -1;
    }
    if (response_mode)
    {
        with_param(request_channel, sizeof(request_channel), control, "response-correlation-id", registration_id);
    }
    snprintf(r->control_channel, sizeof(r->control_channel), "%s", request_channel);
    r->control_stream_id = control_stream_id;
    r->request = aa_spark_add_publication(r->client, request_channel, control_stream_id, true, r->timeout_ms,
        "timeout");
    if (NULL == r->request)
    {
        return -1;
    }
    uint8_t *credentials = NULL;
    int64_t credentials_length = 0;
    if (credentials_from_environment(&credentials, &credentials_length) < 0)
    {
        return -1;
    }
    aa_archive_message_t msg;
    memset(&msg, 0, sizeof(msg));
    msg.template_id = AA_ARCHIVE_TEMPLATE_AUTH_CONNECT_REQUEST;
    msg.auth_connect_request.encoded_credentials.data = credentials;
    msg.auth_connect_request.encoded_credentials.length = (uint32_t)credentials_length;
    int64_t correlation = ++r->correlation_id;
    msg.auth_connect_request.correlation_id = correlation;
    msg.auth_connect_request.response_stream_id = response_stream_id;
    msg.auth_connect_request.version = AA_ARCHIVE_PROTOCOL_SEMANTIC_VERSION;
    msg.auth_connect_request.response_channel.data = (const uint8_t *)response_channel;
    msg.auth_connect_request.response_channel.length = (uint32_t)strlen(response_channel);
    const char *info = "name=aeron-async-spark-jvm";
    msg.auth_connect_request.client_info.data = (const uint8_t *)info;
    msg.auth_connect_request.client_info.length = (uint32_t)strlen(info);
    answer_t a;
    memset(&a, 0, sizeof(a));
    int rc = exchange(r, "connect", &msg, &correlation, &a, false);
    if (NULL != credentials)
    {
        memset(credentials, 0, (size_t)credentials_length);
        free(credentials);
    }
    if (rc < 0)
    {
        return -1;
    }
    r->session_id = a.relevant_id;
    return 0;
}

JNIEXPORT jlong JNICALL Java_aeron_spark_Native_remoteOpen(JNIEnv *env, jclass type, jstring aeron_dir,
    jstring control_channel, jint control_stream_id, jstring response_channel, jint response_stream_id,
    jdouble timeout_s)
{
    remote_t *r = calloc(1, sizeof(remote_t));
    if (NULL == r)
    {
        throw_io(env, "connect: out of memory");
        return 0;
    }
    r->session_id = -1;
    r->correlation_id = ((int64_t)new_session_id()) << 20;
    r->timeout_ms = (int64_t)(timeout_s * 1000.0);
    if (timeout_s == (double)(int64_t)timeout_s)
    {
        snprintf(r->timeout_text, sizeof(r->timeout_text), "%.1f", timeout_s);
    }
    else
    {
        snprintf(r->timeout_text, sizeof(r->timeout_text), "%g", timeout_s);
    }
    const char *dir = NULL == aeron_dir ? NULL : (*env)->GetStringUTFChars(env, aeron_dir, NULL);
    const char *control = (*env)->GetStringUTFChars(env, control_channel, NULL);
    const char *response = (*env)->GetStringUTFChars(env, response_channel, NULL);
    int rc = NULL == control || NULL == response ? -1 :
        open_remote(r, dir, control, control_stream_id, response, response_stream_id);
    if (NULL != dir)
    {
        (*env)->ReleaseStringUTFChars(env, aeron_dir, dir);
    }
    if (NULL != control)
    {
        (*env)->ReleaseStringUTFChars(env, control_channel, control);
    }
    if (NULL != response)
    {
        (*env)->ReleaseStringUTFChars(env, response_channel, response);
    }
    if (rc < 0)
    {
        throw_errmsg(env);
        close_remote(r);
        return 0;
    }
    return (jlong)(intptr_t)r;
}

JNIEXPORT void JNICALL Java_aeron_spark_Native_remoteClose(JNIEnv *env, jclass type, jlong session)
{
    close_remote((remote_t *)(intptr_t)session);
}

static jobjectArray list_result(JNIEnv *env, const answer_t *a)
{
    jlongArray fields = (*env)->NewLongArray(env, 8 * a->count);
    jclass string_type = (*env)->FindClass(env, "java/lang/String");
    jclass object_type = (*env)->FindClass(env, "java/lang/Object");
    if (NULL == fields || NULL == string_type || NULL == object_type)
    {
        return NULL;
    }
    (*env)->SetLongArrayRegion(env, fields, 0, 8 * a->count, a->fields);
    jobjectArray channels = (*env)->NewObjectArray(env, 2 * a->count, string_type, NULL);
    if (NULL == channels)
    {
        return NULL;
    }
    for (int32_t i = 0; i < 2 * a->count; i++)
    {
        jstring text = (*env)->NewStringUTF(env, a->channels[i]);
        if (NULL == text)
        {
            return NULL;
        }
        (*env)->SetObjectArrayElement(env, channels, i, text);
        (*env)->DeleteLocalRef(env, text);
    }
    jobjectArray result = (*env)->NewObjectArray(env, 2, object_type, NULL);
    if (NULL != result)
    {
        (*env)->SetObjectArrayElement(env, result, 0, fields);
        (*env)->SetObjectArrayElement(env, result, 1, channels);
    }
    return result;
}

JNIEXPORT jobjectArray JNICALL Java_aeron_spark_Native_remoteList(JNIEnv *env, jclass type, jlong session,
    jlong recording_id, jstring channel, jint stream_id)
{
    remote_t *r = (remote_t *)(intptr_t)session;
    answer_t a;
    memset(&a, 0, sizeof(a));
    aa_archive_message_t msg;
    int rc = 0;
    if (recording_id >= 0)
    {
        char operation[64];
        snprintf(operation, sizeof(operation), "list_recording(%" PRId64 ")", (int64_t)recording_id);
        memset(&msg, 0, sizeof(msg));
        msg.template_id = AA_ARCHIVE_TEMPLATE_LIST_RECORDING_REQUEST;
        int64_t correlation = ++r->correlation_id;
        msg.list_recording_request.control_session_id = r->session_id;
        msg.list_recording_request.correlation_id = correlation;
        msg.list_recording_request.recording_id = recording_id;
        a.want = 1;
        rc = exchange(r, operation, &msg, &correlation, &a, true);
        if (0 == rc && 0 == a.count && AA_ARCHIVE_RESPONSE_RECORDING_UNKNOWN != a.code)
        {
            rc = refused(operation, &a);
        }
    }
    else
    {
        const char *uri = (*env)->GetStringUTFChars(env, channel, NULL);
        if (NULL == uri)
        {
            return NULL;
        }
        char operation[600];
        snprintf(operation, sizeof(operation), "list_recordings('%.500s', %" PRId32 ")", uri, (int32_t)stream_id);
        int64_t from = 0;
        while (0 == rc)
        {
            memset(&msg, 0, sizeof(msg));
            msg.template_id = AA_ARCHIVE_TEMPLATE_LIST_RECORDINGS_FOR_URI_REQUEST;
            int64_t correlation = ++r->correlation_id;
            msg.list_recordings_for_uri_request.control_session_id = r->session_id;
            msg.list_recordings_for_uri_request.correlation_id = correlation;
            msg.list_recordings_for_uri_request.from_recording_id = from;
            msg.list_recordings_for_uri_request.record_count = LIST_PAGE;
            msg.list_recordings_for_uri_request.stream_id = stream_id;
            msg.list_recordings_for_uri_request.channel.data = (const uint8_t *)uri;
            msg.list_recordings_for_uri_request.channel.length = (uint32_t)strlen(uri);
            a.answered = false;
            a.want = LIST_PAGE;
            int32_t before = a.count;
            rc = exchange(r, operation, &msg, &correlation, &a, true);
            if (0 != rc)
            {
                break;
            }
            if (a.answered)   /* the listing ended before the page was full */
            {
                if (AA_ARCHIVE_RESPONSE_RECORDING_UNKNOWN != a.code && AA_ARCHIVE_RESPONSE_OK != a.code)
                {
                    rc = refused(operation, &a);
                }
                break;
            }
            if (a.count == before)
            {
                break;
            }
            from = a.last_id + 1;
        }
        (*env)->ReleaseStringUTFChars(env, channel, uri);
    }
    jobjectArray result = NULL;
    if (rc < 0)
    {
        throw_errmsg(env);
    }
    else
    {
        result = list_result(env, &a);
    }
    free_answer(&a);
    return result;
}

JNIEXPORT jlong JNICALL Java_aeron_spark_Native_remoteMaxRecordedPosition(JNIEnv *env, jclass type, jlong session,
    jlong recording_id)
{
    remote_t *r = (remote_t *)(intptr_t)session;
    char operation[64];
    snprintf(operation, sizeof(operation), "max_recorded_position(%" PRId64 ")", (int64_t)recording_id);
    aa_archive_message_t msg;
    memset(&msg, 0, sizeof(msg));
    msg.template_id = AA_ARCHIVE_TEMPLATE_MAX_RECORDED_POSITION_REQUEST;
    int64_t correlation = ++r->correlation_id;
    msg.max_recorded_position_request.control_session_id = r->session_id;
    msg.max_recorded_position_request.correlation_id = correlation;
    msg.max_recorded_position_request.recording_id = recording_id;
    answer_t a;
    memset(&a, 0, sizeof(a));
    if (exchange(r, operation, &msg, &correlation, &a, false) < 0)
    {
        throw_errmsg(env);
        return -1;
    }
    return a.relevant_id;
}

/* the newest recording from minRecordingId on of the stream, of the session (-1: any), whose original
 * channel contains the fragment: its id, -1 when there is none (our archive and Aeron's answer OK with
 * -1, Aeron's NULL_VALUE, as _session.py's find_last_matching_recording reads it: None) */
JNIEXPORT jlong JNICALL Java_aeron_spark_Native_remoteFindLastMatchingRecording(JNIEnv *env, jclass type,
    jlong session, jlong min_recording_id, jstring channel_fragment, jint stream_id, jint session_id)
{
    remote_t *r = (remote_t *)(intptr_t)session;
    const char *fragment = (*env)->GetStringUTFChars(env, channel_fragment, NULL);
    if (NULL == fragment)
    {
        return -1;
    }
    char operation[600];
    snprintf(operation, sizeof(operation), "find_last_matching_recording('%.500s', %" PRId32 ")", fragment,
        (int32_t)stream_id);
    aa_archive_message_t msg;
    memset(&msg, 0, sizeof(msg));
    msg.template_id = AA_ARCHIVE_TEMPLATE_FIND_LAST_MATCHING_RECORDING_REQUEST;
    int64_t correlation = ++r->correlation_id;
    msg.find_last_matching_recording_request.control_session_id = r->session_id;
    msg.find_last_matching_recording_request.correlation_id = correlation;
    msg.find_last_matching_recording_request.min_recording_id = min_recording_id;
    msg.find_last_matching_recording_request.session_id = session_id;
    msg.find_last_matching_recording_request.stream_id = stream_id;
    msg.find_last_matching_recording_request.channel.data = (const uint8_t *)fragment;
    msg.find_last_matching_recording_request.channel.length = (uint32_t)strlen(fragment);
    answer_t a;
    memset(&a, 0, sizeof(a));
    int rc = exchange(r, operation, &msg, &correlation, &a, false);
    (*env)->ReleaseStringUTFChars(env, channel_fragment, fragment);
    if (rc < 0)
    {
        throw_errmsg(env);
        return -1;
    }
    return a.relevant_id;
}

static void close_replay(replay_t *p)
{
    if (NULL == p)
    {
        return;
    }
    remote_t *r = p->remote;
    if (p->replay_session_id >= 0 && NULL != p->image && !aa_image_is_closed(p->image) &&
        !aa_image_is_end_of_stream(p->image) && aa_publication_is_connected(r->request))
    {
        aa_archive_message_t msg;
        memset(&msg, 0, sizeof(msg));
        msg.template_id = AA_ARCHIVE_TEMPLATE_STOP_REPLAY_REQUEST;
        msg.stop_replay_request.control_session_id = r->session_id;
        msg.stop_replay_request.correlation_id = ++r->correlation_id;
        msg.stop_replay_request.replay_session_id = p->replay_session_id;
        uint8_t buffer[64];
        int64_t length = aa_archive_encode(buffer, sizeof(buffer), &msg);
        if (length > 0)
        {
            aa_publication_offer(r->request, buffer, (size_t)length, 0);   /* unknown once ended: not awaited */
        }
    }
    if (NULL != p->subscription)
    {
        aa_subscription_close(p->subscription);
    }
    free(p);
}

static int open_replay(replay_t *p, const char *channel, int32_t stream_id, int64_t position, int64_t length)
{
    remote_t *r = p->remote;
    if (names_session_id(channel))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "replay channel '%s' names a session-id: leave it out, the "
            "archive chooses the replay's session", channel);
        return -1;
    }
    char operation[128];
    snprintf(operation, sizeof(operation), "replay(%" PRId64 ", position=%" PRId64 ", length=%" PRId64 ")",
        p->recording_id, position, length);
    aa_archive_message_t msg;
    memset(&msg, 0, sizeof(msg));
    msg.template_id = AA_ARCHIVE_TEMPLATE_REPLAY_REQUEST;
    int64_t correlation = ++r->correlation_id;
    msg.replay_request.control_session_id = r->session_id;
    msg.replay_request.correlation_id = correlation;
    msg.replay_request.recording_id = p->recording_id;
    msg.replay_request.position = position;
    msg.replay_request.length = length;
    msg.replay_request.replay_stream_id = stream_id;
    msg.replay_request.file_io_max_length = -1;
    msg.replay_request.replay_token = -1;
    msg.replay_request.replay_channel.data = (const uint8_t *)channel;
    msg.replay_request.replay_channel.length = (uint32_t)strlen(channel);
    answer_t a;
    memset(&a, 0, sizeof(a));
    if (exchange(r, operation, &msg, &correlation, &a, false) < 0)
    {
        return -1;
    }
    p->replay_session_id = a.relevant_id;
    char replay_channel[1024];
    with_param(replay_channel, sizeof(replay_channel), channel, "session-id", (int32_t)a.relevant_id);
    p->subscription = aa_spark_add_subscription(r->client, replay_channel, stream_id, r->timeout_ms, NULL);
    if (NULL == p->subscription)
    {
        return -1;
    }
    int64_t deadline = aa_spark_now_ms() + r->timeout_ms;
    while (0 == aa_subscription_images(p->subscription, &p->image, 1))
    {
        if (aa_spark_now_ms() > deadline)
        {
            AA_SET_ERR(AA_ERROR_CODE_TIMEOUT, "the replay of recording %" PRId64 " on %s stream %" PRId32 " did not "
                "connect within %s s: check replayChannel", p->recording_id, channel, stream_id, r->timeout_text);
            return -1;
        }
        keep_alive(r);
        aa_spark_pause();
    }
    p->columns.from_position = p->low;
    p->columns.to_position = p->high;
    return 0;
}

JNIEXPORT jlong JNICALL Java_aeron_spark_Native_remoteReplayOpen(JNIEnv *env, jclass type, jlong session,
    jlong recording_id, jlong position, jlong length, jstring replay_channel, jint replay_stream_id, jlong low,
    jlong high)
{
    replay_t *p = calloc(1, sizeof(replay_t));
    if (NULL == p)
    {
        throw_io(env, "replay: out of memory");
        return 0;
    }
    p->remote = (remote_t *)(intptr_t)session;
    p->replay_session_id = -1;
    p->recording_id = recording_id;
    p->low = low;
    p->high = high;
    const char *channel = (*env)->GetStringUTFChars(env, replay_channel, NULL);
    if (NULL == channel)
    {
        free(p);
        return 0;
    }
    int rc = open_replay(p, channel, replay_stream_id, position, length);
    (*env)->ReleaseStringUTFChars(env, replay_channel, channel);
    if (rc < 0)
    {
        throw_errmsg(env);
        close_replay(p);
        return 0;
    }
    return (jlong)(intptr_t)p;
}

JNIEXPORT void JNICALL Java_aeron_spark_Native_remoteReplayClose(JNIEnv *env, jclass type, jlong replay)
{
    close_replay((replay_t *)(intptr_t)replay);
}

/* columns.py's poll_range, one batch a call */
JNIEXPORT void JNICALL Java_aeron_spark_Native_remoteReplayPoll(JNIEnv *env, jclass type, jlong replay,
    jlongArray out, jobject data, jobject offsets, jobject positions, jobject reserved)
{
    replay_t *p = (replay_t *)(intptr_t)replay;
    aa_columns_t *c = &p->columns;
    c->data = (*env)->GetDirectBufferAddress(env, data);
    c->offsets = (*env)->GetDirectBufferAddress(env, offsets);
    c->positions = (*env)->GetDirectBufferAddress(env, positions);
    c->reserved_values = (*env)->GetDirectBufferAddress(env, reserved);
    c->data_capacity = (*env)->GetDirectBufferCapacity(env, data);
    c->row_capacity = (int32_t)((*env)->GetDirectBufferCapacity(env, positions) / 8);
    jlong result[4] = { 0, 0, 0, -1 };
    if (aa_columns_reset(c) < 0)
    {
        throw_errmsg(env);
        return;
    }
    remote_t *r = p->remote;
    int64_t last_position = -1, last_progress = aa_spark_now_ms(), first_row = aa_spark_now_ms();
    while (true)
    {
        /* the end of stream as it was BEFORE this poll: everything up to it is in the log then */
        int64_t end_of_stream = aa_image_end_of_stream_position(p->image);
        bool closed = aa_image_is_closed(p->image);
        int32_t added = aa_columns_poll(p->image, c);
        if (-2 == added)
        {
            result[1] = c->required;
            break;
        }
        int64_t now = aa_spark_now_ms();
        if (added > 0 && c->rows == added)
        {
            first_row = now;
        }
        if (c->done)
        {
            result[2] = 1;
            break;
        }
        if (c->rows > 0 && (c->full || (0 == added && now - first_row > LINGER_MS)))
        {
            break;
        }
        if (c->position != last_position)
        {
            last_position = c->position;
            last_progress = now;
            continue;
        }
        if (added > 0)
        {
            continue;
        }
        /* the replay is over when the image is gone or the poller stands at its end of stream */
        if (closed || c->position >= end_of_stream)
        {
            if (c->rows > 0)
            {
                break;
            }
            result[2] = 1;
            if (c->position < p->high)
            {
                result[3] = c->position;
            }
            break;
        }
        if (now - last_progress > r->timeout_ms)
        {
            char message[512];
            snprintf(message, sizeof(message), "the replay of recording %" PRId64 " made no progress for %s s at "
                "position %" PRId64 " (reading [%" PRId64 ", %" PRId64 "))", p->recording_id, r->timeout_text,
                c->position, p->low, p->high);
            throw_io(env, message);
            return;
        }
        keep_alive(r);
        aa_spark_pause();
    }
    result[0] = c->rows;
    (*env)->SetLongArrayRegion(env, out, 0, 4, result);
}
