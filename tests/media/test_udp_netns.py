"""Reliable UDP between two hosts: two drivers in two network namespaces joined by a veth pair,
with loss made by nftables (5% of UDP packets dropped in each direction) or by the driver's own
loss generator (reordering and duplicating frames). Every message arrives, complete, in order,
once; the NAK and retransmit counters show the recovery."""

from __future__ import annotations

import subprocess

import pytest

from aeron_async.bench import netns
from conftest import new_aeron_dir, run_proc, start_driver, stop_driver, system_counters

pytestmark = [pytest.mark.slow, pytest.mark.skipif(netns.available() is not None, reason=str(netns.available()))]

MESSAGES = 200_000
DRIVER_OPTIONS = ("-o", "AERON_CLIENT_LIVENESS_TIMEOUT=5s", "-o", "AERON_TIMER_INTERVAL=50ms",
                  "-o", "AERON_PUBLICATION_LINGER_TIMEOUT=500ms")


def script(host: netns.Host, name: str, *args: object, max_small: int) -> subprocess.Popen[str]:
    return run_proc(name, *args, prefix=host.command(), env={"AA_STREAM_MAX_SMALL": str(max_small)})


@pytest.mark.parametrize("loss", ["nftables-drop-5%", "generator-reorder-duplicate"])
def test_stream_between_namespaces_survives_loss(loss: str) -> None:
    generator: tuple[str, ...] = ()
    if loss.startswith("generator"):
        generator = ("-o", "AERON_UDP_RECEIVE_LOSS=reorder:data:5%,dup:data:5%,drop:data:2%", "-o", "AERON_UDP_LOSS_SEED=11")
    with netns.two_hosts() as (a, b):
        if loss.startswith("nftables"):
            a.drop_udp(5.0)
            b.drop_udp(5.0)
        dir_a, dir_b = new_aeron_dir(), new_aeron_dir()
        driver_a = start_driver(dir_a, *DRIVER_OPTIONS, prefix=tuple(a.command()))
        driver_b = start_driver(dir_b, *DRIVER_OPTIONS, *generator, prefix=tuple(b.command()))
        channel = f"aeron:udp?endpoint={b.address}:40456"
        sub = pub = None
        try:
            sub = script(b, "subscriber.py", dir_b, channel, 1001, MESSAGES, 0, max_small=2000)
            assert sub.stdout.readline().strip() == "ready"
            pub = script(a, "publisher.py", dir_a, channel, 1001, MESSAGES, 0, max_small=2000)
            sub_out, _ = sub.communicate(timeout=600)
            pub_out, _ = pub.communicate(timeout=60)
            assert sub.returncode == 0, sub_out
            assert f"verified {MESSAGES}" in sub_out
            assert pub.returncode == 0, pub_out
            sent, received = system_counters(dir_a), system_counters(dir_b)
            dropped = (a.dropped_udp() + b.dropped_udp()) if loss.startswith("nftables") else 0
            print(f"{loss}: NAKs sent {received['NAKs sent']}, NAKs received {sent['NAKs received']}, "
                  f"retransmits sent {sent['Retransmits sent']}, packets dropped by nftables {dropped}")
            assert received["NAKs sent"] > 0
            assert sent["NAKs received"] > 0 and sent["Retransmits sent"] > 0
            if loss.startswith("nftables"):
                assert dropped > MESSAGES // 100  # the rules really dropped packets
        finally:
            for p in (sub, pub):
                if p is not None and p.poll() is None:
                    p.kill()
            for driver in (driver_a, driver_b):
                out = stop_driver(driver)
                assert driver.returncode == 0, out
