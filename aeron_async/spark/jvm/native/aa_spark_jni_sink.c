/*
 * The JVM connector's sink side (docs/spark.md, "The JVM connector"): the class aeron.spark.Native
 * publishes through the project's C client, as aeron_async/spark/sink.py does from Python.
 *
 * clientConnect(aeron dir, timeout ms)   a client of the media driver (its conductor thread), a handle
 * clientAlive(client)                    false once the driver timed it out or went away
 * clientClose(client)
 * publicationAdd(client, channel, stream, timeout ms)   an exclusive publication, a handle
 * publicationConnected / publicationSessionId / publicationPosition / publicationClose
 * publicationOffer(pub, data, offsets, from, count, reserved)   messages from..from+count of a direct
 *     buffer (message i: bytes offsets[i]..offsets[i+1], int32) offered with aa_publication_offer_batch;
 *     how many went in, or the refusal code (AA_PUBLICATION_*) when none did
 * recordedBySession(aeron dir, session id, stream id)   {recording id, recorded position} of the
 *     active recording of that session and stream (its rec-pos counter, type 100, in the CnC file:
 *     key recordingId i64, sessionId i32; label "rec-pos: <recId> <sessId> <streamId> ..."), or
 *     {-1, -1} when none
 *
 * Errors throw java.io.IOException with the C layer's message.
 */
#include <inttypes.h>
#include <jni.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aeron_async.h"
#include "util/aa_error.h"

#include "aa_spark_jni_client.h"

#define OFFER_CHUNK 256

static void throw_sink(JNIEnv *env, const char *what)
{
    char message[1024];
    snprintf(message, sizeof(message), "%s: %s", what, aa_errmsg());
    jclass type = (*env)->FindClass(env, "java/io/IOException");
    if (NULL != type)
    {
        (*env)->ThrowNew(env, type, message);
    }
}

JNIEXPORT jlong JNICALL Java_aeron_spark_Native_clientConnect(
    JNIEnv *env, jclass type, jstring aeron_dir, jlong timeout_ms)
{
    const char *dir = NULL == aeron_dir ? NULL : (*env)->GetStringUTFChars(env, aeron_dir, NULL);
    aa_client_t *client = NULL;
    int rc = aa_client_connect(&client, dir, timeout_ms, false, NULL);
    if (NULL != dir)
    {
        (*env)->ReleaseStringUTFChars(env, aeron_dir, dir);
    }
    if (rc < 0)
    {
        throw_sink(env, "the aeron sink cannot connect to the media driver (option aeronDir)");
        return 0;
    }
    return (jlong)(intptr_t)client;
}

JNIEXPORT jboolean JNICALL Java_aeron_spark_Native_clientAlive(JNIEnv *env, jclass type, jlong client)
{
    return AA_CLIENT_STATE_ACTIVE == aa_client_state((aa_client_t *)(intptr_t)client) ? JNI_TRUE : JNI_FALSE;
}

JNIEXPORT void JNICALL Java_aeron_spark_Native_clientClose(JNIEnv *env, jclass type, jlong client)
{
    aa_client_close((aa_client_t *)(intptr_t)client);
}

JNIEXPORT jlong JNICALL Java_aeron_spark_Native_publicationAdd(
    JNIEnv *env, jclass type, jlong client_address, jstring channel, jint stream_id, jlong timeout_ms)
{
    aa_client_t *client = (aa_client_t *)(intptr_t)client_address;
    const char *uri = (*env)->GetStringUTFChars(env, channel, NULL);
    if (NULL == uri)
    {
        return 0;
    }
    aa_publication_t *publication = aa_spark_add_publication(client, uri, stream_id, true, timeout_ms,
        "connectTimeout");
    (*env)->ReleaseStringUTFChars(env, channel, uri);
    if (NULL == publication)
    {
        throw_sink(env, "the aeron sink cannot add its publication");
        return 0;
    }
    return (jlong)(intptr_t)publication;
}

JNIEXPORT jboolean JNICALL Java_aeron_spark_Native_publicationConnected(JNIEnv *env, jclass type, jlong pub)
{
    return aa_publication_is_connected((aa_publication_t *)(intptr_t)pub) ? JNI_TRUE : JNI_FALSE;
}

JNIEXPORT jint JNICALL Java_aeron_spark_Native_publicationSessionId(JNIEnv *env, jclass type, jlong pub)
{
    int64_t registration_id;
    int32_t session_id, stream_id, max_message, max_payload, term_length, initial_term_id, limit_id;
    aa_publication_describe((aa_publication_t *)(intptr_t)pub, &registration_id, &session_id, &stream_id, &max_message,
        &max_payload, &term_length, &initial_term_id, &limit_id);
    return session_id;
}

JNIEXPORT jlong JNICALL Java_aeron_spark_Native_publicationPosition(JNIEnv *env, jclass type, jlong pub)
{
    return aa_publication_position((aa_publication_t *)(intptr_t)pub);
}

JNIEXPORT void JNICALL Java_aeron_spark_Native_publicationClose(JNIEnv *env, jclass type, jlong pub)
{
    aa_publication_close((aa_publication_t *)(intptr_t)pub);
}

JNIEXPORT jlong JNICALL Java_aeron_spark_Native_publicationOffer(
    JNIEnv *env, jclass type, jlong pub, jobject data, jobject offsets, jint from, jint count, jlong reserved)
{
    const uint8_t *bytes = (*env)->GetDirectBufferAddress(env, data);
    const int32_t *ends = (*env)->GetDirectBufferAddress(env, offsets);
    if (NULL == bytes || NULL == ends)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "%s", "the message buffers must be direct ByteBuffers");
        throw_sink(env, "the aeron sink");
        return 0;
    }
    aa_iovec_t messages[OFFER_CHUNK];
    int64_t total = 0;
    while (total < count)
    {
        size_t n = (size_t)(count - total) < OFFER_CHUNK ? (size_t)(count - total) : OFFER_CHUNK;
        for (size_t i = 0; i < n; i++)
        {
            int64_t index = from + total + (int64_t)i;
            messages[i].base = bytes + ends[index];
            messages[i].length = (size_t)(ends[index + 1] - ends[index]);
        }
        size_t accepted = 0;
        int64_t result = aa_publication_offer_batch(
            (aa_publication_t *)(intptr_t)pub, messages, n, reserved, &accepted);
        total += (int64_t)accepted;
        if (accepted < n)
        {
            if (0 == total)
            {
                if (AA_PUBLICATION_ERROR == result)
                {
                    throw_sink(env, "the aeron sink's offer");
                }
                return result;
            }
            break;
        }
    }
    return total;
}

JNIEXPORT jlongArray JNICALL Java_aeron_spark_Native_recordedBySession(
    JNIEnv *env, jclass type, jstring aeron_dir, jint session_id, jint stream_id)
{
    const char *dir = NULL == aeron_dir ? NULL : (*env)->GetStringUTFChars(env, aeron_dir, NULL);
    aa_cnc_reader_t *reader = NULL;
    int rc = aa_cnc_reader_open(&reader, dir);
    if (NULL != dir)
    {
        (*env)->ReleaseStringUTFChars(env, aeron_dir, dir);
    }
    if (rc < 0)
    {
        throw_sink(env, "the media driver's CnC file (option aeronDir)");
        return NULL;
    }
    jlong out[2] = { -1, -1 };
    aa_counter_info_t info;
    for (int32_t id = aa_cnc_reader_next_counter(reader, 0, &info); id >= 0;
        id = aa_cnc_reader_next_counter(reader, id + 1, &info))
    {
        int64_t recording_id;
        int32_t key_session_id, label_session_id, label_stream_id;
        long long label_recording_id;
        if (100 != info.type_id || info.key_length < 12)
        {
            continue;
        }
        memcpy(&recording_id, info.key, sizeof(recording_id));
        memcpy(&key_session_id, info.key + 8, sizeof(key_session_id));
        if (key_session_id == session_id &&
            3 == sscanf(info.label, "rec-pos: %lld %" SCNd32 " %" SCNd32, &label_recording_id, &label_session_id,
                &label_stream_id) && label_stream_id == stream_id)
        {
            out[0] = recording_id;
            out[1] = aa_cnc_reader_counter_value(reader, id);
            break;
        }
    }
    aa_cnc_reader_close(reader);
    jlongArray result = (*env)->NewLongArray(env, 2);
    if (NULL != result)
    {
        (*env)->SetLongArrayRegion(env, result, 0, 2, out);
    }
    return result;
}
