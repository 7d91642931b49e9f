"""The request/response benchmark (aeron_async/bench/rpc.py, docs/benchmarks.md "Request/response") runs
ours and pyzmq's cases end to end on a tiny selection and reports both figures."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO, python_env


def test_request_response_bench_rows() -> None:
    from aeron_async.bench import rpc

    figures = rpc.run(rounds=1, warmup=0.1, duration=0.3, only=["aeron-rpc-trio", "zmq-dealer-router-ipc"])
    rows = {(r["case"], r["kind"]): r for r in figures["rows"]}
    assert set(rows) == {(case, kind) for case in ("aeron-rpc-trio", "zmq-dealer-router-ipc")
                         for kind in ("latency", "throughput")}
    for row in rows.values():
        assert row["errors"] == 0, row
    for case in ("aeron-rpc-trio", "zmq-dealer-router-ipc"):
        latency = rows[(case, "latency")]
        assert 0 < latency["p50_us"] <= latency["p99_us"]
        assert rows[(case, "throughput")]["requests_per_s"] > 0
        assert rows[(case, "throughput")]["rounds"][0]["concurrent"] == 100
    assert rows[("aeron-rpc-trio", "throughput")]["vs_best_zmq"] > 0
    table = rpc.markdown(figures)
    assert "| aeron-rpc-trio | aeron:ipc |" in table and "| zmq-dealer-router-ipc | ipc:// |" in table


def test_request_response_bench_command() -> None:
    run = subprocess.run([sys.executable, "-m", "aeron_async.bench.rpc", "--help"], env=python_env(), cwd=REPO,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "DEALER/ROUTER" in run.stdout
