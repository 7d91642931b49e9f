"""Congestion control over loopback: cc=cubic images measure the RTT with RTTM frames (driver default
or the channel's measure-rtt option), publish it and their window in per-image counters (type 10,
keyed like rcv-hwm), and free those counters with the image. The shaped, lossy two-host run is in
test_cc_netns.py; the algorithm itself is tested in C (test_protocols_congestion_control.c)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

import aeron_async
from aeron_async.counters import TYPE_PER_IMAGE, CounterRecord
from aeron_async.monitor import CncReader
from conftest import TEST_DRIVER_SETTINGS, free_udp_port, wait_for

MTU = 1408


def cubic_counters(aeron_dir: str) -> list[CounterRecord]:
    with CncReader(aeron_dir) as reader:
        return [c for c in reader.counters() if c.label.startswith("rcv-cc-cubic-")]


@pytest.fixture
def measuring_client(aeron_dir: str) -> Iterator[aeron_async.Aeron]:
    settings = dict(TEST_DRIVER_SETTINGS, term_buffer_length="1m", cubiccongestioncontrol_measurertt=True)
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings) as driver:
        with aeron_async.Aeron.connect(driver.aeron_dir, driver_timeout=5.0) as client:
            yield client


def test_cubic_images_measure_the_rtt_and_publish_rtt_and_window_counters(
    measuring_client: aeron_async.Aeron, aeron_dir: str
) -> None:
    client = measuring_client
    measured = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
    unmeasured = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
    subs = [client.add_subscription(measured + "|cc=cubic", 5),
            client.add_subscription(unmeasured + "|cc=cubic,measure-rtt:false", 5)]
    pubs = [client.add_publication(measured, 5), client.add_publication(unmeasured, 5)]
    wait_for(lambda: all(p.is_connected for p in pubs) and all(s.is_connected for s in subs), what="connected")
    received = [0, 0]

    def stream_a_while() -> None:
        for i, (pub, sub) in enumerate(zip(pubs, subs)):
            pub.offer(b"x" * 1000)
            received[i] += sub.poll(lambda data, header: None, 100)

    def rtt_measured() -> bool:
        stream_a_while()
        by_session = {c.session_id: c for c in cubic_counters(aeron_dir) if c.label.startswith("rcv-cc-cubic-rtt")}
        return by_session.get(pubs[0].session_id) is not None and by_session[pubs[0].session_id].value > 0

    wait_for(rtt_measured, timeout=10, what="an RTT measured over loopback")
    end = time.monotonic() + 0.3
    while time.monotonic() < end:
        stream_a_while()
    assert all(received)

    counters = cubic_counters(aeron_dir)
    assert len(counters) == 4   # an RTT and a window counter per image
    for c in counters:
        assert c.type_id == TYPE_PER_IMAGE
        assert c.stream_id == 5 and c.session_id in (pubs[0].session_id, pubs[1].session_id)
        assert c.label.split(": ")[1].split()[1:3] == [str(c.session_id), "5"], c.label
    with CncReader(aeron_dir) as reader:
        hwm = {c.session_id: c.registration_id for c in reader.counters() if c.label.startswith("rcv-hwm")}
    for c in counters:
        assert c.registration_id == hwm[c.session_id]   # keyed by the image, as rcv-hwm is
    rtt = {c.session_id: c.value for c in counters if c.label.startswith("rcv-cc-cubic-rtt")}
    window = {c.session_id: c.value for c in counters if c.label.startswith("rcv-cc-cubic-wnd")}
    assert 0 < rtt[pubs[0].session_id] < 1_000_000_000
    assert rtt[pubs[1].session_id] == 0          # measure-rtt:false on its channel: never measured
    for value in window.values():                 # cwnd x MTU, from 1 MTU up to the 128 KiB window
        assert value % MTU == 0 and MTU <= value <= 128 * 1024

    for p in pubs:
        p.close()
    for s in subs:
        s.close()
    wait_for(lambda: not cubic_counters(aeron_dir), timeout=10, what="the image's counters freed")


def test_a_bad_initial_rtt_is_refused_by_the_driver(aeron_dir: str) -> None:
    with pytest.raises(aeron_async.ConfigurationError, match="AERON_CUBICCONGESTIONCONTROL_INITIALRTT"):
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **dict(TEST_DRIVER_SETTINGS, cubiccongestioncontrol_initialrtt="0"))
