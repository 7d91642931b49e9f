"""Name resolvers written in Python for tests/strategies/test_name_resolver_python.py (importable by standalone
drivers: `aeron-async driver --name-resolver NAME=support.name_resolver_classes:Services`)."""

from __future__ import annotations

import os
import threading

import aeron_async


class Services(aeron_async.NameResolver):
    """Service names to addresses: `orders:PORT` -> 127.0.0.1:PORT, and whatever `table` says (a
    test moves a name by changing it). `boom` raises, `stuck` hangs until `release` is set (or
    60 s). AERON_TEST_SERVICES ("name=ip,name=ip") adds names in a standalone driver."""

    timeout = 0.3
    work_interval = 0.05
    table: dict[str, str] = {"orders": "127.0.0.1"}
    release = threading.Event()
    work_calls = 0
    lookups: list[tuple[str, str, bool]] = []

    def __init__(self, params: aeron_async.NameResolverParams) -> None:
        super().__init__(params)
        for item in filter(None, os.environ.get("AERON_TEST_SERVICES", "").split(",")):
            name, _, ip = item.partition("=")
            self.table[name] = ip

    def lookup(self, name: str, key: str, is_re_lookup: bool) -> str:
        Services.lookups.append((name, key, is_re_lookup))
        host, sep, port = name.rpartition(":")
        if not sep:
            host, port = name, ""
        if host == "boom":
            raise RuntimeError(f"the {key} service registry is down")
        if host == "stuck":
            Services.release.wait(60)
        if host not in self.table:
            raise LookupError(f"no service {host!r}")
        return self.table[host] + (f":{port}" if port else "")

    def do_work(self, now_ms: int) -> None:
        Services.work_calls += 1


class Hosts(aeron_async.NameResolver):
    """Only resolve (lookup stays the identity): `*.svc` hosts -> 127.0.0.1."""

    def resolve(self, host: str, key: str, is_re_resolution: bool) -> str:
        if host.endswith(".svc"):
            return "127.0.0.1"
        raise LookupError(host)


class BrokenInit(aeron_async.NameResolver):
    def __init__(self, params: aeron_async.NameResolverParams) -> None:
        raise ValueError(f"bad init args {params.init_args!r}")

    def lookup(self, name: str, key: str, is_re_lookup: bool) -> str:
        return name
