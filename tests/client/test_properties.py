"""Property-based tests: position arithmetic against a reference model, and fragmentation and
reassembly through a real driver across term rotation and 32-bit term id wrap."""

from __future__ import annotations

import struct
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import aeron_async
from aeron_async._ffi import lib
from conftest import TEST_DRIVER_SETTINGS, new_aeron_dir

INT32 = st.integers(-(2**31), 2**31 - 1)
TERM_LENGTHS = st.sampled_from([1 << n for n in range(16, 31)])


def wrap32(value: int) -> int:
    return (value + 2**31) % 2**32 - 2**31


@given(term_id=INT32, initial_term_id=INT32, term_length=TERM_LENGTHS, data=st.data())
def test_position_arithmetic_matches_reference(term_id: int, initial_term_id: int, term_length: int, data) -> None:
    bits = lib.aa_position_bits_to_shift(term_length)
    assert 1 << bits == term_length
    offset = data.draw(st.integers(0, term_length - 1))
    term_count = wrap32(term_id - initial_term_id)
    position = lib.aa_compute_position(term_id, offset, bits, initial_term_id)
    assert position == (term_count << bits) + offset
    if position >= 0:
        assert lib.aa_compute_term_id_from_position(position, bits, initial_term_id) == term_id
        assert lib.aa_compute_term_offset_from_position(position, bits) == offset
        assert lib.aa_index_by_position(position, bits) == (position >> bits) % 3
        assert lib.aa_index_by_term(initial_term_id, term_id) == term_count % 3


@given(length=st.integers(0, 16 * 1024 * 1024), mtu=st.sampled_from([64, 1408, 4096, 8192, 65504]))
def test_fragmented_length_formula(length: int, mtu: int) -> None:
    max_payload = mtu - 32
    expected = (length // max_payload) * (max_payload + 32)
    remainder = length % max_payload
    if remainder:
        expected += (remainder + 32 + 31) // 32 * 32
    assert lib.aa_compute_fragmented_length(length, max_payload) == expected


@given(term_length=TERM_LENGTHS)
def test_max_message_length(term_length: int) -> None:
    assert lib.aa_compute_max_message_length(term_length) == min(16 * 1024 * 1024, term_length // 8)


@pytest.fixture(scope="module")
def shared_client():
    aeron_dir = new_aeron_dir()
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **TEST_DRIVER_SETTINGS) as driver:
        with aeron_async.Aeron.connect(driver.aeron_dir) as client:
            yield client


STREAM = iter(range(5000, 100000))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    sizes=st.lists(st.integers(0, 8192), min_size=1, max_size=60),
    initial_term_id=st.one_of(st.just(2**31 - 1), st.just(-(2**31)), INT32),
    exclusive=st.booleans(),
    mtu=st.sampled_from([64, 128, 1408]),
)
def test_fragmentation_and_reassembly_across_rotation_and_wrap(
    shared_client: aeron_async.Aeron, sizes: list[int], initial_term_id: int, exclusive: bool, mtu: int
) -> None:
    # Start two terms before the end of the int32 term id range (or at a random one) so that the
    # stream rotates through several 64 KiB terms and, often, through the term id wrap.
    term_id = wrap32(initial_term_id + 3)
    channel = (f"aeron:ipc?term-length=64k|mtu={mtu}|init-term-id={initial_term_id}|term-id={term_id}"
               f"|term-offset={65536 - 4096}")
    stream_id = next(STREAM)
    sub = shared_client.add_subscription(channel, stream_id)
    pub = (shared_client.add_exclusive_publication if exclusive else shared_client.add_publication)(channel, stream_id)
    try:
        deadline = time.monotonic() + 10
        while not pub.is_connected:
            assert time.monotonic() < deadline
            time.sleep(0.001)
        start = pub.position
        assert start == 3 * 65536 + 65536 - 4096
        sizes = sizes * 4
        payloads = [struct.pack("<I", i) * (n // 4) + bytes(n % 4) for i, n in enumerate(sizes)]
        received: list[bytes] = []
        positions: list[int] = []
        assembler = aeron_async.FragmentAssembler(lambda d, h: (received.append(bytes(d)), positions.append(h.position)))
        for p in payloads:
            deadline = time.monotonic() + 10
            while (result := pub.offer(p)) < 0:
                assert result in (aeron_async.BACK_PRESSURED, aeron_async.ADMIN_ACTION), result
                sub.poll(assembler, 100)
                assert time.monotonic() < deadline
        deadline = time.monotonic() + 10
        while len(received) < len(payloads):
            sub.poll(assembler, 100)
            assert time.monotonic() < deadline
        assert received == payloads
        assert positions[-1] == pub.position
        assert positions == sorted(positions)
    finally:
        pub.close()
        sub.close()
