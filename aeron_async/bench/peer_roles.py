"""The peers, measured the same way as aeron_async: pyzmq PUSH/PULL (sync and zmq.asyncio, one
message per call) over ipc:// and tcp://127.0.0.1, REQ/REP for round trips, and plain asyncio UDP
(`DatagramProtocol`) on loopback.

UDP has no flow control: the sender sends as fast as it can and the receiver counts what arrives,
so the receiver's rate is the throughput and the sender's rate (in the sender's result) shows how
much was dropped.
"""

from __future__ import annotations

import asyncio
import os
import socket
import tempfile
import time
from typing import Any

from ..errors import BenchError
from .worker import PingClock, SendCounter, Stopper, Window, emit, latency_summary, new_histogram, role

CHUNK = 1024
FIRST_MESSAGE_TIMEOUT = 30.0
UDP_BUFFER = 4 << 20


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


def _cancel_task_on_stop(stop: Stopper) -> None:
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    stop.on_stop(lambda: loop.call_soon_threadsafe(task.cancel))


# ---- pyzmq, synchronous ----


@role("zmq-sync-receiver")
def zmq_sync_receiver(spec: dict[str, Any]) -> dict[str, Any]:
    import zmq

    size = spec["size"]
    window = Window(spec["warmup"], spec["duration"])
    ctx = zmq.Context()
    sock = ctx.socket(zmq.PULL)
    endpoint = ""
    try:
        sock.bind(_bind_endpoint(spec))
        endpoint = sock.getsockopt_string(zmq.LAST_ENDPOINT)
        emit("READY", {"endpoint": endpoint})
        sock.setsockopt(zmq.RCVTIMEO, int(FIRST_MESSAGE_TIMEOUT * 1000))
        last = sock.recv()
        sock.setsockopt(zmq.RCVTIMEO, -1)
        n = 1
        window.start()
        recv = sock.recv
        tick = window.tick
        while True:
            last = recv()
            n += 1
            if not n & 255 and tick(n):
                break
        if len(last) != size:
            raise BenchError(f"received {len(last)} bytes, expected {size}")
        return window.result(size)
    finally:
        sock.close(linger=0)
        ctx.term()
        _cleanup_endpoint(endpoint)


@role("zmq-sync-sender")
def zmq_sync_sender(spec: dict[str, Any]) -> dict[str, Any]:
    import zmq

    stop = Stopper()
    ctx = zmq.Context()
    sock = ctx.socket(zmq.PUSH)
    try:
        sock.setsockopt(zmq.SNDTIMEO, 200)  # a blocked send looks at the stop flag 5 times a second
        sock.connect(spec["endpoint"])
        emit("READY")
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
    finally:
        sock.close(linger=0)
        ctx.term()


@role("zmq-sync-pong")
def zmq_sync_pong(spec: dict[str, Any]) -> dict[str, Any]:
    import zmq

    stop = Stopper()
    ctx = zmq.Context()
    sock = ctx.socket(zmq.REP)
    endpoint = ""
    try:
        sock.bind(_bind_endpoint(spec))
        endpoint = sock.getsockopt_string(zmq.LAST_ENDPOINT)
        sock.setsockopt(zmq.RCVTIMEO, 200)
        emit("READY", {"endpoint": endpoint})
        recv, send = sock.recv, sock.send
        while not stop.stopped:
            try:
                data = recv()
            except zmq.Again:
                continue
            send(data)
        return {}
    finally:
        sock.close(linger=0)
        ctx.term()
        _cleanup_endpoint(endpoint)


@role("zmq-sync-ping")
def zmq_sync_ping(spec: dict[str, Any]) -> dict[str, Any]:
    import zmq

    ctx = zmq.Context()
    sock = ctx.socket(zmq.REQ)
    try:
        sock.connect(spec["endpoint"])
        emit("READY")
        hist = new_histogram()
        record = hist.record_value
        payload = bytes(spec["size"])
        send, recv = sock.send, sock.recv
        now = time.perf_counter_ns
        clock = PingClock(spec["warmup"], spec["duration"])
        warm_end, end = clock.warm_end, clock.end
        while True:
            t0 = now()
            send(payload)
            recv()
            t1 = now()
            if t0 >= warm_end:
                record(t1 - t0)
                if t1 >= end:
                    break
        return latency_summary(hist)
    finally:
        sock.close(linger=0)
        ctx.term()


# ---- pyzmq, zmq.asyncio ----


@role("zmq-asyncio-receiver")
def zmq_asyncio_receiver(spec: dict[str, Any]) -> dict[str, Any]:
    return asyncio.run(_zmq_asyncio_receiver(spec))


async def _zmq_asyncio_receiver(spec: dict[str, Any]) -> dict[str, Any]:
    import zmq
    import zmq.asyncio

    size = spec["size"]
    window = Window(spec["warmup"], spec["duration"])
    ctx = zmq.asyncio.Context()
    sock = ctx.socket(zmq.PULL)
    endpoint = ""
    try:
        sock.bind(_bind_endpoint(spec))
        endpoint = sock.getsockopt_string(zmq.LAST_ENDPOINT)
        emit("READY", {"endpoint": endpoint})
        last = await asyncio.wait_for(sock.recv(), FIRST_MESSAGE_TIMEOUT)
        n = 1
        window.start()
        recv = sock.recv
        tick = window.tick
        while True:
            last = await recv()
            n += 1
            if not n & 255 and tick(n):
                break
        if len(last) != size:
            raise BenchError(f"received {len(last)} bytes, expected {size}")
        return window.result(size)
    finally:
        sock.close(linger=0)
        ctx.term()
        _cleanup_endpoint(endpoint)


@role("zmq-asyncio-sender")
def zmq_asyncio_sender(spec: dict[str, Any]) -> dict[str, Any]:
    return asyncio.run(_zmq_asyncio_sender(spec, Stopper()))


async def _zmq_asyncio_sender(spec: dict[str, Any], stop: Stopper) -> dict[str, Any]:
    import zmq
    import zmq.asyncio

    ctx = zmq.asyncio.Context()
    sock = ctx.socket(zmq.PUSH)
    sent = 0
    try:
        sock.connect(spec["endpoint"])
        _cancel_task_on_stop(stop)
        emit("READY")
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
    finally:
        sock.close(linger=0)
        ctx.term()


@role("zmq-asyncio-pong")
def zmq_asyncio_pong(spec: dict[str, Any]) -> dict[str, Any]:
    return asyncio.run(_zmq_asyncio_pong(spec, Stopper()))


async def _zmq_asyncio_pong(spec: dict[str, Any], stop: Stopper) -> dict[str, Any]:
    import zmq
    import zmq.asyncio

    ctx = zmq.asyncio.Context()
    sock = ctx.socket(zmq.REP)
    endpoint = ""
    try:
        sock.bind(_bind_endpoint(spec))
        endpoint = sock.getsockopt_string(zmq.LAST_ENDPOINT)
        _cancel_task_on_stop(stop)
        emit("READY", {"endpoint": endpoint})
        recv, send = sock.recv, sock.send
        try:
            while True:
                await send(await recv())
        except asyncio.CancelledError:
            pass
        return {}
    finally:
        sock.close(linger=0)
        ctx.term()
        _cleanup_endpoint(endpoint)


@role("zmq-asyncio-ping")
def zmq_asyncio_ping(spec: dict[str, Any]) -> dict[str, Any]:
    return asyncio.run(_zmq_asyncio_ping(spec))


async def _zmq_asyncio_ping(spec: dict[str, Any]) -> dict[str, Any]:
    import zmq
    import zmq.asyncio

    ctx = zmq.asyncio.Context()
    sock = ctx.socket(zmq.REQ)
    try:
        sock.connect(spec["endpoint"])
        emit("READY")
        hist = new_histogram()
        record = hist.record_value
        payload = bytes(spec["size"])
        send, recv = sock.send, sock.recv
        now = time.perf_counter_ns
        clock = PingClock(spec["warmup"], spec["duration"])
        warm_end, end = clock.warm_end, clock.end
        while True:
            t0 = now()
            await send(payload)
            await recv()
            t1 = now()
            if t0 >= warm_end:
                record(t1 - t0)
                if t1 >= end:
                    break
        return latency_summary(hist)
    finally:
        sock.close(linger=0)
        ctx.term()


# ---- plain asyncio UDP on loopback ----


def _udp_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, UDP_BUFFER)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, UDP_BUFFER)
    sock.bind(("127.0.0.1", 0))
    sock.setblocking(False)
    return sock


@role("udp-asyncio-receiver")
def udp_receiver(spec: dict[str, Any]) -> dict[str, Any]:
    return asyncio.run(_udp_receiver(spec))


async def _udp_receiver(spec: dict[str, Any]) -> dict[str, Any]:
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

    sock = _udp_socket()
    transport, proto = await loop.create_datagram_endpoint(Receiver, sock=sock)
    try:
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
    finally:
        transport.close()


@role("udp-asyncio-sender")
def udp_sender(spec: dict[str, Any]) -> dict[str, Any]:
    return asyncio.run(_udp_sender(spec, Stopper()))


async def _udp_sender(spec: dict[str, Any], stop: Stopper) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    writable = asyncio.Event()
    writable.set()

    class Sender(asyncio.DatagramProtocol):
        def pause_writing(self) -> None:
            writable.clear()

        def resume_writing(self) -> None:
            writable.set()

    transport, _ = await loop.create_datagram_endpoint(Sender, sock=_udp_socket())
    try:
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
    finally:
        transport.close()


@role("udp-asyncio-pong")
def udp_pong(spec: dict[str, Any]) -> dict[str, Any]:
    return asyncio.run(_udp_pong(spec, Stopper()))


async def _udp_pong(spec: dict[str, Any], stop: Stopper) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    stopped: asyncio.Future[None] = loop.create_future()

    class Echo(asyncio.DatagramProtocol):
        def connection_made(self, transport: Any) -> None:
            self.transport = transport

        def datagram_received(self, data: bytes, addr: Any) -> None:
            self.transport.sendto(data, addr)

    sock = _udp_socket()
    transport, _ = await loop.create_datagram_endpoint(Echo, sock=sock)
    try:

        def stop_serving() -> None:
            if not stopped.done():
                stopped.set_result(None)

        stop.on_stop(lambda: loop.call_soon_threadsafe(stop_serving))
        emit("READY", {"port": sock.getsockname()[1]})
        await stopped
        return {}
    finally:
        transport.close()


@role("udp-asyncio-ping")
def udp_ping(spec: dict[str, Any]) -> dict[str, Any]:
    return asyncio.run(_udp_ping(spec))


async def _udp_ping(spec: dict[str, Any]) -> dict[str, Any]:
    loop = asyncio.get_running_loop()

    class Client(asyncio.DatagramProtocol):
        waiter: asyncio.Future[bytes] | None = None

        def datagram_received(self, data: bytes, addr: Any) -> None:
            waiter = self.waiter
            if waiter is not None and not waiter.done():
                waiter.set_result(data)

    transport, proto = await loop.create_datagram_endpoint(Client, sock=_udp_socket())
    try:
        address = ("127.0.0.1", spec["port"])
        emit("READY")
        hist = new_histogram()
        record = hist.record_value
        payload = bytes(spec["size"])
        sendto = transport.sendto
        new_future = loop.create_future
        now = time.perf_counter_ns
        clock = PingClock(spec["warmup"], spec["duration"])
        warm_end, end = clock.warm_end, clock.end
        while True:  # one datagram in flight on loopback: a loss would hang this and fail the run
            t0 = now()
            waiter = proto.waiter = new_future()
            sendto(payload, address)
            await waiter
            t1 = now()
            if t0 >= warm_end:
                record(t1 - t0)
                if t1 >= end:
                    break
        return latency_summary(hist)
    finally:
        transport.close()
