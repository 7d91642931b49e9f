"""What a receive channel endpoint takes from the network (docs/security.md, Network: receivers),
attacked from plain UDP sockets on loopback: a SETUP flood yields at most the image limit, a SETUP
asking for a term above the maximum makes no log, and frames of a session from another address
than its SETUP's are dropped. Each refusal counts in a system counter."""

from __future__ import annotations

import os
import socket
import struct
import time
from collections.abc import Iterator

import pytest

import aeron_async
from aeron_async.monitor import CncReader
from conftest import UDP_SETTINGS, free_udp_port, system_counter, udp_channel, wait_for

# Frame layouts (reference section 1), little-endian, no padding.
DATA = struct.Struct("<ibBhiiiiq")      # frame_length version flags type term_offset session stream term_id reserved
SETUP = struct.Struct("<ibBhiiiiiiii")  # ... term_offset session stream initial_term active_term term_length mtu ttl
TYPE_DATA, TYPE_SETUP = 1, 5

IMAGE_LIMIT = "SETUPs refused: receiver image limit"
TERM_LENGTH_REFUSED = "SETUPs refused: term length above receiver maximum"
FOREIGN_SOURCE = "Image frames dropped from a foreign source"

STREAM = 4101
TERM_ID = 700
TERM_LENGTH = 64 * 1024


def setup_frame(session: int, term_length: int = TERM_LENGTH, stream: int = STREAM) -> bytes:
    return SETUP.pack(SETUP.size, 0, 0, TYPE_SETUP, 0, session, stream, TERM_ID, TERM_ID, term_length, 1408, 0)


def data_frame(session: int, term_offset: int, payload: bytes, stream: int = STREAM) -> bytes:
    frame = DATA.pack(DATA.size + len(payload), 0, 0xC0, TYPE_DATA, term_offset, session, stream, TERM_ID, 0) + payload
    return frame + bytes(-len(frame) % 32)


@pytest.fixture
def attacker() -> Iterator[socket.socket]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    yield sock
    sock.close()


def image_logs(aeron_dir: str) -> list[int]:
    """The sizes of the image log files in the driver's directory."""
    images = os.path.join(aeron_dir, "images")
    if not os.path.isdir(images):
        return []
    return [os.stat(os.path.join(images, name)).st_size for name in os.listdir(images)]


def refusal_log_entries(aeron_dir: str) -> list[str]:
    with CncReader(aeron_dir) as reader:
        return [e.text for e in reader.errors() if "SETUP from" in e.text and "refused" in e.text]


def test_a_setup_flood_from_one_socket_yields_at_most_the_image_limit(aeron_dir: str, attacker: socket.socket) -> None:
    limit = 40
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, receiver_max_images=limit, **UDP_SETTINGS) as driver, \
            aeron_async.Aeron.connect(driver.aeron_dir) as client:
        port = free_udp_port()
        sub = client.add_subscription(udp_channel(port), STREAM)
        flood = [setup_frame(session) for session in range(1, 301)]   # 300 distinct sessions
        deadline = time.monotonic() + 20
        # loopback drops what overflows the socket's buffer: the flood goes again until every SETUP beyond
        # the limit was seen (each refusal is counted; SETUPs of sessions with an image are not)
        while not (len(sub.images) == limit and system_counter(driver.aeron_dir, IMAGE_LIMIT) >= 300 - limit):
            assert time.monotonic() < deadline, (len(sub.images), system_counter(driver.aeron_dir, IMAGE_LIMIT))
            for i in range(0, len(flood), 20):
                for frame in flood[i:i + 20]:
                    attacker.sendto(frame, ("127.0.0.1", port))
                time.sleep(0.002)
            time.sleep(0.05)
        assert len(sub.images) == limit
        assert len(image_logs(driver.aeron_dir)) == limit
        # the refusals are logged as one entry (one source, one reason), not once per SETUP
        entries = refusal_log_entries(driver.aeron_dir)
        assert len(entries) == 1, entries
        assert "AERON_RECEIVER_MAX_IMAGES" in entries[0] and f"127.0.0.1:{attacker.getsockname()[1]}" in entries[0]
        # a real publication on another stream of the endpoint is refused too while the limit holds
        pub = client.add_publication(udp_channel(port), STREAM + 1)
        client.add_subscription(udp_channel(port), STREAM + 1)
        refused = system_counter(driver.aeron_dir, IMAGE_LIMIT)
        wait_for(lambda: system_counter(driver.aeron_dir, IMAGE_LIMIT) > refused, timeout=5, what="the SETUP refused")
        assert not pub.is_connected


def test_a_setup_asking_for_a_term_above_the_maximum_makes_no_log(aeron_dir: str, attacker: socket.socket) -> None:
    # 1 MiB network and IPC terms: the receiver's maximum term length is 1 MiB (sparse logs, should one be made)
    settings = dict(UDP_SETTINGS, term_buffer_sparse_file=True)
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings) as driver, \
            aeron_async.Aeron.connect(driver.aeron_dir) as client:
        port = free_udp_port()
        sub = client.add_subscription(udp_channel(port), STREAM)
        refused = system_counter(driver.aeron_dir, TERM_LENGTH_REFUSED)
        attacker.sendto(setup_frame(11, term_length=1024 * 1024 * 1024), ("127.0.0.1", port))
        attacker.sendto(setup_frame(12, term_length=2 * 1024 * 1024), ("127.0.0.1", port))
        wait_for(lambda: system_counter(driver.aeron_dir, TERM_LENGTH_REFUSED) == refused + 2, timeout=5,
                 what="both SETUPs refused")
        # a SETUP within the maximum, sent after them, makes the only image
        attacker.sendto(setup_frame(13, term_length=1024 * 1024), ("127.0.0.1", port))
        image = wait_for(lambda: sub.images, timeout=5, what="the image of the SETUP within the maximum")[0]
        assert image.session_id == 13 and image.term_length == 1024 * 1024
        assert len(sub.images) == 1
        logs = image_logs(driver.aeron_dir)
        assert len(logs) == 1 and logs[0] < 4 * 1024 * 1024, logs
        entries = refusal_log_entries(driver.aeron_dir)
        assert any("above the receiver maximum 1048576" in e for e in entries), entries


def test_data_of_a_session_from_another_socket_is_dropped(aeron_dir: str, attacker: socket.socket) -> None:
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **UDP_SETTINGS) as driver, \
            aeron_async.Aeron.connect(driver.aeron_dir) as client:
        port = free_udp_port()
        sub = client.add_subscription(udp_channel(port), STREAM)
        publisher = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            publisher.bind(("127.0.0.1", 0))
            session = 77
            publisher.sendto(setup_frame(session), ("127.0.0.1", port))
            wait_for(lambda: sub.images, timeout=5, what="an image")
            got: list[bytes] = []

            def receive(count: int) -> None:
                wait_for(lambda: got.extend(m.data for m in sub.poll_messages()) or len(got) >= count, timeout=5,
                         what=f"{count} messages")

            publisher.sendto(data_frame(session, 0, b"hello"), ("127.0.0.1", port))
            receive(1)
            # the same session's next frame from another port of the same host: dropped and counted
            dropped = system_counter(driver.aeron_dir, FOREIGN_SOURCE)
            attacker.sendto(data_frame(session, 64, b"forged"), ("127.0.0.1", port))
            wait_for(lambda: system_counter(driver.aeron_dir, FOREIGN_SOURCE) == dropped + 1, timeout=5,
                     what="the forged frame dropped")
            # the publisher's own frame at that offset is what the subscriber reads
            publisher.sendto(data_frame(session, 64, b"world"), ("127.0.0.1", port))
            receive(2)
            assert got == [b"hello", b"world"]
        finally:
            publisher.close()


def test_a_publisher_that_moved_gets_a_new_image_once_the_old_one_timed_out(aeron_dir: str) -> None:
    """The image keeps the source its SETUP came from (docs/security.md, Network: receivers): the same
    session from a new address is dropped while the image lives; once it timed out (no frames from its
    source), the new address's frames elicit a SETUP and its SETUP makes a new image."""
    settings = dict(UDP_SETTINGS, image_liveness_timeout=0.5)
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings) as driver, \
            aeron_async.Aeron.connect(driver.aeron_dir) as client:
        port = free_udp_port()
        sub = client.add_subscription(udp_channel(port), STREAM)
        old, new = (socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(2))
        try:
            for sock in (old, new):
                sock.bind(("127.0.0.1", 0))
            new.settimeout(0.05)
            session = 91
            old.sendto(setup_frame(session), ("127.0.0.1", port))
            first = wait_for(lambda: sub.images, timeout=5, what="the first image")[0]
            assert first.source_identity == f"127.0.0.1:{old.getsockname()[1]}"
            # the publisher moves: its new socket's SETUP and heartbeats do not take the image over
            dropped = system_counter(driver.aeron_dir, FOREIGN_SOURCE)
            new.sendto(setup_frame(session), ("127.0.0.1", port))
            wait_for(lambda: system_counter(driver.aeron_dir, FOREIGN_SOURCE) > dropped, timeout=5,
                     what="the new address's SETUP dropped")
            deadline = time.monotonic() + 10
            asked = False
            while not (sub.images and sub.images[0].source_identity == f"127.0.0.1:{new.getsockname()[1]}"):
                assert time.monotonic() < deadline, "no image from the publisher's new address"
                new.sendto(DATA.pack(0, 0, 0xC0, TYPE_DATA, 0, session, STREAM, TERM_ID, 0), ("127.0.0.1", port))
                try:
                    reply = new.recv(64)
                except socket.timeout:
                    continue
                if reply[5] == 0x80 and struct.unpack_from("<ii", reply, 8) == (session, STREAM):  # SEND_SETUP
                    asked = True
                    new.sendto(setup_frame(session), ("127.0.0.1", port))
            assert asked
            assert len(sub.images) == 1 and sub.images[0].session_id == session
        finally:
            old.close()
            new.close()
