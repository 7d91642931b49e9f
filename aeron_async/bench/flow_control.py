"""Flow control written in Python against the native strategy: one publisher, `receivers` receivers
on a multicast group, each receiver a process with an embedded driver of its own, the publisher a
process whose embedded driver runs the strategy: the native "min", or `MinFlowControl` registered as
"pymin" (the same rule in Python, run by the driver's flow-control worker thread). Min holds the
publisher to the slowest receiver, so the publisher's rate is the group's; the figure is messages
per second offered (and accepted) in the measured window, 32-byte messages by default, offered with
`offer_batch` and received with `poll_messages` batches.

`aeron-async bench --bench flow-control` runs it (rounds alternate the two strategies); alone:
`python -m aeron_async.bench.flow_control [--receivers 3] [--duration 2] [--rounds 3]`. Multicast
needs an interface that carries it: by default the one holding the route to the group (`ip route get
239.255.0.1`), else give `--interface ADDRESS`; on such an interface the host's own receivers get
the datagrams through multicast loopback.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from typing import Any

from ..errors import BenchError, BenchTimeoutError
from .harness import close_and_wait

STREAM = 3001
STRATEGIES = ("min", "pymin")
BATCH = 4096
TERM = "16m"


def default_interface() -> str | None:
    """The local IPv4 address the kernel would send a group datagram from (no datagram is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(("239.255.0.1", 9))
        except OSError:
            return None
        address = str(sock.getsockname()[0])
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def _driver_settings(aeron_dir: str, threading_mode: str) -> dict[str, Any]:
    return {"aeron_dir": aeron_dir, "threading_mode": threading_mode, "term_buffer_length": TERM,
            "dir_delete_on_start": True, "dir_delete_on_shutdown": True}


def _emit(tag: str, payload: dict[str, Any]) -> None:
    sys.stdout.write(f"{tag} {json.dumps(payload)}\n")
    sys.stdout.flush()


def _stdin_closed() -> bool:
    readable, _, _ = select.select([sys.stdin], [], [], 0)
    return bool(readable) and not os.read(sys.stdin.fileno(), 4096)


def receiver(spec: dict[str, Any]) -> None:
    """A receiver process: its own driver, one subscription, batches counted until stdin closes."""
    from aeron_async import Aeron, IdleStrategy, MediaDriver

    with MediaDriver.launch(**_driver_settings(spec["aeron_dir"], spec["threading_mode"])) as driver:
        with Aeron.connect(driver.aeron_dir) as client:
            sub = client.add_subscription(spec["channel"], STREAM)
            _emit("READY", {})
            idle = IdleStrategy("backoff")
            received = 0
            checks = 0
            while True:
                n = len(sub.poll_messages(BATCH))
                received += n
                idle.idle(n)
                checks += 1
                if checks % 256 == 0 and _stdin_closed():
                    break
            _emit("RESULT", {"received": received})


def sender(spec: dict[str, Any]) -> None:
    """The publisher process: its own driver running the strategy; offers for warmup + duration."""
    from aeron_async import Aeron, IdleStrategy, MediaDriver, MinFlowControl, strategies
    from aeron_async.counters import TYPE_FC_RECEIVERS

    strategies.register_flow_control("pymin", MinFlowControl)
    with MediaDriver.launch(**_driver_settings(spec["aeron_dir"], spec["threading_mode"])) as driver:
        with Aeron.connect(driver.aeron_dir) as client:
            pub = client.add_publication(f"{spec['channel']}|fc={spec['fc']}", STREAM)
            deadline = time.monotonic() + 20
            receivers = spec["receivers"]

            def tracked() -> int:
                record = client.counters_reader.find_by_type_id_and_registration_id(
                    TYPE_FC_RECEIVERS, pub.registration_id)
                return -1 if record is None else int(record.value)

            while not (pub.is_connected and tracked() == receivers):
                if time.monotonic() > deadline:
                    raise SystemExit(f"fc={spec['fc']}: {tracked()} of {receivers} receivers tracked after 20 s")
                time.sleep(0.001)
            batch = [bytes(spec["size"])] * BATCH
            idle = IdleStrategy("backoff")
            sent = 0
            start = time.monotonic()
            measure_from = start + spec["warmup"]
            end = measure_from + spec["duration"]
            counted_at_start = None
            pending = batch
            while True:
                now = time.monotonic()
                if counted_at_start is None and now >= measure_from:
                    counted_at_start = sent
                    measure_from = now
                if now >= end:
                    break
                accepted = pub.offer_batch(pending)
                if accepted > 0:
                    sent += accepted
                    pending = batch if accepted == len(pending) else pending[accepted:]
                idle.idle(max(accepted, 0))
            elapsed = time.monotonic() - measure_from
            measured = sent - (counted_at_start or 0)
            _emit("RESULT", {"sent": sent, "msgs_per_s": measured / elapsed, "seconds": elapsed})


def _start(role: str, spec: dict[str, Any]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "aeron_async.bench.flow_control", role, json.dumps(spec)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _line(proc: subprocess.Popen[str], tag: str, timeout: float) -> dict[str, Any]:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        readable, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if not readable:
            break
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith(tag + " "):
            return dict(json.loads(line[len(tag) + 1:]))
        seen.append(line)
    raise BenchTimeoutError(f"no {tag} within {timeout:.0f} s: {''.join(seen)[-2000:]}")


def measure(fc: str, *, receivers: int = 3, size: int = 32, warmup: float = 1.0, duration: float = 2.0,
            interface: str | None = None, threading_mode: str = "SHARED") -> dict[str, Any]:
    """One measurement: fc= `fc` with `receivers` receiving processes; messages/s at the publisher."""
    address = interface or default_interface()
    if address is None:
        raise BenchError("no interface carries multicast here (no route to 239.255.0.1): give --interface")
    tag = uuid.uuid4().hex[:6]
    group = f"239.255.{int(tag[:2], 16) % 250 + 1}.{(int(tag[2:4], 16) % 120) * 2 + 1}"  # odd: data; +1: control
    port = 41000 + int(tag[4:], 16) % 2000
    channel = f"aeron:udp?endpoint={group}:{port}|interface={address}"
    base = os.path.join("/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir(), f"aeron-bench-fc-{tag}")
    procs: list[subprocess.Popen[str]] = []
    try:
        for i in range(receivers):
            proc = _start("receiver", {"aeron_dir": f"{base}-r{i}", "channel": channel,
                                       "threading_mode": threading_mode})
            procs.append(proc)
            _line(proc, "READY", 30)
        pub = _start("sender", {"aeron_dir": f"{base}-p", "channel": channel, "fc": fc, "receivers": receivers,
                                "size": size, "warmup": warmup, "duration": duration,
                                "threading_mode": threading_mode})
        procs.append(pub)
        result = _line(pub, "RESULT", warmup + duration + 60)
        got = []
        for proc in procs[:-1]:
            assert proc.stdin is not None
            proc.stdin.close()
            got.append(_line(proc, "RESULT", 30)["received"])
        result.update({"fc": fc, "receivers": receivers, "size": size, "received": got, "channel": channel})
        return result
    finally:
        for proc in procs:
            if proc.poll() is None:
                close_and_wait(proc, 10)


def run(*, rounds: int = 3, receivers: int = 3, size: int = 32, warmup: float = 1.0, duration: float = 2.0,
        interface: str | None = None, threading_mode: str = "SHARED") -> dict[str, Any]:
    """Rounds alternating the native min and pymin; the median of each and their ratio."""
    samples: dict[str, list[float]] = {fc: [] for fc in STRATEGIES}
    for _ in range(rounds):
        for fc in STRATEGIES:
            result = measure(fc, receivers=receivers, size=size, warmup=warmup, duration=duration,
                             interface=interface, threading_mode=threading_mode)
            samples[fc].append(result["msgs_per_s"])
    medians = {fc: sorted(values)[len(values) // 2] for fc, values in samples.items()}
    return {"receivers": receivers, "size": size, "rounds": rounds, "samples": samples, "median": medians,
            "ratio": medians["pymin"] / medians["min"] if medians["min"] else 0.0, "target": 0.9}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("receiver", "sender"):
        (receiver if argv[0] == "receiver" else sender)(json.loads(argv[1]))
        return 0
    parser = argparse.ArgumentParser(prog="python -m aeron_async.bench.flow_control", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--receivers", type=int, default=3)
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--duration", type=float, default=2.0)
    parser.add_argument("--interface", help="local address of an interface that carries multicast")
    parser.add_argument("--threading-mode", default="SHARED", choices=["SHARED", "SHARED_NETWORK", "DEDICATED"])
    args = parser.parse_args(argv)
    figures = run(rounds=args.rounds, receivers=args.receivers, size=args.size, warmup=args.warmup,
                  duration=args.duration, interface=args.interface, threading_mode=args.threading_mode)
    for fc in STRATEGIES:
        values = ", ".join(f"{v / 1e6:.2f}" for v in figures["samples"][fc])
        print(f"fc={fc:<6} {args.receivers} receivers, {args.size} B: median {figures['median'][fc] / 1e6:.2f} M msgs/s "
              f"(rounds: {values})")
    print(f"pymin / min = {figures['ratio']:.2f} (target >= 0.9)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
