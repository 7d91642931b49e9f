"""The CnC file is input too (docs/security.md, "The CnC file"): records that no client of the protocol
writes, put into a standalone driver's to-driver ring buffer through a mapping of cnc.dat the way a
client would (header, payload, then the tail moved), are skipped, counted in "Invalid client commands"
and logged with the client id they name, the driver lives, and a new client works afterwards. What a
client reads from the driver is checked the same way: a corrupt to-clients record makes the client
(in a process of its own, so that a crash fails the test rather than the suite) raise
DriverCorruptError, not crash."""

from __future__ import annotations

import glob
import mmap
import os
import struct
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

import aeron_async
from aeron_async.monitor import CncReader
from conftest import run_proc, start_driver, stop_driver, system_counters, wait_for

CNC_HEADER_LENGTH = 128
RB_TRAILER_LENGTH = 768
RB_TAIL_OFFSET = 128
BROADCAST_TRAILER_LENGTH = 128
ADD_PUBLICATION = 0x01
ADD_COUNTER = 0x09
ON_AVAILABLE_IMAGE = 0x0F02
COUNTER_LABEL_LENGTH_OFFSET = 128
INVALID = "Invalid client commands"


def invalid_commands(aeron_dir: str) -> int:
    return system_counters(aeron_dir).get(INVALID, 0)


@contextmanager
def mapped_cnc(aeron_dir: str) -> Iterator[mmap.mmap]:
    with open(os.path.join(aeron_dir, "cnc.dat"), "r+b") as f, mmap.mmap(f.fileno(), 0) as cnc:
        yield cnc


def to_driver_layout(cnc: mmap.mmap) -> tuple[int, int]:
    """The to-driver buffer's offset in the file and its capacity."""
    length = struct.unpack_from("<i", cnc, 4)[0]
    return CNC_HEADER_LENGTH, length - RB_TRAILER_LENGTH


def forge_command(cnc: mmap.mmap, length: int, msg_type: int, payload: bytes, claimed: int) -> None:
    """Write a record at the to-driver tail as a client would, then move the tail by `claimed` bytes."""
    base, capacity = to_driver_layout(cnc)
    tail_at = base + capacity + RB_TAIL_OFFSET
    tail = struct.unpack_from("<q", cnc, tail_at)[0]
    index = tail & (capacity - 1)
    assert index + 8 + len(payload) <= capacity
    cnc[base + index + 8:base + index + 8 + len(payload)] = payload
    struct.pack_into("<i", cnc, base + index + 4, msg_type)
    struct.pack_into("<i", cnc, base + index, length)
    struct.pack_into("<q", cnc, tail_at, tail + claimed)


def correlated(client_id: int) -> bytes:
    return struct.pack("<qq", client_id, 1_000_000 + client_id)


# (what, header length, type, payload, bytes claimed, client id it names or None): each no client writes
FORGED = [
    ("an impossible record header", 0x7FFFFF00, ADD_PUBLICATION, correlated(77701), 32, 77701),
    ("command type 0x55 is not supported", 8 + 24, 0x55, correlated(77702) + bytes(8), 32, 77702),
    ("malformed add publication", 8 + 24 + 4, ADD_PUBLICATION, correlated(77703) + struct.pack("<ii", 10, 1000) + b"aero",
     40, 77703),
    ("malformed add counter", 8 + 20 + 4, ADD_COUNTER, correlated(77704) + struct.pack("<ii", 1, 5000), 32, 77704),
    ("a type below 1", 8 + 24, 0, correlated(77705) + bytes(8), 32, 77705),
    ("shorter than its 16-byte header", 8 + 8, ADD_PUBLICATION, struct.pack("<q", 77706), 16, None),
]


def test_corrupt_commands_are_skipped_logged_and_the_driver_serves_new_clients(aeron_dir: str) -> None:
    proc = start_driver(aeron_dir)
    try:
        with mapped_cnc(aeron_dir) as cnc:
            for count, (what, length, msg_type, payload, claimed, _) in enumerate(FORGED, 1):
                forge_command(cnc, length, msg_type, payload, claimed)
                wait_for(lambda: proc.poll() is not None or invalid_commands(aeron_dir) >= count,
                         what=f"the driver to count {what}")
                assert proc.poll() is None, f"the driver died on {what}: {proc.stdout.read() if proc.stdout else ''}"
                assert invalid_commands(aeron_dir) == count
            # a tail no producer could have left (misaligned): the driver takes the buffer back
            base, capacity = to_driver_layout(cnc)
            tail_at = base + capacity + RB_TAIL_OFFSET
            struct.pack_into("<q", cnc, tail_at, struct.unpack_from("<q", cnc, tail_at)[0] + 4)
            wait_for(lambda: proc.poll() is not None or (invalid_commands(aeron_dir) > len(FORGED) and
                                                         struct.unpack_from("<q", cnc, tail_at)[0] % 8 == 0),
                     what="the driver to take back a misaligned tail")
            assert proc.poll() is None

        with CncReader(aeron_dir) as reader:
            errors = [e.text for e in reader.errors()]
        for what, _, _, _, _, client_id in FORGED:
            named = f"from client {client_id}:" if client_id is not None else "(client id not readable)"
            assert any(what in text and named in text for text in errors), (what, errors)
        assert any("impossible producer tail" in text for text in errors), errors

        with aeron_async.Aeron.connect(aeron_dir) as client:
            sub = client.add_subscription("aeron:ipc?term-length=64k", 10)
            pub = client.add_publication("aeron:ipc?term-length=64k", 10)
            wait_for(lambda: pub.is_connected, what="the new client's publication to connect")
            wait_for(lambda: pub.offer(b"after the corrupt commands") > 0, what="an offer")
            got: list[bytes] = []
            wait_for(lambda: got.extend(m.data for m in sub.poll_messages()) or got, what="the message")
            assert got == [b"after the corrupt commands"]
        assert proc.poll() is None
    finally:
        stop_driver(proc)


def broadcast_layout(cnc: mmap.mmap) -> tuple[int, int]:
    """The to-clients buffer's offset in the file and its capacity."""
    to_driver, to_clients = struct.unpack_from("<ii", cnc, 4)
    return CNC_HEADER_LENGTH + to_driver, to_clients - BROADCAST_TRAILER_LENGTH


def forge_response(cnc: mmap.mmap, length: int, msg_type: int, payload: bytes) -> None:
    """Write a record at the to-clients tail as the driver's transmitter would, then move the tail."""
    base, capacity = broadcast_layout(cnc)
    trailer = base + capacity
    tail = struct.unpack_from("<q", cnc, trailer + 8)[0]
    aligned = (8 + len(payload) + 7) & ~7
    index = tail & (capacity - 1)
    assert index + aligned <= capacity
    struct.pack_into("<q", cnc, trailer, tail + aligned)  # tail intent
    struct.pack_into("<ii", cnc, base + index, length, msg_type)
    cnc[base + index + 8:base + index + 8 + len(payload)] = payload
    struct.pack_into("<q", cnc, trailer + 16, tail)  # latest
    struct.pack_into("<q", cnc, trailer + 8, tail + aligned)


def image_ready(subscription_id: int, position_counter_id: int, log_path: str) -> bytes:
    path = log_path.encode()
    padded = path + bytes(-len(path) % 4)
    return (struct.pack("<qiiqii", 999_999, 7, 2, subscription_id, position_counter_id, len(path)) + padded
            + struct.pack("<i", 4) + b"ipc:")


@pytest.mark.parametrize("corruption", ["impossible length", "counter id outside the counters", "type below 1",
                                        "counter label length"])
def test_a_client_reports_a_corrupt_to_clients_buffer_instead_of_crashing(aeron_dir: str, corruption: str) -> None:
    proc = start_driver(aeron_dir)
    client = run_proc("cnc_corrupt_client.py", aeron_dir, stdin=True)
    try:
        assert client.stdout is not None and client.stdin is not None
        ready = client.stdout.readline().split()
        assert ready[:1] == ["ready"], ready
        subscription_id = int(ready[1])
        with mapped_cnc(aeron_dir) as cnc:
            if corruption == "impossible length":
                forge_response(cnc, 0x7FFFFF00, ON_AVAILABLE_IMAGE, bytes(24))
            elif corruption == "type below 1":
                forge_response(cnc, 8 + 16, 0, bytes(16))
            elif corruption == "counter label length":
                base, capacity = broadcast_layout(cnc)
                metadata = base + capacity + BROADCAST_TRAILER_LENGTH
                struct.pack_into("<i", cnc, metadata + COUNTER_LABEL_LENGTH_OFFSET, 0x7FFFFFFF)  # counter 0's
            else:
                (log_path,) = glob.glob(os.path.join(aeron_dir, "publications", "*.logbuffer"))
                payload = image_ready(subscription_id, 0x7000000, log_path)
                forge_response(cnc, 8 + len(payload), ON_AVAILABLE_IMAGE, payload)
        client.stdin.write("go\n")
        client.stdin.flush()
        out, _ = client.communicate(timeout=30)
        assert client.returncode == 0, f"the client process failed (rc {client.returncode}): {out}"
        assert "DriverCorruptError" in out and "is corrupt" in out and "restart the driver" in out, out
        assert proc.poll() is None
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
        stop_driver(proc)


def test_a_cnc_header_whose_buffers_reach_past_the_file_is_refused(aeron_dir: str) -> None:
    proc = start_driver(aeron_dir)
    try:
        with mapped_cnc(aeron_dir) as cnc:
            saved = cnc[16:20]
            struct.pack_into("<i", cnc, 16, 0x40000000)  # counters values buffer length: 1 GiB
            try:
                with pytest.raises(aeron_async.DriverCorruptError, match="reach past the end of the file"):
                    aeron_async.Aeron.connect(aeron_dir)
                with pytest.raises(aeron_async.DriverCorruptError, match="reach past the end of the file"):
                    CncReader(aeron_dir)
            finally:
                cnc[16:20] = saved
        with aeron_async.Aeron.connect(aeron_dir) as client:
            assert client.client_id >= 0
    finally:
        stop_driver(proc)
        time.sleep(0)
