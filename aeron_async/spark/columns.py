"""Arrow record batches built natively from a replay: the archive replays a recording's range to
the task's own subscription and `aa_columns_poll` (_native/src/client/aa_columns.c) writes whole
messages straight into Arrow buffers (data bytes + int32 offsets, positions: each message's end, as
Message.position, reserved values):
no Python object per message. The columns that are the same for the whole recording (its id,
session id, stream id and channel) are Arrow's own repeated scalars.

A range [from, to) holds the messages whose start position is in it. The replay starts at the
term boundary at or before `from` (always a frame boundary; a message never spans terms) and the
poller skips what starts before `from`, so any position is a valid range end and each message is
read by exactly one range.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Iterator
from typing import Any, Final

import attrs
import pyarrow as pa

from .._ffi import ffi, lib
from ..archive import AeronArchive, NULL_POSITION
from ..errors import (
    ArchiveTimeoutError, DataLossError, InvalidArgumentError, MessageTooLongError, UnknownRecordingError, last_error,
)
from ..idle import IdleStrategy
from .options import ArchiveOptions, ReadOptions

log = logging.getLogger("aeron_async.spark")

ARROW_SCHEMA: Final = pa.schema([
    pa.field("data", pa.binary(), nullable=False),
    pa.field("recording_id", pa.int64(), nullable=False),
    pa.field("session_id", pa.int32(), nullable=False),
    pa.field("stream_id", pa.int32(), nullable=False),
    pa.field("position", pa.int64(), nullable=False),
    pa.field("reserved_value", pa.int64(), nullable=False),
    pa.field("channel", pa.string(), nullable=False),
])



def output_schema(columns: tuple[tuple[str, bool], ...] | None) -> pa.Schema:
    """The Arrow schema of what a task hands Spark: ARROW_SCHEMA, or the chosen columns of it in
    their order with the nullability the query's schema gives (Spark compares the two exactly)."""
    if columns is None:
        return ARROW_SCHEMA
    return pa.schema([ARROW_SCHEMA.field(name).with_nullable(nullable) for name, nullable in columns])


def project(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """`batch` (some of ARROW_SCHEMA's columns) cut to `schema`'s columns: no copy, the arrays are
    shared."""
    if schema.names == batch.schema.names:
        return batch
    return pa.RecordBatch.from_arrays([batch.column(field.name) for field in schema], schema=schema)


BATCH_ROWS: Final = 65536
DATA_CAPACITY: Final = 4 << 20
MAX_DATA_CAPACITY: Final = (1 << 31) - 1  # Arrow binary's int32 offsets
NO_END_OF_STREAM: Final = (1 << 63) - 1
LINGER: Final = 0.05  # seconds a partly filled batch waits for more data


@attrs.frozen
class RecordingRange:
    """Messages of one recording whose start position is in [start, end); what one task reads."""

    recording_id: int
    start: int
    end: int
    session_id: int
    stream_id: int
    channel: str
    term_length: int


def local_channel(channel: str) -> str:
    """`channel` with `{host}` replaced by this host's address (the environment variable
    AERON_SPARK_HOST where set, else the address its host name resolves to): a remote archive
    answers and replays to each executor at its own address, with the same options everywhere."""
    if "{host}" not in channel:
        return channel
    host = os.environ.get("AERON_SPARK_HOST") or socket.gethostbyname(socket.gethostname())
    return channel.replace("{host}", host)


def open_archive(options: ArchiveOptions) -> AeronArchive:
    """A control session with the archive the options name, over a new client of the local driver
    in `aeronDir` (closed with the session)."""
    return AeronArchive.connect(
        aeron_dir=options.aeron_dir, control_channel=options.control_channel,
        control_stream_id=options.control_stream_id, response_channel=local_channel(options.response_channel),
        response_stream_id=options.response_stream_id, timeout=options.timeout)


class Columns:
    """Column buffers for one record batch, filled by aa_columns_poll (new buffers for each batch:
    a yielded batch keeps its own)."""

    def __init__(self, rows: int, data_capacity: int, start: int, end: int) -> None:
        self.struct = ffi.new("aa_columns_t *")
        self.struct.from_position = start
        self.struct.to_position = end
        self.row_capacity = rows
        self.data_capacity = data_capacity
        self._allocate()

    def _allocate(self) -> None:
        rows, s = self.row_capacity, self.struct
        self.data = pa.allocate_buffer(self.data_capacity)
        self.offsets = pa.allocate_buffer(4 * (rows + 1))
        self.positions = pa.allocate_buffer(8 * rows)
        self.reserved = pa.allocate_buffer(8 * rows)
        s.data = ffi.cast("uint8_t *", self.data.address)
        s.offsets = ffi.cast("int32_t *", self.offsets.address)
        s.positions = ffi.cast("int64_t *", self.positions.address)
        s.reserved_values = ffi.cast("int64_t *", self.reserved.address)
        s.data_capacity = self.data_capacity
        s.row_capacity = rows
        if lib.aa_columns_reset(s) < 0:  # pragma: no cover - the sizes above are valid
            raise last_error(InvalidArgumentError)

    def grow(self, required: int) -> None:
        """A message longer than the empty data buffer: a larger one (the batch is empty)."""
        if required > MAX_DATA_CAPACITY:
            raise MessageTooLongError(f"a message of at least {required} bytes does not fit an Arrow binary column")
        self.data_capacity = min(MAX_DATA_CAPACITY, max(required, 2 * self.data_capacity))
        self._allocate()

    @property
    def rows(self) -> int:
        return int(self.struct.rows)

    def take(self, part: RecordingRange, schema: pa.Schema = ARROW_SCHEMA) -> pa.RecordBatch:
        """The rows so far as a record batch of `schema` (ARROW_SCHEMA or some of its columns: only
        those are built); the columns start empty on new buffers."""
        s = self.struct
        rows, length = int(s.rows), int(s.data_length)
        arrays = []
        for field in schema:
            name = field.name
            if name == "data":
                array = pa.Array.from_buffers(pa.binary(), rows, [None, self.offsets[:4 * (rows + 1)],
                                                                  self.data[:length]], null_count=0)
            elif name == "position":
                array = pa.Array.from_buffers(pa.int64(), rows, [None, self.positions[:8 * rows]], null_count=0)
            elif name == "reserved_value":
                array = pa.Array.from_buffers(pa.int64(), rows, [None, self.reserved[:8 * rows]], null_count=0)
            else:  # the same for the whole recording
                array = pa.repeat(pa.scalar(getattr(part, name), field.type), rows)
            arrays.append(array)
        batch = pa.RecordBatch.from_arrays(arrays, schema=schema)
        self._allocate()
        return batch


def _floor_term(position: int, term_length: int) -> int:
    return position - position % term_length


def _ceil_term(position: int, term_length: int) -> int:
    return -(-position // term_length) * term_length


def data_loss(options: ReadOptions, message: str) -> None:
    """failOnDataLoss: raise, or log and go on with what is left."""
    if options.fail_on_data_loss:
        raise DataLossError(f"{message} (set failOnDataLoss=false to read what is left instead)")
    log.warning("%s; reading what is left (failOnDataLoss=false)", message)


def _bounds(archive: AeronArchive, part: RecordingRange, options: ReadOptions) -> tuple[int, int, int, int] | None:
    """(from, to, replay start, replay end) of the range as the archive holds it now; None when
    nothing of it is left."""
    try:
        descriptor = archive.list_recording(part.recording_id)
    except UnknownRecordingError:
        data_loss(options, f"recording {part.recording_id} is gone from the archive (purged): "
                           f"[{part.start}, {part.end}) cannot be read")
        return None
    low, high = part.start, part.end
    if low < descriptor.start_position:
        data_loss(options, f"recording {part.recording_id} now starts at {descriptor.start_position}: "
                           f"[{low}, {descriptor.start_position}) is gone")
        low = descriptor.start_position
    stopped = descriptor.stop_position != NULL_POSITION
    if stopped and high > descriptor.stop_position:
        data_loss(options, f"recording {part.recording_id} now stops at {descriptor.stop_position} (truncated): "
                           f"[{max(low, descriptor.stop_position)}, {high}) is gone")
        high = descriptor.stop_position
    if low >= high:
        return None
    replay_from = max(descriptor.start_position, _floor_term(low, part.term_length))
    replay_to = _ceil_term(high, part.term_length)
    if stopped:
        replay_to = min(replay_to, descriptor.stop_position)
    return low, high, replay_from, replay_to


def poll_range(
    archive: AeronArchive, part: RecordingRange, options: ReadOptions, *, batch_rows: int = BATCH_ROWS,
    max_rows: int | None = None,
) -> Iterator[Columns]:
    """Replay `part` and yield the Columns each time they hold a batch (take() empties them); with
    `max_rows` stop after that many messages. The caller's loop owns the batches."""
    bounds = _bounds(archive, part, options)
    if bounds is None:
        return
    low, high, replay_from, replay_to = bounds
    timeout = options.archive.timeout
    replay = archive.replay(part.recording_id, position=replay_from, length=replay_to - replay_from,
                            channel=local_channel(options.replay_channel), stream_id=options.replay_stream_id)
    with replay:
        deadline = time.monotonic() + timeout
        idle = IdleStrategy("backoff")
        while (image := replay.image) is None:
            if time.monotonic() > deadline:
                raise ArchiveTimeoutError(
                    f"the replay of recording {part.recording_id} on {options.replay_channel} stream "
                    f"{options.replay_stream_id} did not connect within {timeout} s: check replayChannel", None)
            idle.idle(0)
        pointer = image._ptr
        remaining = max_rows
        columns = Columns(batch_rows if remaining is None else min(batch_rows, remaining), DATA_CAPACITY, low, high)
        struct = columns.struct
        last_position = replay_from
        last_progress = first_row = time.monotonic()
        poll = lib.aa_columns_poll
        while True:
            # the end of stream as it was BEFORE this poll: everything up to it is in the log then
            end_of_stream = lib.aa_image_end_of_stream_position(pointer)
            closed = bool(lib.aa_image_is_closed(pointer))
            added = poll(pointer, struct)
            if added == -2:
                columns.grow(int(struct.required))
                continue
            now = time.monotonic()
            if added > 0 and int(struct.rows) == added:
                first_row = now
            rows = int(struct.rows)
            # a batch goes when it is full or the range is done, or when data stops coming for a while
            if rows and (struct.full or struct.done or (added == 0 and now - first_row > LINGER)):
                yield columns
                if remaining is not None:
                    remaining -= rows
                    if remaining <= 0:
                        return
                    columns.row_capacity = min(batch_rows, remaining)
                    columns._allocate()
            if struct.done:
                return
            position = int(struct.position)
            if position != last_position:
                last_position, last_progress = position, now
                idle.reset()
                continue
            if added > 0:
                continue
            # The replay is over when the image is gone or the poller stands at its end of stream:
            # the archive ends a replay once it has SENT everything, which may be terms ahead of
            # the poller (a poll that added nothing because the batch was full read nothing).
            if closed or position >= end_of_stream:
                if int(struct.rows):
                    first_row = now - LINGER - 1.0  # hand out what was read first
                    continue
                if position < high:
                    data_loss(options, f"the replay of recording {part.recording_id} ended at {position}, "
                                       f"before {high}: the recording was truncated or purged while it was read")
                return
            if now - last_progress > timeout:
                raise ArchiveTimeoutError(
                    f"the replay of recording {part.recording_id} made no progress for {timeout} s at position "
                    f"{position} (reading [{low}, {high}))", None)
            idle.idle(0)


def read_range(archive: AeronArchive, part: RecordingRange, options: ReadOptions,
               schema: pa.Schema = ARROW_SCHEMA) -> Iterator[pa.RecordBatch]:
    """The messages of `part` as Arrow record batches of `schema` (the data source's, or some of
    its columns)."""
    for columns in poll_range(archive, part, options):
        yield columns.take(part, schema)


def end_after_rows(archive: AeronArchive, part: RecordingRange, options: ReadOptions, max_rows: int) -> tuple[int, int]:
    """(rows, end): where a range from part.start holding at most `max_rows` messages ends (part.end
    when it holds no more than that), counted over a replay."""
    counted = 0
    end = part.end
    for columns in poll_range(archive, part, options, max_rows=max_rows):
        counted += columns.rows
        position = int(columns.struct.position)
        columns.struct.rows = 0  # counted only: reuse the buffers
        columns.struct.data_length = 0
        if counted >= max_rows:
            end = position
    return counted, end


def describe(descriptor: Any) -> str:
    return f"recording {descriptor.recording_id} ({descriptor.original_channel} stream {descriptor.stream_id})"
