/*
 * Retention (ours, not Aeron's; docs/architecture.md, "Segments and retention"): the archive purges, on
 * its own duty cycle, what its retention options say it need not keep: the segments of a recording
 * older than its newest AERON_ARCHIVE_RETENTION_MAX_BYTES bytes, the segments last written more
 * than AERON_ARCHIVE_RETENTION_MAX_AGE ago, and whole stopped recordings that stopped more than
 * AERON_ARCHIVE_RETENTION_RECORDING_MAX_AGE ago. The plan is a pure function, shared with
 * `aeron-async recordings retention --dry-run`.
 */
#ifndef AA_ARCHIVE_RETENTION_H
#define AA_ARCHIVE_RETENTION_H

#include <stdbool.h>
#include <stdint.h>

/* CDEF BEGIN */

/* The retention options (0: that rule is off). */
typedef struct aa_archive_retention_policy_stct
{
    int64_t max_bytes;            /* keep a recording's newest max_bytes bytes (whole segments older go) */
    int64_t max_age_ms;           /* segments last written longer ago go */
    int64_t max_recording_age_ms; /* stopped recordings that stopped longer ago go, whole */
}
aa_archive_retention_policy_t;

/* 1 when a recording goes whole: it is stopped (stop_position >= 0) and stopped longer ago than
 * max_recording_age_ms; else 0. */
int aa_archive_retention_recording_expired(
    const aa_archive_retention_policy_t *policy, int64_t stop_position, int64_t stop_timestamp_ms, int64_t now_ms);

/* The start position retention moves a recording to: a segment boundary past the segments it need
 * not keep, never past the segment holding end_position (the recorded position, or the stop
 * position), or start_position when nothing goes. bases (ascending) and mtimes_ms (each file's
 * last write, epoch ms) describe the recording's segment files (count of them). */
int64_t aa_archive_retention_new_start(
    const aa_archive_retention_policy_t *policy, int64_t start_position, int64_t end_position, int32_t term_length,
    int32_t segment_length, const int64_t *bases, const int64_t *mtimes_ms, int32_t count, int64_t now_ms);

/* CDEF END */

/* The type id of the retention counter (ours; Aeron's archive counters are 100-112). */
#define AA_ARCHIVE_RETENTION_COUNTER_TYPE_ID 1100

struct aa_archive_conductor_stct;
/* The conductor's step: every AERON_ARCHIVE_RETENTION_CHECK_INTERVAL a pass over the catalog, one
 * recording per duty cycle; what goes is queued for deletion (one file per duty cycle). */
int aa_archive_retention_do_work(struct aa_archive_conductor_stct *c, int64_t now_ns);
/* A segment file retention queued was deleted: counted. */
void aa_archive_retention_count_deleted(struct aa_archive_conductor_stct *c);

#endif
