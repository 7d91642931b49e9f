"""Hosts made of Linux network namespaces, for the multi-host tests and the multicast benchmark
(bench/multicast.py): two namespaces joined by a veth pair (two_hosts), or any number on a bridge
with multicast routes (bridged_hosts), optionally with nftables dropping a share of the UDP packets
of a host, or translating a host's private address with a masquerade rule (a host behind a NAT).

Only addresses inside the namespaces this module creates are used (10.77.<n>.1 and .2 on the veth
pair, 10.78.<n>.<i> on a bridge); everything is removed on exit, also after a failure. Needs root, `ip` (iproute2) and `nft`
(nftables); `./dev test` installs both.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterable, Iterator

import attrs

from ..errors import BenchError

ETC_NETNS = "/etc/netns"
TOOLS = ("ip", "nft")


class NetnsError(BenchError):
    """A command that sets up or changes the hosts failed."""


def missing() -> str | None:
    """What namespaces need and this machine lacks: "root", a tool of TOOLS, or None."""
    if os.geteuid() != 0:
        return "root"
    return next((tool for tool in TOOLS if shutil.which(tool) is None), None)


def available() -> str | None:
    """None when namespaces can be made here, else the reason they cannot."""
    lacking = missing()
    if lacking == "root":
        return "network namespaces need root"
    return None if lacking is None else f"`{lacking}` is missing (./dev test installs iproute2 and nftables)"


def run(*args: str, input: str | None = None, check: bool = True) -> str:
    """Runs a command; raises NetnsError when it fails, unless `check` is False."""
    result = subprocess.run(args, input=input, capture_output=True, text=True, timeout=30)
    if check and result.returncode != 0:
        raise NetnsError(f"{' '.join(args)} failed: {result.stderr.strip() or result.stdout.strip()}")
    return result.stdout


@attrs.frozen
class Host:
    namespace: str
    address: str
    device: str
    # on a bridge (bridged_hosts): the bridge's namespace and this host's port on it
    bridge_namespace: str | None = None
    bridge_port: str | None = None
    address6: str | None = None   # on a bridge: an IPv6 address too

    def command(self, *args: str) -> list[str]:
        """A command line that runs `args` inside this host's namespace."""
        return ["ip", "netns", "exec", self.namespace, *args]

    def drop_udp(self, percent: float, chains: tuple[str, ...] = ("input", "output")) -> None:
        """Drop `percent` % of UDP packets entering and leaving this host, at random (or only those
        of the chains named: "input", "output")."""
        permille = int(round(percent * 10))
        # numgen's values are 0-999: 100 % is every packet (nft refuses "< 1000")
        rule = ("meta l4proto udp counter drop;" if permille >= 1000 else
                f"meta l4proto udp numgen random mod 1000 < {permille} counter drop;")
        run(*self.command("nft", "-f", "-"), input=(
            "table inet aa_loss {\n"
            + "".join(f"  chain {chain} {{ type filter hook {chain} priority 0; policy accept; {rule} }}\n"
                      for chain in chains)
            + "}\n"))

    def rate_limit(self, rate: str, burst: str, latency: str) -> None:
        """Shape everything this host sends on its veth with a token bucket (`tc qdisc ... tbf`): at
        most `rate` (e.g. "40mbit"), bursts of `burst` bytes ("16kb"), packets queued at most
        `latency` ("100ms") before they are dropped. The qdisc lives on the namespace's end of the
        veth pair, so it goes with the namespace (two_hosts removes it, also after a failure)."""
        if shutil.which("tc") is None:
            raise NetnsError("`tc` is missing (iproute2)")
        run(*self.command("tc", "qdisc", "add", "dev", self.device, "root", "tbf", "rate", rate, "burst", burst,
                          "latency", latency))

    def qdisc_stats(self) -> str:
        """`tc -s qdisc show` of this host's veth (sent bytes, drops, overlimits) for reports."""
        return run(*self.command("tc", "-s", "qdisc", "show", "dev", self.device))

    def drop_udp_sent(self, percent: float) -> None:
        """Drop `percent` % of the UDP packets this host sends, at random, on the bridge as they arrive
        from it (once per packet, before the bridge floods it): a multicast packet lost there is lost
        for every receiver alike. (Rules on the host's own output would not do: the kernel answers the
        sender with EPERM and the driver sends the packet again, so nothing is lost.)"""
        if self.bridge_namespace is None or self.bridge_port is None:
            raise ValueError(f"{self.namespace} is not on a bridge (bridged_hosts)")
        permille = int(round(percent * 10))
        run("ip", "netns", "exec", self.bridge_namespace, "nft", "-f", "-", input=(
            f"table bridge aa_loss_{self.bridge_port} {{\n"
            f"  chain prerouting {{ type filter hook prerouting priority 0; policy accept; "
            f"iifname \"{self.bridge_port}\" meta l4proto udp numgen random mod 1000 < {permille} counter drop; }}\n"
            "}\n"))

    def dropped_udp_sent(self) -> int:
        """Packets drop_udp_sent has dropped so far."""
        assert self.bridge_namespace is not None
        out = run("ip", "netns", "exec", self.bridge_namespace, "nft", "list", "table", "bridge",
                  f"aa_loss_{self.bridge_port}")
        words = out.split()
        return int(words[words.index("packets") + 1])

    def stop_dropping_udp_sent(self, missing_ok: bool = False) -> None:
        """Removes the rule drop_udp_sent added (`missing_ok`: if there is one)."""
        assert self.bridge_namespace is not None
        run("ip", "netns", "exec", self.bridge_namespace, "nft", "delete", "table", "bridge", f"aa_loss_{self.bridge_port}",
            check=not missing_ok)

    def write_etc(self, name: str, text: str) -> str:
        """Writes /etc/netns/<namespace>/<name> (e.g. "hosts", "resolv.conf"), which `ip netns exec`
        mounts over /etc/<name> for the processes it starts: a name service of this host's own. Write it
        before starting them; rewriting it later changes what they read (the file is rewritten in
        place, so the mount keeps showing it). two_hosts and bridged_hosts remove the directory."""
        directory = os.path.join(ETC_NETNS, self.namespace)
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def drop_dns_queries(self) -> None:
        """Silently drop DNS queries (UDP and TCP port 53) arriving at this host: a DNS server that does
        not answer, for the hosts whose resolv.conf names this one."""
        run(*self.command("nft", "-f", "-"), input=(
            "table inet aa_dns {\n"
            "  chain input { type filter hook input priority 0; policy accept; udp dport 53 drop; tcp dport 53 drop; }\n"
            "}\n"))

    def masquerade(self, private: str) -> None:
        """A host behind a NAT: gives it a private address (`private`, on its loopback, reachable from no
        other host) and an nftables masquerade rule (random ports too) that rewrites every packet leaving its
        veth to its own address. Sockets bound to `private` reach the other hosts only translated; their
        answers find the way back through the rule's connection tracking alone."""
        run(*self.command("ip", "addr", "add", f"{private}/32", "dev", "lo"))
        run(*self.command("nft", "-f", "-"), input=(
            "table ip aa_nat {\n"
            "  chain postrouting { type nat hook postrouting priority srcnat; policy accept; "
            f"oifname \"{self.device}\" counter masquerade fully-random; }}\n"
            "}\n"))

    def masqueraded(self) -> int:
        """Packets the masquerade rule has translated so far (the first of each connection)."""
        words = run(*self.command("nft", "list", "chain", "ip", "aa_nat", "postrouting")).split()
        return int(words[words.index("packets") + 1])

    def stop_dropping_udp(self, missing_ok: bool = False) -> None:
        """Removes the rules drop_udp added (`missing_ok`: if there are any)."""
        run(*self.command("nft", "delete", "table", "inet", "aa_loss"), check=not missing_ok)

    def dropped_udp(self, chain: str | None = None) -> int:
        """Packets the drop rules have dropped so far: both directions, or one chain ("input", "output")."""
        args = ("table", "inet", "aa_loss") if chain is None else ("chain", "inet", "aa_loss", chain)
        out = run(*self.command("nft", "list", *args))
        total = 0
        for line in out.splitlines():
            words = line.split()
            if "counter" in words and "packets" in words:
                total += int(words[words.index("packets") + 1])
        return total


def _remove_etc(*hosts: Host) -> None:
    """Removes the /etc/netns/<namespace>/ files write_etc made."""
    for host in hosts:
        shutil.rmtree(os.path.join(ETC_NETNS, host.namespace), ignore_errors=True)


def _delete(namespaces: Iterable[str]) -> None:
    """Deletes namespaces, with the veth ends (and so the veth pairs) and bridges inside them; one
    that failed to be made, or is gone already, is passed over."""
    for namespace in namespaces:
        run("ip", "netns", "del", namespace, check=False)


def _tag(subnet: int | None) -> tuple[str, int]:
    """A fresh tag for the names of a set of namespaces, and the subnet (from the tag unless given)."""
    tag = uuid.uuid4().hex[:6]
    return tag, subnet if subnet is not None else int(tag, 16) % 250 + 1


def _make_bridge(namespace: str, *options: str) -> None:
    """Makes the namespace of a bridge and its bridge br0, up."""
    run("ip", "netns", "add", namespace)
    run("ip", "-n", namespace, "link", "add", "br0", "type", "bridge", *options)
    run("ip", "-n", namespace, "link", "set", "br0", "up")


def _bring_up(host: Host) -> None:
    """Moves the host's veth end (made already) into its namespace, gives it the host's addresses
    and sets it and the namespace's loopback up."""
    run("ip", "link", "set", host.device, "netns", host.namespace)
    run("ip", "-n", host.namespace, "addr", "add", f"{host.address}/24", "dev", host.device)
    if host.address6 is not None:
        run("ip", "-n", host.namespace, "-6", "addr", "add", f"{host.address6}/64", "dev", host.device, "nodad")
    run("ip", "-n", host.namespace, "link", "set", host.device, "up")
    run("ip", "-n", host.namespace, "link", "set", "lo", "up")


def _plug(host: Host) -> None:
    """Joins a host (its namespace made) to its bridge: a veth pair from the host to a port of br0."""
    assert host.bridge_namespace is not None and host.bridge_port is not None
    bridge_ns, port = host.bridge_namespace, host.bridge_port
    run("ip", "link", "add", host.device, "type", "veth", "peer", "name", port)
    run("ip", "link", "set", port, "netns", bridge_ns)
    run("ip", "-n", bridge_ns, "link", "set", port, "master", "br0")
    run("ip", "-n", bridge_ns, "link", "set", port, "up")
    _bring_up(host)


@contextlib.contextmanager
def two_hosts(subnet: int | None = None) -> Iterator[tuple[Host, Host]]:
    """Two namespaces joined by a veth pair: (host a at 10.77.<subnet>.1, host b at .2)."""
    tag, subnet = _tag(subnet)
    a = Host(f"aa-{tag}-a", f"10.77.{subnet}.1", f"aa{tag}a")
    b = Host(f"aa-{tag}-b", f"10.77.{subnet}.2", f"aa{tag}b")
    created: list[str] = []
    try:
        for host in (a, b):
            run("ip", "netns", "add", host.namespace)
            created.append(host.namespace)
        run("ip", "link", "add", a.device, "type", "veth", "peer", "name", b.device)
        for host in (a, b):
            _bring_up(host)
        yield a, b
    finally:
        _delete(created)  # deleting a namespace deletes its end of the veth pair, and the pair
        _remove_etc(a, b)


@contextlib.contextmanager
def bridged_hosts(count: int, subnet: int | None = None, multicast_route: bool = True) -> Iterator[list[Host]]:
    """`count` namespaces on one Ethernet bridge (which lives in a namespace of its own): host i at
    10.78.<subnet>.<i + 1>/24 and fd00:78:<subnet>::<i + 1>/64 (IPv6 has its multicast route per
    interface from the kernel), each with its interface up and, unless multicast_route is False, an IPv4
    multicast route (224.0.0.0/4 via that interface) so groups can be joined and sent to. Without it
    the namespace has no route at all for a group (no default route either): joining one fails."""
    tag, subnet = _tag(subnet)
    bridge_ns = f"aa-{tag}-br"
    hosts = [Host(f"aa-{tag}-h{i}", f"10.78.{subnet}.{i + 1}", f"aa{tag}h{i}", bridge_ns, f"aa{tag}p{i}",
                  f"fd00:78:{subnet:x}::{i + 1:x}") for i in range(count)]
    created: list[str] = []
    try:
        created.append(bridge_ns)
        _make_bridge(bridge_ns, "mcast_snooping", "0")
        for host in hosts:
            run("ip", "netns", "add", host.namespace)
            created.append(host.namespace)
            _plug(host)
            if multicast_route:
                run("ip", "-n", host.namespace, "route", "add", "224.0.0.0/4", "dev", host.device)
        yield hosts
    finally:
        _delete(created)  # deleting a namespace deletes the veth ends inside it, and the bridge
        _remove_etc(*hosts)


class Bridge:
    """An Ethernet bridge in a namespace of its own (see bridge()) that hosts join and leave, as pods
    come and go: add(name, i) makes namespace `<tag>-<name>` at 10.79.<subnet>.<i>/24, remove(host)
    deletes it (and its veth pair) again. Only IPv4, no multicast route."""

    def __init__(self, tag: str, subnet: int) -> None:
        self.tag = tag
        self.subnet = subnet
        self.namespace = f"aa-{tag}-br"
        self.hosts: list[Host] = []
        self._ports = 0

    def add(self, name: str, index: int) -> Host:
        self._ports += 1
        host = Host(f"aa-{self.tag}-{name}", f"10.79.{self.subnet}.{index}", f"aa{self.tag}h{self._ports}",
                    self.namespace, f"aa{self.tag}p{self._ports}")
        run("ip", "netns", "add", host.namespace)
        self.hosts.append(host)
        _plug(host)
        return host

    def remove(self, host: Host) -> None:
        """Deletes the host's namespace (stop its processes first: a namespace lives on while a
        process is in it); its veth pair and bridge port go with it."""
        run("ip", "netns", "del", host.namespace)
        self.hosts.remove(host)


@contextlib.contextmanager
def bridge(subnet: int | None = None) -> Iterator[Bridge]:
    """A Bridge; every namespace of it is removed on exit, also after a failure."""
    made = Bridge(*_tag(subnet))
    try:
        _make_bridge(made.namespace)
        yield made
    finally:
        _delete([host.namespace for host in made.hosts] + [made.namespace])
