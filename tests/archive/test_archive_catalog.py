"""Golden tests of the archive's files (docs/architecture.md, "Files and codecs"): the catalog file built by the
native catalog (_native/src/archive/aa_archive_catalog.c) compared with a catalog header,
descriptor headers and descriptors laid out by hand from the reference (aeron-archive.md section 1,
aeron-archive-codecs.md templates 20-22); appends, updates, growth, reopening, checksums; a catalog
and a segment written by a process that is SIGKILLed mid-write still open, the catalog whole and
the segment's recovery scan ending on the last complete frame. CRC-32C/CRC-32 known vectors."""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aeron_async._aeron_native import ffi, lib

CATALOG_HEADER = struct.Struct("<iiqi11xb")          # version, length, nextRecordingId, alignment, .., reserved
DESCRIPTOR_HEADER = struct.Struct("<iii19xb")        # length, state, checksum, .., reserved
DESCRIPTOR_FIXED = struct.Struct("<qqqqqqqiiiiii")  # controlSessionId .. streamId (80 bytes)


def errmsg() -> str:
    return ffi.string(lib.aa_errmsg()).decode()


def var(data: bytes) -> bytes:
    return struct.pack("<I", len(data)) + data


def hand_descriptor(recording_id: int, d: dict[str, Any]) -> bytes:
    return DESCRIPTOR_FIXED.pack(
        0, 0, recording_id, d["start_timestamp"], d["stop_timestamp"], d["start_position"], d["stop_position"],
        d["initial_term_id"], d["segment_file_length"], d["term_buffer_length"], d["mtu_length"], d["session_id"],
        d["stream_id"]) + var(d["stripped_channel"]) + var(d["original_channel"]) + var(d["source_identity"])


def hand_entry(recording_id: int, d: dict[str, Any], state: int = 1, checksum: int = 0, alignment: int = 64) -> bytes:
    body = hand_descriptor(recording_id, d)
    frame = (32 + len(body) + alignment - 1) // alignment * alignment
    return DESCRIPTOR_HEADER.pack(frame - 32, state, checksum, 0) + body + bytes(frame - 32 - len(body))


def sample(stream_id: int = 1001, channel: bytes = b"aeron:udp?endpoint=localhost:40456") -> dict[str, Any]:
    return {
        "start_timestamp": 1_700_000_000_000, "stop_timestamp": -1, "start_position": 0, "stop_position": -1,
        "initial_term_id": 42, "segment_file_length": 128 << 20, "term_buffer_length": 64 << 10, "mtu_length": 1408,
        "session_id": -7, "stream_id": stream_id, "stripped_channel": channel,
        "original_channel": channel + b"|alias=src", "source_identity": b"127.0.0.1:5000",
    }


class Catalog:
    """The native catalog through cffi, closed by the test's fixture."""

    def __init__(self, directory: Path, capacity: int = 0, sync_level: int = 0, checksum: int = 0,
                 flags: int = lib.AA_ARCHIVE_CATALOG_CREATE) -> None:
        out = ffi.new("aa_archive_catalog_t **")
        assert lib.aa_archive_catalog_open(out, str(directory).encode(), capacity, sync_level, checksum, flags) == 0, errmsg()
        self.c = out[0]

    def add(self, d: dict[str, Any]) -> int:
        desc = ffi.new("aa_archive_recording_descriptor_t *")
        keep = []
        for name, value in d.items():
            if isinstance(value, bytes):
                data = ffi.new("uint8_t[]", value)
                keep.append(data)
                field = getattr(desc, name)
                field.data = data
                field.length = len(value)
            else:
                setattr(desc, name, value)
        recording_id = lib.aa_archive_catalog_add(self.c, desc)
        assert recording_id >= 0, errmsg()
        return int(recording_id)

    def find(self, recording_id: int) -> Any:
        entry = ffi.new("aa_archive_catalog_entry_t *")
        found = lib.aa_archive_catalog_find(self.c, recording_id, entry)
        assert found >= 0, errmsg()
        return entry if found else None

    def info(self) -> Any:
        info = ffi.new("aa_archive_catalog_info_t *")
        lib.aa_archive_catalog_info(self.c, info)
        return info

    def close(self) -> None:
        if self.c != ffi.NULL:
            lib.aa_archive_catalog_close(self.c)
            self.c = ffi.NULL


@pytest.fixture
def archive_dir(tmp_path: Path) -> Iterator[Path]:
    directory = tmp_path / "archive"
    directory.mkdir()
    yield directory


def test_crc_known_vectors() -> None:
    assert lib.aa_crc32c(0, b"123456789", 9) == 0xE3069283
    assert lib.aa_crc32(0, b"123456789", 9) == 0xCBF43926
    assert lib.aa_crc32c(0, bytes(32), 32) == 0x8A9136AA
    assert lib.aa_crc32c(0, b"\xff" * 32, 32) == 0x62A8AB43
    import zlib

    data = os.urandom(5000)
    assert lib.aa_crc32(0, data, len(data)) == zlib.crc32(data)
    assert lib.aa_archive_checksum(lib.AA_ARCHIVE_CHECKSUM_CRC32C, b"123456789", 9) == struct.unpack("<i", struct.pack("<I", 0xE3069283))[0]


def test_new_catalog_and_entries_match_the_hand_built_bytes(archive_dir: Path) -> None:
    catalog = Catalog(archive_dir)
    try:
        first, second = sample(), sample(stream_id=9, channel=b"aeron:ipc")
        assert catalog.add(first) == 0
        assert catalog.add(second) == 1
        data = (archive_dir / "archive.catalog").read_bytes()
        assert len(data) == 1 << 20  # the default capacity
        assert data[:32] == CATALOG_HEADER.pack((3 << 16) | (1 << 8), 32, 2, 64, 0)
        expected = hand_entry(0, first) + hand_entry(1, second)
        assert data[32:32 + len(expected)] == expected
        assert data[32 + len(expected):] == bytes(len(data) - 32 - len(expected))  # length 0 ends the scan

        # updates land at the reference's offsets
        assert lib.aa_archive_catalog_update_stop(catalog.c, 1, 8192, 1_700_000_000_500) == 0
        second.update(stop_position=8192, stop_timestamp=1_700_000_000_500)
        assert lib.aa_archive_catalog_change_state(catalog.c, 0, lib.AA_ARCHIVE_RECORDING_DELETED) == 0
        data = (archive_dir / "archive.catalog").read_bytes()
        assert data[32:32 + len(expected)] == hand_entry(0, first, state=2) + hand_entry(1, second)
    finally:
        catalog.close()


def test_hand_built_catalog_opens_and_lists(archive_dir: Path) -> None:
    """A catalog written by hand as Aeron lays it out (one DELETED entry, one VALID) opens, and a
    listing sends the descriptor's bytes verbatim with the two ids overwritten."""
    first, second = sample(), sample(stream_id=3, channel=b"aeron:udp?endpoint=224.0.1.1:40456")
    content = CATALOG_HEADER.pack(0x030100, 32, 7, 64, 0) + hand_entry(5, first, state=2) + hand_entry(6, second)
    (archive_dir / "archive.catalog").write_bytes(content + bytes(4096 - len(content)))
    catalog = Catalog(archive_dir, flags=0)
    try:
        info = catalog.info()
        assert (info.entry_count, info.valid_count, info.next_recording_id, info.capacity) == (2, 1, 7, 1 << 20)
        entry = catalog.find(6)
        assert entry.state == 1 and entry.fields.stream_id == 3
        assert bytes(ffi.buffer(entry.fields.original_channel.data, entry.fields.original_channel.length)) == \
            b"aeron:udp?endpoint=224.0.1.1:40456|alias=src"
        assert catalog.find(5).state == 2
        assert catalog.find(4) is None
        buf = ffi.new("uint8_t[512]")
        n = lib.aa_archive_catalog_encode_descriptor(catalog.c, 6, 1234, 5678, buf, 512)
        body = hand_descriptor(6, second)
        assert bytes(ffi.buffer(buf, n)) == struct.pack("<HHHH", 80, 22, 101, 14) + struct.pack("<qq", 1234, 5678) + body[16:]
        assert lib.aa_archive_catalog_encode_descriptor(catalog.c, 5, 1, 2, buf, 512) == 0  # DELETED: not listed
        assert catalog.add(sample()) == 7
    finally:
        catalog.close()


def test_checksum_field_covers_the_descriptor_bytes(archive_dir: Path) -> None:
    catalog = Catalog(archive_dir, checksum=lib.AA_ARCHIVE_CHECKSUM_CRC32C)
    try:
        d = sample()
        catalog.add(d)
        data = (archive_dir / "archive.catalog").read_bytes()
        length = struct.unpack_from("<i", data, 32)[0]
        crc = lib.aa_crc32c(0, data[64:64 + length], length)
        assert data[32:64] == DESCRIPTOR_HEADER.pack(length, 1, struct.unpack("<i", struct.pack("<I", crc))[0], 0)
        assert lib.aa_archive_catalog_update_stop_position(catalog.c, 0, 4096) == 0
        data = (archive_dir / "archive.catalog").read_bytes()
        crc2 = lib.aa_crc32c(0, data[64:64 + length], length)
        assert crc2 != crc and struct.unpack_from("<I", data, 40)[0] == crc2
    finally:
        catalog.close()


def test_catalog_grows_by_half_and_reopens(archive_dir: Path) -> None:
    catalog = Catalog(archive_dir, capacity=1024)
    try:
        for i in range(40):
            assert catalog.add(sample(stream_id=i, channel=b"aeron:ipc?alias=%d" % i)) == i
        needed = 32 + sum(len(hand_entry(i, sample(stream_id=i, channel=b"aeron:ipc?alias=%d" % i))) for i in range(40))
        expected = 1024
        while expected < needed:
            expected += expected >> 1  # x1.5
        assert (needed, expected) == (7712, 7776)
        assert catalog.info().capacity == expected
    finally:
        catalog.close()
    assert (archive_dir / "archive.catalog").stat().st_size == 7776
    reopened = Catalog(archive_dir, flags=lib.AA_ARCHIVE_CATALOG_READ_ONLY)
    try:
        assert reopened.info().next_recording_id == 40
        assert [reopened.find(i).fields.stream_id for i in range(40)] == list(range(40))
    finally:
        reopened.close()


def test_torn_last_entry_is_cut_off_and_reused(archive_dir: Path) -> None:
    catalog = Catalog(archive_dir)
    catalog.add(sample())
    catalog.close()
    path = archive_dir / "archive.catalog"
    data = bytearray(path.read_bytes())
    entry = hand_entry(1, sample())
    # a power failure lost the descriptor's pages but kept its header: the var lengths are garbage
    torn = entry[:32] + bytes(80) + struct.pack("<I", 0x7FFF_0000) + bytes(len(entry) - 116)
    offset = 32 + len(hand_entry(0, sample()))
    data[offset:offset + len(torn)] = torn
    path.write_bytes(bytes(data))
    reopened = Catalog(archive_dir, flags=0)
    try:
        info = reopened.info()
        assert (info.entry_count, info.repaired_entries, info.next_entry_offset) == (1, 1, offset)
        assert reopened.add(sample(stream_id=2)) == 1
        assert reopened.find(1).fields.stream_id == 2
    finally:
        reopened.close()
    assert path.read_bytes()[offset:offset + len(entry)] == hand_entry(1, sample(stream_id=2))


def test_refuses_a_catalog_of_another_major_version(archive_dir: Path) -> None:
    (archive_dir / "archive.catalog").write_bytes(CATALOG_HEADER.pack(0x020000, 32, 0, 64, 0) + bytes(4064))
    out = ffi.new("aa_archive_catalog_t **")
    assert lib.aa_archive_catalog_open(out, str(archive_dir).encode(), 0, 0, 0, 0) == -1
    assert "incompatible catalog file version 2.0.0" in errmsg()


_KILLED_WRITER = textwrap.dedent("""
    import struct, sys
    from aeron_async._aeron_native import ffi, lib
    directory, sync_level = sys.argv[1].encode(), int(sys.argv[2])
    out = ffi.new("aa_archive_catalog_t **")
    assert lib.aa_archive_catalog_open(out, directory, 4096, sync_level, 2, 1) == 0
    catalog = out[0]
    d = ffi.new("aa_archive_recording_descriptor_t *")
    channel = ffi.new("uint8_t[]", b"aeron:ipc?alias=" + b"x" * 200)
    for field in (d.stripped_channel, d.original_channel, d.source_identity):
        field.data, field.length = channel, 216
    d.stop_position = -1
    # segment frames: 32-byte header + a payload whose bytes name the frame
    TERM = 1 << 30  # one sparse 1 GiB segment: the writer is still writing when it is killed
    fd = lib.aa_archive_segment_open(directory, 0, 0, TERM, lib.AA_ARCHIVE_SEGMENT_CREATE, sync_level)
    assert fd >= 0
    position, n = 0, 0
    print("ready", flush=True)
    while True:
        d.stream_id = n
        assert lib.aa_archive_catalog_add(catalog, d) == n
        block = bytearray()
        for k in range(8):
            size = 100 + ((n * 8 + k) * 977) % 9000
            frame_length = 32 + size
            aligned = (frame_length + 31) & ~31
            if position + len(block) + aligned > TERM:
                raise SystemExit(0)
            header = struct.pack("<iBBhiiiiq", frame_length, 0, 0xC0, 1, (position + len(block)) % TERM, 0, 10, 0, 0)
            block += header + bytes([(n * 8 + k) % 251 + 1]) * size + bytes(aligned - frame_length)
        assert lib.aa_archive_frames_apply_checksum(ffi.from_buffer(block), len(block), 2) == 0
        assert lib.aa_archive_segment_write(fd, position, ffi.from_buffer(block), len(block), sync_level) == 0
        position += len(block)
        n += 1
""")


@pytest.mark.parametrize("sync_level", [0, 1])
def test_sigkill_mid_write_leaves_an_openable_catalog_and_a_recoverable_segment(archive_dir: Path, sync_level: int) -> None:
    """A process appending to the catalog and writing frames to a segment is SIGKILLed at a random
    moment: the catalog opens with every committed entry whole (ids 0..n-1 in order), and the
    recovery scan's stop position is on a frame boundary with every frame before it intact."""
    for attempt in range(3):
        shutil_dir = archive_dir / f"run{attempt}"
        shutil_dir.mkdir()
        proc = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(shutil_dir), str(sync_level)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline() == b"ready\n", proc.stderr.read() if proc.stderr else b""
            time.sleep(0.05 + 0.1 * attempt)
            assert proc.poll() is None, "the writer ended before it was killed"
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
        catalog = Catalog(shutil_dir, flags=0, checksum=lib.AA_ARCHIVE_CHECKSUM_CRC32C)
        try:
            info = catalog.info()
            assert info.entry_count == info.next_recording_id
            for i in range(info.entry_count):
                entry = catalog.find(i)
                assert entry.state == 1 and entry.fields.stream_id == i
                assert lib.aa_archive_catalog_compute_checksum(catalog.c, entry, 2) == entry.checksum
        finally:
            catalog.close()
        result = ffi.new("aa_archive_recovery_t *")
        assert lib.aa_archive_segment_recover(str(shutil_dir).encode(), 0, 0, 0, 1 << 30, 1 << 30, 10, 2, True, 0, result) == 0, errmsg()
        stop = result.stop_position
        with open(shutil_dir / "0-0.rec", "rb") as f:
            data = f.read(stop + 64 * 1024)
        position, frames = 0, 0
        while position < stop:
            frame_length, _, _, ftype, term_offset, checksum = struct.unpack_from("<iBBhii", data, position)
            assert ftype == 1 and term_offset == position and frame_length > 32
            payload = data[position + 32:position + frame_length]
            assert payload == bytes([payload[0]]) * len(payload) and payload[0] == frames % 251 + 1
            assert lib.aa_crc32c(0, payload, len(payload)) == checksum & 0xFFFFFFFF
            position += (frame_length + 31) & ~31
            frames += 1
        assert position == stop
        assert struct.unpack_from("<i", data, stop)[0] == 0  # a torn frame, if any, was zeroed
        # everything the catalog committed before the kill had its frames written before it
        assert frames >= 8 * max(0, info.entry_count - 1)


def test_segment_helpers_from_python(archive_dir: Path) -> None:
    name = ffi.new("char[64]")
    assert lib.aa_archive_segment_file_name(name, 64, 7, 1 << 27) > 0
    assert ffi.string(name) == b"7-134217728.rec"
    assert lib.aa_archive_segment_base_position(4096 + (3 << 16), 5 << 16, 1 << 16, 1 << 17) == 5 << 16
    assert lib.aa_archive_segment_length_for(lib.AA_ARCHIVE_SEGMENT_LENGTH_DEFAULT, 1 << 16) == 128 << 20
    assert lib.aa_archive_checksum_parse(b"crc-32c") == lib.AA_ARCHIVE_CHECKSUM_CRC32C


def test_verify_reports_the_first_bad_frame(archive_dir: Path) -> None:
    """The recordings tool's verify: a hand-built segment of frames checks out, a flipped payload
    byte is reported at its frame's position with the checksum named."""
    term = 1 << 16
    frames = b""
    for k in range(10):
        payload = bytes([k + 1]) * (50 + 100 * k)
        frame_length = 32 + len(payload)
        aligned = (frame_length + 31) & ~31
        crc = lib.aa_crc32c(0, payload, len(payload))
        frames += struct.pack("<iBBHiIiiq", frame_length, 0, 0xC0, 1, len(frames), crc, 10, 0, 0) + payload + bytes(aligned - frame_length)
    fd = lib.aa_archive_segment_open(str(archive_dir).encode(), 4, 0, term, lib.AA_ARCHIVE_SEGMENT_CREATE, 0)
    assert fd >= 0, errmsg()
    try:
        assert lib.aa_archive_segment_write(fd, 0, frames, len(frames), 0) == 0
    finally:
        os.close(fd)
    result = ffi.new("aa_archive_verify_t *")
    args = (str(archive_dir).encode(), 4, 0, len(frames), 0, term, term, 10, lib.AA_ARCHIVE_CHECKSUM_CRC32C, result)
    assert lib.aa_archive_segment_verify(*args) == 0
    assert (result.frames, result.bytes, result.bad_position) == (10, len(frames), -1)
    assert lib.aa_archive_segment_frame_at(str(archive_dir).encode(), 4, 0, 96, 0, term, term, 10) == 1
    assert lib.aa_archive_segment_frame_at(str(archive_dir).encode(), 4, 0, 64, 0, term, term, 10) == 0
    path = archive_dir / "4-0.rec"
    data = bytearray(path.read_bytes())
    data[96 + 32 + 5] ^= 0xFF  # in the second frame's payload (the first is 96 bytes long)
    path.write_bytes(bytes(data))
    assert lib.aa_archive_segment_verify(*args) == 1
    assert result.bad_position == 96 and result.frames == 1
    assert b"crc-32c checksum of the frame at 96" in ffi.string(result.message)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(32, 32 + 4 * 256 - 1), st.integers(0, 255)), min_size=1, max_size=6))
def test_corrupted_entries_never_crash_open_and_leave_a_usable_catalog(tmp_path: Path, flips: list[tuple[int, int]]) -> None:
    """Bytes of the entries overwritten at random: opening never crashes; the catalog opens with
    the entries before the first damaged one when nothing committed follows it (a torn tail), or
    is refused with an error naming the damage; once opened it takes new entries and reopens the
    same."""
    directory = Path(tempfile.mkdtemp(dir=tmp_path))
    content = CATALOG_HEADER.pack(0x030100, 32, 4, 64, 0) + b"".join(
        hand_entry(i, sample(stream_id=i, channel=b"aeron:ipc?x=%d" % i)) for i in range(4))
    data = bytearray(content + bytes(8192 - len(content)))
    for offset, value in flips:
        data[offset] = value
    (directory / "archive.catalog").write_bytes(bytes(data))
    out = ffi.new("aa_archive_catalog_t **")
    if lib.aa_archive_catalog_open(out, str(directory).encode(), 0, 0, 0, 0) != 0:
        assert "is damaged" in errmsg() or "malformed" in errmsg() or "catalog" in errmsg()
        assert (directory / "archive.catalog").read_bytes()[:len(data)] == bytes(data)  # refused: left as it was
        return
    catalog = Catalog.__new__(Catalog)
    catalog.c = out[0]
    try:
        info = catalog.info()
        entries = []
        for i in range(info.entry_count):
            entry = ffi.new("aa_archive_catalog_entry_t *")
            assert lib.aa_archive_catalog_entry(catalog.c, i, entry) == 1
            assert 32 <= entry.offset < info.next_entry_offset
            entries.append(entry.recording_id)
        new_id = catalog.add(sample(stream_id=99))
        assert new_id >= max(entries + [3]) + 1 or new_id >= info.next_recording_id
        count = info.entry_count + 1
    finally:
        catalog.close()
    reopened = Catalog(directory, flags=0)
    try:
        assert reopened.info().entry_count == count
        assert reopened.info().repaired_entries == 0
        assert reopened.find(new_id).fields.stream_id == 99
    finally:
        reopened.close()
