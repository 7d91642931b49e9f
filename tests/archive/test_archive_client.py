"""The archive client against the archive service, end to end (docs/architecture.md, "The client").

Replays: 1,000,000 messages of mixed sizes (fragmented ones included) recorded from an IPC and
from a UDP publication; each replayed from the start, from a position in the middle and for a
bounded length: the bytes, the message boundaries and the positions equal the original stream's
(the positions its publisher's offers returned).

Operations: truncate, purge, extend and stop by each key, with their signals; bad input answered with
the archive's codes and messages that say what to do.
"""

from __future__ import annotations

import os
import struct
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

import aeron_async
from aeron_async.archive import AeronArchive, ArchiveErrorCode, ControlResponseCode, RecordingSignal
from aeron_async.archive import aio as archive_aio
from aeron_async.errors import (
    ActiveRecordingError,
    ArchiveConnectionError,
    ArchiveError,
    ArchiveTimeoutError,
    RecordingPositionError,
    UnknownRecordingError,
    UnknownReplayError,
    UnknownSubscriptionError,
)
from support.archive_e2e import (
    Stream,
    archive_beside_driver,
    assert_same_stream,
    collect,
    free_udp_port,
    record,
    wait_recorded,
)
from conftest import PYTHON, offer_all, python_env, readme_example

MESSAGES = 1_000_000


@pytest.fixture
def archive_dir(tmp_path: Any) -> str:
    return os.path.join(str(tmp_path), "archive")


@pytest.fixture
def running(aeron_dir: str, archive_dir: str) -> Iterator[Any]:
    with archive_beside_driver(aeron_dir, archive_dir) as service:
        yield service


@pytest.fixture
def client(running: Any) -> Iterator[aeron_async.Aeron]:
    with aeron_async.Aeron.connect(running.aeron_dir, driver_timeout=5.0) as c:
        yield c


@pytest.fixture
def archive(client: aeron_async.Aeron) -> Iterator[AeronArchive]:
    with AeronArchive.connect(client, timeout=10.0) as a:
        yield a


def replay_three_ways(archive: AeronArchive, recording_id: int, stream: Stream) -> None:
    n = len(stream)
    with archive.replay(recording_id, position=0) as replay:
        assert_same_stream(stream, 0, n, collect(replay))
    middle = n // 2
    with archive.replay(recording_id, position=stream.start_of(middle)) as replay:
        assert_same_stream(stream, middle, n, collect(replay))
    first, end = n // 10, 3 * n // 10
    start = stream.start_of(first)
    with archive.replay(recording_id, position=start, length=stream.positions[end - 1] - start) as replay:
        assert_same_stream(stream, first, end, collect(replay))


@pytest.mark.parametrize("transport", ["ipc", "udp"])
def test_a_million_mixed_messages_replay_as_recorded(transport: str, client: aeron_async.Aeron,
                                                     archive: AeronArchive) -> None:
    stream = Stream(MESSAGES)
    if transport == "ipc":
        channel, location = "aeron:ipc?term-length=4m", "local"
        publication = client.add_exclusive_publication(channel, 1001)
    else:
        channel, location = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}|term-length=4m", "remote"
        publication = client.add_exclusive_publication(channel, 1001)
    with publication:
        subscription_id, recording_id = record(archive, channel, 1001, source_location=location)
        end = stream.publish(publication)
        wait_recorded(archive, recording_id, end)
        archive.stop_recording(subscription_id=subscription_id)
        stop = archive.wait_for_signal(RecordingSignal.STOP, recording_id=recording_id)
        assert stop.position == end
    descriptor = archive.list_recording(recording_id)
    assert (descriptor.start_position, descriptor.stop_position, descriptor.stream_id) == (0, end, 1001)
    assert descriptor.term_buffer_length == 4 << 20 and descriptor.session_id == publication.session_id
    assert archive.stop_position(recording_id) == end and archive.recording_position(recording_id) is None
    replay_three_ways(archive, recording_id, stream)


def test_truncate_purge_extend_and_stop_by_each_key(client: aeron_async.Aeron, archive: AeronArchive) -> None:
    stream = Stream(2000, seed=3)
    channel = "aeron:ipc?term-length=256k"  # room for the 20 KB messages (a term holds 8 max-length ones)

    # stop by channel + stream
    publication = client.add_exclusive_publication(channel, 2001)
    _, first = record(archive, channel, 2001)
    end = stream.publish(publication)
    wait_recorded(archive, first, end)
    archive.stop_recording(channel, 2001)
    assert archive.wait_for_signal(RecordingSignal.STOP, recording_id=first).position == end
    publication.close()  # else the extension's subscription (any session of stream 2001) could take it

    # extend it from a publication that continues the stream where it stopped
    d = archive.list_recording(first)
    term_id = d.initial_term_id + (end // d.term_buffer_length)
    resume = (f"aeron:ipc?term-length={d.term_buffer_length}|init-term-id={d.initial_term_id}|term-id={term_id}"
              f"|term-offset={end % d.term_buffer_length}|mtu={d.mtu_length}")
    extension = client.add_exclusive_publication(resume, 2001)
    extend_subscription = archive.extend_recording(first, resume, 2001)
    assert archive.wait_for_signal(RecordingSignal.EXTEND, recording_id=first).position == end
    more = offer_all(extension, b"x" * 100)
    wait_recorded(archive, first, more)
    # stop by subscription id
    archive.stop_recording(subscription_id=extend_subscription)
    assert archive.wait_for_signal(RecordingSignal.STOP, recording_id=first).position == more
    assert archive.stop_position(first) == more
    with archive.replay(first, position=end) as replay:
        messages = list(replay.messages(timeout=10))
    assert [(bytes(m.data), m.position) for m in messages] == [(b"x" * 100, more)]

    # stop by recording id
    second_publication = client.add_exclusive_publication(channel, 2002)
    _, second = record(archive, channel, 2002)
    second_end = offer_all(second_publication, b"y" * 50)
    wait_recorded(archive, second, second_end)
    with pytest.raises(ActiveRecordingError, match="stop it first") as info:
        archive.truncate_recording(second, 0)
    assert info.value.archive_code == ArchiveErrorCode.ACTIVE_RECORDING
    with pytest.raises(ActiveRecordingError):
        archive.purge_recording(second)
    archive.stop_recording(recording_id=second)
    assert archive.wait_for_signal(RecordingSignal.STOP, recording_id=second).position == second_end
    with pytest.raises(UnknownRecordingError, match="no active recording"):
        archive.stop_recording(recording_id=second)

    # truncate to a message boundary in the middle, then to the start (empty), then purge
    cut = stream.positions[999]
    archive.truncate_recording(first, cut)
    assert archive.wait_for_signal(RecordingSignal.DELETE, recording_id=first).recording_id == first
    assert archive.stop_position(first) == cut
    with archive.replay(first, position=0) as replay:
        assert_same_stream(stream, 0, 1000, collect(replay))
    archive.truncate_recording(first, 0)
    assert archive.stop_position(first) == 0
    archive.purge_recording(first)
    assert archive.wait_for_signal(RecordingSignal.DELETE, recording_id=first).recording_id == first
    with pytest.raises(UnknownRecordingError, match="list_recordings\\(\\) shows"):
        archive.list_recording(first)
    assert [d.recording_id for d in archive.list_recordings()] == [second]
    extension.close()
    second_publication.close()


def test_bad_input_is_answered_with_codes_and_fixes(client: aeron_async.Aeron, archive: AeronArchive) -> None:
    channel = "aeron:ipc?term-length=64k"
    publication = client.add_exclusive_publication(channel, 3001)
    subscription_id, recording_id = record(archive, channel, 3001)
    end = offer_all(publication, b"z" * 100)  # one frame: 32 + 100 -> 160 bytes
    wait_recorded(archive, recording_id, end)
    archive.stop_recording(subscription_id=subscription_id)
    archive.wait_for_signal(RecordingSignal.STOP, recording_id=recording_id)

    with pytest.raises(UnknownRecordingError) as unknown:
        archive.start_replay(recording_id + 100)
    assert unknown.value.archive_code == ArchiveErrorCode.UNKNOWN_RECORDING
    with pytest.raises(RecordingPositionError, match="frame boundary") as misaligned:
        archive.start_replay(recording_id, position=48)
    assert misaligned.value.archive_code == ArchiveErrorCode.INVALID_POSITION
    with pytest.raises(RecordingPositionError):
        archive.start_replay(recording_id, position=end + 32)
    with pytest.raises(RecordingPositionError):
        archive.truncate_recording(recording_id, 40)
    with pytest.raises(UnknownRecordingError):
        archive.truncate_recording(recording_id + 100, 0)
    with pytest.raises(UnknownRecordingError):
        archive.purge_recording(recording_id + 100)
    with pytest.raises(UnknownSubscriptionError):
        archive.stop_recording(subscription_id=subscription_id)
    with pytest.raises(UnknownSubscriptionError):
        archive.stop_recording("aeron:ipc?term-length=64k", 3999)
    with pytest.raises(UnknownReplayError):
        archive.stop_replay(12345)
    # a control message the archive does not know (template 999): an ERROR answer naming it, and the
    # session goes on
    header = struct.pack("<HHHH", 16, 999, 101, 14)
    response = archive._request(lambda s, c: header + struct.pack("<qq", s, c), "template 999")
    assert response is not None and response.code == ControlResponseCode.ERROR, response
    assert "999" in response.error_message
    assert archive.list_recording(recording_id).stop_position == end
    publication.close()


@pytest.mark.anyio
async def test_async_replay_iterates_recorded_messages(anyio_backend: Any, running: Any) -> None:
    stream = Stream(20000, seed=11)
    async with aeron_async.connect(running.aeron_dir) as aeron:
        async with archive_aio.connect(aeron, timeout=10.0) as archive:
            publication = await aeron.add_exclusive_publication("aeron:ipc", 4001)
            subscription_id = await archive.start_recording("aeron:ipc", 4001)
            started = await archive.wait_for_signal(RecordingSignal.START, subscription_id=subscription_id)
            end = await anyio.to_thread.run_sync(stream.publish, publication.publication)
            with anyio.fail_after(30):
                while await archive.max_recorded_position(started.recording_id) < end:
                    await anyio.sleep(0.01)
            await archive.stop_recording(subscription_id=subscription_id)
            await archive.wait_for_signal(RecordingSignal.STOP, recording_id=started.recording_id)
            first = 5000
            got = [(bytes(m.data), m.position) async for m in
                   archive.replay(started.recording_id, position=stream.start_of(first))]
            assert [p for _, p in got] == list(stream.positions[first:])
            assert b"".join(d for d, _ in got) == stream.blob[stream.offsets[first]:]
            assert [d.recording_id for d in await archive.list_recordings("aeron:ipc", 4001)] == [started.recording_id]
            with pytest.raises(ArchiveError):
                async for _ in archive.replay(started.recording_id + 1):
                    pass
            publication.close()


def test_readme_archive_example_runs(aeron_dir: str) -> None:
    code = readme_example("AeronArchive.connect(client)")
    result = subprocess.run([PYTHON, "-c", code], env={**python_env(), "AERON_DIR": aeron_dir}, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("RecordingDescriptor(") and "stream_id=1001" in lines[0], result.stdout
    assert [line.split()[0] for line in lines[1:]] == ["b'hello", "b'hello", "b'hello"], result.stdout
    assert lines[-1].startswith("b'hello 2' "), result.stdout


@pytest.mark.anyio
async def test_readme_async_archive_example_runs(anyio_backend: Any, running: Any, client: aeron_async.Aeron,
                                                 archive: AeronArchive, capsys: pytest.CaptureFixture[str]) -> None:
    publication = client.add_exclusive_publication("aeron:ipc", 1001)
    subscription_id, recording_id = record(archive, "aeron:ipc", 1001)
    end = offer_all(publication, b"hi")
    wait_recorded(archive, recording_id, end)
    archive.stop_recording(subscription_id=subscription_id)
    namespace: dict[str, Any] = {}
    exec(readme_example("archive_aio.connect"), namespace)
    with anyio.fail_after(30):
        await namespace["replay_all"](running.aeron_dir, recording_id)
    assert capsys.readouterr().out == f"b'hi' {end}\n"
    publication.close()


def test_bounded_replay_follows_its_limit_counter_until_stopped(client: aeron_async.Aeron,
                                                                archive: AeronArchive) -> None:
    stream = Stream(1000, seed=9)
    channel = "aeron:ipc?term-length=256k"
    publication = client.add_exclusive_publication(channel, 7001)
    subscription_id, recording_id = record(archive, channel, 7001)
    end = stream.publish(publication)
    wait_recorded(archive, recording_id, end)
    archive.stop_recording(subscription_id=subscription_id)
    archive.wait_for_signal(RecordingSignal.STOP, recording_id=recording_id)
    publication.close()

    limit = client.add_counter(1001, b"", "replay limit")
    limit.value = stream.positions[99]
    received: list[int] = []

    def take_until(count: int, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while len(received) < count:
            assert time.monotonic() < deadline, f"{len(received)} of {count} messages"
            received.extend(m.position for m in replay.poll_messages())

    with archive.replay(recording_id, position=0, limit_counter=limit) as replay:
        take_until(100)
        time.sleep(0.3)
        received.extend(m.position for m in replay.poll_messages())
        assert received == list(stream.positions[:100]), "the replay stops at the counter's value"
        limit.value = stream.positions[499]
        take_until(500)
        time.sleep(0.3)
        received.extend(m.position for m in replay.poll_messages())
        assert received == list(stream.positions[:500])
        archive.stop_all_replays(recording_id)
        rest = [m.position for m in replay.messages(timeout=10)]  # ends: the replay was stopped
        assert rest == []
    limit.close()


def test_an_archive_that_goes_away_fails_the_session(aeron_dir: str, archive_dir: str) -> None:
    with archive_beside_driver(aeron_dir, archive_dir) as service, \
            aeron_async.Aeron.connect(service.aeron_dir) as client, AeronArchive.connect(client, timeout=5.0) as archive:
        assert archive.list_recordings() == []
        service.close()
        start = time.monotonic()
        with pytest.raises(ArchiveConnectionError, match="the archive is gone.*connect again"):
            archive.archive_id()
        assert time.monotonic() - start < 2.0


@pytest.mark.anyio
async def test_async_archive_that_goes_away_fails_waiters(anyio_backend: Any, aeron_dir: str, archive_dir: str) -> None:
    with archive_beside_driver(aeron_dir, archive_dir) as service:
        async with aeron_async.connect(service.aeron_dir) as aeron:
            async with archive_aio.connect(aeron, timeout=5.0) as archive:
                assert await archive.list_recordings() == []
                service.close()
                with anyio.fail_after(4):  # the keep-alive task notices the lost response stream
                    with pytest.raises(ArchiveConnectionError, match="connect again"):
                        await archive.wait_for_signal(RecordingSignal.START, timeout=6.0)
                with pytest.raises(ArchiveConnectionError):
                    await archive.archive_id()


def test_connect_by_directory_owns_its_client(running: Any) -> None:
    archive = AeronArchive.connect(aeron_dir=running.aeron_dir, timeout=5.0)
    try:
        assert archive.archive_id() == running.archive_id
        assert archive.list_recordings() == []
    finally:
        archive.close()
    assert archive.aeron.is_closed and archive.is_closed


@pytest.mark.anyio
async def test_async_connect_by_directory(anyio_backend: Any, running: Any) -> None:
    async with archive_aio.connect(aeron_dir=running.aeron_dir, timeout=5.0) as archive:
        assert await archive.archive_id() == running.archive_id
        client = archive.aeron.client
    assert client.is_closed


ROUNDS = 3


@pytest.fixture
def slow_recorder(aeron_dir: str, archive_dir: str) -> Iterator[Any]:
    """An archive whose recorder runs on its own thread and sleeps 10 ms when idle: it notices a stop
    well after the conductor has handled the request (the window in which an archive answering at
    once would list the recording without its stop)."""
    with archive_beside_driver(aeron_dir, archive_dir, threading_mode="DEDICATED",
                               idle_strategy="sleeping:10ms") as service:
        yield service


@pytest.mark.parametrize("key", ["channel", "subscription_id", "recording_id"])
def test_list_recording_right_after_stop_recording_shows_the_stop(key: str, slow_recorder: Any) -> None:
    """stop_recording answers once the catalog holds the stop position and time (README.md,
    "Recording and replay"): no wait for the STOP signal before list_recording."""
    channel = "aeron:ipc?term-length=64k"
    with aeron_async.Aeron.connect(slow_recorder.aeron_dir, driver_timeout=5.0) as client, \
            AeronArchive.connect(client, timeout=10.0) as archive:
        for round_ in range(ROUNDS):
            stop_and_list(client, archive, channel, key, round_)


def stop_and_list(client: aeron_async.Aeron, archive: AeronArchive, channel: str, key: str, round_: int) -> None:
    """One recording, stopped by `key`, then listed at once: it shows the stop."""
    stream_id = 5001 + 10 * ["channel", "subscription_id", "recording_id"].index(key) + round_
    with client.add_exclusive_publication(channel, stream_id) as publication:
        subscription_id, recording_id = record(archive, channel, stream_id)
        end = offer_all(publication, b"stop me")
        wait_recorded(archive, recording_id, end)
        before = time.time()
        if key == "channel":
            archive.stop_recording(channel, stream_id)
        elif key == "subscription_id":
            archive.stop_recording(subscription_id=subscription_id)
        else:
            archive.stop_recording(recording_id=recording_id)
        descriptor = archive.list_recording(recording_id)
    assert descriptor.stop_position == end, (round_, descriptor)
    assert descriptor.stop_timestamp >= int(before * 1000) - 1000, (round_, descriptor)
    assert archive.wait_for_signal(RecordingSignal.STOP, recording_id=recording_id).position == end


@pytest.mark.anyio
async def test_async_list_recording_right_after_stop_recording_shows_the_stop(anyio_backend: Any,
                                                                              slow_recorder: Any) -> None:
    async with aeron_async.connect(slow_recorder.aeron_dir) as aeron:
        async with archive_aio.connect(aeron, timeout=10.0) as archive:
            for round_ in range(ROUNDS):
                publication = await aeron.add_exclusive_publication("aeron:ipc", 5041 + round_)
                subscription_id = await archive.start_recording("aeron:ipc", 5041 + round_)
                started = await archive.wait_for_signal(RecordingSignal.START, subscription_id=subscription_id)
                end = await publication.offer(b"stop me")
                with anyio.fail_after(30):
                    while await archive.max_recorded_position(started.recording_id) < end:
                        await anyio.sleep(0.01)
                await archive.stop_recording(subscription_id=subscription_id)
                descriptor = await archive.list_recording(started.recording_id)
                assert (descriptor.stop_position, descriptor.stop_timestamp > 0) == (end, True), (round_, descriptor)
                publication.close()
