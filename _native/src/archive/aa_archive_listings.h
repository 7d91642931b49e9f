/*
 * The archive's listings (aa_archive_listings.c): recording descriptors, the last matching
 * recording and the recording subscriptions, answered to a control session. Private to
 * _native/src/archive.
 */
#ifndef AA_ARCHIVE_LISTINGS_H
#define AA_ARCHIVE_LISTINGS_H

#include <stdbool.h>
#include <stdint.h>

#include "archive/aa_archive_conductor.h"

/* A RecordingDescriptor: the catalog's bytes verbatim, with this session's ids. */
void aa_archive_send_descriptor(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    int64_t recording_id);

/* Up to `count` descriptors from recording id `from`; with `filter`, those of `stream_id` whose
 * original channel contains `channel`. RECORDING_UNKNOWN (relevant id: where it stopped) when fewer. */
void aa_archive_on_list_recordings(aa_archive_conductor_t *c, aa_archive_control_session_t *s, int64_t correlation_id,
    int64_t from, int32_t count, bool filter, int32_t stream_id, const aa_archive_var_t *channel);

/* OK with the newest matching recording's id, or -1 when none matches. */
void aa_archive_on_find_last_matching(aa_archive_conductor_t *c, aa_archive_control_session_t *s,
    const aa_archive_find_last_matching_recording_request_t *req);

void aa_archive_on_list_recording_subscriptions(aa_archive_conductor_t *c, aa_archive_control_session_t *s,
    const aa_archive_list_recording_subscriptions_request_t *req);

#endif
