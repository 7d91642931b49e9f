/*
 * Replication between archives (Aeron's ReplicationSession, reference aeron-wave3.md 7): this
 * archive, the destination, is a client of a source archive; it lists the source recording, makes
 * or extends a local recording and records a replay of the source into it, up to a stop position or
 * following it live, and merges into the live stream when a live destination is given. Each
 * replication is a step of the conductor's duty cycle (non-blocking). Private to _native/src/archive.
 */
#ifndef AA_ARCHIVE_REPLICATION_H
#define AA_ARCHIVE_REPLICATION_H

#include "archive/aa_archive_conductor.h"

typedef struct aa_archive_replications_stct aa_archive_replications_t;

/* Replicate (50), TaggedReplicate (62), Replicate2 (66) and StopReplication (51) of an ACTIVE session. */
void aa_archive_on_replication_request(
    aa_archive_conductor_t *c, aa_archive_control_session_t *s, const aa_archive_message_t *msg);
/* The conductor's duty cycle: every replication's next step. */
int aa_archive_replications_do_work(aa_archive_conductor_t *c, int64_t now_ns);
/* A recording is about to be finished (its STOP signal follows): a replication that got it to the
 * source's stop position signals SYNC first, as Aeron orders them. */
void aa_archive_replications_on_recording_end(aa_archive_conductor_t *c, aa_archive_recording_t *recording);
/* Closing the archive: every replication ends (REPLICATE_END) and is freed. */
void aa_archive_replications_close(aa_archive_conductor_t *c);

/* aa_archive_requests.c: an extension of recording_id by a subscription to channel (replication uses it
 * with the replication id as the correlation id; errors go to s with it) */
void aa_archive_extend_recording(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    int64_t recording_id, const aa_archive_var_t *channel, int32_t stream_id, int32_t source_location, bool auto_stop);

#endif
