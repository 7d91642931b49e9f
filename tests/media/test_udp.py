"""Reliable UDP unicast: the wire protocol as seen from a plain socket, and publications and
subscriptions between drivers over loopback (127.0.0.1 only, free ports, every wait bounded)."""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Callable, Iterator

import pytest

import aeron_async
from aeron_async.monitor import CncReader
from conftest import UDP_SETTINGS, counters_by_label, free_udp_port, system_counter, udp_channel, wait_for

# Frame layouts (reference section 1), little-endian, no padding.
DATA = struct.Struct("<ibBhiiiiq")      # frame_length version flags type term_offset session stream term_id reserved
SETUP = struct.Struct("<ibBhiiiiiiii")  # ... term_offset session stream initial_term active_term term_length mtu ttl
SM = struct.Struct("<ibBhiiiiiq")       # ... session stream term_id term_offset window receiver_id
NAK = struct.Struct("<ibBhiiiii")       # ... session stream term_id term_offset length
RTTM = struct.Struct("<ibBhiiqqq")      # ... session stream echo_timestamp reception_delta receiver_id

TYPE_PAD, TYPE_DATA, TYPE_NAK, TYPE_SM, TYPE_SETUP, TYPE_RTTM = 0, 1, 2, 3, 5, 6
def message(seq: int, size: int) -> bytes:
    """seq (8 bytes) + a body derived from seq, `size` bytes in all (at least 8)."""
    body = bytes((seq * 31 + i) & 0xFF for i in range(min(size - 8, 256)))
    body = (body * ((size - 8) // max(1, len(body)) + 1))[: size - 8] if size > 8 else b""
    return seq.to_bytes(8, "little") + body


def mixed_sizes(count: int, seed: int = 7, large_every: int = 50, large: int = 100_000) -> list[int]:
    import random
    rng = random.Random(seed)
    return [rng.randint(1500, large) if i % large_every == 0 else rng.randint(8, 1400) for i in range(count)]


def offer_until(pub: aeron_async.Publication, data: bytes, timeout: float = 20.0,
                while_waiting: Callable[[], object] | None = None) -> int:
    """Offer until accepted; while back-pressured, call while_waiting (a subscriber in the same
    thread must keep reading, or the publisher waits for it forever)."""
    deadline = time.monotonic() + timeout
    while True:
        result = pub.offer(data)
        if result > 0:
            return result
        if result in (aeron_async.MAX_POSITION_EXCEEDED, aeron_async.CLOSED):
            raise AssertionError(f"offer failed: {result}")
        if time.monotonic() > deadline:
            raise AssertionError(f"offer not accepted within {timeout} s (last {result})")
        if while_waiting is not None:
            while_waiting()
        time.sleep(0)


class Collector:
    """Whole messages of one session, checked for order and content as they arrive."""

    def __init__(self, sizes: list[int], session_id: int | None = None, first: int = 0) -> None:
        self.sizes = sizes
        self.session_id = session_id
        self.next = first
        self.assembler = aeron_async.FragmentAssembler(self.on_message)

    def on_message(self, data: memoryview, header: aeron_async.Header) -> None:
        if self.session_id is not None and header.session_id != self.session_id:
            return
        seq = int.from_bytes(data[:8], "little")
        if self.next is None:
            self.next = seq
        assert seq == self.next, f"expected message {self.next}, got {seq}"
        assert bytes(data) == message(seq, self.sizes[seq]), f"message {seq} corrupted"
        self.next += 1

    def poll(self, sub: aeron_async.Subscription) -> int:
        return sub.poll(self.assembler, 64)


def frame_type(datagram: bytes) -> int:
    return struct.unpack_from("<h", datagram, 6)[0]


class FakeReceiver:
    """A plain UDP socket standing in for a remote receiver: it reads what a publication sends and
    answers with hand-made status messages, NAKs and RTT measurements."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.source: tuple[str, int] | None = None

    def recv(self, want: int | None = None, timeout: float = 5.0) -> bytes:
        """The next datagram (of frame type `want`, skipping others)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no datagram of type {want} within {timeout} s")
            self.sock.settimeout(left)
            try:
                data, self.source = self.sock.recvfrom(65536)
            except socket.timeout:
                continue
            if want is None or frame_type(data) == want:
                return data

    def recv_data(self, timeout: float = 5.0) -> bytes:
        """The next DATA datagram that is not a heartbeat."""
        deadline = time.monotonic() + timeout
        while True:
            data = self.recv(TYPE_DATA, max(0.01, deadline - time.monotonic()))
            if not (len(data) == 32 and DATA.unpack(data)[0] == 0):
                return data

    def send(self, datagram: bytes) -> None:
        assert self.source is not None
        self.sock.sendto(datagram, self.source)

    def close(self) -> None:
        self.sock.close()


def status_message(session: int, stream: int, term_id: int, term_offset: int, window: int, flags: int = 0) -> bytes:
    return SM.pack(SM.size, 0, flags, TYPE_SM, session, stream, term_id, term_offset, window, 0x1234)


@pytest.fixture
def fake_receiver() -> Iterator[FakeReceiver]:
    receiver = FakeReceiver()
    yield receiver
    receiver.close()


def test_publication_speaks_the_wire_protocol(udp_client: aeron_async.Aeron, fake_receiver: FakeReceiver) -> None:
    pub = udp_client.add_publication(f"aeron:udp?endpoint=127.0.0.1:{fake_receiver.port}|term-length=64k", 1001)
    session = pub.session_id

    # SETUP every 100 ms until a status message arrives (reference 4.1)
    setups = []
    for _ in range(5):
        setups.append((time.monotonic(), fake_receiver.recv(TYPE_SETUP)))
    length, version, flags, ftype, term_offset, s_session, s_stream, initial_term, active_term, term_length, mtu, ttl = \
        SETUP.unpack(setups[0][1])
    assert (length, version, flags, ftype) == (40, 0, 0, TYPE_SETUP)
    assert (s_session, s_stream, term_offset, term_length, mtu, ttl) == (session, 1001, 0, 64 * 1024, 1408, 0)
    assert active_term == initial_term
    gaps = [b[0] - a[0] for a, b in zip(setups[2:], setups[3:])]  # the first ones may have queued up
    assert all(0.05 < g < 0.5 for g in gaps), gaps
    assert not pub.is_connected
    assert pub.offer(b"early") == aeron_async.NOT_CONNECTED

    fake_receiver.send(status_message(session, 1001, initial_term, 0, 32 * 1024))
    wait_for(lambda: pub.is_connected, timeout=5, what="connected after a status message")

    position = pub.offer(b"hello")
    assert position == 64
    data = fake_receiver.recv_data()
    assert len(data) == 64  # the frame padded to 32 bytes, as it sits in the term
    frame_length, version, flags, ftype, term_offset, d_session, d_stream, term_id, reserved = DATA.unpack_from(data)
    assert (frame_length, version, flags, ftype, term_offset) == (37, 0, 0xC0, TYPE_DATA, 0)
    assert (d_session, d_stream, term_id, reserved) == (session, 1001, initial_term, 0)
    assert data[32:37] == b"hello"

    # a heartbeat (32 bytes, frame_length 0) at the sender position after 100 ms without data
    heartbeat = fake_receiver.recv(TYPE_DATA)
    assert len(heartbeat) == 32
    frame_length, _, flags, _, term_offset, *_ = DATA.unpack(heartbeat)
    assert (frame_length, flags, term_offset) == (0, 0xC0, 64)

    # a NAK is answered with the same bytes again
    fake_receiver.send(NAK.pack(NAK.size, 0, 0, TYPE_NAK, session, 1001, initial_term, 0, 64))
    assert fake_receiver.recv_data() == data

    # an RTT measurement asking for a reply gets one, flags 0, same echo timestamp and receiver id
    fake_receiver.send(RTTM.pack(RTTM.size, 0, 0x80, TYPE_RTTM, session, 1001, 123456789, 0, 0x1234))
    reply = RTTM.unpack(fake_receiver.recv(TYPE_RTTM))
    assert reply[2] == 0 and reply[4:] == (session, 1001, 123456789, 0, 0x1234)

    # a status message asking for SETUP gets one
    fake_receiver.send(status_message(session, 1001, 0, 0, 0, flags=0x80))
    assert SETUP.unpack(fake_receiver.recv(TYPE_SETUP))[4] == 64

    counters = counters_by_label(udp_client.aeron_dir)
    prefix = f"{pub.registration_id} {session} 1001 aeron:udp?endpoint=127.0.0.1:{fake_receiver.port}|term-length=64k"
    assert counters[f"snd-pos: {prefix}"] == 64
    assert counters[f"snd-lmt: {prefix}"] == 32 * 1024
    assert counters[f"pub-lmt: {prefix}"] == 64 + 32 * 1024  # snd-pos + term/2
    assert counters[f"snd-channel: aeron:udp?endpoint=127.0.0.1:{fake_receiver.port}|term-length=64k"] == 1
    assert system_counter(udp_client.aeron_dir, "NAKs received") >= 1
    assert system_counter(udp_client.aeron_dir, "Retransmits sent") >= 1
    assert system_counter(udp_client.aeron_dir, "Status Messages received") >= 2

    # closing: heartbeats carry end of stream (flags 0xE0) once everything was sent
    pub.close()
    deadline = time.monotonic() + 5
    while True:
        frame = fake_receiver.recv(TYPE_DATA)
        if len(frame) == 32 and DATA.unpack(frame)[2] == 0xE0:
            break
        assert time.monotonic() < deadline, "no end-of-stream heartbeat"
    assert DATA.unpack(frame)[4] == 64
    # a status message with the EOS flag ends the linger early: the counters go away
    fake_receiver.send(status_message(session, 1001, initial_term, 64, 32 * 1024, flags=0x40))
    wait_for(lambda: not any(str(session) in label for label in counters_by_label(udp_client.aeron_dir)),
             timeout=5, what="publication counters freed")


def test_publication_is_not_connected_without_status_messages(aeron_dir: str, fake_receiver: FakeReceiver) -> None:
    settings = dict(UDP_SETTINGS, publication_connection_timeout=0.3)
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings) as driver, \
            aeron_async.Aeron.connect(driver.aeron_dir) as client:
        pub = client.add_exclusive_publication(f"aeron:udp?endpoint=127.0.0.1:{fake_receiver.port}|term-length=64k", 7)
        setup = SETUP.unpack(fake_receiver.recv(TYPE_SETUP))
        fake_receiver.send(status_message(pub.session_id, 7, setup[7], 0, 4096))
        wait_for(lambda: pub.is_connected, timeout=5, what="connected")
        # no more status messages: the connection times out and the publisher limit falls back
        wait_for(lambda: not pub.is_connected, timeout=5, what="connection timeout")
        wait_for(lambda: pub.offer(b"x") == aeron_async.NOT_CONNECTED, timeout=5, what="publisher limit pulled back")


def test_subscription_speaks_the_wire_protocol(udp_client: aeron_async.Aeron) -> None:
    """A plain socket plays the sender: SETUP requests, SETUP, status messages, NAKs, end of stream."""
    port = free_udp_port()
    sub = udp_client.add_subscription(udp_channel(port), 1002)
    sender = FakeReceiver()  # the same socket helper, in the other role
    try:
        session, term_id, stream = 77, 1000, 1002

        def send(datagram: bytes) -> None:
            sender.sock.sendto(datagram, ("127.0.0.1", port))

        def heartbeat(term_offset: int, flags: int = 0xC0) -> bytes:
            return data_frame(0, 0, flags, TYPE_DATA, term_offset, session, stream, term_id, b"")

        def data(term_offset: int, payload: bytes) -> bytes:
            frame = data_frame(32 + len(payload), 0, 0xC0, TYPE_DATA, term_offset, session, stream, term_id, payload)
            return frame + bytes(-len(frame) % 32)

        # data from an unknown session asks for SETUP: an SM with SEND_SETUP and zeros; the frame itself reaches
        # no image, so it is dropped and counted as invalid
        invalid_before = system_counter(udp_client.aeron_dir, "Invalid packets")
        send(heartbeat(0))
        sm = SM.unpack(sender.recv(TYPE_SM))
        assert (sm[0], sm[2], sm[4], sm[5], sm[6], sm[7], sm[8]) == (36, 0x80, session, stream, 0, 0, 0)
        assert system_counter(udp_client.aeron_dir, "Invalid packets") == invalid_before + 1
        receiver_id = sm[9]
        # SETUP creates the image; a status message at the join position comes back at once
        send(SETUP.pack(40, 0, 0, TYPE_SETUP, 0, session, stream, term_id, term_id, 64 * 1024, 1408, 0))
        sm = SM.unpack(sender.recv(TYPE_SM))
        while sm[2] == 0x80:
            sm = SM.unpack(sender.recv(TYPE_SM))
        assert (sm[2], sm[4], sm[5], sm[6], sm[7], sm[8], sm[9]) == (0, session, stream, term_id, 0, 32 * 1024, receiver_id)
        image = wait_for(lambda: sub.images, timeout=5, what="an image")[0]
        assert (image.session_id, image.initial_term_id, image.term_length) == (session, term_id, 64 * 1024)
        assert image.source_identity == f"127.0.0.1:{sender.sock.getsockname()[1]}"

        send(data(0, b"hello"))
        got: list[bytes] = []
        wait_for(lambda: got.extend(m.data for m in sub.poll_messages()) or got, timeout=5, what="hello")
        assert got == [b"hello"]
        # a gap: the frame at 64 is missing when the one at 128 arrives, so a NAK asks for it
        send(data(128, b"third"))
        nak = NAK.unpack(sender.recv(TYPE_NAK))
        assert nak == (28, 0, 0, TYPE_NAK, session, stream, term_id, 64, 64)
        send(data(64, b"second"))
        wait_for(lambda: got.extend(m.data for m in sub.poll_messages()) or len(got) == 3, timeout=5)
        assert got == [b"hello", b"second", b"third"]
        # a heartbeat with end of stream after everything arrived ends the stream there
        send(heartbeat(192, flags=0xE0))
        wait_for(lambda: image.is_end_of_stream, timeout=5, what="end of stream")
        assert image.end_of_stream_position == 192
        # the draining image's status messages carry the EOS flag
        deadline = time.monotonic() + 5
        while SM.unpack(sender.recv(TYPE_SM))[2] != 0x40:
            assert time.monotonic() < deadline, "no status message with the EOS flag"
    finally:
        sender.close()


@pytest.mark.parametrize("channel, match", [
    ("aeron:udp?endpoint=127.0.0.1:0", "port"),
])
def test_unsupported_udp_publications_are_rejected(udp_client: aeron_async.Aeron, channel: str, match: str) -> None:
    with pytest.raises(aeron_async.InvalidChannelError, match=match) as info:
        udp_client.add_publication(channel, 1)
    assert "aeron:udp?endpoint=host:port" in str(info.value) or match == "port"


# ---- channel parameters the driver does not apply are refused, never ignored ----

NOT_APPLIED = [
    # (role, channel, fragments the error names)
    ("pub", "aeron:udp?endpoint=224.0.1.1:40999|fc=max,t:2s", ["fc=max takes no options", "t:2s"]),
    ("pub", "aeron:udp?endpoint=127.0.0.1:40999|fc=fastest", ["fc=fastest", "unknown flow control 'fastest'"]),
    ("pub", "aeron:udp?endpoint=127.0.0.1:40999|fc=unicast,t:5s", ["fc=unicast takes no options", "t:5s"]),
    ("sub", "aeron:udp?endpoint=127.0.0.1:40999|fc=fastest", ["fc=fastest", "registered: unicast"]),
    ("sub", "aeron:udp?endpoint=127.0.0.1:40999|cc=bbr",
     ["cc=bbr", "unknown congestion control 'bbr'", "registered: static, cubic", "name one of those"]),
    ("pub", "aeron:udp?endpoint=127.0.0.1:40999|cc=bbr", ["cc=bbr", "registered: static, cubic"]),
    ("sub", "aeron:udp?endpoint=127.0.0.1:40999|cc=cubic,measure-rtt:yes",
     ["cc=cubic,measure-rtt:yes", "give measure-rtt:true or measure-rtt:false"]),
    ("sub", "aeron:udp?endpoint=127.0.0.1:40999|cc=cubic,initial-rtt:soon",
     ["initial-rtt:soon", "duration above 0 such as initial-rtt:100us"]),
    ("sub", "aeron:udp?endpoint=127.0.0.1:40999|cc=cubic,rtt:1ms", ["cc=cubic has no option 'rtt'", "tcp-mode:true|false"]),
    ("sub", "aeron:udp?endpoint=127.0.0.1:40999|cc=static,rtt:1ms", ["cc=static takes no options", "rtt:1ms"]),
    # multicast parameters on a unicast address name the fix
    ("pub", "aeron:udp?endpoint=127.0.0.1:40999|max-resend=4",
     ["max-resend=4 applies to multicast channels only", "endpoint=127.0.0.1:40999 is a unicast address", "remove max-resend="]),
    ("pub", "aeron:udp?endpoint=127.0.0.1:40999|ttl=4", ["ttl=4 applies to multicast channels only", "224.0.0.0/4"]),
    ("sub", "aeron:udp?endpoint=127.0.0.1:40999|ttl=4", ["ttl=4 applies to multicast channels only", "remove ttl="]),
    # an interface= no interface of this host has
    ("sub", "aeron:udp?endpoint=224.0.1.1:40999|interface=10.255.255.254",
     ["interface=10.255.255.254: no local network interface has an address in 10.255.255.254/32", "ip -brief address"]),
    ("pub", "aeron:udp?endpoint=224.0.1.1:40999|interface=10.255.255.0/24",
     ["no local network interface has an address in 10.255.255.0/24", "interface=192.168.1.0/24"]),
    ("sub", "aeron:udp?endpoint=224.0.1.2:40999", ["must end in an odd byte", "control address"]),
    ("pub", "aeron:udp?endpoint=224.0.1.1:40999|fc=nosuch", ["fc=nosuch", "unknown flow control 'nosuch'"]),
    ("sub", "aeron:ipc?group=true", ["group=true", "sends no NAKs", "group=false or group=infer"]),
    ("sub", "aeron:ipc?rejoin=false", ["rejoin=false", "only rejoin=true"]),
    ("sub", "aeron:ipc?reliable=false", ["reliable=false", "never has gaps"]),
    ("pub", "aeron:ipc?ssc=true", ["ssc=true", "only ssc=false"]),
    ("pub", "aeron:ipc?spies-simulate-connection=true", ["spies-simulate-connection=true"]),
    ("sub", "aeron:ipc?untethered-resting-timeout=5s", ["untethered-resting-timeout=5s", "AERON_UNTETHERED_RESTING_TIMEOUT"]),
    ("sub", "aeron:ipc?untethered-window-limit-timeout=5s", ["AERON_UNTETHERED_WINDOW_LIMIT_TIMEOUT"]),
    ("sub", "aeron:ipc?untethered-linger-timeout=5s", ["untethered-linger-timeout=5s"]),
    ("pub", "aeron:ipc?channel-snd-ts-offset=reserved", ["channel-snd-ts-offset=reserved", "timestamps"]),
    ("sub", "aeron:ipc?media-rcv-ts-offset=8", ["media-rcv-ts-offset=8", "timestamps"]),
    ("pub", "aeron:ipc?stream-id=5", ["stream-id=5", "not supported"]),
]


@pytest.mark.parametrize("role, channel, fragments", NOT_APPLIED, ids=[f"{r}-{c.split('?', 1)[1]}" for r, c, _ in NOT_APPLIED])
def test_parameters_the_driver_does_not_apply_are_rejected(
    udp_client: aeron_async.Aeron, role: str, channel: str, fragments: list[str]
) -> None:
    with pytest.raises(aeron_async.InvalidChannelError) as info:
        if role == "pub":
            udp_client.add_publication(channel, 1)
        else:
            udp_client.add_subscription(channel, 1)
    for fragment in fragments:
        assert fragment in str(info.value), (fragment, str(info.value))
    assert info.value.code == 1  # INVALID_CHANNEL, as the driver answered it


def test_parameters_for_the_other_end_or_asking_for_what_the_driver_does_are_accepted(udp_client: aeron_async.Aeron) -> None:
    """One channel string serves both ends (Aeron's idiom): a publication parameter on a
    subscription passes when the driver applies it to publications, and the reverse; so do values
    that ask for what the driver does anyway. The stream then flows."""
    port = free_udp_port()
    both = (f"aeron:udp?endpoint=127.0.0.1:{port}|term-length=64k|mtu=1408|linger=0|eos=true|pub-wnd=32k|fc=unicast"
            f"|rcv-wnd=32k|nak-delay=1ms|reliable=true|cc=static|rejoin=true|group=infer|ssc=false|alias=both-ends"
            f"|interface=127.0.0.1|ats=false")
    sub = udp_client.add_subscription(both, 17)
    pub = udp_client.add_publication(both, 17)
    wait_for(lambda: pub.is_connected, timeout=5, what="connected")
    offer_until(pub, b"both ends")
    got: list[bytes] = []
    wait_for(lambda: got.extend(m.data for m in sub.poll_messages()) or got, timeout=5, what="the message")
    assert got == [b"both ends"]
    image = sub.images[0]
    assert image.term_length == 64 * 1024
    ipc = "aeron:ipc?term-length=64k|tether=true|rejoin=true|group=false|reliable=true|sparse=false|alias=x"
    ipc_sub = udp_client.add_subscription(ipc, 18)
    ipc_pub = udp_client.add_publication(ipc, 18)
    wait_for(lambda: ipc_pub.is_connected and ipc_sub.images, timeout=5, what="the IPC image")


def test_ipc_publication_window_is_applied(udp_client: aeron_async.Aeron) -> None:
    """pub-wnd on aeron:ipc was parsed and ignored; now it bounds how far the publisher runs ahead."""
    sub = udp_client.add_subscription("aeron:ipc?term-length=64k", 19)
    pub = udp_client.add_publication("aeron:ipc?term-length=64k|pub-wnd=4k", 19)
    wait_for(lambda: pub.is_connected and sub.images, timeout=5, what="connected")
    wait_for(lambda: pub.position_limit > 0, timeout=5, what="a publisher limit")
    assert pub.position_limit == 4096
    accepted = 0
    while pub.offer(b"x" * 100) > 0:
        accepted += 1
        assert accepted < 1000, "the publisher ran past its 4k window"
    assert pub.position <= 4096 + 128


def test_subscriptions_sharing_an_endpoint_must_agree_on_its_settings(udp_client: aeron_async.Aeron) -> None:
    """A second subscription on an endpoint gets the endpoint's window, NAK delay, reliability and
    congestion control; asking for other ones is refused rather than silently ignored."""
    channel = udp_channel()
    udp_client.add_subscription(channel, 20)
    with pytest.raises(aeron_async.InvalidChannelError) as info:
        udp_client.add_subscription(channel + "|reliable=false", 21)
    assert "reliable=false differs from reliable=true (the default)" in str(info.value)
    assert "give both the same reliable" in str(info.value)
    with pytest.raises(aeron_async.InvalidChannelError, match="rcv-wnd=64k differs"):
        udp_client.add_subscription(channel + "|rcv-wnd=64k", 21)
    # the same settings written differently are the same settings
    udp_client.add_subscription(channel + "|reliable=true|rcv-wnd=128k|cc=static", 22)


def test_shared_publications_must_agree_on_their_settings(udp_client: aeron_async.Aeron) -> None:
    channel = udp_channel()
    udp_client.add_publication(channel, 23)
    with pytest.raises(aeron_async.InvalidChannelError, match="linger=1s differs"):
        udp_client.add_publication(channel + "|linger=1s", 23)
    udp_client.add_publication(channel + "|fc=unicast", 23)
    udp_client.add_exclusive_publication(channel + "|linger=1s", 23)  # its own publication: its own settings


# ---- publications and subscriptions over loopback ----


def test_messages_of_mixed_sizes_arrive_intact_and_in_order(udp_client: aeron_async.Aeron) -> None:
    channel = udp_channel()
    sizes = mixed_sizes(3000)
    sub = udp_client.add_subscription(channel, 11)
    pub = udp_client.add_publication(channel, 11)
    wait_for(lambda: pub.is_connected, timeout=5, what="connected")
    image = wait_for(lambda: sub.images, timeout=5, what="an image")[0]
    assert image.session_id == pub.session_id
    assert image.source_identity.startswith("127.0.0.1:")
    assert image.term_length == 1024 * 1024 and image.join_position == 0
    collector = Collector(sizes)
    sent = 0
    deadline = time.monotonic() + 60
    while collector.next < len(sizes):
        assert time.monotonic() < deadline, f"stalled at {collector.next} of {len(sizes)}"
        if sent < len(sizes) and pub.offer(message(sent, sizes[sent])) > 0:
            sent += 1
        collector.poll(sub)
    assert sent == len(sizes)
    counters = counters_by_label(udp_client.aeron_dir)
    suffix = f"{pub.session_id} 11 {channel}"
    hwm = [v for k, v in counters.items() if k.startswith("rcv-hwm:") and k.endswith(suffix)]
    pos = [v for k, v in counters.items() if k.startswith("rcv-pos:") and k.endswith(suffix)]
    assert hwm == pos == [pub.position], (hwm, pos, pub.position)
    assert counters[f"rcv-channel: {channel}"] == 1


def test_subscription_closed_and_added_again_at_once_reuses_its_port(udp_client: aeron_async.Aeron) -> None:
    """Closing the last subscription of an endpoint and adding one on the same endpoint straight away
    takes the closing endpoint back (its socket still holds the port) instead of failing to bind."""
    channel = udp_channel()
    for _ in range(5):
        udp_client.add_subscription(channel, 12).close()
    sub = udp_client.add_subscription(channel, 12)
    pub = udp_client.add_publication(channel, 12)
    wait_for(lambda: pub.is_connected, timeout=5, what="connected")
    offer_until(pub, b"after re-adding")
    got: list[bytes] = []
    wait_for(lambda: got.extend(m.data for m in sub.poll_messages()) or got, timeout=5, what="the message")
    assert got == [b"after re-adding"]
    counters = counters_by_label(udp_client.aeron_dir)
    assert counters[f"rcv-channel: {channel}"] == 1
    assert len([k for k in counters if k.startswith("rcv-channel:")]) == 1


def test_exclusive_publications_share_the_endpoint_as_separate_sessions(udp_client: aeron_async.Aeron) -> None:
    channel = udp_channel()
    sub = udp_client.add_subscription(channel, 12)
    pubs = [udp_client.add_exclusive_publication(channel, 12) for _ in range(3)]
    assert len({p.session_id for p in pubs}) == 3
    wait_for(lambda: all(p.is_connected for p in pubs) and len(sub.images) == 3, timeout=5, what="three images")
    for i, p in enumerate(pubs):
        offer_until(p, f"from {i}".encode())
    got: list[tuple[int, bytes]] = []
    wait_for(lambda: got.extend((m.session_id, m.data) for m in sub.poll_messages()) or len(got) >= 3, timeout=5)
    assert sorted(got) == sorted((p.session_id, f"from {i}".encode()) for i, p in enumerate(pubs))


def test_subscription_added_mid_stream_joins_at_the_current_position(udp_client: aeron_async.Aeron) -> None:
    channel = udp_channel()
    sizes = [200] * 3000
    first = udp_client.add_subscription(channel, 13)
    pub = udp_client.add_publication(channel, 13)
    wait_for(lambda: pub.is_connected, timeout=5, what="connected")
    early = Collector(sizes)
    for seq in range(1000):
        offer_until(pub, message(seq, 200), while_waiting=lambda: early.poll(first))
        early.poll(first)
    wait_for(lambda: early.poll(first) >= 0 and early.next == 1000, timeout=10, what="the first 1000")
    late = udp_client.add_subscription(channel, 13)
    image = wait_for(lambda: late.images, timeout=5, what="an image for the late subscription")[0]
    assert image.join_position == pub.position > 0
    late_collector = Collector(sizes, first=1000)
    def poll_both() -> None:
        early.poll(first)
        late_collector.poll(late)

    for seq in range(1000, 3000):
        offer_until(pub, message(seq, 200), while_waiting=poll_both)
        poll_both()
    wait_for(lambda: early.poll(first) >= 0 and late_collector.poll(late) >= 0 and
             early.next == late_collector.next == 3000, timeout=10, what="both subscriptions at the end")


def test_new_subscription_on_a_flowing_channel_gets_a_setup_and_joins(udp_client: aeron_async.Aeron) -> None:
    """The only subscription goes and another binds the port again while the publication still sends:
    its heartbeats and data elicit a SETUP (SEND_SETUP status message) and the new image joins at the
    current position."""
    channel = udp_channel()
    first = udp_client.add_subscription(channel, 15)
    pub = udp_client.add_publication(channel, 15)
    wait_for(lambda: pub.is_connected, timeout=5, what="connected")
    for i in range(100):
        offer_until(pub, i.to_bytes(4, "little") * 50)
    wait_for(lambda: first.poll(lambda d, h: None, 100) >= 0 and first.images and
             first.images[0].position == pub.position, timeout=5, what="the first subscription caught up")
    first.close()
    wait_for(lambda: not any(k.startswith("rcv-channel") for k in counters_by_label(udp_client.aeron_dir)),
             timeout=5, what="the receive endpoint closed")
    position = pub.position
    second = udp_client.add_subscription(channel, 15)
    image = wait_for(lambda: second.images, timeout=5, what="an image after a SETUP request")[0]
    assert image.join_position == position
    offer_until(pub, b"after the rejoin")
    got: list[bytes] = []
    wait_for(lambda: got.extend(m.data for m in second.poll_messages()) or got, timeout=5)
    assert got == [b"after the rejoin"]


def test_unreliable_subscription_fills_gaps_instead_of_nak(aeron_dir: str) -> None:
    settings = dict(UDP_SETTINGS, udp_receive_loss="drop:data:10%", udp_loss_seed=3)
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings) as driver, \
            aeron_async.Aeron.connect(driver.aeron_dir) as client:
        channel = udp_channel()
        sub = client.add_subscription(channel + "|reliable=false", 16)
        pub = client.add_publication(channel, 16)
        wait_for(lambda: pub.is_connected, timeout=10, what="connected")
        received: list[int] = []
        sent = 0
        deadline = time.monotonic() + 30
        while sent < 3000:  # poll while offering: the subscriber holds the publisher back
            assert time.monotonic() < deadline, f"stalled at {sent}"
            if pub.offer(sent.to_bytes(4, "little") * 64) > 0:
                sent += 1
            received.extend(int.from_bytes(m.data[:4], "little") for m in sub.poll_messages())
        wait_for(lambda: received.extend(int.from_bytes(m.data[:4], "little") for m in sub.poll_messages()) or
                 sub.images and sub.images[0].position == pub.position, timeout=10,
                 what="the subscriber past the last gap")
        assert received == sorted(set(received)) and 0 < len(received) < 3000  # in order, some lost, none twice
        assert system_counter(driver.aeron_dir, "Loss gap fills") > 0
        assert system_counter(driver.aeron_dir, "NAKs sent") == 0


def test_closed_publication_delivers_end_of_stream(udp_client: aeron_async.Aeron) -> None:
    channel = udp_channel()
    unavailable: list[aeron_async.Image] = []
    sub = udp_client.add_subscription(channel, 14, on_unavailable_image=unavailable.append)
    pub = udp_client.add_publication(channel, 14)
    wait_for(lambda: pub.is_connected, timeout=5, what="connected")
    image = wait_for(lambda: sub.images, timeout=5)[0]
    for i in range(10):
        offer_until(pub, b"x" * i)
    final_position = pub.position
    pub.close()
    got: list[bytes] = []
    wait_for(lambda: got.extend(m.data for m in sub.poll_messages()) or image.is_end_of_stream, timeout=5,
             what="end of stream")
    assert got == [b"x" * i for i in range(10)]
    assert image.end_of_stream_position == final_position
    wait_for(lambda: sub.poll(lambda d, h: None, 1) >= 0 and unavailable, timeout=10, what="image unavailable")
    assert unavailable[0].session_id == image.session_id
    # the driver frees the image's counters and log once the receiver let go of it
    wait_for(lambda: not any(k.startswith(("rcv-hwm:", "rcv-pos:", "sub-pos:"))
                             for k in counters_by_label(udp_client.aeron_dir)), timeout=5, what="image counters freed")


# ---- loss, duplicates and reordering (the built-in loss generator) ----


@pytest.mark.parametrize("loss", [
    pytest.param({"udp_receive_loss": "drop:data:5%,dup:data:2%,reorder:any:3%"}, id="receive"),
    pytest.param({"udp_send_loss": "drop:data:5%,drop:sm:5%,drop:nak:5%,dup:any:1%,reorder:data:2%"}, id="send"),
])
def test_loss_duplicates_and_reordering_are_recovered(aeron_dir: str, loss: dict[str, str]) -> None:
    settings = dict(UDP_SETTINGS, udp_loss_seed=20240601, **loss)
    sizes = mixed_sizes(4000)
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings) as driver, \
            aeron_async.Aeron.connect(driver.aeron_dir) as client:
        channel = udp_channel()
        sub = client.add_subscription(channel, 21)
        pub = client.add_publication(channel, 21)
        wait_for(lambda: pub.is_connected, timeout=10, what="connected")
        collector = Collector(sizes, session_id=pub.session_id)
        sent = 0
        deadline = time.monotonic() + 120
        while collector.next < len(sizes):
            assert time.monotonic() < deadline, f"stalled at {collector.next} of {len(sizes)}"
            if sent < len(sizes) and pub.offer(message(sent, sizes[sent])) > 0:
                sent += 1
            collector.poll(sub)
        # nothing more arrives: no duplicate was delivered after the last message
        time.sleep(0.2)
        assert collector.poll(sub) == 0
        counters = {label: system_counter(driver.aeron_dir, label)
                    for label in ("NAKs sent", "NAKs received", "Retransmits sent", "Retransmitted bytes")}
        print("loss recovery counters:", counters)
        assert all(v > 0 for v in counters.values()), counters


# ---- malformed datagrams ----

from hypothesis import HealthCheck, given, settings as hypothesis_settings, strategies as st  # noqa: E402

INT32 = st.integers(-(2**31), 2**31 - 1)


def data_frame(frame_length: int, version: int, flags: int, ftype: int, term_offset: int, session: int, stream: int,
               term_id: int, payload: bytes) -> bytes:
    return DATA.pack(frame_length, version, flags, ftype, term_offset, session, stream, term_id, 0) + payload


@st.composite
def malformed_datagrams(draw: st.DrawFn, session: int, stream: int, term_id: int) -> tuple[bytes, bool | None]:
    """A datagram and whether the receiver must count it as invalid (True), must not (False: a well-formed SETUP,
    which starts an image), or may (None: random bytes of version 0). Frames for the flowing session are always
    malformed; well-formed frames only ever name other sessions, and data for a session with no image is counted
    (those on the subscribed stream also ask the attacker for SETUP, as the protocol says)."""
    kind = draw(st.sampled_from(["short", "version", "bad_length", "truncated_control", "random", "unknown_session",
                                 "setup_unknown_session"]))
    if kind == "short":
        return draw(st.binary(max_size=7)), True
    if kind == "version":
        body = draw(st.binary(min_size=8, max_size=200))
        return body[:4] + bytes([draw(st.integers(1, 255))]) + body[5:], True
    if kind == "bad_length":
        frame_length = draw(st.one_of(st.integers(1, 31), st.integers(-(2**31), -1), st.integers(2000, 2**31 - 1)))
        payload = draw(st.binary(max_size=64))
        return data_frame(frame_length, 0, 0xC0, TYPE_DATA, draw(st.integers(0, 1 << 16)) & ~31, session, stream,
                          term_id, payload), True
    if kind == "truncated_control":
        ftype = draw(st.sampled_from([TYPE_SM, TYPE_NAK, TYPE_SETUP, TYPE_RTTM]))
        length = draw(st.integers(8, {TYPE_SM: 35, TYPE_NAK: 27, TYPE_SETUP: 39, TYPE_RTTM: 39}[ftype]))
        body = struct.pack("<ibBh", length, 0, 0, ftype) + draw(st.binary(min_size=length - 8, max_size=length - 8))
        return body, True
    if kind == "random":  # certainly invalid when short or of another version (nearly always)
        blob = draw(st.binary(max_size=1500))
        return blob, True if len(blob) < 8 or blob[4] != 0 else None
    if kind == "unknown_session":  # negative session ids: never those of SETUPs below, so never imaged
        other = draw(st.integers(-(2**31), -1).filter(lambda s: s != session))
        size = draw(st.integers(0, 200))
        heartbeat = draw(st.booleans())
        frame_length = 0 if heartbeat else 32 + size
        payload = b"" if heartbeat else draw(st.binary(min_size=size, max_size=size)) + bytes((-(32 + size)) % 32)
        return data_frame(frame_length, 0, draw(st.sampled_from([0xC0, 0x80, 0x40, 0xE0])), TYPE_DATA,
                          draw(st.integers(0, 1 << 20)) & ~31, other, draw(st.sampled_from([stream, stream + 1])),
                          draw(INT32), payload), True
    # a SETUP for an unknown session: malformed (counted) when its term length is no log's, its MTU no
    # sender's, or its position no position of the stream; well-formed ones start an image (not counted)
    other = draw(st.integers(0, 2**31 - 1).filter(lambda s: s != session))
    term_length = draw(st.sampled_from([64 * 1024, 1000, 0, -1, 3 * 1024 * 1024]))
    initial = draw(INT32)
    terms = draw(st.integers(-2, 2))
    active = (initial + terms + 2**31) % 2**32 - 2**31
    term_offset = draw(st.one_of(st.integers(-64, 1 << 16), st.integers(0, 2047).map(lambda i: i * 32)))
    mtu = draw(st.sampled_from([1408, 0, 33, 65536]))
    setup = SETUP.pack(40, 0, 0, TYPE_SETUP, term_offset, other, stream, initial, active, term_length, mtu, 0)
    malformed = (term_length != 64 * 1024 or mtu != 1408 or terms < 0 or not 0 <= term_offset <= term_length
                 or term_offset % 32 != 0)
    return setup, malformed


def test_malformed_datagrams_are_counted_and_harmless(aeron_dir: str) -> None:
    settings = dict(UDP_SETTINGS, image_liveness_timeout=0.5)
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings) as driver, \
            aeron_async.Aeron.connect(driver.aeron_dir) as client:
        port = free_udp_port()
        channel = udp_channel(port)
        sub = client.add_subscription(channel, 31)
        pub = client.add_publication(channel, 31)
        wait_for(lambda: pub.is_connected, timeout=5, what="connected")
        image = wait_for(lambda: sub.images, timeout=5)[0]
        sizes = mixed_sizes(100_000, large_every=97, large=20_000)
        collector = Collector(sizes, session_id=pub.session_id)
        state = {"sent": 0, "invalid": 0, "maybe": 0, "datagrams": 0}
        invalid_before = system_counter(driver.aeron_dir, "Invalid packets")
        attacker = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

        @hypothesis_settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck),
                             database=None)
        @given(st.lists(malformed_datagrams(pub.session_id, 31, image.initial_term_id), min_size=1, max_size=4))
        def attack(datagrams: list[tuple[bytes, bool | None]]) -> None:
            for datagram, invalid in datagrams:
                attacker.sendto(datagram, ("127.0.0.1", port))
                state["invalid"] += invalid is True
                state["maybe"] += invalid is None
                state["datagrams"] += 1
            for _ in range(3):  # the stream keeps flowing meanwhile
                seq = state["sent"]
                if pub.offer(message(seq, sizes[seq])) > 0:
                    state["sent"] += 1
                collector.poll(sub)

        try:
            attack()
        finally:
            attacker.close()
        deadline = time.monotonic() + 30
        while collector.next < state["sent"]:
            assert time.monotonic() < deadline, f"stalled at {collector.next} of {state['sent']}"
            collector.poll(sub)
        invalid = system_counter(driver.aeron_dir, "Invalid packets") - invalid_before
        print(f"{state['datagrams']} datagrams sent, {state['invalid']} certainly invalid, {state['maybe']} random, "
              f"counter rose by {invalid}; {state['sent']} messages delivered intact")
        assert state["invalid"] > 0
        assert state["invalid"] <= invalid <= state["invalid"] + state["maybe"]
        assert state["sent"] > 100
        # the driver is alive and well: its heartbeat moves on and the stream still flows
        with CncReader(driver.aeron_dir) as reader:
            heartbeat = reader.info()["driver_heartbeat_age_ms"]
            wait_for(lambda: reader.info()["driver_heartbeat_age_ms"] < heartbeat or heartbeat == 0, timeout=10,
                     what="the driver's heartbeat")
        offer_until(pub, message(state["sent"], sizes[state["sent"]]))
        wait_for(lambda: collector.poll(sub) >= 0 and collector.next == state["sent"] + 1, timeout=5)


# ---- between processes: a driver per side ----

import os  # noqa: E402
import signal  # noqa: E402

from conftest import new_aeron_dir, run_proc, start_driver, stop_driver, stream_between  # noqa: E402

UNDER_SANITIZERS = os.environ.get("AERON_ASYNC_UNDER_SANITIZERS") == "1"
# 1,000,000 (the count), mostly of one frame with one in 20 fragmented (procs/streams.py, profile "mtu");
# 20,000 under sanitizers; AERON_ASYNC_UDP_MESSAGES overrides it.
UDP_MESSAGES = int(os.environ.get("AERON_ASYNC_UDP_MESSAGES", 20_000 if UNDER_SANITIZERS else 1_000_000))
DRIVER_OPTIONS = ("-o", "AERON_CLIENT_LIVENESS_TIMEOUT=2s", "-o", "AERON_TIMER_INTERVAL=50ms",
                  "-o", "AERON_PUBLICATION_LINGER_TIMEOUT=500ms", "-o", "AERON_TERM_BUFFER_LENGTH=4m")


@pytest.fixture
def two_drivers() -> Iterator[tuple[str, str]]:
    dirs = (new_aeron_dir(), new_aeron_dir())
    procs = [start_driver(d, *DRIVER_OPTIONS) for d in dirs]
    try:
        yield dirs
    finally:
        for proc in procs:
            out = stop_driver(proc)
            assert proc.returncode == 0, out


@pytest.mark.slow
def test_messages_between_driver_processes(two_drivers: tuple[str, str]) -> None:
    """UDP_MESSAGES messages of mixed sizes (16..1376 bytes, one frame each at MTU 1408, and one in 20
    of 1377 bytes..16 KiB, 2..12 fragments) plus 20 of 1..4 MiB (hundreds of fragments), from a
    publisher process on one driver to a subscriber process on another: every one intact (sequence,
    length, body; CRC of every 1000th) and in order."""
    from support.procs import streams

    pub_dir, sub_dir = two_drivers
    channel = udp_channel(term_length="32m")
    small, large = UDP_MESSAGES, 20
    start = time.monotonic()
    stream_between(pub_dir, sub_dir, channel, small, large, AA_STREAM_PROFILE="mtu")
    elapsed = time.monotonic() - start
    sent = system_counter(pub_dir, "Bytes sent")
    expected = sum(streams.HEADER.size + streams.message_size(seq, small, "mtu") for seq in range(small + large))
    assert sent >= expected  # every byte of every message went over the wire (plus frame headers)
    print(f"{small + large} messages ({expected / 1e9:.2f} GB of messages), {sent / 1e9:.2f} GB sent in {elapsed:.1f} s; "
          f"NAKs {system_counter(sub_dir, 'NAKs sent')}, status messages {system_counter(sub_dir, 'Status Messages sent')}")


def test_killed_publisher_driver_makes_the_image_unavailable_after_the_liveness_timeout(aeron_dir: str) -> None:
    # the publishing driver's 4 MiB terms are above this one's own (1 MiB): its SETUPs need a higher
    # receiver maximum (docs/configuration.md, AERON_RECEIVER_MAX_TERM_LENGTH)
    settings = dict(UDP_SETTINGS, image_liveness_timeout=1.0, receiver_max_term_length="4m")
    pub_dir = new_aeron_dir()
    pub_driver = start_driver(pub_dir, *DRIVER_OPTIONS)
    publisher = None
    try:
        with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings) as driver, \
                aeron_async.Aeron.connect(driver.aeron_dir) as client:
            channel = udp_channel()
            unavailable: list[aeron_async.Image] = []
            sub = client.add_subscription(channel, 41, on_unavailable_image=unavailable.append)
            publisher = run_proc("publisher.py", pub_dir, channel, 41, 2000, 0, "exclusive", "linger",
                                 env={"AA_STREAM_PROFILE": "wide"})
            line = publisher.stdout.readline()
            assert line.startswith("ready"), line
            session_id = int(line.split("=")[1])
            received: list[int] = []
            handler = aeron_async.FragmentAssembler(lambda d, h: received.append(h.session_id))
            wait_for(lambda: sub.poll(handler, 100) >= 0 and len(received) >= 2000, timeout=30, what="2000 messages")
            assert set(received) == {session_id}
            # the publishing process and its driver die: no more data, heartbeats or EOS
            killed = time.monotonic()
            publisher.send_signal(signal.SIGKILL)
            pub_driver.send_signal(signal.SIGKILL)
            publisher.wait(timeout=10)
            pub_driver.wait(timeout=10)
            wait_for(lambda: sub.poll(handler, 10) >= 0 and unavailable, timeout=10, what="image unavailable")
            elapsed = time.monotonic() - killed
            assert unavailable[0].session_id == session_id
            # liveness timeout (1 s), then draining: the subscriber is drained, SMs with EOS go out for 5 x 200 ms
            assert 0.9 <= elapsed <= 4.5, elapsed
            assert sub.images == []
    finally:
        for proc in (publisher, pub_driver):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
        import shutil
        shutil.rmtree(pub_dir, ignore_errors=True)


def test_slow_subscriber_back_pressures_the_remote_publisher(tmp_path_factory: pytest.TempPathFactory) -> None:
    dirs = (new_aeron_dir(), new_aeron_dir())
    sizes = [1000] * 3000
    try:
        with aeron_async.MediaDriver.launch(aeron_dir=dirs[0], **UDP_SETTINGS) as pub_driver, \
                aeron_async.MediaDriver.launch(aeron_dir=dirs[1], **UDP_SETTINGS) as sub_driver, \
                aeron_async.Aeron.connect(pub_driver.aeron_dir) as pub_client, \
                aeron_async.Aeron.connect(sub_driver.aeron_dir) as sub_client:
            channel = udp_channel(term_length="64k")
            sub = sub_client.add_subscription(channel, 51)
            pub = pub_client.add_publication(channel, 51)
            wait_for(lambda: pub.is_connected, timeout=5, what="connected")
            # the publisher may see the first status message before the subscriber's client maps the image
            image = wait_for(lambda: sub.images, timeout=5, what="an image")[0]
            collector = Collector(sizes)
            sent = 0
            back_pressured = 0
            max_lead = 0
            deadline = time.monotonic() + 60
            while collector.next < len(sizes):
                assert time.monotonic() < deadline, f"stalled at {collector.next}"
                while sent < len(sizes):
                    result = pub.offer(message(sent, sizes[sent]))
                    if result > 0:
                        sent += 1
                    elif result == aeron_async.ADMIN_ACTION:
                        continue
                    else:
                        assert result == aeron_async.BACK_PRESSURED, result
                        back_pressured += 1
                        break
                image_position = image.position
                max_lead = max(max_lead, pub.position - image_position)
                sub.poll(collector.assembler, 2)  # slowly: two fragments per millisecond
                time.sleep(0.001)
            assert back_pressured > 0
            # the publisher never ran further ahead of the subscriber than the receiver window (32 KiB on a
            # 64 KiB term) plus the publication window (term/2) allow
            assert max_lead <= 32 * 1024 + 32 * 1024, max_lead
            assert system_counter(pub_driver.aeron_dir, "Sender flow control limits, i.e. back-pressure events") > 0
            assert system_counter(sub_driver.aeron_dir, "Flow control over runs") == 0
            assert system_counter(sub_driver.aeron_dir, "NAKs sent") == 0
    finally:
        import shutil
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)


def test_a_stalled_receiving_driver_keeps_its_live_images(aeron_dir: str) -> None:
    """docs/architecture.md, Lifecycles and failure (image liveness): a receiving driver that does not
    run for longer than the image liveness timeout (SIGSTOP, as a starved process) keeps the images
    whose packets wait in its socket, since it judges their silence up to what it has read, and
    delivers what was sent meanwhile. Judged by the clock, its conductor (first in the shared duty
    cycle) ended the image before the receiver read a packet, and the stream was lost."""
    receiving_dir = new_aeron_dir()
    # its timers every 10 ms, so that the liveness check is due in the first duty cycle after the stall
    receiving = start_driver(receiving_dir, "-o", "AERON_IMAGE_LIVENESS_TIMEOUT=1s", "-o", "AERON_TIMER_INTERVAL=10ms")
    try:
        with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **UDP_SETTINGS) as sending, \
                aeron_async.Aeron.connect(sending.aeron_dir) as publisher, \
                aeron_async.Aeron.connect(receiving_dir) as subscriber:
            gone: list[aeron_async.Image] = []
            channel = udp_channel(free_udp_port())
            sub = subscriber.add_subscription(channel, 41, on_unavailable_image=gone.append)
            pub = publisher.add_publication(channel, 41)
            wait_for(lambda: pub.is_connected and sub.images, timeout=10, what="connected")
            image = sub.images[0]
            received: list[bytes] = []

            def take() -> bool:
                received.extend(bytes(m.data) for m in sub.poll_messages())
                return True

            offer_until(pub, b"before")
            wait_for(lambda: take() and received == [b"before"], timeout=10, what="the first message")
            receiving.send_signal(signal.SIGSTOP)
            try:
                offer_until(pub, b"while stopped")
                time.sleep(1.4)   # past the liveness timeout (1 s), within two
            finally:
                receiving.send_signal(signal.SIGCONT)
            offer_until(pub, b"after")
            wait_for(lambda: take() and len(received) >= 3, timeout=10, what="the messages sent during and after")
            assert received == [b"before", b"while stopped", b"after"]
            assert gone == [] and [i.correlation_id for i in sub.images] == [image.correlation_id]
    finally:
        stop_driver(receiving)
