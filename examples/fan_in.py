"""Fan-in: several publishers, one subscriber. Each publisher task has an exclusive publication
(its own session, so its own image at the subscriber); the subscriber reads all of them with
`batches()` (one await per batch) and counts per session, then checks each publisher's messages
arrived complete and in order.

    python examples/fan_in.py [--publishers 4] [--messages 100000]
"""

from __future__ import annotations

import argparse
import os
import struct
import time
from collections import defaultdict

import anyio

import aeron_async

CHANNEL = "aeron:ipc"
STREAM = 7


async def publish(client: aeron_async.AsyncAeron, index: int, messages: int) -> None:
    async with await client.add_exclusive_publication(CHANNEL, STREAM) as publication:
        payload = bytearray(32)
        for sequence in range(messages):
            struct.pack_into("<ii", payload, 0, index, sequence)
            await publication.offer(payload)


async def main(args: argparse.Namespace) -> None:
    # SIGINT or SIGTERM ends the run at once, closing cleanly
    async with aeron_async.cancel_on_signals() as stopping:
        await fan_in(args)
    if stopping.cancelled_caught:
        print("stopped by a signal", flush=True)


async def fan_in(args: argparse.Namespace) -> None:
    total = args.publishers * args.messages
    async with aeron_async.connect(args.aeron_dir, embedded_driver=True, dir_delete_on_shutdown=True) as client:
        subscription = await client.add_subscription(CHANNEL, STREAM)
        next_sequence: dict[int, int] = defaultdict(int)
        sessions: dict[int, set[int]] = defaultdict(set)
        print(f"{args.publishers} publishers sending {args.messages:,} messages each to one subscriber in "
              f"{client.aeron_dir}", flush=True)
        started = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for index in range(args.publishers):
                tg.start_soon(publish, client, index, args.messages)
            received = 0
            with anyio.fail_after(120):
                async for batch in subscription.batches(max_messages=4096):
                    for message in batch:
                        index, sequence = struct.unpack_from("<ii", message.data)
                        if sequence != next_sequence[index]:
                            raise SystemExit(f"publisher {index}: expected {next_sequence[index]}, got {sequence}")
                        next_sequence[index] += 1
                        sessions[index].add(message.session_id)
                    received += len(batch)
                    if received == total:
                        break
        elapsed = time.perf_counter() - started
        await subscription.aclose()
    for index in sorted(next_sequence):
        print(f"publisher {index} (session {min(sessions[index])}): {next_sequence[index]:,} messages, in order")
    print(f"{total:,} messages from {args.publishers} publishers in {elapsed:.2f} s "
          f"({total / elapsed:,.0f} msgs/s through one subscriber)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--publishers", type=int, default=4)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--aeron-dir", default=os.environ.get("AERON_DIR") or "/dev/shm/aeron-async-fan-in",
                        help="the media driver's directory (default $AERON_DIR, else /dev/shm/aeron-async-fan-in)")
    parser.add_argument("--backend", default="asyncio", choices=["asyncio", "trio"])
    ns = parser.parse_args()
    anyio.run(main, ns, backend=ns.backend)
