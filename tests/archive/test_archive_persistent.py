"""Persistent subscriptions (docs/archive.md, "Persistent subscriptions"): a recording read from a
position, replayed while behind, then live, over IPC, UDP and a spy; stopped and restarted from the
position it exposes; dropped off the live stream as a slow consumer and back through the replay;
every message exactly once, in order, at the positions its publisher got. The failures (recording
gone, start position gone, archive gone) are the errors of aeron_async.errors."""

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
from aeron_async.archive import (
    FROM_START, AeronArchive, ArchiveConnectionError, AsyncPersistentSubscription, PersistentSubscription,
    PersistentSubscriptionState, RecordingPositionError, UnknownRecordingError,
)
from aeron_async.archive import aio as archive_aio
from aeron_async.errors import InvalidArgumentError
from conftest import wait_for
from support.archive_e2e import archive_beside_driver, free_udp_port, record, wait_recorded

BEHIND = 4000  # messages recorded before the persistent subscription starts
TOTAL = 16000  # all the messages published


@pytest.fixture
def running(aeron_dir: str, tmp_path: Any) -> Iterator[Any]:
    with archive_beside_driver(aeron_dir, str(tmp_path / "archive")) as service:
        yield service


def numbered(i: int) -> bytes:
    return struct.pack("<q", i) + bytes(i % 97)


class Publisher(threading.Thread):
    """Offers numbered messages first..last-1 at about `rate` a second, keeping their positions."""

    def __init__(self, publication: aeron_async.ExclusivePublication, first: int, last: int, positions: array,
                 rate: float) -> None:
        super().__init__(daemon=True)
        self.publication, self.first, self.last, self.positions, self.rate = publication, first, last, positions, rate
        self.error: BaseException | None = None
        self.stop = threading.Event()

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


def live_setup(kind: str, client: aeron_async.Aeron, archive: AeronArchive, stream_id: int,
               publication_params: str = "") -> tuple[aeron_async.ExclusivePublication, str, int]:
    """The live publication of `kind` (ipc, udp, spy), its recording, and the live channel the
    persistent subscription reads; returns (publication, live channel, recording id)."""
    if kind == "ipc":
        channel = "aeron:ipc?term-length=64k"
        live = "aeron:ipc"
    else:
        channel = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}|term-length=64k"
        live = channel.split("|")[0] if kind == "udp" else "aeron-spy:" + channel.split("|")[0]
    publication = client.add_exclusive_publication(channel + publication_params, stream_id)
    _, recording_id = record(archive, channel, stream_id)
    return publication, live, recording_id


def read_until(subscription: PersistentSubscription, received: list[tuple[bytes, int]], count: int,
               what: str) -> None:
    deadline = time.monotonic() + 60
    idle = aeron_async.IdleStrategy("backoff")
    while len(received) < count:
        assert time.monotonic() < deadline, f"{what}: {len(received)} of {count} in 60 s, {subscription!r}"
        batch = subscription.poll_messages()
        received.extend((bytes(m.data), m.position) for m in batch)
        idle.idle(len(batch))


@pytest.mark.parametrize("kind, replay_channel", [
    ("ipc", "aeron:ipc"), ("udp", "aeron:ipc"), ("spy", "aeron:ipc"),
    ("ipc", "aeron:udp?endpoint=127.0.0.1:0"),  # replayed to the port its subscription bound
])
def test_starts_behind_joins_live_and_resumes_from_its_saved_position(running: Any, kind: str,
                                                                      replay_channel: str) -> None:
    positions = array("q", [0]) * TOTAL
    stream_id = {"ipc": 6101, "udp": 6102, "spy": 6103}[kind] + (10 if replay_channel != "aeron:ipc" else 0)
    with aeron_async.Aeron.connect(running.aeron_dir) as client, AeronArchive.connect(client) as archive:
        publication, live_channel, recording_id = live_setup(kind, client, archive, stream_id)
        before = Publisher(publication, 0, BEHIND, positions, rate=1e9)
        before.run()
        assert before.error is None
        wait_recorded(archive, recording_id, positions[BEHIND - 1])
        live = Publisher(publication, BEHIND, TOTAL, positions, rate=10_000)
        received: list[tuple[bytes, int]] = []
        joined: list[int] = []
        live.start()
        try:
            with PersistentSubscription(archive, recording_id=recording_id, live_channel=live_channel,
                                        live_stream_id=stream_id, start_position=FROM_START,
                                        replay_channel=replay_channel,
                                        on_live_joined=lambda: joined.append(len(received))) as first:
                assert first.state == PersistentSubscriptionState.AWAIT_ARCHIVE_CONNECTION
                deadline = time.monotonic() + 60
                while not first.is_live or len(received) < BEHIND + 500:
                    assert time.monotonic() < deadline, f"{len(received)} messages in 60 s, {first!r}"
                    batch = first.poll_messages(100)
                    received.extend((bytes(m.data), m.position) for m in batch)
                assert first.live_joined_count == 1 and joined and joined[0] >= BEHIND
                saved = first.position
                assert saved == received[-1][1]
            # stopped; the publisher goes on; restarted from the saved position: replayed, then live
            with PersistentSubscription(archive, live_channel=live_channel, live_stream_id=stream_id,
                                        start_position=saved, replay_channel=replay_channel) as second:
                # (it finds the recording itself)
                stopped_at = len(received)
                assert stopped_at < TOTAL, "the publisher had finished before the first one stopped"
                read_until(second, received, TOTAL, "after the restart")
                assert second.recording_id == recording_id and second.live_joined_count == 1
        finally:
            live.stop.set()
            live.join(30)
        assert live.error is None
        check_sequence(received, positions, TOTAL)
        publication.close()


@pytest.mark.parametrize("kind", ["ipc", "spy"])
def test_a_slow_consumer_dropped_off_live_comes_back_through_the_replay(running: Any, kind: str) -> None:
    stream_id = {"ipc": 6104, "spy": 6109}[kind]
    positions = array("q", [0]) * TOTAL
    with aeron_async.Aeron.connect(running.aeron_dir) as client, AeronArchive.connect(client) as archive:
        # an untethered live subscriber (IPC or a spy) left behind the publication's window for
        # 150 ms is dropped
        publication, live_channel, recording_id = live_setup(
            kind, client, archive, stream_id,
            "|untethered-window-limit-timeout=150ms|untethered-linger-timeout=150ms|untethered-resting-timeout=30s")
        Publisher(publication, 0, BEHIND, positions, rate=1e9).run()
        live = Publisher(publication, BEHIND, TOTAL, positions, rate=8_000)  # still publishing once it is live
        received: list[tuple[bytes, int]] = []
        left: list[int] = []
        live.start()
        try:
            untethered = live_channel + ("|" if "?" in live_channel else "?") + "tether=false"
            with PersistentSubscription(archive, recording_id=recording_id, live_channel=untethered,
                                        live_stream_id=stream_id, start_position=0,
                                        on_live_left=lambda: left.append(len(received))) as subscription:
                deadline = time.monotonic() + 60
                while not subscription.is_live:
                    assert time.monotonic() < deadline, f"not live in 60 s: {subscription!r}"
                    received.extend((bytes(m.data), m.position) for m in subscription.poll_messages())
                # a slow consumer: it reads nothing until the driver has dropped it off the live stream
                live_subscription = subscription._machine.live_subscription
                assert live_subscription is not None
                wait_for(lambda: not live_subscription.images, 30, what="the slow consumer dropped off live")
                read_until(subscription, received, TOTAL, "after falling off live")
                assert subscription.live_left_count >= 1 and left
                assert subscription.live_joined_count >= 2, "it rejoined the live stream after the replay"
        finally:
            live.stop.set()
            live.join(30)
        assert live.error is None
        check_sequence(received, positions, TOTAL)
        publication.close()


def test_failures_say_what_happened(running: Any) -> None:
    with aeron_async.Aeron.connect(running.aeron_dir) as client, AeronArchive.connect(client) as archive:
        publication, live_channel, recording_id = live_setup("ipc", client, archive, 6105)
        positions = array("q", [0]) * 100
        Publisher(publication, 0, 100, positions, rate=1e9).run()
        wait_recorded(archive, recording_id, positions[99])
        publication.close()
        archive.wait_for_signal(aeron_async.archive.RecordingSignal.STOP, recording_id=recording_id, timeout=10)
        # a start position the recording does not hold
        with PersistentSubscription(archive, recording_id=recording_id, live_channel=live_channel,
                                    live_stream_id=6105, start_position=positions[99] + 4096) as beyond:
            with pytest.raises(RecordingPositionError, match="outside the recording"):
                beyond.poll_messages()
            assert beyond.has_failed and isinstance(beyond.failure_reason, RecordingPositionError)
            assert beyond.state == PersistentSubscriptionState.FAILED
        # the recording purged
        archive.purge_recording(recording_id)
        with PersistentSubscription(archive, recording_id=recording_id, live_channel=live_channel,
                                    live_stream_id=6105, start_position=0) as purged:
            with pytest.raises(UnknownRecordingError, match="not in the archive's catalog"):
                purged.poll_messages()
        with PersistentSubscription(archive, live_channel="aeron:ipc?alias=none", live_stream_id=6199,
                                    start_position=0) as nothing:
            with pytest.raises(UnknownRecordingError, match="no recording of"):
                nothing.poll_messages()
        with pytest.raises(InvalidArgumentError, match="response channels"):
            PersistentSubscription(archive, recording_id=recording_id, live_channel=live_channel, live_stream_id=6105,
                                   replay_channel="aeron:udp?control-mode=response|control=127.0.0.1:10001")


def test_the_archive_going_away_fails_it_with_a_connection_error(aeron_dir: str, tmp_path: Any) -> None:
    positions = array("q", [0]) * TOTAL
    with archive_beside_driver(aeron_dir, str(tmp_path / "archive")) as service:
        with aeron_async.Aeron.connect(service.aeron_dir) as client, \
                AeronArchive.connect(client, timeout=5.0) as archive:
            publication, live_channel, recording_id = live_setup("ipc", client, archive, 6106)
            Publisher(publication, 0, TOTAL, positions, rate=1e9).run()
            wait_recorded(archive, recording_id, positions[TOTAL - 1])
            subscription = PersistentSubscription(archive, recording_id=recording_id, live_channel=live_channel,
                                                  live_stream_id=6106, start_position=0, timeout=5.0)
            wait_for(lambda: subscription.poll_messages(16), 10, what="the replay")
            assert subscription.is_replaying
            service.close()  # the archive stops: the replay ends, and listing the recording again fails
            with pytest.raises(ArchiveConnectionError, match="the archive is gone"):
                wait_for(lambda: subscription.poll_messages(16) and False, 30, what="the failure")
            assert subscription.has_failed
            subscription.close()
            publication.close()


@pytest.mark.anyio
async def test_async_persistent_subscription_replays_joins_live_and_resumes(anyio_backend: Any, running: Any) -> None:
    stream_id = 6107
    positions = array("q", [0]) * TOTAL
    with aeron_async.Aeron.connect(running.aeron_dir) as client, AeronArchive.connect(client) as sync_archive:
        publication, live_channel, recording_id = live_setup("ipc", client, sync_archive, stream_id)
        Publisher(publication, 0, BEHIND, positions, rate=1e9).run()
        live = Publisher(publication, BEHIND, TOTAL, positions, rate=10_000)
        received: list[tuple[bytes, int]] = []
        async with aeron_async.connect(running.aeron_dir) as aeron, archive_aio.connect(aeron) as archive:
            live.start()
            try:
                with anyio.fail_after(60):
                    async with AsyncPersistentSubscription(archive, recording_id=recording_id,
                                                           live_channel=live_channel, live_stream_id=stream_id,
                                                           start_position=FROM_START) as first:
                        with anyio.move_on_after(0):  # a cancelled poll is no failure: the next goes on
                            received.extend((bytes(m.data), m.position) for m in await first.poll_messages(100))
                        assert not first.has_failed
                        while not first.is_live or len(received) < BEHIND + 500:
                            batch = await first.poll_messages(100)
                            received.extend((bytes(m.data), m.position) for m in batch)
                            await anyio.sleep(0 if batch else 0.0005)
                        saved = first.position
                        assert first.live_joined_count == 1 and saved == received[-1][1]
                    assert len(received) < TOTAL, "the publisher had finished before the first one stopped"
                    async with AsyncPersistentSubscription(archive, live_channel=live_channel,
                                                           live_stream_id=stream_id, start_position=saved) as second:
                        async for message in second:
                            received.append((bytes(message.data), message.position))
                            if len(received) == TOTAL:
                                break
                        assert second.is_live or second.is_replaying
            finally:
                live.stop.set()
                await anyio.to_thread.run_sync(live.join, 30)
        assert live.error is None
        check_sequence(received, positions, TOTAL)
        publication.close()


def test_a_recording_stopped_while_the_stream_went_on_is_a_gap_it_names(running: Any) -> None:
    with aeron_async.Aeron.connect(running.aeron_dir) as client, AeronArchive.connect(client) as archive:
        publication, live_channel, recording_id = live_setup("ipc", client, archive, 6108)
        positions = array("q", [0]) * 200
        Publisher(publication, 0, 100, positions, rate=1e9).run()
        wait_recorded(archive, recording_id, positions[99])
        reader = client.add_subscription(live_channel, 6108)  # another subscriber, reading on
        archive.stop_recording(recording_id=recording_id)  # the stream goes on, unrecorded
        Publisher(publication, 100, 200, positions, rate=1e9).run()
        read: list[Any] = []
        wait_for(lambda: read.extend(reader.poll_messages()) or len(read) == 100, what="the other subscriber")
        with PersistentSubscription(archive, recording_id=recording_id, live_channel=live_channel,
                                    live_stream_id=6108, start_position=0) as subscription:
            received: list[tuple[bytes, int]] = []
            with pytest.raises(RecordingPositionError, match="were not recorded"):
                wait_for(lambda: received.extend((bytes(m.data), m.position) for m in subscription.poll_messages())
                         and False, 30, what="the gap")
            check_sequence(received, positions, 100)  # all it recorded, then the error
        reader.close()
        publication.close()
