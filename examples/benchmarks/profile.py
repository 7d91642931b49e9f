"""Profile one process of a benchmark pair with py-spy (native frames included) and print where
its time goes: the frames with the most samples of their own, and inclusive.

    python examples/benchmarks/profile.py aeron-sync-msg receiver
    python examples/benchmarks/profile.py aeron-sync-batch sender --size 4096
    python examples/benchmarks/profile.py aeron-sync ping --kind latency

It starts a standalone driver (SHARED) and the pair as `aeron-async bench` does, lets it run for
`--seconds`, samples the chosen side for 5 s (`py-spy record --native --rate 250`; py-spy pauses
the process for each sample, so its rate drops while sampled), and keeps the raw collapsed stacks
in `--out`. Needs `pip install py-spy` and ptrace rights (root, or ptrace_scope 0).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from aeron_async.bench.cases import latency_cases, throughput_cases  # noqa: E402
from aeron_async.bench.harness import Driver, Worker  # noqa: E402


def summarize(path: str, top: int) -> None:
    own: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    with open(path) as f:
        for line in f:
            stack, _, count = line.rstrip().rpartition(" ")
            if not stack:
                continue
            n = int(count)
            total += n
            frames = [re.sub(r" \(.*?\)$", "", frame) for frame in stack.split(";")]
            own[frames[-1]] += n
            for frame in set(frames):
                inclusive[frame] += n
    print(f"{total} samples")
    print("self:")
    for frame, n in own.most_common(top):
        print(f"  {100 * n / total:5.1f}%  {frame}")
    print("inclusive:")
    for frame, n in inclusive.most_common(top):
        print(f"  {100 * n / total:5.1f}%  {frame}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("case", help="a case name of aeron-async bench, e.g. aeron-sync-msg")
    parser.add_argument("side", choices=["receiver", "sender", "ping", "pong"])
    parser.add_argument("--kind", choices=["throughput", "latency"], default="throughput")
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--out", default="py-spy-raw.txt")
    args = parser.parse_args()
    py_spy = shutil.which("py-spy") or os.path.join(os.path.dirname(sys.executable), "py-spy")
    if not os.path.exists(py_spy):
        print("py-spy is not installed: pip install py-spy", file=sys.stderr)
        return 2
    ours, peers = (throughput_cases if args.kind == "throughput" else latency_cases)(["aeron:ipc"])
    case = next((c for c in ours + peers if c.name == args.case), None)
    if case is None:
        print(f"no {args.kind} case {args.case!r}; cases: {', '.join(c.name for c in ours + peers)}", file=sys.stderr)
        return 2
    driver = Driver("SHARED", "8m")
    try:
        spec = {"size": args.size, "warmup": 1.0, "duration": args.seconds, "stream": 3000,
                "aeron_dir": driver.aeron_dir, "channel": case.transport, **case.params}
        server = Worker({**spec, "role": case.server}, case.server)
        ready = server.expect("READY", 30)
        client = Worker({**spec, **ready, "role": case.client}, case.client)
        client.expect("READY", 30)
        target = server if args.side in ("receiver", "pong") else client
        time.sleep(1.0)
        subprocess.run([py_spy, "record", "-p", str(target.popen.pid), "-d", "5", "-r", "250", "--native",
                        "-f", "raw", "-o", args.out], check=False)
        measuring = server if case.kind == "throughput" else client
        other = client if case.kind == "throughput" else server
        result = measuring.expect("RESULT", args.seconds + 60)
        other.stop()
        client.finish()
        server.finish()
        figures = {k: v for k, v in result.items() if k != "histogram"}
        print(f"{case.name} {args.size} B while sampled: {figures}")
    finally:
        driver.close()
    summarize(args.out, args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
