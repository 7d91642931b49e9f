"""Whom the driver name resolver believes (docs/security.md, "Name resolution (gossip)"), in a running
driver over loopback, with peers played by plain UDP sockets sending hand-made frames
(test_resolution_frame.py's layout): a poisoned frame from 127.0.0.2, outside the allowed networks,
changes nothing and is counted; without allowed networks a SELF entry that does not come from the
address it claims is refused; with a shared key, unsigned and badly signed frames are refused while a
frame signed as documented (HMAC-SHA256 trailer) is taken, and two drivers with the key find each
other; a key file open to others stops the driver at start."""

from __future__ import annotations

import hashlib
import hmac
import pathlib
import socket
import struct
import subprocess
import time
from collections.abc import Callable, Iterator

import pytest

import aeron_async
from aeron_async.resolve import read_name_resolutions
from conftest import PYTHON, python_env, start_driver, stop_driver, system_counter, wait_for
from test_gossip_driver import by_prefix, counters
from test_resolution_frame import IPV4, SELF, Entry, pack_frame

SOURCE_REFUSED = "Resolver frames refused: source outside the allowed networks"
ENTRY_REFUSED = "Resolver entries refused: spoofed SELF or address outside the allowed networks"
UNAUTHENTICATED = "Resolver frames refused: unsigned or badly signed"
KEY = b"a shared key of 32 bytes, random"


def signed(frame: bytes, key: bytes, timestamp_ms: int | None = None) -> bytes:
    """The trailer of protocols/aa_resolution_frame.h: magic, timestamp, HMAC-SHA256 of frame + both."""
    stamp = int(time.time() * 1000) if timestamp_ms is None else timestamp_ms
    head = b"aahmac01" + struct.pack("<q", stamp)
    return frame + head + hmac.new(key, frame + head, hashlib.sha256).digest()


def cache_size(aeron_dir: str) -> int:
    return by_prefix(counters(aeron_dir), "Resolver cache entries")[1]


def resolver_port(aeron_dir: str) -> int:
    label, _ = by_prefix(counters(aeron_dir), "resolver-local-sockaddr: ")
    return int(label.rsplit(":", 1)[1])


def udp_socket(ip: str) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((ip, 0))
    return s


@pytest.fixture
def driver_with(aeron_dir: str) -> Iterator[Callable[..., str]]:
    """Starts a gossiping driver named `me` on 127.0.0.1 with the extra options given; its aeron dir."""
    started: list[subprocess.Popen] = []

    def start(*options: str, directory: str = aeron_dir, name: str = "me") -> str:
        started.append(start_driver(directory, "-o", "AERON_DRIVER_RESOLVER_INTERFACE=127.0.0.1:0",
                                    "-o", f"AERON_DRIVER_RESOLVER_NAME={name}", *options))
        return directory

    yield start
    for driver in started:
        alive = driver.poll() is None
        out = stop_driver(driver)
        assert alive and driver.returncode == 0, out


def resolved_address(aeron_dir: str, name: str, port: int) -> str:
    """Where a publication to name:port goes: the resolutions table's record of its endpoint."""
    with aeron_async.Aeron.connect(aeron_dir, driver_timeout=10) as client:
        pub = client.add_publication(f"aeron:udp?endpoint={name}:{port}", 1016)
        entry = next(e for e in read_name_resolutions(aeron_dir).entries
                     if e.name == f"{name}:{port}" and e.key == "endpoint")
        pub.close()
    return entry.address


def announce(peer: socket.socket, name: bytes, port: int) -> None:
    """peer says, SELF from its own address, that it is `name`."""
    ip, peer_port = peer.getsockname()
    peer.sendto(pack_frame([Entry(IPV4, SELF, peer_port, 0, socket.inet_aton(ip), name)]), ("127.0.0.1", port))


def test_a_poisoned_frame_from_outside_the_allowed_networks_changes_nothing(driver_with: Callable[..., str]) -> None:
    aeron_dir = driver_with("-o", "AERON_DRIVER_RESOLVER_ALLOWED_NETWORKS=127.0.0.1/32")
    port = resolver_port(aeron_dir)
    honest, attacker = udp_socket("127.0.0.1"), udp_socket("127.0.0.2")
    try:
        announce(honest, b"pod-1", port)
        wait_for(lambda: cache_size(aeron_dir) == 1, timeout=10, what="pod-1 cached")
        before = system_counter(aeron_dir, SOURCE_REFUSED)
        poison = [Entry(IPV4, 0, 40999, 0, socket.inet_aton("127.0.0.99"), b"pod-1"),
                  Entry(IPV4, SELF, attacker.getsockname()[1], 0, socket.inet_aton("127.0.0.99"), b"pod-1")]
        for entry in poison:
            attacker.sendto(pack_frame([entry]), ("127.0.0.1", port))
        announce(honest, b"marker", port)  # read after the poison: once it is cached, the poison was judged
        wait_for(lambda: cache_size(aeron_dir) == 2, timeout=10, what="the marker cached")
        assert resolved_address(aeron_dir, "pod-1", 40123) == "127.0.0.1:40123"
        assert system_counter(aeron_dir, SOURCE_REFUSED) == before + 2
        assert system_counter(aeron_dir, "Invalid packets") == 0
    finally:
        honest.close()
        attacker.close()


def test_a_self_entry_must_come_from_the_address_it_claims(driver_with: Callable[..., str]) -> None:
    aeron_dir = driver_with()  # no allowed networks: every source, as Aeron; the SELF rule still holds
    port = resolver_port(aeron_dir)
    honest, attacker = udp_socket("127.0.0.1"), udp_socket("127.0.0.2")
    try:
        announce(honest, b"pod-1", port)
        wait_for(lambda: cache_size(aeron_dir) == 1, timeout=10, what="pod-1 cached")
        spoof = Entry(IPV4, SELF, honest.getsockname()[1], 0, socket.inet_aton("127.0.0.99"), b"pod-1")
        attacker.sendto(pack_frame([spoof]), ("127.0.0.1", port))
        announce(honest, b"marker", port)  # read after the spoof: once it is cached, the spoof was judged
        wait_for(lambda: cache_size(aeron_dir) == 2, timeout=10, what="the marker cached")
        assert resolved_address(aeron_dir, "pod-1", 40123) == "127.0.0.1:40123"
        assert system_counter(aeron_dir, ENTRY_REFUSED) == 1
    finally:
        honest.close()
        attacker.close()


def test_with_a_key_only_signed_frames_count_and_keyed_drivers_find_each_other(
        driver_with: Callable[..., str], tmp_path: pathlib.Path) -> None:
    key_file = tmp_path / "resolver.key"
    key_file.write_bytes(KEY)
    key_file.chmod(0o400)
    a_dir = driver_with("-o", f"AERON_DRIVER_RESOLVER_HMAC_KEY_FILE={key_file}", directory=str(tmp_path / "a"),
                        name="pod-a")
    a_port = resolver_port(a_dir)
    b_dir = driver_with("-o", f"AERON_DRIVER_RESOLVER_HMAC_KEY_FILE={key_file}",
                        "-o", f"AERON_DRIVER_RESOLVER_BOOTSTRAP_NEIGHBOR=127.0.0.1:{a_port}",
                        directory=str(tmp_path / "b"), name="pod-b")
    wait_for(lambda: cache_size(a_dir) == 1 and cache_size(b_dir) == 1, timeout=15, what="the two drivers met")
    assert resolved_address(a_dir, "pod-b", 40123) == "127.0.0.1:40123"
    assert resolved_address(b_dir, "pod-a", 40123) == "127.0.0.1:40123"

    peer = udp_socket("127.0.0.1")
    try:
        ip, peer_port = peer.getsockname()
        frame = pack_frame([Entry(IPV4, SELF, peer_port, 0, socket.inet_aton(ip), b"pod-x")])
        before = system_counter(a_dir, UNAUTHENTICATED)
        good = signed(frame, KEY)
        forged = [frame, signed(frame, b"not the key, but just as long..."), good[:-1] + bytes([good[-1] ^ 1]),
                  signed(frame, KEY, timestamp_ms=int(time.time() * 1000) - 60_000)]
        for datagram in forged:
            peer.sendto(datagram, ("127.0.0.1", a_port))
        wait_for(lambda: system_counter(a_dir, UNAUTHENTICATED) == before + len(forged), timeout=10,
                 what="every forged frame refused")
        assert cache_size(a_dir) == 1
        peer.sendto(signed(frame, KEY), ("127.0.0.1", a_port))  # signed as documented: taken
        wait_for(lambda: cache_size(a_dir) == 2, timeout=10, what="the signed frame taken")
        assert resolved_address(a_dir, "pod-x", 40123) == "127.0.0.1:40123"
        assert system_counter(a_dir, UNAUTHENTICATED) == before + len(forged)
        assert system_counter(a_dir, "Invalid packets") == 0
    finally:
        peer.close()


def test_a_key_file_open_to_others_stops_the_driver_at_start(tmp_path: pathlib.Path) -> None:
    key_file = tmp_path / "resolver.key"
    key_file.write_bytes(KEY)
    key_file.chmod(0o644)
    result = subprocess.run(
        [PYTHON, "-m", "aeron_async", "driver", "--aeron-dir", str(tmp_path / "dir"),
         "-o", "AERON_DRIVER_RESOLVER_INTERFACE=127.0.0.1:0", "-o", "AERON_DRIVER_RESOLVER_NAME=me",
         "-o", f"AERON_DRIVER_RESOLVER_HMAC_KEY_FILE={key_file}"],
        env=python_env(), capture_output=True, text=True, timeout=30)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "AERON_DRIVER_RESOLVER_HMAC_KEY_FILE" in output and "mode 0644" in output and "chmod 600" in output, output
