/*
 * Recording and replay sessions: what the conductor creates and the recorder/replayer run. Private
 * to _native/src/archive.
 */
#ifndef AA_ARCHIVE_SESSIONS_H
#define AA_ARCHIVE_SESSIONS_H

#include "archive/aa_archive.h"
#include "archive/aa_archive_syncer.h"

#define AA_ARCHIVE_ERROR_TEXT_MAX 512

/* A recording: one image of a recording subscription to one recording id. */
typedef struct aa_archive_recording_stct
{
    aa_archive_work_t work;
    int64_t recording_id;
    int64_t subscription_id;
    int64_t control_session_id; /* the session that started (or extended) it: it gets the signals */
    int64_t correlation_id;
    aa_image_t *image;
    aa_counter_t *rec_pos;
    int64_t rec_pos_registration;
    int32_t rec_pos_id;
    bool started;             /* handed to the recorder (once rec-pos is there) */
    int64_t start_position;   /* of the recording (not this session, which may extend it) */
    volatile int64_t position; /* recorded and, at sync level > 0, forced to disk (the syncer's) */
    int64_t write_position;    /* the recorder's: written to the segment, maybe not yet synced */
    int32_t initial_term_id;
    int32_t term_length;
    int32_t segment_length;
    int32_t stream_id;
    int32_t session_id;
    int32_t sync_level;
    int32_t checksum; /* AA_ARCHIVE_CHECKSUM_* */
    int segment_fd;
    int64_t segment_base; /* the open segment's base position */
    int64_t start_term_base;
    int32_t error_code;     /* an AA_ARCHIVE_ERROR_* when the recorder stopped it on an error */
    char error[AA_ARCHIVE_ERROR_TEXT_MAX];
    bool stop_signalled;
    bool is_extension;
    uint8_t *checksum_buffer;
    size_t checksum_buffer_length;
    aa_archive_syncer_t syncer; /* at sync level > 0, from the first block on */
    char archive_dir[AA_ARCHIVE_PATH_MAX];
}
aa_archive_recording_t;

typedef struct aa_archive_replay_stct
{
    aa_archive_work_t work;
    int64_t replay_session_id;
    int64_t control_session_id;
    int64_t correlation_id;
    int64_t recording_id;
    int64_t async_id;      /* the replay publication while it is being added */
    aa_publication_t *publication;
    int64_t position;      /* the next position to send */
    int64_t end_position;  /* replay up to here (INT64_MAX: follow the limit until the recording stops) */
    int32_t live_counter_id;  /* the recording's rec-pos while it is active */
    int32_t bound_counter_id; /* a bounded replay's limit counter, or -1 */
    volatile int64_t stop_position; /* -1 while the recording is active: the conductor sets it when it stops */
    int32_t initial_term_id;
    int32_t term_length;
    int32_t segment_length;
    int32_t session_id;
    int32_t stream_id;
    int64_t start_term_base;
    int64_t connect_deadline_ns;
    bool started;
    bool connected;
    int32_t checksum; /* AA_ARCHIVE_CHECKSUM_* */
    int segment_fd;
    int64_t segment_base;
    int32_t buffer_length; /* the most bytes one block read takes (file_io_max_length) */
    int32_t error_code;
    char error[AA_ARCHIVE_ERROR_TEXT_MAX];
    char archive_dir[AA_ARCHIVE_PATH_MAX];
}
aa_archive_replay_t;

int aa_archive_recording_do_work(void *session, aa_archive_t *archive);
void aa_archive_recording_close_files(aa_archive_recording_t *recording);
int aa_archive_replay_do_work(void *session, aa_archive_t *archive);
void aa_archive_replay_close_files(aa_archive_replay_t *replay);

/* The segment file of a recording holding position (its base: position rounded down to the segment
 * length, counted from the term base of the recording's start). */
static inline int64_t aa_archive_segment_base(int64_t start_term_base, int32_t segment_length, int64_t position)
{
    return position - ((position - start_term_base) & ((int64_t)segment_length - 1));
}

#endif
