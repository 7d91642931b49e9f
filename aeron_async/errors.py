"""One exception hierarchy for everything aeron_async raises.

Native functions report failure as -1 (or NULL) plus a thread-local code and message;
`check` turns that into the matching exception, so every message names what was wrong and how
to fix it. Back pressure, not-connected and admin-action are normal outcomes, not exceptions.
"""

from __future__ import annotations

from ._ffi import ffi, lib

# Driver error codes (reference 9.3) and local codes (see _native/src/util/aa_error.h).
INVALID_CHANNEL = 1
UNKNOWN_SUBSCRIPTION = 2
UNKNOWN_PUBLICATION = 3
CHANNEL_ENDPOINT_ERROR = 4
UNKNOWN_COUNTER = 5
UNKNOWN_COMMAND_TYPE_ID = 6
MALFORMED_COMMAND = 7
NOT_SUPPORTED = 8
UNKNOWN_HOST = 9
RESOURCE_TEMPORARILY_UNAVAILABLE = 10
GENERIC_ERROR = 11
STORAGE_SPACE = 12
DRIVER_NOT_FOUND = -1000
DRIVER_TIMEOUT = -1001
CLIENT_TIMEOUT = -1002
CLOSED = -1003
INVALID_ARGUMENT = -1004
MESSAGE_TOO_LONG = -1005
TIMEOUT = -1006
CONFIGURATION = -1007


class AeronError(Exception):
    """Base of every aeron_async error. `code` is the driver or local error code."""

    def __init__(self, message: str, code: int = GENERIC_ERROR) -> None:
        super().__init__(message)
        self.code = code


class ConfigurationError(AeronError, ValueError):
    """A driver or client setting is invalid (the message names it and the accepted values)."""


class InvalidChannelError(AeronError, ValueError):
    """A channel URI is malformed or has a parameter the driver cannot accept."""


class MessageTooLongError(AeronError, ValueError):
    """A message is longer than the publication's max message length."""


class InvalidPositionError(AeronError, ValueError):
    """An image position set outside what the log holds, or not on a frame boundary."""


class StorageSpaceError(AeronError, OSError):
    """Not enough space in the aeron directory for a new log buffer."""


class DriverNotFoundError(AeronError, ConnectionError):
    """No live media driver at the aeron directory."""


class DriverTimeoutError(AeronError, ConnectionError):
    """The media driver stopped answering within the driver timeout."""


class ClientTimeoutError(AeronError, ConnectionError):
    """The media driver timed this client out (it missed its heartbeats)."""


class ClosedError(AeronError):
    """The client, publication or subscription was used after it was closed."""


class RegistrationError(AeronError):
    """The driver refused to add a publication or subscription."""


_BY_CODE: dict[int, type[AeronError]] = {
    INVALID_CHANNEL: InvalidChannelError,
    STORAGE_SPACE: StorageSpaceError,
    DRIVER_NOT_FOUND: DriverNotFoundError,
    DRIVER_TIMEOUT: DriverTimeoutError,
    CLIENT_TIMEOUT: ClientTimeoutError,
    CLOSED: ClosedError,
    MESSAGE_TOO_LONG: MessageTooLongError,
    CONFIGURATION: ConfigurationError,
    INVALID_ARGUMENT: ConfigurationError,
}


def error_for(code: int, message: str, default: type[AeronError] = AeronError) -> AeronError:
    return _BY_CODE.get(code, default)(message, code)


def last_error(default: type[AeronError] = AeronError) -> AeronError:
    """The calling thread's native error as an exception."""
    code = lib.aa_errcode()
    message = ffi.string(lib.aa_errmsg()).decode("utf-8", "replace") or "unknown native error"
    return error_for(code, message, default)


def check(rc: int, default: type[AeronError] = AeronError) -> int:
    if rc < 0:
        raise last_error(default)
    return rc
