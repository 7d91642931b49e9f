"""The request/response benchmark (aeron_async/bench/rpc.py, docs/benchmarks.md "Request/response") runs
ours and pyzmq's cases end to end on a tiny selection and reports both figures."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO, python_env


def test_request_response_bench_rows() -> None:
    from aeron_async.bench import rpc

    # ours on trio against zmq's DEALER/ROUTER, 100 concurrent requests (the round trips: a run of
    # aeron-async bench; each measurement is two processes, so the test takes two)
    figures = rpc.run(rounds=1, warmup=0.1, duration=0.3, only=["aeron-rpc-trio", "zmq-dealer-router-ipc"],
                      kinds=("throughput",))
    rows = {r["case"]: r for r in figures["rows"]}
    assert set(rows) == {"aeron-rpc-trio", "zmq-dealer-router-ipc"}
    for row in rows.values():
        assert row["errors"] == 0, row
        assert row["requests_per_s"] > 0 and row["rounds"][0]["concurrent"] == 100
    assert rows["aeron-rpc-trio"]["vs_best_zmq"] > 0
    table = rpc.markdown(figures)
    assert "| aeron-rpc-trio | aeron:ipc | - | - |" in table and "| zmq-dealer-router-ipc | ipc:// | - | - |" in table


def test_request_response_bench_command() -> None:
    run = subprocess.run([sys.executable, "-m", "aeron_async.bench.rpc", "--help"], env=python_env(), cwd=REPO,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "DEALER/ROUTER" in run.stdout
