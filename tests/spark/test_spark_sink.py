"""The Spark sink's write path, its options and schema checks, and dropRepeats, without Spark's
scheduler: a task attempt is `sink.publish` with an explicit TaskIdentity, so a retry (an attempt
that dies half way, then one that finishes; a speculative copy) is simulated deterministically.
What goes through Spark itself is in test_spark_pipeline.py."""

from __future__ import annotations

import collections
import os
import pickle
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import attrs
import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")

import aeron_async  # noqa: E402
from aeron_async.archive import AeronArchive  # noqa: E402
from aeron_async.errors import ConfigurationError, SinkTimeoutError  # noqa: E402
from aeron_async.spark import provenance, repeats, sink  # noqa: E402
from aeron_async.spark.columns import RecordingRange  # noqa: E402
from aeron_async.spark.datasource import SCHEMA, AeronDataSource  # noqa: E402
from aeron_async.spark.options import parse_read_options, parse_sink_options  # noqa: E402
from pyspark import cloudpickle  # noqa: E402
from support.archive_e2e import archive_beside_driver  # noqa: E402
from conftest import TEST_DRIVER_SETTINGS, new_aeron_dir, wait_for  # noqa: E402
from pyspark.sql.types import BinaryType, IntegerType, LongType, StringType, StructField, StructType  # noqa: E402


def test_reserved_value_layout_round_trips() -> None:
    value = provenance.encode(provenance.KIND_BATCH_WRITE, (1 << 32) - 1, (1 << 20) - 1, 300)
    assert value < 0  # the tag's top bit: a signed 64-bit value
    assert provenance.decode(value) == provenance.Provenance(1, (1 << 32) - 1, (1 << 20) - 1, 300 & 0xFF, False)
    end = provenance.encode(provenance.KIND_STREAM, 7, 3, 1, end=True)
    assert provenance.decode(end) == provenance.Provenance(0, 7, 3, 1, True)
    assert provenance.is_end_marker(end) and not provenance.is_end_marker(value)
    assert provenance.decode(0) is None and provenance.decode(12345) is None
    with pytest.raises(ValueError, match="partitions"):
        provenance.encode(0, 0, 1 << 20, 0)
    with pytest.raises(ValueError, match="32-bit"):
        provenance.encode(0, 1 << 32, 0, 0)
    batch = pa.record_batch({"reserved_value": pa.array([value, end, 0, provenance.encode(1, 1, 1, 1, True)],
                                                        pa.int64())})
    assert repeats.drop_end_markers(batch).column(0).to_pylist() == [value, 0]


def test_records_spark_ships_pickle_equal_and_stay_frozen() -> None:
    """Options, ranges, task identities and commit messages travel between Spark's driver and its
    executors pickled (cloudpickle for the readers and writers, pickle for commit messages): each
    comes back equal, with the same hash, and still immutable."""
    sink_options = parse_sink_options({"channel": "aeron:ipc", "streamId": "7", "durable": "true"})
    read_options = attrs.evolve(parse_read_options({"recordingIds": "3,5"}, streaming=False),
                                columns=(("data", False), ("position", False)))
    records: list[Any] = [
        sink_options, sink_options.archive, read_options,
        RecordingRange(3, 0, 65536, 11, 7, "aeron:ipc", 65536),
        sink.TaskIdentity(provenance.KIND_STREAM, 4, 2, 1),
        sink.SinkCommitMessage(partition=2, attempt=1, session_id=11, messages=100, position=6400, recording_id=3),
    ]
    for record in records:
        for dumps, loads in ((pickle.dumps, pickle.loads), (cloudpickle.dumps, pickle.loads)):
            copy = loads(dumps(record))
            assert type(copy) is type(record) and copy == record and copy is not record
            if type(record) is not type(read_options):  # ReadOptions may hold dicts of positions: unhashable
                assert hash(copy) == hash(record)
        field = attrs.fields(type(record))[0].name
        with pytest.raises(AttributeError):
            setattr(record, field, getattr(record, field))
    assert read_options.recording_ids == (3, 5) and read_options.columns == (("data", False), ("position", False))
    # a reader is what Spark pickles to its executors; it carries the parsed options as they were
    reader = AeronDataSource({"recordingIds": "3"}).reader(SCHEMA)
    assert cloudpickle.loads(cloudpickle.dumps(reader)).options == reader.options  # type: ignore[attr-defined]


def test_options_and_schema_errors_name_the_fix() -> None:
    good = {"channel": "aeron:ipc", "streamId": "7"}
    parsed = parse_sink_options(good)
    assert (parsed.channel, parsed.stream_id, parsed.durable, parsed.offer_timeout) == ("aeron:ipc", 7, False, 30.0)
    for options, message in [
        ({"streamId": "7"}, "needs option 'channel'"),
        ({"channel": "aeron:ipc"}, "needs option 'streamId'"),
        ({**good, "channel": "udp://x"}, "not a channel to publish on"),
        ({**good, "channel": "aeron:udp?term-length=64k"}, "needs endpoint=host:port"),
        ({**good, "channel": "aeron:ipc?term-length"}, "not key=value"),
        ({**good, "streamId": "seven"}, "is not an integer"),
        ({**good, "durable": "maybe"}, "true or false"),
        ({**good, "startingPositions": "earliest"}, "unknown option 'startingPositions'"),
        ({**good, "path": "x"}, "takes no path"),
    ]:
        with pytest.raises(ConfigurationError, match=message):
            parse_sink_options(options)
    # dropRepeats is a batch-read option: a streaming read cannot know whether an attempt will finish
    from aeron_async.spark.options import parse_read_options

    source = {"channel": "aeron:ipc", "streamId": "7", "dropRepeats": "true"}
    assert parse_read_options(source, streaming=False).drop_repeats
    with pytest.raises(ConfigurationError, match="dropRepeats applies to spark.read only"):
        parse_read_options(source, streaming=True)
    # readStream: the refusal comes from the reader's first call, and stop() (which pyspark's runner
    # calls in a `finally`) works, so no UnboundLocalError of pyspark's follows our message
    from aeron_async.spark.datasource import SCHEMA, AeronDataSource

    reader = AeronDataSource(source).streamReader(SCHEMA)
    with pytest.raises(ConfigurationError, match="dropRepeats applies to spark.read only"):
        reader.initialOffset()
    reader.stop()
    data = StructField("data", BinaryType())
    assert sink.check_schema(StructType([data])) == (False, False)
    assert sink.check_schema(StructType([StructField("data", StringType()),
                                         StructField("reserved_value", LongType())])) == (True, True)
    for schema, message in [
        (StructType([StructField("value", BinaryType())]), "needs a column named 'data'"),
        (StructType([StructField("data", IntegerType())]), "must be binary or string"),
        (StructType([data, StructField("symbol", StringType())]), "also has \\['symbol'\\]"),
        (StructType([data, StructField("reserved_value", StringType())]), "must be a long"),
    ]:
        with pytest.raises(ConfigurationError, match=message):
            sink.check_schema(schema)
    with pytest.raises(ConfigurationError, match="mode\\('append'\\)"):
        sink.AeronBatchWriter(good, StructType([data]), overwrite=True)


@pytest.fixture
def driver_dir() -> Iterator[str]:
    path = new_aeron_dir()
    with aeron_async.MediaDriver.launch(aeron_dir=path, **TEST_DRIVER_SETTINGS):
        yield path
    shutil.rmtree(path, ignore_errors=True)


def _batches(values: list[bytes], size: int) -> list[Any]:
    return [pa.record_batch({"data": pa.array(values[i:i + size], pa.binary())}) for i in range(0, len(values), size)]


def test_publish_delivers_every_row_with_its_provenance_and_reserved_values(driver_dir: str) -> None:
    options = parse_sink_options({"channel": "aeron:ipc?term-length=64k", "streamId": "31", "aeronDir": driver_dir})
    with aeron_async.Aeron.connect(driver_dir) as client:
        subscription = client.add_subscription("aeron:ipc", 31)
        identity = sink.TaskIdentity(provenance.KIND_STREAM, 12, 3, 1)
        values = [f"row-{i}".encode() * (1 + i % 7) for i in range(20_000)]
        got: list[Any] = []
        import threading

        def read() -> None:  # every message: the rows and end marker of each publish (20,000 + 1, 4 + 1)
            while len(got) < len(values) + 1 + 4 + 1:
                got.extend(subscription.poll_messages(4096))

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        # back pressure: a 64 KiB term holds far fewer than 20,000 messages, so offers are refused
        # and retried while the reader drains it
        message = sink.publish(options, identity, iter(_batches(values, 3000)), False, False)
        strings = pa.record_batch({"data": pa.array(["a", None, "c", "d"]),
                                   "reserved_value": pa.array([5, 5, None, 9], pa.int64())})
        sink.publish(options, sink.TaskIdentity(0, 12, 4, 0), iter([strings]), True, True)
        reader.join(30)
        assert not reader.is_alive()
    assert message.messages == len(values) and message.partition == 3 and message.attempt == 1
    first = [m for m in got if m.session_id == message.session_id]
    assert [m.data for m in first[:-1]] == values
    assert {provenance.decode(m.reserved_value) for m in first[:-1]} == {provenance.Provenance(0, 12, 3, 1)}
    assert provenance.decode(first[-1].reserved_value) == provenance.Provenance(0, 12, 3, 1, True)
    second = [m for m in got if m.session_id != message.session_id]
    own = provenance.encode(0, 12, 4, 0)
    assert [(m.data, m.reserved_value) for m in second[:-1]] == [(b"a", 5), (b"", 5), (b"c", own), (b"d", 9)]
    assert provenance.decode(second[-1].reserved_value) == provenance.Provenance(0, 12, 4, 0, True)


def test_no_subscriber_is_a_bounded_clear_error(driver_dir: str) -> None:
    options = parse_sink_options({"channel": "aeron:ipc", "streamId": "32", "aeronDir": driver_dir,
                                  "connectTimeout": "0.2"})
    with pytest.raises(SinkTimeoutError, match="no subscriber connected to aeron:ipc stream 32"):
        sink.publish(options, sink.TaskIdentity(1, 1, 0, 0), iter(_batches([b"x"], 1)), False, False)
    # an attempt without rows publishes nothing, so it needs no subscriber
    empty = pa.record_batch({"data": pa.array([], pa.binary())})
    assert sink.publish(options, sink.TaskIdentity(1, 1, 1, 0), iter([empty]), False, False).messages == 0


class _Dies(Exception):
    pass


def _dying(batches: list[Any], after: int) -> Iterator[Any]:
    """The batches of a task attempt that fails after handing `after` of them to the writer."""
    yield from batches[:after]
    raise _Dies("the task attempt fails half way")


def test_retried_and_speculative_attempts_are_dropped_exactly_and_durable_waits_for_the_archive() -> None:
    aeron_dir = new_aeron_dir()
    archive_dir = tempfile.mkdtemp(prefix="aa-sink-archive-")
    channel, stream = "aeron:ipc?term-length=256k", 33
    try:
        with archive_beside_driver(aeron_dir, archive_dir), AeronArchive.connect(aeron_dir=aeron_dir) as archive:
            archive.start_recording(channel, stream)
            options = parse_sink_options({"channel": channel, "streamId": str(stream), "aeronDir": aeron_dir,
                                          "durable": "true", "durableTimeout": "20"})
            part0 = [f"p0-{i}".encode() for i in range(5000)]
            part1 = [f"p1-{i}".encode() for i in range(3000)]
            kind, batch = provenance.KIND_BATCH_WRITE, 4242
            # partition 0: attempt 0 dies after two of its five batches (they arrived), attempt 1 finishes
            with pytest.raises(_Dies):
                sink.publish(options, sink.TaskIdentity(kind, batch, 0, 0), _dying(_batches(part0, 1000), 2),
                             False, False)
            retried = sink.publish(options, sink.TaskIdentity(kind, batch, 0, 1), iter(_batches(part0[::-1], 1000)),
                                   False, False)
            # partition 1: attempt 0 finishes, a speculative attempt 1 finishes too (rows in another order)
            first = sink.publish(options, sink.TaskIdentity(kind, batch, 1, 0), iter(_batches(part1, 700)),
                                 False, False)
            speculative = sink.publish(options, sink.TaskIdentity(kind, batch, 1, 1),
                                       iter(_batches(part1[::-1], 700)), False, False)
            # durable: each finished attempt returned only once its recording held all it published
            for message in (retried, first, speculative):
                assert message.recording_id is not None
                assert archive.max_recorded_position(message.recording_id) >= message.position
            # a stream of someone else's messages on the same channel is read as it is
            with aeron_async.Aeron.connect(aeron_dir) as client:
                other = client.add_exclusive_publication(channel, stream)
                wait_for(lambda: other.is_connected, 10, what="recording of the other publication")
                assert other.offer_batch([b"other-1", b"other-2"], 77) == 2
                end = other.position
                other_session = other.session_id
                other.close()

            def all_recordings() -> list[Any]:
                found = archive.list_recordings(channel, stream)
                return found if len(found) == 5 and all(not d.is_active for d in found) else []

            descriptors = wait_for(all_recordings, 20, interval=0.01, what="five stopped recordings")
            by_session = {d.session_id: d.recording_id for d in descriptors}
            assert archive.max_recorded_position(by_session[other_session]) == end
            dropped = repeats.recordings_to_drop(archive, descriptors)
            assert dropped == {by_session[speculative.session_id]} | (
                set(by_session.values()) - {by_session[s.session_id] for s in (retried, first, speculative)}
                - {by_session[other_session]})
            kept: collections.Counter[bytes] = collections.Counter()
            for descriptor in descriptors:
                if descriptor.recording_id in dropped:
                    continue
                with archive.replay(descriptor.recording_id, follow=False) as replay:
                    for message in replay.messages(timeout=10):
                        if not provenance.is_end_marker(message.reserved_value):
                            kept[message.data] += 1
            assert kept == collections.Counter(part0 + part1 + [b"other-1", b"other-2"])
    finally:
        shutil.rmtree(archive_dir, ignore_errors=True)
        shutil.rmtree(aeron_dir, ignore_errors=True)
