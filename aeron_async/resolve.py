"""What a driver resolves names to: a reader of `<aeron_dir>/name-resolutions.dat` (ours, not Aeron's)
and the `aeron-async resolve NAME` command.

The driver's conductor writes one entry per (name, key) it resolved: the channel value as given
(`pod-1:40123`), the URI parameter or resolver key (endpoint, control, interface, neighbour), the
address, the resolver that answered, when, and how many times the address changed. The layout is
in resolver/aa_name_resolutions.h; entries are read between two equal even values of their sequence
(the conductor writes them while this reads).
"""

from __future__ import annotations

import argparse
import mmap
import os
import struct
import sys
import time

import attrs

from .errors import InvalidArgumentError

FILE_NAME = "name-resolutions.dat"
MAGIC = 0x524E4141
HEADER_LENGTH = 256
ENTRY_LENGTH = 768
_ENTRY = struct.Struct("<qqqiiii16s40s64s256s352s")
STATE_RESOLVED = 1
STATE_FAILED = 2


@attrs.frozen
class NameResolution:
    """One entry: `name` (as the channel gives it) resolved for `key` to `address` by `source`."""

    name: str
    key: str
    address: str
    source: str
    state: str  # "resolved" or "failed" (the last attempt failed; address is the last good one, if any)
    last_resolution_ms: int
    first_resolution_ms: int
    change_count: int
    failure_count: int
    error: str


@attrs.frozen
class NameResolutions:
    resolver: str
    pid: int
    entries: list[NameResolution]


def _text(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


def _default_aeron_dir() -> str:
    from ._aeron_native import ffi, lib

    buf = ffi.new("char[]", 4096)
    lib.aa_default_aeron_dir(buf, 4096)
    return str(ffi.string(buf).decode())


def read_name_resolutions(aeron_dir: str | None = None) -> NameResolutions:
    """The driver's resolution table. Raises FileNotFoundError when the directory has none (no
    driver there, or one older than this table), InvalidArgumentError (a ValueError) when its file is
    not such a table."""
    path = os.path.join(aeron_dir or _default_aeron_dir(), FILE_NAME)
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        magic, version, entry_length, capacity, count, pid = struct.unpack_from("<iiiiii", m, 0)
        if magic != MAGIC or entry_length != ENTRY_LENGTH:
            raise InvalidArgumentError(f"{path} is not a name resolutions table (or not yet written)")
        resolver = _text(m[32:96])
        entries = []
        for i in range(min(count, capacity)):
            offset = HEADER_LENGTH + i * ENTRY_LENGTH
            for _ in range(1000):
                before = struct.unpack_from("<q", m, offset)[0]
                fields = _ENTRY.unpack_from(m, offset)
                after = struct.unpack_from("<q", m, offset)[0]
                if before == after and before % 2 == 0:
                    break
                time.sleep(0.0001)
            else:
                continue  # the conductor kept writing it: skipped this time
            _, last_ms, first_ms, changes, failures, state, _, key, source, address, name, error = fields
            entries.append(NameResolution(
                name=_text(name), key=_text(key), address=_text(address), source=_text(source),
                state="resolved" if state == STATE_RESOLVED else "failed", last_resolution_ms=last_ms,
                first_resolution_ms=first_ms, change_count=changes, failure_count=failures, error=_text(error)))
        return NameResolutions(resolver=resolver, pid=pid, entries=entries)


def _matches(entry: NameResolution, name: str) -> bool:
    host = entry.name.rsplit(":", 1)[0] if not entry.name.startswith("[") else entry.name
    return name in (entry.name, host)


def _when(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms / 1000)) if ms > 0 else "never"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", help="a name as a channel gives it (pod-1 or pod-1:40123); empty with --all")
    p.add_argument("--aeron-dir", help="the media driver's directory (default $AERON_DIR or /dev/shm/aeron-<user>)")
    p.add_argument("--all", action="store_true", help="print every name the driver resolved")


def command(args: argparse.Namespace) -> int:
    try:
        table = read_name_resolutions(args.aeron_dir)
    except (FileNotFoundError, ValueError) as exc:
        print(f"aeron-async resolve: no name resolutions table ({exc}); is a driver running there?", file=sys.stderr)
        return 1
    found = [e for e in table.entries if args.all or _matches(e, args.name)]
    for e in found:
        if e.state == "resolved":
            print(f"{e.name} ({e.key}) -> {e.address}  by {e.source} at {_when(e.last_resolution_ms)}, "
                  f"{e.change_count} changes")
        else:
            known = f"last good {e.address}" if e.address else "never resolved"
            print(f"{e.name} ({e.key}) -> FAILED ({known}), {e.failure_count} failures, last at "
                  f"{_when(e.last_resolution_ms)}: {e.error}")
    if not found:
        print(f"the driver (pid {table.pid}) has not resolved '{args.name}': it resolves a name when a channel, "
              f"destination or its resolver ('{table.resolver}') names it (endpoint=, control=, interface=), and "
              f"again when the channel falls silent", file=sys.stderr)
        return 2
    return 0
