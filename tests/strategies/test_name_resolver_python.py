"""Name resolvers written in Python (docs/api.md, "Name resolvers written in Python"): a resolver
mapping service names to addresses drives a stream, embedded (asyncio and trio) and in a standalone driver (`--name-resolver`), and a
re-resolution when the service moves; one that raises and one that hangs are logged in the driver's
error log, fail only their lookup, and the driver goes on serving later ones."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Iterator

import anyio
import pytest

import aeron_async
from aeron_async import strategies
from aeron_async.errors import ConfigurationError, RegistrationError
from aeron_async.monitor import CncReader
from conftest import (PYTHON, REPO, TEST_DRIVER_SETTINGS, free_udp_port, new_aeron_dir, python_env, stop_driver,
                      stream_one, system_counter, wait_for)
from support.name_resolver_classes import BrokenInit, Hosts, Services

TESTS = os.path.join(REPO, "tests")


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """The async bodies here run on asyncio and trio."""
    return str(request.param)


@pytest.fixture(scope="module", autouse=True)
def registered() -> Iterator[None]:
    strategies.register_name_resolver("py-services", Services)
    strategies.register_name_resolver("py-hosts", Hosts)
    strategies.register_name_resolver("py-broken", BrokenInit)
    yield
    Services.release.set()  # lets a hung call return


def error_log(aeron_dir: str) -> str:
    with CncReader(aeron_dir) as reader:
        return "\n".join(e.text for e in reader.errors())


@pytest.mark.anyio
async def test_a_python_resolver_drives_a_stream_and_survives_a_raise_and_a_hang() -> None:
    aeron_dir = new_aeron_dir()
    port = free_udp_port()
    channel = f"aeron:udp?endpoint=orders:{port}"
    async with aeron_async.connect(aeron_dir, embedded_driver=True, name_resolver_supplier="py-services",
                                   **TEST_DRIVER_SETTINGS) as client:
        async with await client.add_subscription(channel, 7) as sub, await client.add_publication(channel, 7) as pub:
            with anyio.fail_after(10):
                for i in range(5):
                    await pub.offer(f"order {i}".encode())
                got = [(await sub.receive()).data for _ in range(5)]
            assert got == [f"order {i}".encode() for i in range(5)]
            assert (f"orders:{port}", "endpoint", False) in Services.lookups

            with pytest.raises(RegistrationError, match=r"Services\.lookup raised RuntimeError: the endpoint service "
                               r"registry is down"):
                await client.add_publication(f"aeron:udp?endpoint=boom:{port}", 8)
            start = time.monotonic()
            with pytest.raises(RegistrationError, match=r"lookup of endpoint=stuck:\d+ did not answer within 300 ms"):
                await client.add_publication(f"aeron:udp?endpoint=stuck:{port}", 8)
            assert time.monotonic() - start < 5
            with pytest.raises(RegistrationError, match=r"no such name \(no service 'nowhere'\)"):
                await client.add_publication(f"aeron:udp?endpoint=nowhere:{port}", 8)
            # the driver goes on: the stream still flows, and a new lookup is answered while the
            # hung call still holds its thread
            async with await client.add_publication(channel, 9) as pub2, await client.add_subscription(channel, 9) as sub2:
                with anyio.fail_after(10):
                    await pub2.offer(b"after")
                    assert (await sub2.receive()).data == b"after"
                    await pub.offer(b"still")
                    assert (await sub.receive()).data == b"still"
            log = error_log(client.aeron_dir)
            assert "name resolver 'py-services' (Python): lookup of endpoint=boom" in log
            assert "RuntimeError: the endpoint service registry is down" in log
            assert "lookup of endpoint=stuck" in log and "did not answer within 300 ms" in log
            assert Services.work_calls > 0  # do_work ran, off the conductor


def test_a_python_resolver_drives_a_re_resolution(aeron_dir: str) -> None:
    """The service moves (its name now maps to 127.0.0.2) and its old subscriber goes away: after 5 s
    without status messages the driver asks the resolver again (is_re_lookup), swaps the new address
    into the sender and the untouched publication reaches the new subscriber."""
    port = free_udp_port()
    Services.table["ledger"] = "127.0.0.1"
    settings = dict(TEST_DRIVER_SETTINGS, name_resolver_supplier="py-services", driver_reresolution_check_interval=0.2)
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings) as driver, \
            aeron_async.Aeron.connect(driver.aeron_dir) as client:
        pub = client.add_publication(f"aeron:udp?endpoint=ledger:{port}", 21)
        first = client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}", 21)
        wait_for(lambda: pub.offer(b"before") > 0, 10, what="the stream to connect")
        assert wait_for(lambda: list(first.poll_messages()), 10)[0].data == b"before"

        Services.table["ledger"] = "127.0.0.2"
        second = client.add_subscription(f"aeron:udp?endpoint=127.0.0.2:{port}", 21)
        first.close()
        got: list[bytes] = []

        def arrived() -> bool:
            pub.offer(b"after")
            got.extend(m.data for m in second.poll_messages())
            return b"after" in got

        wait_for(arrived, timeout=15, interval=0.01, what="the publication to follow ledger to 127.0.0.2")
        assert not pub.is_closed
        assert (f"ledger:{port}", "endpoint", True) in Services.lookups
        assert system_counter(aeron_dir, "Resolution changes") == 1


def test_resolve_alone_and_a_constructor_that_raises(aeron_dir: str) -> None:
    port = free_udp_port()
    channel = f"aeron:udp?endpoint=billing.svc:{port}"
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, name_resolver_supplier="py-hosts",
                                        **TEST_DRIVER_SETTINGS) as driver, \
            aeron_async.Aeron.connect(driver.aeron_dir) as client:
        stream_one(client, channel, channel, 3, b"bill")
        # lookup is not overridden (identity); localhost is no .svc: LookupError, the host is unknown
        with pytest.raises(RegistrationError, match="no such name"):
            client.add_publication(f"aeron:udp?endpoint=localhost:{port}", 4)

    other = new_aeron_dir()
    try:
        with aeron_async.MediaDriver.launch(aeron_dir=other, name_resolver_supplier="py-broken",
                                            name_resolver_init_args="x=1", **TEST_DRIVER_SETTINGS) as driver, \
                aeron_async.Aeron.connect(driver.aeron_dir) as client:
            with pytest.raises(RegistrationError, match=r"could not be created .*ValueError: bad init args 'x=1'"):
                client.add_publication(f"aeron:udp?endpoint=orders:{port}", 4)
            assert "creating it failed: support.name_resolver_classes.BrokenInit.__init__ raised ValueError" in error_log(other)
    finally:
        import shutil

        shutil.rmtree(other, ignore_errors=True)


def test_registration_refuses_what_it_cannot_run() -> None:
    class Slow(aeron_async.NameResolver):
        timeout = 0

    with pytest.raises(ConfigurationError, match="timeout must be a positive number of seconds"):
        strategies.register_name_resolver("py-slow", Slow)
    with pytest.raises(ConfigurationError, match="is not a class or factory"):
        strategies.register_name_resolver("py-none", None)
    with pytest.raises(ConfigurationError, match="already registered"):
        strategies.register_name_resolver("py-services", Hosts)
    with pytest.raises(ConfigurationError, match="already registered|taken|default"):
        strategies.register_name_resolver("default", Hosts)
    strategies.register_name_resolver("py-services", Services)  # the same class again: nothing to do
    entry = strategies.lookup(strategies.StrategyKind.NAME_RESOLVER, "py-services")
    assert "support.name_resolver_classes.Services (Python)" in entry.description
    with pytest.raises(ConfigurationError, match="unknown name resolver|py-missing|not registered|no "):
        aeron_async.MediaDriver.launch(aeron_dir=new_aeron_dir(), name_resolver_supplier="py-missing",
                                       **TEST_DRIVER_SETTINGS)


def test_a_standalone_driver_takes_a_python_resolver(aeron_dir: str) -> None:
    port = free_udp_port()
    env = {**python_env(), "PYTHONPATH": os.pathsep.join([REPO, TESTS]), "AERON_TEST_SERVICES": "payments=127.0.0.1"}
    args = [PYTHON, "-m", "aeron_async", "driver", "--aeron-dir", aeron_dir, "--threading-mode", "SHARED",
            "-o", "AERON_SHARED_IDLE_STRATEGY=backoff", "-o", "AERON_DIR_DELETE_ON_SHUTDOWN=true",
            "--name-resolver", "services=support.name_resolver_classes:Services"]
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert "running" in line, line + (proc.stdout.read() if proc.stdout and proc.poll() is not None else "")
        channel = f"aeron:udp?endpoint=payments:{port}"
        with aeron_async.Aeron.connect(aeron_dir) as client:
            stream_one(client, channel, channel, 11, b"paid")
            with pytest.raises(RegistrationError, match="did not answer within 300 ms"):
                client.add_publication(f"aeron:udp?endpoint=stuck:{port}", 12)
            pub2 = client.add_publication(channel, 13)  # served while the hung call still runs
            assert pub2.stream_id == 13
        assert "lookup of endpoint=stuck" in error_log(aeron_dir)
    finally:
        out = stop_driver(proc)
    assert proc.returncode == 0, out


@pytest.mark.parametrize("spec, message", [
    ("nomodule_xyz:Thing", "cannot import nomodule_xyz"),
    ("support.name_resolver_classes:Missing", "has no Missing"),
    ("=x:Y", "expects [NAME=]module:Class"),
])
def test_the_driver_command_says_what_is_wrong_with_a_resolver_class(spec: str, message: str) -> None:
    env = {**python_env(), "PYTHONPATH": os.pathsep.join([REPO, TESTS])}
    result = subprocess.run([sys.executable, "-m", "aeron_async", "driver", "--aeron-dir", new_aeron_dir(),
                             "--name-resolver", spec], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and message in result.stderr, result.stderr


def test_the_module_level_name_resolver_api_is_exported() -> None:
    params = aeron_async.NameResolverParams(name="n", init_args="")
    base = aeron_async.NameResolver(params)
    assert base.lookup("a:1", "endpoint", False) == "a:1"
    with pytest.raises(LookupError):
        base.resolve("a", "endpoint", False)
    base.do_work(0)
    assert base.params is params
