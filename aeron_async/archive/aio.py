"""The archive client for async code on anyio (asyncio, uvloop, trio).

    async with aeron_async.archive.aio.connect(client) as archive:
        await archive.start_recording("aeron:ipc", 1001)
        ...
        async for message in archive.replay(recording_id, position=0, length=4096):
            ...

A background task reads the response stream and hands each answer to the request waiting for its
correlation id (any number of tasks may have requests in flight), and recording signals to
`recording_signals()`; another sends a keep-alive every second, so an idle session stays open.
Waiting never spins: requests wait on the response subscription's eventfd (see aeron_async.aio).
"""

from __future__ import annotations

import collections
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.abc

from ..aio import AsyncAeron, AsyncImageView, AsyncPublication, AsyncSubscription
from ..aio import connect as aeron_connect
from ..client import Message
from ..counters import Counter
from ..errors import (
    AeronError,
    ArchiveError,
    ArchiveConnectionError,
    ArchiveTimeoutError,
    AuthenticationError,
)
from . import _codec, _session
from ._session import (
    CONTROL_STREAM_ID,
    DEFAULT_REPLAY_CHANNEL,
    DEFAULT_REPLAY_STREAM_ID,
    DEFAULT_TIMEOUT,
    KEEP_ALIVE_INTERVAL,
    LIST_PAGE,
    LOCAL_CONTROL_CHANNEL,
    NULL_POSITION,
    NULL_VALUE,
    RESPONSE_CHANNEL,
    RESPONSE_STREAM_ID,
    Encoder,
)
from .client import ChallengeHandler, SignalHandler
from .replay_merge import (
    DEFAULT_PROGRESS_TIMEOUT,
    MergeState,
    bound_port,
    check_merge_channels,
    destination_endpoint,
    merge_window,
    replay_channel_for,
)
from .records import (
    Challenge,
    ControlResponse,
    ControlResponseCode,
    RecordingDescriptor,
    RecordingSignal,
    RecordingSignalEvent,
    RecordingSubscriptionDescriptor,
    SourceLocation,
)

__all__ = ["AsyncAeronArchive", "AsyncReplay", "AsyncReplayMerge", "connect"]

MAX_QUEUED_SIGNALS = 65536


class _Pending:
    """A request waiting for its answer: descriptors until `want` of them, or the response."""

    __slots__ = ("event", "response", "items", "want")

    def __init__(self, want: int | None) -> None:
        self.event = anyio.Event()
        self.response: ControlResponse | Challenge | None = None
        self.items: list[Any] = []
        self.want = want


class AsyncAeronArchive:
    """A control session with an archive, for async code. Made by `connect(...)`, whose `async
    with` owns it. The methods are those of the synchronous AeronArchive, awaited."""

    def __init__(self, aeron: AsyncAeron, publication: AsyncPublication, subscription: AsyncSubscription,
                 timeout: float, on_recording_signal: SignalHandler | None = None) -> None:
        self.aeron = aeron
        self.control_publication = publication
        self.response_subscription = subscription
        self.timeout = timeout
        self.control_session_id = NULL_VALUE
        self.malformed_responses = 0
        self._pending: dict[int, _Pending] = {}
        self._signals: collections.deque[RecordingSignalEvent] = collections.deque(maxlen=MAX_QUEUED_SIGNALS)
        self._signal_arrived = anyio.Event()
        self._correlation = _session.new_session_id() << 20
        self._last_request = time.monotonic()
        self._listing = anyio.Lock()
        self._failure: BaseException | None = None
        self._closed = False
        self._replays: list[AsyncReplay] = []
        self.on_recording_signal = on_recording_signal

    # --- the background tasks ----------------------------------------------------------------

    def _dispatch(self, data: bytes | memoryview) -> None:
        try:
            message = _codec.decode(data)
        except _codec.MalformedMessageError:
            self.malformed_responses += 1
            return
        if message is None:
            return
        if self.control_session_id != NULL_VALUE and message.control_session_id != self.control_session_id:
            return
        if isinstance(message, RecordingSignalEvent):
            self._signals.append(message)
            event, self._signal_arrived = self._signal_arrived, anyio.Event()
            event.set()
            if self.on_recording_signal is not None:
                self.on_recording_signal(message)
            return
        pending = self._pending.get(message.correlation_id)
        if pending is None:
            return  # the late answer of a request that was cancelled or timed out
        if isinstance(message, (ControlResponse, Challenge)):
            pending.response = message
            pending.event.set()
            return
        pending.items.append(message)
        if pending.want is not None and len(pending.items) >= pending.want:
            pending.event.set()

    def _fail(self, failure: BaseException) -> None:
        self._failure = failure
        for pending in self._pending.values():
            pending.event.set()
        event, self._signal_arrived = self._signal_arrived, anyio.Event()
        event.set()

    async def _read_responses(self) -> None:
        try:
            async for batch in self.response_subscription.batches(256):
                for message in batch:
                    self._dispatch(message.data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            self._fail(ArchiveConnectionError(f"the archive client's Aeron client failed: {exc}"))

    async def _keep_alive(self) -> None:
        was_connected = False
        while True:
            await anyio.sleep(KEEP_ALIVE_INTERVAL / 2)
            if self.response_subscription.is_connected:
                was_connected = True
            elif was_connected:
                self._fail(ArchiveConnectionError(
                    "the archive is gone (its response stream went away): it closed this control session or "
                    "stopped; connect again"))
                return
            if self.control_session_id != NULL_VALUE and not self.control_publication.is_connected:
                self._fail(ArchiveConnectionError(
                    "the archive is gone (nothing reads the control stream any more): it closed or stopped; "
                    "connect again once it runs"))
                return
            if self.control_session_id != NULL_VALUE and time.monotonic() - self._last_request >= KEEP_ALIVE_INTERVAL:
                self._last_request = time.monotonic()
                self.control_publication.offer_nowait(
                    _codec.keep_alive(self.control_session_id, self._next_correlation_id()))

    # --- requests ----------------------------------------------------------------------------

    def _next_correlation_id(self) -> int:
        self._correlation += 1
        return self._correlation

    def _check_usable(self) -> None:
        if self._failure is not None:
            raise self._failure
        if self._closed:
            raise anyio.ClosedResourceError("the archive client is closed: connect a new one")

    async def _send(self, request: bytes, operation: str) -> None:
        publication = self.control_publication
        if self.control_session_id != NULL_VALUE and not publication.is_connected:
            raise ArchiveConnectionError(
                f"{operation}: the archive is gone (nothing reads the control stream any more): it closed or "
                "stopped; connect again once it runs")
        try:
            with anyio.fail_after(self.timeout):
                await publication.offer(request)
        except TimeoutError:
            if not publication.is_connected:
                raise ArchiveTimeoutError(
                    f"{operation}: no archive is listening on {publication.publication.channel or 'the control channel'} "
                    f"stream {publication.stream_id} (nothing connected within {self.timeout} s): start one beside "
                    f"the driver at {self.aeron.aeron_dir}, or give its control_channel and control_stream_id"
                ) from None
            raise ArchiveTimeoutError(f"{operation}: the archive did not take the request within {self.timeout} s "
                                      "(control stream back-pressured)") from None
        self._last_request = time.monotonic()

    async def _exchange(
        self, request: bytes, correlation_id: int, operation: str, want: int | None = None
    ) -> _Pending:
        pending = self._pending[correlation_id] = _Pending(want)
        try:
            await self._send(request, operation)
            try:
                with anyio.fail_after(self.timeout):
                    await pending.event.wait()
            except TimeoutError:
                raise ArchiveTimeoutError(
                    f"{operation}: no answer from the archive within {self.timeout} s (correlation id "
                    f"{correlation_id}); raise the timeout, or check that the archive is running", None,
                    correlation_id) from None
            if self._failure is not None:
                raise self._failure
            return pending
        finally:
            del self._pending[correlation_id]

    async def _request(self, encode: Encoder, operation: str, want: int | None = None) -> _Pending:
        self._check_usable()
        correlation_id = self._next_correlation_id()
        return await self._exchange(encode(self.control_session_id, correlation_id), correlation_id, operation, want)

    async def _call(self, encode: Encoder, operation: str) -> int:
        pending = await self._request(encode, operation)
        response = pending.response
        assert isinstance(response, ControlResponse)
        return _session.expect_ok(response, operation)

    async def _connect(self, response_channel: str, response_stream_id: int, credentials: bytes,
                       on_challenge: ChallengeHandler | None) -> None:
        correlation_id = self._next_correlation_id()
        request = _codec.auth_connect(correlation_id, response_stream_id, response_channel, credentials,
                                      _session.client_info())
        while True:
            pending = await self._exchange(request, correlation_id, "connect")
            response = pending.response
            if isinstance(response, Challenge):
                if on_challenge is None:
                    raise AuthenticationError(
                        "connect: the archive challenged the credentials and no on_challenge handler was given: "
                        "pass on_challenge=<function of the challenge bytes returning credentials>", None,
                        correlation_id)
                self.control_session_id = response.control_session_id
                request = _codec.challenge_response(response.control_session_id, correlation_id,
                                                    on_challenge(response.encoded_challenge))
                continue
            assert isinstance(response, ControlResponse)
            self.control_session_id = _session.expect_ok(response, "connect")
            return

    # --- recordings --------------------------------------------------------------------------

    async def start_recording(
        self, channel: str, stream_id: int, *, source_location: SourceLocation | str = SourceLocation.LOCAL,
        auto_stop: bool = False,
    ) -> int:
        """See AeronArchive.start_recording: returns the recording subscription id."""
        return await self._call(*_session.start_recording(channel, stream_id, source_location, auto_stop))

    async def stop_recording(
        self, channel: str | None = None, stream_id: int | None = None, *, subscription_id: int | None = None,
        recording_id: int | None = None,
    ) -> None:
        """See AeronArchive.stop_recording: by channel + stream, subscription_id= or recording_id=."""
        encode, operation = _session.stop_recording(channel, stream_id, subscription_id, recording_id)
        stopped = await self._call(encode, operation)
        if recording_id is not None and stopped == 0:
            raise _session.not_recording_error(recording_id, operation)

    async def extend_recording(
        self, recording_id: int, channel: str, stream_id: int, *,
        source_location: SourceLocation | str = SourceLocation.LOCAL, auto_stop: bool = False,
    ) -> int:
        """See AeronArchive.extend_recording."""
        return await self._call(*_session.extend_recording(recording_id, channel, stream_id, source_location,
                                                           auto_stop))

    async def truncate_recording(self, recording_id: int, position: int) -> None:
        """See AeronArchive.truncate_recording."""
        await self._call(*_session.truncate_recording(recording_id, position))

    async def purge_recording(self, recording_id: int) -> int:
        """See AeronArchive.purge_recording."""
        return await self._call(*_session.id_operation(_codec.PURGE_RECORDING, recording_id, "recording_id",
                                                       "purge_recording"))

    # --- queries -----------------------------------------------------------------------------

    async def list_recordings(
        self, channel: str | None = None, stream_id: int | None = None, *, from_recording_id: int = 0,
        count: int | None = None,
    ) -> list[RecordingDescriptor]:
        """See AeronArchive.list_recordings."""
        encode, operation = _session.list_recordings(channel, stream_id)
        found: list[RecordingDescriptor] = []
        next_id = _session.check_int(from_recording_id, "from_recording_id", 0)
        remaining = None if count is None else _session.check_int(count, "count", 0)
        async with self._listing:  # the archive runs one listing per session at a time
            while remaining is None or remaining > 0:
                page = LIST_PAGE if remaining is None else min(remaining, LIST_PAGE)
                start = next_id
                pending = await self._request(lambda s, c: encode(s, c, start, page), operation, page)
                batch = [d for d in pending.items if isinstance(d, RecordingDescriptor)]
                found.extend(batch)
                if remaining is not None:
                    remaining -= len(batch)
                response = pending.response
                if isinstance(response, ControlResponse):
                    if response.code != ControlResponseCode.RECORDING_UNKNOWN:
                        _session.expect_ok(response, operation)
                    break
                next_id = batch[-1].recording_id + 1
        return found

    async def list_recording(self, recording_id: int) -> RecordingDescriptor:
        """See AeronArchive.list_recording."""
        encode, operation = _session.id_operation(_codec.LIST_RECORDING, recording_id, "recording_id",
                                                  "list_recording")
        pending = await self._request(encode, operation, 1)
        if pending.items:
            descriptor: RecordingDescriptor = pending.items[0]
            return descriptor
        assert isinstance(pending.response, ControlResponse)
        raise _session.unknown_recording(pending.response, recording_id, operation)

    async def find_last_matching_recording(
        self, channel: str, stream_id: int, *, session_id: int | None = None, min_recording_id: int = 0
    ) -> int | None:
        """See AeronArchive.find_last_matching_recording."""
        found = await self._call(*_session.find_last_matching(channel, stream_id, session_id, min_recording_id))
        return None if found == NULL_VALUE else found

    async def list_recording_subscriptions(
        self, channel: str = "", stream_id: int | None = None, *, pseudo_index: int = 0, count: int = LIST_PAGE
    ) -> list[RecordingSubscriptionDescriptor]:
        """See AeronArchive.list_recording_subscriptions."""
        encode, operation = _session.list_recording_subscriptions(channel, stream_id, pseudo_index, count)
        async with self._listing:
            pending = await self._request(encode, operation, count)
        response = pending.response
        if isinstance(response, ControlResponse) and response.code not in (
                ControlResponseCode.SUBSCRIPTION_UNKNOWN, ControlResponseCode.OK):
            raise _session.response_error(response, operation)
        return [d for d in pending.items if isinstance(d, RecordingSubscriptionDescriptor)]

    async def recording_position(self, recording_id: int) -> int | None:
        """See AeronArchive.recording_position."""
        position = await self._call(*_session.id_operation(_codec.RECORDING_POSITION, recording_id, "recording_id",
                                                           "recording_position"))
        return None if position == NULL_POSITION else position

    async def stop_position(self, recording_id: int) -> int | None:
        """See AeronArchive.stop_position."""
        position = await self._call(*_session.id_operation(_codec.STOP_POSITION, recording_id, "recording_id",
                                                           "stop_position"))
        return None if position == NULL_POSITION else position

    async def max_recorded_position(self, recording_id: int) -> int:
        """See AeronArchive.max_recorded_position."""
        return await self._call(*_session.id_operation(_codec.MAX_RECORDED_POSITION, recording_id, "recording_id",
                                                       "max_recorded_position"))

    async def archive_id(self) -> int:
        """See AeronArchive.archive_id."""
        return await self._call(*_session.archive_id())

    # --- replay ------------------------------------------------------------------------------

    async def start_replay(
        self, recording_id: int, position: int | None = None, length: int | None = None, *,
        channel: str = DEFAULT_REPLAY_CHANNEL, stream_id: int = DEFAULT_REPLAY_STREAM_ID, follow: bool = True,
        limit_counter: Counter | int | None = None, file_io_max_length: int | None = None,
    ) -> int:
        """See AeronArchive.start_replay: returns the replay session id."""
        counter_id = limit_counter.id if isinstance(limit_counter, Counter) else limit_counter
        return await self._call(*_session.replay(recording_id, position, length, channel, stream_id, follow,
                                                 counter_id, file_io_max_length))

    async def _merge_replay(self, recording_id: int, position: int, channel: str, stream_id: int) -> int:
        return await self._call(*_session.replay(recording_id, position, _session.MAX_LENGTH, channel, stream_id,
                                                 True, None, None, True))

    def replay(
        self, recording_id: int, position: int | None = None, length: int | None = None, *,
        channel: str = DEFAULT_REPLAY_CHANNEL, stream_id: int = DEFAULT_REPLAY_STREAM_ID, follow: bool = True,
        limit_counter: Counter | int | None = None, file_io_max_length: int | None = None,
    ) -> AsyncReplay:
        """A replay to iterate: `async for message in archive.replay(recording_id, position=...,
        length=...)` starts it on the first iteration and ends when the replay does (its length
        reached, or a followed recording stopped); the messages carry the recorded positions.
        `async with archive.replay(...) as replay:` stops it on leaving the block (otherwise it
        is stopped when the iteration ends early or the archive client closes). Arguments as
        AeronArchive.start_replay."""
        # the request is checked now, so bad arguments raise here rather than in the loop
        counter_id = limit_counter.id if isinstance(limit_counter, Counter) else limit_counter
        request = _session.replay(recording_id, position, length, channel, stream_id, follow, counter_id,
                                  file_io_max_length)
        replay = AsyncReplay(self, recording_id, request, channel, stream_id)
        self._replays = [r for r in self._replays if not r.is_closed]
        self._replays.append(replay)
        return replay

    def replay_merge(
        self, recording_id: int, *, channel: str = "aeron:udp?control-mode=manual", stream_id: int | None = None,
        replay_destination: str, live_destination: str, position: int | None = None,
        progress_timeout: float = DEFAULT_PROGRESS_TIMEOUT,
    ) -> AsyncReplayMerge:
        """`async with archive.replay_merge(recording_id, replay_destination=..., live_destination=...)
        as merge: async for message in merge: ...`: the recording's messages from `position` (its
        start when None), replayed until the replay has caught up with the live stream, then live,
        each position once (see AeronArchive.replay_merge and replay_merge.py); `merge.is_merged`
        says when the replay was dropped."""
        check_merge_channels(channel, replay_destination, live_destination)
        return AsyncReplayMerge(self, recording_id, channel, stream_id, replay_destination, live_destination,
                                position, progress_timeout)

    async def stop_replay(self, replay_session_id: int) -> None:
        """See AeronArchive.stop_replay."""
        await self._call(*_session.id_operation(_codec.STOP_REPLAY, replay_session_id, "replay_session_id",
                                                "stop_replay"))

    async def stop_all_replays(self, recording_id: int | None = None) -> None:
        """See AeronArchive.stop_all_replays."""
        await self._call(*_session.id_operation(_codec.STOP_ALL_REPLAYS, recording_id, "recording_id",
                                                "stop_all_replays"))

    # --- signals -----------------------------------------------------------------------------

    def poll_recording_signals(self) -> list[RecordingSignalEvent]:
        """The recording signals that arrived since the last call (without waiting)."""
        signals = list(self._signals)
        self._signals.clear()
        return signals

    async def recording_signals(self) -> AsyncIterator[RecordingSignalEvent]:
        """`async for signal in archive.recording_signals()`: every recording signal (START, STOP,
        EXTEND, DELETE, ...) as it arrives; ends when the client closes."""
        while True:
            while self._signals:
                yield self._signals.popleft()
            if self._closed:
                return
            self._check_usable()
            await self._signal_arrived.wait()

    async def wait_for_signal(
        self, signal: RecordingSignal, *, recording_id: int | None = None, subscription_id: int | None = None,
        timeout: float | None = None,
    ) -> RecordingSignalEvent:
        """Wait for a `signal` (of `recording_id` / `subscription_id` when given); other signals
        stay queued. ArchiveTimeoutError after `timeout` (the client's timeout when None)."""
        limit = self.timeout if timeout is None else timeout
        try:
            with anyio.fail_after(limit):
                while True:
                    for index, event in enumerate(self._signals):
                        if (event.signal == signal and (recording_id is None or event.recording_id == recording_id)
                                and (subscription_id is None or event.subscription_id == subscription_id)):
                            del self._signals[index]
                            return event
                    self._check_usable()
                    await self._signal_arrived.wait()
        except TimeoutError:
            raise ArchiveTimeoutError(
                f"no {signal.name} signal (recording {recording_id}, subscription {subscription_id}) within "
                f"{limit} s") from None

    # --- closing -----------------------------------------------------------------------------

    @property
    def is_closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Close the replays' subscriptions, end the control session and close the control stream."""
        if self._closed:
            return
        self._closed = True
        for replay in self._replays:
            replay.close_subscription()
        self._replays.clear()
        if self.control_session_id != NULL_VALUE and self._failure is None:
            try:
                self.control_publication.offer_nowait(_codec.close_session(self.control_session_id))
            except (AeronError, anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass
        self.control_publication.close()
        self.response_subscription.close()
        self._fail(anyio.ClosedResourceError("the archive client is closed"))

    def __repr__(self) -> str:
        return f"<AsyncAeronArchive control_session_id={self.control_session_id}>"


class AsyncReplay:
    """A replay for `async for` (and `async with`): see AsyncAeronArchive.replay."""

    def __init__(self, archive: AsyncAeronArchive, recording_id: int, request: _session.Request, channel: str,
                 stream_id: int) -> None:
        self.archive = archive
        self.recording_id = recording_id
        self.replay_session_id: int | None = None
        self.subscription: AsyncSubscription | None = None
        self._request = request
        self._channel = channel
        self._stream_id = stream_id
        self._view: AsyncImageView | None = None
        self._ended = False
        self._closed = False

    @property
    def is_closed(self) -> bool:
        return self._closed

    async def start(self) -> int:
        """Send the replay request and subscribe to the replay; returns the replay session id."""
        if self.replay_session_id is not None:
            return self.replay_session_id
        if self._closed:
            raise anyio.ClosedResourceError("the replay is closed")
        archive = self.archive
        replay_session_id = await archive._call(*self._request)
        self.replay_session_id = replay_session_id
        try:
            self.subscription = await archive.aeron.add_subscription(
                _session.replay_subscription_channel(self._channel, replay_session_id), self._stream_id)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self._stop_quietly()
            raise
        return replay_session_id

    async def _image_view(self) -> AsyncImageView:
        if self._view is not None:
            return self._view
        subscription = self.subscription
        assert subscription is not None
        pause = 0.0005
        try:
            with anyio.fail_after(self.archive.timeout):
                while not subscription.images:
                    await anyio.sleep(pause)
                    pause = min(pause * 2, 0.02)
        except TimeoutError:
            raise ArchiveTimeoutError(
                f"replay {self.replay_session_id} of recording {self.recording_id}: the replay stream did not "
                f"connect within {self.archive.timeout} s ({self._channel} stream {self._stream_id})") from None
        self._view = subscription.image_view(subscription.images[0])
        return self._view

    async def receive(self) -> Message:
        """The next message of the replay; raises anyio.EndOfStream once it has ended."""
        if self._ended:
            raise anyio.EndOfStream
        await self.start()
        view = await self._image_view()
        try:
            return await view.receive()
        except anyio.EndOfStream:
            self._ended = True
            self.close_subscription()
            raise

    def __aiter__(self) -> AsyncReplay:
        return self

    async def __anext__(self) -> Message:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def _stop_quietly(self) -> None:
        if self.replay_session_id is None or self.archive.is_closed:
            return
        try:
            await self.archive.stop_replay(self.replay_session_id)
        except (AeronError, anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass  # it ended meanwhile

    def close_subscription(self) -> None:
        self._closed = True
        if self.subscription is not None:
            self.subscription.close()

    async def aclose(self) -> None:
        """Stop the replay if it is still running and close its subscription."""
        if self._closed:
            return
        if not self._ended:
            with anyio.CancelScope(shield=True):
                await self._stop_quietly()
        self.close_subscription()

    async def __aenter__(self) -> AsyncReplay:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"<AsyncReplay recording={self.recording_id} session={self.replay_session_id}>"


class AsyncReplayMerge:
    """A replay merged into its live stream, for `async for` (see AsyncAeronArchive.replay_merge).
    The merge's steps run between the batches the iteration receives."""

    def __init__(self, archive: AsyncAeronArchive, recording_id: int, channel: str, stream_id: int | None,
                 replay_destination: str, live_destination: str, position: int | None,
                 progress_timeout: float) -> None:
        self.archive = archive
        self.recording_id = _session.check_int(recording_id, "recording_id", 0)
        self.channel = channel
        self._stream_id = stream_id
        self.replay_destination = replay_destination
        self.live_destination = live_destination
        self._position = position
        self.progress_timeout = progress_timeout
        self.state = MergeState.RESOLVE_REPLAY_PORT
        self.subscription: AsyncSubscription | None = None
        self.replay_session_id: int | None = None
        self._session_id = 0
        self._window = 0
        self._target = -1
        self._live_added = False
        self._replay_added = False
        self._replay_channel = ""
        self._pending: collections.deque[Message] = collections.deque()
        self._last_position = -1
        self._last_progress = time.monotonic()

    @property
    def is_merged(self) -> bool:
        return self.state == MergeState.MERGED

    def _image_position(self) -> int:
        assert self.subscription is not None
        image = self.subscription.subscription.image_by_session_id(self._session_id)
        return -1 if image is None else image.position

    async def _recording_position(self) -> int:
        position = await self.archive.recording_position(self.recording_id)
        if position is None:
            raise await self._fail("the recording has stopped: there is no live stream to merge with; replay it instead")
        return position

    async def _fail(self, why: str) -> ArchiveError:
        self.state = MergeState.FAILED
        await self._stop_replay()
        return ArchiveError(f"replay_merge of recording {self.recording_id}: {why}")

    async def _stop_replay(self) -> None:
        replay_session_id, self.replay_session_id = self.replay_session_id, None
        if replay_session_id is not None and not self.archive.is_closed:
            try:
                await self.archive.stop_replay(replay_session_id)
            except (AeronError, anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass

    async def _start(self) -> None:
        archive = self.archive
        descriptor = await archive.list_recording(self.recording_id)
        self._session_id = descriptor.session_id
        self._window = merge_window(descriptor.term_buffer_length)
        if self._position is None:
            self._position = descriptor.start_position
        stream_id = descriptor.stream_id if self._stream_id is None else _session.check_stream_id(self._stream_id)
        self._stream_id = stream_id
        self.subscription = await archive.aeron.add_subscription(self.channel, stream_id)
        sync = self.subscription.subscription
        before = set(sync.local_socket_addresses)
        await anyio.to_thread.run_sync(sync.add_destination, self.replay_destination)
        self._replay_added = True
        host_port = destination_endpoint(self.replay_destination)
        if host_port.endswith(":0"):
            try:
                with anyio.fail_after(archive.timeout):
                    while (host_port := bound_port(sync.local_socket_addresses, before, host_port)).endswith(":0"):
                        await anyio.sleep(0.001)
            except TimeoutError:
                raise await self._fail(f"the port replay destination {self.replay_destination} bound was not "
                                       f"reported within {archive.timeout} s; give a fixed port") from None
        self._replay_channel = replay_channel_for(self.replay_destination, host_port, self._session_id)
        self._target = await self._recording_position()
        self.replay_session_id = await archive._merge_replay(self.recording_id, self._position, self._replay_channel,
                                                             stream_id)
        self._last_progress = time.monotonic()
        self.state = MergeState.CATCHUP

    async def _step(self) -> None:
        state = self.state
        if state == MergeState.RESOLVE_REPLAY_PORT:
            await self._start()
        elif state == MergeState.CATCHUP:
            if self._image_position() >= self._target:
                self._target = await self._recording_position()
                self.state = MergeState.ATTEMPT_LIVE_JOIN
        elif state == MergeState.ATTEMPT_LIVE_JOIN:
            assert self.subscription is not None
            position = self._image_position()
            if not self._live_added:
                if position + self._window >= self._target:
                    await anyio.to_thread.run_sync(self.subscription.subscription.add_destination,
                                                   self.live_destination)
                    self._live_added = True
                self._target = await self._recording_position()
            elif position >= self._target:
                await anyio.to_thread.run_sync(self.subscription.subscription.remove_destination,
                                               self.replay_destination)
                self._replay_added = False
                await self._stop_replay()
                self.state = MergeState.MERGED
        if self.state in (MergeState.CATCHUP, MergeState.ATTEMPT_LIVE_JOIN):
            position = self._image_position()
            now = time.monotonic()
            if position != self._last_position:
                self._last_position, self._last_progress = position, now
            elif now - self._last_progress > self.progress_timeout:
                raise await self._fail(f"no progress for {self.progress_timeout} s in state {self.state.value} "
                                       f"(image position {position}, target {self._target})")

    async def receive(self) -> Message:
        """The next message, replayed or live."""
        while not self._pending:
            if self.state in (MergeState.FAILED, MergeState.CLOSED):
                raise anyio.ClosedResourceError(f"replay merge is {self.state.value}")
            if self.state != MergeState.MERGED:
                await self._step()
            assert self.subscription is not None
            if self.state == MergeState.MERGED:
                self._pending.extend(await self.subscription.receive_batch())
            else:
                with anyio.move_on_after(0.01):  # a step of the merge at least this often
                    self._pending.extend(await self.subscription.receive_batch())
        return self._pending.popleft()

    def __aiter__(self) -> AsyncReplayMerge:
        return self

    async def __anext__(self) -> Message:
        try:
            return await self.receive()
        except anyio.ClosedResourceError:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        """Stop the replay if it still runs and close the subscription."""
        if self.state == MergeState.CLOSED:
            return
        with anyio.CancelScope(shield=True):
            await self._stop_replay()
        self.state = MergeState.CLOSED
        if self.subscription is not None:
            self.subscription.close()

    async def __aenter__(self) -> AsyncReplayMerge:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class connect:  # noqa: N801 - used as `async with aeron_async.archive.aio.connect(...)`
    """`async with connect(aeron) as archive:` an AsyncAeronArchive with a control session open.

    `aeron` is an AsyncAeron (from aeron_async.connect); without it one is connected to
    `aeron_dir` for the archive and closed with it. `on_recording_signal(signal)` is called by
    the task reading the responses for each recording signal as it arrives (keep it short; the
    signals are also queued for `recording_signals()` and `wait_for_signal`). The other arguments
    are those of AeronArchive.connect."""

    def __init__(
        self,
        aeron: AsyncAeron | None = None,
        *,
        aeron_dir: str | None = None,
        control_channel: str = LOCAL_CONTROL_CHANNEL,
        control_stream_id: int = CONTROL_STREAM_ID,
        response_channel: str = RESPONSE_CHANNEL,
        response_stream_id: int = RESPONSE_STREAM_ID,
        timeout: float = DEFAULT_TIMEOUT,
        credentials: bytes = b"",
        on_challenge: ChallengeHandler | None = None,
        on_recording_signal: SignalHandler | None = None,
    ) -> None:
        _session.check_channel(control_channel, "control_channel")
        _session.check_channel(response_channel, "response_channel")
        if not timeout > 0:
            raise ValueError(f"timeout={timeout!r} must be a positive number of seconds")
        self._aeron = aeron
        self._aeron_dir = aeron_dir
        self._control = (control_channel, control_stream_id)
        self._response = (response_channel, response_stream_id)
        self._timeout = timeout
        self._credentials = credentials
        self._on_challenge = on_challenge
        self._on_recording_signal = on_recording_signal
        self._owned: aeron_connect | None = None
        self._tasks: anyio.abc.TaskGroup | None = None
        self._archive: AsyncAeronArchive | None = None

    async def __aenter__(self) -> AsyncAeronArchive:
        aeron = self._aeron
        if aeron is None:
            self._owned = aeron_connect(self._aeron_dir)
            aeron = await self._owned.__aenter__()
        publication = subscription = None
        try:
            response_channel = _session.with_session_id(self._response[0], _session.new_session_id())
            request_channel = _session.with_session_id(self._control[0], _session.new_session_id())
            subscription = await aeron.add_subscription(response_channel, self._response[1])
            publication = await aeron.add_exclusive_publication(request_channel, self._control[1])
            publication.publication.channel = request_channel
            archive = AsyncAeronArchive(aeron, publication, subscription, self._timeout, self._on_recording_signal)
            self._tasks = anyio.create_task_group()
            await self._tasks.__aenter__()
            self._tasks.start_soon(archive._read_responses)
            self._tasks.start_soon(archive._keep_alive)
            self._archive = archive
            await archive._connect(response_channel, self._response[1], self._credentials, self._on_challenge)
            return archive
        except BaseException as exc:
            await self._shut(type(exc), exc, exc.__traceback__)
            if publication is not None:
                publication.close()
            if subscription is not None:
                subscription.close()
            raise

    async def _shut(self, *exc: Any) -> None:
        archive, self._archive = self._archive, None
        if archive is not None:
            archive.close()
        tasks, self._tasks = self._tasks, None
        if tasks is not None:
            tasks.cancel_scope.cancel()
            await tasks.__aexit__(None, None, None)
        owned, self._owned = self._owned, None
        if owned is not None:
            await owned.__aexit__(*exc)

    async def __aexit__(self, *exc: Any) -> None:
        await self._shut(*exc)
