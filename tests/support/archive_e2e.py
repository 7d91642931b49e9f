"""What the archive client's end-to-end tests share: an archive beside a driver (SHARED threading,
backoff idling, a private aeron directory and a tmp archive directory), a stream of mixed message
sizes with the positions its publisher got, and replays collected for comparison."""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import socket
import time
from array import array
from collections.abc import Iterator
from typing import Any

import aeron_async
from aeron_async.archive import AeronArchive, RecordingSignal, service
from conftest import TEST_DRIVER_SETTINGS, new_aeron_dir

ARCHIVE_SETTINGS: dict[str, Any] = {"threading_mode": "SHARED", "idle_strategy": "backoff"}


@contextlib.contextmanager
def archive_beside_driver(aeron_dir: str, archive_dir: str, *, driver_settings: dict[str, Any] | None = None,
                          **overrides: Any) -> Iterator[Any]:
    """`overrides` go to the archive, `driver_settings` to the driver (over the suite's)."""
    settings = dict(TEST_DRIVER_SETTINGS)
    settings["spies_simulate_connection"] = True
    settings.update(driver_settings or {})
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings) as driver:
        with service.Archive.launch(archive_dir=archive_dir, aeron_dir=driver.aeron_dir,
                                    **{**ARCHIVE_SETTINGS, **overrides}) as archive:
            yield archive


@contextlib.contextmanager
def archive_clients(tmp_path_factory: Any, name: str, driver_settings: dict[str, Any] | None = None,
                    **overrides: Any) -> Iterator[tuple[str, str, aeron_async.Aeron, AeronArchive]]:
    """An archive beside a driver in fresh directories (the archive's a tmp directory `name`; `overrides`
    go to the archive), and a client and an archive client connected to them: (aeron_dir, archive_dir,
    client, archive). The aeron directory is removed afterwards."""
    aeron_dir = new_aeron_dir()
    archive_dir = str(tmp_path_factory.mktemp(name))
    try:
        with archive_beside_driver(aeron_dir, archive_dir, driver_settings=driver_settings, **overrides):
            with aeron_async.Aeron.connect(aeron_dir, driver_timeout=5.0) as client, \
                    AeronArchive.connect(client, timeout=10.0) as archive:
                yield aeron_dir, archive_dir, client, archive
    finally:
        shutil.rmtree(aeron_dir, ignore_errors=True)


def free_udp_port() -> int:
    """A port nothing on 127.0.0.1 uses now (tests run in parallel with other engineers' tests)."""
    for _ in range(50):
        port = random.randint(20000, 60000)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError("no free UDP port")


class Stream:
    """`count` messages of mixed sizes: mostly 1-120 bytes, every 997th a fragmented one of
    4-20 KB (several MTUs); their bytes are slices of one random blob."""

    def __init__(self, count: int, seed: int = 7) -> None:
        rng = random.Random(seed)
        self.sizes = array("i", (rng.randint(4096, 20000) if i % 997 == 500 else 1 + (i * 7919) % 120
                                 for i in range(count)))
        self.offsets = array("q", [0]) * (count + 1)
        total = 0
        for i, size in enumerate(self.sizes):
            total += size
            self.offsets[i + 1] = total
        self.blob = os.urandom(total)
        self.positions = array("q", [0]) * count  # the position after each message, as its offer returned it

    def __len__(self) -> int:
        return len(self.sizes)

    def publish(self, publication: aeron_async.Publication, timeout: float = 60.0) -> int:
        """Offer every message (retrying back pressure) and keep the positions; returns the last."""
        view = memoryview(self.blob)
        offsets, positions, offer = self.offsets, self.positions, publication.offer
        idle = aeron_async.IdleStrategy("backoff")
        deadline = time.monotonic() + timeout
        for i in range(len(self.sizes)):
            data = view[offsets[i]:offsets[i + 1]]
            while (result := offer(data)) < 0:
                if result not in (-1, -2, -3):
                    raise AssertionError(f"offer {i}: {result}")
                if time.monotonic() > deadline:
                    raise AssertionError(f"publishing stalled at message {i} of {len(self.sizes)}")
                idle.idle(0)
            positions[i] = result
        return positions[-1]

    def start_of(self, index: int, start_position: int = 0) -> int:
        return start_position if index == 0 else self.positions[index - 1]


def collect(replay: Any, timeout: float = 60.0) -> tuple[bytearray, array, array]:
    """(bytes, sizes, positions) of every message of a sync Replay until it ends."""
    data, sizes, positions = bytearray(), array("i"), array("q")
    deadline = time.monotonic() + timeout
    for message in replay.messages(timeout=10.0):
        payload = message.data
        data += payload
        sizes.append(len(payload))
        positions.append(message.position)
        if len(sizes) % 65536 == 0 and time.monotonic() > deadline:
            raise AssertionError(f"replay not done within {timeout} s ({len(sizes)} messages)")
    return data, sizes, positions


def assert_same_stream(stream: Stream, first: int, end: int, got: tuple[bytearray, array, array]) -> None:
    """The replayed messages are messages first..end-1 of the original: bytes, boundaries, positions."""
    data, sizes, positions = got
    assert len(sizes) == end - first, f"replayed {len(sizes)} messages, expected {end - first}"
    assert sizes == stream.sizes[first:end], "message boundaries differ"
    assert positions == stream.positions[first:end], "positions differ"
    assert bytes(data) == stream.blob[stream.offsets[first]:stream.offsets[end]], "bytes differ"


def record(archive: AeronArchive, channel: str, stream_id: int, **kwargs: Any) -> tuple[int, int]:
    """Start recording; returns (subscription id, recording id) once the recording has started
    (the START signal of the first publication that joins it). Call after the publication exists."""
    subscription_id = archive.start_recording(channel, stream_id, **kwargs)
    event = archive.wait_for_signal(RecordingSignal.START, subscription_id=subscription_id, timeout=10)
    return subscription_id, event.recording_id


def wait_recorded(archive: AeronArchive, recording_id: int, position: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    idle = aeron_async.IdleStrategy("sleeping:1ms")
    while (archive.max_recorded_position(recording_id)) < position:
        if time.monotonic() > deadline:
            raise AssertionError(f"recording {recording_id} did not reach {position} within {timeout} s "
                                 f"(at {archive.max_recorded_position(recording_id)})")
        idle.idle(0)
