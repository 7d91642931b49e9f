"""The synchronous archive client: `AeronArchive.connect()`, then record, list, replay, truncate,
purge, with the archive's answers as return values and its refusals as ArchiveError subclasses.

It speaks Aeron Archive's control protocol: requests on an exclusive publication to the archive's
control channel (local default `aeron:ipc?term-length=64k`, stream 10), responses on a subscription
to this client's response channel (stream 20), both with a session id of their own. Each request
carries a correlation id; the call polls the responses until the one with that id arrives or the
timeout passes. Recording signals that arrive meanwhile are queued for
`poll_for_recording_signals`. A control session that hears nothing from its client for the
archive's session timeout is closed: a client that is idle for long should call
`poll_for_recording_signals()` (or `keep_alive()`) every few seconds; every call sends a
keep-alive when a second has passed since the last request.

One AeronArchive belongs to one thread at a time (calls from several threads take turns on a lock).
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..client import Aeron, ExclusivePublication, FragmentAssembler, Header, Image, Message, Subscription
from ..counters import Counter
from ..errors import (
    ArchiveConnectionError,
    ArchiveError,
    ArchiveTimeoutError,
    AuthenticationError,
    ClosedError,
)
from ..idle import IdleStrategy
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
if TYPE_CHECKING:
    from .replay_merge import ReplayMerge

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

ChallengeHandler = Callable[[bytes], bytes]
SignalHandler = Callable[[RecordingSignalEvent], object]
Collector = Callable[[Any], bool]


class AeronArchive:
    """A control session with an archive. Made by `AeronArchive.connect(...)`; `close()` (or the
    `with` block) ends the session, and closes the Aeron client too if `connect` made it."""

    def __init__(
        self, aeron: Aeron, owns_aeron: bool, publication: ExclusivePublication, subscription: Subscription,
        timeout: float, idle: str, on_recording_signal: SignalHandler | None = None,
    ) -> None:
        self.aeron = aeron
        self._owns_aeron = owns_aeron
        self.control_publication = publication
        self.response_subscription = subscription
        self.timeout = timeout
        self.control_session_id = NULL_VALUE
        self._idle = IdleStrategy(idle)
        self._lock = threading.RLock()
        self._inbox: collections.deque[Any] = collections.deque()
        self._signals: collections.deque[RecordingSignalEvent] = collections.deque()
        self._assembler = FragmentAssembler(self._on_fragment)
        self._correlation = _session.new_session_id() << 20
        self._last_request = time.monotonic()
        self._was_connected = False
        self._closed = False
        self.malformed_responses = 0
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
        credentials: bytes = b"",
        on_challenge: ChallengeHandler | None = None,
        idle_strategy: str = "backoff",
        on_recording_signal: SignalHandler | None = None,
    ) -> AeronArchive:
        """Open a control session with the archive listening on `control_channel` +
        `control_stream_id` (by default the local one beside the driver, over IPC).

        `aeron` is the client to use; without it one is connected to `aeron_dir` (the default
        directory when None) and closed with the archive. `timeout` bounds the connect and each
        request's answer (ArchiveTimeoutError). `credentials` go in the AuthConnect request; an
        archive that challenges them gets `on_challenge(challenge) -> credentials`'s answer.
        `on_recording_signal(signal)` is called for each recording signal that
        `poll_for_recording_signals` hands out.
        """
        _session.check_channel(control_channel, "control_channel")
        _session.check_channel(response_channel, "response_channel")
        if not timeout > 0:
            raise ValueError(f"timeout={timeout!r} must be a positive number of seconds")
        owns = aeron is None
        client = Aeron.connect(aeron_dir) if aeron is None else aeron
        publication = subscription = None
        try:
            response = _session.with_session_id(response_channel, _session.new_session_id())
            request = _session.with_session_id(control_channel, _session.new_session_id())
            subscription = client.add_subscription(response, response_stream_id)
            publication = client.add_exclusive_publication(request, control_stream_id)
            publication.channel = request
            archive = cls(client, owns, publication, subscription, timeout, idle_strategy, on_recording_signal)
            archive._connect(response, response_stream_id, credentials, on_challenge)
            return archive
        except BaseException:
            if publication is not None:
                publication.close()
            if subscription is not None:
                subscription.close()
            if owns:
                client.close()
            raise

    def _connect(
        self, response_channel: str, response_stream_id: int, credentials: bytes,
        on_challenge: ChallengeHandler | None,
    ) -> None:
        deadline = time.monotonic() + self.timeout
        correlation_id = self._next_correlation_id()
        request = _codec.auth_connect(correlation_id, response_stream_id, response_channel, credentials,
                                      _session.client_info())
        self._offer(request, deadline, "connect")
        while True:
            message = self._await(correlation_id, "connect", deadline)
            if isinstance(message, Challenge):
                if on_challenge is None:
                    raise AuthenticationError(
                        "connect: the archive challenged the credentials and no on_challenge handler was given: "
                        "pass on_challenge=<function of the challenge bytes returning credentials>", None,
                        correlation_id)
                self.control_session_id = message.control_session_id
                answer = on_challenge(message.encoded_challenge)
                self._offer(_codec.challenge_response(message.control_session_id, correlation_id, answer),
                            deadline, "connect")
                continue
            assert isinstance(message, ControlResponse)
            self.control_session_id = _session.expect_ok(message, "connect")
            return

    # --- the wire ----------------------------------------------------------------------------

    def _next_correlation_id(self) -> int:
        self._correlation += 1
        return self._correlation

    def _on_fragment(self, data: memoryview, header: Header) -> None:
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
        else:
            self._inbox.append(message)

    def _poll(self) -> int:
        subscription = self.response_subscription
        work: int = subscription.poll(self._assembler, 16)
        if subscription.is_connected:
            self._was_connected = True
        elif self._was_connected and not work:
            raise ArchiveConnectionError(
                "the archive is gone (its response stream went away): it closed this control session or stopped; "
                "connect again", None)
        return work

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError("the archive client is closed: connect a new one (AeronArchive.connect)")

    def _offer(self, request: bytes, deadline: float, operation: str) -> None:
        publication = self.control_publication
        idle = self._idle
        idle.reset()
        while True:
            result = publication.offer(request)
            if result >= 0:
                self._last_request = time.monotonic()
                return
            if result == -1 and self.control_session_id != NULL_VALUE:  # NOT_CONNECTED after a session
                raise ArchiveConnectionError(
                    f"{operation}: the archive is gone (nothing reads the control stream any more): it closed or "
                    "stopped; connect again once it runs", None)
            if time.monotonic() > deadline:
                channel, stream = publication.channel or "the control channel", publication.stream_id
                if result == -1:  # NOT_CONNECTED
                    raise ArchiveTimeoutError(
                        f"{operation}: no archive is listening on {channel} stream {stream} "
                        f"(nothing connected within {self.timeout} s): start one beside the driver at "
                        f"{self.aeron.aeron_dir} (aeron_async.archive.Archive.launch or `aeron-async archive`), "
                        "or give its control_channel and control_stream_id", None)
                raise ArchiveTimeoutError(
                    f"{operation}: the archive did not take the request within {self.timeout} s (control "
                    f"stream back-pressured: offer result {result})", None)
            idle.idle(0)

    def _await(
        self, correlation_id: int, operation: str, deadline: float, collect: Collector | None = None
    ) -> ControlResponse | Challenge | None:
        """Poll until the response to `correlation_id` arrives. Descriptors of that correlation go
        to `collect`, which returns True when it has all it wants (then None is returned)."""
        idle = self._idle
        idle.reset()
        inbox = self._inbox
        while True:
            while inbox:
                message = inbox.popleft()
                if message.correlation_id != correlation_id:
                    continue  # the late answer of a request that timed out
                if isinstance(message, (ControlResponse, Challenge)):
                    return message
                if collect is not None and collect(message):
                    return None
            work = self._poll()
            if not work:
                if time.monotonic() > deadline:
                    raise ArchiveTimeoutError(
                        f"{operation}: no answer from the archive within {self.timeout} s (correlation id "
                        f"{correlation_id}); raise the timeout, or check that the archive is running", None,
                        correlation_id)
                idle.idle(0)

    def _request(self, encode: Encoder, operation: str, collect: Collector | None = None) -> ControlResponse | None:
        with self._lock:
            self._check_open()
            deadline = time.monotonic() + self.timeout
            correlation_id = self._next_correlation_id()
            self._offer(encode(self.control_session_id, correlation_id), deadline, operation)
            message = self._await(correlation_id, operation, deadline, collect)
            assert not isinstance(message, Challenge)
            return message

    def _call(self, encode: Encoder, operation: str) -> int:
        response = self._request(encode, operation)
        assert response is not None
        return _session.expect_ok(response, operation)

    # --- recordings --------------------------------------------------------------------------

    def start_recording(
        self, channel: str, stream_id: int, *, source_location: SourceLocation | str = SourceLocation.LOCAL,
        auto_stop: bool = False,
    ) -> int:
        """Record `channel` + `stream_id`: every publication (session) on it becomes a recording.
        `source_location` "local" records a publication of the archive's own driver through a spy
        (IPC, or UDP published on that driver), "remote" subscribes to the channel. With
        `auto_stop` the archive drops the subscription when the recording ends. Returns the
        recording subscription's id (for `stop_recording(subscription_id=...)`); each recording's
        id comes with its START signal, or from `find_last_matching_recording`."""
        return self._call(*_session.start_recording(channel, stream_id, source_location, auto_stop))

    def stop_recording(
        self, channel: str | None = None, stream_id: int | None = None, *, subscription_id: int | None = None,
        recording_id: int | None = None,
    ) -> None:
        """Stop a recording, by the channel + stream it was started with, by its recording
        subscription id, or by recording id (one of the three). The archive writes the stop
        position and signals STOP. Raises UnknownSubscriptionError / UnknownRecordingError when
        there is nothing to stop."""
        encode, operation = _session.stop_recording(channel, stream_id, subscription_id, recording_id)
        stopped = self._call(encode, operation)
        if recording_id is not None and stopped == 0:
            raise _session.not_recording_error(recording_id, operation)

    def extend_recording(
        self, recording_id: int, channel: str, stream_id: int, *,
        source_location: SourceLocation | str = SourceLocation.LOCAL, auto_stop: bool = False,
    ) -> int:
        """Append to a stopped recording from a publication that continues it (it must start at
        the recording's stop position with the same initial term id, term length and MTU:
        `init-term-id`, `term-id`, `term-offset`, `term-length`, `mtu` on its channel). Returns
        the recording subscription id; the archive signals EXTEND."""
        return self._call(*_session.extend_recording(recording_id, channel, stream_id, source_location, auto_stop))

    def truncate_recording(self, recording_id: int, position: int) -> None:
        """Cut a stopped recording back to `position` (a frame boundary from its start to its stop
        position; its start empties it). Replays of it stop; the archive signals DELETE."""
        self._call(*_session.truncate_recording(recording_id, position))

    def purge_recording(self, recording_id: int) -> int:
        """Delete a stopped recording: its catalog entry is marked deleted and its segment files
        removed (DELETE signal). Returns the archive's count of deleted segment files."""
        return self._call(*_session.id_operation(_codec.PURGE_RECORDING, recording_id, "recording_id",
                                                 "purge_recording"))

    # --- queries -----------------------------------------------------------------------------

    def list_recordings(
        self, channel: str | None = None, stream_id: int | None = None, *, from_recording_id: int = 0,
        count: int | None = None,
    ) -> list[RecordingDescriptor]:
        """The catalog's recordings from `from_recording_id` on (at most `count`; all when None).
        With `channel` and `stream_id`: only those of that stream whose original channel contains
        `channel` (Aeron's ListRecordingsForUri)."""
        encode, operation = _session.list_recordings(channel, stream_id)
        found: list[RecordingDescriptor] = []
        next_id = _session.check_int(from_recording_id, "from_recording_id", 0)
        remaining = None if count is None else _session.check_int(count, "count", 0)
        while remaining is None or remaining > 0:
            page = LIST_PAGE if remaining is None else min(remaining, LIST_PAGE)
            batch: list[RecordingDescriptor] = []

            def collect(message: Any, batch: list[RecordingDescriptor] = batch, page: int = page) -> bool:
                if isinstance(message, RecordingDescriptor):
                    batch.append(message)
                return len(batch) >= page

            start = next_id
            response = self._request(lambda s, c: encode(s, c, start, page), operation, collect)
            found.extend(batch)
            if remaining is not None:
                remaining -= len(batch)
            if response is not None:  # the listing ended before the page was full
                if response.code != ControlResponseCode.RECORDING_UNKNOWN:
                    _session.expect_ok(response, operation)
                break
            next_id = batch[-1].recording_id + 1
        return found

    def list_recording(self, recording_id: int) -> RecordingDescriptor:
        """One recording's descriptor; UnknownRecordingError if the catalog has none."""
        encode, operation = _session.id_operation(_codec.LIST_RECORDING, recording_id, "recording_id",
                                                  "list_recording")
        found: list[RecordingDescriptor] = []

        def collect(message: Any) -> bool:
            if isinstance(message, RecordingDescriptor):
                found.append(message)
            return bool(found)

        response = self._request(encode, operation, collect)
        if found:
            return found[0]
        assert response is not None
        raise _session.unknown_recording(response, recording_id, operation)

    def find_last_matching_recording(
        self, channel: str, stream_id: int, *, session_id: int | None = None, min_recording_id: int = 0
    ) -> int | None:
        """The id of the newest recording of `stream_id` whose channel contains `channel` (and of
        `session_id` if given), from `min_recording_id` on; None if there is none."""
        found = self._call(*_session.find_last_matching(channel, stream_id, session_id, min_recording_id))
        return None if found == NULL_VALUE else found

    def list_recording_subscriptions(
        self, channel: str = "", stream_id: int | None = None, *, pseudo_index: int = 0, count: int = LIST_PAGE
    ) -> list[RecordingSubscriptionDescriptor]:
        """The archive's active recording subscriptions whose channel contains `channel` (every
        one for "") and, if given, of `stream_id`."""
        encode, operation = _session.list_recording_subscriptions(channel, stream_id, pseudo_index, count)
        found: list[RecordingSubscriptionDescriptor] = []

        def collect(message: Any) -> bool:
            if isinstance(message, RecordingSubscriptionDescriptor):
                found.append(message)
            return len(found) >= count

        response = self._request(encode, operation, collect)
        if response is not None and response.code not in (ControlResponseCode.SUBSCRIPTION_UNKNOWN,
                                                           ControlResponseCode.OK):
            raise _session.response_error(response, operation)
        return found

    def recording_position(self, recording_id: int) -> int | None:
        """The position an active recording has reached on disk; None if it is not recording."""
        position = self._call(*_session.id_operation(_codec.RECORDING_POSITION, recording_id, "recording_id",
                                                     "recording_position"))
        return None if position == NULL_POSITION else position

    def stop_position(self, recording_id: int) -> int | None:
        """A stopped recording's stop position; None while it is active."""
        position = self._call(*_session.id_operation(_codec.STOP_POSITION, recording_id, "recording_id",
                                                     "stop_position"))
        return None if position == NULL_POSITION else position

    def max_recorded_position(self, recording_id: int) -> int:
        """How far the recording has been written: its recording position while active, its stop
        position once stopped."""
        return self._call(*_session.id_operation(_codec.MAX_RECORDED_POSITION, recording_id, "recording_id",
                                                 "max_recorded_position"))

    def archive_id(self) -> int:
        """The archive's id (`aeron.archive.id`, or its Aeron client id when not configured)."""
        return self._call(*_session.archive_id())

    # --- replay ------------------------------------------------------------------------------

    def start_replay(
        self, recording_id: int, position: int | None = None, length: int | None = None, *,
        channel: str = DEFAULT_REPLAY_CHANNEL, stream_id: int = DEFAULT_REPLAY_STREAM_ID, follow: bool = True,
        limit_counter: Counter | int | None = None, file_io_max_length: int | None = None, _merge: bool = False,
    ) -> int:
        """Ask the archive to replay a recording to `channel` + `stream_id` and return the replay
        session id (read it with a subscription whose channel has `session-id=(int)id`, which
        `replay()` does for you).

        `position`: where to start (None: the recording's start); it must be a frame boundary of
        the recording. `length`: how many bytes (None: all of it, and with `follow` a live
        recording is followed until it stops; `follow=False` stops at its end at the start of the
        replay). `limit_counter`: a counter (or its id) whose value caps how far the replay goes
        (bounded replay)."""
        counter_id = limit_counter.id if isinstance(limit_counter, Counter) else limit_counter
        return self._call(*_session.replay(recording_id, position, length, channel, stream_id, follow, counter_id,
                                           file_io_max_length, _merge))

    def replay(
        self, recording_id: int, position: int | None = None, length: int | None = None, *,
        channel: str = DEFAULT_REPLAY_CHANNEL, stream_id: int = DEFAULT_REPLAY_STREAM_ID, follow: bool = True,
        limit_counter: Counter | int | None = None, file_io_max_length: int | None = None,
    ) -> Replay:
        """Start a replay (see `start_replay` for the arguments) and subscribe to it: the Replay's
        messages carry the recorded positions. `with archive.replay(...) as replay: for message in
        replay: ...` iterates until the replay ends (its length reached, or a followed recording
        stopped); leaving the block stops the replay and closes its subscription."""
        replay_session_id = self.start_replay(
            recording_id, position, length, channel=channel, stream_id=stream_id, follow=follow,
            limit_counter=limit_counter, file_io_max_length=file_io_max_length)
        first_image: list[Image] = []
        try:
            # the image is kept from its AVAILABLE event: a short replay can be read to its end, and
            # its image go (drained), before the subscription's image list is next looked at
            subscription = self.aeron.add_subscription(
                _session.replay_subscription_channel(channel, replay_session_id), stream_id,
                on_available_image=lambda image: None if first_image else first_image.append(image))
        except BaseException:
            self._stop_replay_quietly(replay_session_id)
            raise
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
        stream = descriptor.stream_id if stream_id is None else _session.check_stream_id(stream_id)
        subscription = self.aeron.add_subscription(channel, stream)
        try:
            return ReplayMerge(self, subscription, channel, recording_id, replay_destination=replay_destination,
                               live_destination=live_destination, position=position,
                               progress_timeout=progress_timeout, owns_subscription=True)
        except BaseException:
            subscription.close()
            raise

    def stop_replay(self, replay_session_id: int) -> None:
        """Stop a replay (UnknownReplayError if it has ended already)."""
        self._call(*_session.id_operation(_codec.STOP_REPLAY, replay_session_id, "replay_session_id",
                                          "stop_replay"))

    def _stop_replay_quietly(self, replay_session_id: int) -> None:
        try:
            self.stop_replay(replay_session_id)
        except (ArchiveError, ClosedError):
            pass

    def stop_all_replays(self, recording_id: int | None = None) -> None:
        """Stop every replay of `recording_id`, or every replay of the archive when None."""
        self._call(*_session.id_operation(_codec.STOP_ALL_REPLAYS, recording_id, "recording_id",
                                          "stop_all_replays"))

    # --- signals, liveness -------------------------------------------------------------------

    def poll_for_recording_signals(self) -> list[RecordingSignalEvent]:
        """Read the response stream and return the recording signals that arrived (START, STOP,
        EXTEND, DELETE, ...) since the last call, after passing each to the connect's
        `on_recording_signal` handler if there is one; sends a keep-alive when one is due."""
        with self._lock:
            self._check_open()
            self._poll()
            self._keep_alive_if_due()
            signals = list(self._signals)
            self._signals.clear()
        handler = self.on_recording_signal
        if handler is not None:
            for signal in signals:
                handler(signal)
        return signals

    def wait_for_signal(
        self, signal: RecordingSignal, *, recording_id: int | None = None, subscription_id: int | None = None,
        timeout: float | None = None,
    ) -> RecordingSignalEvent:
        """Wait for a `signal` (of `recording_id` / `subscription_id` when given) and return it;
        signals that do not match are kept for `poll_for_recording_signals`. ArchiveTimeoutError
        after `timeout` (the client's timeout when None)."""
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        with self._lock:
            self._check_open()
            idle = self._idle
            idle.reset()
            scanned = 0
            while True:
                signals = self._signals
                for index in range(scanned, len(signals)):
                    event = signals[index]
                    if (event.signal == signal and (recording_id is None or event.recording_id == recording_id)
                            and (subscription_id is None or event.subscription_id == subscription_id)):
                        del signals[index]
                        return event
                scanned = len(signals)
                work = self._poll()
                self._keep_alive_if_due()
                if not work:
                    if time.monotonic() > deadline:
                        raise ArchiveTimeoutError(
                            f"no {signal.name} signal (recording {recording_id}, subscription {subscription_id}) "
                            f"within {limit} s", None)
                    idle.idle(0)

    def _keep_alive_if_due(self) -> None:
        if time.monotonic() - self._last_request >= KEEP_ALIVE_INTERVAL:
            self.keep_alive()

    def keep_alive(self) -> None:
        """Tell the archive this client is alive (no answer is awaited)."""
        with self._lock:
            self._check_open()
            request = _codec.keep_alive(self.control_session_id, self._next_correlation_id())
            self._offer(request, time.monotonic() + self.timeout, "keep_alive")

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
            try:
                if self.control_session_id != NULL_VALUE and self.control_publication.is_connected:
                    self.control_publication.offer(_codec.close_session(self.control_session_id))
            except ClosedError:
                pass
            self.control_publication.close()
            self.response_subscription.close()
            if self._owns_aeron:
                self.aeron.close()

    def __enter__(self) -> AeronArchive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<AeronArchive control_session_id={self.control_session_id}{' closed' if self._closed else ''}>"


class Replay:
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

    def __enter__(self) -> Replay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Replay recording={self.recording_id} session={self.replay_session_id}>"
