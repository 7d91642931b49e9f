"""SIGTERM (a container being stopped, a service manager) ends every example and every long-running
`aeron-async` command promptly, closing cleanly: the process exits by itself, without a traceback,
having closed what it opened (aeron_async.cancel_on_signals; aeron_async/_stop.py). The bound
below is how long the test waits, not a measure of speed."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator

import pytest

import aeron_async
from conftest import REPO, TEST_DRIVER_SETTINGS, free_udp_port, new_aeron_dir, python_env

EXAMPLES = os.path.join(REPO, "examples")
EXIT_WAIT = 20.0   # seconds the test waits for the exit (the process should need well under one)


@pytest.fixture(scope="module")
def running_driver() -> Iterator[str]:
    with aeron_async.MediaDriver.launch(aeron_dir=new_aeron_dir(), **TEST_DRIVER_SETTINGS) as driver:
        yield driver.aeron_dir


def stop_once_started(argv: list[str], started: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Runs `argv` until a line of its output contains `started`, sends it SIGTERM, and returns its
    exit status, standard output and standard error once it exits."""
    process = subprocess.Popen(argv, env=env or python_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, cwd=REPO)
    assert process.stdout is not None
    seen = []
    try:
        for line in process.stdout:
            seen.append(line)
            if started in line:
                break
        else:
            pytest.fail(f"{argv} ended before {started!r}: {''.join(seen)}{process.stderr.read() if process.stderr else ''}")
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=EXIT_WAIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return process.returncode, "".join(seen) + out, err


def example(name: str, *args: str) -> list[str]:
    return [sys.executable, os.path.join(EXAMPLES, name), *args]


def assert_clean(code: int, out: str, err: str, codes: tuple[int, ...] = (0,)) -> None:
    assert code in codes, (code, out, err)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err


def test_the_kubernetes_publisher_with_no_subscriber_stops_on_sigterm(running_driver: str) -> None:
    """The pod's publisher waits in offer for a subscriber that is not there; SIGTERM ends it."""
    env = {**python_env(), "AERON_DIR": running_driver,
           "AERON_CHANNEL": f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}", "AERON_STREAM": "4242"}
    code, out, err = stop_once_started(example("kubernetes/app.py", "publish"), "publishing on", env)
    assert_clean(code, out, err)
    assert "published 0 messages" in out and "stopped by a signal" in out


def test_the_kubernetes_subscriber_stops_on_sigterm(running_driver: str) -> None:
    env = {**python_env(), "AERON_DIR": running_driver, "AERON_CHANNEL": "aeron:ipc", "AERON_STREAM": "4243"}
    code, out, err = stop_once_started(example("kubernetes/app.py", "subscribe"), "subscribed to", env)
    assert_clean(code, out, err)
    assert "received 0 messages" in out


@pytest.mark.parametrize(("name", "args", "started"), [
    # a publisher waiting for a subscriber that never comes
    ("async_publisher.py", ["--channel", "aeron:udp?endpoint=127.0.0.1:{port}", "--count", "5"], "publishing on"),
    ("async_subscriber.py", ["--count", "5"], "subscribed to"),
    ("demo.py", ["--seconds", "600"], "embedded driver in"),
    ("fan_in.py", ["--messages", "1000000000", "--publishers", "2"], "publishers sending"),
    ("request_response.py", ["--requests", "1000000000", "--clients", "1"], "client-0:"),
])
def test_an_async_example_stops_on_sigterm_and_removes_its_driver_directory(name: str, args: list[str],
                                                                            started: str) -> None:
    aeron_dir = new_aeron_dir()
    argv = example(name, *(a.format(port=free_udp_port()) for a in args))
    env = {**python_env(), "AERON_DIR": aeron_dir}   # the examples' driver goes where AERON_DIR says
    try:
        code, out, err = stop_once_started(argv, started, env)
        assert_clean(code, out, err)
        assert "stopped by a signal" in out, out
        assert aeron_dir in out, out
        assert not os.path.exists(aeron_dir)   # its embedded driver closed, deleting its directory
    finally:
        shutil.rmtree(aeron_dir, ignore_errors=True)


def test_the_flow_control_example_stops_on_sigterm() -> None:
    code, out, err = stop_once_started(example("flow_control.py", "--messages", "1000000000"), "sender limit")
    assert_clean(code, out, err)
    assert "stopped by a signal" in out


@pytest.mark.parametrize("command", ["driver", "archive", "stat", "exporter"])
def test_a_long_running_command_stops_on_sigterm(command: str, running_driver: str) -> None:
    cli = [sys.executable, "-m", "aeron_async", command]
    with tempfile.TemporaryDirectory() as tmp:
        argv, started = {
            "driver": (["--aeron-dir", os.path.join(tmp, "driver")], "running in"),
            "archive": (["--embedded-driver", "--aeron-dir", os.path.join(tmp, "driver"), "--archive-dir",
                         os.path.join(tmp, "archive"), "--threading-mode", "SHARED"], "running in"),
            "stat": (["--aeron-dir", running_driver, "--interval", "0.1"], "====="),
            "exporter": (["--aeron-dir", running_driver, "--port", "0", "--host", "127.0.0.1"], "serving"),
        }[command]
        code, out, err = stop_once_started(cli + argv, started)
    assert_clean(code, out, err)


def test_the_spark_pipeline_example_stops_on_sigterm() -> None:
    """SIGTERM while the Spark job starts and runs: the example stops the query, its archive and
    Spark, and ends without py4j's "KeyboardInterrupt while sending command" traceback."""
    code, out, err = stop_once_started(example("spark_pipeline.py", "--seconds", "60", "--master", "local[1]"),
                                       "starting the Spark job")
    assert_clean(code, out, err, codes=(130,))
    assert "stopped by a signal" in out, out
