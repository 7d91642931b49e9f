"""The persistent subscription's figures for `aeron-async bench-archive` (docs/benchmarks.md,
"Persistent subscription"), on the driver and archive of archive.py's Bench:

- time from start to live with `behind` messages recorded ahead of it (IPC stream, 32-byte
  messages), beside a plain replay's time from request to last message of the same messages;
- its throughput while replaying all `messages` once recorded, against a plain replay of the same
  range read the same way (whole messages, `poll_messages(1024)`), the two taken in turns;
- the whole scenario at scale, with an IPC, a UDP and a spy live stream: `messages` published
  (the last ones at LIVE_RATE while it reads), the subscription started `behind` messages behind,
  joining live, stopped half way (once live) and restarted from its saved position; every message
  checked exactly once, in order.
"""

from __future__ import annotations

import socket
import statistics
import struct
import threading
import time
from typing import TYPE_CHECKING, Any

from ..archive import FROM_START, PersistentSubscription, RecordingSignal
from ..errors import BenchError, BenchTimeoutError
from ..idle import IdleStrategy

if TYPE_CHECKING:
    from .archive import Bench

SIZE = 32
TERM = 16 << 20
MIN_REPEATS = 9  # a catch-up of 100 k messages lasts tens of ms: medians of at least this many runs
THROUGHPUT_PAIRS = 5  # pairs of 1 M-message replays: the load of a shared machine moves them 2-3x
LIVE_RATE = 2e6  # messages/s of the scenario's live publisher (in this process: it shares the GIL)
_COUNT = struct.Struct("<q")


def _payload(i: int) -> bytes:
    return _COUNT.pack(i) + bytes(SIZE - 8)


class _Publisher(threading.Thread):
    """Publishes messages first..last-1 in batches, at about `rate` a second (None: as fast as the
    publication takes them)."""

    def __init__(self, publication: Any, first: int, last: int, rate: float | None = None) -> None:
        super().__init__(daemon=True)
        self.publication, self.first, self.last, self.rate = publication, first, last, rate
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            idle = IdleStrategy("backoff")
            i = self.first
            start = time.monotonic()
            deadline = start + 600
            while i < self.last:
                n = self.publication.offer_batch([_payload(j) for j in range(i, min(i + 256, self.last))])
                if n > 0:
                    i += n
                    ahead = 0.0 if self.rate is None else (i - self.first) / self.rate - (time.monotonic() - start)
                    if ahead > 0.001:
                        time.sleep(ahead)
                elif time.monotonic() > deadline:
                    raise BenchTimeoutError(f"persistent subscription bench: offer of message {i} stalled")
                idle.idle(max(n, 0))
        except BaseException as exc:
            self.error = exc


def _deadline_check(deadline: float, what: str) -> None:
    if time.monotonic() > deadline:
        raise BenchTimeoutError(f"persistent subscription bench: {what} not done within 300 s")


def _plain_replay(bench: Bench, recording_id: int, count: int, stream_id: int) -> tuple[float, float]:
    """(messages/s, seconds from the request to the last message) of a plain replay of the first
    `count` messages, read as the subscription reads (the rate timed from the first batch on,
    which is not counted)."""
    got, first_batch, start = 0, 0, 0.0
    deadline = time.monotonic() + 300
    requested = time.perf_counter()
    with bench.archive.replay(recording_id, position=0, length=count * 64, stream_id=stream_id) as replay:
        idle = IdleStrategy("backoff")
        while got < count:
            _deadline_check(deadline, "plain replay")
            batch = replay.subscription.poll_messages(1024)
            if batch and not got:
                start, first_batch = time.perf_counter(), len(batch)
            got += len(batch)
            idle.idle(len(batch))
        end = time.perf_counter()
        return (count - first_batch) / (end - start), end - requested


def _catch_up(bench: Bench, recording_id: int, stream_id: int, channel: str, count: int) -> tuple[float, float]:
    """(seconds from start to live, messages/s while replaying, timed as the plain replay) of a
    subscription from position 0 with `count` messages recorded ahead of it and nothing published
    meanwhile."""
    deadline = time.monotonic() + 300
    started = time.perf_counter()
    got, first_batch, first, last = 0, 0, 0.0, 0.0
    with PersistentSubscription(bench.archive, recording_id=recording_id, live_channel=channel,
                                live_stream_id=stream_id, start_position=FROM_START,
                                replay_stream_id=stream_id + 5000) as subscription:
        idle = IdleStrategy("backoff")
        while not subscription.is_live:
            _deadline_check(deadline, "catching up")
            batch = subscription.poll_messages(1024)
            if batch:
                last = time.perf_counter()
                if not got:
                    first, first_batch = last, len(batch)
            got += len(batch)
            idle.idle(len(batch))
        live = time.perf_counter()
    if got != count:
        raise BenchError(f"persistent subscription bench: {got} messages replayed of the {count} recorded")
    return live - started, (count - first_batch) / (last - first)


def _read(subscription: PersistentSubscription, expected: int, until: int, deadline: float) -> int:
    """Read and check messages `expected`..`until`-1 and on until it is live; returns the next
    expected."""
    idle = IdleStrategy("backoff")
    unpack = _COUNT.unpack_from
    while expected < until or not subscription.is_live:
        _deadline_check(deadline, "the full scenario")
        batch = subscription.poll_messages(1024)
        for message in batch:
            (number,) = unpack(message.data)
            if number != expected:
                raise BenchError(f"persistent subscription bench: message {number} where {expected} was due "
                                 "(missed, repeated or reordered)")
            expected += 1
        idle.idle(len(batch))
    return expected


def _free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _channels(kind: str) -> tuple[str, str]:
    """The publication's channel and the live channel the subscription reads, of `kind`."""
    if kind == "ipc":
        return f"aeron:ipc?term-length={TERM}", "aeron:ipc"
    endpoint = f"aeron:udp?endpoint=127.0.0.1:{_free_udp_port()}"
    return f"{endpoint}|term-length={TERM}", endpoint if kind == "udp" else "aeron-spy:" + endpoint


def _record(bench: Bench, channel: str, behind: int) -> tuple[Any, int, int, int]:
    """A publication on `channel`, recorded locally, with `behind` messages recorded: (publication,
    stream id, recording subscription id, recording id)."""
    bench.stream_id += 10
    stream_id = bench.stream_id
    publication = bench.client.add_exclusive_publication(channel, stream_id)
    subscription_id = bench.archive.start_recording(channel, stream_id)
    recording_id = bench.archive.wait_for_signal(RecordingSignal.START, subscription_id=subscription_id).recording_id
    before = _Publisher(publication, 0, behind)
    before.run()
    if before.error is not None:
        raise before.error
    end = publication.position
    deadline = time.monotonic() + 300
    while bench.archive.max_recorded_position(recording_id) < end:
        _deadline_check(deadline, "recording")
        time.sleep(0.001)
    return publication, stream_id, subscription_id, recording_id


def _scenario(bench: Bench, publication: Any, stream_id: int, recording_id: int, live_channel: str, messages: int,
              behind: int) -> dict[str, Any]:
    """Started `behind` messages behind (from the start) while the rest is published, stopped half
    way once live and restarted from its saved position; every message checked."""
    rest = _Publisher(publication, behind, messages, LIVE_RATE)
    deadline = time.monotonic() + 300
    started = time.perf_counter()
    rest.start()
    with PersistentSubscription(bench.archive, recording_id=recording_id, live_channel=live_channel,
                                live_stream_id=stream_id, start_position=FROM_START,
                                replay_stream_id=stream_id + 5002) as first:
        expected = _read(first, 0, messages // 2, deadline)
        joined = first.live_joined_count
        saved = first.position
    with PersistentSubscription(bench.archive, recording_id=recording_id, live_channel=live_channel,
                                live_stream_id=stream_id, start_position=saved,
                                replay_stream_id=stream_id + 5003) as second:
        expected = _read(second, expected, messages, deadline)
        joined += second.live_joined_count
    elapsed = time.perf_counter() - started
    rest.join(60)
    if rest.error is not None:
        raise rest.error
    return {"exactly_once_in_order": expected == messages, "live_joins": joined, "seconds": elapsed}


def run(bench: Bench, messages: int, behind: int, repeats: int) -> dict[str, Any]:
    if not 0 < behind < messages:
        raise BenchError(f"persistent subscription bench: give 0 < behind ({behind}) < messages ({messages})")
    channel, live_channel = _channels("ipc")
    publication, stream_id, subscription_id, recording_id = _record(bench, channel, behind)
    try:
        plain_seconds, to_live = [], []
        for _ in range(max(repeats, MIN_REPEATS)):
            plain_seconds.append(_plain_replay(bench, recording_id, behind, stream_id + 5001)[1])
            to_live.append(_catch_up(bench, recording_id, stream_id, live_channel, behind)[0])
        scenarios = {"ipc": _scenario(bench, publication, stream_id, recording_id, live_channel, messages, behind)}
        # throughput over all `messages` now recorded (long enough to time on a shared machine):
        # a plain replay, then the subscription from the start until it is live, in turns
        plain, replaying = [], []
        for _ in range(max(repeats, THROUGHPUT_PAIRS)):
            plain.append(_plain_replay(bench, recording_id, messages, stream_id + 5001)[0])
            replaying.append(_catch_up(bench, recording_id, stream_id, live_channel, messages)[1])
    finally:
        bench.archive.stop_recording(subscription_id=subscription_id)
        publication.close()
    for kind in ("udp", "spy"):
        channel, live_channel = _channels(kind)
        publication, stream_id, subscription_id, recording_id = _record(bench, channel, behind)
        try:
            scenarios[kind] = _scenario(bench, publication, stream_id, recording_id, live_channel, messages, behind)
        finally:
            bench.archive.stop_recording(subscription_id=subscription_id)
            publication.close()
    return {"messages": messages, "behind": behind, "size": SIZE, "repeats": len(plain),
            "to_live_repeats": len(to_live),
            "to_live_s": statistics.median(to_live), "to_live_runs": to_live,
            "replaying_msgs_s": statistics.median(replaying), "replaying_runs": replaying,
            "plain_replay_msgs_s": statistics.median(plain), "plain_runs": plain,
            "plain_replay_s": statistics.median(plain_seconds),
            "ratios": [r / p for r, p in zip(replaying, plain)], "scenarios": scenarios}


def markdown(result: dict[str, Any]) -> str:
    ratios = result["ratios"]
    ratio = result["replaying_msgs_s"] / result["plain_replay_msgs_s"]
    return "\n".join([
        f"Persistent subscription: IPC, {result['size']}-byte messages; start to live: medians of "
        f"{result['to_live_repeats']} runs, each after a plain replay of the same messages; throughput over all "
        f"{result['messages']:,} messages: medians of {result['repeats']} pairs taken in turns", "",
        "| persistent subscription | figure |", "|---|---|",
        f"| start to live, {result['behind']:,} messages behind | {result['to_live_s'] * 1e3:.0f} ms |",
        f"| plain replay of the same messages, request to last message | {result['plain_replay_s'] * 1e3:.0f} ms |",
        f"| throughput while replaying ({result['messages']:,} messages) | "
        f"{result['replaying_msgs_s'] / 1e6:.2f} M msgs/s |",
        f"| plain replay, same range, same reads | {result['plain_replay_msgs_s'] / 1e6:.2f} M msgs/s |",
        f"| ratio (target >= 0.9) | {ratio:.2f} ({min(ratios):.2f}-{max(ratios):.2f}) |",
    ] + [
        f"| {kind}: {result['messages']:,} published, started {result['behind']:,} behind, stopped half way and "
        f"restarted | {'every message once, in order' if scenario['exactly_once_in_order'] else 'FAILED'}, "
        f"{scenario['live_joins']} live joins, {scenario['seconds']:.1f} s |"
        for kind, scenario in result["scenarios"].items()
    ])
