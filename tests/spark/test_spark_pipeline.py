"""The aeron sink through Spark (docs/spark.md, "Writing (the sink)"): batch and streaming
writes arrive complete on a subscriber; bad input fails at query start; a job on a standalone
cluster started here (submitted with the JVM connector's jar, with a task retry injected) read back
with dropRepeats=true gives the same rows as the same job in local mode; the example pipeline runs.
All share the one local session (tests/support/spark_fixtures.py) and one driver + archive for the
module; each runs through both connectors (the JVM connector and the Python source and sink)."""

from __future__ import annotations

import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

import aeron_async  # noqa: E402
from aeron_async.archive import AeronArchive  # noqa: E402
from aeron_async.spark import provenance  # noqa: E402
from conftest import REPO, TEST_DRIVER_SETTINGS, new_aeron_dir, python_env, wait_for  # noqa: E402
from support.spark_fixtures import CONNECTORS, Connector  # noqa: E402

SUPPORT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support")


@dataclass(frozen=True)
class Host:
    aeron_dir: str
    archive_dir: str


@pytest.fixture(scope="module")
def host() -> Iterator[Host]:
    """One driver with an archive beside it for the whole module. Clients are timed out after 10 s,
    not the suite's 2 s: the JVMs of a Spark test (a cluster's four) starve a loaded machine, and
    an executor's client must not be dropped because its heartbeat thread waited for a CPU."""
    from aeron_async.archive.service import Archive

    path = new_aeron_dir()
    archive_dir = tempfile.mkdtemp(prefix="aa-spark-sink-")
    settings = {**TEST_DRIVER_SETTINGS, "spies_simulate_connection": True, "client_liveness_timeout": 10.0}
    try:
        with aeron_async.MediaDriver.launch(aeron_dir=path, **settings), \
                Archive.launch(archive_dir=archive_dir, aeron_dir=path, threading_mode="SHARED", idle_strategy="backoff"):
            yield Host(path, archive_dir)
    finally:
        shutil.rmtree(archive_dir, ignore_errors=True)
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def aeron_dir(host: Host) -> str:
    return host.aeron_dir


class Collector:
    """A subscriber thread that keeps every message of a stream (end markers counted apart)."""

    def __init__(self, aeron_dir: str, channel: str, stream_id: int) -> None:
        self.client = aeron_async.Aeron.connect(aeron_dir)
        self.subscription = self.client.add_subscription(channel, stream_id)
        self.rows: list[tuple[bytes, int]] = []
        self.markers: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        idle = aeron_async.IdleStrategy("backoff")
        while not self._stop.is_set():
            batch = self.subscription.poll_messages(4096)
            for message in batch:
                if provenance.is_end_marker(message.reserved_value):
                    self.markers.append(message.reserved_value)
                else:
                    self.rows.append((message.data, message.reserved_value))
            idle.idle(len(batch))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(10)
        self.client.close()


def test_batch_and_streaming_writes_arrive_complete(spark: Any, connector: Connector, aeron_dir: str,
                                                    tmp_path: Any) -> None:
    channel, stream = "aeron:ipc?term-length=256k", {"jvm": 41, "python": 42}[connector.name]
    collector = Collector(aeron_dir, channel, stream)
    try:
        rows = 30_000
        (spark.range(0, rows, numPartitions=3).selectExpr("concat('b-', id) AS data")
         .write.format(connector.format).mode("append")
         .option("channel", channel).option("streamId", stream).option("aeronDir", aeron_dir).save())
        wait_for(lambda: len(collector.markers) == 3, 30, 0.01, "the batch write's three end markers")
        assert collections.Counter(d for d, _ in collector.rows) == collections.Counter(
            f"b-{i}".encode() for i in range(rows))
        found = {provenance.decode(r) for _, r in collector.rows}
        assert {(p.kind, p.partition) for p in found if p} == {(1, 0), (1, 1), (1, 2)}
        assert len({p.batch for p in found if p}) == 1  # one write id
        del collector.rows[:], collector.markers[:]

        # streaming: two text files, one per micro-batch (AvailableNow), written as strings
        source = tmp_path / "in"
        source.mkdir()
        for part in range(2):
            (source / f"part-{part}.txt").write_text("".join(f"s-{part}-{i}\n" for i in range(500)))
        query = (spark.readStream.format("text").option("maxFilesPerTrigger", 1).load(str(source))
                 .selectExpr("value AS data")
                 .writeStream.format(connector.format).option("channel", channel).option("streamId", stream)
                 .option("aeronDir", aeron_dir).option("checkpointLocation", str(tmp_path / "ck"))
                 .trigger(availableNow=True).start())
        assert query.awaitTermination(120), "the streaming write did not finish"
        assert query.exception() is None
        wait_for(lambda: len(collector.rows) == 1000, 30, 0.01, "the streaming write's rows")
        assert sorted(d for d, _ in collector.rows) == sorted(
            f"s-{p}-{i}".encode() for p in range(2) for i in range(500))
        batches = {provenance.decode(r).batch for _, r in collector.rows}  # type: ignore[union-attr]
        assert batches == {0, 1} and all(provenance.decode(r).kind == 0 for _, r in collector.rows)  # type: ignore[union-attr]
    finally:
        collector.close()


def test_bad_sink_input_fails_at_query_start(spark: Any, connector: Connector, aeron_dir: str) -> None:
    df = spark.range(3)
    cases = [
        (df, {"channel": "aeron:ipc", "streamId": "42"}, "needs a column named 'data'"),
        (df.selectExpr("id AS data"), {"channel": "aeron:ipc", "streamId": "42"}, "must be binary or string"),
        (df.selectExpr("CAST(id AS STRING) AS data"), {"channel": "ipc", "streamId": "42"}, "not a channel to publish on"),
        (df.selectExpr("CAST(id AS STRING) AS data"), {"channel": "aeron:ipc"}, "needs option 'streamId'"),
        (df.selectExpr("CAST(id AS STRING) AS data"),
         {"channel": "aeron:ipc", "streamId": "42", "startingPositions": "0"}, "unknown option 'startingpositions'"),
    ]
    for frame, options, message in cases:
        start = time.monotonic()
        with pytest.raises(Exception, match=message):
            frame.write.format(connector.format).mode("append").options(**options, aeronDir=aeron_dir).save()
        assert time.monotonic() - start < 60


def _read_back(spark: Any, connector: Connector, host: Host, stream: int, drop: bool,
               schema: str | None = None) -> collections.Counter[bytes]:
    reader = (spark.read.format(connector.format).option("channel", "aeron:ipc").option("streamId", stream)
              .option("aeronDir", host.aeron_dir).option("dropRepeats", str(drop).lower())
              .options(**connector.read_options(host.archive_dir)))
    df = (reader.schema(schema) if schema else reader).load()
    return collections.Counter(bytes(row.data) for row in df.select("data").collect())


CLUSTER_ROWS = 8000


@dataclass(frozen=True)
class Written:
    local: list[tuple[str, str, int]]    # (format, channel, stream id) of each write in local mode
    cluster: list[tuple[str, str, int]]  # and on the cluster


@pytest.fixture(scope="module")
def written(spark: Any, host: Host) -> Written:
    """The job in local mode (the shared session, through the JVM connector's sink: the Python
    sink's local writes are test_batch_and_streaming_writes_arrive_complete's) and on a standalone
    cluster through each sink, submitted as docs/spark.md shows (spark-submit --jars with the JVM
    connector's jar: the executors fetch it and unpack its native library), where the first attempt
    of partition 1 of each write dies after publishing part of its rows and is retried
    (tests/support/spark_jobs.py). One cluster and one application for both sinks."""
    from aeron_async.spark.jvm import jar_path
    from support.spark_cluster import spark_home, standalone_cluster
    from support.spark_jobs import write_rows

    local = [(CONNECTORS["jvm"].format, "aeron:ipc?term-length=256k|alias=local", 43)]
    cluster = [(c.format, f"aeron:ipc?term-length=256k|alias=cluster-{c.name}", 45 + i)
               for i, c in enumerate(CONNECTORS.values())]
    with AeronArchive.connect(aeron_dir=host.aeron_dir) as archive:
        for _, channel, stream in local + cluster:
            archive.start_recording(channel, stream)
        for fmt, channel, stream in local:
            write_rows(spark, fmt, host.aeron_dir, channel, stream, CLUSTER_ROWS, -1)
        env = {**python_env(), "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
        with standalone_cluster() as master:
            job = subprocess.run(
                [os.path.join(spark_home(), "bin", "spark-submit"), "--master", master, "--jars", str(jar_path()),
                 os.path.join(SUPPORT, "spark_jobs.py"), host.aeron_dir, str(CLUSTER_ROWS), "1", json.dumps(cluster)],
                env=env, cwd=REPO, capture_output=True, text=True, timeout=240)
        assert job.returncode == 0 and "job done" in job.stdout, job.stdout[-3000:] + job.stderr[-5000:]
        assert "connector jvm" in job.stdout  # format("aeron") was the JVM connector's sink there
        for _, _, stream in local + cluster:
            wait_for(lambda: all(not d.is_active for d in archive.list_recordings("aeron:ipc", stream)), 20, 0.02,
                     f"the recordings of stream {stream} to stop")
        # each sink's attempt 0 of partition 1 died after publishing part of its rows: a recording of
        # its own (beside the four finished attempts'), stopped without an end marker
        for _, _, stream in cluster:
            assert len(archive.list_recordings("aeron:ipc", stream)) >= 5, stream
    return Written(local, cluster)


def test_standalone_cluster_job_with_a_retry_matches_local_mode(spark: Any, connector: Connector, host: Host,
                                                                written: Written) -> None:
    """What the job wrote, locally and on the cluster through each sink, read back through
    `connector`: with dropRepeats=true every row once; without, the dead attempts' messages too."""
    from support.spark_jobs import expected_rows

    expected = collections.Counter(expected_rows(CLUSTER_ROWS))
    for fmt, _, stream in written.local:
        assert _read_back(spark, connector, host, stream, True) == expected, fmt
    for fmt, _, stream in written.cluster:
        raw = _read_back(spark, connector, host, stream, False)
        assert sum(raw.values()) > CLUSTER_ROWS + 4, fmt  # the failed attempt's messages (and the end markers)
        assert _read_back(spark, connector, host, stream, True) == expected, fmt
        # with the data column alone chosen, the end markers are still found (by a reserved_value read and cut off)
        assert _read_back(spark, connector, host, stream, True, "data binary") == expected, fmt


def test_example_pipeline_runs_and_counts_every_trade(spark: Any, connector: Connector) -> None:
    sys.path.insert(0, os.path.join(REPO, "examples"))
    try:
        import spark_pipeline
    finally:
        sys.path.pop(0)
    lines: list[str] = []
    outcome = spark_pipeline.run(spark, seconds=3, rate=500, window=1, show=lines.append, timeout=120,
                                 source=connector.format)
    assert outcome.published > 500 and outcome.results > 0
    assert outcome.counted == outcome.published, lines[-10:]
    assert any("vwap" in line for line in lines)
