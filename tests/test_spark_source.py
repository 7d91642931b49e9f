"""The `aeron` Spark data source, read side (issue 17, points 1, 2, 3 and 6), on a real local
SparkSession (the shared `spark` fixture) over an archive beside a driver.

The module's recordings are made once: 1,000,000 small messages (8 bytes: their index) over IPC,
and a few thousand of mixed sizes, fragmented ones included. Every check compares what Spark
returns with what was published: bytes, start positions, reserved values, each message once.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

import aeron_async
from aeron_async.archive import AeronArchive
from archive_e2e import Stream, archive_beside_driver, record, wait_recorded
from conftest import new_aeron_dir

pa = pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")

MILLION = 1_000_000
FRAME = 64  # an 8-byte message: 32-byte header + 8, aligned to 32
BIG_STREAM = 4101
MIXED_STREAM = 4102
LIVE_STREAM = 4103


@dataclass
class Recorded:
    aeron_dir: str
    archive_dir: str
    big: int                  # recording id of the million
    big_reserved: array       # the reserved value of each of the million
    mixed: int
    mixed_stream: Stream
    client: aeron_async.Aeron
    archive: AeronArchive

    def options(self, **extra: Any) -> dict[str, str]:
        found = {"aeronDir": self.aeron_dir, "timeout": "5"}
        found.update({key: str(value) for key, value in extra.items()})
        return found


def publish_million(publication: aeron_async.Publication, reserved: array) -> None:
    """The million 8-byte messages (little-endian index), in batches whose reserved value is the
    index of their first message."""
    messages = [i.to_bytes(8, "little") for i in range(MILLION)]
    idle = aeron_async.IdleStrategy("backoff")
    deadline = time.monotonic() + 60
    sent = 0
    while sent < MILLION:
        accepted = publication.offer_batch(messages[sent:sent + 4096], reserved_value=sent)
        if accepted > 0:
            reserved.extend([sent] * accepted)
            sent += accepted
            idle.reset()
            continue
        assert time.monotonic() < deadline, f"publishing stalled at {sent}"
        idle.idle(0)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: Any) -> Iterator[Recorded]:
    aeron_dir = new_aeron_dir()
    archive_dir = str(tmp_path_factory.mktemp("spark-archive"))
    try:
        with archive_beside_driver(aeron_dir, archive_dir):
            with aeron_async.Aeron.connect(aeron_dir, driver_timeout=5.0) as client, \
                    AeronArchive.connect(client, timeout=10.0) as archive:
                big_publication = client.add_exclusive_publication("aeron:ipc", BIG_STREAM)
                _, big = record(archive, "aeron:ipc", BIG_STREAM)
                reserved = array("q")
                publish_million(big_publication, reserved)
                mixed_publication = client.add_exclusive_publication("aeron:ipc", MIXED_STREAM)
                _, mixed = record(archive, "aeron:ipc", MIXED_STREAM)
                stream = Stream(4000)
                stream.publish(mixed_publication)
                wait_recorded(archive, big, big_publication.position)
                wait_recorded(archive, mixed, mixed_publication.position)
                archive.stop_recording("aeron:ipc", BIG_STREAM)
                archive.stop_recording("aeron:ipc", MIXED_STREAM)
                big_publication.close()
                mixed_publication.close()
                yield Recorded(aeron_dir, archive_dir, big, reserved, mixed, stream, client, archive)
    finally:
        shutil.rmtree(aeron_dir, ignore_errors=True)


def load(spark: Any, options: dict[str, str]) -> Any:
    return spark.read.format("aeron").options(**options).load()


def test_a_million_messages_are_read_once_each_with_their_positions(spark: Any, recorded: Recorded) -> None:
    df = load(spark, recorded.options(recordingIds=recorded.big, maxBytesPerPartition="16m"))
    assert df.rdd.getNumPartitions() == 4  # 64 MB in four ranges of 16 MB: four tasks read the one recording
    table = df.toArrow().sort_by("position")
    assert table.num_rows == MILLION
    assert table.column("position").to_pylist() == list(range(0, MILLION * FRAME, FRAME))
    assert table.column("data").to_pylist() == [i.to_bytes(8, "little") for i in range(MILLION)]
    assert table.column("reserved_value").to_pylist() == recorded.big_reserved.tolist()
    assert set(table.column("recording_id").to_pylist()) == {recorded.big}
    assert set(table.column("stream_id").to_pylist()) == {BIG_STREAM}
    assert set(table.column("channel").to_pylist()) == {"aeron:ipc"}
    descriptor = recorded.archive.list_recording(recorded.big)
    assert set(table.column("session_id").to_pylist()) == {descriptor.session_id}
