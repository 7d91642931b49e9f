/* Aeron Archive SBE codecs: one table-driven encoder/decoder over the schema's layout tables. */
#include <limits.h>
#include <string.h>

#include "protocols/aa_archive_codecs.h"
#include "util/aa_error.h"

#define AA_ARRAY_LENGTH(a) ((int32_t)(sizeof(a) / sizeof((a)[0])))

/* A fixed field: its offset in the block, size (1, 4 or 8), sinceVersion (0: always there), offset
 * in the message's struct, and the value it reads as when the acting version predates it. */
typedef struct aa_archive_field_stct
{
    const char *name;
    int32_t wire_offset;
    int32_t size;
    int32_t since_version;
    size_t struct_offset;
    int64_t null_value;
}
aa_archive_field_t;

typedef struct aa_archive_var_field_stct
{
    const char *name;
    int32_t since_version;
    size_t struct_offset;
}
aa_archive_var_field_t;

typedef struct aa_archive_template_stct
{
    int32_t template_id;
    int32_t schema_id;
    const char *name;
    int32_t block_length;
    const aa_archive_field_t *fields;
    int32_t field_count;
    const aa_archive_var_field_t *vars;
    int32_t var_count;
}
aa_archive_template_t;

/* The layouts of aeron-archive-codecs.md (schema 101 v14; MarkFileHeader: schema 100 v2). */
static const aa_archive_field_t g_control_response_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_control_response_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_control_response_t, correlation_id), 0 },
    { "relevantId", 16, 8, 0, offsetof(aa_archive_control_response_t, relevant_id), 0 },
    { "code", 24, 4, 0, offsetof(aa_archive_control_response_t, code), 0 },
    { "version", 28, 4, 4, offsetof(aa_archive_control_response_t, version), 0 },
};
static const aa_archive_var_field_t g_control_response_vars[] =
{
    { "errorMessage", 0, offsetof(aa_archive_control_response_t, error_message) },
};

static const aa_archive_field_t g_close_session_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_close_session_request_t, control_session_id), 0 },
};

static const aa_archive_field_t g_start_recording_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_start_recording_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_start_recording_request_t, correlation_id), 0 },
    { "streamId", 16, 4, 0, offsetof(aa_archive_start_recording_request_t, stream_id), 0 },
    { "sourceLocation", 20, 4, 0, offsetof(aa_archive_start_recording_request_t, source_location), 0 },
};
static const aa_archive_var_field_t g_start_recording_request_vars[] =
{
    { "channel", 0, offsetof(aa_archive_start_recording_request_t, channel) },
};

static const aa_archive_field_t g_stop_recording_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_stop_recording_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_stop_recording_request_t, correlation_id), 0 },
    { "streamId", 16, 4, 0, offsetof(aa_archive_stop_recording_request_t, stream_id), 0 },
};
static const aa_archive_var_field_t g_stop_recording_request_vars[] =
{
    { "channel", 0, offsetof(aa_archive_stop_recording_request_t, channel) },
};

static const aa_archive_field_t g_replay_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_replay_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_replay_request_t, correlation_id), 0 },
    { "recordingId", 16, 8, 0, offsetof(aa_archive_replay_request_t, recording_id), 0 },
    { "position", 24, 8, 0, offsetof(aa_archive_replay_request_t, position), 0 },
    { "length", 32, 8, 0, offsetof(aa_archive_replay_request_t, length), 0 },
    { "replayStreamId", 40, 4, 0, offsetof(aa_archive_replay_request_t, replay_stream_id), 0 },
    { "fileIoMaxLength", 44, 4, 7, offsetof(aa_archive_replay_request_t, file_io_max_length), INT32_MIN },
    { "replayToken", 48, 8, 10, offsetof(aa_archive_replay_request_t, replay_token), INT64_MIN },
};
static const aa_archive_var_field_t g_replay_request_vars[] =
{
    { "replayChannel", 0, offsetof(aa_archive_replay_request_t, replay_channel) },
};

static const aa_archive_field_t g_stop_replay_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_stop_replay_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_stop_replay_request_t, correlation_id), 0 },
    { "replaySessionId", 16, 8, 0, offsetof(aa_archive_stop_replay_request_t, replay_session_id), 0 },
};

static const aa_archive_field_t g_list_recordings_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_list_recordings_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_list_recordings_request_t, correlation_id), 0 },
    { "fromRecordingId", 16, 8, 0, offsetof(aa_archive_list_recordings_request_t, from_recording_id), 0 },
    { "recordCount", 24, 4, 0, offsetof(aa_archive_list_recordings_request_t, record_count), 0 },
};

static const aa_archive_field_t g_list_recordings_for_uri_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_list_recordings_for_uri_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_list_recordings_for_uri_request_t, correlation_id), 0 },
    { "fromRecordingId", 16, 8, 0, offsetof(aa_archive_list_recordings_for_uri_request_t, from_recording_id), 0 },
    { "recordCount", 24, 4, 0, offsetof(aa_archive_list_recordings_for_uri_request_t, record_count), 0 },
    { "streamId", 28, 4, 0, offsetof(aa_archive_list_recordings_for_uri_request_t, stream_id), 0 },
};
static const aa_archive_var_field_t g_list_recordings_for_uri_request_vars[] =
{
    { "channel", 0, offsetof(aa_archive_list_recordings_for_uri_request_t, channel) },
};

static const aa_archive_field_t g_list_recording_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_list_recording_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_list_recording_request_t, correlation_id), 0 },
    { "recordingId", 16, 8, 0, offsetof(aa_archive_list_recording_request_t, recording_id), 0 },
};

static const aa_archive_field_t g_extend_recording_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_extend_recording_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_extend_recording_request_t, correlation_id), 0 },
    { "recordingId", 16, 8, 0, offsetof(aa_archive_extend_recording_request_t, recording_id), 0 },
    { "streamId", 24, 4, 0, offsetof(aa_archive_extend_recording_request_t, stream_id), 0 },
    { "sourceLocation", 28, 4, 0, offsetof(aa_archive_extend_recording_request_t, source_location), 0 },
};
static const aa_archive_var_field_t g_extend_recording_request_vars[] =
{
    { "channel", 0, offsetof(aa_archive_extend_recording_request_t, channel) },
};

static const aa_archive_field_t g_recording_position_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_recording_position_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_recording_position_request_t, correlation_id), 0 },
    { "recordingId", 16, 8, 0, offsetof(aa_archive_recording_position_request_t, recording_id), 0 },
};

static const aa_archive_field_t g_truncate_recording_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_truncate_recording_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_truncate_recording_request_t, correlation_id), 0 },
    { "recordingId", 16, 8, 0, offsetof(aa_archive_truncate_recording_request_t, recording_id), 0 },
    { "position", 24, 8, 0, offsetof(aa_archive_truncate_recording_request_t, position), 0 },
};

static const aa_archive_field_t g_stop_recording_subscription_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_stop_recording_subscription_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_stop_recording_subscription_request_t, correlation_id), 0 },
    { "subscriptionId", 16, 8, 0, offsetof(aa_archive_stop_recording_subscription_request_t, subscription_id), 0 },
};

static const aa_archive_field_t g_stop_position_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_stop_position_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_stop_position_request_t, correlation_id), 0 },
    { "recordingId", 16, 8, 0, offsetof(aa_archive_stop_position_request_t, recording_id), 0 },
};

static const aa_archive_field_t g_find_last_matching_recording_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_find_last_matching_recording_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_find_last_matching_recording_request_t, correlation_id), 0 },
    { "minRecordingId", 16, 8, 0, offsetof(aa_archive_find_last_matching_recording_request_t, min_recording_id), 0 },
    { "sessionId", 24, 4, 0, offsetof(aa_archive_find_last_matching_recording_request_t, session_id), 0 },
    { "streamId", 28, 4, 0, offsetof(aa_archive_find_last_matching_recording_request_t, stream_id), 0 },
};
static const aa_archive_var_field_t g_find_last_matching_recording_request_vars[] =
{
    { "channel", 0, offsetof(aa_archive_find_last_matching_recording_request_t, channel) },
};

static const aa_archive_field_t g_list_recording_subscriptions_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_list_recording_subscriptions_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_list_recording_subscriptions_request_t, correlation_id), 0 },
    { "pseudoIndex", 16, 4, 0, offsetof(aa_archive_list_recording_subscriptions_request_t, pseudo_index), 0 },
    { "subscriptionCount", 20, 4, 0, offsetof(aa_archive_list_recording_subscriptions_request_t, subscription_count), 0 },
    { "applyStreamId", 24, 4, 0, offsetof(aa_archive_list_recording_subscriptions_request_t, apply_stream_id), 0 },
    { "streamId", 28, 4, 0, offsetof(aa_archive_list_recording_subscriptions_request_t, stream_id), 0 },
};
static const aa_archive_var_field_t g_list_recording_subscriptions_request_vars[] =
{
    { "channel", 0, offsetof(aa_archive_list_recording_subscriptions_request_t, channel) },
};

static const aa_archive_field_t g_bounded_replay_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_bounded_replay_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_bounded_replay_request_t, correlation_id), 0 },
    { "recordingId", 16, 8, 0, offsetof(aa_archive_bounded_replay_request_t, recording_id), 0 },
    { "position", 24, 8, 0, offsetof(aa_archive_bounded_replay_request_t, position), 0 },
    { "length", 32, 8, 0, offsetof(aa_archive_bounded_replay_request_t, length), 0 },
    { "limitCounterId", 40, 4, 0, offsetof(aa_archive_bounded_replay_request_t, limit_counter_id), 0 },
    { "replayStreamId", 44, 4, 0, offsetof(aa_archive_bounded_replay_request_t, replay_stream_id), 0 },
    { "fileIoMaxLength", 48, 4, 7, offsetof(aa_archive_bounded_replay_request_t, file_io_max_length), INT32_MIN },
    { "replayToken", 52, 8, 10, offsetof(aa_archive_bounded_replay_request_t, replay_token), INT64_MIN },
};
static const aa_archive_var_field_t g_bounded_replay_request_vars[] =
{
    { "replayChannel", 0, offsetof(aa_archive_bounded_replay_request_t, replay_channel) },
};

static const aa_archive_field_t g_stop_all_replays_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_stop_all_replays_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_stop_all_replays_request_t, correlation_id), 0 },
    { "recordingId", 16, 8, 0, offsetof(aa_archive_stop_all_replays_request_t, recording_id), 0 },
};

static const aa_archive_field_t g_catalog_header_fields[] =
{
    { "version", 0, 4, 0, offsetof(aa_archive_catalog_header_t, version), 0 },
    { "length", 4, 4, 0, offsetof(aa_archive_catalog_header_t, length), 0 },
    { "nextRecordingId", 8, 8, 0, offsetof(aa_archive_catalog_header_t, next_recording_id), 0 },
    { "alignment", 16, 4, 0, offsetof(aa_archive_catalog_header_t, alignment), 0 },
    { "reserved", 31, 1, 0, offsetof(aa_archive_catalog_header_t, reserved), 0 },
};

static const aa_archive_field_t g_recording_descriptor_header_fields[] =
{
    { "length", 0, 4, 0, offsetof(aa_archive_recording_descriptor_header_t, length), 0 },
    { "state", 4, 4, 0, offsetof(aa_archive_recording_descriptor_header_t, state), 0 },
    { "checksum", 8, 4, 0, offsetof(aa_archive_recording_descriptor_header_t, checksum), 0 },
    { "reserved", 31, 1, 0, offsetof(aa_archive_recording_descriptor_header_t, reserved), 0 },
};

static const aa_archive_field_t g_recording_descriptor_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_recording_descriptor_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_recording_descriptor_t, correlation_id), 0 },
    { "recordingId", 16, 8, 0, offsetof(aa_archive_recording_descriptor_t, recording_id), 0 },
    { "startTimestamp", 24, 8, 0, offsetof(aa_archive_recording_descriptor_t, start_timestamp), 0 },
    { "stopTimestamp", 32, 8, 0, offsetof(aa_archive_recording_descriptor_t, stop_timestamp), 0 },
    { "startPosition", 40, 8, 0, offsetof(aa_archive_recording_descriptor_t, start_position), 0 },
    { "stopPosition", 48, 8, 0, offsetof(aa_archive_recording_descriptor_t, stop_position), 0 },
    { "initialTermId", 56, 4, 0, offsetof(aa_archive_recording_descriptor_t, initial_term_id), 0 },
    { "segmentFileLength", 60, 4, 0, offsetof(aa_archive_recording_descriptor_t, segment_file_length), 0 },
    { "termBufferLength", 64, 4, 0, offsetof(aa_archive_recording_descriptor_t, term_buffer_length), 0 },
    { "mtuLength", 68, 4, 0, offsetof(aa_archive_recording_descriptor_t, mtu_length), 0 },
    { "sessionId", 72, 4, 0, offsetof(aa_archive_recording_descriptor_t, session_id), 0 },
    { "streamId", 76, 4, 0, offsetof(aa_archive_recording_descriptor_t, stream_id), 0 },
};
static const aa_archive_var_field_t g_recording_descriptor_vars[] =
{
    { "strippedChannel", 0, offsetof(aa_archive_recording_descriptor_t, stripped_channel) },
    { "originalChannel", 0, offsetof(aa_archive_recording_descriptor_t, original_channel) },
    { "sourceIdentity", 0, offsetof(aa_archive_recording_descriptor_t, source_identity) },
};

static const aa_archive_field_t g_recording_subscription_descriptor_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_recording_subscription_descriptor_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_recording_subscription_descriptor_t, correlation_id), 0 },
    { "subscriptionId", 16, 8, 0, offsetof(aa_archive_recording_subscription_descriptor_t, subscription_id), 0 },
    { "streamId", 24, 4, 0, offsetof(aa_archive_recording_subscription_descriptor_t, stream_id), 0 },
};
static const aa_archive_var_field_t g_recording_subscription_descriptor_vars[] =
{
    { "strippedChannel", 0, offsetof(aa_archive_recording_subscription_descriptor_t, stripped_channel) },
};

static const aa_archive_field_t g_recording_signal_event_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_recording_signal_event_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_recording_signal_event_t, correlation_id), 0 },
    { "recordingId", 16, 8, 0, offsetof(aa_archive_recording_signal_event_t, recording_id), 0 },
    { "subscriptionId", 24, 8, 0, offsetof(aa_archive_recording_signal_event_t, subscription_id), 0 },
    { "position", 32, 8, 0, offsetof(aa_archive_recording_signal_event_t, position), 0 },
    { "signal", 40, 4, 0, offsetof(aa_archive_recording_signal_event_t, signal), 0 },
};

static const aa_archive_field_t g_replicate_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_replicate_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_replicate_request_t, correlation_id), 0 },
    { "srcRecordingId", 16, 8, 0, offsetof(aa_archive_replicate_request_t, src_recording_id), 0 },
    { "dstRecordingId", 24, 8, 0, offsetof(aa_archive_replicate_request_t, dst_recording_id), 0 },
    { "srcControlStreamId", 32, 4, 0, offsetof(aa_archive_replicate_request_t, src_control_stream_id), 0 },
};
static const aa_archive_var_field_t g_replicate_request_vars[] =
{
    { "srcControlChannel", 0, offsetof(aa_archive_replicate_request_t, src_control_channel) },
    { "liveDestination", 0, offsetof(aa_archive_replicate_request_t, live_destination) },
};

static const aa_archive_field_t g_stop_replication_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_stop_replication_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_stop_replication_request_t, correlation_id), 0 },
    { "replicationId", 16, 8, 0, offsetof(aa_archive_stop_replication_request_t, replication_id), 0 },
};

static const aa_archive_field_t g_start_position_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_start_position_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_start_position_request_t, correlation_id), 0 },
    { "recordingId", 16, 8, 0, offsetof(aa_archive_start_position_request_t, recording_id), 0 },
};

static const aa_archive_field_t g_detach_segments_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_detach_segments_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_detach_segments_request_t, correlation_id), 0 },
    { "recordingId", 16, 8, 0, offsetof(aa_archive_detach_segments_request_t, recording_id), 0 },
    { "newStartPosition", 24, 8, 0, offsetof(aa_archive_detach_segments_request_t, new_start_position), 0 },
};

static const aa_archive_field_t g_delete_detached_segments_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_delete_detached_segments_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_delete_detached_segments_request_t, correlation_id), 0 },
    { "recordingId", 16, 8, 0, offsetof(aa_archive_delete_detached_segments_request_t, recording_id), 0 },
};

static const aa_archive_field_t g_purge_segments_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_purge_segments_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_purge_segments_request_t, correlation_id), 0 },
    { "recordingId", 16, 8, 0, offsetof(aa_archive_purge_segments_request_t, recording_id), 0 },
    { "newStartPosition", 24, 8, 0, offsetof(aa_archive_purge_segments_request_t, new_start_position), 0 },
};

static const aa_archive_field_t g_attach_segments_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_attach_segments_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_attach_segments_request_t, correlation_id), 0 },
    { "recordingId", 16, 8, 0, offsetof(aa_archive_attach_segments_request_t, recording_id), 0 },
};

static const aa_archive_field_t g_migrate_segments_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_migrate_segments_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_migrate_segments_request_t, correlation_id), 0 },
    { "srcRecordingId", 16, 8, 0, offsetof(aa_archive_migrate_segments_request_t, src_recording_id), 0 },
    { "dstRecordingId", 24, 8, 0, offsetof(aa_archive_migrate_segments_request_t, dst_recording_id), 0 },
};

static const aa_archive_field_t g_auth_connect_request_fields[] =
{
    { "correlationId", 0, 8, 0, offsetof(aa_archive_auth_connect_request_t, correlation_id), 0 },
    { "responseStreamId", 8, 4, 0, offsetof(aa_archive_auth_connect_request_t, response_stream_id), 0 },
    { "version", 12, 4, 0, offsetof(aa_archive_auth_connect_request_t, version), 0 },
};
static const aa_archive_var_field_t g_auth_connect_request_vars[] =
{
    { "responseChannel", 0, offsetof(aa_archive_auth_connect_request_t, response_channel) },
    { "encodedCredentials", 0, offsetof(aa_archive_auth_connect_request_t, encoded_credentials) },
    { "clientInfo", 12, offsetof(aa_archive_auth_connect_request_t, client_info) },
};

static const aa_archive_field_t g_challenge_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_challenge_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_challenge_t, correlation_id), 0 },
    { "version", 16, 4, 0, offsetof(aa_archive_challenge_t, version), 0 },
};
static const aa_archive_var_field_t g_challenge_vars[] =
{
    { "encodedChallenge", 0, offsetof(aa_archive_challenge_t, encoded_challenge) },
};

static const aa_archive_field_t g_challenge_response_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_challenge_response_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_challenge_response_t, correlation_id), 0 },
};
static const aa_archive_var_field_t g_challenge_response_vars[] =
{
    { "encodedCredentials", 0, offsetof(aa_archive_challenge_response_t, encoded_credentials) },
};

static const aa_archive_field_t g_keep_alive_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_keep_alive_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_keep_alive_request_t, correlation_id), 0 },
};

static const aa_archive_field_t g_tagged_replicate_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_tagged_replicate_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_tagged_replicate_request_t, correlation_id), 0 },
    { "srcRecordingId", 16, 8, 0, offsetof(aa_archive_tagged_replicate_request_t, src_recording_id), 0 },
    { "dstRecordingId", 24, 8, 0, offsetof(aa_archive_tagged_replicate_request_t, dst_recording_id), 0 },
    { "channelTagId", 32, 8, 0, offsetof(aa_archive_tagged_replicate_request_t, channel_tag_id), 0 },
    { "subscriptionTagId", 40, 8, 0, offsetof(aa_archive_tagged_replicate_request_t, subscription_tag_id), 0 },
    { "srcControlStreamId", 48, 4, 0, offsetof(aa_archive_tagged_replicate_request_t, src_control_stream_id), 0 },
};
static const aa_archive_var_field_t g_tagged_replicate_request_vars[] =
{
    { "srcControlChannel", 0, offsetof(aa_archive_tagged_replicate_request_t, src_control_channel) },
    { "liveDestination", 0, offsetof(aa_archive_tagged_replicate_request_t, live_destination) },
};

static const aa_archive_field_t g_start_recording_request2_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_start_recording_request2_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_start_recording_request2_t, correlation_id), 0 },
    { "streamId", 16, 4, 0, offsetof(aa_archive_start_recording_request2_t, stream_id), 0 },
    { "sourceLocation", 20, 4, 0, offsetof(aa_archive_start_recording_request2_t, source_location), 0 },
    { "autoStop", 24, 4, 0, offsetof(aa_archive_start_recording_request2_t, auto_stop), 0 },
};
static const aa_archive_var_field_t g_start_recording_request2_vars[] =
{
    { "channel", 0, offsetof(aa_archive_start_recording_request2_t, channel) },
};

static const aa_archive_field_t g_extend_recording_request2_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_extend_recording_request2_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_extend_recording_request2_t, correlation_id), 0 },
    { "recordingId", 16, 8, 0, offsetof(aa_archive_extend_recording_request2_t, recording_id), 0 },
    { "streamId", 24, 4, 0, offsetof(aa_archive_extend_recording_request2_t, stream_id), 0 },
    { "sourceLocation", 28, 4, 0, offsetof(aa_archive_extend_recording_request2_t, source_location), 0 },
    { "autoStop", 32, 4, 0, offsetof(aa_archive_extend_recording_request2_t, auto_stop), 0 },
};
static const aa_archive_var_field_t g_extend_recording_request2_vars[] =
{
    { "channel", 0, offsetof(aa_archive_extend_recording_request2_t, channel) },
};

static const aa_archive_field_t g_stop_recording_by_identity_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_stop_recording_by_identity_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_stop_recording_by_identity_request_t, correlation_id), 0 },
    { "recordingId", 16, 8, 0, offsetof(aa_archive_stop_recording_by_identity_request_t, recording_id), 0 },
};

static const aa_archive_field_t g_replicate_request2_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_replicate_request2_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_replicate_request2_t, correlation_id), 0 },
    { "srcRecordingId", 16, 8, 0, offsetof(aa_archive_replicate_request2_t, src_recording_id), 0 },
    { "dstRecordingId", 24, 8, 0, offsetof(aa_archive_replicate_request2_t, dst_recording_id), 0 },
    { "stopPosition", 32, 8, 0, offsetof(aa_archive_replicate_request2_t, stop_position), 0 },
    { "channelTagId", 40, 8, 0, offsetof(aa_archive_replicate_request2_t, channel_tag_id), 0 },
    { "subscriptionTagId", 48, 8, 0, offsetof(aa_archive_replicate_request2_t, subscription_tag_id), 0 },
    { "srcControlStreamId", 56, 4, 0, offsetof(aa_archive_replicate_request2_t, src_control_stream_id), 0 },
    { "fileIoMaxLength", 60, 4, 7, offsetof(aa_archive_replicate_request2_t, file_io_max_length), INT32_MIN },
    { "replicationSessionId", 64, 4, 8, offsetof(aa_archive_replicate_request2_t, replication_session_id), INT32_MIN },
};
static const aa_archive_var_field_t g_replicate_request2_vars[] =
{
    { "srcControlChannel", 0, offsetof(aa_archive_replicate_request2_t, src_control_channel) },
    { "liveDestination", 0, offsetof(aa_archive_replicate_request2_t, live_destination) },
    { "replicationChannel", 0, offsetof(aa_archive_replicate_request2_t, replication_channel) },
    { "encodedCredentials", 8, offsetof(aa_archive_replicate_request2_t, encoded_credentials) },
    { "srcResponseChannel", 10, offsetof(aa_archive_replicate_request2_t, src_response_channel) },
};

static const aa_archive_field_t g_max_recorded_position_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_max_recorded_position_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_max_recorded_position_request_t, correlation_id), 0 },
    { "recordingId", 16, 8, 0, offsetof(aa_archive_max_recorded_position_request_t, recording_id), 0 },
};

static const aa_archive_field_t g_archive_id_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_archive_id_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_archive_id_request_t, correlation_id), 0 },
};

static const aa_archive_field_t g_recording_started_fields[] =
{
    { "recordingId", 0, 8, 0, offsetof(aa_archive_recording_started_t, recording_id), 0 },
    { "startPosition", 8, 8, 0, offsetof(aa_archive_recording_started_t, start_position), 0 },
    { "sessionId", 16, 4, 0, offsetof(aa_archive_recording_started_t, session_id), 0 },
    { "streamId", 20, 4, 0, offsetof(aa_archive_recording_started_t, stream_id), 0 },
};
static const aa_archive_var_field_t g_recording_started_vars[] =
{
    { "channel", 0, offsetof(aa_archive_recording_started_t, channel) },
    { "sourceIdentity", 0, offsetof(aa_archive_recording_started_t, source_identity) },
};

static const aa_archive_field_t g_recording_progress_fields[] =
{
    { "recordingId", 0, 8, 0, offsetof(aa_archive_recording_progress_t, recording_id), 0 },
    { "startPosition", 8, 8, 0, offsetof(aa_archive_recording_progress_t, start_position), 0 },
    { "position", 16, 8, 0, offsetof(aa_archive_recording_progress_t, position), 0 },
};

static const aa_archive_field_t g_recording_stopped_fields[] =
{
    { "recordingId", 0, 8, 0, offsetof(aa_archive_recording_stopped_t, recording_id), 0 },
    { "startPosition", 8, 8, 0, offsetof(aa_archive_recording_stopped_t, start_position), 0 },
    { "stopPosition", 16, 8, 0, offsetof(aa_archive_recording_stopped_t, stop_position), 0 },
};

static const aa_archive_field_t g_purge_recording_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_purge_recording_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_purge_recording_request_t, correlation_id), 0 },
    { "recordingId", 16, 8, 0, offsetof(aa_archive_purge_recording_request_t, recording_id), 0 },
};

static const aa_archive_field_t g_replay_token_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_replay_token_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_replay_token_request_t, correlation_id), 0 },
    { "recordingId", 16, 8, 0, offsetof(aa_archive_replay_token_request_t, recording_id), 0 },
};

static const aa_archive_field_t g_ping_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_ping_t, control_session_id), 0 },
};

static const aa_archive_field_t g_update_channel_request_fields[] =
{
    { "controlSessionId", 0, 8, 0, offsetof(aa_archive_update_channel_request_t, control_session_id), 0 },
    { "correlationId", 8, 8, 0, offsetof(aa_archive_update_channel_request_t, correlation_id), 0 },
    { "recordingId", 16, 8, 0, offsetof(aa_archive_update_channel_request_t, recording_id), 0 },
};
static const aa_archive_var_field_t g_update_channel_request_vars[] =
{
    { "channel", 0, offsetof(aa_archive_update_channel_request_t, channel) },
};

static const aa_archive_field_t g_mark_file_header_fields[] =
{
    { "version", 0, 4, 0, offsetof(aa_archive_mark_file_header_t, version), 0 },
    { "activityTimestamp", 8, 8, 0, offsetof(aa_archive_mark_file_header_t, activity_timestamp), 0 },
    { "startTimestamp", 16, 8, 0, offsetof(aa_archive_mark_file_header_t, start_timestamp), 0 },
    { "pid", 24, 8, 0, offsetof(aa_archive_mark_file_header_t, pid), 0 },
    { "controlStreamId", 32, 4, 0, offsetof(aa_archive_mark_file_header_t, control_stream_id), 0 },
    { "localControlStreamId", 36, 4, 0, offsetof(aa_archive_mark_file_header_t, local_control_stream_id), 0 },
    { "eventsStreamId", 40, 4, 0, offsetof(aa_archive_mark_file_header_t, events_stream_id), 0 },
    { "headerLength", 44, 4, 1, offsetof(aa_archive_mark_file_header_t, header_length), 0 },
    { "errorBufferLength", 48, 4, 1, offsetof(aa_archive_mark_file_header_t, error_buffer_length), 0 },
    { "archiveId", 56, 8, 2, offsetof(aa_archive_mark_file_header_t, archive_id), -1 },
};
static const aa_archive_var_field_t g_mark_file_header_vars[] =
{
    { "controlChannel", 0, offsetof(aa_archive_mark_file_header_t, control_channel) },
    { "localControlChannel", 0, offsetof(aa_archive_mark_file_header_t, local_control_channel) },
    { "eventsChannel", 0, offsetof(aa_archive_mark_file_header_t, events_channel) },
    { "aeronDirectory", 0, offsetof(aa_archive_mark_file_header_t, aeron_directory) },
};

static const aa_archive_template_t g_templates[] =
{
    { 1, 101, "ControlResponse", 32, g_control_response_fields, AA_ARRAY_LENGTH(g_control_response_fields), g_control_response_vars, AA_ARRAY_LENGTH(g_control_response_vars) },
    { 3, 101, "CloseSessionRequest", 8, g_close_session_request_fields, AA_ARRAY_LENGTH(g_close_session_request_fields), NULL, 0 },
    { 4, 101, "StartRecordingRequest", 24, g_start_recording_request_fields, AA_ARRAY_LENGTH(g_start_recording_request_fields), g_start_recording_request_vars, AA_ARRAY_LENGTH(g_start_recording_request_vars) },
    { 5, 101, "StopRecordingRequest", 20, g_stop_recording_request_fields, AA_ARRAY_LENGTH(g_stop_recording_request_fields), g_stop_recording_request_vars, AA_ARRAY_LENGTH(g_stop_recording_request_vars) },
    { 6, 101, "ReplayRequest", 56, g_replay_request_fields, AA_ARRAY_LENGTH(g_replay_request_fields), g_replay_request_vars, AA_ARRAY_LENGTH(g_replay_request_vars) },
    { 7, 101, "StopReplayRequest", 24, g_stop_replay_request_fields, AA_ARRAY_LENGTH(g_stop_replay_request_fields), NULL, 0 },
    { 8, 101, "ListRecordingsRequest", 28, g_list_recordings_request_fields, AA_ARRAY_LENGTH(g_list_recordings_request_fields), NULL, 0 },
    { 9, 101, "ListRecordingsForUriRequest", 32, g_list_recordings_for_uri_request_fields, AA_ARRAY_LENGTH(g_list_recordings_for_uri_request_fields), g_list_recordings_for_uri_request_vars, AA_ARRAY_LENGTH(g_list_recordings_for_uri_request_vars) },
    { 10, 101, "ListRecordingRequest", 24, g_list_recording_request_fields, AA_ARRAY_LENGTH(g_list_recording_request_fields), NULL, 0 },
    { 11, 101, "ExtendRecordingRequest", 32, g_extend_recording_request_fields, AA_ARRAY_LENGTH(g_extend_recording_request_fields), g_extend_recording_request_vars, AA_ARRAY_LENGTH(g_extend_recording_request_vars) },
    { 12, 101, "RecordingPositionRequest", 24, g_recording_position_request_fields, AA_ARRAY_LENGTH(g_recording_position_request_fields), NULL, 0 },
    { 13, 101, "TruncateRecordingRequest", 32, g_truncate_recording_request_fields, AA_ARRAY_LENGTH(g_truncate_recording_request_fields), NULL, 0 },
    { 14, 101, "StopRecordingSubscriptionRequest", 24, g_stop_recording_subscription_request_fields, AA_ARRAY_LENGTH(g_stop_recording_subscription_request_fields), NULL, 0 },
    { 15, 101, "StopPositionRequest", 24, g_stop_position_request_fields, AA_ARRAY_LENGTH(g_stop_position_request_fields), NULL, 0 },
    { 16, 101, "FindLastMatchingRecordingRequest", 32, g_find_last_matching_recording_request_fields, AA_ARRAY_LENGTH(g_find_last_matching_recording_request_fields), g_find_last_matching_recording_request_vars, AA_ARRAY_LENGTH(g_find_last_matching_recording_request_vars) },
    { 17, 101, "ListRecordingSubscriptionsRequest", 32, g_list_recording_subscriptions_request_fields, AA_ARRAY_LENGTH(g_list_recording_subscriptions_request_fields), g_list_recording_subscriptions_request_vars, AA_ARRAY_LENGTH(g_list_recording_subscriptions_request_vars) },
    { 18, 101, "BoundedReplayRequest", 60, g_bounded_replay_request_fields, AA_ARRAY_LENGTH(g_bounded_replay_request_fields), g_bounded_replay_request_vars, AA_ARRAY_LENGTH(g_bounded_replay_request_vars) },
    { 19, 101, "StopAllReplaysRequest", 24, g_stop_all_replays_request_fields, AA_ARRAY_LENGTH(g_stop_all_replays_request_fields), NULL, 0 },
    { 20, 101, "CatalogHeader", 32, g_catalog_header_fields, AA_ARRAY_LENGTH(g_catalog_header_fields), NULL, 0 },
    { 21, 101, "RecordingDescriptorHeader", 32, g_recording_descriptor_header_fields, AA_ARRAY_LENGTH(g_recording_descriptor_header_fields), NULL, 0 },
    { 22, 101, "RecordingDescriptor", 80, g_recording_descriptor_fields, AA_ARRAY_LENGTH(g_recording_descriptor_fields), g_recording_descriptor_vars, AA_ARRAY_LENGTH(g_recording_descriptor_vars) },
    { 23, 101, "RecordingSubscriptionDescriptor", 28, g_recording_subscription_descriptor_fields, AA_ARRAY_LENGTH(g_recording_subscription_descriptor_fields), g_recording_subscription_descriptor_vars, AA_ARRAY_LENGTH(g_recording_subscription_descriptor_vars) },
    { 24, 101, "RecordingSignalEvent", 44, g_recording_signal_event_fields, AA_ARRAY_LENGTH(g_recording_signal_event_fields), NULL, 0 },
    { 50, 101, "ReplicateRequest", 36, g_replicate_request_fields, AA_ARRAY_LENGTH(g_replicate_request_fields), g_replicate_request_vars, AA_ARRAY_LENGTH(g_replicate_request_vars) },
    { 51, 101, "StopReplicationRequest", 24, g_stop_replication_request_fields, AA_ARRAY_LENGTH(g_stop_replication_request_fields), NULL, 0 },
    { 52, 101, "StartPositionRequest", 24, g_start_position_request_fields, AA_ARRAY_LENGTH(g_start_position_request_fields), NULL, 0 },
    { 53, 101, "DetachSegmentsRequest", 32, g_detach_segments_request_fields, AA_ARRAY_LENGTH(g_detach_segments_request_fields), NULL, 0 },
    { 54, 101, "DeleteDetachedSegmentsRequest", 24, g_delete_detached_segments_request_fields, AA_ARRAY_LENGTH(g_delete_detached_segments_request_fields), NULL, 0 },
    { 55, 101, "PurgeSegmentsRequest", 32, g_purge_segments_request_fields, AA_ARRAY_LENGTH(g_purge_segments_request_fields), NULL, 0 },
    { 56, 101, "AttachSegmentsRequest", 24, g_attach_segments_request_fields, AA_ARRAY_LENGTH(g_attach_segments_request_fields), NULL, 0 },
    { 57, 101, "MigrateSegmentsRequest", 32, g_migrate_segments_request_fields, AA_ARRAY_LENGTH(g_migrate_segments_request_fields), NULL, 0 },
    { 58, 101, "AuthConnectRequest", 16, g_auth_connect_request_fields, AA_ARRAY_LENGTH(g_auth_connect_request_fields), g_auth_connect_request_vars, AA_ARRAY_LENGTH(g_auth_connect_request_vars) },
    { 59, 101, "Challenge", 20, g_challenge_fields, AA_ARRAY_LENGTH(g_challenge_fields), g_challenge_vars, AA_ARRAY_LENGTH(g_challenge_vars) },
    { 60, 101, "ChallengeResponse", 16, g_challenge_response_fields, AA_ARRAY_LENGTH(g_challenge_response_fields), g_challenge_response_vars, AA_ARRAY_LENGTH(g_challenge_response_vars) },
    { 61, 101, "KeepAliveRequest", 16, g_keep_alive_request_fields, AA_ARRAY_LENGTH(g_keep_alive_request_fields), NULL, 0 },
    { 62, 101, "TaggedReplicateRequest", 52, g_tagged_replicate_request_fields, AA_ARRAY_LENGTH(g_tagged_replicate_request_fields), g_tagged_replicate_request_vars, AA_ARRAY_LENGTH(g_tagged_replicate_request_vars) },
    { 63, 101, "StartRecordingRequest2", 28, g_start_recording_request2_fields, AA_ARRAY_LENGTH(g_start_recording_request2_fields), g_start_recording_request2_vars, AA_ARRAY_LENGTH(g_start_recording_request2_vars) },
    { 64, 101, "ExtendRecordingRequest2", 36, g_extend_recording_request2_fields, AA_ARRAY_LENGTH(g_extend_recording_request2_fields), g_extend_recording_request2_vars, AA_ARRAY_LENGTH(g_extend_recording_request2_vars) },
    { 65, 101, "StopRecordingByIdentityRequest", 24, g_stop_recording_by_identity_request_fields, AA_ARRAY_LENGTH(g_stop_recording_by_identity_request_fields), NULL, 0 },
    { 66, 101, "ReplicateRequest2", 68, g_replicate_request2_fields, AA_ARRAY_LENGTH(g_replicate_request2_fields), g_replicate_request2_vars, AA_ARRAY_LENGTH(g_replicate_request2_vars) },
    { 67, 101, "MaxRecordedPositionRequest", 24, g_max_recorded_position_request_fields, AA_ARRAY_LENGTH(g_max_recorded_position_request_fields), NULL, 0 },
    { 68, 101, "ArchiveIdRequest", 16, g_archive_id_request_fields, AA_ARRAY_LENGTH(g_archive_id_request_fields), NULL, 0 },
    { 101, 101, "RecordingStarted", 24, g_recording_started_fields, AA_ARRAY_LENGTH(g_recording_started_fields), g_recording_started_vars, AA_ARRAY_LENGTH(g_recording_started_vars) },
    { 102, 101, "RecordingProgress", 24, g_recording_progress_fields, AA_ARRAY_LENGTH(g_recording_progress_fields), NULL, 0 },
    { 103, 101, "RecordingStopped", 24, g_recording_stopped_fields, AA_ARRAY_LENGTH(g_recording_stopped_fields), NULL, 0 },
    { 104, 101, "PurgeRecordingRequest", 24, g_purge_recording_request_fields, AA_ARRAY_LENGTH(g_purge_recording_request_fields), NULL, 0 },
    { 105, 101, "ReplayTokenRequest", 24, g_replay_token_request_fields, AA_ARRAY_LENGTH(g_replay_token_request_fields), NULL, 0 },
    { 106, 101, "Ping", 8, g_ping_fields, AA_ARRAY_LENGTH(g_ping_fields), NULL, 0 },
    { 107, 101, "UpdateChannelRequest", 24, g_update_channel_request_fields, AA_ARRAY_LENGTH(g_update_channel_request_fields), g_update_channel_request_vars, AA_ARRAY_LENGTH(g_update_channel_request_vars) },
    { 200, 100, "MarkFileHeader", 128, g_mark_file_header_fields, AA_ARRAY_LENGTH(g_mark_file_header_fields), g_mark_file_header_vars, AA_ARRAY_LENGTH(g_mark_file_header_vars) },
};

static const aa_archive_template_t *aa_archive_template(int32_t template_id)
{
    for (int32_t i = 0; i < AA_ARRAY_LENGTH(g_templates); i++)
    {
        if (g_templates[i].template_id == template_id)
        {
            return &g_templates[i];
        }
    }
    return NULL;
}

static inline uint16_t aa_get_u16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline uint32_t aa_get_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline void aa_put_u16(uint8_t *p, uint16_t v)
{
    memcpy(p, &v, sizeof(v));
}

static inline void aa_put_u32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, sizeof(v));
}

int aa_archive_decode_header(const uint8_t *buffer, size_t length, aa_archive_header_t *header)
{
    if (NULL == buffer || length < AA_ARCHIVE_MESSAGE_HEADER_LENGTH)
    {
        AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND,
            "archive message of %zu bytes is shorter than the %d-byte SBE message header", length,
            AA_ARCHIVE_MESSAGE_HEADER_LENGTH);
        return -1;
    }
    header->block_length = aa_get_u16(buffer);
    header->template_id = aa_get_u16(buffer + 2);
    header->schema_id = aa_get_u16(buffer + 4);
    header->version = aa_get_u16(buffer + 6);
    return 0;
}

int64_t aa_archive_decode_body(
    const uint8_t *buffer, size_t length, int32_t template_id, int32_t block_length, int32_t version,
    aa_archive_message_t *msg)
{
    const aa_archive_template_t *t = aa_archive_template(template_id);
    if (NULL == t)
    {
        AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "unknown archive message template id %d", template_id);
        return -1;
    }
    if (block_length < 0 || (size_t)block_length > length)
    {
        AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND,
            "%s: block length %d exceeds the %zu bytes of the message", t->name, block_length, length);
        return -1;
    }

    memset(msg, 0, sizeof(*msg));
    msg->template_id = template_id;
    msg->schema_id = t->schema_id;
    msg->block_length = block_length;
    msg->version = version;
    uint8_t *base = (uint8_t *)&msg->control_response;

    for (int32_t i = 0; i < t->field_count; i++)
    {
        const aa_archive_field_t *f = &t->fields[i];
        uint8_t *dst = base + f->struct_offset;
        if (f->since_version > version)
        {
            int64_t null_value = f->null_value;
            if (8 == f->size)
            {
                memcpy(dst, &null_value, 8);
            }
            else if (4 == f->size)
            {
                int32_t v = (int32_t)null_value;
                memcpy(dst, &v, 4);
            }
            else
            {
                *(int8_t *)dst = (int8_t)null_value;
            }
            continue;
        }
        if (f->wire_offset + f->size > block_length)
        {
            AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND,
                "%s: block length %d is too short for field %s (bytes %d..%d) of version %d", t->name,
                block_length, f->name, f->wire_offset, f->wire_offset + f->size, version);
            return -1;
        }
        memcpy(dst, buffer + f->wire_offset, (size_t)f->size);
    }

    size_t offset = (size_t)block_length;
    for (int32_t i = 0; i < t->var_count; i++)
    {
        const aa_archive_var_field_t *v = &t->vars[i];
        aa_archive_var_t *dst = (aa_archive_var_t *)(base + v->struct_offset);
        if (v->since_version > version)
        {
            dst->data = NULL;
            dst->length = 0;
            continue;
        }
        if (length - offset < 4)
        {
            AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND,
                "%s: truncated at the length of var field %s (offset %zu of %zu bytes)", t->name, v->name, offset,
                length);
            return -1;
        }
        uint32_t var_length = aa_get_u32(buffer + offset);
        offset += 4;
        if (var_length > AA_ARCHIVE_VAR_DATA_MAX_LENGTH || var_length > length - offset)
        {
            AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND,
                "%s: var field %s claims %u bytes but %zu remain (at most %d allowed)", t->name, v->name,
                var_length, length - offset, AA_ARCHIVE_VAR_DATA_MAX_LENGTH);
            return -1;
        }
        dst->data = buffer + offset;
        dst->length = var_length;
        offset += var_length;
    }
    return (int64_t)offset;
}

int64_t aa_archive_decode(const uint8_t *buffer, size_t length, aa_archive_message_t *msg)
{
    aa_archive_header_t header;
    if (aa_archive_decode_header(buffer, length, &header) < 0)
    {
        return -1;
    }
    const aa_archive_template_t *t = aa_archive_template(header.template_id);
    if (NULL == t)
    {
        AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "unknown archive message template id %d (schema %d)",
            header.template_id, header.schema_id);
        return -1;
    }
    if (header.schema_id != t->schema_id)
    {
        AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "%s (template %d) has schema id %d, expected %d", t->name,
            header.template_id, header.schema_id, t->schema_id);
        return -1;
    }
    int64_t n = aa_archive_decode_body(
        buffer + AA_ARCHIVE_MESSAGE_HEADER_LENGTH, length - AA_ARCHIVE_MESSAGE_HEADER_LENGTH, header.template_id,
        header.block_length, header.version, msg);
    return n < 0 ? -1 : n + AA_ARCHIVE_MESSAGE_HEADER_LENGTH;
}

/* The body's encoded length, or -1 with the error set. */
static int64_t aa_archive_body_length(const aa_archive_template_t **tp, const aa_archive_message_t *msg)
{
    if (NULL == msg)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "%s", "archive message is NULL");
        return -1;
    }
    const aa_archive_template_t *t = aa_archive_template(msg->template_id);
    if (NULL == t)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "cannot encode unknown archive message template id %d",
            msg->template_id);
        return -1;
    }
    const uint8_t *base = (const uint8_t *)&msg->control_response;
    int64_t length = t->block_length;
    for (int32_t i = 0; i < t->var_count; i++)
    {
        const aa_archive_var_t *v = (const aa_archive_var_t *)(base + t->vars[i].struct_offset);
        if (v->length > AA_ARCHIVE_VAR_DATA_MAX_LENGTH || (NULL == v->data && v->length > 0))
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "%s: var field %s of %u bytes %s", t->name, t->vars[i].name,
                v->length, NULL == v->data ? "has no data" : "exceeds SBE's 2^30-byte limit");
            return -1;
        }
        length += 4 + (int64_t)v->length;
    }
    *tp = t;
    return length;
}

int64_t aa_archive_encoded_length(const aa_archive_message_t *msg)
{
    const aa_archive_template_t *t;
    int64_t n = aa_archive_body_length(&t, msg);
    return n < 0 ? -1 : n + AA_ARCHIVE_MESSAGE_HEADER_LENGTH;
}

static void aa_archive_write_body(uint8_t *buffer, const aa_archive_template_t *t, const aa_archive_message_t *msg)
{
    const uint8_t *base = (const uint8_t *)&msg->control_response;
    memset(buffer, 0, (size_t)t->block_length);
    for (int32_t i = 0; i < t->field_count; i++)
    {
        const aa_archive_field_t *f = &t->fields[i];
        memcpy(buffer + f->wire_offset, base + f->struct_offset, (size_t)f->size);
    }
    size_t offset = (size_t)t->block_length;
    for (int32_t i = 0; i < t->var_count; i++)
    {
        const aa_archive_var_t *v = (const aa_archive_var_t *)(base + t->vars[i].struct_offset);
        aa_put_u32(buffer + offset, v->length);
        offset += 4;
        if (v->length > 0)
        {
            memcpy(buffer + offset, v->data, v->length);
            offset += v->length;
        }
    }
}

int64_t aa_archive_encode_body(uint8_t *buffer, size_t capacity, const aa_archive_message_t *msg)
{
    const aa_archive_template_t *t;
    int64_t n = aa_archive_body_length(&t, msg);
    if (n < 0)
    {
        return -1;
    }
    if (NULL == buffer || (uint64_t)n > capacity)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "%s needs %lld bytes, the buffer has %zu", t->name,
            (long long)n, NULL == buffer ? (size_t)0 : capacity);
        return -1;
    }
    aa_archive_write_body(buffer, t, msg);
    return n;
}

int64_t aa_archive_encode(uint8_t *buffer, size_t capacity, const aa_archive_message_t *msg)
{
    const aa_archive_template_t *t;
    int64_t n = aa_archive_body_length(&t, msg);
    if (n < 0)
    {
        return -1;
    }
    n += AA_ARCHIVE_MESSAGE_HEADER_LENGTH;
    if (NULL == buffer || (uint64_t)n > capacity)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "%s needs %lld bytes, the buffer has %zu", t->name,
            (long long)n, NULL == buffer ? (size_t)0 : capacity);
        return -1;
    }
    aa_put_u16(buffer, (uint16_t)t->block_length);
    aa_put_u16(buffer + 2, (uint16_t)t->template_id);
    aa_put_u16(buffer + 4, (uint16_t)t->schema_id);
    aa_put_u16(buffer + 6,
        (uint16_t)(AA_ARCHIVE_MARK_SCHEMA_ID == t->schema_id ? AA_ARCHIVE_MARK_SCHEMA_VERSION : AA_ARCHIVE_SCHEMA_VERSION));
    aa_archive_write_body(buffer + AA_ARCHIVE_MESSAGE_HEADER_LENGTH, t, msg);
    return n;
}

const char *aa_archive_template_name(int32_t template_id)
{
    const aa_archive_template_t *t = aa_archive_template(template_id);
    return NULL == t ? NULL : t->name;
}

int32_t aa_archive_template_block_length(int32_t template_id)
{
    const aa_archive_template_t *t = aa_archive_template(template_id);
    return NULL == t ? -1 : t->block_length;
}

int32_t aa_archive_template_schema_id(int32_t template_id)
{
    const aa_archive_template_t *t = aa_archive_template(template_id);
    return NULL == t ? -1 : t->schema_id;
}

int32_t aa_archive_template_field_count(int32_t template_id)
{
    const aa_archive_template_t *t = aa_archive_template(template_id);
    return NULL == t ? -1 : t->field_count;
}

int32_t aa_archive_template_var_count(int32_t template_id)
{
    const aa_archive_template_t *t = aa_archive_template(template_id);
    return NULL == t ? -1 : t->var_count;
}

const char *aa_archive_response_code_name(int32_t code)
{
    static const char *const names[] = { "OK", "ERROR", "RECORDING_UNKNOWN", "SUBSCRIPTION_UNKNOWN" };
    return code >= 0 && code < AA_ARRAY_LENGTH(names) ? names[code] : NULL;
}

const char *aa_archive_error_code_name(int64_t error_code)
{
    static const char *const names[] =
    {
        "GENERIC", "ACTIVE_LISTING", "ACTIVE_RECORDING", "ACTIVE_SUBSCRIPTION", "UNKNOWN_SUBSCRIPTION",
        "UNKNOWN_RECORDING", "UNKNOWN_REPLAY", "MAX_REPLAYS", "MAX_RECORDINGS", "INVALID_EXTENSION",
        "AUTHENTICATION_REJECTED", "STORAGE_SPACE", "UNKNOWN_REPLICATION", "UNAUTHORISED_ACTION",
        "REPLICATION_CONNECTION_FAILURE", "EMPTY_RECORDING", "INVALID_POSITION"
    };
    return error_code >= 0 && error_code < AA_ARRAY_LENGTH(names) ? names[error_code] : NULL;
}

const char *aa_archive_signal_name(int32_t signal)
{
    static const char *const names[] =
    {
        "START", "STOP", "EXTEND", "REPLICATE", "MERGE", "SYNC", "DELETE", "REPLICATE_END"
    };
    return signal >= 0 && signal < AA_ARRAY_LENGTH(names) ? names[signal] : NULL;
}
