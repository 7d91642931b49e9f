"""Name resolvers written in Python (docs/api.md, "Name resolvers written in Python").

A driver's name resolver turns the names in channels (`endpoint=`, `control=`, `interface=`) into
addresses, in two steps (reference 8.1): `lookup(name, key, is_re_lookup)` maps a name to
"host[:port]", then `resolve(host, key, is_re_resolution)` maps a host that is not an address
literal to an IP address literal. Subclass `NameResolver`, register the class by name with
`aeron_async.strategies.register_name_resolver(name, cls)` and choose it as a driver's resolver:
`MediaDriver.launch(name_resolver_supplier=name)` (init args: `name_resolver_init_args`), or
`aeron-async driver --name-resolver name=module:Class`.

The driver never runs Python on its conductor, sender or receiver. lookup and resolve are asked on
the driver's resolver executor thread, which hands them to this process's worker and waits for the
answer at most `timeout` seconds. The worker runs every call on a thread of its own, so a call that
hangs holds only its thread: the driver's wait for it ends at the timeout (the lookup fails, and
the driver's error log says so), later calls run on other threads, and when the hung call returns
at last its answer is dropped. At most `MAX_CALLS_IN_FLIGHT` calls run at once; beyond that (calls
that all hang) requests fail at once, saying so, until some return. `do_work(now_ms)` is posted by
the conductor every `work_interval` seconds and never waited for; a do_work still running is not
asked again. An exception is written to the driver's error log and fails that lookup (LookupError
means "no such name": the registration's error says so, nothing is logged); the driver goes on.

Methods the class does not override never reach Python: lookup is the identity, resolve is the
driver's default resolver (getaddrinfo), and there is no do_work.
"""

from __future__ import annotations

import ipaddress
import os
import threading
import traceback
from collections.abc import Callable
from typing import Any, ClassVar

import attrs

from ._ffi import ffi, lib
from ._python_classes import load_class, qualified as _qualified
from .errors import ConfigurationError, check

__all__ = ("NameResolver", "NameResolverParams", "load_factory", "register", "registered")

#: Calls into Python resolvers that may run at once (threads of this process); more wait nowhere:
#: they fail at once, as every slot is then held by calls that hang.
MAX_CALLS_IN_FLIGHT = 16


@attrs.frozen
class NameResolverParams:
    """What one driver's resolver is created with: the name it was registered under and the
    driver's `AERON_NAME_RESOLVER_INIT_ARGS` ("" when none)."""

    name: str
    init_args: str


class NameResolver:
    """Base class of name resolvers written in Python. One instance per driver that chooses it.

    Class attributes, read when the class is registered:

    - `timeout` (seconds, default 1.0): how long the driver waits for one lookup or resolve;
    - `work_interval` (seconds, default 1.0): how often `do_work` is called, when overridden.

    Calls may overlap (one per executor thread, and a hung call does not stop the next): guard
    state that lookup, resolve and do_work share.
    """

    timeout: ClassVar[float] = 1.0
    work_interval: ClassVar[float] = 1.0

    def __init__(self, params: NameResolverParams) -> None:
        self.params = params

    def lookup(self, name: str, key: str, is_re_lookup: bool) -> str:
        """`name` (the value of URI parameter `key`: "endpoint", "control", "interface", ...) as
        "host[:port]" (brackets around an IPv6 host). `is_re_lookup`: asked again because the
        channel fell silent. Raise LookupError for a name that does not exist. Default: identity."""
        return name

    def resolve(self, host: str, key: str, is_re_resolution: bool) -> str:
        """`host` (never an address literal) as an IPv4 or IPv6 address literal. Raise LookupError
        for an unknown host. Not overridden: the driver's default resolver answers."""
        raise LookupError(f"unknown host {host!r}")

    def do_work(self, now_ms: int) -> None:
        """Periodic work, every `work_interval` seconds (`now_ms`: the driver's epoch clock)."""

    def close(self) -> None:
        """The driver closed; release what the resolver holds."""


Factory = Callable[[NameResolverParams], NameResolver]


@attrs.frozen
class _Registration:
    factory: Any
    timeout: float
    work_interval: float


_registered: dict[str, _Registration] = {}
_registered_lock = threading.Lock()


def registered() -> dict[str, Any]:
    """The name resolvers written in Python registered in this process: name -> class (or factory)."""
    with _registered_lock:
        return {name: r.factory for name, r in _registered.items()}


def load_factory(spec: str) -> Any:
    """The class named by "module:Class" (or "module.Class"), for `--name-resolver NAME=module:Class`."""
    return load_class(spec, "name resolver", "mypkg.names:Services")


def _overrides(factory: Any, method: str) -> bool:
    if isinstance(factory, type) and issubclass(factory, NameResolver):
        return getattr(factory, method) is not getattr(NameResolver, method)
    return True  # a factory: its instances are asked


def _seconds(factory: Any, attr: str) -> float:
    value = getattr(factory, attr, getattr(NameResolver, attr))
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ConfigurationError(f"name resolver {factory!r}: {attr} must be a positive number of seconds, got {value!r}")
    return float(value)


def register(name: str, factory: Factory | type[NameResolver], *, description: str = "") -> None:
    """Registers a resolver written in Python as `name` (the driver option
    AERON_NAME_RESOLVER_SUPPLIER, `MediaDriver.launch(name_resolver_supplier=name)`) and starts this
    process's worker. Registering the same class again under its name does nothing; a name that is
    taken raises ConfigurationError."""
    if not callable(factory):
        raise ConfigurationError(f"name resolver {name!r}: {factory!r} is not a class or factory (params -> resolver)")
    timeout = _seconds(factory, "timeout")
    work_interval = _seconds(factory, "work_interval")
    flags = 0
    if _overrides(factory, "lookup"):
        flags |= lib.AA_NAME_RESOLVER_PROXY_HAS_LOOKUP
    if _overrides(factory, "resolve"):
        flags |= lib.AA_NAME_RESOLVER_PROXY_HAS_RESOLVE
    if _overrides(factory, "do_work"):
        flags |= lib.AA_NAME_RESOLVER_PROXY_HAS_DO_WORK
    with _registered_lock:
        existing = _registered.get(name)
        if existing is not None:
            if existing.factory is factory:
                return
            raise ConfigurationError(f"name resolver {name!r} is already registered, by {_qualified(existing.factory)}")
        lib.aa_strategy_count(lib.AA_STRATEGY_KIND_NAME_RESOLVER)  # the built-ins first: they keep their names
        what = description or f"{_qualified(factory)} (Python)"
        check(lib.aa_name_resolver_proxy_register(
            name.encode(), flags, int(timeout * 1e9), max(1, int(work_interval * 1000)), what.encode()),
            ConfigurationError)
        _registered[name] = _Registration(factory, timeout, work_interval)
    _Worker.ensure_started()


# ---- the worker: one per process ----


class _Instance:
    __slots__ = ("resolver", "created", "error", "what")

    def __init__(self, what: str) -> None:
        self.resolver: NameResolver | None = None
        self.created = threading.Event()
        self.error = ""  # why creating it failed
        self.what = what


_BATCH = 64
_IDLE_WAIT_NS = 1_000_000_000  # bounded sleep; a request or a stop wakes the worker at once


def _describe(what: str, where: str, exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    at = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    return f"{what}.{where} raised {type(exc).__name__}: {exc}{at}"


class _Worker:
    """Drains the process's name-resolver host on a daemon thread and runs each call into Python on
    a thread of its own (at most MAX_CALLS_IN_FLIGHT at once)."""

    _current: ClassVar[_Worker | None] = None
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self) -> None:
        self._stopping = False
        self._instances: dict[int, _Instance] = {}
        self._calls = threading.BoundedSemaphore(MAX_CALLS_IN_FLIGHT)
        self._thread = threading.Thread(target=self._run, name="aeron-async-name-resolver", daemon=True)
        lib.aa_name_resolver_proxy_host_attach(True)
        self._thread.start()

    @classmethod
    def ensure_started(cls) -> None:
        with cls._lock:
            if cls._current is None:
                cls._current = _Worker()

    @classmethod
    def stop_current(cls) -> None:
        """Stops the worker (tests; a process's drivers then fail Python lookups at once)."""
        with cls._lock:
            worker, cls._current = cls._current, None
        if worker is not None:
            worker._stop()

    def _stop(self) -> None:
        lib.aa_name_resolver_proxy_host_attach(False)
        self._stopping = True
        lib.aa_name_resolver_proxy_host_wake()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        requests = ffi.new("aa_name_resolver_proxy_request_t[]", _BATCH)
        while not self._stopping:
            count = lib.aa_name_resolver_proxy_host_poll(requests, _BATCH)
            if count == 0:
                lib.aa_name_resolver_proxy_host_wait(_IDLE_WAIT_NS)
                continue
            for index in range(count):
                self._dispatch(requests[index])

    def _dispatch(self, request: Any) -> None:
        kind = request.type
        request_id = request.request_id
        instance_id = request.instance_id
        if kind == lib.AA_NAME_RESOLVER_PROXY_REQUEST_CLOSE:
            closed = self._instances.pop(instance_id, None)
            if closed is not None:
                self._spawn(request_id, lambda: self._close(closed), answer=False)
            return
        if kind == lib.AA_NAME_RESOLVER_PROXY_REQUEST_CREATE:
            name = ffi.string(request.resolver).decode()
            init_args = ffi.string(request.name).decode()
            with _registered_lock:
                registration = _registered.get(name)
            new = _Instance(_qualified(registration.factory) if registration else name)
            self._instances[instance_id] = new
            self._spawn(request_id, lambda: self._create(new, name, init_args, registration))
            return
        found = self._instances.get(instance_id)
        if found is None:
            self._answer(request_id, -1, 0, "", "the resolver was closed")
            return
        instance = found
        if kind == lib.AA_NAME_RESOLVER_PROXY_REQUEST_DO_WORK:
            now_ms = request.now_ms
            self._spawn(request_id, lambda: self._do_work(instance, now_ms))
            return
        key = ffi.string(request.key).decode()
        name = ffi.string(request.name).decode()
        again = bool(request.is_again)
        if kind == lib.AA_NAME_RESOLVER_PROXY_REQUEST_LOOKUP:
            self._spawn(request_id, lambda: self._lookup(instance, key, name, again))
        elif kind == lib.AA_NAME_RESOLVER_PROXY_REQUEST_RESOLVE:
            self._spawn(request_id, lambda: self._resolve(instance, key, name, again))
        else:
            self._answer(request_id, -1, 0, "", f"unknown request type {kind}")

    @staticmethod
    def _answer(request_id: int, rc: int, code: int, answer: str, error: str) -> None:
        lib.aa_name_resolver_proxy_host_answer(request_id, rc, code, answer.encode(errors="replace"),
                                               error.encode(errors="replace"))

    def _spawn(self, request_id: int, call: Callable[[], tuple[int, int, str, str]], answer: bool = True) -> None:
        if not self._calls.acquire(blocking=False):
            if answer:
                self._answer(request_id, -1, 0, "", f"{MAX_CALLS_IN_FLIGHT} calls into Python name resolvers are still "
                             "running (they hang?): refused until some return")
            return

        def run() -> None:
            try:
                result = call()
            except BaseException as exc:  # a bug here must not lose the answer
                result = (-1, 0, "", f"{type(exc).__name__}: {exc}")
            finally:
                self._calls.release()
            if answer:
                self._answer(request_id, *result)

        threading.Thread(target=run, name="aeron-async-name-resolver-call", daemon=True).start()

    @staticmethod
    def _create(instance: _Instance, name: str, init_args: str, registration: _Registration | None) -> tuple[int, int, str, str]:
        try:
            if registration is None:
                raise ConfigurationError(f"no Python class is registered as {name!r} in this process")
            resolver = registration.factory(NameResolverParams(name=name, init_args=init_args))
            if not isinstance(resolver, NameResolver):
                raise TypeError(f"{registration.factory!r} made {resolver!r}, which is not a NameResolver")
        except BaseException as exc:
            instance.error = _describe(instance.what, "__init__", exc)
            instance.created.set()
            return -1, 0, "", instance.error
        instance.resolver = resolver
        instance.created.set()
        return 0, 0, "", ""

    @staticmethod
    def _ready(instance: _Instance) -> NameResolver:
        if not instance.created.wait(timeout=60):
            raise TimeoutError(f"{instance.what} is still being created")
        if instance.resolver is None:
            raise RuntimeError(f"it could not be created ({instance.error})")
        return instance.resolver

    @classmethod
    def _call(cls, instance: _Instance, where: str, call: Callable[[NameResolver], str]) -> tuple[int, int, str, str]:
        try:
            value = call(cls._ready(instance))
        except LookupError as exc:
            why = exc.args[0] if len(exc.args) == 1 else exc
            return -1, lib.AA_ERROR_CODE_UNKNOWN_HOST, "", f"{instance.what}.{where}: no such name ({why})"
        except BaseException as exc:
            return -1, 0, "", _describe(instance.what, where, exc)
        if not isinstance(value, str):
            return -1, 0, "", f"{instance.what}.{where} returned {value!r}, not a str"
        return 0, 0, value, ""

    @classmethod
    def _lookup(cls, instance: _Instance, key: str, name: str, again: bool) -> tuple[int, int, str, str]:
        return cls._call(instance, "lookup", lambda r: r.lookup(name, key, again))

    @classmethod
    def _resolve(cls, instance: _Instance, key: str, host: str, again: bool) -> tuple[int, int, str, str]:
        result = cls._call(instance, "resolve", lambda r: r.resolve(host, key, again))
        if result[0] == 0:
            try:
                ipaddress.ip_address(result[2])
            except ValueError:
                return -1, 0, "", f"{instance.what}.resolve returned {result[2]!r}, not an IP address literal"
        return result

    @classmethod
    def _do_work(cls, instance: _Instance, now_ms: int) -> tuple[int, int, str, str]:
        def work(resolver: NameResolver) -> str:
            resolver.do_work(now_ms)
            return ""

        return cls._call(instance, "do_work", work)

    @staticmethod
    def _close(instance: _Instance) -> tuple[int, int, str, str]:
        if instance.created.wait(timeout=60) and instance.resolver is not None:
            try:
                instance.resolver.close()
            except Exception:
                pass  # the driver is gone: there is no error log to write it to
        return 0, 0, "", ""


def _after_fork_in_child() -> None:
    # The worker's threads exist only in the parent; the child's drivers are its own.
    lib.aa_name_resolver_proxy_host_after_fork()
    _Worker._lock = threading.Lock()
    _Worker._current = None
    if _registered:
        _Worker.ensure_started()


os.register_at_fork(after_in_child=_after_fork_in_child)
