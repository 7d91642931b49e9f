"""The archive client's side of the control protocol: the requests it encodes and the responses it
decodes (SBE schema 101 version 14), through the native codecs (protocols/aa_archive_codecs.h,
bound by cffi): one encoder and one decoder for the service and the client. The only module of the
client that knows bytes."""

from __future__ import annotations

from typing import Any, Final

from .._ffi import ffi, lib
from ..errors import MALFORMED_COMMAND, AeronError, InvalidArgumentError, last_error
from .records import (
    Challenge,
    ControlResponse,
    RecordingDescriptor,
    RecordingSignal,
    RecordingSignalEvent,
    RecordingSubscriptionDescriptor,
)

SCHEMA_ID: Final[int] = lib.AA_ARCHIVE_SCHEMA_ID
SCHEMA_VERSION: Final[int] = lib.AA_ARCHIVE_SCHEMA_VERSION
HEADER_LENGTH: Final[int] = lib.AA_ARCHIVE_MESSAGE_HEADER_LENGTH
# The control protocol's semantic version (major << 16 | minor << 8 | patch) this client speaks:
# Aeron's Java client's, 1.12.0; an archive refuses another major version.
PROTOCOL_SEMANTIC_VERSION: Final[int] = lib.AA_ARCHIVE_PROTOCOL_SEMANTIC_VERSION

# template ids (the codec header's)
CONTROL_RESPONSE: Final[int] = lib.AA_ARCHIVE_TEMPLATE_CONTROL_RESPONSE
CLOSE_SESSION: Final[int] = lib.AA_ARCHIVE_TEMPLATE_CLOSE_SESSION_REQUEST
STOP_RECORDING: Final[int] = lib.AA_ARCHIVE_TEMPLATE_STOP_RECORDING_REQUEST
REPLAY: Final[int] = lib.AA_ARCHIVE_TEMPLATE_REPLAY_REQUEST
STOP_REPLAY: Final[int] = lib.AA_ARCHIVE_TEMPLATE_STOP_REPLAY_REQUEST
LIST_RECORDINGS: Final[int] = lib.AA_ARCHIVE_TEMPLATE_LIST_RECORDINGS_REQUEST
LIST_RECORDINGS_FOR_URI: Final[int] = lib.AA_ARCHIVE_TEMPLATE_LIST_RECORDINGS_FOR_URI_REQUEST
LIST_RECORDING: Final[int] = lib.AA_ARCHIVE_TEMPLATE_LIST_RECORDING_REQUEST
RECORDING_POSITION: Final[int] = lib.AA_ARCHIVE_TEMPLATE_RECORDING_POSITION_REQUEST
TRUNCATE_RECORDING: Final[int] = lib.AA_ARCHIVE_TEMPLATE_TRUNCATE_RECORDING_REQUEST
STOP_RECORDING_SUBSCRIPTION: Final[int] = lib.AA_ARCHIVE_TEMPLATE_STOP_RECORDING_SUBSCRIPTION_REQUEST
STOP_POSITION: Final[int] = lib.AA_ARCHIVE_TEMPLATE_STOP_POSITION_REQUEST
FIND_LAST_MATCHING_RECORDING: Final[int] = lib.AA_ARCHIVE_TEMPLATE_FIND_LAST_MATCHING_RECORDING_REQUEST
LIST_RECORDING_SUBSCRIPTIONS: Final[int] = lib.AA_ARCHIVE_TEMPLATE_LIST_RECORDING_SUBSCRIPTIONS_REQUEST
BOUNDED_REPLAY: Final[int] = lib.AA_ARCHIVE_TEMPLATE_BOUNDED_REPLAY_REQUEST
STOP_ALL_REPLAYS: Final[int] = lib.AA_ARCHIVE_TEMPLATE_STOP_ALL_REPLAYS_REQUEST
RECORDING_DESCRIPTOR: Final[int] = lib.AA_ARCHIVE_TEMPLATE_RECORDING_DESCRIPTOR
RECORDING_SUBSCRIPTION_DESCRIPTOR: Final[int] = lib.AA_ARCHIVE_TEMPLATE_RECORDING_SUBSCRIPTION_DESCRIPTOR
RECORDING_SIGNAL_EVENT: Final[int] = lib.AA_ARCHIVE_TEMPLATE_RECORDING_SIGNAL_EVENT
AUTH_CONNECT: Final[int] = lib.AA_ARCHIVE_TEMPLATE_AUTH_CONNECT_REQUEST
CHALLENGE: Final[int] = lib.AA_ARCHIVE_TEMPLATE_CHALLENGE
CHALLENGE_RESPONSE: Final[int] = lib.AA_ARCHIVE_TEMPLATE_CHALLENGE_RESPONSE
KEEP_ALIVE: Final[int] = lib.AA_ARCHIVE_TEMPLATE_KEEP_ALIVE_REQUEST
START_RECORDING2: Final[int] = lib.AA_ARCHIVE_TEMPLATE_START_RECORDING_REQUEST2
EXTEND_RECORDING2: Final[int] = lib.AA_ARCHIVE_TEMPLATE_EXTEND_RECORDING_REQUEST2
STOP_RECORDING_BY_IDENTITY: Final[int] = lib.AA_ARCHIVE_TEMPLATE_STOP_RECORDING_BY_IDENTITY_REQUEST
MAX_RECORDED_POSITION: Final[int] = lib.AA_ARCHIVE_TEMPLATE_MAX_RECORDED_POSITION_REQUEST
ARCHIVE_ID: Final[int] = lib.AA_ARCHIVE_TEMPLATE_ARCHIVE_ID_REQUEST
PURGE_RECORDING: Final[int] = lib.AA_ARCHIVE_TEMPLATE_PURGE_RECORDING_REQUEST
PING: Final[int] = lib.AA_ARCHIVE_TEMPLATE_PING
REPLICATE2: Final[int] = lib.AA_ARCHIVE_TEMPLATE_REPLICATE_REQUEST2
STOP_REPLICATION: Final[int] = lib.AA_ARCHIVE_TEMPLATE_STOP_REPLICATION_REQUEST
DETACH_SEGMENTS: Final[int] = lib.AA_ARCHIVE_TEMPLATE_DETACH_SEGMENTS_REQUEST
DELETE_DETACHED_SEGMENTS: Final[int] = lib.AA_ARCHIVE_TEMPLATE_DELETE_DETACHED_SEGMENTS_REQUEST
PURGE_SEGMENTS: Final[int] = lib.AA_ARCHIVE_TEMPLATE_PURGE_SEGMENTS_REQUEST
ATTACH_SEGMENTS: Final[int] = lib.AA_ARCHIVE_TEMPLATE_ATTACH_SEGMENTS_REQUEST
MIGRATE_SEGMENTS: Final[int] = lib.AA_ARCHIVE_TEMPLATE_MIGRATE_SEGMENTS_REQUEST
REPLAY_TOKEN: Final[int] = lib.AA_ARCHIVE_TEMPLATE_REPLAY_TOKEN_REQUEST



class MalformedMessageError(AeronError, ValueError):
    """A control message shorter than its header, block or var data say (the codec's message)."""


def _encode(template_id: int, member: str, **fields: Any) -> bytes:
    """Encode the union member `member` of a message of `template_id` with `fields` (bytes for
    var-data fields)."""
    msg = ffi.new("aa_archive_message_t *")
    msg.template_id = template_id
    body = getattr(msg, member)
    keep = []
    for name, value in fields.items():
        if isinstance(value, bytes):
            var = getattr(body, name)
            if value:
                data = ffi.from_buffer("uint8_t[]", value)
                keep.append(data)
                var.data = data
            var.length = len(value)
        else:
            setattr(body, name, value)
    length = lib.aa_archive_encoded_length(msg)
    if length < 0:
        raise last_error(InvalidArgumentError, f"cannot encode template {template_id}: ")
    out = bytearray(length)
    if lib.aa_archive_encode(ffi.from_buffer("uint8_t[]", out), length, msg) != length:
        raise last_error(InvalidArgumentError, f"cannot encode template {template_id}: ")
    return bytes(out)


def _ascii(text: str, what: str) -> bytes:
    try:
        return text.encode("ascii")
    except UnicodeEncodeError:
        raise InvalidArgumentError(f"{what} {text!r} must be ASCII (Aeron channels are US-ASCII)") from None


# --- requests ---------------------------------------------------------------------------------


def auth_connect(
    correlation_id: int, response_stream_id: int, response_channel: str, credentials: bytes, client_info: str
) -> bytes:
    return _encode(AUTH_CONNECT, "auth_connect_request",
                   correlation_id=correlation_id, response_stream_id=response_stream_id,
                   version=PROTOCOL_SEMANTIC_VERSION, response_channel=_ascii(response_channel, "response channel"),
                   encoded_credentials=bytes(credentials), client_info=_ascii(client_info, "client info"))


def challenge_response(control_session_id: int, correlation_id: int, credentials: bytes) -> bytes:
    return _encode(CHALLENGE_RESPONSE, "challenge_response",
                   control_session_id=control_session_id, correlation_id=correlation_id,
                   encoded_credentials=bytes(credentials))


def close_session(control_session_id: int) -> bytes:
    return _encode(CLOSE_SESSION, "close_session_request",
                   control_session_id=control_session_id)


def keep_alive(control_session_id: int, correlation_id: int) -> bytes:
    return _encode(KEEP_ALIVE, "keep_alive_request",
                   control_session_id=control_session_id, correlation_id=correlation_id)


def archive_id(control_session_id: int, correlation_id: int) -> bytes:
    return _encode(ARCHIVE_ID, "archive_id_request",
                   control_session_id=control_session_id, correlation_id=correlation_id)


# the requests whose block is (controlSessionId, correlationId, one int64 id): member, id field
_ID_REQUESTS: Final[dict[int, tuple[str, str]]] = {
    STOP_REPLAY: ("stop_replay_request", "replay_session_id"),
    LIST_RECORDING: ("list_recording_request", "recording_id"),
    RECORDING_POSITION: ("recording_position_request", "recording_id"),
    STOP_RECORDING_SUBSCRIPTION: ("stop_recording_subscription_request", "subscription_id"),
    STOP_POSITION: ("stop_position_request", "recording_id"),
    STOP_ALL_REPLAYS: ("stop_all_replays_request", "recording_id"),
    STOP_RECORDING_BY_IDENTITY: ("stop_recording_by_identity_request", "recording_id"),
    MAX_RECORDED_POSITION: ("max_recorded_position_request", "recording_id"),
    PURGE_RECORDING: ("purge_recording_request", "recording_id"),
    STOP_REPLICATION: ("stop_replication_request", "replication_id"),
    DELETE_DETACHED_SEGMENTS: ("delete_detached_segments_request", "recording_id"),
    ATTACH_SEGMENTS: ("attach_segments_request", "recording_id"),
    REPLAY_TOKEN: ("replay_token_request", "recording_id"),
}


def id_request(template_id: int, control_session_id: int, correlation_id: int, value: int) -> bytes:
    """StopReplay, ListRecording, RecordingPosition, StopRecordingSubscription, StopPosition,
    StopAllReplays, StopRecordingByIdentity, MaxRecordedPosition, PurgeRecording,
    DeleteDetachedSegments, AttachSegments, ReplayToken."""
    member, field = _ID_REQUESTS[template_id]
    return _encode(template_id, member, control_session_id=control_session_id, correlation_id=correlation_id,
                   **{field: value})


def start_recording2(
    control_session_id: int, correlation_id: int, stream_id: int, source_location: int, auto_stop: bool, channel: str
) -> bytes:
    return _encode(START_RECORDING2, "start_recording_request2",
                   control_session_id=control_session_id, correlation_id=correlation_id, stream_id=stream_id,
                   source_location=int(source_location), auto_stop=int(auto_stop), channel=_ascii(channel, "channel"))


def extend_recording2(
    control_session_id: int, correlation_id: int, recording_id: int, stream_id: int, source_location: int,
    auto_stop: bool, channel: str,
) -> bytes:
    return _encode(EXTEND_RECORDING2, "extend_recording_request2",
                   control_session_id=control_session_id, correlation_id=correlation_id, recording_id=recording_id,
                   stream_id=stream_id, source_location=int(source_location), auto_stop=int(auto_stop),
                   channel=_ascii(channel, "channel"))


def stop_recording(control_session_id: int, correlation_id: int, stream_id: int, channel: str) -> bytes:
    return _encode(STOP_RECORDING, "stop_recording_request",
                   control_session_id=control_session_id, correlation_id=correlation_id, stream_id=stream_id,
                   channel=_ascii(channel, "channel"))


def replay(
    control_session_id: int, correlation_id: int, recording_id: int, position: int, length: int,
    replay_stream_id: int, file_io_max_length: int, replay_token: int, replay_channel: str,
) -> bytes:
    return _encode(REPLAY, "replay_request",
                   control_session_id=control_session_id, correlation_id=correlation_id, recording_id=recording_id,
                   position=position, length=length, replay_stream_id=replay_stream_id,
                   file_io_max_length=file_io_max_length, replay_token=replay_token,
                   replay_channel=_ascii(replay_channel, "replay channel"))


def bounded_replay(
    control_session_id: int, correlation_id: int, recording_id: int, position: int, length: int,
    limit_counter_id: int, replay_stream_id: int, file_io_max_length: int, replay_token: int, replay_channel: str,
) -> bytes:
    return _encode(BOUNDED_REPLAY, "bounded_replay_request",
                   control_session_id=control_session_id, correlation_id=correlation_id, recording_id=recording_id,
                   position=position, length=length, limit_counter_id=limit_counter_id,
                   replay_stream_id=replay_stream_id, file_io_max_length=file_io_max_length,
                   replay_token=replay_token, replay_channel=_ascii(replay_channel, "replay channel"))


def replicate2(
    control_session_id: int, correlation_id: int, src_recording_id: int, dst_recording_id: int, stop_position: int,
    channel_tag_id: int, subscription_tag_id: int, src_control_stream_id: int, file_io_max_length: int,
    replication_session_id: int, src_control_channel: str, live_destination: str, replication_channel: str,
    encoded_credentials: bytes, src_response_channel: str,
) -> bytes:
    return _encode(REPLICATE2, "replicate_request2",
                   control_session_id=control_session_id, correlation_id=correlation_id,
                   src_recording_id=src_recording_id, dst_recording_id=dst_recording_id, stop_position=stop_position,
                   channel_tag_id=channel_tag_id, subscription_tag_id=subscription_tag_id,
                   src_control_stream_id=src_control_stream_id, file_io_max_length=file_io_max_length,
                   replication_session_id=replication_session_id,
                   src_control_channel=_ascii(src_control_channel, "source control channel"),
                   live_destination=_ascii(live_destination, "live destination"),
                   replication_channel=_ascii(replication_channel, "replication channel"),
                   encoded_credentials=bytes(encoded_credentials),
                   src_response_channel=_ascii(src_response_channel, "source response channel"))


def truncate_recording(control_session_id: int, correlation_id: int, recording_id: int, position: int) -> bytes:
    return _encode(TRUNCATE_RECORDING, "truncate_recording_request",
                   control_session_id=control_session_id, correlation_id=correlation_id, recording_id=recording_id,
                   position=position)


def detach_segments(control_session_id: int, correlation_id: int, recording_id: int, new_start_position: int) -> bytes:
    return _encode(DETACH_SEGMENTS, "detach_segments_request",
                   control_session_id=control_session_id, correlation_id=correlation_id, recording_id=recording_id,
                   new_start_position=new_start_position)


def purge_segments(control_session_id: int, correlation_id: int, recording_id: int, new_start_position: int) -> bytes:
    return _encode(PURGE_SEGMENTS, "purge_segments_request",
                   control_session_id=control_session_id, correlation_id=correlation_id, recording_id=recording_id,
                   new_start_position=new_start_position)


def migrate_segments(control_session_id: int, correlation_id: int, src_recording_id: int,
                     dst_recording_id: int) -> bytes:
    return _encode(MIGRATE_SEGMENTS, "migrate_segments_request",
                   control_session_id=control_session_id, correlation_id=correlation_id,
                   src_recording_id=src_recording_id, dst_recording_id=dst_recording_id)


def list_recordings(control_session_id: int, correlation_id: int, from_recording_id: int, record_count: int) -> bytes:
    return _encode(LIST_RECORDINGS, "list_recordings_request",
                   control_session_id=control_session_id, correlation_id=correlation_id,
                   from_recording_id=from_recording_id, record_count=record_count)


def list_recordings_for_uri(
    control_session_id: int, correlation_id: int, from_recording_id: int, record_count: int, stream_id: int,
    channel: str,
) -> bytes:
    return _encode(LIST_RECORDINGS_FOR_URI, "list_recordings_for_uri_request",
                   control_session_id=control_session_id, correlation_id=correlation_id,
                   from_recording_id=from_recording_id, record_count=record_count, stream_id=stream_id,
                   channel=_ascii(channel, "channel"))


def find_last_matching_recording(
    control_session_id: int, correlation_id: int, min_recording_id: int, session_id: int, stream_id: int,
    channel: str,
) -> bytes:
    return _encode(FIND_LAST_MATCHING_RECORDING,
                   "find_last_matching_recording_request", control_session_id=control_session_id,
                   correlation_id=correlation_id, min_recording_id=min_recording_id, session_id=session_id,
                   stream_id=stream_id, channel=_ascii(channel, "channel"))


def list_recording_subscriptions(
    control_session_id: int, correlation_id: int, pseudo_index: int, subscription_count: int, apply_stream_id: bool,
    stream_id: int, channel: str,
) -> bytes:
    return _encode(LIST_RECORDING_SUBSCRIPTIONS,
                   "list_recording_subscriptions_request", control_session_id=control_session_id,
                   correlation_id=correlation_id, pseudo_index=pseudo_index, subscription_count=subscription_count,
                   apply_stream_id=int(apply_stream_id), stream_id=stream_id, channel=_ascii(channel, "channel"))


# --- responses --------------------------------------------------------------------------------

Response = ControlResponse | RecordingDescriptor | RecordingSubscriptionDescriptor | RecordingSignalEvent | Challenge

_RESPONSES: Final = frozenset({CONTROL_RESPONSE, RECORDING_DESCRIPTOR, RECORDING_SUBSCRIPTION_DESCRIPTOR,
                               RECORDING_SIGNAL_EVENT, CHALLENGE})


def _bytes(var: Any) -> bytes:
    length = int(var.length)
    return bytes(ffi.buffer(var.data, length)) if length else b""


def _text(var: Any) -> str:
    return _bytes(var).decode("ascii", "replace")


def decode(data: memoryview | bytes | bytearray) -> Response | None:
    """The response in `data`, or None for a message the client does not act on (Ping, another
    schema or template). Raises MalformedMessageError for a truncated or malformed one."""
    buffer = ffi.from_buffer("uint8_t[]", data)
    header = ffi.new("aa_archive_header_t *")
    if lib.aa_archive_decode_header(buffer, len(data), header) < 0:
        raise MalformedMessageError(f"{len(data)} bytes is shorter than the 8-byte SBE message header",
                                    MALFORMED_COMMAND)
    if header.schema_id != SCHEMA_ID or header.template_id not in _RESPONSES:
        return None
    msg = ffi.new("aa_archive_message_t *")
    if lib.aa_archive_decode(buffer, len(data), msg) < 0:
        raise last_error(MalformedMessageError)
    template_id = header.template_id
    if template_id == CONTROL_RESPONSE:
        r = msg.control_response
        return ControlResponse(r.control_session_id, r.correlation_id, r.relevant_id, r.code, r.version,
                               _text(r.error_message))
    if template_id == RECORDING_DESCRIPTOR:
        d = msg.recording_descriptor
        return RecordingDescriptor(
            d.control_session_id, d.correlation_id, d.recording_id, d.start_timestamp, d.stop_timestamp,
            d.start_position, d.stop_position, d.initial_term_id, d.segment_file_length, d.term_buffer_length,
            d.mtu_length, d.session_id, d.stream_id, _text(d.stripped_channel), _text(d.original_channel),
            _text(d.source_identity))
    if template_id == RECORDING_SUBSCRIPTION_DESCRIPTOR:
        s = msg.recording_subscription_descriptor
        return RecordingSubscriptionDescriptor(s.control_session_id, s.correlation_id, s.subscription_id, s.stream_id,
                                               _text(s.stripped_channel))
    if template_id == RECORDING_SIGNAL_EVENT:
        e = msg.recording_signal_event
        try:
            kind = RecordingSignal(e.signal)
        except ValueError:
            raise MalformedMessageError(
                f"recording signal {e.signal} is not one of {[k.name for k in RecordingSignal]}") from None
        return RecordingSignalEvent(e.control_session_id, e.correlation_id, e.recording_id, e.subscription_id,
                                    e.position, kind)
    c = msg.challenge
    return Challenge(c.control_session_id, c.correlation_id, c.version, _bytes(c.encoded_challenge))
