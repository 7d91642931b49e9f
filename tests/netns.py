"""Two hosts for multi-host tests: network namespaces joined by a veth pair, optionally with
nftables dropping a share of the UDP packets in each direction.

Only addresses inside the namespaces this module creates are used (10.77.<n>.1 and .2 on the veth
pair); everything is removed on exit, also after a failure. Needs root, `ip` (iproute2) and `nft`
(nftables); `./dev test` installs both.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass


def available() -> str | None:
    """None when namespaces can be made here, else the reason they cannot."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "nft"):
        if shutil.which(tool) is None:
            return f"`{tool}` is missing (./dev test installs iproute2 and nftables)"
    return None


def run(*args: str, input: str | None = None) -> str:
    result = subprocess.run(args, input=input, capture_output=True, text=True, timeout=30)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {result.stderr.strip() or result.stdout.strip()}")
    return result.stdout


@dataclass(frozen=True)
class Host:
    namespace: str
    address: str
    device: str

    def command(self, *args: str) -> list[str]:
        """A command line that runs `args` inside this host's namespace."""
        return ["ip", "netns", "exec", self.namespace, *args]

    def drop_udp(self, percent: float) -> None:
        """Drop `percent` % of UDP packets entering and leaving this host, at random."""
        permille = int(round(percent * 10))
        rule = f"meta l4proto udp numgen random mod 1000 < {permille} counter drop;"
        run("ip", "netns", "exec", self.namespace, "nft", "-f", "-", input=(
            "table inet aa_loss {\n"
            f"  chain input {{ type filter hook input priority 0; policy accept; {rule} }}\n"
            f"  chain output {{ type filter hook output priority 0; policy accept; {rule} }}\n"
            "}\n"))

    def rate_limit(self, rate: str, burst: str, latency: str) -> None:
        """Shape everything this host sends on its veth with a token bucket (`tc qdisc ... tbf`): at
        most `rate` (e.g. "40mbit"), bursts of `burst` bytes ("16kb"), packets queued at most
        `latency` ("100ms") before they are dropped. The qdisc lives on the namespace's end of the
        veth pair, so it goes with the namespace (two_hosts removes it, also after a failure)."""
        if shutil.which("tc") is None:
            raise RuntimeError("`tc` is missing (iproute2)")
        run("ip", "netns", "exec", self.namespace, "tc", "qdisc", "add", "dev", self.device, "root", "tbf",
            "rate", rate, "burst", burst, "latency", latency)

    def qdisc_stats(self) -> str:
        """`tc -s qdisc show` of this host's veth (sent bytes, drops, overlimits) for reports."""
        return run("ip", "netns", "exec", self.namespace, "tc", "-s", "qdisc", "show", "dev", self.device)

    def dropped_udp(self) -> int:
        """Packets the drop rules have dropped so far (both directions)."""
        out = run("ip", "netns", "exec", self.namespace, "nft", "list", "table", "inet", "aa_loss")
        total = 0
        for line in out.splitlines():
            words = line.split()
            if "counter" in words and "packets" in words:
                total += int(words[words.index("packets") + 1])
        return total


@contextlib.contextmanager
def two_hosts(subnet: int | None = None) -> Iterator[tuple[Host, Host]]:
    """Two namespaces joined by a veth pair: (host a at 10.77.<subnet>.1, host b at .2)."""
    tag = uuid.uuid4().hex[:6]
    subnet = subnet if subnet is not None else int(tag, 16) % 250 + 1
    a = Host(f"aa-{tag}-a", f"10.77.{subnet}.1", f"aa{tag}a")
    b = Host(f"aa-{tag}-b", f"10.77.{subnet}.2", f"aa{tag}b")
    created: list[str] = []
    try:
        for host in (a, b):
            run("ip", "netns", "add", host.namespace)
            created.append(host.namespace)
        run("ip", "link", "add", a.device, "type", "veth", "peer", "name", b.device)
        for host in (a, b):
            run("ip", "link", "set", host.device, "netns", host.namespace)
            run("ip", "-n", host.namespace, "addr", "add", f"{host.address}/24", "dev", host.device)
            run("ip", "-n", host.namespace, "link", "set", host.device, "up")
            run("ip", "-n", host.namespace, "link", "set", "lo", "up")
        yield a, b
    finally:
        for namespace in created:  # deleting a namespace deletes its end of the veth pair, and the pair
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True, timeout=30)
