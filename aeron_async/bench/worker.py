"""One benchmark process: `python -m aeron_async.bench.worker '<json spec>'`.

The harness starts two of these per measurement (receiver and sender, or pong and ping) and talks
to each through its standard streams:

- the worker prints `READY {json}` once it can take traffic (the json carries what the other side
  needs, e.g. a zmq endpoint or a UDP port), then `RESULT {json}` when it has measured, and exits;
- closing the worker's standard input asks it to stop (senders and pongs run until then).

Every role lives in a module of this package and is looked up by name in `ROLES`.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar, TypeVarTuple, Unpack

from ..errors import BenchTimeoutError, InvalidArgumentError

ROLES: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {}


def role(name: str) -> Callable[[Callable[[dict[str, Any]], dict[str, Any]]], Callable[[dict[str, Any]], dict[str, Any]]]:
    def register(fn: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[[dict[str, Any]], dict[str, Any]]:
        ROLES[name] = fn
        return fn

    return register


def emit(tag: str, payload: dict[str, Any] | None = None) -> None:
    """One line to the harness: `TAG {json}`."""
    sys.stdout.write(f"{tag} {json.dumps(payload or {})}\n")
    sys.stdout.flush()


@contextlib.contextmanager
def subscribed(spec: dict[str, Any]) -> Iterator[Any]:
    """A synchronous client's subscription to the run's stream, READY said once it is added."""
    from aeron_async import Aeron

    with Aeron.connect(spec["aeron_dir"]) as client:
        sub = client.add_subscription(spec["channel"], spec["stream"])
        emit("READY")
        yield sub


class Stopper:
    """Becomes `stopped` when the harness closes our standard input; callbacks run on that thread.

    Hot loops check `stopped` once per chunk of messages; code that may wait (an async receive, a
    blocking socket) registers a callback that cancels it.
    """

    def __init__(self) -> None:
        self.stopped = False
        self._callbacks: list[Callable[[], object]] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._watch, name="bench-stop", daemon=True).start()

    def _watch(self) -> None:
        try:
            while os.read(sys.stdin.fileno(), 4096):
                pass
        except OSError:
            pass
        with self._lock:
            self.stopped = True
            callbacks = list(self._callbacks)
        for callback in callbacks:
            try:
                callback()
            except Exception:  # the loop may already be gone
                pass

    def on_stop(self, callback: Callable[[], object]) -> None:
        with self._lock:
            if not self.stopped:
                self._callbacks.append(callback)
                return
        callback()


class Window:
    """The measured interval of a receiver: `warmup` seconds after the first message are not
    counted, then `duration` seconds are. `tick(count)` is called every so many messages with the
    running count and returns True once the window is over."""

    __slots__ = ("warmup", "duration", "phase", "deadline", "n0", "t0", "c0", "n1", "t1", "c1")

    def __init__(self, warmup: float, duration: float) -> None:
        self.warmup = warmup
        self.duration = duration
        self.phase = 0  # 0 waiting for the first message, 1 warming up, 2 measuring, 3 done
        self.deadline = 0.0
        self.n0 = self.n1 = 0
        self.t0 = self.t1 = self.c0 = self.c1 = 0.0

    def start(self) -> None:
        self.phase = 1
        self.deadline = time.perf_counter() + self.warmup

    def tick(self, count: int) -> bool:
        now = time.perf_counter()
        if now < self.deadline:
            return False
        if self.phase == 1:
            self.begin(count, now)
            return False
        self.end(count, now)
        return True

    def begin(self, count: int, now: float | None = None) -> None:
        """The warm-up is over: start counting (called by `tick`, or by a timer)."""
        now = time.perf_counter() if now is None else now
        self.phase = 2
        self.n0, self.t0, self.c0 = count, now, time.process_time()
        self.deadline = now + self.duration

    def end(self, count: int, now: float | None = None) -> None:
        self.phase = 3
        self.n1, self.t1, self.c1 = count, time.perf_counter() if now is None else now, time.process_time()

    def result(self, size: int, **extra: Any) -> dict[str, Any]:
        messages = self.n1 - self.n0
        seconds = self.t1 - self.t0
        rate = messages / seconds if seconds > 0 else 0.0
        return {
            "messages": messages,
            "seconds": seconds,
            "msgs_per_s": rate,
            "mb_per_s": rate * size / 1e6,
            "receiver_cpu_percent": 100.0 * (self.c1 - self.c0) / seconds if seconds > 0 else 0.0,
            **extra,
        }


class SendCounter:
    """Counts what a sender sent between its READY and its stop, for the sender's own rate."""

    __slots__ = ("sent", "started")

    def __init__(self) -> None:
        self.sent = 0
        self.started = time.perf_counter()

    def result(self) -> dict[str, Any]:
        elapsed = time.perf_counter() - self.started
        return {"sent": self.sent, "seconds": elapsed, "msgs_per_s": self.sent / elapsed if elapsed > 0 else 0.0}


def latency_summary(hist: Any) -> dict[str, Any]:
    """Percentiles (microseconds) of an HdrHistogram of nanosecond round trips."""
    def us(value: float) -> float:
        return value / 1000.0

    return {
        "count": hist.get_total_count(),
        "mean_us": us(hist.get_mean_value()),
        "p50_us": us(hist.get_value_at_percentile(50.0)),
        "p90_us": us(hist.get_value_at_percentile(90.0)),
        "p99_us": us(hist.get_value_at_percentile(99.0)),
        "p99_9_us": us(hist.get_value_at_percentile(99.9)),
        "max_us": us(hist.get_max_value()),
        "histogram": hist.encode().decode(),  # HdrHistogram's compressed base64 form (HdrHistogram.decode)
    }


def new_histogram() -> Any:
    from hdrh.histogram import HdrHistogram

    return HdrHistogram(1, 60_000_000_000, 3)  # 1 ns .. 60 s, 3 significant digits


class PingClock:
    """The round trips of a ping loop, in perf_counter_ns: those that start after the warm-up are
    recorded (an HdrHistogram) until `duration` has passed. The loop calls `done(t0, t1)` after each
    round trip, outside the interval it measures, and stops when it says so."""

    __slots__ = ("warm_end", "end", "hist", "_record")

    def __init__(self, warmup: float, duration: float) -> None:
        self.hist = new_histogram()
        self._record = self.hist.record_value
        now = time.perf_counter_ns()
        self.warm_end = now + int(warmup * 1e9)
        self.end = self.warm_end + int(duration * 1e9)

    def done(self, t0: int, t1: int) -> bool:
        if t0 < self.warm_end:
            return False
        self._record(t1 - t0)
        return t1 >= self.end

    def summary(self) -> dict[str, Any]:
        return latency_summary(self.hist)


def ping_setup(spec: dict[str, Any]) -> tuple[bytes, PingClock]:
    """A ping's payload (spec["size"] bytes) and its clock (spec["warmup"], spec["duration"]),
    created once the other side is ready."""
    return bytes(spec["size"]), PingClock(spec["warmup"], spec["duration"])


_T = TypeVar("_T")
_Args = TypeVarTuple("_Args")


def run_backend(backend: str, fn: Callable[[Unpack[_Args]], Awaitable[_T]], *args: Unpack[_Args]) -> _T:
    """Run an anyio coroutine function on asyncio, asyncio + uvloop or trio."""
    import anyio

    if backend == "uvloop":
        return anyio.run(fn, *args, backend="asyncio", backend_options={"use_uvloop": True})
    if backend == "asyncio":
        return anyio.run(fn, *args, backend="asyncio")
    if backend == "trio":
        return anyio.run(fn, *args, backend="trio")
    raise InvalidArgumentError(f"unknown backend {backend!r} (asyncio, uvloop or trio)")


def wait_until(predicate: Callable[[], Any], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise BenchTimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.001)


def _load_roles() -> None:
    from . import aeron_roles, memory_roles, peer_roles, rpc  # noqa: F401 - they register their roles


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    spec = json.loads(argv[0])
    _load_roles()
    fn = ROLES.get(spec["role"])
    if fn is None:
        print(f"unknown benchmark role {spec['role']!r}; known: {', '.join(sorted(ROLES))}", file=sys.stderr)
        return 2
    result = fn(spec)
    emit("RESULT", result)
    return 0


if __name__ == "__main__":
    # Run through the package's module (not this `__main__` copy), whose ROLES the roles fill.
    from aeron_async.bench.worker import main as _main

    raise SystemExit(_main())
