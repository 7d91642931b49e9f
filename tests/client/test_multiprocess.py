"""Separate OS processes around one standalone driver process (`python -m aeron_async driver`)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator

import pytest

import aeron_async
from conftest import (PYTHON, driver_timeout_raised, new_aeron_dir, python_env, run_proc, start_driver, stop_driver,
                      stream_between, wait_for)


@pytest.fixture
def standalone_driver():
    aeron_dir = new_aeron_dir()
    proc = start_driver(aeron_dir, "-o", "AERON_CLIENT_LIVENESS_TIMEOUT=2s", "-o", "AERON_TIMER_INTERVAL=50ms",
                        "-o", "AERON_PUBLICATION_LINGER_TIMEOUT=500ms", "-o", "AERON_PUBLICATION_UNBLOCK_TIMEOUT=1s")
    try:
        yield aeron_dir, proc
    finally:
        out = stop_driver(proc)
        assert proc.returncode == 0, out
        assert not os.path.exists(aeron_dir), "driver left its directory behind"


@pytest.mark.slow
def test_million_messages_between_processes(standalone_driver) -> None:
    """1,000,000 messages of 0..64 KiB plus 100 of 1..4 MiB (fragmented), intact and in order."""
    aeron_dir, _ = standalone_driver
    channel = "aeron:ipc?term-length=32m"
    small, large = 1_000_000, 100
    stream_between(aeron_dir, aeron_dir, channel, small, large)


def test_stat_shows_positions_from_another_process(standalone_driver) -> None:
    aeron_dir, _ = standalone_driver
    with aeron_async.Aeron.connect(aeron_dir) as client:
        sub = client.add_subscription("aeron:ipc", 7)
        pub = client.add_publication("aeron:ipc", 7)
        wait_for(lambda: pub.is_connected)
        out = subprocess.run([PYTHON, "-m", "aeron_async", "stat", "--aeron-dir", aeron_dir, "--count", "1"],
                             env=python_env(), capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        for label in ("pub-lmt", "pub-pos (sampled)", "sub-pos", "client-heartbeat", "Bytes currently mapped"):
            assert label in out.stdout, out.stdout
        assert f" {pub.session_id} 7 aeron:ipc" in out.stdout
        sub.close()


def stat_labels(aeron_dir: str) -> str:
    out = subprocess.run([PYTHON, "-m", "aeron_async", "stat", "--aeron-dir", aeron_dir, "--count", "1"],
                         env=python_env(), capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_killed_publisher_is_reclaimed_and_subscriber_not_stuck(standalone_driver) -> None:
    aeron_dir, _ = standalone_driver
    channel = "aeron:ipc?term-length=1m"
    with aeron_async.Aeron.connect(aeron_dir) as client:
        unavailable = []
        sub = client.add_subscription(channel, 9, on_unavailable_image=unavailable.append)
        pub = run_proc("publisher.py", aeron_dir, channel, 9, 2000, 0, "exclusive", "linger")
        try:
            line = pub.stdout.readline()
            assert line.startswith("ready"), line
            session_id = int(line.split("=")[1])
            received = []
            handler = aeron_async.FragmentAssembler(lambda d, h: received.append(h.position))
            wait_for(lambda: sub.poll(handler, 100) >= 0 and len(received) >= 2000, timeout=30, what="2000 messages")
            assert f" {session_id} 9 " in stat_labels(aeron_dir)
        finally:
            pub.send_signal(signal.SIGKILL)
            pub.wait(timeout=10)
        # After the client liveness timeout (2 s) the driver reclaims the dead client's publication:
        # the image drains to end of stream and goes away, and stat no longer shows its counters.
        wait_for(lambda: sub.poll(lambda d, h: None, 10) >= 0 and unavailable, timeout=15, what="image unavailable")
        assert unavailable[0].session_id == session_id
        wait_for(lambda: f" {session_id} 9 " not in stat_labels(aeron_dir), timeout=15, what="counters reclaimed")
        timeouts = [line for line in stat_labels(aeron_dir).splitlines() if line.endswith("- Client liveness timeouts")]
        assert len(timeouts) == 1 and int(timeouts[0].split(":")[1].split("-")[0].replace(",", "")) >= 1, timeouts
        # the subscription still works for a new publisher
        pub2 = client.add_publication(channel, 9)
        wait_for(lambda: pub2.is_connected)
        wait_for(lambda: pub2.offer(b"after") > 0)
        got = []
        wait_for(lambda: sub.poll(lambda d, h: got.append(bytes(d)), 10) >= 0 and got)
        assert got == [b"after"]


@pytest.fixture
def short_timeout_client() -> Iterator[tuple[subprocess.Popen, aeron_async.Aeron]]:
    """A standalone driver process and a client of it with a 1 s driver timeout. The test may kill
    the driver or stop it (SIGSTOP); a driver still there is continued and stopped afterwards."""
    aeron_dir = new_aeron_dir()
    proc = start_driver(aeron_dir)
    try:
        yield proc, aeron_async.Aeron.connect(aeron_dir, driver_timeout=1.0)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            stop_driver(proc)
        shutil.rmtree(aeron_dir, ignore_errors=True)


def test_killed_driver_raises_driver_timeout_within_timeout(short_timeout_client) -> None:
    proc, client = short_timeout_client
    sub = client.add_subscription("aeron:ipc", 3)
    pub = client.add_publication("aeron:ipc", 3)
    wait_for(lambda: pub.is_connected)
    assert pub.offer(b"before") > 0
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    killed = time.monotonic()
    wait_for(
        lambda: driver_timeout_raised(lambda: pub.offer(b"x"), lambda: sub.poll(lambda d, h: None, 10)),
        timeout=5, what="DriverTimeoutError")
    assert time.monotonic() - killed < 1.0 + 1.5
    with pytest.raises(aeron_async.DriverTimeoutError, match="exited without closing"):
        client.add_subscription("aeron:ipc", 4)
    with pytest.raises(aeron_async.DriverTimeoutError):
        sub.poll(lambda d, h: None, 10)
    client.close()


def test_hung_driver_raises_driver_timeout_within_timeout(short_timeout_client) -> None:
    """A driver whose process still exists but does not run (SIGSTOP) is judged by its heartbeat."""
    proc, client = short_timeout_client
    sub = client.add_subscription("aeron:ipc", 3)
    proc.send_signal(signal.SIGSTOP)
    stopped = time.monotonic()
    wait_for(lambda: driver_timeout_raised(lambda: sub.poll(lambda d, h: None, 10)), timeout=5, what="DriverTimeoutError")
    assert 0.5 < time.monotonic() - stopped < 1.0 + 1.5
    with pytest.raises(aeron_async.DriverTimeoutError, match="has not answered"):
        client.add_subscription("aeron:ipc", 4)
    client.close()


def test_driver_refuses_directory_of_live_driver(standalone_driver) -> None:
    aeron_dir, _ = standalone_driver
    with pytest.raises(aeron_async.ConfigurationError, match="already running"):
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_standalone_driver_shuts_down_cleanly_on_signal(sig: signal.Signals) -> None:
    aeron_dir = new_aeron_dir()
    proc = start_driver(aeron_dir)
    try:
        with aeron_async.Aeron.connect(aeron_dir) as client:
            client.add_publication("aeron:ipc", 1)
        assert os.path.exists(os.path.join(aeron_dir, "cnc.dat"))
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=15)
        assert proc.returncode == 0, out
        assert "shutting down" in out
        assert not os.path.exists(aeron_dir)
    finally:
        if proc.poll() is None:
            proc.kill()
