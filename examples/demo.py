"""Demo: an embedded media driver, an async IPC publisher and subscriber, with live figures.

    python examples/demo.py [--seconds 10] [--size 64] [--backend asyncio|uvloop|trio]

The publisher task awaits `offer` for fixed-size messages as fast as the subscriber lets it (back
pressure suspends it, it never spins); the subscriber task reads whole messages in batches (one
await per batch) and checks their order. Every second it prints messages/s, MB/s and the process's
CPU use, then a summary.
"""

from __future__ import annotations

import argparse
import os
import struct
import tempfile
import time

import anyio

import aeron_async


async def run(args: argparse.Namespace) -> None:
    # SIGINT or SIGTERM ends the run at once, closing cleanly
    async with aeron_async.cancel_on_signals() as stopping:
        await demo(args)
    if stopping.cancelled_caught:
        print("stopped by a signal", flush=True)


async def demo(args: argparse.Namespace) -> None:
    size = max(8, args.size)
    base = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
    aeron_dir = os.environ.get("AERON_DIR") or os.path.join(base, f"aeron-demo-{os.getpid()}")
    async with aeron_async.connect(aeron_dir, embedded_driver=True, dir_delete_on_shutdown=True) as client:
        subscription = await client.add_subscription(args.channel, 1001)
        publication = await client.add_publication(args.channel, 1001)
        print(f"embedded driver in {client.aeron_dir}; {args.channel}, {size}-byte messages, "
              f"max message length {publication.max_message_length}, {args.backend}", flush=True)
        sent = 0

        async def publish() -> None:
            nonlocal sent
            payload = bytearray(size)
            pack = struct.pack_into
            offer = publication.offer
            while True:
                pack("<q", payload, 0, sent)
                await offer(payload)
                sent += 1

        received = expected = last_count = 0
        started = last_report = time.monotonic()
        cpu_started = last_cpu = time.process_time()
        async with anyio.create_task_group() as tg:
            tg.start_soon(publish)
            with anyio.move_on_after(args.seconds):
                async for batch in subscription.batches(max_messages=4096):
                    for message in batch:
                        (sequence,) = struct.unpack_from("<q", message.data, 0)
                        if sequence != expected:
                            raise SystemExit(f"out of order: expected {expected}, got {sequence}")
                        expected += 1
                    received += len(batch)
                    now = time.monotonic()
                    if now - last_report >= 1.0:
                        cpu = time.process_time()
                        rate = (received - last_count) / (now - last_report)
                        print(f"{now - started:5.1f}s  {rate:12,.0f} msgs/s  {rate * size / 1e6:8.1f} MB/s  "
                              f"received {received:12,}  cpu {100 * (cpu - last_cpu) / (now - last_report):4.0f}%",
                              flush=True)
                        last_report, last_count, last_cpu = now, received, cpu
            tg.cancel_scope.cancel()
        elapsed = time.monotonic() - started
        cpu = time.process_time() - cpu_started
        print(f"done: {received:,} messages in {elapsed:.1f}s, {received / elapsed:,.0f} msgs/s average, all in order "
              f"(publisher and subscriber share one event loop; process CPU {100 * cpu / elapsed:.0f}% of a core)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--size", type=int, default=64, help="message size in bytes (at least 8)")
    parser.add_argument("--channel", default="aeron:ipc?term-length=8m")
    parser.add_argument("--backend", default="asyncio", choices=["asyncio", "uvloop", "trio"])
    args = parser.parse_args()
    if args.backend == "uvloop":
        anyio.run(run, args, backend="asyncio", backend_options={"use_uvloop": True})
    else:
        anyio.run(run, args, backend=args.backend)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
