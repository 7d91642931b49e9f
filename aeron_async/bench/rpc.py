"""Request/response: `AsyncRpcServer` / `AsyncRpcClient` (aeron_async/rpc.py) against pyzmq's
zmq.asyncio DEALER/ROUTER and REQ/REP over ipc:// and tcp://127.0.0.1, in the same run.

Two figures per case, each from a server process and a client process (worker roles, below):

- round trip: one client, one request at a time; p50/p99 of the time from sending a request to
  having its answer (PingClock: the round trips after the warm-up, for `duration` seconds);
- requests/s: 10 clients in the client process (10 AsyncRpcClients, or 10 zmq sockets), each with 10
  requests in flight (100 concurrent), answers counted over `duration` seconds after the warm-up.

Our server answers in its `async for` loop (`await request.respond(data)`, an echo); zmq's ROUTER
echoes `recv_multipart` with `send_multipart`, its REP `recv` with `send`. REQ sockets allow one
request in flight each, so REQ/REP's requests/s uses 100 REQ sockets (10 per client). Our processes
share the run's standalone driver over `aeron:ipc`.

`aeron-async bench --bench request-response` runs it; alone: `python -m aeron_async.bench.rpc
[--rounds 3] [--duration 2] [--warmup 1] [--only PATTERN]` (prints a Markdown table).
"""

from __future__ import annotations

import argparse
import asyncio
import fnmatch
import statistics
import sys
import time
from typing import Any

from ..errors import BenchError
from .cases import BACKENDS
from .peer_roles import _bind_endpoint, _cleanup_endpoint
from .worker import PingClock, Stopper, emit, role, run_backend

SIZE = 32
CLIENTS = 10
IN_FLIGHT = 10   # per client: 100 concurrent requests in all
TIMEOUT = 10.0   # each of our requests has one, as an application's would (a timer per request)


def cases() -> list[dict[str, Any]]:
    """Every case: ours per backend, then zmq's; `kind` is "latency" or "throughput"."""
    out = []
    for kind in ("latency", "throughput"):
        for backend in BACKENDS:
            out.append({"name": f"aeron-rpc-{backend}", "kind": kind, "impl": "aeron_async", "transport": "aeron:ipc",
                        "server": "rpc-aeron-server", "client": "rpc-aeron-client", "backend": backend})
        for pattern in ("dealer-router", "req-rep"):
            for transport in ("ipc", "tcp"):
                out.append({"name": f"zmq-{pattern}-{transport}", "kind": kind, "impl": "pyzmq",
                            "transport": "ipc://" if transport == "ipc" else "tcp://127.0.0.1",
                            "server": f"rpc-zmq-{pattern.split('-')[1]}-server", "client": "rpc-zmq-client",
                            "pattern": pattern, "zmq_transport": transport})
    return out


# ---- our roles ----


def _cancel_on_stop(stop: Stopper, scope: Any) -> None:
    import anyio.from_thread
    import anyio.lowlevel

    token = anyio.lowlevel.current_token()
    stop.on_stop(lambda: anyio.from_thread.run_sync(scope.cancel, token=token))


@role("rpc-aeron-server")
def aeron_server(spec: dict[str, Any]) -> dict[str, Any]:
    return run_backend(spec["backend"], _aeron_server, spec, Stopper())


async def _aeron_server(spec: dict[str, Any], stop: Stopper) -> dict[str, Any]:
    import anyio

    import aeron_async

    async with aeron_async.connect(spec["aeron_dir"]) as aeron:
        async with aeron_async.AsyncRpcServer(aeron, spec["channel"], spec["stream"], max_concurrent=4096) as server:
            with anyio.CancelScope() as scope:
                _cancel_on_stop(stop, scope)
                emit("READY")
                async for request in server:
                    await request.respond(request.message.data)
            return {"requests": server.requests_received, "dropped": server.dropped_responses}


@role("rpc-aeron-client")
def aeron_client(spec: dict[str, Any]) -> dict[str, Any]:
    return run_backend(spec["backend"], _aeron_client, spec)


async def _aeron_client(spec: dict[str, Any]) -> dict[str, Any]:
    import contextlib

    import aeron_async

    payload = bytes(spec["size"])
    async with aeron_async.connect(spec["aeron_dir"]) as aeron, contextlib.AsyncExitStack() as stack:
        count = 1 if spec["kind"] == "latency" else CLIENTS
        clients = [await stack.enter_async_context(aeron_async.AsyncRpcClient(aeron, spec["channel"], spec["stream"]))
                   for _ in range(count)]
        for client in clients:
            await client.wait_connected(30)
        emit("READY")
        if spec["kind"] == "latency":
            request, now = clients[0].request, time.perf_counter_ns
            clock = PingClock(spec["warmup"], spec["duration"])
            while True:
                t0 = now()
                await request(payload, TIMEOUT)
                if clock.done(t0, now()):
                    break
            return clock.summary()
        return await _throughput([client.request for client in clients for _ in range(IN_FLIGHT)], payload, spec)


async def _throughput(requests: list[Any], payload: bytes, spec: dict[str, Any]) -> dict[str, Any]:
    """Each of `requests` (a request function per concurrent requester) in a loop of its own; the
    answers counted in the window after the warm-up."""
    import anyio

    answered = 0
    start = time.perf_counter()
    window = {"begin": start + spec["warmup"], "end": start + spec["warmup"] + spec["duration"]}
    marks: dict[str, tuple[int, float, float]] = {}

    async def requester(request: Any) -> None:
        nonlocal answered
        while True:
            await request(payload, TIMEOUT)
            answered += 1
            if not answered & 63:
                now = time.perf_counter()
                if "begin" not in marks and now >= window["begin"]:
                    marks["begin"] = (answered, now, time.process_time())
                elif "begin" in marks and now >= window["end"]:
                    if "end" not in marks:
                        marks["end"] = (answered, now, time.process_time())
                    return

    async with anyio.create_task_group() as tasks:
        for request in requests:
            tasks.start_soon(requester, request)
    n0, t0, c0 = marks["begin"]
    n1, t1, c1 = marks["end"]
    return {"requests": n1 - n0, "seconds": t1 - t0, "requests_per_s": (n1 - n0) / (t1 - t0),
            "client_cpu_percent": 100.0 * (c1 - c0) / (t1 - t0), "concurrent": len(requests)}


# ---- pyzmq's roles (zmq.asyncio, on asyncio) ----


@role("rpc-zmq-router-server")
def zmq_router_server(spec: dict[str, Any]) -> dict[str, Any]:
    return asyncio.run(_zmq_server(spec, Stopper(), router=True))


@role("rpc-zmq-rep-server")
def zmq_rep_server(spec: dict[str, Any]) -> dict[str, Any]:
    return asyncio.run(_zmq_server(spec, Stopper(), router=False))


async def _zmq_server(spec: dict[str, Any], stop: Stopper, router: bool) -> dict[str, Any]:
    import zmq
    import zmq.asyncio

    ctx = zmq.asyncio.Context()
    sock = ctx.socket(zmq.ROUTER if router else zmq.REP)
    endpoint = ""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    stop.on_stop(lambda: loop.call_soon_threadsafe(task.cancel))
    try:
        sock.bind(_bind_endpoint({"transport": spec["zmq_transport"], "stream": spec["stream"]}))
        endpoint = sock.getsockopt_string(zmq.LAST_ENDPOINT)
        emit("READY", {"endpoint": endpoint})
        try:
            if router:
                recv_multipart, send_multipart = sock.recv_multipart, sock.send_multipart
                while True:
                    await send_multipart(await recv_multipart())
            else:
                recv, send = sock.recv, sock.send
                while True:
                    await send(await recv())
        except asyncio.CancelledError:
            pass
        return {}
    finally:
        sock.close(linger=0)
        ctx.term()
        _cleanup_endpoint(endpoint)


@role("rpc-zmq-client")
def zmq_client(spec: dict[str, Any]) -> dict[str, Any]:
    return asyncio.run(_zmq_client(spec))


async def _zmq_client(spec: dict[str, Any]) -> dict[str, Any]:
    import itertools

    import zmq
    import zmq.asyncio

    ctx = zmq.asyncio.Context()
    dealer = spec["pattern"] == "dealer-router"
    latency = spec["kind"] == "latency"
    # DEALER: a socket per client, 10 requests in flight on each; REQ: one request in flight per socket
    sockets = 1 if latency else (CLIENTS if dealer else CLIENTS * IN_FLIGHT)
    socks = [ctx.socket(zmq.DEALER if dealer else zmq.REQ) for _ in range(sockets)]
    try:
        for sock in socks:
            sock.connect(spec["endpoint"])
        payload = bytes(spec["size"])
        if dealer:
            requests = [_DealerClient(sock) for sock in socks]
            await asyncio.gather(*(r.start() for r in requests))
            calls = [r.request for r in requests]
        else:
            async def req(sock: Any, data: bytes, _timeout: Any = None) -> bytes:
                await sock.send(data)
                answer: bytes = await sock.recv()
                return answer
            calls = [lambda data, t=None, s=sock: req(s, data, t) for sock in socks]  # type: ignore[misc]
        emit("READY")
        if latency:
            request, now = calls[0], time.perf_counter_ns
            clock = PingClock(spec["warmup"], spec["duration"])
            while True:
                t0 = now()
                await request(payload, None)
                if clock.done(t0, now()):
                    break
            return clock.summary()
        per_socket = IN_FLIGHT if dealer else 1
        spread = list(itertools.chain.from_iterable([call] * per_socket for call in calls))
        result = await _asyncio_throughput(spread, payload, spec)
        for r in (requests if dealer else []):
            r.close()
        return result
    finally:
        for sock in socks:
            sock.close(linger=0)
        ctx.term()


class _DealerClient:
    """A DEALER socket with correlated requests: [correlation id, payload] frames, the ROUTER echoes
    them; one reader task hands each answer to its request's future."""

    def __init__(self, sock: Any) -> None:
        self.sock = sock
        self.pending: dict[bytes, asyncio.Future[bytes]] = {}
        self.next_id = 0
        self.reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        recv, pending = self.sock.recv_multipart, self.pending
        while True:
            correlation, data = await recv()
            future = pending.pop(correlation, None)
            if future is not None and not future.done():
                future.set_result(data)

    async def request(self, data: bytes, _timeout: Any = None) -> bytes:
        self.next_id += 1
        correlation = self.next_id.to_bytes(8, "little")
        future = asyncio.get_running_loop().create_future()
        self.pending[correlation] = future
        await self.sock.send_multipart([correlation, data])
        answer: bytes = await future
        return answer

    def close(self) -> None:
        if self.reader is not None:
            self.reader.cancel()


async def _asyncio_throughput(requests: list[Any], payload: bytes, spec: dict[str, Any]) -> dict[str, Any]:
    """`_throughput` for zmq.asyncio (plain asyncio tasks)."""
    answered = 0
    start = time.perf_counter()
    begin_at, end_at = start + spec["warmup"], start + spec["warmup"] + spec["duration"]
    marks: dict[str, tuple[int, float, float]] = {}
    finished = asyncio.Event()

    async def requester(request: Any) -> None:
        nonlocal answered
        while not finished.is_set():
            await request(payload, None)
            answered += 1
            if not answered & 63:
                now = time.perf_counter()
                if "begin" not in marks and now >= begin_at:
                    marks["begin"] = (answered, now, time.process_time())
                elif "begin" in marks and now >= end_at and "end" not in marks:
                    marks["end"] = (answered, now, time.process_time())
                    finished.set()

    tasks = [asyncio.create_task(requester(r)) for r in requests]
    await finished.wait()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    n0, t0, c0 = marks["begin"]
    n1, t1, c1 = marks["end"]
    return {"requests": n1 - n0, "seconds": t1 - t0, "requests_per_s": (n1 - n0) / (t1 - t0),
            "client_cpu_percent": 100.0 * (c1 - c0) / (t1 - t0), "concurrent": len(requests)}


# ---- the run ----


def measure(case: dict[str, Any], aeron_dir: str, stream: int, *, warmup: float, duration: float) -> dict[str, Any]:
    """One measurement of a case: its server process, then its client process; the client's result."""
    from .harness import Worker

    spec = {**case, "size": SIZE, "warmup": warmup, "duration": duration, "stream": stream,
            "aeron_dir": aeron_dir, "channel": case["transport"]}
    server = Worker({**spec, "role": case["server"]}, f"{case['name']} server")
    client = None
    try:
        ready = server.expect("READY", 30)
        client = Worker({**spec, **ready, "role": case["client"]}, f"{case['name']} client")
        client.expect("READY", 60)
        result = client.expect("RESULT", warmup + duration + 60)
        server.stop()
        return result
    finally:
        if client is not None:
            client.finish()
        server.finish()


def run(*, rounds: int, warmup: float, duration: float, only: list[str] | None = None,
        aeron_dir: str | None = None, threading_mode: str = "SHARED", note: Any = print,
        kinds: tuple[str, ...] = ("latency", "throughput")) -> dict[str, Any]:
    """Rounds of every case (ours and zmq's alternating); the median of each figure over the rounds."""
    from .harness import Driver

    selected = [c for c in cases() if c["kind"] in kinds
                and (not only or any(fnmatch.fnmatchcase(c["name"], p) for p in only))]
    driver = None if aeron_dir else Driver(threading_mode, None, name="rpc")
    directory = aeron_dir or (driver.aeron_dir if driver else "")
    samples: dict[tuple[str, str], list[dict[str, Any]]] = {}
    stream = 7000
    try:
        for round_index in range(rounds):
            for case in selected:
                stream += 2
                try:
                    result = measure(case, directory, stream, warmup=warmup, duration=duration)
                except BenchError as exc:
                    result = {"error": str(exc)}
                    note(f"request/response {case['name']} ({case['kind']}): {exc}")
                samples.setdefault((case["kind"], case["name"]), []).append(result)
    finally:
        if driver is not None:
            driver.close()
    rows = []
    for case in selected:
        rounds_of = samples.get((case["kind"], case["name"]), [])
        ok = [r for r in rounds_of if "error" not in r]
        row: dict[str, Any] = {"case": case["name"], "kind": case["kind"], "impl": case["impl"],
                               "transport": case["transport"], "rounds": rounds_of, "errors": len(rounds_of) - len(ok)}
        if ok and case["kind"] == "latency":
            for field in ("p50_us", "p99_us"):
                row[field] = statistics.median(r[field] for r in ok)
        elif ok:
            row["requests_per_s"] = statistics.median(r["requests_per_s"] for r in ok)
        rows.append(row)
    best_zmq = max((r.get("requests_per_s", 0.0) for r in rows if r["impl"] == "pyzmq"), default=0.0)
    for row in rows:
        if row["impl"] == "aeron_async" and "requests_per_s" in row and best_zmq:
            row["vs_best_zmq"] = row["requests_per_s"] / best_zmq
    return {"size": SIZE, "clients": CLIENTS, "in_flight_per_client": IN_FLIGHT, "rounds": rounds,
            "warmup": warmup, "duration": duration, "rows": rows}


def markdown(figures: dict[str, Any]) -> str:
    lines = [f"| case | transport | round trip p50 (us) | p99 (us) | requests/s, {figures['clients']} clients x "
             f"{figures['in_flight_per_client']} in flight | vs best pyzmq |", "|---|---|---:|---:|---:|---|"]
    by_name: dict[str, dict[str, Any]] = {}
    for row in figures["rows"]:
        by_name.setdefault(row["case"], {"transport": row["transport"]}).update(
            {k: v for k, v in row.items() if k in ("p50_us", "p99_us", "requests_per_s", "vs_best_zmq")})
    for name, row in by_name.items():
        p50 = f"{row['p50_us']:.1f}" if "p50_us" in row else "-"
        p99 = f"{row['p99_us']:.1f}" if "p99_us" in row else "-"
        rate = f"{row['requests_per_s'] / 1e3:,.1f} k" if "requests_per_s" in row else "-"
        ratio = f"{row['vs_best_zmq']:.1f}x" if "vs_best_zmq" in row else ""
        lines.append(f"| {name} | {row['transport']} | {p50} | {p99} | {rate} | {ratio} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m aeron_async.bench.rpc", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--duration", type=float, default=2.0)
    parser.add_argument("--only", help="comma-separated case-name patterns (fnmatch), e.g. 'aeron-rpc-*'")
    parser.add_argument("--threading-mode", default="SHARED", choices=["SHARED", "SHARED_NETWORK", "DEDICATED"])
    args = parser.parse_args(argv)
    figures = run(rounds=args.rounds, warmup=args.warmup, duration=args.duration,
                  only=[p.strip() for p in args.only.split(",")] if args.only else None,
                  threading_mode=args.threading_mode)
    print(markdown(figures))
    return 0


if __name__ == "__main__":
    # Run through the package's module, whose roles the workers look up by name.
    from aeron_async.bench.rpc import main as _main

    sys.exit(_main())
