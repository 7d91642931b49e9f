"""The synchronous archive client: `AeronArchive.connect()`, then record, list, replay, truncate,
purge, with the archive's answers as return values and its refusals as ArchiveError subclasses.

It speaks Aeron Archive's control protocol: requests on an exclusive publication to the archive's
control channel (local default `aeron:ipc?term-length=64k`, stream 10), responses on a subscription
to this client's response channel (stream 20), both with a session id of their own. The protocol
is the sans-I/O ControlSession of `_session.py`; this client drives it: a call offers the
session's request (with its idle strategy while back-pressured) and polls the responses into the
session until the answer arrives or the timeout passes. Recording signals that arrive meanwhile
are queued for `poll_for_recording_signals`. A control session that hears nothing from its client
for the archive's session timeout is closed: a client that is idle for long should call
`poll_for_recording_signals()` (or `keep_alive()`) every few seconds; every call sends a
keep-alive when a second has passed since the last request.

One AeronArchive belongs to one thread at a time (calls from several threads take turns on a lock).
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from .._closing import ClosedOnExit
from ..client import Aeron, ExclusivePublication, FragmentAssembler, Header, Image, Message, Subscription
from ..counters import Counter
from ..errors import ArchiveError, ArchiveTimeoutError, ClosedError
from ..idle import IdleStrategy
from . import _channels, _session
from .auth import CredentialsSupplier, resolve_credentials
from ._channels import (
    CONTROL_STREAM_ID,
    DEFAULT_REPLAY_CHANNEL,
    DEFAULT_REPLAY_STREAM_ID,
    DEFAULT_TIMEOUT,
    LOCAL_CONTROL_CHANNEL,
    RESPONSE_CHANNEL,
    RESPONSE_STREAM_ID,
)
from ._session import (
    Call,
    ControlSession,
    Encoder,
    Operations,
    SignalWait,
    operation,
)
from .records import ControlResponse, RecordingSignal, RecordingSignalEvent

if TYPE_CHECKING:
    from .replay_merge import ReplayMerge

ChallengeHandler = Callable[[bytes], bytes]
SignalHandler = Callable[[RecordingSignalEvent], object]
T = TypeVar("T")


class AeronArchive(ClosedOnExit, Operations):
    """A control session with an archive. Made by `AeronArchive.connect(...)`; `close()` (or the
    `with` block) ends the session, and closes the Aeron client too if `connect` made it."""

    _blocking: Literal[True] = True

    def __init__(
        self, aeron: Aeron, owns_aeron: bool, publication: ExclusivePublication, subscription: Subscription,
        timeout: float, idle: str, on_recording_signal: SignalHandler | None = None,
    ) -> None:
        self.aeron = aeron
        self._owns_aeron = owns_aeron
        self.control_publication = publication
        self.response_subscription = subscription
        self._session = ControlSession(timeout)
        self._idle = IdleStrategy(idle)
        self._lock = threading.RLock()
        self._assembler = FragmentAssembler(self._on_fragment)
        self._was_connected = False
        self._closed = False
        self._replays: list[Replay] = []
        self.on_recording_signal = on_recording_signal

    # --- connecting --------------------------------------------------------------------------

    @classmethod
    def connect(
        cls,
        aeron: Aeron | None = None,
        *,
        aeron_dir: str | None = None,
        control_channel: str = LOCAL_CONTROL_CHANNEL,
        control_stream_id: int = CONTROL_STREAM_ID,
        response_channel: str = RESPONSE_CHANNEL,
        response_stream_id: int = RESPONSE_STREAM_ID,
        timeout: float = DEFAULT_TIMEOUT,
        credentials: bytes | CredentialsSupplier | None = None,
        on_challenge: ChallengeHandler | None = None,
        idle_strategy: str = "backoff",
        on_recording_signal: SignalHandler | None = None,
    ) -> AeronArchive:
        """Open a control session with the archive listening on `control_channel` +
        `control_stream_id` (by default the local one beside the driver, over IPC).

        `aeron` is the client to use; without it one is connected to `aeron_dir` (the default
        directory when None) and closed with the archive. `timeout` bounds the connect and each
        request's answer (ArchiveTimeoutError). `credentials` (bytes such as b"principal:secret", or a
        CredentialsSupplier) go in the AuthConnect request; None takes them from the environment
        (AERON_ARCHIVE_CLIENT_CREDENTIALS, or the owner-only file AERON_ARCHIVE_CLIENT_CREDENTIALS_FILE
        names), else none. An archive that challenges them gets `on_challenge(challenge) -> credentials`'s
        answer (or the supplier's).
        `on_recording_signal(signal)` is called for each recording signal that
        `poll_for_recording_signals` hands out.
        """
        _channels.check_connect(control_channel, response_channel, timeout)
        encoded, on_challenge = resolve_credentials(credentials, on_challenge)
        owns = aeron is None
        client = Aeron.connect(aeron_dir) if aeron is None else aeron
        publication = subscription = None
        try:
            request, response = _channels.session_channels(control_channel, response_channel)
            subscription = client.add_subscription(response, response_stream_id)
            request = _channels.request_channel(request, response, subscription.registration_id)
            publication = client.add_exclusive_publication(request, control_stream_id)
            publication.channel = request
            archive = cls(client, owns, publication, subscription, timeout, idle_strategy, on_recording_signal)
            archive._run(archive._session.connect(response, response_stream_id, encoded, on_challenge))
            return archive
        except BaseException:
            if publication is not None:
                publication.close()
            if subscription is not None:
                subscription.close()
            if owns:
                client.close()
            raise

    # --- driving the session -----------------------------------------------------------------

    def _on_fragment(self, data: memoryview, header: Header) -> None:
        self._session.receive(data)

    def _poll(self) -> int:
        subscription = self.response_subscription
        work: int = subscription.poll(self._assembler, 16)
        if subscription.is_connected:
            self._was_connected = True
        elif self._was_connected and not work:
            raise self._session.gone(control=False)
        return work

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError("the archive client is closed: connect a new one (AeronArchive.connect)")

    def _offer(self, call: Call[Any], request: bytes, via: ExclusivePublication | None = None) -> None:
        session, idle = self._session, self._idle
        publication = self.control_publication if via is None else via
        idle.reset()
        while True:
            result = publication.offer(request)
            if result >= 0:
                session.sent(time.monotonic())
                return
            if result == -1 and session.connected:  # NOT_CONNECTED after a session
                session.abandon(call)
                raise session.gone(call.operation, control=True)
            if session.overdue(call, time.monotonic()):
                raise session.unsent(call, listening=result != -1, channel=publication.channel or "",
                                     stream_id=publication.stream_id, aeron_dir=self.aeron.aeron_dir, result=result)
            idle.idle(0)

    def _await(self, call: Call[Any]) -> None:
        session, idle = self._session, self._idle
        idle.reset()
        while not call.answered:
            if not self._poll():
                if session.overdue(call, time.monotonic()):
                    raise session.timed_out(call)
                idle.idle(0)

    def _run(self, call: Call[T], via: ExclusivePublication | None = None) -> T:
        """Send the call's requests (on `via`, else the session's publication) and poll for their
        answers; the call's result."""
        with self._lock:
            self._check_open()
            session = self._session
            try:
                request: bytes | None = session.start(call, time.monotonic())
                while request is not None:
                    self._offer(call, request, via)
                    self._await(call)
                    request = session.advance(call, time.monotonic())
            except BaseException:
                session.abandon(call)
                raise
            return call.result()

    def _request(self, encode: Encoder, operation: str) -> ControlResponse:
        """Any request; the ControlResponse answering it, as it is."""
        return self._run(self._session.exchange(encode, operation))

    keep_alive = operation(ControlSession.keep_alive)

    # --- replay ------------------------------------------------------------------------------

    def replay(
        self, recording_id: int, position: int | None = None, length: int | None = None, *,
        channel: str = DEFAULT_REPLAY_CHANNEL, stream_id: int = DEFAULT_REPLAY_STREAM_ID, follow: bool = True,
        limit_counter: Counter | int | None = None, file_io_max_length: int | None = None,
    ) -> Replay:
        """Start a replay (see `start_replay` for the arguments) and subscribe to it: the Replay's
        messages carry the recorded positions. `with archive.replay(...) as replay: for message in
        replay: ...` iterates until the replay ends (its length reached, or a followed recording
        stopped); leaving the block stops the replay and closes its subscription.

        A `channel` with `control-mode=response` (a client behind NAT: reference aeron-wave3.md
        1.5) is replayed to with a replay token: the replay's subscription first, then the request
        on a publication of its own naming it (docs/architecture.md, "Replays over response
        channels")."""
        if _channels.is_response_channel(channel):
            return self._replay_by_token(recording_id, position, length, channel=channel, stream_id=stream_id,
                                         follow=follow, limit_counter=limit_counter,
                                         file_io_max_length=file_io_max_length)
        replay_session_id = self.start_replay(
            recording_id, position, length, channel=channel, stream_id=stream_id, follow=follow,
            limit_counter=limit_counter, file_io_max_length=file_io_max_length)
        first_image: list[Image] = []
        try:
            # the image is kept from its AVAILABLE event: a short replay can be read to its end, and
            # its image go (drained), before the subscription's image list is next looked at
            subscription = self.aeron.add_subscription(
                _channels.replay_subscription_channel(channel, replay_session_id), stream_id,
                on_available_image=lambda image: None if first_image else first_image.append(image))
        except BaseException:
            self._stop_replay_quietly(replay_session_id)
            raise
        replay = Replay(self, recording_id, replay_session_id, subscription, first_image)
        self._replays = [r for r in self._replays if not r.is_closed]
        self._replays.append(replay)
        return replay

    def _replay_by_token(
        self, recording_id: int, position: int | None, length: int | None, *, channel: str, stream_id: int,
        follow: bool, limit_counter: Counter | int | None, file_io_max_length: int | None,
    ) -> Replay:
        make = functools.partial(self._session.start_replay, recording_id, position, length, channel=channel,
                                 stream_id=stream_id, follow=follow, limit_counter=limit_counter,
                                 file_io_max_length=file_io_max_length)
        make()  # the arguments are checked before anything is added
        first_image: list[Image] = []
        subscription = self.aeron.add_subscription(
            channel, stream_id, on_available_image=lambda image: None if first_image else first_image.append(image))
        request = None
        try:
            token = self.replay_token(recording_id)
            request = self.aeron.add_exclusive_publication(
                _channels.token_request_channel(self.control_publication.channel or "", subscription.registration_id),
                self.control_publication.stream_id)
            deadline = time.monotonic() + self.timeout
            while not request.is_connected:
                if time.monotonic() > deadline:
                    raise ArchiveTimeoutError(
                        f"replay({recording_id}) over the response channel {channel}: its request publication did "
                        f"not connect to the archive within {self.timeout} s", None)
                self._idle.idle(0)
            replay_session_id = self._run(make(_token=token), via=request)
        except BaseException:
            subscription.close()
            raise
        finally:
            if request is not None:
                request.close()
        replay = Replay(self, recording_id, replay_session_id, subscription, first_image)
        self._replays = [r for r in self._replays if not r.is_closed]
        self._replays.append(replay)
        return replay

    def replay_merge(
        self, recording_id: int, *, channel: str = "aeron:udp?control-mode=manual", stream_id: int | None = None,
        replay_destination: str, live_destination: str, position: int | None = None,
        progress_timeout: float = 5.0,
    ) -> ReplayMerge:
        """Catch up on an active recording from `position` (its start when None) and join its live
        stream: a multi-destination subscription on `channel` (`control-mode=manual`) with the
        replay sent to `replay_destination` (`aeron:udp?endpoint=host:port`, port 0 for any) and
        then the live stream received at `live_destination` (`aeron:udp?endpoint=host:port`, where
        the live publication sends: a destination of a manual MDC publication, say). Poll it with `merge.poll_messages()`: each position arrives once, replayed
        then live; `merge.is_merged` says when the replay was dropped. See replay_merge.py."""
        from .replay_merge import ReplayMerge, check_merge_channels

        check_merge_channels(channel, replay_destination, live_destination)
        descriptor = self.list_recording(recording_id)
        stream = descriptor.stream_id if stream_id is None else _channels.check_stream_id(stream_id)
        subscription = self.aeron.add_subscription(channel, stream)
        try:
            return ReplayMerge(self, subscription, channel, recording_id, replay_destination=replay_destination,
                               live_destination=live_destination, position=position,
                               progress_timeout=progress_timeout, owns_subscription=True)
        except BaseException:
            subscription.close()
            raise

    def _stop_replay_quietly(self, replay_session_id: int) -> None:
        try:
            self.stop_replay(replay_session_id)
        except (ArchiveError, ClosedError):
            pass


    # --- signals, liveness -------------------------------------------------------------------

    def poll_for_recording_signals(self) -> list[RecordingSignalEvent]:
        """Read the response stream and return the recording signals that arrived (START, STOP,
        EXTEND, DELETE, ...) since the last call, after passing each to the connect's
        `on_recording_signal` handler if there is one; sends a keep-alive when one is due."""
        with self._lock:
            self._check_open()
            self._poll()
            self._keep_alive_if_due()
            signals = self._session.drain_signals()
        handler = self.on_recording_signal
        if handler is not None:
            for signal in signals:
                handler(signal)
        return signals

    def wait_for_signal(
        self, signal: RecordingSignal, *, recording_id: int | None = None, subscription_id: int | None = None,
        timeout: float | None = None, correlation_id: int | None = None,
    ) -> RecordingSignalEvent:
        """Wait for a `signal` (of `recording_id` / `subscription_id` / `correlation_id` when
        given) and return it; signals that do not match are kept for `poll_for_recording_signals`.
        ArchiveTimeoutError after `timeout` (the client's timeout when None)."""
        return self._wait_signal(SignalWait(signal, recording_id, subscription_id,
                                            self.timeout if timeout is None else timeout, time.monotonic(), correlation_id))

    def _wait_signal(self, wait: SignalWait) -> RecordingSignalEvent:
        with self._lock:
            self._check_open()
            idle = self._idle
            idle.reset()
            while True:
                event = self._session.take_signal(wait)
                if event is not None:
                    return event
                work = self._poll()
                self._keep_alive_if_due()
                if not work:
                    wait.expire(time.monotonic())
                    idle.idle(0)

    def wait_for_replication(
        self, replication_id: int, signal: RecordingSignal = RecordingSignal.REPLICATE_END, *,
        timeout: float | None = None,
    ) -> RecordingSignalEvent:
        """Wait for a replication's `signal` (REPLICATE_END: it has ended; SYNC, MERGE, EXTEND,
        ...) and return it (its recording_id is the destination recording). Raises the
        ArchiveError the replication ended with, if it failed (e.g. the source archive went
        away: replicate again with dst_recording_id= to resume), or one saying it ended (its
        REPLICATE_END came) without `signal`."""
        event = self._wait_signal(_session.replication_wait(replication_id, signal, self.timeout if timeout is None else
                                                            timeout, time.monotonic()))
        return _session.replication_outcome(self._session, replication_id, signal, event)

    def _keep_alive_if_due(self) -> None:
        if self._session.keep_alive_due(time.monotonic()):
            self.keep_alive()

    # --- closing -----------------------------------------------------------------------------

    @property
    def is_closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Stop the replays still running and close their subscriptions, end the control session
        (CloseSession) and close the control publication and response subscription (and the Aeron
        client if `connect` made it)."""
        with self._lock:
            if self._closed:
                return
            replays, self._replays = self._replays, []
            for replay in replays:
                replay.close()  # stops the replay if it still runs (quietly: the archive may be gone)
            self._closed = True
            request = self._session.close()
            try:
                if request is not None and self.control_publication.is_connected:
                    self.control_publication.offer(request)
            except ClosedError:
                pass
            self.control_publication.close()
            self.response_subscription.close()
            if self._owns_aeron:
                self.aeron.close()

    def __repr__(self) -> str:
        return f"<AeronArchive control_session_id={self.control_session_id}{' closed' if self._closed else ''}>"


class Replay(ClosedOnExit):
    """A running replay and the subscription that reads it (from `AeronArchive.replay`).

    `poll_messages()` returns what has arrived (whole messages, with the recorded positions);
    iterating yields every message until the replay ends: the replay publication reached its end
    (the length, or a followed recording stopped) and everything was read. `close()` stops the
    replay if it is still running and closes the subscription."""

    def __init__(self, archive: AeronArchive, recording_id: int, replay_session_id: int,
                 subscription: Subscription, first_image: list[Image] | None = None) -> None:
        self.archive = archive
        self.recording_id = recording_id
        self.replay_session_id = replay_session_id
        self.subscription = subscription
        self._first_image = first_image if first_image is not None else []
        self._idle = IdleStrategy("backoff")

    @property
    def image(self) -> Image | None:
        """The replay's image, once the replay publication has connected (still there once it
        has closed)."""
        first = self._first_image
        if not first:
            images = self.subscription.images  # takes the image events, which fill first_image
            if images and not first:
                first.append(images[0])
        return first[0] if first else None

    @property
    def is_closed(self) -> bool:
        return self.subscription.is_closed

    @property
    def is_done(self) -> bool:
        """True once the replay has ended and everything it sent was read."""
        image = self.image
        return image is not None and (image.is_end_of_stream or image.is_closed) and not self.subscription.images

    def poll_messages(self, max_messages: int = 1024) -> list[Message]:
        return self.subscription.poll_messages(max_messages)

    def messages(self, timeout: float | None = None) -> Iterator[Message]:
        """Every message until the replay ends; with `timeout`, ArchiveTimeoutError when nothing
        arrives for that long (and, in any case, when the replay stream has not connected within
        the archive client's timeout)."""
        idle = self._idle
        last = time.monotonic()
        connect_deadline = last + self.archive.timeout
        while True:
            batch = self.subscription.poll_messages(1024)
            if batch:
                last = time.monotonic()
                yield from batch
                idle.reset()
                continue
            image = self.image
            if image is not None and image.is_end_of_stream:
                if not self.subscription.poll_messages(1024):
                    return
                continue
            if image is not None and image.is_closed:
                return
            if image is None and time.monotonic() > connect_deadline:
                raise ArchiveTimeoutError(
                    f"replay {self.replay_session_id} of recording {self.recording_id}: the replay stream did not "
                    f"connect within {self.archive.timeout} s", None)
            if timeout is not None and time.monotonic() - last > timeout:
                raise ArchiveTimeoutError(
                    f"replay {self.replay_session_id} of recording {self.recording_id}: nothing for {timeout} s", None)
            idle.idle(0)

    def __iter__(self) -> Iterator[Message]:
        return self.messages()

    def close(self) -> None:
        if self.subscription.is_closed:
            return
        image = self.image
        if image is None or not image.is_end_of_stream:
            if not self.archive.is_closed:
                self.archive._stop_replay_quietly(self.replay_session_id)
        self.subscription.close()

    def __repr__(self) -> str:
        return f"<Replay recording={self.recording_id} session={self.replay_session_id}>"
