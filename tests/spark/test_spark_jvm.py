"""The JVM connector of the `aeron` source (docs/spark.md, "The JVM connector"): its option and
column tables against the Python source's, and the same batch queries through both connectors in
one session (tests/support/procs/spark_connectors.py), with pushdown seen in the JVM's plans.
Stopped recordings over IPC: 12,000 messages of mixed sizes (fragmented ones included, 256 KiB
terms) and 20,000 of 8 bytes."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

import aeron_async
from support.archive_e2e import Stream, archive_clients, record, wait_recorded
from conftest import REPO, python_env
from support.spark_fixtures import java_available

pytest.importorskip("pyspark")

JAVA = os.path.join(REPO, "aeron_async", "spark", "jvm", "src", "aeron", "spark")
MIXED_STREAM, SMALL_STREAM, ACTIVE_STREAM = 4201, 4202, 4203
ACTIVE_MESSAGES = 3000


def java_list(name: str) -> list[str]:
    source = open(os.path.join(JAVA, "Options.java")).read()
    match = re.search(rf"{name} = List\.of\(([^)]*)\)", source)
    assert match is not None, name
    return re.findall(r'"([^"]+)"', match.group(1))


def test_the_jvm_connector_has_the_python_sources_options_and_columns() -> None:
    """Options.java and AeronProvider.java mirror options.py and datasource.py: same option names
    in the same order (batch-only and stream-only ones too), same columns, types and order."""
    from aeron_async.spark import options
    from aeron_async.spark.datasource import SCHEMA

    assert java_list("ARCHIVE_OPTIONS") == list(options.ARCHIVE_OPTIONS)
    assert java_list("READ_OPTIONS") == list(options.READ_OPTIONS)
    assert java_list("BATCH_ONLY") == list(options.BATCH_ONLY)
    assert java_list("STREAM_ONLY") == list(options.STREAM_ONLY)
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
    with archive_clients(tmp_path_factory, "spark-jvm") as (aeron_dir, archive_dir, client, archive):
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
        yield Archive(aeron_dir, archive_dir, mixed, small, stream, small_end, active, active_stream)
        archive.stop_recording("aeron:ipc", ACTIVE_STREAM)
        active_publication.close()


def jar() -> str:
    """The connector, built (or found up to date) as `./dev setup` builds it; skip without a JDK."""
    if shutil.which("javac") is None or not java_available():
        pytest.skip("no JDK (javac): the JVM connector is not built and the Python source serves")
    from aeron_async.spark.jvm import build

    return str(build.build())


@pytest.fixture(scope="module")
def compared(archive: Archive) -> dict[str, Any]:
    """Both connectors' results of each query (one Spark session in a process of its own: a jar on
    the shared session's classpath would make format("aeron") the JVM's for every later test)."""
    jar()
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
        {"name": "limited", "options": {"recordingIds": mixed, "startingPositions": "earliest",
                                        "maxRecordsPerTrigger": "4000"}, "restart": True},
        {"name": "bytes", "options": {"recordingIds": f"{mixed},{small}", "startingPositions": "earliest",
                                      "maxBytesPerTrigger": "600k"}},
        {"name": "active", "options": {"channel": "aeron:ipc", "streamId": str(ACTIVE_STREAM),
                                       "startingPositions": "earliest", "maxRecordsPerTrigger": "1000"}},
    ]
    job = {"options": {"aeronDir": archive.aeron_dir, "archiveDir": archive.archive_dir, "timeout": "5",
                       "maxBytesPerPartition": "256k"}, "queries": queries, "streams": streams}
    env = python_env()
    env["PYSPARK_PYTHON"] = sys.executable
    done = subprocess.run([sys.executable, os.path.join(REPO, "tests", "support", "procs", "spark_connectors.py"),
                           json.dumps(job)], env=env, capture_output=True, text=True, timeout=600, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-4000:]
    result: dict[str, Any] = json.loads(lines[-1][len("RESULT "):])
    assert result["connector"] == "jvm"
    result["by_name"] = {query["name"]: query for query in result["queries"] + result["streams"]}
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


def test_a_recording_still_being_recorded_is_refused_by_the_batch_jvm_read(compared: dict[str, Any],
                                                                         archive: Archive) -> None:
    query = compared["by_name"]["active batch"]
    assert isinstance(query["aeron"], dict) and f"recording {archive.active} is still recording" in query["aeron"][
        "error"] and 'connector="python"' in query["aeron"]["error"]
    assert len(query["aeron_python"]) == ACTIVE_MESSAGES


@pytest.mark.parametrize("name", ["limited", "bytes", "active"])
def test_both_connectors_stream_the_same_batches(compared: dict[str, Any], archive: Archive, name: str) -> None:
    """AvailableNow with admission control: the same micro-batches (their end offsets, in the
    Python source's JSON) and the same rows, each message once; "limited" is restarted after its
    last batch's commit was lost and re-runs that batch over the same offsets."""
    query = compared["by_name"][name]
    jvm, python = query["aeron"], query["aeron_python"]
    assert "error" not in jvm and "error" not in python, (jvm, python)
    assert jvm["rows"] == python["rows"] and jvm["offsets"] == python["offsets"], name
    s = archive.stream
    if name == "limited":
        assert [json.loads(offset) for offset in jvm["offsets"]] == [
            {str(archive.mixed): s.positions[3999]}, {str(archive.mixed): s.positions[7999]},
            {str(archive.mixed): s.positions[-1]}]
        assert jvm["rerun"] == jvm["offsets"][-1:] == python["rerun"]
        assert sorted(row[0] for row in jvm["rows"]) == list(s.positions)  # each message once
    elif name == "bytes":
        assert len(jvm["offsets"]) > 2 and len(jvm["rows"]) == len(s) + 20000
    else:
        assert len(jvm["offsets"]) == 3
        assert sorted(row[0] for row in jvm["rows"]) == list(archive.active_stream.positions)
