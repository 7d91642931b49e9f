/*
 * Aeron Archive control-protocol codecs (reference: aeron-archive-codecs.md): sans-I/O SBE encoders
 * and decoders for every message of schema 101 version 14 (control requests and responses, the
 * catalog's header, descriptor header and descriptor, recording signals and events) and for the
 * archive mark file's header (schema 100 version 2, template 200). No I/O, no allocation, any
 * buffer alignment; little-endian hosts only (as the rest of the library).
 *
 * One generic representation, aa_archive_message_t: template_id selects the member of its union,
 * one struct per message with the schema's fields in declaration order (snake_case names; integer
 * fields as int64_t/int32_t/int8_t, enums as int32_t, var-data fields as aa_archive_var_t).
 *
 * Encoding: set template_id and the member's fields, then aa_archive_encode() (8-byte message
 * header + block + var data) or aa_archive_encode_body() (block + var data, no header: the catalog
 * stores descriptors so). Encoders always write the current schema's block length and version
 * (14, or 2 for the mark file), zero the block's padding, and write every var field as a uint32
 * length then the bytes (a NULL data pointer with length 0 is an empty field).
 *
 * Decoding: aa_archive_decode() checks the header (at least 8 bytes, a known template, the schema
 * id of that template, the header's block length within the buffer) and decodes the fields, taking
 * var data at the header's block length (not ours), as SBE's rules say: a field whose sinceVersion
 * is above the header's version reads as that field's null value, a var field added after the
 * header's version reads as empty; a block length too short for a field the header's version has
 * is an error, a longer one is skipped. Var fields point INTO the decoded buffer (no copy; they are
 * valid as long as that buffer is); a var length above 2^30 or past the buffer's end is an error.
 * Enum values are passed through as decoded (the service checks the values it acts on).
 * Every function returns -1 with aa_errcode()/aa_errmsg() set (AA_ERROR_CODE_MALFORMED_COMMAND for
 * malformed or truncated input, AA_ERROR_CODE_INVALID_ARGUMENT for a bad argument or a buffer too
 * small to encode into) and never reads or writes outside [buffer, buffer + length/capacity).
 */
#ifndef AA_ARCHIVE_CODECS_H
#define AA_ARCHIVE_CODECS_H

#include <stddef.h>
#include <stdint.h>

#define AA_ARCHIVE_MARK_FILE_NAME "archive-mark.dat"

/* CDEF BEGIN */

#define AA_ARCHIVE_SCHEMA_ID 101
#define AA_ARCHIVE_SCHEMA_VERSION 14
#define AA_ARCHIVE_MARK_SCHEMA_ID 100
#define AA_ARCHIVE_MARK_SCHEMA_VERSION 2
/* blockLength, templateId, schemaId, version: uint16 each */
#define AA_ARCHIVE_MESSAGE_HEADER_LENGTH 8
/* the largest var-data length SBE's varAsciiEncoding/varDataEncoding allow */
#define AA_ARCHIVE_VAR_DATA_MAX_LENGTH 1073741824
/* the client protocol version (semver major << 16 | minor << 8 | patch) sent in AuthConnect and
 * ControlResponse.version: 1.12.0, as Aeron's Java client; a different major is rejected */
#define AA_ARCHIVE_PROTOCOL_SEMANTIC_VERSION 68608
#define AA_ARCHIVE_PROTOCOL_MAJOR_VERSION 1

/* The mark file `archive-mark.dat` (reference 1): the MarkFileHeader message (8-byte SBE header,
 * schema 100 v2, template 200, then its 128-byte block and 4 var strings) at offset 0 of an
 * 8 KiB header area, then the error log (errorBufferLength bytes). Its version is the archive's
 * semantic version, 3.1.0 (the catalog's). File offsets of the fields updated in place: */
#define AA_ARCHIVE_MARK_FILE_HEADER_LENGTH 8192
#define AA_ARCHIVE_MARK_FILE_VERSION 196864
#define AA_ARCHIVE_MARK_FILE_VERSION_OFFSET 8
#define AA_ARCHIVE_MARK_FILE_ACTIVITY_TIMESTAMP_OFFSET 16
#define AA_ARCHIVE_MARK_FILE_START_TIMESTAMP_OFFSET 24
#define AA_ARCHIVE_MARK_FILE_PID_OFFSET 32
#define AA_ARCHIVE_MARK_FILE_ARCHIVE_ID_OFFSET 64
/* activity ticks every second; a start is refused while the file was active this recently */
#define AA_ARCHIVE_MARK_FILE_ACTIVITY_INTERVAL_MS 1000
#define AA_ARCHIVE_MARK_FILE_LIVENESS_TIMEOUT_MS 10000

/* ControlResponseCode */
#define AA_ARCHIVE_RESPONSE_OK 0
#define AA_ARCHIVE_RESPONSE_ERROR 1
#define AA_ARCHIVE_RESPONSE_RECORDING_UNKNOWN 2
#define AA_ARCHIVE_RESPONSE_SUBSCRIPTION_UNKNOWN 3

/* On ERROR, ControlResponse.relevantId holds one of these (ArchiveException's codes). */
#define AA_ARCHIVE_ERROR_GENERIC 0
#define AA_ARCHIVE_ERROR_ACTIVE_LISTING 1
#define AA_ARCHIVE_ERROR_ACTIVE_RECORDING 2
#define AA_ARCHIVE_ERROR_ACTIVE_SUBSCRIPTION 3
#define AA_ARCHIVE_ERROR_UNKNOWN_SUBSCRIPTION 4
#define AA_ARCHIVE_ERROR_UNKNOWN_RECORDING 5
#define AA_ARCHIVE_ERROR_UNKNOWN_REPLAY 6
#define AA_ARCHIVE_ERROR_MAX_REPLAYS 7
#define AA_ARCHIVE_ERROR_MAX_RECORDINGS 8
#define AA_ARCHIVE_ERROR_INVALID_EXTENSION 9
#define AA_ARCHIVE_ERROR_AUTHENTICATION_REJECTED 10
#define AA_ARCHIVE_ERROR_STORAGE_SPACE 11
#define AA_ARCHIVE_ERROR_UNKNOWN_REPLICATION 12
#define AA_ARCHIVE_ERROR_UNAUTHORISED_ACTION 13
#define AA_ARCHIVE_ERROR_REPLICATION_CONNECTION_FAILURE 14
#define AA_ARCHIVE_ERROR_EMPTY_RECORDING 15
#define AA_ARCHIVE_ERROR_INVALID_POSITION 16

/* RecordingSignal */
#define AA_ARCHIVE_SIGNAL_START 0
#define AA_ARCHIVE_SIGNAL_STOP 1
#define AA_ARCHIVE_SIGNAL_EXTEND 2
#define AA_ARCHIVE_SIGNAL_REPLICATE 3
#define AA_ARCHIVE_SIGNAL_MERGE 4
#define AA_ARCHIVE_SIGNAL_SYNC 5
#define AA_ARCHIVE_SIGNAL_DELETE 6
#define AA_ARCHIVE_SIGNAL_REPLICATE_END 7

/* SourceLocation */
#define AA_ARCHIVE_SOURCE_LOCAL 0
#define AA_ARCHIVE_SOURCE_REMOTE 1

/* BooleanType */
#define AA_ARCHIVE_FALSE 0
#define AA_ARCHIVE_TRUE 1

/* RecordingState (catalog descriptor headers) */
#define AA_ARCHIVE_RECORDING_INVALID 0
#define AA_ARCHIVE_RECORDING_VALID 1
#define AA_ARCHIVE_RECORDING_DELETED 2

/* the SBE null of an enum (int32) field, and the archive's null position/timestamp */
#define AA_ARCHIVE_ENUM_NULL -2147483648
#define AA_ARCHIVE_NULL_POSITION -1
#define AA_ARCHIVE_NULL_TIMESTAMP -1

/* A var-data field: length bytes at data (decoded: pointing into the decoded buffer). */
typedef struct aa_archive_var_stct
{
    const uint8_t *data;
    uint32_t length;
}
aa_archive_var_t;

/* The 8-byte SBE message header. */
typedef struct aa_archive_header_stct
{
    int32_t block_length;
    int32_t template_id;
    int32_t schema_id;
    int32_t version;
}
aa_archive_header_t;

/* Template ids (schema 101, except MarkFileHeader: schema 100). */
#define AA_ARCHIVE_TEMPLATE_CONTROL_RESPONSE 1
#define AA_ARCHIVE_TEMPLATE_CLOSE_SESSION_REQUEST 3
#define AA_ARCHIVE_TEMPLATE_START_RECORDING_REQUEST 4
#define AA_ARCHIVE_TEMPLATE_STOP_RECORDING_REQUEST 5
#define AA_ARCHIVE_TEMPLATE_REPLAY_REQUEST 6
#define AA_ARCHIVE_TEMPLATE_STOP_REPLAY_REQUEST 7
#define AA_ARCHIVE_TEMPLATE_LIST_RECORDINGS_REQUEST 8
#define AA_ARCHIVE_TEMPLATE_LIST_RECORDINGS_FOR_URI_REQUEST 9
#define AA_ARCHIVE_TEMPLATE_LIST_RECORDING_REQUEST 10
#define AA_ARCHIVE_TEMPLATE_EXTEND_RECORDING_REQUEST 11
#define AA_ARCHIVE_TEMPLATE_RECORDING_POSITION_REQUEST 12
#define AA_ARCHIVE_TEMPLATE_TRUNCATE_RECORDING_REQUEST 13
#define AA_ARCHIVE_TEMPLATE_STOP_RECORDING_SUBSCRIPTION_REQUEST 14
#define AA_ARCHIVE_TEMPLATE_STOP_POSITION_REQUEST 15
#define AA_ARCHIVE_TEMPLATE_FIND_LAST_MATCHING_RECORDING_REQUEST 16
#define AA_ARCHIVE_TEMPLATE_LIST_RECORDING_SUBSCRIPTIONS_REQUEST 17
#define AA_ARCHIVE_TEMPLATE_BOUNDED_REPLAY_REQUEST 18
#define AA_ARCHIVE_TEMPLATE_STOP_ALL_REPLAYS_REQUEST 19
#define AA_ARCHIVE_TEMPLATE_CATALOG_HEADER 20
#define AA_ARCHIVE_TEMPLATE_RECORDING_DESCRIPTOR_HEADER 21
#define AA_ARCHIVE_TEMPLATE_RECORDING_DESCRIPTOR 22
#define AA_ARCHIVE_TEMPLATE_RECORDING_SUBSCRIPTION_DESCRIPTOR 23
#define AA_ARCHIVE_TEMPLATE_RECORDING_SIGNAL_EVENT 24
#define AA_ARCHIVE_TEMPLATE_REPLICATE_REQUEST 50
#define AA_ARCHIVE_TEMPLATE_STOP_REPLICATION_REQUEST 51
#define AA_ARCHIVE_TEMPLATE_START_POSITION_REQUEST 52
#define AA_ARCHIVE_TEMPLATE_DETACH_SEGMENTS_REQUEST 53
#define AA_ARCHIVE_TEMPLATE_DELETE_DETACHED_SEGMENTS_REQUEST 54
#define AA_ARCHIVE_TEMPLATE_PURGE_SEGMENTS_REQUEST 55
#define AA_ARCHIVE_TEMPLATE_ATTACH_SEGMENTS_REQUEST 56
#define AA_ARCHIVE_TEMPLATE_MIGRATE_SEGMENTS_REQUEST 57
#define AA_ARCHIVE_TEMPLATE_AUTH_CONNECT_REQUEST 58
#define AA_ARCHIVE_TEMPLATE_CHALLENGE 59
#define AA_ARCHIVE_TEMPLATE_CHALLENGE_RESPONSE 60
#define AA_ARCHIVE_TEMPLATE_KEEP_ALIVE_REQUEST 61
#define AA_ARCHIVE_TEMPLATE_TAGGED_REPLICATE_REQUEST 62
#define AA_ARCHIVE_TEMPLATE_START_RECORDING_REQUEST2 63
#define AA_ARCHIVE_TEMPLATE_EXTEND_RECORDING_REQUEST2 64
#define AA_ARCHIVE_TEMPLATE_STOP_RECORDING_BY_IDENTITY_REQUEST 65
#define AA_ARCHIVE_TEMPLATE_REPLICATE_REQUEST2 66
#define AA_ARCHIVE_TEMPLATE_MAX_RECORDED_POSITION_REQUEST 67
#define AA_ARCHIVE_TEMPLATE_ARCHIVE_ID_REQUEST 68
#define AA_ARCHIVE_TEMPLATE_RECORDING_STARTED 101
#define AA_ARCHIVE_TEMPLATE_RECORDING_PROGRESS 102
#define AA_ARCHIVE_TEMPLATE_RECORDING_STOPPED 103
#define AA_ARCHIVE_TEMPLATE_PURGE_RECORDING_REQUEST 104
#define AA_ARCHIVE_TEMPLATE_REPLAY_TOKEN_REQUEST 105
#define AA_ARCHIVE_TEMPLATE_PING 106
#define AA_ARCHIVE_TEMPLATE_UPDATE_CHANNEL_REQUEST 107
#define AA_ARCHIVE_TEMPLATE_MARK_FILE_HEADER 200

/* Block lengths (the fixed part after the 8-byte message header) of the current schema versions. */
#define AA_ARCHIVE_CONTROL_RESPONSE_BLOCK_LENGTH 32
#define AA_ARCHIVE_CLOSE_SESSION_REQUEST_BLOCK_LENGTH 8
#define AA_ARCHIVE_START_RECORDING_REQUEST_BLOCK_LENGTH 24
#define AA_ARCHIVE_STOP_RECORDING_REQUEST_BLOCK_LENGTH 20
#define AA_ARCHIVE_REPLAY_REQUEST_BLOCK_LENGTH 56
#define AA_ARCHIVE_STOP_REPLAY_REQUEST_BLOCK_LENGTH 24
#define AA_ARCHIVE_LIST_RECORDINGS_REQUEST_BLOCK_LENGTH 28
#define AA_ARCHIVE_LIST_RECORDINGS_FOR_URI_REQUEST_BLOCK_LENGTH 32
#define AA_ARCHIVE_LIST_RECORDING_REQUEST_BLOCK_LENGTH 24
#define AA_ARCHIVE_EXTEND_RECORDING_REQUEST_BLOCK_LENGTH 32
#define AA_ARCHIVE_RECORDING_POSITION_REQUEST_BLOCK_LENGTH 24
#define AA_ARCHIVE_TRUNCATE_RECORDING_REQUEST_BLOCK_LENGTH 32
#define AA_ARCHIVE_STOP_RECORDING_SUBSCRIPTION_REQUEST_BLOCK_LENGTH 24
#define AA_ARCHIVE_STOP_POSITION_REQUEST_BLOCK_LENGTH 24
#define AA_ARCHIVE_FIND_LAST_MATCHING_RECORDING_REQUEST_BLOCK_LENGTH 32
#define AA_ARCHIVE_LIST_RECORDING_SUBSCRIPTIONS_REQUEST_BLOCK_LENGTH 32
#define AA_ARCHIVE_BOUNDED_REPLAY_REQUEST_BLOCK_LENGTH 60
#define AA_ARCHIVE_STOP_ALL_REPLAYS_REQUEST_BLOCK_LENGTH 24
#define AA_ARCHIVE_CATALOG_HEADER_BLOCK_LENGTH 32
#define AA_ARCHIVE_RECORDING_DESCRIPTOR_HEADER_BLOCK_LENGTH 32
#define AA_ARCHIVE_RECORDING_DESCRIPTOR_BLOCK_LENGTH 80
#define AA_ARCHIVE_RECORDING_SUBSCRIPTION_DESCRIPTOR_BLOCK_LENGTH 28
#define AA_ARCHIVE_RECORDING_SIGNAL_EVENT_BLOCK_LENGTH 44
#define AA_ARCHIVE_REPLICATE_REQUEST_BLOCK_LENGTH 36
#define AA_ARCHIVE_STOP_REPLICATION_REQUEST_BLOCK_LENGTH 24
#define AA_ARCHIVE_START_POSITION_REQUEST_BLOCK_LENGTH 24
#define AA_ARCHIVE_DETACH_SEGMENTS_REQUEST_BLOCK_LENGTH 32
#define AA_ARCHIVE_DELETE_DETACHED_SEGMENTS_REQUEST_BLOCK_LENGTH 24
#define AA_ARCHIVE_PURGE_SEGMENTS_REQUEST_BLOCK_LENGTH 32
#define AA_ARCHIVE_ATTACH_SEGMENTS_REQUEST_BLOCK_LENGTH 24
#define AA_ARCHIVE_MIGRATE_SEGMENTS_REQUEST_BLOCK_LENGTH 32
#define AA_ARCHIVE_AUTH_CONNECT_REQUEST_BLOCK_LENGTH 16
#define AA_ARCHIVE_CHALLENGE_BLOCK_LENGTH 20
#define AA_ARCHIVE_CHALLENGE_RESPONSE_BLOCK_LENGTH 16
#define AA_ARCHIVE_KEEP_ALIVE_REQUEST_BLOCK_LENGTH 16
#define AA_ARCHIVE_TAGGED_REPLICATE_REQUEST_BLOCK_LENGTH 52
#define AA_ARCHIVE_START_RECORDING_REQUEST2_BLOCK_LENGTH 28
#define AA_ARCHIVE_EXTEND_RECORDING_REQUEST2_BLOCK_LENGTH 36
#define AA_ARCHIVE_STOP_RECORDING_BY_IDENTITY_REQUEST_BLOCK_LENGTH 24
#define AA_ARCHIVE_REPLICATE_REQUEST2_BLOCK_LENGTH 68
#define AA_ARCHIVE_MAX_RECORDED_POSITION_REQUEST_BLOCK_LENGTH 24
#define AA_ARCHIVE_ARCHIVE_ID_REQUEST_BLOCK_LENGTH 16
#define AA_ARCHIVE_RECORDING_STARTED_BLOCK_LENGTH 24
#define AA_ARCHIVE_RECORDING_PROGRESS_BLOCK_LENGTH 24
#define AA_ARCHIVE_RECORDING_STOPPED_BLOCK_LENGTH 24
#define AA_ARCHIVE_PURGE_RECORDING_REQUEST_BLOCK_LENGTH 24
#define AA_ARCHIVE_REPLAY_TOKEN_REQUEST_BLOCK_LENGTH 24
#define AA_ARCHIVE_PING_BLOCK_LENGTH 8
#define AA_ARCHIVE_UPDATE_CHANNEL_REQUEST_BLOCK_LENGTH 24
#define AA_ARCHIVE_MARK_FILE_HEADER_BLOCK_LENGTH 128

/* 1 ControlResponse, block 32 */
typedef struct aa_archive_control_response_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t relevant_id; /* @16 */
    int32_t code; /* @24: ControlResponseCode */
    int32_t version; /* @28: since v4, 0 below */
    aa_archive_var_t error_message; /* ASCII */
}
aa_archive_control_response_t;

/* 3 CloseSessionRequest, block 8 */
typedef struct aa_archive_close_session_request_stct
{
    int64_t control_session_id; /* @0 */
}
aa_archive_close_session_request_t;

/* 4 StartRecordingRequest, block 24 */
typedef struct aa_archive_start_recording_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int32_t stream_id; /* @16 */
    int32_t source_location; /* @20: SourceLocation */
    aa_archive_var_t channel; /* ASCII */
}
aa_archive_start_recording_request_t;

/* 5 StopRecordingRequest, block 20 */
typedef struct aa_archive_stop_recording_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int32_t stream_id; /* @16 */
    aa_archive_var_t channel; /* ASCII */
}
aa_archive_stop_recording_request_t;

/* 6 ReplayRequest, block 56 */
typedef struct aa_archive_replay_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t recording_id; /* @16 */
    int64_t position; /* @24 */
    int64_t length; /* @32 */
    int32_t replay_stream_id; /* @40 */
    int32_t file_io_max_length; /* @44: since v7, -2147483648 below */
    int64_t replay_token; /* @48: since v10, -9223372036854775808 below */
    aa_archive_var_t replay_channel; /* ASCII */
}
aa_archive_replay_request_t;

/* 7 StopReplayRequest, block 24 */
typedef struct aa_archive_stop_replay_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t replay_session_id; /* @16 */
}
aa_archive_stop_replay_request_t;

/* 8 ListRecordingsRequest, block 28 */
typedef struct aa_archive_list_recordings_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t from_recording_id; /* @16 */
    int32_t record_count; /* @24 */
}
aa_archive_list_recordings_request_t;

/* 9 ListRecordingsForUriRequest, block 32 */
typedef struct aa_archive_list_recordings_for_uri_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t from_recording_id; /* @16 */
    int32_t record_count; /* @24 */
    int32_t stream_id; /* @28 */
    aa_archive_var_t channel; /* ASCII */
}
aa_archive_list_recordings_for_uri_request_t;

/* 10 ListRecordingRequest, block 24 */
typedef struct aa_archive_list_recording_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t recording_id; /* @16 */
}
aa_archive_list_recording_request_t;

/* 11 ExtendRecordingRequest, block 32 */
typedef struct aa_archive_extend_recording_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t recording_id; /* @16 */
    int32_t stream_id; /* @24 */
    int32_t source_location; /* @28: SourceLocation */
    aa_archive_var_t channel; /* ASCII */
}
aa_archive_extend_recording_request_t;

/* 12 RecordingPositionRequest, block 24 */
typedef struct aa_archive_recording_position_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t recording_id; /* @16 */
}
aa_archive_recording_position_request_t;

/* 13 TruncateRecordingRequest, block 32 */
typedef struct aa_archive_truncate_recording_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t recording_id; /* @16 */
    int64_t position; /* @24 */
}
aa_archive_truncate_recording_request_t;

/* 14 StopRecordingSubscriptionRequest, block 24 */
typedef struct aa_archive_stop_recording_subscription_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t subscription_id; /* @16 */
}
aa_archive_stop_recording_subscription_request_t;

/* 15 StopPositionRequest, block 24 */
typedef struct aa_archive_stop_position_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t recording_id; /* @16 */
}
aa_archive_stop_position_request_t;

/* 16 FindLastMatchingRecordingRequest, block 32 */
typedef struct aa_archive_find_last_matching_recording_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t min_recording_id; /* @16 */
    int32_t session_id; /* @24 */
    int32_t stream_id; /* @28 */
    aa_archive_var_t channel; /* ASCII */
}
aa_archive_find_last_matching_recording_request_t;

/* 17 ListRecordingSubscriptionsRequest, block 32 */
typedef struct aa_archive_list_recording_subscriptions_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int32_t pseudo_index; /* @16 */
    int32_t subscription_count; /* @20 */
    int32_t apply_stream_id; /* @24: BooleanType */
    int32_t stream_id; /* @28 */
    aa_archive_var_t channel; /* ASCII */
}
aa_archive_list_recording_subscriptions_request_t;

/* 18 BoundedReplayRequest, block 60 */
typedef struct aa_archive_bounded_replay_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t recording_id; /* @16 */
    int64_t position; /* @24 */
    int64_t length; /* @32 */
    int32_t limit_counter_id; /* @40 */
    int32_t replay_stream_id; /* @44 */
    int32_t file_io_max_length; /* @48: since v7, -2147483648 below */
    int64_t replay_token; /* @52: since v10, -9223372036854775808 below */
    aa_archive_var_t replay_channel; /* ASCII */
}
aa_archive_bounded_replay_request_t;

/* 19 StopAllReplaysRequest, block 24 */
typedef struct aa_archive_stop_all_replays_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t recording_id; /* @16 */
}
aa_archive_stop_all_replays_request_t;

/* 20 CatalogHeader, block 32 */
typedef struct aa_archive_catalog_header_stct
{
    int32_t version; /* @0 */
    int32_t length; /* @4 */
    int64_t next_recording_id; /* @8 */
    int32_t alignment; /* @16 */
    int8_t reserved; /* @31 */
}
aa_archive_catalog_header_t;

/* 21 RecordingDescriptorHeader, block 32 */
typedef struct aa_archive_recording_descriptor_header_stct
{
    int32_t length; /* @0 */
    int32_t state; /* @4: RecordingState */
    int32_t checksum; /* @8 */
    int8_t reserved; /* @31 */
}
aa_archive_recording_descriptor_header_t;

/* 22 RecordingDescriptor, block 80 */
typedef struct aa_archive_recording_descriptor_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t recording_id; /* @16 */
    int64_t start_timestamp; /* @24 */
    int64_t stop_timestamp; /* @32 */
    int64_t start_position; /* @40 */
    int64_t stop_position; /* @48 */
    int32_t initial_term_id; /* @56 */
    int32_t segment_file_length; /* @60 */
    int32_t term_buffer_length; /* @64 */
    int32_t mtu_length; /* @68 */
    int32_t session_id; /* @72 */
    int32_t stream_id; /* @76 */
    aa_archive_var_t stripped_channel; /* ASCII */
    aa_archive_var_t original_channel; /* ASCII */
    aa_archive_var_t source_identity; /* ASCII */
}
aa_archive_recording_descriptor_t;

/* 23 RecordingSubscriptionDescriptor, block 28 */
typedef struct aa_archive_recording_subscription_descriptor_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t subscription_id; /* @16 */
    int32_t stream_id; /* @24 */
    aa_archive_var_t stripped_channel; /* ASCII */
}
aa_archive_recording_subscription_descriptor_t;

/* 24 RecordingSignalEvent, block 44 */
typedef struct aa_archive_recording_signal_event_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t recording_id; /* @16 */
    int64_t subscription_id; /* @24 */
    int64_t position; /* @32 */
    int32_t signal; /* @40: RecordingSignal */
}
aa_archive_recording_signal_event_t;

/* 50 ReplicateRequest, block 36 */
typedef struct aa_archive_replicate_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t src_recording_id; /* @16 */
    int64_t dst_recording_id; /* @24 */
    int32_t src_control_stream_id; /* @32 */
    aa_archive_var_t src_control_channel; /* ASCII */
    aa_archive_var_t live_destination; /* ASCII */
}
aa_archive_replicate_request_t;

/* 51 StopReplicationRequest, block 24 */
typedef struct aa_archive_stop_replication_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t replication_id; /* @16 */
}
aa_archive_stop_replication_request_t;

/* 52 StartPositionRequest, block 24 */
typedef struct aa_archive_start_position_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t recording_id; /* @16 */
}
aa_archive_start_position_request_t;

/* 53 DetachSegmentsRequest, block 32 */
typedef struct aa_archive_detach_segments_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t recording_id; /* @16 */
    int64_t new_start_position; /* @24 */
}
aa_archive_detach_segments_request_t;

/* 54 DeleteDetachedSegmentsRequest, block 24 */
typedef struct aa_archive_delete_detached_segments_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t recording_id; /* @16 */
}
aa_archive_delete_detached_segments_request_t;

/* 55 PurgeSegmentsRequest, block 32 */
typedef struct aa_archive_purge_segments_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t recording_id; /* @16 */
    int64_t new_start_position; /* @24 */
}
aa_archive_purge_segments_request_t;

/* 56 AttachSegmentsRequest, block 24 */
typedef struct aa_archive_attach_segments_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t recording_id; /* @16 */
}
aa_archive_attach_segments_request_t;

/* 57 MigrateSegmentsRequest, block 32 */
typedef struct aa_archive_migrate_segments_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t src_recording_id; /* @16 */
    int64_t dst_recording_id; /* @24 */
}
aa_archive_migrate_segments_request_t;

/* 58 AuthConnectRequest, block 16 */
typedef struct aa_archive_auth_connect_request_stct
{
    int64_t correlation_id; /* @0 */
    int32_t response_stream_id; /* @8 */
    int32_t version; /* @12: optional, null 0 */
    aa_archive_var_t response_channel; /* ASCII */
    aa_archive_var_t encoded_credentials; /* bytes */
    aa_archive_var_t client_info; /* ASCII; since v12, absent below */
}
aa_archive_auth_connect_request_t;

/* 59 Challenge, block 20 */
typedef struct aa_archive_challenge_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int32_t version; /* @16: optional, null 0 */
    aa_archive_var_t encoded_challenge; /* bytes */
}
aa_archive_challenge_t;

/* 60 ChallengeResponse, block 16 */
typedef struct aa_archive_challenge_response_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    aa_archive_var_t encoded_credentials; /* bytes */
}
aa_archive_challenge_response_t;

/* 61 KeepAliveRequest, block 16 */
typedef struct aa_archive_keep_alive_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
}
aa_archive_keep_alive_request_t;

/* 62 TaggedReplicateRequest, block 52 */
typedef struct aa_archive_tagged_replicate_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t src_recording_id; /* @16 */
    int64_t dst_recording_id; /* @24 */
    int64_t channel_tag_id; /* @32 */
    int64_t subscription_tag_id; /* @40 */
    int32_t src_control_stream_id; /* @48 */
    aa_archive_var_t src_control_channel; /* ASCII */
    aa_archive_var_t live_destination; /* ASCII */
}
aa_archive_tagged_replicate_request_t;

/* 63 StartRecordingRequest2, block 28 */
typedef struct aa_archive_start_recording_request2_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int32_t stream_id; /* @16 */
    int32_t source_location; /* @20: SourceLocation */
    int32_t auto_stop; /* @24: BooleanType */
    aa_archive_var_t channel; /* ASCII */
}
aa_archive_start_recording_request2_t;

/* 64 ExtendRecordingRequest2, block 36 */
typedef struct aa_archive_extend_recording_request2_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t recording_id; /* @16 */
    int32_t stream_id; /* @24 */
    int32_t source_location; /* @28: SourceLocation */
    int32_t auto_stop; /* @32: BooleanType */
    aa_archive_var_t channel; /* ASCII */
}
aa_archive_extend_recording_request2_t;

/* 65 StopRecordingByIdentityRequest, block 24 */
typedef struct aa_archive_stop_recording_by_identity_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t recording_id; /* @16 */
}
aa_archive_stop_recording_by_identity_request_t;

/* 66 ReplicateRequest2, block 68 */
typedef struct aa_archive_replicate_request2_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t src_recording_id; /* @16 */
    int64_t dst_recording_id; /* @24 */
    int64_t stop_position; /* @32 */
    int64_t channel_tag_id; /* @40 */
    int64_t subscription_tag_id; /* @48 */
    int32_t src_control_stream_id; /* @56 */
    int32_t file_io_max_length; /* @60: since v7, -2147483648 below */
    int32_t replication_session_id; /* @64: since v8, -2147483648 below */
    aa_archive_var_t src_control_channel; /* ASCII */
    aa_archive_var_t live_destination; /* ASCII */
    aa_archive_var_t replication_channel; /* ASCII */
    aa_archive_var_t encoded_credentials; /* bytes; since v8, absent below */
    aa_archive_var_t src_response_channel; /* ASCII; since v10, absent below */
}
aa_archive_replicate_request2_t;

/* 67 MaxRecordedPositionRequest, block 24 */
typedef struct aa_archive_max_recorded_position_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t recording_id; /* @16 */
}
aa_archive_max_recorded_position_request_t;

/* 68 ArchiveIdRequest, block 16 */
typedef struct aa_archive_archive_id_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
}
aa_archive_archive_id_request_t;

/* 101 RecordingStarted, block 24 */
typedef struct aa_archive_recording_started_stct
{
    int64_t recording_id; /* @0 */
    int64_t start_position; /* @8 */
    int32_t session_id; /* @16 */
    int32_t stream_id; /* @20 */
    aa_archive_var_t channel; /* ASCII */
    aa_archive_var_t source_identity; /* ASCII */
}
aa_archive_recording_started_t;

/* 102 RecordingProgress, block 24 */
typedef struct aa_archive_recording_progress_stct
{
    int64_t recording_id; /* @0 */
    int64_t start_position; /* @8 */
    int64_t position; /* @16 */
}
aa_archive_recording_progress_t;

/* 103 RecordingStopped, block 24 */
typedef struct aa_archive_recording_stopped_stct
{
    int64_t recording_id; /* @0 */
    int64_t start_position; /* @8 */
    int64_t stop_position; /* @16 */
}
aa_archive_recording_stopped_t;

/* 104 PurgeRecordingRequest, block 24 */
typedef struct aa_archive_purge_recording_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t recording_id; /* @16 */
}
aa_archive_purge_recording_request_t;

/* 105 ReplayTokenRequest, block 24 */
typedef struct aa_archive_replay_token_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t recording_id; /* @16 */
}
aa_archive_replay_token_request_t;

/* 106 Ping, block 8 */
typedef struct aa_archive_ping_stct
{
    int64_t control_session_id; /* @0 */
}
aa_archive_ping_t;

/* 107 UpdateChannelRequest, block 24 */
typedef struct aa_archive_update_channel_request_stct
{
    int64_t control_session_id; /* @0 */
    int64_t correlation_id; /* @8 */
    int64_t recording_id; /* @16 */
    aa_archive_var_t channel; /* ASCII */
}
aa_archive_update_channel_request_t;

/* 200 MarkFileHeader, block 128 */
typedef struct aa_archive_mark_file_header_stct
{
    int32_t version; /* @0 */
    int64_t activity_timestamp; /* @8 */
    int64_t start_timestamp; /* @16 */
    int64_t pid; /* @24 */
    int32_t control_stream_id; /* @32 */
    int32_t local_control_stream_id; /* @36 */
    int32_t events_stream_id; /* @40 */
    int32_t header_length; /* @44: since v1, 0 below */
    int32_t error_buffer_length; /* @48: since v1, 0 below */
    int64_t archive_id; /* @56: since v2, -1 below */
    aa_archive_var_t control_channel; /* ASCII */
    aa_archive_var_t local_control_channel; /* ASCII */
    aa_archive_var_t events_channel; /* ASCII */
    aa_archive_var_t aeron_directory; /* ASCII */
}
aa_archive_mark_file_header_t;

typedef struct aa_archive_message_stct
{
    int32_t template_id; /* selects the member of the union */
    int32_t schema_id; /* decoded: the header's; ignored by the encoders */
    int32_t block_length; /* decoded: the header's; ignored by the encoders */
    int32_t version; /* decoded: the header's (the acting version); ignored by the encoders */
    union
    {
        aa_archive_control_response_t control_response;
        aa_archive_close_session_request_t close_session_request;
        aa_archive_start_recording_request_t start_recording_request;
        aa_archive_stop_recording_request_t stop_recording_request;
        aa_archive_replay_request_t replay_request;
        aa_archive_stop_replay_request_t stop_replay_request;
        aa_archive_list_recordings_request_t list_recordings_request;
        aa_archive_list_recordings_for_uri_request_t list_recordings_for_uri_request;
        aa_archive_list_recording_request_t list_recording_request;
        aa_archive_extend_recording_request_t extend_recording_request;
        aa_archive_recording_position_request_t recording_position_request;
        aa_archive_truncate_recording_request_t truncate_recording_request;
        aa_archive_stop_recording_subscription_request_t stop_recording_subscription_request;
        aa_archive_stop_position_request_t stop_position_request;
        aa_archive_find_last_matching_recording_request_t find_last_matching_recording_request;
        aa_archive_list_recording_subscriptions_request_t list_recording_subscriptions_request;
        aa_archive_bounded_replay_request_t bounded_replay_request;
        aa_archive_stop_all_replays_request_t stop_all_replays_request;
        aa_archive_catalog_header_t catalog_header;
        aa_archive_recording_descriptor_header_t recording_descriptor_header;
        aa_archive_recording_descriptor_t recording_descriptor;
        aa_archive_recording_subscription_descriptor_t recording_subscription_descriptor;
        aa_archive_recording_signal_event_t recording_signal_event;
        aa_archive_replicate_request_t replicate_request;
        aa_archive_stop_replication_request_t stop_replication_request;
        aa_archive_start_position_request_t start_position_request;
        aa_archive_detach_segments_request_t detach_segments_request;
        aa_archive_delete_detached_segments_request_t delete_detached_segments_request;
        aa_archive_purge_segments_request_t purge_segments_request;
        aa_archive_attach_segments_request_t attach_segments_request;
        aa_archive_migrate_segments_request_t migrate_segments_request;
        aa_archive_auth_connect_request_t auth_connect_request;
        aa_archive_challenge_t challenge;
        aa_archive_challenge_response_t challenge_response;
        aa_archive_keep_alive_request_t keep_alive_request;
        aa_archive_tagged_replicate_request_t tagged_replicate_request;
        aa_archive_start_recording_request2_t start_recording_request2;
        aa_archive_extend_recording_request2_t extend_recording_request2;
        aa_archive_stop_recording_by_identity_request_t stop_recording_by_identity_request;
        aa_archive_replicate_request2_t replicate_request2;
        aa_archive_max_recorded_position_request_t max_recorded_position_request;
        aa_archive_archive_id_request_t archive_id_request;
        aa_archive_recording_started_t recording_started;
        aa_archive_recording_progress_t recording_progress;
        aa_archive_recording_stopped_t recording_stopped;
        aa_archive_purge_recording_request_t purge_recording_request;
        aa_archive_replay_token_request_t replay_token_request;
        aa_archive_ping_t ping;
        aa_archive_update_channel_request_t update_channel_request;
        aa_archive_mark_file_header_t mark_file_header;
    };
}
aa_archive_message_t;

/* The header at the start of buffer: 0, or -1 when length < 8. Checks nothing else. */
int aa_archive_decode_header(const uint8_t *buffer, size_t length, aa_archive_header_t *header);

/* Decodes the message at the start of buffer (header + block + var data) into msg; returns the
 * number of bytes it spans (trailing bytes after it are left alone), or -1 on an unknown template,
 * a wrong schema id, or malformed/truncated input (see the top of this file). */
int64_t aa_archive_decode(const uint8_t *buffer, size_t length, aa_archive_message_t *msg);

/* Decodes a block + var data without a message header (a catalog descriptor: template_id 22,
 * block_length 80, version 14), as a header with these values would; returns the bytes spanned. */
int64_t aa_archive_decode_body(
    const uint8_t *buffer, size_t length, int32_t template_id, int32_t block_length, int32_t version,
    aa_archive_message_t *msg);

/* The length aa_archive_encode would write for msg (header included), or -1 (unknown template, a
 * var field over AA_ARCHIVE_VAR_DATA_MAX_LENGTH or with NULL data and a non-zero length). */
int64_t aa_archive_encoded_length(const aa_archive_message_t *msg);

/* Encodes msg (header + block + var data) at the start of buffer; returns the bytes written, or -1
 * when capacity is too small (nothing useful written) or msg is invalid (as above). */
int64_t aa_archive_encode(uint8_t *buffer, size_t capacity, const aa_archive_message_t *msg);

/* As aa_archive_encode without the 8-byte header (catalog descriptors). */
int64_t aa_archive_encode_body(uint8_t *buffer, size_t capacity, const aa_archive_message_t *msg);

/* The schema's name of a template ("ReplayRequest"), or NULL when the id is not a template. */
const char *aa_archive_template_name(int32_t template_id);
/* The block length of the current schema of a template, or -1 when unknown. */
int32_t aa_archive_template_block_length(int32_t template_id);
/* The schema id of a template (101, or 100 for the mark file header), or -1 when unknown. */
int32_t aa_archive_template_schema_id(int32_t template_id);
/* The number of fixed fields (pads excluded) and var fields of a template, -1 when unknown. */
int32_t aa_archive_template_field_count(int32_t template_id);
int32_t aa_archive_template_var_count(int32_t template_id);

/* Names for logs and errors: "OK", "ERROR", ...; "INVALID_POSITION", ...; "START", ...; NULL when
 * the value is not one of the enum's. */
const char *aa_archive_response_code_name(int32_t code);
const char *aa_archive_error_code_name(int64_t error_code);
const char *aa_archive_signal_name(int32_t signal);

/* CDEF END */

#endif
