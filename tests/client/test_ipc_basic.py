"""IPC publications and subscriptions through an embedded driver: the synchronous API end to end."""

from __future__ import annotations

import struct
import threading
import time
import zlib

import pytest

import aeron_async
from aeron_async._aeron_native import lib
from conftest import offer_all, wait_for


def collect(sub: aeron_async.Subscription, count: int, timeout: float = 10.0) -> list[aeron_async.Message]:
    out: list[aeron_async.Message] = []
    wait_for(lambda: out.extend(sub.poll_messages()) or len(out) >= count, timeout, what=f"{count} messages")
    return out


def connected_ipc(client: aeron_async.Aeron, stream_id: int) -> tuple[aeron_async.Subscription, aeron_async.Publication]:
    """A subscription and a publication of aeron:ipc on `stream_id`, once connected."""
    sub = client.add_subscription("aeron:ipc", stream_id)
    pub = client.add_publication("aeron:ipc", stream_id)
    wait_for(lambda: pub.is_connected, what="publication connected")
    return sub, pub


def test_offer_and_poll_messages_round_trip(client: aeron_async.Aeron) -> None:
    sub, pub = connected_ipc(client, 10)
    positions = [offer_all(pub, f"message {i}".encode()) for i in range(100)]
    assert positions == sorted(positions) and positions[0] > 0
    messages = collect(sub, 100)
    assert [m.data for m in messages] == [f"message {i}".encode() for i in range(100)]
    assert all(m.session_id == pub.session_id and m.stream_id == 10 for m in messages)
    assert messages[-1].position == positions[-1]


def test_not_connected_without_subscriber(client: aeron_async.Aeron) -> None:
    pub = client.add_publication("aeron:ipc", 11)
    assert not pub.is_connected
    assert pub.offer(b"x") == aeron_async.NOT_CONNECTED


def test_a_connected_publication_takes_an_offer_at_once(client: aeron_async.Aeron) -> None:
    """The driver moves an IPC publication's limit as it links the subscriber, before it marks the
    publication connected: a publisher that sees `is_connected` is not back pressured by a limit
    still at its start (Aeron's driver moves the limit on its next duty cycle). A fresh
    subscription each time, whose link finds the publication; and the other way round."""
    for attempt in range(40):
        stream_id = 700 + attempt
        if attempt % 2:
            pub = client.add_exclusive_publication("aeron:ipc", stream_id)
            sub = client.add_subscription("aeron:ipc", stream_id)
        else:
            sub = client.add_subscription("aeron:ipc", stream_id)
            pub = client.add_exclusive_publication("aeron:ipc", stream_id)
        deadline = time.monotonic() + 10
        while not pub.is_connected:
            assert time.monotonic() < deadline, "never connected"
        assert pub.position_limit > pub.position, (attempt, pub.position_limit)
        assert pub.offer(b"first") > 0
        pub.close()
        sub.close()


def test_poll_handler_gets_memoryview_and_header(client: aeron_async.Aeron) -> None:
    sub, pub = connected_ipc(client, 12)
    offer_all(pub, b"abc")
    offer_all(pub, b"defg")
    seen = []

    def handler(data: memoryview, header: aeron_async.Header) -> None:
        assert isinstance(data, memoryview)
        seen.append((bytes(data), header.session_id, header.stream_id, header.position, header.flags,
                     header.term_offset))

    wait_for(lambda: sub.poll(handler, 10) >= 0 and len(seen) >= 2)
    assert [s[0] for s in seen] == [b"abc", b"defg"]
    assert seen[0][1] == pub.session_id and seen[0][2] == 12
    assert seen[0][4] == 0xC0
    assert seen[1][5] == seen[0][5] + 64  # 32-byte header + payload aligned to 32
    assert seen[1][3] == pub.position


def test_fragmented_messages_reassembled_by_both_forms(client: aeron_async.Aeron) -> None:
    sub = client.add_subscription("aeron:ipc?term-length=1m", 13)
    pub = client.add_publication("aeron:ipc?term-length=1m", 13)
    wait_for(lambda: pub.is_connected)
    assert pub.max_message_length == 128 * 1024
    payloads = [bytes([i % 251]) * n for i, n in enumerate([1375, 1376, 1377, 5000, 128 * 1024, 0, 1])]
    for p in payloads:
        offer_all(pub, p)
    got = []
    assembler = aeron_async.FragmentAssembler(lambda data, header: got.append(bytes(data)))
    wait_for(lambda: sub.poll(assembler, 100) >= 0 and len(got) >= len(payloads))
    assert got == payloads


def test_poll_messages_after_handler_form_share_position(client: aeron_async.Aeron) -> None:
    sub, pub = connected_ipc(client, 14)
    for i in range(10):
        offer_all(pub, struct.pack("<i", i))
    first = []
    wait_for(lambda: sub.poll(lambda d, h: first.append(struct.unpack("<i", d)[0]), 4) > 0)
    rest = collect(sub, 10 - len(first))
    assert first + [struct.unpack("<i", m.data)[0] for m in rest] == list(range(10))


def test_try_claim_commit_and_abort(client: aeron_async.Aeron) -> None:
    sub, pub = connected_ipc(client, 15)
    def claim(length: int) -> aeron_async.BufferClaim:
        def attempt() -> aeron_async.BufferClaim | None:
            result = pub.try_claim(length)
            return None if isinstance(result, int) else result
        return wait_for(attempt, what="claim")

    first = claim(5)
    first.data[:] = b"hello"
    first.commit()
    claim(3).abort()
    with claim(2) as view:
        view[:] = b"ok"
    assert [m.data for m in collect(sub, 2)] == [b"hello", b"ok"]
    with pytest.raises(aeron_async.MessageTooLongError, match="max payload length"):
        pub.try_claim(pub.max_payload_length + 1)


def test_offer_vectors_gathers(client: aeron_async.Aeron) -> None:
    sub, pub = connected_ipc(client, 16)
    wait_for(lambda: pub.offer_vectors([b"head-", memoryview(b"body-"), bytearray(b"tail")]) > 0)
    big = [bytes([i]) * 1000 for i in range(10)]
    wait_for(lambda: pub.offer_vectors(big) > 0)
    assert [m.data for m in collect(sub, 2)] == [b"head-body-tail", b"".join(big)]


def test_exclusive_publications_have_own_sessions(client: aeron_async.Aeron) -> None:
    sub = client.add_subscription("aeron:ipc", 17)
    a = client.add_exclusive_publication("aeron:ipc", 17)
    b = client.add_exclusive_publication("aeron:ipc", 17)
    shared1 = client.add_publication("aeron:ipc", 17)
    shared2 = client.add_publication("aeron:ipc", 17)
    assert isinstance(a, aeron_async.ExclusivePublication)
    assert a.session_id != b.session_id
    assert shared1.session_id == shared2.session_id
    wait_for(lambda: len(sub.images) == 3, what="three images")
    for i in range(50):
        offer_all(a, b"A%d" % i)
        offer_all(b, b"B%d" % i)
    messages = collect(sub, 100)
    by_session: dict[int, list[bytes]] = {}
    for m in messages:
        by_session.setdefault(m.session_id, []).append(m.data)
    assert by_session[a.session_id] == [b"A%d" % i for i in range(50)]
    assert by_session[b.session_id] == [b"B%d" % i for i in range(50)]
    assert {img.session_id for img in sub.images} == {a.session_id, b.session_id, shared1.session_id}


def test_exclusive_publication_rotates_terms(client: aeron_async.Aeron) -> None:
    channel = "aeron:ipc?term-length=64k"
    sub = client.add_subscription(channel, 18)
    pub = client.add_exclusive_publication(channel, 18)
    wait_for(lambda: pub.is_connected)
    received: list[bytes] = []
    for i in range(3000):  # ~300 KiB: several rotations of a 64 KiB term
        payload = struct.pack("<I", i) * 20
        deadline = time.monotonic() + 10
        while pub.offer(payload) < 0:
            received.extend(m.data for m in sub.poll_messages())
            assert time.monotonic() < deadline
    wait_for(lambda: received.extend(m.data for m in sub.poll_messages()) or len(received) >= 3000)
    assert received == [struct.pack("<I", i) * 20 for i in range(3000)]


def test_image_callbacks_and_per_image_poll(client: aeron_async.Aeron) -> None:
    available: list[aeron_async.Image] = []
    unavailable: list[aeron_async.Image] = []
    sub = client.add_subscription("aeron:ipc", 19, on_available_image=available.append,
                                  on_unavailable_image=unavailable.append)
    pub = client.add_exclusive_publication("aeron:ipc", 19)
    wait_for(lambda: sub.poll(lambda d, h: None, 1) >= 0 and available, what="available image")
    image = available[0]
    assert image.session_id == pub.session_id and image.source_identity == "aeron:ipc"
    offer_all(pub, b"via image")
    got = []
    wait_for(lambda: image.poll(lambda d, h: got.append(bytes(d)), 10) or got)
    assert got == [b"via image"]
    assert image.position == pub.position
    pub.close()
    wait_for(lambda: sub.poll(lambda d, h: None, 10) >= 0 and unavailable, what="unavailable image")
    assert unavailable[0] is image
    assert image.is_end_of_stream


def test_image_events_taken_after_the_image_and_its_log_are_gone(client: aeron_async.Aeron) -> None:
    """A subscription not polled while an image comes and goes: its events are taken after the
    client has let go of the image's log (the 3 s resource linger), and describe it without it."""
    available: list[aeron_async.Image] = []
    unavailable: list[aeron_async.Image] = []
    sub = client.add_subscription("aeron:ipc?mtu=4096", 23, on_available_image=available.append,
                                  on_unavailable_image=unavailable.append)
    pub = client.add_exclusive_publication("aeron:ipc?mtu=4096", 23)
    session_id, term_length = pub.session_id, pub.term_length
    # nothing here takes the subscription's image events: only the native image count is read
    wait_for(lambda: lib.aa_subscription_image_count(sub._ptr) == 1, what="the image")
    pub.close()
    wait_for(lambda: lib.aa_subscription_image_count(sub._ptr) == 0, what="the image gone")
    time.sleep(3.5)  # past the client's resource linger: the retired image's log is unmapped
    assert sub.poll(lambda d, h: None, 10) == 0  # takes both events
    assert [i.session_id for i in available] == [session_id] and unavailable == available
    image = available[0]
    assert (image.mtu_length, image.stream_id, image.term_length) == (4096, 23, term_length)
    assert image.is_closed and image.is_end_of_stream
    assert image.end_of_stream_position == image.position


def test_closing_publication_delivers_everything_then_end_of_stream(client: aeron_async.Aeron) -> None:
    sub, pub = connected_ipc(client, 20)
    for i in range(1000):
        offer_all(pub, struct.pack("<q", i))
    pub.close()
    messages = collect(sub, 1000)
    assert [struct.unpack("<q", m.data)[0] for m in messages] == list(range(1000))
    wait_for(lambda: sub.poll(lambda d, h: None, 10) >= 0 and not sub.images, what="image removed")


def test_concurrent_publication_four_threads(client: aeron_async.Aeron) -> None:
    """Four threads offer 200,000 messages each into one concurrent publication: nothing lost,
    nothing corrupted, each thread's messages in its own order."""
    per_thread = 200_000
    sub = client.add_subscription("aeron:ipc?term-length=4m", 21)
    pub = client.add_publication("aeron:ipc?term-length=4m", 21)
    wait_for(lambda: pub.is_connected)
    errors: list[BaseException] = []

    def publish(thread_id: int) -> None:
        try:
            for seq in range(per_thread):
                body = struct.pack("<II", thread_id, seq)
                payload = body + struct.pack("<I", zlib.crc32(body)) + bytes(seq % 40)
                deadline = time.monotonic() + 30
                while pub.offer(payload) < 0:
                    if time.monotonic() > deadline:
                        raise AssertionError(f"thread {thread_id} stuck at {seq}")
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=publish, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    next_seq = [0, 0, 0, 0]
    total = 0
    deadline = time.monotonic() + 120
    while total < 4 * per_thread:
        assert time.monotonic() < deadline, f"received {total} of {4 * per_thread}"
        for m in sub.poll_messages(max_messages=4096):
            data = m.data
            thread_id, seq = struct.unpack_from("<II", data)
            assert struct.unpack_from("<I", data, 8)[0] == zlib.crc32(data[:8]), "corrupted message"
            assert len(data) == 12 + seq % 40
            assert seq == next_seq[thread_id], f"thread {thread_id}: expected {next_seq[thread_id]}, got {seq}"
            next_seq[thread_id] += 1
            total += 1
        assert not errors, errors
    for t in threads:
        t.join(timeout=30)
    assert next_seq == [per_thread] * 4
