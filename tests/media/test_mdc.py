"""Multi-destination-cast (reference 7.3): dynamic control mode (receivers become destinations with
their first status message and are dropped after the destination timeout), manual control mode
(add_destination / remove_destination, sync and async), multi-destination subscriptions (one stream
over two channels, each message delivered once), and the errors for bad input. Drivers talk
over loopback on free ports; one receiver's driver runs as its own process so that it can be killed."""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import time
from collections.abc import Iterator

import anyio
import pytest

import aeron_async
from conftest import TEST_DRIVER_SETTINGS, free_udp_port, new_aeron_dir, start_driver, wait_for

STREAM = 31
DESTINATION_TIMEOUT = 1.0
SETTINGS = dict(TEST_DRIVER_SETTINGS, term_buffer_length="1m", mdc_destination_timeout=DESTINATION_TIMEOUT)


class Node:
    """A driver (embedded in this process, or a standalone process) and a client of it."""

    def __init__(self, process: bool = False) -> None:
        self.aeron_dir = new_aeron_dir()
        self.proc = start_driver(self.aeron_dir, "-o", "AERON_TERM_BUFFER_LENGTH=1m") if process else None
        self.driver = None if process else aeron_async.MediaDriver.launch(aeron_dir=self.aeron_dir, **SETTINGS)
        self.client = aeron_async.Aeron.connect(self.aeron_dir, driver_timeout=5.0)

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        with contextlib.suppress(aeron_async.AeronError):  # a killed driver's client still unmaps its logs
            self.client.close()
        if self.driver is not None:
            self.driver.close()
        shutil.rmtree(self.aeron_dir, ignore_errors=True)


@pytest.fixture
def nodes() -> Iterator[list[Node]]:
    made: list[Node] = []
    yield made
    for node in reversed(made):
        node.close()


class Receiver:
    """A subscription and the sequence numbers it received, in order."""

    def __init__(self, node: Node, channel: str) -> None:
        self.node = node
        self.sub = node.client.add_subscription(channel, STREAM)
        self.seqs: list[int] = []

    def poll(self) -> None:
        for message in self.sub.poll_messages():
            self.seqs.append(int.from_bytes(message.data[:8], "little"))


class Stream:
    """Offers numbered messages and remembers the stream position each one starts at."""

    def __init__(self, pub: aeron_async.Publication) -> None:
        self.pub = pub
        self.starts: list[int] = []
        self.position = 0

    def publish(self, count: int, receivers: list[Receiver], pause: float = 0.0) -> None:
        for _ in range(count):
            seq = len(self.starts)
            data = seq.to_bytes(8, "little") + bytes(56)
            deadline = time.monotonic() + 10
            while (result := self.pub.offer(data)) < 0:
                assert time.monotonic() < deadline, f"message {seq} not accepted ({result})"
                for r in receivers:
                    r.poll()
            self.starts.append(self.position)
            self.position = result
            for r in receivers:
                r.poll()
            if pause:
                time.sleep(pause)

    def settle(self, receivers: list[Receiver], last: int) -> None:
        wait_for(lambda: [r.poll() for r in receivers] and all(r.seqs and r.seqs[-1] == last for r in receivers),
                 timeout=10, what=f"every receiver to get message {last}")


def assert_from_join_position(receiver: Receiver, stream: Stream, last: int) -> int:
    """The receiver got every message from the one at its image's join position to `last`, in order."""
    (image,) = receiver.sub.images
    first = stream.starts.index(image.join_position)
    assert receiver.seqs == list(range(first, last + 1))
    return first


def test_dynamic_receivers_join_at_their_positions_and_a_killed_one_is_dropped_after_the_timeout(
        nodes: list[Node]) -> None:
    publisher = Node()
    nodes.append(publisher)
    control = free_udp_port()
    pub = publisher.client.add_publication(f"aeron:udp?control=127.0.0.1:{control}|control-mode=dynamic", STREAM)
    stream = Stream(pub)
    receivers: list[Receiver] = []
    endpoints: list[int] = []
    for index in range(3):
        node = Node(process=index == 2)   # the third receiver's driver is a process of its own, to be killed
        nodes.append(node)
        endpoints.append(free_udp_port())
        receiver = Receiver(node, f"aeron:udp?endpoint=127.0.0.1:{endpoints[-1]}|control=127.0.0.1:{control}")
        receivers.append(receiver)
        wait_for(lambda: receiver.sub.images and pub.is_connected, timeout=10, what=f"receiver {index} to join")
        stream.publish(200, receivers, pause=0.0002)
    stream.settle(receivers, 599)
    assert receivers[0].seqs == list(range(600))
    firsts = [assert_from_join_position(r, stream, 599) for r in receivers]
    assert firsts[0] == 0 and 0 < firsts[1] <= 200 < firsts[2] <= 400, firsts

    # The third receiver's driver dies without a word. Its port is free again: a plain socket there
    # sees what the publication still sends to the destination, until the destination times out.
    assert receivers[2].node.proc is not None
    receivers[2].node.proc.send_signal(signal.SIGKILL)
    receivers[2].node.proc.wait(10)
    killed = time.monotonic()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", endpoints[2]))
        sock.setblocking(False)
        arrivals: list[float] = []
        live = receivers[:2]
        while time.monotonic() < killed + 2 * DESTINATION_TIMEOUT + 1.0:
            stream.publish(20, live)
            try:
                while True:
                    sock.recv(65536)
                    arrivals.append(time.monotonic())
            except BlockingIOError:
                pass
            time.sleep(0.005)
    last = len(stream.starts) - 1
    stream.settle(live, last)
    assert receivers[0].seqs == list(range(last + 1))
    assert receivers[1].seqs == list(range(firsts[1], last + 1))
    assert arrivals, "the killed receiver's address was never sent to: it was dropped too early"
    # its last status message came at most one SM interval (200 ms) before the kill
    assert arrivals[-1] < killed + DESTINATION_TIMEOUT + 0.5, (
        f"still sent to {arrivals[-1] - killed:.2f} s after the kill (destination timeout {DESTINATION_TIMEOUT} s)")
    assert pub.is_connected


def test_dynamic_mdc_with_min_flow_control_is_held_to_its_slowest_receiver(nodes: list[Node]) -> None:
    """MDC has group semantics: fc=min makes a receiver that stops reading hold the publisher back,
    while under the default (max) the other would pace it."""
    publisher, node1, node2 = Node(), Node(), Node()
    nodes.extend([publisher, node1, node2])
    control = free_udp_port()
    pub = publisher.client.add_publication(
        f"aeron:udp?control=127.0.0.1:{control}|control-mode=dynamic|fc=min|term-length=64k", STREAM)
    fast, slow = (Receiver(node, f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}|control=127.0.0.1:{control}")
                  for node in (node1, node2))
    wait_for(lambda: fast.sub.images and slow.sub.images and pub.is_connected, timeout=10, what="both receivers")
    sent = 0
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and sent < 1000:   # the slow receiver reads nothing: the publisher stops
        if pub.offer(sent.to_bytes(8, "little") + bytes(1000)) > 0:
            sent += 1
            deadline = time.monotonic() + 1.0   # until nothing has gone in for a second
        fast.poll()
    # the log takes a publication window (32 KiB) beyond what was sent; the sender sends only one
    # receiver window (32 KiB) beyond the slow receiver, so the fast one gets about half of it
    assert 0 < sent < 64
    assert 0 < len(fast.seqs) < sent, f"the fast receiver got {len(fast.seqs)} of {sent}: not held by the slow one"
    for _ in range(200):                        # the slow one reads again: both get everything
        seq = sent
        while pub.offer(seq.to_bytes(8, "little") + bytes(1000)) < 0:
            fast.poll()
            slow.poll()
        sent += 1
        fast.poll()
        slow.poll()
    Stream(pub).settle([fast, slow], sent - 1)
    assert fast.seqs == list(range(sent)) and slow.seqs == list(range(sent))


def test_manual_destinations_added_and_removed_while_streaming(nodes: list[Node]) -> None:
    publisher, node1, node2 = Node(), Node(), Node()
    nodes.extend([publisher, node1, node2])
    pub = publisher.client.add_exclusive_publication("aeron:udp?control-mode=manual", STREAM)
    stream = Stream(pub)
    e1, e2 = free_udp_port(), free_udp_port()
    r1 = Receiver(node1, f"aeron:udp?endpoint=127.0.0.1:{e1}")
    pub.add_destination(f"aeron:udp?endpoint=127.0.0.1:{e1}")
    wait_for(lambda: r1.sub.images and pub.is_connected, timeout=10, what="the first destination to connect")
    stream.publish(200, [r1], pause=0.0002)
    stream.settle([r1], 199)

    r2 = Receiver(node2, f"aeron:udp?endpoint=127.0.0.1:{e2}")
    pub.add_destination(f"aeron:udp?endpoint=127.0.0.1:{e2}")
    both = [r1, r2]
    stream.publish(100, both, pause=0.0002)
    wait_for(lambda: r2.sub.images, timeout=10, what="the added destination to get an image")
    stream.publish(100, both, pause=0.0002)
    stream.settle(both, 399)
    assert r1.seqs == list(range(400))
    first = assert_from_join_position(r2, stream, 399)
    assert 200 <= first < 400

    pub.remove_destination(f"aeron:udp?endpoint=127.0.0.1:{e1}")
    time.sleep(0.05)   # what the sender had in hand when the removal reached it
    removed_at = len(stream.starts)
    stream.publish(200, both, pause=0.0002)
    stream.settle([r2], removed_at + 199)
    time.sleep(0.3)
    r1.poll()
    assert r1.seqs == list(range(removed_at)), "the removed destination still received"
    assert r2.seqs == list(range(first, removed_at + 200))

    # added again, it starts over from where the stream is
    pub.add_destination(f"aeron:udp?endpoint=127.0.0.1:{e1}")
    stream.publish(50, both, pause=0.001)
    stream.settle(both, removed_at + 249)


def test_a_multi_destination_subscription_delivers_each_message_once_whichever_channel_carries_it(
        nodes: list[Node]) -> None:
    publisher, receiving = Node(), Node()
    nodes.extend([publisher, receiving])
    e1, e2 = (f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}" for _ in range(2))
    receiver = Receiver(receiving, "aeron:udp?control-mode=manual")
    receiver.sub.add_destination(e1)
    receiver.sub.add_destination(e2)
    addresses = sorted(e.split("=", 1)[1] for e in (e1, e2))
    assert sorted(receiver.sub.local_socket_addresses) == addresses   # one bound socket per destination
    pub = publisher.client.add_publication("aeron:udp?control-mode=manual", STREAM)
    pub.add_destination(e1)
    pub.add_destination(e2)
    wait_for(lambda: receiver.sub.images and pub.is_connected, timeout=10, what="the subscription to connect")
    stream = Stream(pub)
    stream.publish(300, [receiver], pause=0.0002)        # every frame arrives twice, once per channel
    pub.remove_destination(e1)
    stream.publish(300, [receiver], pause=0.0002)        # over the second channel only
    pub.add_destination(e1)
    time.sleep(0.05)
    pub.remove_destination(e2)
    stream.publish(300, [receiver], pause=0.0002)        # over the first channel only
    receiver.sub.remove_destination(e2)
    assert receiver.sub.local_socket_addresses == [e1.split("=", 1)[1]]
    pub.add_destination(e2)
    stream.publish(300, [receiver], pause=0.0002)        # sent over both, received on the first
    stream.settle([receiver], 1199)
    assert receiver.seqs == list(range(1200))
    assert len(receiver.sub.images) == 1, "one image for the session, whichever channel carries it"


def test_destination_errors_name_the_fix(nodes: list[Node]) -> None:
    node = Node()
    nodes.append(node)
    client = node.client
    control = free_udp_port()
    dynamic = client.add_publication(f"aeron:udp?control=127.0.0.1:{control}|control-mode=dynamic", STREAM)
    with pytest.raises(aeron_async.InvalidChannelError, match="not a manual multi-destination-cast publication.*control-mode=manual"):
        dynamic.add_destination("aeron:udp?endpoint=127.0.0.1:40999")
    unicast = client.add_publication(f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}", STREAM)
    with pytest.raises(aeron_async.InvalidChannelError, match="add the publication with control-mode=manual"):
        unicast.add_destination("aeron:udp?endpoint=127.0.0.1:40999")
    ipc = client.add_publication("aeron:ipc", STREAM)
    with pytest.raises(aeron_async.InvalidChannelError, match="aeron:ipc publication, which has no destinations"):
        ipc.add_destination("aeron:udp?endpoint=127.0.0.1:40999")

    manual = client.add_publication("aeron:udp?control-mode=manual", STREAM)
    for destination, fix in [
        ("aeron:udp?endpoint=127.0.0.1:0", "a port above 0"),
        ("aeron:udp?endpoint=0.0.0.0:40999", "not a wildcard address"),
        ("aeron:ipc", "a destination is aeron:udp\\?endpoint=host:port"),
        ("aeron:udp?control=127.0.0.1:40999", "a destination is aeron:udp\\?endpoint=host:port"),
        ("aeron:udp?endpoint=127.0.0.1:40999|ttl=3", "parameter ttl= is not applied to a destination"),
        ("udp://127.0.0.1:40999", "invalid URI scheme or transport: udp://127.0.0.1:40999"),
        ("aeron:udp?endpoint=224.0.1.1:40999", "destination is a unicast address"),
    ]:
        with pytest.raises(aeron_async.InvalidChannelError, match=fix):
            manual.add_destination(destination)
    manual.add_destination("aeron:udp?endpoint=127.0.0.1:40999")
    with pytest.raises(aeron_async.InvalidChannelError, match="already a destination.*remove it first"):
        manual.add_destination("aeron:udp?endpoint=127.0.0.1:40999")
    with pytest.raises(aeron_async.InvalidChannelError, match="not a destination of publication.*remove only what"):
        manual.remove_destination("aeron:udp?endpoint=127.0.0.1:40998")
    manual.remove_destination("aeron:udp?endpoint=127.0.0.1:40999")
    with pytest.raises(aeron_async.InvalidChannelError, match="not a destination"):
        manual.remove_destination("aeron:udp?endpoint=127.0.0.1:40999")
    manual.close()
    with pytest.raises(aeron_async.ClosedError):
        manual.add_destination("aeron:udp?endpoint=127.0.0.1:40999")

    plain = client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}", STREAM)
    with pytest.raises(aeron_async.InvalidChannelError, match="not a multi-destination subscription.*control-mode=manual"):
        plain.add_destination(f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}")
    mds = client.add_subscription("aeron:udp?control-mode=manual", STREAM)
    port = free_udp_port()
    for destination, fix in [
        ("aeron:ipc", "a subscription's destination is aeron:udp\\?endpoint=host:port"),
        ("aeron:udp?control-mode=manual", "control= and control-mode= are not applied"),
        (f"aeron:udp?endpoint=127.0.0.1:{port}|control=127.0.0.1:{port + 1}", "control= and control-mode= are not applied"),
        (f"aeron:udp?endpoint=127.0.0.1:{port}|bogus=1", "bogus"),
        ("aeron:udp?endpoint=224.0.1.1:40456", "multicast destinations of a multi-destination subscription"),
    ]:
        with pytest.raises(aeron_async.InvalidChannelError, match=fix):
            mds.add_destination(destination)
    mds.add_destination(f"aeron:udp?endpoint=127.0.0.1:{port}")
    with pytest.raises(aeron_async.InvalidChannelError, match="already a destination.*remove it first"):
        mds.add_destination(f"aeron:udp?endpoint=127.0.0.1:{port}")
    with pytest.raises(aeron_async.InvalidChannelError, match="not a destination of subscription"):
        mds.remove_destination(f"aeron:udp?endpoint=127.0.0.1:{port + 1}")
    mds.remove_destination(f"aeron:udp?endpoint=127.0.0.1:{port}")


def test_channels_refused_with_the_fix(nodes: list[Node]) -> None:
    node = Node()
    nodes.append(node)
    client = node.client
    port = free_udp_port()
    for channel, fix, publication in [
        ("aeron:udp?control-mode=dynamic", "control-mode=dynamic needs control=host:port", True),
        (f"aeron:udp?endpoint=127.0.0.1:{port}|control-mode=manual", "remove endpoint=", True),
        (f"aeron:udp?control=127.0.0.1:{port}|control-mode=response",
         "control-mode=response was specified, but no response-correlation-id set", True),
        ("aeron:udp?control=127.0.0.1:0", "requires that either 'endpoint' or 'control-mode' is specified.* Add "
         "endpoint=host:port", True),
        (f"aeron:udp?endpoint=127.0.0.1:{port}|control=127.0.0.1:0", "needs its port", False),
        (f"aeron:udp?endpoint=127.0.0.1:{port}|control-mode=bogus", "control-mode", False),
        (f"aeron:udp?control=127.0.0.1:{port}|control-mode=manual", "receives on the destinations added to it", False),
        ("aeron:udp?endpoint=224.0.1.1:40456|control-mode=manual", "control-mode= .* is for unicast channels", True),
        (f"aeron:udp?control=127.0.0.1:{port}|control-mode=dynamic|ttl=4", "ttl=4 applies to multicast channels only", True),
    ]:
        with pytest.raises(aeron_async.InvalidChannelError, match=fix):
            if publication:
                client.add_publication(channel, STREAM)
            else:
                client.add_subscription(channel, STREAM)
    # multi-destination-cast publications are group publications: max-resend= applies
    client.add_publication("aeron:udp?control-mode=manual|max-resend=4", STREAM).close()


@pytest.mark.anyio
async def test_async_destinations(nodes: list[Node]) -> None:
    publisher, node1 = Node(), Node()
    nodes.extend([publisher, node1])
    e1 = free_udp_port()
    sub = node1.client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{e1}", STREAM)
    async with aeron_async.connect(publisher.aeron_dir, driver_timeout=5.0) as client:
        async with await client.add_publication("aeron:udp?control-mode=manual", STREAM) as pub:
            await pub.add_destination(f"aeron:udp?endpoint=127.0.0.1:{e1}")
            with anyio.fail_after(10):
                await pub.offer(b"over the added destination")
                while not (messages := sub.poll_messages()):
                    await anyio.sleep(0.001)
            assert [m.data for m in messages] == [b"over the added destination"]
            with pytest.raises(aeron_async.InvalidChannelError, match="a destination is aeron:udp"):
                await pub.add_destination("aeron:ipc")
            await pub.remove_destination(f"aeron:udp?endpoint=127.0.0.1:{e1}")
            with pytest.raises(aeron_async.InvalidChannelError, match="not a destination"):
                await pub.remove_destination(f"aeron:udp?endpoint=127.0.0.1:{e1}")
        async with await client.add_subscription("aeron:udp?control-mode=manual", STREAM) as mds:
            e2 = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
            await mds.add_destination(e2)
            with pytest.raises(aeron_async.InvalidChannelError, match="already a destination"):
                await mds.add_destination(e2)
            await mds.remove_destination(e2)
