"""A process whose embedded driver (launched by `aeron_async.connect(embedded_driver=True)`) runs
flow-control strategies written in Python: it registers them (pymin: MinFlowControl, pytagged:
TaggedFlowControl, pyboom: one that raises on its third status message), prints "running", and
keeps the driver until its stdin closes. tests/strategies/test_flow_control_python_group.py runs it inside a
network namespace as the publishing host's driver (argv: aeron dir)."""

from __future__ import annotations

import sys

import anyio

import aeron_async
from aeron_async import MinFlowControl, TaggedFlowControl, strategies
from support.procs.flow_control_strategies import RaisesOnThirdStatusMessage

SETTINGS = {
    "threading_mode": "SHARED",
    "shared_idle_strategy": "backoff",
    "client_liveness_timeout": 5.0,
    "timer_interval": 0.05,
    "publication_linger_timeout": 0.5,
    "image_liveness_timeout": 3.0,
    "dir_delete_on_shutdown": True,
}


async def main(aeron_dir: str) -> None:
    strategies.register_flow_control("pymin", MinFlowControl)
    strategies.register_flow_control("pytagged", TaggedFlowControl)
    strategies.register_flow_control("pyboom", RaisesOnThirdStatusMessage)
    async with aeron_async.connect(aeron_dir, embedded_driver=True, driver_timeout=10.0, **SETTINGS) as client:
        assert client.driver is not None, "a driver was already running there"
        print("running (embedded)", flush=True)
        await anyio.to_thread.run_sync(sys.stdin.read)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
