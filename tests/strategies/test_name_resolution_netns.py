"""Names through the system resolver, in network namespaces with name services of their own
(/etc/netns/<namespace>/hosts and resolv.conf, which `ip netns exec` mounts over /etc for the
driver it starts): a host name moved in the hosts file while streaming (re-resolution, reference
8.3), a name that appears only after its publication was registered, and a DNS server that does not
answer, which must not hold up the driver's other channels.

The drivers run in the namespaces; the clients run here (they talk to their driver through shared
memory only)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator

import pytest

import aeron_async
from aeron_async.bench import netns
from aeron_async.resolve import read_name_resolutions
from conftest import new_aeron_dir, start_driver, stop_driver, system_counter, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.skipif(netns.available() is not None, reason=str(netns.available()))]

DRIVER_OPTIONS = ("-o", "AERON_CLIENT_LIVENESS_TIMEOUT=5s", "-o", "AERON_TIMER_INTERVAL=50ms",
                  "-o", "AERON_PUBLICATION_LINGER_TIMEOUT=500ms", "-o", "AERON_TERM_BUFFER_LENGTH=1m")
# misses fail at once: nothing listens on port 53 there, the query is refused
FAST_MISS_RESOLV_CONF = "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n"


def port() -> int:
    return 41000 + (os.getpid() * 7 + int(time.monotonic_ns() // 1000)) % 2000


class Drivers:
    """Standalone drivers started in namespaces, stopped (and their output checked) at the end."""

    def __init__(self) -> None:
        self.procs: list = []

    def start(self, host: netns.Host, *options: str) -> str:
        aeron_dir = new_aeron_dir()
        self.procs.append(start_driver(aeron_dir, *DRIVER_OPTIONS, *options, prefix=tuple(host.command())))
        return aeron_dir

    def stop(self) -> None:
        outputs = [(p, stop_driver(p)) for p in self.procs]
        for p, out in outputs:
            assert p.returncode == 0, out


@pytest.fixture
def drivers() -> Iterator[Drivers]:
    d = Drivers()
    try:
        yield d
    finally:
        d.stop()


def offer_until(pub: aeron_async.Publication, sub: aeron_async.Subscription, payload: bytes, timeout: float,
                what: str) -> None:
    """Offers payload every 10 ms until sub has received it (bounded by timeout)."""
    got: list[bytes] = []
    last_offer = 0.0

    def received() -> bool:
        nonlocal last_offer
        if time.monotonic() - last_offer > 0.01:
            pub.offer(payload)
            last_offer = time.monotonic()
        got.extend(m.data for m in sub.poll_messages())
        return payload in got

    wait_for(received, timeout=timeout, what=what)


def test_a_host_name_moved_in_the_hosts_file_while_streaming_is_followed(drivers: Drivers) -> None:
    with netns.two_hosts() as (a, b):
        moved = b.address.rsplit(".", 1)[0] + ".3"
        netns.run("ip", "-n", b.namespace, "addr", "add", f"{moved}/24", "dev", b.device)
        hosts = a.write_etc("hosts", f"127.0.0.1 localhost\n{b.address} svc.test\n")
        a.write_etc("resolv.conf", FAST_MISS_RESOLV_CONF)
        dir_a, dir_b = drivers.start(a), drivers.start(b)
        p = port()
        with aeron_async.Aeron.connect(dir_a, driver_timeout=5.0) as client_a, \
                aeron_async.Aeron.connect(dir_b, driver_timeout=5.0) as client_b:
            first = client_b.add_subscription(f"aeron:udp?endpoint={b.address}:{p}", 9)
            second = client_b.add_subscription(f"aeron:udp?endpoint={moved}:{p}", 9)
            pub = client_a.add_publication(f"aeron:udp?endpoint=svc.test:{p}", 9)
            wait_for(lambda: pub.is_connected, timeout=10, what="connected to the first address")
            offer_until(pub, first, b"before the move", 10, "the first address receiving")

            with open(hosts, "w") as f:  # in place: the namespace's mount shows this file
                f.write(f"127.0.0.1 localhost\n{moved} svc.test\n")
            first.close()  # its status messages stop: 5 s later the sender asks for svc.test again
            started = time.monotonic()
            offer_until(pub, second, b"after the move", 20, "the stream moving to the new address")
            print(f"moved in {time.monotonic() - started:.1f} s")
            assert not pub.is_closed
            assert system_counter(dir_a, "Resolution changes") == 1
            entry = next(e for e in read_name_resolutions(dir_a).entries if e.name == f"svc.test:{p}")
            assert (entry.address, entry.change_count) == (f"{moved}:{p}", 1)


def test_a_name_that_appears_later_connects_with_pending_allowed_and_is_an_error_without(drivers: Drivers) -> None:
    with netns.two_hosts() as (a, b):
        hosts = a.write_etc("hosts", "127.0.0.1 localhost\n")
        a.write_etc("resolv.conf", FAST_MISS_RESOLV_CONF)
        strict_dir = drivers.start(a)
        pending_dir = drivers.start(a, "-o", "AERON_NAME_RESOLUTION_PENDING_ALLOWED=true")
        dir_b = drivers.start(b)
        p = port()
        channel = f"aeron:udp?endpoint=late.test:{p}"
        with aeron_async.Aeron.connect(strict_dir, driver_timeout=5.0) as strict, \
                aeron_async.Aeron.connect(pending_dir, driver_timeout=5.0) as client_a, \
                aeron_async.Aeron.connect(dir_b, driver_timeout=5.0) as client_b:
            with pytest.raises(aeron_async.AeronError) as info:
                strict.add_publication(channel, 10)
            assert "late.test" in str(info.value) and "AERON_NAME_RESOLUTION_PENDING_ALLOWED" in str(info.value)

            sub = client_b.add_subscription(f"aeron:udp?endpoint={b.address}:{p}", 10)
            pub = client_a.add_publication(channel, 10)  # registered, not connected
            wait_for(lambda: system_counter(pending_dir, "Errors") >= 2, timeout=10, what="failed retries logged")
            assert not pub.is_connected
            with open(hosts, "w") as f:
                f.write(f"127.0.0.1 localhost\n{b.address} late.test\n")
            wait_for(lambda: pub.is_connected, timeout=10, what="connected once the name resolves")
            offer_until(pub, sub, b"late", 10, "the message")


def test_a_dns_server_that_does_not_answer_holds_up_only_the_channel_that_names_it(drivers: Drivers) -> None:
    with netns.two_hosts() as (a, b):
        b.drop_dns_queries()
        a.write_etc("hosts", "127.0.0.1 localhost\n")
        a.write_etc("resolv.conf", f"nameserver {b.address}\noptions timeout:30 attempts:1\n")
        dir_a = drivers.start(a)
        p = port()
        outcome: dict[str, object] = {}

        def named() -> None:
            with aeron_async.Aeron.connect(dir_a, driver_timeout=3.0) as waiting:
                try:
                    waiting.add_publication(f"aeron:udp?endpoint=silent.test:{p}", 11)
                    outcome["result"] = "registered"
                except aeron_async.AeronError as exc:
                    outcome["result"] = str(exc)

        thread = threading.Thread(target=named, daemon=True)
        thread.start()
        time.sleep(0.3)  # its lookup is under way on the executor: the DNS query goes unanswered for 30 s
        started = time.monotonic()
        with aeron_async.Aeron.connect(dir_a, driver_timeout=5.0) as client:
            ipc_sub = client.add_subscription("aeron:ipc", 12)
            ipc_pub = client.add_publication("aeron:ipc", 12)
            udp_sub = client.add_subscription(f"aeron:udp?endpoint={a.address}:{p + 1}", 13)
            udp_pub = client.add_publication(f"aeron:udp?endpoint={a.address}:{p + 1}", 13)
            wait_for(lambda: ipc_pub.is_connected and udp_pub.is_connected, timeout=10, what="both connected")
            for i in range(200):
                for pub, sub, what in ((ipc_pub, ipc_sub, "ipc"), (udp_pub, udp_sub, "udp")):
                    offer_until(pub, sub, f"{what} {i}".encode(), 10, f"{what} message {i}")
            elapsed = time.monotonic() - started
        # both streams ran while the name was still being looked up: the driver has no answer for it yet
        assert not any(e.name == f"silent.test:{p}" for e in read_name_resolutions(dir_a).entries)
        print(f"400 messages over IPC and UDP in {elapsed:.2f} s while silent.test waited for DNS")
        thread.join(timeout=15)
        assert not thread.is_alive()
        assert "no response from the media driver" in str(outcome.get("result")), outcome
