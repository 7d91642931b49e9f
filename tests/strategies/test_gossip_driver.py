"""The driver name resolver inside a running driver, over loopback (docs/architecture.md, "Driver names"): a peer
played by a plain UDP socket with frames built by hand (tests/strategies/test_resolution_frame.py's struct
layout) announces a name; the driver learns it, channels can name it, the driver announces itself
back in frames the hand-written model decodes; malformed frames are counted in "Invalid packets"
and change nothing, and the driver keeps running."""

from __future__ import annotations

import random
import socket
import struct
import time
from collections.abc import Iterator

import pytest

import aeron_async
from aeron_async.monitor import CncReader
from conftest import start_driver, stop_driver
from test_resolution_frame import IPV4, SELF, Entry, model_decode, pack_frame


def counters(aeron_dir: str) -> dict[str, tuple[int, int]]:
    """label -> (type id, value) of the resolver's counters and Invalid packets."""
    with CncReader(aeron_dir) as reader:
        return {c.label: (c.type_id, c.value) for c in reader.counters()
                if c.type_id in (14, 15, 16) or c.label == "Invalid packets"}


def by_prefix(found: dict[str, tuple[int, int]], prefix: str) -> tuple[str, int]:
    matches = [(label, value) for label, (_, value) in found.items() if label.startswith(prefix)]
    assert len(matches) == 1, found
    return matches[0]


def wait_until(what: str, check: object, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"{what}: not within {timeout} s"
        time.sleep(0.02)


@pytest.fixture
def gossiping_driver(aeron_dir: str) -> Iterator[tuple[str, int]]:
    driver = start_driver(aeron_dir, "-o", "AERON_DRIVER_RESOLVER_INTERFACE=127.0.0.1:0",
                          "-o", "AERON_DRIVER_RESOLVER_NAME=me")
    try:
        label, status = by_prefix(counters(aeron_dir), "resolver-local-sockaddr: ")
        assert status == 1  # ACTIVE
        yield aeron_dir, int(label.rsplit(":", 1)[1])
        assert driver.poll() is None, "the driver died"
    finally:
        out = stop_driver(driver)
        assert driver.returncode == 0, out


def malformed_frames(valid: bytes, count: int) -> list[bytes]:
    """Mutations of a valid frame (bytes changed, lengths lied about, cut, extended) that the
    reference model refuses."""
    rng = random.Random(15)
    found: list[bytes] = []
    while len(found) < count:
        frame = bytearray(valid)
        for _ in range(rng.randint(1, 3)):
            kind = rng.choice(["byte", "length", "name_length", "truncate"])
            if kind == "byte":
                frame[rng.randrange(len(frame))] = rng.randrange(256)
            elif kind == "length":
                frame[0:4] = struct.pack("<i", rng.randint(-100, 400))
            elif kind == "name_length" and len(frame) >= 22:
                frame[20:22] = struct.pack("<h", rng.randint(-600, 600))
            elif len(frame) > 1:
                del frame[rng.randrange(1, len(frame)):]
        if frame and bytes(frame[4:8]) == valid[4:8] and model_decode(bytes(frame)) is None:
            found.append(bytes(frame))  # still a RES header (version 0, type 7), so the resolver must judge it
    return found


def test_driver_learns_a_peer_announces_itself_and_refuses_malformed_frames(gossiping_driver: tuple[str, int]) -> None:
    aeron_dir, port = gossiping_driver
    peer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    peer.bind(("127.0.0.1", 0))
    peer.settimeout(5)
    peer_port = peer.getsockname()[1]
    try:
        hello = pack_frame([Entry(IPV4, SELF, peer_port, 0, bytes(4), b"peer-x")])  # wildcard: take the source
        bad = malformed_frames(hello, 200)
        invalid_before = counters(aeron_dir)["Invalid packets"][1]
        for frame in bad:
            peer.sendto(frame, ("127.0.0.1", port))
        wait_until("every malformed frame counted",
                   lambda: counters(aeron_dir)["Invalid packets"][1] == invalid_before + len(bad))
        found = counters(aeron_dir)
        assert by_prefix(found, "Resolver cache entries: name me")[1] == 0, found
        assert by_prefix(found, "Resolver neighbors: bound 127.0.0.1:")[1] == 0, found

        peer.sendto(hello, ("127.0.0.1", port))
        wait_until("the peer cached", lambda: by_prefix(counters(aeron_dir), "Resolver cache entries")[1] == 1)
        assert by_prefix(counters(aeron_dir), "Resolver neighbors")[1] == 1

        # the driver announces itself to its new neighbour within the 1 s self interval: one SELF
        # entry, age 0, its bound address and port, its name, in the layout of reference 1.10
        deadline = time.monotonic() + 5
        while True:
            data, _ = peer.recvfrom(65536)
            entries = model_decode(data)
            assert entries is not None, data.hex()
            if any(e.flags & SELF for e in entries):
                break
            assert time.monotonic() < deadline
        assert entries == [Entry(IPV4, SELF, port, 0, socket.inet_aton("127.0.0.1"), b"me")]

        # channels name the peer: the resolver answers from its cache (port from the URI)
        with aeron_async.Aeron.connect(aeron_dir, driver_timeout=10) as client:
            pub = client.add_publication("aeron:udp?endpoint=peer-x:40999", 1015)
            pub.close()
            with pytest.raises(aeron_async.AeronError, match="no-such-driver"):
                client.add_publication("aeron:udp?endpoint=no-such-driver:40999", 1015)
        assert counters(aeron_dir)["Invalid packets"][1] == invalid_before + len(bad)
    finally:
        peer.close()
