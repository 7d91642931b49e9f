"""The C message path (aeron_async._speedups) end to end through an embedded driver: offer and
offer_batch with every kind of argument, Message records, poll_messages bounds and buffers, no
per-message leak; and IdleStrategy for application loops."""

from __future__ import annotations

import array
import copy
import gc
import os
import pickle
import struct
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest

import aeron_async
from conftest import offer_all, wait_for

FRAME_ALIGNMENT = 32
HEADER_LENGTH = 32


def aligned_frame(length: int) -> int:
    return (length + HEADER_LENGTH + FRAME_ALIGNMENT - 1) // FRAME_ALIGNMENT * FRAME_ALIGNMENT


def collect(sub: aeron_async.Subscription, count: int, timeout: float = 10.0, **kwargs: Any) -> list[aeron_async.Message]:
    """Exactly `count` messages (fails on a timeout); then checks nothing more arrives for a moment."""
    out: list[aeron_async.Message] = []
    wait_for(lambda: out.extend(sub.poll_messages(**kwargs)) or len(out) >= count, timeout, what=f"{count} messages")
    assert len(out) == count, f"expected {count} messages, got {len(out)}"
    return out


def assert_nothing_more(sub: aeron_async.Subscription, settle: float = 0.05) -> None:
    deadline = time.monotonic() + settle
    while time.monotonic() < deadline:
        extra = sub.poll_messages()
        assert extra == [], f"unexpected messages: {[m.data[:20] for m in extra]}"
        time.sleep(0.005)


def pair(client: aeron_async.Aeron, stream_id: int, channel: str = "aeron:ipc", exclusive: bool = False
         ) -> tuple[aeron_async.Subscription, aeron_async.Publication]:
    sub = client.add_subscription(channel, stream_id)
    pub = (client.add_exclusive_publication if exclusive else client.add_publication)(channel, stream_id)
    wait_for(lambda: pub.is_connected, what="publication connected")
    wait_for(lambda: sub.images, what="image available")
    # a UDP publication is connected with its first status message and its limit moves on the
    # driver's next duty cycle (as Aeron's): the tests' exact offer counts need the room there (an
    # IPC publication's limit moves as the subscriber links, test_ipc_basic)
    wait_for(lambda: pub.position_limit > pub.position, what="the publication's limit")
    return sub, pub


def offer_batch_all(pub: aeron_async.Publication, messages: list[Any], sub: aeron_async.Subscription | None = None,
                    received: list[aeron_async.Message] | None = None, timeout: float = 10.0) -> None:
    """offer_batch until every message went in, polling `sub` meanwhile (if given); bounded."""
    deadline = time.monotonic() + timeout
    rest = list(messages)
    while rest:
        n = pub.offer_batch(rest)
        if n > 0:
            assert n <= len(rest)
            rest = rest[n:]
        else:
            assert n in (aeron_async.BACK_PRESSURED, aeron_async.ADMIN_ACTION, aeron_async.NOT_CONNECTED), n
            assert time.monotonic() < deadline, f"{len(rest)} messages not accepted within {timeout} s (last {n})"
            if sub is not None and received is not None:
                received.extend(sub.poll_messages(4096))
            else:
                time.sleep(0)


# ---- offer ----


def test_offer_accepts_every_contiguous_bytes_like(client: aeron_async.Aeron) -> None:
    sub, pub = pair(client, 1)

    class BytesSubclass(bytes):
        pass

    big = bytearray(range(256)) * 4
    payloads: list[tuple[Any, bytes]] = [
        (b"plain bytes", b"plain bytes"),
        (bytearray(b"a bytearray"), b"a bytearray"),
        (memoryview(b"a memoryview"), b"a memoryview"),
        (memoryview(big)[10:20], bytes(big[10:20])),  # a contiguous slice of a larger buffer
        (array.array("i", [1, 2, -3]), struct.pack("=iii", 1, 2, -3)),
        (BytesSubclass(b"subclass"), b"subclass"),
        (b"", b""),
        (bytearray(), b""),
        (memoryview(b""), b""),
    ]
    positions = [offer_all(pub, obj) for obj, _ in payloads]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)
    assert positions[-1] == pub.position
    messages = collect(sub, len(payloads))
    assert [m.data for m in messages] == [expected for _, expected in payloads]
    assert all(type(m.data) is bytes for m in messages)
    assert [m.position for m in messages] == positions
    # each message its own frame: an empty message is a bare 32-byte header
    assert positions[-1] - positions[-2] == aligned_frame(0) == 32


def test_offer_rejects_non_buffers_and_publishes_nothing(client: aeron_async.Aeron) -> None:
    sub, pub = pair(client, 2)
    before = pub.position
    for bad in ["a str", 42, None, [b"a"], 3.5]:
        with pytest.raises(TypeError, match="bytes-like object is required") as info:
            pub.offer(bad)
        assert type(bad).__name__ in str(info.value)
    strided = memoryview(b"abcdefgh")[::2]
    with pytest.raises(BufferError, match="contiguous"):
        pub.offer(strided)
    assert pub.position == before
    offer_all(pub, b"sentinel")
    assert [m.data for m in collect(sub, 1)] == [b"sentinel"]
    assert_nothing_more(sub)


def test_offer_arguments_and_reserved_value_round_trip(client: aeron_async.Aeron) -> None:
    sub, pub = pair(client, 3)
    values = [0, 1, -1, 2**63 - 1, -(2**63), 0x1234_5678_9ABC_DEF0]
    for v in values:
        assert pub.offer(b"rv", v) > 0
    assert pub.offer(data=b"kw", reserved_value=77) > 0
    assert pub.offer(b"kw2", reserved_value=-5) > 0
    assert pub.offer(data=b"kw3") > 0
    messages = collect(sub, len(values) + 3)
    assert [m.reserved_value for m in messages] == values + [77, -5, 0]
    assert [m.data for m in messages] == [b"rv"] * len(values) + [b"kw", b"kw2", b"kw3"]
    position = pub.position
    with pytest.raises(TypeError):
        pub.offer()
    with pytest.raises(TypeError):
        pub.offer(b"x", 1, 2)
    with pytest.raises(TypeError, match="unexpected"):
        pub.offer(b"x", bogus=1)
    with pytest.raises(TypeError):
        pub.offer(b"x", data=b"y")  # data twice
    with pytest.raises(TypeError):
        pub.offer(b"x", reserved_value="7")
    with pytest.raises(OverflowError):
        pub.offer(b"x", 2**63)
    assert pub.position == position
    assert_nothing_more(sub)


def test_message_too_long_raises_and_publishes_nothing(client: aeron_async.Aeron) -> None:
    sub, pub = pair(client, 4, "aeron:ipc?term-length=64k")
    assert pub.max_message_length == 64 * 1024 // 8
    before = pub.position
    for too_long in (bytes(pub.max_message_length + 1), bytearray(pub.max_message_length + 1000)):
        with pytest.raises(aeron_async.MessageTooLongError, match=str(pub.max_message_length)):
            pub.offer(too_long)
    assert pub.position == before
    exact = os.urandom(pub.max_message_length)  # the longest allowed message: fragmented, intact
    offer_all(pub, exact)
    offer_all(pub, b"after")
    assert [m.data for m in collect(sub, 2)] == [exact, b"after"]


def test_offer_on_closed_publication_raises_closed(client: aeron_async.Aeron) -> None:
    sub, pub = pair(client, 5)
    other = client.add_publication("aeron:ipc", 5)
    offer_all(pub, b"before close")
    pub.close()
    with pytest.raises(aeron_async.ClosedError, match="closed"):
        pub.offer(b"x")
    with pytest.raises(aeron_async.ClosedError, match="closed"):
        pub.offer(b"x", reserved_value=1)
    with pytest.raises(aeron_async.ClosedError, match="closed"):
        pub.offer_batch([b"x", b"y"])
    assert [m.data for m in collect(sub, 1)] == [b"before close"]
    client.close()
    with pytest.raises(aeron_async.ClosedError):
        other.offer(b"x")
    with pytest.raises(aeron_async.ClosedError):
        other.offer_batch([b"x"])
    with pytest.raises(aeron_async.ClosedError):
        sub.poll_messages()


@pytest.mark.parametrize("exclusive", [False, True], ids=["concurrent", "exclusive"])
def test_large_messages_gil_released_path_and_buffer_growth(client: aeron_async.Aeron, exclusive: bool) -> None:
    """Messages over 256 KiB (offered with the GIL released, from bytes and from other buffers) and
    over 1 MiB (more than the subscription's first reassembly buffer) arrive intact."""
    sub, pub = pair(client, 6, "aeron:ipc?term-length=16m", exclusive)
    assert pub.max_message_length == 2 * 1024 * 1024
    big = [os.urandom(300 * 1024), bytearray(os.urandom(257 * 1024)), memoryview(os.urandom(400 * 1024)),
           os.urandom(1536 * 1024), os.urandom(pub.max_message_length), os.urandom(256 * 1024)]
    for i, payload in enumerate(big):
        wait_for(lambda: pub.offer(payload, reserved_value=i) > 0, what=f"offer of {len(payload)} bytes")
    messages = collect(sub, len(big))
    assert [m.data for m in messages] == [bytes(p) for p in big]
    assert messages[-1].position == pub.position
    assert [m.reserved_value for m in messages] == list(range(len(big)))


def test_large_messages_split_across_polls_when_buffer_full(client: aeron_async.Aeron) -> None:
    """Three 700 KiB messages do not fit one 1 MiB poll buffer together: they come in more than one
    poll, each whole and in order."""
    sub, pub = pair(client, 7, "aeron:ipc?term-length=16m")
    payloads = [os.urandom(700 * 1024) for _ in range(3)]
    for p in payloads:
        offer_all(pub, p)
    first = sub.poll_messages()
    assert 1 <= len(first) < 3
    rest = collect(sub, 3 - len(first))
    assert [m.data for m in first + rest] == payloads


@pytest.mark.parametrize("exclusive", [False, True], ids=["concurrent", "exclusive"])
def test_fragmented_messages_round_trip(client: aeron_async.Aeron, exclusive: bool) -> None:
    sub, pub = pair(client, 8, "aeron:ipc?term-length=64k", exclusive)
    p = pub.max_payload_length
    sizes = [p - 1, p, p + 1, 2 * p, 3 * p + 5, pub.max_message_length, 0, 1]
    payloads = [os.urandom(n) for n in sizes]
    for i, payload in enumerate(payloads[:4]):
        assert pub.offer(payload, reserved_value=100 + i) > 0
    assert pub.offer_batch(payloads[4:], reserved_value=200) == len(payloads) - 4
    messages = collect(sub, len(payloads))
    assert [len(m.data) for m in messages] == sizes
    assert [m.data for m in messages] == payloads
    assert [m.reserved_value for m in messages] == [100, 101, 102, 103] + [200] * 4
    assert messages[-1].position == pub.position


def test_fragmented_message_reassembled_over_polls_with_fragment_limit(client: aeron_async.Aeron) -> None:
    """With fragment_limit=1 a message of several fragments takes several polls, comes out once
    and whole; an unfragmented one after it too."""
    sub, pub = pair(client, 9, "aeron:ipc?term-length=64k")
    payload = os.urandom(3 * pub.max_payload_length + 10)  # 4 fragments
    offer_all(pub, payload)
    offer_all(pub, b"tail")
    polls: list[list[aeron_async.Message]] = []
    deadline = time.monotonic() + 10
    while sum(len(batch) for batch in polls) < 2:
        assert time.monotonic() < deadline
        polls.append(sub.poll_messages(fragment_limit=1))
    got = [m for batch in polls for m in batch]
    assert [m.data for m in got] == [payload, b"tail"]
    assert len(polls) >= 5  # one fragment per poll
    assert all(len(batch) <= 1 for batch in polls)


# ---- offer_batch ----


@pytest.mark.parametrize("exclusive", [False, True], ids=["concurrent", "exclusive"])
def test_offer_batch_all_accepted_in_order_each_its_own_frame(client: aeron_async.Aeron, exclusive: bool) -> None:
    sub, pub = pair(client, 10, exclusive=exclusive)
    start = pub.position
    # 200 crosses the 64-message chunks of the C loop; mixed types and lengths, empty ones included
    payloads: list[Any] = []
    for i in range(200):
        body = b"m%03d" % i + bytes(i % 50)
        payloads.append([bytes, bytearray, memoryview][i % 3](body) if i % 7 else b"")
    assert pub.offer_batch(payloads, reserved_value=9) == 200
    messages = collect(sub, 200)
    assert [m.data for m in messages] == [bytes(p) for p in payloads]
    positions = [m.position for m in messages]
    assert all(b > a for a, b in zip(positions, positions[1:]))
    assert positions[-1] == pub.position
    expected = start
    for p, m in zip(payloads, messages):
        expected += aligned_frame(len(p))
        assert m.position == expected
    assert all(m.reserved_value == 9 and m.session_id == pub.session_id and m.stream_id == 10 for m in messages)


def test_offer_batch_accepts_tuple_generator_and_keywords(client: aeron_async.Aeron) -> None:
    sub, pub = pair(client, 11)
    assert pub.offer_batch((b"t1", b"t2")) == 2
    assert pub.offer_batch(b"g%d" % i for i in range(3)) == 3
    assert pub.offer_batch(messages=[b"k1"], reserved_value=3) == 1
    assert pub.offer_batch([b"p1"], 4) == 1
    assert pub.offer_batch([]) == 0
    assert pub.offer_batch(()) == 0
    messages = collect(sub, 7)
    assert [m.data for m in messages] == [b"t1", b"t2", b"g0", b"g1", b"g2", b"k1", b"p1"]
    assert [m.reserved_value for m in messages] == [0, 0, 0, 0, 0, 3, 4]
    position = pub.position
    with pytest.raises(TypeError, match="list or tuple"):
        pub.offer_batch(5)
    with pytest.raises(TypeError):
        pub.offer_batch(b"ab")  # a bytes object is a sequence of ints, not of messages
    with pytest.raises(TypeError):
        pub.offer_batch()
    with pytest.raises(TypeError, match="unexpected"):
        pub.offer_batch([b"x"], bogus=1)
    assert pub.position == position
    assert_nothing_more(sub)


def test_offer_batch_not_connected_without_subscriber(client: aeron_async.Aeron) -> None:
    pub = client.add_publication("aeron:ipc", 12)
    assert not pub.is_connected
    rc = pub.offer_batch([b"a", b"b"])
    assert rc == aeron_async.NOT_CONNECTED and isinstance(rc, int)
    assert pub.offer_batch([]) == 0


@pytest.mark.parametrize("exclusive", [False, True], ids=["concurrent", "exclusive"])
def test_offer_batch_partial_under_back_pressure(client: aeron_async.Aeron, exclusive: bool) -> None:
    """A 64 KiB term with a subscriber that does not poll: the batch goes in only up to the publisher
    limit; nothing more until the subscriber consumes; then the rest, each exactly once, in order."""
    sub, pub = pair(client, 13, "aeron:ipc?term-length=64k", exclusive)
    payloads = [struct.pack("<I", i) + bytes(92) for i in range(2000)]  # 128 bytes a frame: 250 KiB
    start = pub.position
    accepted = pub.offer_batch(payloads)
    assert 0 < accepted < len(payloads)
    assert pub.position == start + accepted * aligned_frame(96) == start + accepted * 128
    rc = pub.offer_batch(payloads[accepted:])
    assert rc == aeron_async.BACK_PRESSURED
    received = list(sub.poll_messages(4096))
    assert received, "the accepted messages are there to consume"
    offer_batch_all(pub, payloads[accepted:], sub, received)
    deadline = time.monotonic() + 10
    while len(received) < len(payloads):
        assert time.monotonic() < deadline
        received.extend(sub.poll_messages(4096))
    assert [struct.unpack_from("<I", m.data)[0] for m in received] == list(range(2000))
    assert [m.data for m in received] == payloads
    assert received[-1].position == pub.position
    assert_nothing_more(sub)


@pytest.mark.parametrize("bad_index", [0, 3, 63, 64, 70])
@pytest.mark.parametrize("kind", ["str", "strided", "too_long"])
def test_offer_batch_stops_at_a_bad_message(client: aeron_async.Aeron, bad_index: int, kind: str) -> None:
    """A message offer_batch cannot take stops the batch like a refusal: the ones before it go in and
    are counted; the error is raised when it is the first (the caller offering the rest)."""
    sub, pub = pair(client, 14, "aeron:ipc?term-length=64k")
    bad: Any = {"str": "not bytes", "strided": memoryview(b"abcdef")[::2],
                "too_long": bytes(pub.max_message_length + 1)}[kind]
    error: type[BaseException] = {"str": TypeError, "strided": BufferError,
                                  "too_long": aeron_async.MessageTooLongError}[kind]
    good = [b"good %d" % i for i in range(bad_index + 5)]
    batch = good[:bad_index] + [bad] + good[bad_index:]
    before = pub.position
    if bad_index == 0:
        with pytest.raises(error):
            pub.offer_batch(batch)
        assert pub.position == before
        rest = batch[1:]
    else:
        assert pub.offer_batch(batch) == bad_index
        with pytest.raises(error):
            pub.offer_batch(batch[bad_index:])
        rest = batch[bad_index + 1:]
    assert pub.offer_batch(rest) == len(rest)
    assert [m.data for m in collect(sub, len(good))] == good
    assert_nothing_more(sub)


# ---- Message ----


def test_message_record() -> None:
    m = aeron_async.Message(b"payload", 11, 22, 2**40, -(2**63))
    assert (m.data, m.session_id, m.stream_id, m.position, m.reserved_value) == (b"payload", 11, 22, 2**40, -(2**63))
    d = aeron_async.Message(bytearray(b"ba"))
    assert type(d.data) is bytes and d.data == b"ba"
    assert (d.session_id, d.stream_id, d.position, d.reserved_value) == (0, 0, 0, 0)
    kw = aeron_async.Message(data=memoryview(b"mv"), position=5, reserved_value=6)
    assert (kw.data, kw.position, kw.reserved_value) == (b"mv", 5, 6)
    assert type(kw.data) is bytes
    r = repr(m)
    assert "7 bytes" in r and "session=11" in r and str(2**40) in r
    for name in ("data", "session_id", "stream_id", "position", "reserved_value"):
        with pytest.raises(AttributeError):
            setattr(m, name, getattr(m, name))
        with pytest.raises(AttributeError):
            delattr(m, name)
    with pytest.raises(AttributeError):
        m.extra = 1  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        aeron_async.Message("a str")
    with pytest.raises(TypeError):
        aeron_async.Message(3)
    with pytest.raises(TypeError):
        aeron_async.Message()
    with pytest.raises(OverflowError):
        aeron_async.Message(b"x", 2**40)
    assert not gc.is_tracked(m)  # holds only bytes: never part of a cycle


def test_message_pickle_and_copy_round_trip(client: aeron_async.Aeron) -> None:
    sub, pub = pair(client, 15)
    offer_all(pub, b"\x00pickled\xff" * 100)
    (polled,) = collect(sub, 1)
    fields = ("data", "session_id", "stream_id", "position", "reserved_value")
    made = aeron_async.Message(b"x", -1, 2**31 - 1, 2**63 - 1, -(2**63))
    for m in (polled, made):
        for clone in [pickle.loads(pickle.dumps(m, protocol)) for protocol in range(pickle.HIGHEST_PROTOCOL + 1)] + [
                copy.copy(m), copy.deepcopy(m)]:
            assert type(clone) is aeron_async.Message
            assert [getattr(clone, f) for f in fields] == [getattr(m, f) for f in fields]
    assert polled.session_id == pub.session_id and polled.stream_id == 15


def test_polled_message_holds_the_only_reference_to_its_data(client: aeron_async.Aeron) -> None:
    sub, pub = pair(client, 16)
    offer_all(pub, b"refcounted message")
    (m,) = collect(sub, 1)
    # counted outside the asserts (pytest's assertion rewriting keeps references to operands)
    through_attribute = sys.getrefcount(m.data)  # the message's own + the call's argument
    data = m.data
    with_local = sys.getrefcount(data)  # + the local
    del m
    after_del = sys.getrefcount(data)  # the message released its reference
    assert (through_attribute, with_local, after_del) == (2, 3, 2)
    assert data == b"refcounted message"


# ---- poll_messages ----


def test_poll_messages_respects_max_messages(client: aeron_async.Aeron) -> None:
    sub, pub = pair(client, 17)
    assert pub.offer_batch([b"%d" % i for i in range(50)]) == 50
    assert sub.poll_messages(0) == []
    assert sub.poll_messages(-5) == []
    first = sub.poll_messages(7)
    assert len(first) == 7
    second = sub.poll_messages(max_messages=1)
    assert len(second) == 1
    third = sub.poll_messages(max_messages=100, fragment_limit=3)
    assert len(third) == 3
    assert sub.poll_messages(fragment_limit=0) == []
    rest = collect(sub, 50 - 11)
    assert [m.data for m in first + second + third + rest] == [b"%d" % i for i in range(50)]
    with pytest.raises(TypeError):
        sub.poll_messages("7")
    with pytest.raises(TypeError):
        sub.poll_messages(1, 2, 3)
    with pytest.raises(TypeError, match="unexpected"):
        sub.poll_messages(bogus=1)
    with pytest.raises(TypeError):
        sub.poll_messages(1, max_messages=2)


def test_poll_messages_returns_at_most_65536_whatever_max_messages_says(client: aeron_async.Aeron) -> None:
    sub, pub = pair(client, 27, "aeron:ipc?term-length=16m")  # a window of 131,072 such frames
    total = 70_000
    sent = 0
    while sent < total:
        accepted = pub.offer_batch([b"m"] * min(4096, total - sent))
        assert accepted > 0
        sent += accepted
    first = sub.poll_messages(2**31 - 1)  # no array of 2^31 entries reserved: capped at 65,536
    assert len(first) == 65_536
    rest = collect(sub, total - 65_536)
    assert len(first) + len(rest) == total


def test_image_poll_messages_only_its_session(client: aeron_async.Aeron) -> None:
    sub = client.add_subscription("aeron:ipc", 18)
    a = client.add_exclusive_publication("aeron:ipc", 18)
    b = client.add_exclusive_publication("aeron:ipc", 18)
    wait_for(lambda: len(sub.images) == 2, what="two images")
    assert a.offer_batch([b"a%d" % i for i in range(20)]) == 20
    assert b.offer_batch([b"b%d" % i for i in range(20)]) == 20
    image_a = sub.image_by_session_id(a.session_id)
    assert image_a is not None
    got = image_a.poll_messages(max_messages=5)
    assert [m.data for m in got] == [b"a%d" % i for i in range(5)]
    got += image_a.poll_messages(1000)
    assert [m.data for m in got] == [b"a%d" % i for i in range(20)]
    assert all(m.session_id == a.session_id for m in got)
    assert image_a.position == a.position
    rest = collect(sub, 20)
    assert [m.data for m in rest] == [b"b%d" % i for i in range(20)]
    with pytest.raises(TypeError):
        sub._poll_image_messages()
    with pytest.raises(ValueError):
        sub._poll_image_messages(0)
    sub.close()
    with pytest.raises(aeron_async.ClosedError):
        image_a.poll_messages()


def test_poll_messages_on_closed_subscription_raises_closed(client: aeron_async.Aeron) -> None:
    sub, pub = pair(client, 19)
    offer_all(pub, b"left unread")
    sub.close()
    with pytest.raises(aeron_async.ClosedError, match="closed"):
        sub.poll_messages()
    with pytest.raises(aeron_async.ClosedError):
        sub.poll_messages(0)


def test_poll_messages_no_per_message_leak(client: aeron_async.Aeron) -> None:
    """200,000 messages through offer_batch and poll_messages: traced memory does not grow with the
    count once warmed up (a leaked 16-byte message would be ~10 MB)."""
    sub, pub = pair(client, 20)
    batch = [struct.pack("<Q", i) * 2 for i in range(1000)]

    def pump(count: int) -> int:
        received = 0
        checksum = 0
        deadline = time.monotonic() + 30
        for _ in range(count // len(batch)):
            rest = batch
            while rest:
                n = pub.offer_batch(rest)
                if n > 0:
                    rest = rest[n:]
                for m in sub.poll_messages(1024):
                    checksum += m.data[0]
                    received += 1
                assert time.monotonic() < deadline
        while received < count:
            for m in sub.poll_messages(1024):
                checksum += m.data[0]
                received += 1
            assert time.monotonic() < deadline
        assert received == count
        return checksum

    tracemalloc.start()
    try:
        pump(20_000)
        gc.collect()
        baseline = tracemalloc.get_traced_memory()[0]
        checksum = pump(200_000)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - baseline
    finally:
        tracemalloc.stop()
    assert checksum == 200 * sum(i & 0xFF for i in range(1000))
    assert grown < 1024 * 1024, f"traced memory grew by {grown} bytes over 200,000 messages"
    probe = sub.poll_messages()
    assert probe == []


# ---- IdleStrategy ----


@pytest.mark.parametrize(
    "spec, name",
    [("backoff", "backoff"), ("backoff:10-20-1us-1ms", "backoff"), ("spin", "spin"), ("yield", "yield"),
     ("sleeping:1ms", "sleeping"), ("sleeping", "sleeping"), ("noop", "noop"),
     ("aa_idle_strategy_backoff", "backoff")],
)
def test_idle_strategy_names(spec: str, name: str) -> None:
    idle = aeron_async.IdleStrategy(spec)
    assert idle.name == name
    assert repr(idle) == f"IdleStrategy({name!r})"
    for work in (1, 5, 0):
        idle.idle(work)
    idle.reset()


def test_idle_strategy_default_is_backoff() -> None:
    assert aeron_async.IdleStrategy().name == "backoff"


@pytest.mark.parametrize(
    "spec, fragments",
    [("bogus", ["bogus", "backoff", "spin", "yield", "sleeping", "noop"]),
     ("Backoff", ["Backoff", "backoff"]),
     ("backoff:1-2", ["1-2", "spins-yields-minPark-maxPark"]),
     ("backoff:10-20-1ms-1us", ["minPark <= maxPark"]),
     ("backoff:10-20-1us-1ms-5", ["spins-yields-minPark-maxPark"]),
     ("spin:3", ["no arguments", "3"]),
     ("sleeping:0", ["positive duration"]),
     ("sleeping:soon", ["soon"])],
)
def test_idle_strategy_rejects_bad_specs(spec: str, fragments: list[str]) -> None:
    with pytest.raises(aeron_async.ConfigurationError) as info:
        aeron_async.IdleStrategy(spec)
    assert isinstance(info.value, ValueError)
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)


def timed(call: Callable[[], None], times: int = 1) -> float:
    start = time.perf_counter()
    for _ in range(times):
        call()
    return time.perf_counter() - start


def test_sleeping_idle_sleeps_only_without_work() -> None:
    idle = aeron_async.IdleStrategy("sleeping:20ms")
    assert timed(lambda: idle.idle(0)) >= 0.015
    assert timed(lambda: idle.idle(), 2) >= 0.030
    # with work there is no sleep: 10 passes would take 200 ms if it slept
    assert timed(lambda: idle.idle(1), 10) < 0.15


def test_backoff_custom_park_is_applied() -> None:
    idle = aeron_async.IdleStrategy("backoff:0-0-10ms-10ms")
    assert timed(lambda: idle.idle(0)) >= 0.008  # no spins, no yields: parks 10 ms at once


def test_backoff_parks_then_resets() -> None:
    idle = aeron_async.IdleStrategy("backoff")  # 10 spins, 20 yields, parks 1 us doubling to 1 ms
    # 100 empty passes: 30 spin or yield, 70 park (about 60 of them at 1 ms)
    assert timed(lambda: idle.idle(0), 100) >= 0.02
    # now parked at the longest: each empty pass sleeps at least 1 ms
    assert timed(lambda: idle.idle(0), 10) >= 0.009
    # after a pass with work (or reset) it starts over with spins: 10 passes take far under the
    # 10 ms they would take parked; best of a few tries, against a loaded machine's preemption
    for reset in (lambda: idle.idle(1), idle.reset):
        best = float("inf")
        for _ in range(5):
            timed(lambda: idle.idle(0), 100)  # back to parking
            reset()
            best = min(best, timed(lambda: idle.idle(0), 10))
        assert best < 0.003, f"10 passes after a reset took {best * 1e3:.2f} ms"


def test_idle_strategy_in_a_poll_loop(client: aeron_async.Aeron) -> None:
    sub, pub = pair(client, 21)
    idle = aeron_async.IdleStrategy("backoff:10-20-1us-1ms")
    assert pub.offer_batch([b"x%d" % i for i in range(10)]) == 10
    got: list[bytes] = []
    deadline = time.monotonic() + 10
    while len(got) < 10:
        assert time.monotonic() < deadline
        messages = sub.poll_messages(3)
        assert len(messages) <= 3
        got.extend(m.data for m in messages)
        idle.idle(len(messages))
    assert got == [b"x%d" % i for i in range(10)]
