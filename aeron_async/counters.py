"""Counters: the driver's counters as any process reads them (`CountersReader`), and counters a
client allocates for its own figures (`Counter`, from `Aeron.add_counter`).

Every counter lives in the CnC file (reference 9.2): a 128-byte value record (value, registration
id, owner id) and a 512-byte metadata record (state, type id, a 112-byte key, a label of up to 380
bytes). The driver allocates them all, clients' included, and frees a client's counters when the
client closes or is timed out.
"""

from __future__ import annotations

import enum
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self

from ._ffi import ffi, lib
from .errors import ClosedError, ConfigurationError, DriverNotFoundError, check, last_error

if TYPE_CHECKING:
    from .client import Aeron

# Counter type ids (reference section 3).
TYPE_SYSTEM = 0
TYPE_PUBLISHER_LIMIT = 1
TYPE_SENDER_POSITION = 2
TYPE_RECEIVER_HWM = 3
TYPE_SUBSCRIBER_POSITION = 4
TYPE_RECEIVER_POSITION = 5
TYPE_SEND_CHANNEL_STATUS = 6
TYPE_RECEIVE_CHANNEL_STATUS = 7
TYPE_SENDER_LIMIT = 9
TYPE_CLIENT_HEARTBEAT = 11
TYPE_PUBLISHER_POSITION = 12
TYPE_SENDER_BPE = 13
TYPE_LOCAL_SOCKET_ADDRESS = 14
TYPE_FC_RECEIVERS = 17  # fc-receivers: receivers tracked by a publication's min/tagged flow control

KEY_MAX_LENGTH = 112
LABEL_MAX_LENGTH = 380

# Counters whose key is not (registration id, session id, stream id, channel).
_NOT_STREAM_TYPES = (
    TYPE_SYSTEM, TYPE_CLIENT_HEARTBEAT, TYPE_SEND_CHANNEL_STATUS, TYPE_RECEIVE_CHANNEL_STATUS, TYPE_LOCAL_SOCKET_ADDRESS
)
_STREAM_TYPES = (
    TYPE_PUBLISHER_LIMIT, TYPE_SENDER_POSITION, TYPE_RECEIVER_HWM, TYPE_SUBSCRIBER_POSITION, TYPE_RECEIVER_POSITION,
    TYPE_SENDER_LIMIT, TYPE_PUBLISHER_POSITION, TYPE_SENDER_BPE, TYPE_FC_RECEIVERS,
)


class ChannelStatus(enum.IntEnum):
    """A channel endpoint's status (Aeron's ChannelEndpointStatus), the value of its `snd-channel` /
    `rcv-channel` counter."""

    ERRORED = -1
    INITIALIZING = 0
    ACTIVE = 1
    CLOSING = 2


@dataclass(frozen=True, slots=True)
class CounterRecord:
    """One allocated counter as read at one moment."""

    id: int
    type_id: int
    value: int
    registration_id: int
    owner_id: int
    label: str
    key: bytes  # the whole 112-byte key area; keys shorter than that are followed by zeros

    @property
    def session_id(self) -> int | None:
        """The session id of a per-stream counter (pub-lmt, sub-pos, ...), else None."""
        if self.type_id not in _STREAM_TYPES:
            return None
        value: int = struct.unpack_from("<i", self.key, 8)[0]
        return value

    @property
    def stream_id(self) -> int | None:
        """The stream id of a per-stream counter, else None."""
        if self.type_id not in _STREAM_TYPES:
            return None
        value: int = struct.unpack_from("<i", self.key, 12)[0]
        return value


def _record(c: Any) -> CounterRecord:
    return CounterRecord(
        id=c.id,
        type_id=c.type_id,
        value=c.value,
        registration_id=c.registration_id,
        owner_id=c.owner_id,
        label=ffi.string(c.label, c.label_length).decode("utf-8", "replace"),
        key=bytes(ffi.buffer(c.key, KEY_MAX_LENGTH)),
    )


class CountersReader:
    """A read-only view of the counters of the driver at `aeron_dir` (default `$AERON_DIR` or
    /dev/shm/aeron-<user>), from any process. Lookups scan the allocated counters, as Aeron's
    CountersReader does; `value(id)` reads one value without a scan.

        with CountersReader(aeron_dir) as counters:
            for record in counters.find_by_type_id(1001):
                print(record.id, record.label, record.value)
    """

    __slots__ = ("_ptr", "_info", "aeron_dir")

    def __init__(self, aeron_dir: str | None = None) -> None:
        out = ffi.new("aa_cnc_reader_t **")
        check(lib.aa_cnc_reader_open(out, aeron_dir.encode() if aeron_dir else ffi.NULL), DriverNotFoundError)
        self._ptr: Any = out[0]
        self._info = ffi.new("aa_counter_info_t *")
        self.aeron_dir = aeron_dir

    def _checked(self) -> Any:
        ptr = self._ptr
        if ptr is None:
            raise ClosedError("the counters reader is closed")
        return ptr

    @property
    def max_counter_id(self) -> int:
        """The highest counter id the driver's counters buffer holds."""
        result: int = lib.aa_cnc_reader_max_counter_id(self._checked())
        return result

    def __iter__(self) -> Iterator[CounterRecord]:
        """Every allocated counter, in id order."""
        ptr = self._checked()
        c = self._info
        next_id = 0
        while True:
            found = lib.aa_cnc_reader_next_counter(ptr, next_id, c)
            if found < 0:
                return
            yield _record(c)
            next_id = found + 1

    def counters(self) -> Iterator[CounterRecord]:
        return iter(self)

    def find_by_id(self, counter_id: int) -> CounterRecord | None:
        """The counter with this id, or None when it is not allocated."""
        self._check_id(counter_id)
        rc = lib.aa_cnc_reader_counter(self._checked(), counter_id, self._info)
        return _record(self._info) if rc == 1 else None

    def value(self, counter_id: int) -> int:
        """The current value of counter `counter_id` (whether or not it is allocated)."""
        self._check_id(counter_id)
        result: int = lib.aa_cnc_reader_counter_value(self._checked(), counter_id)
        return result

    def find_by_type_id(self, type_id: int) -> list[CounterRecord]:
        return [r for r in self if r.type_id == type_id]

    def find_by_type_id_and_registration_id(self, type_id: int, registration_id: int) -> CounterRecord | None:
        """The counter of this type with this registration id (Aeron's findByTypeIdAndRegistrationId)."""
        for r in self:
            if r.type_id == type_id and r.registration_id == registration_id:
                return r
        return None

    def find_by_label(self, label: str | re.Pattern[str], *, type_id: int | None = None) -> list[CounterRecord]:
        """Counters whose label equals `label` (a str), or matches it (a compiled pattern, searched)."""
        if isinstance(label, re.Pattern):
            pattern = label
            return [r for r in self if (type_id is None or r.type_id == type_id) and pattern.search(r.label)]
        return [r for r in self if (type_id is None or r.type_id == type_id) and r.label == label]

    def find_by_key(self, key: bytes, *, type_id: int | None = None) -> list[CounterRecord]:
        """Counters whose key starts with these bytes (at most 112)."""
        key = bytes(key)
        if len(key) > KEY_MAX_LENGTH:
            raise ConfigurationError(f"a counter key is at most {KEY_MAX_LENGTH} bytes, got {len(key)}")
        return [r for r in self if (type_id is None or r.type_id == type_id) and r.key.startswith(key)]

    def find_by_owner_id(self, owner_id: int) -> list[CounterRecord]:
        """Counters with this owner id: a client's `add_counter` counters carry its client id (the
        driver's own counters carry 0, which is also the id of a driver's first client)."""
        return [r for r in self if r.owner_id == owner_id]

    def local_socket_addresses(self, channel_status_id: int) -> list[str]:
        """The bound addresses ("host:port") of the channel endpoint whose status counter is
        `channel_status_id`, as Aeron's LocalSocketAddressStatus.findAddresses reads them: from the
        type-14 counters keyed by that id, once the endpoint is ACTIVE."""
        if channel_status_id < 0:
            return []
        if self.value(channel_status_id) != ChannelStatus.ACTIVE:
            return []
        found = []
        for r in self.find_by_type_id(TYPE_LOCAL_SOCKET_ADDRESS):
            status_id, length = struct.unpack_from("<ii", r.key, 0)
            if status_id == channel_status_id and r.value == ChannelStatus.ACTIVE and 0 < length <= KEY_MAX_LENGTH - 8:
                found.append(r.key[8:8 + length].decode("ascii", "replace"))
        return found

    def _check_id(self, counter_id: int) -> None:
        if isinstance(counter_id, bool) or not isinstance(counter_id, int):
            raise TypeError(f"a counter id is an int, got {type(counter_id).__name__}")
        maximum = self.max_counter_id
        if not 0 <= counter_id <= maximum:
            raise ConfigurationError(f"counter id {counter_id} is outside 0..{maximum} (the driver's counters buffer)")

    def close(self) -> None:
        ptr, self._ptr = self._ptr, None
        if ptr is not None:
            lib.aa_cnc_reader_close(ptr)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} aeron_dir={self.aeron_dir!r}{' closed' if self._ptr is None else ''}>"


def encode_counter_key_and_label(key: bytes | bytearray | memoryview | None, label: str) -> tuple[bytes, bytes]:
    """Validate a new counter's key (bytes, at most 112) and label (str, at most 380 bytes UTF-8)."""
    if key is None:
        key_bytes = b""
    elif isinstance(key, (bytes, bytearray, memoryview)):
        key_bytes = bytes(key)
    else:
        raise TypeError(f"a counter key is bytes (at most {KEY_MAX_LENGTH}), got {type(key).__name__}")
    if len(key_bytes) > KEY_MAX_LENGTH:
        raise ConfigurationError(f"a counter key is at most {KEY_MAX_LENGTH} bytes, got {len(key_bytes)}")
    if not isinstance(label, str):
        raise TypeError(f"a counter label is a str, got {type(label).__name__}")
    label_bytes = label.encode()
    if len(label_bytes) > LABEL_MAX_LENGTH:
        raise ConfigurationError(
            f"a counter label is at most {LABEL_MAX_LENGTH} bytes (UTF-8), got {len(label_bytes)}: shorten it"
        )
    return key_bytes, label_bytes


class Counter:
    """A counter this client added (`Aeron.add_counter`): a 64-bit value in the CnC file that any
    process can read (`aeron-async stat`, CountersReader). The driver frees it when it is closed,
    when its client closes, or when its client dies (client liveness timeout).

    `value` reads (acquire) and sets (release) it; `increment()` and `add()` are atomic, so many
    threads may update one counter.
    """

    __slots__ = ("_ptr", "_client", "id", "registration_id", "type_id", "label", "__weakref__")

    def __init__(self, client: Aeron, ptr: Any, type_id: int, label: str) -> None:
        self._client = client
        self._ptr = ptr
        self.id: int = lib.aa_counter_id(ptr)
        self.registration_id: int = lib.aa_counter_registration_id(ptr)
        self.type_id = type_id
        self.label = label

    def _checked(self) -> Any:
        ptr = self._ptr
        if ptr is None:
            raise self._client._closed_error(
                f"counter {self.id} ({self.label!r}) is closed", f"counter {self.id} ({self.label!r})"
            )
        return ptr

    @property
    def value(self) -> int:
        result: int = lib.aa_counter_get(self._checked())
        return result

    @value.setter
    def value(self, value: int) -> None:
        if lib.aa_counter_set(self._checked(), value) < 0:
            raise last_error(ClosedError)

    def increment(self) -> int:
        """Add one atomically; returns the value before."""
        return self.add(1)

    def add(self, delta: int) -> int:
        """Add `delta` atomically; returns the value before."""
        previous = ffi.new("int64_t *")
        if lib.aa_counter_get_and_add(self._checked(), delta, previous) < 0:
            raise last_error(ClosedError)
        result: int = previous[0]
        return result

    @property
    def is_closed(self) -> bool:
        """Closed here, or freed by the driver (its client closed or timed out)."""
        ptr = self._ptr
        return ptr is None or bool(lib.aa_counter_is_closed(ptr))

    def close(self) -> None:
        """Ask the driver to free the counter (once)."""
        ptr, self._ptr = self._ptr, None
        if ptr is not None and self._client._ptr is not None:
            lib.aa_counter_close(ptr)
            try:
                self._client._resources.remove(self)
            except ValueError:
                pass

    def __enter__(self) -> Counter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Counter id={self.id} type={self.type_id} label={self.label!r}{' closed' if self._ptr is None else ''}>"
