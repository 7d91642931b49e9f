"""A NAK storm at a live unicast publication (docs/security.md, Network: senders): NAKs from an
address that is not one of the publication's receivers are ignored entirely, and a receiver's NAKs,
however many and however large, make the publication resend at most the receivers' windows per
retransmit linger interval. A real loss still recovers. Loopback only, every wait bounded."""

from __future__ import annotations

import re
import socket
import struct
import subprocess
import time

import pytest

import aeron_async
from conftest import PYTHON, UDP_SETTINGS, python_env, system_counter, udp_channel, wait_for

SM = struct.Struct("<ibBhiiiiiq")    # frame_length version flags type session stream term_id term_offset window receiver_id
NAK = struct.Struct("<ibBhiiiii")    # frame_length version flags type session stream term_id term_offset length
TYPE_NAK, TYPE_SM = 2, 3

TERM_LENGTH = 64 * 1024
WINDOW = TERM_LENGTH // 2            # the most any receiver window counts for: termLength / 2
LINGER = 0.1                         # aeron.retransmit.unicast.linger for this driver
FRAME = 1024                         # each message fills one frame: 992 bytes + the 32-byte header
STORM = 400
BURST = 40                           # NAKs sent before waiting for the driver: within its socket buffer


def nak(session: int, stream: int, term_id: int, term_offset: int, length: int) -> bytes:
    return NAK.pack(NAK.size, 0, 0, TYPE_NAK, session, stream, term_id, term_offset, length)


def status_message(session: int, stream: int, term_id: int, term_offset: int, window: int) -> bytes:
    return SM.pack(SM.size, 0, 0, TYPE_SM, session, stream, term_id, term_offset, window, 0x5EC)


def send_storm(aeron_dir: str, sock: socket.socket, target: tuple[str, int], naks: list[bytes]) -> None:
    """Sends naks in bursts, each taken in by the driver (counted as received) before the next."""
    first = system_counter(aeron_dir, "NAKs received")
    for i in range(0, len(naks), BURST):
        for datagram in naks[i:i + BURST]:
            sock.sendto(datagram, target)
        expected = first + min(i + BURST, len(naks))
        wait_for(lambda: system_counter(aeron_dir, "NAKs received") >= expected, timeout=10,
                 what=f"{expected - first} NAKs received")


def counters(aeron_dir: str) -> dict[str, int]:
    return {label: system_counter(aeron_dir, label) for label in (
        "NAKs received", "NAKs sent", "Retransmitted bytes", "NAKs refused, not from a receiver",
        "NAKs refused, outside the receiver window", "NAKs cut by the retransmit budget")}


def test_a_nak_storm_resends_at_most_the_receivers_windows_per_linger(aeron_dir: str) -> None:
    settings = dict(UDP_SETTINGS, retransmit_unicast_linger=LINGER)
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings) as driver, \
            aeron_async.Aeron.connect(driver.aeron_dir) as client:
        stream = 61
        channel = udp_channel(term_length="64k")
        sub = client.add_subscription(channel, stream)
        pub = client.add_publication(channel, stream)
        wait_for(lambda: pub.is_connected, timeout=10, what="connected")
        # 112 frames: the sender position lands at 48 KiB into the second term, and everything is
        # delivered before the storm starts
        delivered: list[int] = []

        def poll() -> int:
            return int(sub.poll(lambda data, header: delivered.append(len(data)), 100))

        def offered(seq: int) -> bool:
            if pub.offer(seq.to_bytes(8, "little") * (992 // 8)) > 0:
                return True
            poll()
            return False

        for seq in range(112):
            wait_for(lambda: offered(seq), timeout=10, what=f"message {seq} offered")
        wait_for(lambda: poll() >= 0 and len(delivered) == 112, timeout=10, what="every message delivered")
        position = pub.position
        assert position == 112 * FRAME
        term_id = pub.initial_term_id + position // TERM_LENGTH
        offset = position % TERM_LENGTH
        control = pub.local_socket_addresses[0].rsplit(":", 1)
        target = (control[0], int(control[1]))

        # 1. a stranger (no status message ever came from it): every NAK ignored, nothing resent
        stranger = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        attacker = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            before = counters(driver.aeron_dir)
            low = offset - WINDOW
            send_storm(driver.aeron_dir, stranger, target, [
                nak(pub.session_id, stream, term_id, low + FRAME, 0x7FFFFFFF) if i % 2 else
                nak(pub.session_id, stream, term_id, low, FRAME) for i in range(STORM)])
            after = counters(driver.aeron_dir)
            assert after["NAKs refused, not from a receiver"] - before["NAKs refused, not from a receiver"] == STORM
            if after["NAKs sent"] == before["NAKs sent"]:  # the real subscriber asked for nothing meanwhile
                assert after["Retransmitted bytes"] == before["Retransmitted bytes"], (before, after)

            # 2. an address that is a receiver (it sent a status message, reporting 32 KiB behind the
            # sender, and claiming a 1 GiB window): alternating ranges that dodge the reference's
            # dedupe (a small one, a large one beside it, one below what it reported); resent bytes
            # stay within both receivers' windows (the subscriber's and this one's, each at most
            # termLength / 2) per linger interval, counted over the intervals that elapsed
            attacker.bind(("127.0.0.1", 0))
            attacker.sendto(status_message(pub.session_id, stream, term_id, low, 1 << 30), target)
            time.sleep(0.05)
            before = counters(driver.aeron_dir)
            storm = [nak(pub.session_id, stream, term_id, low, FRAME),
                     nak(pub.session_id, stream, term_id, low + FRAME, 0x7FFFFFFF),
                     nak(pub.session_id, stream, term_id, 0, 32)]
            start = time.monotonic()
            send_storm(driver.aeron_dir, attacker, target, [storm[i % 3] for i in range(STORM)])
            elapsed = time.monotonic() - start
            after = counters(driver.aeron_dir)
        finally:
            stranger.close()
            attacker.close()
        resent = after["Retransmitted bytes"] - before["Retransmitted bytes"]
        # a receiver's budget intervals last a linger each and start on demand: over `elapsed` at most
        # elapsed / linger + 2 of them are touched
        intervals = int(elapsed / LINGER) + 2
        bound = 2 * WINDOW * intervals
        print(f"{STORM} NAKs in {elapsed * 1000:.1f} ms: {resent} bytes resent, bound {bound} "
              f"({intervals} intervals of {LINGER} s); counters before {before}, after {after}")
        assert 0 < resent <= bound
        assert after["NAKs cut by the retransmit budget"] > before["NAKs cut by the retransmit budget"]
        # the ranges below what the receiver reported (offset 0) were refused
        assert after["NAKs refused, outside the receiver window"] - before["NAKs refused, outside the receiver window"] \
            >= STORM // 3

        # `aeron-async stat` and the exporter show the refusals
        out = subprocess.run([PYTHON, "-m", "aeron_async", "stat", "--aeron-dir", driver.aeron_dir, "--once",
                              "--label", "^NAKs refused"], env=python_env(), capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        assert re.search(r"\s400 - NAKs refused, not from a receiver$", out.stdout, re.M), out.stdout
        assert "NAKs refused, outside the receiver window" in out.stdout
        import prometheus_client as prometheus  # the monitor extra, which the README's test command installs
        from aeron_async.exporter import registry_for
        scrape = prometheus.generate_latest(registry_for(driver.aeron_dir)).decode()
        assert re.search(r"^aeron_naks_refused_not_from_a_receiver_total\{[^}]*\} 400\.0$", scrape, re.M), scrape
        for name in ("naks_refused_outside_the_receiver_window", "naks_cut_by_the_retransmit_budget",
                     "receivers_refused_publication_full", "mdc_destinations_refused"):
            assert re.search(rf"^aeron_{name}_total\{{", scrape, re.M), name

        # the session still works
        wait_for(lambda: pub.offer(b"after the storm") > 0, timeout=5, what="offer after the storm")
        got: list[bytes] = []
        wait_for(lambda: sub.poll(lambda data, header: got.append(bytes(data)), 10) >= 0 and
                 b"after the storm" in got, timeout=5, what="delivered after the storm")


def test_a_real_loss_is_still_recovered(aeron_dir: str) -> None:
    settings = dict(UDP_SETTINGS, udp_receive_loss="drop:data:5%", udp_loss_seed=2026)
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings) as driver, \
            aeron_async.Aeron.connect(driver.aeron_dir) as client:
        channel = udp_channel(term_length="64k")
        sub = client.add_subscription(channel, 62)
        pub = client.add_publication(channel, 62)
        wait_for(lambda: pub.is_connected, timeout=10, what="connected")
        received: list[int] = []
        sent = 0
        deadline = time.monotonic() + 60
        while len(received) < 3000:
            assert time.monotonic() < deadline, f"stalled at {len(received)} of 3000"
            if sent < 3000 and pub.offer(sent.to_bytes(8, "little") * 40) > 0:
                sent += 1
            sub.poll(lambda data, header: received.append(int.from_bytes(bytes(data[:8]), "little")), 100)
        assert received == list(range(3000))
        after = counters(driver.aeron_dir)
        assert after["NAKs sent"] > 0 and after["Retransmitted bytes"] > 0, after
        assert after["NAKs refused, not from a receiver"] == 0, after
