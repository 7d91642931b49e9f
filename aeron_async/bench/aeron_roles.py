"""aeron_async's side of the benchmarks: throughput senders/receivers and ping/pong, through the
synchronous client and through the async facade (asyncio, uvloop, trio).

Forms (the `form` field of a spec):

- `msg`: one message at a time as an application would write it: the sync sender retries
  `publication.offer(data)` until accepted, the sync receiver iterates the list returned by
  `subscription.poll_messages()` (256 at most); both back off with an `IdleStrategy` (IDLE) when
  a pass finds nothing to do, as Aeron's own samples do; the async sender awaits `publication.offer(data)`
  per message and the async receiver reads with `async for message in subscription`.
- `handler`, `assembler`, `controlled` (sync receiver only; the sender is `batch`'s): Aeron's
  fragment-handler API, `subscription.poll(handler, 1000)`, `poll(FragmentAssembler(handler),
  1000)` and `controlled_poll(handler, 1000)`, with a handler (a bound method, as Aeron code holds
  its handlers) that counts each fragment (and returns CONTINUE when controlled).
- `batch`: the sync receiver takes `poll_messages(4096)` as one list and counts it; the async
  receiver reads `async for batch in subscription.batches(4096)`; the async sender calls
  `offer_nowait` and awaits `offer` only when refused (back pressure); the sync sender hands
  `publication.offer_batch(messages)` a list of BATCH messages per call (one native call appends
  them all, each its own frame) and offers the rest of a partly refused batch again.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from ..errors import BenchError, BenchTimeoutError
from .worker import SendCounter, Stopper, Window, emit, ping_setup, role, run_backend, subscribed, wait_until

CHUNK = 1024  # messages between two looks at the stop flag
# What the sync loops do when a pass finds nothing to do (an offer refused, a poll empty): back off
# as Aeron's own samples do, so that on a 2-core machine a spinning client does not take the core
# the media driver needs to move the data.
IDLE = "backoff:100-10-1us-100us"
FIRST_MESSAGE_TIMEOUT = 30.0
BATCH = 4096


def _check_size(data: Any, size: int) -> None:
    if data is not None and len(data) != size:
        raise BenchError(f"received a {len(data)}-byte message, expected {size} bytes")


# ---- synchronous client ----


@role("aeron-sync-receiver")
def sync_receiver(spec: dict[str, Any]) -> dict[str, Any]:
    from aeron_async import IdleStrategy

    size = spec["size"]
    window = Window(spec["warmup"], spec["duration"])
    with subscribed(spec) as sub:
        poll = sub.poll_messages
        deadline = time.monotonic() + FIRST_MESSAGE_TIMEOUT
        while not (first := poll(1)):
            if time.monotonic() > deadline:
                raise BenchTimeoutError(f"no message within {FIRST_MESSAGE_TIMEOUT:.0f} s")
        n = 1
        last = first[0].data
        window.start()
        tick = window.tick
        idle = IdleStrategy(IDLE).idle  # after each pass, with its work count (resets on work)
        if spec["form"] in ("handler", "assembler", "controlled"):
            _check_size(last, size)
            return _handler_receiver(sub, spec["form"], window, size, n, idle, tick)
        per_message = spec["form"] == "msg"  # msg: touch every message; batch: count the list
        limit = 256 if per_message else BATCH
        while True:
            messages = poll(limit)
            if per_message:
                for message in messages:
                    last = message.data
            n += len(messages)
            idle(len(messages))
            if tick(n):
                break
        _check_size(last, size)
        return window.result(size)


class _Counter:
    """A fragment handler that counts, as an application's handler object would."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0

    def on_fragment(self, data: memoryview, header: Any) -> None:
        self.count += 1

    def on_controlled_fragment(self, data: memoryview, header: Any) -> int:
        self.count += 1
        return CONTINUE


CONTINUE = 4  # ControlledPollAction.CONTINUE, bound once


def _handler_receiver(sub: Any, form: str, window: Window, size: int, n: int, idle: Any, tick: Any) -> dict[str, Any]:
    from aeron_async import FragmentAssembler

    counter = _Counter()
    handler: Callable[[memoryview, Any], object]
    if form == "controlled":
        poll, handler = sub.controlled_poll, counter.on_controlled_fragment
    elif form == "assembler":
        poll, handler = sub.poll, FragmentAssembler(counter.on_fragment)
    else:
        poll, handler = sub.poll, counter.on_fragment
    while True:
        got = poll(handler, 1000)
        idle(got)
        if tick(n + counter.count):
            break
    return window.result(size)


@role("aeron-sync-sender")
def sync_sender(spec: dict[str, Any]) -> dict[str, Any]:
    from aeron_async import Aeron, IdleStrategy

    stop = Stopper()
    with Aeron.connect(spec["aeron_dir"]) as client:
        pub = client.add_publication(spec["channel"], spec["stream"])
        wait_until(lambda: pub.is_connected or stop.stopped, 30, "a subscriber to connect")
        emit("READY")
        counter = SendCounter()
        payload = bytes(spec["size"])
        offer = pub.offer
        sent = 0
        idle = IdleStrategy(IDLE)
        backoff, reset = idle.idle, idle.reset
        if spec["form"] == "msg":
            while not stop.stopped:
                for _ in range(CHUNK):
                    if offer(payload) < 0:
                        while offer(payload) < 0 and not stop.stopped:
                            backoff(0)
                        reset()
                sent += CHUNK
        else:
            offer_batch = pub.offer_batch
            batch = [payload] * BATCH
            pending = batch
            while not stop.stopped:
                accepted = offer_batch(pending)
                if accepted > 0:
                    sent += accepted
                    pending = batch if accepted == len(pending) else pending[accepted:]
                backoff(max(accepted, 0))
        counter.sent = sent
        return counter.result()


@role("aeron-sync-pong")
def sync_pong(spec: dict[str, Any]) -> dict[str, Any]:
    stop = Stopper()
    with _sync_endpoint(spec) as (client, work, take_over):
        sub = client.add_subscription(spec.get("request_channel", spec["channel"]), spec["stream"])
        pub = client.add_publication(spec.get("reply_channel", spec["channel"]), spec["stream"] + 1)
        emit("READY")
        take_over()
        poll = sub.poll_messages
        offer = pub.offer
        backoff, reset = _waiter(spec)
        idled = False
        passes = 0
        while True:
            messages = poll(16)
            if messages:
                for message in messages:
                    data = message.data
                    while offer(data) < 0:
                        work()
                        if stop.stopped:
                            break
                if idled:
                    idled = False
                    reset()
            else:
                if work() == 0:
                    idled = True
                    backoff(0)
                passes += 1
                if not passes & 1023 and stop.stopped:
                    break
    return {}


@role("aeron-sync-ping")
def sync_ping(spec: dict[str, Any]) -> dict[str, Any]:
    with _sync_endpoint(spec) as (client, work, take_over):
        pub = client.add_publication(spec.get("request_channel", spec["channel"]), spec["stream"])
        sub = client.add_subscription(spec.get("reply_channel", spec["channel"]), spec["stream"] + 1)
        wait_until(lambda: pub.is_connected and sub.is_connected, 30, "the pong process to connect")
        take_over()
        emit("READY")
        poll = sub.poll_messages
        offer = pub.offer
        backoff, reset = _waiter(spec)
        payload, clock = ping_setup(spec)
        now, done = time.perf_counter_ns, clock.done
        while True:
            t0 = now()
            while offer(payload) < 0:
                work()
            if not (reply := poll(1)):
                while not (reply := poll(1)):
                    if work() == 0:
                        backoff(0)
                reset()
            if done(t0, now()):
                break
        _check_size(reply[0].data, spec["size"])
        return clock.summary()


def _no_work() -> int:
    return 0


def _spin(work_count: int = 0) -> None:
    pass


def _waiter(spec: dict[str, Any]) -> tuple[Any, Any]:
    """How a sync ping or pong waits for the next message: `busy-poll` spins on the poll; an idle
    strategy name (e.g. `backoff`) backs off as an application loop on a small machine would."""
    wait = spec.get("wait", "busy-poll")
    if wait == "busy-poll":
        return _spin, _spin
    from aeron_async import IdleStrategy

    idle = IdleStrategy(wait)
    return idle.idle, idle.reset


@contextlib.contextmanager
def _sync_endpoint(spec: dict[str, Any]) -> Iterator[tuple[Any, Any, Any]]:
    """(client, work, take_over): a client on the run's shared driver, or (`driver: invoker`) on a
    media driver of this process's own in INVOKER mode (busy-poll mode: no driver thread to
    schedule). Until `take_over()` a helper thread runs that driver's duty cycle (setting up
    publications and subscriptions waits on it); from then on the caller runs it, `work()` in its
    loop."""
    from aeron_async import Aeron, MediaDriver

    if spec.get("driver") != "invoker":
        with Aeron.connect(spec["aeron_dir"]) as client:
            yield client, _no_work, _no_work
        return
    aeron_dir = f"{spec['aeron_dir']}-{spec['role']}"
    with MediaDriver.launch(aeron_dir=aeron_dir, threading_mode="INVOKER", dir_delete_on_start=True,
                            dir_delete_on_shutdown=True) as driver:
        done = threading.Event()

        def run_driver() -> None:
            idle = 0
            while not done.is_set():
                if driver.do_work() == 0:
                    idle += 1
                    if idle > 100:
                        time.sleep(0.0001)
                else:
                    idle = 0

        helper = threading.Thread(target=run_driver, daemon=True)
        helper.start()

        def take_over() -> int:
            done.set()
            helper.join()
            return 0

        try:
            with Aeron.connect(aeron_dir) as client:
                yield client, driver.do_work, take_over
        finally:
            take_over()


# ---- async facade ----


def _cancel_on_stop(stop: Stopper, scope: Any) -> None:
    """Cancel `scope` (in the running event loop) once the harness asks this worker to stop."""
    import anyio.from_thread
    import anyio.lowlevel

    token = anyio.lowlevel.current_token()
    stop.on_stop(lambda: anyio.from_thread.run_sync(scope.cancel, token=token))


@role("aeron-async-receiver")
def async_receiver(spec: dict[str, Any]) -> dict[str, Any]:
    return run_backend(spec["backend"], _async_receiver, spec)


async def _async_receiver(spec: dict[str, Any]) -> dict[str, Any]:
    import anyio

    import aeron_async

    size = spec["size"]
    window = Window(spec["warmup"], spec["duration"])
    async with aeron_async.connect(spec["aeron_dir"]) as client:
        sub = await client.add_subscription(spec["channel"], spec["stream"])
        emit("READY")
        with anyio.fail_after(FIRST_MESSAGE_TIMEOUT):
            last = (await sub.receive()).data
        n = 1
        window.start()
        tick = window.tick
        if spec["form"] == "msg":
            async for message in sub:
                last = message.data
                n += 1
                if not n & 255 and tick(n):
                    break
        else:
            async for batch in sub.batches(BATCH):
                n += len(batch)
                if tick(n):
                    break
        _check_size(last, size)
        return window.result(size)


@role("aeron-async-sender")
def async_sender(spec: dict[str, Any]) -> dict[str, Any]:
    return run_backend(spec["backend"], _async_sender, spec, Stopper())


async def _async_sender(spec: dict[str, Any], stop: Stopper) -> dict[str, Any]:
    import anyio
    import anyio.lowlevel

    import aeron_async

    payload = bytes(spec["size"])
    sent = 0
    async with aeron_async.connect(spec["aeron_dir"]) as client:
        pub = await client.add_publication(spec["channel"], spec["stream"])
        with anyio.CancelScope() as scope:
            _cancel_on_stop(stop, scope)
            with anyio.fail_after(30):
                while not pub.is_connected:
                    await anyio.sleep(0.001)
            emit("READY")
            counter = SendCounter()
            offer = pub.offer
            if spec["form"] == "msg":
                while not stop.stopped:
                    for _ in range(CHUNK):
                        await offer(payload)
                    sent += CHUNK
            else:
                offer_nowait = pub.offer_nowait
                checkpoint = anyio.lowlevel.checkpoint
                while not stop.stopped:
                    for _ in range(CHUNK):
                        if offer_nowait(payload) < 0:
                            await offer(payload)
                    sent += CHUNK
                    await checkpoint()
        counter.sent = sent
        return counter.result()


@role("aeron-async-pong")
def async_pong(spec: dict[str, Any]) -> dict[str, Any]:
    return run_backend(spec["backend"], _async_pong, spec, Stopper())


async def _async_pong(spec: dict[str, Any], stop: Stopper) -> dict[str, Any]:
    import anyio

    import aeron_async

    async with aeron_async.connect(spec["aeron_dir"]) as client:
        sub = await client.add_subscription(spec["channel"], spec["stream"])
        pub = await client.add_publication(spec["channel"], spec["stream"] + 1)
        with anyio.CancelScope() as scope:
            _cancel_on_stop(stop, scope)
            emit("READY")
            offer = pub.offer
            async for message in sub:
                await offer(message.data)
    return {}


@role("aeron-async-ping")
def async_ping(spec: dict[str, Any]) -> dict[str, Any]:
    return run_backend(spec["backend"], _async_ping, spec)


async def _async_ping(spec: dict[str, Any]) -> dict[str, Any]:
    import anyio

    import aeron_async

    async with aeron_async.connect(spec["aeron_dir"]) as client:
        pub = await client.add_publication(spec["channel"], spec["stream"])
        sub = await client.add_subscription(spec["channel"], spec["stream"] + 1)
        with anyio.fail_after(30):
            while not (pub.is_connected and sub.is_connected):
                await anyio.sleep(0.001)
        emit("READY")
        payload, clock = ping_setup(spec)
        offer, receive = pub.offer, sub.receive
        now, done = time.perf_counter_ns, clock.done
        while True:
            t0 = now()
            await offer(payload)
            reply = await receive()
            if done(t0, now()):
                break
        _check_size(reply.data, spec["size"])
        return clock.summary()
