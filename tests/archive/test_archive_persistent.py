"""Persistent subscriptions (README.md, "Persistent subscriptions"; docs/architecture.md, "Persistent
subscription"): a recording read from a position, replayed while behind, then live, over IPC, UDP
and a spy; stopped and restarted from the position it exposes; dropped off the live stream as a
slow consumer and back through the replay; every message exactly once, in order, at the positions
its publisher got. The failures (recording gone, start position gone, archive gone) are the errors
of aeron_async.errors."""

from __future__ import annotations

import struct
import threading
import time
from array import array
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import anyio
import pytest

import aeron_async
from aeron_async.archive import (
    FROM_START, AeronArchive, ArchiveConnectionError, AsyncPersistentSubscription, PersistentSubscription,
    PersistentSubscriptionState, RecordingPositionError, UnknownRecordingError,
)
from aeron_async.archive import aio as archive_aio
from aeron_async.errors import InvalidArgumentError, InvalidPositionError
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
    """Offers numbered messages first..last-1, keeping their positions; message i only once
    `allowed()` is past i (unpaced without it). The tests pace it by what their subscriber has
    received (Pace), so whether the subscriber catches up with the stream or is left behind by it
    is the test's choreography, never the machine's load."""

    def __init__(self, publication: aeron_async.ExclusivePublication, first: int, last: int, positions: array,
                 allowed: Callable[[], int] | None = None) -> None:
        super().__init__(daemon=True)
        self.publication, self.first, self.last, self.positions = publication, first, last, positions
        self.allowed = allowed
        self.published = first  # messages first..published-1 are offered
        self.error: BaseException | None = None
        self.stop = threading.Event()

    def run(self) -> None:
        try:
            idle = aeron_async.IdleStrategy("backoff")
            for i in range(self.first, self.last):
                while self.allowed is not None and i >= self.allowed():
                    if self.stop.wait(0.0002):
                        return
                if self.stop.is_set():
                    return
                deadline = time.monotonic() + 30
                while (result := self.publication.offer(numbered(i))) < 0:
                    assert time.monotonic() < deadline, f"offer {i} stalled: {result}"
                    idle.idle(0)
                self.positions[i] = result
                self.published = i + 1
        except BaseException as exc:
            self.error = exc


# How far the publisher may run ahead of what the subscriber received, in messages: 48 of at most
# 160 bytes framed (numbered(96) and its header) is 7.5 KiB, under the quarter term (16 KiB of the
# 64 KiB terms) within which the persistent subscription adds its live subscription, so a reader
# always catches up with the stream and joins it while it flows; and twice that, the most its live
# image can lag while it switches, stays under the 24 KiB (the 32 KiB publisher window less a
# quarter) an untethered subscriber may lag before the driver drops it.
LEAD = 48
TAIL = 4 * LEAD  # the stream's last messages, published once the subscriber is live (Pace.hold_until_live)


class Pace:
    """What the publisher may publish (Publisher's `allowed`): LEAD messages past what the
    subscriber received, or up to `floor` when the test lets the stream run on without a reader.
    hold_until_live(live, at) holds the stream at message `at` until `live()` says the subscriber
    has joined the live stream: adding the live subscription takes the driver a while (a UDP image
    connects through SETUP and status messages), and a reader replaying meanwhile would otherwise
    read on from the recording, past where the test needs it live, on a loaded machine."""

    def __init__(self, received: list[tuple[bytes, int]]) -> None:
        self.received = received
        self.floor = 0
        self.live: Callable[[], bool] | None = None
        self.hold = TOTAL - TAIL

    def hold_until_live(self, live: Callable[[], bool], at: int = TOTAL - TAIL) -> None:
        self.live, self.hold = live, at

    def __call__(self) -> int:
        allowed = max(self.floor, len(self.received) + LEAD)
        if self.live is not None and not self.live():
            allowed = min(allowed, self.hold)
        return allowed


# the first reader's phase ends once it is live with BEHIND + 500 messages read: the stream waits
# for it there, so the GAP after it, and the second reader's phase, fit in TOTAL
FIRST_HOLD = BEHIND + 500 + LEAD


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


GAP = 1000  # messages published while no persistent subscription reads: more than a term


def restart_gap(archive: AeronArchive, recording_id: int, live: Publisher, pace: Pace, positions: array,
                stopped_at: int, bystander: aeron_async.Subscription) -> int:
    """Let the stream run on GAP messages past `stopped_at` while no persistent subscription reads it
    and wait until they are recorded; returns the position of the last (a restarted subscription
    replays up to it at least before it joins the live stream, which is already past it).
    `bystander`, another subscriber of the live stream opened before the persistent subscription
    closed, is read meanwhile, then closed: a UDP publication whose only receiver went is held to
    that receiver's last window until its connection times out (5 s)."""
    pace.live = None  # no reader: the stream runs on to the floor
    pace.floor = stopped_at + GAP

    def gone_on() -> bool:
        bystander.poll_messages()
        return live.published >= pace.floor or live.error is not None

    wait_for(gone_on, 30, what="the stream going on")
    assert live.error is None
    bystander.close()
    wait_recorded(archive, recording_id, positions[pace.floor - 1])
    return int(positions[pace.floor - 1])


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
        before = Publisher(publication, 0, BEHIND, positions)
        before.run()
        assert before.error is None
        wait_recorded(archive, recording_id, positions[BEHIND - 1])
        received: list[tuple[bytes, int]] = []
        pace = Pace(received)
        live = Publisher(publication, BEHIND, TOTAL, positions, pace)
        joined_at: list[int] = []  # the position where each joined the live stream
        live.start()
        try:
            with PersistentSubscription(archive, recording_id=recording_id, live_channel=live_channel,
                                        live_stream_id=stream_id, start_position=FROM_START,
                                        replay_channel=replay_channel,
                                        on_live_joined=lambda: joined_at.append(first.position)) as first:
                pace.hold_until_live(lambda: first.is_live, FIRST_HOLD)
                assert first.state == PersistentSubscriptionState.AWAIT_ARCHIVE_CONNECTION
                deadline = time.monotonic() + 60
                while not first.is_live or len(received) < BEHIND + 500:
                    assert time.monotonic() < deadline, f"{len(received)} messages in 60 s, {first!r}"
                    batch = first.poll_messages(100)
                    received.extend((bytes(m.data), m.position) for m in batch)
                # it replayed what was recorded before it started, then joined the flowing stream
                assert first.live_joined_count == 1 and joined_at[0] >= positions[BEHIND - 1]
                saved = first.position
                assert saved == received[-1][1]
                bystander = client.add_subscription(live_channel, stream_id)
            # stopped; the stream goes on, GAP messages, recorded; restarted from the saved
            # position: those are replayed, then it joins the live stream again
            resumed = restart_gap(archive, recording_id, live, pace, positions, len(received), bystander)
            with PersistentSubscription(archive, live_channel=live_channel, live_stream_id=stream_id,
                                        start_position=saved, replay_channel=replay_channel,
                                        on_live_joined=lambda: joined_at.append(second.position)) as second:
                pace.hold_until_live(lambda: second.is_live)
                # (it finds the recording itself)
                read_until(second, received, TOTAL, "after the restart")
                assert second.recording_id == recording_id and second.live_joined_count == 1
                assert joined_at[1] >= resumed, "it joined the live stream before replaying what it missed"
        finally:
            live.stop.set()
            live.join(30)
        assert live.error is None
        check_sequence(received, positions, TOTAL)
        publication.close()


BURST = 1000  # messages published while the slow consumer reads none: over 64 KiB, twice the window


@pytest.mark.parametrize("kind", ["ipc", "spy"])
def test_a_slow_consumer_dropped_off_live_comes_back_through_the_replay(running: Any, kind: str) -> None:
    stream_id = {"ipc": 6104, "spy": 6109}[kind]
    positions = array("q", [0]) * TOTAL
    with aeron_async.Aeron.connect(running.aeron_dir) as client, AeronArchive.connect(client) as archive:
        # an untethered live subscriber (IPC or a spy) left behind the publication's window for
        # 150 ms is dropped, and rejoins only after 30 s of rest
        publication, live_channel, recording_id = live_setup(
            kind, client, archive, stream_id,
            "|untethered-window-limit-timeout=150ms|untethered-linger-timeout=150ms|untethered-resting-timeout=30s")
        Publisher(publication, 0, BEHIND, positions).run()
        received: list[tuple[bytes, int]] = []
        pace = Pace(received)
        live = Publisher(publication, BEHIND, TOTAL, positions, pace)  # flowing while it reads
        left: list[int] = []  # the position where it left the live stream
        joined_at: list[int] = []  # ... and where it joined it
        live.start()
        try:
            untethered = live_channel + ("|" if "?" in live_channel else "?") + "tether=false"
            with PersistentSubscription(archive, recording_id=recording_id, live_channel=untethered,
                                        live_stream_id=stream_id, start_position=0,
                                        on_live_left=lambda: left.append(subscription.position),
                                        on_live_joined=lambda: joined_at.append(subscription.position)
                                        ) as subscription:
                deadline = time.monotonic() + 60
                while not subscription.is_live:
                    assert time.monotonic() < deadline, f"not live in 60 s: {subscription!r}"
                    received.extend((bytes(m.data), m.position) for m in subscription.poll_messages())
                assert subscription.live_joined_count == 1 and subscription.live_left_count == 0
                # a slow consumer: it reads nothing while the stream runs BURST messages on, over
                # the window, until the driver has dropped it off the live stream
                live_subscription = subscription._machine.live_subscription
                assert live_subscription is not None
                dropped_at = received[-1][1]
                pace.floor = len(received) + BURST
                wait_for(lambda: not live_subscription.images, 30, what="the slow consumer dropped off live")
                wait_for(lambda: live.published >= pace.floor or live.error, 30, what="the burst")
                assert live.error is None
                burst_end = int(positions[pace.floor - 1])
                wait_recorded(archive, recording_id, burst_end)
                # it reads again: it notices it left, replays the burst and joins the live stream
                # again, once, at or past the burst's end
                read_until(subscription, received, TOTAL, "after falling off live")
                assert subscription.live_left_count == 1 and left == [dropped_at]
                assert subscription.live_joined_count == 2 and joined_at[1] >= burst_end, \
                    "it rejoined the live stream before replaying what it missed"
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
        Publisher(publication, 0, 100, positions).run()
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
            Publisher(publication, 0, TOTAL, positions).run()
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
        Publisher(publication, 0, BEHIND, positions).run()
        wait_recorded(sync_archive, recording_id, positions[BEHIND - 1])
        received: list[tuple[bytes, int]] = []
        pace = Pace(received)
        live = Publisher(publication, BEHIND, TOTAL, positions, pace)
        joined_at: list[int] = []  # the position where each joined the live stream
        async with aeron_async.connect(running.aeron_dir) as aeron, archive_aio.connect(aeron) as archive:
            live.start()
            try:
                with anyio.fail_after(60):
                    async with AsyncPersistentSubscription(
                            archive, recording_id=recording_id, live_channel=live_channel, live_stream_id=stream_id,
                            start_position=FROM_START, on_live_joined=lambda: joined_at.append(first.position)
                    ) as first:
                        pace.hold_until_live(lambda: first.is_live, FIRST_HOLD)
                        with anyio.move_on_after(0):  # a cancelled poll is no failure: the next goes on
                            received.extend((bytes(m.data), m.position) for m in await first.poll_messages(100))
                        assert not first.has_failed
                        while not first.is_live or len(received) < BEHIND + 500:
                            batch = await first.poll_messages(100)
                            received.extend((bytes(m.data), m.position) for m in batch)
                            await anyio.sleep(0 if batch else 0.0005)
                        saved = first.position
                        assert first.live_joined_count == 1 and saved == received[-1][1]
                        assert joined_at[0] >= positions[BEHIND - 1]
                        bystander = client.add_subscription(live_channel, stream_id)
                    # stopped; the stream goes on, recorded; restarted: replayed, then live
                    resumed = await anyio.to_thread.run_sync(
                        restart_gap, sync_archive, recording_id, live, pace, positions, len(received), bystander)
                    async with AsyncPersistentSubscription(
                            archive, live_channel=live_channel, live_stream_id=stream_id, start_position=saved,
                            on_live_joined=lambda: joined_at.append(second.position)) as second:
                        pace.hold_until_live(lambda: second.is_live)
                        async for message in second:
                            received.append((bytes(message.data), message.position))
                            if len(received) == TOTAL:
                                break
                        assert second.live_joined_count == 1 and joined_at[1] >= resumed, \
                            "it joined the live stream before replaying what it missed"
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
        Publisher(publication, 0, 100, positions).run()
        wait_recorded(archive, recording_id, positions[99])
        reader = client.add_subscription(live_channel, 6108)  # another subscriber, reading on
        archive.stop_recording(recording_id=recording_id)  # the stream goes on, unrecorded
        Publisher(publication, 100, 200, positions).run()
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


class _FakeImage:
    """A stream of messages ending at `ends` (positions), read from `position` up to `available`.
    `settable`: whether the position setter moves it (else InvalidPositionError: not within the
    current term, and the machine reads up to the position instead)."""

    def __init__(self, session_id: int, ends: list[int], position: int, settable: bool = True) -> None:
        self.session_id, self.ends, self._position, self.settable = session_id, ends, position, settable
        self.is_closed = self.is_end_of_stream = False
        self.read_away: list[int] = []

    @property
    def position(self) -> int:
        return self._position

    @position.setter
    def position(self, position: int) -> None:
        if not self.settable or position not in self.ends:
            raise InvalidPositionError(f"{position} is not within the current term")
        self._position = position

    def poll_messages(self, limit: int) -> list[Any]:
        batch = [e for e in self.ends if e > self._position][:limit]
        if batch:
            self._position = batch[-1]
        return [SimpleNamespace(data=b"%d" % e, position=e) for e in batch]

    def bounded_poll(self, handler: Any, limit_position: int, fragment_limit: int) -> int:
        dropped = [e for e in self.ends if self._position < e <= limit_position][:fragment_limit]
        self.read_away += dropped
        if dropped:
            self._position = dropped[-1]
        return len(dropped)


class _FakeSubscription:
    def __init__(self, image: _FakeImage) -> None:
        self.image = image
        self.images = [image]

    def image_by_session_id(self, session_id: int) -> _FakeImage | None:
        return self.image if self.image.session_id == session_id else None


@pytest.mark.parametrize("moved_by", ["the position setter", "reading up to the position"])
def test_the_switch_drops_from_the_live_image_what_the_replay_delivered(moved_by: str) -> None:
    """The switch rule (aeron-wave3.md 8.2) with the replay past the live image's position, as
    the machine meets it (its requests answered here, its images fakes): the live image joined at
    448, the replay (3 messages a poll) is at 384, then at 576; the live image is moved to 576 and
    delivers from there; each message once, in order."""
    from aeron_async.archive.persistent import State, _Machine, _Op
    from aeron_async.archive.records import NULL_POSITION

    ends = list(range(64, 64 * 21, 64))  # messages of 64 bytes, 64 to 1280
    replay = _FakeImage(5, ends, 0)
    live = _FakeImage(7, ends, 448, settable=moved_by == "the position setter")
    machine = _Machine(recording_id=3, live_channel="aeron:ipc", live_stream_id=10, start_position=0,
                       replay_channel="aeron:ipc", replay_stream_id=1001, recording_channel=None, timeout=5.0,
                       on_live_joined=None, on_live_left=None, on_error=None)
    machine.max_messages = 3
    descriptor = SimpleNamespace(stream_id=10, start_position=0, stop_position=NULL_POSITION, session_id=7,
                                 term_buffer_length=64 * 1024)
    requests: list[str] = []

    def answer(op: _Op) -> Any:
        requests.append(op.name)
        if op.name == "list_recording":
            return descriptor
        if op.name == "max_recorded_position":
            return ends[-1]
        if op.name == "start_replay":
            return (1 << 32) | 5
        if op.name == "subscribe":
            channel, _, on_available = op.args
            if "session-id=5" in channel:
                on_available(replay)
                return _FakeSubscription(replay)
            return _FakeSubscription(live)
        return None  # stop_replay, close

    steps = machine.run()
    delivered: list[int] = []
    result: Any = None
    states: list[State] = []
    for _ in range(100):
        item = steps.send(result)
        result = answer(item) if isinstance(item, _Op) else None
        if not isinstance(item, _Op):
            delivered += [m.position for m in item]
            states.append(machine.state)
            if len(delivered) >= len(ends):
                break
    steps.close()
    assert delivered == ends, "messages missed, repeated or reordered at the switch"
    assert machine.join_difference == 448 - 384 and State.ATTEMPT_SWITCH in states
    assert machine.state == State.LIVE and machine.live_joined_count == 1
    assert requests.count("stop_replay") == 1  # the replay stopped at the switch
    assert live.read_away == ([] if moved_by == "the position setter" else [512, 576])
