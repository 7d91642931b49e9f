"""Batch reads of recordings: the driver plans ranges of whole terms per recording (partitions of
bounded size, so several executors read one long recording), each task replays its range from the
archive over its own connection and yields Arrow record batches (columns.py).

Everything that can be wrong with the options or the archive (an unknown recording, a position
range outside what was recorded, no archive listening) is found in `partitions()`, on the driver,
at query start.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition

from ..archive import NULL_POSITION, AeronArchive, RecordingDescriptor
from ..errors import UnknownRecordingError
from .columns import ARROW_SCHEMA, RecordingRange, local_channel, open_archive, output_schema, project, read_range
from .repeats import drop_end_markers, recordings_to_drop
from .options import EARLIEST, LATEST, OptionError, ReadOptions


class RangePartition(InputPartition):
    """One task's work: the messages of one recording starting in [start, end)."""

    def __init__(self, part: RecordingRange) -> None:
        super().__init__(part)
        self.part = part

    def __repr__(self) -> str:
        p = self.part
        return f"RangePartition(recording {p.recording_id}, [{p.start}, {p.end}))"


def select_recordings(archive: AeronArchive, options: ReadOptions, *, required: bool) -> list[RecordingDescriptor]:
    """The recordings the options choose, by id order. An id the catalog lacks is an error; so is a
    channel + stream with no recording when `required` (a batch read)."""
    if options.recording_ids is not None:
        found = []
        for recording_id in options.recording_ids:
            try:
                found.append(archive.list_recording(recording_id))
            except UnknownRecordingError:
                raise OptionError(
                    f"recording {recording_id} (recordingIds) is not in the archive: list the recordings with "
                    f"`aeron-async recordings list`") from None
        return sorted(found, key=lambda d: d.recording_id)
    assert options.channel is not None and options.stream_id is not None
    found = archive.list_recordings(options.channel, options.stream_id)
    if required and not found:
        raise OptionError(f"no recording of stream {options.stream_id} on a channel containing {options.channel!r} "
                          f"in the archive")
    return sorted(found, key=lambda d: d.recording_id)


def recorded_end(archive: AeronArchive, descriptor: RecordingDescriptor) -> int:
    """Where the recording ends now: its stop position, or the position an active one has recorded."""
    if descriptor.stop_position != NULL_POSITION:
        return descriptor.stop_position
    return archive.max_recorded_position(descriptor.recording_id)


def resolve_position(name: str, given: int | dict[int, int], default: int, descriptor: RecordingDescriptor,
                     end: int) -> int:
    """A startingPositions / endingPositions value for one recording, checked against what it holds."""
    value = given.get(descriptor.recording_id, default) if isinstance(given, dict) else given
    if value == EARLIEST:
        return descriptor.start_position
    if value == LATEST:
        return end
    if value < descriptor.start_position:
        raise OptionError(f"{name}: position {value} of recording {descriptor.recording_id} is before its start at "
                          f"{descriptor.start_position}")
    if value > end:
        raise OptionError(f"{name}: position {value} of recording {descriptor.recording_id} is past its end: it "
                          f"holds [{descriptor.start_position}, {end})")
    return value


def split_range(descriptor: RecordingDescriptor, start: int, end: int, max_bytes: int) -> list[RecordingRange]:
    """[start, end) cut at multiples of a whole number of terms (at least one) of about max_bytes."""
    term = descriptor.term_buffer_length
    chunk = max(term, max_bytes - max_bytes % term)
    ranges = []
    low = start
    while low < end:
        high = min(end, (low // chunk + 1) * chunk)
        ranges.append(RecordingRange(descriptor.recording_id, low, high, descriptor.session_id, descriptor.stream_id,
                                     descriptor.original_channel, term))
        low = high
    return ranges


def drop_repeated_recordings(archive: AeronArchive, options: ReadOptions,
                             descriptors: list[RecordingDescriptor]) -> list[RecordingDescriptor]:
    """The recordings a read plans: all of them, but with dropRepeats=true those of a recorded sink
    stream that repeat a finished task attempt or never finished (repeats.py, docs/spark.md)."""
    if not options.drop_repeats:
        return descriptors
    replays = (local_channel(options.replay_channel), options.replay_stream_id)
    dropped = recordings_to_drop(archive, descriptors, replays)
    return [descriptor for descriptor in descriptors if descriptor.recording_id not in dropped]


def read_partition(partition: Any, options: ReadOptions) -> Iterator[pa.RecordBatch]:
    """A task's read: its own archive session, one replay of its range, handed on as what the task
    gives Spark. This is the one place where the reader filters rows (batch and streaming reads
    alike): every batch goes on as it is, but for dropRepeats=true, which drops the sink's end
    markers (repeats.py). The batches hold only the columns the query's schema chose
    (`.schema(...)`, datasource.py; the others are never built): Spark asks a Python source for
    every column it declares, so a query that needs fewer saves their building and their transfer
    to the JVM by choosing them."""
    if not isinstance(partition, RangePartition):
        return  # Spark's single empty partition when nothing is to be read
    schema = output_schema(options.columns)
    read_schema = schema
    if options.drop_repeats and "reserved_value" not in schema.names:
        read_schema = pa.schema([*schema, ARROW_SCHEMA.field("reserved_value")])  # what the filter reads
    with open_archive(options.archive) as archive:
        batches = read_range(archive, partition.part, options, read_schema)
        if options.drop_repeats:
            batches = (kept for kept in map(drop_end_markers, batches) if kept.num_rows)
        yield from (project(batch, schema) for batch in batches)


class AeronBatchReader(DataSourceReader):
    """spark.read.format("aeron"): planned on the driver, read by the executors."""

    def __init__(self, options: ReadOptions) -> None:
        self.options = options

    def plan(self, archive: AeronArchive) -> list[RecordingRange]:
        options = self.options
        ranges: list[RecordingRange] = []
        for descriptor in drop_repeated_recordings(archive, options, select_recordings(archive, options, required=True)):
            end_now = recorded_end(archive, descriptor)
            start = resolve_position("startingPositions", options.starting, EARLIEST, descriptor, end_now)
            end = resolve_position("endingPositions", options.ending, LATEST, descriptor, end_now)
            if end < start:
                raise OptionError(f"recording {descriptor.recording_id}: endingPositions {end} is before "
                                  f"startingPositions {start}")
            ranges.extend(split_range(descriptor, start, end, options.max_bytes_per_partition))
        return ranges

    def partitions(self) -> Sequence[InputPartition]:
        with open_archive(self.options.archive) as archive:
            return [RangePartition(part) for part in self.plan(archive)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return read_partition(partition, self.options)
