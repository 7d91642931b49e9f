"""The multi-receiver flow-control scenarios (tests/support/fc_scenarios.py, over
multicast between network namespaces) with flow-control strategies written in Python in place of
the native ones: MinFlowControl as "pymin" and TaggedFlowControl as "pytagged", in a standalone
publishing driver (`aeron-async driver --flow-control NAME=module:Class`) and in an embedded one (a
process that launched its driver with `connect(embedded_driver=True)`); and a strategy that raises
is logged in the publishing driver's error log and replaced by the native min, which then holds
the group as min does."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from aeron_async.bench import netns
from aeron_async.bench.harness import close_and_wait
from support import fc_scenarios
from aeron_async.monitor import CncReader
from conftest import run_proc

pytestmark = [pytest.mark.slow, pytest.mark.skipif(netns.available() is not None, reason=str(netns.available()))]

RECEIVER_TIMEOUT = "1s"
STANDALONE_OPTIONS = (
    "--flow-control", "pymin=aeron_async.flow_control:MinFlowControl",
    "--flow-control", "pytagged=aeron_async.flow_control:TaggedFlowControl",
    "--flow-control", "pyboom=tests.support.procs.flow_control_strategies:RaisesOnThirdStatusMessage",
)


def embedded_driver(host: netns.Host, aeron_dir: str) -> Callable[[], None]:
    """Starts tests/support/procs/embedded_fc_driver.py on the host; returns what stops it (stdin closed,
    killed if it has not exited within 15 s)."""
    proc = run_proc("embedded_fc_driver.py", aeron_dir, prefix=host.command(), stdin=True)
    assert proc.stdout is not None and proc.stdin is not None
    line = proc.stdout.readline()
    assert "running" in line, line + (proc.stdout.read() if proc.poll() is not None else "")

    def stop() -> None:
        if not close_and_wait(proc, 15):
            raise AssertionError("the embedded driver's process did not exit")

    return stop


def publisher(kind: str) -> dict[str, object]:
    """fc_scenarios.group's arguments for a publishing driver of this kind."""
    if kind == "standalone":
        return {"publisher_options": STANDALONE_OPTIONS}  # start_driver puts the repository on PYTHONPATH
    return {"publisher_driver": embedded_driver}


@pytest.fixture(params=["standalone", "embedded"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_python_min_a_slow_reader_holds_the_publisher_and_nothing_is_lost(kind: str) -> None:
    with fc_scenarios.group(3, **publisher(kind)) as g:  # type: ignore[arg-type]
        fc_scenarios.slow_reader_holds_the_publisher(g, "pymin")


def test_python_tagged_only_the_tagged_receivers_pace_and_connect_the_publication(kind: str) -> None:
    with fc_scenarios.group(3, **publisher(kind)) as g:  # type: ignore[arg-type]
        fc_scenarios.tagged_receivers_hold_the_publisher(g, "pytagged,g:1001/2")


def test_python_tagged_a_killed_receiver_is_dropped_after_the_receiver_timeout(kind: str) -> None:
    with fc_scenarios.group(3, **publisher(kind)) as g:  # type: ignore[arg-type]
        fc_scenarios.killed_tagged_receiver_is_dropped(g, f"pytagged,g:1001/2,t:{RECEIVER_TIMEOUT}", timeout=1.0)


def test_a_python_strategy_that_raises_is_logged_and_min_holds_the_group(kind: str) -> None:
    with fc_scenarios.group(3, **publisher(kind)) as g:  # type: ignore[arg-type]
        fc_scenarios.slow_reader_holds_the_publisher(g, "pyboom")
        assert g.publisher_client is not None
        with CncReader(g.publisher_client.aeron_dir) as reader:
            texts = [e.text for e in reader.errors()]
    failures = [t for t in texts if "flow control 'pyboom'" in t]
    assert len(failures) == 1, texts
    assert "RaisesOnThirdStatusMessage raised RuntimeError: strategy failed on purpose" in failures[0]
    assert "now uses the native 'min' flow control" in failures[0]
