"""The multicast rows (`--bench multicast`, not in the default set): hosts made of Linux network
namespaces on one bridge, each with its own driver (SHARED, backoff) and worker processes run
through `ip netns exec`, so they need root, `ip` (iproute2) and `nft` (nftables); without them the
rows are skipped with the reason.

- Throughput: the `aeron-sync-batch` sender on one host and its receivers on others, over unicast to
  one receiver (`endpoint=<receiver>:PORT`) and multicast to one and to three
  (`endpoint=224.0.88.1:PORT`); msgs/s per receiver (the row gives the slowest and the mean).
- NAKs per lost packet: four receivers, the sender sending `aeron-sync-batch` 32 B for the
  measuring time, nftables dropping 5% of UDP packets at each receiver independently (a loss seen by
  one receiver), then 5% of what the sender sends on the bridge (a loss every receiver shares); the
  receivers' "NAKs sent" over the packets the rules dropped, for the default `group=infer` (random
  multicast NAK delay) and for `group=false` (the unicast 100 us delay), to show what the random
  delay saves.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import attrs

from ..errors import BenchError
from .harness import PACKAGE_ROOT, Config, Worker, _env

GROUP = "224.0.88.1"
PORT = 40688


def unavailable() -> str | None:
    """None when namespaces can be made here, else why not."""
    if os.geteuid() != 0:
        return "the multicast rows need network namespaces, which need root"
    for tool in ("ip", "nft"):
        if shutil.which(tool) is None:
            return f"the multicast rows need `{tool}` (iproute2, nftables)"
    return None


def _run(*args: str, input: str | None = None) -> str:
    result = subprocess.run(args, input=input, capture_output=True, text=True, timeout=30)
    if result.returncode != 0:
        raise BenchError(f"{' '.join(args)} failed: {result.stderr.strip() or result.stdout.strip()}")
    return result.stdout


@attrs.frozen
class Host:
    namespace: str
    address: str
    bridge_namespace: str
    bridge_port: str

    def prefix(self) -> list[str]:
        return ["ip", "netns", "exec", self.namespace]

    def drop_received(self, percent: float) -> None:
        """Drops `percent` % of the UDP packets reaching this host."""
        permille = int(round(percent * 10))
        _run(*self.prefix(), "nft", "-f", "-", input=(
            "table inet aa_bench_loss {\n  chain input { type filter hook input priority 0; policy accept; "
            f"meta l4proto udp numgen random mod 1000 < {permille} counter drop; }}\n}}\n"))

    def drop_sent_on_bridge(self, percent: float) -> None:
        """Drops `percent` % of what this host sends, on the bridge before it floods it (shared loss)."""
        permille = int(round(percent * 10))
        _run("ip", "netns", "exec", self.bridge_namespace, "nft", "-f", "-", input=(
            f"table bridge aa_bench_loss {{\n  chain prerouting {{ type filter hook prerouting priority 0; "
            f"policy accept; iifname \"{self.bridge_port}\" meta l4proto udp numgen random mod 1000 < {permille} "
            "counter drop; }\n}\n"))

    def stop_dropping(self) -> None:
        subprocess.run([*self.prefix(), "nft", "delete", "table", "inet", "aa_bench_loss"], capture_output=True, timeout=30)
        subprocess.run(["ip", "netns", "exec", self.bridge_namespace, "nft", "delete", "table", "bridge",
                        "aa_bench_loss"], capture_output=True, timeout=30)

    def dropped(self, bridge: bool = False) -> int:
        if bridge:
            out = _run("ip", "netns", "exec", self.bridge_namespace, "nft", "list", "table", "bridge", "aa_bench_loss")
        else:
            out = _run(*self.prefix(), "nft", "list", "table", "inet", "aa_bench_loss")
        words = out.split()
        return int(words[words.index("packets") + 1])


@contextlib.contextmanager
def bridged_hosts(count: int) -> Iterator[list[Host]]:
    """`count` namespaces on one bridge (itself in a namespace), each with a multicast route; all
    removed on exit (deleting a namespace deletes its veth ends and the bridge)."""
    tag = uuid.uuid4().hex[:6]
    subnet = int(tag, 16) % 250 + 1
    bridge_ns = f"aab-{tag}-br"
    hosts = [Host(f"aab-{tag}-h{i}", f"10.79.{subnet}.{i + 1}", bridge_ns, f"aab{tag}p{i}") for i in range(count)]
    created: list[str] = []
    try:
        _run("ip", "netns", "add", bridge_ns)
        created.append(bridge_ns)
        _run("ip", "-n", bridge_ns, "link", "add", "br0", "type", "bridge", "mcast_snooping", "0")
        _run("ip", "-n", bridge_ns, "link", "set", "br0", "up")
        for i, host in enumerate(hosts):
            _run("ip", "netns", "add", host.namespace)
            created.append(host.namespace)
            device = f"aab{tag}h{i}"
            _run("ip", "link", "add", device, "type", "veth", "peer", "name", host.bridge_port)
            _run("ip", "link", "set", device, "netns", host.namespace)
            _run("ip", "link", "set", host.bridge_port, "netns", bridge_ns)
            _run("ip", "-n", bridge_ns, "link", "set", host.bridge_port, "master", "br0")
            _run("ip", "-n", bridge_ns, "link", "set", host.bridge_port, "up")
            _run("ip", "-n", host.namespace, "addr", "add", f"{host.address}/24", "dev", device)
            _run("ip", "-n", host.namespace, "link", "set", device, "up")
            _run("ip", "-n", host.namespace, "link", "set", "lo", "up")
            _run("ip", "-n", host.namespace, "route", "add", "224.0.0.0/4", "dev", device)
        yield hosts
    finally:
        for namespace in created:
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True, timeout=30)


class HostDriver:
    """A standalone driver inside a host's namespace."""

    def __init__(self, host: Host, threading_mode: str) -> None:
        base = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
        self.aeron_dir = os.path.join(base, f"aeron-bench-{os.getpid()}-{host.namespace}")
        self.popen = subprocess.Popen(
            [*host.prefix(), sys.executable, "-m", "aeron_async", "driver", "--aeron-dir", self.aeron_dir,
             "--threading-mode", threading_mode, "-o", "AERON_DIR_DELETE_ON_START=true",
             "-o", "AERON_DIR_DELETE_ON_SHUTDOWN=true", "-o", "AERON_PUBLICATION_LINGER_TIMEOUT=200ms"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=_env(), cwd=PACKAGE_ROOT)
        assert self.popen.stdout is not None
        line = self.popen.stdout.readline()
        if "running" not in line:
            raise BenchError(f"the driver in {host.namespace} did not start: {line}")

    def naks_sent(self) -> int:
        from ..monitor import CncReader

        with CncReader(self.aeron_dir) as reader:
            return next(c.value for c in reader.counters() if c.type_id == 0 and c.label == "NAKs sent")

    def close(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGINT)
            try:
                self.popen.wait(15)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
        shutil.rmtree(self.aeron_dir, ignore_errors=True)


def _stream(cfg: Config, hosts: list[Host], drivers: list[HostDriver], channel: str, size: int, stream: int,
            lose: Callable[[], None] = lambda: None) -> list[dict[str, Any]]:
    """One sender (host 0) and a receiver on each other host; the receivers' results."""
    spec: dict[str, Any] = {"size": size, "warmup": cfg.warmup, "duration": cfg.duration, "stream": stream,
                            "form": "batch", "channel": channel}
    receivers = [Worker({**spec, "aeron_dir": d.aeron_dir, "role": "aeron-sync-receiver"}, f"receiver on {h.namespace}",
                        prefix=h.prefix()) for h, d in zip(hosts[1:], drivers[1:])]
    sender: Worker | None = None
    try:
        for r in receivers:
            r.expect("READY", 30)
        lose()
        sender = Worker({**spec, "aeron_dir": drivers[0].aeron_dir, "role": "aeron-sync-sender"},
                        f"sender on {hosts[0].namespace}", prefix=hosts[0].prefix())
        sender.expect("READY", 40)
        return [r.expect("RESULT", cfg.warmup + cfg.duration + 60.0) for r in receivers]
    finally:
        for w in (sender, *receivers):
            if w is not None:
                w.finish()


def run_multicast(cfg: Config, note: Callable[[str], None]) -> dict[str, Any]:
    reason = unavailable()
    if reason is not None:
        return {"skipped": reason}
    out: dict[str, Any] = {"throughput": [], "naks_per_lost_packet": []}
    stream = 5000
    with bridged_hosts(5) as hosts:
        drivers: list[HostDriver] = []
        try:
            for h in hosts:
                drivers.append(HostDriver(h, cfg.threading_mode))
            layouts = [("unicast", 1, f"aeron:udp?endpoint={hosts[1].address}:{PORT}"),
                       ("multicast", 1, f"aeron:udp?endpoint={GROUP}:{PORT}"),
                       ("multicast", 3, f"aeron:udp?endpoint={GROUP}:{PORT}")]
            samples: dict[tuple[str, int, int], list[list[float]]] = {}
            for round_index in range(cfg.rounds):
                for size in cfg.sizes:
                    for kind, n, channel in layouts:
                        stream += 2
                        note(f"multicast bench: round {round_index + 1}, {kind} to {n}, {size} B")
                        try:
                            results = _stream(cfg, hosts[:1 + n], drivers[:1 + n], channel, size, stream)
                            samples.setdefault((kind, n, size), []).append([r["msgs_per_s"] for r in results])
                        except BenchError as exc:
                            samples.setdefault((kind, n, size), [])
                            out.setdefault("errors", []).append(str(exc))
            for size in cfg.sizes:
                for kind, n, channel in layouts:
                    rounds = samples.get((kind, n, size), [])
                    row: dict[str, Any] = {"transport": kind, "receivers": n, "size": size, "channel": channel,
                                           "rounds": rounds}
                    if rounds:
                        row["slowest_msgs_per_s"] = statistics.median(min(r) for r in rounds)
                        row["mean_msgs_per_s"] = statistics.median(statistics.mean(r) for r in rounds)
                    out["throughput"].append(row)

            for group in ("infer", "false"):
                channel = f"aeron:udp?endpoint={GROUP}:{PORT}|group={group}"
                for loss in ("each receiver", "shared"):
                    stream += 2
                    note(f"multicast bench: NAKs per lost packet, 5% loss at {loss}, group={group}")
                    before = [d.naks_sent() for d in drivers[1:]]

                    def lose(loss: str = loss) -> None:
                        if loss == "shared":
                            hosts[0].drop_sent_on_bridge(5.0)
                        else:
                            for h in hosts[1:]:
                                h.drop_received(5.0)
                    try:
                        _stream(cfg, hosts, drivers, channel, 32, stream, lose)
                        naks = sum(d.naks_sent() for d in drivers[1:]) - sum(before)
                        lost = hosts[0].dropped(bridge=True) if loss == "shared" else \
                            sum(h.dropped() for h in hosts[1:])
                        out["naks_per_lost_packet"].append({
                            "loss": f"5% at {loss}", "group": group, "naks": naks, "lost_packets": lost,
                            "naks_per_lost_packet": naks / lost if lost else None})
                    except BenchError as exc:
                        out.setdefault("errors", []).append(str(exc))
                    finally:
                        for h in hosts:
                            h.stop_dropping()
        finally:
            for d in drivers:
                d.close()
    return out


def markdown(result: dict[str, Any]) -> str:
    if "skipped" in result:
        return f"Multicast rows skipped: {result['skipped']}\n"
    lines = ["| transport | receivers | size | msgs/s (slowest receiver) | msgs/s (mean of receivers) |",
             "|---|---:|---:|---:|---:|"]
    for row in result["throughput"]:
        slowest = f"{row['slowest_msgs_per_s'] / 1e6:.2f} M" if "slowest_msgs_per_s" in row else "error"
        mean = f"{row['mean_msgs_per_s'] / 1e6:.2f} M" if "mean_msgs_per_s" in row else "error"
        lines.append(f"| {row['transport']} | {row['receivers']} | {row['size']} | {slowest} | {mean} |")
    lines += ["", "| loss (4 receivers) | group= | NAKs sent | packets lost | NAKs per lost packet |",
              "|---|---|---:|---:|---:|"]
    for row in result["naks_per_lost_packet"]:
        ratio = f"{row['naks_per_lost_packet']:.2f}" if row["naks_per_lost_packet"] is not None else "-"
        lines.append(f"| {row['loss']} | {row['group']} | {row['naks']} | {row['lost_packets']} | {ratio} |")
    for error in result.get("errors", []):
        lines.append(f"\nerror: {error}")
    return "\n".join(lines) + "\n"
