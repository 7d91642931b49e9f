/*
 * Segment management (reference aeron-wave3.md 9; docs/architecture.md, "Segments and retention"):
 * detach, delete detached, purge, attach and migrate segments, and the queue of segment files to
 * delete that they and retention share (one file per duty cycle, then the DELETE signal). Private
 * to _native/src/archive.
 */
#ifndef AA_ARCHIVE_SEGMENTS_MGMT_H
#define AA_ARCHIVE_SEGMENTS_MGMT_H

#include "archive/aa_archive_conductor.h"

/* A queued delete: the files of one recording, deleted one per duty cycle. */
typedef struct aa_archive_segment_delete_stct
{
    int64_t recording_id;
    int64_t control_session_id; /* the requester, who gets the DELETE signal; -1: retention */
    int64_t correlation_id;
    int64_t *bases;
    int32_t count;
    int32_t next;
    bool by_retention;
}
aa_archive_segment_delete_t;

/* The conductor's segment state: the delete queue and retention's (aa_archive_retention.c). */
typedef struct aa_archive_segments_stct
{
    aa_archive_segment_delete_t *deletes;
    size_t delete_count;
    size_t delete_capacity;
    int64_t retention_next_check_ns;
    int32_t retention_cursor;      /* the catalog index of a pass under way, -1 between passes */
    int64_t retention_counter_async;
    aa_counter_t *retention_counter; /* segment files retention deleted */
    int64_t retention_deleted;
}
aa_archive_segments_t;

/* The conductor's segment state, made on first use (NULL when out of memory). */
aa_archive_segments_t *aa_archive_segments_state(aa_archive_conductor_t *c);
/* The requests DetachSegments (53), DeleteDetachedSegments (54), PurgeSegments (55),
 * AttachSegments (56) and MigrateSegments (57). */
void aa_archive_on_segments_request(aa_archive_conductor_t *c, aa_archive_control_session_t *s,
    const aa_archive_message_t *msg);
/* The conductor's duty cycle: one queued segment file deleted, and retention's step. */
int aa_archive_segments_do_work(aa_archive_conductor_t *c, int64_t now_ns);
/* Frees the queue (files not yet deleted stay on disk below their recording's start: detached). */
void aa_archive_segments_close(aa_archive_conductor_t *c);

/* Queues the segment files of recording_id at bases (count of them) for deletion, one per duty
 * cycle; when the last is gone the DELETE signal goes to control_session_id (-1: none, retention).
 * 0, or -1 (out of memory). */
int aa_archive_segments_queue_delete(aa_archive_conductor_t *c, int64_t recording_id, int64_t control_session_id,
    int64_t correlation_id, const int64_t *bases, int32_t count, bool by_retention);
/* True while a delete of recording_id's segment files is queued. */
bool aa_archive_segments_delete_pending(aa_archive_conductor_t *c, int64_t recording_id);
/* The lowest segment base a running replay of recording_id reads (INT64_MAX: none). */
int64_t aa_archive_segments_lowest_replay_base(aa_archive_conductor_t *c, int64_t recording_id);

#endif
