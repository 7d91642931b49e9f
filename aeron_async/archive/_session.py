"""What the synchronous and the async archive clients share: channel defaults, argument checks,
the request builders of each operation and the errors made from the archive's answers."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Final

from ..errors import (
    ActiveRecordingError,
    ArchiveError,
    ArchiveLimitError,
    ArchiveStorageError,
    AuthenticationError,
    InvalidExtensionError,
    RecordingPositionError,
    UnknownRecordingError,
    UnknownReplayError,
    UnknownSubscriptionError,
)
from . import _codec
from .records import ArchiveErrorCode, ControlResponse, ControlResponseCode, SourceLocation

# Aeron Archive's defaults (reference 5): local control over IPC on stream 10, responses on 20.
LOCAL_CONTROL_CHANNEL: Final = "aeron:ipc?term-length=64k"
CONTROL_STREAM_ID: Final = 10
RESPONSE_CHANNEL: Final = "aeron:ipc?term-length=64k"
RESPONSE_STREAM_ID: Final = 20
DEFAULT_REPLAY_CHANNEL: Final = "aeron:ipc"
DEFAULT_REPLAY_STREAM_ID: Final = 1001
DEFAULT_TIMEOUT: Final = 10.0
KEEP_ALIVE_INTERVAL: Final = 1.0
LIST_PAGE: Final = 256

NULL_VALUE: Final = -1
NULL_POSITION: Final = -1
NULL_LENGTH: Final = -1  # replay everything, following a live recording until it stops
REPLAY_ALL_AND_STOP: Final = -2  # replay up to the recording's position when the replay starts
MAX_LENGTH: Final = (1 << 63) - 1

Encoder = Callable[[int, int], bytes]  # (control session id, correlation id) -> request bytes


def new_session_id() -> int:
    """A random session id for the control channels (so several clients on one channel and stream
    each see only their own session); Aeron keeps 0 and negative ids usable too, we avoid them."""
    return random.randint(1 << 16, (1 << 31) - 1)


_PARAM = re.compile(r"[?|]session-id=")


def with_session_id(channel: str, session_id: int) -> str:
    """`channel` with `session-id=<session_id>` added, unless it names one already or uses
    `control-mode=response` (Aeron's rule for the control channels)."""
    if _PARAM.search(channel) or "control-mode=response" in channel:
        return channel
    return f"{channel}{'|' if '?' in channel else '?'}session-id={session_id}"


def replay_subscription_channel(channel: str, replay_session_id: int) -> str:
    """The channel a replay is read on: the replay channel with the low 32 bits of the replay
    session id as its `session-id` (the replay publication's session)."""
    if _PARAM.search(channel):
        raise ValueError(
            f"replay channel {channel!r} names a session-id: leave it out, the archive chooses the replay's session")
    session_id = replay_session_id & 0xFFFFFFFF
    if session_id >= 1 << 31:
        session_id -= 1 << 32
    return f"{channel}{'|' if '?' in channel else '?'}session-id={session_id}"


def check_int(value: object, what: str, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{what}={value} must be >= {minimum}")
    return value


def check_stream_id(value: object) -> int:
    stream_id = check_int(value, "stream_id")
    if not -(1 << 31) <= stream_id < 1 << 31:
        raise ValueError(f"stream_id={stream_id} must fit in 32 bits")
    return stream_id


def check_channel(value: object, what: str = "channel") -> str:
    if not isinstance(value, str) or not value.startswith(("aeron:", "aeron-spy:")):
        raise ValueError(f"{what} {value!r} must be an Aeron channel such as 'aeron:ipc' or "
                         "'aeron:udp?endpoint=host:port'")
    return value


def source_location(value: SourceLocation | str) -> SourceLocation:
    if isinstance(value, SourceLocation):
        return value
    if isinstance(value, str) and value.upper() in SourceLocation.__members__:
        return SourceLocation[value.upper()]
    raise ValueError(f"source_location={value!r}: give 'local' (a publication of this archive's driver, recorded "
                     "through a spy) or 'remote' (recorded through a subscription)")


def replay_length(length: int | None, follow: bool) -> int:
    if length is None:
        return NULL_LENGTH if follow else REPLAY_ALL_AND_STOP
    return check_int(length, "length", 0)


def replay_position(position: int | None) -> int:
    if position is None:
        return NULL_POSITION
    return check_int(position, "position", 0)


_HINTS: Final[dict[ArchiveErrorCode, tuple[type[ArchiveError], str]]] = {
    ArchiveErrorCode.GENERIC: (ArchiveError, ""),
    ArchiveErrorCode.ACTIVE_LISTING: (
        ArchiveLimitError, "one listing runs at a time per control session: wait for the last to finish"),
    ArchiveErrorCode.ACTIVE_RECORDING: (
        ActiveRecordingError,
        "the recording is still active: stop it first (stop_recording(recording_id=...)) and wait for its STOP signal"),
    ArchiveErrorCode.ACTIVE_SUBSCRIPTION: (
        ArchiveError,
        "that channel and stream is already being recorded: stop that recording first, or record another stream"),
    ArchiveErrorCode.UNKNOWN_SUBSCRIPTION: (
        UnknownSubscriptionError, "list_recording_subscriptions() shows the archive's recording subscriptions"),
    ArchiveErrorCode.UNKNOWN_RECORDING: (
        UnknownRecordingError, "list_recordings() shows the recordings the archive has"),
    ArchiveErrorCode.UNKNOWN_REPLAY: (
        UnknownReplayError, "the replay has ended or was never started; use the id start_replay() returned"),
    ArchiveErrorCode.MAX_REPLAYS: (
        ArchiveLimitError, "too many concurrent replays: stop some (stop_replay) or raise the archive's max replays"),
    ArchiveErrorCode.MAX_RECORDINGS: (
        ArchiveLimitError,
        "too many concurrent recordings: stop some or raise the archive's max concurrent recordings"),
    ArchiveErrorCode.INVALID_EXTENSION: (
        InvalidExtensionError,
        "the publication must continue the recording: same initial term id, term length and MTU, starting at its "
        "stop position (set init-term-id=, term-id=, term-offset=, term-length=, mtu= on its channel from "
        "list_recording())"),
    ArchiveErrorCode.AUTHENTICATION_REJECTED: (
        AuthenticationError, "the archive's authenticator rejected the credentials: pass the ones it accepts"),
    ArchiveErrorCode.STORAGE_SPACE: (
        ArchiveStorageError, "free space in the archive directory (purge or migrate recordings) or lower its "
                             "low-storage threshold"),
    ArchiveErrorCode.UNKNOWN_REPLICATION: (ArchiveError, "no such replication"),
    ArchiveErrorCode.UNAUTHORISED_ACTION: (
        AuthenticationError, "this session is not authorised for that request: connect with credentials that are"),
    ArchiveErrorCode.REPLICATION_CONNECTION_FAILURE: (ArchiveError, "the source archive could not be reached"),
    ArchiveErrorCode.EMPTY_RECORDING: (ArchiveError, "the recording holds no data yet"),
    ArchiveErrorCode.INVALID_POSITION: (
        RecordingPositionError,
        "give a position on a frame boundary of the recording (a message's position: a multiple of 32 where a "
        "frame starts) from its start position up to its stop position; list_recording() shows them"),
}


def response_error(response: ControlResponse, operation: str) -> ArchiveError:
    """The exception for a response that is not OK, naming the operation, the archive's message,
    its code and what to do."""
    if response.code == ControlResponseCode.ERROR:
        try:
            code = ArchiveErrorCode(response.relevant_id)
        except ValueError:
            code = ArchiveErrorCode.GENERIC
    elif response.code == ControlResponseCode.RECORDING_UNKNOWN:
        code = ArchiveErrorCode.UNKNOWN_RECORDING
    elif response.code == ControlResponseCode.SUBSCRIPTION_UNKNOWN:
        code = ArchiveErrorCode.UNKNOWN_SUBSCRIPTION
    else:
        code = ArchiveErrorCode.GENERIC
    cls, hint = _HINTS[code]
    said = response.error_message or "(no message)"
    text = f"{operation}: the archive answered {code.name}: {said}"
    if hint:
        text += f"; {hint}"
    return cls(text, int(code), response.correlation_id)


def expect_ok(response: ControlResponse, operation: str) -> int:
    """The relevant id of an OK response; raises the matching ArchiveError otherwise."""
    if response.code != ControlResponseCode.OK:
        raise response_error(response, operation)
    return response.relevant_id


def client_info() -> str:
    from .. import __version__

    return f"name=aeron_async version={__version__}"




# --- the requests of each operation: (encoder, the operation as the user wrote it) -------------
# Both clients build their requests here, so the checks and messages are the same in each.

Request = tuple[Encoder, str]


def start_recording(channel: str, stream_id: int, location: SourceLocation | str, auto_stop: bool) -> Request:
    check_channel(channel)
    stream = check_stream_id(stream_id)
    where = source_location(location)
    return (lambda s, c: _codec.start_recording2(s, c, stream, where, bool(auto_stop), channel),
            f"start_recording({channel!r}, {stream})")


def stop_recording(
    channel: str | None, stream_id: int | None, subscription_id: int | None, recording_id: int | None
) -> Request:
    """StopRecording (channel + stream), StopRecordingSubscription or StopRecordingByIdentity."""
    given = [channel is not None or stream_id is not None, subscription_id is not None, recording_id is not None]
    if sum(given) != 1:
        raise TypeError("stop_recording takes one of: channel and stream_id, subscription_id=, recording_id=")
    if subscription_id is not None:
        sid = check_int(subscription_id, "subscription_id")
        return (lambda s, c: _codec.id_request(_codec.STOP_RECORDING_SUBSCRIPTION, s, c, sid),
                f"stop_recording(subscription_id={sid})")
    if recording_id is not None:
        rid = check_int(recording_id, "recording_id")
        return (lambda s, c: _codec.id_request(_codec.STOP_RECORDING_BY_IDENTITY, s, c, rid),
                f"stop_recording(recording_id={rid})")
    if channel is None or stream_id is None:
        raise TypeError("stop_recording(channel, stream_id): give both")
    check_channel(channel)
    stream = check_stream_id(stream_id)
    return (lambda s, c: _codec.stop_recording(s, c, stream, channel), f"stop_recording({channel!r}, {stream})")


def not_recording_error(recording_id: int, operation: str) -> ArchiveError:
    """StopRecordingByIdentity answers OK with relevantId 0 when the recording was not active."""
    return UnknownRecordingError(
        f"{operation}: the archive has no active recording {recording_id}; list_recording_subscriptions() and "
        "list_recordings() show what is recording", int(ArchiveErrorCode.UNKNOWN_RECORDING))


def extend_recording(
    recording_id: int, channel: str, stream_id: int, location: SourceLocation | str, auto_stop: bool
) -> Request:
    rid = check_int(recording_id, "recording_id")
    check_channel(channel)
    stream = check_stream_id(stream_id)
    where = source_location(location)
    return (lambda s, c: _codec.extend_recording2(s, c, rid, stream, where, bool(auto_stop), channel),
            f"extend_recording({rid}, {channel!r}, {stream})")


def truncate_recording(recording_id: int, position: int) -> Request:
    rid = check_int(recording_id, "recording_id")
    pos = check_int(position, "position", 0)
    return (lambda s, c: _codec.truncate_recording(s, c, rid, pos), f"truncate_recording({rid}, {pos})")


def id_operation(template_id: int, value: int | None, what: str, name: str) -> Request:
    """A request whose one argument is an id (NULL_VALUE for None)."""
    v = NULL_VALUE if value is None else check_int(value, what)
    return (lambda s, c: _codec.id_request(template_id, s, c, v), f"{name}({'' if value is None else v})")


def archive_id() -> Request:
    return (_codec.archive_id, "archive_id()")


def find_last_matching(channel: str, stream_id: int, session_id: int | None, min_recording_id: int) -> Request:
    stream = check_stream_id(stream_id)
    session = NULL_VALUE if session_id is None else check_int(session_id, "session_id")
    low = check_int(min_recording_id, "min_recording_id", 0)
    return (lambda s, c: _codec.find_last_matching_recording(s, c, low, session, stream, channel),
            f"find_last_matching_recording({channel!r}, {stream})")


def replay(
    recording_id: int, position: int | None, length: int | None, channel: str, stream_id: int, follow: bool,
    limit_counter_id: int | None, file_io_max_length: int | None, merge: bool = False,
) -> Request:
    """`merge`: a replay-merge's replay, whose channel names the live stream's session id."""
    rid = check_int(recording_id, "recording_id")
    pos = replay_position(position)
    size = replay_length(length, follow)
    check_channel(channel, "replay channel")
    if _PARAM.search(channel) and not merge:
        raise ValueError(f"replay channel {channel!r} names a session-id: leave it out, the archive chooses the "
                         "replay's session")
    stream = check_stream_id(stream_id)
    io_max = NULL_VALUE if file_io_max_length is None else check_int(file_io_max_length, "file_io_max_length", 4096)
    operation = f"replay({rid}, position={position}, length={length})"
    if limit_counter_id is None:
        return (lambda s, c: _codec.replay(s, c, rid, pos, size, stream, io_max, NULL_VALUE, channel), operation)
    counter = check_int(limit_counter_id, "limit_counter")
    return (lambda s, c: _codec.bounded_replay(s, c, rid, pos, size, counter, stream, io_max, NULL_VALUE, channel),
            operation)


def list_recordings(channel: str | None, stream_id: int | None) -> tuple[Callable[[int, int, int, int], bytes], str]:
    """The encoder of one page (session, correlation, from id, count) of a listing, and its name."""
    if channel is None and stream_id is None:
        return _codec.list_recordings, "list_recordings()"
    if channel is None or stream_id is None:
        raise TypeError("list_recordings(channel, stream_id): give both, or neither for every recording")
    stream = check_stream_id(stream_id)
    return ((lambda s, c, start, n: _codec.list_recordings_for_uri(s, c, start, n, stream, channel)),
            f"list_recordings({channel!r}, {stream})")


def list_recording_subscriptions(channel: str, stream_id: int | None, pseudo_index: int, count: int) -> Request:
    stream = 0 if stream_id is None else check_stream_id(stream_id)
    first = check_int(pseudo_index, "pseudo_index", 0)
    wanted = check_int(count, "count", 1)
    return ((lambda s, c: _codec.list_recording_subscriptions(s, c, first, wanted, stream_id is not None, stream,
                                                              channel)),
            f"list_recording_subscriptions({channel!r})")


def unknown_recording(response: ControlResponse, recording_id: int, operation: str) -> ArchiveError:
    """The error for a ListRecording that found nothing (RECORDING_UNKNOWN, or OK without a descriptor)."""
    if response.code == ControlResponseCode.OK:
        response = ControlResponse(response.control_session_id, response.correlation_id, recording_id,
                                   ControlResponseCode.RECORDING_UNKNOWN, 0, response.error_message)
    return response_error(response, operation)
