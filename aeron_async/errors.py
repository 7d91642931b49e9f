"""One exception hierarchy for everything aeron_async raises.

Native functions report failure as -1 (or NULL) plus a thread-local code and message;
`check` turns that into the matching exception, so every message names what was wrong and how
to fix it. Back pressure, not-connected and admin-action are normal outcomes, not exceptions.
"""

from __future__ import annotations

import os
from typing import Final

from ._ffi import ffi, lib

# The error codes are C's: the AA_ERROR_CODE_* constants of _native/src/util/aa_error.h (driver
# codes of reference 9.3, and negative local ones), which build_ffi.py exports through cffi; no
# value is written twice.
INVALID_CHANNEL: Final[int] = lib.AA_ERROR_CODE_INVALID_CHANNEL
UNKNOWN_SUBSCRIPTION: Final[int] = lib.AA_ERROR_CODE_UNKNOWN_SUBSCRIPTION
UNKNOWN_PUBLICATION: Final[int] = lib.AA_ERROR_CODE_UNKNOWN_PUBLICATION
CHANNEL_ENDPOINT_ERROR: Final[int] = lib.AA_ERROR_CODE_CHANNEL_ENDPOINT_ERROR
UNKNOWN_COUNTER: Final[int] = lib.AA_ERROR_CODE_UNKNOWN_COUNTER
UNKNOWN_COMMAND_TYPE_ID: Final[int] = lib.AA_ERROR_CODE_UNKNOWN_COMMAND_TYPE_ID
MALFORMED_COMMAND: Final[int] = lib.AA_ERROR_CODE_MALFORMED_COMMAND
NOT_SUPPORTED: Final[int] = lib.AA_ERROR_CODE_NOT_SUPPORTED
UNKNOWN_HOST: Final[int] = lib.AA_ERROR_CODE_UNKNOWN_HOST
RESOURCE_TEMPORARILY_UNAVAILABLE: Final[int] = lib.AA_ERROR_CODE_RESOURCE_TEMPORARILY_UNAVAILABLE
GENERIC_ERROR: Final[int] = lib.AA_ERROR_CODE_GENERIC_ERROR
STORAGE_SPACE: Final[int] = lib.AA_ERROR_CODE_STORAGE_SPACE
IMAGE_REJECTED: Final[int] = lib.AA_ERROR_CODE_IMAGE_REJECTED
PUBLICATION_REVOKED: Final[int] = lib.AA_ERROR_CODE_PUBLICATION_REVOKED
DRIVER_NOT_FOUND: Final[int] = lib.AA_ERROR_CODE_DRIVER_NOT_FOUND
DRIVER_TIMEOUT: Final[int] = lib.AA_ERROR_CODE_DRIVER_TIMEOUT
CLIENT_TIMEOUT: Final[int] = lib.AA_ERROR_CODE_CLIENT_TIMEOUT
CLOSED: Final[int] = lib.AA_ERROR_CODE_CLOSED
INVALID_ARGUMENT: Final[int] = lib.AA_ERROR_CODE_INVALID_ARGUMENT
MESSAGE_TOO_LONG: Final[int] = lib.AA_ERROR_CODE_MESSAGE_TOO_LONG
TIMEOUT: Final[int] = lib.AA_ERROR_CODE_TIMEOUT
CONFIGURATION: Final[int] = lib.AA_ERROR_CODE_CONFIGURATION
DRIVER_CORRUPT: Final[int] = lib.AA_ERROR_CODE_DRIVER_CORRUPT


def native_error_codes() -> dict[str, int]:
    """Every error code the native core defines, by name (without the AA_ERROR_CODE_ prefix)."""
    prefix = "AA_ERROR_CODE_"
    return {name.removeprefix(prefix): int(getattr(lib, name)) for name in dir(lib) if name.startswith(prefix)}

class AeronError(Exception):
    """Base of every aeron_async error. `code` is the driver or local error code."""

    def __init__(self, message: str, code: int = GENERIC_ERROR) -> None:
        super().__init__(message)
        self.code = code


class ConfigurationError(AeronError, ValueError):
    """A driver or client setting is invalid (the message names it and the accepted values)."""


class InvalidArgumentError(ConfigurationError):
    """An argument is out of range or of the wrong form (the message names it and what is accepted).
    A ConfigurationError, and so a ValueError, as the native core's INVALID_ARGUMENT code was before
    it had a class of its own."""


class InvalidChannelError(AeronError, ValueError):
    """A channel URI is malformed or has a parameter the driver cannot accept."""


class MessageTooLongError(AeronError, ValueError):
    """A message is longer than the publication's max message length (or, read by the Spark data
    source, than an Arrow binary column holds)."""


class InvalidPositionError(AeronError, ValueError):
    """An image position set outside what the log holds, or not on a frame boundary."""


class StorageSpaceError(AeronError, OSError):
    """Not enough space in the aeron directory for a new log buffer."""


class DriverNotFoundError(AeronError, ConnectionError):
    """No live media driver at the aeron directory."""


class DriverTimeoutError(AeronError, ConnectionError):
    """The media driver stopped answering within the driver timeout."""


class DriverCorruptError(DriverTimeoutError):
    """The media driver's CnC file holds what no driver writes (a to-clients record, a response field
    or a counter id out of bounds): the client stopped rather than trust it. The driver is lost to this
    client as a timed-out one is (so a DriverTimeoutError too); the message names the record and says
    what to do: restart the driver and let only its user (and group) write the aeron directory
    (docs/security.md, "The CnC file")."""


class ClientTimeoutError(AeronError, ConnectionError):
    """The media driver timed this client out (it missed its heartbeats)."""


class ClosedError(AeronError):
    """The client, publication or subscription was used after it was closed."""


class RegistrationError(AeronError):
    """The driver refused to add a publication or subscription."""


class InvalidStateError(AeronError, RuntimeError):
    """A call came in a state that does not take it (e.g. an archive call's result asked for before
    its answer arrived, or a call started twice)."""


class UsedAfterForkError(AeronError, RuntimeError):
    """A client, publication, subscription, counter or embedded driver made before fork() was used
    in the child process. The child has none of the parent's native threads, and its copies of the
    shared log mappings must not be written: create a new client (and, if needed, driver) in the
    child. Not a ClosedError, so that an `async for` in the child fails instead of ending quietly."""


def used_after_fork_error(what: str, pid: int) -> UsedAfterForkError:
    """The error for `what`, made in process `pid` and used in a child forked from it."""
    return UsedAfterForkError(
        f"{what} was created in process {pid} and is used in process {os.getpid()}, a child made by fork(): "
        "a forked child has none of the parent's client or driver threads and must not write the parent's "
        "mappings; create a new client in the child (aeron_async.Aeron.connect or aeron_async.connect)",
        CLOSED,
    )


# The exception class of every native error code, by the code's name; None: the class the call
# passes as its default (the call knows what failed: RegistrationError for a refused add, and so on).
# tests/project/test_package.py checks that every AA_ERROR_CODE_* of aa_error.h has an entry here.
CLASS_BY_CODE_NAME: Final[dict[str, type[AeronError] | None]] = {
    "INVALID_CHANNEL": InvalidChannelError,
    "UNKNOWN_SUBSCRIPTION": None,
    "UNKNOWN_PUBLICATION": None,
    "CHANNEL_ENDPOINT_ERROR": None,
    "UNKNOWN_COUNTER": None,
    "UNKNOWN_COMMAND_TYPE_ID": None,
    "MALFORMED_COMMAND": None,
    "NOT_SUPPORTED": None,
    "UNKNOWN_HOST": None,
    "RESOURCE_TEMPORARILY_UNAVAILABLE": None,
    "GENERIC_ERROR": None,
    "STORAGE_SPACE": StorageSpaceError,
    "IMAGE_REJECTED": None,
    "PUBLICATION_REVOKED": None,
    "DRIVER_NOT_FOUND": DriverNotFoundError,
    "DRIVER_TIMEOUT": DriverTimeoutError,
    "CLIENT_TIMEOUT": ClientTimeoutError,
    "CLOSED": ClosedError,
    "INVALID_ARGUMENT": InvalidArgumentError,
    "MESSAGE_TOO_LONG": MessageTooLongError,
    "TIMEOUT": None,
    "CONFIGURATION": ConfigurationError,
    "DRIVER_CORRUPT": DriverCorruptError,
}

_BY_CODE: dict[int, type[AeronError]] = {
    code: cls for name, code in native_error_codes().items() if (cls := CLASS_BY_CODE_NAME.get(name)) is not None
}


def error_for(code: int, message: str, default: type[AeronError] = AeronError) -> AeronError:
    """The exception for native error `code`: its class in CLASS_BY_CODE_NAME, else `default`."""
    return _BY_CODE.get(code, default)(message, code)


def last_error(default: type[AeronError] = AeronError, prefix: str = "") -> AeronError:
    """The calling thread's native error as an exception; `prefix` (e.g. "cannot encode template 3: ")
    goes before the native message."""
    code = lib.aa_errcode()
    message = ffi.string(lib.aa_errmsg()).decode("utf-8", "replace") or "unknown native error"
    return error_for(code, prefix + message, default)


def check(rc: int, default: type[AeronError] = AeronError) -> int:
    if rc < 0:
        raise last_error(default)
    return rc


# --- the archive client's errors (aeron_async.archive) ---


class ArchiveError(AeronError):
    """The archive refused a request, or a control session failed.

    `archive_code` is the archive's error code (aeron_async.archive.ArchiveErrorCode: the
    relevantId of an ERROR ControlResponse, or UNKNOWN_RECORDING / UNKNOWN_SUBSCRIPTION for those
    response codes), None for failures on the client's side; `correlation_id` the request's. The
    message is the archive's own text followed by what to do about it."""

    def __init__(
        self, message: str, archive_code: int | None = None, correlation_id: int | None = None,
        code: int = GENERIC_ERROR,
    ) -> None:
        super().__init__(message, code)
        self.archive_code = archive_code
        self.correlation_id = correlation_id


class ArchiveTimeoutError(ArchiveError, TimeoutError):
    """The archive did not answer (connect, or a request's response) within the client's timeout."""


class ArchiveConnectionError(ArchiveError, ConnectionError):
    """The control session is gone: the archive closed it, or its response stream went away."""


class UnknownRecordingError(ArchiveError, LookupError):
    """No recording with that id (or none matching) in the archive's catalog."""


class UnknownSubscriptionError(ArchiveError, LookupError):
    """No recording subscription with that id or channel and stream."""


class UnknownReplayError(ArchiveError, LookupError):
    """No replay session with that id."""


class ActiveRecordingError(ArchiveError):
    """The operation needs a stopped recording (truncate, purge) and the recording is active."""


class RecordingPositionError(ArchiveError, ValueError):
    """A position outside the recording, or not on a frame boundary of it."""


class InvalidExtensionError(ArchiveError, ValueError):
    """An extension that does not continue the recording (stop position, initial term id, term
    length or MTU differ)."""


class ArchiveLimitError(ArchiveError):
    """Too many concurrent replays or recordings, or another listing still running in this session."""


class ArchiveStorageError(ArchiveError, OSError):
    """The archive is low on (or out of) storage space."""


class AuthenticationError(ArchiveError, PermissionError):
    """The archive rejected the credentials, or the action is not authorised."""


class TerminationRefusedError(AeronError, PermissionError):
    """A driver refused a TERMINATE_DRIVER request (`aeron-async driver --terminate`): its termination
    validator is off (the default) or the token did not match; the message is the driver's reason."""


class TerminationTimeoutError(AeronError, TimeoutError):
    """A driver neither stopped nor said it refused a TERMINATE_DRIVER request within the wait."""


# ---- the Spark data source (aeron_async/spark/) ----


class DataLossError(AeronError, RuntimeError):
    """Part of a range to read is gone from the archive (truncated, purged, or segments removed);
    raised with failOnDataLoss=true (the default)."""


class SinkError(AeronError, RuntimeError):
    """The Spark sink ran outside a Spark task, or some of a write's tasks failed."""


class SinkTimeoutError(AeronError, TimeoutError):
    """The Spark sink waited its bound (connectTimeoutMs, offerTimeoutMs, durableTimeoutMs) for a
    subscriber, for back pressure to ease, or for the archive to record what it published."""


# ---- the benchmarks (aeron_async/bench/) ----


class BenchError(AeronError, RuntimeError):
    """A benchmark could not run or measure: a role failed, timed out or received the wrong data."""


class BenchTimeoutError(BenchError, TimeoutError):
    """A benchmark waited its bound for a message, a worker's line or the archive."""


# ---- request/response (aeron_async/rpc.py, docs/api.md "Request/response") ----


class RequestError(AeronError):
    """A request of the request/response API failed."""


class RequestTimeoutError(RequestError, TimeoutError):
    """A request got no answer within its timeout (or could not be sent, or found no server, in it);
    it is forgotten: an answer that comes later is dropped and counted in the client's `late_replies`."""


class RemoteError(RequestError):
    """The server answered that it could not serve the request (its handler raised); the message
    carries the server's reason."""


class ServerUnavailableError(RequestError, ConnectionError):
    """The server went away before answering, and the client was told not to send the request again
    (`retry=False`): the server may or may not have run it."""
