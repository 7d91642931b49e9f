"""Recording and replay: a client for an archive that keeps streams on disk and replays them by
position, compatible with Aeron Archive (its control protocol, SBE schema 101 version 14).

    with AeronArchive.connect(aeron) as archive:
        archive.start_recording("aeron:ipc", 1001)  # not 10 or 20: the archive's own control streams
        ...
        recording = archive.list_recordings()[-1]
        with archive.replay(recording.recording_id, position=0) as replay:
            for message in replay:
                ...

`PersistentSubscription` (and `AsyncPersistentSubscription`) reads a recorded stream from any
position, replayed then live, each message once (persistent.py). `aeron_async.archive.aio` is the
same for async code on anyio. Errors are
`aeron_async.errors.ArchiveError` subclasses naming the archive's code and the fix.
"""

# the errors archive operations raise (aeron_async.errors), importable from here too
from ..errors import (
    ActiveRecordingError, ArchiveConnectionError, ArchiveError, ArchiveLimitError, ArchiveStorageError,
    ArchiveTimeoutError, AuthenticationError, InvalidExtensionError, RecordingPositionError, UnknownRecordingError,
    UnknownReplayError, UnknownSubscriptionError,
)
from .auth import Accept, Authenticator, CredentialsSupplier, Reject, SendChallenge
from .client import AeronArchive, Replay
from .replay_merge import MergeState, ReplayMerge
from .persistent import (
    FROM_LIVE, FROM_START, AsyncPersistentSubscription, PersistentSubscription, PersistentSubscriptionState,
)
from .service import Archive, ArchiveContext
from .records import (
    NULL_POSITION,
    ArchiveErrorCode,
    ControlResponse,
    ControlResponseCode,
    RecordingDescriptor,
    RecordingSignal,
    RecordingSignalEvent,
    RecordingState,
    RecordingSubscriptionDescriptor,
    SourceLocation,
)
# Aeron Archive's default channels and streams
from ._channels import (
    CONTROL_STREAM_ID, DEFAULT_REPLAY_CHANNEL, DEFAULT_REPLAY_STREAM_ID, LOCAL_CONTROL_CHANNEL, RESPONSE_CHANNEL,
    RESPONSE_STREAM_ID,
)

__all__ = [
    "ActiveRecordingError",
    "ArchiveConnectionError",
    "ArchiveError",
    "ArchiveLimitError",
    "ArchiveStorageError",
    "ArchiveTimeoutError",
    "AuthenticationError",
    "InvalidExtensionError",
    "MergeState",
    "AsyncPersistentSubscription",
    "FROM_LIVE",
    "FROM_START",
    "PersistentSubscription",
    "PersistentSubscriptionState",
    "RecordingPositionError",
    "ReplayMerge",
    "UnknownRecordingError",
    "UnknownReplayError",
    "UnknownSubscriptionError",
    "CONTROL_STREAM_ID",
    "DEFAULT_REPLAY_CHANNEL",
    "DEFAULT_REPLAY_STREAM_ID",
    "LOCAL_CONTROL_CHANNEL",
    "NULL_POSITION",
    "RESPONSE_CHANNEL",
    "RESPONSE_STREAM_ID",
    "Accept",
    "AeronArchive",
    "Archive",
    "Authenticator",
    "CredentialsSupplier",
    "Reject",
    "SendChallenge",
    "ArchiveContext",
    "ArchiveErrorCode",
    "ControlResponse",
    "ControlResponseCode",
    "RecordingDescriptor",
    "RecordingSignal",
    "RecordingSignalEvent",
    "RecordingState",
    "RecordingSubscriptionDescriptor",
    "Replay",
    "SourceLocation",
]
