"""Shared fixtures: a driver in the SHARED threading mode with a backoff idle strategy, short
timeouts so failure paths finish quickly, a private aeron directory, a connected client (and both
with 1 MiB terms for UDP), a standalone driver process, and the event loops every async test body
runs on (asyncio, asyncio with uvloop, trio); and the helpers the test modules share: free ports,
unique names, system counters."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any

import anyio
import pytest
import uvloop

import aeron_async
from aeron_async.monitor import CncReader
from support.spark_fixtures import connector, spark  # noqa: F401  (the shared SparkSession and its two connectors)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(REPO, "tests")

TEST_DRIVER_SETTINGS: dict[str, Any] = {
    "threading_mode": "SHARED",
    "shared_idle_strategy": "backoff",
    "ipc_term_buffer_length": "1m",
    "client_liveness_timeout": 2.0,
    "timer_interval": 0.05,
    "publication_linger_timeout": 0.5,
    "publication_unblock_timeout": 1.0,
    "counters_free_to_reuse_timeout": 0.1,
    "counters_buffer_length": "256k",
    "error_buffer_length": "64k",
    "driver_timeout": 2.0,
    "dir_delete_on_shutdown": True,
}
# the UDP tests' drivers: the settings above with 1 MiB terms
UDP_SETTINGS = dict(TEST_DRIVER_SETTINGS, term_buffer_length="1m")


def new_aeron_dir() -> str:
    base = "/dev/shm" if os.path.isdir("/dev/shm") else "/tmp"
    return os.path.join(base, f"aeron-test-{os.getpid()}-{uuid.uuid4().hex[:8]}")


@pytest.fixture
def aeron_dir() -> Iterator[str]:
    path = new_aeron_dir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _driver_fixture(name: str, settings: dict[str, Any]) -> Any:
    """A fixture `name`: an embedded driver with `settings` in the test's aeron_dir."""
    def launched(aeron_dir: str) -> Iterator[aeron_async.MediaDriver]:
        with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings) as d:
            yield d

    return pytest.fixture(launched, name=name)


driver = _driver_fixture("driver", TEST_DRIVER_SETTINGS)
udp_driver = _driver_fixture("udp_driver", UDP_SETTINGS)


@pytest.fixture
def client(driver: aeron_async.MediaDriver) -> Iterator[aeron_async.Aeron]:
    with aeron_async.Aeron.connect(driver.aeron_dir, driver_timeout=5.0) as c:
        yield c


@pytest.fixture
def udp_client(udp_driver: aeron_async.MediaDriver) -> Iterator[aeron_async.Aeron]:
    with aeron_async.Aeron.connect(udp_driver.aeron_dir, driver_timeout=5.0) as c:
        yield c


def free_udp_port() -> int:
    """A UDP port of 127.0.0.1 that the kernel found free just now."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def udp_channel(port: int | None = None, **params: object) -> str:
    """A unicast channel to 127.0.0.1 (on a free port unless given) with `params` (`term_length=...`
    is written term-length=...)."""
    extra = "".join(f"|{k.replace('_', '-')}={v}" for k, v in params.items())
    return f"aeron:udp?endpoint=127.0.0.1:{free_udp_port() if port is None else port}{extra}"


def unique(prefix: str) -> str:
    """Registrations last as long as the process: every test registers names of its own."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def counters_by_label(aeron_dir: str) -> dict[str, int]:
    """Every counter of a driver's CnC file, by label."""
    with CncReader(aeron_dir) as reader:
        return {c.label: c.value for c in reader.counters()}


def system_counters(aeron_dir: str) -> dict[str, int]:
    """The driver's system counters (type 0), by label."""
    with CncReader(aeron_dir) as reader:
        return {c.label: c.value for c in reader.counters() if c.type_id == 0}


def system_counter(aeron_dir: str, label: str) -> int:
    """One system counter of the driver; fails the test when it has none of that label."""
    counters = system_counters(aeron_dir)
    if label not in counters:
        raise AssertionError(f"no system counter {label!r}")
    return counters[label]


def wait_for(predicate: Callable[[], Any], timeout: float = 10.0, interval: float = 0.001, what: str = "condition") -> Any:
    """Poll predicate until truthy; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def log_mappings() -> list[tuple[str, int, int]]:
    """(path, size kB, resident kB) of every mapping of a log buffer file in this process."""
    found: list[tuple[str, int, int]] = []
    path = None
    size = 0
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            fields = line.split()
            if "-" in fields[0] and ":" not in fields[0]:  # a mapping's header line
                path = fields[5] if len(fields) > 5 and fields[5].endswith(".logbuffer") else None
            elif path is not None and fields[0] == "Size:":
                size = int(fields[1])
            elif path is not None and fields[0] == "Rss:":
                found.append((path, size, int(fields[1])))
    return found


def logs_resident() -> bool:
    """Whether every log mapping of this process is wholly resident (populated)."""
    return all(rss == size for _, size, rss in log_mappings())


def logs_settled(quiet: float = 0.2) -> bool:
    """Whether the conductors' pre-faulting of this process's log mappings has stopped: their
    resident sizes did not move for `quiet` seconds (a new log is populated a lead ahead of its
    stream, about a quarter of a term, and then only as the stream moves)."""
    before = log_mappings()
    time.sleep(quiet)
    return log_mappings() == before


def offer_all(publication: aeron_async.Publication, data: Any, timeout: float = 10.0, pause: float = 0.0) -> int:
    """Offer until accepted, retrying back pressure every `pause` seconds; bounded."""
    deadline = time.monotonic() + timeout
    while True:
        result = publication.offer(data)
        if result > 0:
            return result
        if result == aeron_async.MAX_POSITION_EXCEEDED:
            raise AssertionError("max position exceeded")
        if time.monotonic() > deadline:
            raise AssertionError(f"offer not accepted within {timeout} s (last result {result})")
        time.sleep(pause)


def driver_timeout_raised(*calls: Callable[[], Any]) -> bool:
    """True once one of `calls` (an offer, a poll: what a client does next) raises
    DriverTimeoutError, the error a client's calls give once its driver has gone."""
    try:
        for call in calls:
            call()
    except aeron_async.DriverTimeoutError:
        return True
    return False


async def record_broken(outcomes: dict[str, tuple[float, str]], what: str, wait: Callable[[], Awaitable[Any]]) -> None:
    """Awaits `wait()`; when it raises BrokenResourceError, records when and why under `what`."""
    try:
        await wait()
    except anyio.BrokenResourceError as exc:
        outcomes[what] = (time.monotonic(), str(exc))


def python_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    return env


PYTHON = sys.executable


def run_proc(name: str, *args: object, prefix: Sequence[str] = (), env: dict[str, str] | None = None,
             stdin: bool = False) -> subprocess.Popen[str]:
    """A script of tests/support/procs/ in a process of its own, with tests/ on its path, its output (stdout
    and stderr) one text pipe; `prefix` runs it through another command (a netns host's command()),
    `env` adds variables (e.g. AA_STREAM_PROFILE), `stdin` gives it a pipe to read."""
    variables = python_env()
    variables["PYTHONPATH"] = TESTS + os.pathsep + variables["PYTHONPATH"]
    variables.update(env or {})
    return subprocess.Popen([*prefix, PYTHON, os.path.join(TESTS, "support", "procs", name), *map(str, args)], env=variables,
                            stdin=subprocess.PIPE if stdin else None, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


@pytest.fixture(
    params=[
        pytest.param(("asyncio", {}), id="asyncio"),
        pytest.param(("asyncio", {"loop_factory": uvloop.new_event_loop}), id="uvloop"),
        pytest.param(("trio", {}), id="trio"),
    ]
)
def anyio_backend(request: pytest.FixtureRequest) -> tuple[str, dict[str, Any]]:
    """Every `@pytest.mark.anyio` test body runs on asyncio, asyncio+uvloop and trio."""
    return request.param


def start_driver(aeron_dir: str, *options: str, prefix: tuple[str, ...] = ()) -> subprocess.Popen:
    """A standalone driver process (`python -m aeron_async driver`), SHARED with backoff idling;
    `prefix` runs it through another command (e.g. `ip netns exec NS`)."""
    args = [*prefix, PYTHON, "-m", "aeron_async", "driver", "--aeron-dir", aeron_dir, "--threading-mode", "SHARED",
            "-o", "AERON_SHARED_IDLE_STRATEGY=backoff", "-o", "AERON_DIR_DELETE_ON_SHUTDOWN=true", *options]
    proc = subprocess.Popen(args, env=python_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = proc.stdout.readline()
    assert "running" in line, f"driver did not start: {line}{proc.stdout.read() if proc.poll() is not None else ''}"
    return proc


def stop_driver(proc: subprocess.Popen) -> str:
    """SIGINT the driver and return its output; fail if it does not stop within 15 s."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            out, _ = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
            raise AssertionError(f"driver did not stop on SIGINT; its output: {out!r}")
        return out
    return proc.stdout.read()


def stream_one(client: aeron_async.Aeron, pub_channel: str, sub_channel: str, stream_id: int, data: bytes,
               timeout: float = 10.0) -> None:
    """One message from a publication to a subscription of the client: it arrives, alone and intact,
    within `timeout` seconds for each step (connecting, offering, receiving)."""
    sub = client.add_subscription(sub_channel, stream_id)
    pub = client.add_publication(pub_channel, stream_id)
    wait_for(lambda: pub.is_connected, timeout=timeout, what="connected")
    wait_for(lambda: pub.offer(data) > 0, timeout=timeout, what="the offer")
    got: list[bytes] = []
    wait_for(lambda: got.extend(m.data for m in sub.poll_messages()) or got, timeout=timeout, what="the message")
    assert got == [data]


def stream_between(pub_dir: str, sub_dir: str, channel: str, small: int, large: int, **env: str) -> None:
    """procs/subscriber.py on sub_dir's driver and procs/publisher.py on pub_dir's: `small` messages
    and `large` ones (procs/streams.py; `env`: e.g. AA_STREAM_PROFILE) on stream 1001, the subscriber
    verifies every one."""
    sub = run_proc("subscriber.py", sub_dir, channel, 1001, small, large, env=env)
    assert sub.stdout is not None and sub.stdout.readline().strip() == "ready"
    pub = run_proc("publisher.py", pub_dir, channel, 1001, small, large, env=env)
    try:
        sub_out, _ = sub.communicate(timeout=900)
        pub_out, _ = pub.communicate(timeout=60)
    finally:
        for p in (sub, pub):
            if p.poll() is None:
                p.kill()
    assert sub.returncode == 0, sub_out
    assert f"verified {small + large}" in sub_out
    assert pub.returncode == 0, pub_out


def readme_example(marker: str) -> str:
    """The first ```python block of README.md that contains `marker` (the examples users copy)."""
    with open(os.path.join(REPO, "README.md")) as f:
        text = f.read()
    for block in text.split("```python\n")[1:]:
        code = block.split("```", 1)[0]
        if marker in code:
            return code
    raise AssertionError(f"README.md has no python example containing {marker!r}")
