"""What an archive control session's requests are made of (docs/architecture.md, "Archive", the
client part): Aeron Archive's defaults, the channels a session builds (its control and response
channels with their session ids, the response-channel forms, a replay's subscription channel) and
the checks of the arguments every operation takes. Sans I/O, like `_session.py`, which builds the
requests from them; the clients (`client.py`, `aio.py`) and `persistent.py` use them directly.
"""

from __future__ import annotations

import random
import re
from typing import Final

from ..errors import InvalidArgumentError
from .records import SourceLocation

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


def new_session_id() -> int:
    """A random session id for the control channels (so several clients on one channel and stream
    each see only their own session); Aeron keeps 0 and negative ids usable too, we avoid them."""
    return random.randint(1 << 16, (1 << 31) - 1)


_PARAM = re.compile(r"[?|]session-id=")


def names_session_id(channel: str) -> bool:
    """Whether `channel` names a `session-id` parameter."""
    return _PARAM.search(channel) is not None


def with_session_id(channel: str, session_id: int) -> str:
    """`channel` with `session-id=<session_id>` added, unless it names one already or uses
    `control-mode=response` (Aeron's rule for the control channels)."""
    if _PARAM.search(channel) or "control-mode=response" in channel:
        return channel
    return f"{channel}{'|' if '?' in channel else '?'}session-id={session_id}"


def check_connect(control_channel: str, response_channel: str, timeout: float) -> None:
    """The checks of a connect's arguments (both clients')."""
    check_channel(control_channel, "control_channel")
    check_channel(response_channel, "response_channel")
    if not timeout > 0:
        raise InvalidArgumentError(f"timeout={timeout!r} must be a positive number of seconds")


def session_channels(control_channel: str, response_channel: str) -> tuple[str, str]:
    """The control and response channels of a new session, each with a random session id of its
    own (`with_session_id`); none with a response channel (`control-mode=response`: the driver
    links the two, `request_channel`)."""
    if _RESPONSE_MODE in response_channel:
        return control_channel, response_channel
    response = with_session_id(response_channel, new_session_id())
    return with_session_id(control_channel, new_session_id()), response


_RESPONSE_MODE: Final = "control-mode=response"


def request_channel(control_channel: str, response_channel: str, response_subscription_id: int) -> str:
    """The control channel a session publishes its requests on: with a response channel, it names
    the response subscription (`response-correlation-id=<its registration id>`, reference
    aeron-wave3.md 1.3-1.5), so the archive's responses reach this client behind NAT."""
    if _RESPONSE_MODE not in response_channel:
        return control_channel
    return f"{control_channel}{'|' if '?' in control_channel else '?'}response-correlation-id={response_subscription_id}"


def is_response_channel(channel: str) -> bool:
    """A channel with `control-mode=response` (reference aeron-wave3.md 1.1)."""
    return _RESPONSE_MODE in channel


def token_request_channel(control_channel: str, replay_subscription_id: int) -> str:
    """The publication a replay over a response channel is requested on (reference aeron-wave3.md
    6.4, 8.2): the control channel without its session-id and response-correlation-id, naming the
    replay's subscription."""
    base, _, query = control_channel.partition("?")
    params = [p for p in query.split("|") if p and not p.startswith(("session-id=", "response-correlation-id="))]
    params.append(f"response-correlation-id={replay_subscription_id}")
    return f"{base}?{'|'.join(params)}"


def replay_subscription_channel(channel: str, replay_session_id: int) -> str:
    """The channel a replay is read on: the replay channel with the low 32 bits of the replay
    session id as its `session-id` (the replay publication's session)."""
    if _PARAM.search(channel):
        raise InvalidArgumentError(
            f"replay channel {channel!r} names a session-id: leave it out, the archive chooses the replay's session")
    session_id = replay_session_id & 0xFFFFFFFF
    if session_id >= 1 << 31:
        session_id -= 1 << 32
    return f"{channel}{'|' if '?' in channel else '?'}session-id={session_id}"


def check_int(value: object, what: str, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__}")
    if minimum is not None and value < minimum:
        raise InvalidArgumentError(f"{what}={value} must be >= {minimum}")
    return value


def check_stream_id(value: object) -> int:
    stream_id = check_int(value, "stream_id")
    if not -(1 << 31) <= stream_id < 1 << 31:
        raise InvalidArgumentError(f"stream_id={stream_id} must fit in 32 bits")
    return stream_id


def check_channel(value: object, what: str = "channel") -> str:
    if not isinstance(value, str) or not value.startswith(("aeron:", "aeron-spy:")):
        raise InvalidArgumentError(f"{what} {value!r} must be an Aeron channel such as 'aeron:ipc' or "
                         "'aeron:udp?endpoint=host:port'")
    return value


def location_of(value: SourceLocation | str) -> SourceLocation:
    if isinstance(value, SourceLocation):
        return value
    if isinstance(value, str) and value.upper() in SourceLocation.__members__:
        return SourceLocation[value.upper()]
    raise InvalidArgumentError(f"source_location={value!r}: give 'local' (a publication of this archive's driver, recorded "
                     "through a spy) or 'remote' (recorded through a subscription)")


def replay_length(length: int | None, follow: bool) -> int:
    if length is None:
        return NULL_LENGTH if follow else REPLAY_ALL_AND_STOP
    return check_int(length, "length", 0)


def replay_position(position: int | None) -> int:
    if position is None:
        return NULL_POSITION
    return check_int(position, "position", 0)
