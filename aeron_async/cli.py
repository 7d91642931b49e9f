"""`aeron-async` command line: `driver` (standalone media driver), `archive` (standalone archive),
`stat` (counters, aeron_async.stat), `exporter` (Prometheus, aeron_async.exporter), `errors`, `loss` (the
loss report),
`bench` (benchmarks against peers, aeron_async.bench)."""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any


def _print_options(rows: Iterable[tuple[str, str, Any, str]], markdown: bool, width: int, default_width: int) -> None:
    """--help-options: each option's environment variable, property, default and meaning, as a
    Markdown table or in columns."""
    if markdown:
        print("| environment variable | property | default | meaning |")
        print("|---|---|---|---|")
    for env, prop, default, description in rows:
        if markdown:
            print(f"| `{env}` | `{prop}` | `{default or '(see meaning)'}` | {description} |")
        else:
            print(f"{env:{width}s} {prop:{width}s} default {default!s:{default_width}s} {description}")


def _name_values(command: str, items: list[str] | None) -> list[tuple[str, str]] | None:
    """The -o NAME=VALUE arguments as (NAME, VALUE); None (the error printed) when one has no '='."""
    pairs = []
    for item in items or []:
        if "=" not in item:
            print(f"aeron-async {command}: -o expects NAME=VALUE, got {item!r}", file=sys.stderr)
            return None
        name, value = item.split("=", 1)
        pairs.append((name, value))
    return pairs


def _launch(command: str, launch: Callable[[], Any]) -> Any:
    """What `launch()` returns, or None when it raised (the message, which says what to fix, printed)."""
    try:
        return launch()
    except Exception as exc:  # the message says what to fix
        print(f"aeron-async {command}: {exc}", file=sys.stderr)
        return None


def _overrides(command: str, kind: int, table: Callable[[], Any], args: argparse.Namespace,
               widths: tuple[int, int]) -> dict[str, str] | int:
    """The context keywords of a driver's or archive's command line (-o NAME=VALUE, --aeron-dir), or
    its exit status: 0 after --help-options printed the option table, 2 for a malformed -o or an
    unknown option (the closest valid names printed)."""
    from ._options import keywords
    from .errors import ConfigurationError

    if args.help_options:
        _print_options(table(), args.markdown, *widths)
        return 0
    options = _name_values(command, args.option)
    if options is None:
        return 2
    try:
        overrides = keywords(kind, dict(options))
    except ConfigurationError as exc:
        print(f"aeron-async {command}: -o: {exc}", file=sys.stderr)
        return 2
    if args.aeron_dir:
        overrides["aeron_dir"] = args.aeron_dir
    return overrides


def _cmd_driver(args: argparse.Namespace) -> int:
    from ._options import DRIVER
    from .context import DriverContext, native_options
    from .driver import MediaDriver

    if args.help_channel_params:
        from .channel_params import markdown_table, text_table

        print(markdown_table() if args.markdown else text_table())
        return 0
    if args.terminate or args.info:
        from .driver_control import command as control_command

        return control_command(args.terminate, args.info, args.aeron_dir, args.token, args.timeout, args.token_file)
    overrides = _overrides("driver", DRIVER, native_options, args, (45, 10))
    if isinstance(overrides, int):
        return overrides
    if args.threading_mode:
        overrides["threading_mode"] = args.threading_mode
    from .strategies import registered_names, write_registrations

    built_in = registered_names()
    for item in args.flow_control or []:
        name, sep, spec = item.partition("=")
        if not sep or not name.strip() or not spec.strip():
            print(f"aeron-async driver: --flow-control expects NAME=module:Class, got {item!r}", file=sys.stderr)
            return 2
        try:
            from .flow_control import load_factory
            from .strategies import register_flow_control

            register_flow_control(name.strip(), load_factory(spec.strip()))
        except Exception as exc:  # the message says what to fix
            print(f"aeron-async driver: --flow-control {item}: {exc}", file=sys.stderr)
            return 1
    if args.name_resolver:
        from .name_resolver_cli import register_from_cli

        code = register_from_cli(args.name_resolver, overrides)
        if code:
            return code
    from ._stop import StopOnSignal

    stop = StopOnSignal()
    driver = _launch("driver", lambda: MediaDriver.launch(DriverContext(), **overrides))
    if driver is None:
        return 1
    with driver:
        if registered_names() != built_in:   # `aeron-async strategies` in another process lists them
            write_registrations(driver.aeron_dir, built_in)
        print(f"aeron-async driver running in {driver.aeron_dir} (Ctrl-C to stop)", flush=True)
        while not stop.wait(0.1):
            if driver.termination_requested:
                print("aeron-async driver: terminated by a TERMINATE_DRIVER request", flush=True)
                break
        print("aeron-async driver: shutting down", flush=True)
    return 0


def _cmd_archive(args: argparse.Namespace) -> int:
    from ._options import ARCHIVE
    from .archive.service import Archive, ArchiveContext, archive_options

    overrides = _overrides("archive", ARCHIVE, archive_options, args, (48, 12))
    if isinstance(overrides, int):
        return overrides
    if args.archive_dir:
        overrides["archive_dir"] = args.archive_dir
    if args.threading_mode:
        overrides["threading_mode"] = args.threading_mode
    from ._stop import StopOnSignal

    stop = StopOnSignal()
    archive = _launch("archive", lambda: Archive.launch(ArchiveContext(), embedded_driver=args.embedded_driver,
                                                        **overrides))
    if archive is None:
        return 1
    with archive:
        print(f"aeron-async archive {archive.archive_id} running in {archive.archive_dir} "
              f"(media driver {archive.aeron_dir}{', embedded' if archive.driver else ''}; Ctrl-C to stop)", flush=True)
        invoker = (archive.context.threading_mode or "").upper() == "INVOKER"
        while not stop.is_set():
            if invoker:
                if archive.driver is not None and (archive.driver.context.threading_mode or "").upper() == "INVOKER":
                    archive.driver.do_work()
                if archive.do_work() == 0:
                    stop.wait(0.001)
            else:
                stop.wait(0.2)
        print("aeron-async archive: shutting down", flush=True)
    return 0


def _cmd_errors(args: argparse.Namespace) -> int:
    from .errors import AeronError
    from .monitor import CncReader

    try:
        if args.archive_dir is not None:
            from .archive.service import read_archive_mark

            errors = [(e.observation_count, e.first_observation_ms, e.last_observation_ms, e.text)
                      for e in read_archive_mark(args.archive_dir).errors]
        else:
            with CncReader(args.aeron_dir) as reader:
                errors = [(e.count, e.first_ms, e.last_ms, e.text) for e in reader.errors()]
    except AeronError as exc:
        print(f"aeron-async errors: {exc}", file=sys.stderr)
        return 1
    for count, first_ms, last_ms, text in errors:
        first = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(first_ms / 1000))
        last = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(last_ms / 1000))
        print(f"{count} observations from {first} to {last}:\n  {text}")
    print(f"{len(errors)} distinct errors")
    return 0


def _cmd_loss(args: argparse.Namespace) -> int:
    from .loss import command

    return command(args.aeron_dir, args.json)


def _cmd_strategies(args: argparse.Namespace) -> int:
    from . import strategies
    from .driver import is_driver_active
    from .driver_control import default_aeron_dir

    aeron_dir = args.aeron_dir or default_aeron_dir()
    # the ones the running driver there registered itself (`aeron-async driver --flow-control ...`)
    theirs = strategies.read_registrations(aeron_dir) if is_driver_active(aeron_dir) else []
    for kind in strategies.StrategyKind:
        print(f"{kind.name.lower().replace('_', ' ')}:")
        for s in strategies.listed(kind):
            what = f"alias of {s.target}" + (f" with '{s.options}'" if s.options else "") if s.is_alias else s.description
            print(f"  {s.name:<28} {what}")
        for theirs_kind, name, what in theirs:
            if theirs_kind == kind:
                print(f"  {name:<28} {what} (registered by the driver in {aeron_dir})")
    return 0


def reporting(command: str, run: Callable[[], int], errors: tuple[type[Exception], ...] = ()) -> int:
    """Runs a subcommand's body: a missing extra's message exits with 2, an error of `errors` with 1
    and "aeron-async COMMAND: message" (on standard error, both)."""
    from .extras import MissingExtraError

    try:
        return run()
    except MissingExtraError as exc:
        print(exc, file=sys.stderr)
        return 2
    except errors as exc:
        print(f"aeron-async {command}: {exc}", file=sys.stderr)
        return 1


def _cmd_bench(args: argparse.Namespace) -> int:
    from .bench import command

    return reporting("bench", lambda: command(args, args.bench_argv))


def _cmd_recordings(args: argparse.Namespace) -> int:
    from .archive.tool import command
    from .errors import AeronError

    return reporting("recordings", lambda: command(args), (AeronError,))


def _module_command(module: str) -> Callable[[argparse.Namespace], int]:
    """The `command(args)` of a module of this package, imported when the subcommand runs."""
    def run(args: argparse.Namespace) -> int:
        return int(importlib.import_module(f"{__package__}.{module}").command(args))

    return run


# Subcommands whose arguments and command a module of the package has (`add_arguments(parser)` and
# `command(args)`), in the order `aeron-async --help` lists them among the others: (name, help,
# module, what runs it: the module's command unless given).
_MODULE_COMMANDS: list[tuple[str, str, str, Callable[[argparse.Namespace], int] | None]] = [
    ("stat", "a driver's counters with their rates, live (or --once / --json), with AeronStat's filters", "stat", None),
    ("exporter", "serve a driver's counters, loss report and error count to Prometheus at /metrics (the 'monitor' "
     "extra)", "exporter", None),
    ("recordings", "an archive directory's recordings from its files: list, describe, verify (frames and checksums), "
     "migrate, delete-orphaned-segments, retention --dry-run", "archive.tool", _cmd_recordings),
    ("ready", "exit 0 when a media driver is alive in the aeron directory (its CnC heartbeat): a container's "
     "readiness probe", "ready", None),
    ("bench-archive", "archive benchmarks: recording and replay throughput against the disk, latency added by "
     "recording (docs/benchmarks.md)", "bench.archive", None),
    ("bench-spark", "Spark benchmarks: the aeron source and sink against Parquet, streaming rows/s and latency "
     "(docs/benchmarks.md; needs the spark extra)", "bench.spark", None),
    ("resolve", "what a driver currently resolves a name to (its name resolutions table)", "resolve", None),
]


def _add_module_commands(sub: Any, names: Iterable[str]) -> None:
    for name, text, module, run in _MODULE_COMMANDS:
        if name in names:
            p = sub.add_parser(name, help=text)
            importlib.import_module(f"{__package__}.{module}").add_arguments(p)
            p.set_defaults(func=run or _module_command(module))


def main(argv: list[str] | None = None) -> int:
    from . import __version__

    parser = argparse.ArgumentParser(prog="aeron-async", description="aeron_async tools")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("driver", help="run a standalone media driver until SIGINT/SIGTERM")
    p.add_argument("--aeron-dir", help="aeron directory (default $AERON_DIR or /dev/shm/aeron-<user>)")
    p.add_argument("--threading-mode", choices=["DEDICATED", "SHARED_NETWORK", "SHARED", "INVOKER"])
    p.add_argument("-o", "--option", action="append", metavar="NAME=VALUE",
                   help="any driver option by its property name, environment name or DriverContext keyword, "
                   "e.g. -o aeron.ipc.term.buffer.length=1m (every option: --help-options)")
    p.add_argument("--flow-control", action="append", metavar="NAME=module:Class",
                   help="register a flow-control strategy written in Python (a subclass of "
                   "aeron_async.FlowControlStrategy) as NAME, for fc=NAME on publication channels; repeatable")
    p.add_argument("--name-resolver", metavar="[NAME=]module:Class",
                   help="register a name resolver written in Python (a subclass of aeron_async.NameResolver) as "
                   "NAME (default: module.Class) and make it this driver's resolver (AERON_NAME_RESOLVER_SUPPLIER)")
    p.add_argument("--help-options", action="store_true", help="list every driver option with its default")
    p.add_argument("--help-channel-params", action="store_true",
                   help="list every channel parameter and what this driver does with it on each kind of channel")
    p.add_argument("--markdown", action="store_true",
                   help="with --help-options or --help-channel-params: print a Markdown table")
    p.add_argument("--terminate", action="store_true", help="ask the driver running in --aeron-dir to stop "
                   "(TERMINATE_DRIVER; it must allow it: AERON_DRIVER_TERMINATION_VALIDATOR=token or allow)")
    p.add_argument("--token", help="with --terminate: the token the driver expects (visible to `ps`: prefer "
                   "--token-file; default $AERON_DRIVER_TERMINATION_TOKEN, else the file "
                   "$AERON_DRIVER_TERMINATION_TOKEN_FILE)")
    p.add_argument("--token-file", metavar="PATH", help="with --terminate: a file whose first line is the token")
    p.add_argument("--timeout", type=float, default=5.0, help="with --terminate: seconds to wait for the answer")
    p.add_argument("--info", action="store_true", help="print the running driver's pid, start time, version, "
                   "directory and options")
    p.set_defaults(func=_cmd_driver)

    p = sub.add_parser("archive", help="run a standalone archive (recording and replay) until SIGINT/SIGTERM")
    p.add_argument("--archive-dir", help="archive directory (default $AERON_ARCHIVE_DIR or ./aeron-archive)")
    p.add_argument("--aeron-dir", help="the media driver's directory (default $AERON_DIR or /dev/shm/aeron-<user>)")
    p.add_argument("--embedded-driver", action="store_true",
                   help="launch a media driver in this process (in --aeron-dir) instead of using a running one")
    p.add_argument("--threading-mode", choices=["DEDICATED", "SHARED", "INVOKER"])
    p.add_argument("-o", "--option", action="append", metavar="NAME=VALUE",
                   help="any archive option by its property name, environment name or ArchiveContext keyword, "
                   "e.g. -o aeron.archive.file.sync.level=1 (every option: --help-options)")
    p.add_argument("--help-options", action="store_true", help="list every archive option with its default")
    p.add_argument("--markdown", action="store_true", help="with --help-options: print a Markdown table")
    p.set_defaults(func=_cmd_archive)

    _add_module_commands(sub, ("stat", "exporter"))

    p = sub.add_parser("errors", help="print a driver's (or, with --archive-dir, an archive's) distinct error log")
    p.add_argument("--aeron-dir")
    p.add_argument("--archive-dir", help="print this archive's error log (its archive-mark.dat) instead of a driver's")
    p.set_defaults(func=_cmd_errors)

    p = sub.add_parser("loss", help="print a driver's loss report (every image's loss, as Aeron's LossStat)")
    p.add_argument("--aeron-dir")
    p.add_argument("--json", action="store_true", help="print the entries as a JSON list")
    p.set_defaults(func=_cmd_loss)

    p = sub.add_parser("strategies", help="list the registered flow control, congestion control, name resolver and "
                       "idle strategies (the names fc=, cc=, AERON_NAME_RESOLVER_SUPPLIER and *_IDLE_STRATEGY take)")
    p.add_argument("--aeron-dir", help="also list what the driver running there registered itself (its "
                   "--flow-control and --name-resolver; default $AERON_DIR or /dev/shm/aeron-<user>)")
    p.set_defaults(func=_cmd_strategies)

    p = sub.add_parser("bench", help="benchmarks against pyzmq and asyncio UDP (throughput, round trip, memory, idle)",
                       description="Benchmarks of aeron_async against its peers in one run; see docs/benchmarks.md.")
    from .bench import add_arguments

    add_arguments(p)
    p.set_defaults(func=_cmd_bench)

    _add_module_commands(sub, ("recordings", "ready", "bench-archive", "bench-spark", "resolve"))

    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    args.bench_argv = argv[1:]
    if threading.current_thread() is threading.main_thread():
        # SIGTERM (a container being stopped) as Ctrl-C: every command ends at once, its `with`
        # blocks closing what it opened; the long-running ones (driver, archive, exporter) install
        # their own stop flag instead (aeron_async/_stop.py)
        signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print(f"aeron-async {args.command}: stopped by a signal", file=sys.stderr)
        return 130
