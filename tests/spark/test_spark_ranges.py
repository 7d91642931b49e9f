"""The Spark source's read of one range (aeron_async/spark/columns.py), without a SparkSession:
ranges of a recording with small terms (64 KiB: 1,024 messages of 32 bytes each), read through
the same replay + columnar poller a Spark task uses, compared message by message with what was
published.

The reader must go on to the range's end even when the replay has already finished (the archive
closed it: end of stream) while the reader is still a term or more behind: the consumer here is
slow near each range's end (as a Spark task is while Spark takes its batches), and its batches
fill up exactly at term ends.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

import aeron_async
from support.archive_e2e import archive_clients, record, wait_recorded

pa = pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")

TERM = 64 * 1024
FRAME = 64  # a 32-byte message: 32-byte header + 32
PER_TERM = TERM // FRAME
COUNT = 4 * PER_TERM + 50  # four whole terms, then 50 messages of a fifth
STREAM = 4211
BATCH_ROWS = 256  # a term holds four batches: each term's last batch fills up at the term's end


@dataclass
class Recording:
    aeron_dir: str
    recording_id: int
    session_id: int
    end: int


def message(index: int) -> bytes:
    return index.to_bytes(4, "little") * 8


@pytest.fixture(scope="module")
def recording(tmp_path_factory: Any) -> Iterator[Recording]:
    with archive_clients(tmp_path_factory, "spark-ranges-archive") as (aeron_dir, _, client, archive):
        publication = client.add_exclusive_publication("aeron:ipc?term-length=64k", STREAM)
        subscription_id, recording_id = record(archive, "aeron:ipc", STREAM)
        idle = aeron_async.IdleStrategy("backoff")
        deadline = time.monotonic() + 30
        for i in range(COUNT):
            while publication.offer(message(i)) < 0:
                assert time.monotonic() < deadline, f"publishing stalled at {i}"
                idle.idle(0)
        end = publication.position
        wait_recorded(archive, recording_id, end)
        archive.stop_recording(subscription_id=subscription_id)
        publication.close()
        descriptor = archive.list_recording(recording_id)
        assert descriptor.stop_position == end == COUNT * FRAME
        assert descriptor.term_buffer_length == TERM
        yield Recording(aeron_dir, recording_id, descriptor.session_id, end)


def read_slowly(recording: Recording, start: int, end: int) -> list[tuple[int, bytes]]:
    """(position, data) of each row read from [start, end), the reader pausing once, a batch before
    the last term boundary under `end`: time for the replay to send the rest (within the IPC
    window of half a term) and end."""
    from aeron_async.spark.columns import RecordingRange, open_archive, poll_range
    from aeron_async.spark.options import parse_read_options

    options = parse_read_options({"aerondir": recording.aeron_dir, "recordingids": str(recording.recording_id),
                                  "timeout": "5"}, streaming=False)
    part = RecordingRange(recording.recording_id, start, end, recording.session_id, STREAM, "aeron:ipc", TERM)
    pause_at = (end - 1) // TERM * TERM - BATCH_ROWS * FRAME
    rows: list[tuple[int, bytes]] = []
    with open_archive(options.archive) as archive:
        for columns in poll_range(archive, part, options, batch_rows=BATCH_ROWS):
            batch = columns.take(part)
            rows.extend(zip(batch.column("position").to_pylist(), batch.column("data").to_pylist()))
            if rows[-1][0] >= pause_at:   # a row's position is its message's end
                time.sleep(0.25)
                pause_at = 1 << 62
    return rows


def expected(start: int, end: int) -> list[tuple[int, bytes]]:
    first = -(-start // FRAME)
    # (position: the message's end, as Message.position; data) of the messages starting in [start, end)
    return [((i + 1) * FRAME, message(i)) for i in range(first, min(COUNT, -(-end // FRAME)))]


@pytest.mark.parametrize("start_terms, end", [
    (0, "end"),                # four whole terms, then the partial one
    (1, "end"),                # three whole terms, then the partial one
    (3, "end"),                # one whole term, then the partial one
    (4, "end"),                # the partial term alone
    (1.25, "end"),             # from inside a term
    (0, "end - 10 messages"),  # ending inside the partial term
    (0, 4),                    # ending exactly at a term boundary: whole terms only
    (1, 3),
    (2.5, 4),
])
def test_a_range_is_read_to_its_end_when_the_replay_ended_first(
        recording: Recording, start_terms: float, end: Any) -> None:
    start = int(start_terms * TERM)
    high = {"end": recording.end, "end - 10 messages": recording.end - 10 * FRAME}.get(end, end * TERM)
    rows = read_slowly(recording, start, high)
    assert len(rows) == len(expected(start, high))
    assert rows == expected(start, high)


def test_ranges_cut_at_terms_together_hold_every_message_once(recording: Recording) -> None:
    """A plan's ranges (whole terms, the last one partial), each read by its own replay."""
    cuts = [0, TERM, 3 * TERM, 4 * TERM, recording.end]
    rows = [row for low, high in zip(cuts, cuts[1:]) for row in read_slowly(recording, low, high)]
    assert rows == expected(0, recording.end)
