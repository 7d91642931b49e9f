"""The benchmark run: one standalone media driver, worker processes per measurement, rounds that
alternate between aeron_async and its peers, live progress, a final table and a JSON file.

    aeron-async bench [--bench throughput,latency,memory,idle] [--sizes 32,256,4096]
                      [--duration S] [--warmup S] [--rounds N] [--only PATTERN,...]
                      [--channel aeron:ipc --channel aeron:udp?endpoint=127.0.0.1:40456 (the default)]
                      [--messages N] [--json FILE] [--plot DIR] [--quick]
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import platform
import queue
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any, TypedDict

import attrs

from ..errors import BenchError
from .cases import TARGETS, Case, interleave, latency_cases, throughput_cases

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCHES = ("throughput", "latency", "memory", "idle", "flow-control", "multicast", "request-response")
# multicast needs root (network namespaces) and minutes: run only when asked for (--bench multicast)
DEFAULT_BENCHES = ("throughput", "latency", "memory", "idle", "flow-control", "request-response")
DEFAULT_CHANNELS = ("aeron:ipc", "aeron:udp?endpoint=127.0.0.1:40456")
FRAME_HEADER = 32
LATENCY_FIELDS = ("p50_us", "p90_us", "p99_us", "p99_9_us", "max_us")

class _Preset(TypedDict):
    sizes: list[int]
    rounds: int
    duration: float
    warmup: float
    messages: int
    idle_seconds: float


QUICK: _Preset = {"sizes": [32], "rounds": 1, "duration": 0.4, "warmup": 0.2, "messages": 200_000, "idle_seconds": 1.0}
DEFAULTS: _Preset = {"sizes": [32, 256, 4096], "rounds": 5, "duration": 2.0, "warmup": 1.0, "messages": 10_000_000,
            "idle_seconds": 5.0}


# ---- options ----


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bench", default=",".join(DEFAULT_BENCHES),
                   help=f"comma-separated benchmarks to run, of {', '.join(BENCHES)} (default all but multicast, "
                        "which needs root for its network namespaces)")
    p.add_argument("--sizes", help="comma-separated message sizes in bytes (default 32,256,4096)")
    p.add_argument("--duration", type=float, help="measured seconds per round (default 2)")
    p.add_argument("--warmup", type=float, help="seconds of traffic before each measured window (default 1)")
    p.add_argument("--rounds", type=int, help="rounds; each runs every case once, ours and peers alternating (default 5)")
    p.add_argument("--only", help="comma-separated case-name patterns (fnmatch), e.g. 'aeron-sync-*,zmq-sync-ipc'")
    p.add_argument("--no-peers", action="store_true", help="measure aeron_async only")
    p.add_argument("--channel", action="append", metavar="CHANNEL",
                   help="channel for our rows (repeatable; default aeron:ipc and aeron:udp?endpoint=127.0.0.1:40456; "
                        "UDP busy-poll mode also binds the next ports, +2 and +3)")
    p.add_argument("--messages", type=int, help="messages per memory measurement (default 10,000,000)")
    p.add_argument("--memory-paths", default="sync,asyncio",
                   help="batch receive paths for the memory benchmark: sync, asyncio, uvloop, trio (default sync,asyncio)")
    p.add_argument("--threading-mode", default="SHARED", choices=["SHARED", "SHARED_NETWORK", "DEDICATED"],
                   help="the standalone driver's threading mode (default SHARED, for a 2-core machine)")
    p.add_argument("--term-length", default=None,
                   help="the driver's IPC and network term buffer length (default: the driver's defaults, "
                        "64m for IPC and 16m for UDP)")
    p.add_argument("--json", metavar="FILE", help="write every figure, round by round, to FILE")
    p.add_argument("--plot", metavar="DIR",
                   help="write charts to DIR: the round-trip percentile distribution of every case, ours and the "
                        "peers' (latency-<ipc|udp>-<size>B.png), and throughput bars per size (throughput-<size>B.png); "
                        "with --from-json, of that saved run")
    p.add_argument("--quick", action="store_true",
                   help="CI smoke: 32-byte messages, 1 short round, 200k messages for memory (under a minute)")
    p.add_argument("--no-gdb", action="store_true", help="skip counting malloc calls with gdb in the native check")
    p.add_argument("--from-json", metavar="FILE", help="run nothing: print the tables of a run saved with --json")
    p.add_argument("--markdown", action="store_true", help="with --from-json: print Markdown (as in docs/benchmarks.md)")


@attrs.define
class Config:
    benches: list[str]
    sizes: list[int]
    rounds: int
    duration: float
    warmup: float
    only: list[str]
    peers: bool
    channels: list[str]
    messages: int
    memory_paths: list[str]
    idle_seconds: float
    threading_mode: str
    term_length: str | None
    json_path: str | None
    quick: bool
    gdb: bool
    command: str = ""
    plot_dir: str | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace, command: str) -> Config:
        base = QUICK if args.quick else DEFAULTS
        benches = [b.strip() for b in args.bench.split(",") if b.strip()]
        unknown = [b for b in benches if b not in BENCHES]
        if unknown:
            raise SystemExit(f"aeron-async bench: unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(BENCHES)}")
        sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else list(base["sizes"])
        if any(s < 1 for s in sizes):
            raise SystemExit("aeron-async bench: message sizes must be positive")
        paths = [p.strip() for p in args.memory_paths.split(",") if p.strip()]
        bad = [p for p in paths if p not in ("sync", "asyncio", "uvloop", "trio")]
        if bad:
            raise SystemExit(f"aeron-async bench: unknown memory path(s) {', '.join(bad)}")
        return cls(
            benches=benches,
            sizes=sizes,
            rounds=args.rounds if args.rounds is not None else base["rounds"],
            duration=args.duration if args.duration is not None else base["duration"],
            warmup=args.warmup if args.warmup is not None else base["warmup"],
            only=[p.strip() for p in args.only.split(",")] if args.only else [],
            peers=not args.no_peers,
            channels=args.channel or list(DEFAULT_CHANNELS),
            messages=args.messages if args.messages is not None else base["messages"],
            memory_paths=paths,
            idle_seconds=base["idle_seconds"],
            threading_mode=args.threading_mode,
            term_length=args.term_length,
            json_path=args.json,
            quick=args.quick,
            gdb=not args.no_gdb,
            command=command,
            plot_dir=args.plot,
        )

    def selected(self, case: Case) -> bool:
        if not case.ours and not self.peers:
            return False
        return not self.only or any(fnmatch.fnmatchcase(case.name, p) for p in self.only)


# ---- processes ----


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = PACKAGE_ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("AERON_DIR", None)
    return env


def close_and_wait(popen: subprocess.Popen[str], timeout: float) -> bool:
    """Closes a process's standard input (how a worker is asked to stop) and waits up to `timeout`
    seconds for it to exit, then kills it; whether it exited by itself."""
    try:
        if popen.stdin is not None and not popen.stdin.closed:
            popen.stdin.close()
    except OSError:
        pass
    try:
        popen.wait(timeout)
        return True
    except subprocess.TimeoutExpired:
        popen.kill()
        popen.wait()
        return False


class Worker:
    """A worker process (aeron_async.bench.worker) and its line protocol."""

    def __init__(self, spec: dict[str, Any], label: str, prefix: list[str] | None = None) -> None:
        self.label = label
        self.stderr = tempfile.TemporaryFile(mode="w+")
        self.popen = subprocess.Popen(
            [*(prefix or []), sys.executable, "-m", "aeron_async.bench.worker", json.dumps(spec)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, text=True, env=_env(),
            cwd=PACKAGE_ROOT)
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def _stderr_tail(self) -> str:
        self.stderr.seek(0)
        text = self.stderr.read().strip()
        lines = text.splitlines()
        return "\n".join(lines[-12:])

    def expect(self, tag: str, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise BenchError(f"{self.label}: no {tag} within {timeout:.0f} s\n{self._stderr_tail()}")
            try:
                line = self._lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                rc = self.popen.wait()
                raise BenchError(f"{self.label}: exited with status {rc} before {tag}\n{self._stderr_tail()}")
            if line.startswith(tag + " "):
                answer: dict[str, Any] = json.loads(line[len(tag) + 1:])
                return answer

    def stop(self) -> None:
        """Ask it to stop (close its standard input)."""
        try:
            if self.popen.stdin is not None and not self.popen.stdin.closed:
                self.popen.stdin.close()
        except OSError:
            pass

    def finish(self, timeout: float = 10.0) -> None:
        close_and_wait(self.popen, timeout)
        self.stderr.close()


class Driver:
    """The standalone media driver all our processes share for the run (or, with a `name`, one of
    several: its directory is named after it; `prefix` runs it through another command, e.g. `ip
    netns exec NS`; `options` are more `-o NAME=VALUE` arguments)."""

    def __init__(self, threading_mode: str, term_length: str | None, name: str = "", prefix: list[str] | None = None,
                 options: tuple[str, ...] = ()) -> None:
        base = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
        self.aeron_dir = os.path.join(base, f"aeron-bench-{os.getpid()}" + (f"-{name}" if name else ""))
        self.threading_mode = threading_mode
        self.term_length = term_length
        self.args = [sys.executable, "-m", "aeron_async", "driver", "--aeron-dir", self.aeron_dir,
                     "--threading-mode", threading_mode,
                     *(["-o", f"AERON_IPC_TERM_BUFFER_LENGTH={term_length}",
                        "-o", f"AERON_TERM_BUFFER_LENGTH={term_length}"] if term_length else []),
                     "-o", "AERON_DIR_DELETE_ON_START=true",
                     "-o", "AERON_DIR_DELETE_ON_SHUTDOWN=true",
                     *(arg for option in options for arg in ("-o", option))]
        self.popen = subprocess.Popen([*(prefix or []), *self.args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True, env=_env(), cwd=PACKAGE_ROOT)
        assert self.popen.stdout is not None
        line = self.popen.stdout.readline()
        if "running" not in line:
            rest = self.popen.stdout.read() if self.popen.poll() is not None else ""
            where = f" in {name}" if name else ""
            raise BenchError(f"the media driver{where} did not start: {line}{rest}")

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "standalone process (aeron-async driver), shared by every aeron_async process of the run",
            "threading_mode": self.threading_mode,
            "idle_strategy": "backoff (default)",
            "ipc_term_buffer_length": self.term_length or "64m (default)",
            "term_buffer_length": self.term_length or "16m (default)",
            "aeron_dir": self.aeron_dir,
            "command": " ".join(["aeron-async", *self.args[3:]]),
        }

    def close(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGINT)
            try:
                self.popen.wait(15)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
        shutil.rmtree(self.aeron_dir, ignore_errors=True)


def machine() -> dict[str, Any]:
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    from importlib.metadata import PackageNotFoundError, version

    versions = {}
    for dist in ("aeron_async", "pyzmq", "anyio", "trio", "uvloop", "hdrhistogram", "rich", "cffi"):
        try:
            versions[dist] = version(dist)
        except PackageNotFoundError:
            versions[dist] = "missing"
    try:
        import zmq

        versions["libzmq"] = zmq.zmq_version()
    except Exception:
        pass
    return {
        "nproc": os.cpu_count(),
        "cpus_available": len(os.sched_getaffinity(0)),
        "cpu_model": cpu,
        "kernel": platform.release(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "load_average_at_start": os.getloadavg(),
        "versions": versions,
    }


# ---- the run ----


@attrs.define
class Context:
    config: Config
    driver: Driver | None = None
    stream: int = 2000
    skipped: list[dict[str, str]] = attrs.field(factory=list)

    def next_stream(self) -> int:
        self.stream += 2
        return self.stream


def probe_channel(aeron_dir: str, channel: str) -> str | None:
    """None if the driver takes a subscription and a publication on `channel`, else its reason."""
    from aeron_async import Aeron
    from aeron_async.errors import AeronError

    try:
        with Aeron.connect(aeron_dir) as client:
            sub = client.add_subscription(channel, 1)
            pub = client.add_publication(channel, 1)
            pub.close()
            sub.close()
    except AeronError as exc:
        return str(exc)
    return None


def run_pair(ctx: Context, case: Case, size: int) -> dict[str, Any]:
    """One measurement of a case: server process, then client process; the measuring side's
    result (receiver or ping), with the other side's under `peer_process`."""
    cfg = ctx.config
    spec: dict[str, Any] = {"size": size, "warmup": cfg.warmup, "duration": cfg.duration,
                            "stream": ctx.next_stream(), **case.params}
    if case.ours:
        assert ctx.driver is not None
        spec.update(aeron_dir=ctx.driver.aeron_dir, channel=case.transport)
    timeout = cfg.warmup + cfg.duration + 60.0
    server = Worker({**spec, "role": case.server}, f"{case.name} {case.server}")
    client: Worker | None = None
    try:
        ready = server.expect("READY", 30)
        client = Worker({**spec, **ready, "role": case.client}, f"{case.name} {case.client}")
        client.expect("READY", 40)
        if case.kind == "throughput":
            result = server.expect("RESULT", timeout)
            client.stop()
            try:
                result["sender"] = client.expect("RESULT", 15)
            except BenchError:
                result["sender"] = None
        else:
            result = client.expect("RESULT", timeout)
            server.stop()
        return result
    finally:
        if client is not None:
            client.finish()
        server.finish()


def _median_spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def summarize_throughput(case: Case, size: int, rounds: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in rounds if "error" not in r]
    row: dict[str, Any] = {"case": case.name, "impl": case.impl, "api": case.api, "transport": case.transport,
                           "size": size, "peer": case.peer, "rounds": rounds}
    if ok:
        row["msgs_per_s"] = _median_spread([r["msgs_per_s"] for r in ok])
        row["mb_per_s"] = _median_spread([r["mb_per_s"] for r in ok])
        row["receiver_cpu_percent"] = statistics.median(r["receiver_cpu_percent"] for r in ok)
        sender = [r["sender"]["msgs_per_s"] for r in ok if r.get("sender")]
        row["sender_msgs_per_s"] = statistics.median(sender) if sender else None
    row["errors"] = len(rounds) - len(ok)
    return row


def summarize_latency(case: Case, size: int, rounds: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in rounds if "error" not in r]
    row: dict[str, Any] = {"case": case.name, "impl": case.impl, "api": case.api, "transport": case.transport,
                           "size": size, "peer": case.peer, "rounds": rounds}
    if ok:
        for name in LATENCY_FIELDS:
            row[name] = _median_spread([r[name] for r in ok])
        row["round_trips"] = sum(r["count"] for r in ok)
    row["errors"] = len(rounds) - len(ok)
    return row


def add_ratios(rows: list[dict[str, Any]], kind: str) -> None:
    """Our rows get `ratio_vs_peer`: throughput ours/peer, latency peer p50/ours p50 (times faster)."""
    index = {(r["case"], r["size"]): r for r in rows if r["impl"] != "aeron_async"}
    for row in rows:
        if row["impl"] != "aeron_async" or not row.get("peer"):
            continue
        peer = index.get((row["peer"], row["size"]))
        if peer is None:
            continue
        if kind == "throughput" and "msgs_per_s" in row and "msgs_per_s" in peer:
            row["ratio_vs_peer"] = row["msgs_per_s"]["median"] / peer["msgs_per_s"]["median"]
            row["ratios"] = {p["case"]: row["msgs_per_s"]["median"] / p["msgs_per_s"]["median"]
                             for p in rows if p["impl"] != "aeron_async" and p["size"] == row["size"]
                             and "msgs_per_s" in p}
        elif kind == "latency" and "p50_us" in row and "p50_us" in peer:
            row["ratio_vs_peer"] = peer["p50_us"]["median"] / row["p50_us"]["median"]
            row["ratio_vs_peer_p99"] = peer["p99_us"]["median"] / row["p99_us"]["median"]


def run_flow_control(cfg: Config, ui: Any) -> dict[str, Any]:
    """Python min against the native min, 3 multicast receivers, 32 B (bench/flow_control.py)."""
    from . import flow_control

    ui.running("flow control: fc=pymin (MinFlowControl in Python) vs fc=min, 3 multicast receivers, 32 B")
    try:
        figures = flow_control.run(rounds=cfg.rounds, receivers=3, size=32, warmup=cfg.warmup,
                                   duration=cfg.duration, threading_mode=cfg.threading_mode)
    except (RuntimeError, SystemExit) as exc:
        ui.note(f"[yellow]flow control not measured:[/] {exc}")
        return {"error": str(exc)}
    median = figures["median"]
    ui.note(f"flow control, 3 multicast receivers, 32 B: fc=min {median['min'] / 1e6:.2f} M msgs/s, "
            f"fc=pymin {median['pymin'] / 1e6:.2f} M msgs/s ({figures['ratio']:.2f}x)")
    return figures


def run_request_response(ctx: Context, ui: Any) -> dict[str, Any]:
    """AsyncRpcServer/AsyncRpcClient against pyzmq DEALER/ROUTER and REQ/REP (bench/rpc.py), on the
    run's driver."""
    from . import rpc

    cfg = ctx.config
    ui.running("request/response: round trips and requests/s, aeron_async vs pyzmq DEALER/ROUTER and REQ/REP")
    selected = [c for c in rpc.cases() if cfg.peers or c["impl"] == "aeron_async"]
    only = cfg.only or None
    if only is not None and not any(fnmatch.fnmatchcase(c["name"], p) for c in selected for p in only):
        return {"rows": [], "skipped": "no request/response case matches --only"}
    names = [c["name"] for c in selected]
    patterns = only or sorted(set(names))
    figures = rpc.run(rounds=cfg.rounds, warmup=cfg.warmup, duration=cfg.duration, only=patterns,
                      aeron_dir=ctx.driver.aeron_dir if ctx.driver else None, threading_mode=cfg.threading_mode,
                      note=ui.note)
    ui.note("request/response (32 B; requests/s: 10 clients x 10 in flight):\n" + rpc.markdown(figures))
    return figures


def evaluate_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    def row_for(kind: str, case: str, size: int, transport: str) -> dict[str, Any] | None:
        rows: list[dict[str, Any]] = results.get(kind, [])
        for r in rows:
            if r["case"] == case and r["size"] == size and r["transport"].startswith(transport):
                return r
        return None

    def peer_for(kind: str, case: str, size: int) -> dict[str, Any] | None:
        rows: list[dict[str, Any]] = results.get(kind, [])
        for r in rows:
            if r["case"] == case and r["size"] == size and r["impl"] != "aeron_async":
                return r
        return None

    out = []
    for t in TARGETS:
        value: float | None = None
        measured = "not measured"
        if t.metric in ("throughput", "latency"):
            row = row_for(t.metric, t.case, t.size, t.transport)
            if row and t.field in row:
                value = row[t.field]["median"]
                figure = f"{value / 1e6:.2f} M msgs/s" if t.metric == "throughput" else f"{value:.1f} us"
                measured = f"{figure} ({t.case}, {t.size} B)"
        elif t.metric == "ratio":
            row = row_for("throughput", t.case, t.size, t.transport)
            peer = peer_for("throughput", t.peer, t.size)
            if row and peer and t.field in row and t.field in peer:
                value = row[t.field]["median"] / peer[t.field]["median"]
                measured = (f"{value:.1f}x ({row[t.field]['median'] / 1e6:.2f} M vs "
                            f"{peer[t.field]['median'] / 1e6:.3f} M msgs/s)")
        elif t.metric == "flow-control":
            fc = results.get("flow_control")
            if fc and "error" not in fc:
                value = fc["ratio"]
                measured = (f"{value:.2f}x ({fc['median']['pymin'] / 1e6:.2f} M vs "
                            f"{fc['median']['min'] / 1e6:.2f} M msgs/s)")
        elif t.metric == "rpc":
            rows = results.get("request_response", {}).get("rows", [])
            match = [r for r in rows if r["case"] == t.case and t.field in r]
            if match:
                value = match[0][t.field]
                measured = (f"{value:.1f} us ({t.case})" if t.field.endswith("_us") else
                            f"{value:.1f}x ({match[0]['requests_per_s'] / 1e3:,.0f} k requests/s, {t.case})")
        elif t.metric == "idle":
            idle = results.get("idle")
            if idle and "error" not in idle:
                value = idle[t.field]
                measured = f"{value:.2f}% of a core"
        met = None if value is None else (value >= t.threshold if t.higher_is_better else value <= t.threshold)
        out.append({"target": t.label, "goal": t.goal, "measured": measured, "value": value, "met": met})
    return out


# ---- memory, native allocations, idle ----


def _frame_length(size: int) -> int:
    return (size + FRAME_HEADER + 31) // 32 * 32


def _parse_size(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+)\s*([kmg]?)\s*", text.lower())
    if not m:
        raise SystemExit(f"aeron-async bench: bad --term-length {text!r}")
    return int(m.group(1)) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(2)]


def run_memory(ctx: Context, path: str) -> dict[str, Any]:
    cfg = ctx.config
    assert ctx.driver is not None
    # the memory run's own publication has a short term (8m unless --term-length says), so the
    # warm-up can cycle through the whole log quickly
    term_text = cfg.term_length or "8m"
    term = _parse_size(term_text)
    # warm up through more than one full cycle of the log (3 terms), so its pages are mapped in
    # (quick mode: less, as RSS of the shared log is reported apart from the anonymous RSS judged)
    warmup_messages = 100_000 if cfg.quick else max(100_000, int(3.5 * term / _frame_length(32)))
    spec = {"size": 32, "aeron_dir": ctx.driver.aeron_dir, "channel": f"aeron:ipc?term-length={term_text}",
            "stream": ctx.next_stream(),
            "messages": cfg.messages, "warmup_messages": warmup_messages, "samples": 10, "path": path,
            "form": "batch"}
    server = Worker({**spec, "role": "aeron-memory-receiver"}, f"memory {path} receiver")
    client: Worker | None = None
    try:
        server.expect("READY", 30)
        client = Worker({**spec, "role": "aeron-sync-sender"}, "memory sender")
        client.expect("READY", 40)
        # tracemalloc slows the receive path many times over: allow 20k messages/s at least
        result = server.expect("RESULT", 120 + (cfg.messages + warmup_messages) / 20_000)
        result["warmup_messages"] = warmup_messages
        g = result["growth"]
        result["flat"] = abs(g["traced"]) <= 64 * 1024 and abs(g["rss_anon"]) <= 1024 * 1024
        result["flat_rule"] = "traced Python memory within 64 KiB and anonymous RSS within 1 MiB of their values after warm-up"
        return result
    finally:
        if client is not None:
            client.finish()
        server.finish()


GDB_FUNCTIONS = ("__libc_malloc", "__libc_calloc", "__libc_realloc", "__libc_free", "posix_memalign")


def _gdb_counts(output: str) -> list[dict[str, int]]:
    """Hit counts per breakpoint number from each `info breakpoints` table in gdb's output."""
    tables: list[dict[str, int]] = []
    current: dict[str, int] | None = None
    number = ""
    for line in output.splitlines():
        if line.startswith("Num "):
            current = {}
            tables.append(current)
            continue
        if current is None:
            continue
        m = re.match(r"^(\d+)\s+breakpoint\s", line)
        if m:
            number = m.group(1)
            current[number] = 0
            continue
        m = re.search(r"breakpoint already hit (\d+) time", line)
        if m and number:
            current[number] = int(m.group(1))
    return tables


def run_native_alloc(ctx: Context) -> dict[str, Any]:
    cfg = ctx.config
    assert ctx.driver is not None
    gdb = shutil.which("gdb") if cfg.gdb else None
    messages = min(cfg.messages, 2_000_000)
    spec = {"role": "native-alloc", "size": 32, "aeron_dir": ctx.driver.aeron_dir, "channel": "aeron:ipc",
            "stream": ctx.next_stream(), "messages": messages, "warmup_messages": 200_000, "gdb": bool(gdb)}
    worker = Worker(spec, "native allocation check")
    gdb_proc = None
    try:
        if gdb:
            pid = worker.expect("ATTACH", 120)["pid"]
            args = [gdb, "-p", str(pid), "-batch", "-nx", "-ex", "set pagination off", "-ex", "set confirm off"]
            for i, fn in enumerate(GDB_FUNCTIONS, 1):
                args += ["-ex", f"break {fn}", "-ex", f"ignore {i} 2000000000"]
            args += ["-ex", "break getppid", "-ex", "continue", "-ex", "info breakpoints", "-ex", "continue",
                     "-ex", "info breakpoints", "-ex", "detach", "-ex", "quit"]
            gdb_proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        result = worker.expect("RESULT", 300)
        result["method"] = "mallinfo2 (glibc heap in use before/after)"
        if gdb_proc is not None:
            out, _ = gdb_proc.communicate(timeout=60)
            tables = _gdb_counts(out)
            if len(tables) >= 2:
                calls = {fn: tables[1].get(str(i), 0) - tables[0].get(str(i), 0)
                         for i, fn in enumerate(GDB_FUNCTIONS, 1)}
                result["malloc_calls"] = calls
                result["malloc_calls_total"] = sum(calls.values())
                result["malloc_calls_per_message"] = sum(calls.values()) / max(1, result["messages"])
                result["method"] += ("; gdb breakpoints on " + ", ".join(GDB_FUNCTIONS) +
                                     " count every call in the window, from any thread of the process")
            else:
                result["gdb_error"] = out[-2000:]
        total = result.get("malloc_calls_total")
        heap = result.get("heap_growth")
        result["allocates_per_message"] = bool((total is not None and total >= result["messages"] / 1000)
                                               or (heap is not None and heap > 64 * 1024))
        return result
    finally:
        if gdb_proc is not None and gdb_proc.poll() is None:
            gdb_proc.kill()
            gdb_proc.wait()
        worker.finish()


def run_idle(ctx: Context) -> dict[str, Any]:
    cfg = ctx.config
    base = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
    aeron_dir = os.path.join(base, f"aeron-bench-idle-{os.getpid()}")
    spec = {"role": "idle", "backend": "asyncio", "aeron_dir": aeron_dir, "settle": 2.0 if not cfg.quick else 1.5,
            "duration": cfg.idle_seconds}
    worker = Worker(spec, "idle")
    try:
        result = worker.expect("RESULT", 60 + cfg.idle_seconds)
        result["driver"] = "embedded in the same process, threading mode SHARED, idle strategy backoff"
        return result
    finally:
        worker.finish()
        shutil.rmtree(aeron_dir, ignore_errors=True)


# ---- driving it all ----


def _or_error(measure: Callable[[], dict[str, Any]], **on_error: Any) -> dict[str, Any]:
    """What `measure()` measured, or, when it failed (BenchError), `on_error` and the error."""
    try:
        return measure()
    except BenchError as exc:
        return {**on_error, "error": str(exc)}


def run(cfg: Config) -> dict[str, Any]:
    from . import report

    ui = report.Live(cfg)
    results: dict[str, Any] = {"schema": 1, "command": cfg.command, "machine": machine(),
                               "config": {k: v for k, v in attrs.asdict(cfg, recurse=False).items()
                                          if k not in ("command",)}}
    ctx = Context(cfg)
    ui.header(results["machine"])
    needs_driver = any(b in cfg.benches for b in ("throughput", "latency", "memory"))
    try:
        if needs_driver:
            ctx.driver = Driver(cfg.threading_mode, cfg.term_length)
            results["driver"] = ctx.driver.describe()
            ui.note(f"driver: {results['driver']['kind']}; threading mode {cfg.threading_mode}, idle strategy "
                    f"backoff, term lengths {cfg.term_length or 'the defaults (IPC 64m, UDP 16m)'}, "
                    f"in {ctx.driver.aeron_dir}")
        channels = []
        for channel in cfg.channels:
            reason = probe_channel(ctx.driver.aeron_dir, channel) if ctx.driver else None
            if reason:
                ctx.skipped.append({"channel": channel, "reason": reason})
                ui.note(f"[yellow]skipping the {channel} rows:[/] {reason}")
            else:
                channels.append(channel)
        results["channels"] = channels
        results["skipped"] = ctx.skipped

        plans: list[tuple[str, list[Case]]] = []
        for kind, make in (("throughput", throughput_cases), ("latency", latency_cases)):
            if kind in cfg.benches:
                ours, peers = make(channels)
                order = interleave([c for c in ours if cfg.selected(c)], [c for c in peers if cfg.selected(c)])
                plans.append((kind, order))
        extra = 0
        if "memory" in cfg.benches:
            extra += len(cfg.memory_paths) + 1
        if "idle" in cfg.benches:
            extra += 1
        if "multicast" in cfg.benches:
            extra += 1
        if "flow-control" in cfg.benches:
            extra += 1
        if "request-response" in cfg.benches:
            extra += 1
        total = sum(len(order) for _, order in plans) * len(cfg.sizes) * cfg.rounds + extra
        ui.start(total)

        samples: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
        for round_index in range(cfg.rounds):
            for kind, order in plans:
                for size in cfg.sizes:
                    for case in order:
                        ui.running(f"round {round_index + 1}/{cfg.rounds}  {kind}  {case.name}  {case.transport}  {size} B")
                        result = _or_error(lambda: run_pair(ctx, case, size))
                        samples.setdefault((kind, case.key, size), []).append(result)
                        ui.result(kind, case, size, round_index, result)

        for kind, order in plans:
            rows = []
            for size in cfg.sizes:
                for case in order:
                    rounds = samples.get((kind, case.key, size), [])
                    summarize = summarize_throughput if kind == "throughput" else summarize_latency
                    rows.append(summarize(case, size, rounds))
            add_ratios(rows, kind)
            results[kind] = rows

        if "memory" in cfg.benches:
            memory = []
            for path in cfg.memory_paths:
                ui.running(f"memory: {cfg.messages:,} messages through the {path} batch receive path")
                m = _or_error(lambda: run_memory(ctx, path), path=path)
                memory.append(m)
                ui.memory(m)
            results["memory"] = memory
            ui.running("native message path: allocations per message")
            results["native_alloc"] = _or_error(lambda: run_native_alloc(ctx))
            ui.native(results["native_alloc"])
        if "multicast" in cfg.benches:
            from .multicast import ERRORS as multicast_errors, markdown as multicast_markdown, run_multicast

            ui.running("multicast: hosts in network namespaces on a bridge")
            try:
                results["multicast"] = run_multicast(cfg, ui.note)
            except multicast_errors as exc:
                results["multicast"] = {"skipped": f"failed: {exc}"}
            ui.note(multicast_markdown(results["multicast"]))
        if "idle" in cfg.benches:
            ui.running("idle: async subscriber + embedded driver")
            results["idle"] = _or_error(lambda: run_idle(ctx))
            ui.idle(results["idle"])
        if "flow-control" in cfg.benches:
            results["flow_control"] = run_flow_control(cfg, ui)
        if "request-response" in cfg.benches:
            results["request_response"] = run_request_response(ctx, ui)
    finally:
        ui.stop()
        if ctx.driver is not None:
            ctx.driver.close()

    results["machine"]["load_average_at_end"] = os.getloadavg()
    results["targets"] = evaluate_targets(results)
    ui.final(results)
    if cfg.json_path:
        with open(cfg.json_path, "w") as f:
            json.dump(results, f, indent=1)
        ui.note(f"figures written to {cfg.json_path}")
    if cfg.plot_dir:
        from .plot import write_plots

        ui.note(f"charts written to {cfg.plot_dir}: " + ", ".join(
            os.path.basename(p) for p in write_plots(results, cfg.plot_dir)))
    return results


def main(argv: list[str] | None = None) -> int:
    from ..extras import MissingExtraError

    parser = argparse.ArgumentParser(prog="aeron-async bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return command(args, argv if argv is not None else sys.argv[1:])
    except MissingExtraError as exc:
        print(exc, file=sys.stderr)
        return 2


def command(args: argparse.Namespace, argv: list[str]) -> int:
    from ..extras import require

    require("bench", "aeron-async bench")
    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        if args.plot:
            from .plot import write_plots

            print(f"charts written to {args.plot}: " + ", ".join(os.path.basename(p) for p in write_plots(saved, args.plot)))
        elif args.markdown:
            from .markdown import render

            print(render(saved))
        else:
            from rich.console import Console

            from .report import print_tables

            print_tables(saved, Console(highlight=False))
        return 0
    cfg = Config.from_args(args, "aeron-async bench " + " ".join(argv))

    def stop(signum: int, frame: Any) -> None:
        # SIGTERM (or SIGINT where a background shell ignored it) ends the run as Ctrl-C does: the
        # finally blocks stop the workers and the driver and remove its directory
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    results = run(cfg)
    failed = [r for kind in ("throughput", "latency") for r in results.get(kind, []) if r.get("errors")]
    return 1 if failed else 0
