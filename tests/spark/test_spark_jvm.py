"""The JVM connector of the `aeron` source (docs/spark.md, "The JVM connector"): its option and
column tables against the Python source's, and the same batch queries through both connectors in
the shared session (tests/support/spark_connectors.py), with pushdown seen in the JVM's plans.
Stopped recordings over IPC: 12,000 messages of mixed sizes (fragmented ones included, 256 KiB
terms) and 20,000 of 8 bytes."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

import aeron_async
from support.archive_e2e import Stream, archive_clients, record, wait_recorded
from conftest import REPO
from support.spark_connectors import compare
from support.spark_fixtures import SPARK_DRIVER_SETTINGS

import pyspark  # noqa: F401,E402  (the spark extra: the README's test command installs it)

JAVA = os.path.join(REPO, "aeron_async", "spark", "jvm", "src", "aeron", "spark")
MIXED_STREAM, SMALL_STREAM, ACTIVE_STREAM = 4201, 4202, 4203
ACTIVE_MESSAGES = 3000
# the sinks' streams, recorded from the start (the sink publishes once a subscriber is connected)
SINK_STREAMS = {"batch": {"aeron": 4211, "aeron_python": 4212}, "stream": {"aeron": 4213, "aeron_python": 4214}}
SINK_ROWS = 3000
UNRECORDED_STREAM = 4216  # read by a plain subscription, recorded by no one


def java_list(name: str, file: str = "Options.java") -> list[str]:
    source = open(os.path.join(JAVA, file)).read()
    match = re.search(rf"{name} = List\.of\(([^)]*)\)", source)
    assert match is not None, name
    return re.findall(r'"([^"]+)"', match.group(1))


def test_the_jvm_connector_has_the_python_sources_options_and_columns() -> None:
    """Options.java, SinkOptions.java and AeronProvider.java mirror options.py and datasource.py: same
    option names in the same order (batch-only, stream-only and sink ones too; the archive options the
    JVM sink does not apply are among the Python sink's), same columns, types and order."""
    from aeron_async.spark import options
    from aeron_async.spark.datasource import SCHEMA

    assert java_list("ARCHIVE_OPTIONS") == list(options.ARCHIVE_OPTIONS)
    assert java_list("READ_OPTIONS") == list(options.READ_OPTIONS)
    assert java_list("BATCH_ONLY") == list(options.BATCH_ONLY)
    assert java_list("STREAM_ONLY") == list(options.STREAM_ONLY)
    assert java_list("SINK_OPTIONS", "SinkOptions.java") == list(options.SINK_OPTIONS)
    assert set(java_list("NOT_APPLIED", "SinkOptions.java")) < set(options.ARCHIVE_OPTIONS)
    provider = open(os.path.join(JAVA, "AeronProvider.java")).read()
    java_types = {"BinaryType": "binary", "LongType": "bigint", "IntegerType": "int", "StringType": "string"}
    columns = [(name, java_types[kind]) for name, kind in re.findall(r'field\("(\w+)", DataTypes\.(\w+)\)', provider)]
    assert columns == [(field.name, field.dataType.simpleString()) for field in SCHEMA.fields]
    assert "false, Metadata.empty()" in provider and not any(field.nullable for field in SCHEMA.fields)


@dataclass
class Archive:
    aeron_dir: str
    archive_dir: str
    mixed: int
    small: int
    stream: Stream
    small_end: int
    active: int
    active_stream: Stream


@pytest.fixture(scope="module")
def archive(tmp_path_factory: Any) -> Iterator[Archive]:
    with archive_clients(tmp_path_factory, "spark-jvm", SPARK_DRIVER_SETTINGS) as (
            aeron_dir, archive_dir, client, archive):
        mixed_publication = client.add_exclusive_publication("aeron:ipc?term-length=256k", MIXED_STREAM)
        _, mixed = record(archive, "aeron:ipc", MIXED_STREAM)
        stream = Stream(12000)
        stream.publish(mixed_publication)
        small_publication = client.add_exclusive_publication("aeron:ipc?term-length=64k", SMALL_STREAM)
        _, small = record(archive, "aeron:ipc", SMALL_STREAM)
        idle = aeron_async.IdleStrategy("backoff")
        for i in range(20000):
            while small_publication.offer(i.to_bytes(8, "little"), reserved_value=i) < 0:
                idle.idle(0)
        wait_recorded(archive, mixed, mixed_publication.position)
        wait_recorded(archive, small, small_publication.position)
        small_end = small_publication.position
        archive.stop_recording("aeron:ipc", MIXED_STREAM)
        archive.stop_recording("aeron:ipc", SMALL_STREAM)
        mixed_publication.close()
        small_publication.close()
        # still being recorded while the queries run: its rec-pos counter says how far
        active_publication = client.add_exclusive_publication("aeron:ipc?term-length=256k", ACTIVE_STREAM)
        _, active = record(archive, "aeron:ipc", ACTIVE_STREAM)
        active_stream = Stream(ACTIVE_MESSAGES, seed=11)
        active_stream.publish(active_publication)
        wait_recorded(archive, active, active_publication.position)
        for streams in SINK_STREAMS.values():
            for stream_id in streams.values():
                archive.start_recording("aeron:ipc", stream_id)
        unrecorded = client.add_subscription("aeron:ipc", UNRECORDED_STREAM)
        yield Archive(aeron_dir, archive_dir, mixed, small, stream, small_end, active, active_stream)
        archive.stop_recording("aeron:ipc", ACTIVE_STREAM)
        active_publication.close()
        unrecorded.close()


@pytest.fixture(scope="module")
def compared(spark: Any, archive: Archive) -> dict[str, Any]:
    """Both connectors' results of each query, in the shared session (its jar in spark.jars:
    format("aeron") is the JVM connector, format("aeron_python") the Python source)."""
    s = archive.stream
    low, high = s.positions[1000] + 32, s.positions[11000]  # from inside the message after 1000
    mixed, small = str(archive.mixed), str(archive.small)
    queries = [
        {"name": "all", "options": {"recordingIds": mixed}},
        {"name": "range", "options": {"recordingIds": mixed, "startingPositions": json.dumps({mixed: low}),
                                      "endingPositions": json.dumps({mixed: high})}},
        {"name": "schema", "options": {"recordingIds": mixed}, "schema": "position bigint, data binary"},
        {"name": "by channel", "options": {"channel": "aeron:ipc", "streamId": str(SMALL_STREAM)},
         "select": ["position", "reserved_value", "stream_id", "channel"]},
        {"name": "count", "options": {"recordingIds": f"{mixed},{small}"}, "count": True, "plan": True},
        {"name": "min max", "options": {"recordingIds": f"{mixed},{small}"},
         "where": f"position > {low} and position <= {high}",
         "select": ["count(*)", "min(position)", "max(position)"], "plan": True},
        {"name": "filters", "options": {"recordingIds": f"{mixed},{small}"},
         "where": f"recording_id = {small} and stream_id = {SMALL_STREAM} and position >= 6400 and position < 64000",
         "select": ["position", "data"], "plan": True},
        {"name": "bad size", "options": {"recordingIds": mixed, "maxBytesPerPartition": "lots"}},
        {"name": "unknown recording", "options": {"recordingIds": "999"}},
        {"name": "active batch", "options": {"recordingIds": str(archive.active)}},
    ]
    streams = [
        {"name": "bytes", "options": {"recordingIds": f"{mixed},{small}", "startingPositions": "earliest",
                                      "maxBytesPerTrigger": "600k"}},
        {"name": "active", "options": {"channel": "aeron:ipc", "streamId": str(ACTIVE_STREAM),
                                       "startingPositions": "earliest", "maxRecordsPerTrigger": "1000"}},
    ]
    sink = {"aeronDir": archive.aeron_dir, "channel": "aeron:ipc?term-length=256k", "durable": "true",
            "durableTimeout": "20"}
    writes = [
        {"name": "batch", "kind": "batch", "rows": SINK_ROWS, "streams": SINK_STREAMS["batch"], "options": sink},
        {"name": "stream", "kind": "stream", "streams": SINK_STREAMS["stream"], "options": sink},
        {"name": "not recorded", "kind": "batch", "rows": 10,
         "streams": {"aeron": UNRECORDED_STREAM, "aeron_python": UNRECORDED_STREAM},
         "options": {**sink, "durableTimeout": "1"}},
    ]
    job = {"options": {"aeronDir": archive.aeron_dir, "archiveDir": archive.archive_dir, "timeout": "5",
                       "maxBytesPerPartition": "256k"}, "queries": queries, "streams": streams, "writes": writes}
    result = compare(spark, job)
    result["by_name"] = {query["name"]: query for query in result["queries"] + result["streams"]}
    result["writes"] = {write["name"]: write for write in result["writes"]}
    print(f"the sinks' writes and read-backs took {result['write_seconds']} s")
    return result


@pytest.mark.parametrize("name", ["all", "range", "schema", "by channel", "count", "min max", "filters"])
def test_both_connectors_give_the_same_rows(compared: dict[str, Any], archive: Archive, name: str) -> None:
    query = compared["by_name"][name]
    assert query["aeron"] == query["aeron_python"], name
    assert not isinstance(query["aeron"], dict), query["aeron"]  # not an error
    s = archive.stream
    if name == "all":
        assert len(query["aeron"]) == len(s)
        assert sorted(row[4] for row in query["aeron"]) == list(s.positions)  # position: each message's end
    elif name == "count":
        assert query["aeron"] == len(s) + 20000
    elif name == "min max":
        low, high = s.positions[1000] + 32, s.positions[11000]
        ends = [p for p in [*s.positions, *range(64, archive.small_end + 1, 64)] if low < p <= high]
        assert query["aeron"] == [[len(ends), min(ends), max(ends)]]
    elif name == "filters":
        assert [row[0] for row in query["aeron"]] == list(range(6400, 64000, 64))


def test_pushdown_is_in_the_jvm_plan(compared: dict[str, Any]) -> None:
    """count() and min/max(position) are answered by the scan (no aggregate over rows above it);
    the filters are pushed, none evaluated again."""
    for name in ("count", "min max"):
        plan = compared["by_name"][name]["plan"]
        assert "aggregates" in plan and "HashAggregate" not in plan, plan
    plan = compared["by_name"]["filters"]["plan"]
    assert "EqualTo(recording_id" in plan and "GreaterThanOrEqual(position,6400)" in plan, plan
    assert "Filter " not in plan, plan


@pytest.mark.parametrize("name, message", [
    ("bad size", "maxBytesPerPartition='lots' is not a size"),
    ("unknown recording", "recording 999 (recordingIds) is not in the archive"),
])
def test_both_connectors_refuse_the_same_options_alike(compared: dict[str, Any], name: str, message: str) -> None:
    query = compared["by_name"][name]
    for fmt in ("aeron", "aeron_python"):
        assert isinstance(query[fmt], dict) and message in query[fmt]["error"], (fmt, query[fmt])


def test_a_recording_still_being_recorded_is_read_alike_up_to_where_it_stood(compared: dict[str, Any],
                                                                            archive: Archive) -> None:
    """A batch read of an active recording: both connectors read what it had recorded when the query
    was planned (the JVM up to its rec-pos counter, the Python source up to its max recorded position)."""
    query = compared["by_name"]["active batch"]
    assert not isinstance(query["aeron"], dict), query["aeron"]  # not an error
    assert query["aeron"] == query["aeron_python"]
    assert len(query["aeron"]) == ACTIVE_MESSAGES


@pytest.mark.parametrize("name", ["bytes", "active"])
def test_both_connectors_stream_the_same_batches(compared: dict[str, Any], archive: Archive, name: str) -> None:
    """AvailableNow with admission control: the same micro-batches (their end offsets, in the
    Python source's JSON) and the same rows, each message once. (maxRecordsPerTrigger over a stopped
    recording, with a restart that re-runs batches over the same offsets, is
    test_spark_source.py's test_available_now_reads_a_recording_in_batches_and_resumes_exactly_once,
    which checks each connector's offsets and rows against the positions published.)"""
    query = compared["by_name"][name]
    jvm, python = query["aeron"], query["aeron_python"]
    assert "error" not in jvm and "error" not in python, (jvm, python)
    assert jvm["rows"] == python["rows"] and jvm["offsets"] == python["offsets"], name
    s = archive.stream
    if name == "bytes":
        assert len(jvm["offsets"]) > 2 and len(jvm["rows"]) == len(s) + 20000
    else:
        assert len(jvm["offsets"]) == 3
        assert sorted(row[0] for row in jvm["rows"]) == list(archive.active_stream.positions)


def by_partition(rows: list[list[Any]], batch_write: bool) -> dict[int, list[tuple[str, int]]]:
    """A sink stream read back (session_id, position, reserved_value, data) as each task attempt's
    messages (its own session) by partition, in order: (data, reserved value), the batch write's
    random id masked out of the sink's own values (each write draws its own)."""
    from aeron_async.spark import provenance

    sessions: dict[int, list[list[Any]]] = {}
    for row in sorted(rows, key=lambda row: (row[0], row[1])):
        sessions.setdefault(row[0], []).append(row)
    found: dict[int, list[tuple[str, int]]] = {}
    for messages in sessions.values():
        first = provenance.decode(messages[0][2])
        assert first is not None and first.kind == int(batch_write), messages[0]
        end = messages[-1]
        assert provenance.is_end_marker(end[2]) and end[3] == "", end  # the attempt's end marker, empty
        assert sum(provenance.is_end_marker(row[2]) for row in messages) == 1
        batch_mask = ((1 << 32) - 1) << 28 if batch_write else 0
        key = first.partition if batch_write else (first.batch << 20) | first.partition
        assert key not in found
        found[key] = [(row[3], row[2] if provenance.decode(row[2]) is None else row[2] & ~batch_mask)
                      for row in messages]
    return found


@pytest.mark.parametrize("name", ["batch", "stream"])
def test_the_jvm_sink_publishes_what_the_python_sink_publishes(compared: dict[str, Any], name: str) -> None:
    """The same batch write (strings of mixed sizes, fragmented ones included, a reserved_value column
    with nulls) and the same stream (three micro-batches) through both sinks with durable=true: the
    same messages, byte for byte, with the same reserved values and end markers, per task attempt."""
    from aeron_async.spark import provenance

    write = compared["writes"][name]
    jvm, python = write["aeron"], write["aeron_python"]
    assert not isinstance(jvm, dict) and not isinstance(python, dict), (jvm, python)
    jvm_parts, python_parts = by_partition(jvm, name == "batch"), by_partition(python, name == "batch")
    assert jvm_parts == python_parts
    if name == "batch":
        assert sorted(jvm_parts) == [0, 1]
        assert sum(len(messages) - 1 for messages in jvm_parts.values()) == SINK_ROWS
        data = [message for messages in jvm_parts.values() for message in messages[:-1]]
        assert max(len(hex_data) // 2 for hex_data, _ in data) > 4000  # fragmented on IPC's 1408-byte MTU
        assert {reserved for _, reserved in data} >= {0, 5} and any(  # the column's values, its nulls the sink's
            provenance.decode(reserved) is not None for _, reserved in data)
    else:
        assert sorted(key >> 20 for key in jvm_parts) == [0, 1, 2]  # micro-batch ids
        assert sum(len(messages) - 1 for messages in jvm_parts.values()) == 1200


def test_durable_writes_to_a_stream_no_archive_records_fail_in_both_sinks(compared: dict[str, Any]) -> None:
    """durable=true with a subscriber but no recording: each sink's task fails after durableTimeout
    with the same first words."""
    write = compared["writes"]["not recorded"]
    for fmt in ("aeron", "aeron_python"):
        assert isinstance(write[fmt], dict) and "durable=true: the archive did not record" in write[fmt][
            "error"] and "within 1 s" in write[fmt]["error"], (fmt, write[fmt])


class FakeDataSources:
    def __init__(self) -> None:
        self.names: list[str] = []

    def register(self, source: type) -> None:
        self.names.append(source.name())  # type: ignore[attr-defined]


class FakeSession:
    """What register() touches of a SparkSession once the workers' Python is seen to."""

    def __init__(self) -> None:
        self.dataSource = FakeDataSources()


@pytest.mark.parametrize("built, on_classpath, connector, expected", [
    (True, False, "auto", "jvm"),      # the jar is built: added to the session
    (True, True, "auto", "jvm"),       # already there (spark.jars, --jars)
    (False, False, "auto", "python"),  # built without a JDK: the Python source
    (True, False, "python", "python"),
    (True, False, "jvm", "jvm"),
])
def test_register_chooses_the_jvm_connector_wherever_its_jar_is_built(
        monkeypatch: pytest.MonkeyPatch, built: bool, on_classpath: bool, connector: str, expected: str) -> None:
    """docs/spark.md, "The JVM connector": register(spark)'s default, "auto", is the JVM connector
    whenever the package's jar is built, adding it to the session when it is not on the classpath."""
    import aeron_async.spark as spark_package
    from aeron_async.spark import jvm

    added: list[Any] = []
    monkeypatch.setattr(spark_package, "use_this_python", lambda session: sys.executable)
    monkeypatch.setattr(jvm, "jar_path", lambda: "/opt/aeron-async-spark.jar" if built else None)
    monkeypatch.setattr(jvm, "loaded", lambda session: on_classpath)
    monkeypatch.setattr(jvm, "add_jar", lambda session: added.append(session) or "/opt/aeron-async-spark.jar")
    session = FakeSession()
    assert spark_package.register(session, connector) == expected
    assert added == ([session] if expected == "jvm" and not on_classpath else [])
    # the Python source: always as aeron_python, and as aeron where that is not the JVM connector
    assert session.dataSource.names == (["aeron_python"] if expected == "jvm" else ["aeron_python", "aeron"])
