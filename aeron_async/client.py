"""The synchronous client: connect to a driver, add publications and subscriptions, offer and poll.

Threading: a client's conductor runs on a native thread (or, with `use_conductor_invoker=True`, in
`Aeron.do_work`). A concurrent `Publication` may be offered from many threads at once; an
`ExclusivePublication` and a `Subscription` belong to one thread at a time.
"""

from __future__ import annotations

import enum
import os
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar, overload

from . import _speedups
from ._closing import ClosedOnExit
from ._ffi import ffi, lib
from .counters import ChannelStatus, Counter, CountersReader, encode_counter_key_and_label
from .image import Image as Image
from .publication_errors import PublicationErrorFrame
from .errors import (
    AeronError,
    ClientTimeoutError,
    ClosedError,
    DriverCorruptError,
    DriverTimeoutError,
    InvalidArgumentError,
    MessageTooLongError,
    RegistrationError,
    DRIVER_CORRUPT,
    check,
    last_error,
    used_after_fork_error,
)


def _address_of(pointer: Any) -> int:
    return int(ffi.cast("uintptr_t", pointer))


def _raise_last_error() -> None:
    raise last_error()


# The message path (offer, poll_messages, Message) is C: aeron_async._speedups, bound here to the
# native core's table of message-path functions.
_speedups.bind(_address_of(lib.aa_fastpath_api()), _address_of, _raise_last_error)

Message = _speedups.Message
# Aeron's fragment-handler API, in C (_native/python/aa_poll.c): see Subscription.poll.
Header = _speedups.Header
FragmentAssembler = _speedups.FragmentAssembler
ControlledFragmentAssembler = _speedups.ControlledFragmentAssembler


class ControlledPollAction(enum.IntEnum):
    """What a controlled handler (`controlled_poll`) returns for each fragment, as in Aeron.

    ABORT: leave this fragment unconsumed and stop (it is delivered again by the next poll).
    BREAK: consume it and stop. COMMIT: consume it and store the subscriber position at once (a
    poll stores it once, when it ends, otherwise). CONTINUE: consume it and go on.
    """

    ABORT = _speedups.ABORT
    BREAK = _speedups.BREAK
    COMMIT = _speedups.COMMIT
    CONTINUE = _speedups.CONTINUE


FragmentHandler = Callable[[memoryview, _speedups.Header], object]
ControlledFragmentHandler = Callable[[memoryview, _speedups.Header], int]
BlockHandler = Callable[[memoryview, int, int, int, int], object]

_T = TypeVar("_T")


class OfferResult(enum.IntEnum):
    """Negative results of offer/try_claim; a non-negative result is the new stream position."""

    NOT_CONNECTED = -1
    BACK_PRESSURED = -2
    ADMIN_ACTION = -3
    CLOSED = -4
    MAX_POSITION_EXCEEDED = -5


NOT_CONNECTED = OfferResult.NOT_CONNECTED
BACK_PRESSURED = OfferResult.BACK_PRESSURED
ADMIN_ACTION = OfferResult.ADMIN_ACTION
CLOSED = OfferResult.CLOSED
MAX_POSITION_EXCEEDED = OfferResult.MAX_POSITION_EXCEEDED

_ERROR = -6
_STATE_ACTIVE = 0
_STATE_DRIVER_TIMEOUT = 2
_STATE_CLIENT_TIMEOUT = 3
_STATE_DRIVER_CORRUPT = 4

DEFAULT_WAKE_SPIN = lib.AA_CLIENT_WAKE_SPIN_DEFAULT_NS / 1e9  # seconds
MAX_WAKE_SPIN = 0.01


def check_wake_spin(wake_spin: object) -> None:
    """Raise InvalidArgumentError (a ValueError) unless `wake_spin` is a number of seconds from 0 to
    MAX_WAKE_SPIN."""
    if isinstance(wake_spin, bool) or not isinstance(wake_spin, (int, float)) or not 0 <= wake_spin <= MAX_WAKE_SPIN:
        raise InvalidArgumentError(
            f"wake_spin={wake_spin!r}: give seconds from 0 (off) to {MAX_WAKE_SPIN} (default {DEFAULT_WAKE_SPIN})"
        )


# Clients alive in this process: a child made by fork() detaches its copies of them (and of their
# publications, subscriptions and counters) at once, so that using one raises UsedAfterForkError
# from the error path the closed resource already takes. The message path checks nothing more.
_live_clients: weakref.WeakSet[Aeron] = weakref.WeakSet()


def _detach_clients_after_fork() -> None:
    for client in list(_live_clients):
        client._detach_after_fork()
    _live_clients.clear()


os.register_at_fork(after_in_child=_detach_clients_after_fork)


class Aeron(ClosedOnExit):
    """A client connected to a media driver through its CnC file.

    A client belongs to the process that connected it: in a child made by fork() it (and its
    publications, subscriptions and counters) raise UsedAfterForkError; connect a new client in
    the child. Closing the parent's objects in the child only forgets them.
    """

    __slots__ = ("_ptr", "_lock", "_invoker", "aeron_dir", "driver_timeout", "_resources", "_forked_from",
                 "_counters_reader", "on_publication_error", "__weakref__")

    def __init__(self, ptr: Any, invoker: bool, driver_timeout: float) -> None:
        self._ptr = ptr
        self._lock = threading.Lock()
        self._invoker = invoker
        self.aeron_dir = ffi.string(lib.aa_client_aeron_dir(ptr)).decode()
        self.driver_timeout = driver_timeout
        self._resources: list[Publication | Subscription | Counter] = []
        self._forked_from = 0
        self._counters_reader: CountersReader | None = None
        # called by poll_publication_errors (Aeron's publicationErrorFrameHandler)
        self.on_publication_error: Callable[[PublicationErrorFrame], None] | None = None
        _live_clients.add(self)

    @classmethod
    def connect(
        cls,
        aeron_dir: str | None = None,
        *,
        driver_timeout: float = 10.0,
        use_conductor_invoker: bool = False,
        idle_strategy: str | None = None,
        wake_spin: float = DEFAULT_WAKE_SPIN,
    ) -> Aeron:
        """Connect to the driver at `aeron_dir` (default `$AERON_DIR` or /dev/shm/aeron-<user>).

        Raises DriverNotFoundError when no live driver is there. `driver_timeout` (seconds) bounds
        every wait for the driver and how long a silent driver is tolerated.

        `wake_spin` (seconds, at most 0.01; 0 turns it off) is the longest the client conductor
        thread stays awake, yielding the CPU, after it wakes an async waiter. The window adapts:
        it grows while wake-ups follow each other closely (request/response) and shrinks to
        nothing when they are sparse. On VMs, where waking a halted CPU costs tens of
        microseconds, it cuts async round trips several-fold (docs/benchmarks.md).
        """
        check_wake_spin(wake_spin)
        out = ffi.new("aa_client_t **")
        check(
            lib.aa_client_connect(
                out,
                aeron_dir.encode() if aeron_dir else ffi.NULL,
                int(driver_timeout * 1000),
                use_conductor_invoker,
                idle_strategy.encode() if idle_strategy else ffi.NULL,
            )
        )
        lib.aa_client_set_wake_spin_ns(out[0], round(wake_spin * 1e9))
        return cls(out[0], use_conductor_invoker, driver_timeout)

    # ---- state ----

    def _detach_after_fork(self) -> None:
        """In a forked child: drop the native handles without touching them (the conductor thread
        they belong to does not exist here), so every later use raises UsedAfterForkError."""
        self._forked_from = os.getppid()
        self._lock = threading.Lock()
        self._ptr = None
        for resource in self._resources:
            resource._ptr = None
        self._resources.clear()

    def _closed_error(self, message: str, what: str = "") -> AeronError:
        """ClosedError(message), or UsedAfterForkError about `what` (one of this client's resources)
        in a child forked after this client connected."""
        if self._forked_from:
            owner = f"the Aeron client of {self.aeron_dir}"
            return used_after_fork_error(f"{what} of {owner}" if what else owner, self._forked_from)
        return ClosedError(message)

    def _checked_ptr(self) -> Any:
        ptr = self._ptr
        if ptr is None:
            raise self._closed_error("the Aeron client is closed; connect a new one")
        state = lib.aa_client_state(ptr)
        if state != _STATE_ACTIVE:
            raise self._state_error(state)
        return ptr

    def _state_error(self, state: int) -> AeronError:
        message = ffi.string(lib.aa_client_state_message(self._ptr)).decode() if self._ptr is not None else ""
        if state == _STATE_DRIVER_TIMEOUT:
            return DriverTimeoutError(message or "the media driver stopped answering")
        if state == _STATE_CLIENT_TIMEOUT:
            return ClientTimeoutError(message or "the media driver timed this client out")
        if state == _STATE_DRIVER_CORRUPT:
            return DriverCorruptError(message or "the media driver's CnC file is corrupt; restart the driver", DRIVER_CORRUPT)
        return ClosedError("the Aeron client is closed; connect a new one")

    def _raise_if_dead(self) -> None:
        """Raise the reason a resource was closed from under its owner (driver or client timeout)."""
        if self._ptr is None:
            raise self._closed_error("the Aeron client is closed; connect a new one")
        state = lib.aa_client_state(self._ptr)
        if state != _STATE_ACTIVE:
            raise self._state_error(state)

    @property
    def client_id(self) -> int:
        return lib.aa_client_id(self._checked_ptr())

    @property
    def is_closed(self) -> bool:
        return self._ptr is None

    def do_work(self) -> int:
        """Run the client conductor once (only needed with use_conductor_invoker=True)."""
        return lib.aa_client_do_work(self._checked_ptr())

    # ---- registrations ----

    def async_add_publication(self, channel: str, stream_id: int, exclusive: bool = False) -> int:
        """Start adding a publication; returns a registration id for `poll_add_publication`."""
        return check(lib.aa_client_async_add_publication(self._checked_ptr(), _channel(channel), stream_id, exclusive))

    @overload
    def poll_add_publication(self, registration_id: int, exclusive: Literal[False] = False) -> Publication | None: ...
    @overload
    def poll_add_publication(self, registration_id: int, exclusive: Literal[True]) -> ExclusivePublication | None: ...
    @overload
    def poll_add_publication(self, registration_id: int, exclusive: bool) -> Publication | None: ...
    def poll_add_publication(self, registration_id: int, exclusive: bool = False) -> Publication | None:
        out = ffi.new("aa_publication_t **")
        rc = lib.aa_client_async_add_publication_poll(self._checked_ptr(), registration_id, out)
        if rc == 0:
            return None
        if rc < 0:
            raise last_error(RegistrationError)
        pub = (ExclusivePublication if exclusive else Publication)(self, out[0])
        self._resources.append(pub)
        return pub

    def async_add_subscription(self, channel: str, stream_id: int) -> int:
        return check(lib.aa_client_async_add_subscription(self._checked_ptr(), _channel(channel), stream_id))

    def poll_add_subscription(
        self,
        registration_id: int,
        on_available_image: Callable[[Image], None] | None = None,
        on_unavailable_image: Callable[[Image], None] | None = None,
    ) -> Subscription | None:
        out = ffi.new("aa_subscription_t **")
        rc = lib.aa_client_async_add_subscription_poll(self._checked_ptr(), registration_id, out)
        if rc == 0:
            return None
        if rc < 0:
            raise last_error(RegistrationError)
        sub = Subscription(self, out[0], registration_id, on_available_image, on_unavailable_image)
        self._resources.append(sub)
        return sub

    def _await_registration(self, poll: Callable[[], _T | None]) -> _T:
        deadline = time.monotonic() + self.driver_timeout + 1.0
        pause = 0.0
        while True:
            result = poll()
            if result is not None:
                return result
            if time.monotonic() > deadline:
                raise DriverTimeoutError(
                    f"no response from the media driver at {self.aeron_dir} within {self.driver_timeout} s"
                )
            if pause:
                time.sleep(pause)
            pause = min(0.001, pause * 2 if pause else 0.00005)

    def add_publication(self, channel: str, stream_id: int) -> Publication:
        """Add (or join) the concurrent publication for channel + stream; returns when it is ready."""
        registration_id = self.async_add_publication(channel, stream_id, False)
        return self._await_registration(lambda: self.poll_add_publication(registration_id))

    def add_exclusive_publication(self, channel: str, stream_id: int) -> ExclusivePublication:
        """Add a publication with its own session id, for one writer thread."""
        registration_id = self.async_add_publication(channel, stream_id, True)
        return self._await_registration(lambda: self.poll_add_publication(registration_id, True))

    def add_subscription(
        self,
        channel: str,
        stream_id: int,
        *,
        on_available_image: Callable[[Image], None] | None = None,
        on_unavailable_image: Callable[[Image], None] | None = None,
    ) -> Subscription:
        """Subscribe to channel + stream; image callbacks run in the polling thread, during `poll`."""
        registration_id = self.async_add_subscription(channel, stream_id)
        return self._await_registration(
            lambda: self.poll_add_subscription(registration_id, on_available_image, on_unavailable_image)
        )

    def poll_destination(self, correlation_id: int) -> bool | None:
        """The driver's answer to a destination command (`Publication.async_add_destination` and the
        like): True once applied, None while unanswered; raises the driver's refusal (InvalidChannelError
        for bad input, RegistrationError otherwise) or DriverTimeoutError."""
        rc = lib.aa_client_async_destination_poll(self._checked_ptr(), correlation_id)
        if rc == 0:
            return None
        if rc < 0:
            raise last_error(RegistrationError)
        return True

    # ---- publication errors (aeron-wave3.md 4.2) ----

    def poll_publication_errors(self) -> list[PublicationErrorFrame]:
        """The publication errors of this client's publications since the last call, oldest first:
        a receiver rejected one of their images (`Image.reject`; its ERR frame, or an IPC reject). Each is
        handed to `on_publication_error` (Aeron's publication error frame handler) when that is set, in
        the calling thread; the list is returned too. The client keeps the last 64 between calls."""
        ptr = self._checked_ptr()
        frames: list[PublicationErrorFrame] = []
        out = ffi.new("aa_publication_error_info_t[16]")
        while True:
            n = lib.aa_client_take_publication_errors(ptr, out, 16, ffi.NULL)
            frames.extend(PublicationErrorFrame._from_native(out[i]) for i in range(n))
            if n < 16:
                break
        handler = self.on_publication_error
        if handler is not None:
            for frame in frames:
                handler(frame)
        return frames

    # ---- counters ----

    @staticmethod
    def _check_type_id(type_id: int) -> None:
        if isinstance(type_id, bool) or not isinstance(type_id, int) or not -(2**31) <= type_id < 2**31:
            raise TypeError(f"a counter type id is an int32, got {type_id!r}")

    def async_add_counter(self, type_id: int, key: bytes = b"", label: str = "") -> int:
        """Start adding a counter; returns a registration id for `poll_add_counter`."""
        self._check_type_id(type_id)
        key_bytes, label_bytes = encode_counter_key_and_label(key, label)
        return check(lib.aa_client_async_add_counter(
            self._checked_ptr(), type_id, key_bytes, len(key_bytes), label_bytes, len(label_bytes)))

    def async_add_static_counter(self, type_id: int, registration_id: int, key: bytes = b"", label: str = "") -> int:
        """Start adding a static counter; returns a correlation id for `poll_add_counter`."""
        self._check_type_id(type_id)
        if isinstance(registration_id, bool) or not isinstance(registration_id, int) or \
                not -(2**63) <= registration_id < 2**63:
            raise TypeError(f"a static counter's registration id is an int64, got {registration_id!r}")
        key_bytes, label_bytes = encode_counter_key_and_label(key, label)
        return check(lib.aa_client_async_add_static_counter(
            self._checked_ptr(), type_id, key_bytes, len(key_bytes), label_bytes, len(label_bytes), registration_id))

    def poll_add_counter(self, registration_id: int) -> Counter | None:
        """The counter of `async_add_counter` or `async_add_static_counter` once the driver answered,
        else None."""
        out = ffi.new("aa_counter_t **")
        rc = lib.aa_client_async_add_counter_poll(self._checked_ptr(), registration_id, out)
        if rc == 0:
            return None
        if rc < 0:
            raise last_error(RegistrationError)
        record = self.counters_reader.find_by_id(lib.aa_counter_id(out[0]))
        counter = Counter(self, out[0], record.type_id if record else 0, record.label if record else "")
        self._resources.append(counter)
        return counter

    def add_counter(self, type_id: int, key: bytes = b"", label: str = "") -> Counter:
        """Allocate a counter in the driver's counters (Aeron's addCounter): `type_id` an int32 of
        the application's choosing, `key` up to 112 bytes, `label` up to 380 bytes. It is owned by
        this client: the driver frees it when it is closed, when this client closes, or when this
        client dies (client liveness timeout). Any process reads it (CountersReader, `aeron-async stat`)."""
        registration_id = self.async_add_counter(type_id, key, label)
        counter: Counter = self._await_registration(lambda: self.poll_add_counter(registration_id))
        return counter

    def add_static_counter(self, type_id: int, registration_id: int, key: bytes = b"", label: str = "") -> Counter:
        """A static counter (Aeron's addStaticCounter): the one counter of `type_id` (use 1000 or
        above; lower ids are Aeron's) and `registration_id` (an int64 of the application's choosing)
        in the driver. The first call allocates it with `key` and `label`; later calls, from any
        client, get that same counter (its key and label unchanged). No client owns it: closing the
        Counter closes this handle only, and it outlives this client; it goes with the driver. Its
        `registration_id` is the one given. A counter of `add_counter` with that type id and
        registration id makes this raise RegistrationError."""
        correlation_id = self.async_add_static_counter(type_id, registration_id, key, label)
        counter: Counter = self._await_registration(lambda: self.poll_add_counter(correlation_id))
        return counter

    # ---- session ids ----

    def async_next_session_id(self, stream_id: int) -> int:
        """Start a next session id request; returns a correlation id for `poll_next_session_id`."""
        if isinstance(stream_id, bool) or not isinstance(stream_id, int) or not -(2**31) <= stream_id < 2**31:
            raise TypeError(f"a stream id is an int32, got {stream_id!r}")
        return check(lib.aa_client_async_next_session_id(self._checked_ptr(), stream_id))

    def poll_next_session_id(self, correlation_id: int) -> int | None:
        out = ffi.new("int32_t *")
        rc = lib.aa_client_async_next_session_id_poll(self._checked_ptr(), correlation_id, out)
        if rc == 0:
            return None
        if rc < 0:
            raise last_error(RegistrationError)
        session_id: int = out[0]
        return session_id

    def next_session_id(self, stream_id: int) -> int:
        """A session id that no publication of `stream_id` holds on the driver (Aeron's
        nextSessionId), e.g. for a `session-id=` of a new publication's channel. The driver hands
        ids out from one counter, so consecutive requests get consecutive ids (skipping the reserved
        range and ids in use)."""
        correlation_id = self.async_next_session_id(stream_id)
        session_id: int = self._await_registration(lambda: self.poll_next_session_id(correlation_id))
        return session_id

    @property
    def counters_reader(self) -> CountersReader:
        """A reader of the driver's counters (this client's own mapping of them, closed with it)."""
        reader = self._counters_reader
        if reader is None:
            self._checked_ptr()
            reader = self._counters_reader = CountersReader(self.aeron_dir)
        return reader

    def _counter_value(self, counter_id: int) -> int:
        value: int = lib.aa_client_counter_value(self._checked_ptr(), counter_id)
        return value

    def _channel_status(self, status_id: int) -> ChannelStatus | int:
        if status_id < 0:
            return ChannelStatus.ACTIVE  # IPC and spies have no endpoint: always active, as in Aeron
        value = self._counter_value(status_id)
        try:
            return ChannelStatus(value)
        except ValueError:
            return value

    def _local_socket_addresses(self, status_id: int) -> list[str]:
        self._checked_ptr()
        return self.counters_reader.local_socket_addresses(status_id)

    # ---- lifecycle ----

    def close(self) -> None:
        with self._lock:
            ptr, self._ptr = self._ptr, None
        if ptr is not None:
            for resource in self._resources:
                resource._ptr = None
            self._resources.clear()
            lib.aa_client_close(ptr)
            reader, self._counters_reader = self._counters_reader, None
            if reader is not None:
                reader.close()

    def __repr__(self) -> str:
        return f"<Aeron aeron_dir={self.aeron_dir!r} {'closed' if self._ptr is None else 'connected'}>"


def _channel(channel: str) -> bytes:
    if not isinstance(channel, str):
        raise TypeError(f"channel must be a str such as 'aeron:ipc', got {type(channel).__name__}")
    return channel.encode()


class Publication(_speedups.PublicationBase):
    """A concurrent publication: many threads (and publications on the same channel + stream in
    this driver) share one session and append with an atomic claim on the log's tail.

    `offer(data, reserved_value=0)` appends one message (any contiguous bytes-like object) and
    returns the new stream position, or a negative OfferResult: NOT_CONNECTED, BACK_PRESSURED or
    ADMIN_ACTION (retry), MAX_POSITION_EXCEEDED. `offer_batch(messages)` appends a list of messages
    in one call and returns how many went in (or the negative OfferResult when none did). Both are
    C methods (aeron_async._speedups) that call back `_fail` for closed publications and errors.
    """

    __slots__ = (
        "_client", "registration_id", "session_id", "stream_id", "max_message_length",
        "max_payload_length", "term_length", "initial_term_id", "position_limit_counter_id", "channel",
        "__weakref__",
    )
    registration_id: int
    session_id: int
    stream_id: int
    max_message_length: int
    max_payload_length: int
    term_length: int
    initial_term_id: int
    position_limit_counter_id: int
    channel: str

    def __init__(self, client: Aeron, ptr: Any) -> None:
        self._client = client
        self._ptr = ptr
        reg = ffi.new("int64_t *")
        ints = [ffi.new("int32_t *") for _ in range(7)]
        lib.aa_publication_describe(ptr, reg, *ints)
        self.registration_id = reg[0]
        (self.session_id, self.stream_id, self.max_message_length, self.max_payload_length,
         self.term_length, self.initial_term_id, self.position_limit_counter_id) = (p[0] for p in ints)
        self.channel = ""

    def _checked(self) -> Any:
        ptr = self._ptr
        if ptr is None:
            raise self._client._closed_error(
                f"publication {self.registration_id} (stream {self.stream_id}) is closed",
                f"publication {self.registration_id} (stream {self.stream_id})")
        return ptr

    def _fail(self, rc: int) -> int:
        """A result below ADMIN_ACTION: raise for errors and closure, return MAX_POSITION_EXCEEDED."""
        if self._ptr is None:
            raise self._client._closed_error(
                f"publication {self.registration_id} (stream {self.stream_id}) is closed",
                f"publication {self.registration_id} (stream {self.stream_id})")
        if rc == _ERROR:
            raise last_error(MessageTooLongError)
        if rc == OfferResult.CLOSED:
            self._client._raise_if_dead()
            raise ClosedError(f"publication {self.registration_id} (stream {self.stream_id}) is closed")
        return rc

    def offer_vectors(self, buffers: Sequence[Any], reserved_value: int = 0) -> int:
        """Append one message gathered from several buffers, without joining them first."""
        ptr = self._checked()
        count = len(buffers)
        iov = ffi.new("aa_iovec_t[]", count)
        keep = []
        for i, b in enumerate(buffers):
            cb = ffi.from_buffer("uint8_t[]", b)
            keep.append(cb)
            iov[i].base = cb
            iov[i].length = len(cb)
        rc = lib.aa_publication_offerv(ptr, iov, count, reserved_value)
        if rc < -3:
            return self._fail(rc)
        return rc

    def try_claim(self, length: int) -> BufferClaim | int:
        """Claim `length` bytes (at most max_payload_length) to fill in place. Returns a BufferClaim
        (commit or abort it) or a negative OfferResult."""
        ptr = self._checked()
        claim = ffi.new("aa_buffer_claim_t *")
        rc = lib.aa_publication_try_claim(ptr, length, claim)
        if rc < 0:
            if rc < -3:
                return self._fail(rc)
            return rc
        return BufferClaim(claim, rc)

    @property
    def is_connected(self) -> bool:
        ptr = self._ptr
        return ptr is not None and bool(lib.aa_publication_is_connected(ptr))

    @property
    def is_closed(self) -> bool:
        return self._ptr is None or bool(lib.aa_publication_is_closed(self._ptr))

    @property
    def position(self) -> int:
        return lib.aa_publication_position(self._checked())

    @property
    def position_limit(self) -> int:
        return lib.aa_publication_position_limit(self._checked())

    # ---- wake-ups for aeron_async.aio (an eventfd written instead of a poll) ----

    @property
    def _released(self) -> bool:
        """True once this publication was closed here (its native handle let go)."""
        return self._ptr is None

    def _notify(self, fd: int) -> None:
        """Write to `fd` when the publisher limit passes a parked position, or on closing."""
        lib.aa_publication_set_notify_fd(self._checked(), fd)

    def _park(self) -> bool:
        """Park at the current position: True when a waiter should wait for the notify fd, False
        when the limit has passed that position already or the publication closed."""
        ptr = self._checked()
        position = lib.aa_publication_position(ptr)
        lib.aa_publication_park(ptr, position)
        return not (lib.aa_publication_position_limit(ptr) > position or lib.aa_publication_is_closed(ptr))

    def _unpark(self) -> None:
        ptr = self._ptr
        if ptr is not None:
            lib.aa_publication_unpark(ptr)

    @property
    def channel_status_id(self) -> int:
        """The id of the channel endpoint's status counter (`snd-channel`), -1 for IPC."""
        result: int = lib.aa_publication_channel_status_id(self._checked())
        return result

    # ---- multi-destination-cast ----

    def async_add_destination(self, destination: str) -> int:
        """Start adding a destination (see `add_destination`); returns a correlation id for
        `Aeron.poll_destination`."""
        return check(lib.aa_publication_async_add_destination(self._checked(), _channel(destination)),
                     RegistrationError)

    def async_remove_destination(self, destination: str) -> int:
        """Start removing a destination (see `remove_destination`); returns a correlation id for
        `Aeron.poll_destination`."""
        return check(lib.aa_publication_async_remove_destination(self._checked(), _channel(destination)),
                     RegistrationError)

    def add_destination(self, destination: str) -> None:
        """Send this manual multi-destination-cast publication (channel `aeron:udp?control-mode=manual`,
        optionally with `control=host:port`) to `destination` too, `aeron:udp?endpoint=host:port` (a
        subscriber's address) as well; returns once the driver applied it. A manual destination never
        times out. Raises InvalidChannelError when the publication is not manual MDC, the destination
        is malformed or already added."""
        correlation_id = self.async_add_destination(destination)
        self._client._await_registration(lambda: self._client.poll_destination(correlation_id))

    def remove_destination(self, destination: str) -> None:
        """Stop sending to a destination `add_destination` added (the same address); returns once the
        driver applied it. Raises InvalidChannelError for a destination that was never added."""
        correlation_id = self.async_remove_destination(destination)
        self._client._await_registration(lambda: self._client.poll_destination(correlation_id))

    @property
    def channel_status(self) -> ChannelStatus | int:
        """The send channel endpoint's status: INITIALIZING, ACTIVE, CLOSING or ERRORED (IPC: ACTIVE)."""
        return self._client._channel_status(self.channel_status_id)

    @property
    def local_socket_addresses(self) -> list[str]:
        """The "host:port" addresses the channel's socket is bound to, read from the driver's
        `snd-local-sockaddr` counters as Aeron does (an ephemeral `control=host:0` port shows here);
        empty for IPC or until the endpoint is ACTIVE."""
        return self._client._local_socket_addresses(self.channel_status_id)

    def close(self) -> None:
        ptr, self._ptr = self._ptr, None
        if ptr is not None and self._client._ptr is not None:
            lib.aa_publication_close(ptr)
            try:
                self._client._resources.remove(self)
            except ValueError:
                pass

    def __enter__(self) -> Publication:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} stream={self.stream_id} session={self.session_id} reg={self.registration_id}>"


class ExclusivePublication(Publication):
    """A publication with its own session id and a single writer: cheaper appends (no atomic add);
    use it from one thread at a time."""

    __slots__ = ()

    def revoke(self) -> None:
        """Close the publication and have the driver end its stream at once where the publisher is,
        without draining (Aeron's `revoke`, aeron-wave3.md 4.1): every subscriber's image goes
        unavailable with `Image.is_publication_revoked` true, and what they had not received is lost."""
        self.revoke_on_close()
        self.close()

    def revoke_on_close(self) -> None:
        """Make `close` revoke the publication (see `revoke`), as Aeron's `revokeOnClose`."""
        check(lib.aa_publication_set_revoke_on_close(self._checked(), True))


class BufferClaim:
    """A claimed frame in the log: write into `data`, then `commit()` (or `abort()`)."""

    __slots__ = ("_claim", "position", "data", "_done")

    def __init__(self, claim: Any, position: int) -> None:
        self._claim = claim
        self.position = position
        self.data = memoryview(ffi.buffer(claim.data, claim.length))
        self._done = False

    def commit(self) -> None:
        if not self._done:
            self._done = True
            self.data.release()
            lib.aa_buffer_claim_commit(self._claim)

    def abort(self) -> None:
        if not self._done:
            self._done = True
            self.data.release()
            lib.aa_buffer_claim_abort(self._claim)

    def __enter__(self) -> memoryview:
        return self.data

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


class Subscription(_speedups.SubscriptionBase):
    """A subscription to channel + stream; each publisher shows up as an Image.

    `poll_messages(max_messages=256, fragment_limit=1<<30)` returns whole messages (reassembled
    natively) as a list of Message, possibly empty, in one native call: a C method
    (aeron_async._speedups) whose buffers the subscription owns.

    Aeron's fragment-handler API (C methods too; the loop over fragments is native):

    - `poll(handler, fragment_limit=10)` calls handler(data, header) for up to fragment_limit
      fragments, round robin over the images, and returns how many. `data` is a read-only
      memoryview of the fragment's payload in the log and `header` its Header: both are valid only
      during the call. A view the handler keeps is released after the call (it then raises on
      use); views derived from it (slices, numpy arrays) are not: copy (`bytes(data)`) what you
      keep. A Header the handler keeps keeps its values. Wrap the handler in a FragmentAssembler
      to receive whole messages.
    - `controlled_poll(handler, fragment_limit=10)`: the handler returns a ControlledPollAction
      (ABORT, BREAK, COMMIT, CONTINUE); use ControlledFragmentAssembler for whole messages.
    - `block_poll(handler, block_length_limit)`: Image.block_poll for every image.

    A handler that raises: its fragment counts as consumed, the poll stops (other images are not
    polled), the position is stored just after that fragment and the exception propagates. A
    handler may close the subscription or client: the poll then stops at once.
    """

    __slots__ = ("_client", "registration_id", "stream_id", "_images", "_on_available", "_on_unavailable",
                 "_events", "__weakref__")

    def __init__(
        self,
        client: Aeron,
        ptr: Any,
        registration_id: int,
        on_available: Callable[[Image], None] | None,
        on_unavailable: Callable[[Image], None] | None,
    ) -> None:
        self._client = client
        self._ptr = ptr
        self.registration_id = registration_id
        self.stream_id = 0
        self._images: dict[int, Image] = {}
        self._on_available = on_available
        self._on_unavailable = on_unavailable
        self._events = ffi.new("aa_image_event_t[]", 64)
        self._dispatch_image_events()

    def _checked(self) -> Any:
        ptr = self._ptr
        if ptr is None:
            raise self._client._closed_error(
                f"subscription {self.registration_id} is closed", f"subscription {self.registration_id}")
        return ptr

    def _dispatch_image_events(self) -> None:
        ptr = self._checked()
        while True:
            n = lib.aa_subscription_take_image_events(ptr, self._events, 64)
            if n == 0:
                return
            for i in range(n):
                event = self._events[i]
                key = int(ffi.cast("uintptr_t", event.image))
                if event.type == lib.AA_IMAGE_EVENT_AVAILABLE:
                    image = Image(self, event.image)
                    self._images[key] = image
                    if self._on_available is not None:
                        self._on_available(image)
                else:
                    gone = self._images.pop(key, None)
                    if gone is not None and self._on_unavailable is not None:
                        self._on_unavailable(gone)

    @property
    def images(self) -> list[Image]:
        ptr = self._checked()
        self._dispatch_image_events()
        count = lib.aa_subscription_image_count(ptr)
        arr = ffi.new("aa_image_t *[]", max(count, 1))
        n = lib.aa_subscription_images(ptr, arr, count)
        out = []
        for i in range(n):
            image = self._images.get(int(ffi.cast("uintptr_t", arr[i])))
            if image is not None:
                out.append(image)
        return out

    def image_by_session_id(self, session_id: int) -> Image | None:
        for image in self.images:
            if image.session_id == session_id:
                return image
        return None

    @property
    def is_connected(self) -> bool:
        ptr = self._ptr
        return ptr is not None and bool(lib.aa_subscription_is_connected(ptr))

    @property
    def channel_status_id(self) -> int:
        """The id of the channel endpoint's status counter (`rcv-channel`), -1 for IPC and spies."""
        result: int = lib.aa_subscription_channel_status_id(self._checked())
        return result

    # ---- multi-destination subscriptions ----

    def async_add_destination(self, destination: str) -> int:
        """Start adding a receive destination; returns a correlation id for `Aeron.poll_destination`."""
        return check(lib.aa_subscription_async_add_destination(self._checked(), _channel(destination)),
                     RegistrationError)

    def async_remove_destination(self, destination: str) -> int:
        """Start removing a receive destination; returns a correlation id for `Aeron.poll_destination`."""
        return check(lib.aa_subscription_async_remove_destination(self._checked(), _channel(destination)),
                     RegistrationError)

    def add_destination(self, destination: str) -> None:
        """Receive over `destination` too, `aeron:udp?endpoint=host:port` (the address to bind), on a
        multi-destination subscription (channel `aeron:udp?control-mode=manual`): one stream arriving
        over several channels has one image, and each message is delivered once. Returns once the
        driver opened it. Raises InvalidChannelError for a subscription that is not multi-destination,
        a malformed destination or one already added."""
        correlation_id = self.async_add_destination(destination)
        self._client._await_registration(lambda: self._client.poll_destination(correlation_id))

    def remove_destination(self, destination: str) -> None:
        """Stop receiving over a destination `add_destination` added (the same address); raises
        InvalidChannelError for one that was never added."""
        correlation_id = self.async_remove_destination(destination)
        self._client._await_registration(lambda: self._client.poll_destination(correlation_id))

    @property
    def channel_status(self) -> ChannelStatus | int:
        """The receive channel endpoint's status: INITIALIZING, ACTIVE, CLOSING or ERRORED (IPC and
        spies: ACTIVE)."""
        return self._client._channel_status(self.channel_status_id)

    @property
    def local_socket_addresses(self) -> list[str]:
        """The "host:port" addresses the channel's socket is bound to, read from the driver's
        `rcv-local-sockaddr` counters as Aeron does (an ephemeral `endpoint=host:0` port shows
        here); empty for IPC and spies, or until the endpoint is ACTIVE."""
        return self._client._local_socket_addresses(self.channel_status_id)

    # ---- wake-ups for aeron_async.aio (an eventfd written instead of a poll) ----

    @property
    def _released(self) -> bool:
        """True once this subscription was closed here (its native handle let go)."""
        return self._ptr is None

    def _notify(self, fd: int) -> None:
        """Write to `fd` when a parked subscription (or image) has data, or on closing."""
        lib.aa_subscription_set_notify_fd(self._checked(), fd)

    def _park(self) -> None:
        ptr = self._ptr
        if ptr is not None:
            lib.aa_subscription_park(ptr)

    def _unpark(self) -> None:
        ptr = self._ptr
        if ptr is not None:
            lib.aa_subscription_unpark(ptr)

    @property
    def is_closed(self) -> bool:
        return self._ptr is None or bool(lib.aa_subscription_is_closed(self._ptr))

    def close(self) -> None:
        ptr, self._ptr = self._ptr, None
        if ptr is not None and self._client._ptr is not None:
            lib.aa_subscription_close(ptr)
            try:
                self._client._resources.remove(self)
            except ValueError:
                pass

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Subscription reg={self.registration_id} images={len(self._images)}>"
