"""Reliable UDP multicast across hosts (docs/architecture.md, "How a message flows (UDP
multicast)"): five network namespaces on a bridge with
multicast routes, one publishing host and four receiving hosts, each with its own driver and its
own client process. A million messages of mixed sizes (one in a hundred fragmented at the default
MTU of 1408) reach all four subscribers complete, in order and once (each checks every sequence
number and compares every payload with the one expected); then a million more with nftables
dropping 5% of the UDP packets at each receiver independently; then, with the bridge dropping 5% of
what the sender sends (a loss every receiver shares), 40,000 more at 4,000 a second, twice, on
drivers restarted with a 50 ms NAK backoff: with the group's random NAK delay and without it
(group=false). The test reports the NAKs sent
per lost packet and holds them below bounds explained with NAKS_PER_LOSS_BOUND."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable

import pytest

import aeron_async
from aeron_async.bench import netns
from aeron_async.monitor import CncReader
from conftest import new_aeron_dir, run_proc, start_driver, stop_driver, system_counters

pytestmark = [pytest.mark.slow, pytest.mark.skipif(netns.available() is not None, reason=str(netns.available()))]

MESSAGES = 1_000_000
RECEIVERS = 4
# Multicast publications use max flow control by default (reference 5): the fastest receiver paces
# the sender, and a receiver that falls more than half a term (8 MiB) behind it loses data for good
# (its driver drops what is beyond its window, and the sender no longer keeps it), as Aeron's do. On
# two shared cores one Python subscriber easily falls that far behind another, so the publishing
# application holds itself within MAX_LEAD of the slowest subscriber (it reads their sub-pos
# counters); flow control still decides what the sender sends when.
MAX_LEAD = 4 * 1024 * 1024
GROUP = "224.0.77.1"
PORT = 40678
DRIVER_OPTIONS = ("-o", "AERON_CLIENT_LIVENESS_TIMEOUT=5s", "-o", "AERON_TIMER_INTERVAL=50ms",
                  "-o", "AERON_PUBLICATION_LINGER_TIMEOUT=500ms")
# NAKs sent per lost packet, two ways (measured on 2 loaded cores, each over a few runs):
# - Independent loss, 5% at each receiver: each loss is seen by one receiver only, which NAKs it
#   once, and again only when the retransmission or the NAK is lost too, or the retry falls inside
#   the sender's 10 ms linger; one NAK covers a burst. Measured 0.83 (0.85 with group=false, which
#   gives the image the unicast 100 us delay instead of the random one: with nobody to share a loss
#   with, the delay cannot save NAKs here). Bound 1.5: more means recovery went wrong (NAK storms,
#   retransmissions that do not fill gaps).
# - Shared loss, 5% of what the sender sends dropped on the bridge: all four receivers miss the same
#   packet. With the group's random delay in [0, 10 ms) the first NAK brings a retransmission to the
#   whole group before most other receivers' timers fire. Measured 1.41-1.51 NAKs per lost packet
#   on a quiet machine, 1.91 when other work starved the drivers (a receiver that runs late scans
#   before it reads the retransmission); with group=false (every receiver NAKs after the same
#   100 us) 2.10-2.30 quiet. The test runs both, one after the other, and asserts the random delay
#   saves NAKs (group=infer below group=false), and below 3 in any case: with every receiver NAKing
#   every loss it would be 4.
#   The saving needs a retransmission to reach the group within the spread of the receivers' delays
#   (a few ms). Sent as fast as the hosts take it, the stream keeps both cores busy, a retransmission
#   waits for a core, and the random retries (7.4 ms on average, against group=false's fixed 10 ms)
#   then cost more NAKs than the delay saves: CI measured 2.91 with the delay, 2.24 without (the
#   native test should_spare_naks_for_a_loss_the_group_shares shows both cases with a test clock).
#   So the publisher sends these streams at SHARED_LOSS_RATE, which leaves the cores idle about half
#   the time here (10,000 a second left 25-30%); that alone was not enough: 1.36 vs 1.87 quiet, but
#   2.87 vs 2.46 in a full run beside a busy loop. So the drivers of these two streams also draw
#   their delays below SHARED_LOSS_BACKOFF, which spreads the receivers' timers five times wider
#   than the default 10 ms: the first NAK's retransmission then comes back well within the spread
#   even on busy cores, and the random retries (37 ms on average) come later than group=false's.
#   The default backoff's own figures are the native test's.
NAKS_PER_LOSS_BOUND = 1.5
SHARED_LOSS_MESSAGES = 40_000
SHARED_LOSS_RATE = 4_000  # messages a second
SHARED_LOSS_BACKOFF = "50ms"
SHARED_NAKS_PER_LOSS_BOUND = 3.0


def client(host: netns.Host, name: str, *args: object, env_extra: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return run_proc(name, *args, prefix=host.command(), stdin=True,
                    env={"AA_STREAM_PROFILE": "small", "AA_PUBLISHER_WAIT_FOR_GO": "1", **(env_extra or {})})


def has_image(aeron_dir: str, stream_id: int) -> bool:
    """Whether the driver has an image of the stream (its rcv-pos counter: "rcv-pos: <id> <session> <stream> ...")."""
    with CncReader(aeron_dir) as reader:
        return any(c.label.startswith("rcv-pos:") and c.label.split()[3] == str(stream_id) for c in reader.counters())


def stream(sender: netns.Host, receivers: list[netns.Host], dirs: list[str], stream_id: int, messages: int,
           lose: Callable[[], None] = lambda: None, parameters: str = "", rate: int = 0) -> float:
    """Sends `messages` on the group from the first host to every other; returns the seconds it took.
    Every receiving host has its image (it joined at the start of the stream) before `lose` sets up
    the loss and the first message goes out: a receiver whose SETUP was lost would join later, where
    the stream then is, as Aeron's receivers do."""
    channel = f"aeron:udp?endpoint={GROUP}:{PORT}{parameters}"
    subs: list[subprocess.Popen[str]] = []
    pub = None
    try:
        for host, aeron_dir in zip(receivers, dirs[1:]):
            subs.append(client(host, "subscriber.py", aeron_dir, channel, stream_id, messages, 0))
        for sub in subs:
            line = sub.stdout.readline().strip() if sub.stdout else ""
            assert line == "ready", line + (sub.stdout.read() if sub.stdout and sub.poll() is not None else "")
        pub = client(sender, "publisher.py", dirs[0], channel, stream_id, messages, 0, "shared", "linger",
                     env_extra={"AA_PUBLISHER_PACE": f"{','.join(dirs[1:])}:{MAX_LEAD}",
                                "AA_PUBLISHER_RATE": str(rate)})
        assert pub.stdout is not None and pub.stdin is not None
        assert pub.stdout.readline().startswith("ready")
        line = pub.stdout.readline()
        assert line.strip() == "connected", line
        deadline = time.monotonic() + 10
        while not all(has_image(d, stream_id) for d in dirs[1:]):
            assert time.monotonic() < deadline, [has_image(d, stream_id) for d in dirs[1:]]
            time.sleep(0.02)
        lose()
        start = time.monotonic()
        pub.stdin.write("go\n")
        pub.stdin.flush()
        for sub in subs:
            out, _ = sub.communicate(timeout=240)
            assert sub.returncode == 0 and f"verified {messages}" in out, (out, [
                {k: v for k, v in system_counters(d).items() if "runs" in k or "NAK" in k or "Invalid" in k} for d in dirs])
        return time.monotonic() - start
    finally:
        for p in (*subs, pub):
            if p is not None and p.poll() is None:
                p.kill()
                p.communicate()


@pytest.mark.timeout(600)  # 80 s on 2 quiet cores, 150 s measured at load average 24
def test_multicast_reaches_four_hosts_complete_in_order_also_under_loss() -> None:
    with netns.bridged_hosts(1 + RECEIVERS) as hosts:
        sender, receivers = hosts[0], hosts[1:]
        dirs = [new_aeron_dir() for _ in hosts]
        drivers: list[subprocess.Popen[str]] = []
        try:
            for host, aeron_dir in zip(hosts, dirs):
                drivers.append(start_driver(aeron_dir, *DRIVER_OPTIONS, prefix=tuple(host.command())))
            clean = stream(sender, receivers, dirs, 1001, MESSAGES)
            print(f"no loss: {MESSAGES} messages to {RECEIVERS} hosts in {clean:.1f} s")

            before = [system_counters(d)["NAKs sent"] for d in dirs[1:]]

            def drop_at_receivers() -> None:
                for host in receivers:
                    host.drop_udp(5.0)
            lossy = stream(sender, receivers, dirs, 1002, MESSAGES, drop_at_receivers)
            naks = [system_counters(d)["NAKs sent"] - b for d, b in zip(dirs[1:], before)]
            lost = [host.dropped_udp("input") for host in receivers]
            sent = system_counters(dirs[0])
            ratio = sum(naks) / sum(lost)
            print(f"5% loss at each receiver: {MESSAGES} messages to {RECEIVERS} hosts in {lossy:.1f} s; "
                  f"packets lost on the way in {lost}, NAKs sent {naks}: {ratio:.2f} NAKs per lost packet; "
                  f"sender: NAKs received {sent['NAKs received']}, retransmits sent {sent['Retransmits sent']}, "
                  f"retransmit pool overflows {sent['Retransmit Pool Overflow count']}")
            assert all(n > MESSAGES // 1000 for n in lost), lost  # the rules really dropped packets at every host
            assert all(n > 0 for n in naks), naks  # and every receiver recovered by NAK
            assert sent["Retransmits sent"] > 0
            assert ratio < NAKS_PER_LOSS_BOUND, ratio

            # Shared loss: the bridge drops 5% of what the sender sends, so every receiver misses the same
            # packets; once with the group's random NAK delay, once without it (group=false), same load.
            for host in receivers:
                host.stop_dropping_udp()
            # the drivers again, with the wider NAK backoff of SHARED_LOSS_BACKOFF
            while drivers:
                driver = drivers.pop()
                out = stop_driver(driver)
                assert driver.returncode == 0, out
            for host, aeron_dir in zip(hosts, dirs):
                drivers.append(start_driver(aeron_dir, *DRIVER_OPTIONS, "-o",
                                            f"AERON_NAK_MULTICAST_MAX_BACKOFF={SHARED_LOSS_BACKOFF}",
                                            prefix=tuple(host.command())))
            ratios = {}
            for group, stream_id in (("infer", 1003), ("false", 1004)):
                before = [system_counters(d)["NAKs sent"] for d in dirs[1:]]
                shared = stream(sender, receivers, dirs, stream_id, SHARED_LOSS_MESSAGES,
                                lambda: sender.drop_udp_sent(5.0), f"|group={group}", SHARED_LOSS_RATE)
                naks = [system_counters(d)["NAKs sent"] - b for d, b in zip(dirs[1:], before)]
                lost_once = sender.dropped_udp_sent()
                sender.stop_dropping_udp_sent()
                ratios[group] = sum(naks) / lost_once
                print(f"5% loss at the sender, group={group}: {SHARED_LOSS_MESSAGES} messages to {RECEIVERS} hosts in "
                      f"{shared:.1f} s; packets lost for every receiver {lost_once}, NAKs sent {naks}: "
                      f"{ratios[group]:.2f} NAKs per lost packet")
                assert lost_once > SHARED_LOSS_MESSAGES // 1000
            assert ratios["infer"] < SHARED_NAKS_PER_LOSS_BOUND, ratios
            assert ratios["infer"] < ratios["false"], ratios
        finally:
            for driver in drivers:
                out = stop_driver(driver)
                assert driver.returncode == 0, out


def short_stream(sender: netns.Host, receiver: netns.Host, dirs: list[str], channel: str, stream_id: int) -> None:
    subs = [client(receiver, "subscriber.py", dirs[1], channel, stream_id, 2000, 0)]
    pub = None
    try:
        assert subs[0].stdout is not None and subs[0].stdout.readline().strip() == "ready"
        pub = client(sender, "publisher.py", dirs[0], channel, stream_id, 2000, 0, "shared", "linger",
                     env_extra={"AA_PUBLISHER_WAIT_FOR_GO": ""})
        out, _ = subs[0].communicate(timeout=60)
        assert subs[0].returncode == 0 and "verified 2000" in out, out
    finally:
        for p in (*subs, pub):
            if p is not None and p.poll() is None:
                p.kill()
                p.communicate()


def test_multicast_over_ipv6_and_on_a_chosen_interface() -> None:
    """An IPv6 group, and an IPv4 group whose interface is chosen by subnet (interface=<net>/24) with
    ttl=; each carries a stream (with fragmented messages) from one host to another."""
    with netns.bridged_hosts(2) as hosts:
        dirs = [new_aeron_dir() for _ in hosts]
        drivers: list[subprocess.Popen[str]] = []
        try:
            for host, aeron_dir in zip(hosts, dirs):
                drivers.append(start_driver(aeron_dir, *DRIVER_OPTIONS, prefix=tuple(host.command())))
            short_stream(hosts[0], hosts[1], dirs, "aeron:udp?endpoint=[ff0e::78:1]:40679", 2001)
            subnet = hosts[0].address.rsplit(".", 1)[0] + ".0/24"
            short_stream(hosts[0], hosts[1], dirs, f"aeron:udp?endpoint=224.0.78.3:40680|interface={subnet}|ttl=4", 2002)
        finally:
            for driver in drivers:
                out = stop_driver(driver)
                assert driver.returncode == 0, out


def test_a_group_without_a_multicast_route_is_refused_naming_the_fix() -> None:
    """A host with no route for the group (no multicast route, no default route) cannot join it: adding
    the publication or the subscription fails with an error that names the fix."""
    with netns.bridged_hosts(1, multicast_route=False) as hosts:
        aeron_dir = new_aeron_dir()
        driver = start_driver(aeron_dir, *DRIVER_OPTIONS, prefix=tuple(hosts[0].command()))
        try:
            with aeron_async.Aeron.connect(aeron_dir, driver_timeout=10) as client_:
                for add in (client_.add_publication, client_.add_subscription):
                    with pytest.raises(aeron_async.RegistrationError) as info:
                        add("aeron:udp?endpoint=224.0.78.5:40681", 3001)
                    message = str(info.value)
                    assert "no multicast route" in message, message
                    assert "ip route add 224.0.0.0/4 dev <interface>" in message, message
                    assert "interface=" in message, message
                # naming the interface is the other fix
                sub = client_.add_subscription(f"aeron:udp?endpoint=224.0.78.5:40681|interface={hosts[0].address}", 3001)
                sub.close()
        finally:
            out = stop_driver(driver)
            assert driver.returncode == 0, out


def test_subscribers_on_the_publishers_host_get_the_stream() -> None:
    """Loopback of our own datagrams: a subscriber in another driver on the publisher's host, and one
    in the publisher's own driver, both receive the group's stream (with a host on the bridge too)."""
    with netns.bridged_hosts(2) as hosts:
        dirs = [new_aeron_dir() for _ in range(3)]
        where = [hosts[0], hosts[0], hosts[1]]
        drivers: list[subprocess.Popen[str]] = []
        channel = "aeron:udp?endpoint=224.0.78.7:40682"
        procs: list[subprocess.Popen[str]] = []
        try:
            for host, aeron_dir in zip(where, dirs):
                drivers.append(start_driver(aeron_dir, *DRIVER_OPTIONS, prefix=tuple(host.command())))
            # subscribers in the publisher's driver, in another driver on its host, on another host
            for host, aeron_dir in ((hosts[0], dirs[0]), (hosts[0], dirs[1]), (hosts[1], dirs[2])):
                procs.append(client(host, "subscriber.py", aeron_dir, channel, 4001, 2000, 0))
            for p in procs:
                assert p.stdout is not None and p.stdout.readline().strip() == "ready"
            pub = client(hosts[0], "publisher.py", dirs[0], channel, 4001, 2000, 0, "shared", "linger",
                         env_extra={"AA_PUBLISHER_WAIT_FOR_GO": ""})
            procs.append(pub)
            for p in procs[:3]:
                out, _ = p.communicate(timeout=60)
                assert p.returncode == 0 and "verified 2000" in out, out
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.communicate()
            for driver in drivers:
                out = stop_driver(driver)
                assert driver.returncode == 0, out


def test_shared_multicast_publications_compare_settings_with_the_multicast_defaults() -> None:
    """Publications on one group and stream share one session when their settings agree, the multicast
    defaults included (fc=max, max-resend=16); differing ones are refused naming both values."""
    with netns.bridged_hosts(1) as hosts:
        aeron_dir = new_aeron_dir()
        driver = start_driver(aeron_dir, *DRIVER_OPTIONS, prefix=tuple(hosts[0].command()))
        try:
            with aeron_async.Aeron.connect(aeron_dir, driver_timeout=10) as c:
                channel = "aeron:udp?endpoint=224.0.78.9:40683"
                first = c.add_publication(channel, 5001)
                assert c.add_publication(channel + "|fc=max|max-resend=16", 5001).session_id == first.session_id
                with pytest.raises(aeron_async.InvalidChannelError, match=r"fc=unicast differs from fc=max \(the default\)"):
                    c.add_publication(channel + "|fc=unicast", 5001)
                with pytest.raises(aeron_async.InvalidChannelError, match=r"max-resend=4 differs from max-resend=16 \(the default\)"):
                    c.add_publication(channel + "|max-resend=4", 5001)
        finally:
            out = stop_driver(driver)
            assert driver.returncode == 0, out
