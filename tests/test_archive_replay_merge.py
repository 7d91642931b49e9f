"""Live replay and replay-merge against the archive service (issue 16, point 2).

A live replay (length unbounded, following) of a recording in progress delivers what is recorded
while it is recorded and ends when the recording stops. Replay-merge catches up on a recording of
a live UDP (dynamic multi-destination-cast) stream from its start, then joins the live stream on a
multi-destination subscription: every message once, in order, at the positions its publisher got.
"""

from __future__ import annotations

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
from archive_e2e import archive_beside_driver, free_udp_port, record, wait_recorded


@pytest.fixture
def running(aeron_dir: str, tmp_path: Any) -> Iterator[Any]:
    with archive_beside_driver(aeron_dir, str(tmp_path / "archive")) as service:
        yield service


def numbered(i: int) -> bytes:
    return struct.pack("<q", i) + bytes(i % 200)


class Publisher(threading.Thread):
    """Offers numbered messages `first..last-1` at about `rate` a second, keeping their positions."""

    def __init__(self, publication: aeron_async.Publication, first: int, last: int, positions: array,
                 rate: float) -> None:
        super().__init__(daemon=True)
        self.publication, self.first, self.last, self.positions, self.rate = publication, first, last, positions, rate
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            start = time.monotonic()
            idle = aeron_async.IdleStrategy("backoff")
            for i in range(self.first, self.last):
                deadline = time.monotonic() + 30
                while (result := self.publication.offer(numbered(i))) < 0:
                    assert time.monotonic() < deadline, f"offer {i} stalled: {result}"
                    idle.idle(0)
                self.positions[i] = result
                ahead = (i - self.first) / self.rate - (time.monotonic() - start)
                if ahead > 0.001:
                    time.sleep(ahead)
        except BaseException as exc:
            self.error = exc


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


def test_replay_merge_joins_the_live_udp_stream(running: Any) -> None:
    control = f"127.0.0.1:{free_udp_port()}"
    channel = f"aeron:udp?control={control}|control-mode=dynamic|term-length=1m"
    count = 60_000
    positions = array("q", [0]) * count
    with aeron_async.Aeron.connect(running.aeron_dir) as client, AeronArchive.connect(client) as archive:
        publication = client.add_exclusive_publication(channel, 5002)
        subscription_id, recording_id = record(archive, channel, 5002, source_location="local")
        Publisher(publication, 0, count // 2, positions, rate=1e9).run()  # recorded before the merge starts
        live = Publisher(publication, count // 2, count, positions, rate=20_000)
        live.start()
        received: list[tuple[bytes, int]] = []
        merged_at = -1
        with archive.replay_merge(
            recording_id, replay_destination="aeron:udp?endpoint=127.0.0.1:0",
            live_destination=f"aeron:udp?endpoint=127.0.0.1:0|control={control}",
        ) as merge:
            deadline = time.monotonic() + 60
            idle = aeron_async.IdleStrategy("backoff")
            while len(received) < count:
                assert time.monotonic() < deadline, f"{len(received)} of {count} in 60 s, state {merge.state}"
                batch = merge.poll_messages()
                received.extend((bytes(m.data), m.position) for m in batch)
                if merge.is_merged and merged_at < 0:
                    merged_at = len(received)
                idle.idle(len(batch))
            assert merge.is_merged, merge.state
        live.join(30)
        assert live.error is None
        assert 0 < merged_at < count, "the merge happened while the live stream ran"
        check_sequence(received, positions, count)
        archive.stop_recording(subscription_id=subscription_id)
        publication.close()


@pytest.mark.anyio
async def test_async_live_replay_and_replay_merge(anyio_backend: Any, running: Any) -> None:
    count = 10_000
    positions = array("q", [0]) * count
    control = f"127.0.0.1:{free_udp_port()}"
    channel = f"aeron:udp?control={control}|control-mode=dynamic|term-length=1m"
    async with aeron_async.connect(running.aeron_dir) as aeron:
        async with archive_aio.connect(aeron) as archive:
            publication = await aeron.add_exclusive_publication(channel, 5003)
            subscription_id = await archive.start_recording(channel, 5003)
            started = await archive.wait_for_signal(RecordingSignal.START, subscription_id=subscription_id)
            Publisher(publication.publication, 0, count // 2, positions, rate=1e9).run()
            live = Publisher(publication.publication, count // 2, count, positions, rate=20_000)
            received: list[tuple[bytes, int]] = []
            with anyio.fail_after(60):
                async with archive.replay_merge(
                    started.recording_id, replay_destination="aeron:udp?endpoint=127.0.0.1:0",
                    live_destination=f"aeron:udp?endpoint=127.0.0.1:0|control={control}",
                ) as merge:
                    live.start()
                    async for message in merge:
                        received.append((bytes(message.data), message.position))
                        if len(received) == count:
                            break
                    assert merge.is_merged
            await anyio.to_thread.run_sync(live.join, 30)
            check_sequence(received, positions, count)
            # a live replay of the same recording from the middle follows it until it stops
            follow: list[int] = []
            with anyio.fail_after(30):
                async with archive.replay(started.recording_id, position=positions[count // 2 - 1]) as replay:
                    async for message in replay:
                        follow.append(message.position)
                        if len(follow) == count - count // 2:
                            await archive.stop_recording(subscription_id=subscription_id)
            assert follow == list(positions[count // 2:])
            publication.close()
