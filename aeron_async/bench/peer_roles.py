"""The peers, measured the same way as aeron_async: pyzmq PUSH/PULL (sync and zmq.asyncio, one
message per call) over ipc:// and tcp://127.0.0.1, REQ/REP for round trips, and plain asyncio UDP
(`DatagramProtocol`) on loopback.

UDP has no flow control: the sender sends as fast as it can and the receiver counts what arrives,
so the receiver's rate is the throughput and the sender's rate (in the sender's result) shows how
much was dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any

from ..errors import BenchError
from .worker import SendCounter, Stopper, Window, emit, ping_setup, role

CHUNK = 1024
FIRST_MESSAGE_TIMEOUT = 30.0
UDP_BUFFER = 4 << 20

_Coroutine = Callable[[dict[str, Any]], Coroutine[Any, Any, dict[str, Any]]]


def _bind_endpoint(spec: dict[str, Any]) -> str:
    if spec["transport"] == "ipc":
        return f"ipc://{tempfile.gettempdir()}/aa-bench-{os.getpid()}-{spec['stream']}.sock"
    return "tcp://127.0.0.1:*"


def _cleanup_endpoint(endpoint: str) -> None:
    if endpoint.startswith("ipc://"):
        try:
            os.unlink(endpoint[len("ipc://"):])
        except OSError:
            pass


def asyncio_role(name: str) -> Callable[[_Coroutine], _Coroutine]:
    """Registers a coroutine function as the role `name`, run by asyncio.run in the worker."""
    def register(fn: _Coroutine) -> _Coroutine:
        role(name)(lambda spec: asyncio.run(fn(spec)))
        return fn

    return register


def _cancel_task_on_stop(stop: Stopper) -> None:
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    stop.on_stop(lambda: loop.call_soon_threadsafe(task.cancel))


def _received(window: Window, last: bytes, size: int) -> dict[str, Any]:
    """A receiver's result, once its last message has the size sent."""
    if len(last) != size:
        raise RuntimeError(f"received {len(last)} bytes, expected {size}")
    return window.result(size)


# ---- pyzmq, synchronous and zmq.asyncio ----


@contextlib.contextmanager
def _zmq_socket(spec: dict[str, Any], ctx: Any, kind: int, bind: bool = False,
                options: tuple[tuple[int, int], ...] = ()) -> Iterator[Any]:
    """A socket of `ctx` (a zmq.Context or a zmq.asyncio.Context, ended with it) with `options`:
    bound to this run's endpoint (READY names it, for the other side to connect to) or connected
    to spec["endpoint"] (READY); closed at once at the end, its ipc:// file removed."""
    import zmq

    sock = ctx.socket(kind)
    endpoint = ""
    try:
        for option, value in options:
            sock.setsockopt(option, value)
        if bind:
            sock.bind(_bind_endpoint(spec))
            endpoint = sock.getsockopt_string(zmq.LAST_ENDPOINT)
            emit("READY", {"endpoint": endpoint})
        else:
            sock.connect(spec["endpoint"])
            emit("READY")
        yield sock
    finally:
        sock.close(linger=0)
        ctx.term()
        _cleanup_endpoint(endpoint)


@role("zmq-sync-receiver")
def zmq_sync_receiver(spec: dict[str, Any]) -> dict[str, Any]:
    import zmq

    size = spec["size"]
    window = Window(spec["warmup"], spec["duration"])
    with _zmq_socket(spec, zmq.Context(), zmq.PULL, bind=True) as sock:
        sock.setsockopt(zmq.RCVTIMEO, int(FIRST_MESSAGE_TIMEOUT * 1000))
        last = sock.recv()
        sock.setsockopt(zmq.RCVTIMEO, -1)
        n = 1
        window.start()
        recv, tick = sock.recv, window.tick
        while True:
            last = recv()
            n += 1
            if not n & 255 and tick(n):
                break
        return _received(window, last, size)


@role("zmq-sync-sender")
def zmq_sync_sender(spec: dict[str, Any]) -> dict[str, Any]:
    import zmq

    stop = Stopper()
    # a blocked send looks at the stop flag 5 times a second
    with _zmq_socket(spec, zmq.Context(), zmq.PUSH, options=((zmq.SNDTIMEO, 200),)) as sock:
        counter = SendCounter()
        payload = bytes(spec["size"])
        send = sock.send
        sent = 0
        while not stop.stopped:
            try:
                for _ in range(CHUNK):
                    send(payload)
            except zmq.Again:
                continue
            sent += CHUNK
        counter.sent = sent
        return counter.result()


@role("zmq-sync-pong")
def zmq_sync_pong(spec: dict[str, Any]) -> dict[str, Any]:
    import zmq

    stop = Stopper()
    with _zmq_socket(spec, zmq.Context(), zmq.REP, bind=True, options=((zmq.RCVTIMEO, 200),)) as sock:
        recv, send = sock.recv, sock.send
        while not stop.stopped:
            try:
                data = recv()
            except zmq.Again:
                continue
            send(data)
        return {}


@role("zmq-sync-ping")
def zmq_sync_ping(spec: dict[str, Any]) -> dict[str, Any]:
    import zmq

    with _zmq_socket(spec, zmq.Context(), zmq.REQ) as sock:
        payload, clock = ping_setup(spec)
        send, recv, now, done = sock.send, sock.recv, time.perf_counter_ns, clock.done
        while True:
            t0 = now()
            send(payload)
            recv()
            if done(t0, now()):
                break
        return clock.summary()


@asyncio_role("zmq-asyncio-receiver")
async def zmq_asyncio_receiver(spec: dict[str, Any]) -> dict[str, Any]:
    import zmq
    import zmq.asyncio

    size = spec["size"]
    window = Window(spec["warmup"], spec["duration"])
    with _zmq_socket(spec, zmq.asyncio.Context(), zmq.PULL, bind=True) as sock:
        last = await asyncio.wait_for(sock.recv(), FIRST_MESSAGE_TIMEOUT)
        n = 1
        window.start()
        recv, tick = sock.recv, window.tick
        while True:
            last = await recv()
            n += 1
            if not n & 255 and tick(n):
                break
        return _received(window, last, size)


@asyncio_role("zmq-asyncio-sender")
async def zmq_asyncio_sender(spec: dict[str, Any]) -> dict[str, Any]:
    stop = Stopper()
    import zmq
    import zmq.asyncio

    sent = 0
    with _zmq_socket(spec, zmq.asyncio.Context(), zmq.PUSH) as sock:
        _cancel_task_on_stop(stop)
        counter = SendCounter()
        payload = bytes(spec["size"])
        send = sock.send
        try:
            while not stop.stopped:
                for _ in range(CHUNK):
                    await send(payload)
                sent += CHUNK
        except asyncio.CancelledError:
            pass
        counter.sent = sent
        return counter.result()


@asyncio_role("zmq-asyncio-pong")
async def zmq_asyncio_pong(spec: dict[str, Any]) -> dict[str, Any]:
    stop = Stopper()
    import zmq
    import zmq.asyncio

    with _zmq_socket(spec, zmq.asyncio.Context(), zmq.REP, bind=True) as sock:
        _cancel_task_on_stop(stop)
        recv, send = sock.recv, sock.send
        try:
            while True:
                await send(await recv())
        except asyncio.CancelledError:
            pass
        return {}


@asyncio_role("zmq-asyncio-ping")
async def zmq_asyncio_ping(spec: dict[str, Any]) -> dict[str, Any]:
    import zmq
    import zmq.asyncio

    with _zmq_socket(spec, zmq.asyncio.Context(), zmq.REQ) as sock:
        payload, clock = ping_setup(spec)
        send, recv, now, done = sock.send, sock.recv, time.perf_counter_ns, clock.done
        while True:
            t0 = now()
            await send(payload)
            await recv()
            if done(t0, now()):
                break
        return clock.summary()


# ---- plain asyncio UDP on loopback ----


def _udp_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, UDP_BUFFER)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, UDP_BUFFER)
    sock.bind(("127.0.0.1", 0))
    sock.setblocking(False)
    return sock


@contextlib.asynccontextmanager
async def _udp_endpoint(protocol: Callable[[], asyncio.DatagramProtocol]) -> AsyncIterator[tuple[Any, Any, socket.socket]]:
    """(transport, protocol, socket): an asyncio datagram endpoint on a new loopback socket
    (_udp_socket), closed at the end."""
    sock = _udp_socket()
    transport, proto = await asyncio.get_running_loop().create_datagram_endpoint(protocol, sock=sock)
    try:
        yield transport, proto, sock
    finally:
        transport.close()


@asyncio_role("udp-asyncio-receiver")
async def udp_receiver(spec: dict[str, Any]) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    size = spec["size"]
    window = Window(spec["warmup"], spec["duration"])
    done: asyncio.Future[None] = loop.create_future()
    first: asyncio.Future[None] = loop.create_future()

    class Receiver(asyncio.DatagramProtocol):
        def __init__(self) -> None:
            self.count = 0
            self.wrong_size = 0

        def datagram_received(self, data: bytes, addr: Any) -> None:
            self.count += 1
            if len(data) != size:
                self.wrong_size += 1
            if self.count == 1:
                first.set_result(None)

    async with _udp_endpoint(Receiver) as (transport, proto, sock):
        emit("READY", {"port": sock.getsockname()[1]})
        await asyncio.wait_for(first, FIRST_MESSAGE_TIMEOUT)
        window.start()
        loop.call_later(window.warmup, lambda: window.begin(proto.count))

        def finish() -> None:
            window.end(proto.count)
            done.set_result(None)

        loop.call_later(window.warmup + window.duration, finish)
        await done
        if proto.wrong_size:
            raise BenchError(f"{proto.wrong_size} datagrams of the wrong size")
        return window.result(size)


@asyncio_role("udp-asyncio-sender")
async def udp_sender(spec: dict[str, Any]) -> dict[str, Any]:
    stop = Stopper()
    writable = asyncio.Event()
    writable.set()

    class Sender(asyncio.DatagramProtocol):
        def pause_writing(self) -> None:
            writable.clear()

        def resume_writing(self) -> None:
            writable.set()

    async with _udp_endpoint(Sender) as (transport, _, _):
        address = ("127.0.0.1", spec["port"])
        emit("READY")
        counter = SendCounter()
        payload = bytes(spec["size"])
        sendto = transport.sendto
        sent = 0
        while not stop.stopped:
            for _ in range(256):
                sendto(payload, address)
            sent += 256
            await asyncio.sleep(0)
            if not writable.is_set():
                await writable.wait()
        counter.sent = sent
        return counter.result()


@asyncio_role("udp-asyncio-pong")
async def udp_pong(spec: dict[str, Any]) -> dict[str, Any]:
    stop = Stopper()
    loop = asyncio.get_running_loop()
    stopped: asyncio.Future[None] = loop.create_future()

    class Echo(asyncio.DatagramProtocol):
        def connection_made(self, transport: Any) -> None:
            self.transport = transport

        def datagram_received(self, data: bytes, addr: Any) -> None:
            self.transport.sendto(data, addr)

    async with _udp_endpoint(Echo) as (_, _, sock):

        def stop_serving() -> None:
            if not stopped.done():
                stopped.set_result(None)

        stop.on_stop(lambda: loop.call_soon_threadsafe(stop_serving))
        emit("READY", {"port": sock.getsockname()[1]})
        await stopped
        return {}


@asyncio_role("udp-asyncio-ping")
async def udp_ping(spec: dict[str, Any]) -> dict[str, Any]:
    loop = asyncio.get_running_loop()

    class Client(asyncio.DatagramProtocol):
        waiter: asyncio.Future[bytes] | None = None

        def datagram_received(self, data: bytes, addr: Any) -> None:
            waiter = self.waiter
            if waiter is not None and not waiter.done():
                waiter.set_result(data)

    async with _udp_endpoint(Client) as (transport, proto, _):
        address = ("127.0.0.1", spec["port"])
        emit("READY")
        payload, clock = ping_setup(spec)
        sendto, new_future = transport.sendto, loop.create_future
        now, done = time.perf_counter_ns, clock.done
        while True:  # one datagram in flight on loopback: a loss would hang this and fail the run
            t0 = now()
            waiter = proto.waiter = new_future()
            sendto(payload, address)
            await waiter
            if done(t0, now()):
                break
        return clock.summary()
