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
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import attrs

from ._closing import ClosedOnExit, release_owned
from ._ffi import ffi, lib
from .errors import ClosedError, ConfigurationError, DriverCorruptError, DriverNotFoundError, check, last_error

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
TYPE_PER_IMAGE = 10  # congestion control's per-image counters (rcv-cc-cubic-rtt, rcv-cc-cubic-wnd)
TYPE_CLIENT_HEARTBEAT = 11
TYPE_PUBLISHER_POSITION = 12
TYPE_SENDER_BPE = 13
TYPE_LOCAL_SOCKET_ADDRESS = 14
TYPE_FC_RECEIVERS = 17  # fc-receivers: receivers tracked by a publication's min/tagged flow control

TYPE_RESOLVER_NEIGHBORS = 15  # the driver name resolver's neighbours (reference 3)
TYPE_RESOLVER_CACHE_ENTRIES = 16  # the driver name resolver's cache entries
TYPE_MDC_NUM_DEST = 18  # mdc-num-dest: destinations of an MDC publication

# type id -> the name `aeron-async stat --type` and the exporter's `type` label use
COUNTER_TYPE_NAMES: dict[int, str] = {
    TYPE_SYSTEM: "system", TYPE_PUBLISHER_LIMIT: "pub-lmt", TYPE_SENDER_POSITION: "snd-pos",
    TYPE_RECEIVER_HWM: "rcv-hwm", TYPE_SUBSCRIBER_POSITION: "sub-pos", TYPE_RECEIVER_POSITION: "rcv-pos",
    TYPE_SEND_CHANNEL_STATUS: "snd-channel", TYPE_RECEIVE_CHANNEL_STATUS: "rcv-channel",
    TYPE_SENDER_LIMIT: "snd-lmt", TYPE_PER_IMAGE: "per-image", TYPE_CLIENT_HEARTBEAT: "client-heartbeat",
    TYPE_PUBLISHER_POSITION: "pub-pos", TYPE_SENDER_BPE: "snd-bpe", TYPE_LOCAL_SOCKET_ADDRESS: "local-sockaddr",
    TYPE_RESOLVER_NEIGHBORS: "resolver-neighbors", TYPE_RESOLVER_CACHE_ENTRIES: "resolver-cache-entries",
    TYPE_FC_RECEIVERS: "fc-receivers", TYPE_MDC_NUM_DEST: "mdc-num-dest",
}
# stream positions in bytes: their rate of change is a throughput
POSITION_TYPES = frozenset({
    TYPE_PUBLISHER_LIMIT, TYPE_SENDER_POSITION, TYPE_RECEIVER_HWM, TYPE_SUBSCRIBER_POSITION, TYPE_RECEIVER_POSITION,
    TYPE_SENDER_LIMIT, TYPE_PUBLISHER_POSITION,
})

# System counters (type 0) by id, Aeron's SystemCounterDescriptor order (reference 9.4): Aeron's name
# of each, which the exporter gives it (aeron_<name>) unless exporter.py's SYSTEM_METRICS renames it
# to Prometheus' conventions. Those in SYSTEM_GAUGES go up and down; the others only count.
SYSTEM_COUNTER_NAMES: dict[int, str] = dict(enumerate((
    "bytes_sent", "bytes_received", "receiver_proxy_fails", "sender_proxy_fails", "conductor_proxy_fails",
    "nak_messages_sent", "nak_messages_received", "status_messages_sent", "status_messages_received",
    "heartbeats_sent", "heartbeats_received", "retransmits_sent", "flow_control_under_runs",
    "flow_control_over_runs", "invalid_packets", "errors", "short_sends", "free_fails",
    "sender_flow_control_limits", "unblocked_publications", "unblocked_commands", "possible_ttl_asymmetry",
    "controllable_idle_strategy", "loss_gap_fills", "client_timeouts", "resolution_changes",
    "conductor_max_cycle_time_ns", "conductor_cycle_time_threshold_exceeded", "sender_max_cycle_time_ns",
    "sender_cycle_time_threshold_exceeded", "receiver_max_cycle_time_ns", "receiver_cycle_time_threshold_exceeded",
    "name_resolver_max_time_ns", "name_resolver_time_threshold_exceeded", "version", "bytes_currently_mapped",
    "retransmitted_bytes", "retransmit_overflow", "error_frames_received", "error_frames_sent",
    "publications_revoked", "publication_images_revoked", "images_rejected", "invalid_client_commands",
)))
SYSTEM_GAUGES = frozenset({22, 26, 28, 30, 32, 34, 35})
SYSTEM_COUNTER_VERSION = 34

KEY_MAX_LENGTH = 112
LABEL_MAX_LENGTH = 380

# Counters whose key is not (registration id, session id, stream id, channel).
_NOT_STREAM_TYPES = (
    TYPE_SYSTEM, TYPE_CLIENT_HEARTBEAT, TYPE_SEND_CHANNEL_STATUS, TYPE_RECEIVE_CHANNEL_STATUS, TYPE_LOCAL_SOCKET_ADDRESS
)
_STREAM_TYPES = (
    TYPE_PUBLISHER_LIMIT, TYPE_SENDER_POSITION, TYPE_RECEIVER_HWM, TYPE_SUBSCRIBER_POSITION, TYPE_RECEIVER_POSITION,
    TYPE_SENDER_LIMIT, TYPE_PUBLISHER_POSITION, TYPE_SENDER_BPE, TYPE_PER_IMAGE, TYPE_FC_RECEIVERS,
)


class ChannelStatus(enum.IntEnum):
    """A channel endpoint's status (Aeron's ChannelEndpointStatus), the value of its `snd-channel` /
    `rcv-channel` counter."""

    ERRORED = -1
    INITIALIZING = 0
    ACTIVE = 1
    CLOSING = 2


@attrs.frozen
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
        return self._stream_key_field(8)

    @property
    def stream_id(self) -> int | None:
        """The stream id of a per-stream counter, else None."""
        return self._stream_key_field(12)

    def _stream_key_field(self, offset: int) -> int | None:
        """The int32 at `offset` of a per-stream counter's key, else None."""
        if self.type_id not in _STREAM_TYPES:
            return None
        value: int = struct.unpack_from("<i", self.key, offset)[0]
        return value

    @property
    def type_name(self) -> str:
        """The name of the counter's type (its label prefix, e.g. "pub-lmt"; "system" for type 0;
        "type-<id>" for a type this library does not name, such as an application's)."""
        return COUNTER_TYPE_NAMES.get(self.type_id, f"type-{self.type_id}")

    @property
    def channel(self) -> str | None:
        """The channel of a per-stream or channel-endpoint counter, else None. Whole from the label
        (the key keeps at most 92 bytes of it), from the key where the label does not hold it."""
        if self.type_id in _STREAM_TYPES:
            match = _STREAM_LABEL.match(self.label)
            if match:
                return match.group(1)
            return _key_string(self.key, 16)
        if self.type_id in (TYPE_SEND_CHANNEL_STATUS, TYPE_RECEIVE_CHANNEL_STATUS):
            name, sep, rest = self.label.partition(": ")
            if sep and rest:
                return rest
            return _key_string(self.key, 0)
        return None

    @property
    def system_counter_id(self) -> int | None:
        """The id of a system counter (type 0, keyed by it: Aeron's SystemCounterDescriptor id)."""
        if self.type_id != TYPE_SYSTEM:
            return None
        value: int = struct.unpack_from("<i", self.key, 0)[0]
        return value

    @property
    def kind(self) -> str:
        """"position" (a stream position in bytes), "count" (a count that only grows: bytes, NAKs,
        back-pressure events...) or "gauge" (anything else: limits aside, statuses, timestamps,
        maxima). `stat` shows the rate of change of positions and counts."""
        if self.type_id in POSITION_TYPES:
            return "position"
        if self.type_id == TYPE_SENDER_BPE:
            return "count"
        if self.type_id == TYPE_SYSTEM:
            return "gauge" if self.system_counter_id in SYSTEM_GAUGES else "count"
        return "gauge"


# "<name>: <registration id> <session id> <stream id> <channel>[ @<join position>]" (per-stream labels)
_STREAM_LABEL = re.compile(r"^[^:]+: -?\d+ -?\d+ -?\d+ (\S+)")


def _key_string(key: bytes, offset: int) -> str | None:
    length: int = struct.unpack_from("<i", key, offset)[0]
    if not 0 < length <= len(key) - offset - 4:
        return None
    return key[offset + 4:offset + 4 + length].decode("utf-8", "replace")


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


class CountersReader(ClosedOnExit):
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
            if found == -2:
                raise last_error(DriverCorruptError)
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
        if rc < 0:
            raise last_error(DriverCorruptError)
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

    def select(self, counter_filter: CounterFilter | None = None, **criteria: Any) -> list[CounterRecord]:
        """The allocated counters that match a CounterFilter, or the same criteria as keywords
        (`types`, `label`, `channel`, `stream_id`, `session_id`, see CounterFilter)::

            reader.select(types=["pub-pos"], channel=r"^aeron:udp", stream_id=10)
        """
        if counter_filter is None:
            counter_filter = CounterFilter(**criteria)
        elif criteria:
            raise TypeError("give a CounterFilter or keyword criteria, not both")
        return [r for r in self if counter_filter.matches(r)]

    def values(self) -> dict[int, int]:
        """Every allocated counter's value by counter id, read in one pass."""
        return {r.id: r.value for r in self}

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


class Counter(ClosedOnExit):
    """A counter this client added (`Aeron.add_counter`): a 64-bit value in the CnC file that any
    process can read (`aeron-async stat`, CountersReader). The driver frees it when it is closed,
    when its client closes, or when its client dies (client liveness timeout). A static counter
    (`Aeron.add_static_counter`) is the driver's: closing it closes this handle only.

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
        """Ask the driver to free the counter (once); a static counter's handle closes, the counter stays."""
        release_owned(self, lib.aa_counter_close)

    def __repr__(self) -> str:
        return f"<Counter id={self.id} type={self.type_id} label={self.label!r}{' closed' if self._ptr is None else ''}>"


# ---- selecting counters and their rates (`aeron-async stat`, the exporter, health checks; docs/api.md,
# "Counters from Python") ----


def parse_counter_type(value: int | str) -> int:
    """A counter type id from an id or a name of COUNTER_TYPE_NAMES ("pub-pos", "system", "type-1001")."""
    if isinstance(value, bool):
        raise TypeError("a counter type is an int id or a name such as 'pub-pos'")
    if isinstance(value, int):
        return value
    text = value.strip().lower()
    for type_id, name in COUNTER_TYPE_NAMES.items():
        if text == name:
            return type_id
    number = text.removeprefix("type-")
    if number.lstrip("-").isdigit():
        return int(number)
    names = ", ".join(sorted(COUNTER_TYPE_NAMES.values()))
    raise ConfigurationError(f"unknown counter type {value!r}: give a type id (e.g. 12) or one of {names}")


def _pattern(value: str | re.Pattern[str] | None, what: str) -> re.Pattern[str] | None:
    if value is None or isinstance(value, re.Pattern):
        return value
    try:
        return re.compile(value)
    except re.error as exc:
        raise ConfigurationError(f"{what} {value!r} is not a valid regular expression: {exc}") from None


@attrs.frozen(init=False)
class CounterFilter:
    """Which counters to take, as AeronStat's filters: every criterion given must hold.

    `types`: type ids or names ("pub-pos", "system"); `label`, `channel`: regular expressions searched
    in the label / the counter's channel (counters without a channel never match a channel filter);
    `stream_id`, `session_id`: equal to the per-stream counter's (other counters never match)."""

    types: frozenset[int] | None = None
    label: re.Pattern[str] | None = None
    channel: re.Pattern[str] | None = None
    stream_id: int | None = None
    session_id: int | None = None

    def __init__(self, types: Iterable[int | str] | None = None, label: str | re.Pattern[str] | None = None,
                 channel: str | re.Pattern[str] | None = None, stream_id: int | None = None,
                 session_id: int | None = None) -> None:
        if isinstance(types, (str, int)):
            types = [types]
        object.__setattr__(self, "types", None if types is None else frozenset(parse_counter_type(t) for t in types))
        object.__setattr__(self, "label", _pattern(label, "label filter"))
        object.__setattr__(self, "channel", _pattern(channel, "channel filter"))
        object.__setattr__(self, "stream_id", stream_id)
        object.__setattr__(self, "session_id", session_id)

    def matches(self, record: CounterRecord) -> bool:
        if self.types is not None and record.type_id not in self.types:
            return False
        if self.label is not None and not self.label.search(record.label):
            return False
        if self.channel is not None:
            channel = record.channel
            if channel is None or not self.channel.search(channel):
                return False
        if self.stream_id is not None and record.stream_id != self.stream_id:
            return False
        if self.session_id is not None and record.session_id != self.session_id:
            return False
        return True


@attrs.frozen
class CounterSample:
    """A counter as read by a CounterRates sample, with its rate of change per second since the
    previous sample (None for gauges, and for a counter not seen in the previous sample)."""

    record: CounterRecord
    rate: float | None


@attrs.frozen
class CountersSnapshot:
    """One read of the selected counters: `time` from the sampler's monotonic clock, `interval`
    the seconds since the previous sample (None for the first)."""

    time: float
    interval: float | None
    samples: list[CounterSample] = attrs.field(factory=list)

    def by_id(self) -> dict[int, CounterSample]:
        return {s.record.id: s for s in self.samples}


class CounterRates:
    """Rates of change of counters between reads: each `sample()` reads the selected counters and
    gives every position and count counter its change per second since the previous sample, timed
    with a monotonic clock. A counter id freed and reused for another counter (another registration
    id or type) starts afresh.

        rates = CounterRates(reader, CounterFilter(types=["pub-pos"]))
        rates.sample(); time.sleep(1.0)
        for s in rates.sample().samples:
            print(s.record.label, s.rate, "bytes/s")
    """

    __slots__ = ("reader", "counter_filter", "_clock", "_last", "_last_time")

    def __init__(self, reader: CountersReader, counter_filter: CounterFilter | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.reader = reader
        self.counter_filter = counter_filter or CounterFilter()
        self._clock = clock
        self._last: dict[int, tuple[int, int, int]] = {}  # id -> (registration id, type id, value)
        self._last_time: float | None = None

    def sample(self) -> CountersSnapshot:
        now = self._clock()
        records = self.reader.select(self.counter_filter)
        interval = None if self._last_time is None else now - self._last_time
        samples = []
        current: dict[int, tuple[int, int, int]] = {}
        for r in records:
            current[r.id] = (r.registration_id, r.type_id, r.value)
            rate = None
            before = self._last.get(r.id)
            if (interval is not None and interval > 0 and before is not None and before[:2] == (r.registration_id, r.type_id)
                    and r.kind != "gauge"):
                rate = (r.value - before[2]) / interval
            samples.append(CounterSample(r, rate))
        self._last = current
        self._last_time = now
        return CountersSnapshot(now, interval, samples)
