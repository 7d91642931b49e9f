"""Driver control from any process: what a running driver tells about itself (`driver_info`,
`aeron-async driver --info`) and asking it to stop (`request_termination`, `aeron-async driver
--terminate`).

Termination is Aeron's TERMINATE_DRIVER command (0x0E) with a token, written into the driver's CnC
file. The driver validates it by its `AERON_DRIVER_TERMINATION_VALIDATOR` option: `deny` (the
default: nobody may stop it this way), `allow` (any request), or `token` (a request carrying
`AERON_DRIVER_TERMINATION_TOKEN`, or the first line of `AERON_DRIVER_TERMINATION_TOKEN_FILE`, which
keeps it off command lines: docs/security.md, Secrets on the command line). An accepted request
makes the driver's owner close it the ordinary way (the CnC file marked closed, clients told); a
refused one is recorded in the driver's error log, where the requester reads the reason.
"""

from __future__ import annotations

import os
import time

import attrs

from ._ffi import ffi, lib
from .counters import SYSTEM_COUNTER_VERSION, TYPE_SYSTEM
from .driver import is_driver_active
from .errors import DriverNotFoundError, TerminationRefusedError, TerminationTimeoutError, check
from .monitor import CncReader

# <aeron_dir>/OPTIONS_FILE: the options a driver of this library runs with, written at its start
# (AA_DRIVER_OPTIONS_FILE of _native/src/driver/aa_driver.h): `property=value` lines, the token hidden.
OPTIONS_FILE = "driver-options.properties"
# the prefix of the error log entries a driver records when it refuses a TERMINATE_DRIVER request
REFUSAL_PREFIX = "TERMINATE_DRIVER refused"


def default_aeron_dir() -> str:
    buf = ffi.new("char[]", 4096)
    lib.aa_default_aeron_dir(buf, 4096)
    return str(ffi.string(buf).decode())


@attrs.frozen
class DriverInfo:
    """What a driver's directory tells about it: from the CnC header (pid, start time, heartbeat,
    CnC version), the version counter, and the options file (empty for a driver that writes none,
    such as Aeron's own)."""

    aeron_dir: str
    pid: int
    start_timestamp_ms: int
    heartbeat_age_ms: int  # -1: the driver has closed
    cnc_version: int
    version: str | None
    active: bool
    options: dict[str, str] = attrs.field(factory=dict)

    @property
    def cnc_version_text(self) -> str:
        v = self.cnc_version
        return f"{(v >> 16) & 0xFF}.{(v >> 8) & 0xFF}.{v & 0xFF}"


def read_driver_options(aeron_dir: str) -> dict[str, str]:
    """The options file of the driver in `aeron_dir` as {property: value}; {} when there is none."""
    try:
        with open(os.path.join(aeron_dir, OPTIONS_FILE), encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return {}
    options = {}
    for line in lines:
        if line.startswith("#") or "=" not in line:
            continue
        name, _, value = line.partition("=")
        options[name] = value
    return options


def driver_version(reader: CncReader) -> str | None:
    """The driver's software version, from its version system counter's label ("... version=X")."""
    for record in reader.find_by_type_id(TYPE_SYSTEM):
        if record.system_counter_id == SYSTEM_COUNTER_VERSION:
            _, sep, rest = record.label.partition("version=")
            return rest.split()[0] if sep and rest else record.label
    return None


def driver_info(aeron_dir: str | None = None) -> DriverInfo:
    """The driver in `aeron_dir` (default $AERON_DIR or /dev/shm/aeron-<user>); DriverNotFoundError
    when there is no CnC file."""
    aeron_dir = aeron_dir or os.environ.get("AERON_DIR") or default_aeron_dir()
    with CncReader(aeron_dir) as reader:
        info = reader.info()
        version = driver_version(reader)
    return DriverInfo(
        aeron_dir=aeron_dir, pid=info["pid"], start_timestamp_ms=info["start_timestamp_ms"],
        heartbeat_age_ms=info["driver_heartbeat_age_ms"], cnc_version=info["cnc_version"], version=version,
        active=is_driver_active(aeron_dir), options=read_driver_options(aeron_dir))


def _refusals(reader: CncReader) -> tuple[int, str]:
    """The observations of refused termination requests in the error log, and the latest reason."""
    count, latest, latest_ms = 0, "", -1
    for e in reader.errors():
        if e.text.startswith(REFUSAL_PREFIX):
            count += e.count
            if e.last_ms >= latest_ms:
                latest, latest_ms = e.text, e.last_ms
    return count, latest


def request_termination(aeron_dir: str | None = None, token: str | bytes | None = None, timeout: float = 5.0) -> None:
    """Ask the driver in `aeron_dir` to stop, carrying `token`, and wait up to `timeout` seconds for
    the answer: returns once it has stopped (its CnC file marked closed or gone, or its process
    gone); raises TerminationRefusedError with the driver's reason when it refused,
    TerminationTimeoutError when it did neither in time (a driver that ignores the command, such as
    one whose owner does not close it), DriverNotFoundError when no live driver is there."""
    aeron_dir = aeron_dir or os.environ.get("AERON_DIR") or default_aeron_dir()
    token_bytes = token.encode() if isinstance(token, str) else (token or b"")
    if not is_driver_active(aeron_dir):
        raise DriverNotFoundError(f"no running media driver in {aeron_dir} to terminate")
    with CncReader(aeron_dir) as reader:
        refused_before, _ = _refusals(reader)
        check(lib.aa_cnc_reader_request_termination(reader._checked(), token_bytes, len(token_bytes)))
        deadline = time.monotonic() + timeout
        while True:
            if not is_driver_active(aeron_dir):
                return
            refused, reason = _refusals(reader)
            if refused > refused_before:
                raise TerminationRefusedError(f"the driver in {aeron_dir} refused to terminate: {reason}")
            if time.monotonic() >= deadline:
                age = reader.info()["driver_heartbeat_age_ms"]
                raise TerminationTimeoutError(
                    f"the driver in {aeron_dir} is still running {timeout:g} s after the TERMINATE_DRIVER request "
                    f"(heartbeat {age} ms ago) and recorded no refusal; it may ignore the command")
            time.sleep(0.02)


def format_info(info: DriverInfo) -> str:
    start = time.strftime("%Y-%m-%d %H:%M:%S %z", time.localtime(info.start_timestamp_ms / 1000))
    state = ("running, heartbeat %d ms ago" % info.heartbeat_age_ms) if info.active else (
        "closed" if info.heartbeat_age_ms < 0 else f"not running (heartbeat {info.heartbeat_age_ms} ms ago)")
    lines = [
        f"directory   {info.aeron_dir}",
        f"pid         {info.pid}",
        f"started     {start} ({info.start_timestamp_ms} ms since the epoch)",
        f"state       {state}",
        f"version     {info.version or 'unknown'} (CnC {info.cnc_version_text})",
    ]
    if info.options:
        lines.append(f"options     ({len(info.options)}, from {OPTIONS_FILE})")
        width = max(len(name) for name in info.options)
        lines.extend(f"  {name:<{width}} = {value}" for name, value in info.options.items())
    else:
        lines.append(f"options     unknown: the driver wrote no {OPTIONS_FILE}")
    return "\n".join(lines)


def read_token_file(path: str) -> str:
    """The secret on the first line of a file (its line end not part of it), read as the driver reads
    `AERON_DRIVER_TERMINATION_TOKEN_FILE` (docs/security.md, "Files of secrets"); ConfigurationError
    when it cannot be read, is open to others or is empty."""
    from ._secret_files import read_secret_first_line

    return read_secret_first_line("the token file", path)


def requester_token(token: str | None, token_file: str | None) -> str | None:
    """The token `aeron-async driver --terminate` sends: --token, else --token-file, else
    $AERON_DRIVER_TERMINATION_TOKEN, else the file $AERON_DRIVER_TERMINATION_TOKEN_FILE names."""
    from .errors import ConfigurationError

    if token is not None and token_file is not None:
        raise ConfigurationError("give --token or --token-file, not both (--token-file keeps it out of `ps`)")
    if token is not None:
        return token
    if token_file is not None:
        return read_token_file(token_file)
    env = os.environ.get("AERON_DRIVER_TERMINATION_TOKEN")
    if env is not None:
        return env
    env_file = os.environ.get("AERON_DRIVER_TERMINATION_TOKEN_FILE")
    return read_token_file(env_file) if env_file else None


def command(terminate: bool, info: bool, aeron_dir: str | None, token: str | None, timeout: float,
            token_file: str | None = None) -> int:
    """`aeron-async driver --terminate | --info`: the exit status (0 done, 1 refused or failed)."""
    import sys

    from .errors import AeronError

    try:
        if info:
            print(format_info(driver_info(aeron_dir)))
            return 0
        if terminate:
            request_termination(aeron_dir, requester_token(token, token_file), timeout)
            print(f"aeron-async driver: the driver in {aeron_dir or os.environ.get('AERON_DIR') or default_aeron_dir()} "
                  "has terminated")
            return 0
    except AeronError as exc:
        print(f"aeron-async driver: {exc}", file=sys.stderr)
        return 1
    return 2
