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

import statistics
from collections.abc import Callable
from typing import Any

from ..errors import BenchError
from . import netns
from .harness import Config, Driver, Worker
from .netns import Host, bridged_hosts

# what a failed row records and the run goes on from (and what the harness reports when the hosts
# cannot be made): a worker's failure, or a namespace command's (a NetnsError is a BenchError)
ERRORS = (BenchError,)

GROUP = "224.0.88.1"
PORT = 40688


def unavailable() -> str | None:
    """None when namespaces can be made here, else why not."""
    lacking = netns.missing()
    if lacking == "root":
        return "the multicast rows need network namespaces, which need root"
    return None if lacking is None else f"the multicast rows need `{lacking}` (iproute2, nftables)"


class HostDriver(Driver):
    """A standalone driver inside a host's namespace."""

    def __init__(self, host: Host, threading_mode: str) -> None:
        super().__init__(threading_mode, None, name=host.namespace, prefix=host.command(),
                         options=("AERON_PUBLICATION_LINGER_TIMEOUT=200ms",))

    def naks_sent(self) -> int:
        from ..monitor import CncReader

        with CncReader(self.aeron_dir) as reader:
            return next(c.value for c in reader.counters() if c.type_id == 0 and c.label == "NAKs sent")


def _stream(cfg: Config, hosts: list[Host], drivers: list[HostDriver], channel: str, size: int, stream: int,
            lose: Callable[[], None] = lambda: None) -> list[dict[str, Any]]:
    """One sender (host 0) and a receiver on each other host; the receivers' results."""
    spec: dict[str, Any] = {"size": size, "warmup": cfg.warmup, "duration": cfg.duration, "stream": stream,
                            "form": "batch", "channel": channel}
    receivers = [Worker({**spec, "aeron_dir": d.aeron_dir, "role": "aeron-sync-receiver"}, f"receiver on {h.namespace}",
                        prefix=h.command()) for h, d in zip(hosts[1:], drivers[1:])]
    sender: Worker | None = None
    try:
        for r in receivers:
            r.expect("READY", 30)
        lose()
        sender = Worker({**spec, "aeron_dir": drivers[0].aeron_dir, "role": "aeron-sync-sender"},
                        f"sender on {hosts[0].namespace}", prefix=hosts[0].command())
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
                        except ERRORS as exc:
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
                            hosts[0].drop_udp_sent(5.0)
                        else:
                            for h in hosts[1:]:
                                h.drop_udp(5.0, chains=("input",))
                    try:
                        _stream(cfg, hosts, drivers, channel, 32, stream, lose)
                        naks = sum(d.naks_sent() for d in drivers[1:]) - sum(before)
                        lost = hosts[0].dropped_udp_sent() if loss == "shared" else \
                            sum(h.dropped_udp() for h in hosts[1:])
                        out["naks_per_lost_packet"].append({
                            "loss": f"5% at {loss}", "group": group, "naks": naks, "lost_packets": lost,
                            "naks_per_lost_packet": naks / lost if lost else None})
                    except ERRORS as exc:
                        out.setdefault("errors", []).append(str(exc))
                    finally:
                        for h in hosts:
                            h.stop_dropping_udp(missing_ok=True)
                            h.stop_dropping_udp_sent(missing_ok=True)
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
