"""The archive client against a scripted archive (tests/support/archive_fake.py): every request it sends
is decoded by hand from the reference tables (golden, from the client's side), and every response
it gets is built by hand the same way; error answers become the exception types naming the fix,
silence becomes a timeout error, signals are queued and waited for. Sync and async (asyncio,
uvloop, trio) clients."""

from __future__ import annotations

import struct
import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import aeron_async
from aeron_async.archive import AeronArchive, RecordingSignal, SourceLocation
from aeron_async.archive import _codec
from aeron_async.archive import aio as archive_aio
from aeron_async.errors import (
    ActiveRecordingError,
    ArchiveTimeoutError,
    AuthenticationError,
    InvalidExtensionError,
    RecordingPositionError,
    UnknownRecordingError,
    UnknownSubscriptionError,
)
from conftest import wait_for
from support.archive_fake import (
    FakeArchive,
    accept,
    challenge,
    control_response,
    recording_descriptor,
    signal_event,
    subscription_descriptor,
)

CSID = FakeArchive.CONTROL_SESSION_ID
OK, ERROR, RECORDING_UNKNOWN, SUBSCRIPTION_UNKNOWN = 0, 1, 2, 3


def ok(request: dict[str, Any], relevant: int = 0) -> bytes:
    return control_response(CSID, request["correlationId"], relevant, OK)


def standard_script(recordings: int = 5) -> Any:
    """A small archive: `recordings` recordings (ids 0..n-1, stream 10 + id % 2), answers to every
    request of the client, errors where the real archive gives them."""

    def script(r: dict[str, Any]) -> list[bytes]:
        name, corr = r["name"], r.get("correlationId")
        out = accept(r)
        if name == "StartRecording2":
            out.append(ok(r, 900 + r["streamId"]))
            out.append(signal_event(CSID, 3, 900 + r["streamId"], 0, RecordingSignal.START))
        elif name == "ArchiveId":
            out.append(ok(r, 77))
        elif name in ("ListRecordings", "ListRecordingsForUri"):
            ids = [i for i in range(r["fromRecordingId"], recordings)
                   if name == "ListRecordings" or (10 + i % 2 == r["streamId"] and r["var"][0].decode() in "aeron:ipc")]
            for i in ids[:r["recordCount"]]:
                out.append(recording_descriptor(CSID, corr, i, start=0, stop=1024 * i, stream_id=10 + i % 2))
            if len(ids) < r["recordCount"]:
                out.append(control_response(CSID, corr, recordings, RECORDING_UNKNOWN, ""))
        elif name == "ListRecording":
            if r["recordingId"] < recordings:
                out.append(recording_descriptor(CSID, corr, r["recordingId"], stop=64))
            else:
                out.append(control_response(CSID, corr, r["recordingId"], RECORDING_UNKNOWN,
                                            f"unknown recording id {r['recordingId']}"))
        elif name == "FindLastMatchingRecording":
            out.append(ok(r, 4 if r["streamId"] == 10 else -1))
        elif name == "ListRecordingSubscriptions":
            out.append(subscription_descriptor(CSID, corr, 910, 10, "aeron:ipc"))
            out.append(control_response(CSID, corr, 0, SUBSCRIPTION_UNKNOWN))
        elif name in ("RecordingPosition", "StopPosition", "MaxRecordedPosition"):
            out.append(ok(r, {"RecordingPosition": -1, "StopPosition": 4096, "MaxRecordedPosition": 4096}[name]))
        elif name == "TruncateRecording":
            if r["position"] % 32:
                out.append(control_response(CSID, corr, 16, ERROR,
                                            f"position {r['position']} is not aligned to a frame"))
            elif r["recordingId"] == 1:
                out.append(control_response(CSID, corr, 2, ERROR, "cannot truncate active recording 1"))
            else:
                out.append(ok(r))
                out.append(signal_event(CSID, r["recordingId"], -1, r["position"], RecordingSignal.DELETE))
        elif name == "PurgeRecording":
            out.append(ok(r, 2))
        elif name == "StopRecordingByIdentity":
            out.append(ok(r, 1 if r["recordingId"] == 0 else 0))
        elif name == "StopRecordingSubscription":
            if r["subscriptionId"] == 910:
                out.append(ok(r))
            else:
                out.append(control_response(CSID, corr, 4, ERROR, f"no recording subscription {r['subscriptionId']}"))
        elif name == "StopRecording":
            out.append(control_response(CSID, corr, 0, SUBSCRIPTION_UNKNOWN, "no subscription found"))
        elif name == "ExtendRecording2":
            out.append(control_response(CSID, corr, 9, ERROR, "cannot extend recording 0: initialTermId 5 != 6"))
        elif name in ("Replay", "BoundedReplay"):
            out.append(ok(r, (3 << 32) | 123))
        elif name in ("StopReplay", "StopAllReplays"):
            out.append(control_response(CSID, corr, 6, ERROR, "replay session not known"))
        return out

    return script


@pytest.fixture
def fake(client: aeron_async.Aeron) -> Iterator[FakeArchive]:
    archive = FakeArchive(client, standard_script())
    yield archive
    archive.close()


@pytest.fixture
def archive(client: aeron_async.Aeron, fake: FakeArchive) -> Iterator[AeronArchive]:
    with AeronArchive.connect(client, timeout=3.0) as a:
        yield a


def last(fake: FakeArchive, name: str) -> dict[str, Any]:
    return [r for r in fake.requests if r["name"] == name][-1]


def test_connect_sends_auth_connect_as_the_reference_lays_it_out(archive: AeronArchive, fake: FakeArchive) -> None:
    request = fake.requests[0]
    assert request["name"] == "AuthConnect" and request["length"] == 8 + 16 + 12 + sum(map(len, request["var"]))
    assert request["responseStreamId"] == 20
    assert request["version"] == (1 << 16) | (12 << 8)  # semantic version 1.12.0, the Java client's
    channel, credentials, info = request["var"]
    assert channel.startswith(b"aeron:ipc?term-length=64k|session-id=")
    assert credentials == b"" and info.startswith(b"name=aeron_async version=")
    assert archive.control_session_id == CSID
    assert archive.archive_id() == 77
    request = last(fake, "ArchiveId")
    assert request["controlSessionId"] == CSID and request["correlationId"] != fake.requests[0]["correlationId"]


def test_requests_are_encoded_field_by_field(archive: AeronArchive, fake: FakeArchive) -> None:
    assert archive.start_recording("aeron:udp?endpoint=localhost:0", 11, source_location="remote",
                                   auto_stop=True) == 911
    r = last(fake, "StartRecording2")
    assert (r["streamId"], r["sourceLocation"], r["autoStop"], r["var"]) == (
        11, SourceLocation.REMOTE, 1, [b"aeron:udp?endpoint=localhost:0"])
    assert archive.start_replay(4, 2048, 4096, channel="aeron:ipc", stream_id=99) == (3 << 32) | 123
    r = last(fake, "Replay")
    assert (r["recordingId"], r["position"], r["length"], r["replayStreamId"], r["fileIoMaxLength"],
            r["replayToken"], r["var"]) == (4, 2048, 4096, 99, -1, -1, [b"aeron:ipc"])
    archive.start_replay(4, limit_counter=17, follow=False)
    r = last(fake, "BoundedReplay")
    assert (r["position"], r["length"], r["limitCounterId"], r["replayStreamId"]) == (-1, -2, 17, 1001)
    archive.start_replay(4)
    assert last(fake, "Replay")["length"] == -1  # follow a live recording
    assert archive.recording_position(2) is None
    assert archive.stop_position(2) == 4096 and last(fake, "StopPosition")["recordingId"] == 2
    assert archive.max_recorded_position(2) == 4096
    assert archive.purge_recording(0) == 2 and last(fake, "PurgeRecording")["recordingId"] == 0
    archive.truncate_recording(0, 64)
    assert (last(fake, "TruncateRecording")["recordingId"], last(fake, "TruncateRecording")["position"]) == (0, 64)
    archive.stop_recording(recording_id=0)
    archive.stop_recording(subscription_id=910)
    assert last(fake, "StopRecordingSubscription")["subscriptionId"] == 910
    assert archive.find_last_matching_recording("aeron:ipc", 10, session_id=5, min_recording_id=1) == 4
    r = last(fake, "FindLastMatchingRecording")
    assert (r["minRecordingId"], r["sessionId"], r["streamId"], r["var"]) == (1, 5, 10, [b"aeron:ipc"])
    assert archive.find_last_matching_recording("aeron:ipc", 11) is None
    assert last(fake, "FindLastMatchingRecording")["sessionId"] == -1
    for r in fake.requests[1:]:
        if "controlSessionId" in r:
            assert r["controlSessionId"] == CSID


def test_listings_page_and_end_on_recording_unknown(client: aeron_async.Aeron) -> None:
    fake = FakeArchive(client, standard_script(recordings=600))
    try:
        with AeronArchive.connect(client, timeout=3.0) as archive:
            every = archive.list_recordings()
            assert [d.recording_id for d in every] == list(range(600))
            pages = [r for r in fake.requests if r["name"] == "ListRecordings"]
            assert [(p["fromRecordingId"], p["recordCount"]) for p in pages] == [(0, 256), (256, 256), (512, 256)]
            some = archive.list_recordings(from_recording_id=10, count=3)
            assert [d.recording_id for d in some] == [10, 11, 12]
            d = some[0]
            assert (d.start_position, d.stop_position, d.stream_id, d.session_id, d.initial_term_id,
                    d.segment_file_length, d.term_buffer_length, d.mtu_length) == (0, 10240, 10, 7, 5, 128 << 20,
                                                                                   1 << 20, 1408)
            assert d.original_channel == "aeron:ipc" and d.source_identity == "aeron:ipc" and not d.is_active
            assert d.length == 10240
            by_uri = archive.list_recordings("aeron:ipc", 11, from_recording_id=590)
            assert [x.recording_id for x in by_uri] == [591, 593, 595, 597, 599]
            r = last(fake, "ListRecordingsForUri")
            assert (r["streamId"], r["var"]) == (11, [b"aeron:ipc"])
            assert archive.list_recording(7).recording_id == 7
            with pytest.raises(UnknownRecordingError, match="list_recordings\\(\\) shows") as info:
                archive.list_recording(1000)
            assert info.value.archive_code == 5 and "unknown recording id 1000" in str(info.value)
            subs = archive.list_recording_subscriptions("ipc", 10)
            assert [(s.subscription_id, s.stream_id, s.stripped_channel) for s in subs] == [(910, 10, "aeron:ipc")]
            r = last(fake, "ListRecordingSubscriptions")
            assert (r["pseudoIndex"], r["applyStreamId"], r["streamId"], r["var"]) == (0, 1, 10, [b"ipc"])
            with pytest.raises(TypeError, match="give both"):
                archive.list_recordings("aeron:ipc")
    finally:
        fake.close()


def test_refusals_raise_errors_with_the_archives_code_and_the_fix(archive: AeronArchive) -> None:
    with pytest.raises(RecordingPositionError, match="not aligned to a frame.*frame boundary") as info:
        archive.truncate_recording(0, 33)
    assert info.value.archive_code == 16 and isinstance(info.value, ValueError)
    with pytest.raises(ActiveRecordingError, match="active recording 1.*stop it first"):
        archive.truncate_recording(1, 0)
    with pytest.raises(UnknownSubscriptionError, match="list_recording_subscriptions\\(\\) shows"):
        archive.stop_recording(subscription_id=5)
    with pytest.raises(UnknownSubscriptionError, match="stop_recording\\('aeron:ipc', 10\\)"):
        archive.stop_recording("aeron:ipc", 10)
    with pytest.raises(UnknownRecordingError, match="no active recording 3"):
        archive.stop_recording(recording_id=3)
    with pytest.raises(InvalidExtensionError, match="initialTermId 5 != 6.*init-term-id="):
        archive.extend_recording(0, "aeron:ipc", 10)
    with pytest.raises(aeron_async.errors.UnknownReplayError, match="replay session not known"):
        archive.stop_replay(12)
    with pytest.raises(TypeError, match="one of"):
        archive.stop_recording("aeron:ipc", 10, recording_id=1)
    with pytest.raises(ValueError, match="'local'.*'remote'"):
        archive.start_recording("aeron:ipc", 10, source_location="nearby")
    with pytest.raises(ValueError, match="must be an Aeron channel"):
        archive.start_recording("ipc", 10)
    with pytest.raises(ValueError, match="session-id"):
        archive.start_replay(1, channel="aeron:ipc?session-id=5")
    with pytest.raises(ValueError, match="position=-64"):
        archive.start_replay(1, -64)
    assert archive.archive_id() == 77  # the session is still fine


def test_signals_are_queued_and_waited_for(archive: AeronArchive, fake: FakeArchive) -> None:
    subscription_id = archive.start_recording("aeron:ipc", 10)
    archive.truncate_recording(4, 128)
    event = archive.wait_for_signal(RecordingSignal.DELETE, recording_id=4, timeout=3)
    assert (event.recording_id, event.position, event.signal) == (4, 128, RecordingSignal.DELETE)
    signals = archive.poll_for_recording_signals()
    assert [(s.signal, s.recording_id, s.subscription_id) for s in signals] == [
        (RecordingSignal.START, 3, subscription_id)]
    assert archive.poll_for_recording_signals() == []
    with pytest.raises(ArchiveTimeoutError, match="no STOP signal"):
        archive.wait_for_signal(RecordingSignal.STOP, timeout=0.2)


def test_malformed_responses_are_counted_and_skipped(client: aeron_async.Aeron) -> None:
    def script(r: dict[str, Any]) -> list[bytes]:
        out = accept(r)
        if r["name"] == "ArchiveId":
            good = ok(r, 5)
            out += [good[:20], good[:-3] + b"\xff\xff\xff", struct.pack("<HHHH", 32, 1, 999, 14) + bytes(40), good]
        return out

    fake = FakeArchive(client, script)
    try:
        with AeronArchive.connect(client, timeout=3.0) as archive:
            assert archive.archive_id() == 5
            assert archive.malformed_responses == 2  # the other schema is ignored, not malformed
    finally:
        fake.close()


def test_no_archive_and_no_answer_are_timeout_errors(client: aeron_async.Aeron) -> None:
    start = time.monotonic()
    with pytest.raises(ArchiveTimeoutError, match="no archive is listening on aeron:ipc.*stream 10.*start one"):
        AeronArchive.connect(client, timeout=0.3)
    assert time.monotonic() - start < 5
    fake = FakeArchive(client, accept)  # accepts the session, answers nothing else
    try:
        with AeronArchive.connect(client, timeout=0.3) as archive:
            with pytest.raises(ArchiveTimeoutError, match="archive_id\\(\\): no answer from the archive within 0.3 s"):
                archive.archive_id()
    finally:
        fake.close()


def test_challenge_is_answered_or_refused(client: aeron_async.Aeron) -> None:
    def script(r: dict[str, Any]) -> list[bytes]:
        if r["name"] == "AuthConnect":
            return [challenge(CSID, r["correlationId"], b"who?")]
        if r["name"] == "ChallengeResponse":
            code = OK if r["var"] == [b"me"] else ERROR
            return [control_response(CSID, r["correlationId"], CSID if code == OK else 10, code, "rejected")]
        return []

    fake = FakeArchive(client, script)
    try:
        with AeronArchive.connect(client, timeout=3.0, credentials=b"x", on_challenge=lambda c: b"me") as archive:
            assert archive.control_session_id == CSID
        with pytest.raises(AuthenticationError, match="no on_challenge handler"):
            AeronArchive.connect(client, timeout=3.0)
        with pytest.raises(AuthenticationError, match="AUTHENTICATION_REJECTED: rejected"):
            AeronArchive.connect(client, timeout=3.0, on_challenge=lambda c: b"you")
        assert fake.requests[0]["var"][1] == b"x"
    finally:
        fake.close()


@pytest.mark.anyio
async def test_async_client_requests_listings_signals_errors(anyio_backend: Any, client: aeron_async.Aeron) -> None:
    async with aeron_async.connect(client.aeron_dir) as aeron:
        fake = FakeArchive(client, standard_script(recordings=300))
        try:
            async with archive_aio.connect(aeron, timeout=3.0) as archive:
                assert archive.control_session_id == CSID
                # requests from several tasks at once are matched by correlation id
                results: dict[str, Any] = {}

                async def run(name: str, coro: Any) -> None:
                    results[name] = await coro

                async with anyio.create_task_group() as tg:
                    tg.start_soon(run, "id", archive.archive_id())
                    tg.start_soon(run, "list", archive.list_recordings())
                    tg.start_soon(run, "stop", archive.stop_position(2))
                    tg.start_soon(run, "sub", archive.start_recording("aeron:ipc", 10))
                assert results["id"] == 77 and results["stop"] == 4096 and results["sub"] == 910
                assert [d.recording_id for d in results["list"]] == list(range(300))
                assert (await archive.list_recording(3)).recording_id == 3
                assert await archive.find_last_matching_recording("aeron:ipc", 11) is None
                event = await archive.wait_for_signal(RecordingSignal.START, subscription_id=910, timeout=3)
                assert event.recording_id == 3
                with pytest.raises(RecordingPositionError, match="frame boundary"):
                    await archive.truncate_recording(0, 33)
                with pytest.raises(UnknownRecordingError):
                    await archive.list_recording(999)
                await archive.truncate_recording(2, 0)
                async for signal in archive.recording_signals():
                    assert (signal.signal, signal.recording_id) == (RecordingSignal.DELETE, 2)
                    break
                replay = archive.replay(1, 0, 64)
                assert await replay.start() == (3 << 32) | 123
                assert replay.subscription is not None
                await replay.aclose()  # stops it: the fake says the replay is unknown, which is fine
            wait_for(lambda: fake.names()[-1] == "CloseSession", 3, what="CloseSession")
            assert "StopReplay" in fake.names()
        finally:
            fake.close()


@pytest.mark.anyio
async def test_async_connect_without_archive_times_out(anyio_backend: Any, client: aeron_async.Aeron) -> None:
    async with aeron_async.connect(client.aeron_dir) as aeron:
        with pytest.raises(ArchiveTimeoutError, match="no archive is listening"):
            async with archive_aio.connect(aeron, timeout=0.3):
                pass


def test_signal_callbacks(client: aeron_async.Aeron, fake: FakeArchive) -> None:
    seen: list[tuple[RecordingSignal, int]] = []
    with AeronArchive.connect(client, timeout=3.0,
                              on_recording_signal=lambda s: seen.append((s.signal, s.recording_id))) as archive:
        archive.start_recording("aeron:ipc", 10)
        archive.truncate_recording(4, 64)
        wait_for(lambda: archive.poll_for_recording_signals() is not None and len(seen) == 2, 3, what="signals")
        assert seen == [(RecordingSignal.START, 3), (RecordingSignal.DELETE, 4)]


@pytest.mark.anyio
async def test_async_signal_callback(anyio_backend: Any, client: aeron_async.Aeron, fake: FakeArchive) -> None:
    seen: list[RecordingSignal] = []
    async with aeron_async.connect(client.aeron_dir) as aeron:
        async with archive_aio.connect(aeron, timeout=3.0, on_recording_signal=lambda s: seen.append(s.signal)) \
                as archive:
            await archive.start_recording("aeron:ipc", 10)
            event = await archive.wait_for_signal(RecordingSignal.START, timeout=3)
            assert seen == [RecordingSignal.START] and event.recording_id == 3
            assert archive.poll_recording_signals() == []


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.sampled_from([1, 22, 23, 24, 59, 106, 7]), st.integers(0, 120))
def test_any_response_bytes_decode_or_are_refused(tail: bytes, template: int, block_length: int) -> None:
    """Whatever arrives on the response stream: a record, None (not for the client), or
    MalformedMessageError, which the client counts and skips; never another exception."""
    for data in (tail, struct.pack("<HHHH", block_length, template, 101, 14) + tail):
        try:
            decoded = _codec.decode(data)
        except _codec.MalformedMessageError as exc:
            assert str(exc)
        else:
            assert decoded is None or decoded.__class__.__module__ == "aeron_async.archive.records"
