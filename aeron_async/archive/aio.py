"""The archive client for async code on anyio (asyncio, uvloop, trio).

    async with aeron_async.archive.aio.connect(client) as archive:
        await archive.start_recording("aeron:ipc", 1001)
        ...
        async for message in archive.replay(recording_id, position=0, length=4096):
            ...

The protocol is the sans-I/O ControlSession of `_session.py`, the one the synchronous client
drives too; this client awaits it. A background task reads the response stream into the session,
which hands each answer to the call waiting for its correlation id (any number of tasks may have
requests in flight) and queues recording signals for `recording_signals()`; another sends a
keep-alive every second, so an idle session stays open. Waiting never spins: requests wait on the
response subscription's eventfd (see aeron_async.aio).
"""

from __future__ import annotations

import collections
import contextlib
import functools
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, ClassVar, Literal, Self, TypeVar

import anyio
import anyio.abc

from ..aio import AsyncAeron, AsyncImageView, AsyncPublication, AsyncSubscription
from ..aio import connect as aeron_connect
from ..client import Image, Message
from ..counters import Counter
from ..errors import AeronError, ArchiveConnectionError, ArchiveError, ArchiveTimeoutError
from . import _channels, _session
from ._channels import (
    CONTROL_STREAM_ID,
    DEFAULT_REPLAY_CHANNEL,
    DEFAULT_REPLAY_STREAM_ID,
    DEFAULT_TIMEOUT,
    KEEP_ALIVE_INTERVAL,
    LOCAL_CONTROL_CHANNEL,
    RESPONSE_CHANNEL,
    RESPONSE_STREAM_ID,
)
from ._session import (
    Answered,
    Call,
    ControlSession,
    Operations,
    SignalArrived,
    SignalWait,
)
from .auth import CredentialsSupplier, resolve_credentials
from .client import ChallengeHandler, SignalHandler
from .persistent import AsyncPersistentSubscription
from .replay_merge import (
    DEFAULT_PROGRESS_TIMEOUT,
    MergeState,
    bound_port,
    check_merge_channels,
    destination_endpoint,
    merge_window,
    replay_channel_for,
)
from .records import RecordingSignal, RecordingSignalEvent

__all__ = ["AsyncAeronArchive", "AsyncPersistentSubscription", "AsyncReplay", "AsyncReplayMerge", "connect"]

MAX_QUEUED_SIGNALS = 65536
T = TypeVar("T")


class AsyncAeronArchive(Operations):
    """A control session with an archive, for async code. Made by `connect(...)`, whose `async
    with` owns it. The methods are those of the synchronous AeronArchive, awaited."""

    _blocking: Literal[False] = False

    def __init__(self, aeron: AsyncAeron, publication: AsyncPublication, subscription: AsyncSubscription,
                 timeout: float, on_recording_signal: SignalHandler | None = None) -> None:
        self.aeron = aeron
        self.control_publication = publication
        self.response_subscription = subscription
        self._session = ControlSession(timeout, max_signals=MAX_QUEUED_SIGNALS)
        self._waiting: dict[Call[Any], anyio.Event] = {}
        self._signal_arrived = anyio.Event()
        self._listing = anyio.Lock()
        self._failure: BaseException | None = None
        self._closed = False
        self._replays: list[AsyncReplay] = []
        self.on_recording_signal = on_recording_signal

    # --- the background tasks ----------------------------------------------------------------

    def _dispatch(self, data: bytes | memoryview) -> None:
        event = self._session.receive(data)
        if isinstance(event, Answered):
            waiter = self._waiting.get(event.call)
            if waiter is not None:
                waiter.set()
        elif isinstance(event, SignalArrived):
            arrived, self._signal_arrived = self._signal_arrived, anyio.Event()
            arrived.set()
            if self.on_recording_signal is not None:
                self.on_recording_signal(event.signal)

    def _fail(self, failure: BaseException) -> None:
        self._failure = failure
        for waiter in self._waiting.values():
            waiter.set()
        arrived, self._signal_arrived = self._signal_arrived, anyio.Event()
        arrived.set()

    async def _read_responses(self) -> None:
        try:
            async for batch in self.response_subscription.batches(256):
                for message in batch:
                    self._dispatch(message.data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            self._fail(ArchiveConnectionError(f"the archive client's Aeron client failed: {exc}"))

    async def _keep_alive(self) -> None:
        session = self._session
        was_connected = False
        while True:
            await anyio.sleep(KEEP_ALIVE_INTERVAL / 2)
            if self.response_subscription.is_connected:
                was_connected = True
            elif was_connected:
                self._fail(session.gone(control=False))
                return
            if session.connected and not self.control_publication.is_connected:
                self._fail(session.gone(control=True))
                return
            now = anyio.current_time()
            if session.keep_alive_due(now):
                call = session.keep_alive()
                request = session.start(call, now)
                session.sent(now)
                self.control_publication.offer_nowait(request)
                session.advance(call, now)

    # --- driving the session -----------------------------------------------------------------

    def _check_usable(self) -> None:
        if self._failure is not None:
            raise self._failure
        if self._closed:
            raise anyio.ClosedResourceError("the archive client is closed: connect a new one")

    async def _send(self, call: Call[Any], request: bytes, via: AsyncPublication | None = None) -> None:
        session = self._session
        publication = self.control_publication if via is None else via
        if session.connected and not publication.is_connected:
            raise session.gone(call.operation, control=True)
        while True:
            with anyio.CancelScope(deadline=call.deadline):
                await publication.offer(request)
                session.sent(anyio.current_time())
                return
            if session.overdue(call, anyio.current_time()):
                raise session.unsent(call, listening=publication.is_connected,
                                     channel=publication.publication.channel or "", stream_id=publication.stream_id,
                                     aeron_dir=self.aeron.aeron_dir)

    async def _exchange(self, call: Call[Any], request: bytes, via: AsyncPublication | None = None) -> None:
        """Send one request of `call` (on `via`, else the session's publication) and wait for its
        answer (or its deadline)."""
        session = self._session
        waiter = self._waiting[call] = anyio.Event()
        try:
            await self._send(call, request, via)
            while not call.answered:
                with anyio.CancelScope(deadline=call.deadline):
                    await waiter.wait()
                if self._failure is not None:
                    raise self._failure
                if not call.answered and session.overdue(call, anyio.current_time()):
                    raise session.timed_out(call)
        finally:
            del self._waiting[call]

    async def _run(self, call: Call[T], via: AsyncPublication | None = None) -> T:
        """Send the call's requests and await their answers; the call's result."""
        self._check_usable()
        session = self._session
        async with self._listing if call.listing else contextlib.nullcontext():
            try:
                request: bytes | None = session.start(call, anyio.current_time())
                while request is not None:
                    await self._exchange(call, request, via)
                    request = session.advance(call, anyio.current_time())
            except BaseException:
                session.abandon(call)
                raise
        return call.result()

    # --- replay ------------------------------------------------------------------------------

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
        make = functools.partial(self._session.start_replay, recording_id, position, length, channel=channel,
                                 stream_id=stream_id, follow=follow, limit_counter=limit_counter,
                                 file_io_max_length=file_io_max_length)
        make()
        replay = AsyncReplay(self, recording_id, make, channel, stream_id)
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

    # --- signals -----------------------------------------------------------------------------

    def poll_recording_signals(self) -> list[RecordingSignalEvent]:
        """The recording signals that arrived since the last call (without waiting)."""
        return self._session.drain_signals()

    async def recording_signals(self) -> AsyncIterator[RecordingSignalEvent]:
        """`async for signal in archive.recording_signals()`: every recording signal (START, STOP,
        EXTEND, DELETE, ...) as it arrives; ends when the client closes."""
        signals = self._session.signals
        while True:
            while signals:
                yield signals.popleft()
            if self._closed:
                return
            self._check_usable()
            await self._signal_arrived.wait()

    async def wait_for_signal(
        self, signal: RecordingSignal, *, recording_id: int | None = None, subscription_id: int | None = None,
        timeout: float | None = None, correlation_id: int | None = None,
    ) -> RecordingSignalEvent:
        """Wait for a `signal` (of `recording_id` / `subscription_id` / `correlation_id` when
        given); other signals stay queued. ArchiveTimeoutError after `timeout` (the client's
        timeout when None)."""
        return await self._wait_signal(SignalWait(signal, recording_id, subscription_id,
                                                  self.timeout if timeout is None else timeout, anyio.current_time(),
                                                  correlation_id))

    async def _wait_signal(self, wait: SignalWait) -> RecordingSignalEvent:
        while True:
            event = self._session.take_signal(wait)
            if event is not None:
                return event
            self._check_usable()
            with anyio.CancelScope(deadline=wait.deadline):
                await self._signal_arrived.wait()
            wait.expire(anyio.current_time())

    async def wait_for_replication(
        self, replication_id: int, signal: RecordingSignal = RecordingSignal.REPLICATE_END, *,
        timeout: float | None = None,
    ) -> RecordingSignalEvent:
        """As AeronArchive.wait_for_replication: a replication's `signal` (REPLICATE_END by
        default); raises the ArchiveError the replication ended with, if it failed, or one saying
        it ended without `signal`."""
        event = await self._wait_signal(_session.replication_wait(
            replication_id, signal, self.timeout if timeout is None else timeout, anyio.current_time()))
        return _session.replication_outcome(self._session, replication_id, signal, event)

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
        request = self._session.close()
        if request is not None and self._failure is None:
            try:
                self.control_publication.offer_nowait(request)
            except (AeronError, anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass
        self.control_publication.close()
        self.response_subscription.close()
        self._fail(anyio.ClosedResourceError("the archive client is closed"))

    def __repr__(self) -> str:
        return f"<AsyncAeronArchive control_session_id={self.control_session_id}>"


class _MessageIterator:
    """`async for message in ...`: the messages of `receive()` until it raises `_END`."""

    _END: ClassVar[type[Exception]]

    async def receive(self) -> Message:
        raise NotImplementedError

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Message:
        try:
            return await self.receive()
        except self._END:
            raise StopAsyncIteration from None


class AsyncReplay(_MessageIterator):
    """A replay for `async for` (and `async with`): see AsyncAeronArchive.replay."""

    _END = anyio.EndOfStream

    def __init__(self, archive: AsyncAeronArchive, recording_id: int, make: Callable[..., Call[int]], channel: str,
                 stream_id: int) -> None:
        self.archive = archive
        self.recording_id = recording_id
        self.replay_session_id: int | None = None
        self.subscription: AsyncSubscription | None = None
        self._make = make  # the replay's call, its arguments checked by replay()
        self._channel = channel
        self._stream_id = stream_id
        self._view: AsyncImageView | None = None
        self._first_image: list[Image] = []
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
        if _channels.is_response_channel(self._channel):
            return await self._start_by_token()
        replay_session_id = await archive._run(self._make())
        self.replay_session_id = replay_session_id
        first = self._first_image
        try:
            # the image is kept from its AVAILABLE event: a replay that has sent everything is
            # drained once read, and the driver withdraws its image, maybe before it is looked for
            self.subscription = await archive.aeron.add_subscription(
                _channels.replay_subscription_channel(self._channel, replay_session_id), self._stream_id,
                on_available_image=lambda image: None if first else first.append(image))
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self._stop_quietly()
            raise
        return replay_session_id

    async def _start_by_token(self) -> int:
        """A replay over a response channel (docs/architecture.md, "Replays over response
        channels"): subscribe, take a replay token, request the replay with it on a publication of
        its own that names the subscription."""
        archive = self.archive
        self.subscription = await archive.aeron.add_subscription(self._channel, self._stream_id)
        request = None
        try:
            token = await archive.replay_token(self.recording_id)
            control = archive.control_publication
            request = await archive.aeron.add_exclusive_publication(
                _channels.token_request_channel(control.publication.channel or "",
                                               self.subscription.subscription.registration_id), control.stream_id)
            try:
                with anyio.fail_after(archive.timeout):
                    while not request.is_connected:
                        await anyio.sleep(0.001)
            except TimeoutError:
                raise ArchiveTimeoutError(
                    f"replay({self.recording_id}) over the response channel {self._channel}: its request publication "
                    f"did not connect to the archive within {archive.timeout} s", None) from None
            replay_session_id: int = await archive._run(self._make(_token=token), via=request)
        except BaseException:
            self.close_subscription()
            raise
        finally:
            if request is not None:
                request.close()
        self.replay_session_id = replay_session_id
        return replay_session_id

    async def _image_view(self) -> AsyncImageView:
        if self._view is not None:
            return self._view
        subscription = self.subscription
        assert subscription is not None
        pause = 0.0005
        first = self._first_image
        try:
            with anyio.fail_after(self.archive.timeout):
                while not first:
                    images = subscription.images  # takes the image events, which fill `first`
                    if images and not first:
                        first.append(images[0])
                    if not first:
                        await anyio.sleep(pause)
                        pause = min(pause * 2, 0.02)
        except TimeoutError:
            raise ArchiveTimeoutError(
                f"replay {self.replay_session_id} of recording {self.recording_id}: the replay stream did not "
                f"connect within {self.archive.timeout} s ({self._channel} stream {self._stream_id})") from None
        self._view = subscription.image_view(first[0])
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


class AsyncReplayMerge(_MessageIterator):
    """A replay merged into its live stream, for `async for` (see AsyncAeronArchive.replay_merge).
    The merge's steps run between the batches the iteration receives."""

    _END = anyio.ClosedResourceError

    def __init__(self, archive: AsyncAeronArchive, recording_id: int, channel: str, stream_id: int | None,
                 replay_destination: str, live_destination: str, position: int | None,
                 progress_timeout: float) -> None:
        self.archive = archive
        self.recording_id = _channels.check_int(recording_id, "recording_id", 0)
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
        stream_id = descriptor.stream_id if self._stream_id is None else _channels.check_stream_id(self._stream_id)
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
        self.replay_session_id = await archive.start_replay(
            self.recording_id, self._position, _channels.MAX_LENGTH, channel=self._replay_channel, stream_id=stream_id,
            _merge=True)
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
        credentials: bytes | CredentialsSupplier | None = None,
        on_challenge: ChallengeHandler | None = None,
        on_recording_signal: SignalHandler | None = None,
    ) -> None:
        _channels.check_connect(control_channel, response_channel, timeout)
        credentials, on_challenge = resolve_credentials(credentials, on_challenge)
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
            request_channel, response_channel = _channels.session_channels(self._control[0], self._response[0])
            subscription = await aeron.add_subscription(response_channel, self._response[1])
            request_channel = _channels.request_channel(request_channel, response_channel,
                                                       subscription.subscription.registration_id)
            publication = await aeron.add_exclusive_publication(request_channel, self._control[1])
            publication.publication.channel = request_channel
            archive = AsyncAeronArchive(aeron, publication, subscription, self._timeout, self._on_recording_signal)
            self._tasks = anyio.create_task_group()
            await self._tasks.__aenter__()
            self._tasks.start_soon(archive._read_responses)
            self._tasks.start_soon(archive._keep_alive)
            self._archive = archive
            await archive._run(archive._session.connect(response_channel, self._response[1], self._credentials,
                                                        self._on_challenge))
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
