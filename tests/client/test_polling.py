"""Aeron's fragment-handler API: poll, controlled_poll (ABORT/BREAK/COMMIT/CONTINUE), bounded
polls, block_poll, FragmentAssembler / ControlledFragmentAssembler and setting Image.position,
each on IPC and on UDP (one driver, loopback), fragmented messages included."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

import pytest

import aeron_async
from aeron_async import ControlledPollAction as Action
from conftest import TEST_DRIVER_SETTINGS, new_aeron_dir, offer_all, wait_for

DATA = struct.Struct("<ibBhiiiiq")  # frame_length version flags type term_offset session stream term_id reserved
TYPE_PAD, TYPE_DATA = 0, 1
TERM = 1 << 20
SETTINGS = dict(TEST_DRIVER_SETTINGS, term_buffer_length="1m", ipc_term_buffer_length="1m")


class Stream:
    """A publication and a subscription on one channel, connected, with the subscription's image."""

    def __init__(self, client: aeron_async.Aeron, channel: str, stream_id: int = 10) -> None:
        self.client = client
        self.channel = channel
        self.sub = client.add_subscription(channel, stream_id)
        self.pub = client.add_exclusive_publication(channel, stream_id)
        wait_for(lambda: self.pub.is_connected and self.sub.images, what="publication connected")
        self.image: aeron_async.Image = self.sub.images[0]
        self.start = self.image.position

    def offer(self, payloads: list[bytes]) -> list[int]:
        """Offer each payload; returns the position after each."""
        return [offer_all(self.pub, p) for p in payloads]

    def _offer_reserved(self, payload: bytes, reserved_value: int) -> int:
        def attempt() -> int:
            return self.pub.offer(payload, reserved_value)
        return int(wait_for(lambda: (r := attempt()) > 0 and r, what="offer accepted"))

    def received(self, position: int) -> None:
        """Wait until the image holds everything up to `position` (consuming nothing): poll it all,
        then move back to where it was."""
        here = self.image.position
        seen: list[int] = []
        wait_for(lambda: self.image.poll(lambda d, h: seen.append(h.position), 1000) >= 0 and
                 bool(seen) and seen[-1] >= position, what=f"data up to {position}")
        self.image.position = here


@pytest.fixture(params=["ipc", "udp"])
def stream(request: pytest.FixtureRequest) -> Iterator[Stream]:
    from conftest import udp_channel
    import shutil
    aeron_dir = new_aeron_dir()
    try:
        with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **SETTINGS) as driver:
            with aeron_async.Aeron.connect(driver.aeron_dir, driver_timeout=5.0) as client:
                channel = "aeron:ipc" if request.param == "ipc" else udp_channel()
                yield Stream(client, channel)
    finally:
        shutil.rmtree(aeron_dir, ignore_errors=True)


def body(i: int, size: int) -> bytes:
    return bytes((i * 7 + j) & 0xFF for j in range(size))


def collect(into: list[Any]) -> Any:
    def handler(data: memoryview, header: aeron_async.Header) -> None:
        into.append((bytes(data), header.position, header.flags, header.session_id))
    return handler


def poll_until(s: Stream, handler: Any, count: list[Any], n: int, controlled: bool = False) -> None:
    poll = s.sub.controlled_poll if controlled else s.sub.poll
    wait_for(lambda: poll(handler, 100) >= 0 and len(count) >= n, what=f"{n} deliveries")


# ---- poll ----


def test_poll_hands_each_fragment_with_its_header(stream: Stream) -> None:
    s = stream
    payloads = [body(i, 20 + i) for i in range(50)]
    positions = s.offer(payloads[:25]) + [s._offer_reserved(p, -12345) for p in payloads[25:]]
    seen: list[tuple[Any, ...]] = []

    def handler(data: memoryview, header: aeron_async.Header) -> None:
        assert data.readonly
        seen.append((bytes(data), header.position, header.session_id, header.stream_id, header.flags,
                     header.frame_length, header.type, header.reserved_value, header.term_offset,
                     header.term_id, header.initial_term_id, header.position_bits_to_shift,
                     header.next_term_offset, header.image))

    poll_until(s, handler, seen, 50)
    assert [x[0] for x in seen] == payloads
    assert [x[1] for x in seen] == positions
    for i, x in enumerate(seen):
        _, position, session, stream_id, flags, frame_length, type_, reserved, term_offset, term_id, initial, bits, \
            next_offset, image = x
        assert (session, stream_id, flags, type_) == (s.pub.session_id, 10, 0xC0, TYPE_DATA)
        assert frame_length == 32 + len(payloads[i])
        assert reserved == (0 if i < 25 else -12345)
        assert bits == 20 and initial == s.pub.initial_term_id
        assert (term_id - initial) * TERM + next_offset == position
        assert next_offset == (term_offset + frame_length + 31) & ~31
        assert image is s.image
    assert s.image.position == positions[-1]
    assert s.sub.poll(handler, 10) == 0


def test_poll_respects_fragment_limit(stream: Stream) -> None:
    s = stream
    positions = s.offer([body(i, 40) for i in range(10)])
    s.received(positions[-1])
    got: list[Any] = []
    assert s.sub.poll(collect(got), 3) == 3
    assert s.image.position == positions[2]
    assert s.image.poll(collect(got), 100) == 7
    assert s.image.position == positions[-1]


def test_a_kept_view_is_released_and_a_kept_header_keeps_its_values(stream: Stream) -> None:
    s = stream
    positions = s.offer([b"first", b"second", b"third"])
    s.received(positions[-1])
    kept: list[Any] = []
    copies: list[bytes] = []

    def handler(data: memoryview, header: aeron_async.Header) -> None:
        copies.append(bytes(data))
        if not kept:
            kept.extend((data, header))

    assert s.sub.poll(handler, 10) == 3
    view, header = kept
    with pytest.raises(ValueError):
        bytes(view)  # released after its call: it can no longer read the log
    assert header.position == positions[0] and header.frame_length == 32 + 5
    assert copies == [b"first", b"second", b"third"]


def test_handler_exception_consumes_its_fragment_and_stops(stream: Stream) -> None:
    s = stream
    positions = s.offer([body(i, 30) for i in range(6)])
    s.received(positions[-1])
    seen: list[int] = []

    def handler(data: memoryview, header: aeron_async.Header) -> None:
        seen.append(header.position)
        if len(seen) == 2:
            raise KeyError("boom")

    with pytest.raises(KeyError):
        s.sub.poll(handler, 10)
    assert seen == positions[:2]
    assert s.image.position == positions[1]  # just after the fragment whose handler raised
    assert s.sub.poll(handler, 10) == 4
    assert seen[2:] == positions[2:]


def test_handler_that_closes_the_subscription_stops_the_poll(stream: Stream) -> None:
    s = stream
    positions = s.offer([body(i, 30) for i in range(5)])
    s.received(positions[-1])
    seen: list[int] = []

    def handler(data: memoryview, header: aeron_async.Header) -> None:
        seen.append(header.position)
        s.sub.close()

    assert s.sub.poll(handler, 10) == 1
    assert seen == positions[:1]
    with pytest.raises(aeron_async.ClosedError):
        s.sub.poll(handler, 10)


def test_bad_handlers_are_rejected(stream: Stream) -> None:
    with pytest.raises(TypeError, match="callable"):
        stream.sub.poll(42, 10)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="ControlledFragmentAssembler"):
        stream.sub.controlled_poll(aeron_async.FragmentAssembler(lambda d, h: None), 10)
    with pytest.raises(TypeError, match="FragmentAssembler"):
        stream.sub.poll(aeron_async.ControlledFragmentAssembler(lambda d, h: Action.CONTINUE), 10)


# ---- FragmentAssembler ----


def test_fragment_assembler_delivers_whole_messages(stream: Stream) -> None:
    s = stream
    max_payload = s.pub.max_payload_length
    sizes = [10, max_payload, max_payload + 1, 3 * max_payload + 17, 5, 20_000, 1]
    payloads = [body(i, n) for i, n in enumerate(sizes)]
    positions = s.offer(payloads)
    got: list[Any] = []
    headers: list[tuple[int, ...]] = []

    def on_message(data: memoryview, header: aeron_async.Header) -> None:
        got.append(bytes(data))
        headers.append((header.position, header.frame_length, header.flags, header.session_id))

    assembler = aeron_async.FragmentAssembler(on_message)
    wait_for(lambda: s.sub.poll(assembler, 7) >= 0 and len(got) >= len(payloads), what="whole messages")
    assert got == payloads
    assert [h[0] for h in headers] == positions
    assert [h[1] for h in headers] == [32 + n for n in sizes]
    assert all(h[2] & 0xC0 == 0xC0 and h[3] == s.pub.session_id for h in headers)


def test_fragment_assembler_called_from_a_python_handler(stream: Stream) -> None:
    s = stream
    payloads = [body(1, 3 * s.pub.max_payload_length), b"small"]
    s.offer(payloads)
    got: list[bytes] = []
    assembler = aeron_async.FragmentAssembler(lambda d, h: got.append(bytes(d)))

    def wrapper(data: memoryview, header: aeron_async.Header) -> None:
        assembler(data, header)

    wait_for(lambda: s.sub.poll(wrapper, 10) >= 0 and len(got) >= 2, what="whole messages")
    assert got == payloads
    with pytest.raises(TypeError, match="Header"):
        assembler(b"x", object())


def test_fragment_assembler_drops_a_message_whose_fragment_is_skipped(stream: Stream) -> None:
    s = stream
    big = body(3, 3 * s.pub.max_payload_length)
    positions = s.offer([big, b"after"])
    s.received(positions[-1])
    got: list[bytes] = []
    assembler = aeron_async.FragmentAssembler(lambda d, h: got.append(bytes(d)))
    assert s.image.poll(assembler, 1) == 1  # BEGIN
    assert s.image.poll(lambda d, h: None, 1) == 1  # the middle fragment, not seen by the assembler
    assert s.image.poll(assembler, 10) == 2  # END (dropped: it does not follow BEGIN) and "after"
    assert got == [b"after"]


def test_controlled_fragment_assembler_abort_redelivers_the_whole_message(stream: Stream) -> None:
    s = stream
    big = body(5, 2 * s.pub.max_payload_length + 3)
    positions = s.offer([big, b"next"])
    s.received(positions[-1])
    calls: list[bytes] = []

    def on_message(data: memoryview, header: aeron_async.Header) -> Action:
        calls.append(bytes(data))
        return Action.ABORT if len(calls) == 1 else Action.CONTINUE

    assembler = aeron_async.ControlledFragmentAssembler(on_message)
    s.sub.controlled_poll(assembler, 10)
    assert calls == [big]
    assert s.image.position < positions[0]  # the END fragment is still to be read
    wait_for(lambda: s.sub.controlled_poll(assembler, 10) >= 0 and len(calls) >= 3, what="redelivery")
    assert calls == [big, big, b"next"]
    assert s.image.position == positions[-1]


# ---- controlled_poll ----


def test_controlled_poll_actions(stream: Stream) -> None:
    s = stream
    positions = s.offer([body(i, 24) for i in range(8)])
    s.received(positions[-1])
    start = s.image.position
    seen: list[int] = []

    # ABORT: nothing consumed, the fragment comes again
    def abort(data: memoryview, header: aeron_async.Header) -> Action:
        seen.append(header.position)
        return Action.ABORT

    assert s.sub.controlled_poll(abort, 10) == 0
    assert seen == positions[:1] and s.image.position == start

    # BREAK: this one consumed, then stop
    seen.clear()

    def brk(data: memoryview, header: aeron_async.Header) -> Action:
        seen.append(header.position)
        return Action.BREAK

    assert s.sub.controlled_poll(brk, 10) == 1
    assert seen == positions[:1] and s.image.position == positions[0]

    # CONTINUE: the position is stored when the poll ends; COMMIT: at once
    during: list[tuple[int, int]] = []

    def cont(data: memoryview, header: aeron_async.Header) -> Action:
        during.append((header.position, s.image.position))
        return Action.CONTINUE

    assert s.image.controlled_poll(cont, 2) == 2
    assert during == [(positions[1], positions[0]), (positions[2], positions[0])]
    assert s.image.position == positions[2]
    during.clear()

    def commit(data: memoryview, header: aeron_async.Header) -> int:
        during.append((header.position, s.image.position))
        return int(Action.COMMIT)  # plain ints are accepted too

    assert s.image.controlled_poll(commit, 3) == 3
    assert during == [(positions[3], positions[2]), (positions[4], positions[3]), (positions[5], positions[4])]
    assert s.image.position == positions[5]


def test_controlled_poll_abort_after_continue_keeps_what_came_before(stream: Stream) -> None:
    s = stream
    positions = s.offer([body(i, 24) for i in range(4)])
    s.received(positions[-1])
    n = [0]

    def handler(data: memoryview, header: aeron_async.Header) -> Action:
        n[0] += 1
        return Action.ABORT if n[0] == 3 else Action.CONTINUE

    assert s.sub.controlled_poll(handler, 10) == 2
    assert s.image.position == positions[1]


def test_controlled_poll_exception_and_bad_action(stream: Stream) -> None:
    s = stream
    positions = s.offer([body(i, 24) for i in range(5)])
    s.received(positions[-1])

    def commit_then_raise(data: memoryview, header: aeron_async.Header) -> Action:
        if header.position == positions[1]:
            raise RuntimeError("handler failed")
        return Action.COMMIT

    with pytest.raises(RuntimeError, match="handler failed"):
        s.sub.controlled_poll(commit_then_raise, 10)
    assert s.image.position == positions[1]
    with pytest.raises(TypeError, match="ControlledPollAction"):
        s.sub.controlled_poll(lambda d, h: None, 10)
    assert s.image.position == positions[2]  # a bad answer counts as a failure: consumed
    with pytest.raises(TypeError, match="ControlledPollAction"):
        s.sub.controlled_poll(lambda d, h: True, 10)
    with pytest.raises(TypeError, match="ControlledPollAction"):
        s.sub.controlled_poll(lambda d, h: 9, 10)
    assert s.image.position == positions[-1]


# ---- bounded polls ----


def test_bounded_polls_stop_at_the_limit(stream: Stream) -> None:
    s = stream
    positions = s.offer([body(i, 50) for i in range(6)])
    s.received(positions[-1])
    got: list[Any] = []
    assert s.image.bounded_poll(collect(got), s.image.position, 10) == 0
    assert s.image.bounded_poll(collect(got), positions[1], 10) == 2
    assert s.image.position == positions[1]
    # a limit inside a frame: the frame that starts before it is read whole
    assert s.image.bounded_poll(collect(got), positions[1] + 32, 10) == 1
    assert s.image.position == positions[2]
    seen: list[int] = []

    def cont(data: memoryview, header: aeron_async.Header) -> Action:
        seen.append(header.position)
        return Action.CONTINUE

    assert s.image.bounded_controlled_poll(cont, positions[4], 10) == 2
    assert seen == positions[3:5] and s.image.position == positions[4]
    assert s.image.bounded_controlled_poll(cont, positions[-1], 1) == 1  # the fragment limit still applies
    assert s.image.bounded_controlled_poll(cont, 1 << 62, 10) == 0
    assert s.image.position == positions[-1]


# ---- block_poll ----


def parse_frames(buffer: memoryview, offset: int, length: int) -> list[tuple[int, int, int]]:
    frames = []
    end = offset + length
    while offset < end:
        frame_length, _, flags, type_, term_offset, *_ = DATA.unpack_from(buffer, offset)
        assert term_offset == offset
        frames.append((type_, frame_length, flags))
        offset += (frame_length + 31) & ~31
    assert offset == end
    return frames


def test_block_poll_hands_runs_of_whole_frames(stream: Stream) -> None:
    s = stream
    positions = s.offer([body(i, 96) for i in range(10)])  # 128-byte frames
    s.received(positions[-1])
    start = s.image.position
    blocks: list[tuple[int, int, int, list[Any]]] = []

    def on_block(buffer: memoryview, offset: int, length: int, session_id: int, term_id: int) -> None:
        assert len(buffer) == TERM and buffer.readonly
        blocks.append((offset, length, session_id, parse_frames(buffer, offset, length)))
        assert term_id == s.pub.initial_term_id + start // TERM

    assert s.image.block_poll(on_block, 100) == 0  # shorter than a frame: nothing
    assert s.image.block_poll(on_block, 3 * 128 + 100) == 3 * 128
    assert s.image.position == positions[2]
    assert blocks[0][1] == 384 and [f[0] for f in blocks[0][3]] == [TYPE_DATA] * 3
    assert blocks[0][2] == s.pub.session_id
    assert s.sub.block_poll(on_block, 1 << 20) == 7 * 128
    assert s.image.position == positions[-1]
    assert s.sub.block_poll(on_block, 1 << 20) == 0


def test_block_poll_stops_at_the_term_end_and_gives_padding_alone(stream: Stream) -> None:
    s = stream
    payload = body(1, 992)  # 1024-byte frames
    blocks: list[tuple[int, int, list[Any]]] = []

    def on_block(buffer: memoryview, offset: int, length: int, session_id: int, term_id: int) -> None:
        blocks.append((offset, length, parse_frames(buffer, offset, length)))

    # 256 bytes first, so 1024-byte frames leave 768 bytes at the term's end: padding
    s.offer([body(0, 224)])
    target = s.start + TERM + 4096

    def caught_up() -> bool:
        return s.sub.block_poll(on_block, 64 * 1024) >= 0 and s.image.position >= s.pub.position

    while s.pub.position < target:
        s.offer([payload] * 64)
        wait_for(caught_up, what="blocks read")
    assert all(offset + length <= TERM for offset, length, _ in blocks)
    pads = [b for b in blocks if any(f[0] == TYPE_PAD for f in b[2])]
    assert pads, "the term end was padded"
    assert all(len(b[2]) == 1 and b[0] + b[1] == TERM for b in pads)


def test_block_poll_handler_exception_still_consumes_the_block(stream: Stream) -> None:
    s = stream
    positions = s.offer([body(i, 32) for i in range(3)])
    s.received(positions[-1])

    def fail(*args: Any) -> None:
        raise ValueError("no")

    with pytest.raises(ValueError):
        s.sub.block_poll(fail, 1 << 16)
    assert s.image.position == positions[-1]


# ---- Image.position ----


def test_position_set_forward_and_back(stream: Stream) -> None:
    s = stream
    positions = s.offer([body(i, 224) for i in range(8)])  # 256-byte frames
    s.received(positions[-1])
    start = s.image.position
    got: list[Any] = []
    s.image.position = positions[3]  # skip four frames
    assert s.image.poll(collect(got), 1) == 1 and got[-1][1] == positions[4]
    s.image.position = positions[0]  # back
    assert s.image.poll(collect(got), 1) == 1 and got[-1][1] == positions[1]
    s.image.position = start  # back to the join position
    assert s.image.poll(collect(got), 100) == 8
    assert [g[1] for g in got[2:]] == positions
    s.image.position = positions[-1]  # where it is: allowed


def test_bad_positions_are_rejected(stream: Stream) -> None:
    s = stream
    positions = s.offer([body(i, 224) for i in range(4)])
    s.received(positions[-1])
    start = s.image.position
    with pytest.raises(aeron_async.InvalidPositionError, match="frame-aligned"):
        s.image.position = positions[1] + 8
    with pytest.raises(aeron_async.InvalidPositionError, match="inside a frame"):
        s.image.position = positions[1] + 64
    with pytest.raises(aeron_async.InvalidPositionError, match="beyond the data received"):
        s.image.position = positions[-1] + 256
    with pytest.raises(aeron_async.InvalidPositionError, match="out of range"):
        s.image.position = start - 256  # before the join position
    term_end = start - (start % TERM) + TERM
    with pytest.raises(aeron_async.InvalidPositionError, match="out of range"):
        s.image.position = term_end + 256
    with pytest.raises(ValueError):
        s.image.position = -32
    with pytest.raises(TypeError):
        s.image.position = 1.5  # type: ignore[assignment]
    assert s.image.position == start  # nothing moved
    s.image.poll(lambda d, h: None, 2)
    with pytest.raises(aeron_async.InvalidPositionError, match="not the start of a frame"):
        s.image.position = positions[0] + 64  # back, inside a frame


def test_position_cannot_go_back_more_than_a_term(stream: Stream) -> None:
    s = stream
    start = s.image.position
    payload = body(2, 1000)  # one 1056-byte frame
    read = [0]
    while s.image.position < start + TERM + 8192:
        s.offer([payload] * 64)
        wait_for(lambda: s.sub.poll(lambda d, h: read.__setitem__(0, read[0] + 1), 1000) >= 0 and
                 s.image.position >= s.pub.position, what="caught up")
    here = s.image.position
    with pytest.raises(aeron_async.InvalidPositionError, match="out of range"):
        s.image.position = start
    with pytest.raises(aeron_async.InvalidPositionError, match="out of range"):
        s.image.position = here - TERM - 4096
    # after moving back, the furthest position reached still bounds the next move back
    got: list[Any] = []
    s.image.position = here - 1056  # one frame back
    assert s.image.poll(collect(got), 1) == 1 and got[0][1] == here
    s.image.position = here - 1056
    with pytest.raises(aeron_async.InvalidPositionError, match="out of range"):
        s.image.position = here - 1056 - TERM + 32


def test_position_on_closed_subscription(stream: Stream) -> None:
    s = stream
    image = s.image
    s.sub.close()
    with pytest.raises(aeron_async.ClosedError):
        image.position = image.join_position


# ---- subscriptions of several images ----


def test_subscription_poll_shares_the_limit_and_an_exception_stops_every_image(stream: Stream) -> None:
    s = stream
    other = s.client.add_exclusive_publication(s.channel, 10)
    wait_for(lambda: other.is_connected and len(s.sub.images) == 2, what="second image")
    for i in range(3):
        offer_all(s.pub, body(i, 40))
        offer_all(other, body(i, 40))
    seen: list[int] = []
    got = [0]

    def count(data: memoryview, header: aeron_async.Header) -> None:
        seen.append(header.session_id)
        got[0] += 1

    wait_for(lambda: s.sub.poll(count, 4 - got[0]) >= 0 and got[0] >= 4, what="four fragments")
    assert got[0] == 4  # the fragment limit is shared by the images

    def boom(data: memoryview, header: aeron_async.Header) -> None:
        seen.append(header.session_id)
        raise LookupError

    def raised() -> bool:
        try:
            s.sub.poll(boom, 10)
        except LookupError:
            return True
        return False

    before = len(seen)
    wait_for(raised, what="a failing handler")
    assert len(seen) == before + 1  # no other image was polled after the failure
    wait_for(lambda: s.sub.poll(count, 10) >= 0 and got[0] >= 5, what="the rest")
    assert sorted(seen) == sorted([s.pub.session_id] * 3 + [other.session_id] * 3)


def test_assembler_buffers_per_session_and_their_upkeep(stream: Stream) -> None:
    s = stream
    big = body(9, 2 * s.pub.max_payload_length + 5)
    positions = s.offer([big])
    s.received(positions[-1])
    got: list[bytes] = []
    assembler = aeron_async.FragmentAssembler(lambda d, h: got.append(bytes(d)), initial_buffer_length=1 << 16)
    assert assembler.delegate is not None
    assert s.image.poll(assembler, 1) == 1  # BEGIN buffered
    assembler.reset()  # drops the partial message
    assert s.image.poll(assembler, 10) == 2 and got == []
    s.offer([big])
    wait_for(lambda: s.image.poll(assembler, 10) >= 0 and got == [big], what="the next message whole")
    assert assembler.free_session_buffer(s.pub.session_id) is True
    assert assembler.free_session_buffer(s.pub.session_id) is False
    with pytest.raises(ValueError, match="initial_buffer_length"):
        aeron_async.FragmentAssembler(lambda d, h: None, initial_buffer_length=-1)
    with pytest.raises(TypeError, match="callable"):
        aeron_async.FragmentAssembler(42)  # type: ignore[arg-type]


def test_header_outside_a_poll() -> None:
    header = aeron_async.Header()
    assert (header.position, header.session_id, header.frame_length, header.image) == (0, 0, 0, None)
    assert "Header session=0" in repr(header)
    with pytest.raises(TypeError):
        aeron_async.Header(1)  # type: ignore[call-arg]
    with pytest.raises(AttributeError):
        header.position = 5  # type: ignore[misc]
