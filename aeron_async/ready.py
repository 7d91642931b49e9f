"""`aeron-async ready`: is a media driver alive in an aeron directory? The readiness (and liveness or
startup) probe of a container that runs a driver: it reads the driver's CnC file, as any client does,
and checks the driver's heartbeat (the to-driver ring buffer's consumer heartbeat, which the driver
conductor stores every duty cycle, Aeron's `CommonContext.isDriverActive`).

    aeron-async ready [--aeron-dir DIR] [--max-age MS] [--quiet]

Exit status 0 when the heartbeat is younger than `--max-age` (default 10,000 ms, Aeron's driver
timeout), 1 otherwise (no CnC file, a driver that closed, a stale heartbeat), with one line saying
which."""

from __future__ import annotations

import argparse
import sys

from .errors import AeronError, InvalidArgumentError

DEFAULT_MAX_AGE_MS = 10_000


def check_ready(aeron_dir: str | None, max_age_ms: int = DEFAULT_MAX_AGE_MS) -> tuple[bool, str]:
    """(ready, why): whether the driver at `aeron_dir` has heartbeated within `max_age_ms`."""
    from .monitor import CncReader

    if max_age_ms <= 0:
        raise InvalidArgumentError(f"max_age_ms must be positive, got {max_age_ms}")
    try:
        with CncReader(aeron_dir) as reader:
            info = reader.info()
    except AeronError as exc:
        return False, f"no media driver: {exc}"
    from .driver_control import default_aeron_dir

    where = aeron_dir or default_aeron_dir()   # $AERON_DIR when set, as CncReader found it
    age = info["driver_heartbeat_age_ms"]
    if age < 0:
        return False, f"the media driver (pid {info['pid']}) in {where} has closed"
    if age > max_age_ms:
        return False, (f"the media driver (pid {info['pid']}) in {where} last heartbeated {age} ms ago "
                       f"(more than --max-age {max_age_ms} ms): it is stuck or dead")
    return True, f"media driver pid {info['pid']} in {where} is alive (heartbeat {age} ms ago)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--aeron-dir", help="aeron directory (default $AERON_DIR or /dev/shm/aeron-<user>)")
    parser.add_argument("--max-age", type=int, default=DEFAULT_MAX_AGE_MS, metavar="MS",
                        help=f"the oldest heartbeat that counts as alive, in ms (default {DEFAULT_MAX_AGE_MS})")
    parser.add_argument("--quiet", action="store_true", help="print nothing when ready")


def command(args: argparse.Namespace) -> int:
    if args.max_age <= 0:
        print(f"aeron-async ready: --max-age must be a positive number of ms, got {args.max_age}", file=sys.stderr)
        return 2
    ready, why = check_ready(args.aeron_dir, args.max_age)
    if not ready:
        print(f"aeron-async ready: not ready: {why}", file=sys.stderr)
        return 1
    if not args.quiet:
        print(f"ready: {why}")
    return 0
