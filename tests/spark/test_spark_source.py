"""The `aeron` Spark data source, read side (docs/spark.md, "Reading"), on a real local
SparkSession (the shared `spark` fixture) over an archive beside a driver.

The module's recordings are made once: 1,000,000 small messages (8 bytes: their index) over IPC,
and 12,000 of mixed sizes, fragmented ones included. Every check compares what Spark
returns with what was published: bytes, positions (each message's end), reserved values, each message once.
Each query through Spark runs through both connectors (the `connector` fixture: the JVM connector,
which reads the archive's files in archiveDir, the same without archiveDir, reading over the
archive's control protocol as the Python source does, and the Python source).
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
from support.archive_e2e import Stream, archive_beside_driver, archive_clients, free_udp_port, record, wait_recorded
from conftest import new_aeron_dir
from support.spark_fixtures import CONNECTORS, REMOTE, SPARK_DRIVER_SETTINGS, Connector

pa = pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")

MILLION = 1_000_000
FRAME = 64  # an 8-byte message: 32-byte header + 8, aligned to 32
BIG_STREAM = 4101
MIXED_STREAM = 4102
LIVE_STREAM = 4103
SEGMENTED_STREAM = 4104
MIXED_TERM = 256 * 1024  # the mixed recording's term length: 12,000 messages in 6 terms


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

    def read(self, connector: Connector, **extra: Any) -> dict[str, str]:
        """options(**extra) with what `connector` needs to read this archive."""
        return {**self.options(**extra), **connector.read_options(self.archive_dir)}


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
    with archive_clients(tmp_path_factory, "spark-archive", SPARK_DRIVER_SETTINGS) as (
            aeron_dir, archive_dir, client, archive):
        big_publication = client.add_exclusive_publication("aeron:ipc", BIG_STREAM)
        _, big = record(archive, "aeron:ipc", BIG_STREAM)
        reserved = array("q")
        publish_million(big_publication, reserved)
        mixed_publication = client.add_exclusive_publication("aeron:ipc?term-length=256k", MIXED_STREAM)
        _, mixed = record(archive, "aeron:ipc", MIXED_STREAM)
        stream = Stream(12000)
        stream.publish(mixed_publication)
        wait_recorded(archive, big, big_publication.position)
        wait_recorded(archive, mixed, mixed_publication.position)
        archive.stop_recording("aeron:ipc", BIG_STREAM)
        archive.stop_recording("aeron:ipc", MIXED_STREAM)
        big_publication.close()
        mixed_publication.close()
        yield Recorded(aeron_dir, archive_dir, big, reserved, mixed, stream, client, archive)


@pytest.fixture(params=["python", "jvm", "remote"])
def connector(request: Any, spark: Any) -> Connector:
    """The shared fixture's two connectors, and the JVM connector reading a remote archive."""
    return REMOTE if request.param == "remote" else CONNECTORS[request.param]


def load(spark: Any, connector: Connector, options: dict[str, str]) -> Any:
    return spark.read.format(connector.format).options(**options).load()


def test_a_million_messages_are_read_once_each_with_their_positions(spark: Any, connector: Connector,
                                                                   recorded: Recorded) -> None:
    from aeron_async.spark.reader import AeronBatchReader

    options = recorded.options(recordingIds=recorded.big, maxBytesPerPartition="16m")
    plan = AeronBatchReader(read_options(**options)).partitions()
    assert len(plan) == 4  # 64 MB in four ranges of 16 MB: four tasks read the one recording
    table = load(spark, connector, {**options, **connector.read_options(recorded.archive_dir)}).toArrow().sort_by(
        "position")
    assert table.num_rows == MILLION
    # each message's end (as Message.position): the start of the next
    assert table.column("position").combine_chunks().equals(
        pa.array(range(FRAME, (MILLION + 1) * FRAME, FRAME), pa.int64()))
    assert table.column("data").combine_chunks().equals(
        pa.array([i.to_bytes(8, "little") for i in range(MILLION)], pa.binary()))
    assert table.column("reserved_value").combine_chunks().equals(pa.array(recorded.big_reserved, pa.int64()))
    assert set(table.column("recording_id").to_pylist()) == {recorded.big}
    assert set(table.column("stream_id").to_pylist()) == {BIG_STREAM}
    assert set(table.column("channel").to_pylist()) == {"aeron:ipc"}
    descriptor = recorded.archive.list_recording(recorded.big)
    assert set(table.column("session_id").to_pylist()) == {descriptor.session_id}


# --- ranges and partitions: exact ------------------------------------------------------------

def framed_length(size: int, max_payload: int = 1376) -> int:
    """The bytes a message of `size` takes in the log: its frames (IPC MTU 1408), each aligned to 32."""
    whole, rest = divmod(size, max_payload)
    frames = whole * (max_payload + 32) + ((rest + 32 + 31) // 32 * 32 if rest or not whole else 0)
    return frames


def start_of(stream: Stream, index: int) -> int:
    """Where message `index` starts: its end (what its offer returned) less its frames (the end of
    the message before it, unless padding ended the term between them)."""
    return stream.positions[index] - framed_length(stream.sizes[index])


def expected_messages(stream: Stream, start: int, end: int) -> list[tuple[int, bytes]]:
    """(position, bytes) of the messages of `stream` whose start position is in [start, end): the
    position column holds each message's end, as Message.position (what its offer returned)."""
    found = []
    for i in range(len(stream)):
        if start <= start_of(stream, i) < end:
            found.append((stream.positions[i], stream.blob[stream.offsets[i]:stream.offsets[i + 1]]))
    return found


def rows_of(table: Any) -> list[tuple[int, bytes]]:
    table = table.sort_by("position")
    return list(zip(table.column("position").to_pylist(), table.column("data").to_pylist()))


@pytest.fixture(scope="module")
def segmented(tmp_path_factory: Any) -> Iterator[tuple[str, str, int, Stream]]:
    """A recording in segment files of one 256 KiB term each (the archive's segment_file_length):
    (aeron dir, archive dir, its id, the messages); fragmented messages run from term to term."""
    with archive_clients(tmp_path_factory, "spark-segments", SPARK_DRIVER_SETTINGS, segment_file_length="256k") as (
            aeron_dir, archive_dir, client, archive):
        publication = client.add_exclusive_publication("aeron:ipc?term-length=256k", SEGMENTED_STREAM)
        _, recording = record(archive, "aeron:ipc", SEGMENTED_STREAM)
        stream = Stream(12000, seed=11)
        stream.publish(publication)
        wait_recorded(archive, recording, publication.position)
        archive.stop_recording("aeron:ipc", SEGMENTED_STREAM)
        publication.close()
        yield aeron_dir, archive_dir, recording, stream


def test_a_recording_in_many_segment_files_is_read_whole(spark: Any, connector: Connector,
                                                         segmented: tuple[str, str, int, Stream]) -> None:
    """The walk goes from segment file to segment file (and a fragmented message across them):
    every message once, with its bytes and position, and count() alike."""
    aeron_dir, archive_dir, recording, stream = segmented
    files = [name for name in os.listdir(archive_dir) if name.startswith(f"{recording}-") and name.endswith(".rec")]
    assert len(files) >= 5, files
    options = {"aeronDir": aeron_dir, "timeout": "5", "recordingIds": str(recording),
               **connector.read_options(archive_dir)}
    df = load(spark, connector, options)
    assert rows_of(df.select("position", "data").toArrow()) == expected_messages(stream, 0, stream.positions[-1])
    assert df.count() == len(stream)


@pytest.mark.parametrize("given, expected", [(None, 2), ("16m", 4)])
def test_a_jvm_batch_read_splits_itself_over_the_default_parallelism(spark: Any, recorded: Recorded,
                                                                    given: str | None, expected: int) -> None:
    """Without maxBytesPerPartition the JVM connector splits a batch read evenly over Spark's default
    parallelism (2 in the suite's local[2] session: the 64 MB recording in two tasks), in whole
    terms; with it, in ranges of that size (four of 16 MB); the rows are the same either way."""
    options = recorded.read(CONNECTORS["jvm"], recordingIds=recorded.big,
                            **({} if given is None else {"maxBytesPerPartition": given}))
    assert spark.sparkContext.defaultParallelism == 2
    df = spark.read.format("aeron").options(**options).load()
    assert df.rdd.getNumPartitions() == expected
    assert df.selectExpr("count(*)", "count(DISTINCT position)", "min(position)", "max(position)").collect()[0][:] == (
        MILLION, MILLION, FRAME, MILLION * FRAME)


def test_partitions_split_a_recording_exactly_at_whole_terms(recorded: Recorded) -> None:
    """Without Spark: every range a plan makes is read by its own replay, and together they hold
    each message once, fragmented ones whole, whatever the split size and the positions given."""
    from aeron_async.spark.options import parse_read_options
    from aeron_async.spark.reader import AeronBatchReader

    stream = recorded.mixed_stream
    end = stream.positions[-1]
    term = MIXED_TERM
    cases = [("0", "latest", 1), (str(3 * term), "latest", 1),  # 1 byte: one term per partition
             (str(start_of(stream, 100) + 8), str(start_of(stream, 3500) - 8), 100_000)]
    for starting, ending, size in cases:
        options = {"aeronDir": recorded.aeron_dir, "recordingIds": str(recorded.mixed),
                   "startingPositions": json.dumps({str(recorded.mixed): int(starting)}),
                   "maxBytesPerPartition": str(size)}
        if ending != "latest":
            options["endingPositions"] = json.dumps({str(recorded.mixed): int(ending)})
        reader = AeronBatchReader(parse_read_options({k.lower(): v for k, v in options.items()}, streaming=False))
        partitions = reader.partitions()
        low, high = int(starting), end if ending == "latest" else int(ending)
        ranges = [(p.part.start, p.part.end) for p in partitions]
        assert ranges[0][0] == low and ranges[-1][1] == high
        assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:])), ranges
        assert all(r[1] % term == 0 for r in ranges[:-1]), ranges  # cut at term boundaries only
        if size == 1:
            assert len(ranges) == -(-high // term) - low // term
        got = []
        for partition in partitions:
            for batch in reader.read(partition):
                part_rows = rows_of(pa.Table.from_batches([batch]))
                # each message starts in its partition's range (its position is its end)
                assert all(partition.part.start <= position - framed_length(len(data)) < partition.part.end
                           for position, data in part_rows)
                got.extend(part_rows)
        assert sorted(got) == expected_messages(stream, low, high)


def test_a_position_range_read_by_spark_is_exact(spark: Any, connector: Connector, recorded: Recorded) -> None:
    stream = recorded.mixed_stream
    low, high = start_of(stream, 997 * 2 + 500) + 32, start_of(stream, 11000)  # from inside a fragmented message
    df = load(spark, connector, recorded.read(connector, recordingIds=recorded.mixed, maxBytesPerPartition="256k",
                                              startingPositions=json.dumps({str(recorded.mixed): low}),
                                              endingPositions=json.dumps({str(recorded.mixed): high})))
    assert rows_of(df.toArrow()) == expected_messages(stream, low, high)


def test_a_schema_chooses_columns_and_the_rows_stay_exact(spark: Any, connector: Connector,
                                                          recorded: Recorded) -> None:
    stream = recorded.mixed_stream
    low, high = start_of(stream, 1000), start_of(stream, 9000)
    options = recorded.read(connector, recordingIds=recorded.mixed, maxBytesPerPartition="256k",
                            startingPositions=json.dumps({str(recorded.mixed): low}),
                            endingPositions=json.dumps({str(recorded.mixed): high}))
    df = spark.read.format(connector.format).options(**options).schema("position bigint, data binary").load()
    table = df.toArrow()
    assert table.column_names == ["position", "data"]
    assert rows_of(table) == expected_messages(stream, low, high)
    only = spark.read.format(connector.format).options(**options).schema("stream_id int not null").load()
    assert only.count() == len(expected_messages(stream, low, high))
    assert {row.stream_id for row in only.distinct().collect()} == {MIXED_STREAM}


@pytest.mark.parametrize("fields, expected", [
    ([("position", "int")], "position int is not among them"),
    ([("data", "binary"), ("offset", "bigint")], "offset bigint is not among them"),
    ([("data", "binary"), ("data", "binary")], "names a column twice"),
    ([], "names no column"),
])
def test_a_schema_with_other_columns_is_a_clear_error(fields: list[tuple[str, str]], expected: str) -> None:
    from pyspark.sql.types import BinaryType, IntegerType, LongType, StructField, StructType

    from aeron_async.spark.datasource import SCHEMA, check_read_schema
    from aeron_async.spark.options import OptionError

    types = {"int": IntegerType(), "bigint": LongType(), "binary": BinaryType()}
    with pytest.raises(OptionError, match=expected):
        check_read_schema(StructType([StructField(name, types[kind]) for name, kind in fields]))
    assert check_read_schema(SCHEMA) is None
    assert check_read_schema(StructType([StructField("position", LongType())])) == (("position", True),)


def test_batch_and_stream_readers_hand_spark_the_chosen_columns() -> None:
    from pyspark.sql.types import BinaryType, LongType, StructField, StructType

    from aeron_async.spark.columns import ARROW_SCHEMA, output_schema
    from aeron_async.spark.datasource import SCHEMA, AeronDataSource

    chosen = StructType([StructField("position", LongType()), StructField("data", BinaryType(), nullable=False)])
    source = AeronDataSource({"recordingids": "1"})
    for reader in (source.reader(schema=chosen), source.streamReader(schema=chosen)):
        assert output_schema(reader.options.columns) == pa.schema(
            [pa.field("position", pa.int64()), pa.field("data", pa.binary(), nullable=False)])
    assert output_schema(source.reader(schema=SCHEMA).options.columns) is ARROW_SCHEMA


def test_a_schema_spark_rejects_fails_at_query_start(spark: Any, connector: Connector, recorded: Recorded) -> None:
    with pytest.raises(Exception, match="channel bigint is not among them"):
        spark.read.format(connector.format).options(**recorded.read(connector, recordingIds=recorded.mixed)).schema(
            "channel bigint").load().count()


def test_recordings_are_chosen_by_channel_and_stream(recorded: Recorded) -> None:
    from aeron_async.spark.reader import AeronBatchReader

    reader = AeronBatchReader(read_options(aeronDir=recorded.aeron_dir, channel="aeron:ipc", streamId=MIXED_STREAM))
    partitions = reader.partitions()
    assert {p.part.recording_id for p in partitions} == {recorded.mixed}
    table = pa.Table.from_batches([batch for p in partitions for batch in reader.read(p)])
    assert set(table.column("stream_id").to_pylist()) == {MIXED_STREAM}
    assert rows_of(table) == expected_messages(recorded.mixed_stream, 0, 1 << 62)


def test_spark_finds_the_source_when_installed() -> None:
    """Spark's data source discovery registers DefaultSource of top-level `pyspark_*` modules."""
    import pkgutil

    import pyspark_aeron

    from aeron_async.spark import AeronDataSource

    assert "pyspark_aeron" in {module.name for module in pkgutil.iter_modules()}
    assert pyspark_aeron.DefaultSource is AeronDataSource and AeronDataSource.name() == "aeron"


# --- streaming ----------------------------------------------------------------------------------

def run_available_now(spark: Any, connector: Connector, options: dict[str, str], checkpoint: str, sink: str,
                      timeout: float = 120) -> Any:
    query = (spark.readStream.format(connector.format).options(**options).load()
             .writeStream.format("parquet").option("path", sink).option("checkpointLocation", checkpoint)
             .trigger(availableNow=True).start())
    assert query.awaitTermination(timeout), f"the query did not end within {timeout} s"
    assert query.exception() is None, query.exception()
    return query


def test_available_now_reads_a_recording_in_batches_and_resumes_exactly_once(
        spark: Any, connector: Connector, recorded: Recorded, tmp_path: Any) -> None:
    """maxRecordsPerTrigger=4000 over 12,000 messages: three micro-batches of 4000. Then the query
    is 'killed' after batch 1 was planned (its offsets logged; its output and commit never made)
    and restarted from the checkpoint: batch 1 is re-run over the same offsets, batch 2 planned
    again, and the file sink holds every message exactly once."""
    checkpoint, sink = str(tmp_path / "checkpoint"), str(tmp_path / "out")
    options = recorded.read(connector, recordingIds=recorded.mixed, startingPositions="earliest",
                            maxRecordsPerTrigger=4000)
    query = run_available_now(spark, connector, options, checkpoint, sink)
    batches = [p for p in query.recentProgress if p["numInputRows"] > 0]
    assert [p["numInputRows"] for p in batches] == [4000, 4000, 4000]
    offsets = [json.loads(p["sources"][0]["endOffset"]) for p in batches]
    stream = recorded.mixed_stream
    assert offsets[-1] == {str(recorded.mixed): stream.positions[-1]}
    assert offsets[0] == {str(recorded.mixed): stream.positions[3999]}  # after the 4000th message
    with open(os.path.join(checkpoint, "offsets", "1")) as f:
        logged = f.read()
    # the kill: batch 1 planned (offsets/1 kept), nothing after it done
    for name in ("commits/1", "commits/2", "offsets/2", "_spark_metadata/1", "_spark_metadata/2"):
        folder, _, file = name.rpartition("/")
        root = sink if folder == "_spark_metadata" else checkpoint
        for path in (os.path.join(root, folder, file), os.path.join(root, folder, f".{file}.crc")):  # and its checksum
            if os.path.exists(path):
                os.remove(path)
    query = run_available_now(spark, connector, options, checkpoint, sink)
    with open(os.path.join(checkpoint, "offsets", "1")) as f:
        assert f.read() == logged
    assert [p["numInputRows"] for p in query.recentProgress if p["numInputRows"] > 0] == [4000, 4000]
    output = spark.read.parquet(sink)
    assert rows_of(output.toArrow()) == expected_messages(stream, 0, 1 << 62)


def test_available_now_ends_at_where_a_growing_recording_stood_at_start(
        spark: Any, connector: Connector, recorded: Recorded, tmp_path: Any) -> None:
    """A publisher keeps publishing while the query runs: the query reads in several batches,
    ends without waiting for it, and what it read is the recording from its start up to a position
    at least where the recording stood when the query was started: every message once, in order."""
    publication = recorded.client.add_exclusive_publication("aeron:ipc", LIVE_STREAM)
    subscription_id, live = record(recorded.archive, "aeron:ipc", LIVE_STREAM)
    stop = threading.Event()
    published = [0]

    def publish() -> None:
        """30,000 messages at once, then about 1,000 a second until stopped."""
        count = 0
        while not stop.is_set():
            batch = [i.to_bytes(8, "little") for i in range(count, count + (1000 if count < 30_000 else 10))]
            accepted = publication.offer_batch(batch)
            if accepted > 0:
                count += accepted
                published[0] = count
            if count >= 30_000:
                time.sleep(0.01)

    publisher = threading.Thread(target=publish, daemon=True)
    publisher.start()
    try:
        wait_recorded(recorded.archive, live, 30_000 * FRAME)
        before = recorded.archive.max_recorded_position(live)
        checkpoint, sink = str(tmp_path / "checkpoint"), str(tmp_path / "out")
        options = recorded.read(connector, recordingIds=live, startingPositions="earliest", maxRecordsPerTrigger=12_000)
        query = run_available_now(spark, connector, options, checkpoint, sink)
        assert publisher.is_alive()
        batches = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"] > 0]
        end = json.loads(query.recentProgress[-1]["sources"][0]["endOffset"])[str(live)]
        assert len(batches) >= 3 and all(n <= 12_000 for n in batches), batches
        assert end >= before and end % FRAME == 0
        table = spark.read.parquet(sink).toArrow().sort_by("position")
        assert table.column("position").to_pylist() == list(range(FRAME, end + FRAME, FRAME))
        assert table.column("data").to_pylist() == [i.to_bytes(8, "little") for i in range(end // FRAME)]
        assert recorded.archive.max_recorded_position(live) > end  # the publisher went on past it
    finally:
        stop.set()
        publisher.join(10)
        recorded.archive.stop_recording(subscription_id=subscription_id)
        publication.close()


# --- bad input: clear errors at query start --------------------------------------------------------

@pytest.mark.parametrize("options, expected", [
    ({"recordingIds": "987654"}, "recording 987654 \\(recordingIds\\) is not in the archive"),
    ({"recordingIds": "{mixed}", "endingPositions": '{{"{mixed}": 999999999}}'}, "past its end"),
    ({"recordingIds": "{mixed}", "controlChannel": "aeron:ipc?term-length=64k", "controlStreamId": "4999",
      "timeout": "1"}, "no archive is listening"),
    ({"recordingIds": "{mixed}", "startPosition": "0"}, "unknown option 'startposition'"),
])
def test_bad_input_is_a_clear_error_at_query_start(
        spark: Any, connector: Connector, recorded: Recorded, options: dict[str, str], expected: str) -> None:
    """The same message through either connector. An archive that does not answer on its control
    channel is read without archiveDir: a remote archive, whose catalog is not on this host."""
    resolved = {key: value.format(mixed=recorded.mixed) for key, value in options.items()}
    given = recorded.options(**resolved) if "controlChannel" in options else recorded.read(connector, **resolved)
    with pytest.raises(Exception, match=expected):
        load(spark, connector, given).count()


def test_a_stream_of_an_unknown_recording_fails_at_start(spark: Any, connector: Connector, recorded: Recorded,
                                                         tmp_path: Any) -> None:
    query = (spark.readStream.format(connector.format).options(**recorded.read(connector, recordingIds=987654)).load()
             .writeStream.format("parquet").option("path", str(tmp_path / "out"))
             .option("checkpointLocation", str(tmp_path / "checkpoint")).trigger(availableNow=True).start())
    with pytest.raises(Exception, match="987654"):
        query.awaitTermination(60)


def test_a_stream_with_a_batch_only_option_fails_with_our_message_alone(spark: Any, connector: Connector,
                                                                         recorded: Recorded, tmp_path: Any) -> None:
    """readStream with dropRepeats: our message, not followed by pyspark's UnboundLocalError."""
    with pytest.raises(Exception, match="dropRepeats applies to spark.read only") as failed:
        query = (spark.readStream.format(connector.format).options(**recorded.read(
                     connector, recordingIds=recorded.mixed, dropRepeats="true")).load()
                 .writeStream.format("parquet").option("path", str(tmp_path / "out"))
                 .option("checkpointLocation", str(tmp_path / "checkpoint")).trigger(availableNow=True).start())
        query.awaitTermination(60)
    assert "UnboundLocalError" not in str(failed.value)


# --- without Spark: options, offsets, limits, data loss ------------------------------------------

def read_options(**given: Any) -> Any:
    from aeron_async.spark.options import parse_read_options

    streaming = bool(given.pop("streaming", False))
    return parse_read_options({key.lower(): str(value) for key, value in given.items()}, streaming=streaming)


@pytest.mark.parametrize("given, expected", [
    ({}, "choose the recordings"),
    ({"recordingIds": "3", "channel": "aeron:ipc", "streamId": "1"}, "not both"),
    ({"channel": "aeron:ipc"}, "channel and streamId go together"),
    ({"recordingIds": "x"}, "recordingIds='x' is not an integer"),
    ({"recordingIds": "3", "startingPositions": "soon"}, "earliest or latest, or a JSON object"),
    ({"recordingIds": "3", "startingPositions": '{"3": -7}'}, "position of recording 3 is -7"),
    ({"recordingIds": "3", "startingPositions": '{"4": 0}'}, "names recordings \\[4\\] that recordingIds"),
    ({"recordingIds": "3", "endingPositions": "earliest"}, "endingPositions='earliest': give latest"),
    ({"recordingIds": "3", "maxBytesPerPartition": "lots"}, "is not a size"),
    ({"recordingIds": "3", "failOnDataLoss": "maybe"}, "must be true or false"),
    ({"recordingIds": "3", "replayChannel": "udp://x"}, "is not an Aeron channel"),
    ({"recordingIds": "3", "timeout": "0"}, "between 0 and 3600"),
    ({"recordingIds": "3", "endingPositions": '{"3": 5}', "streaming": True}, "applies to spark.read only"),
    ({"recordingIds": "3", "maxRecordsPerTrigger": "10"}, "applies to spark.readStream only"),
    ({"recordingIds": "3", "sometimes": "1"}, "unknown option 'sometimes'; the options here are: aeronDir"),
    ({"recordingIds": "3", "maxRecordsPerTrigger": "0", "streaming": True}, "between 1 and"),
])
def test_bad_options_are_named_with_the_fix(given: dict[str, Any], expected: str) -> None:
    from aeron_async.spark.options import OptionError

    with pytest.raises(OptionError, match=expected):
        read_options(**given)


def test_no_driver_in_aeron_dir_is_named_at_query_start(tmp_path: Any) -> None:
    from aeron_async.errors import DriverNotFoundError
    from aeron_async.spark.reader import AeronBatchReader

    reader = AeronBatchReader(read_options(aeronDir=str(tmp_path / "no-driver"), recordingIds=1, timeout=1))
    with pytest.raises(DriverNotFoundError, match="no-driver"):
        reader.partitions()


def test_options_parse_to_their_values() -> None:
    options = read_options(recordingIds="5, 3,5", startingPositions='{"3": 64, "5": -2}', maxBytesPerPartition="2m",
                           failOnDataLoss="false", maxRecordsPerTrigger=10, maxBytesPerTrigger="1k", streaming=True)
    assert options.recording_ids == (5, 3)
    assert options.starting == {3: 64, 5: -2}
    assert options.max_bytes_per_partition == 2 << 20 and options.max_bytes_per_trigger == 1024
    assert options.max_records_per_trigger == 10 and options.fail_on_data_loss is False
    assert read_options(channel="aeron:udp", streamId=7).starting == -2  # batch: earliest
    assert read_options(channel="aeron:udp", streamId=7, streaming=True).starting == -1  # streaming: latest
    assert read_options(recordingIds=1, path="").recording_ids == (1,)  # load() without a path


def test_offsets_list_recordings_in_id_order_and_limits_are_shared() -> None:
    from aeron_async.spark.stream_reader import decode_offset, encode_offset, share

    assert json.dumps(encode_offset({10: 5, 2: 7})) == '{"2": 7, "10": 5}'
    assert decode_offset({"2": 7, "10": 5}) == {2: 7, 10: 5}
    assert share(100, {1: 30, 2: 50}) == {1: 30, 2: 50}  # all fits
    shares = share(10, {1: 300, 2: 100, 3: 1})
    assert sum(shares.values()) == 10 and shares[1] > shares[2]


def test_byte_limits_cut_micro_batches_anywhere_and_each_message_is_read_once(recorded: Recorded) -> None:
    """maxBytesPerTrigger without Spark: the stream reader's offsets cut the recording at byte
    positions inside messages; the batches between them hold each message exactly once."""
    from pyspark.sql.streaming.datasource import ReadMaxBytes

    from aeron_async.spark.stream_reader import AeronStreamReader

    reader = AeronStreamReader(read_options(aeronDir=recorded.aeron_dir, recordingIds=recorded.mixed,
                                            startingPositions="earliest", maxBytesPerTrigger=100_000, streaming=True))
    try:
        assert isinstance(reader.getDefaultReadLimit(), ReadMaxBytes)
        start = reader.initialOffset()
        reader.prepareForTriggerAvailableNow()
        got: list[tuple[int, bytes]] = []
        for _ in range(50):
            end = reader.latestOffset(start, reader.getDefaultReadLimit())
            if end == start:
                break
            assert end[str(recorded.mixed)] - start[str(recorded.mixed)] <= 100_000
            for partition in reader.partitions(start, end):
                for batch in reader.read(partition):
                    got.extend(rows_of(pa.Table.from_batches([batch])))
            start = end
        assert got == expected_messages(recorded.mixed_stream, 0, 1 << 62)
    finally:
        reader.stop()


def test_a_truncated_range_fails_or_is_read_as_far_as_it_is_left(recorded: Recorded) -> None:
    from aeron_async.spark.columns import DataLossError
    from aeron_async.spark.reader import AeronBatchReader

    publication = recorded.client.add_exclusive_publication("aeron:ipc", 4104)
    subscription_id, recording = record(recorded.archive, "aeron:ipc", 4104)
    for i in range(100):
        assert publication.offer(i.to_bytes(8, "little")) > 0 or time.sleep(0.01) is None
    wait_recorded(recorded.archive, recording, 100 * FRAME)
    recorded.archive.stop_recording(subscription_id=subscription_id)
    publication.close()
    strict = AeronBatchReader(read_options(aeronDir=recorded.aeron_dir, recordingIds=recording))
    lenient = AeronBatchReader(read_options(aeronDir=recorded.aeron_dir, recordingIds=recording, failOnDataLoss="false"))
    [partition] = strict.partitions()
    recorded.archive.truncate_recording(recording, 40 * FRAME)  # after planning, before the tasks read
    with pytest.raises(DataLossError, match="now stops at 2560 \\(truncated\\).*failOnDataLoss=false"):
        list(strict.read(partition))
    rows = [row for batch in lenient.read(partition) for row in rows_of(pa.Table.from_batches([batch]))]
    assert rows == [((i + 1) * FRAME, i.to_bytes(8, "little")) for i in range(40)]  # positions: ends


def test_a_stream_picks_up_new_recordings_from_their_start(recorded: Recorded) -> None:
    """Selected by channel + stream: a recording that appears while the query runs is in the next
    offset and read from its own start; the offsets keep recordings in id order."""
    from aeron_async.spark.stream_reader import AeronStreamReader

    stream_id = 4105
    first = recorded.client.add_exclusive_publication("aeron:ipc", stream_id)
    subscription_id, recording = record(recorded.archive, "aeron:ipc", stream_id)
    reader = AeronStreamReader(read_options(aeronDir=recorded.aeron_dir, channel="aeron:ipc", streamId=stream_id,
                                            startingPositions="earliest", streaming=True))
    second = None
    try:
        for i in range(10):
            assert first.offer(i.to_bytes(8, "little")) > 0
        wait_recorded(recorded.archive, recording, 10 * FRAME)
        start = reader.initialOffset()
        assert start == {str(recording): 0}
        end = reader.latestOffset(start, reader.getDefaultReadLimit())
        assert end == {str(recording): 10 * FRAME}
        first.close()
        recorded.archive.wait_for_signal(aeron_async.archive.RecordingSignal.STOP, recording_id=recording, timeout=10)
        second = recorded.client.add_exclusive_publication("aeron:ipc", stream_id)
        newer = recorded.archive.wait_for_signal(aeron_async.archive.RecordingSignal.START, timeout=10).recording_id
        for i in range(5):
            assert second.offer(b"new" + bytes([i])) > 0
        wait_recorded(recorded.archive, newer, 5 * FRAME)
        later = reader.latestOffset(end, reader.getDefaultReadLimit())
        assert list(later) == [str(recording), str(newer)] and later[str(newer)] == 5 * FRAME
        rows = [row for p in reader.partitions(end, later) for batch in reader.read(p)
                for row in rows_of(pa.Table.from_batches([batch]))]
        assert rows == [((i + 1) * FRAME, b"new" + bytes([i])) for i in range(5)]
    finally:
        reader.stop()
        recorded.archive.stop_recording(subscription_id=subscription_id)
        if second is not None:
            second.close()
        first.close()


def test_a_remote_archive_answers_and_replays_to_each_executor_address(tmp_path: Any, monkeypatch: Any) -> None:
    """Control over UDP, answers and replays over UDP to `{host}` (here AERON_SPARK_HOST): what a
    cluster's executors do with an archive on another machine, with the same options everywhere."""
    from aeron_async.spark.reader import AeronBatchReader

    aeron_dir = new_aeron_dir()
    control, response, replay = free_udp_port(), free_udp_port(), free_udp_port()
    try:
        with archive_beside_driver(aeron_dir, str(tmp_path / "archive"),
                                   control_channel=f"aeron:udp?endpoint=127.0.0.1:{control}"):
            with aeron_async.Aeron.connect(aeron_dir, driver_timeout=5.0) as client, \
                    AeronArchive.connect(client, timeout=10.0) as archive:
                publication = client.add_exclusive_publication("aeron:ipc?term-length=64k", 4106)
                subscription_id, recording = record(archive, "aeron:ipc", 4106)
                for i in range(3000):  # three terms
                    while publication.offer(i.to_bytes(8, "little")) < 0:
                        time.sleep(0.001)
                wait_recorded(archive, recording, 3000 * FRAME)
                archive.stop_recording(subscription_id=subscription_id)
            monkeypatch.setenv("AERON_SPARK_HOST", "127.0.0.1")
            reader = AeronBatchReader(read_options(
                aeronDir=aeron_dir, recordingIds=recording, maxBytesPerPartition="64k",
                controlChannel=f"aeron:udp?endpoint=127.0.0.1:{control}",
                responseChannel=f"aeron:udp?endpoint={{host}}:{response}",
                replayChannel=f"aeron:udp?endpoint={{host}}:{replay}"))
            partitions = reader.partitions()
            assert len(partitions) == 3
            rows = [row for p in partitions for batch in reader.read(p) for row in rows_of(pa.Table.from_batches([batch]))]
            assert rows == [((i + 1) * FRAME, i.to_bytes(8, "little")) for i in range(3000)]
    finally:
        shutil.rmtree(aeron_dir, ignore_errors=True)
