"""Spark benchmarks (`aeron-async bench-spark`, docs/benchmarks.md "Spark"), in one local-mode run:

- batch read of a recording of `--messages` 32-byte messages into `count()` and a `groupBy`,
  against Spark reading the same rows (same columns and types) from Parquet in the same run, with
  all of the source's columns and with those the query uses chosen by `.schema(...)`;
- streaming read rows/s with a fixed `maxRecordsPerTrigger` (AvailableNow over the recording) into
  a `foreachBatch` counting each micro-batch, and into Spark's `noop` sink (what Spark's own
  benchmarks read a source into: every row made, no Python callback or job of its own), and the
  latency from publish to the row reaching a `foreachBatch` sink (p50, p99) for a live stream (and,
  through the JVM connector, a `foreach` writer in the JVM, with and without Spark's asynchronous
  progress tracking);
- sink rows/s (`df.write.format("aeron")` to an IPC stream drained by a subscriber) against
  writing the same DataFrame to Parquet.

An embedded driver and archive (SHARED threading) in a temporary directory; Spark `local[*]`
unless `--master` says otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

from ..archive import AeronArchive, RecordingSignal
from ..client import Aeron
from ..errors import BenchTimeoutError
from ..idle import IdleStrategy

TRADES = ("aeron:ipc?term-length=16m", 5001)
LIVE = ("aeron:ipc?term-length=16m", 5002)
SINK = ("aeron:ipc?term-length=16m", 5003)
LIVE_JVM = ("aeron:ipc?term-length=16m", 5006)
LIVE_JVM_WRITER = ("aeron:ipc?term-length=16m", 5008)
LIVE_JVM_WRITER_ASYNC = ("aeron:ipc?term-length=16m", 5009)
# the name the Python source answers to in this run: "aeron", or "aeron_python" where format("aeron")
# is the JVM connector (whose sink `sink` measures beside the Python one, as sink_jvm_rows_s)
PYTHON_FORMAT = ["aeron"]


def _timed(action: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def process_cpu() -> dict[str, float]:
    """CPU seconds (user + system) used so far by this process (the embedded driver and archive,
    and the SparkSession's Python side), by the JVM Spark runs in, and by the Python processes it
    starts (workers, planners; those already gone are counted in their parents' reaped time)."""
    tick = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    stats: dict[int, tuple[str, float, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        pid = int(entry)
        parents[pid] = int(fields[1])
        own = (int(fields[11]) + int(fields[12])) / tick
        reaped = (int(fields[13]) + int(fields[14])) / tick
        stats[pid] = (stat[stat.index("(") + 1:stat.rindex(")")], own, reaped)
    me = os.getpid()
    used = {"this process": stats[me][1], "Spark JVM": 0.0, "Python workers": 0.0}
    for pid, (name, own, reaped) in stats.items():
        ancestor = parents.get(pid, 0)
        while ancestor not in (0, 1, me):
            ancestor = parents.get(ancestor, 0)
        if ancestor != me or pid == me:
            continue
        used["Spark JVM" if name == "java" else "Python workers"] += own
        used["Python workers"] += reaped  # the JVM and the workers' daemon reap Python processes
    return used


def _timed_cpu(action: Callable[[], Any]) -> tuple[float, Any, dict[str, float]]:
    """_timed, and the CPU seconds each of process_cpu's parts used meanwhile."""
    before = process_cpu()
    seconds, result = _timed(action)
    after = process_cpu()
    return seconds, result, {name: round(after[name] - before[name], 2) for name in after}


def _publish(client: Aeron, channel: str, stream_id: int, count: int, size: int) -> None:
    publication = client.add_exclusive_publication(channel, stream_id)
    idle = IdleStrategy("backoff")
    while not publication.is_connected:
        idle.idle(0)
    chunk = [i.to_bytes(8, "little") + bytes(size - 8) for i in range(1024)]
    sent = 0
    while sent < count:
        batch = chunk[:min(len(chunk), count - sent)]
        done = 0
        while done < len(batch):
            accepted = publication.offer_batch(batch[done:] if done else batch)
            if accepted > 0:
                done += accepted
                idle.reset()
            else:
                idle.idle(0)
        sent += len(batch)
    publication.close()


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def batch_read(spark: Any, aeron_dir: str, archive: AeronArchive, workdir: str, archive_dir: str, messages: int,
               repeats: int = 1, python_format: str = "aeron", jvm: bool = False) -> dict[str, Any]:
    from pyspark.sql import functions as F

    client = archive.aeron
    subscription_id = archive.start_recording(*TRADES)
    _publish(client, *TRADES, messages, 32)
    # the catalog has the recording once the archive saw the image: its START signal says so (a
    # listing right after the publisher closes can come before it)
    started = archive.wait_for_signal(RecordingSignal.START, subscription_id=subscription_id, timeout=60)
    recording = archive.list_recording(started.recording_id)
    deadline = time.monotonic() + 600
    while archive.max_recorded_position(recording.recording_id) < recording.start_position + messages * 64:
        if time.monotonic() > deadline:
            raise BenchTimeoutError("the archive did not record the benchmark stream")
        time.sleep(0.01)
    archive.stop_recording(*TRADES)
    aeron = (spark.read.format(python_format).option("recordingIds", str(recording.recording_id))
             .option("aeronDir", aeron_dir).load())
    parquet_dir = os.path.join(workdir, "trades.parquet")
    (spark.range(0, messages).select(
        F.concat(F.unhex(F.lpad(F.hex("id"), 16, "0")), F.lit(bytes(24))).alias("data"),
        F.lit(recording.recording_id).cast("long").alias("recording_id"),
        F.lit(recording.session_id).cast("int").alias("session_id"),
        F.lit(TRADES[1]).cast("int").alias("stream_id"), ((F.col("id") + 1) * 64).alias("position"),
        F.lit(0).cast("long").alias("reserved_value"), F.lit(TRADES[0]).alias("channel"))
     .write.mode("overwrite").parquet(parquet_dir))
    parquet = spark.read.parquet(parquet_dir)
    result: dict[str, Any] = {"messages": messages}

    def aeron_columns(schema: str) -> Any:
        # the source's columns chosen by a schema: Spark prunes Parquet's columns itself, but asks a
        # Python source for every column it declares
        return (spark.read.format(python_format).option("recordingIds", str(recording.recording_id))
                .option("aeronDir", aeron_dir).schema(schema).load())

    runs: tuple[tuple[str, Any, Any], ...] = (
        ("aeron", aeron, aeron), ("aeron_columns", aeron_columns("position bigint"),
                                  aeron_columns("data binary, position bigint")), ("parquet", parquet, parquet))
    if jvm:
        # the JVM connector (docs/spark.md, "The JVM connector"): it prunes columns and answers
        # count() from the frame headers itself, so it needs no schema
        aeron_jvm = (spark.read.format("aeron").option("recordingIds", str(recording.recording_id))
                     .option("archiveDir", archive_dir).load())
        runs = (("aeron_jvm", aeron_jvm, aeron_jvm), *runs)
    def query_rows(query: str, counted: Any, grouped_frame: Any) -> int:
        if query == "count":
            return int(counted.count())
        # a new DataFrame each time: a second collect() of the same one reuses its shuffle files
        # and times only the final aggregation, not the read
        grouped = grouped_frame.groupBy(F.substring("data", 1, 1).alias("k")).agg(
            F.count("*").alias("n"), F.max("position").alias("p"))
        return sum(row.n for row in grouped.collect())

    # Each query once untimed (it pays Spark's and the Python workers' start), then `repeats` timed
    # runs, the sources taken in turns so that each sees the same load: the median's rows/s, every
    # run's, and the CPU split of the median run.
    timed: dict[str, list[tuple[float, dict[str, float]]]] = {}
    for query in ("count", "groupby"):
        for name, counted, grouped_frame in runs:
            assert query_rows(query, counted, grouped_frame) == messages, f"{name} {query}: not every row"
        for _ in range(repeats):
            for name, counted, grouped_frame in runs:
                seconds, rows, cpu = _timed_cpu(lambda: query_rows(query, counted, grouped_frame))
                assert rows == messages, f"{name} {query}: {rows} rows of {messages}"
                timed.setdefault(f"{name}_{query}", []).append((seconds, cpu))
    for key, samples in timed.items():
        samples.sort(key=lambda sample: sample[0])
        seconds, cpu = samples[(len(samples) - 1) // 2]
        result[f"{key}_rows_s"] = messages / seconds
        result[f"{key}_rows_s_runs"] = [round(messages / s) for s, _ in samples]
        result[f"{key}_cpu_s"] = cpu
    return result


def streaming_read(spark: Any, aeron_dir: str, workdir: str, messages: int, max_per_trigger: int,
                   archive_dir: str | None = None, sink: str = "foreachBatch") -> dict[str, Any]:
    """AvailableNow over the batch benchmark's recording; through the JVM connector when
    `archive_dir` is given (figures named streaming_jvm_*), else the Python source. `sink`: a
    foreachBatch counting each micro-batch (a py4j callback and a Spark job of its own a batch), or
    Spark's "noop" sink (figures streaming*_noop_*: every row made and dropped)."""
    batches: list[int] = []

    def count(frame: Any, batch_id: int) -> None:
        batches.append(frame.count())

    reader = spark.readStream.format(PYTHON_FORMAT[0] if archive_dir is None else "aeron")
    if archive_dir is not None:
        reader = reader.option("archiveDir", archive_dir)
    key = ("streaming" if archive_dir is None else "streaming_jvm") + ("_noop" if sink == "noop" else "")
    frame = (reader.option("channel", TRADES[0]).option("streamId", TRADES[1])
             .option("startingPositions", "earliest").option("maxRecordsPerTrigger", max_per_trigger)
             .option("aeronDir", aeron_dir).load())
    writer = frame.writeStream.format("noop") if sink == "noop" else frame.writeStream.foreachBatch(count)
    query = (writer.option("checkpointLocation", os.path.join(workdir, f"ck-{key}")).trigger(availableNow=True)
             .start())
    seconds, _ = _timed(lambda: query.awaitTermination(900))
    if sink == "noop":
        batches = [progress.numInputRows for progress in query.recentProgress if progress.numInputRows > 0]
    assert sum(batches) == messages, f"{key} read {sum(batches)} of {messages}"
    return {f"{key}_rows_s": messages / seconds, f"{key}_batches": len(batches),
            "max_records_per_trigger": max_per_trigger}


def latency(spark: Any, aeron_dir: str, archive: AeronArchive, workdir: str, seconds: float,
            rate: int, archive_dir: str | None = None, writer: str = "python",
            async_progress: bool = False) -> dict[str, Any]:
    """Micro-batch latency, from publish (the time in the message) to the row at the query's end, of
    the Python source (figures latency_*), or of the JVM connector when `archive_dir` is given
    (latency_jvm_*, on a stream of its own). The end is a Python `foreachBatch` collecting each
    micro-batch (`writer` "python"), or, for the JVM connector, a foreach writer in the JVM
    (`writer` "jvm": aeron.spark.LatencyWriter, figures latency_jvm_writer_*), so no Python worker
    or py4j call is in the path). `async_progress`: the JVM writer's query with Spark's
    asynchronous progress tracking (`asyncProgressTrackingEnabled`: the offset and commit logs
    written apart from the micro-batches, every second; figures latency_jvm_writer_async_*)."""
    from pyspark.sql import functions as F

    live = LIVE if archive_dir is None else (LIVE_JVM if writer == "python" else
                                             LIVE_JVM_WRITER_ASYNC if async_progress else LIVE_JVM_WRITER)
    archive.start_recording(*live)
    client = archive.aeron
    publication = client.add_exclusive_publication(*live)
    idle = IdleStrategy("backoff")
    while not publication.is_connected:
        idle.idle(0)
    publication.offer(b"0" * 32)  # the recording exists before the query starts
    latencies: list[float] = []
    out = os.path.join(workdir, f"latency-{writer}{'-async' if async_progress else ''}")
    os.makedirs(out, exist_ok=True)

    def measure(frame: Any, batch_id: int) -> None:
        now = time.time_ns()
        for row in frame.select(F.col("data")).collect():
            sent = int.from_bytes(bytes(row.data)[:8], "little")
            if sent:
                latencies.append((now - sent) / 1e6)

    def written() -> list[float]:  # the JVM writer's files: "kind latency_ms" lines
        found: list[float] = []
        for name in os.listdir(out):
            with open(os.path.join(out, name)) as f:
                found.extend(float(line[2:]) for line in f if line.startswith("m"))
        return found

    reader = spark.readStream.format(PYTHON_FORMAT[0] if archive_dir is None else "aeron")
    if archive_dir is not None:
        reader = reader.option("archiveDir", archive_dir)
    key = "latency" if archive_dir is None else ("latency_jvm" if writer == "python" else "latency_jvm_writer")
    key += "_async" if async_progress else ""
    frame = (reader.option("channel", live[0]).option("streamId", live[1])
             .option("startingPositions", "earliest").option("aeronDir", aeron_dir).load())
    checkpoint = os.path.join(workdir, f"ck-{key}")
    query: Any
    if writer == "python":
        query = (frame.writeStream.foreachBatch(measure).option("checkpointLocation", checkpoint)
                 .trigger(processingTime="0 seconds").start())
    else:
        jvm = spark.sparkContext._jvm
        query = (frame.select("data")._jdf.writeStream().foreach(jvm.aeron.spark.LatencyWriter(out))
                 .option("checkpointLocation", checkpoint)
                 .option("asyncProgressTrackingEnabled", "true" if async_progress else "false")
                 .trigger(jvm.org.apache.spark.sql.streaming.Trigger.ProcessingTime(0)).start())
    try:
        interval = 1.0 / rate
        end = time.monotonic() + seconds
        next_send = time.monotonic()
        sent = 0
        while time.monotonic() < end:
            now = time.monotonic()
            if now < next_send:
                time.sleep(min(next_send - now, 0.001))
                continue
            while publication.offer(time.time_ns().to_bytes(8, "little") + b"m" + bytes(23)) < 0:
                idle.idle(0)
            sent += 1
            next_send += interval
        deadline = time.monotonic() + 60
        while len(latencies if writer == "python" else written()) < sent and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        query.stop()
        publication.close()
    if writer != "python":
        latencies = written()
    return {f"{key}_messages": len(latencies), f"{key}_rate": rate,
            f"{key}_p50_ms": _percentile(latencies, 0.5) if latencies else None,
            f"{key}_p99_ms": _percentile(latencies, 0.99) if latencies else None}


REALTIME = ("aeron:ipc?term-length=16m", 5004)


class _LatencyWriter:
    """A Real-time Mode query's foreach writer (in the Python workers): each row's latency, its
    publish time (the first 8 bytes of `data`) to now, appended to a file of the task's own."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.out: Any = None

    def open(self, partition_id: int, epoch_id: int) -> bool:
        self.out = open(os.path.join(self.directory, f"{os.getpid()}-{partition_id}-{epoch_id}.txt"), "a")
        return True

    def process(self, row: Any) -> None:
        data = bytes(row.data)
        sent = int.from_bytes(data[:8], "little")
        if sent:  # the kind (byte 8: w for the warm-up, m for measured), then the latency in ms
            self.out.write(f"{chr(data[8])} {(time.time_ns() - sent) / 1e6}\n")
            self.out.flush()

    def close(self, error: Any) -> None:
        if self.out is not None:
            self.out.close()


def realtime_latency(spark: Any, aeron_dir: str, archive: AeronArchive, workdir: str, archive_dir: str,
                     seconds: float, rate: int, writer: str, stream_id: int,
                     checkpoint_interval: str = "5 minutes", warmup: float = 2.0) -> dict[str, Any]:
    """Real-time Mode through the JVM connector (docs/spark.md, "The JVM connector"): a filter and a
    projection from the recording of a live stream to a foreach writer, Python's (`writer`
    "python": each row goes to a Python worker) or one in the JVM ("jvm": aeron.spark.LatencyWriter);
    the latency from publish (the time in the message) to the row at the writer, measured for
    `seconds` once the first row arrived and `warmup` seconds (at most `seconds`) more went unmeasured
    at the rate. The trigger's duration is the checkpoint interval (`checkpoint_interval`; Spark's
    default 5 minutes): at each
    checkpoint Spark ends the batch's tasks, commits and starts the next batch, and rows wait
    meanwhile; {key}_checkpoints counts those inside the measured stretch and {key}_checkpoint_pause_ms
    is the largest latency of a batch's first row after one (None without one)."""
    channel = REALTIME[0]
    archive.start_recording(channel, stream_id)
    publication = archive.aeron.add_exclusive_publication(channel, stream_id)
    idle = IdleStrategy("backoff")
    while not publication.is_connected:
        idle.idle(0)
    publication.offer(bytes(32))  # the recording exists before the query starts
    deadline = time.monotonic() + 60
    while not archive.list_recordings(channel, stream_id):
        if time.monotonic() > deadline:
            raise BenchTimeoutError("the archive did not start recording the real-time stream")
        time.sleep(0.01)
    out = os.path.join(workdir, f"realtime-{writer}")
    os.makedirs(out, exist_ok=True)
    frame = (spark.readStream.format("aeron").option("channel", channel).option("streamId", stream_id)
             .option("startingPositions", "earliest").option("aeronDir", aeron_dir).option("archiveDir", archive_dir)
             .load().where("position > 0").select("data"))
    checkpoint = os.path.join(workdir, f"ck-realtime-{writer}")
    query: Any
    if writer == "python":
        query = (frame.writeStream.foreach(_LatencyWriter(out)).outputMode("update")
                 .option("checkpointLocation", checkpoint).trigger(realTime=checkpoint_interval).start())
    else:
        jvm = spark.sparkContext._jvm
        query = (frame._jdf.writeStream().foreach(jvm.aeron.spark.LatencyWriter(out)).outputMode("update")
                 .option("checkpointLocation", checkpoint)
                 .trigger(jvm.org.apache.spark.sql.streaming.Trigger.RealTime(checkpoint_interval)).start())

    def by_epoch(kind: str = "m") -> dict[int, list[float]]:
        # a writer's file per task and batch (epoch): "...-<partition>-<epoch>.txt", rows in arrival order
        found: dict[int, list[float]] = {}
        for name in os.listdir(out):
            with open(os.path.join(out, name)) as f:
                rows = [float(line[2:]) for line in f if line.startswith(kind)]
            if rows:
                found.setdefault(int(name[:-len(".txt")].rsplit("-", 1)[1]), []).extend(rows)
        return found

    def measured(kind: str = "m") -> list[float]:
        return [value for rows in by_epoch(kind).values() for value in rows]

    sent = 0
    try:
        # the first rows reach the writer once the query's tasks run: wait for them, then measure
        warm = time.monotonic() + 120
        while not measured("w") and time.monotonic() < warm:
            publication.offer(time.time_ns().to_bytes(8, "little") + b"w" + bytes(23))
            time.sleep(0.05)

        def send(kind: bytes, duration: float) -> int:
            count = 0
            interval = 1.0 / rate
            end = time.monotonic() + duration
            next_send = time.monotonic()
            while time.monotonic() < end:
                now = time.monotonic()
                if now < next_send:
                    time.sleep(min(next_send - now, 0.001))
                    continue
                while publication.offer(time.time_ns().to_bytes(8, "little") + kind + bytes(23)) < 0:
                    idle.idle(0)
                count += 1
                next_send += interval
            return count

        # then the rate for a while unmeasured: the JVM compiles the path and settles its heap in
        # the first second or so (docs/benchmarks.md, "Spark")
        send(b"w", min(warmup, seconds))
        sent = send(b"m", seconds)
        drain = time.monotonic() + 30
        while len(measured()) < sent and time.monotonic() < drain:
            time.sleep(0.05)
    finally:
        query.stop()
        publication.close()
    epochs = by_epoch()
    latencies = [value for rows in epochs.values() for value in rows]
    # the batches after the first with measured rows began at a checkpoint: their first rows waited for it
    pauses = [rows[0] for epoch, rows in sorted(epochs.items())[1:]]
    key = "realtime" if writer == "python" else "realtime_jvm_writer"
    return {f"{key}_messages": len(latencies), f"{key}_sent": sent, f"{key}_rate": rate,
            f"{key}_p50_ms": _percentile(latencies, 0.5) if latencies else None,
            f"{key}_p99_ms": _percentile(latencies, 0.99) if latencies else None,
            f"{key}_checkpoint_interval": checkpoint_interval, f"{key}_checkpoints": len(pauses),
            f"{key}_checkpoint_pause_ms": max(pauses) if pauses else None}


def sink(spark: Any, aeron_dir: str, workdir: str, messages: int, fmt: str = "", key: str = "sink") -> dict[str, Any]:
    """The sink of `fmt` (default: the Python one) against a Parquet write of the same rows: {key}_rows_s
    and, for the Python sink, parquet_write_rows_s."""
    from pyspark.sql import functions as F

    frame = spark.range(0, messages, numPartitions=max(1, spark.sparkContext.defaultParallelism)).select(
        F.concat(F.unhex(F.lpad(F.hex("id"), 16, "0")), F.lit(bytes(24))).alias("data")).cache()
    frame.count()
    client = Aeron.connect(aeron_dir)
    subscription = client.add_subscription(*SINK)
    received = [0]
    stop = threading.Event()

    def drain() -> None:
        idle = IdleStrategy("backoff")
        while not stop.is_set():
            got = len(subscription.poll_messages(8192))
            received[0] += got
            idle.idle(got)

    drainer = threading.Thread(target=drain, daemon=True)
    drainer.start()
    try:
        write = frame.write.format(fmt or PYTHON_FORMAT[0]).mode("append").option("channel", SINK[0]).option("streamId", SINK[1])
        for _ in range(2):  # the second timed, as above
            seconds, _ = _timed(lambda: write.option("aeronDir", aeron_dir).save())
            parquet_seconds, _ = _timed(lambda: frame.write.mode("overwrite").parquet(os.path.join(workdir, "sink.parquet")))
    finally:
        stop.set()
        drainer.join(10)
        client.close()
        frame.unpersist()
    if key != "sink":
        return {f"{key}_rows_s": messages / seconds, f"{key}_parquet_write_rows_s": messages / parquet_seconds}
    return {"sink_rows_s": messages / seconds, "parquet_write_rows_s": messages / parquet_seconds}


def run(args: argparse.Namespace) -> dict[str, Any]:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from ..archive.service import Archive
    from ..context import DriverContext
    from ..spark import register

    workdir = tempfile.mkdtemp(prefix="aa-bench-spark-", dir=args.dir)
    aeron_dir = os.path.join("/dev/shm", os.path.basename(workdir))
    from ..spark import jvm as spark_jvm

    builder = (SparkSession.builder.appName("aeron-async bench-spark").master(args.master)
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.memory", args.driver_memory))
    if args.connectors != "python" and spark_jvm.jar_path() is not None:
        builder = spark_jvm.configure(builder)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    connector = register(spark, "python" if args.connectors == "python" else "auto")
    if args.connectors == "both" and connector != "jvm":
        raise SystemExit("bench-spark --connectors both: the JVM connector is not built (no JDK when the package was "
                         "built): python -m aeron_async.spark.jvm.build, or --connectors python")
    PYTHON_FORMAT[0] = "aeron_python" if connector == "jvm" else "aeron"
    archive_service = Archive.launch(
        embedded_driver=DriverContext(aeron_dir=aeron_dir, dir_delete_on_shutdown=True, threading_mode="SHARED",
                                      ipc_term_buffer_length=str(16 << 20)),
        archive_dir=os.path.join(workdir, "archive"))
    result: dict[str, Any] = {"master": args.master}
    try:
        with AeronArchive.connect(aeron_dir=aeron_dir) as archive:
            result.update(batch_read(spark, aeron_dir, archive, workdir, os.path.join(workdir, "archive"), args.messages,
                                     args.repeats, PYTHON_FORMAT[0], connector == "jvm"))
            print(json.dumps(result), flush=True)
            for sink_kind in ("foreachBatch", "noop"):
                result.update(streaming_read(spark, aeron_dir, workdir, args.messages, args.max_per_trigger,
                                             sink=sink_kind))
                print(json.dumps(result), flush=True)
                if connector == "jvm":
                    result.update(streaming_read(spark, aeron_dir, workdir, args.messages, args.max_per_trigger,
                                                 os.path.join(workdir, "archive"), sink_kind))
                    print(json.dumps(result), flush=True)
            result.update(latency(spark, aeron_dir, archive, workdir, args.latency_seconds, args.latency_rate))
            print(json.dumps(result), flush=True)
            if connector == "jvm":
                for writer, async_progress in (("python", False), ("jvm", False), ("jvm", True)):
                    result.update(latency(spark, aeron_dir, archive, workdir, args.latency_seconds, args.latency_rate,
                                          os.path.join(workdir, "archive"), writer, async_progress))
                    print(json.dumps(result), flush=True)
            if connector == "jvm":
                # a Python foreach writer gets its rows in batches, the last at the batch's end: it
                # runs at a 5 s checkpoint interval, or its rows would wait minutes
                for writer, stream_id, interval in (("jvm", REALTIME[1], args.realtime_checkpoint),
                                                    ("python", REALTIME[1] + 1, "5 seconds")):
                    result.update(realtime_latency(spark, aeron_dir, archive, workdir,
                                                   os.path.join(workdir, "archive"), args.latency_seconds,
                                                   args.realtime_rate, writer, stream_id, interval,
                                                   args.realtime_warmup))
                    print(json.dumps(result), flush=True)
            result.update(sink(spark, aeron_dir, workdir, args.sink_messages or args.messages))
            if connector == "jvm":  # the JVM connector's sink (docs/spark.md, "The JVM connector")
                result.update(sink(spark, aeron_dir, workdir, args.sink_messages or args.messages, "aeron", "sink_jvm"))
    finally:
        spark.stop()
        archive_service.close()
        shutil.rmtree(workdir, ignore_errors=True)
    return result


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--messages", type=int, default=10_000_000, help="messages of the recording read in batch")
    parser.add_argument("--sink-messages", type=int, default=0, help="rows the sink writes (default --messages)")
    parser.add_argument("--max-per-trigger", type=int, default=1_000_000, help="maxRecordsPerTrigger of the stream")
    parser.add_argument("--latency-seconds", type=float, default=20.0)
    parser.add_argument("--latency-rate", type=int, default=1000, help="messages/s of the latency stream")
    parser.add_argument("--realtime-rate", type=int, default=10_000,
                        help="messages/s of the Real-time Mode stream (JVM connector)")
    parser.add_argument("--realtime-checkpoint", default="5 minutes",
                        help="the Real-time Mode trigger's duration with the JVM writer: its checkpoint interval "
                             "(Spark's default; the Python foreach writer's is 5 seconds)")
    parser.add_argument("--realtime-warmup", type=float, default=2.0,
                        help="seconds of the Real-time Mode stream sent unmeasured once rows arrive (at most "
                             "--latency-seconds)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="timed runs of each batch query, the sources in turns (the median reported)")
    parser.add_argument("--master", default="local[*]")
    parser.add_argument("--driver-memory", default="2g")
    parser.add_argument("--dir", help="where the archive and Parquet files go (default: the temp directory)")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    parser.add_argument("--connectors", choices=("auto", "both", "python"), default="auto",
                        help="batch reads through the JVM connector and the Python source side by side (both; "
                             "auto: both where the JVM connector is built), or the Python source alone")


def command(args: argparse.Namespace) -> int:
    if args.repeats < 1:
        raise SystemExit(f"--repeats {args.repeats}: give at least 1")
    result = run(args)
    if args.json:
        print(json.dumps(result))
        return 0
    for key, value in result.items():
        shown = f"{value:,.0f}" if isinstance(value, float) and value > 100 else value
        print(f"{key:28s} {shown}")
    for name in ("aeron_jvm", "aeron", "aeron_columns"):
        if f"{name}_count_rows_s" not in result:
            continue
        print(f"{name}/parquet count {result[f'{name}_count_rows_s'] / result['parquet_count_rows_s']:.2f}x, groupBy "
              f"{result[f'{name}_groupby_rows_s'] / result['parquet_groupby_rows_s']:.2f}x")
    print(f"sink/parquet write {result['sink_rows_s'] / result['parquet_write_rows_s']:.2f}x (one run)")
    if "sink_jvm_rows_s" in result:
        print(f"JVM sink/parquet write {result['sink_jvm_rows_s'] / result['sink_jvm_parquet_write_rows_s']:.2f}x "
              "(one run)")
    return 0
