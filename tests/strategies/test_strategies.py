"""The strategy registry from Python (aeron_async.strategies): listing the built-ins, registering C
strategies and aliases at run time, and drivers choosing them by name (fc=, cc=, the name resolver
and idle strategy options)."""

from __future__ import annotations

import pathlib
import sys
import uuid
from typing import Any

import cffi
import pytest

import aeron_async
from aeron_async import strategies
from aeron_async._ffi import ffi, lib
from aeron_async.strategies import StrategyKind
from conftest import TEST_DRIVER_SETTINGS, UDP_SETTINGS, free_udp_port, stream_one, unique

ROOT = pathlib.Path(__file__).resolve().parents[2]


# ---- listing and looking up ----


def test_built_in_strategies_are_listed_per_kind() -> None:
    assert strategies.names(StrategyKind.FLOW_CONTROL)[:1] == ["unicast"]
    assert strategies.names(StrategyKind.CONGESTION_CONTROL)[:1] == ["static"]
    assert strategies.names(StrategyKind.NAME_RESOLVER)[:1] == ["default"]
    assert strategies.names(StrategyKind.IDLE)[:5] == ["backoff", "spin", "yield", "sleeping", "noop"]
    sleep_ns = strategies.lookup(StrategyKind.IDLE, "sleep-ns")
    assert (sleep_ns.is_alias, sleep_ns.target) == (True, "sleeping")
    assert sleep_ns.table == strategies.lookup(StrategyKind.IDLE, "sleeping").table
    unicast = strategies.lookup(StrategyKind.FLOW_CONTROL, "unicast")
    assert (unicast.kind, unicast.is_alias, unicast.options) == (StrategyKind.FLOW_CONTROL, False, None)
    assert "receiver window" in unicast.description and unicast.table != 0
    # the C listing agrees with the Python one
    buffer = ffi.new("char[]", 4096)
    count = lib.aa_strategy_names(int(StrategyKind.IDLE), buffer, 4096)
    assert ffi.string(buffer).decode().split(", ") == strategies.names(StrategyKind.IDLE)
    assert count == len(strategies.names(StrategyKind.IDLE))
    assert lib.aa_strategy_names(int(StrategyKind.IDLE), buffer, 8) == -1


def test_a_lookup_miss_names_every_registered_strategy() -> None:
    with pytest.raises(aeron_async.ConfigurationError) as info:
        strategies.lookup(StrategyKind.CONGESTION_CONTROL, "bbr")
    assert "unknown congestion control 'bbr'; registered: static, cubic" in str(info.value)
    with pytest.raises(aeron_async.ConfigurationError, match="unknown strategy kind 7"):
        strategies.names(7)


# ---- registering at run time ----


def test_register_refuses_taken_and_malformed_names_and_null_tables() -> None:
    table = strategies.lookup(StrategyKind.FLOW_CONTROL, "unicast").table
    with pytest.raises(aeron_async.ConfigurationError, match="flow control 'unicast' is already registered"):
        strategies.register(StrategyKind.FLOW_CONTROL, "unicast", table)
    for bad in ("", "has space", "min,t:5s", "a|b", "x" * 64):
        with pytest.raises(aeron_async.ConfigurationError, match="is invalid: use 1 to 63 letters"):
            strategies.register(StrategyKind.FLOW_CONTROL, bad, table)
    with pytest.raises(aeron_async.ConfigurationError, match="non-null address"):
        strategies.register(StrategyKind.FLOW_CONTROL, unique("null"), 0)
    with pytest.raises(aeron_async.ConfigurationError, match="cffi pointer"):
        strategies.register(StrategyKind.FLOW_CONTROL, unique("str"), "unicast")
    with pytest.raises(aeron_async.ConfigurationError, match="not registered; registered: unicast"):
        strategies.register_alias(StrategyKind.FLOW_CONTROL, unique("alias"), "fastest")
    name = unique("twice")
    strategies.register_alias(StrategyKind.IDLE, name, "spin")
    with pytest.raises(aeron_async.ConfigurationError, match="already registered as an alias of spin"):
        strategies.register_alias(StrategyKind.IDLE, name, "yield")
    assert strategies.lookup(StrategyKind.IDLE, name).target == "spin"


def test_a_flow_control_table_registered_from_python_drives_a_publication(udp_client: aeron_async.Aeron) -> None:
    """The built-in unicast table, registered again from Python through a pointer of another FFI
    instance, is what fc=<the new name> builds; an alias's options reach the strategy's supplier
    (unicast refuses options, so the publication is refused: the options were applied, not dropped)."""
    other_ffi = cffi.FFI()
    pointer = other_ffi.cast("void *", strategies.lookup(StrategyKind.FLOW_CONTROL, "unicast").table)
    name = unique("my-unicast")
    registered = strategies.register(StrategyKind.FLOW_CONTROL, name, pointer, description="unicast, from Python")
    assert registered.description == "unicast, from Python"
    assert name in strategies.names(StrategyKind.FLOW_CONTROL)
    channel = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
    stream_one(udp_client, f"{channel}|fc={name}", channel, 30, b"paced by a registered strategy")

    alias = unique("with-timeout")
    strategies.register_alias(StrategyKind.FLOW_CONTROL, alias, name, "t:5s")
    with pytest.raises(aeron_async.InvalidChannelError) as info:
        udp_client.add_publication(f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}|fc={alias}", 31)
    assert "fc=unicast takes no options, got 't:5s'" in str(info.value)
    assert f"flow control '{alias}'" in str(info.value)
    with pytest.raises(aeron_async.InvalidChannelError, match="alias of .* with options 't:5s' already"):
        udp_client.add_publication(f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}|fc={alias},t:1s", 31)


def test_a_congestion_control_alias_names_the_window_strategy(udp_client: aeron_async.Aeron) -> None:
    name = unique("fixed")
    strategies.register_alias(StrategyKind.CONGESTION_CONTROL, name, "static")
    channel = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
    stream_one(udp_client, channel, f"{channel}|cc={name}", 32, b"static by another name")


def test_an_idle_strategy_alias_carries_its_arguments(aeron_dir: str) -> None:
    name = unique("gentle")
    strategies.register_alias(StrategyKind.IDLE, name, "backoff", "1-1-10us-2ms", description="a gentle backoff")
    assert aeron_async.IdleStrategy(name).name == "backoff"
    with pytest.raises(aeron_async.ConfigurationError, match="alias of backoff with arguments '1-1-10us-2ms' already"):
        aeron_async.IdleStrategy(f"{name}:1-1-1us-1ms")
    bad = unique("bad-args")
    strategies.register_alias(StrategyKind.IDLE, bad, "backoff", "1-2")
    with pytest.raises(aeron_async.ConfigurationError, match="spins-yields-minPark-maxPark"):
        aeron_async.IdleStrategy(bad)
    settings = dict(TEST_DRIVER_SETTINGS, conductor_idle_strategy=name, shared_idle_strategy=name)
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings) as driver:
        with aeron_async.Aeron.connect(driver.aeron_dir, driver_timeout=5.0) as client:
            stream_one(client, "aeron:ipc", "aeron:ipc", 33, b"idle by name")
    with pytest.raises(aeron_async.ConfigurationError, match=f"unknown idle strategy 'napping'; registered: backoff, spin"):
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **dict(TEST_DRIVER_SETTINGS, conductor_idle_strategy="napping"))


# ---- a name resolver written in C, compiled and registered at run time ----

RESOLVER_SOURCE = r"""
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include "resolver/aa_name_resolver.h"

static int lookups = 0;

/* Knows one name, registry-test-host, and puts it on the loopback address. */
static int test_resolve(
    void *state, const char *key, const char *host, int family, bool is_re_resolution, struct sockaddr_storage *address)
{
    (void)state; (void)key; (void)family; (void)is_re_resolution;
    lookups++;
    if (0 != strcmp(host, "registry-test-host"))
    {
        return -1;
    }
    struct sockaddr_in *a4 = (struct sockaddr_in *)address;
    a4->sin_family = AF_INET;
    a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return 0;
}

static void test_close(aa_name_resolver_t *resolver)
{
    free(resolver);
}

static int test_supplier(
    aa_name_resolver_t **resolver, const char *init_args, const aa_name_resolver_context_t *context, void *clientd)
{
    (void)clientd;
    if (NULL == context || NULL == context->default_resolver || NULL == context->error_log)
    {
        return -1;
    }
    if (NULL != init_args && 0 != strcmp(init_args, "loopback"))
    {
        return -1;
    }
    aa_name_resolver_t *r = calloc(1, sizeof(*r));
    if (NULL == r)
    {
        return -1;
    }
    r->name = "test-hosts";
    r->resolve = test_resolve;
    r->close = test_close;
    *resolver = r;
    return 0;
}

static const aa_name_resolver_table_t test_table = { test_supplier };

const void *test_resolver_table(void)
{
    return &test_table;
}

int test_resolver_lookups(void)
{
    return lookups;
}
"""


@pytest.fixture(scope="module")
def test_resolver(tmp_path_factory: pytest.TempPathFactory) -> Any:
    builder = cffi.FFI()
    builder.cdef("const void *test_resolver_table(void); int test_resolver_lookups(void);")
    module = f"_registry_test_resolver_{uuid.uuid4().hex[:8]}"
    builder.set_source(
        module, RESOLVER_SOURCE, include_dirs=[str(ROOT / "_native" / "src")], extra_compile_args=["-D_GNU_SOURCE", "-std=gnu11"]
    )
    out = tmp_path_factory.mktemp("resolver")
    builder.compile(tmpdir=str(out), verbose=False)
    sys.path.insert(0, str(out))
    try:
        return __import__(module).lib
    finally:
        sys.path.remove(str(out))


def test_a_name_resolver_registered_from_python_resolves_channel_hosts(aeron_dir: str, test_resolver: Any) -> None:
    name = unique("test-hosts")
    strategies.register(StrategyKind.NAME_RESOLVER, name, int(cffi.FFI().cast("uintptr_t", test_resolver.test_resolver_table())))
    settings = dict(UDP_SETTINGS, name_resolver_supplier=name, name_resolver_init_args="loopback")
    before = test_resolver.test_resolver_lookups()
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings) as driver:
        with aeron_async.Aeron.connect(driver.aeron_dir, driver_timeout=5.0) as client:
            channel = f"aeron:udp?endpoint=registry-test-host:{free_udp_port()}"
            stream_one(client, channel, channel, 34, b"resolved by a registered resolver")
            assert test_resolver.test_resolver_lookups() >= before + 2  # the subscription's and the publication's
            # a name it does not know fails the registration, and the error says which resolver and name
            with pytest.raises(aeron_async.AeronError) as info:
                client.add_publication(f"aeron:udp?endpoint=no-such-host.invalid:{free_udp_port()}", 35)
            assert "name resolver 'test-hosts' cannot resolve 'no-such-host.invalid'" in str(info.value)
            assert "no-such-host.invalid" in str(info.value)
            # address literals never reach a resolver
            lookups = test_resolver.test_resolver_lookups()
            client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}", 36)
            assert test_resolver.test_resolver_lookups() == lookups


def test_the_driver_refuses_unknown_resolvers_and_arguments(aeron_dir: str) -> None:
    with pytest.raises(aeron_async.ConfigurationError, match="unknown name resolver 'dns-over-carrier-pigeon'; registered: default, csv_table"):
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **dict(TEST_DRIVER_SETTINGS, name_resolver_supplier="dns-over-carrier-pigeon"))
    with pytest.raises(aeron_async.AeronError, match="the default name resolver takes no init args"):
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **dict(TEST_DRIVER_SETTINGS, name_resolver_init_args="8.8.8.8"))


def test_the_cli_lists_every_kind_with_registered_entries(capsys: pytest.CaptureFixture[str]) -> None:
    from aeron_async.cli import main

    name = unique("listed")
    strategies.register_alias(StrategyKind.CONGESTION_CONTROL, name, "static")
    assert main(["strategies"]) == 0
    out = capsys.readouterr().out
    for heading in ("flow control:", "congestion control:", "name resolver:", "idle:"):
        assert heading in out
    assert "  unicast " in out and "  default " in out and "  backoff " in out
    assert f"  {name}" in out and "alias of static" in out
    assert out.index("congestion control:") < out.index(name) < out.index("name resolver:")
