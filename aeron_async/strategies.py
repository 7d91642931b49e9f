"""The strategy registry: the pluggable strategies of this process's media drivers, by name.

Four kinds of strategy are chosen by name, from one process-wide registry:

- flow control (`StrategyKind.FLOW_CONTROL`): how far a network publication may send ahead of its
  receivers, chosen with `fc=<name>[,<options>]` on the publication's channel ("unicast" without);
- congestion control (`StrategyKind.CONGESTION_CONTROL`): the window a subscription's images
  advertise, chosen with `cc=<name>[,<options>]` on the subscription's channel ("static" without);
- name resolvers (`StrategyKind.NAME_RESOLVER`): how host names in UDP channels become addresses,
  chosen with `DriverContext(name_resolver_supplier=...)` ("default": the system resolver);
- idle strategies (`StrategyKind.IDLE`): what a driver thread, or `IdleStrategy`, does when it found
  no work, chosen with the `*_idle_strategy` options ("backoff").

    >>> from aeron_async import strategies
    >>> strategies.names(strategies.StrategyKind.FLOW_CONTROL)
    ['unicast', 'aa_unicast_flow_control_strategy_supplier']

`register` adds a strategy written in C, given the address of its function table (the C type
depends on the kind; see docs/architecture.md, "Strategies"), for instance one compiled with cffi in
your own module: `register(kind, "mine", my_ffi.addressof(my_lib, "my_table"))`. `register_alias`
adds a name for a registered strategy with options, e.g. an idle strategy "gentle" standing for
"backoff" with "1-1-10us-10ms". Registrations take effect for resources created afterwards, in
embedded drivers (a standalone `aeron-async driver` process has its own registry) and are never
removed.

`register_flow_control` adds a flow-control strategy written in Python (a subclass of
`aeron_async.FlowControlStrategy`): it is registered here under its name like a C one, as a native
proxy that queues the sender's events to a worker thread of the driver, so the sender never waits
for Python (aeron_async.flow_control, docs/api.md).
"""

from __future__ import annotations

import enum
import threading
from typing import Any

import attrs

from ._ffi import ffi, lib
from .errors import ConfigurationError, check

__all__ = (
    "Strategy",
    "StrategyKind",
    "entries",
    "lookup",
    "names",
    "register",
    "register_alias",
    "register_flow_control",
)


class StrategyKind(enum.IntEnum):
    """The kinds of strategy (the C constants AA_STRATEGY_KIND_*)."""

    FLOW_CONTROL = 0
    CONGESTION_CONTROL = 1
    NAME_RESOLVER = 2
    IDLE = 3


@attrs.frozen
class Strategy:
    """One registered name. For an alias, `target` is the strategy it stands for and `options` what
    it adds; otherwise `target == name`. `table` is the address of the C function table."""

    kind: StrategyKind
    name: str
    target: str
    options: str | None
    description: str
    is_alias: bool
    table: int


# Objects whose memory C now points at: the registry never lets go of an entry, so neither do we.
_kept: list[Any] = []
_kept_lock = threading.Lock()


def _kind(kind: StrategyKind | int) -> int:
    try:
        return int(StrategyKind(kind))
    except ValueError:
        raise ConfigurationError(
            f"unknown strategy kind {kind!r}; use one of {', '.join(k.name for k in StrategyKind)}"
        ) from None


def _text(value: Any) -> str | None:
    return None if value == ffi.NULL else ffi.string(value).decode()


def _strategy(entry: Any) -> Strategy:
    return Strategy(
        kind=StrategyKind(entry.kind),
        name=ffi.string(entry.name).decode(),
        target=ffi.string(entry.target).decode(),
        options=_text(entry.options),
        description=_text(entry.description) or "",
        is_alias=bool(entry.is_alias),
        table=int(ffi.cast("uintptr_t", entry.table)),
    )


def _address(value: Any, what: str) -> Any:
    """A `void *` from an address (int) or a cffi pointer of any FFI instance."""
    if isinstance(value, bool):
        raise ConfigurationError(f"{what} must be an address (int) or a cffi pointer, not {value!r}")
    if isinstance(value, int):
        if value <= 0:
            raise ConfigurationError(f"{what} must be a non-null address, got {value}")
        return ffi.cast("void *", value)
    try:
        address = int(ffi.cast("uintptr_t", value))
    except TypeError:
        raise ConfigurationError(f"{what} must be an address (int) or a cffi pointer, not {type(value).__name__}") from None
    if address == 0:
        raise ConfigurationError(f"{what} is a NULL pointer")
    return ffi.cast("void *", address)


def lookup(kind: StrategyKind | int, name: str) -> Strategy:
    """The strategy registered as `name`; `ConfigurationError` naming every registered one if none."""
    entry = ffi.new("aa_strategy_t *")
    check(lib.aa_strategy_lookup(_kind(kind), name.encode(), entry), ConfigurationError)
    return _strategy(entry)


def entries(kind: StrategyKind | int) -> list[Strategy]:
    """Every strategy of a kind, built-ins first, in registration order."""
    k = _kind(kind)
    count = check(lib.aa_strategy_count(k), ConfigurationError)
    entry = ffi.new("aa_strategy_t *")
    out = []
    for index in range(count):
        check(lib.aa_strategy_entry(k, index, entry), ConfigurationError)
        out.append(_strategy(entry))
    return out


def names(kind: StrategyKind | int) -> list[str]:
    """The registered names of a kind (aliases included), built-ins first."""
    return [s.name for s in entries(kind)]


def register(kind: StrategyKind | int, name: str, table: Any, *, clientd: Any = None, description: str = "") -> Strategy:
    """Registers a strategy written in C under `name`.

    `table` is the address (an int, or a cffi pointer from any FFI) of the kind's function table:
    `aa_flow_control_strategy_table_t`, `aa_congestion_control_strategy_table_t`,
    `aa_name_resolver_table_t` or `aa_idle_strategy_table_t`. It, the functions it points to and
    `clientd` (handed back to them; an address, a cffi pointer or None) must stay valid for the life
    of the process; the cffi objects given here are kept referenced for that long. Raises
    `ConfigurationError` when the name is taken (names are never replaced) or malformed (1 to 63 of
    letters, digits, `_`, `.`, `-`)."""
    k = _kind(kind)
    table_ptr = _address(table, "table")
    clientd_ptr = ffi.NULL if clientd is None else _address(clientd, "clientd")
    with _kept_lock:
        check(lib.aa_strategy_register(k, name.encode(), table_ptr, clientd_ptr, description.encode()), ConfigurationError)
        _kept.extend((table, clientd))
    return lookup(k, name)


def register_alias(
    kind: StrategyKind | int, name: str, target: str, options: str | None = None, *, description: str = ""
) -> Strategy:
    """Registers `name` as another name for the registered strategy `target`, with `options` applied
    when the name is used without options of its own (e.g. `fc=name`, or an idle strategy "name")."""
    k = _kind(kind)
    check(
        lib.aa_strategy_register_alias(
            k, name.encode(), target.encode(), ffi.NULL if options is None else options.encode(), description.encode()
        ),
        ConfigurationError,
    )
    return lookup(k, name)


def register_flow_control(name: str, cls: Any, *, description: str = "") -> Strategy:
    """Registers a flow-control strategy written in Python as `name`, for `fc=<name>[,options]`.

    `cls` is a subclass of `aeron_async.FlowControlStrategy` (or any callable taking a
    `FlowControlParams` and returning one, with the same class attributes): each publication that
    names it gets `cls(params)`. Its class attributes are read now: `retransmit_multiple`,
    `accepted_options` ("g", "t": the reference options `fc=` may give) and `requires_group_tag`.
    Embedded drivers of this process run it (each on a worker thread of its own); a standalone driver
    takes it with `aeron-async driver --flow-control NAME=module:Class`. Registering the same class
    under the same name again does nothing; a taken name raises `ConfigurationError`."""
    from . import flow_control

    flow_control.register(name, cls, description=description)
    return lookup(StrategyKind.FLOW_CONTROL, name)


def register_name_resolver(name: str, cls: Any, *, description: str = "") -> Strategy:
    """Registers a name resolver written in Python as `name`, for the driver option
    AERON_NAME_RESOLVER_SUPPLIER (`MediaDriver.launch(name_resolver_supplier=name)`).

    `cls` is a subclass of `aeron_async.NameResolver` (or any callable taking a
    `NameResolverParams` and returning one): each driver that chooses it gets `cls(params)`. Its
    class attributes `timeout` and `work_interval` are read now, and which of lookup, resolve and
    do_work it overrides (the others stay native). This process's worker thread runs it, for its
    embedded drivers; a standalone driver takes it with `aeron-async driver --name-resolver
    NAME=module:Class`. Registering the same class under the same name again does nothing; a taken
    name raises `ConfigurationError`."""
    from . import name_resolver

    name_resolver.register(name, cls, description=description)
    return lookup(StrategyKind.NAME_RESOLVER, name)


# --- what `aeron-async strategies` lists (docs/api.md, Strategies) ------------------------------

# The strategies a standalone `aeron-async driver` registered itself (--flow-control, --name-resolver),
# which live in that process's registry only: the driver writes them here, in its aeron directory, so
# that `aeron-async strategies` in another process lists them too. One line each: kind, name, what.
REGISTRATIONS_FILE = "driver-strategies.txt"


def listed(kind: StrategyKind | int) -> list[Strategy]:
    """The strategies of a kind a user chooses by name: the registry's, less the aliases named
    after the C functions (aa_...), which are there for Aeron's supplier-style option values."""
    return [s for s in entries(kind) if not (s.is_alias and s.name.startswith("aa_"))]


def registered_names() -> set[tuple[int, str]]:
    """(kind, name) of every strategy registered now."""
    return {(int(kind), name) for kind in StrategyKind for name in names(kind)}


def write_registrations(aeron_dir: str, before: set[tuple[int, str]]) -> None:
    """Writes the strategies registered since `before` (registered_names()) into the driver's aeron
    directory, readable as its CnC file is."""
    import os

    lines = []
    for kind in StrategyKind:
        for s in entries(kind):
            if (int(kind), s.name) not in before:
                what = f"alias of {s.target}" if s.is_alias else (s.description or "registered by the driver")
                lines.append(f"{kind.name}\t{s.name}\t{' '.join(what.split())}\n")
    path = os.path.join(aeron_dir, REGISTRATIONS_FILE)
    # owner-only, or readable by the directory's group when the CnC file is (AERON_DIR_GROUP): never
    # writable by anyone but the driver, and no link followed (docs/security.md, Files)
    try:
        mode = os.stat(os.path.join(aeron_dir, "cnc.dat"), follow_symlinks=False).st_mode & 0o640
    except OSError:
        mode = 0o600
    tmp = path + ".tmp"
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    os.fchmod(fd, mode | 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.writelines(lines)
    os.replace(tmp, path)


def read_registrations(aeron_dir: str) -> list[tuple[StrategyKind, str, str]]:
    """(kind, name, what) of each strategy the driver of `aeron_dir` registered itself; [] when it
    wrote none."""
    import os

    try:
        with open(os.path.join(aeron_dir, REGISTRATIONS_FILE), encoding="utf-8") as f:
            rows = [line.rstrip("\n").split("\t") for line in f]
    except OSError:
        return []
    return [(StrategyKind[row[0]], row[1], row[2]) for row in rows if len(row) == 3 and row[0] in StrategyKind.__members__]
