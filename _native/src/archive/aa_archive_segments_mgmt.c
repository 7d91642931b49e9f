/*
 * Segment management as Aeron's ArchiveConductor (reference aeron-wave3.md 9; docs/architecture.md,
 * "Segments and retention"): detach (the catalog's start moves to a later segment boundary, the
 * files stay), delete detached (the files below the start), purge (both), attach (detached files
 * back, walking down from the start) and migrate (a stopped recording's files renamed into a
 * contiguous recording of the same stream). Deletes are queued and done one file per duty cycle
 * (Aeron's DeleteSegmentsSession), then the requester gets the DELETE signal.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/aa_archive_segments_mgmt.h"
#include "archive/aa_archive_retention.h"
#include "archive/aa_archive_segment.h"
#include "aeron_async.h"
#include "concurrent/aa_atomic.h"
#include "logbuffer/aa_frame.h"
#include "logbuffer/aa_logbuffer.h"
#include "util/aa_array.h"
#include "util/aa_error.h"

#define AA_SEGMENTS_SCAN_CHUNK 65536

aa_archive_segments_t *aa_archive_segments_state(aa_archive_conductor_t *c)
{
    if (NULL == c->segments)
    {
        c->segments = calloc(1, sizeof(*c->segments));
        if (NULL != c->segments)
        {
            c->segments->retention_cursor = -1;
            c->segments->retention_counter_async = -1;
        }
    }
    return c->segments;
}

/* ---- the delete queue ---- */

bool aa_archive_segments_delete_pending(aa_archive_conductor_t *c, int64_t recording_id)
{
    aa_archive_segments_t *g = c->segments;
    for (size_t i = 0; NULL != g && i < g->delete_count; i++)
    {
        if (g->deletes[i].recording_id == recording_id)
        {
            return true;
        }
    }
    return false;
}

int aa_archive_segments_queue_delete(aa_archive_conductor_t *c, int64_t recording_id, int64_t control_session_id,
    int64_t correlation_id, const int64_t *bases, int32_t count, bool by_retention)
{
    aa_archive_segments_t *g = aa_archive_segments_state(c);
    int64_t *copy = malloc(sizeof(int64_t) * (size_t)(count > 0 ? count : 1));
    if (NULL == g || NULL == copy ||
        aa_array_ensure_capacity((void **)&g->deletes, &g->delete_capacity, g->delete_count, sizeof(*g->deletes)) < 0)
    {
        free(copy);
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "%s", "out of memory");
        return -1;
    }
    memcpy(copy, bases, sizeof(int64_t) * (size_t)count);
    aa_archive_segment_delete_t *d = &g->deletes[g->delete_count++];
    d->recording_id = recording_id;
    d->control_session_id = control_session_id;
    d->correlation_id = correlation_id;
    d->bases = copy;
    d->count = count;
    d->next = 0;
    d->by_retention = by_retention;
    return 0;
}

static void aa_delete_done(aa_archive_conductor_t *c, size_t index)
{
    aa_archive_segments_t *g = c->segments;
    aa_archive_segment_delete_t d = g->deletes[index];
    free(d.bases);
    memmove(&g->deletes[index], &g->deletes[index + 1], (g->delete_count - index - 1) * sizeof(*g->deletes));
    g->delete_count--;
    if (c->archive->ctx.file_sync_level >= AA_ARCHIVE_SYNC_DATA && d.next > 0)
    {
        aa_archive_dir_sync(c->archive->ctx.archive_dir);
    }
    if (d.control_session_id >= 0)
    {
        aa_archive_send_signal(c, d.control_session_id, d.correlation_id, d.recording_id, -1, -1,
            AA_ARCHIVE_SIGNAL_DELETE);
    }
}

/* One segment file (or its legacy ".del" twin) of the first queued delete. */
static int aa_delete_one(aa_archive_conductor_t *c)
{
    aa_archive_segments_t *g = c->segments;
    if (NULL == g || 0 == g->delete_count)
    {
        return 0;
    }
    aa_archive_segment_delete_t *d = &g->deletes[0];
    if (d->next >= d->count)
    {
        aa_delete_done(c, 0);
        return 1;
    }
    char name[64], path[PATH_MAX], twin[PATH_MAX + 8];
    aa_archive_segment_file_name(name, sizeof(name), d->recording_id, d->bases[d->next]);
    snprintf(path, sizeof(path), "%s/%s", c->archive->ctx.archive_dir, name);
    snprintf(twin, sizeof(twin), "%s.del", path);
    if (unlink(path) < 0 && (ENOENT != errno || unlink(twin) < 0))
    {
        aa_archive_control_session_t *s = d->control_session_id >= 0 ?
            aa_archive_find_session(c, d->control_session_id) : NULL;
        char message[PATH_MAX + 128];
        snprintf(message, sizeof(message), "unable to delete segment file: %s (%s)", path, strerror(errno));
        aa_archive_log_error(c->archive, AA_ERROR_CODE_GENERIC_ERROR, "%s", message);
        if (NULL != s)
        {
            aa_archive_send_error(c, s, d->correlation_id, AA_ARCHIVE_ERROR_GENERIC, "%s", message);
        }
    }
    else if (d->by_retention)
    {
        aa_archive_retention_count_deleted(c);
    }
    d->next++;
    if (d->next >= d->count)
    {
        aa_delete_done(c, 0);
    }
    return 1;
}

int aa_archive_segments_do_work(aa_archive_conductor_t *c, int64_t now_ns)
{
    return aa_delete_one(c) + aa_archive_retention_do_work(c, now_ns);
}

void aa_archive_segments_close(aa_archive_conductor_t *c)
{
    aa_archive_segments_t *g = c->segments;
    if (NULL == g)
    {
        return;
    }
    for (size_t i = 0; i < g->delete_count; i++)
    {
        free(g->deletes[i].bases);
    }
    free(g->deletes);
    if (NULL != g->retention_counter)
    {
        aa_counter_close(g->retention_counter);
    }
    free(g);
    c->segments = NULL;
}

/* ---- checks ---- */

static int64_t aa_seg_base(const aa_archive_recording_descriptor_t *d, int64_t position)
{
    return aa_archive_segment_base_position(d->start_position, position, d->term_buffer_length,
        d->segment_file_length);
}

int64_t aa_archive_segments_lowest_replay_base(aa_archive_conductor_t *c, int64_t recording_id)
{
    int64_t lowest = INT64_MAX;
    for (size_t i = 0; i < c->replay_count; i++)
    {
        aa_archive_replay_t *r = c->replays[i];
        if (r->recording_id == recording_id)
        {
            int64_t position = __atomic_load_n(&r->position, __ATOMIC_RELAXED);
            int64_t base = aa_archive_segment_base(r->start_term_base, r->segment_length, position);
            lowest = base < lowest ? base : lowest;
        }
    }
    return lowest;
}

static bool aa_find_or_refuse(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    int64_t recording_id, aa_archive_recording_descriptor_t *d)
{
    if (!aa_archive_find_descriptor(c, recording_id, d))
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_UNKNOWN_RECORDING,
            "unknown recording id: %" PRId64, recording_id);
        return false;
    }
    return true;
}

static bool aa_refuse_pending_delete(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    int64_t recording_id)
{
    if (aa_archive_segments_delete_pending(c, recording_id))
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC,
            "another delete operation in progress for recording id: %" PRId64, recording_id);
        return true;
    }
    return false;
}

/* Aeron's isValidDetach: new_start on a segment boundary, at least one whole segment past the
 * start's, not past the segment being recorded (or holding the stop position), not past a running
 * replay's segment. */
static bool aa_valid_detach(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    const aa_archive_recording_descriptor_t *d, int64_t new_start)
{
    if (new_start < 0 || new_start != aa_seg_base(d, new_start))
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC,
            "invalid segment start: newStartPosition=%" PRId64, new_start);
        return false;
    }
    int64_t lower_bound = aa_seg_base(d, d->start_position) + d->segment_file_length;
    if (new_start < lower_bound)
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC,
            "invalid detach: newStartPosition=%" PRId64 " lowerBound=%" PRId64, new_start, lower_bound);
        return false;
    }
    int64_t upper_bound = aa_seg_base(d, aa_archive_recorded_position(c, d));
    if (new_start > upper_bound)
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC,
            "invalid detach: in use, newStartPosition=%" PRId64 " upperBound=%" PRId64, new_start, upper_bound);
        return false;
    }
    int64_t replay_base = aa_archive_segments_lowest_replay_base(c, d->recording_id);
    if (new_start > replay_base)
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC,
            "invalid detach: replay in progress - newStartPosition=%" PRId64 " replaySegmentBasePosition=%" PRId64,
            new_start, replay_base);
        return false;
    }
    return true;
}

/* The bases of the recording's files on disk in [from, to), into *out (malloc); their count or -1. */
static int32_t aa_files_between(aa_archive_conductor_t *c, int64_t recording_id, int64_t from, int64_t to,
    int64_t **out)
{
    const char *dir = c->archive->ctx.archive_dir;
    int32_t total = aa_archive_segment_list(dir, recording_id, NULL, 0);
    int64_t *bases = malloc(sizeof(int64_t) * (size_t)(total > 0 ? total : 1));
    if (total < 0 || NULL == bases)
    {
        free(bases);
        return -1;
    }
    total = aa_archive_segment_list(dir, recording_id, bases, total);
    int32_t n = 0;
    for (int32_t i = 0; i < total; i++)
    {
        if (bases[i] >= from && bases[i] < to)
        {
            bases[n++] = bases[i];
        }
    }
    *out = bases;
    return n;
}

/* OK with the count queued, then the deletes (DELETE at once when there is nothing to delete). */
static void aa_queue_and_answer(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    int64_t recording_id, int64_t *bases, int32_t count)
{
    if (count > 0 && aa_archive_segments_queue_delete(c, recording_id, s->id, correlation_id, bases, count, false) < 0)
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC, "%s", aa_errmsg());
        free(bases);
        return;
    }
    free(bases);
    aa_archive_send_ok(c, s, correlation_id, count);
    if (0 == count)
    {
        aa_archive_send_signal(c, s->id, correlation_id, recording_id, -1, -1, AA_ARCHIVE_SIGNAL_DELETE);
    }
}

/* ---- detach, delete detached, purge ---- */

static void aa_on_detach(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    int64_t recording_id, int64_t new_start, bool purge)
{
    aa_archive_recording_descriptor_t d;
    if (!aa_find_or_refuse(c, s, correlation_id, recording_id, &d) ||
        (purge && aa_refuse_pending_delete(c, s, correlation_id, recording_id)) ||
        !aa_valid_detach(c, s, correlation_id, &d, new_start))
    {
        return;
    }
    int64_t *bases = NULL;
    int32_t count = 0;
    if (purge && (count = aa_files_between(c, recording_id, aa_seg_base(&d, d.start_position), new_start, &bases)) < 0)
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC, "purging segments of recording %" PRId64
            ": %s", recording_id, aa_errmsg());
        return;
    }
    if (aa_archive_catalog_update_start_position(c->catalog, recording_id, new_start) < 0)
    {
        free(bases);
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC, "detaching segments of recording %"
            PRId64 ": %s", recording_id, aa_errmsg());
        return;
    }
    if (!purge)
    {
        aa_archive_send_ok(c, s, correlation_id, 0);
        return;
    }
    aa_queue_and_answer(c, s, correlation_id, recording_id, bases, count);
}

static void aa_on_delete_detached(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    int64_t recording_id)
{
    aa_archive_recording_descriptor_t d;
    if (!aa_find_or_refuse(c, s, correlation_id, recording_id, &d) ||
        aa_refuse_pending_delete(c, s, correlation_id, recording_id))
    {
        return;
    }
    int64_t *bases = NULL;
    int32_t count = aa_files_between(c, recording_id, INT64_MIN, aa_seg_base(&d, d.start_position), &bases);
    if (count < 0)
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC, "deleting detached segments of recording %"
            PRId64 ": %s", recording_id, aa_errmsg());
        return;
    }
    aa_queue_and_answer(c, s, correlation_id, recording_id, bases, count);
}

/* ---- attach ---- */

/* The offset of the first frame in the first term of a segment file (Aeron's findTermOffsetForStart),
 * checked for its term id and stream id: 0 with *offset, or -1 with *message set. */
static int aa_first_frame(int fd, const aa_archive_recording_descriptor_t *d, int64_t base, const char *name,
    int32_t *offset, char *message, size_t length)
{
    uint8_t buffer[AA_SEGMENTS_SCAN_CHUNK];
    for (int64_t at = 0; at < d->term_buffer_length; at += (int64_t)sizeof(buffer))
    {
        int64_t want = d->term_buffer_length - at < (int64_t)sizeof(buffer) ? d->term_buffer_length - at :
            (int64_t)sizeof(buffer);
        int64_t got = aa_archive_segment_read(fd, at, buffer, (size_t)want);
        if (got < 0)
        {
            snprintf(message, length, "reading segment %s: %s", name, aa_errmsg());
            return -1;
        }
        for (int64_t i = 0; i + AA_DATA_HEADER_LENGTH <= got; i += AA_LOGBUFFER_FRAME_ALIGNMENT)
        {
            int32_t frame_length;
            memcpy(&frame_length, buffer + i, sizeof(frame_length));
            if (0 == frame_length)
            {
                continue;
            }
            int32_t term_id, stream_id;
            memcpy(&term_id, buffer + i + 20, sizeof(term_id));
            memcpy(&stream_id, buffer + i + 16, sizeof(stream_id));
            int32_t expected = aa_compute_term_id_from_position(base, aa_position_bits_to_shift(d->term_buffer_length),
                d->initial_term_id);
            if (term_id != expected)
            {
                snprintf(message, length, "term id does not match: actual=%" PRId32 " expected=%" PRId32, term_id,
                    expected);
                return -1;
            }
            if (stream_id != d->stream_id)
            {
                snprintf(message, length, "stream id does not match: actual=%" PRId32 " expected=%" PRId32, stream_id,
                    d->stream_id);
                return -1;
            }
            *offset = (int32_t)(at + i);
            return 0;
        }
        if (got < want)
        {
            break;
        }
    }
    snprintf(message, length, "fragment not found in first term of segment %s", name);
    return -1;
}

static void aa_on_attach(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    int64_t recording_id)
{
    aa_archive_recording_descriptor_t d;
    if (!aa_find_or_refuse(c, s, correlation_id, recording_id, &d) ||
        aa_refuse_pending_delete(c, s, correlation_id, recording_id))
    {
        return;
    }
    const char *dir = c->archive->ctx.archive_dir;
    int64_t attached = 0;
    for (int64_t base = aa_seg_base(&d, d.start_position) - d.segment_file_length; base >= 0;
        base -= d.segment_file_length)
    {
        char name[64], message[512];
        aa_archive_segment_file_name(name, sizeof(name), recording_id, base);
        int fd = aa_archive_segment_open(dir, recording_id, base, d.segment_file_length, AA_ARCHIVE_SEGMENT_READ_ONLY, 0);
        if (fd < 0)
        {
            break; /* no file there: the walk ends */
        }
        struct stat st;
        int32_t offset = 0;
        int rc = 0;
        if (fstat(fd, &st) < 0 || st.st_size != d.segment_file_length)
        {
            snprintf(message, sizeof(message), "fileLength=%" PRId64 " not equal to segmentLength=%" PRId32,
                (int64_t)st.st_size, d.segment_file_length);
            rc = -1;
        }
        else
        {
            rc = aa_first_frame(fd, &d, base, name, &offset, message, sizeof(message));
        }
        close(fd);
        if (rc < 0)
        {
            aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC, "%s", message);
            return;
        }
        if (aa_archive_catalog_update_start_position(c->catalog, recording_id, base + offset) < 0)
        {
            aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC, "attaching segments of recording %"
                PRId64 ": %s", recording_id, aa_errmsg());
            return;
        }
        attached++;
        if (0 != offset)
        {
            break;
        }
    }
    aa_archive_send_ok(c, s, correlation_id, attached);
}

/* ---- migrate ---- */

static bool aa_segment_exists(const char *dir, int64_t recording_id, int64_t base, char *path, size_t length)
{
    char name[64];
    aa_archive_segment_file_name(name, sizeof(name), recording_id, base);
    snprintf(path, length, "%s/%s", dir, name);
    return 0 == access(path, F_OK);
}

static void aa_on_migrate(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    int64_t src_id, int64_t dst_id)
{
    aa_archive_recording_descriptor_t src, dst;
    if (!aa_find_or_refuse(c, s, correlation_id, src_id, &src) ||
        !aa_find_or_refuse(c, s, correlation_id, dst_id, &dst))
    {
        return;
    }
    if (NULL != aa_archive_find_active_recording(c, src_id) || -1 == src.stop_position)
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_ACTIVE_RECORDING, "recording %" PRId64
            " is still active", src_id);
        return;
    }
    if (aa_refuse_pending_delete(c, s, correlation_id, src_id) || aa_refuse_pending_delete(c, s, correlation_id, dst_id))
    {
        return;
    }
    if (src.segment_file_length != dst.segment_file_length || src.term_buffer_length != dst.term_buffer_length ||
        src.initial_term_id != dst.initial_term_id || src.stream_id != dst.stream_id || src.mtu_length != dst.mtu_length)
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC,
            "invalid migrate: srcRecordingId=%" PRId64 " (segmentFileLength=%" PRId32 " termBufferLength=%" PRId32
            " initialTermId=%" PRId32 " streamId=%" PRId32 " mtuLength=%" PRId32 ") dstRecordingId=%" PRId64
            " (segmentFileLength=%" PRId32 " termBufferLength=%" PRId32 " initialTermId=%" PRId32 " streamId=%" PRId32
            " mtuLength=%" PRId32 ") do not match", src_id, src.segment_file_length, src.term_buffer_length,
            src.initial_term_id, src.stream_id, src.mtu_length, dst_id, dst.segment_file_length, dst.term_buffer_length,
            dst.initial_term_id, dst.stream_id, dst.mtu_length);
        return;
    }
    bool prepend = src.stop_position == dst.start_position;
    if (!prepend && !(-1 != dst.stop_position && src.start_position == dst.stop_position))
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC,
            "invalid migrate: src and dst are not contiguous srcStartPosition=%" PRId64 " srcStopPosition=%" PRId64
            " dstStartPosition=%" PRId64 " dstStopPosition=%" PRId64, src.start_position, src.stop_position,
            dst.start_position, dst.stop_position);
        return;
    }
    int64_t join = prepend ? src.stop_position : src.start_position;
    if (join != aa_seg_base(&src, join) || join != aa_seg_base(&dst, join))
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC,
            "invalid migrate: join position is not on segment boundary of src or dst recording joinPosition=%" PRId64,
            join);
        return;
    }
    const char *dir = c->archive->ctx.archive_dir;
    char path[PATH_MAX], dst_path[PATH_MAX];
    int64_t first = aa_seg_base(&src, src.start_position);
    for (int64_t base = first; base < src.stop_position; base += src.segment_file_length)
    {
        if (!aa_segment_exists(dir, src_id, base, path, sizeof(path)))
        {
            aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC,
                "invalid migrate: missing src segment file %s", path);
            return;
        }
        if (aa_segment_exists(dir, dst_id, base, dst_path, sizeof(dst_path)))
        {
            aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC,
                "invalid migrate: preexisting dst segment file %s", dst_path);
            return;
        }
    }
    int64_t moved = 0;
    for (int64_t base = first; base < src.stop_position; base += src.segment_file_length)
    {
        aa_segment_exists(dir, src_id, base, path, sizeof(path));
        aa_segment_exists(dir, dst_id, base, dst_path, sizeof(dst_path));
        if (rename(path, dst_path) < 0)
        {
            char message[2 * PATH_MAX + 128];
            snprintf(message, sizeof(message), "migrating recording %" PRId64 " into %" PRId64 ": renaming %s to %s: %s "
                "(%" PRId64 " segment files were moved, the catalog is unchanged)", src_id, dst_id, path, dst_path,
                strerror(errno), moved);
            aa_archive_log_error(c->archive, AA_ERROR_CODE_GENERIC_ERROR, "%s", message);
            aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC, "%s", message);
            return;
        }
        moved++;
    }
    if (c->archive->ctx.file_sync_level >= AA_ARCHIVE_SYNC_DATA && moved > 0)
    {
        aa_archive_dir_sync(dir);
    }
    int rc = prepend ? aa_archive_catalog_update_start_position(c->catalog, dst_id, src.start_position) :
        aa_archive_catalog_update_stop_position(c->catalog, dst_id, src.stop_position);
    if (rc < 0 || aa_archive_catalog_update_stop_position(c->catalog, src_id, src.start_position) < 0)
    {
        aa_archive_send_error(c, s, correlation_id, AA_ARCHIVE_ERROR_GENERIC, "migrating recording %" PRId64
            " into %" PRId64 ": %s", src_id, dst_id, aa_errmsg());
        return;
    }
    /* the empty src file at the stop position (a stop on a segment boundary) goes, it is not moved */
    int64_t empty = src.stop_position;
    bool queued = src.stop_position == aa_seg_base(&src, src.stop_position) &&
        aa_segment_exists(dir, src_id, empty, path, sizeof(path)) &&
        0 == aa_archive_segments_queue_delete(c, src_id, s->id, correlation_id, &empty, 1, false);
    aa_archive_send_ok(c, s, correlation_id, moved);
    if (moved > 0 && !queued)
    {
        aa_archive_send_signal(c, s->id, correlation_id, src_id, -1, -1, AA_ARCHIVE_SIGNAL_DELETE);
    }
}

void aa_archive_on_segments_request(aa_archive_conductor_t *c, aa_archive_control_session_t *s,
    const aa_archive_message_t *msg)
{
    switch (msg->template_id)
    {
        case AA_ARCHIVE_TEMPLATE_DETACH_SEGMENTS_REQUEST:
            aa_on_detach(c, s, msg->detach_segments_request.correlation_id, msg->detach_segments_request.recording_id,
                msg->detach_segments_request.new_start_position, false);
            break;
        case AA_ARCHIVE_TEMPLATE_DELETE_DETACHED_SEGMENTS_REQUEST:
            aa_on_delete_detached(c, s, msg->delete_detached_segments_request.correlation_id,
                msg->delete_detached_segments_request.recording_id);
            break;
        case AA_ARCHIVE_TEMPLATE_PURGE_SEGMENTS_REQUEST:
            aa_on_detach(c, s, msg->purge_segments_request.correlation_id, msg->purge_segments_request.recording_id,
                msg->purge_segments_request.new_start_position, true);
            break;
        case AA_ARCHIVE_TEMPLATE_ATTACH_SEGMENTS_REQUEST:
            aa_on_attach(c, s, msg->attach_segments_request.correlation_id, msg->attach_segments_request.recording_id);
            break;
        default: /* MigrateSegments */
            aa_on_migrate(c, s, msg->migrate_segments_request.correlation_id,
                msg->migrate_segments_request.src_recording_id, msg->migrate_segments_request.dst_recording_id);
            break;
    }
}
