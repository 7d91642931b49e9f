"""The async facade: the same test bodies on asyncio, asyncio with uvloop, and trio.

Covers awaiting offers through back pressure without spinning, async iteration and batches, idle
cost, cancellation safety with exact message counts, per-image views, anyio exception mapping, a
lost driver, and resource release when `async with` ends.
"""

from __future__ import annotations

import os
import random
import re
import signal
import socket
import struct
import subprocess
import time
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import anyio
import anyio.lowlevel
import pytest

import aeron_async
from aeron_async._ffi import lib
from aeron_async.monitor import CncReader
from conftest import (
    PYTHON, TEST_DRIVER_SETTINGS, logs_settled, new_aeron_dir, python_env, record_broken, start_driver, stop_driver)

pytestmark = pytest.mark.anyio

CHANNEL = "aeron:ipc"


def udp_channel() -> str:
    """A unicast UDP channel on a free loopback port, with the IPC test term length."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"aeron:udp?endpoint=127.0.0.1:{port}|term-length=1m"


@pytest.fixture(params=["ipc", "udp"])
def channel(request: pytest.FixtureRequest) -> str:
    """The same test body over IPC and over UDP unicast on loopback."""
    return CHANNEL if request.param == "ipc" else udp_channel()


def seq(i: int, size: int = 8) -> bytes:
    return struct.pack("<q", i) + bytes(size - 8)


def unseq(data: bytes) -> int:
    return struct.unpack_from("<q", data)[0]


@pytest.fixture
async def client(aeron_dir: str) -> AsyncIterator[aeron_async.AsyncAeron]:
    context = aeron_async.DriverContext(**TEST_DRIVER_SETTINGS)
    async with aeron_async.connect(aeron_dir, embedded_driver=True, driver_context=context, driver_timeout=5.0) as c:
        yield c


def highest_receive_position(aeron_dir: str, session_id: int) -> int:
    """The rcv-hwm counter of the image of `session_id` (0 while there is none)."""
    with CncReader(aeron_dir) as reader:
        return max((c.value for c in reader.counters()
                    if c.label.startswith("rcv-hwm:") and f" {session_id} " in f"{c.label} "), default=0)


async def connected_pair(client: aeron_async.AsyncAeron, stream_id: int = 10, channel: str = CHANNEL):
    sub = await client.add_subscription(channel, stream_id)
    pub = await client.add_publication(channel, stream_id)
    with anyio.fail_after(5):
        while not pub.is_connected:
            await anyio.sleep(0.001)
    return sub, pub


class Arrival:
    """One message received from a subscription in a task of its own: its data (in `got`) and when
    it arrived (`at`, time.monotonic())."""

    def __init__(self, sub: Any) -> None:
        self.sub = sub
        self.got: list[bytes] = []
        self.at = 0.0

    async def receive(self) -> None:
        self.got.append((await self.sub.receive()).data)
        self.at = time.monotonic()


def cpu_seconds() -> float:
    """CPU time of this whole process: every Python and native thread (driver and client included)."""
    return time.process_time()


# ---- basics ----


async def test_each_variant_runs_on_the_event_loop_it_names(anyio_backend: tuple[str, dict[str, Any]],
                                                             request: pytest.FixtureRequest) -> None:
    """The asyncio, uvloop and trio variants of these tests really run on asyncio's own loop, on
    uvloop and on trio."""
    import asyncio

    import trio
    import uvloop

    variant = request.node.callspec.id
    native = anyio.lowlevel.current_token().native_token  # the running loop, or trio's token
    if variant == "trio":
        assert isinstance(native, trio.lowlevel.TrioToken), type(native)
        return
    assert isinstance(native, asyncio.AbstractEventLoop), type(native)
    loop = asyncio.get_running_loop()
    assert loop is native
    if variant == "uvloop":
        assert isinstance(loop, uvloop.Loop), type(loop)
    else:
        assert variant == "asyncio"
        assert not isinstance(loop, uvloop.Loop) and isinstance(loop, asyncio.BaseEventLoop), type(loop)


async def test_offer_and_async_for_deliver_whole_messages_with_their_coordinates(client, channel: str) -> None:
    sub, pub = await connected_pair(client, channel=channel)
    async with sub, pub:
        sizes = [0, 1, 31, 32, 1000, pub.publication.max_payload_length + 1, pub.max_message_length]
        positions = []
        for i, size in enumerate(sizes):
            data = bytes((i + j) % 251 for j in range(size))
            positions.append(await pub.offer(data, reserved_value=i * 7))
        got = []
        with anyio.fail_after(10):
            async for message in sub:
                got.append(message)
                if len(got) == len(sizes):
                    break
        for i, (message, size, position) in enumerate(zip(got, sizes, positions)):
            assert message.data == bytes((i + j) % 251 for j in range(size))
            assert isinstance(message.data, bytes)
            assert message.position == position
            assert message.session_id == pub.session_id
            assert message.stream_id == 10
            assert message.reserved_value == i * 7


async def test_batches_pay_one_await_per_batch_and_keep_order(client, channel: str) -> None:
    if channel.startswith("aeron:udp"):
        channel += "|rcv-wnd=512k|so-rcvbuf=512k"  # room in the receiver window for all 5000 frames (320 KiB)
    sub, pub = await connected_pair(client, channel=channel)
    async with sub, pub:
        for i in range(5000):
            await pub.offer(seq(i))
        if channel.startswith("aeron:udp"):
            # all of it in the image first (the receiver's high-water mark at the publication's
            # position), so that batch sizes depend on the facade alone, not on datagram timing
            with anyio.fail_after(10):
                while highest_receive_position(client.aeron_dir, pub.session_id) < pub.position:
                    await anyio.sleep(0.005)
        received: list[int] = []
        batch_sizes = []
        with anyio.fail_after(10):
            async for batch in sub.batches(max_messages=1000):
                batch_sizes.append(len(batch))
                received.extend(unseq(m.data) for m in batch)
                if len(received) >= 5000:
                    break
        assert received == list(range(5000))
        assert max(batch_sizes) == 1000  # whole batches, not one message per await
        assert len(batch_sizes) <= 10


async def test_send_stream_interface_and_offer_nowait(client, channel: str) -> None:
    pub = await client.add_publication(channel, 11)
    assert pub.offer_nowait(b"nobody listens") == aeron_async.NOT_CONNECTED
    sub = await client.add_subscription(channel, 11)
    with anyio.fail_after(5):
        while not pub.is_connected:
            await anyio.sleep(0.001)
    await pub.send(b"via send")
    assert pub.offer_nowait(b"nowait") > 0
    with anyio.fail_after(5):
        assert (await sub.receive()).data == b"via send"
    assert sub.receive_nowait().data == b"nowait"
    with pytest.raises(anyio.WouldBlock):
        sub.receive_nowait()
    with pytest.raises(aeron_async.MessageTooLongError, match="max message length"):
        await pub.offer(bytes(pub.max_message_length + 1))
    await pub.aclose()
    await sub.aclose()


# ---- back pressure and idle cost ----


async def test_back_pressure_suspends_publisher_without_spinning(client, channel: str) -> None:
    """200,000 messages into a subscriber that stops for 2 s, then consumes slowly: the suspended
    publisher costs under 10% of a core, and every message arrives once, in order."""
    total = 200_000
    sub, pub = await connected_pair(client, channel=channel)
    offered = 0
    done = anyio.Event()

    async def produce() -> None:
        nonlocal offered
        for i in range(total):
            await pub.offer(seq(i, 16))
            offered = i + 1
        done.set()

    received = 0
    async with sub, pub, anyio.create_task_group() as tg:
        tg.start_soon(produce)
        with anyio.fail_after(10):
            while True:  # wait until the publisher is stuck on back pressure
                before = offered
                await anyio.sleep(0.05)
                if offered == before and offered < total:
                    break
        stuck_at = offered
        cpu0, wall0 = cpu_seconds(), time.monotonic()
        await anyio.sleep(2.0)
        cpu, wall = cpu_seconds() - cpu0, time.monotonic() - wall0
        assert offered == stuck_at, "the publisher moved while nobody consumed"
        print(f"suspended at {stuck_at:,} messages: {100 * cpu / wall:.2f}% of a core over {wall:.1f} s")
        assert cpu / wall < 0.10, f"suspended publisher used {100 * cpu / wall:.1f}% of a core"
        with anyio.fail_after(120):
            async for batch in sub.batches(max_messages=2000):
                for message in batch:
                    assert unseq(message.data) == received
                    received += 1
                if received == total:
                    break
                await anyio.sleep(0.001)  # a slow consumer
            await done.wait()
    assert received == total == offered


async def test_idle_subscriber_costs_little_and_wakes_on_a_message(aeron_dir: str, channel: str) -> None:
    """An embedded driver with default settings (backoff idling) and a subscriber awaiting a
    message for 5 s: under 2% of a core for the whole process, over IPC and over UDP (the driver
    thread sleeps deeply on its doorbell, the log doorbells and its sockets; heartbeats and status
    messages still flow); then a message wakes it."""
    async with aeron_async.connect(aeron_dir, embedded_driver=True, dir_delete_on_shutdown=True) as c:
        sub = await c.add_subscription(channel, 12)
        pub = await c.add_publication(channel, 12)
        await pub.offer(b"warm-up")
        with anyio.fail_after(5):
            assert (await sub.receive()).data == b"warm-up"
        # the conductors populate a new log's first pages in the background (a quarter of a term
        # ahead of the stream): one-off work when a stream appears, over before idling starts
        with anyio.fail_after(30):
            while not await anyio.to_thread.run_sync(logs_settled):
                pass
        arrival = Arrival(sub)
        got = arrival.got
        async with anyio.create_task_group() as tg:
            tg.start_soon(arrival.receive)
            cpu0, wall0 = cpu_seconds(), time.monotonic()
            await anyio.sleep(5.0)
            cpu, wall = cpu_seconds() - cpu0, time.monotonic() - wall0
            assert got == []
            sent_at = time.monotonic()
            await pub.offer(b"wake up")
            with anyio.fail_after(5):
                while not got:
                    await anyio.sleep(0.001)
        assert got == [b"wake up"]
        print(f"idle: {100 * cpu / wall:.2f}% of a core over {wall:.1f} s; woke {1000 * (arrival.at - sent_at):.1f} ms "
              "after the offer")
        if os.environ.get("AERON_ASYNC_UNDER_SANITIZERS") != "1":  # ASan+UBSan builds cost several times more a wake
            assert cpu / wall < 0.02, f"idle subscriber + driver used {100 * cpu / wall:.2f}% of a core"


# ---- how waiters are woken: the conductor's doorbell set and its wake spin ----


async def echo_round_trips(client: aeron_async.AsyncAeron, count: int, watch: Any = None, stream_id: int = 21) -> list[Any]:
    """`count` request/response round trips between two tasks of this process over IPC, on streams
    `stream_id` and the next (each side awaits, so every message wakes a parked waiter); `watch()`
    is sampled after each one."""
    requests, request_pub = await connected_pair(client, stream_id=stream_id)
    responses, response_pub = await connected_pair(client, stream_id=stream_id + 1)
    samples = []
    async with requests, request_pub, responses, response_pub, anyio.create_task_group() as tg:

        async def echo() -> None:
            for _ in range(count):
                await response_pub.offer((await requests.receive()).data)

        tg.start_soon(echo)
        with anyio.fail_after(30):
            for i in range(count):
                await request_pub.offer(seq(i))
                assert unseq((await responses.receive()).data) == i
                if watch is not None:
                    samples.append(watch())
    return samples


async def test_wake_spin_stays_for_round_trips_shrinks_for_sparse_messages_and_grows_back(aeron_dir: str) -> None:
    """After waking a waiter the client conductor stays awake for an adaptive window: request/response
    keeps it open, sparse wake-ups shrink it to nothing (so they cost no spinning), round trips grow
    it again, and wake_spin=0 turns it off."""
    context = aeron_async.DriverContext(**TEST_DRIVER_SETTINGS)
    # a 2 ms maximum: round trips under the sanitizers on two busy cores can take longer than 0.5 ms,
    # and six in a row that do shrink a 0.5 ms window to nothing, as they should (seen once so)
    async with aeron_async.connect(aeron_dir, embedded_driver=True, driver_context=context, driver_timeout=5.0,
                                   wake_spin=0.002) as c:
        window = partial(lib.aa_client_wake_spin_window_ns, c.client._ptr)
        samples = await echo_round_trips(c, 300, window)
        print(f"wake spin window during round trips: {min(samples) / 1000:.0f}-{max(samples) / 1000:.0f} us")
        assert max(samples) == 2_000_000 and min(samples) > 0
        sub, pub = await connected_pair(c, stream_id=23)
        async with sub, pub:
            for i in range(12):  # 30 ms apart, longer than the longest window: each halves it (8 reach 0)
                async with anyio.create_task_group() as tg:
                    tg.start_soon(sub.receive)
                    await anyio.sleep(0.03)
                    await pub.offer(seq(i))
            assert window() == 0, f"a {window()} ns window is left after sparse wake-ups"
        samples = await echo_round_trips(c, 300, window, stream_id=25)
        print(f"after sparse wake-ups, round trips grow it back to {samples[-1] / 1000:.0f} us")
        assert samples[-1] > 0
    async with aeron_async.connect(aeron_dir, embedded_driver=True, driver_context=context, driver_timeout=5.0,
                                   wake_spin=0) as c:
        samples = await echo_round_trips(c, 100, partial(lib.aa_client_wake_spin_window_ns, c.client._ptr))
        assert set(samples) == {0}


@pytest.mark.parametrize("wake_spin", [-1e-6, 0.5, "1ms", True])
async def test_wake_spin_out_of_range_is_refused_with_the_range(aeron_dir: str, wake_spin: Any) -> None:
    with pytest.raises(ValueError, match=r"wake_spin=.*from 0 \(off\) to 0\.01"):
        aeron_async.connect(aeron_dir, embedded_driver=True, wake_spin=wake_spin)
    with pytest.raises(ValueError, match=r"wake_spin=.*from 0 \(off\) to 0\.01"):
        aeron_async.Aeron.connect(aeron_dir, wake_spin=wake_spin)


async def test_waiters_are_woken_past_the_doorbell_set_capacity(client) -> None:
    """A subscription with 130 images is more logs than one futex_waitv takes (127 and the wake
    word): the conductor says it no longer watches every doorbell, parking wakes it instead (while the
    parked waiters' logs exceed the set it checks them every millisecond), and a waiting receiver gets
    each message within a few milliseconds rather than at the 16 ms safety net; a view of one image
    waits on that image's doorbell; once the publications are gone it watches every doorbell again."""
    native = client.client._ptr
    channel = "aeron:ipc?term-length=64k"
    sub = await client.add_subscription(channel, 31)
    pubs = [await client.add_exclusive_publication(channel, 31) for _ in range(130)]
    async with sub:
        with anyio.fail_after(10):
            while len(sub.subscription.images) < 130 or lib.aa_client_doorbells_watched(native):
                await anyio.sleep(0.005)
        latencies = []
        for i, pub in enumerate(pubs[::13]):
            arrival = Arrival(sub)
            with anyio.fail_after(5):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(arrival.receive)
                    await anyio.sleep(0.002)  # parked by now
                    sent_at = time.monotonic()
                    await pub.offer(seq(i))
            latencies.append(arrival.at - sent_at)
            assert arrival.got == [seq(i)]
        latencies.sort()
        print(f"past the doorbell set capacity: woken in {1000 * latencies[0]:.2f}-{1000 * latencies[-1]:.2f} ms "
              f"(median {1000 * latencies[len(latencies) // 2]:.2f} ms)")
        # a park that did not wake the conductor would leave it asleep for up to 16 ms
        if os.environ.get("AERON_ASYNC_UNDER_SANITIZERS") != "1":  # ASan+UBSan builds are several times slower
            assert latencies[-1] < 0.010, "woken by the 16 ms safety net, not by parking"
        # one image's view waiting: its log fits the set, the other 129 do not
        pub = pubs[7]
        view = sub.image_view(next(image for image in sub.subscription.images if image.session_id == pub.session_id))
        got = []
        async with anyio.create_task_group() as tg:

            async def receive_view() -> None:
                got.append((await view.receive()).data)

            tg.start_soon(receive_view)
            await anyio.sleep(0.002)
            await pub.offer(b"to the view")
        assert got == [b"to the view"] and not lib.aa_client_doorbells_watched(native)
        for pub in pubs:
            await pub.aclose()
        with anyio.fail_after(10):
            while not lib.aa_client_doorbells_watched(native):
                await anyio.sleep(0.005)


# ---- cancellation ----


async def test_cancelled_offer_publishes_nothing(client, channel: str) -> None:
    sub, pub = await connected_pair(client, channel=channel)
    async with sub, pub:
        # fill the publication until its limit stops moving (over UDP the driver's sender and the
        # receiver's status messages move it on for a while after the first refusal)
        accepted = 0
        with anyio.fail_after(10):
            while True:
                before = accepted
                while pub.offer_nowait(seq(accepted)) > 0:
                    accepted += 1
                if accepted > 0 and accepted == before:
                    break
                await anyio.sleep(0.2)
        for _ in range(3):
            with anyio.move_on_after(0.1) as scope:
                await pub.offer(seq(-1))
            assert scope.cancelled_caught
        received = []
        with anyio.fail_after(10):
            while len(received) < accepted:
                received.extend(unseq(m.data) for m in await sub.receive_batch())
        assert received == list(range(accepted))
        with pytest.raises(anyio.WouldBlock):
            sub.receive_nowait()
        await pub.offer(seq(accepted))
        with anyio.fail_after(5):
            assert unseq((await sub.receive()).data) == accepted

    lonely = await client.add_publication(channel, 13)
    with anyio.move_on_after(0.1) as scope:
        await lonely.offer(b"not connected")
    assert scope.cancelled_caught
    late = await client.add_subscription(channel, 13)
    with anyio.fail_after(5):
        while not lonely.is_connected:
            await anyio.sleep(0.001)
    await lonely.offer(b"after")
    with anyio.fail_after(5):
        assert (await late.receive()).data == b"after"
    with pytest.raises(anyio.WouldBlock):
        late.receive_nowait()


async def test_cancelled_receive_loses_no_message(client, channel: str) -> None:
    sub, pub = await connected_pair(client, channel=channel)
    total = 2000
    rng = random.Random(7)
    received: list[int] = []
    cancellations = 0

    async def produce() -> None:
        for i in range(total):
            await pub.offer(seq(i))
            if rng.random() < 0.3:
                await anyio.sleep(rng.random() * 0.0005)

    async with sub, pub, anyio.create_task_group() as tg:
        tg.start_soon(produce)
        with anyio.fail_after(60):
            while len(received) < total:
                with anyio.move_on_after(rng.random() * 0.0004) as scope:
                    message = await sub.receive()
                    received.append(unseq(message.data))
                if scope.cancelled_caught:
                    cancellations += 1
    assert received == list(range(total))
    assert cancellations > 0


async def test_cancelled_async_for_leaves_subscription_usable(client, channel: str) -> None:
    sub, pub = await connected_pair(client, channel=channel)
    async with sub, pub:
        for i in range(100):
            await pub.offer(seq(i))
        received: list[int] = []
        with anyio.move_on_after(5) as scope:
            async for message in sub:
                received.append(unseq(message.data))
                if len(received) == 30:
                    scope.cancel()
                    await anyio.lowlevel.checkpoint()
        assert scope.cancelled_caught
        assert received == list(range(30))
        with anyio.move_on_after(0.2) as scope:  # cancelled while waiting for more
            async for message in sub:
                received.append(unseq(message.data))
        assert scope.cancelled_caught
        assert received == list(range(100))
        for i in range(100, 150):
            await pub.offer(seq(i))
        with anyio.fail_after(5):
            async for message in sub:
                received.append(unseq(message.data))
                if len(received) == 150:
                    break
        assert received == list(range(150))


# ---- per-image views ----


async def test_image_views_separate_publishers_and_end_with_end_of_stream(client, channel: str) -> None:
    sub = await client.add_subscription(channel, 14)
    pubs = [await client.add_exclusive_publication(channel, 14) for _ in range(2)]
    with anyio.fail_after(5):
        while len(sub.images) < 2:
            await anyio.sleep(0.001)
    views = {view.session_id: view for view in await sub.image_views()}
    assert set(views) == {p.session_id for p in pubs}
    for i in range(50):
        for p in pubs:
            await p.offer(struct.pack("<ii", p.session_id, i))
    await pubs[0].aclose()
    got: dict[int, list[int]] = {}

    async def read(view: aeron_async.AsyncImageView, count: int | None) -> None:
        items = got.setdefault(view.session_id, [])
        async for message in view:
            session_id, i = struct.unpack("<ii", message.data)
            assert session_id == view.session_id == message.session_id
            items.append(i)
            if count is not None and len(items) == count:
                break

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(read, views[pubs[0].session_id], None)  # ends at end of stream
            tg.start_soon(read, views[pubs[1].session_id], 50)
    assert got == {pubs[0].session_id: list(range(50)), pubs[1].session_id: list(range(50))}
    await pubs[1].aclose()
    await sub.aclose()


# ---- conditions as anyio exceptions ----


async def test_use_after_close_and_busy_receivers(client, channel: str) -> None:
    sub, pub = await connected_pair(client, channel=channel)
    async with anyio.create_task_group() as tg:
        tg.start_soon(sub.receive)
        await anyio.sleep(0.05)
        with pytest.raises(anyio.BusyResourceError):
            await sub.receive()
        await pub.offer(b"for the first receiver")
    await pub.aclose()
    await sub.aclose()
    with pytest.raises(anyio.ClosedResourceError):
        await pub.offer(b"closed")
    with pytest.raises(anyio.ClosedResourceError):
        pub.offer_nowait(b"closed")
    with pytest.raises(anyio.ClosedResourceError):
        await sub.receive()
    async for _ in sub:  # iteration over a closed subscription ends at once
        raise AssertionError("a closed subscription yielded a message")


async def test_close_wakes_waiting_receiver_and_offer(client, channel: str) -> None:
    sub, pub = await connected_pair(client, channel=channel)
    lonely = await client.add_publication(channel, 15)
    outcomes: list[str] = []

    async def iterate() -> None:
        async for _ in sub:
            outcomes.append("message")
        outcomes.append("iteration ended")

    async def offer() -> None:
        try:
            await lonely.offer(b"never connected")
        except anyio.ClosedResourceError:
            outcomes.append("offer closed")

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(iterate)
            tg.start_soon(offer)
            await anyio.sleep(0.1)
            await sub.aclose()
            await lonely.aclose()
    assert sorted(outcomes) == ["iteration ended", "offer closed"]
    await pub.aclose()


async def test_lost_driver_breaks_pending_receive_and_offer(channel: str) -> None:
    """A killed driver makes a pending receive and a pending (not connected) offer raise
    BrokenResourceError within the driver timeout of the kill, over IPC and over UDP."""
    aeron_dir = new_aeron_dir()
    proc = start_driver(aeron_dir, "-o", "AERON_CLIENT_LIVENESS_TIMEOUT=2s")
    driver_timeout = 1.0
    outcomes: dict[str, tuple[float, str]] = {}
    try:
        async with aeron_async.connect(aeron_dir, driver_timeout=driver_timeout) as c:
            sub = await c.add_subscription(channel, 16)
            lonely = await c.add_publication(channel, 17)
            async with anyio.create_task_group() as tg:
                tg.start_soon(record_broken, outcomes, "receive", sub.receive)
                tg.start_soon(record_broken, outcomes, "offer", partial(lonely.offer, b"nobody"))
                await anyio.sleep(0.2)
                assert outcomes == {}
                killed_at = time.monotonic()  # from before the kill: the most the waiters can be charged
                proc.send_signal(signal.SIGKILL)
                proc.wait(timeout=5)
                with anyio.fail_after(driver_timeout + 5):
                    while len(outcomes) < 2:
                        await anyio.sleep(0.01)
            for what, (at, message) in outcomes.items():
                print(f"{what} broke {at - killed_at:.3f} s after the kill (driver timeout {driver_timeout} s)")
                assert at - killed_at <= driver_timeout, f"{what} broke {at - killed_at:.3f} s after the kill"
                assert "media driver" in message
            with pytest.raises(anyio.BrokenResourceError):
                await lonely.offer(b"later")
            with pytest.raises(anyio.BrokenResourceError):
                await sub.receive()
    finally:
        if proc.poll() is None:
            proc.kill()
        import shutil

        shutil.rmtree(aeron_dir, ignore_errors=True)


# What `aeron-async stat` lists for the resources of clients: label prefix -> what it is.
IPC_RESOURCES = {"client-heartbeat": "client", "pub-lmt": "publication", "pub-pos": "publication",
                 "sub-pos": "subscription on an image", "app-counter": "a counter the client added"}
UDP_RESOURCES = dict(IPC_RESOURCES, **{
    "snd-channel": "send channel endpoint", "rcv-channel": "receive channel endpoint", "snd-pos": "network publication",
    "snd-lmt": "network publication", "snd-bpe": "network publication", "rcv-hwm": "image", "rcv-pos": "image",
    "snd-local-sockaddr": "send channel endpoint", "rcv-local-sockaddr": "receive channel endpoint"})


def stat_resources(aeron_dir: str) -> list[str]:
    """The labels of every client resource counter that `aeron-async stat` shows for the driver."""
    out = subprocess.run([PYTHON, "-m", "aeron_async", "stat", "--aeron-dir", aeron_dir, "--count", "1"],
                         env=python_env(), capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    labels = [m.group(1) for m in re.finditer(r"^\s*\d+:\s+-?[\d,]+ - (.*)$", out.stdout, re.MULTILINE)]
    assert any(label.startswith("Bytes sent") for label in labels), out.stdout  # it did read the counters
    return [label for label in labels if label.split(":")[0].split(" ")[0] in UDP_RESOURCES]


async def test_leaving_async_with_releases_every_resource(channel: str) -> None:
    """While in use, `aeron-async stat` on the driver's directory shows the client, its publications,
    subscriptions, images and (over UDP) channel endpoints; after `async with` ends it shows none,
    and the log buffer files are gone."""
    aeron_dir = new_aeron_dir()
    proc = start_driver(aeron_dir, "-o", "AERON_CLIENT_LIVENESS_TIMEOUT=2s", "-o", "AERON_TIMER_INTERVAL=50ms",
                        "-o", "AERON_PUBLICATION_LINGER_TIMEOUT=200ms")
    expected = IPC_RESOURCES if channel == CHANNEL else UDP_RESOURCES
    try:
        async with aeron_async.connect(aeron_dir, driver_timeout=5.0) as c:
            sub = await c.add_subscription(channel, 18)
            await c.add_publication(channel, 18)
            exclusive = await c.add_exclusive_publication(channel, 18)
            await c.add_counter(1001, b"", "app-counter: freed with its client")
            await exclusive.offer(b"x")
            with anyio.fail_after(5):
                await sub.receive()
                while len(sub.images) < 2:
                    await anyio.sleep(0.01)
            in_use = await anyio.to_thread.run_sync(stat_resources, aeron_dir)
            assert {label.split(":")[0].split(" ")[0] for label in in_use} == set(expected), in_use
            assert len([label for label in in_use if label.startswith("sub-pos")]) == 2  # one per image
        with anyio.fail_after(15):
            while left := await anyio.to_thread.run_sync(stat_resources, aeron_dir):
                await anyio.sleep(0.1)
        assert left == []
        for kind in ("publications", "images"):
            assert os.listdir(os.path.join(aeron_dir, kind)) == [], f"log buffers left in {kind}/"
    finally:
        out = stop_driver(proc)
    assert proc.returncode == 0, out


async def test_embedded_driver_is_owned_by_the_async_with(aeron_dir: str) -> None:
    async with aeron_async.connect(aeron_dir, embedded_driver=True, dir_delete_on_shutdown=True) as c:
        assert c.driver is not None and aeron_async.is_driver_active(aeron_dir)
        async with aeron_async.connect(aeron_dir, embedded_driver=True) as second:
            assert second.driver is None  # a live driver is there: joined, not launched
            assert second.client_id != c.client_id
    assert c.driver.is_closed
    assert not os.path.exists(aeron_dir)
    with pytest.raises(aeron_async.DriverNotFoundError, match="driver"):
        async with aeron_async.connect(aeron_dir, driver_timeout=0.5):
            pass
    with pytest.raises(TypeError, match="embedded_driver=True"):
        aeron_async.connect(aeron_dir, threading_mode="SHARED")
