"""`aeron-async stat`: a driver's counters from any process, as Aeron's AeronStat.

Three outputs:

- live (the default on a terminal): a full-screen table refreshing in place (rich, the `monitor`
  extra) with the rate of change per second of every position and count counter, and the driver's
  pid, heartbeat age and version at the top; the streams' and clients' counters come first, the
  system counters after, one line each; the arrows, PgUp/PgDn, Home/End and `j`/`k` scroll, `q`
  quits;
- `--once`, and any run whose output is not a terminal: one plain line per counter,
  `<id>: <value> - <label>`, after a two-line header (no extra needed);
- `--json`: one JSON document per read (every selected counter with its type, channel, stream,
  session and, from the second read on, its rate), one per line (no extra needed).

Filters, as AeronStat's (every one given must hold): `--type` (a name such as pub-pos or system, or
a type id; repeatable), `--label REGEX`, `--channel REGEX`, `--stream ID`, `--session ID`.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from typing import Any, TextIO

from .counters import TYPE_SYSTEM, CounterFilter, CounterRates, CounterSample, CountersSnapshot
from .errors import InvalidArgumentError
from .monitor import CncReader


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--aeron-dir", help="the driver's directory (default $AERON_DIR or /dev/shm/aeron-<user>)")
    p.add_argument("--interval", type=float, default=1.0, help="seconds between reads (default 1)")
    p.add_argument("--count", type=int, default=None,
                   help="stop after this many reads (default: until Ctrl-C; with --json: 1)")
    p.add_argument("--once", action="store_true", help="print one plain line per counter once and exit (for pipes)")
    p.add_argument("--json", action="store_true", help="print every selected counter as JSON, one document per read")
    p.add_argument("--type", action="append", metavar="TYPE", dest="types",
                   help="only counters of this type: a name (pub-lmt, pub-pos, snd-pos, snd-lmt, snd-bpe, rcv-hwm, "
                   "rcv-pos, sub-pos, snd-channel, rcv-channel, client-heartbeat, system, ...) or a type id; repeatable")
    p.add_argument("--label", metavar="REGEX", help="only counters whose label matches this regular expression")
    p.add_argument("--channel", metavar="REGEX", help="only counters of a channel matching this regular expression")
    p.add_argument("--stream", type=int, metavar="ID", help="only counters of this stream id")
    p.add_argument("--session", type=int, metavar="ID", help="only counters of this session id")


def counter_filter(args: argparse.Namespace) -> CounterFilter:
    return CounterFilter(types=args.types, label=args.label, channel=args.channel, stream_id=args.stream,
                         session_id=args.session)


def driver_header(reader: CncReader) -> dict[str, Any]:
    from .driver_control import driver_version

    info = reader.info()
    return {
        "pid": info["pid"],
        "start_timestamp_ms": info["start_timestamp_ms"],
        "heartbeat_age_ms": info["driver_heartbeat_age_ms"],
        "cnc_version": info["cnc_version"],
        "version": driver_version(reader),
    }


def _header_text(header: dict[str, Any], aeron_dir: str) -> str:
    age = header["heartbeat_age_ms"]
    return (f"{time.strftime('%H:%M:%S')} - aeron_async driver pid {header['pid']}, "
            + (f"heartbeat {age} ms ago" if age >= 0 else "closed")
            + f", version {header['version'] or 'unknown'}, {aeron_dir}")


def render_plain(reader: CncReader, snapshot: CountersSnapshot, aeron_dir: str) -> str:
    """The plain text of one read: a header, then `<id>: <value> - <label>` per counter."""
    lines = [_header_text(driver_header(reader), aeron_dir), "=" * 72]
    for s in snapshot.samples:
        c = s.record
        lines.append(f"{c.id:3d}: {c.value:20,d} - {c.label}")
    return "\n".join(lines)


def snapshot_json(reader: CncReader, snapshot: CountersSnapshot, aeron_dir: str) -> dict[str, Any]:
    """One read as a JSON-ready dict: the driver's header and every selected counter."""
    counters = []
    for s in snapshot.samples:
        c = s.record
        counters.append({
            "id": c.id, "type_id": c.type_id, "type": c.type_name, "kind": c.kind, "value": c.value,
            "rate": s.rate, "label": c.label, "registration_id": c.registration_id, "owner_id": c.owner_id,
            "channel": c.channel, "stream_id": c.stream_id, "session_id": c.session_id,
        })
    return {
        "aeron_dir": aeron_dir, "time": time.time(), "interval": snapshot.interval,
        "driver": driver_header(reader), "counters": counters,
    }


def format_rate(sample: CounterSample) -> str:
    rate = sample.rate
    if rate is None:
        return ""
    if sample.record.kind == "position" or sample.record.label.startswith("Bytes"):
        value, unit = abs(rate), "B/s"
        for prefix in ("K", "M", "G"):
            if value < 1000:
                break
            value /= 1000
            unit = prefix + "B/s"
        return f"{'-' if rate < 0 else ''}{value:,.1f} {unit}"
    return f"{rate:,.1f}/s"


def live_order(samples: list[CounterSample]) -> list[CounterSample]:
    """The live view's rows: the streams' and clients' counters first (what a newcomer looks for),
    in id order, then the system counters."""
    return sorted(samples, key=lambda s: (s.record.type_id == TYPE_SYSTEM, s.record.id))


# Lines of the live view around the rows: the title, the table's header and its rule, the footer.
_CHROME_LINES = 4


def render_table(header: dict[str, Any], snapshot: CountersSnapshot, aeron_dir: str, first: int = 0,
                 height: int | None = None) -> Any:
    """The live view of one read (a rich renderable): the streams' counters first, the system
    counters after; with `height` (the terminal's lines) only the rows from `first` that fit, one
    line each, and a footer saying which rows show and which keys scroll."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    age = header["heartbeat_age_ms"]
    title = Text.assemble(
        ("aeron_async driver ", "bold"), (f"pid {header['pid']}", "cyan"), "  ",
        (f"heartbeat {age} ms ago" if age >= 0 else "CLOSED", "green" if 0 <= age < 1000 else "red"), "  ",
        f"version {header['version'] or 'unknown'}", "  ", (aeron_dir, "dim"), "  ", time.strftime("%H:%M:%S"),
        no_wrap=True, overflow="ellipsis")
    table = Table(expand=True, show_edge=False, pad_edge=False, box=None, header_style="bold")
    table.add_column("id", justify="right", no_wrap=True)
    table.add_column("type", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("rate", justify="right", no_wrap=True)
    table.add_column("label", no_wrap=True, overflow="ellipsis", ratio=1)
    rows = live_order(snapshot.samples)
    shown = rows if height is None else rows[first:first + max(1, height - _CHROME_LINES)]
    for s in shown:
        c = s.record
        table.add_row(str(c.id), c.type_name, f"{c.value:,d}", format_rate(s), c.label)
    if height is None:
        return Group(title, table)
    streams = sum(1 for s in rows if s.record.type_id != TYPE_SYSTEM)
    footer = Text(f"rows {first + 1}-{first + len(shown)} of {len(rows)}: {streams} stream, "
                  f"{len(rows) - streams} system  ↑↓ jk PgUp PgDn Home End  q quit",
                  style="reverse", no_wrap=True, overflow="ellipsis")
    return Group(title, table, footer)


class Keys:
    """The live view's keys, read from the terminal without echo while the view runs: `poll(t)`
    waits up to t seconds for input (the interval between reads) and returns the keys pressed
    ("up", "down", "pgup", "pgdn", "home", "end", "quit")."""

    _SEQUENCES = {"\x1b[A": "up", "\x1b[B": "down", "\x1bOA": "up", "\x1bOB": "down", "\x1b[5~": "pgup",
                  "\x1b[6~": "pgdn", "\x1b[H": "home", "\x1b[F": "end", "\x1b[1~": "home", "\x1b[4~": "end",
                  "\x1bOH": "home", "\x1bOF": "end", "k": "up", "j": "down", "b": "pgup", " ": "pgdn",
                  "g": "home", "G": "end", "q": "quit", "Q": "quit", "\x03": "quit"}

    def __init__(self, stream: TextIO) -> None:
        self.fd: int | None = None
        self._saved: Any = None
        try:
            fd = stream.fileno()
        except (AttributeError, OSError, ValueError):
            return
        if not os.isatty(fd):
            return
        import termios
        import tty

        self._saved = termios.tcgetattr(fd)
        tty.setcbreak(fd)
        self.fd = fd

    def close(self) -> None:
        if self.fd is not None:
            import termios

            termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)
            self.fd = None

    def poll(self, timeout: float) -> list[str]:
        import select

        if self.fd is None:
            time.sleep(timeout)
            return []
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return []
        data = os.read(self.fd, 64).decode(errors="replace")
        keys = []
        while data:
            for sequence in sorted(self._SEQUENCES, key=len, reverse=True):
                if data.startswith(sequence):
                    keys.append(self._SEQUENCES[sequence])
                    data = data[len(sequence):]
                    break
            else:
                data = data[1:]   # a key the view does not use
        return keys


def scrolled(first: int, keys: list[str], rows: int, page: int) -> int:
    """The first row shown after `keys`, kept within the rows (the last page full)."""
    for key in keys:
        first += {"up": -1, "down": 1, "pgup": -page, "pgdn": page, "home": -rows, "end": rows}.get(key, 0)
    return max(0, min(first, rows - page))


def _require_rich() -> None:
    from .extras import MissingExtraError

    if importlib.util.find_spec("rich") is None:
        raise MissingExtraError("aeron-async stat (live view) needs the 'monitor' extra: pip install "
                                "'aeron_async[monitor]' (missing: rich); --once and --json work without it")


def _reads(count: int | None, interval: float) -> Any:
    shown = 0
    while count is None or shown < count:
        if shown:
            time.sleep(interval)
        yield shown
        shown += 1


def run(args: argparse.Namespace, out: TextIO) -> int:
    if args.interval <= 0:
        raise InvalidArgumentError(f"--interval must be above 0 seconds, got {args.interval}")
    selection = counter_filter(args)
    live = not args.once and not args.json and out.isatty()
    if live:
        _require_rich()
    with CncReader(args.aeron_dir) as reader:
        from .driver_control import default_aeron_dir

        aeron_dir = args.aeron_dir or os.environ.get("AERON_DIR") or default_aeron_dir()
        rates = CounterRates(reader, selection)
        if args.json:
            for _ in _reads(args.count or 1, args.interval):
                out.write(json.dumps(snapshot_json(reader, rates.sample(), aeron_dir)) + "\n")
                out.flush()
            return 0
        if args.once or not live:
            for i in _reads(1 if args.once else args.count, args.interval):
                out.write(render_plain(reader, rates.sample(), aeron_dir) + "\n\n")
                out.flush()
            return 0
        return _live(reader, rates, aeron_dir, args, out)
    return 0


def _live(reader: CncReader, rates: CounterRates, aeron_dir: str, args: argparse.Namespace, out: TextIO) -> int:
    """The live view, full screen (the terminal's alternate screen, left as it was on exit): a read
    every --interval seconds, keys scrolling the rows between reads."""
    from rich.console import Console
    from rich.live import Live

    console = Console(file=out)
    keys = Keys(sys.stdin)
    first, shown = 0, 0
    try:
        with Live(console=console, auto_refresh=False, screen=True, redirect_stdout=False,
                  redirect_stderr=False) as view:
            snapshot = rates.sample()
            header = driver_header(reader)
            while True:
                height = console.size.height
                page = max(1, height - _CHROME_LINES)
                view.update(render_table(header, snapshot, aeron_dir, first, height), refresh=True)
                shown += 1
                if args.count is not None and shown >= args.count:
                    break
                deadline = time.monotonic() + args.interval
                while (left := deadline - time.monotonic()) > 0:
                    pressed = keys.poll(left)
                    if "quit" in pressed:
                        return 0
                    if pressed:
                        first = scrolled(first, pressed, len(snapshot.samples), page)
                        view.update(render_table(header, snapshot, aeron_dir, first, console.size.height),
                                    refresh=True)
                snapshot = rates.sample()
                header = driver_header(reader)
                first = scrolled(first, [], len(snapshot.samples), page)
    finally:
        keys.close()
    return 0


def command(args: argparse.Namespace) -> int:
    from .cli import reporting
    from .errors import AeronError

    try:
        return reporting("stat", lambda: run(args, sys.stdout), (AeronError, ValueError))
    except KeyboardInterrupt:
        return 0
