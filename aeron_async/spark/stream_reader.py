"""Structured Streaming reads of recordings (spark.readStream.format("aeron")).

Offsets are JSON objects of recording id to position, keys in ascending id order (Spark compares
offsets as strings): `{"3": 8192, "5": 0}`. A micro-batch from `start` to `end` holds, for each
recording, the messages whose start position is in [start, end) (a recording missing from `start`
is read from its own start), so re-running a batch from the checkpoint's offset log replays
exactly the same rows from the archive. Recordings that match channel + streamId and appear while
the query runs are picked up from their start.

The source's driver-side process keeps one archive session (opened on first use, closed by
`stop()`); the tasks open their own. Admission control (pyspark >= 4.2): maxRecordsPerTrigger
becomes Spark's ReadMaxRows limit, maxBytesPerTrigger ReadMaxBytes (both apply when both are
given); the byte budget is shared among recordings in proportion to what each has new, the message
count is found by counting over a replay of the range. Trigger.AvailableNow reads up to where
every recording stood when the query started, then ends.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxBytes,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from ..archive import AeronArchive, RecordingDescriptor
from ..errors import UnknownRecordingError
from .columns import RecordingRange, data_loss, end_after_rows, open_archive
from .options import EARLIEST, OptionError, ReadOptions
from .reader import RangePartition, read_partition, recorded_end, resolve_position, split_range


def encode_offset(positions: dict[int, int]) -> dict[str, int]:
    """The offset Spark stores: recording ids (as strings) in ascending order."""
    return {str(recording_id): positions[recording_id] for recording_id in sorted(positions)}


def decode_offset(offset: dict[str, Any]) -> dict[int, int]:
    try:
        return {int(key): int(value) for key, value in offset.items()}
    except (TypeError, ValueError):
        raise OptionError(f"the offset {json.dumps(offset)} is not a map of recording id to position: was the "
                          f"checkpoint written by another source?") from None


def share(budget: int, amounts: dict[int, int]) -> dict[int, int]:
    """`budget` split among the keys in proportion to their amounts (floor, remainder to the first
    ones in key order); every key with an amount gets at least 0, the total is at most `budget`."""
    total = sum(amounts.values())
    if total <= budget:
        return dict(amounts)
    shares = {key: budget * amount // total for key, amount in amounts.items()}
    left = budget - sum(shares.values())
    for key in sorted(amounts):
        if left <= 0:
            break
        if shares[key] < amounts[key]:
            shares[key] += 1
            left -= 1
    return shares


class RefusedStreamReader(DataSourceStreamReader):
    """The stream reader of a query whose options were refused: each call raises that error (the
    first one, initialOffset, at query start), stop() does nothing (datasource.py says why)."""

    def __init__(self, error: OptionError) -> None:
        self.error = error

    def _refuse(self) -> Any:
        raise OptionError(str(self.error)) from None

    def initialOffset(self) -> dict[str, int]:
        result: dict[str, int] = self._refuse()
        return result

    def latestOffset(self, start: dict[str, int] | None = None, limit: Any = None) -> dict[str, int]:
        result: dict[str, int] = self._refuse()
        return result

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        result: Sequence[InputPartition] = self._refuse()
        return result

    def read(self, partition: InputPartition) -> Iterator[Any]:
        result: Iterator[Any] = self._refuse()
        return result

    def commit(self, end: dict[str, int]) -> None:
        pass

    def stop(self) -> None:
        pass


class AeronStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The streaming source: offsets, limits and partitions on the driver, reads on the executors."""

    def __init__(self, options: ReadOptions) -> None:
        self.options = options
        self._archive: AeronArchive | None = None
        self._descriptors: dict[int, RecordingDescriptor] = {}
        self._target: dict[int, int] | None = None  # AvailableNow: where each recording stood at start

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_archive"] = None  # a connection never travels
        return state

    # --- the driver-side session -------------------------------------------------------------

    def _session(self) -> AeronArchive:
        if self._archive is None or self._archive.is_closed:
            self._archive = open_archive(self.options.archive)
        return self._archive

    def _recordings(self) -> dict[int, RecordingDescriptor]:
        """The selected recordings now in the catalog, by id (a selected id that is gone is absent)."""
        archive, options = self._session(), self.options
        found: list[RecordingDescriptor] = []
        if options.recording_ids is not None:
            for recording_id in options.recording_ids:
                try:
                    found.append(archive.list_recording(recording_id))
                except UnknownRecordingError:
                    pass
        else:
            assert options.channel is not None and options.stream_id is not None
            found = archive.list_recordings(options.channel, options.stream_id)
        recordings = {d.recording_id: d for d in found}
        self._descriptors.update(recordings)
        return recordings

    def _descriptor(self, recording_id: int) -> RecordingDescriptor:
        descriptor = self._descriptors.get(recording_id)
        if descriptor is None:
            descriptor = self._session().list_recording(recording_id)
            self._descriptors[recording_id] = descriptor
        return descriptor

    # --- offsets -----------------------------------------------------------------------------

    def initialOffset(self) -> dict[str, int]:
        options = self.options
        recordings = self._recordings()
        if options.recording_ids is not None:
            missing = [r for r in options.recording_ids if r not in recordings]
            if missing:
                raise OptionError(f"recordings {missing} (recordingIds) are not in the archive: list the recordings "
                                  f"with `aeron-async recordings list`")
        if isinstance(options.starting, dict):
            unknown = sorted(set(options.starting) - set(recordings))
            if unknown:
                raise OptionError(f"startingPositions names recordings {unknown} that are not among the selected "
                                  f"recordings in the archive")
        archive = self._session()
        positions = {}
        for recording_id, descriptor in recordings.items():
            end = recorded_end(archive, descriptor)
            positions[recording_id] = resolve_position("startingPositions", options.starting, EARLIEST, descriptor, end)
        return encode_offset(positions)

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.options.max_records_per_trigger is not None:
            return ReadMaxRows(self.options.max_records_per_trigger)
        if self.options.max_bytes_per_trigger is not None:
            return ReadMaxBytes(self.options.max_bytes_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        archive = self._session()
        self._target = {recording_id: recorded_end(archive, descriptor)
                        for recording_id, descriptor in self._recordings().items()}

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, int]:
        options = self.options
        begin = decode_offset(start)
        recordings = self._recordings()
        archive = self._session()
        positions = dict(begin)
        available: dict[int, tuple[int, int]] = {}
        for recording_id in sorted(set(begin) - set(recordings)):
            data_loss(options, f"recording {recording_id} is gone from the archive (purged) at position "
                               f"{begin[recording_id]}")
            del positions[recording_id]
        for recording_id, descriptor in recordings.items():
            if self._target is not None and recording_id not in self._target:
                continue  # appeared after an AvailableNow query started
            low = begin.get(recording_id, descriptor.start_position)
            end = recorded_end(archive, descriptor)
            if low < descriptor.start_position:
                data_loss(options, f"recording {recording_id} now starts at {descriptor.start_position}: "
                                   f"[{low}, {descriptor.start_position}) is gone")
                low = descriptor.start_position
            if end < low:
                data_loss(options, f"recording {recording_id} now ends at {end} (truncated), before the offset {low}")
                low = end
            if self._target is not None:
                end = max(low, min(end, self._target[recording_id]))
            positions[recording_id] = low
            if end > low:
                available[recording_id] = (low, end)
        if not isinstance(limit, ReadAllAvailable):
            max_bytes = limit.max_bytes if isinstance(limit, ReadMaxBytes) else options.max_bytes_per_trigger
            max_rows = limit.max_rows if isinstance(limit, ReadMaxRows) else None
            if max_bytes is not None:
                shares = share(max_bytes, {r: high - low for r, (low, high) in available.items()})
                available = {r: (low, low + shares[r]) for r, (low, _) in available.items() if shares[r] > 0}
            if max_rows is not None:
                available = self._limit_rows(available, max_rows)
        for recording_id, (_, high) in available.items():
            positions[recording_id] = high
        return encode_offset(positions)

    def _limit_rows(self, available: dict[int, tuple[int, int]], max_rows: int) -> dict[int, tuple[int, int]]:
        """Ends such that at most max_rows messages are in the ranges (shared in proportion to bytes)."""
        shares = share(max_rows, {r: high - low for r, (low, high) in available.items()})
        archive = self._session()
        limited = {}
        for recording_id, (low, high) in available.items():
            rows = shares[recording_id]
            if rows <= 0:
                continue
            descriptor = self._descriptor(recording_id)
            part = RecordingRange(recording_id, low, high, descriptor.session_id, descriptor.stream_id,
                                  descriptor.original_channel, descriptor.term_buffer_length)
            counted, end = end_after_rows(archive, part, self.options, rows)
            if counted:
                limited[recording_id] = (low, end)
        return limited

    # --- micro-batches -----------------------------------------------------------------------

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        begin, finish = decode_offset(start), decode_offset(end)
        ranges: list[RecordingRange] = []
        for recording_id in sorted(finish):
            try:
                descriptor = self._descriptor(recording_id)
            except UnknownRecordingError:
                data_loss(self.options, f"recording {recording_id} is gone from the archive (purged): its range "
                                        f"[{begin.get(recording_id)}, {finish[recording_id]}) cannot be read")
                continue
            low = begin.get(recording_id, descriptor.start_position)
            if finish[recording_id] > low:
                ranges.extend(split_range(descriptor, low, finish[recording_id], self.options.max_bytes_per_partition))
        return [RangePartition(part) for part in ranges]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return read_partition(partition, self.options)

    def commit(self, end: dict[str, Any]) -> None:
        """Nothing to release: what the archive keeps is the archive's policy (purge, truncate)."""

    def stop(self) -> None:
        archive, self._archive = self._archive, None
        if archive is not None:
            archive.close()
