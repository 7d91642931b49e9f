"""A second run works: a driver that closes marks its CnC file closed (Aeron's NULL_VALUE in the
to-driver consumer heartbeat), a driver whose process is gone is dead at once, launchers racing on
one directory end with one driver, and clients hear at once that their driver closed."""

from __future__ import annotations

import mmap
import os
import re
import shutil
import signal
import struct
import subprocess
import threading
import time
from collections.abc import Iterator
from functools import partial
from typing import Any

import anyio
import pytest

import aeron_async
from conftest import (
    PYTHON, REPO, TEST_DRIVER_SETTINGS, driver_timeout_raised, new_aeron_dir, python_env, record_broken, run_proc,
    start_driver, stop_driver, wait_for)

# A driver timeout no test waits for: whatever is noticed here is noticed without it.
LONG_TIMEOUT = 10.0
SETTINGS = {**TEST_DRIVER_SETTINGS, "driver_timeout": LONG_TIMEOUT, "dir_delete_on_shutdown": False}
CNC_PID_NAMESPACE_OFFSET = 72  # protocols/aa_cnc.h
CNC_CLIENTS_DOORBELL_OFFSET = 80  # sequence, then armed (int32 each)
CNC_FEATURES_OFFSET = 88
FEATURE_CLIENTS_DOORBELL = 1


def readme_first_example() -> str:
    """The README's first Python block: the async example with an embedded driver."""
    with open(os.path.join(REPO, "README.md")) as f:
        block = re.search(r"```python\n(.*?)```", f.read(), re.DOTALL)
    assert block is not None
    code = block.group(1)
    assert "embedded_driver=True" in code and code.rstrip().endswith("anyio.run(main)")
    return code


@pytest.fixture
def private_dir() -> Iterator[str]:
    path = new_aeron_dir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_readme_first_example_runs_back_to_back(private_dir: str, tmp_path: Any) -> None:
    """The example run 5 times in a row as separate processes (on its default directory, made
    private through AERON_DIR): each run launches a driver at once and finishes within 2 s."""
    script = tmp_path / "first_example.py"
    script.write_text(readme_first_example())
    env = python_env()
    env["AERON_DIR"] = private_dir
    for run in range(5):
        started = time.monotonic()
        result = subprocess.run([PYTHON, str(script)], env=env, capture_output=True, text=True, timeout=30)
        took = time.monotonic() - started
        print(f"run {run + 1}: {took:.2f} s")
        assert result.returncode == 0, f"run {run + 1}: {result.stdout}{result.stderr}"
        assert result.stdout.strip() == "b'hello' 64", result.stdout
        assert took < 2.0, f"run {run + 1} took {took:.2f} s"
    # the loss report stays readable after the driver stopped (aeron-async loss), as Aeron's does, and
    # so do the driver's options (driver --info) and its name resolutions (aeron-async resolve)
    assert sorted(os.listdir(private_dir)) == ["cnc.dat", "driver-options.properties", "driver.lock", "images",
                                              "loss-report.dat", "name-resolutions.dat", "publications"]
    for kind in ("publications", "images"):
        assert os.listdir(os.path.join(private_dir, kind)) == [], f"log buffers left in {kind}/"
    assert not aeron_async.is_driver_active(private_dir, LONG_TIMEOUT)


def test_readme_first_example_body_three_times_in_one_process(
    anyio_backend: tuple[str, dict[str, Any]], private_dir: str, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`anyio.run` of the example's `main` three times in one process, on asyncio, uvloop and trio."""
    monkeypatch.setenv("AERON_DIR", private_dir)
    code = readme_first_example().rstrip()
    namespace: dict[str, Any] = {}
    exec(compile(code[: -len("anyio.run(main)")], "README.md", "exec"), namespace)
    backend, options = anyio_backend
    for _ in range(3):
        anyio.run(namespace["main"], backend=backend, backend_options=options)
    assert capsys.readouterr().out.splitlines() == ["b'hello' 64"] * 3


def exchange_one(aeron_dir: str, stream_id: int) -> None:
    with aeron_async.Aeron.connect(aeron_dir, driver_timeout=LONG_TIMEOUT) as client:
        sub = client.add_subscription("aeron:ipc", stream_id)
        pub = client.add_publication("aeron:ipc", stream_id)
        wait_for(lambda: pub.offer(b"after") > 0, timeout=5, what="offer")
        got: list[bytes] = []
        wait_for(lambda: sub.poll(lambda data, header: got.append(bytes(data)), 10) > 0, timeout=5, what="poll")
        assert got == [b"after"]


def test_closed_driver_is_replaced_at_once(private_dir: str) -> None:
    """A driver that closed leaves a CnC file a new driver does not mistake for a live one."""
    driver = aeron_async.MediaDriver.launch(aeron_dir=private_dir, **SETTINGS)
    assert aeron_async.is_driver_active(private_dir, LONG_TIMEOUT)
    with pytest.raises(aeron_async.ConfigurationError, match="already running"):
        aeron_async.MediaDriver.launch(aeron_dir=private_dir, **SETTINGS)
    driver.close()
    assert os.path.exists(os.path.join(private_dir, "cnc.dat"))
    assert not aeron_async.is_driver_active(private_dir, LONG_TIMEOUT)
    with pytest.raises(aeron_async.DriverNotFoundError, match="has closed"):
        aeron_async.Aeron.connect(private_dir, driver_timeout=LONG_TIMEOUT)
    with aeron_async.MediaDriver.launch(aeron_dir=private_dir, **SETTINGS):
        exchange_one(private_dir, 1)


def test_killed_driver_is_replaced_at_once(private_dir: str) -> None:
    """A driver killed with SIGKILL (its process not even reaped yet) is dead at once: a driver
    launched on its directory right after starts within 1 s and works."""
    proc = start_driver(private_dir, "-o", f"AERON_DRIVER_TIMEOUT={int(LONG_TIMEOUT)}s")
    try:
        exchange_one(private_dir, 2)
        proc.send_signal(signal.SIGKILL)
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # a zombie now, still holding its pid
        started = time.monotonic()
        assert not aeron_async.is_driver_active(private_dir, LONG_TIMEOUT)
        with aeron_async.MediaDriver.launch(aeron_dir=private_dir, **SETTINGS):
            took = time.monotonic() - started
            print(f"relaunched in {took * 1000:.1f} ms")
            assert took < 1.0
            exchange_one(private_dir, 2)
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_unknown_pid_namespace_falls_back_to_the_heartbeat_age(private_dir: str) -> None:
    """Where the CnC file does not say the driver's pid namespace (as Aeron's driver writes it) or
    names another one, the pid cannot be checked: only the heartbeat's age tells."""
    proc = start_driver(private_dir)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert not aeron_async.is_driver_active(private_dir, LONG_TIMEOUT)
    with open(os.path.join(private_dir, "cnc.dat"), "r+b") as f, mmap.mmap(f.fileno(), 4096) as cnc:
        for namespace in (0, 1):  # unknown, and one that is not ours
            struct.pack_into("<q", cnc, CNC_PID_NAMESPACE_OFFSET, namespace)
            assert aeron_async.is_driver_active(private_dir, LONG_TIMEOUT)
            time.sleep(0.05)
            assert not aeron_async.is_driver_active(private_dir, 0.01)


def test_idle_clients_sleep_on_the_drivers_news_only_where_the_driver_rings_it(private_dir: str) -> None:
    """Our driver says in its CnC header that it rings the clients' doorbell; an idle client's
    conductor sleeps armed on it and each transmission to clients (here: another client's
    registration answered) rings it. Where the bit is not set (as in a CnC file of Aeron's driver)
    a client never arms it: it writes nothing there."""
    driver = aeron_async.MediaDriver.launch(aeron_dir=private_dir, **SETTINGS)
    try:
        with open(os.path.join(private_dir, "cnc.dat"), "r+b") as f, mmap.mmap(f.fileno(), 4096) as cnc:
            def doorbell() -> tuple[int, int]:
                sequence, armed = struct.unpack_from("<ii", cnc, CNC_CLIENTS_DOORBELL_OFFSET)
                return sequence, armed

            assert struct.unpack_from("<i", cnc, CNC_FEATURES_OFFSET)[0] & FEATURE_CLIENTS_DOORBELL
            with aeron_async.Aeron.connect(private_dir) as idle, aeron_async.Aeron.connect(private_dir) as other:
                wait_for(lambda: doorbell()[1] == 1, 10, what="an idle client conductor to arm the clients' doorbell")
                rung = doorbell()[0]
                other.add_subscription("aeron:ipc", 1001).close()  # answered on the to-clients buffer
                wait_for(lambda: doorbell()[0] > rung, 10, what="the driver to ring the clients' doorbell")
                wait_for(lambda: doorbell()[1] == 1, 10, what="the woken conductors to arm it again")
                # a driver that does not ring it (Aeron's): clients leave the bytes alone
                struct.pack_into("<i", cnc, CNC_FEATURES_OFFSET, 0)
                for stream in (1002, 1003):  # rings that wake both conductors, which look again and sleep
                    idle.add_subscription("aeron:ipc", stream).close()
                    time.sleep(0.05)
                struct.pack_into("<ii", cnc, CNC_CLIENTS_DOORBELL_OFFSET, 0, 0)
                other.add_subscription("aeron:ipc", 1004).close()
                time.sleep(0.1)  # several idle cycles of both conductors
                assert doorbell() == (0, 0)
                assert idle.add_subscription("aeron:ipc", 1005) is not None  # answered all the same
    finally:
        driver.close()


def test_threads_launching_at_once_start_one_driver(private_dir: str) -> None:
    barrier = threading.Barrier(4)
    drivers: list[aeron_async.MediaDriver | None] = []
    errors: list[BaseException] = []

    def launch() -> None:
        try:
            barrier.wait(timeout=10)
            drivers.append(aeron_async.MediaDriver.launch_unless_running(aeron_dir=private_dir, **SETTINGS))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=launch) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert errors == []
    launched = [d for d in drivers if d is not None]
    try:
        assert len(drivers) == 4 and len(launched) == 1
        exchange_one(private_dir, 3)
    finally:
        for d in launched:
            d.close()


def test_four_processes_launching_an_embedded_driver_at_once(private_dir: str) -> None:
    """Four processes run `connect(embedded_driver=True)` on one directory at the same moment: one
    launches the driver, the others join it, all four exchange messages, none fails, and once they
    are done nothing is left (the driver deletes its directory on shutdown here)."""
    names = [f"peer-{i}" for i in range(4)]
    procs = [run_proc("embedded_peer.py", private_dir, name, 4, stdin=True) for name in names]

    def expect(proc: subprocess.Popen[str], pattern: str) -> str:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        if not re.fullmatch(pattern, line):
            try:
                rest, _ = proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                rest = "(still running)"
            raise AssertionError(f"expected {pattern!r}, got {line!r}\n{rest}")
        return line

    def tell(proc: subprocess.Popen[str], line: str) -> None:
        assert proc.stdin is not None
        proc.stdin.write(line + "\n")
        proc.stdin.flush()

    try:
        for proc in procs:
            expect(proc, "started")
        for proc in procs:  # all four are waiting on this line: they connect at the same moment
            tell(proc, "launch")
        roles = [expect(proc, "launched|joined") for proc in procs]
        assert roles.count("launched") == 1, roles
        for proc in procs:
            expect(proc, "ready")
        for proc in procs:
            tell(proc, "go")
        for proc in procs:
            expect(proc, re.escape(f"exchanged 4: {','.join(names)}"))
        owner = procs[roles.index("launched")]
        for proc in [p for p in procs if p is not owner] + [owner]:  # the driver's owner leaves last
            tell(proc, "exit")
            out, _ = proc.communicate(timeout=30)
            assert proc.returncode == 0, out
        assert not os.path.exists(private_dir), os.listdir(private_dir)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)


def test_sync_client_is_told_at_once_that_its_driver_closed(private_dir: str) -> None:
    driver = aeron_async.MediaDriver.launch(aeron_dir=private_dir, **SETTINGS)
    try:
        client = aeron_async.Aeron.connect(private_dir, driver_timeout=LONG_TIMEOUT)
        sub = client.add_subscription("aeron:ipc", 4)
        pub = client.add_publication("aeron:ipc", 4)
        wait_for(lambda: pub.offer(b"before") > 0, timeout=5, what="offer")
    finally:
        driver.close()
    closed = time.monotonic()
    wait_for(
        lambda: driver_timeout_raised(lambda: pub.offer(b"x"), lambda: sub.poll(lambda data, header: None, 10)),
        timeout=5, what="DriverTimeoutError")
    took = time.monotonic() - closed
    print(f"told {took * 1000:.1f} ms after the close (driver timeout {LONG_TIMEOUT} s)")
    assert took < 0.5
    with pytest.raises(aeron_async.DriverTimeoutError, match="has closed"):
        client.add_subscription("aeron:ipc", 5)
    client.close()


@pytest.mark.anyio
async def test_async_waiters_are_told_at_once_that_their_driver_closed(private_dir: str) -> None:
    """A standalone driver stopped (SIGINT): a pending receive and a pending offer raise
    BrokenResourceError saying the driver closed, well within the driver timeout."""
    proc = start_driver(private_dir, "-o", f"AERON_DRIVER_TIMEOUT={int(LONG_TIMEOUT)}s")
    outcomes: dict[str, tuple[float, str]] = {}
    try:
        async with aeron_async.connect(private_dir, driver_timeout=LONG_TIMEOUT) as c:
            sub = await c.add_subscription("aeron:ipc", 16)
            lonely = await c.add_publication("aeron:ipc", 17)
            with anyio.fail_after(10):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(record_broken, outcomes, "receive", sub.receive)
                    tg.start_soon(record_broken, outcomes, "offer", partial(lonely.offer, b"nobody"))
                    await anyio.sleep(0.1)
                    assert outcomes == {}
                    stopping = time.monotonic()
                    out = await anyio.to_thread.run_sync(stop_driver, proc)
            assert proc.returncode == 0, out
            for what, (at, message) in outcomes.items():
                print(f"{what} told {(at - stopping) * 1000:.1f} ms after SIGINT to the driver")
                assert at - stopping < 1.0, f"{what} told {at - stopping:.3f} s after SIGINT to the driver"
                assert "has closed" in message, message
            assert sorted(outcomes) == ["offer", "receive"]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
