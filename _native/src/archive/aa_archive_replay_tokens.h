/*
 * Replay tokens: replays over response channels (reference aeron-wave3.md 6.4, 1.5;
 * docs/architecture.md, "Replays over response channels"). Private to _native/src/archive.
 */
#ifndef AA_ARCHIVE_REPLAY_TOKENS_H
#define AA_ARCHIVE_REPLAY_TOKENS_H

#include "archive/aa_archive_conductor.h"

/* ReplayToken (105): OK with a new token for (this session, recording_id), valid for the connect timeout. */
void aa_archive_on_replay_token_request(aa_archive_conductor_t *c, aa_archive_control_session_t *s,
    int64_t correlation_id, int64_t recording_id);
/* A request of session s that came on another image than the session's (c->request_image): a Replay
 * or BoundedReplay with a valid token for s and its recording is handled (the token used up); one with
 * an unknown or expired token is answered "Unknown session or token timeout for replayToken=N".
 * True when it was one of those; false for anything else (dropped by the caller, as Aeron does). */
bool aa_archive_replay_by_token(aa_archive_conductor_t *c, aa_archive_control_session_t *s,
    const aa_archive_message_t *msg);
void aa_archive_replay_tokens_close(aa_archive_conductor_t *c);

#endif
