/*
 * dropRepeats in the JVM connector (docs/spark.md, "dropRepeats: reading a recorded sink stream
 * exactly once"): the two facts aeron_async/spark/repeats.py asks the archive for with two tiny
 * replays, read here from the recording's memory-mapped segment files instead (read-only, through
 * the C archive code, as aa_spark_jni.c's walk reads them).
 *
 * provenanceProbe(dir, id, start, stop, term length, segment length, initial term id, stream id,
 * stopped) returns 4 longs:
 *   [0] 1 when the 32 bytes before a stopped recording's stop position are one whole message (a
 *       bare DATA frame header, BEGIN and END: the frame a replay of [stop - 32, stop) hands on; the
 *       archive refuses such a replay unless a frame starts there: aa_archive_segment_frame_at, the
 *       same check), else 0
 *   [1] that message's reserved value
 *   [2] 1 when a whole message starts in [start, stop) (the first a replay from start hands on:
 *       continuation frames of a message begun before start and padding skipped), else 0
 *   [3] its reserved value (its first fragment's, as the walk and the C poller report it)
 * `stop` is a stopped recording's stop position, or the position an active one has recorded.
 */
#include <inttypes.h>
#include <jni.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "archive/aa_archive_segment.h"
#include "logbuffer/aa_frame.h"
#include "util/aa_error.h"

#include "aa_spark_jni_segments.h"

#define PROBE_FRAME_ALIGNMENT 32
#define PROBE_COMPLETE (AA_DATA_HEADER_BEGIN_FLAG | AA_DATA_HEADER_END_FLAG)

static void probe_throw(JNIEnv *env, const char *message)
{
    jclass type = (*env)->FindClass(env, "java/io/IOException");
    if (NULL != type)
    {
        (*env)->ThrowNew(env, type, message);
    }
}

/* 1 with *reserved_value set when a whole message starts in [start, stop), 0 when none, -1 on error. */
static int probe_first(aa_spark_segments_t *s, int64_t stop, int64_t *reserved_value, char *error, size_t length)
{
    int64_t position = s->start_position;
    bool in_message = false;
    int64_t reserved = 0;
    while (position < stop)
    {
        int64_t available;
        const aa_data_header_t *header =
            (const aa_data_header_t *)aa_spark_segments_at(s, position, &available, error, length);
        if (NULL == header)
        {
            return -1;
        }
        int32_t frame_length = header->frame_header.frame_length;
        if (frame_length < AA_DATA_HEADER_LENGTH || frame_length > available)
        {
            return 0; /* nothing recorded here: a replay would end */
        }
        int64_t aligned = (frame_length + PROBE_FRAME_ALIGNMENT - 1) & ~(int64_t)(PROBE_FRAME_ALIGNMENT - 1);
        if (position + aligned > stop)
        {
            return 0; /* the frame is not recorded whole */
        }
        position += aligned;
        if (AA_HDR_TYPE_PAD == header->frame_header.type)
        {
            continue;
        }
        uint8_t flags = header->frame_header.flags;
        if (flags & AA_DATA_HEADER_BEGIN_FLAG)
        {
            in_message = true;
            reserved = header->reserved_value;
        }
        if (in_message && (flags & AA_DATA_HEADER_END_FLAG))
        {
            *reserved_value = reserved;
            return 1;
        }
    }
    return 0;
}

JNIEXPORT jlongArray JNICALL Java_aeron_spark_Native_provenanceProbe(
    JNIEnv *env, jclass type, jstring dir, jlong recording_id, jlong start_position, jlong stop_position,
    jint term_length, jint segment_length, jint initial_term_id, jint stream_id, jboolean stopped)
{
    aa_spark_segments_t s = {
        .recording_id = recording_id, .start_position = start_position, .stop_position = stop_position,
        .term_length = term_length,
        .segment_length = segment_length, .base = -1, .map = NULL,
    };
    s.dir = (*env)->GetStringUTFChars(env, dir, NULL);
    if (NULL == s.dir)
    {
        return NULL;
    }
    jlong out[4] = { 0, 0, 0, 0 };
    char error[1024] = "";
    if (stop_position > start_position)
    {
        int64_t last = stop_position - PROBE_FRAME_ALIGNMENT;
        if (stopped && last >= start_position)
        {
            int rc = aa_archive_segment_frame_at(s.dir, recording_id, start_position, last, initial_term_id,
                term_length, segment_length, stream_id);
            if (rc < 0)
            {
                snprintf(error, sizeof(error), "recording %" PRId64 " at position %" PRId64 ": %s",
                    (int64_t)recording_id, last, aa_errmsg());
            }
            else if (1 == rc)
            {
                int64_t available;
                const aa_data_header_t *header =
                    (const aa_data_header_t *)aa_spark_segments_at(&s, last, &available, error, sizeof(error));
                if (NULL != header && AA_HDR_TYPE_DATA == header->frame_header.type &&
                    PROBE_COMPLETE == (header->frame_header.flags & PROBE_COMPLETE) &&
                    header->frame_header.frame_length <= PROBE_FRAME_ALIGNMENT)
                {
                    out[0] = 1;
                    out[1] = header->reserved_value;
                }
            }
        }
        if ('\0' == error[0])
        {
            int64_t reserved = 0;
            int found = probe_first(&s, stop_position, &reserved, error, sizeof(error));
            if (1 == found)
            {
                out[2] = 1;
                out[3] = reserved;
            }
        }
    }
    aa_spark_segments_unmap(&s);
    (*env)->ReleaseStringUTFChars(env, dir, s.dir);
    if ('\0' != error[0])
    {
        probe_throw(env, error);
        return NULL;
    }
    jlongArray result = (*env)->NewLongArray(env, 4);
    if (NULL != result)
    {
        (*env)->SetLongArrayRegion(env, result, 0, 4, out);
    }
    return result;
}
