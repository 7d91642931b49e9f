"""`aeron-async` command line: `driver` (standalone media driver), `archive` (standalone archive),
`stat` (counters, aeron_async.stat), `exporter` (Prometheus, aeron_async.exporter), `errors`, `loss` (the
loss report),
`bench` (benchmarks against peers, aeron_async.bench)."""

from __future__ import annotations

import argparse
import sys
import time


def _cmd_driver(args: argparse.Namespace) -> int:
    from ._options import DRIVER, field_name
    from .context import DriverContext, native_options
    from .driver import MediaDriver

    if args.terminate or args.info:
        from .driver_control import command as control_command

        return control_command(args.terminate, args.info, args.aeron_dir, args.token, args.timeout)
    if args.help_options:
        if args.markdown:
            print("| environment variable | property | default | meaning |")
            print("|---|---|---|---|")
            for env, prop, default, description in native_options():
                print(f"| `{env}` | `{prop}` | `{default or '(see meaning)'}` | {description} |")
        else:
            for env, prop, default, description in native_options():
                print(f"{env:45s} {prop:45s} default {default!s:10s} {description}")
        return 0
    overrides = {}
    for item in args.option or []:
        if "=" not in item:
            print(f"aeron-async driver: -o expects NAME=VALUE, got {item!r}", file=sys.stderr)
            return 2
        name, value = item.split("=", 1)
        overrides[field_name(DRIVER, name)] = value
    if args.aeron_dir:
        overrides["aeron_dir"] = args.aeron_dir
    if args.threading_mode:
        overrides["threading_mode"] = args.threading_mode
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
    try:
        driver = MediaDriver.launch(DriverContext(), **overrides)
    except Exception as exc:  # the message says what to fix
        print(f"aeron-async driver: {exc}", file=sys.stderr)
        return 1
    with driver:
        print(f"aeron-async driver running in {driver.aeron_dir} (Ctrl-C to stop)", flush=True)
        while not stop.wait(0.1):
            if driver.termination_requested:
                print("aeron-async driver: terminated by a TERMINATE_DRIVER request", flush=True)
                break
        print("aeron-async driver: shutting down", flush=True)
    return 0


def _cmd_archive(args: argparse.Namespace) -> int:
    from ._options import ARCHIVE, field_name
    from .archive.service import Archive, ArchiveContext, archive_options

    if args.help_options:
        if args.markdown:
            print("| environment variable | property | default | meaning |")
            print("|---|---|---|---|")
            for env, prop, default, description in archive_options():
                print(f"| `{env}` | `{prop}` | `{default or '(see meaning)'}` | {description} |")
        else:
            for env, prop, default, description in archive_options():
                print(f"{env:48s} {prop:48s} default {default!s:12s} {description}")
        return 0
    overrides: dict[str, str] = {}
    for item in args.option or []:
        if "=" not in item:
            print(f"aeron-async archive: -o expects NAME=VALUE, got {item!r}", file=sys.stderr)
            return 2
        name, value = item.split("=", 1)
        overrides[field_name(ARCHIVE, name)] = value
    if args.archive_dir:
        overrides["archive_dir"] = args.archive_dir
    if args.aeron_dir:
        overrides["aeron_dir"] = args.aeron_dir
    if args.threading_mode:
        overrides["threading_mode"] = args.threading_mode
    from ._stop import StopOnSignal

    stop = StopOnSignal()
    try:
        archive = Archive.launch(ArchiveContext(), embedded_driver=args.embedded_driver, **overrides)
    except Exception as exc:  # the message says what to fix
        print(f"aeron-async archive: {exc}", file=sys.stderr)
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


def _cmd_stat(args: argparse.Namespace) -> int:
    from .stat import command

    return command(args)


def _cmd_exporter(args: argparse.Namespace) -> int:
    from .exporter import command

    return command(args)


def _cmd_errors(args: argparse.Namespace) -> int:
    from .errors import AeronError
    from .monitor import CncReader

    try:
        with CncReader(args.aeron_dir) as reader:
            errors = reader.errors()
    except AeronError as exc:
        print(f"aeron-async errors: {exc}", file=sys.stderr)
        return 1
    for e in errors:
        first = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(e.first_ms / 1000))
        last = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(e.last_ms / 1000))
        print(f"{e.count} observations from {first} to {last}:\n  {e.text}")
    print(f"{len(errors)} distinct errors")
    return 0


def _cmd_loss(args: argparse.Namespace) -> int:
    from .loss import command

    return command(args.aeron_dir, args.json)


def _cmd_strategies(args: argparse.Namespace) -> int:
    from . import strategies

    for kind in strategies.StrategyKind:
        print(f"{kind.name.lower().replace('_', ' ')}:")
        for s in strategies.entries(kind):
            what = f"alias of {s.target}" + (f" with '{s.options}'" if s.options else "") if s.is_alias else s.description
            print(f"  {s.name:<28} {what}")
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from .bench import command
    from .extras import MissingExtraError

    try:
        return command(args, args.bench_argv)
    except MissingExtraError as exc:
        print(exc, file=sys.stderr)
        return 2


def _cmd_recordings(args: argparse.Namespace) -> int:
    from .archive.tool import command
    from .errors import AeronError

    try:
        return command(args)
    except AeronError as exc:
        print(f"aeron-async recordings: {exc}", file=sys.stderr)
        return 1


def _cmd_ready(args: argparse.Namespace) -> int:
    from .ready import command

    return command(args)


def _cmd_bench_archive(args: argparse.Namespace) -> int:
    from .bench.archive import command

    return command(args)


def _cmd_bench_spark(args: argparse.Namespace) -> int:
    from .bench.spark import command

    return command(args)


def main(argv: list[str] | None = None) -> int:
    from . import __version__

    parser = argparse.ArgumentParser(prog="aeron-async", description="aeron_async tools")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("driver", help="run a standalone media driver until SIGINT/SIGTERM")
    p.add_argument("--aeron-dir", help="aeron directory (default $AERON_DIR or /dev/shm/aeron-<user>)")
    p.add_argument("--threading-mode", choices=["DEDICATED", "SHARED_NETWORK", "SHARED", "INVOKER"])
    p.add_argument("-o", "--option", action="append", metavar="NAME=VALUE",
                   help="any driver option, e.g. -o AERON_IPC_TERM_BUFFER_LENGTH=1m")
    p.add_argument("--flow-control", action="append", metavar="NAME=module:Class",
                   help="register a flow-control strategy written in Python (a subclass of "
                   "aeron_async.FlowControlStrategy) as NAME, for fc=NAME on publication channels; repeatable")
    p.add_argument("--name-resolver", metavar="[NAME=]module:Class",
                   help="register a name resolver written in Python (a subclass of aeron_async.NameResolver) as "
                   "NAME (default: module.Class) and make it this driver's resolver (AERON_NAME_RESOLVER_SUPPLIER)")
    p.add_argument("--help-options", action="store_true", help="list every driver option with its default")
    p.add_argument("--markdown", action="store_true", help="with --help-options: print a Markdown table")
    p.add_argument("--terminate", action="store_true", help="ask the driver running in --aeron-dir to stop "
                   "(TERMINATE_DRIVER; it must allow it: AERON_DRIVER_TERMINATION_VALIDATOR=token or allow)")
    p.add_argument("--token", help="with --terminate: the token the driver expects "
                   "(default $AERON_DRIVER_TERMINATION_TOKEN)")
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
                   help="any archive option, e.g. -o AERON_ARCHIVE_FILE_SYNC_LEVEL=1")
    p.add_argument("--help-options", action="store_true", help="list every archive option with its default")
    p.add_argument("--markdown", action="store_true", help="with --help-options: print a Markdown table")
    p.set_defaults(func=_cmd_archive)

    p = sub.add_parser("stat", help="a driver's counters with their rates, live (or --once / --json), with "
                       "AeronStat's filters")
    from .stat import add_arguments as add_stat_arguments

    add_stat_arguments(p)
    p.set_defaults(func=_cmd_stat)

    p = sub.add_parser("exporter", help="serve a driver's counters, loss report and error count to Prometheus at "
                       "/metrics (the 'monitor' extra)")
    from .exporter import add_arguments as add_exporter_arguments

    add_exporter_arguments(p)
    p.set_defaults(func=_cmd_exporter)

    p = sub.add_parser("errors", help="print a driver's distinct error log")
    p.add_argument("--aeron-dir")
    p.set_defaults(func=_cmd_errors)

    p = sub.add_parser("loss", help="print a driver's loss report (every image's loss, as Aeron's LossStat)")
    p.add_argument("--aeron-dir")
    p.add_argument("--json", action="store_true", help="print the entries as a JSON list")
    p.set_defaults(func=_cmd_loss)

    p = sub.add_parser("strategies", help="list the registered flow control, congestion control, name resolver and "
                       "idle strategies (the names fc=, cc=, AERON_NAME_RESOLVER_SUPPLIER and *_IDLE_STRATEGY take)")
    p.set_defaults(func=_cmd_strategies)

    p = sub.add_parser("bench", help="benchmarks against pyzmq and asyncio UDP (throughput, round trip, memory, idle)",
                       description="Benchmarks of aeron_async against its peers in one run; see docs/benchmarks.md.")
    from .bench import add_arguments

    add_arguments(p)
    p.set_defaults(func=_cmd_bench)

    p = sub.add_parser("recordings", help="an archive directory's recordings from its files: list, describe, verify "
                       "(frames and checksums), migrate")
    from .archive.tool import add_arguments as add_recordings_arguments

    add_recordings_arguments(p)
    p.set_defaults(func=_cmd_recordings)

    p = sub.add_parser("ready", help="exit 0 when a media driver is alive in the aeron directory (its CnC heartbeat): "
                       "a container's readiness probe")
    from .ready import add_arguments as add_ready_arguments

    add_ready_arguments(p)
    p.set_defaults(func=_cmd_ready)

    p = sub.add_parser("bench-archive", help="archive benchmarks: recording and replay throughput against the disk, "
                       "latency added by recording (docs/benchmarks.md)")
    from .bench.archive import add_arguments as add_archive_bench_arguments

    add_archive_bench_arguments(p)
    p.set_defaults(func=_cmd_bench_archive)

    p = sub.add_parser("bench-spark", help="Spark benchmarks: the aeron source and sink against Parquet, streaming "
                       "rows/s and latency (docs/benchmarks.md; needs the spark extra)")
    from .bench.spark import add_arguments as add_spark_bench_arguments

    add_spark_bench_arguments(p)
    p.set_defaults(func=_cmd_bench_spark)

    p = sub.add_parser("resolve", help="what a driver currently resolves a name to (its name resolutions table)")
    from .resolve import add_arguments as add_resolve_arguments, command as resolve_command

    add_resolve_arguments(p)
    p.set_defaults(func=resolve_command)

    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    args.bench_argv = argv[1:]
    return int(args.func(args))
