"""The multi-host test bed itself: two namespaces joined by a veth pair carry UDP, nftables drops
the share it is told to, and nothing is left behind."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from aeron_async.bench import netns

pytestmark = pytest.mark.skipif(netns.available() is not None, reason=str(netns.available()))

RECEIVER = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
# room for every datagram even if this process is not scheduled for a while (root: past rmem_max),
# so that only the nftables rule loses any
s.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_RCVBUFFORCE", 33), 16 << 20)
s.bind((sys.argv[1], 40123))
s.settimeout(2.0)
print("ready", flush=True)
got = set()
try:
    while True:
        data, _ = s.recvfrom(64)
        got.add(int(data))
except socket.timeout:
    pass
print(len(got), flush=True)
"""

SENDER = """
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[2])):
    s.sendto(str(i).encode(), (sys.argv[1], 40123))
    if i % 100 == 0:
        time.sleep(0.001)
"""


def exchange(a: netns.Host, b: netns.Host, count: int) -> int:
    receiver = subprocess.Popen(b.command(sys.executable, "-c", RECEIVER, b.address), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
    try:
        assert receiver.stdout.readline().strip() == "ready"
        subprocess.run(a.command(sys.executable, "-c", SENDER, b.address, str(count)), check=True, timeout=60)
        out, _ = receiver.communicate(timeout=30)
    finally:
        if receiver.poll() is None:
            receiver.kill()
    return int(out.strip().splitlines()[-1])


def test_veth_pair_carries_udp_and_nftables_drops_its_share() -> None:
    with netns.two_hosts() as (a, b):
        namespaces = (a.namespace, b.namespace)
        assert exchange(a, b, 2000) == 2000
        b.drop_udp(5.0)
        received = exchange(a, b, 4000)
        dropped = b.dropped_udp()
        assert 4000 - received == dropped  # the rule dropped exactly what went missing
        assert 80 <= dropped <= 360, f"dropped {dropped} of 4000 with a 5% rule"
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(namespace in listed for namespace in namespaces)


@pytest.mark.skipif(shutil.which("tc") is None, reason="`tc` (iproute2) is missing")
def test_rate_limit_shapes_the_hosts_veth_and_goes_with_the_namespaces_even_after_a_failure() -> None:
    namespaces: tuple[str, str] = ("", "")
    with pytest.raises(RuntimeError, match="the test failed"):
        with netns.two_hosts() as (a, b):
            namespaces = (a.namespace, b.namespace)
            a.rate_limit("20mbit", "16kb", "50ms")
            assert exchange(a, b, 500) == 500
            stats = a.qdisc_stats()
            assert "tbf" in stats and "rate 20Mbit" in stats
            sent = int(stats.split("Sent ")[1].split(" bytes")[0])
            assert sent >= 500 * 28  # every datagram went through the token bucket
            assert "tbf" not in b.qdisc_stats()  # only the host it was asked for
            with pytest.raises(RuntimeError, match="tc qdisc add"):
                b.rate_limit("fast", "16kb", "50ms")  # tc's own complaint names the command
            raise RuntimeError("the test failed")
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert namespaces[0] and not any(namespace in listed for namespace in namespaces)
