"""Golden tests of RES frames, the driver-name (gossip) resolver's wire format
(docs/architecture.md, "Driver names").

Frames are laid out here by hand from the reference's table (aeron-protocol.md 1.10) with
struct.pack: 8-byte frame header (frame_length, version 0, flags 0, type 0x07), then entries of
res_type i8, res_flags u8 (0x80 SELF), udp_port u16 LE, age_in_ms i32 LE, the address in network
order (4 or 16 bytes), name_length i16 LE, the name, zero padding to 8. They are compared byte for
byte with the native encoder (protocols/aa_resolution_frame.c through cffi) and decoded back.
Hypothesis feeds truncated, mutated and random frames to the native validator and checks its
verdict against an independent Python model: a malformed frame is refused as a whole (so no entry
of it can reach a cache), a well-formed one decodes to exactly the entries the model reads, and
nothing crashes or reads outside the buffer (the sanitizer run of the suite checks the latter).
"""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aeron_async._aeron_native import ffi, lib

SELF = 0x80
IPV4 = 1
IPV6 = 2


@dataclass(frozen=True)
class Entry:
    res_type: int
    flags: int
    port: int
    age_ms: int
    address: bytes
    name: bytes


def pack_entry(e: Entry) -> bytes:
    body = struct.pack("<bBHi", e.res_type, e.flags, e.port, e.age_ms) + e.address
    body += struct.pack("<h", len(e.name)) + e.name
    return body + b"\0" * (-len(body) % 8)


def pack_frame(entries: list[Entry]) -> bytes:
    body = b"".join(pack_entry(e) for e in entries)
    return struct.pack("<ibBh", 8 + len(body), 0, 0, 7) + body


def model_decode(frame: bytes) -> list[Entry] | None:
    """The reference's rules, written independently of the C: None for a frame to refuse."""
    if len(frame) < 8:
        return None
    frame_length, version, _flags, frame_type = struct.unpack_from("<ibBh", frame, 0)
    if version != 0 or frame_type != 7 or not 8 <= frame_length <= len(frame):
        return None
    entries = []
    offset = 8
    while offset < frame_length:
        remaining = frame_length - offset
        if remaining < 8:
            return None
        res_type, flags, port, age = struct.unpack_from("<bBHi", frame, offset)
        if res_type not in (IPV4, IPV6):
            return None
        address_length = 4 if res_type == IPV4 else 16
        fixed = 8 + address_length + 2
        if remaining < fixed:
            return None
        (name_length,) = struct.unpack_from("<h", frame, offset + fixed - 2)
        if not 1 <= name_length <= 512:
            return None
        padded = (fixed + name_length + 7) & ~7
        if padded > remaining:
            return None
        name = frame[offset + fixed:offset + fixed + name_length]
        if any(b < 0x21 or b > 0x7E for b in name) or port == 0 or age < 0:
            return None
        address = frame[offset + 8:offset + 8 + address_length]
        entries.append(Entry(res_type, flags, port, age, address, name))
        offset += padded
    return entries


def native_decode(frame: bytes) -> list[Entry] | None:
    buffer = ffi.new("uint8_t[]", frame or b"\0")
    count = lib.aa_resolution_frame_validate(buffer, len(frame))
    if count < 0:
        return None
    entries = []
    offset = ffi.new("size_t *", 8)
    entry = ffi.new("aa_resolution_entry_t *")
    while True:
        rc = lib.aa_resolution_frame_next(buffer, len(frame), offset, entry)
        assert rc >= 0, ffi.string(lib.aa_errmsg())
        if rc == 0:
            break
        address_length = 4 if entry.res_type == IPV4 else 16
        entries.append(Entry(entry.res_type, entry.res_flags, entry.udp_port, entry.age_in_ms,
                             bytes(entry.address[0:address_length]),
                             bytes(ffi.buffer(entry.name, entry.name_length))))
    assert len(entries) == count
    return entries


def native_encode(entries: list[Entry], capacity: int = 65504) -> bytes:
    buffer = ffi.new("uint8_t[]", capacity)
    assert lib.aa_resolution_frame_begin(buffer, capacity) == 8
    length = 8
    keep = []
    for e in entries:
        c_entry = ffi.new("aa_resolution_entry_t *")
        c_entry.res_type = e.res_type
        c_entry.res_flags = e.flags
        c_entry.udp_port = e.port
        c_entry.age_in_ms = e.age_ms
        c_entry.address[0:len(e.address)] = list(e.address)
        name = ffi.new("uint8_t[]", e.name)
        keep.append(name)
        c_entry.name = name
        c_entry.name_length = len(e.name)
        length = lib.aa_resolution_frame_append(buffer, capacity, c_entry)
        assert length > 0, ffi.string(lib.aa_errmsg())
    return bytes(ffi.buffer(buffer, length))


GOLDEN = [
    # a self announcement: IPv4 SELF, age 0
    (Entry(IPV4, SELF, 8050, 0, ipaddress.IPv4Address("10.42.0.7").packed, b"pod-0"),
     bytes.fromhex("01 80 72 1f 00 00 00 00 0a 2a 00 07 05 00") + b"pod-0" + b"\0" * 5),
    # gossip about a neighbour: IPv6, flags 0, an age
    (Entry(IPV6, 0, 40456, 1500, ipaddress.IPv6Address("fd00::1:2").packed, b"b"),
     bytes.fromhex("02 00 08 9e dc 05 00 00 fd 00 00 00 00 00 00 00 00 00 00 00 00 01 00 02 01 00")
     + b"b" + b"\0" * 5),
    # a name filling the fixed part to a multiple of 8 exactly: 14 + 2 = 16, no padding
    (Entry(IPV4, 0, 1, 2**31 - 1, bytes([255, 255, 255, 255]), b"ab"),
     bytes.fromhex("01 00 01 00 ff ff ff 7f ff ff ff ff 02 00") + b"ab"),
    # the longest name: 26 + 512 = 538 -> 544
    (Entry(IPV6, SELF, 65535, 0, bytes(16), b"n" * 512),
     bytes.fromhex("02 80 ff ff 00 00 00 00") + bytes(16) + struct.pack("<h", 512) + b"n" * 512 + b"\0" * 6),
]


def test_golden_entries_match_the_reference_table() -> None:
    for entry, wire in GOLDEN:
        # the hand-written bytes and the struct layout agree...
        assert pack_entry(entry) == wire
        # ...the native encoder writes exactly them, behind the 8-byte RES header...
        frame = native_encode([entry])
        assert frame == struct.pack("<ibBh", 8 + len(wire), 0, 0, 7) + wire
        assert len(frame) % 8 == 0
        # ...and decodes them back
        assert native_decode(frame) == [entry]


def test_golden_frame_of_several_entries_round_trips() -> None:
    entries = [e for e, _ in GOLDEN]
    frame = pack_frame(entries)
    assert native_encode(entries) == frame
    assert native_decode(frame) == entries
    # bytes after frame_length (a longer datagram) are ignored
    assert native_decode(frame + b"\xff" * 13) == entries
    assert lib.aa_resolution_entry_length(IPV4, 5) == 24
    assert lib.aa_resolution_entry_length(IPV6, 512) == 544
    assert lib.aa_resolution_entry_length(IPV4, 513) == -1


def test_encoder_refuses_what_the_decoder_would() -> None:
    good = GOLDEN[0][0]
    for bad in (Entry(3, 0, 1, 0, bytes(4), b"x"), Entry(IPV4, 0, 0, 0, bytes(4), b"x"),
                Entry(IPV4, 0, 1, -1, bytes(4), b"x"), Entry(IPV4, 0, 1, 0, bytes(4), b"a b"),
                Entry(IPV4, 0, 1, 0, bytes(4), b"n" * 513)):
        buffer = ffi.new("uint8_t[]", 2048)
        lib.aa_resolution_frame_begin(buffer, 2048)
        c_entry = ffi.new("aa_resolution_entry_t *")
        c_entry.res_type = bad.res_type
        c_entry.udp_port = bad.port
        c_entry.age_in_ms = bad.age_ms
        name = ffi.new("uint8_t[]", bad.name)
        c_entry.name = name
        c_entry.name_length = len(bad.name)
        assert lib.aa_resolution_frame_append(buffer, 2048, c_entry) == -1
        assert lib.aa_errcode() == lib.AA_ERROR_CODE_INVALID_ARGUMENT
        assert bytes(ffi.buffer(buffer, 8)) == struct.pack("<ibBh", 8, 0, 0, 7)
    # an entry that does not fit leaves the frame as it was
    assert len(native_encode([good], capacity=32)) == 32
    buffer = ffi.new("uint8_t[]", 31)
    lib.aa_resolution_frame_begin(buffer, 31)
    c_entry = ffi.new("aa_resolution_entry_t *")
    c_entry.res_type = IPV4
    c_entry.udp_port = 1
    name = ffi.new("uint8_t[]", b"pod-0")
    c_entry.name = name
    c_entry.name_length = 5
    assert lib.aa_resolution_frame_append(buffer, 31, c_entry) == -1
    assert bytes(ffi.buffer(buffer, 4)) == struct.pack("<i", 8)


@pytest.mark.parametrize("cut", [1, 7, 8, 9, 15, 20, 23])
def test_truncated_frames_are_refused(cut: int) -> None:
    frame = pack_frame([GOLDEN[0][0], GOLDEN[1][0]])
    # the datagram cut short: frame_length now exceeds it
    assert native_decode(frame[:-cut]) is None
    # frame_length itself cut, inside the second entry: the bound is the bytes remaining, not the datagram
    shorter = struct.pack("<i", len(frame) - cut) + frame[4:]
    assert native_decode(shorter) is None
    assert model_decode(shorter) is None


entry_strategy = st.builds(
    Entry,
    res_type=st.sampled_from([IPV4, IPV6]),
    flags=st.sampled_from([0, SELF]),
    port=st.integers(1, 65535),
    age_ms=st.integers(0, 2**31 - 1),
    address=st.just(b""),
    name=st.binary(min_size=1, max_size=40).map(lambda b: bytes(0x21 + x % 94 for x in b)),
).flatmap(lambda e: st.binary(min_size=4 if e.res_type == IPV4 else 16, max_size=4 if e.res_type == IPV4 else 16)
          .map(lambda a: Entry(e.res_type, e.flags, e.port, e.age_ms, a, e.name)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(entry_strategy, max_size=6))
def test_well_formed_frames_round_trip(entries: list[Entry]) -> None:
    frame = pack_frame(entries)
    assert native_encode(entries) == frame
    assert native_decode(frame) == entries == model_decode(frame)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(entry_strategy, min_size=1, max_size=4), st.data())
def test_mutated_frames_are_refused_or_decoded_as_the_model_says(entries: list[Entry], data: st.DataObject) -> None:
    frame = bytearray(pack_frame(entries))
    for _ in range(data.draw(st.integers(1, 4))):
        kind = data.draw(st.sampled_from(["byte", "length", "truncate", "extend"]))
        if kind == "byte" and frame:
            frame[data.draw(st.integers(0, len(frame) - 1))] = data.draw(st.integers(0, 255))
        elif kind == "length" and len(frame) >= 4:
            frame[0:4] = struct.pack("<i", data.draw(st.integers(-(2**31), 2**31 - 1)))
        elif kind == "truncate":
            del frame[data.draw(st.integers(0, len(frame))):]
        else:
            frame += data.draw(st.binary(max_size=24))
    assert native_decode(bytes(frame)) == model_decode(bytes(frame))


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=96))
def test_random_bytes_never_crash_the_decoder(frame: bytes) -> None:
    # a RES header in front of random bytes, and the random bytes alone
    for candidate in (struct.pack("<ibBh", 8 + len(frame), 0, 0, 7) + frame, frame):
        assert native_decode(candidate) == model_decode(candidate)
