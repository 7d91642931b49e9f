"""The archive control session without I/O (aeron_async/archive/_session.py; docs/architecture.md,
"Archive", the client part): no driver, no socket, no clock. Responses are encoded with the codecs
and fed to the session; the requests it emits are decoded by hand from the reference tables
(tests/support/archive_fake.py); time is whatever number the test passes."""

from __future__ import annotations

import inspect
from typing import Any, Literal, TypeVar

import anyio
import pytest

from aeron_async.archive import _codec
from aeron_async.archive._channels import LIST_PAGE
from aeron_async.archive._session import Answered, Call, ControlSession, Operations
from aeron_async.archive._session import SignalArrived, SignalWait
from aeron_async.archive.aio import AsyncAeronArchive
from aeron_async.archive.records import ArchiveErrorCode, ControlResponseCode
from aeron_async.archive import (  # the package re-exports the errors of aeron_async.errors
    AeronArchive, ArchiveError, ArchiveTimeoutError, AuthenticationError, InvalidExtensionError, RecordingPositionError,
    RecordingSignal, SourceLocation, UnknownRecordingError, UnknownSubscriptionError,
)
from support.archive_fake import decode_request

T = TypeVar("T")
CSID = 4242
BASE = 1 << 20  # the session's correlation ids follow this base: BASE + 1, BASE + 2, ...
RESPONSE_CHANNEL = "aeron:ipc?term-length=64k|session-id=77"


def control_response(correlation_id: int, relevant_id: int = 0, code: int = ControlResponseCode.OK,
                     message: str = "", control_session_id: int = CSID) -> bytes:
    return _codec._encode(_codec.CONTROL_RESPONSE, "control_response", control_session_id=control_session_id,
                          correlation_id=correlation_id, relevant_id=relevant_id, code=int(code), version=0,
                          error_message=message.encode())


def challenge(correlation_id: int, data: bytes) -> bytes:
    return _codec._encode(_codec.CHALLENGE, "challenge", control_session_id=CSID, correlation_id=correlation_id,
                          version=0, encoded_challenge=data)


def descriptor(correlation_id: int, recording_id: int) -> bytes:
    return _codec._encode(_codec.RECORDING_DESCRIPTOR, "recording_descriptor", control_session_id=CSID,
                          correlation_id=correlation_id, recording_id=recording_id, start_position=0,
                          stop_position=64 * recording_id, initial_term_id=7, segment_file_length=1 << 27,
                          term_buffer_length=1 << 16, mtu_length=1408, session_id=5, stream_id=1001,
                          stripped_channel=b"aeron:ipc", original_channel=b"aeron:ipc", source_identity=b"aeron:ipc")


def subscription_descriptor(correlation_id: int, subscription_id: int) -> bytes:
    return _codec._encode(_codec.RECORDING_SUBSCRIPTION_DESCRIPTOR, "recording_subscription_descriptor",
                          control_session_id=CSID, correlation_id=correlation_id, subscription_id=subscription_id,
                          stream_id=1001, stripped_channel=b"aeron:ipc")


def signal(recording_id: int, kind: RecordingSignal, control_session_id: int = CSID) -> bytes:
    return _codec._encode(_codec.RECORDING_SIGNAL_EVENT, "recording_signal_event",
                          control_session_id=control_session_id, correlation_id=0, recording_id=recording_id,
                          subscription_id=900, position=4096, signal=int(kind))


def connected(timeout: float = 5.0) -> ControlSession:
    """A session that has connected (correlation id BASE + 1 spent on AuthConnect)."""
    session = ControlSession(timeout, correlation_id=BASE)
    call = session.connect(RESPONSE_CHANNEL, 20)
    session.start(call, 0.0)
    assert isinstance(session.receive(control_response(BASE + 1, CSID)), Answered)
    assert session.advance(call, 0.0) is None
    return session


def answer(session: ControlSession, call: Call[Any], *responses: bytes, now: float = 0.0) -> bytes | None:
    """Feed `responses`; the call must then be answered: its next request (None when done)."""
    for response in responses:
        session.receive(response)
    assert call.answered
    return session.advance(call, now)


def test_connect_sends_auth_connect_and_takes_the_session_id_from_ok() -> None:
    session = ControlSession(5.0, correlation_id=BASE)
    call = session.connect(RESPONSE_CHANNEL, 20, b"user:pw")
    request = decode_request(session.start(call, 0.0))
    assert request["name"] == "AuthConnect" and request["correlationId"] == BASE + 1
    assert request["responseStreamId"] == 20 and request["version"] == (1 << 16) | (12 << 8)
    channel, credentials, info = request["var"]
    assert channel == RESPONSE_CHANNEL.encode() and credentials == b"user:pw"
    assert info.startswith(b"name=aeron_async version=")
    assert not session.connected and not call.answered
    event = session.receive(control_response(BASE + 1, CSID))
    assert isinstance(event, Answered) and event.call is call
    assert session.advance(call, 0.0) is None
    assert call.done and call.result() == CSID and session.control_session_id == CSID and session.connected


def test_the_challenge_loop_answers_each_challenge_on_a_new_correlation() -> None:
    session = ControlSession(5.0, correlation_id=BASE)
    heard: list[bytes] = []

    def on_challenge(data: bytes) -> bytes:
        heard.append(data)
        return b"answer-%d" % len(heard)

    call = session.connect(RESPONSE_CHANNEL, 20, b"first", on_challenge)
    session.start(call, 0.0)
    replies = []
    for round_ in (1, 2):
        reply = answer(session, call, challenge(BASE + round_, b"nonce-%d" % round_))
        assert reply is not None
        replies.append(decode_request(reply))
        assert session.control_session_id == CSID and not call.done
    assert heard == [b"nonce-1", b"nonce-2"]
    assert [(r["name"], r["controlSessionId"], r["correlationId"], r["var"]) for r in replies] == [
        ("ChallengeResponse", CSID, BASE + 2, [b"answer-1"]),
        ("ChallengeResponse", CSID, BASE + 3, [b"answer-2"]),
    ]
    assert answer(session, call, control_response(BASE + 3, CSID)) is None
    assert call.result() == CSID


def test_a_challenge_without_handler_and_a_rejection_are_authentication_errors() -> None:
    session = ControlSession(5.0, correlation_id=BASE)
    call = session.connect(RESPONSE_CHANNEL, 20)
    session.start(call, 0.0)
    with pytest.raises(AuthenticationError, match="no on_challenge handler") as info:
        answer(session, call, challenge(BASE + 1, b"nonce"))
    assert info.value.correlation_id == BASE + 1

    session = ControlSession(5.0, correlation_id=BASE)
    call = session.connect(RESPONSE_CHANNEL, 20, b"wrong")
    session.start(call, 0.0)
    rejected = control_response(BASE + 1, int(ArchiveErrorCode.AUTHENTICATION_REJECTED), ControlResponseCode.ERROR,
                                "rejected", control_session_id=0)
    with pytest.raises(AuthenticationError, match="connect: the archive answered AUTHENTICATION_REJECTED: rejected"):
        answer(session, call, rejected)
    assert not session.connected


def test_a_wrong_correlation_id_or_another_session_is_ignored() -> None:
    session = connected()
    call = session.archive_id()
    request = decode_request(session.start(call, 0.0))
    assert request == {**request, "name": "ArchiveId", "controlSessionId": CSID, "correlationId": BASE + 2}
    assert session.receive(control_response(BASE + 7, 1)) is None  # no call waits for it
    assert session.receive(control_response(BASE + 2, 2, control_session_id=CSID + 1)) is None  # another session
    assert not call.answered
    assert answer(session, call, control_response(BASE + 2, 77)) is None
    assert call.result() == 77


def test_an_error_response_raises_the_exception_for_its_code() -> None:
    session = connected()
    cases: list[tuple[Call[Any], bytes, type[ArchiveError], str]] = [
        (session.truncate_recording(3, 40), control_response(BASE + 2, 16, ControlResponseCode.ERROR, "not aligned"),
         RecordingPositionError, r"truncate_recording\(3, 40\): the archive answered INVALID_POSITION: not aligned; "
                                 "give a position on a frame boundary"),
        (session.extend_recording(0, "aeron:ipc", 10), control_response(BASE + 3, 9, ControlResponseCode.ERROR, "x"),
         InvalidExtensionError, "init-term-id="),
        (session.stop_recording("aeron:ipc", 10), control_response(BASE + 4, 0, ControlResponseCode.SUBSCRIPTION_UNKNOWN),
         UnknownSubscriptionError, r"stop_recording\('aeron:ipc', 10\).*list_recording_subscriptions\(\) shows"),
        (session.list_recording(12), control_response(BASE + 5, 12, ControlResponseCode.RECORDING_UNKNOWN),
         UnknownRecordingError, r"list_recording\(12\).*list_recordings\(\) shows"),
        (session.stop_recording(recording_id=3), control_response(BASE + 6, 0),
         UnknownRecordingError, "no active recording 3"),
    ]
    for call, response, error, text in cases:
        session.start(call, 0.0)
        with pytest.raises(error, match=text) as info:
            answer(session, call, response)
        assert info.value.correlation_id in (call.correlation_id, None)
        assert not call.done


def test_the_timeout_is_decided_from_the_callers_clock_and_a_late_answer_is_dropped() -> None:
    session = connected(timeout=2.5)
    call = session.recording_position(1)
    session.start(call, 100.0)
    assert call.deadline == 102.5
    assert not session.overdue(call, 102.4)
    assert session.overdue(call, 102.5)
    error = session.timed_out(call)
    assert isinstance(error, ArchiveTimeoutError) and error.correlation_id == BASE + 2
    assert str(error) == (f"recording_position(1): no answer from the archive within 2.5 s (correlation id "
                          f"{BASE + 2}); raise the timeout, or check that the archive is running")
    assert session.receive(control_response(BASE + 2, 4096)) is None and not call.answered


def test_unsent_requests_name_the_missing_archive_or_the_back_pressure() -> None:
    session = ControlSession(0.5, correlation_id=BASE)
    call = session.connect(RESPONSE_CHANNEL, 20)
    session.start(call, 0.0)
    error = session.unsent(call, listening=False, channel="aeron:ipc?term-length=64k", stream_id=10, aeron_dir="/d")
    assert str(error).startswith("connect: no archive is listening on aeron:ipc?term-length=64k stream 10 "
                                 "(nothing connected within 0.5 s): start one beside the driver at /d")
    call = session.archive_id()
    session.start(call, 0.0)
    error = session.unsent(call, listening=True, channel="c", stream_id=10, aeron_dir="/d", result=-2)
    assert "back-pressured: offer result -2" in str(error)


def test_a_listing_asks_page_after_page_until_the_archive_runs_out() -> None:
    session = connected()
    call = session.list_recordings(from_recording_id=5, count=LIST_PAGE + 10)
    assert call.listing
    first = decode_request(session.start(call, 0.0))
    assert (first["name"], first["fromRecordingId"], first["recordCount"]) == ("ListRecordings", 5, LIST_PAGE)
    for recording_id in range(5, 5 + LIST_PAGE - 1):
        assert session.receive(descriptor(BASE + 2, recording_id)) is None
    assert not call.answered
    assert isinstance(session.receive(descriptor(BASE + 2, 5 + LIST_PAGE - 1)), Answered)
    second = session.advance(call, 0.0)
    assert second is not None
    page = decode_request(second)
    assert (page["correlationId"], page["fromRecordingId"], page["recordCount"]) == (BASE + 3, 5 + LIST_PAGE, 10)
    assert session.receive(descriptor(BASE + 2, 999)) is None  # the finished page's correlation: dropped
    last = answer(session, call, descriptor(BASE + 3, 5 + LIST_PAGE), descriptor(BASE + 3, 6 + LIST_PAGE),
                  control_response(BASE + 3, 0, ControlResponseCode.RECORDING_UNKNOWN))
    assert last is None
    assert [d.recording_id for d in call.result()] == list(range(5, 7 + LIST_PAGE))


def test_list_recording_subscriptions_ends_on_subscription_unknown() -> None:
    session = connected()
    call = session.list_recording_subscriptions("aeron:ipc", 1001, count=5)
    request = decode_request(session.start(call, 0.0))
    assert (request["applyStreamId"], request["streamId"], request["subscriptionCount"]) == (1, 1001, 5)
    answer(session, call, subscription_descriptor(BASE + 2, 900), subscription_descriptor(BASE + 2, 901),
           control_response(BASE + 2, 0, ControlResponseCode.SUBSCRIPTION_UNKNOWN))
    assert [d.subscription_id for d in call.result()] == [900, 901]


def test_signals_are_queued_taken_and_waited_for_by_the_callers_clock() -> None:
    session = connected()
    event = session.receive(signal(3, RecordingSignal.START))
    assert isinstance(event, SignalArrived) and event.signal.recording_id == 3
    assert session.receive(signal(4, RecordingSignal.STOP, control_session_id=CSID + 1)) is None
    session.receive(signal(4, RecordingSignal.STOP))
    wait = SignalWait(RecordingSignal.STOP, None, None, 1.0, 50.0)
    taken = session.take_signal(wait)
    assert taken is not None and taken.recording_id == 4
    assert session.take_signal(wait) is None
    wait.expire(50.9)
    with pytest.raises(ArchiveTimeoutError, match=r"no STOP signal \(recording None, subscription None\) within 1.0 s"):
        wait.expire(51.0)
    assert [s.signal for s in session.drain_signals()] == [RecordingSignal.START]
    assert session.drain_signals() == []


def test_malformed_responses_are_counted_and_other_schemas_ignored() -> None:
    session = connected()
    assert session.receive(b"\x01\x02\x03") is None
    assert session.receive(control_response(BASE + 9, 0)[:20]) is None
    other_schema = b"\x08\x00\x01\x00\x02\x00\x01\x00" + bytes(8)
    assert session.receive(other_schema) is None
    assert session.malformed_responses == 2


def test_keep_alive_is_due_a_second_after_the_last_request_and_awaits_no_answer() -> None:
    session = ControlSession(5.0, correlation_id=BASE)
    assert not session.keep_alive_due(100.0)  # no session yet
    session = connected()
    session.sent(10.0)
    assert not session.keep_alive_due(10.9)
    assert session.keep_alive_due(11.0)
    call = session.keep_alive()
    request = decode_request(session.start(call, 11.0))
    assert (request["name"], request["controlSessionId"], request["correlationId"]) == ("KeepAlive", CSID, BASE + 2)
    assert call.answered and session.advance(call, 11.0) is None and call.done


def test_close_sends_close_session_once_and_forgets_the_calls() -> None:
    assert ControlSession(5.0).close() is None  # never connected: nothing to close
    session = connected()
    call = session.archive_id()
    session.start(call, 0.0)
    request = session.close()
    assert request is not None and decode_request(request) == {**decode_request(request), "name": "CloseSession",
                                                              "controlSessionId": CSID}
    assert session.close() is None
    assert session.receive(control_response(BASE + 2, 1)) is None


def test_arguments_are_checked_when_the_call_is_made() -> None:
    session = connected()
    with pytest.raises(ValueError, match="session-id"):
        session.start_replay(1, channel="aeron:ipc?session-id=5")
    with pytest.raises(ValueError, match="position=-64"):
        session.start_replay(1, position=-64)
    with pytest.raises(TypeError, match="one of"):
        session.stop_recording()
    with pytest.raises(ValueError, match="'local'.*'remote'"):
        session.start_recording("aeron:ipc", 10, source_location="nearby")
    call = session.start_replay(1, 0, 4096, channel="aeron:udp?endpoint=localhost:0", stream_id=7, limit_counter=3)
    request = decode_request(session.start(call, 0.0))
    assert (request["name"], request["limitCounterId"], request["replayStreamId"]) == ("BoundedReplay", 3, 7)
    assert request["var"] == [b"aeron:udp?endpoint=localhost:0"]
    replay_id = (5 << 32) | 9
    assert answer(session, call, control_response(BASE + 2, replay_id)) is None and call.result() == replay_id
    with pytest.raises(RuntimeError, match="a call runs once"):
        session.start(call, 0.0)


class ScriptedSync(Operations):
    """A synchronous driver of the operations table with an archive that answers at once."""

    _blocking: Literal[True] = True

    def __init__(self, session: ControlSession) -> None:
        self._session = session
        self.sent: list[dict[str, Any]] = []

    def respond(self, request: dict[str, Any]) -> list[bytes]:
        corr = request["correlationId"]
        if request["name"] == "StartRecording2":
            return [control_response(corr, 900 + request["streamId"])]
        if request["name"] == "RecordingPosition":
            return [control_response(corr, -1)]
        return [control_response(corr, 0, ControlResponseCode.ERROR, "no")]

    def _run(self, call: Call[T]) -> T:
        request: bytes | None = self._session.start(call, 0.0)
        while request is not None:
            decoded = decode_request(request)
            self.sent.append(decoded)
            for response in self.respond(decoded):
                self._session.receive(response)
            request = self._session.advance(call, 0.0)
        return call.result()


class ScriptedAsync(ScriptedSync):
    _blocking: Literal[False] = False  # type: ignore[assignment]

    async def _run(self, call: Call[T]) -> T:  # type: ignore[override]
        await anyio.sleep(0)
        return ScriptedSync._run(self, call)


def test_both_clients_take_their_operations_from_one_table() -> None:
    sync = ScriptedSync(connected())
    assert sync.start_recording("aeron:ipc", 11, source_location=SourceLocation.REMOTE) == 911
    assert sync.recording_position(4) is None
    assert ScriptedSync.recording_position(sync, 5) is None  # through the class, as a function
    with pytest.raises(ArchiveError, match="stop_replay\\(8\\): the archive answered GENERIC: no"):
        sync.stop_replay(8)
    assert [(r["name"], r.get("sourceLocation")) for r in sync.sent] == [
        ("StartRecording2", int(SourceLocation.REMOTE)), ("RecordingPosition", None), ("RecordingPosition", None),
        ("StopReplay", None)]

    async def main() -> tuple[int, int | None]:
        scripted = ScriptedAsync(connected())
        return await scripted.start_recording("aeron:ipc", 12), await scripted.recording_position(4)

    assert anyio.run(main) == (912, None)
    for name in ("start_recording", "list_recordings", "stop_replay", "archive_id", "start_replay"):
        core = getattr(ControlSession, name)
        assert getattr(AeronArchive, name).__doc__ == core.__doc__ == getattr(AsyncAeronArchive, name).__doc__
        assert inspect.iscoroutinefunction(getattr(ScriptedAsync(connected()), name))
        assert not inspect.iscoroutinefunction(getattr(sync, name))
