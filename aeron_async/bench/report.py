"""What the benchmark prints: live progress (rich), one line per measurement, and the final tables."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from .cases import Case
from .markdown import latency_cells, rate, throughput_cells, us as _us


def _rate(value: float) -> str:
    return rate(value, k_decimals=1)


def _bytes(value: int | None) -> str:
    if value is None:
        return "n/a"
    sign = "-" if value < 0 else "+"
    value = abs(value)
    if value >= 1 << 20:
        return f"{sign}{value / (1 << 20):.1f} MiB"
    if value >= 1 << 10:
        return f"{sign}{value / (1 << 10):.1f} KiB"
    return f"{sign}{value} B"


class Live:
    def __init__(self, config: Any) -> None:
        self.config = config
        self.console = Console(highlight=False)
        if not self.console.is_terminal:  # a log file or a pipe: wide lines rather than wrapped tables
            self.console = Console(highlight=False, width=160)
        self.progress: Progress | None = None
        self.task: Any = None

    def _print(self, text: str) -> None:
        (self.progress.console if self.progress else self.console).print(text)

    def header(self, machine: dict[str, Any]) -> None:
        cfg = self.config
        self._print(f"[bold]aeron-async bench[/]  {machine['cpu_model']}, {machine['nproc']} CPUs, "
                    f"Linux {machine['kernel']}, {machine['python']}")
        self._print(f"benchmarks {', '.join(cfg.benches)}; sizes {', '.join(map(str, cfg.sizes))} B; "
                    f"{cfg.rounds} round(s) of {cfg.duration:g} s after {cfg.warmup:g} s warm-up"
                    + ("; quick mode" if cfg.quick else ""))

    def note(self, text: str) -> None:
        self._print(text)

    def start(self, total: int) -> None:
        self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(), console=self.console)
        self.progress.start()
        self.task = self.progress.add_task("starting", total=total)

    def running(self, text: str) -> None:
        if self.progress is not None:
            self.progress.update(self.task, description=text)

    def _advance(self) -> None:
        if self.progress is not None:
            self.progress.advance(self.task)

    def result(self, kind: str, case: Case, size: int, round_index: int, result: dict[str, Any]) -> None:
        head = f"r{round_index + 1} {case.name:<20} {case.transport:<16} {size:>5} B"
        if "error" in result:
            self._print(f"{head}  [red]error:[/] {result['error']}")
        elif kind == "throughput":
            sender = result.get("sender") or {}
            extra = f"  (sender {_rate(sender['msgs_per_s'])}/s)" if sender.get("msgs_per_s") else ""
            self._print(f"{head}  {_rate(result['msgs_per_s']):>9} msgs/s  {result['mb_per_s']:8.1f} MB/s  "
                        f"receiver cpu {result['receiver_cpu_percent']:3.0f}%{extra}")
        else:
            self._print(f"{head}  p50 {_us(result['p50_us'])} us  p99 {_us(result['p99_us'])} us  "
                        f"max {_us(result['max_us'])} us  ({result['count']:,} round trips)")
        self._advance()

    def _measured(self, what: str, result: dict[str, Any], describe: Callable[[], str]) -> None:
        """One line for a measurement (`describe()`, or `what` and its error) and a step of the bar."""
        self._print(f"{what}: [red]error:[/] {result['error']}" if "error" in result else describe())
        self._advance()

    def memory(self, m: dict[str, Any]) -> None:
        def describe() -> str:
            g = m["growth"]
            return (f"memory {m['path']}: {m['messages']:,} messages, traced {_bytes(g['traced'])}, "
                    f"anonymous RSS {_bytes(g['rss_anon'])}, RSS {_bytes(g['rss'])}, heap "
                    f"{_bytes(g['heap_in_use'])} -> {'flat' if m['flat'] else '[red]GROWING[/]'}")

        self._measured(f"memory {m['path']}", m, describe)

    def native(self, n: dict[str, Any]) -> None:
        def describe() -> str:
            calls = n.get("malloc_calls_total")
            calls_text = f"{calls} malloc-family calls" if calls is not None else "malloc calls not counted (no gdb)"
            return (f"native message path: {n['messages']:,} messages at {_rate(n['msgs_per_s'])} msgs/s, "
                    f"{calls_text}, heap {_bytes(n['heap_growth'])} -> "
                    f"{'[red]allocates per message[/]' if n['allocates_per_message'] else 'no allocation per message'}")

        self._measured("native message path", n, describe)

    def idle(self, i: dict[str, Any]) -> None:
        self._measured("idle", i, lambda: f"idle async subscriber + embedded driver: {i['cpu_percent']:.2f}% of a core, "
                                          f"{i['context_switches_per_s']:.0f} context switches/s over {i['seconds']:.1f} s")

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None

    def final(self, results: dict[str, Any]) -> None:
        print_tables(results, self.console)


def print_tables(results: dict[str, Any], console: Console) -> None:
    rows = results.get("throughput") or []
    if rows:
        t = Table(title="Throughput (receiver's rate; median of rounds, min-max)")
        for col in ("case", "transport", "size", "msgs/s", "min-max", "MB/s", "vs peer"):
            t.add_column(col, justify="right" if col in ("size", "msgs/s", "MB/s", "vs peer") else "left")
        for r in rows:
            cells = throughput_cells(r, _rate)
            t.add_row(r["case"], r["transport"], str(r["size"]),
                      *(["[red]error[/]", "", "", ""] if cells is None else
                        [cells[col] for col in ("msgs/s", "min-max", "MB/s", "vs peer")]))
        console.print(t)
    rows = results.get("latency") or []
    if rows:
        t = Table(title="Round trip, microseconds (median of rounds; p50 and p99 with min-max)")
        for col in ("case", "transport", "size", "p50", "p90", "p99", "p99.9", "max", "vs peer (p50)"):
            t.add_column(col, justify="left" if col in ("case", "transport") else "right")
        for r in rows:
            t.add_row(r["case"], r["transport"], str(r["size"]), *(latency_cells(r) or ["[red]error[/]"] + [""] * 5))
        console.print(t)
    for m in results.get("memory") or []:
        if "error" not in m:
            g = m["growth"]
            console.print(f"memory, {m['path']}: {m['messages']:,} messages (after {m['warmup_messages']:,} warm-up), "
                          f"traced Python memory {_bytes(g['traced'])}, anonymous RSS {_bytes(g['rss_anon'])}, "
                          f"glibc heap {_bytes(g['heap_in_use'])}: {'flat' if m['flat'] else 'GROWING'}")
    n = results.get("native_alloc")
    if n and "error" not in n:
        console.print(f"native message path: {n.get('malloc_calls_total', 'uncounted')} malloc-family calls and "
                      f"heap {_bytes(n['heap_growth'])} over {n['messages']:,} messages "
                      f"({n['method']})")
    for s in results.get("skipped") or []:
        console.print(f"skipped {s['channel']}: {s['reason']}")
    targets = results.get("targets") or []
    if targets:
        t = Table(title="Targets (32-byte messages over aeron:ipc unless said)")
        for col in ("target", "goal", "measured", "met"):
            t.add_column(col)
        for row in targets:
            met = {True: "[green]met[/]", False: "[red]not met[/]", None: "not measured"}[row["met"]]
            t.add_row(row["target"], row["goal"], row["measured"], met)
        console.print(t)
