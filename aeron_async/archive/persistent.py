"""PersistentSubscription: a recorded stream read in order, without a gap or a duplicate, from any
position: replayed from the archive while behind, then live once caught up, and replayed again
whenever it drops off the live stream (Aeron 1.51's PersistentSubscription; aeron-wave3.md 8, and
README.md, "Persistent subscriptions"; docs/architecture.md, "Persistent subscription").

Unlike a replay merge (replay_merge.py: one multi-destination UDP subscription, so one image), it
uses two independent subscriptions, one to the replay and one to the live stream, and compares
positions, so the live stream may be IPC, UDP or a spy. The switch (aeron-wave3.md 8.2, "Switch
rule"): the live subscription is added once the replay is within a quarter term of the recording's
position; while the replay is behind the live image's position it goes on delivering; once the
replay has delivered up to (or past) the live image's position, the live image is moved to the
replay's position, a message boundary, dropping by position what the replay already delivered; the
replay is stopped and the live image delivers from there. Whole messages only: `position` is always
the end of the last message delivered, which is where a restarted subscription resumes.

The states and their codes are Aeron's (`PersistentSubscriptionState`). The logic is one generator
(`_Machine.run`), which yields the archive and driver requests it needs and the batches it
delivers; `PersistentSubscription` runs the requests blocking, `AsyncPersistentSubscription` awaits
them.
"""

from __future__ import annotations

import enum
import re
import struct
import time
from collections import deque
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any

import anyio

from .._closing import ClosedOnExit
from ..client import Header, Image, Message, Subscription
from ..counters import CountersReader
from ..errors import (
    AeronError, ArchiveConnectionError, ArchiveError, ArchiveTimeoutError, ClosedError, InvalidArgumentError,
    InvalidPositionError,
    RecordingPositionError, UnknownRecordingError,
)
from . import _channels
from ._channels import DEFAULT_REPLAY_CHANNEL, DEFAULT_REPLAY_STREAM_ID
from .records import NULL_POSITION, RecordingDescriptor

if TYPE_CHECKING:
    from ..aio import AsyncSubscription
    from .aio import AsyncAeronArchive
    from .client import AeronArchive

__all__ = [
    "FROM_LIVE", "FROM_START", "AsyncPersistentSubscription", "PersistentSubscription", "PersistentSubscriptionState",
]

FROM_START = -1
"""start_position: the recording's start position."""
FROM_LIVE = -2
"""start_position: join the live stream where it is now (Aeron's default)."""

REC_POS_TYPE_ID = 100  # the archive's rec-pos counter
RECORDING_POSITION_INTERVAL = 0.01  # seconds between MaxRecordedPosition requests while replaying
RECORDING_POSITION_MIN_INTERVAL = 0.001  # ... and at least this far apart when the replay has caught up
DEFAULT_MAX_MESSAGES = 1024


class PersistentSubscriptionState(enum.IntEnum):
    """Aeron's states, code = ordinal (aeron-wave3.md 8.2). Replay channel kinds: SESSION_SPECIFIC
    (the default, `aeron:ipc` or a UDP endpoint: replay requested, then subscribed with its session
    id) and DYNAMIC_PORT (a UDP endpoint with port 0: subscribed first, AWAIT_REPLAY_CHANNEL_ENDPOINT
    until its port is known, then requested to it). States 8-11 are Aeron's for replays over
    response channels, which this client does not request."""

    AWAIT_ARCHIVE_CONNECTION = 0
    SEND_LIST_RECORDING = 1
    AWAIT_LIST_RECORDING = 2
    SEND_REPLAY = 3
    AWAIT_REPLAY = 4
    ADD_REPLAY_SUBSCRIPTION = 5
    AWAIT_REPLAY_SUBSCRIPTION = 6
    AWAIT_REPLAY_CHANNEL_ENDPOINT = 7
    ADD_REQUEST_PUBLICATION = 8
    AWAIT_REQUEST_PUBLICATION = 9
    SEND_REPLAY_TOKEN = 10
    AWAIT_REPLAY_TOKEN = 11
    REPLAY = 12
    ATTEMPT_SWITCH = 13
    ADD_LIVE_SUBSCRIPTION = 14
    AWAIT_LIVE = 15
    LIVE = 16
    FAILED = 17


State = PersistentSubscriptionState


class _Op:
    """A request the machine needs done: an archive operation (by its AeronArchive name), or
    `subscribe` (channel, stream id, on_available_image) -> Subscription, or `close` (subscription)."""

    __slots__ = ("name", "args", "kwargs")

    def __init__(self, name: str, *args: Any, **kwargs: Any) -> None:
        self.name, self.args, self.kwargs = name, args, kwargs

    def __repr__(self) -> str:
        return f"_Op({self.name}, {self.args})"


Step = Generator["_Op | list[Message]", Any, None]
ErrorHandler = Callable[[Exception], object]
Notify = Callable[[], object]


def _discard(data: memoryview, header: Header) -> None:
    """What the live image had that the replay delivered already: dropped by position."""


_ENDPOINT = re.compile(r"endpoint=[^|]*")


def _dynamic_port(channel: str) -> bool:
    """A UDP replay channel whose endpoint's port is 0 (Aeron's DYNAMIC_PORT replay channel kind)."""
    endpoint = _ENDPOINT.search(channel)
    return channel.startswith("aeron:udp") and endpoint is not None and endpoint.group(0).endswith(":0")


def _spy_free(channel: str) -> str:
    return channel[len("aeron-spy:"):] if channel.startswith("aeron-spy:") else channel


class _Machine:
    """The persistent subscription's logic, free of how requests are run (see the module doc)."""

    def __init__(
        self, *, recording_id: int | None, live_channel: str, live_stream_id: int, start_position: int,
        replay_channel: str, replay_stream_id: int, recording_channel: str | None, timeout: float,
        on_live_joined: Notify | None, on_live_left: Notify | None, on_error: ErrorHandler | None,
    ) -> None:
        self.recording_id = None if recording_id is None else _channels.check_int(recording_id, "recording_id", 0)
        self.live_channel = _channels.check_channel(live_channel, "live_channel")
        self.live_stream_id = _channels.check_stream_id(live_stream_id)
        self.replay_channel = _channels.check_channel(replay_channel, "replay_channel")
        if "control-mode=response" in self.replay_channel:
            raise InvalidArgumentError(
                f"replay_channel {replay_channel!r}: replays over response channels are not requested by this client; "
                "give aeron:ipc, or a UDP endpoint (port 0 for the one its subscription binds)")
        self.replay_stream_id = _channels.check_stream_id(replay_stream_id)
        self.recording_channel = _spy_free(self.live_channel) if recording_channel is None else recording_channel
        position = _channels.check_int(start_position, "start_position", FROM_LIVE)
        self.position = position
        self.timeout = timeout
        self.on_live_joined, self.on_live_left, self.on_error = on_live_joined, on_live_left, on_error
        self.state = State.AWAIT_ARCHIVE_CONNECTION
        self.descriptor: RecordingDescriptor | None = None
        self.join_difference: int | None = None
        self.live_joined_count = 0
        self.live_left_count = 0
        self.failure: BaseException | None = None
        self.max_messages = DEFAULT_MAX_MESSAGES
        self.replay_session_id: int | None = None
        self.replay_subscription: Subscription | None = None
        self.live_subscription: Subscription | None = None
        self._live_image: Image | None = None
        self._last_live_position = NULL_POSITION  # the furthest live position delivered
        self.counters: CountersReader | None = None  # this driver's counters (rec-pos), set by the client
        self._rec_pos_id: int | None = None
        self._rec_pos_key = b""
        self._rec_pos_checked = float("-inf")

    def _what(self) -> str:
        return f"persistent subscription of recording {self.recording_id}"

    def _report(self, error: Exception) -> None:
        if self.on_error is not None:
            self.on_error(error)

    # --- the lifecycle ---------------------------------------------------------------------------

    def run(self) -> Step:
        try:
            yield from self._lifecycle()
        except (ArchiveConnectionError, ArchiveTimeoutError) as exc:
            raise type(exc)(f"{self._what()} (at position {self.position}): the archive is gone or not answering: "
                            f"{exc}; connect again and resume from `position`", exc.archive_code,
                            exc.correlation_id) from exc

    def _lifecycle(self) -> Step:
        if self.recording_id is None:
            self.state = State.SEND_LIST_RECORDING
            found = yield _Op("find_last_matching_recording", self.recording_channel, self.live_stream_id)
            if found is None:
                raise UnknownRecordingError(
                    f"persistent subscription: the archive has no recording of {self.recording_channel!r} stream "
                    f"{self.live_stream_id}; start recording it (AeronArchive.start_recording) or give recording_id")
            self.recording_id = found
        while True:
            descriptor = yield from self._list()
            if self.position == FROM_LIVE or (descriptor.stop_position != NULL_POSITION
                                              and self.position == descriptor.stop_position):
                joined = yield from self._await_live(descriptor)
            else:
                joined = yield from self._replay(descriptor)
            if joined:
                yield from self._live()

    def _list(self) -> Generator[_Op | list[Message], Any, RecordingDescriptor]:
        self.state = State.SEND_LIST_RECORDING
        self.state = State.AWAIT_LIST_RECORDING
        try:
            descriptor: RecordingDescriptor = yield _Op("list_recording", self.recording_id)
        except UnknownRecordingError as exc:
            raise UnknownRecordingError(
                f"{self._what()}: the recording is not in the archive's catalog (deleted or purged): {exc}; "
                "start from another recording", exc.archive_code, exc.correlation_id) from exc
        self.descriptor = descriptor
        if descriptor.stream_id != self.live_stream_id:
            raise InvalidArgumentError(
                f"{self._what()}: the recording is of stream {descriptor.stream_id}, the live stream is "
                f"{self.live_stream_id}; give the live stream the recording records")
        start, stop = descriptor.start_position, descriptor.stop_position
        if stop != NULL_POSITION and self._last_live_position > stop:
            raise RecordingPositionError(
                f"{self._what()}: the recording stopped at {stop}, before the live position {self._last_live_position} "
                "already delivered; there is nothing to replay the stream from")
        if self.position == FROM_START:
            self.position = start
        if self.position >= 0 and (self.position < start or (stop != NULL_POSITION and self.position > stop)):
            raise RecordingPositionError(
                f"{self._what()}: start position {self.position} is outside the recording ({start} to "
                f"{'its live end' if stop == NULL_POSITION else stop}): what lay there was purged or truncated; "
                "start from FROM_START or a position within it")
        return descriptor

    def _replay(self, descriptor: RecordingDescriptor) -> Generator[_Op | list[Message], Any, bool]:
        """Replay from `position`; True once live, False to list the recording again."""
        self.state = State.SEND_REPLAY
        active = descriptor.stop_position == NULL_POSITION
        if active:
            # a position saved from the live stream may be ahead of what the archive has written
            # yet: wait for the recording to get there
            deadline = time.monotonic() + self.timeout
            while (recorded := (yield _Op("max_recorded_position", self.recording_id))) < self.position:
                if time.monotonic() > deadline:
                    self._report(ArchiveTimeoutError(
                        f"{self._what()}: the recording has not reached the start position {self.position} within "
                        f"{self.timeout} s (it is at {recorded})"))
                    return False
                yield []
        captured: list[Image] = []
        replay_channel = self.replay_channel
        dynamic = _dynamic_port(replay_channel)
        if dynamic:
            # DYNAMIC_PORT (aeron-wave3.md 8.1): subscribe first, then ask for the replay to the
            # port the subscription bound
            self.state = State.ADD_REPLAY_SUBSCRIPTION
            self.replay_subscription = yield _Op("subscribe", replay_channel, self.replay_stream_id, captured.append)
            self.state = State.AWAIT_REPLAY_CHANNEL_ENDPOINT
            deadline = time.monotonic() + self.timeout
            while not (bound := self.replay_subscription.local_socket_addresses):
                if time.monotonic() > deadline:
                    raise ArchiveTimeoutError(
                        f"{self._what()}: the port the replay subscription on {replay_channel} bound was not reported "
                        f"within {self.timeout} s; give the replay channel a fixed port")
                yield []
            replay_channel = _ENDPOINT.sub(f"endpoint={bound[0]}", replay_channel, count=1)
        self.state = State.AWAIT_REPLAY
        try:
            self.replay_session_id = yield _Op(
                "start_replay", self.recording_id, self.position, None, channel=replay_channel,
                stream_id=self.replay_stream_id, follow=True)
        except RecordingPositionError as exc:
            raise RecordingPositionError(
                f"{self._what()}: the archive cannot replay from {self.position}: {exc}", exc.archive_code,
                exc.correlation_id) from exc
        except UnknownRecordingError as exc:
            raise UnknownRecordingError(
                f"{self._what()}: the recording is not in the archive's catalog (deleted or purged): {exc}",
                exc.archive_code, exc.correlation_id) from exc
        session_id = self.replay_session_id & 0xFFFFFFFF  # the replay publication's: the low 32 bits, signed
        session_id -= (session_id >> 31) << 32
        if not dynamic:
            # SESSION_SPECIFIC: the image is kept from its AVAILABLE event: a short replay may end,
            # and its image go, before the image list is next looked at
            self.state = State.ADD_REPLAY_SUBSCRIPTION
            self.replay_subscription = yield _Op(
                "subscribe", _channels.replay_subscription_channel(replay_channel, self.replay_session_id),
                self.replay_stream_id, captured.append)
        self.state = State.REPLAY
        term_length = descriptor.term_buffer_length
        window = term_length >> 2
        image: Image | None = None
        image_deadline = time.monotonic() + self.timeout
        live_deadline = 0.0
        next_check = last_check = 0.0
        while True:
            now = time.monotonic()
            if image is None:
                assert self.replay_subscription is not None
                self.replay_subscription.images  # takes the image events, which fill `captured`
                image = next((i for i in captured if i.session_id == session_id), None)
                if image is None:
                    if now > image_deadline:
                        self._report(ArchiveTimeoutError(
                            f"{self._what()}: no replay image within {self.timeout} s ({self.replay_channel} stream "
                            f"{self.replay_stream_id}); replaying again from {self.position}"))
                        yield from self._drop_replay()
                        return False
                    yield []
                    continue
            batch = image.poll_messages(self.max_messages)
            if batch:
                self.position = batch[-1].position
            elif image.is_closed or image.is_end_of_stream:
                # the replay ended (the recording stopped, or the archive stopped it or went away):
                # from the position delivered, list the recording again (aeron-wave3.md 8.2, REPLAY)
                yield from self._drop_replay()
                yield from self._drop_live()
                self.state = State.SEND_LIST_RECORDING
                return False
            if self.state == State.REPLAY:
                if self.live_subscription is None:
                    # the recording's rec-pos counter when the archive shares this driver (read
                    # without a request); else MaxRecordedPosition every 10 ms, and at once (1 ms
                    # apart at most) when the replay has nothing more: at the recording's edge
                    recorded = self._recorded_locally(descriptor.session_id, now) if active else None
                    if recorded is None and active and (
                            now >= next_check or (not batch and now >= last_check + RECORDING_POSITION_MIN_INTERVAL)):
                        next_check, last_check = now + RECORDING_POSITION_INTERVAL, now
                        recorded = yield _Op("max_recorded_position", self.recording_id)
                    if recorded is not None and self.position >= recorded - window:
                        self.live_subscription = yield _Op("subscribe", self.live_channel, self.live_stream_id, None)
                        live_deadline = time.monotonic() + self.timeout
                else:
                    live = self.live_subscription.image_by_session_id(descriptor.session_id)
                    if live is not None:
                        self._live_image = live
                        self.join_difference = live.position - self.position
                        self.state = State.ATTEMPT_SWITCH
                    elif now > live_deadline:
                        live_deadline = now + self.timeout
                        self._report(ArchiveTimeoutError(
                            f"{self._what()}: No image became available on the live subscription within "
                            f"{self.timeout} s ({self.live_channel} stream {self.live_stream_id}, "
                            f"session {descriptor.session_id})"))
            if self.state == State.ATTEMPT_SWITCH:
                live = self._live_image
                assert live is not None
                if live.is_closed:
                    yield from self._drop_live()
                    self.state = State.REPLAY
                elif self.position >= live.position and self._move_live(live):
                    yield from self._drop_replay()
                    self._enter_live()
                    yield batch
                    return True
            yield batch

    def _recorded_locally(self, session_id: int, now: float) -> int | None:
        """The recording's rec-pos counter (type 100, key: recording id, session id) in this driver's
        counters, when exactly one archive here records it; None otherwise (ask the archive). The
        counter is checked again every 100 ms (freed and reused once the recording stops)."""
        reader = self.counters
        if reader is None:
            return None
        counter_id = self._rec_pos_id
        if counter_id is not None and now >= self._rec_pos_checked + 0.1:
            record = reader.find_by_id(counter_id)
            self._rec_pos_checked = now
            if record is None or record.type_id != REC_POS_TYPE_ID or not record.key.startswith(self._rec_pos_key):
                self._rec_pos_id = counter_id = None
        if counter_id is None:
            if now < self._rec_pos_checked + 0.1:
                return None
            self._rec_pos_checked = now
            self._rec_pos_key = struct.pack("<qi", self.recording_id, session_id)
            found = reader.find_by_key(self._rec_pos_key, type_id=REC_POS_TYPE_ID)
            if len(found) != 1:
                return None
            self._rec_pos_id = counter_id = found[0].id
        return reader.value(counter_id)

    def _move_live(self, live: Image) -> bool:
        """Move the live image to `position` (a message boundary at or after it): True once there."""
        target = self.position
        if live.position == target:
            return True
        try:
            live.position = target
        except InvalidPositionError:  # not within the current term or not received yet: read it away
            live.bounded_poll(_discard, target, 1 << 20)
        return live.position == target

    def _enter_live(self) -> None:
        self.state = State.LIVE
        self.live_joined_count += 1
        if self.on_live_joined is not None:
            self.on_live_joined()

    def _await_live(self, descriptor: RecordingDescriptor) -> Generator[_Op | list[Message], Any, bool]:
        """Join the live stream directly (FROM_LIVE, or a stopped recording read to its end)."""
        self.state = State.ADD_LIVE_SUBSCRIPTION
        self.live_subscription = yield _Op("subscribe", self.live_channel, self.live_stream_id, None)
        self.state = State.AWAIT_LIVE
        deadline = time.monotonic() + self.timeout
        while True:
            live = self.live_subscription.image_by_session_id(descriptor.session_id)
            if live is not None:
                break
            if time.monotonic() > deadline:
                deadline = time.monotonic() + self.timeout
                self._report(ArchiveTimeoutError(
                    f"{self._what()}: No image became available on the live subscription within {self.timeout} s "
                    f"({self.live_channel} stream {self.live_stream_id}, session {descriptor.session_id})"))
            yield []
        known = self.position
        if known >= 0:
            if live.position < known:
                raise ArchiveError(f"{self._what()}: live stream joined at position {live.position} which is earlier "
                                   f"than last seen position {known}")
            if live.position > known:
                # here the recording stopped at `known` (else it would be replayed): what the live
                # stream sent since is in neither
                raise RecordingPositionError(
                    f"{self._what()}: the recording stopped at {known}, and the live stream is at {live.position}: "
                    "the messages between were not recorded; start from FROM_LIVE, or record the stream again")
        else:
            self.position = live.position
        self._live_image = live
        self.join_difference = 0
        self._enter_live()
        return True

    def _live(self) -> Step:
        live = self._live_image
        assert live is not None and self.live_subscription is not None
        while True:
            batch = live.poll_messages(self.max_messages) if not live.is_closed else []
            if batch:
                self.position = self._last_live_position = batch[-1].position
            elif live.is_closed or live.is_end_of_stream:
                # off the live stream (dropped as a slow consumer, or the stream ended): replay from
                # the position delivered (aeron-wave3.md 8.2, LIVE)
                yield from self._drop_live()
                self.live_left_count += 1
                if self.on_live_left is not None:
                    self.on_live_left()
                return
            yield batch

    # --- releasing -------------------------------------------------------------------------------

    def _drop_replay(self) -> Generator[_Op, Any, None]:
        for op in self.replay_ops():
            yield op

    def _drop_live(self) -> Generator[_Op, Any, None]:
        for op in self.live_ops():
            yield op

    def replay_ops(self) -> list[_Op]:
        ops = []
        if self.replay_session_id is not None:
            ops.append(_Op("stop_replay", self.replay_session_id))
        if self.replay_subscription is not None:
            ops.append(_Op("close", self.replay_subscription))
        self.replay_session_id = self.replay_subscription = None
        return ops

    def live_ops(self) -> list[_Op]:
        ops = [] if self.live_subscription is None else [_Op("close", self.live_subscription)]
        self.live_subscription = self._live_image = None
        return ops


class _Base:
    """What both clients share: the machine's state, position and counts."""

    _machine: _Machine
    _pending: deque[Message]
    _handed: int

    @property
    def state(self) -> PersistentSubscriptionState:
        return self._machine.state

    @property
    def position(self) -> int:
        """The end of the last message delivered (persist it, and give it as `start_position` to
        resume there); before anything was delivered, the start position given."""
        return self._handed if self._pending else self._machine.position

    def _take(self) -> Message:
        message = self._pending.popleft()
        self._handed = message.position
        return message

    @property
    def recording_id(self) -> int | None:
        return self._machine.recording_id

    @property
    def is_live(self) -> bool:
        return self._machine.state == State.LIVE

    @property
    def is_replaying(self) -> bool:
        return self._machine.state in (State.REPLAY, State.ATTEMPT_SWITCH)

    @property
    def has_failed(self) -> bool:
        return self._machine.state == State.FAILED

    @property
    def failure_reason(self) -> BaseException | None:
        return self._machine.failure

    @property
    def join_difference(self) -> int | None:
        """The live image's position less the replay's when the live image appeared (Aeron's join
        difference counter); None before."""
        return self._machine.join_difference

    @property
    def live_joined_count(self) -> int:
        return self._machine.live_joined_count

    @property
    def live_left_count(self) -> int:
        return self._machine.live_left_count

    def _failed(self, exc: BaseException) -> None:
        machine = self._machine
        machine.state = State.FAILED
        machine.failure = exc


def _machine(archive_timeout: float, recording_id: int | None, live_channel: str, live_stream_id: int,
             start_position: int, replay_channel: str, replay_stream_id: int, recording_channel: str | None,
             timeout: float | None, on_live_joined: Notify | None, on_live_left: Notify | None,
             on_error: ErrorHandler | None) -> _Machine:
    return _Machine(
        recording_id=recording_id, live_channel=live_channel, live_stream_id=live_stream_id,
        start_position=start_position, replay_channel=replay_channel, replay_stream_id=replay_stream_id,
        recording_channel=recording_channel, timeout=archive_timeout if timeout is None else timeout,
        on_live_joined=on_live_joined, on_live_left=on_live_left, on_error=on_error)


class PersistentSubscription(_Base, ClosedOnExit):
    """A recording read from `start_position` on, replayed then live, each message once in order
    (synchronous; see the module doc and README.md, "Persistent subscriptions"; docs/architecture.md, "Persistent subscription").

    `recording_id`: the recording of the live stream; None finds the newest recording of
    `recording_channel` (the live channel without `aeron-spy:` when None) and `live_stream_id`.
    `live_channel` / `live_stream_id`: where the live stream is read (UDP, IPC or a spy).
    `start_position`: FROM_LIVE (-2, Aeron's default), FROM_START (-1), or a position the recording
    holds (a `position` saved before). The replay goes to `replay_channel` / `replay_stream_id`.
    `timeout` (the archive client's when None) bounds the waits for an image (a replay is
    requested again, a live image reported through `on_error` and waited for again).
    `on_live_joined()`, `on_live_left()`, `on_error(exception)`: Aeron's listener.

    Call `poll_messages()` in your loop (or iterate): it does the next step and returns the whole
    messages delivered meanwhile. It raises what made it fail (UnknownRecordingError: the recording
    was deleted or purged; RecordingPositionError: the start position is no longer in the
    recording; ArchiveConnectionError / ArchiveTimeoutError: the archive is gone), and `has_failed`
    turns True. `close()` stops the replay and closes both subscriptions.
    """

    def __init__(
        self, archive: AeronArchive, *, live_channel: str, live_stream_id: int, recording_id: int | None = None,
        start_position: int = FROM_LIVE, replay_channel: str = DEFAULT_REPLAY_CHANNEL,
        replay_stream_id: int = DEFAULT_REPLAY_STREAM_ID, recording_channel: str | None = None,
        timeout: float | None = None, on_live_joined: Notify | None = None, on_live_left: Notify | None = None,
        on_error: ErrorHandler | None = None,
    ) -> None:
        self.archive = archive
        self._machine = _machine(archive.timeout, recording_id, live_channel, live_stream_id, start_position,
                                 replay_channel, replay_stream_id, recording_channel, timeout, on_live_joined,
                                 on_live_left, on_error)
        self._machine.counters = archive.aeron.counters_reader
        self._steps = self._machine.run()
        self._closed = False
        self._pending: deque[Message] = deque()
        self._handed = self._machine.position

    def _perform(self, op: _Op) -> Any:
        if op.name == "subscribe":
            channel, stream_id, on_available = op.args
            return self.archive.aeron.add_subscription(channel, stream_id, on_available_image=on_available)
        if op.name == "close":
            op.args[0].close()
            return None
        if op.name == "stop_replay":
            if not self.archive.is_closed:
                self.archive._stop_replay_quietly(op.args[0])
            return None
        return getattr(self.archive, op.name)(*op.args, **op.kwargs)

    def poll_messages(self, max_messages: int = DEFAULT_MAX_MESSAGES) -> list[Message]:
        """Do the next step and return the messages delivered (possibly none)."""
        if self._closed:
            raise ClosedError("the persistent subscription is closed")
        if self._pending:  # what `messages()` took and did not hand out yet
            batch = list(self._pending)
            self._pending.clear()
            return batch
        machine = self._machine
        if machine.state == State.FAILED:
            assert machine.failure is not None
            raise machine.failure
        machine.max_messages = max_messages
        steps, result, error = self._steps, None, None
        try:
            while True:
                item = steps.send(result) if error is None else steps.throw(error)
                if not isinstance(item, _Op):
                    return item
                result, error = None, None
                try:
                    result = self._perform(item)
                except AeronError as exc:
                    error = exc
        except BaseException as exc:
            self._failed(exc)
            self._release()
            raise

    def messages(self) -> Generator[Message, None, None]:
        """Every message, forever (until the subscription fails or is closed), idling between polls."""
        from ..idle import IdleStrategy

        idle = IdleStrategy("backoff")
        while not self._closed:
            if not self._pending:
                before = self._machine.position
                batch = self.poll_messages()
                idle.idle(len(batch))
                if not batch:
                    continue
                self._handed = before
                self._pending.extend(batch)
            yield self._take()

    def __iter__(self) -> Generator[Message, None, None]:
        return self.messages()

    def _release(self) -> None:
        machine = self._machine
        for op in machine.replay_ops() + machine.live_ops():
            try:
                self._perform(op)
            except (AeronError, OSError):
                pass

    @property
    def is_closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._steps.close()
        self._release()

    def __repr__(self) -> str:
        return f"<PersistentSubscription recording={self.recording_id} {self.state.name} position={self.position}>"


class AsyncPersistentSubscription(_Base):
    """The same for async code (anyio: asyncio or trio): `async with AsyncPersistentSubscription(
    archive, live_channel=..., live_stream_id=..., start_position=...) as sub: async for message in
    sub: ...`. Arguments, properties and errors as PersistentSubscription; `receive()` waits for the
    next message; `aclose()` stops the replay and closes both subscriptions."""

    def __init__(
        self, archive: AsyncAeronArchive, *, live_channel: str, live_stream_id: int, recording_id: int | None = None,
        start_position: int = FROM_LIVE, replay_channel: str = DEFAULT_REPLAY_CHANNEL,
        replay_stream_id: int = DEFAULT_REPLAY_STREAM_ID, recording_channel: str | None = None,
        timeout: float | None = None, on_live_joined: Notify | None = None, on_live_left: Notify | None = None,
        on_error: ErrorHandler | None = None,
    ) -> None:
        self.archive = archive
        self._machine = _machine(archive.timeout, recording_id, live_channel, live_stream_id, start_position,
                                 replay_channel, replay_stream_id, recording_channel, timeout, on_live_joined,
                                 on_live_left, on_error)
        self._machine.counters = archive.aeron.client.counters_reader
        self._steps = self._machine.run()
        self._closed = False
        self._pending: deque[Message] = deque()
        self._handed = self._machine.position
        self._interrupted: _Op | None = None
        self._async_subscriptions: dict[int, AsyncSubscription] = {}

    async def _perform(self, op: _Op) -> Any:
        if op.name == "subscribe":
            channel, stream_id, on_available = op.args
            subscription = await self.archive.aeron.add_subscription(channel, stream_id,
                                                                     on_available_image=on_available)
            self._async_subscriptions[id(subscription.subscription)] = subscription
            return subscription.subscription
        if op.name == "close":
            owner = self._async_subscriptions.pop(id(op.args[0]), None)
            (op.args[0] if owner is None else owner).close()
            return None
        if op.name == "stop_replay":
            if not self.archive.is_closed:
                try:
                    await self.archive.stop_replay(op.args[0])
                except (AeronError, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    pass  # it ended meanwhile
            return None
        return await getattr(self.archive, op.name)(*op.args, **op.kwargs)

    async def poll_messages(self, max_messages: int = DEFAULT_MAX_MESSAGES) -> list[Message]:
        """Do the next step (awaiting the archive where it must) and return the messages delivered."""
        if self._closed:
            raise anyio.ClosedResourceError("the persistent subscription is closed")
        if self._pending:  # what `receive()` took and did not hand out yet
            batch = list(self._pending)
            self._pending.clear()
            return batch
        machine = self._machine
        if machine.state == State.FAILED:
            assert machine.failure is not None
            raise machine.failure
        machine.max_messages = max_messages
        steps: Any = self._steps
        result: Any = None
        error: BaseException | None = None
        item: Any = self._interrupted
        self._interrupted = None
        cancelled = anyio.get_cancelled_exc_class()
        try:
            while True:
                if item is None:
                    item = steps.send(result) if error is None else steps.throw(error)
                    if not isinstance(item, _Op):
                        return list(item)
                result, error = None, None
                try:
                    result = await self._perform(item)
                except (AeronError, anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
                    error = exc
                except cancelled:
                    self._interrupted = item  # a cancelled wait is not a failure: done again next time
                    raise
                item = None
        except cancelled:
            raise
        except BaseException as exc:
            if isinstance(exc, (anyio.ClosedResourceError, anyio.BrokenResourceError)):
                exc = _archive_gone(self._machine, exc)
            self._failed(exc)
            with anyio.CancelScope(shield=True):
                await self._release()
            raise exc from None

    async def receive(self) -> Message:
        """The next message, replayed or live."""
        pause = 0.00005
        while not self._pending:
            before = self._machine.position
            batch = await self.poll_messages()
            if batch:
                self._handed = before
                self._pending.extend(batch)
                break
            await anyio.sleep(pause)
            pause = min(pause * 2, 0.002)
        return self._take()

    def __aiter__(self) -> AsyncPersistentSubscription:
        return self

    async def __anext__(self) -> Message:
        if self._closed:
            raise StopAsyncIteration
        return await self.receive()

    async def _release(self) -> None:
        machine = self._machine
        for op in machine.replay_ops() + machine.live_ops():
            try:
                await self._perform(op)
            except (AeronError, OSError, anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass

    @property
    def is_closed(self) -> bool:
        return self._closed

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._steps.close()
        with anyio.CancelScope(shield=True):
            await self._release()

    async def __aenter__(self) -> AsyncPersistentSubscription:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"<AsyncPersistentSubscription recording={self.recording_id} {self.state.name} position={self.position}>"


def _archive_gone(machine: _Machine, exc: BaseException) -> ArchiveError:
    return ArchiveConnectionError(f"{machine._what()}: the archive client is closed or its connection failed ({exc}); "
                                  "connect again and resume from `position`")
