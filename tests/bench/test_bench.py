"""The benchmark harness runs end to end in --quick mode on a tiny selection and writes the JSON the
docs and CI read: every expected key, positive figures. No assertion on how fast anything is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from aeron_async.bench.cases import TARGETS
from conftest import REPO, python_env

if TYPE_CHECKING:
    import numpy

pytest.importorskip("zmq")
pytest.importorskip("hdrh")
pytest.importorskip("rich")
pytest.importorskip("matplotlib")


def _positive(row: dict, field: str) -> None:
    assert row[field]["median"] > 0, (field, row)
    assert 0 < row[field]["min"] <= row[field]["median"] <= row[field]["max"], (field, row)


UDP_PORT = 40_466  # the busy-poll (invoker) round trip also binds the next ports, +2 and +3
UDP_CHANNEL = f"aeron:udp?endpoint=127.0.0.1:{UDP_PORT}"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    path = tmp_path_factory.mktemp("bench") / "bench.json"
    plots = path.parent / "plots"
    args = [sys.executable, "-m", "aeron_async", "bench", "--quick", "--duration", "0.3", "--warmup", "0.1",
            "--only", "aeron-sync-msg,aeron-asyncio-batch,zmq-sync-ipc,aeron-sync,aeron-trio,udp-asyncio,"
                      "aeron-sync-invoker,aeron-sync-handler",
            "--channel", "aeron:ipc", "--channel", f"aeron:udp?endpoint=127.0.0.1:{UDP_PORT}",
            "--messages", "50000", "--memory-paths", "sync",
            "--json", str(path), "--plot", str(plots)]
    run = subprocess.run(args, env=python_env(), cwd=REPO, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert "Throughput" in run.stdout and "Round trip" in run.stdout and "Targets" in run.stdout
    data = json.loads(path.read_text())
    data["_stdout"] = run.stdout
    data["_plots"] = str(plots)
    return data


def test_run_description(results: dict) -> None:
    for key in ("schema", "command", "machine", "config", "driver", "channels", "skipped", "throughput", "latency",
                "memory", "native_alloc", "idle", "flow_control", "targets"):
        assert key in results, key
    machine = results["machine"]
    assert machine["nproc"] > 0 and machine["cpu_model"] is not None and machine["kernel"] and machine["python"]
    assert results["driver"]["threading_mode"] == "SHARED"
    assert "standalone" in results["driver"]["kind"]
    assert results["config"]["quick"] is True
    assert results["channels"] == ["aeron:ipc", UDP_CHANNEL]


def test_throughput_rows(results: dict) -> None:
    rows = {(r["case"], r["transport"]): r for r in results["throughput"]}
    for case, transport in (("aeron-sync-msg", "aeron:ipc"), ("aeron-asyncio-batch", "aeron:ipc"),
                            ("aeron-sync-msg", UDP_CHANNEL), ("aeron-asyncio-batch", UDP_CHANNEL),
                            ("zmq-sync-ipc", "ipc://"), ("udp-asyncio", "udp 127.0.0.1")):
        row = rows[(case, transport)]
        assert row["size"] == 32 and row["errors"] == 0, row
        _positive(row, "msgs_per_s")
        _positive(row, "mb_per_s")
        assert len(row["rounds"]) == 1
        assert row["rounds"][0]["messages"] > 0 and row["rounds"][0]["seconds"] > 0
    assert rows[("aeron-sync-msg", "aeron:ipc")]["ratio_vs_peer"] > 0
    assert rows[("aeron-sync-msg", "aeron:ipc")]["peer"] == "zmq-sync-ipc"


def test_latency_rows(results: dict) -> None:
    rows = {(r["case"], r["transport"]): r for r in results["latency"]}
    for case, transport in (("aeron-sync", "aeron:ipc"), ("aeron-trio", "aeron:ipc"), ("zmq-sync-ipc", "ipc://"),
                            ("udp-asyncio", "udp 127.0.0.1"), ("aeron-sync-invoker", UDP_CHANNEL)):
        row = rows[(case, transport)]
        assert row["errors"] == 0, row
        assert row["round_trips"] > 0
        for field in ("p50_us", "p90_us", "p99_us", "p99_9_us", "max_us"):
            _positive(row, field)
        r = row["rounds"][0]
        assert r["p50_us"] <= r["p90_us"] <= r["p99_us"] <= r["p99_9_us"] <= r["max_us"]
        assert r["histogram"]
    assert rows[("aeron-sync", "aeron:ipc")]["ratio_vs_peer"] > 0


def test_memory_and_native_allocation(results: dict) -> None:
    (memory,) = results["memory"]
    assert memory["path"].startswith("sync")
    assert memory["messages"] >= 50_000
    assert isinstance(memory["flat"], bool)
    for key in ("traced", "rss", "rss_anon", "heap_in_use"):
        assert key in memory["growth"]
    assert len(memory["samples"]) >= 2 and all(s["rss"] > 0 for s in memory["samples"])
    native = results["native_alloc"]
    assert "error" not in native, native
    assert native["messages"] > 0 and native["msgs_per_s"] > 0
    assert isinstance(native["allocates_per_message"], bool)
    assert "mallinfo2" in native["method"]


def test_idle_and_targets(results: dict) -> None:
    idle = results["idle"]
    assert "error" not in idle, idle
    assert idle["seconds"] > 0 and idle["cpu_percent"] >= 0
    targets = results["targets"]
    assert [t["target"] for t in targets] == [t.label for t in TARGETS]
    for t in targets:
        assert set(t) >= {"target", "goal", "measured", "value", "met"}
    measured = {t["target"]: t for t in targets}
    assert measured["IPC throughput, sync per-message offer loop -> poll"]["value"] > 0
    assert measured["IPC throughput, sync poll(handler), per-message handler"]["value"] > 0
    assert measured["IPC throughput, sync controlled_poll(handler)"]["value"] is None  # not in --only: not measured
    assert measured["IPC round trip, sync busy-poll, p50"]["value"] > 0
    assert measured["idle async subscriber + embedded driver"]["met"] in (True, False)
    assert measured["UDP loopback throughput, default driver settings, sync per-message"]["value"] > 0
    assert measured["UDP loopback round trip, busy-poll mode (INVOKER drivers), p50"]["value"] > 0
    fc = results["flow_control"]  # measured where an interface carries multicast, else says why not
    assert ("error" in fc and "interface" in fc["error"]) or (fc["median"]["min"] > 0 and fc["median"]["pymin"] > 0)


def test_examples_runner_help() -> None:
    run = subprocess.run([sys.executable, os.path.join(REPO, "examples", "benchmarks", "run.py"), "--help"],
                         env=python_env(), capture_output=True, text=True, timeout=60)
    assert run.returncode == 0
    assert "--quick" in run.stdout and "--json" in run.stdout


def _pixels_of(image: "numpy.ndarray", hex_color: str) -> int:
    rgb = [int(hex_color[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    return int((abs(image[:, :, :3] - rgb).max(axis=2) < 0.02).sum())


def test_plots_are_readable_charts_of_every_case(results: dict) -> None:
    """--plot wrote one latency chart per channel family and size and one throughput chart per size;
    each opens as a PNG of the size drawn, with our colour (and the peers' bars) on it."""
    from matplotlib.image import imread

    from aeron_async.bench.plot import OUR_COLOR, PEER_COLOR

    plots = results["_plots"]
    assert sorted(os.listdir(plots)) == ["latency-ipc-32B.png", "latency-udp-32B.png", "throughput-32B.png"]
    for name in ("latency-ipc-32B.png", "latency-udp-32B.png"):
        image = imread(os.path.join(plots, name))
        assert image.shape[:2] == (550, 900), (name, image.shape)
        # our first case's legend line (its curve is as long as the log of its sample count: a busy-poll UDP
        # round trip on a loaded 2-vCPU machine may have a handful in the run's 0.3 s) and the curves of the
        # first cases, in matplotlib's colour cycle
        assert _pixels_of(image, OUR_COLOR) > 20, name
        assert sum(_pixels_of(image, c) for c in (OUR_COLOR, "#ff7f0e", "#2ca02c", "#d62728")) > 200, name
        assert len({tuple(p) for p in image.reshape(-1, image.shape[2])[::37]}) > 20, name  # not blank
    rows = [r for r in results["throughput"] if "msgs_per_s" in r]
    image = imread(os.path.join(plots, "throughput-32B.png"))
    assert image.shape[:2] == (round(100 * (1.8 + 0.28 * len(rows))), 900), image.shape
    assert _pixels_of(image, OUR_COLOR) > 1000 and _pixels_of(image, PEER_COLOR) > 1000


def test_bench_archive_reports_rates_ratios_and_where_the_cpu_went(tmp_path: Path) -> None:
    out = os.path.join(str(tmp_path), "archive.json")
    run = subprocess.run([sys.executable, "-m", "aeron_async", "bench-archive", "--dir", str(tmp_path), "--megabytes",
                          "8", "--round-trips", "200", "--repeats", "2", "--replication-megabytes", "8",
                          "--persistent-messages", "1000000", "--persistent-behind", "100000", "--json", out],
                         env=python_env(), cwd=REPO, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    data = json.loads(open(out).read())
    assert [r["size"] for r in data["recording"]] == [32, 4096]
    for r in data["recording"]:
        assert r["rate"] > 0 and r["disk_write_rate"] > 0 and len(r["ratios"]) == 2
        assert r["cpu"]["archive-recorde"] > 0  # the recorder thread wrote the segments
        assert set(r["disk_write_cpu"]) == {"disk-write"} and r["disk_write_cpu"]["disk-write"] > 0
    assert [r["cache"] for r in data["replay"]] == ["page cache", "cold"]
    for r in data["replay"]:
        assert len(r["rates"]) == len(r["plain_read_rates"]) == 2 and min(r["rates"]) > 0
        # the replayer works during the replay; during the plain read it only idles
        assert r["cpu"]["archive-replaye"] > r["plain_read_cpu"].get("archive-replaye", 0.0)
    assert data["latency"]["on"]["median_us"] > 0 and data["latency"]["off"]["median_us"] > 0
    assert "CPU seconds by thread" in run.stdout and "| replay, page cache |" in run.stdout
    replication = data["replication"]  # a recording of 8 MiB replicated whole to a second archive
    assert replication["bytes"] >= 8 << 20 and replication["replication_rate"] > 0 and replication["record_rate"] > 0
    assert "| archive replication (UDP, loopback) |" in run.stdout
    # the persistent subscription over IPC, UDP and a spy: 1 M messages published while it starts 100 k behind,
    # joins live, is stopped half way and restarted from its saved position; every message once, in order
    persistent = data["persistent"]
    assert persistent["messages"] == 1_000_000 and persistent["behind"] == 100_000
    assert list(persistent["scenarios"]) == ["ipc", "udp", "spy"]
    for scenario in persistent["scenarios"].values():
        assert scenario["exactly_once_in_order"] and scenario["live_joins"] >= 2
    assert persistent["to_live_s"] > 0 and len(persistent["ratios"]) == 5 and min(persistent["replaying_runs"]) > 0
    assert "| throughput while replaying (1,000,000 messages) |" in run.stdout


def test_bench_spark_reports_every_figure_with_the_cpu_split(tmp_path: Path) -> None:
    pytest.importorskip("pyspark", reason="pyspark is not installed (the spark extra)")
    from support.spark_fixtures import java_available

    if not java_available():
        pytest.skip("no Java (java on PATH or JAVA_HOME): Spark needs a JVM; ./dev setup installs one")
    run = subprocess.run([sys.executable, "-m", "aeron_async", "bench-spark", "--messages", "20000",
                          "--max-per-trigger", "5000", "--latency-seconds", "1", "--latency-rate", "100",
                          "--repeats", "2", "--master", "local[2]", "--dir", str(tmp_path), "--json"],
                         env=python_env(), cwd=REPO, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    data = json.loads(run.stdout.strip().splitlines()[-1])
    from aeron_async.spark.jvm import jar_path

    # the JVM connector beside the Python source where it is built (docs/spark.md, "The JVM connector")
    for name in ("aeron", "aeron_columns", "parquet", *(("aeron_jvm",) if jar_path() else ())):
        for query in ("count", "groupby"):
            assert data[f"{name}_{query}_rows_s"] > 0 and len(data[f"{name}_{query}_rows_s_runs"]) == 2
            cpu = data[f"{name}_{query}_cpu_s"]
            assert set(cpu) == {"this process", "Spark JVM", "Python workers"} and cpu["Spark JVM"] > 0
    for key in ("streaming", "streaming_noop"):  # 20,000 rows, 5,000 a trigger
        assert data[f"{key}_batches"] == 4 and data[f"{key}_rows_s"] > 0
    jvm_latencies = ("latency_jvm", "latency_jvm_writer", "latency_jvm_writer_async") if jar_path() else ()
    for key in ("latency", *jvm_latencies):  # micro-batches
        assert data[f"{key}_messages"] > 0 and data[f"{key}_p99_ms"] >= data[f"{key}_p50_ms"] > 0
    assert data["sink_rows_s"] > 0 and data["parquet_write_rows_s"] > 0
    if jar_path():  # the JVM connector's sink, and Real-time Mode: every message published reaches the writer
        assert data["sink_jvm_rows_s"] > 0 and data["sink_jvm_parquet_write_rows_s"] > 0
        for key in ("streaming_jvm", "streaming_jvm_noop"):
            assert data[f"{key}_batches"] == 4 and data[f"{key}_rows_s"] > 0
        for key in ("realtime", "realtime_jvm_writer"):
            assert data[f"{key}_messages"] == data[f"{key}_sent"] > 0
            assert data[f"{key}_p99_ms"] >= data[f"{key}_p50_ms"] > 0
        # the JVM writer at Spark's default checkpoint interval (5 minutes): none inside the measured second
        assert data["realtime_jvm_writer_checkpoint_interval"] == "5 minutes"
        assert data["realtime_jvm_writer_checkpoints"] == 0 and data["realtime_jvm_writer_checkpoint_pause_ms"] is None
        assert data["realtime_checkpoint_interval"] == "5 seconds"
