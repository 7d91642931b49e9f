/* The recorder's and the replayer's session work: blocks of frames from an image straight to the
 * segment file, and from the segment file to an exclusive publication (offer_block). No work per
 * message: a block is one positional write or read. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>

#include "aeron_async.h"
#include "archive/aa_archive_sessions.h"
#include "archive/aa_archive_segment.h"
#include "protocols/aa_archive_codecs.h"
#include "protocols/aa_udp_protocol.h"
#include "client/aa_client.h"
#include "concurrent/aa_atomic.h"
#include "logbuffer/aa_logbuffer.h"
#include "util/aa_error.h"

#define AA_FRAME_TYPE_OFFSET 6
#define AA_FRAME_SESSION_ID_OFFSET 12
#define AA_FRAME_STREAM_ID_OFFSET 16

static void aa_recording_fail(aa_archive_recording_t *recording, aa_archive_t *archive, int32_t code, const char *what)
{
    char cause[AA_ARCHIVE_ERROR_TEXT_MAX];
    snprintf(cause, sizeof(cause), "%s", what);
    recording->error_code = code;
    snprintf(recording->error, sizeof(recording->error),
        "recording %" PRId64 " stopped at position %" PRId64 ": %s%s", recording->recording_id, recording->position, cause,
        AA_ERROR_CODE_STORAGE_SPACE == code ?
            " (the archive directory's file system is full: free space, then extend the recording; what was recorded "
            "up to the stop position stays replayable)" : "");
    aa_archive_log_error(archive, AA_ERROR_CODE_STORAGE_SPACE == code ? AA_ERROR_CODE_STORAGE_SPACE :
        AA_ERROR_CODE_GENERIC_ERROR, "%s", recording->error);
}

/* the error just set (aa_errcode/aa_errmsg) becomes the recording's: the recorder stops it */
static void aa_recording_take_error(aa_archive_recording_t *recording)
{
    recording->error_code = aa_errcode();
    snprintf(recording->error, sizeof(recording->error), "%s", aa_errmsg());
}

/* the syncer's: a position made durable is the recorded position */
static void aa_recording_on_synced(void *clientd, int64_t position)
{
    aa_archive_recording_t *recording = clientd;
    aa_put_int64_release(&recording->position, position);
    aa_counter_set(recording->rec_pos, position);
}

/* lets the syncer finish what was written and stops it: the recorded position is final after it;
 * a sync that failed becomes the recording's error (unless it has one already) */
static void aa_recording_stop_syncer(aa_archive_recording_t *recording)
{
    if (aa_archive_syncer_stop(&recording->syncer) < 0 && 0 == recording->error_code)
    {
        aa_recording_take_error(recording);
    }
}

void aa_archive_recording_close_files(aa_archive_recording_t *recording)
{
    aa_recording_stop_syncer(recording);
    if (recording->segment_fd >= 0)
    {
        close(recording->segment_fd);
        recording->segment_fd = -1;
    }
}

static int aa_recording_block_handler(void *clientd, const uint8_t *term_buffer, int32_t term_length, int32_t offset,
    int32_t length, int32_t session_id, int32_t term_id)
{
    aa_archive_recording_t *recording = clientd;
    int64_t position = recording->write_position;
    bool syncing = recording->sync_level > AA_ARCHIVE_SYNC_NONE;
    if (syncing && !recording->syncer.running &&
        aa_archive_syncer_start(&recording->syncer, recording->sync_level, position, aa_recording_on_synced, recording) < 0)
    {
        aa_recording_take_error(recording);
        return AA_POLL_CLOSED;
    }
    int64_t base = aa_archive_segment_base(recording->start_term_base, recording->segment_length, position);
    if (recording->segment_fd < 0 || base != recording->segment_base)
    {
        /* the last segment's writes are durable before its descriptor is let go */
        if (aa_archive_syncer_drain(&recording->syncer) < 0)
        {
            aa_recording_take_error(recording);
            return AA_POLL_CLOSED;
        }
        if (recording->segment_fd >= 0)
        {
            close(recording->segment_fd);
            recording->segment_fd = -1;
        }
        int fd = aa_archive_segment_open(recording->archive_dir, recording->recording_id, base,
            recording->segment_length, AA_ARCHIVE_SEGMENT_CREATE, recording->sync_level);
        if (fd < 0)
        {
            aa_recording_take_error(recording);
            return AA_POLL_CLOSED;
        }
        recording->segment_fd = fd;
        recording->segment_base = base;
    }
    const uint8_t *block = term_buffer + offset;
    size_t write_length = (size_t)length;
    uint16_t type;
    memcpy(&type, block + AA_FRAME_TYPE_OFFSET, 2);
    if (AA_HDR_TYPE_PAD == type)
    {
        write_length = AA_DATA_HEADER_LENGTH; /* padding is stored as its header only */
    }
    else if (AA_ARCHIVE_CHECKSUM_NONE != recording->checksum)
    {
        if ((size_t)length > recording->checksum_buffer_length)
        {
            uint8_t *grown = realloc(recording->checksum_buffer, (size_t)length);
            if (NULL == grown)
            {
                recording->error_code = AA_ERROR_CODE_GENERIC_ERROR;
                snprintf(recording->error, sizeof(recording->error), "out of memory for the checksum buffer");
                return AA_POLL_CLOSED;
            }
            recording->checksum_buffer = grown;
            recording->checksum_buffer_length = (size_t)length;
        }
        memcpy(recording->checksum_buffer, block, (size_t)length);
        aa_archive_frames_apply_checksum(recording->checksum_buffer, (size_t)length, recording->checksum);
        block = recording->checksum_buffer;
    }
    /* the syncer forces the write while the recorder goes on to the next block */
    if (aa_archive_segment_write(recording->segment_fd, position - base, block, write_length, AA_ARCHIVE_SYNC_NONE) < 0 ||
        (syncing && aa_archive_syncer_request(&recording->syncer, recording->segment_fd, position + length) < 0))
    {
        aa_recording_take_error(recording);
        return AA_POLL_CLOSED;
    }
    position += length;
    recording->write_position = position;
    if (!syncing)
    {
        aa_recording_on_synced(recording, position);
    }
    (void)term_length;
    (void)session_id;
    (void)term_id;
    return 0;
}

/* the recording's last work on the recorder's thread: what was written is synced (so the position
 * the conductor reads is final) and an error goes to the log; -1, the session has ended */
static int aa_recording_end(aa_archive_recording_t *recording, aa_archive_t *archive)
{
    aa_recording_stop_syncer(recording);
    if (0 != recording->error_code)
    {
        aa_recording_fail(recording, archive, recording->error_code, recording->error);
    }
    return -1;
}

int aa_archive_recording_do_work(void *session, aa_archive_t *archive)
{
    aa_archive_recording_t *recording = session;
    if (aa_get_int32_acquire(&recording->work.stop_requested))
    {
        return aa_recording_end(recording, archive);
    }
    int64_t bytes = 0;
    if (recording->syncer.running && aa_archive_syncer_check(&recording->syncer) < 0)
    {
        aa_recording_take_error(recording);
    }
    else
    {
        bytes = aa_image_block_poll(recording->image, aa_recording_block_handler, recording,
            (int32_t)archive->ctx.file_io_max_length);
    }
    if (0 != recording->error_code ||
        (0 == bytes && (aa_image_is_closed(recording->image) || aa_image_is_end_of_stream(recording->image))))
    {
        return aa_recording_end(recording, archive);
    }
    return bytes > 0 ? 1 : 0;
}

/* ---- replay ---- */

void aa_archive_replay_close_files(aa_archive_replay_t *replay)
{
    if (replay->segment_fd >= 0)
    {
        close(replay->segment_fd);
        replay->segment_fd = -1;
    }
}

static int aa_replay_fail(aa_archive_replay_t *replay, aa_archive_t *archive, int32_t code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int aa_replay_fail(aa_archive_replay_t *replay, aa_archive_t *archive, int32_t code, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vsnprintf(replay->error, sizeof(replay->error), fmt, args);
    va_end(args);
    replay->error_code = code;
    aa_archive_log_error(archive, AA_ERROR_CODE_GENERIC_ERROR, "replay %" PRId64 " of recording %" PRId64 ": %s",
        replay->replay_session_id, replay->recording_id, replay->error);
    return -1;
}

/* what a publication's refusal means for the replay: 0 (try again), -1 (ended, or failed) */
static int aa_replay_offer_status(aa_archive_replay_t *replay, aa_archive_t *archive, int64_t result)
{
    if (AA_PUBLICATION_BACK_PRESSURED == result || AA_PUBLICATION_ADMIN_ACTION == result)
    {
        return 0;
    }
    if (AA_PUBLICATION_NOT_CONNECTED == result || AA_PUBLICATION_CLOSED == result)
    {
        return -1; /* the replay's subscriber left */
    }
    return aa_replay_fail(replay, archive, AA_ARCHIVE_ERROR_GENERIC, "%s", aa_errmsg());
}

/* up to length bytes of the segment from file_offset: the first 32 into header, the rest into
 * space + 32 (one preadv); the bytes read (short at the end of the file), or -1 */
static int64_t aa_replay_read(int fd, int64_t file_offset, uint8_t *header, uint8_t *space, size_t length)
{
    struct iovec iov[2] = {
        { .iov_base = header, .iov_len = AA_DATA_HEADER_LENGTH },
        { .iov_base = space + AA_DATA_HEADER_LENGTH, .iov_len = length - AA_DATA_HEADER_LENGTH } };
    ssize_t n;
    do
    {
        n = preadv(fd, iov, 2, (off_t)file_offset);
    }
    while (n < 0 && EINTR == errno);
    if (n < 0)
    {
        AA_SET_ERR(errno, "segment read of %zu bytes at offset %" PRId64 " failed: %s", length, file_offset,
            strerror(errno));
        return -1;
    }
    if (n > AA_DATA_HEADER_LENGTH && (size_t)n < length)
    {
        int64_t more = aa_archive_segment_read(fd, file_offset + n, space + n, length - (size_t)n);
        if (more < 0)
        {
            return -1;
        }
        n += (ssize_t)more;
    }
    return (int64_t)n;
}

/* zeros again over what was read into the term in [from, to) (byte 32 on: the header was read aside) */
static void aa_replay_clean(uint8_t *space, int32_t from, int64_t to)
{
    int64_t start = from > AA_DATA_HEADER_LENGTH ? from : AA_DATA_HEADER_LENGTH;
    if (to > start)
    {
        memset(space + start, 0, (size_t)(to - start));
    }
}

int aa_archive_replay_do_work(void *session, aa_archive_t *archive)
{
    aa_archive_replay_t *replay = session;
    if (aa_get_int32_acquire(&replay->work.stop_requested))
    {
        return -1;
    }
    if (!replay->connected)
    {
        if (aa_publication_is_connected(replay->publication))
        {
            replay->connected = true;
            return 1;
        }
        if (aa_clock_nano_time(&archive->clock) > replay->connect_deadline_ns)
        {
            return aa_replay_fail(replay, archive, AA_ARCHIVE_ERROR_GENERIC,
                "no subscriber connected to the replay channel within %" PRId64 " ms",
                archive->ctx.connect_timeout_ns / 1000000);
        }
        return 0;
    }
    if (aa_publication_is_closed(replay->publication))
    {
        return -1;
    }
    /* the end: the recording's stop position once it has stopped; until then (a live replay) the
     * recording's rec-pos; a bounded replay is also capped by its counter */
    int64_t stop = aa_get_int64_acquire(&replay->stop_position);
    int64_t limit = stop;
    if (-1 == stop)
    {
        int64_t live = aa_client_counter_value(archive->client, replay->live_counter_id);
        stop = aa_get_int64_acquire(&replay->stop_position); /* set before the counter is let go */
        limit = -1 != stop ? stop : live;
    }
    if (replay->bound_counter_id >= 0)
    {
        int64_t bound = aa_client_counter_value(archive->client, replay->bound_counter_id);
        if (bound < limit)
        {
            limit = bound;
        }
    }
    if (limit > replay->end_position)
    {
        limit = replay->end_position;
    }
    if (replay->position >= replay->end_position || (-1 != stop && replay->position >= stop))
    {
        return -1; /* done */
    }
    if (replay->position >= limit)
    {
        return 0;
    }
    int64_t position = replay->position;
    int32_t term_offset = (int32_t)(position & (replay->term_length - 1));
    int64_t length = limit - position;
    if (length > replay->buffer_length)
    {
        length = replay->buffer_length;
    }
    if (length > replay->term_length - term_offset)
    {
        length = replay->term_length - term_offset;
    }
    int64_t base = aa_archive_segment_base(replay->start_term_base, replay->segment_length, position);
    if (replay->segment_fd < 0 || base != replay->segment_base)
    {
        aa_archive_replay_close_files(replay);
        int fd = aa_archive_segment_open(replay->archive_dir, replay->recording_id, base, replay->segment_length,
            AA_ARCHIVE_SEGMENT_READ_ONLY, AA_ARCHIVE_SYNC_NONE);
        if (fd < 0)
        {
            return aa_replay_fail(replay, archive, AA_ARCHIVE_ERROR_GENERIC, "%s", aa_errmsg());
        }
        /* a replay reads its segment front to back: the kernel may read ahead twice as far */
        (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
        replay->segment_fd = fd;
        replay->segment_base = base;
    }
    /* One copy: the segment's bytes are read straight into the publication's term (as far ahead of
     * the slowest subscriber as the publication's limit lets a message go, so never into log the
     * driver has not cleaned yet), all but the first frame's header, which is read aside and stored
     * last by commit_block: no reader passes it before the block is whole. */
    int32_t space_length;
    int64_t result;
    uint8_t *space = aa_publication_block_space(replay->publication, &space_length, &result);
    if (NULL == space)
    {
        return aa_replay_offer_status(replay, archive, result);
    }
    if (length > space_length)
    {
        length = space_length; /* at least a header: a padding frame is sent as its header alone */
    }
    uint8_t header[AA_DATA_HEADER_LENGTH];
    int64_t read = aa_replay_read(replay->segment_fd, position - base, header, space, (size_t)length);
    if (read < 0)
    {
        return aa_replay_fail(replay, archive, AA_ARCHIVE_ERROR_GENERIC, "%s", aa_errmsg());
    }
    /* whole frames only; rewrite the session and stream ids (after checking a frame's checksum) */
    int32_t used = 0;
    while (used + AA_DATA_HEADER_LENGTH <= read)
    {
        uint8_t *frame = 0 == used ? header : space + used;
        int32_t frame_length;
        memcpy(&frame_length, frame, 4);
        if (frame_length <= 0)
        {
            break;
        }
        int32_t aligned = (int32_t)AA_ALIGN(frame_length, AA_LOGBUFFER_FRAME_ALIGNMENT);
        uint16_t type;
        memcpy(&type, frame + AA_FRAME_TYPE_OFFSET, 2);
        if (AA_HDR_TYPE_PAD == type)
        {
            /* padding is stored as its header only: offered alone, as its header, it pads the term */
            if (used > 0)
            {
                break;
            }
            aligned = AA_DATA_HEADER_LENGTH;
        }
        else if (used + aligned > read)
        {
            break;
        }
        int32_t stored;
        memcpy(&stored, frame + AA_FRAME_SESSION_ID_OFFSET, 4);
        if (AA_ARCHIVE_CHECKSUM_NONE != replay->checksum && AA_HDR_TYPE_DATA == type &&
            stored != aa_archive_checksum(replay->checksum, space + used + AA_DATA_HEADER_LENGTH,
                (size_t)frame_length - AA_DATA_HEADER_LENGTH))
        {
            if (used > 0)
            {
                break; /* the frames before it go out first; the replay fails when it comes to this one */
            }
            aa_replay_clean(space, 0, read);
            return aa_replay_fail(replay, archive, AA_ARCHIVE_ERROR_GENERIC,
                "checksum mismatch in the frame at position %" PRId64 "; run `aeron-async recordings verify`",
                position + used);
        }
        memcpy(frame + AA_FRAME_SESSION_ID_OFFSET, &replay->session_id, 4);
        memcpy(frame + AA_FRAME_STREAM_ID_OFFSET, &replay->stream_id, 4);
        used += aligned;
        if (AA_HDR_TYPE_PAD == type)
        {
            break;
        }
    }
    aa_replay_clean(space, used, read); /* what was read past the whole frames goes back to zeros */
    if (0 == used)
    {
        return 0;
    }
    result = aa_publication_commit_block(replay->publication, header, (size_t)used);
    if (result > 0)
    {
        replay->position = result; /* past a padding frame: the term's end */
        return 1;
    }
    return aa_replay_offer_status(replay, archive, result);
}
