"""A streaming data pipeline on Spark over aeron streams (docs/spark.md):

    python examples/spark_pipeline.py [--seconds 20] [--rate 2000] [--window 2] [--master local[2]]

- an async publisher sends synthetic trades (JSON: symbol, price, quantity, event time) on
  aeron:ipc stream 3001, which the archive records;
- a Structured Streaming job reads the recording (`format("aeron")`, from its start, at most
  --max-per-trigger trades a micro-batch), computes per-symbol aggregates over tumbling event-time
  windows (trades, volume, VWAP, low, high) and writes each window's result once it closes (append
  mode: the watermark, 1 s behind the latest trade, has passed its end) to aeron:ipc stream 3002;
- an async subscriber prints each result as it arrives.

By default everything runs in this process's reach: Spark in local mode, a media driver and an
archive embedded here (in a temporary directory, removed at the end). The run is bounded: the
publisher stops after --seconds, the job then reads what is left and stops, and the script checks
that the last result of every window adds up to the trades published. On a cluster, give the
executors' driver directory and the archive's channels (`--aeron-dir`, `--control-channel`, ...;
docs/spark.md shows spark-submit for a standalone cluster and Kubernetes).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

import anyio
import attrs

import aeron_async
from aeron_async.archive import AeronArchive
from aeron_async.spark.provenance import is_end_marker

TRADES = ("aeron:ipc?term-length=1m", 3001)
RESULTS = ("aeron:ipc?term-length=1m", 3002)
SYMBOLS = ("AAPL", "MSFT", "NVDA", "AMZN", "GOOG")


@attrs.define
class Outcome:
    published: int = 0
    results: int = 0
    last: dict[tuple[str, str], dict[str, Any]] = attrs.field(factory=dict)

    @property
    def counted(self) -> int:
        """Trades counted by the last result of every (window, symbol)."""
        return sum(int(row["trades"]) for row in self.last.values())


class Stopped(Exception):
    """SIGINT or SIGTERM arrived: the run stops its query, the archive and Spark, and ends."""


class _Signals:
    """SIGINT and SIGTERM set `stopped`, a plain attribute, and raise nothing: an exception raised
    inside a py4j call (the main thread is in one most of the time) would leave Spark's gateway
    mid-command and print its traceback. The run looks at the flag between its short calls."""

    stopped = False

    @classmethod
    def install(cls) -> None:
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, cls._on_signal)

    @classmethod
    def _on_signal(cls, signum: int, frame: Any) -> None:
        cls.stopped = True


async def _publish(client: aeron_async.AsyncAeron, seconds: float, rate: int, stop: threading.Event,
                   outcome: Outcome) -> None:
    rng = random.Random(17)
    prices = {symbol: 100.0 + 50 * i for i, symbol in enumerate(SYMBOLS)}
    async with await client.add_publication(*TRADES) as publication:
        start = time.monotonic()
        tick = 0.05
        while time.monotonic() - start < seconds and not stop.is_set():
            batch_start = time.monotonic()
            for _ in range(max(1, int(rate * tick))):
                symbol = rng.choice(SYMBOLS)
                prices[symbol] *= 1 + rng.gauss(0, 0.0005)
                trade = {"symbol": symbol, "price": round(prices[symbol], 4), "quantity": rng.randint(1, 500),
                         "time": int(time.time() * 1000)}
                await publication.offer(json.dumps(trade).encode())
                outcome.published += 1
            await anyio.sleep(max(0.0, tick - (time.monotonic() - batch_start)))
        # an event an hour ahead moves the watermark past every window, so the job closes (emits)
        # them all; its own window never closes, so it is never counted
        await publication.offer(json.dumps({"symbol": "_END", "price": 0.0, "quantity": 0,
                                            "time": int(time.time() * 1000) + 3_600_000}).encode())


async def _subscribe(client: aeron_async.AsyncAeron, results: tuple[str, int], stop: threading.Event,
                     outcome: Outcome, show: Callable[[str], None]) -> None:
    async with await client.add_subscription(*results) as subscription:
        while not stop.is_set():
            with anyio.move_on_after(0.2):
                for message in await subscription.receive_batch():
                    if is_end_marker(message.reserved_value):
                        continue  # the sink's end of a task attempt (docs/spark.md)
                    row = json.loads(message.data)
                    outcome.results += 1
                    outcome.last[(row["window_start"], row["symbol"])] = row
                    show(f"{row['window_start'][11:19]} {row['symbol']:5s} trades {row['trades']:5d} volume "
                         f"{row['volume']:8d} vwap {row['vwap']:9.3f} low {row['low']:9.3f} high {row['high']:9.3f}")


def start_job(spark: Any, aeron_dir: str, window: float, max_per_trigger: int, checkpoint: str,
              archive_options: dict[str, str], results: tuple[str, int], source: str = "aeron") -> Any:
    """The Structured Streaming job: trades in, per-symbol window aggregates out, through `source`
    (`aeron`: the JVM connector where the package's jar is built, else the Python source;
    `aeron_python`: the Python source and sink), registered by run()."""
    from pyspark.sql import functions as F

    trades = (spark.readStream.format(source)
              .option("channel", TRADES[0]).option("streamId", TRADES[1])
              .option("startingPositions", "earliest").option("maxRecordsPerTrigger", max_per_trigger)
              .option("aeronDir", aeron_dir).options(**archive_options)
              .load())
    schema = "symbol STRING, price DOUBLE, quantity BIGINT, time BIGINT"
    parsed = (trades.select(F.from_json(F.col("data").cast("string"), schema).alias("t")).select("t.*")
              .withColumn("event_time", F.timestamp_millis("time")))
    aggregates = (parsed.withWatermark("event_time", "1 second")
                  .groupBy(F.window("event_time", f"{window} seconds"), "symbol")
                  .agg(F.count("*").alias("trades"), F.sum("quantity").alias("volume"),
                       (F.sum(F.col("price") * F.col("quantity")) / F.sum("quantity")).alias("vwap"),
                       F.min("price").alias("low"), F.max("price").alias("high")))
    out = aggregates.select(F.to_json(F.struct(
        F.date_format("window.start", "yyyy-MM-dd HH:mm:ss.SSS").alias("window_start"),
        "symbol", "trades", "volume", F.round("vwap", 4).alias("vwap"), "low", "high")).alias("data"))
    return (out.writeStream.format(source).outputMode("append")
            .option("channel", results[0]).option("streamId", results[1]).option("aeronDir", aeron_dir)
            .option("checkpointLocation", checkpoint).trigger(processingTime="1 second")
            .queryName("trades_per_symbol").start())


def run(spark: Any, *, seconds: float = 20.0, rate: int = 2000, window: float = 2.0, max_per_trigger: int = 20_000,
        aeron_dir: str | None = None, archive_options: dict[str, str] | None = None,
        results: tuple[str, int] = RESULTS, show: Callable[[str], None] | None = None, timeout: float = 300.0,
        should_stop: Callable[[], bool] = lambda: False, source: str = "aeron") -> Outcome:
    """Run the pipeline once, bounded: embedded driver + archive unless `aeron_dir` names a running
    driver with its archive. `archive_options` go to the source (controlChannel, responseChannel,
    replayChannel, archiveDir, ...; the embedded archive's directory is given as archiveDir, which
    the JVM connector reads); `results` is where the job publishes (a UDP endpoint of this host on a
    cluster, since the executors publish from theirs); `source` is the data source's name
    (start_job). Raises `Stopped` soon after `should_stop()` turns true (it is asked every 0.2 s at
    most while the run waits)."""
    show = show or _show
    workdir = tempfile.mkdtemp(prefix="aeron-spark-pipeline-")
    archive: Any = None
    archive_options = dict(archive_options or {})
    if aeron_dir is None:
        from aeron_async.archive.service import Archive

        aeron_dir = os.path.join("/dev/shm" if os.path.isdir("/dev/shm") else workdir, os.path.basename(workdir))
        archive_options["archiveDir"] = os.path.join(workdir, "archive")
        archive = Archive.launch(embedded_driver=aeron_async.DriverContext(
                                     aeron_dir=aeron_dir, dir_delete_on_shutdown=True, threading_mode="SHARED",
                                     shared_idle_strategy="backoff"),
                                 archive_dir=archive_options["archiveDir"], threading_mode="SHARED",
                                 idle_strategy="backoff")
    outcome = Outcome()
    stop = threading.Event()
    errors: list[BaseException] = []
    published = threading.Event()

    async def async_side() -> None:
        async with aeron_async.connect(aeron_dir) as client, anyio.create_task_group() as tasks:
            tasks.start_soon(_subscribe, client, results, stop, outcome, show)
            await _publish(client, seconds, rate, stop, outcome)
            published.set()

    def loop() -> None:
        try:
            anyio.run(async_side)
        except BaseException as exc:  # shown by the main thread
            errors.append(exc)
            published.set()

    def check() -> None:
        if should_stop():
            raise Stopped

    query = None
    side: threading.Thread | None = None
    try:
        from aeron_async.spark import register

        register(spark)  # where the jar is built and not on the classpath yet, this adds it (a few seconds)
        check()
        with AeronArchive.connect(aeron_dir=aeron_dir, **_archive_kwargs(archive_options)) as control:
            control.start_recording(*TRADES)
            side = threading.Thread(target=loop, name="pipeline-async", daemon=True)
            side.start()
            deadline = time.monotonic() + timeout
            while not control.list_recordings(*TRADES) and not errors:
                check()
                if time.monotonic() > deadline:
                    raise TimeoutError("the trades recording did not start")
                time.sleep(0.02)
            show(f"recording the trades in {aeron_dir}; starting the Spark job (results print as each {window:g} s "
                 f"window closes)")
            query = start_job(spark, aeron_dir, window, max_per_trigger, os.path.join(workdir, "checkpoint"),
                              archive_options, results, source)
            check()
            while not published.wait(0.2) and time.monotonic() < deadline:
                check()
            if errors:
                raise errors[0]
            show(f"published {outcome.published:,} trades; letting the job catch up")
            # the job runs on its own trigger; until the last trade is counted, or the deadline
            while outcome.counted < outcome.published and time.monotonic() < deadline:
                check()
                if not query.isActive:
                    raise RuntimeError(f"the Spark job stopped: {query.exception()}")
                time.sleep(0.2)
            query.stop()
            query = None
    finally:
        stop.set()
        if query is not None:
            query.stop()
        if side is not None:
            side.join(10.0)  # the publisher and subscriber see `stop` within 0.2 s and close
        if archive is not None:
            archive.close()
        shutil.rmtree(workdir, ignore_errors=True)
    if errors:
        raise errors[0]
    return outcome


def _show(line: str) -> None:
    """A line of the run, on stdout at once (also when stdout is a pipe or a file)."""
    print(line, flush=True)


def _archive_kwargs(options: dict[str, str]) -> dict[str, Any]:
    names = {"controlChannel": "control_channel", "controlStreamId": "control_stream_id",
             "responseChannel": "response_channel", "responseStreamId": "response_stream_id"}
    return {names[key]: (int(value) if key.endswith("StreamId") else value)
            for key, value in options.items() if key in names}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=20.0, help="how long the publisher sends trades")
    parser.add_argument("--rate", type=int, default=2000, help="trades per second")
    parser.add_argument("--window", type=float, default=2.0, help="window length in seconds")
    parser.add_argument("--max-per-trigger", type=int, default=20_000, help="maxRecordsPerTrigger of the job")
    parser.add_argument("--master", help="Spark master (default: spark-submit's, or local[*])")
    parser.add_argument("--aeron-dir", help="a running driver (with its archive) instead of embedded ones")
    parser.add_argument("--control-channel", help="the archive's control channel (with --aeron-dir)")
    parser.add_argument("--response-channel", help="where the archive answers (with --aeron-dir)")
    parser.add_argument("--replay-channel", help="where the archive replays to the executors (a UDP endpoint there)")
    parser.add_argument("--archive-dir", help="the archive's directory on each executor's host (with --aeron-dir): "
                                              "the JVM connector reads the recording's files there")
    parser.add_argument("--results-channel", default=RESULTS[0],
                        help="where the job publishes its results (on a cluster: a UDP endpoint of this host)")
    args = parser.parse_args()
    # SIGINT and SIGTERM set a flag the run looks at: its `finally` blocks stop the query, the
    # archive and Spark (a pod being stopped ends within seconds, without a traceback)
    _Signals.install()
    _show(f"starting Spark ({args.master or 'local'}): the first results come once the job runs and the first "
          f"window closes")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("aeron-spark-pipeline").config("spark.ui.enabled", "false")
    if args.master:
        builder = builder.master(args.master)
    spark = builder.config("spark.sql.shuffle.partitions", "2").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    _Signals.install()  # again: starting Spark installed pyspark's own SIGINT handler, which raises
    archive_options = {key: value for key, value in (("controlChannel", args.control_channel),
                                                     ("responseChannel", args.response_channel),
                                                     ("replayChannel", args.replay_channel),
                                                     ("archiveDir", args.archive_dir)) if value}
    try:
        outcome = run(spark, seconds=args.seconds, rate=args.rate, window=args.window,
                      max_per_trigger=args.max_per_trigger, aeron_dir=args.aeron_dir, archive_options=archive_options,
                      results=(args.results_channel, RESULTS[1]), should_stop=lambda: _Signals.stopped)
    except Stopped:
        print("stopped by a signal", flush=True)
        return 130
    finally:
        spark.stop()
    windows = len({key[0] for key in outcome.last})
    ok = outcome.counted == outcome.published
    print(f"{outcome.published:,} trades published, {outcome.results:,} results over {windows} windows; "
          f"the last result of every window counts {outcome.counted:,} trades: {'all counted' if ok else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
