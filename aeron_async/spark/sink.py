"""The aeron sink: batch and Structured Streaming writes of a DataFrame to a channel and stream.

The writer objects are built in a driver-side planner process (where the schema and options are
checked, so bad input fails at query start) and pickled to the executors' Python workers, which
receive the rows as Arrow record batches (`DataSourceArrowWriter` / `DataSourceStreamArrowWriter`).
Each task attempt connects its own client (one per worker process, reused by later tasks), adds its
own exclusive publication (so each attempt is one session, and one recording), offers each Arrow
batch's messages straight from its buffers (the native `offer_batch` over an address/length vector
per message; back pressure waited out, bounded by `offerTimeout` without progress), ends with an
empty end-marker message, and with `durable=true`
waits until the archive has recorded everything it published before it returns. Each message's
reserved value says which micro-batch (or batch write), partition and attempt wrote it
(`provenance.py`; docs/spark.md), which is what the source's `dropRepeats=true` reads.
"""

from __future__ import annotations

import atexit
import os
import secrets
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

import attrs
import numpy as np
import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import BinaryType, IntegerType, LongType, StringType, StructType

from .._ffi import ffi, lib
from ..client import Aeron, ExclusivePublication, OfferResult
from ..errors import AeronError, ConfigurationError, SinkError, SinkTimeoutError
from ..idle import IdleStrategy
from . import provenance
from .options import SinkOptions, parse_sink_options

DATA_COLUMN = "data"
_VECTOR_BYTES = 16  # sizeof(aa_iovec_t): a pointer and a size_t
_EMPTY_MESSAGE = np.zeros((1, 2), dtype=np.uint64)  # the end marker: no bytes
RESERVED_COLUMN = "reserved_value"


@attrs.frozen
class SinkCommitMessage(WriterCommitMessage):
    """What one task attempt published: its session, how many messages, where its stream ended."""

    partition: int
    attempt: int
    session_id: int
    messages: int
    position: int
    recording_id: int | None


@attrs.frozen
class TaskIdentity:
    """The task attempt a write belongs to (from Spark's TaskContext, or given by a test)."""

    kind: int
    batch: int
    partition: int
    attempt: int


def check_schema(schema: StructType) -> tuple[bool, bool]:
    """Check the DataFrame's schema for the sink; returns (data is a string, has reserved_value).
    Raises ConfigurationError naming what is wrong and how to fix it."""
    names = [field.name for field in schema.fields]
    if DATA_COLUMN not in names:
        raise ConfigurationError(
            f"the aeron sink needs a column named 'data' (binary or string) holding each message; the DataFrame "
            f"has {names}: select or alias one, e.g. df.selectExpr('to_json(struct(*)) AS data')")
    extra = [name for name in names if name not in (DATA_COLUMN, RESERVED_COLUMN)]
    if extra:
        raise ConfigurationError(
            f"the aeron sink writes only 'data' and the optional 'reserved_value'; the DataFrame also has {extra}: "
            "select just those columns (Spark's functions such as to_json or concat build 'data')")
    data_type = schema[DATA_COLUMN].dataType
    if not isinstance(data_type, (BinaryType, StringType)):
        raise ConfigurationError(
            f"the aeron sink's 'data' column must be binary or string, not {data_type.simpleString()}: "
            "cast it, e.g. CAST(data AS BINARY), or build it with to_json")
    has_reserved = RESERVED_COLUMN in names
    if has_reserved and not isinstance(schema[RESERVED_COLUMN].dataType, (LongType, IntegerType)):
        raise ConfigurationError(
            f"the aeron sink's 'reserved_value' column must be a long (bigint), not "
            f"{schema[RESERVED_COLUMN].dataType.simpleString()}: cast it with CAST(reserved_value AS BIGINT)")
    return isinstance(data_type, StringType), has_reserved


# ---- one client per worker process ---------------------------------------------------------------

_clients: dict[str | None, Aeron] = {}
_clients_pid = 0
_clients_lock = threading.Lock()


def _client(aeron_dir: str | None, timeout: float) -> Aeron:
    """This worker's client of the driver in `aeron_dir` (Python workers are reused across tasks,
    so later tasks skip the connect); a new one after a fork or once the old one closed."""
    global _clients_pid
    with _clients_lock:
        if _clients_pid != os.getpid():
            _clients.clear()
            _clients_pid = os.getpid()
        client = _clients.get(aeron_dir)
        if client is not None and not client.is_closed:
            try:
                client._raise_if_dead()  # timed out by the driver (a worker that stalled), or the driver is gone
            except AeronError:
                client.close()
                client = None
        if client is None or client.is_closed:
            client = Aeron.connect(aeron_dir, driver_timeout=timeout)
            _clients[aeron_dir] = client
        return client


@atexit.register
def _close_clients() -> None:
    if _clients_pid == os.getpid():
        for client in _clients.values():
            client.close()
    _clients.clear()


# ---- the write path --------------------------------------------------------------------------------

class _Publisher:
    """One task attempt's exclusive publication and the bounded waits around it."""

    def __init__(self, options: SinkOptions, identity: TaskIdentity) -> None:
        self.options = options
        self.identity = identity
        self.reserved = provenance.encode(identity.kind, identity.batch, identity.partition, identity.attempt)
        self.client = _client(options.archive.aeron_dir, options.connect_timeout)
        self.publication: ExclusivePublication = self.client.add_exclusive_publication(
            options.channel, options.stream_id)
        self.idle = IdleStrategy("backoff")
        self.messages = 0
        self._accepted = ffi.new("size_t *")
        self._wait_connected()

    def _where(self) -> str:
        return f"{self.options.channel} stream {self.options.stream_id} (session {self.publication.session_id})"

    def _wait_connected(self) -> None:
        deadline = time.monotonic() + self.options.connect_timeout
        while not self.publication.is_connected:
            self.client._raise_if_dead()
            if time.monotonic() > deadline:
                self.publication.close()
                raise SinkTimeoutError(
                    f"no subscriber connected to {self._where()} within {self.options.connect_timeout:g} s: the "
                    "sink publishes only to a stream someone reads (start the subscriber, or the archive's "
                    "recording of it, first), or raise connectTimeout")
            self.idle.idle(0)
        self.idle.reset()

    def offer(self, vectors: Any, reserved: int) -> None:
        """Offer every message of `vectors` (an n x 2 uint64 array of address, length: Arrow's
        buffers, see `_vectors`) with the native offer_batch (the GIL released), waiting out back
        pressure; no progress for offerTimeout raises SinkTimeoutError."""
        publication = self.publication
        timeout = self.options.offer_timeout
        count = len(vectors)
        base = vectors.ctypes.data
        accepted = self._accepted
        done = 0
        deadline = 0.0
        while done < count:
            ptr = publication._checked()  # ClosedError once closed
            result = lib.aa_publication_offer_batch(
                ptr, ffi.cast("aa_iovec_t *", base + done * _VECTOR_BYTES), count - done, reserved, accepted)
            if accepted[0] > 0:
                done += accepted[0]
                deadline = 0.0
                self.idle.reset()
                continue
            if result < OfferResult.ADMIN_ACTION:
                result = publication._fail(result)  # raises for errors and closure
            if result == OfferResult.MAX_POSITION_EXCEEDED:
                raise ConfigurationError(
                    f"{self._where()} reached its maximum position: use a longer term-length on the channel")
            now = time.monotonic()
            if deadline == 0.0:
                deadline = now + timeout
            elif now > deadline:
                state = "not connected" if result == OfferResult.NOT_CONNECTED else "back-pressured"
                raise SinkTimeoutError(
                    f"{self._where()} stayed {state} for {timeout:g} s with {count - done} messages of this batch "
                    f"unsent ({self.messages + done} sent by this task): the reader is too slow or gone; raise "
                    "offerTimeout if it only pauses")
            self.idle.idle(0)
        self.messages += count

    def finish(self) -> SinkCommitMessage:
        """End the attempt (the end marker), wait for the archive with durable=true, and close."""
        identity = self.identity
        end = provenance.encode(identity.kind, identity.batch, identity.partition, identity.attempt, end=True)
        self.offer(_EMPTY_MESSAGE, end)
        self.messages -= 1
        position = self.publication.position
        recording_id = None
        if self.options.durable:
            recording_id = self._wait_recorded(position)
        return SinkCommitMessage(identity.partition, identity.attempt, self.publication.session_id,
                                 self.messages, position, recording_id)

    def _wait_recorded(self, position: int) -> int:
        from ..archive import AeronArchive
        from .columns import local_channel

        options = self.options
        deadline = time.monotonic() + options.durable_timeout
        where = options.archive
        # `{host}` in responseChannel: this executor's address, as for a read (options.py)
        archive = AeronArchive.connect(
            self.client, control_channel=where.control_channel, control_stream_id=where.control_stream_id,
            response_channel=local_channel(where.response_channel), response_stream_id=where.response_stream_id,
            timeout=where.timeout)
        try:
            recording_id: int | None = None
            while True:
                if recording_id is None:
                    recording_id = archive.find_last_matching_recording(
                        "", options.stream_id, session_id=self.publication.session_id)
                if recording_id is not None and archive.max_recorded_position(recording_id) >= position:
                    return recording_id
                if time.monotonic() > deadline:
                    what = ("no recording of it appeared" if recording_id is None
                            else f"recording {recording_id} is at {archive.max_recorded_position(recording_id)}")
                    raise SinkTimeoutError(
                        f"durable=true: the archive did not record {self._where()} up to position {position} "
                        f"within {options.durable_timeout:g} s ({what}): start a recording of the sink's channel "
                        "and stream on the archive (archive.start_recording), or raise durableTimeout")
                time.sleep(0.002)
        finally:
            archive.close()

    def close(self) -> None:
        self.publication.close()


def _vectors(column: pa.Array | pa.ChunkedArray, as_string: bool) -> tuple[Any, pa.Array]:
    """The column's messages as an n x 2 uint64 array of (address, length) into its own Arrow
    buffers (strings are their UTF-8 bytes; a null is an empty message), and the Arrow array those
    addresses point into (keep it alive while offering). No Python object per message."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    large = pa.types.is_large_string(column.type) or pa.types.is_large_binary(column.type)
    column = column.cast(pa.large_binary() if large else pa.binary())
    if column.null_count:
        column = column.fill_null(b"")
    rows = len(column)
    _, offsets_buffer, data_buffer = column.buffers()
    width = 8 if large else 4
    offsets = np.frombuffer(offsets_buffer, dtype=np.int64 if large else np.int32, count=rows + 1,
                            offset=column.offset * width).astype(np.uint64)
    vectors = np.empty((rows, 2), dtype=np.uint64)
    vectors[:, 0] = offsets[:-1] + np.uint64(data_buffer.address if data_buffer is not None else 0)
    vectors[:, 1] = offsets[1:] - offsets[:-1]
    return vectors, column


def publish(options: SinkOptions, identity: TaskIdentity, batches: Iterable[pa.RecordBatch],
            data_is_string: bool, has_reserved: bool) -> SinkCommitMessage:
    """Publish every row of `batches` as one task attempt (the whole write path of a task). An
    attempt without rows publishes nothing (no session, no end marker): nothing of it can repeat."""
    publisher: _Publisher | None = None
    try:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            if publisher is None:
                publisher = _Publisher(options, identity)
            messages, keep = _vectors(batch.column(DATA_COLUMN), data_is_string)
            if not has_reserved:
                publisher.offer(messages, publisher.reserved)
                continue
            # runs of equal reserved values go in one offer each; a null takes the sink's value
            reserved = batch.column(RESERVED_COLUMN).fill_null(publisher.reserved).to_pylist()
            start = 0
            for index in range(1, len(reserved) + 1):
                if index == len(reserved) or reserved[index] != reserved[start]:
                    publisher.offer(messages[start:index], int(reserved[start]))
                    start = index
        if publisher is None:
            return SinkCommitMessage(identity.partition, identity.attempt, 0, 0, 0, None)
        return publisher.finish()
    finally:
        if publisher is not None:
            publisher.close()


def _task_identity(kind: int, write_id: int) -> TaskIdentity:
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is None:
        raise SinkError("the aeron sink's write() runs in a Spark task (no TaskContext here)")
    if kind == provenance.KIND_STREAM:
        batch_id = context.getLocalProperty("streaming.sql.batchId")
        if batch_id is None:
            raise SinkError("the aeron stream sink found no micro-batch id in its task's properties")
        batch = int(batch_id)
    else:
        batch = write_id
    return TaskIdentity(kind, batch, context.partitionId(), context.attemptNumber())


class _SinkWriter:
    """What the batch and stream writers share: the options and schema checked at query start."""

    def __init__(self, options: dict[str, str], schema: StructType) -> None:
        self.sink_options = parse_sink_options(options)
        self.data_is_string, self.has_reserved = check_schema(schema)

    def _check_messages(self, messages: list[WriterCommitMessage | None], what: str) -> None:
        failed = sum(1 for message in messages if message is None)
        if failed:
            raise SinkError(f"{what}: {failed} of {len(messages)} tasks failed")


class AeronBatchWriter(_SinkWriter, DataSourceArrowWriter):
    """`df.write.format("aeron").mode("append")...save()`: every row published once per
    successful task attempt; the write's id (random, 32 bits) goes in the reserved values."""

    def __init__(self, options: dict[str, str], schema: StructType, overwrite: bool = False) -> None:
        super().__init__(options, schema)
        if overwrite:
            raise ConfigurationError(
                "the aeron sink appends to a stream and cannot overwrite it: use .mode('append')")
        self.write_id = secrets.randbits(32)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> SinkCommitMessage:
        identity = _task_identity(provenance.KIND_BATCH_WRITE, self.write_id)
        return publish(self.sink_options, identity, iterator, self.data_is_string, self.has_reserved)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        self._check_messages(messages, "aeron batch write")

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        # what finished attempts published stays on the stream (a stream cannot be taken back);
        # the source's dropRepeats=true keeps only finished attempts (docs/spark.md)
        return None


class AeronStreamWriter(_SinkWriter, DataSourceStreamArrowWriter):
    """`df.writeStream.format("aeron")...start()`: each micro-batch's rows, the batch id in the
    reserved values (a batch re-run after a restart carries the same id)."""

    def __init__(self, options: dict[str, str], schema: StructType, overwrite: bool = False) -> None:
        super().__init__(options, schema)
        if overwrite:
            raise ConfigurationError(
                "the aeron sink appends to a stream: use outputMode('append'), not 'complete'")

    def write(self, iterator: Iterator[pa.RecordBatch]) -> SinkCommitMessage:
        identity = _task_identity(provenance.KIND_STREAM, 0)
        return publish(self.sink_options, identity, iterator, self.data_is_string, self.has_reserved)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        self._check_messages(messages, f"aeron stream write of batch {batchId}")

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        return None
