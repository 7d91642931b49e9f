"""Typed records and enums of the archive client (the values of Aeron Archive's control protocol,
SBE schema 101 version 14; see ../shared/reference/aeron-archive-codecs.md)."""

from __future__ import annotations

import enum

import attrs

NULL_POSITION = -1
"""Aeron's null position: a recording that is still active has stop position NULL_POSITION."""
NULL_VALUE = -1


class ControlResponseCode(enum.IntEnum):
    """ControlResponse.code."""

    OK = 0
    ERROR = 1
    RECORDING_UNKNOWN = 2
    SUBSCRIPTION_UNKNOWN = 3


class ArchiveErrorCode(enum.IntEnum):
    """The archive's error code, carried in relevantId of an ERROR ControlResponse."""

    GENERIC = 0
    ACTIVE_LISTING = 1
    ACTIVE_RECORDING = 2
    ACTIVE_SUBSCRIPTION = 3
    UNKNOWN_SUBSCRIPTION = 4
    UNKNOWN_RECORDING = 5
    UNKNOWN_REPLAY = 6
    MAX_REPLAYS = 7
    MAX_RECORDINGS = 8
    INVALID_EXTENSION = 9
    AUTHENTICATION_REJECTED = 10
    STORAGE_SPACE = 11
    UNKNOWN_REPLICATION = 12
    UNAUTHORISED_ACTION = 13
    REPLICATION_CONNECTION_FAILURE = 14
    EMPTY_RECORDING = 15
    INVALID_POSITION = 16


class SourceLocation(enum.IntEnum):
    """Where a recorded publication is: LOCAL records through a spy of this archive's driver
    (IPC, or a UDP publication of the same driver), REMOTE through a subscription."""

    LOCAL = 0
    REMOTE = 1


class RecordingSignal(enum.IntEnum):
    """What happened to a recording (RecordingSignalEvent.signal)."""

    START = 0
    STOP = 1
    EXTEND = 2
    REPLICATE = 3
    MERGE = 4
    SYNC = 5
    DELETE = 6
    REPLICATE_END = 7


class RecordingState(enum.IntEnum):
    """A catalog entry's state (RecordingDescriptorHeader.state)."""

    INVALID = 0
    VALID = 1
    DELETED = 2


@attrs.frozen
class ControlResponse:
    """One ControlResponse (template 1)."""

    control_session_id: int
    correlation_id: int
    relevant_id: int
    code: int
    version: int
    error_message: str


@attrs.frozen
class RecordingDescriptor:
    """A recording as the archive's catalog describes it (template 22).

    Positions are the stream's own: `start_position` is where the recording joined the stream and
    `stop_position` where it stopped, NULL_POSITION (-1) while it is still recording. Timestamps are
    epoch milliseconds (`stop_timestamp` NULL_VALUE while active)."""

    control_session_id: int
    correlation_id: int
    recording_id: int
    start_timestamp: int
    stop_timestamp: int
    start_position: int
    stop_position: int
    initial_term_id: int
    segment_file_length: int
    term_buffer_length: int
    mtu_length: int
    session_id: int
    stream_id: int
    stripped_channel: str
    original_channel: str
    source_identity: str

    @property
    def is_active(self) -> bool:
        """True while the archive is still recording it (no stop position yet)."""
        return self.stop_position == NULL_POSITION

    @property
    def length(self) -> int | None:
        """Recorded bytes, or None while active."""
        return None if self.is_active else self.stop_position - self.start_position


@attrs.frozen
class RecordingSubscriptionDescriptor:
    """An active recording subscription of the archive (template 23): what
    `list_recording_subscriptions` returns and `stop_recording(subscription_id=...)` takes."""

    control_session_id: int
    correlation_id: int
    subscription_id: int
    stream_id: int
    stripped_channel: str


@attrs.frozen
class RecordingSignalEvent:
    """A recording signal (template 24): START, STOP, EXTEND, DELETE, ... for `recording_id` at
    `position`; `subscription_id` is the recording subscription's, when there is one."""

    control_session_id: int
    correlation_id: int
    recording_id: int
    subscription_id: int
    position: int
    signal: RecordingSignal


@attrs.frozen
class Challenge:
    """An authentication challenge from the archive (template 59)."""

    control_session_id: int
    correlation_id: int
    version: int
    encoded_challenge: bytes
