"""Live replay and replay-merge against the archive service (docs/architecture.md, "The client").

A live replay (length unbounded, following) of a recording in progress delivers what is recorded
while it is recorded and ends when the recording stops. Replay-merge catches up on a recording of
a live UDP (multi-destination-cast) stream from its start, then joins the live stream on a
multi-destination subscription: every message once, in order, at the positions its publisher got.
"""

from __future__ import annotations

import shutil
import struct
import threading
import time
from array import array
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

import aeron_async
from aeron_async.archive import AeronArchive, RecordingSignal
from aeron_async.archive import aio as archive_aio
from support.archive_e2e import archive_beside_driver, free_udp_port, record, wait_recorded
from conftest import TEST_DRIVER_SETTINGS, new_aeron_dir


@pytest.fixture
def running(aeron_dir: str, tmp_path: Any) -> Iterator[Any]:
    with archive_beside_driver(aeron_dir, str(tmp_path / "archive")) as service:
        yield service


@pytest.fixture
def publisher() -> Iterator[aeron_async.Aeron]:
    """A client of a driver of its own, for the live stream: the live publisher is elsewhere, as in
    production (and a driver refuses a second publication of a stream with the same session id,
    which the replay of a merge needs)."""
    directory = new_aeron_dir()
    try:
        with aeron_async.MediaDriver.launch(aeron_dir=directory, **TEST_DRIVER_SETTINGS) as driver, \
                aeron_async.Aeron.connect(driver.aeron_dir) as client:
            yield client
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def numbered(i: int) -> bytes:
    return struct.pack("<q", i) + bytes(i % 200)


class Publisher(threading.Thread):
    """Offers numbered messages `first..last-1` at about `rate` a second, keeping their positions."""

    def __init__(self, publication: aeron_async.Publication, first: int, last: int, positions: array,
                 rate: float) -> None:
        super().__init__(daemon=True)
        self.publication, self.first, self.last, self.positions, self.rate = publication, first, last, positions, rate
        self.error: BaseException | None = None
        self.stop = threading.Event()
        self.published = first

    def run(self) -> None:
        try:
            start = time.monotonic()
            idle = aeron_async.IdleStrategy("backoff")
            for i in range(self.first, self.last):
                if self.stop.is_set():
                    return
                deadline = time.monotonic() + 30
                while (result := self.publication.offer(numbered(i))) < 0:
                    assert time.monotonic() < deadline, f"offer {i} stalled: {result}"
                    idle.idle(0)
                self.positions[i] = result
                self.published = i + 1
                ahead = (i - self.first) / self.rate - (time.monotonic() - start)
                if ahead > 0.001:
                    time.sleep(ahead)
        except BaseException as exc:
            self.error = exc


LIVE_CAP = 2_000_000  # the live publisher's most messages; it is stopped once the merge is proven
AFTER_MERGE = 2000  # live messages read after the merge before the test stops the publisher


def check_sequence(received: list[tuple[bytes, int]], positions: array, count: int) -> None:
    numbers = [struct.unpack_from("<q", data)[0] for data, _ in received]
    assert numbers == list(range(count)), "messages missed, repeated or reordered"
    assert [p for _, p in received] == list(positions[:count])
    assert all(data == numbered(i) for i, (data, _) in enumerate(received))


def test_live_replay_follows_the_recording_and_ends_when_it_stops(running: Any) -> None:
    count = 30_000
    positions = array("q", [0]) * count
    with aeron_async.Aeron.connect(running.aeron_dir) as client, AeronArchive.connect(client) as archive:
        publication = client.add_exclusive_publication("aeron:ipc?term-length=64k", 5001)
        subscription_id, recording_id = record(archive, "aeron:ipc?term-length=64k", 5001)
        first = Publisher(publication, 0, count // 3, positions, rate=1e9)
        first.run()
        assert first.error is None
        rest = Publisher(publication, count // 3, count, positions, rate=20_000)
        received: list[tuple[bytes, int]] = []
        with archive.replay(recording_id, position=0) as replay:  # length None: follow the live recording
            rest.start()
            for message in replay.messages(timeout=10):
                received.append((bytes(message.data), message.position))
                if len(received) == count:
                    rest.join(30)
                    assert rest.error is None
                    wait_recorded(archive, recording_id, positions[-1])
                    archive.stop_recording(subscription_id=subscription_id)
            # the loop ended by itself: the recording stopped, so did the replay
        check_sequence(received, positions, count)
        assert archive.wait_for_signal(RecordingSignal.STOP, recording_id=recording_id).position == positions[-1]
        publication.close()


def live_stream(publisher: aeron_async.Aeron, stream_id: int) -> tuple[aeron_async.Publication, str, str]:
    """A manual MDC publication sending to the archive's recording endpoint and to the merging
    subscriber's live endpoint; returns it, the recording channel and the live destination."""
    control, recording_port, live_port = free_udp_port(), free_udp_port(), free_udp_port()
    publication = publisher.add_exclusive_publication(
        f"aeron:udp?control-mode=manual|control=127.0.0.1:{control}|term-length=1m", stream_id)
    publication.add_destination(f"aeron:udp?endpoint=127.0.0.1:{recording_port}")
    publication.add_destination(f"aeron:udp?endpoint=127.0.0.1:{live_port}")
    return publication, f"aeron:udp?endpoint=127.0.0.1:{recording_port}", f"aeron:udp?endpoint=127.0.0.1:{live_port}"


def test_replay_merge_joins_the_live_udp_stream(running: Any, publisher: aeron_async.Aeron) -> None:
    recorded_first = 30_000
    positions = array("q", [0]) * LIVE_CAP
    with aeron_async.Aeron.connect(running.aeron_dir) as client, AeronArchive.connect(client) as archive:
        publication, recording_channel, live_destination = live_stream(publisher, 5002)
        subscription_id, recording_id = record(archive, recording_channel, 5002, source_location="remote")
        Publisher(publication, 0, recorded_first, positions, rate=1e9).run()
        wait_recorded(archive, recording_id, positions[recorded_first - 1])  # recorded before the merge starts
        live = Publisher(publication, recorded_first, LIVE_CAP, positions, rate=20_000)
        live.start()
        received: list[tuple[bytes, int]] = []
        merged_at = -1
        try:
            with archive.replay_merge(
                recording_id, replay_destination=f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}",
                live_destination=live_destination,
            ) as merge:
                deadline = time.monotonic() + 60
                idle = aeron_async.IdleStrategy("backoff")
                while merged_at < 0 or len(received) < merged_at + AFTER_MERGE:
                    assert time.monotonic() < deadline, f"{len(received)} messages in 60 s, state {merge.state}"
                    batch = merge.poll_messages()
                    received.extend((bytes(m.data), m.position) for m in batch)
                    if merge.is_merged and merged_at < 0:
                        merged_at = len(received)
                    idle.idle(len(batch))
        finally:
            live.stop.set()
            live.join(30)
        assert live.error is None
        assert merged_at > recorded_first, "the replay caught up before the merge"
        check_sequence(received, positions, len(received))
        archive.stop_recording(subscription_id=subscription_id)
        publication.close()


@pytest.mark.anyio
async def test_async_live_replay_and_replay_merge(anyio_backend: Any, running: Any,
                                                  publisher: aeron_async.Aeron) -> None:
    recorded_first = 5000
    positions = array("q", [0]) * LIVE_CAP
    async with aeron_async.connect(running.aeron_dir) as aeron:
        async with archive_aio.connect(aeron) as archive:
            publication, recording_channel, live_destination = live_stream(publisher, 5003)
            subscription_id = await archive.start_recording(recording_channel, 5003, source_location="remote")
            started = await archive.wait_for_signal(RecordingSignal.START, subscription_id=subscription_id)
            Publisher(publication, 0, recorded_first, positions, rate=1e9).run()
            with anyio.fail_after(30):  # recorded before the merge starts (a slow archive lags the stream)
                while await archive.max_recorded_position(started.recording_id) < positions[recorded_first - 1]:
                    await anyio.sleep(0.01)
            live = Publisher(publication, recorded_first, LIVE_CAP, positions, rate=20_000)
            received: list[tuple[bytes, int]] = []
            merged_at = -1
            try:
                with anyio.fail_after(60):
                    async with archive.replay_merge(
                        started.recording_id, replay_destination="aeron:udp?endpoint=127.0.0.1:0",
                        live_destination=live_destination,
                    ) as merge:
                        live.start()
                        async for message in merge:
                            received.append((bytes(message.data), message.position))
                            if merge.is_merged and merged_at < 0:
                                merged_at = len(received)
                            if merged_at >= 0 and len(received) >= merged_at + AFTER_MERGE:
                                break
            finally:
                live.stop.set()
                await anyio.to_thread.run_sync(live.join, 30)
            assert live.error is None and merged_at > recorded_first
            check_sequence(received, positions, len(received))
            # a live replay of the same recording from the middle follows it until it stops
            wait_recorded_to = live.published
            with anyio.fail_after(30):
                while await archive.max_recorded_position(started.recording_id) < positions[wait_recorded_to - 1]:
                    await anyio.sleep(0.01)
            middle = wait_recorded_to // 2
            follow: list[int] = []
            with anyio.fail_after(30):
                async with archive.replay(started.recording_id, position=positions[middle - 1]) as replay:
                    async for message in replay:
                        follow.append(message.position)
                        if len(follow) == wait_recorded_to - middle:
                            await archive.stop_recording(subscription_id=subscription_id)
            assert follow == list(positions[middle:wait_recorded_to])
            publication.close()
