/*
 * The JVM connector's native side (docs/spark.md, "The JVM connector"): the class aeron.spark.Native
 * reads an archive's catalog and segment files through the project's C archive code, read-only,
 * with no Python and no object per message.
 *
 * recordings(dir)   the VALID recordings of <dir>/archive.catalog, RECORDING_FIELDS longs each
 * channels(dir, id) a recording's original and stripped channel
 * read(...)         whole messages of a stopped recording, walked frame by frame in its memory-mapped
 *                   segment files, copied into column buffers laid out as aa_columns_t's
 *                   (src/client/aa_columns.c): data bytes back to back with int32 offsets, each
 *                   message's END position (Message.position), reserved values
 * count(...)        the same walk without copying: messages (at most state[S_ROW_LIMIT] when > 0),
 *                   smallest and largest end position; the state's cursor left after the last one
 * recordedPosition(aeron dir, id)  an active recording's rec-pos counter (type 100, key: its id)
 *                   in the media driver's CnC file, or -1 when it has none (stopped)
 * readerOpen/readerRead/readerClose  read(...) through a handle that keeps the recording's segment
 *                   file mapped between calls (a reader polling an active recording, or walking a
 *                   range batch after batch): one mapping at a time, replaced only when the walk
 *                   crosses into another segment file, unmapped by readerClose
 *
 * A range [from, to) holds the messages whose START position is in it; a message's end position
 * must also lie in [end_low, end_high] (a pushed-down filter on the `position` column). A walk
 * starts at a message boundary (the term start at or before `from`, or where the last call stopped)
 * and stops outside a message: it never returns part of one. The walk's limit is the recording's
 * stop position, or for an active recording a position it has recorded (state[S_PARTIAL_OK] = 1:
 * a message only partly recorded there ends the walk before it, as if it were not yet written);
 * with state[S_DROP_MARKERS] = 1 (dropRepeats) the sink's end markers are skipped. Errors throw
 * java.io.IOException with the C layer's message.
 */
#include <errno.h>
#include <inttypes.h>
#include <jni.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "aeron_async.h"
#include "archive/aa_archive_catalog.h"
#include "archive/aa_archive_segment.h"
#include "logbuffer/aa_frame.h"
#include "util/aa_error.h"

#include "aa_spark_jni_segments.h"

#define RECORDING_FIELDS 8
#define FRAME_ALIGNMENT 32

enum
{
    S_CURSOR = 0, S_FROM, S_TO, S_END_LOW, S_END_HIGH, S_ROWS, S_DATA_LENGTH, S_DONE, S_REQUIRED, S_PARTIAL_OK,
    S_ROW_LIMIT, S_DROP_MARKERS, S_LENGTH
};

/* dropRepeats (aa_spark_jni_repeats.c): the sink's end markers, told by their reserved value's tag and
 * end bit (aeron_async/spark/provenance.py), are no rows of the walk when state[S_DROP_MARKERS] is set */
#define SINK_TAG_AND_END_MASK ((int64_t)(UINT64_C(0xD) << 60))
#define SINK_TAG_AND_END_VALUE ((int64_t)(UINT64_C(0x9) << 60))

static void throw_io(JNIEnv *env, const char *message)
{
    jclass type = (*env)->FindClass(env, "java/io/IOException");
    if (NULL != type)
    {
        (*env)->ThrowNew(env, type, message);
    }
}

static aa_archive_catalog_t *open_catalog(JNIEnv *env, jstring dir, const char **path)
{
    *path = (*env)->GetStringUTFChars(env, dir, NULL);
    if (NULL == *path)
    {
        return NULL;
    }
    aa_archive_catalog_t *catalog = NULL;
    if (aa_archive_catalog_open(&catalog, *path, 0, 0, AA_ARCHIVE_CHECKSUM_NONE, AA_ARCHIVE_CATALOG_READ_ONLY) < 0)
    {
        char message[1024];
        snprintf(message, sizeof(message), "the archive directory %s (option archiveDir): %s", *path, aa_errmsg());
        (*env)->ReleaseStringUTFChars(env, dir, *path);
        throw_io(env, message);
        return NULL;
    }
    return catalog;
}

JNIEXPORT jlongArray JNICALL Java_aeron_spark_Native_recordings(JNIEnv *env, jclass type, jstring dir)
{
    const char *path;
    aa_archive_catalog_t *catalog = open_catalog(env, dir, &path);
    if (NULL == catalog)
    {
        return NULL;
    }
    aa_archive_catalog_info_t info;
    aa_archive_catalog_info(catalog, &info);
    jlongArray result = (*env)->NewLongArray(env, (jsize)info.valid_count * RECORDING_FIELDS);
    jlong *values = NULL == result ? NULL : (*env)->GetLongArrayElements(env, result, NULL);
    if (NULL != values)
    {
        aa_archive_catalog_entry_t entry;
        int32_t n = 0;
        for (int32_t i = 0; n < info.valid_count && 1 == aa_archive_catalog_entry(catalog, i, &entry); i++)
        {
            if (AA_ARCHIVE_RECORDING_VALID != entry.state)
            {
                continue;
            }
            jlong *row = values + (size_t)n * RECORDING_FIELDS;
            row[0] = entry.recording_id;
            row[1] = entry.fields.start_position;
            row[2] = entry.fields.stop_position;
            row[3] = entry.fields.session_id;
            row[4] = entry.fields.stream_id;
            row[5] = entry.fields.term_buffer_length;
            row[6] = entry.fields.segment_file_length;
            row[7] = entry.fields.initial_term_id;
            n++;
        }
        (*env)->ReleaseLongArrayElements(env, result, values, 0);
    }
    aa_archive_catalog_close(catalog);
    (*env)->ReleaseStringUTFChars(env, dir, path);
    return result;
}

static jstring new_string(JNIEnv *env, const uint8_t *data, uint32_t length)
{
    char buffer[4096];
    size_t n = length < sizeof(buffer) - 1 ? length : sizeof(buffer) - 1;
    memcpy(buffer, data, n);
    buffer[n] = '\0';
    return (*env)->NewStringUTF(env, buffer);
}

JNIEXPORT jobjectArray JNICALL Java_aeron_spark_Native_channels(JNIEnv *env, jclass type, jstring dir, jlong id)
{
    const char *path;
    aa_archive_catalog_t *catalog = open_catalog(env, dir, &path);
    if (NULL == catalog)
    {
        return NULL;
    }
    jobjectArray result = NULL;
    aa_archive_catalog_entry_t entry;
    int found = aa_archive_catalog_find(catalog, id, &entry);
    if (1 == found)
    {
        jclass string_type = (*env)->FindClass(env, "java/lang/String");
        result = NULL == string_type ? NULL : (*env)->NewObjectArray(env, 2, string_type, NULL);
        if (NULL != result)
        {
            (*env)->SetObjectArrayElement(env, result, 0,
                new_string(env, entry.fields.original_channel.data, entry.fields.original_channel.length));
            (*env)->SetObjectArrayElement(env, result, 1,
                new_string(env, entry.fields.stripped_channel.data, entry.fields.stripped_channel.length));
        }
    }
    else
    {
        char message[1024];
        snprintf(message, sizeof(message), "recording %" PRId64 " is not in the catalog of %s%s%s", (int64_t)id, path,
            found < 0 ? ": " : "", found < 0 ? aa_errmsg() : "");
        throw_io(env, message);
    }
    aa_archive_catalog_close(catalog);
    (*env)->ReleaseStringUTFChars(env, dir, path);
    return result;
}

typedef struct
{
    uint8_t *data;
    int64_t data_capacity;
    int32_t *offsets;
    int64_t *positions;
    int64_t *reserved_values;
    int32_t row_capacity;
    bool count_only;
    int64_t min_end;
    int64_t max_end;
}
columns_t;

/* Walks from state[S_CURSOR]; see the file's comment. 0, or -1 with error set. */
static int walk(aa_spark_segments_t *s, jlong *state, columns_t *c, char *error, size_t error_length)
{
    const int64_t from = state[S_FROM], to = state[S_TO], end_low = state[S_END_LOW], end_high = state[S_END_HIGH];
    int64_t position = state[S_CURSOR];
    int64_t committed = position;
    int64_t rows = state[S_ROWS], data_length = state[S_DATA_LENGTH];
    int64_t message_data_start = data_length, message_start = position, reserved_value = 0;
    bool in_message = false, skipping = false;
    /* the mapped bytes from window_position on (to window_end): a frame there is found without a call */
    const uint8_t *window = NULL;
    int64_t window_position = 0, window_end = 0;
    state[S_DONE] = 0;
    state[S_REQUIRED] = 0;

    while (true)
    {
        if (!in_message && (position >= to || position >= s->stop_position))
        {
            state[S_DONE] = 1;
            break;
        }
        if (position >= s->stop_position)
        {
            if (state[S_PARTIAL_OK])
            {
                break; /* the rest of this message is not recorded yet */
            }
            snprintf(error, error_length, "recording %" PRId64 ": the message at %" PRId64
                " runs past the recording's stop position %" PRId64, s->recording_id, message_start, s->stop_position);
            return -1;
        }
        if (!in_message && !c->count_only && rows >= c->row_capacity)
        {
            break;
        }
        if (!in_message && c->count_only && state[S_ROW_LIMIT] > 0 && rows >= state[S_ROW_LIMIT])
        {
            break;
        }
        if (position < window_position || position >= window_end)
        {
            int64_t mapped;
            window = aa_spark_segments_at(s, position, &mapped, error, error_length);
            if (NULL == window)
            {
                return -1;
            }
            window_position = position;
            window_end = position + mapped;
        }
        const uint8_t *frame = window + (position - window_position);
        int64_t available = window_end - position;
        const aa_data_header_t *header = (const aa_data_header_t *)frame;
        int32_t frame_length = header->frame_header.frame_length;
        if (frame_length < AA_DATA_HEADER_LENGTH || frame_length > available)
        {
            snprintf(error, error_length, "recording %" PRId64 ": no frame at position %" PRId64
                " (length %" PRId32 ") before its stop position %" PRId64 ": the segment file is damaged "
                "(aeron-async recordings verify)", s->recording_id, position, frame_length, s->stop_position);
            return -1;
        }
        int64_t aligned = (frame_length + FRAME_ALIGNMENT - 1) & ~(int64_t)(FRAME_ALIGNMENT - 1);
        if (AA_HDR_TYPE_PAD == header->frame_header.type)
        {
            position += aligned;
            if (!in_message)
            {
                committed = position;
            }
            continue;
        }
        uint8_t flags = header->frame_header.flags;
        int64_t payload_length = frame_length - AA_DATA_HEADER_LENGTH;
        if (flags & AA_DATA_HEADER_BEGIN_FLAG)
        {
            if (in_message)
            {
                data_length = message_data_start; /* an unfinished message: dropped */
            }
            in_message = true;
            message_start = position;
            message_data_start = data_length;
            reserved_value = header->reserved_value;
            skipping = message_start < from;
        }
        else if (!in_message)
        {
            position += aligned; /* the rest of a message that began before this walk: not ours */
            committed = position;
            continue;
        }
        if (!skipping && !c->count_only)
        {
            if (data_length + payload_length > c->data_capacity)
            {
                if (0 == rows)
                {
                    state[S_REQUIRED] = data_length + payload_length;
                }
                break;
            }
            memcpy(c->data + data_length, frame + AA_DATA_HEADER_LENGTH, (size_t)payload_length);
            data_length += payload_length;
        }
        position += aligned;
        if (flags & AA_DATA_HEADER_END_FLAG)
        {
            in_message = false;
            committed = position;
            bool marker = 0 != state[S_DROP_MARKERS] &&
                SINK_TAG_AND_END_VALUE == (reserved_value & SINK_TAG_AND_END_MASK);
            if (!skipping && !marker && committed >= end_low && committed <= end_high)
            {
                if (c->count_only)
                {
                    c->min_end = c->min_end < 0 ? committed : c->min_end;
                    c->max_end = committed;
                }
                else
                {
                    c->positions[rows] = committed;
                    c->reserved_values[rows] = reserved_value;
                    c->offsets[rows + 1] = (int32_t)data_length;
                }
                rows++;
            }
            else
            {
                data_length = message_data_start;
            }
        }
    }
    if (in_message)
    {
        data_length = message_data_start; /* read again whole by the next call */
    }
    state[S_CURSOR] = committed;
    state[S_ROWS] = rows;
    state[S_DATA_LENGTH] = data_length;
    return 0;
}

static bool segments_init(
    JNIEnv *env, aa_spark_segments_t *s, jstring dir, jlong recording_id, jlong start_position, jlong stop_position,
    jint term_length, jint segment_length)
{
    memset(s, 0, sizeof(*s));
    s->dir = (*env)->GetStringUTFChars(env, dir, NULL);
    s->recording_id = recording_id;
    s->start_position = start_position;
    s->stop_position = stop_position;
    s->term_length = term_length;
    s->segment_length = segment_length;
    s->base = -1;
    return NULL != s->dir;
}

static void segments_close(JNIEnv *env, aa_spark_segments_t *s, jstring dir)
{
    aa_spark_segments_unmap(s);
    (*env)->ReleaseStringUTFChars(env, dir, s->dir);
}

/* The walk into the Java column buffers: the state array read, walked, written back; error set
 * (and the state left as it was) on failure. */
static void read_into(JNIEnv *env, aa_spark_segments_t *s, jlongArray state_array, jobject data, jobject offsets,
    jobject positions, jobject reserved_values, char *error, size_t error_length)
{
    columns_t c = {
        .data = (*env)->GetDirectBufferAddress(env, data),
        .data_capacity = (*env)->GetDirectBufferCapacity(env, data),
        .offsets = (*env)->GetDirectBufferAddress(env, offsets),
        .positions = (*env)->GetDirectBufferAddress(env, positions),
        .reserved_values = (*env)->GetDirectBufferAddress(env, reserved_values),
        .row_capacity = (int32_t)((*env)->GetDirectBufferCapacity(env, positions) / 8),
        .count_only = false, .min_end = -1, .max_end = -1,
    };
    if (NULL == c.data || NULL == c.offsets || NULL == c.positions || NULL == c.reserved_values)
    {
        snprintf(error, error_length, "the column buffers must be direct ByteBuffers");
        return;
    }
    jlong state[S_LENGTH];
    (*env)->GetLongArrayRegion(env, state_array, 0, S_LENGTH, state);
    c.offsets[0] = 0;
    if (0 == walk(s, state, &c, error, error_length))
    {
        error[0] = '\0';
        (*env)->SetLongArrayRegion(env, state_array, 0, S_LENGTH, state);
    }
}

JNIEXPORT void JNICALL Java_aeron_spark_Native_read(
    JNIEnv *env, jclass type, jstring dir, jlong recording_id, jlong start_position, jlong stop_position,
    jint term_length, jint segment_length, jlongArray state_array, jobject data, jobject offsets, jobject positions,
    jobject reserved_values)
{
    aa_spark_segments_t s;
    if (!segments_init(env, &s, dir, recording_id, start_position, stop_position, term_length, segment_length))
    {
        return;
    }
    char error[1024] = "";
    read_into(env, &s, state_array, data, offsets, positions, reserved_values, error, sizeof(error));
    segments_close(env, &s, dir);
    if ('\0' != error[0])
    {
        throw_io(env, error);
    }
}

/* A kept reader (readerOpen): the recording's segment files, the mapped one kept between reads. */
typedef struct
{
    aa_spark_segments_t segments;
    char dir[];
}
reader_handle_t;

JNIEXPORT jlong JNICALL Java_aeron_spark_Native_readerOpen(
    JNIEnv *env, jclass type, jstring dir, jlong recording_id, jlong start_position, jint term_length,
    jint segment_length)
{
    const char *path = (*env)->GetStringUTFChars(env, dir, NULL);
    if (NULL == path)
    {
        return 0;
    }
    size_t length = strlen(path);
    reader_handle_t *handle = malloc(sizeof(reader_handle_t) + length + 1);
    if (NULL == handle)
    {
        (*env)->ReleaseStringUTFChars(env, dir, path);
        throw_io(env, "no memory for a segment reader");
        return 0;
    }
    memcpy(handle->dir, path, length + 1);
    (*env)->ReleaseStringUTFChars(env, dir, path);
    memset(&handle->segments, 0, sizeof(handle->segments));
    handle->segments.dir = handle->dir;
    handle->segments.recording_id = recording_id;
    handle->segments.start_position = start_position;
    handle->segments.stop_position = start_position;
    handle->segments.term_length = term_length;
    handle->segments.segment_length = segment_length;
    handle->segments.base = -1;
    return (jlong)(intptr_t)handle;
}

/* read(...) through the handle, up to stop_position (the recording's stop, or what it has recorded). */
JNIEXPORT void JNICALL Java_aeron_spark_Native_readerRead(
    JNIEnv *env, jclass type, jlong handle_address, jlong stop_position, jlongArray state_array, jobject data,
    jobject offsets, jobject positions, jobject reserved_values)
{
    reader_handle_t *handle = (reader_handle_t *)(intptr_t)handle_address;
    char error[1024] = "";
    if (NULL == handle)
    {
        snprintf(error, sizeof(error), "the segment reader is closed");
    }
    else
    {
        handle->segments.stop_position = stop_position;
        read_into(env, &handle->segments, state_array, data, offsets, positions, reserved_values, error,
            sizeof(error));
    }
    if ('\0' != error[0])
    {
        throw_io(env, error);
    }
}

JNIEXPORT void JNICALL Java_aeron_spark_Native_readerClose(JNIEnv *env, jclass type, jlong handle_address)
{
    reader_handle_t *handle = (reader_handle_t *)(intptr_t)handle_address;
    if (NULL != handle)
    {
        aa_spark_segments_unmap(&handle->segments);
        free(handle);
    }
}

JNIEXPORT jlongArray JNICALL Java_aeron_spark_Native_count(
    JNIEnv *env, jclass type, jstring dir, jlong recording_id, jlong start_position, jlong stop_position,
    jint term_length, jint segment_length, jlongArray state_array)
{
    aa_spark_segments_t s;
    if (!segments_init(env, &s, dir, recording_id, start_position, stop_position, term_length, segment_length))
    {
        return NULL;
    }
    columns_t c = { .count_only = true, .min_end = -1, .max_end = -1 };
    jlong state[S_LENGTH];
    (*env)->GetLongArrayRegion(env, state_array, 0, S_LENGTH, state);
    char error[1024] = "";
    jlongArray result = NULL;
    if (0 == walk(&s, state, &c, error, sizeof(error)))
    {
        jlong out[3] = { state[S_ROWS], c.min_end, c.max_end };
        result = (*env)->NewLongArray(env, 3);
        if (NULL != result)
        {
            (*env)->SetLongArrayRegion(env, result, 0, 3, out);
        }
        (*env)->SetLongArrayRegion(env, state_array, 0, S_LENGTH, state);
        error[0] = '\0';
    }
    segments_close(env, &s, dir);
    if ('\0' != error[0])
    {
        throw_io(env, error);
    }
    return result;
}

JNIEXPORT jlong JNICALL Java_aeron_spark_Native_recordedPosition(
    JNIEnv *env, jclass type, jstring aeron_dir, jlong recording_id)
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
        char message[1024];
        snprintf(message, sizeof(message), "the media driver's CnC file (option aeronDir): %s", aa_errmsg());
        throw_io(env, message);
        return -1;
    }
    jlong position = -1;
    aa_counter_info_t info;
    for (int32_t id = aa_cnc_reader_next_counter(reader, 0, &info); id >= 0;
        id = aa_cnc_reader_next_counter(reader, id + 1, &info))
    {
        int64_t key_id;
        if (100 == info.type_id && info.key_length >= 8)
        {
            memcpy(&key_id, info.key, sizeof(key_id));
            if (key_id == recording_id)
            {
                position = aa_cnc_reader_counter_value(reader, id);
                break;
            }
        }
    }
    aa_cnc_reader_close(reader);
    return position;
}

/* An active recording's rec-pos counter kept open (Real-time Mode polls it): a handle for
 * counterValue/counterClose, or 0 when the recording has no counter (stopped). */
typedef struct
{
    aa_cnc_reader_t *reader;
    int32_t counter_id;
}
counter_handle_t;

JNIEXPORT jlong JNICALL Java_aeron_spark_Native_counterOpen(
    JNIEnv *env, jclass type, jstring aeron_dir, jlong recording_id)
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
        char message[1024];
        snprintf(message, sizeof(message), "the media driver's CnC file (option aeronDir): %s", aa_errmsg());
        throw_io(env, message);
        return 0;
    }
    aa_counter_info_t info;
    for (int32_t id = aa_cnc_reader_next_counter(reader, 0, &info); id >= 0;
        id = aa_cnc_reader_next_counter(reader, id + 1, &info))
    {
        int64_t key_id;
        if (100 == info.type_id && info.key_length >= 8)
        {
            memcpy(&key_id, info.key, sizeof(key_id));
            if (key_id == recording_id)
            {
                counter_handle_t *handle = malloc(sizeof(counter_handle_t));
                if (NULL == handle)
                {
                    break;
                }
                handle->reader = reader;
                handle->counter_id = id;
                return (jlong)(intptr_t)handle;
            }
        }
    }
    aa_cnc_reader_close(reader);
    return 0;
}

/* The counter's value, or -1 once it is no longer the recording's (the recording stopped). */
JNIEXPORT jlong JNICALL Java_aeron_spark_Native_counterValue(JNIEnv *env, jclass type, jlong handle_address,
    jlong recording_id)
{
    counter_handle_t *handle = (counter_handle_t *)(intptr_t)handle_address;
    aa_counter_info_t info;
    if (1 != aa_cnc_reader_counter(handle->reader, handle->counter_id, &info) || 100 != info.type_id ||
        info.key_length < 8)
    {
        return -1;
    }
    int64_t key_id;
    memcpy(&key_id, info.key, sizeof(key_id));
    return key_id == recording_id ? aa_cnc_reader_counter_value(handle->reader, handle->counter_id) : -1;
}

JNIEXPORT void JNICALL Java_aeron_spark_Native_counterClose(JNIEnv *env, jclass type, jlong handle_address)
{
    counter_handle_t *handle = (counter_handle_t *)(intptr_t)handle_address;
    if (NULL != handle)
    {
        aa_cnc_reader_close(handle->reader);
        free(handle);
    }
}
