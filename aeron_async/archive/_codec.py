"""The archive client's side of the control protocol: the requests it encodes and the responses it
decodes (SBE schema 101 version 14, little-endian; layouts in
../shared/reference/aeron-archive-codecs.md). The only module of the client that knows bytes."""

from __future__ import annotations

import struct
from typing import Final

from .records import (
    Challenge,
    ControlResponse,
    RecordingDescriptor,
    RecordingSignal,
    RecordingSignalEvent,
    RecordingSubscriptionDescriptor,
)

SCHEMA_ID: Final = 101
SCHEMA_VERSION: Final = 14
HEADER_LENGTH: Final = 8
# The control protocol's semantic version (major << 16 | minor << 8 | patch) this client speaks:
# Aeron's Java client's, 1.12.0; an archive refuses another major version.
PROTOCOL_SEMANTIC_VERSION: Final = (1 << 16) | (12 << 8) | 0

# template ids
CONTROL_RESPONSE: Final = 1
CLOSE_SESSION: Final = 3
STOP_RECORDING: Final = 5
REPLAY: Final = 6
STOP_REPLAY: Final = 7
LIST_RECORDINGS: Final = 8
LIST_RECORDINGS_FOR_URI: Final = 9
LIST_RECORDING: Final = 10
RECORDING_POSITION: Final = 12
TRUNCATE_RECORDING: Final = 13
STOP_RECORDING_SUBSCRIPTION: Final = 14
STOP_POSITION: Final = 15
FIND_LAST_MATCHING_RECORDING: Final = 16
LIST_RECORDING_SUBSCRIPTIONS: Final = 17
BOUNDED_REPLAY: Final = 18
STOP_ALL_REPLAYS: Final = 19
RECORDING_DESCRIPTOR: Final = 22
RECORDING_SUBSCRIPTION_DESCRIPTOR: Final = 23
RECORDING_SIGNAL_EVENT: Final = 24
AUTH_CONNECT: Final = 58
CHALLENGE: Final = 59
CHALLENGE_RESPONSE: Final = 60
KEEP_ALIVE: Final = 61
START_RECORDING2: Final = 63
EXTEND_RECORDING2: Final = 64
STOP_RECORDING_BY_IDENTITY: Final = 65
MAX_RECORDED_POSITION: Final = 67
ARCHIVE_ID: Final = 68
PURGE_RECORDING: Final = 104
PING: Final = 106

_HEADER = struct.Struct("<HHHH")
_U32 = struct.Struct("<I")


def _message(template_id: int, block: bytes, *var: bytes) -> bytes:
    parts = [_HEADER.pack(len(block), template_id, SCHEMA_ID, SCHEMA_VERSION), block]
    for data in var:
        parts.append(_U32.pack(len(data)))
        parts.append(data)
    return b"".join(parts)


def _ascii(text: str, what: str) -> bytes:
    try:
        return text.encode("ascii")
    except UnicodeEncodeError:
        raise ValueError(f"{what} {text!r} must be ASCII (Aeron channels are US-ASCII)") from None


# --- requests ---------------------------------------------------------------------------------


def auth_connect(
    correlation_id: int, response_stream_id: int, response_channel: str, credentials: bytes, client_info: str
) -> bytes:
    block = struct.pack("<qii", correlation_id, response_stream_id, PROTOCOL_SEMANTIC_VERSION)
    return _message(AUTH_CONNECT, block, _ascii(response_channel, "response channel"), credentials,
                    _ascii(client_info, "client info"))


def challenge_response(control_session_id: int, correlation_id: int, credentials: bytes) -> bytes:
    return _message(CHALLENGE_RESPONSE, struct.pack("<qq", control_session_id, correlation_id), credentials)


def close_session(control_session_id: int) -> bytes:
    return _message(CLOSE_SESSION, struct.pack("<q", control_session_id))


def keep_alive(control_session_id: int, correlation_id: int) -> bytes:
    return _message(KEEP_ALIVE, struct.pack("<qq", control_session_id, correlation_id))


def archive_id(control_session_id: int, correlation_id: int) -> bytes:
    return _message(ARCHIVE_ID, struct.pack("<qq", control_session_id, correlation_id))


def id_request(template_id: int, control_session_id: int, correlation_id: int, value: int) -> bytes:
    """The requests whose block is (controlSessionId, correlationId, an int64 id): StopReplay,
    ListRecording, RecordingPosition, StopRecordingSubscription, StopPosition, StopAllReplays,
    StopRecordingByIdentity, MaxRecordedPosition, PurgeRecording."""
    return _message(template_id, struct.pack("<qqq", control_session_id, correlation_id, value))


def start_recording2(
    control_session_id: int, correlation_id: int, stream_id: int, source_location: int, auto_stop: bool, channel: str
) -> bytes:
    block = struct.pack("<qqiii", control_session_id, correlation_id, stream_id, source_location, int(auto_stop))
    return _message(START_RECORDING2, block, _ascii(channel, "channel"))


def extend_recording2(
    control_session_id: int, correlation_id: int, recording_id: int, stream_id: int, source_location: int,
    auto_stop: bool, channel: str,
) -> bytes:
    block = struct.pack("<qqqiii", control_session_id, correlation_id, recording_id, stream_id, source_location,
                        int(auto_stop))
    return _message(EXTEND_RECORDING2, block, _ascii(channel, "channel"))


def stop_recording(control_session_id: int, correlation_id: int, stream_id: int, channel: str) -> bytes:
    block = struct.pack("<qqi", control_session_id, correlation_id, stream_id)
    return _message(STOP_RECORDING, block, _ascii(channel, "channel"))


def replay(
    control_session_id: int, correlation_id: int, recording_id: int, position: int, length: int,
    replay_stream_id: int, file_io_max_length: int, replay_token: int, replay_channel: str,
) -> bytes:
    block = struct.pack("<qqqqqiiq", control_session_id, correlation_id, recording_id, position, length,
                        replay_stream_id, file_io_max_length, replay_token)
    return _message(REPLAY, block, _ascii(replay_channel, "replay channel"))


def bounded_replay(
    control_session_id: int, correlation_id: int, recording_id: int, position: int, length: int,
    limit_counter_id: int, replay_stream_id: int, file_io_max_length: int, replay_token: int, replay_channel: str,
) -> bytes:
    block = struct.pack("<qqqqqiiiq", control_session_id, correlation_id, recording_id, position, length,
                        limit_counter_id, replay_stream_id, file_io_max_length, replay_token)
    return _message(BOUNDED_REPLAY, block, _ascii(replay_channel, "replay channel"))


def truncate_recording(control_session_id: int, correlation_id: int, recording_id: int, position: int) -> bytes:
    block = struct.pack("<qqqq", control_session_id, correlation_id, recording_id, position)
    return _message(TRUNCATE_RECORDING, block)


def list_recordings(control_session_id: int, correlation_id: int, from_recording_id: int, record_count: int) -> bytes:
    block = struct.pack("<qqqi", control_session_id, correlation_id, from_recording_id, record_count)
    return _message(LIST_RECORDINGS, block)


def list_recordings_for_uri(
    control_session_id: int, correlation_id: int, from_recording_id: int, record_count: int, stream_id: int,
    channel: str,
) -> bytes:
    block = struct.pack("<qqqii", control_session_id, correlation_id, from_recording_id, record_count, stream_id)
    return _message(LIST_RECORDINGS_FOR_URI, block, _ascii(channel, "channel"))


def find_last_matching_recording(
    control_session_id: int, correlation_id: int, min_recording_id: int, session_id: int, stream_id: int,
    channel: str,
) -> bytes:
    block = struct.pack("<qqqii", control_session_id, correlation_id, min_recording_id, session_id, stream_id)
    return _message(FIND_LAST_MATCHING_RECORDING, block, _ascii(channel, "channel"))


def list_recording_subscriptions(
    control_session_id: int, correlation_id: int, pseudo_index: int, subscription_count: int, apply_stream_id: bool,
    stream_id: int, channel: str,
) -> bytes:
    block = struct.pack("<qqiiii", control_session_id, correlation_id, pseudo_index, subscription_count,
                        int(apply_stream_id), stream_id)
    return _message(LIST_RECORDING_SUBSCRIPTIONS, block, _ascii(channel, "channel"))


# --- responses --------------------------------------------------------------------------------

Response = ControlResponse | RecordingDescriptor | RecordingSubscriptionDescriptor | RecordingSignalEvent | Challenge

_CONTROL_RESPONSE = struct.Struct("<qqqii")
_DESCRIPTOR = struct.Struct("<qqqqqqqiiiiii")
_SUBSCRIPTION_DESCRIPTOR = struct.Struct("<qqqi")
_SIGNAL = struct.Struct("<qqqqqi")
_CHALLENGE = struct.Struct("<qqi")
_MIN_BLOCK = {
    CONTROL_RESPONSE: _CONTROL_RESPONSE.size,
    RECORDING_DESCRIPTOR: _DESCRIPTOR.size,
    RECORDING_SUBSCRIPTION_DESCRIPTOR: _SUBSCRIPTION_DESCRIPTOR.size,
    RECORDING_SIGNAL_EVENT: _SIGNAL.size,
    CHALLENGE: _CHALLENGE.size,
    PING: 8,
}


class MalformedMessageError(ValueError):
    """A control message shorter than its header, block or var data say."""


def _var(data: memoryview | bytes, offset: int, count: int) -> tuple[list[bytes], int]:
    out = []
    for _ in range(count):
        if offset + 4 > len(data):
            raise MalformedMessageError(f"truncated var-data length at offset {offset} of {len(data)} bytes")
        (length,) = _U32.unpack_from(data, offset)
        offset += 4
        if offset + length > len(data):
            raise MalformedMessageError(f"var data of {length} bytes at offset {offset} overruns {len(data)} bytes")
        out.append(bytes(data[offset:offset + length]))
        offset += length
    return out, offset


def control_session_id_of(data: memoryview | bytes) -> int | None:
    """The controlSessionId of a schema-101 message that carries one at block offset 0, else None."""
    if len(data) < HEADER_LENGTH + 8:
        return None
    _, template_id, schema_id, _ = _HEADER.unpack_from(data, 0)
    if schema_id != SCHEMA_ID or template_id not in _MIN_BLOCK:
        return None
    (value,) = struct.unpack_from("<q", data, HEADER_LENGTH)
    return int(value)


def decode(data: memoryview | bytes) -> Response | None:
    """The response in `data`, or None for a message the client does not act on (Ping, other
    schemas and templates). Raises MalformedMessageError for a truncated message."""
    if len(data) < HEADER_LENGTH:
        raise MalformedMessageError(f"{len(data)} bytes is shorter than the 8-byte SBE message header")
    block_length, template_id, schema_id, _version = _HEADER.unpack_from(data, 0)
    if schema_id != SCHEMA_ID or template_id not in _MIN_BLOCK or template_id == PING:
        return None
    if block_length < _MIN_BLOCK[template_id] or HEADER_LENGTH + block_length > len(data):
        raise MalformedMessageError(
            f"template {template_id}: block length {block_length} in {len(data)} bytes "
            f"(the block needs {_MIN_BLOCK[template_id]})")
    var_offset = HEADER_LENGTH + block_length
    if template_id == CONTROL_RESPONSE:
        csid, corr, relevant, code, version = _CONTROL_RESPONSE.unpack_from(data, HEADER_LENGTH)
        (message,), _ = _var(data, var_offset, 1)
        return ControlResponse(csid, corr, relevant, code, version, message.decode("ascii", "replace"))
    if template_id == RECORDING_DESCRIPTOR:
        fields = _DESCRIPTOR.unpack_from(data, HEADER_LENGTH)
        strings, _ = _var(data, var_offset, 3)
        return RecordingDescriptor(*fields, *(s.decode("ascii", "replace") for s in strings))
    if template_id == RECORDING_SUBSCRIPTION_DESCRIPTOR:
        csid, corr, subscription_id, stream_id = _SUBSCRIPTION_DESCRIPTOR.unpack_from(data, HEADER_LENGTH)
        (channel,), _ = _var(data, var_offset, 1)
        return RecordingSubscriptionDescriptor(csid, corr, subscription_id, stream_id, channel.decode("ascii", "replace"))
    if template_id == RECORDING_SIGNAL_EVENT:
        csid, corr, recording_id, subscription_id, position, signal = _SIGNAL.unpack_from(data, HEADER_LENGTH)
        try:
            kind = RecordingSignal(signal)
        except ValueError:
            raise MalformedMessageError(f"recording signal {signal} is not one of {[s.name for s in RecordingSignal]}") from None
        return RecordingSignalEvent(csid, corr, recording_id, subscription_id, position, kind)
    csid, corr, version = _CHALLENGE.unpack_from(data, HEADER_LENGTH)
    (challenge,), _ = _var(data, var_offset, 1)
    return Challenge(csid, corr, version, challenge)
