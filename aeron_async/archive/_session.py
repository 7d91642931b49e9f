"""The archive control session, sans I/O (docs/architecture.md, "Archive", the client part): the
protocol's whole state, with no sockets, no clocks and no waiting of its own.

`ControlSession` takes the response bytes the driver of the session reads (`receive`) and the
time where a deadline matters (`now`, from the driver's clock), and gives back the request bytes
to send, the events that arrived and each operation's result or error. Each operation is written
once here, as a method returning a `Call`: its arguments are checked when the call is made, then
its steps (a generator) ask for one request after another (the challenge loop of connect, the
pages of a listing) and turn the answers into the result or the `ArchiveError` for the archive's
code. `Operations` gives the synchronous client (`client.py`, which polls and offers) and the
async one (`aio.py`, which awaits) their methods from that one table.
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Awaitable, Callable, Generator
from typing import Any, Concatenate, Final, Generic, Literal, ParamSpec, Protocol, TypeVar, overload

from ..counters import Counter
from ..errors import (
    ActiveRecordingError,
    ArchiveConnectionError,
    ArchiveError,
    ArchiveLimitError,
    ArchiveStorageError,
    ArchiveTimeoutError,
    AuthenticationError,
    InvalidArgumentError,
    InvalidExtensionError,
    InvalidStateError,
    RecordingPositionError,
    UnknownRecordingError,
    UnknownReplayError,
    UnknownSubscriptionError,
)
from . import _channels, _codec
from ._channels import (
    CONTROL_STREAM_ID,
    DEFAULT_REPLAY_CHANNEL,
    DEFAULT_REPLAY_STREAM_ID,
    KEEP_ALIVE_INTERVAL,
    LIST_PAGE,
    NULL_POSITION,
    NULL_VALUE,
    check_channel,
    check_int,
    check_stream_id,
    location_of,
    new_session_id,
    replay_length,
    replay_position,
)
from .records import (
    ArchiveErrorCode,
    Challenge,
    ControlResponse,
    ControlResponseCode,
    RecordingDescriptor,
    RecordingSignal,
    RecordingSignalEvent,
    RecordingSubscriptionDescriptor,
    SourceLocation,
)

Encoder = Callable[[int, int], bytes]  # (control session id, correlation id) -> request bytes


_HINTS: Final[dict[ArchiveErrorCode, tuple[type[ArchiveError], str]]] = {
    ArchiveErrorCode.GENERIC: (ArchiveError, ""),
    ArchiveErrorCode.ACTIVE_LISTING: (
        ArchiveLimitError, "one listing runs at a time per control session: wait for the last to finish"),
    ArchiveErrorCode.ACTIVE_RECORDING: (
        ActiveRecordingError,
        "the recording is still active: stop it first (stop_recording(recording_id=...)) and wait for its STOP signal"),
    ArchiveErrorCode.ACTIVE_SUBSCRIPTION: (
        ArchiveError,
        "that channel and stream is already being recorded: stop that recording first, or record another stream"),
    ArchiveErrorCode.UNKNOWN_SUBSCRIPTION: (
        UnknownSubscriptionError, "list_recording_subscriptions() shows the archive's recording subscriptions"),
    ArchiveErrorCode.UNKNOWN_RECORDING: (
        UnknownRecordingError, "list_recordings() shows the recordings the archive has"),
    ArchiveErrorCode.UNKNOWN_REPLAY: (
        UnknownReplayError, "the replay has ended or was never started; use the id start_replay() returned"),
    ArchiveErrorCode.MAX_REPLAYS: (
        ArchiveLimitError, "too many concurrent replays: stop some (stop_replay) or raise the archive's max replays"),
    ArchiveErrorCode.MAX_RECORDINGS: (
        ArchiveLimitError,
        "too many concurrent recordings: stop some or raise the archive's max concurrent recordings"),
    ArchiveErrorCode.INVALID_EXTENSION: (
        InvalidExtensionError,
        "the publication must continue the recording: same initial term id, term length and MTU, starting at its "
        "stop position (set init-term-id=, term-id=, term-offset=, term-length=, mtu= on its channel from "
        "list_recording())"),
    ArchiveErrorCode.AUTHENTICATION_REJECTED: (
        AuthenticationError, "the archive's authenticator rejected the credentials: connect with ones it accepts "
                             "(credentials=b'principal:secret', or AERON_ARCHIVE_CLIENT_CREDENTIALS / "
                             "AERON_ARCHIVE_CLIENT_CREDENTIALS_FILE)"),
    ArchiveErrorCode.STORAGE_SPACE: (
        ArchiveStorageError, "free space in the archive directory (purge or migrate recordings) or lower its "
                             "low-storage threshold"),
    ArchiveErrorCode.UNKNOWN_REPLICATION: (ArchiveError, "no such replication"),
    ArchiveErrorCode.UNAUTHORISED_ACTION: (
        AuthenticationError, "this session's principal is not authorised for that request: connect with the "
                             "credentials of a principal whose role allows it"),
    ArchiveErrorCode.REPLICATION_CONNECTION_FAILURE: (ArchiveError, "the source archive could not be reached"),
    ArchiveErrorCode.EMPTY_RECORDING: (ArchiveError, "the recording holds no data yet"),
    ArchiveErrorCode.INVALID_POSITION: (
        RecordingPositionError,
        "give a position on a frame boundary of the recording (a message's position: a multiple of 32 where a "
        "frame starts) from its start position up to its stop position; list_recording() shows them"),
}


def response_error(response: ControlResponse, operation: str) -> ArchiveError:
    """The exception for a response that is not OK, naming the operation, the archive's message,
    its code and what to do."""
    if response.code == ControlResponseCode.ERROR:
        try:
            code = ArchiveErrorCode(response.relevant_id)
        except ValueError:
            code = ArchiveErrorCode.GENERIC
    elif response.code == ControlResponseCode.RECORDING_UNKNOWN:
        code = ArchiveErrorCode.UNKNOWN_RECORDING
    elif response.code == ControlResponseCode.SUBSCRIPTION_UNKNOWN:
        code = ArchiveErrorCode.UNKNOWN_SUBSCRIPTION
    else:
        code = ArchiveErrorCode.GENERIC
    cls, hint = _HINTS[code]
    said = response.error_message or "(no message)"
    text = f"{operation}: the archive answered {code.name}: {said}"
    if hint:
        text += f"; {hint}"
    return cls(text, int(code), response.correlation_id)


def expect_ok(response: ControlResponse, operation: str) -> int:
    """The relevant id of an OK response; raises the matching ArchiveError otherwise."""
    if response.code != ControlResponseCode.OK:
        raise response_error(response, operation)
    return response.relevant_id


def client_info() -> str:
    from .. import __version__

    return f"name=aeron_async version={__version__}"


def unknown_recording(response: ControlResponse, recording_id: int, operation: str) -> ArchiveError:
    """The error for a ListRecording that found nothing (RECORDING_UNKNOWN, or OK without a descriptor)."""
    if response.code == ControlResponseCode.OK:
        response = ControlResponse(response.control_session_id, response.correlation_id, recording_id,
                                   ControlResponseCode.RECORDING_UNKNOWN, 0, response.error_message)
    return response_error(response, operation)


# --- the control session ------------------------------------------------------------------------

T = TypeVar("T")
P = ParamSpec("P")
Item = RecordingDescriptor | RecordingSubscriptionDescriptor


class Ask:
    """One request of an operation: its encoder; the descriptors (`kind`) that answer it, and how
    many of them complete the answer (`want`, None: only a response does); `answered`: False for
    a request the archive does not answer (KeepAlive). Each Ask takes a new correlation id (a
    ChallengeResponse too: reference aeron-wave3.md 6.3)."""

    __slots__ = ("encode", "kind", "want", "answered")

    def __init__(self, encode: Encoder, *, kind: type[Item] | None = None, want: int | None = None,
                 answered: bool = True) -> None:
        self.encode = encode
        self.kind = kind
        self.want = want
        self.answered = answered


class Answer:
    """What came back for an Ask: the response (ControlResponse or Challenge; None when the wanted
    descriptors came first) and the descriptors of its correlation id."""

    __slots__ = ("response", "items", "correlation_id")

    def __init__(self, response: ControlResponse | Challenge | None, items: list[Item], correlation_id: int) -> None:
        self.response = response
        self.items = items
        self.correlation_id = correlation_id

    def control(self, operation: str) -> ControlResponse:
        """The ControlResponse (an operation other than connect is never challenged)."""
        response = self.response
        if not isinstance(response, ControlResponse):
            raise ArchiveError(f"{operation}: the archive answered {type(response).__name__} where a ControlResponse "
                               "was due", None, self.correlation_id)
        return response


Steps = Generator[Ask, Answer, T]


class Call(Generic[T]):
    """An operation in progress: made by a ControlSession method (arguments checked), started by
    `ControlSession.start`, which returns its first request; once `answered`, `advance` gives its
    next request, or None when it is done and `result()` holds its value."""

    __slots__ = ("operation", "listing", "correlation_id", "deadline", "answered", "_steps", "_ask",
                 "_response", "_items", "_done", "_value")

    def __init__(self, operation: str, steps: Steps[T], *, listing: bool = False) -> None:
        self.operation = operation
        self.listing = listing  # the archive runs one listing per control session at a time
        self.correlation_id = NULL_VALUE
        self.deadline = 0.0
        self.answered = False
        self._steps = steps
        self._ask: Ask | None = None
        self._response: ControlResponse | Challenge | None = None
        self._items: list[Item] = []
        self._done = False
        self._value: T | None = None

    @property
    def done(self) -> bool:
        return self._done

    def result(self) -> T:
        if not self._done:
            raise InvalidStateError(f"{self.operation}: the call has not finished")
        return self._value  # type: ignore[return-value]  # set by advance() with the generator's value

    def __repr__(self) -> str:
        return f"<Call {self.operation} correlation_id={self.correlation_id}{' done' if self._done else ''}>"


class Answered:
    """Event: the response (or the wanted descriptors) of `call`'s request arrived."""

    __slots__ = ("call",)

    def __init__(self, call: Call[Any]) -> None:
        self.call = call


class SignalArrived:
    """Event: a recording signal of this session arrived (and was queued in `signals`)."""

    __slots__ = ("signal",)

    def __init__(self, signal: RecordingSignalEvent) -> None:
        self.signal = signal


Event = Answered | SignalArrived


class SignalWait:
    """A wait for a recording signal (of a recording / subscription when given), with its deadline."""

    __slots__ = ("signal", "recording_id", "subscription_id", "limit", "deadline", "correlation_id", "or_signal")

    def __init__(self, signal: RecordingSignal, recording_id: int | None, subscription_id: int | None, limit: float,
                 now: float, correlation_id: int | None = None, or_signal: RecordingSignal | None = None) -> None:
        self.signal = signal
        self.recording_id = recording_id
        self.subscription_id = subscription_id
        self.limit = limit
        self.deadline = now + limit
        self.correlation_id = correlation_id  # a replication's signals carry its replication id
        self.or_signal = or_signal  # a replication's wait ends at its REPLICATE_END too

    def matches(self, event: RecordingSignalEvent) -> bool:
        return ((event.signal == self.signal or event.signal == self.or_signal) and (self.recording_id is None or event.recording_id == self.recording_id)
                and (self.subscription_id is None or event.subscription_id == self.subscription_id)
                and (self.correlation_id is None or event.correlation_id == self.correlation_id))

    def expire(self, now: float) -> None:
        """ArchiveTimeoutError once `now` is past the deadline."""
        if now >= self.deadline:
            raise ArchiveTimeoutError(
                f"no {self.signal.name} signal (recording {self.recording_id}, subscription {self.subscription_id}) "
                f"within {self.limit} s", None)


def replication_wait(replication_id: int, signal: RecordingSignal, limit: float, now: float) -> SignalWait:
    """A wait for a replication's `signal` that its REPLICATE_END ends too."""
    return SignalWait(signal, None, None, limit, now, replication_id, RecordingSignal.REPLICATE_END)


def replication_outcome(session: ControlSession, replication_id: int, signal: RecordingSignal,
                        event: RecordingSignalEvent) -> RecordingSignalEvent:
    """The signal a replication's wait got, or the error it ended with (or without `signal`)."""
    error = session.replications.get(replication_id)
    if error is not None:
        raise error
    if event.signal != signal:
        raise ArchiveError(f"replication {replication_id} ended (REPLICATE_END at position {event.position}) without "
                           f"a {signal.name} signal", None, replication_id)
    return event


class ControlSession:
    """A control session's protocol state: the session id, the correlation ids, the calls waiting
    for their answers, the recording signals that arrived, the keep-alive's timing.

    `timeout` bounds each request (sent and answered); `correlation_id` is the base of the
    correlation ids (a random 43-bit one when None); `max_signals` bounds the signal queue."""

    def __init__(self, timeout: float, *, correlation_id: int | None = None, max_signals: int | None = None) -> None:
        if not timeout > 0:
            raise InvalidArgumentError(f"timeout={timeout!r} must be a positive number of seconds")
        self.timeout = timeout
        self.control_session_id = NULL_VALUE
        self.malformed_responses = 0
        self.signals: collections.deque[RecordingSignalEvent] = collections.deque(maxlen=max_signals)
        self.closed = False
        self._correlation = new_session_id() << 20 if correlation_id is None else correlation_id
        self._calls: dict[int, Call[Any]] = {}
        self._last_request: float | None = None
        # replications this session started (their id) and the error each ended with, if any: the
        # archive sends it after the replicate's OK, with the replication id as its correlation id
        self.replications: dict[int, ArchiveError | None] = {}

    @property
    def connected(self) -> bool:
        """True once the archive has given this session its id (or challenged it)."""
        return self.control_session_id != NULL_VALUE

    def next_correlation_id(self) -> int:
        self._correlation += 1
        return self._correlation

    # --- driving a call ---------------------------------------------------------------------

    def start(self, call: Call[Any], now: float) -> bytes:
        """The call's first request (to send now); its deadline is `now` + timeout. A call runs once."""
        if call._ask is not None:
            raise InvalidStateError(f"{call.operation}: a call runs once; make another")
        return self._issue(call, next(call._steps), now)

    def _issue(self, call: Call[Any], ask: Ask, now: float) -> bytes:
        call.correlation_id = self.next_correlation_id()
        request = ask.encode(self.control_session_id, call.correlation_id)
        call._ask, call._response, call._items = ask, None, []
        call.deadline = now + self.timeout
        call.answered = not ask.answered
        if ask.answered:
            self._calls[call.correlation_id] = call
        return request

    def advance(self, call: Call[Any], now: float) -> bytes | None:
        """After the call's request was sent and answered: its next request, or None when it is
        done. Raises the operation's error (the ArchiveError for the archive's answer)."""
        if not call.answered:
            raise InvalidStateError(f"{call.operation}: advance() before the answer arrived")
        answer = Answer(call._response, call._items, call.correlation_id)
        try:
            ask = call._steps.send(answer)
        except StopIteration as stop:
            call._value, call._done = stop.value, True
            return None
        return self._issue(call, ask, now)

    def abandon(self, call: Call[Any]) -> None:
        """Forget a call that failed, timed out or was cancelled: a late answer is dropped."""
        if self._calls.get(call.correlation_id) is call:
            del self._calls[call.correlation_id]
        call._steps.close()

    def overdue(self, call: Call[Any], now: float) -> bool:
        """True once `now` is past the call's deadline (sending or waiting)."""
        return now >= call.deadline

    def timed_out(self, call: Call[Any]) -> ArchiveTimeoutError:
        """The error for an answer that did not come in time; the call is abandoned."""
        self.abandon(call)
        return ArchiveTimeoutError(
            f"{call.operation}: no answer from the archive within {self.timeout} s (correlation id "
            f"{call.correlation_id}); raise the timeout, or check that the archive is running", None,
            call.correlation_id)

    def unsent(self, call: Call[Any], *, listening: bool, channel: str, stream_id: int, aeron_dir: str,
               result: int | None = None) -> ArchiveTimeoutError:
        """The error for a request the control publication did not take in time: nothing listening
        on the control stream, or back pressure (`result`: the last offer's); the call is abandoned."""
        self.abandon(call)
        if not listening:
            return ArchiveTimeoutError(
                f"{call.operation}: no archive is listening on {channel or 'the control channel'} stream {stream_id} "
                f"(nothing connected within {self.timeout} s): start one beside the driver at {aeron_dir} "
                "(aeron_async.archive.Archive.launch or `aeron-async archive`), or give its control_channel and "
                "control_stream_id", None)
        said = "" if result is None else f": offer result {result}"
        return ArchiveTimeoutError(f"{call.operation}: the archive did not take the request within {self.timeout} s "
                                   f"(control stream back-pressured{said})", None)

    def sent(self, now: float) -> None:
        """A request went out at `now` (the keep-alive counts from there)."""
        self._last_request = now

    def keep_alive_due(self, now: float) -> bool:
        """True when a KeepAlive is due: a second has passed since the last request."""
        return self.connected and (self._last_request is None or now - self._last_request >= KEEP_ALIVE_INTERVAL)

    # --- what arrives ------------------------------------------------------------------------

    def receive(self, data: bytes | bytearray | memoryview) -> Event | None:
        """Take one response message: a malformed one is counted and skipped, another session's
        and a late answer (of a call abandoned) are dropped, a signal is queued."""
        try:
            message = _codec.decode(data)
        except _codec.MalformedMessageError:
            self.malformed_responses += 1
            return None
        if message is None or (self.connected and message.control_session_id != self.control_session_id):
            return None
        if isinstance(message, RecordingSignalEvent):
            self.signals.append(message)
            return SignalArrived(message)
        call = self._calls.get(message.correlation_id)
        if call is None:
            if (isinstance(message, ControlResponse) and message.code != ControlResponseCode.OK
                    and message.correlation_id in self.replications):
                self.replications[message.correlation_id] = response_error(
                    message, f"replication {message.correlation_id}")
            return None
        if (isinstance(message, ControlResponse) and message.code == ControlResponseCode.OK
                and call.operation.startswith("replicate(")):
            self.replications[message.relevant_id] = None  # before any error of it (same stream, in order)
        if isinstance(message, (ControlResponse, Challenge)):
            call._response = message
        else:
            kind = call._ask.kind if call._ask is not None else None
            if kind is None or not isinstance(message, kind):
                return None
            call._items.append(message)
            want = call._ask.want if call._ask is not None else None
            if want is None or len(call._items) < want:
                return None
        call.answered = True
        del self._calls[message.correlation_id]
        return Answered(call)

    def take_signal(self, wait: SignalWait) -> RecordingSignalEvent | None:
        """The first queued signal `wait` matches, taken out of the queue (the others stay)."""
        for index, event in enumerate(self.signals):
            if wait.matches(event):
                del self.signals[index]
                return event
        return None

    def drain_signals(self) -> list[RecordingSignalEvent]:
        """Every queued signal, taken out of the queue."""
        signals = list(self.signals)
        self.signals.clear()
        return signals

    def gone(self, operation: str | None = None, *, control: bool) -> ArchiveConnectionError:
        """The error for a session whose archive went away: nothing reads the control stream any
        more (`control`), or the response stream lost its image."""
        prefix = "" if operation is None else f"{operation}: "
        if control:
            return ArchiveConnectionError(
                f"{prefix}the archive is gone (nothing reads the control stream any more): it closed or stopped; "
                "connect again once it runs", None)
        return ArchiveConnectionError(
            f"{prefix}the archive is gone (its response stream went away): it closed this control session or "
            "stopped; connect again", None)

    def close(self) -> bytes | None:
        """End the session: the CloseSession request to send (if the archive gave a session id)
        once; the calls still waiting are forgotten."""
        if self.closed:
            return None
        self.closed = True
        for call in list(self._calls.values()):
            self.abandon(call)
        return _codec.close_session(self.control_session_id) if self.connected else None

    # --- the operations ----------------------------------------------------------------------

    def _one(self, encode: Encoder, operation: str) -> Call[int]:
        """A request answered by one ControlResponse: its relevant id when OK."""

        def steps() -> Steps[int]:
            answer = yield Ask(encode)
            return expect_ok(answer.control(operation), operation)

        return Call(operation, steps())

    def _optional(self, encode: Encoder, operation: str, null: int) -> Call[int | None]:
        """As `_one`, with None for the protocol's null answer."""

        def steps() -> Steps[int | None]:
            answer = yield Ask(encode)
            value = expect_ok(answer.control(operation), operation)
            return None if value == null else value

        return Call(operation, steps())

    def _by_id(self, template_id: int, value: int | None, what: str, name: str) -> tuple[Encoder, str]:
        """A request whose one argument is an id (NULL_VALUE for None)."""
        v = NULL_VALUE if value is None else check_int(value, what)
        return (lambda s, c: _codec.id_request(template_id, s, c, v)), f"{name}({'' if value is None else v})"

    def connect(self, response_channel: str, response_stream_id: int, credentials: bytes = b"",
                on_challenge: Callable[[bytes], bytes] | None = None) -> Call[int]:
        """AuthConnect, then a ChallengeResponse (`on_challenge(challenge) -> credentials`) for
        each Challenge, until the archive answers; returns the control session id."""
        info = client_info()

        def steps() -> Steps[int]:
            answer = yield Ask(lambda s, c: _codec.auth_connect(c, response_stream_id, response_channel, credentials,
                                                                info))
            while isinstance(answer.response, Challenge):
                challenge = answer.response
                if on_challenge is None:
                    raise AuthenticationError(
                        "connect: the archive challenged the credentials and no on_challenge handler was given: "
                        "pass on_challenge=<function of the challenge bytes returning credentials>", None,
                        answer.correlation_id)
                self.control_session_id = challenge.control_session_id
                reply = on_challenge(challenge.encoded_challenge)
                # a new correlation id: the archive answers on the ChallengeResponse's (reference aeron-wave3.md 6.3)
                answer = yield Ask(lambda s, c: _codec.challenge_response(s, c, reply))
            self.control_session_id = expect_ok(answer.control("connect"), "connect")
            return self.control_session_id

        return Call("connect", steps())

    def keep_alive(self) -> Call[None]:
        """Tell the archive this client is alive (no answer is awaited)."""

        def steps() -> Steps[None]:
            yield Ask(_codec.keep_alive, answered=False)

        return Call("keep_alive", steps())

    def exchange(self, encode: Encoder, operation: str) -> Call[ControlResponse]:
        """Any request answered by a ControlResponse, which is returned as it is."""

        def steps() -> Steps[ControlResponse]:
            answer = yield Ask(encode)
            return answer.control(operation)

        return Call(operation, steps())

    def start_recording(
        self, channel: str, stream_id: int, *, source_location: SourceLocation | str = SourceLocation.LOCAL,
        auto_stop: bool = False,
    ) -> Call[int]:
        """Record `channel` + `stream_id`: every publication (session) on it becomes a recording.
        `source_location` "local" records a publication of the archive's own driver through a spy
        (IPC, or UDP published on that driver), "remote" subscribes to the channel. With
        `auto_stop` the archive drops the subscription when the recording ends. Returns the
        recording subscription's id (for `stop_recording(subscription_id=...)`); each recording's
        id comes with its START signal, or from `find_last_matching_recording`."""
        check_channel(channel)
        stream = check_stream_id(stream_id)
        where = location_of(source_location)
        return self._one(lambda s, c: _codec.start_recording2(s, c, stream, where, bool(auto_stop), channel),
                         f"start_recording({channel!r}, {stream})")

    def stop_recording(
        self, channel: str | None = None, stream_id: int | None = None, *, subscription_id: int | None = None,
        recording_id: int | None = None,
    ) -> Call[None]:
        """Stop a recording, by the channel + stream it was started with, by its recording
        subscription id, or by recording id (one of the three). The archive writes the stop
        position and signals STOP. Raises UnknownSubscriptionError / UnknownRecordingError when
        there is nothing to stop."""
        given = [channel is not None or stream_id is not None, subscription_id is not None, recording_id is not None]
        if sum(given) != 1:
            raise TypeError("stop_recording takes one of: channel and stream_id, subscription_id=, recording_id=")
        if subscription_id is not None:
            encode, operation = self._by_id(_codec.STOP_RECORDING_SUBSCRIPTION, subscription_id, "subscription_id",
                                            "stop_recording")
            operation = f"stop_recording(subscription_id={subscription_id})"
        elif recording_id is not None:
            encode, operation = self._by_id(_codec.STOP_RECORDING_BY_IDENTITY, recording_id, "recording_id",
                                            "stop_recording")
            operation = f"stop_recording(recording_id={recording_id})"
        else:
            if channel is None or stream_id is None:
                raise TypeError("stop_recording(channel, stream_id): give both")
            check_channel(channel)
            stream = check_stream_id(stream_id)
            encode, operation = ((lambda s, c: _codec.stop_recording(s, c, stream, channel)),
                                 f"stop_recording({channel!r}, {stream})")

        def steps() -> Steps[None]:
            answer = yield Ask(encode)
            stopped = expect_ok(answer.control(operation), operation)
            if recording_id is not None and stopped == 0:  # StopRecordingByIdentity: OK, 0 when not active
                raise UnknownRecordingError(
                    f"{operation}: the archive has no active recording {recording_id}; list_recording_subscriptions() "
                    "and list_recordings() show what is recording", int(ArchiveErrorCode.UNKNOWN_RECORDING))

        return Call(operation, steps())

    def extend_recording(
        self, recording_id: int, channel: str, stream_id: int, *,
        source_location: SourceLocation | str = SourceLocation.LOCAL, auto_stop: bool = False,
    ) -> Call[int]:
        """Append to a stopped recording from a publication that continues it (it must start at
        the recording's stop position with the same initial term id, term length and MTU:
        `init-term-id`, `term-id`, `term-offset`, `term-length`, `mtu` on its channel). Returns
        the recording subscription id; the archive signals EXTEND."""
        rid = check_int(recording_id, "recording_id")
        check_channel(channel)
        stream = check_stream_id(stream_id)
        where = location_of(source_location)
        return self._one(lambda s, c: _codec.extend_recording2(s, c, rid, stream, where, bool(auto_stop), channel),
                         f"extend_recording({rid}, {channel!r}, {stream})")

    def truncate_recording(self, recording_id: int, position: int) -> Call[None]:
        """Cut a stopped recording back to `position` (a frame boundary from its start to its stop
        position; its start empties it). Replays of it stop; the archive signals DELETE."""
        rid = check_int(recording_id, "recording_id")
        pos = check_int(position, "position", 0)
        operation = f"truncate_recording({rid}, {pos})"

        def steps() -> Steps[None]:
            answer = yield Ask(lambda s, c: _codec.truncate_recording(s, c, rid, pos))
            expect_ok(answer.control(operation), operation)

        return Call(operation, steps())

    def purge_recording(self, recording_id: int) -> Call[int]:
        """Delete a stopped recording: its catalog entry is marked deleted and its segment files
        removed (DELETE signal). Returns the archive's count of deleted segment files."""
        return self._one(*self._by_id(_codec.PURGE_RECORDING, recording_id, "recording_id", "purge_recording"))

    # segment management (reference aeron-wave3.md 9; docs/architecture.md, "Segments and retention")

    def detach_segments(self, recording_id: int, new_start_position: int) -> Call[None]:
        """Move a recording's start to `new_start_position`, a segment boundary at least one
        segment past its start's and not past the segment being recorded (or holding its stop
        position) or one a replay reads: the files before it stay on disk, detached, until
        `delete_detached_segments` (or `attach_segments` brings them back)."""
        rid = check_int(recording_id, "recording_id")
        pos = check_int(new_start_position, "new_start_position", 0)
        return self._void(lambda s, c: _codec.detach_segments(s, c, rid, pos), f"detach_segments({rid}, {pos})")

    def delete_detached_segments(self, recording_id: int) -> Call[int]:
        """Delete a recording's detached segment files (those before its start's segment). Returns
        how many the archive queued for deletion; it signals DELETE once they are gone."""
        return self._one(*self._by_id(_codec.DELETE_DETACHED_SEGMENTS, recording_id, "recording_id",
                                      "delete_detached_segments"))

    def purge_segments(self, recording_id: int, new_start_position: int) -> Call[int]:
        """`detach_segments` and delete the segment files from the old start's segment up to the
        new start. Returns how many were queued for deletion; the archive signals DELETE once they
        are gone."""
        rid = check_int(recording_id, "recording_id")
        pos = check_int(new_start_position, "new_start_position", 0)
        return self._one(lambda s, c: _codec.purge_segments(s, c, rid, pos), f"purge_segments({rid}, {pos})")

    def attach_segments(self, recording_id: int) -> Call[int]:
        """Attach the detached segment files still on disk before a recording's start, walking down
        from it while they exist: the start moves back to the first frame of the lowest. Returns
        how many were attached."""
        return self._one(*self._by_id(_codec.ATTACH_SEGMENTS, recording_id, "recording_id", "attach_segments"))

    def migrate_segments(self, src_recording_id: int, dst_recording_id: int) -> Call[int]:
        """Move the segment files of a stopped recording into a contiguous one of the same stream
        (the source stops where the destination starts, or starts where it stops, on a segment
        boundary; equal segment length, term length, initial term id, stream id and MTU). The
        destination then covers both; the source is left empty. Returns how many files moved; the
        archive signals DELETE (of the source) when it is done."""
        src = check_int(src_recording_id, "src_recording_id")
        dst = check_int(dst_recording_id, "dst_recording_id")
        return self._one(lambda s, c: _codec.migrate_segments(s, c, src, dst), f"migrate_segments({src}, {dst})")

    def list_recordings(
        self, channel: str | None = None, stream_id: int | None = None, *, from_recording_id: int = 0,
        count: int | None = None,
    ) -> Call[list[RecordingDescriptor]]:
        """The catalog's recordings from `from_recording_id` on (at most `count`; all when None).
        With `channel` and `stream_id`: only those of that stream whose original channel contains
        `channel` (Aeron's ListRecordingsForUri)."""
        page_of: Callable[[int, int, int, int], bytes]
        if channel is None and stream_id is None:
            page_of, operation = _codec.list_recordings, "list_recordings()"
        elif channel is None or stream_id is None:
            raise TypeError("list_recordings(channel, stream_id): give both, or neither for every recording")
        else:
            stream, uri = check_stream_id(stream_id), channel
            page_of = (lambda s, c, start, n: _codec.list_recordings_for_uri(s, c, start, n, stream, uri))
            operation = f"list_recordings({channel!r}, {stream})"
        first = check_int(from_recording_id, "from_recording_id", 0)
        wanted = None if count is None else check_int(count, "count", 0)

        def steps() -> Steps[list[RecordingDescriptor]]:
            found: list[RecordingDescriptor] = []
            next_id, remaining = first, wanted
            while remaining is None or remaining > 0:
                page = LIST_PAGE if remaining is None else min(remaining, LIST_PAGE)
                start = next_id
                answer = yield Ask(lambda s, c: page_of(s, c, start, page), kind=RecordingDescriptor, want=page)
                batch = [d for d in answer.items if isinstance(d, RecordingDescriptor)]
                found.extend(batch)
                if remaining is not None:
                    remaining -= len(batch)
                if answer.response is not None:  # the listing ended before the page was full
                    response = answer.control(operation)
                    if response.code != ControlResponseCode.RECORDING_UNKNOWN:
                        expect_ok(response, operation)
                    break
                next_id = batch[-1].recording_id + 1
            return found

        return Call(operation, steps(), listing=True)

    def list_recording(self, recording_id: int) -> Call[RecordingDescriptor]:
        """One recording's descriptor; UnknownRecordingError if the catalog has none."""
        rid = check_int(recording_id, "recording_id")
        encode, operation = self._by_id(_codec.LIST_RECORDING, rid, "recording_id", "list_recording")

        def steps() -> Steps[RecordingDescriptor]:
            answer = yield Ask(encode, kind=RecordingDescriptor, want=1)
            for item in answer.items:
                if isinstance(item, RecordingDescriptor):
                    return item
            raise unknown_recording(answer.control(operation), rid, operation)

        return Call(operation, steps())

    def find_last_matching_recording(
        self, channel: str, stream_id: int, *, session_id: int | None = None, min_recording_id: int = 0
    ) -> Call[int | None]:
        """The id of the newest recording of `stream_id` whose channel contains `channel` (and of
        `session_id` if given), from `min_recording_id` on; None if there is none."""
        stream = check_stream_id(stream_id)
        session = NULL_VALUE if session_id is None else check_int(session_id, "session_id")
        low = check_int(min_recording_id, "min_recording_id", 0)
        return self._optional(lambda s, c: _codec.find_last_matching_recording(s, c, low, session, stream, channel),
                              f"find_last_matching_recording({channel!r}, {stream})", NULL_VALUE)

    def list_recording_subscriptions(
        self, channel: str = "", stream_id: int | None = None, *, pseudo_index: int = 0, count: int = LIST_PAGE
    ) -> Call[list[RecordingSubscriptionDescriptor]]:
        """The archive's active recording subscriptions whose channel contains `channel` (every
        one for "") and, if given, of `stream_id`."""
        stream = 0 if stream_id is None else check_stream_id(stream_id)
        first = check_int(pseudo_index, "pseudo_index", 0)
        wanted = check_int(count, "count", 1)
        operation = f"list_recording_subscriptions({channel!r})"

        def steps() -> Steps[list[RecordingSubscriptionDescriptor]]:
            answer = yield Ask(lambda s, c: _codec.list_recording_subscriptions(
                s, c, first, wanted, stream_id is not None, stream, channel),
                kind=RecordingSubscriptionDescriptor, want=wanted)
            if answer.response is not None:
                response = answer.control(operation)
                if response.code not in (ControlResponseCode.SUBSCRIPTION_UNKNOWN, ControlResponseCode.OK):
                    raise response_error(response, operation)
            return [d for d in answer.items if isinstance(d, RecordingSubscriptionDescriptor)]

        return Call(operation, steps(), listing=True)

    def recording_position(self, recording_id: int) -> Call[int | None]:
        """The position an active recording has reached on disk; None if it is not recording."""
        return self._optional(*self._by_id(_codec.RECORDING_POSITION, recording_id, "recording_id",
                                           "recording_position"), NULL_POSITION)

    def stop_position(self, recording_id: int) -> Call[int | None]:
        """A stopped recording's stop position; None while it is active."""
        return self._optional(*self._by_id(_codec.STOP_POSITION, recording_id, "recording_id", "stop_position"),
                              NULL_POSITION)

    def max_recorded_position(self, recording_id: int) -> Call[int]:
        """How far the recording has been written: its recording position while active, its stop
        position once stopped."""
        return self._one(*self._by_id(_codec.MAX_RECORDED_POSITION, recording_id, "recording_id",
                                      "max_recorded_position"))

    def archive_id(self) -> Call[int]:
        """The archive's id (`aeron.archive.id`, or its Aeron client id when not configured)."""
        return self._one(_codec.archive_id, "archive_id()")

    def start_replay(
        self, recording_id: int, position: int | None = None, length: int | None = None, *,
        channel: str = DEFAULT_REPLAY_CHANNEL, stream_id: int = DEFAULT_REPLAY_STREAM_ID, follow: bool = True,
        limit_counter: Counter | int | None = None, file_io_max_length: int | None = None, _merge: bool = False,
        _token: int = NULL_VALUE,
    ) -> Call[int]:
        """Ask the archive to replay a recording to `channel` + `stream_id` and return the replay
        session id (read it with a subscription whose channel has `session-id=(int)id`, which
        `replay()` does for you).

        `position`: where to start (None: the recording's start); it must be a frame boundary of
        the recording. `length`: how many bytes (None: all of it, and with `follow` a live
        recording is followed until it stops; `follow=False` stops at its end at the start of the
        replay). `limit_counter`: a counter (or its id) whose value caps how far the replay goes
        (bounded replay)."""
        # `_merge`: a replay-merge's replay, whose channel names the live stream's session id; `_token`: a
        # replay over a response channel (`replay()` sends it on a publication of its own)
        rid = check_int(recording_id, "recording_id")
        pos = replay_position(position)
        size = replay_length(length, follow)
        check_channel(channel, "replay channel")
        if _channels.names_session_id(channel) and not _merge:
            raise InvalidArgumentError(f"replay channel {channel!r} names a session-id: leave it out, the archive chooses the "
                             "replay's session")
        stream = check_stream_id(stream_id)
        io_max = NULL_VALUE if file_io_max_length is None else check_int(file_io_max_length, "file_io_max_length", 4096)
        operation = f"replay({rid}, position={position}, length={length})"
        counter_id = limit_counter.id if isinstance(limit_counter, Counter) else limit_counter
        if counter_id is None:
            return self._one(lambda s, c: _codec.replay(s, c, rid, pos, size, stream, io_max, _token, channel),
                             operation)
        counter = check_int(counter_id, "limit_counter")
        return self._one(lambda s, c: _codec.bounded_replay(s, c, rid, pos, size, counter, stream, io_max, _token,
                                                            channel), operation)

    def replicate(
        self, src_recording_id: int, src_control_channel: str, src_control_stream_id: int = CONTROL_STREAM_ID, *,
        dst_recording_id: int | None = None, stop_position: int | None = None, live_destination: str = "",
        replication_channel: str = "", channel_tag_id: int | None = None, subscription_tag_id: int | None = None,
        file_io_max_length: int | None = None, replication_session_id: int | None = None,
        encoded_credentials: bytes = b"", src_response_channel: str = "",
    ) -> Call[int]:
        """Ask this archive (the destination) to replicate recording `src_recording_id` of the
        archive whose control channel is `src_control_channel` + `src_control_stream_id` (Aeron's
        ReplicateRequest2; docs/architecture.md, "Replication"). Returns the replication id: the
        replication's signals (REPLICATE, EXTEND, SYNC, MERGE, STOP, REPLICATE_END) carry it as
        their correlation id (`wait_for_replication`).

        `dst_recording_id`: None, a new recording (a copy of the source's descriptor); else a
        stopped recording of this archive to extend from its stop position (resuming a replication
        that stopped). `stop_position`: None, follow the source (to its stop position, or live
        while it records); else replicate up to there. `live_destination`: once caught up, merge
        into the live stream arriving there (`aeron:udp?endpoint=host:port`; the source must be
        recording). `replication_channel`: the UDP channel this archive receives the replay on
        (`aeron:udp?endpoint=<this host>:0`; "" takes the archive's
        AERON_ARCHIVE_REPLICATION_CHANNEL). `channel_tag_id` / `subscription_tag_id`: tag the
        recording subscription (`tags=`; it becomes multi-destination). `file_io_max_length`: the
        source's read size cap (None: its default). `replication_session_id`: the session id of
        the replay and of the destination recording (None: the source's; not with a live
        destination). `encoded_credentials`: sent in the connect to the source (challenges are
        not supported). `src_response_channel`: where the source answers this archive ("": its
        control host, port 0)."""
        src = check_int(src_recording_id, "src_recording_id", 0)
        check_channel(src_control_channel, "src_control_channel")
        stream = check_stream_id(src_control_stream_id)
        dst = NULL_VALUE if dst_recording_id is None else check_int(dst_recording_id, "dst_recording_id", 0)
        stop = NULL_POSITION if stop_position is None else check_int(stop_position, "stop_position", 0)
        channel_tag = NULL_VALUE if channel_tag_id is None else check_int(channel_tag_id, "channel_tag_id", 0)
        sub_tag = NULL_VALUE if subscription_tag_id is None else check_int(subscription_tag_id, "subscription_tag_id", 0)
        io_max = NULL_VALUE if file_io_max_length is None else check_int(file_io_max_length, "file_io_max_length", 4096)
        session = NULL_VALUE if replication_session_id is None else check_int(replication_session_id,
                                                                               "replication_session_id")
        if live_destination and replication_session_id is not None:
            raise InvalidArgumentError("replicate: replication_session_id cannot be given with a live_destination (the "
                                       "merge needs the source's session id)")
        credentials = bytes(encoded_credentials)
        return self._one(lambda s, c: _codec.replicate2(s, c, src, dst, stop, channel_tag, sub_tag, stream, io_max,
                                                        session, src_control_channel, live_destination,
                                                        replication_channel, credentials, src_response_channel),
                         f"replicate({src}, {src_control_channel!r}, {stream})")

    def stop_replication(self, replication_id: int) -> Call[None]:
        """Stop a replication (UnknownReplication ArchiveError when it has ended); it ends with
        REPLICATE_END, its recording stopped where it got to."""
        return self._void(*self._by_id(_codec.STOP_REPLICATION, replication_id, "replication_id",
                                       "stop_replication"))
    def replay_token(self, recording_id: int) -> Call[int]:
        """A replay token (ReplayToken, reference aeron-wave3.md 6.4): what a replay over a response
        channel is requested with, from its own publication; `replay()` asks for one itself."""
        return self._one(*self._by_id(_codec.REPLAY_TOKEN, recording_id, "recording_id", "replay_token"))

    def stop_replay(self, replay_session_id: int) -> Call[None]:
        """Stop a replay (UnknownReplayError if it has ended already)."""
        return self._void(*self._by_id(_codec.STOP_REPLAY, replay_session_id, "replay_session_id", "stop_replay"))

    def stop_all_replays(self, recording_id: int | None = None) -> Call[None]:
        """Stop every replay of `recording_id`, or every replay of the archive when None."""
        return self._void(*self._by_id(_codec.STOP_ALL_REPLAYS, recording_id, "recording_id", "stop_all_replays"))

    def _void(self, encode: Encoder, operation: str) -> Call[None]:
        """As `_one`, for an operation whose OK carries nothing the caller wants."""

        def steps() -> Steps[None]:
            answer = yield Ask(encode)
            expect_ok(answer.control(operation), operation)

        return Call(operation, steps())


# --- the clients' methods, from one table -------------------------------------------------------


class _Blocking(Protocol):
    @property
    def _blocking(self) -> Literal[True]: ...


class _Awaiting(Protocol):
    @property
    def _blocking(self) -> Literal[False]: ...


class operation(Generic[P, T]):  # noqa: N801 - used as a decorator-like table entry
    """A ControlSession operation as a client's method: the synchronous client's (`_blocking`
    True) runs the call and returns its result, the async client's returns an awaitable of it.
    Both run it through the client's `_run(call)`, on its `_session`."""

    def __init__(self, make: Callable[Concatenate[ControlSession, P], Call[T]]) -> None:
        self.make = make
        self.__doc__ = make.__doc__
        self.__wrapped__ = make

    def __call__(self, client: Any, *args: Any, **kwargs: Any) -> Any:
        """The method called through the class: `AeronArchive.archive_id(archive)`."""
        return self.__get__(client, type(client))(*args, **kwargs)

    @overload
    def __get__(self, client: None, owner: type) -> operation[P, T]: ...

    @overload
    def __get__(self, client: _Blocking, owner: type) -> Callable[P, T]: ...

    @overload
    def __get__(self, client: _Awaiting, owner: type) -> Callable[P, Awaitable[T]]: ...

    def __get__(self, client: Any, owner: type) -> Any:
        if client is None:
            return self
        make = self.make
        if client._blocking:
            @functools.wraps(make)
            def run(*args: Any, **kwargs: Any) -> Any:
                return client._run(make(client._session, *args, **kwargs))
            return run

        @functools.wraps(make)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            return await client._run(make(client._session, *args, **kwargs))
        return run_async


class Operations:
    """What both clients have: the session's state and the operations, each the ControlSession
    method of the same name."""

    _session: ControlSession

    @property
    def timeout(self) -> float:
        return self._session.timeout

    @property
    def control_session_id(self) -> int:
        return self._session.control_session_id

    @property
    def malformed_responses(self) -> int:
        """Responses too short or malformed to decode, skipped."""
        return self._session.malformed_responses

    start_recording = operation(ControlSession.start_recording)
    stop_recording = operation(ControlSession.stop_recording)
    extend_recording = operation(ControlSession.extend_recording)
    truncate_recording = operation(ControlSession.truncate_recording)
    purge_recording = operation(ControlSession.purge_recording)
    detach_segments = operation(ControlSession.detach_segments)
    delete_detached_segments = operation(ControlSession.delete_detached_segments)
    purge_segments = operation(ControlSession.purge_segments)
    attach_segments = operation(ControlSession.attach_segments)
    migrate_segments = operation(ControlSession.migrate_segments)
    list_recordings = operation(ControlSession.list_recordings)
    list_recording = operation(ControlSession.list_recording)
    find_last_matching_recording = operation(ControlSession.find_last_matching_recording)
    list_recording_subscriptions = operation(ControlSession.list_recording_subscriptions)
    recording_position = operation(ControlSession.recording_position)
    stop_position = operation(ControlSession.stop_position)
    max_recorded_position = operation(ControlSession.max_recorded_position)
    archive_id = operation(ControlSession.archive_id)
    start_replay = operation(ControlSession.start_replay)
    stop_replay = operation(ControlSession.stop_replay)
    stop_all_replays = operation(ControlSession.stop_all_replays)
    replicate = operation(ControlSession.replicate)
    stop_replication = operation(ControlSession.stop_replication)
    replay_token = operation(ControlSession.replay_token)
